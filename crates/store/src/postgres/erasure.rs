//! Erasure: clearing what a learner asked to forget (the chain's skeleton and digests stay), its records, and the compaction it owes.

use super::db::Db;
use super::{Pg, PgTx};
use crate::{ErasureRead, ErasureWrite, Error, Result, SubjectWrite};
pub(crate) use crate::{from_ms, to_ms};
use postgres::GenericClient;
use tm_model::subject::Subject;

/// Records the erasure and erases each subject (see `Tx::erase`).
/// What an erased episode's content columns become (the schema's trigger
/// lets exactly this through).
macro_rules! cleared {
    () => {
        "summary = ''::bytea, text = ''::bytea, concepts = '[]', evidence = '[]', data = '{}', \
         external_id = NULL, import_key = NULL, salt = NULL, topic = NULL, verdict = NULL"
    };
}

/// Writes the erasure record; its id.
pub(crate) fn record_erasure<C: GenericClient>(
    c: &mut Db<'_, C>,
    e: &tm_model::episodes::NewErasure,
    subjects: usize,
    episodes: usize,
) -> Result<i64> {
    Ok(c.query_one(
        "INSERT INTO erasures (at, scope, target, reference, reason, subjects, episodes)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        &[
            &to_ms(e.at),
            &e.scope,
            &e.target,
            &e.reference,
            &e.reason,
            &(subjects as i64),
            &(episodes as i64),
        ],
    )?
    .get(0))
    .and_then(|id: i64| {
        c.execute(
            "INSERT INTO compaction_owed (erasure_id) VALUES ($1)",
            &[&id],
        )?;
        Ok(id)
    })
}

