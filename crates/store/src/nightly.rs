//! What the nightly loop reads and writes: which subjects were active, the
//! run log that makes a night idempotent, the citation-check bookkeeping
//! (never-checked first, then oldest-checked), and the two derived caches
//! (working set, self-model) that each run replaces.

use crate::{
    Annotation, EPISODE_COLUMNS, Episode, Result, Store, Subject, Tx, episode_row, from_ms, to_ms,
};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeMap;
use tm_model::episodes::Kind;

/// The latest verification of one episode's citation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CitationCheck {
    pub episode_id: i64,
    pub checked_at: DateTime<Utc>,
    /// holds | changed | unverifiable
    pub status: String,
    pub label: String,
}

fn episodes(conn: &Connection, sql: &str, args: impl rusqlite::Params) -> Result<Vec<Episode>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(args, episode_row)?;
    rows.map(|r| r?).collect()
}

fn stamp(conn: &Connection, subject_id: i64) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE subject_id = ?1),
                (SELECT COALESCE(MAX(id), 0) FROM concept_maps WHERE subject_id = ?1)",
        [subject_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

fn cache(conn: &Connection, table: &str, subject_id: i64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(&format!("SELECT data FROM {table} WHERE subject_id = ?1"))?
        .query_row([subject_id], |r| r.get(0))
        .optional()?)
}

fn citation_check(r: &rusqlite::Row<'_>) -> rusqlite::Result<CitationCheck> {
    Ok(CitationCheck {
        episode_id: r.get(0)?,
        checked_at: from_ms(r.get(1)?),
        status: r.get(2)?,
        label: r.get(3)?,
    })
}

