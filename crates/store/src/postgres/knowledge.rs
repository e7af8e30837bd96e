//! The concept map's snapshots and the beliefs about the learner, which are superseded, never changed.

use super::db::Db;
use super::rows::*;
use super::{Pg, PgTx};
use crate::{KnowledgeRead, KnowledgeWrite, Result, SubjectWrite};
pub(crate) use crate::{from_ms, to_ms};
use chrono::{DateTime, Utc};
use postgres::{GenericClient, Row};
use tm_model::beliefs::{BeliefRow, Claim as BeliefClaim};
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;

const BELIEF_COLUMNS: &str = "id, about, concept, unmapped, claim, confidence, alpha, beta, support, created_at, reason, flagged, superseded_by";
const CURRENT_BELIEF: &str = "superseded_by IS NULL AND claim <> 'retired'";

pub(crate) fn belief_row(r: &Row) -> Result<BeliefRow> {
    let id: i64 = r.get(0);
    let claim: String = r.get(4);
    let support: String = r.get(8);
    Ok(BeliefRow {
        id: Some(id),
        subject_key: r.get(1),
        concept: r.get(2),
        unmapped: r.get(3),
        claim: BeliefClaim::parse(&claim)
            .ok_or_else(|| corrupt(format!("belief {id}: claim {claim:?}")))?,
        confidence: r.get(5),
        alpha: r.get(6),
        beta: r.get(7),
        support: serde_json::from_str(&support)
            .map_err(|e| corrupt(format!("belief {id}: support: {e}")))?,
        created_at: from_ms(r.get(9)),
        reason: r.get(10),
        flagged: r.get(11),
        superseded_by: r.get(12),
    })
}

pub(crate) fn beliefs_where<C: GenericClient>(
    c: &mut Db<'_, C>,
    filter: &str,
    args: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<BeliefRow>> {
    c.query(
        &format!("SELECT {BELIEF_COLUMNS} FROM beliefs {filter}"),
        args,
    )?
    .iter()
    .map(belief_row)
    .collect()
}

impl<C: GenericClient> KnowledgeRead for Pg<C> {
    fn latest_map(&self, s: &Subject) -> Result<Option<ConceptMap>> {
        self.with(|c| {
            c.query_opt(
                "SELECT id, map FROM concept_maps WHERE subject_id = $1 ORDER BY id DESC LIMIT 1",
                &[&s.id],
            )?
            .map(|r| {
                let id: i64 = r.get(0);
                let text: &str = r.get(1);
                serde_json::from_str(text)
                    .map_err(|e| corrupt(format!("concept map snapshot {id} is unreadable: {e}")))
            })
            .transpose()
        })
    }
    fn latest_map_id(&self, s: &Subject) -> Result<Option<i64>> {
        self.with(|c| {
            Ok(c.query_one(
                "SELECT MAX(id) FROM concept_maps WHERE subject_id = $1",
                &[&s.id],
            )?
            .get(0))
        })
    }
    fn current_beliefs(&self, s: &Subject) -> Result<Vec<BeliefRow>> {
        self.with(|c| {
            beliefs_where(
                c,
                &format!(
                    "WHERE subject_id = $1 AND {CURRENT_BELIEF} ORDER BY confidence DESC, about"
                ),
                &[&s.id],
            )
        })
    }
    fn current_belief(&self, s: &Subject, about: &str) -> Result<Option<BeliefRow>> {
        self.with(|c| {
            Ok(beliefs_where(
                c,
                &format!(
                    "WHERE subject_id = $1 AND about = $2 AND {CURRENT_BELIEF} ORDER BY id DESC LIMIT 1"
                ),
                &[&s.id, &about],
            )?
            .pop())
        })
    }
    fn belief_history(&self, s: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        self.with(|c| {
            beliefs_where(
                c,
                "WHERE subject_id = $1 AND about = $2 ORDER BY id",
                &[&s.id, &about],
            )
        })
    }
}

impl KnowledgeWrite for PgTx<'_> {
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()> {
        self.with(|c| {
            let text = serde_json::to_string(map)
                .map_err(|e| corrupt(format!("cannot serialise the concept map: {e}")))?;
            c.execute(
                "INSERT INTO concept_maps (subject_id, at, reason, map) VALUES ($1, $2, $3, $4)",
                &[&s.id, &to_ms(at), &reason, &text],
            )?;
            Ok(())
        })
    }
    fn insert_belief(
        &mut self,
        s: &Subject,
        b: &BeliefRow,
        supersedes: Option<i64>,
    ) -> Result<i64> {
        self.lock_subject(s)?;
        self.with(|c| {
            let support = json(&b.support)?;
            let id: i64 = c
                .query_one(
                    "INSERT INTO beliefs (subject_id, about, concept, unmapped, claim, confidence, alpha, beta, support,
                                          created_at, reason, flagged)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
                    &[
                        &s.id,
                        &b.subject_key,
                        &b.concept,
                        &b.unmapped,
                        &b.claim.as_str(),
                        &b.confidence,
                        &b.alpha,
                        &b.beta,
                        &support,
                        &to_ms(b.created_at),
                        &b.reason,
                        &b.flagged,
                    ],
                )?
                .get(0);
            if let Some(old) = supersedes {
                let n = c.execute(
                    "UPDATE beliefs SET superseded_by = $1 WHERE id = $2 AND subject_id = $3",
                    &[&id, &old, &s.id],
                )?;
                if n != 1 {
                    return Err(corrupt(format!("belief {old} to supersede was not found")));
                }
            }
            Ok(id)
        })
    }
}
