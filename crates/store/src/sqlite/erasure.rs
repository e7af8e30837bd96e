//! Erasure on request: one recorded erasure clears every text of the
//! subjects it covers and everything derived from them, keeping each chain's
//! skeleton (see schema migration 9). Then [`compact`] rewrites the file so
//! that no byte of the erased text stays on disk.

use super::{Conn, SqliteTx, subject_token};
use crate::{ErasureRead, ErasureWrite, Error, Result};
use rusqlite::{Connection, OptionalExtension, params};
use tm_model::episodes::{Erasure, NewErasure};
use tm_model::recall::{episode_index_text, index_text};
use tm_model::subject::Subject;

/// Records the erasure and erases each subject, in the caller's transaction.
pub(crate) fn erase(c: &Connection, e: &NewErasure, subjects: &[Subject]) -> Result<Erasure> {
    let mut episodes = 0u64;
    for s in subjects {
        episodes += c.query_row(
            "SELECT COUNT(*) FROM episodes WHERE subject_id = ?1 AND erased_by IS NULL",
            [s.id],
            |r| r.get::<_, i64>(0),
        )? as u64;
    }
    let id = record(c, e, subjects.len(), episodes as usize)?;
    for s in subjects {
        erase_subject(c, s, id)?;
        // Erased whole: the name is free for a new subject.
        c.execute(
            "UPDATE subjects SET retired_by = ?2 WHERE id = ?1 AND retired_by IS NULL",
            params![s.id, id],
        )?;
    }
    Ok(e.recorded(id, subjects.len() as u64, episodes))
}

/// What an erased episode's content columns become (the schema's trigger
/// lets exactly this through).
const CLEARED: &str = "summary = '', text = '', concepts = '[]', evidence = '[]', data = '{}',
    external_id = NULL, import_key = NULL, salt = NULL";

/// Removes episodes' full-text rows: a contentless FTS5 table deletes a row
/// when given back exactly the terms it was indexed with. `rows` are
/// (id, text, concepts JSON).
fn unindex_episodes(c: &Connection, token: &str, rows: &[(i64, String, String)]) -> Result<()> {
    let mut unindex =
        c.prepare("INSERT INTO episode_fts (episode_fts, rowid, terms) VALUES ('delete', ?1, ?2)")?;
    for (id, text, concepts) in rows {
        let concepts: Vec<String> = serde_json::from_str(concepts)
            .map_err(|e| Error::Corrupt(format!("episode {id}: concepts: {e}")))?;
        unindex.execute(params![
            id,
            format!("{token} {}", episode_index_text(text, &concepts))
        ])?;
    }
    Ok(())
}

/// Writes the erasure record; its id.
fn record(c: &Connection, e: &NewErasure, subjects: usize, episodes: usize) -> Result<i64> {
    c.execute(
        "INSERT INTO erasures (at, scope, target, reference, reason, subjects, episodes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            crate::to_ms(e.at),
            e.scope,
            e.target,
            e.reference,
            e.reason,
            subjects as i64,
            episodes as i64
        ],
    )?;
    let id = c.last_insert_rowid();
    c.execute("INSERT INTO compaction_owed (erasure_id) VALUES (?1)", [id])?;
    Ok(id)
}

/// Compacts, then marks `owed` (read before the compaction began) settled;
/// an erasure committed meanwhile stays owed for the next compaction.
pub(crate) fn compact_owed(c: &Connection, owed: &[i64]) -> Result<()> {
    compact(c)?;
    let mut settle = c.prepare("DELETE FROM compaction_owed WHERE erasure_id = ?1")?;
    for id in owed {
        settle.execute([id])?;
    }
    Ok(())
}

