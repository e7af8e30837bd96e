//! What the nightly loop reads and writes: the run log that makes a night
//! idempotent, the citation-check bookkeeping (never-checked first, then
//! oldest-checked), and the two derived caches (working set, self-model)
//! that each run replaces.

use super::log::{EPISODE_COLUMNS, episode_row};
use super::{Conn, SqliteTx, from_ms, to_ms};
use crate::{Error, NightRead, NightWrite, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeMap;
use tm_model::episodes::Episode;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::subject::Subject;

/// A derived cache row, parsed; an unreadable one is no cache at all.
pub(crate) fn cache<T: serde::de::DeserializeOwned>(
    c: &Connection,
    table: &str,
    s: &Subject,
) -> Result<Option<T>> {
    let json: Option<String> = c
        .prepare_cached(&format!("SELECT data FROM {table} WHERE subject_id = ?1"))?
        .query_row([s.id], |r| r.get(0))
        .optional()?;
    Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
}

pub(crate) fn put_cache<T: serde::Serialize>(
    c: &Connection,
    table: &str,
    s: &Subject,
    at: DateTime<Utc>,
    value: &T,
) -> Result<()> {
    let json = serde_json::to_string(value)
        .map_err(|e| Error::Corrupt(format!("cannot serialise a nightly result: {e}")))?;
    c.prepare_cached(&format!(
        "INSERT INTO {table} (subject_id, at, data) VALUES (?1, ?2, ?3)
         ON CONFLICT (subject_id) DO UPDATE SET at = excluded.at, data = excluded.data"
    ))?
    .execute(params![s.id, to_ms(at), json])?;
    Ok(())
}

pub(crate) fn record(
    c: &Connection,
    s: &Subject,
    day: &str,
    at: DateTime<Utc>,
    summary: &serde_json::Value,
) -> Result<()> {
    c.execute(
        "INSERT INTO nightly_runs (subject_id, day, at, summary) VALUES (?1, ?2, ?3, ?4)",
        params![s.id, day, to_ms(at), summary.to_string()],
    )?;
    Ok(())
}

fn citation_check(r: &rusqlite::Row<'_>) -> rusqlite::Result<CitationCheck> {
    Ok(CitationCheck {
        episode_id: r.get(0)?,
        checked_at: from_ms(r.get(1)?),
        status: r.get(2)?,
        label: r.get(3)?,
    })
}

pub(crate) fn citation_checks(
    c: &Connection,
    s: &Subject,
    status: &str,
) -> Result<Vec<CitationCheck>> {
    let mut stmt = c.prepare_cached(
        "SELECT episode_id, checked_at, status, label FROM citation_checks
         WHERE subject_id = ?1 AND status = ?2 ORDER BY episode_id",
    )?;
    let rows = stmt.query_map(params![s.id, status], citation_check)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl<T: Conn> NightRead for T {
    fn nightly_ran(&self, s: &Subject, day: &str) -> Result<bool> {
        let c = self.conn();
        Ok(
            c.prepare_cached("SELECT 1 FROM nightly_runs WHERE subject_id = ?1 AND day = ?2")?
                .query_row(params![s.id, day], |_| Ok(()))
                .optional()?
                .is_some(),
        )
    }
    fn nightly_runs(&self, s: &Subject) -> Result<Vec<DateTime<Utc>>> {
        let c = self.conn();
        let mut stmt =
            c.prepare_cached("SELECT at FROM nightly_runs WHERE subject_id = ?1 ORDER BY at, day")?;
        let rows = stmt.query_map([s.id], |r| r.get::<_, i64>(0))?;
        Ok(rows
            .map(|r| r.map(from_ms))
            .collect::<rusqlite::Result<_>>()?)
    }
    fn subject_stamp(&self, s: &Subject) -> Result<(i64, i64)> {
        let c = self.conn();
        Ok(c.prepare_cached(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE subject_id = ?1),
                        (SELECT COALESCE(MAX(id), 0) FROM concept_maps WHERE subject_id = ?1)",
        )?
        .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))?)
    }
    fn working_set(&self, s: &Subject) -> Result<Option<WorkingSet>> {
        cache(self.conn(), "working_sets", s)
    }
    fn self_model(&self, s: &Subject) -> Result<Option<SelfModel>> {
        cache(self.conn(), "self_models", s)
    }
    fn citation_checks(&self, s: &Subject, status: &str) -> Result<Vec<CitationCheck>> {
        citation_checks(self.conn(), s, status)
    }
    fn citation_batch(
        &self,
        s: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
        let c = self.conn();
        // The citation columns come after the episode's own.
        let cols_n = EPISODE_COLUMNS.split(", ").count();
        let cols: String = EPISODE_COLUMNS
            .split(", ")
            .map(|c| format!("e.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {cols}, c.checked_at, c.status, c.label FROM episodes e
             LEFT JOIN citation_checks c ON c.episode_id = e.id
             WHERE e.subject_id = ?1 AND e.kind NOT IN ('consolidation', 'file') AND e.at <= ?2 AND e.erased_by IS NULL
             ORDER BY c.checked_at IS NOT NULL, c.checked_at, e.id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![s.id, to_ms(at), n.min(i64::MAX as usize) as i64],
            |r| {
                let e = episode_row(r)?;
                let checked: Option<i64> = r.get(cols_n)?;
                let check = match checked {
                    None => None,
                    Some(ms) => Some(CitationCheck {
                        episode_id: r.get(0)?,
                        checked_at: from_ms(ms),
                        status: r.get(cols_n + 1)?,
                        label: r.get(cols_n + 2)?,
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
    fn citation_status_counts(&self, s: &Subject) -> Result<BTreeMap<String, usize>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT status, COUNT(*) FROM citation_checks WHERE subject_id = ?1 GROUP BY status",
        )?;
        let rows = stmt.query_map([s.id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl NightWrite for SqliteTx<'_> {
    fn record_nightly(
        &mut self,
        s: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()> {
        record(&self.tx, s, day, at, summary)
    }
    fn record_citation_check(
        &mut self,
        s: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()> {
        let c: &Connection = &self.tx;
        c.prepare_cached(
            "INSERT INTO citation_checks (episode_id, subject_id, checked_at, status, label)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (episode_id) DO UPDATE SET checked_at = excluded.checked_at,
                 status = excluded.status, label = excluded.label",
        )?
        .execute(params![episode_id, s.id, to_ms(at), status, label])?;
        Ok(())
    }
    fn put_working_set(&mut self, s: &Subject, at: DateTime<Utc>, ws: &WorkingSet) -> Result<()> {
        put_cache(&self.tx, "working_sets", s, at, ws)
    }
    fn put_self_model(&mut self, s: &Subject, at: DateTime<Utc>, m: &SelfModel) -> Result<()> {
        put_cache(&self.tx, "self_models", s, at, m)
    }
}
