//! Beliefs and concept-map snapshots as stored. A belief row never changes
//! into another claim: a change is a new row and the old one's pointer is
//! set once (the triggers refuse anything else). Map snapshots are
//! append-only: the newest is the map.

use super::{Conn, SqliteTx, from_ms, to_ms};
use crate::{Error, KnowledgeRead, KnowledgeWrite, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use tm_model::beliefs::{BeliefRow, Claim};
use tm_model::map::ConceptMap;
use tm_model::subject::Subject;

const COLUMNS: &str = "id, about, concept, unmapped, claim, confidence, alpha, beta, support, created_at, reason, flagged, superseded_by";
const CURRENT: &str = "superseded_by IS NULL AND claim != 'retired'";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<BeliefRow>> {
    let id: i64 = r.get(0)?;
    let claim: String = r.get(4)?;
    let support: String = r.get(8)?;
    Ok((|| {
        Ok(BeliefRow {
            id: Some(id),
            subject_key: r.get(1)?,
            concept: r.get(2)?,
            unmapped: r.get::<_, i64>(3)? != 0,
            claim: Claim::parse(&claim)
                .ok_or_else(|| Error::Corrupt(format!("belief {id}: claim {claim:?}")))?,
            confidence: r.get(5)?,
            alpha: r.get(6)?,
            beta: r.get(7)?,
            support: serde_json::from_str(&support)
                .map_err(|e| Error::Corrupt(format!("belief {id}: support: {e}")))?,
            created_at: from_ms(r.get(9)?),
            reason: r.get(10)?,
            flagged: r.get::<_, i64>(11)? != 0,
            superseded_by: r.get(12)?,
        })
    })())
}

fn query(c: &Connection, filter: &str, args: impl rusqlite::Params) -> Result<Vec<BeliefRow>> {
    let mut stmt = c.prepare_cached(&format!("SELECT {COLUMNS} FROM beliefs {filter}"))?;
    let rows = stmt.query_map(args, row)?;
    rows.map(|r| r?).collect()
}

pub(crate) fn current(c: &Connection, s: &Subject, about: &str) -> Result<Option<BeliefRow>> {
    Ok(query(
        c,
        &format!("WHERE subject_id = ?1 AND about = ?2 AND {CURRENT} ORDER BY id DESC LIMIT 1"),
        params![s.id, about],
    )?
    .pop())
}

impl<T: Conn> KnowledgeRead for T {
    fn latest_map(&self, s: &Subject) -> Result<Option<ConceptMap>> {
        let c = self.conn();
        let row: Option<(i64, String)> = c
            .prepare_cached(
                "SELECT id, map FROM concept_maps WHERE subject_id = ?1 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        row.map(|(id, json)| {
            serde_json::from_str(&json).map_err(|e| {
                Error::Corrupt(format!("concept map snapshot {id} is unreadable: {e}"))
            })
        })
        .transpose()
    }
    fn latest_map_id(&self, s: &Subject) -> Result<Option<i64>> {
        let c = self.conn();
        Ok(
            c.prepare_cached("SELECT MAX(id) FROM concept_maps WHERE subject_id = ?1")?
                .query_row([s.id], |r| r.get(0))?,
        )
    }
    fn current_beliefs(&self, s: &Subject) -> Result<Vec<BeliefRow>> {
        let c = self.conn();
        query(
            c,
            &format!("WHERE subject_id = ?1 AND {CURRENT} ORDER BY confidence DESC, about"),
            [s.id],
        )
    }
    fn current_belief(&self, s: &Subject, about: &str) -> Result<Option<BeliefRow>> {
        current(self.conn(), s, about)
    }
    fn belief_history(&self, s: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        let c = self.conn();
        query(
            c,
            "WHERE subject_id = ?1 AND about = ?2 ORDER BY id",
            params![s.id, about],
        )
    }
}

impl KnowledgeWrite for SqliteTx<'_> {
    fn save_map(
        &mut self,
        s: &Subject,
        at: DateTime<Utc>,
        reason: &str,
        map: &ConceptMap,
    ) -> Result<()> {
        let c: &Connection = &self.tx;
        let json = serde_json::to_string(map)
            .map_err(|e| Error::Corrupt(format!("cannot serialise the concept map: {e}")))?;
        c.execute(
            "INSERT INTO concept_maps (subject_id, at, reason, map) VALUES (?1, ?2, ?3, ?4)",
            params![s.id, to_ms(at), reason, json],
        )?;
        Ok(())
    }
    fn insert_belief(
        &mut self,
        s: &Subject,
        b: &BeliefRow,
        supersedes: Option<i64>,
    ) -> Result<i64> {
        let c: &Connection = &self.tx;
        let support =
            serde_json::to_string(&b.support).map_err(|e| Error::Corrupt(e.to_string()))?;
        c.execute(
            "INSERT INTO beliefs (subject_id, about, concept, unmapped, claim, confidence, alpha, beta, support,
                                  created_at, reason, flagged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                s.id,
                b.subject_key,
                b.concept,
                b.unmapped as i64,
                b.claim.as_str(),
                b.confidence,
                b.alpha,
                b.beta,
                support,
                to_ms(b.created_at),
                b.reason,
                b.flagged as i64
            ],
        )?;
        let id = c.last_insert_rowid();
        if let Some(old) = supersedes {
            let n = c.execute(
                "UPDATE beliefs SET superseded_by = ?1 WHERE id = ?2 AND subject_id = ?3",
                params![id, old, s.id],
            )?;
            if n != 1 {
                return Err(Error::Corrupt(format!(
                    "belief {old} to supersede was not found"
                )));
            }
        }
        Ok(id)
    }
}
