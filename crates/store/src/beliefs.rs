//! Beliefs as stored: rows never change into another claim; a change is a new
//! row and the old one's pointer is set once (the triggers refuse anything else).

use crate::{Error, Result, Store, Subject, Tx, from_ms, to_ms};
use rusqlite::{Connection, params};
use tm_model::beliefs::{BeliefRow, Claim};

const COLUMNS: &str = "id, about, concept, unmapped, claim, confidence, alpha, beta, support, created_at, reason, flagged, superseded_by";

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

fn query(conn: &Connection, sql: &str, args: impl rusqlite::Params) -> Result<Vec<BeliefRow>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(args, row)?;
    rows.map(|r| r?).collect()
}

fn current(conn: &Connection, subject_id: i64, about: &str) -> Result<Option<BeliefRow>> {
    Ok(query(
        conn,
        &format!(
            "SELECT {COLUMNS} FROM beliefs WHERE subject_id = ?1 AND about = ?2 AND superseded_by IS NULL
             AND claim != 'retired' ORDER BY id DESC LIMIT 1"
        ),
        params![subject_id, about],
    )?
    .pop())
}

impl Store {
    /// Current beliefs: rows nothing superseded and not retired, by confidence.
    pub fn current_beliefs(&self, subject: &Subject) -> Result<Vec<BeliefRow>> {
        query(
            &self.conn,
            &format!(
                "SELECT {COLUMNS} FROM beliefs WHERE subject_id = ?1 AND superseded_by IS NULL AND claim != 'retired'
                 ORDER BY confidence DESC, about"
            ),
            [subject.id],
        )
    }

    /// Every row ever written about `about` (a canonical key), oldest first.
    pub fn belief_history(&self, subject: &Subject, about: &str) -> Result<Vec<BeliefRow>> {
        query(
            &self.conn,
            &format!(
                "SELECT {COLUMNS} FROM beliefs WHERE subject_id = ?1 AND about = ?2 ORDER BY id"
            ),
            params![subject.id, about],
        )
    }
}

impl Tx<'_> {
    /// The current belief about `about`, if any.
    pub fn current_belief(&self, subject: &Subject, about: &str) -> Result<Option<BeliefRow>> {
        current(&self.tx, subject.id, about)
    }

    /// Every current (not superseded, not retired) belief of the subject.
    pub fn current_beliefs(&self, subject: &Subject) -> Result<Vec<BeliefRow>> {
        query(
            &self.tx,
            &format!(
                "SELECT {COLUMNS} FROM beliefs WHERE subject_id = ?1 AND superseded_by IS NULL AND claim != 'retired'"
            ),
            [subject.id],
        )
    }

    /// Inserts a new belief row; when it replaces `supersedes`, points that
    /// row at the new one (the only update the store allows).
    pub fn insert_belief(
        &mut self,
        subject: &Subject,
        b: &BeliefRow,
        supersedes: Option<i64>,
    ) -> Result<i64> {
        let support =
            serde_json::to_string(&b.support).map_err(|e| Error::Corrupt(e.to_string()))?;
        self.tx.execute(
            "INSERT INTO beliefs (subject_id, about, concept, unmapped, claim, confidence, alpha, beta, support,
                                  created_at, reason, flagged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                subject.id,
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
        let id = self.tx.last_insert_rowid();
        if let Some(old) = supersedes {
            let n = self.tx.execute(
                "UPDATE beliefs SET superseded_by = ?1 WHERE id = ?2 AND subject_id = ?3",
                params![id, old, subject.id],
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
