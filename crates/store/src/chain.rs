//! Recomputing a subject's hash chain from the stored rows, and checkpoints.

use crate::{Error, Result, Store, Subject};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use tm_model::episodes::{Break, ChainVerifier, Checkpoint, EpisodeFields, PrevLookup, StoredRow};

/// How one subject's chain stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainState {
    Intact,
    Broken,
}

/// The result of verifying one subject's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainReport {
    pub subject: String,
    pub state: ChainState,
    /// Episodes verified before the first break (all of them when intact).
    pub verified: u64,
    /// The seq and hex hash of the last verified episode (0 and the genesis
    /// hash for an empty chain).
    pub head_seq: u64,
    pub head_hash: String,
    /// The first break, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_break: Option<Break>,
    /// Whether a checkpoint was compared.
    pub checkpoint_checked: bool,
}

struct HashIndex<'a> {
    store: &'a Store,
    subject_id: i64,
}

impl PrevLookup for HashIndex<'_> {
    fn seq_of_hash(&mut self, hash: &[u8]) -> Option<u64> {
        self.store
            .conn
            .query_row(
                "SELECT seq FROM episodes WHERE subject_id = ?1 AND hash = ?2",
                params![self.subject_id, hash],
                |r| r.get::<_, i64>(0),
            )
            .ok()
            .map(|s| s as u64)
    }
}

impl Store {
    /// Recomputes the subject's chain and reports the first break; with a
    /// checkpoint, also whether the chain still reaches it unchanged.
    pub fn verify_subject(
        &self,
        subject: &Subject,
        checkpoint: Option<&Checkpoint>,
    ) -> Result<ChainReport> {
        let key = subject.key.to_string();
        if let Some(cp) = checkpoint
            && cp.subject != key
        {
            return Err(Error::Corrupt(format!(
                "the checkpoint is for subject {}, not {key}",
                cp.subject
            )));
        }
        let mut verifier = ChainVerifier::new(&key);
        let mut lookup = HashIndex {
            store: self,
            subject_id: subject.id,
        };
        let mut first_break = None;
        {
            let mut stmt = self.conn.prepare_cached(
                "SELECT seq, kind, at, salience, summary, text, concepts, evidence, data, external_id, prev_hash, hash
                 FROM episodes WHERE subject_id = ?1 ORDER BY seq",
            )?;
            let mut rows = stmt.query([subject.id])?;
            while let Some(r) = rows.next()? {
                let text = |i: usize| -> Result<&str> {
                    Ok(r.get_ref(i)?.as_str().map_err(rusqlite::Error::from)?)
                };
                let fields = EpisodeFields {
                    subject: &key,
                    seq: r.get::<_, i64>(0)? as u64,
                    kind: text(1)?,
                    at_ms: r.get(2)?,
                    salience: r.get(3)?,
                    summary: text(4)?,
                    text: text(5)?,
                    concepts_json: text(6)?,
                    evidence_json: text(7)?,
                    data_json: text(8)?,
                    external_id: r
                        .get_ref(9)?
                        .as_str_or_null()
                        .map_err(rusqlite::Error::from)?,
                };
                let row = StoredRow {
                    fields,
                    prev_hash: r.get_ref(10)?.as_blob().map_err(rusqlite::Error::from)?,
                    hash: r.get_ref(11)?.as_blob().map_err(rusqlite::Error::from)?,
                };
                if let Err(b) = verifier.push(&row, &mut lookup) {
                    first_break = Some(b);
                    break;
                }
            }
        }
        if first_break.is_none()
            && let Some(cp) = checkpoint
        {
            let at_cp: Option<Vec<u8>> = self
                .conn
                .query_row(
                    "SELECT hash FROM episodes WHERE subject_id = ?1 AND seq = ?2",
                    params![subject.id, cp.seq as i64],
                    |r| r.get(0),
                )
                .optional()?;
            first_break = verifier.finish(Some((cp, at_cp.as_deref()))).err();
        }
        let (head_seq, head) = verifier.head();
        Ok(ChainReport {
            subject: key,
            state: if first_break.is_some() {
                ChainState::Broken
            } else {
                ChainState::Intact
            },
            verified: verifier.verified(),
            head_seq,
            head_hash: hex::encode(head),
            first_break,
            checkpoint_checked: checkpoint.is_some(),
        })
    }

    /// The subject's chain head as an exportable checkpoint.
    pub fn checkpoint(&self, subject: &Subject) -> Result<Checkpoint> {
        let row: Option<(i64, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT seq, hash FROM episodes WHERE subject_id = ?1 ORDER BY seq DESC LIMIT 1",
                [subject.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let key = subject.key.to_string();
        Ok(match row {
            Some((seq, hash)) => Checkpoint {
                subject: key,
                seq: seq as u64,
                head_hash: hex::encode(hash),
            },
            None => Checkpoint {
                head_hash: hex::encode(tm_model::episodes::genesis_hash(&key)),
                subject: key,
                seq: 0,
            },
        })
    }
}
