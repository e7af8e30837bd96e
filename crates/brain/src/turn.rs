//! One chat turn, without the transport: build the memory block under the
//! cap from the memory as it stood before this message (so the question never
//! recalls itself), record the learner's message, retrieve the material's
//! passages, and assemble the prompt with the model crate's helper; then,
//! when the host has a model, ask it (through the one chat client, streamed
//! deltas to the caller) and record its answer with the ids the block
//! recalled and the answer's grounding. A face only carries the bytes
//! (server-sent events, a JSON dry run).

use crate::block::Block;
use crate::grounding::Answered;
use crate::{Brain, Error, Result};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use std::time::Instant;
use tm_ingest::extract::ChatClient;
use tm_model::block::{HostSections, assemble_prompt};
use tm_model::events::{Event, EventBody};
use tm_model::passages::Passage;
use tm_model::subject::Subject;

/// The system prompt used when the host sends none.
pub const DEFAULT_SYSTEM: &str = "You are a patient tutor. Answer the student's question from their material and from your memory of your work with them. Say when you rely on a memory, and never claim one that is not listed.";

/// Passages retrieved for a turn's material slot (and traced against).
pub const PASSAGES: usize = 5;

/// The longest answer accepted from the model, in bytes.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// What a turn asks for.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The learner's message.
    pub text: String,
    pub at: DateTime<Utc>,
    /// External id for the learner's message episode.
    pub id: Option<String>,
    /// Token budget of the block (default: the brain's).
    pub budget: Option<usize>,
    /// The learner's time zone (default: the subject's).
    pub tz: Option<Tz>,
    /// The host's system prompt (default: [`DEFAULT_SYSTEM`]).
    pub system: Option<String>,
    /// A legacy "assessment results" section of the host's prompt.
    pub assessment: Option<String>,
}

/// A turn prepared: the block, the prompt, and what recording its answer needs.
#[derive(Debug, Clone)]
pub struct Turn {
    pub subject: Subject,
    pub block: Block,
    /// The assembled prompt (the system message).
    pub prompt: String,
    /// The chat messages to send: the prompt, then the learner's message.
    pub messages: Vec<serde_json::Value>,
    /// Material passages that went into the prompt.
    pub passages: Vec<Passage>,
    /// The learner message's seq in the chain.
    pub learner_seq: u64,
    pub at: DateTime<Utc>,
    started: Instant,
}

/// A turn's answer, recorded.
#[derive(Debug, Clone)]
pub struct TurnAnswer {
    /// The answer episode's seq.
    pub seq: u64,
    pub answered: Answered,
}

impl Brain {
    /// Prepares a turn: block (from the memory before the message), the
    /// learner's message recorded, passages, the prompt.
    pub fn turn(&self, subject: &Subject, req: TurnRequest) -> Result<Turn> {
        let started = Instant::now();
        if req.text.trim().is_empty() {
            return Err(Error::Empty("`text`"));
        }
        let mut block_req = self.block_request(subject, &req.text, req.at, req.budget);
        if let Some(tz) = req.tz {
            block_req.tz = tz;
        }
        let block = self.block(subject, block_req)?;
        let message = Event::new(
            req.at,
            EventBody::Learner {
                text: req.text.clone(),
            },
        )
        .with_id(req.id.clone());
        let recorded = self.record(subject, &[message])?;
        let passages = self.passages(subject, &req.text, PASSAGES)?;
        let prompt = assemble_prompt(HostSections {
            system: req.system.unwrap_or_else(|| DEFAULT_SYSTEM.to_string()),
            memory_slot: (!block.dropped).then(|| block.block.clone()),
            passages: if passages.is_empty() {
                String::new()
            } else {
                crate::passages::render(&passages)
            },
            assessment: req.assessment,
        });
        let messages = vec![
            serde_json::json!({"role": "system", "content": prompt}),
            serde_json::json!({"role": "user", "content": req.text}),
        ];
        Ok(Turn {
            subject: subject.clone(),
            block,
            prompt,
            messages,
            passages,
            learner_seq: recorded.head_seq,
            at: req.at,
            started,
        })
    }

    /// Asks the model for the turn's answer (each delta handed to `on_delta`
    /// as it arrives) and records it: the answer episode, citing the file
    /// pages its traced passages came from, the recalled ids and the grounding.
    pub fn answer_turn(
        &self,
        turn: &Turn,
        chat: &ChatClient,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<TurnAnswer> {
        let answer = chat
            .stream(&turn.messages, MAX_ANSWER_BYTES, on_delta)
            .map_err(Error::Model)?;
        if answer.trim().is_empty() {
            return Err(Error::Model("the model answered nothing".into()));
        }
        // The answer is dated by the turn's clock: the turn's instant plus the
        // time the model took (at least a millisecond), so a replayed turn keeps
        // its answer beside its question and the log stays in time order.
        let took = chrono::Duration::from_std(turn.started.elapsed())
            .unwrap_or(chrono::Duration::zero())
            .max(chrono::Duration::milliseconds(1));
        let at = turn.at + took;
        // Stored times are whole milliseconds.
        let at = DateTime::from_timestamp_millis(at.timestamp_millis()).unwrap_or(at);
        let recalled: Vec<i64> = turn.block.recalled.iter().map(|r| r.id).collect();
        let answered = self.answer(&turn.subject, &answer, at, &recalled, &turn.passages)?;
        let seq = self
            .episodes_by_ids(&[answered.episode_id])?
            .first()
            .map(|e| e.seq)
            .ok_or_else(|| Error::Internal("the recorded answer is missing".into()))?;
        Ok(TurnAnswer { seq, answered })
    }
}