impl Store {
    /// Subjects with at least one episode other than a consolidation in
    /// (`from`, `to`], by key.
    pub fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.id, s.key, s.title, s.language, s.timezone FROM subjects s
             WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = s.id AND e.at > ?1 AND e.at <= ?2
                           AND e.kind != 'consolidation')
             ORDER BY s.key",
        )?;
        let rows = stmt.query_map(params![to_ms(from), to_ms(to)], crate::subject_row)?;
        rows.map(|r| r.map_err(crate::Error::from).and_then(|s| s))
            .collect()
    }

    /// (chain head seq, newest map snapshot id) of the subject, 0 for none:
    /// what a working set was built from. Both are index lookups (the chain's
    /// `(subject_id, seq)` key, the snapshots' `(subject_id, id)` index), cheap
    /// enough for every turn.
    pub fn subject_stamp(&self, subject: &Subject) -> Result<(i64, i64)> {
        stamp(&self.conn, subject.id)
    }

    /// The subject's working set (JSON), if a night built one.
    pub fn working_set(&self, subject: &Subject) -> Result<Option<String>> {
        cache(&self.conn, "working_sets", subject.id)
    }

    /// The subject's self-model (JSON), if a night composed one.
    pub fn self_model(&self, subject: &Subject) -> Result<Option<String>> {
        cache(&self.conn, "self_models", subject.id)
    }

    /// Whether the night of `day` (YYYY-MM-DD) already ran for the subject.
    pub fn nightly_ran(&self, subject: &Subject, day: &str) -> Result<bool> {
        ran(&self.conn, subject.id, day)
    }

    /// Latest citation checks of the subject with the given status, oldest episode first.
    pub fn citation_checks(&self, subject: &Subject, status: &str) -> Result<Vec<CitationCheck>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT episode_id, checked_at, status, label FROM citation_checks
             WHERE subject_id = ?1 AND status = ?2 ORDER BY episode_id",
        )?;
        let rows = stmt.query_map(params![subject.id, status], citation_check)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every annotation of `kind` on the subject's episodes, oldest first.
    pub fn annotations_of_kind(&self, subject: &Subject, kind: &str) -> Result<Vec<Annotation>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT a.id, a.episode_id, a.kind, a.at, a.data FROM annotations a
             JOIN episodes e ON e.id = a.episode_id
             WHERE e.subject_id = ?1 AND a.kind = ?2 ORDER BY a.at, a.id",
        )?;
        let rows = stmt.query_map(params![subject.id, kind], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        rows.map(|r| {
            let (id, episode_id, kind, at, data) = r?;
            let data = serde_json::from_str(&data)
                .map_err(|e| crate::Error::Corrupt(format!("annotation {id}: {e}")))?;
            Ok(Annotation {
                id,
                episode_id,
                kind,
                at: from_ms(at),
                data,
            })
        })
        .collect()
    }

    /// Episodes by id (any subject), in id order; ids not found are skipped.
    pub fn episodes_with_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.extend(episodes(
                &self.conn,
                &format!("SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?1"),
                [id],
            )?);
        }
        out.sort_by_key(|e| e.id);
        Ok(out)
    }

    /// The episode just before `seq` in the subject's chain.
    pub fn episode_at_seq(&self, subject: &Subject, seq: u64) -> Result<Option<Episode>> {
        Ok(episodes(
            &self.conn,
            &format!("SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND seq = ?2"),
            params![subject.id, seq as i64],
        )?
        .pop())
    }

    /// (month `YYYY-MM` UTC, kind, verdict or "", count) over the subject's episodes.
    pub fn activity_by_month(
        &self,
        subject: &Subject,
    ) -> Result<Vec<(String, String, String, usize)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT strftime('%Y-%m', at / 1000, 'unixepoch') AS month, kind,
                    COALESCE(json_extract(data, '$.verdict'), '') AS verdict, COUNT(*)
             FROM episodes WHERE subject_id = ?1 GROUP BY month, kind, verdict ORDER BY month, kind, verdict",
        )?;
        let rows = stmt.query_map([subject.id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, i64>(3)? as usize,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn ran(conn: &Connection, subject_id: i64, day: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM nightly_runs WHERE subject_id = ?1 AND day = ?2")?
        .query_row(params![subject_id, day], |_| Ok(()))
        .optional()?
        .is_some())
}

impl Tx<'_> {
    /// Whether the night of `day` already ran for the subject (read under the write lock).
    pub fn nightly_ran(&self, subject: &Subject, day: &str) -> Result<bool> {
        ran(&self.tx, subject.id, day)
    }

    /// Records the run; a second record of the same (subject, day) is an error.
    pub fn record_nightly(
        &mut self,
        subject: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()> {
        self.tx.execute(
            "INSERT INTO nightly_runs (subject_id, day, at, summary) VALUES (?1, ?2, ?3, ?4)",
            params![subject.id, day, to_ms(at), summary.to_string()],
        )?;
        Ok(())
    }

    /// The subject's episodes in (`from`, `to`], in chain order.
    pub fn episodes_between(
        &self,
        subject: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        episodes(
            &self.tx,
            &format!(
                "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND at > ?2 AND at <= ?3 ORDER BY seq"
            ),
            params![subject.id, to_ms(from), to_ms(to)],
        )
    }

    /// The subject's episodes of one kind up to `at`, in chain order.
    pub fn episodes_of_kind(
        &self,
        subject: &Subject,
        kind: Kind,
        at: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        episodes(
            &self.tx,
            &format!(
                "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?1 AND kind = ?2 AND at <= ?3 ORDER BY seq"
            ),
            params![subject.id, kind.as_str(), to_ms(at)],
        )
    }

    /// Episodes per kind name, up to `at`.
    pub fn episode_counts(
        &self,
        subject: &Subject,
        at: DateTime<Utc>,
    ) -> Result<BTreeMap<String, usize>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT kind, COUNT(*) FROM episodes WHERE subject_id = ?1 AND at <= ?2 GROUP BY kind",
        )?;
        let rows = stmt.query_map(params![subject.id, to_ms(at)], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every version of every file of the subject, as seen in this transaction.
    pub fn file_versions(&self, subject: &Subject) -> Result<Vec<crate::FileVersion>> {
        crate::file_versions(&self.tx, subject.id, None)
    }

    /// Up to `n` episodes (none after `at`) whose citation is due: never
    /// checked first (oldest episode first), then the longest since checked;
    /// each with its latest check. Consolidations and `file` episodes are not
    /// memories of the learner's work: a file episode records the file's own
    /// arrival or removal, so its version being replaced later is history,
    /// not a stale memory.
    pub fn citation_batch(
        &self,
        subject: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
        let cols: String = EPISODE_COLUMNS
            .split(", ")
            .map(|c| format!("e.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut stmt = self.tx.prepare_cached(&format!(
            "SELECT {cols}, c.checked_at, c.status, c.label FROM episodes e
             LEFT JOIN citation_checks c ON c.episode_id = e.id
             WHERE e.subject_id = ?1 AND e.kind NOT IN ('consolidation', 'file') AND e.at <= ?2
             ORDER BY c.checked_at IS NOT NULL, c.checked_at, e.id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![subject.id, to_ms(at), n.min(i64::MAX as usize) as i64],
            |r| {
                let e = episode_row(r)?;
                let checked: Option<i64> = r.get(12)?;
                let check = match checked {
                    None => None,
                    Some(ms) => Some(CitationCheck {
                        episode_id: r.get(0)?,
                        checked_at: from_ms(ms),
                        status: r.get(13)?,
                        label: r.get(14)?,
                    }),
                };
                Ok((e, check))
            },
        )?;
        rows.map(|r| {
            let (e, c) = r?;
            Ok((e?, c))
        })
        .collect()
    }

    /// Replaces the latest check of an episode's citation.
    pub fn record_citation_check(
        &mut self,
        subject: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO citation_checks (episode_id, subject_id, checked_at, status, label)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (episode_id) DO UPDATE SET checked_at = excluded.checked_at,
                     status = excluded.status, label = excluded.label",
            )?
            .execute(params![episode_id, subject.id, to_ms(at), status, label])?;
        Ok(())
    }

    /// Latest citation checks per status for the subject.
    pub fn citation_status_counts(&self, subject: &Subject) -> Result<BTreeMap<String, usize>> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT status, COUNT(*) FROM citation_checks WHERE subject_id = ?1 GROUP BY status",
        )?;
        let rows = stmt.query_map([subject.id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// (chain head seq, newest map snapshot id) as seen in this transaction.
    pub fn subject_stamp(&self, subject: &Subject) -> Result<(i64, i64)> {
        stamp(&self.tx, subject.id)
    }

    /// Replaces the subject's working set (a derived cache, not history).
    pub fn put_working_set(
        &mut self,
        subject: &Subject,
        at: DateTime<Utc>,
        json: &str,
    ) -> Result<()> {
        self.put_cache("working_sets", subject, at, json)
    }

    /// Replaces the subject's self-model (a derived cache, not history).
    pub fn put_self_model(
        &mut self,
        subject: &Subject,
        at: DateTime<Utc>,
        json: &str,
    ) -> Result<()> {
        self.put_cache("self_models", subject, at, json)
    }

    fn put_cache(
        &mut self,
        table: &str,
        subject: &Subject,
        at: DateTime<Utc>,
        json: &str,
    ) -> Result<()> {
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO {table} (subject_id, at, data) VALUES (?1, ?2, ?3)
                 ON CONFLICT (subject_id) DO UPDATE SET at = excluded.at, data = excluded.data"
            ))?
            .execute(params![subject.id, to_ms(at), json])?;
        Ok(())
    }
}