/// The erasures whose compaction has not finished yet.
pub(crate) fn compaction_owed<C: GenericClient>(c: &mut Db<'_, C>) -> Result<Vec<i64>> {
    Ok(c.query(
        "SELECT erasure_id FROM compaction_owed ORDER BY erasure_id",
        &[],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// The erasures that cleared episodes of the subject, or retired it, oldest
/// first.
pub(crate) fn erasures<C: GenericClient>(
    c: &mut Db<'_, C>,
    s: &Subject,
) -> Result<Vec<tm_model::episodes::Erasure>> {
    Ok(c
        .query(
            "SELECT id, at, scope, target, reference, reason, subjects, episodes FROM erasures
             WHERE id IN (SELECT DISTINCT erased_by FROM episodes WHERE subject_id = $1 AND erased_by IS NOT NULL)
            OR id = (SELECT retired_by FROM subjects WHERE id = $1)
             ORDER BY id",
            &[&s.id],
        )?
        .iter()
        .map(|r| tm_model::episodes::Erasure {
            id: r.get(0),
            at: from_ms(r.get(1)),
            scope: r.get(2),
            target: r.get(3),
            reference: r.get(4),
            reason: r.get(5),
            subjects: r.get::<_, i64>(6) as u64,
            episodes: r.get::<_, i64>(7) as u64,
        })
        .collect())
}

impl<C: GenericClient> ErasureRead for Pg<C> {
    fn erasures(&self, s: &Subject) -> Result<Vec<tm_model::episodes::Erasure>> {
        self.with(|c| erasures(c, s))
    }
    fn compaction_owed(&self) -> Result<Vec<i64>> {
        self.with(|c| compaction_owed(c))
    }
}

impl ErasureWrite for PgTx<'_> {
    fn erase(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        subjects: &[Subject],
    ) -> Result<tm_model::episodes::Erasure> {
        for s in subjects {
            self.lock_subject(s)?;
        }
        self.with(|c| {
            let mut episodes = 0u64;
            for s in subjects {
                let n: i64 = c
                    .query_one(
                        "SELECT COUNT(*) FROM episodes WHERE subject_id = $1 AND erased_by IS NULL",
                        &[&s.id],
                    )?
                    .get(0);
                episodes += n as u64;
            }
            let id = record_erasure(c, e, subjects.len(), episodes as usize)?;
            for s in subjects {
                for sql in [
                    "INSERT INTO erasing (subject_id) VALUES ($1)",
                    concat!(
                        "UPDATE episodes SET ",
                        cleared!(),
                        ", erased_by = $2 WHERE subject_id = $1 AND erased_by IS NULL"
                    ),
                    "DELETE FROM fts_postings WHERE kind IN ('e', 'p') AND subject_id = $1",
                    "DELETE FROM fts_stats WHERE subject_id = $1",
                    "DELETE FROM episode_concepts WHERE subject_id = $1",
                    "DELETE FROM episode_vectors WHERE subject_id = $1",
                    "DELETE FROM vector_stats WHERE subject_id = $1",
                    "DELETE FROM annotations WHERE episode_id IN (SELECT id FROM episodes WHERE subject_id = $1)",
                    "DELETE FROM citation_checks WHERE subject_id = $1",
                    "DELETE FROM passage_vectors WHERE passage_id IN (SELECT id FROM passages WHERE subject_id = $1)",
                    "DELETE FROM passages WHERE subject_id = $1",
                    "DELETE FROM file_pages WHERE version_id IN
                         (SELECT v.id FROM file_versions v JOIN files f ON f.id = v.file_id WHERE f.subject_id = $1)",
                    "DELETE FROM file_versions WHERE file_id IN (SELECT id FROM files WHERE subject_id = $1)",
                    "DELETE FROM files WHERE subject_id = $1",
                    "DELETE FROM concept_maps WHERE subject_id = $1",
                    "DELETE FROM beliefs WHERE subject_id = $1",
                    "DELETE FROM nightly_runs WHERE subject_id = $1",
                    "DELETE FROM working_sets WHERE subject_id = $1",
                    "DELETE FROM self_models WHERE subject_id = $1",
                    "DELETE FROM imports WHERE subject_id = $1",
                    "UPDATE subjects SET title = ''::bytea, timezone = NULL WHERE id = $1",
                    // Erased whole: the name is free for a new subject.
                    "UPDATE subjects SET retired_by = $2 WHERE id = $1 AND retired_by IS NULL",
                    "DELETE FROM erasing WHERE subject_id = $1",
                ] {
                    if sql.contains("$2") {
                        c.execute(sql, &[&s.id, &id])?;
                    } else {
                        c.execute(sql, &[&s.id])?;
                    }
                }
            }
            Ok(e.recorded(id, subjects.len() as u64, episodes))
        })
    }
    fn erase_episodes(
        &mut self,
        e: &tm_model::episodes::NewErasure,
        s: &Subject,
        seqs: &[u64],
        derived: bool,
    ) -> Result<tm_model::episodes::Erasure> {
        self.lock_subject(s)?;
        self.with(|c| {
            let mut ids: Vec<i64> = Vec::with_capacity(seqs.len());
            for seq in seqs {
                let row = c.query_opt(
                    "SELECT id FROM episodes WHERE subject_id = $1 AND seq = $2 AND erased_by IS NULL",
                    &[&s.id, &(*seq as i64)],
                )?;
                let Some(row) = row else {
                    return Err(Error::UnknownEpisode {
                        key: s.key.to_string(),
                        seq: *seq,
                    });
                };
                ids.push(row.get(0));
            }
            let erasure = record_erasure(c, e, 1, ids.len())?;
            c.execute("INSERT INTO erasing (subject_id) VALUES ($1)", &[&s.id])?;
            // The postings go, and the subject's statistics lose what they counted.
            c.execute(
                "WITH d AS (DELETE FROM fts_postings WHERE kind = 'e' AND subject_id = $1 AND doc_id = ANY($2)
                            RETURNING doc_id, tf)
                 UPDATE fts_stats SET docs = docs - (SELECT COUNT(DISTINCT doc_id) FROM d),
                                      tokens = tokens - (SELECT COALESCE(SUM(tf), 0) FROM d)
                 WHERE kind = 'e' AND subject_id = $1",
                &[&s.id, &ids],
            )?;
            c.execute(
                concat!(
                    "UPDATE episodes SET ",
                    cleared!(),
                    ", erased_by = $2 WHERE id = ANY($1)"
                ),
                &[&ids, &erasure],
            )?;
            for sql in [
                "DELETE FROM episode_concepts WHERE episode_id = ANY($1)",
                "DELETE FROM episode_vectors WHERE episode_id = ANY($1)",
                "DELETE FROM annotations WHERE episode_id = ANY($1)",
                "DELETE FROM citation_checks WHERE episode_id = ANY($1)",
            ] {
                c.execute(sql, &[&ids])?;
            }
            // A cache of the subject's vectors sees a change it cannot grow into.
            c.execute(
                "UPDATE vector_stats SET writes = writes + 1 WHERE subject_id = $1",
                &[&s.id],
            )?;
            let mut tables = vec!["working_sets", "self_models"];
            if derived {
                tables.extend(["concept_maps", "beliefs"]);
                // The night's log names the beliefs it decayed: it keeps their count.
                let runs: Vec<(String, i64, String)> = c
                    .query(
                        "SELECT day, at, summary FROM nightly_runs WHERE subject_id = $1",
                        &[&s.id],
                    )?
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect();
                for (day, at, summary) in runs {
                    if let Some(scrubbed) = tm_model::nightly::summary_without_names(&summary) {
                        c.execute(
                            "DELETE FROM nightly_runs WHERE subject_id = $1 AND day = $2",
                            &[&s.id, &day],
                        )?;
                        c.execute(
                            "INSERT INTO nightly_runs (subject_id, day, at, summary) VALUES ($1, $2, $3, $4)",
                            &[&s.id, &day, &at, &scrubbed],
                        )?;
                    }
                }
            }
            for t in tables {
                c.execute(&format!("DELETE FROM {t} WHERE subject_id = $1"), &[&s.id])?;
            }
            c.execute("DELETE FROM erasing WHERE subject_id = $1", &[&s.id])?;
            Ok(e.recorded(erasure, 1, ids.len() as u64))
        })
    }
}