fn erase_subject(c: &Connection, s: &Subject, erasure: i64) -> Result<()> {
    c.execute("INSERT INTO erasing (subject_id) VALUES (?1)", [s.id])?;
    let token = subject_token(s.id);
    let rows: Vec<(i64, String, String)> = c
        .prepare(
            "SELECT id, text, concepts FROM episodes WHERE subject_id = ?1 AND erased_by IS NULL",
        )?
        .query_map([s.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    unindex_episodes(c, &token, &rows)?;
    c.execute(
        &format!(
            "UPDATE episodes SET {CLEARED}, erased_by = ?2 WHERE subject_id = ?1 AND erased_by IS NULL"
        ),
        params![s.id, erasure],
    )?;
    let passages: Vec<(i64, String)> = c
        .prepare("SELECT id, text FROM passages WHERE subject_id = ?1")?
        .query_map([s.id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    {
        let mut unindex = c.prepare(
            "INSERT INTO passage_fts (passage_fts, rowid, terms) VALUES ('delete', ?1, ?2)",
        )?;
        for (id, text) in &passages {
            unindex.execute(params![id, format!("{token} {}", index_text(text))])?;
        }
    }
    for sql in [
        "DELETE FROM episode_concepts WHERE subject_id = ?1",
        "DELETE FROM episode_vectors WHERE subject_id = ?1",
        "DELETE FROM annotations WHERE episode_id IN (SELECT id FROM episodes WHERE subject_id = ?1)",
        "DELETE FROM citation_checks WHERE subject_id = ?1",
        "DELETE FROM passage_vectors WHERE passage_id IN (SELECT id FROM passages WHERE subject_id = ?1)",
        "DELETE FROM passages WHERE subject_id = ?1",
        "DELETE FROM file_pages WHERE version_id IN
             (SELECT v.id FROM file_versions v JOIN files f ON f.id = v.file_id WHERE f.subject_id = ?1)",
        "DELETE FROM file_versions WHERE file_id IN (SELECT id FROM files WHERE subject_id = ?1)",
        "DELETE FROM files WHERE subject_id = ?1",
        "DELETE FROM concept_maps WHERE subject_id = ?1",
        "DELETE FROM beliefs WHERE subject_id = ?1",
        "DELETE FROM nightly_runs WHERE subject_id = ?1",
        "DELETE FROM working_sets WHERE subject_id = ?1",
        "DELETE FROM self_models WHERE subject_id = ?1",
        "DELETE FROM imports WHERE subject_id = ?1",
        // The title is the learner's text too; the key stays (it names the chain).
        "UPDATE subjects SET title = '', timezone = NULL WHERE id = ?1",
        "DELETE FROM erasing WHERE subject_id = ?1",
    ] {
        c.execute(sql, [s.id])?;
    }
    Ok(())
}

/// The erasures that cleared episodes of the subject, or retired it, oldest
/// first.
pub(crate) fn erasures(c: &Connection, s: &Subject) -> Result<Vec<Erasure>> {
    let mut stmt = c.prepare_cached(
        "SELECT id, at, scope, target, reference, reason, subjects, episodes FROM erasures
         WHERE id IN (SELECT DISTINCT erased_by FROM episodes WHERE subject_id = ?1 AND erased_by IS NOT NULL)
            OR id = (SELECT retired_by FROM subjects WHERE id = ?1)
         ORDER BY id",
    )?;
    let rows = stmt
        .query_map([s.id], |r| {
            Ok(Erasure {
                id: r.get(0)?,
                at: crate::from_ms(r.get(1)?),
                scope: r.get(2)?,
                target: r.get(3)?,
                reference: r.get(4)?,
                reason: r.get(5)?,
                subjects: r.get::<_, i64>(6)? as u64,
                episodes: r.get::<_, i64>(7)? as u64,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Rewrites the database so no erased byte stays on disk: the full-text
/// indexes merged (a deleted term leaves its old segments otherwise), the
/// write-ahead log folded in and emptied, the file rebuilt by VACUUM (free
/// pages and their stale contents are dropped), and the log emptied again.
/// Waits (the busy timeout) for other connections' reads to end.
pub(crate) fn compact(c: &Connection) -> Result<()> {
    c.execute_batch(
        "INSERT INTO episode_fts (episode_fts) VALUES ('optimize');
         INSERT INTO passage_fts (passage_fts) VALUES ('optimize');",
    )?;
    checkpoint(c)?;
    c.execute_batch("VACUUM")?;
    checkpoint(c)
}

fn checkpoint(c: &Connection) -> Result<()> {
    let busy: Option<i64> = c
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .optional()?;
    if busy == Some(1) {
        return Err(Error::Corrupt(
            "the write-ahead log could not be emptied: another connection kept reading; run the erase's compaction again".into(),
        ));
    }
    Ok(())
}

impl<T: Conn> ErasureRead for T {
    fn erasures(&self, s: &Subject) -> Result<Vec<tm_model::episodes::Erasure>> {
        erasures(self.conn(), s)
    }
    fn compaction_owed(&self) -> Result<Vec<i64>> {
        let c = self.conn();
        let mut stmt =
            c.prepare_cached("SELECT erasure_id FROM compaction_owed ORDER BY erasure_id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl ErasureWrite for SqliteTx<'_> {
    fn erase(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        subjects: &[Subject],
    ) -> Result<tm_model::episodes::Erasure> {
        // BEGIN IMMEDIATE holds the subjects' lock already (`lock_subject`);
        // the cached heads stay right: an erasure changes no hash.
        erase(&self.tx, e, subjects)
    }
    fn erase_episodes(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<tm_model::episodes::Erasure> {
        let c: &Connection = &self.tx;
        let token = subject_token(s.id);
        let mut rows: Vec<(i64, String, String)> = Vec::with_capacity(seqs.len());
        for seq in seqs {
            let row = c
                .query_row(
                    "SELECT id, text, concepts FROM episodes WHERE subject_id = ?1 AND seq = ?2 AND erased_by IS NULL",
                    params![s.id, *seq as i64],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?
                .ok_or_else(|| Error::UnknownEpisode {
                    key: s.key.to_string(),
                    seq: *seq,
                })?;
            rows.push(row);
        }
        let erasure = record(c, e, 1, rows.len())?;
        c.execute("INSERT INTO erasing (subject_id) VALUES (?1)", [s.id])?;
        unindex_episodes(c, &token, &rows)?;
        for (id, _, _) in &rows {
            c.execute(
                &format!("UPDATE episodes SET {CLEARED}, erased_by = ?2 WHERE id = ?1"),
                params![id, erasure],
            )?;
            for sql in [
                "DELETE FROM episode_concepts WHERE episode_id = ?1",
                "DELETE FROM episode_vectors WHERE episode_id = ?1",
                "DELETE FROM annotations WHERE episode_id = ?1",
                "DELETE FROM citation_checks WHERE episode_id = ?1",
            ] {
                c.execute(sql, [id])?;
            }
        }
        let mut tables = vec!["working_sets", "self_models"];
        if derived {
            tables.extend(["concept_maps", "beliefs"]);
            // The night's log names the beliefs it decayed: it keeps their count.
            let runs: Vec<(String, i64, String)> = c
                .prepare("SELECT day, at, summary FROM nightly_runs WHERE subject_id = ?1")?
                .query_map([s.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (day, at, summary) in runs {
                if let Some(scrubbed) = tm_model::nightly::summary_without_names(&summary) {
                    c.execute(
                        "DELETE FROM nightly_runs WHERE subject_id = ?1 AND day = ?2",
                        params![s.id, day],
                    )?;
                    c.execute(
                        "INSERT INTO nightly_runs (subject_id, day, at, summary) VALUES (?1, ?2, ?3, ?4)",
                        params![s.id, day, at, scrubbed],
                    )?;
                }
            }
        }
        for t in tables {
            c.execute(&format!("DELETE FROM {t} WHERE subject_id = ?1"), [s.id])?;
        }
        c.execute("DELETE FROM erasing WHERE subject_id = ?1", [s.id])?;
        Ok(e.recorded(erasure, 1, rows.len() as u64))
    }
}
