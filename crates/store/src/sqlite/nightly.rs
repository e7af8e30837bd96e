//! What the nightly loop reads and writes: which subjects were active, the
//! run log that makes a night idempotent, the citation-check bookkeeping
//! (never-checked first, then oldest-checked), and the two derived caches
//! (working set, self-model) that each run replaces.

use super::episodes::{EPISODE_COLUMNS, SUBJECT_COLUMNS, SUBJECTS, episode_row, subjects_where};
use super::{from_ms, to_ms};
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeMap;
use tm_model::episodes::Episode;
use tm_model::nightly::CitationCheck;
use tm_model::subject::Subject;

pub(crate) fn active_subjects(
    c: &Connection,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Result<Vec<Subject>> {
    subjects_where(
        c,
        &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS}
         WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = s.id AND e.at > ?1 AND e.at <= ?2
                       AND e.kind != 'consolidation')
         ORDER BY s.key, s.id"),
        params![to_ms(from), to_ms(to)],
    )
}

/// (chain head seq, newest map snapshot id) of the subject, 0 for none: what
/// a working set was built from. Both are index lookups, cheap enough for
/// every turn.
pub(crate) fn stamp(c: &Connection, s: &Subject) -> Result<(i64, i64)> {
    Ok(c.prepare_cached(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE subject_id = ?1),
                    (SELECT COALESCE(MAX(id), 0) FROM concept_maps WHERE subject_id = ?1)",
    )?
    .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))?)
}

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

pub(crate) fn ran(c: &Connection, s: &Subject, day: &str) -> Result<bool> {
    Ok(
        c.prepare_cached("SELECT 1 FROM nightly_runs WHERE subject_id = ?1 AND day = ?2")?
            .query_row(params![s.id, day], |_| Ok(()))
            .optional()?
            .is_some(),
    )
}

pub(crate) fn runs(c: &Connection, s: &Subject) -> Result<Vec<DateTime<Utc>>> {
    let mut stmt =
        c.prepare_cached("SELECT at FROM nightly_runs WHERE subject_id = ?1 ORDER BY at, day")?;
    let rows = stmt.query_map([s.id], |r| r.get::<_, i64>(0))?;
    Ok(rows
        .map(|r| r.map(from_ms))
        .collect::<rusqlite::Result<_>>()?)
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

pub(crate) fn activity_by_month(
    c: &Connection,
    s: &Subject,
) -> Result<Vec<(String, String, String, usize)>> {
    let mut stmt = c.prepare_cached(
        // A row stored before times were bounded (years 1900-9999 UTC) may
        // lie outside what strftime can name: it is counted, under its own
        // label, rather than failing the report.
        "SELECT COALESCE(strftime('%Y-%m', at / 1000, 'unixepoch'), 'out of range') AS month, kind,
                COALESCE(json_extract(data, '$.verdict'), '') AS verdict, COUNT(*)
         FROM episodes WHERE subject_id = ?1 AND erased_by IS NULL
         GROUP BY month, kind, verdict ORDER BY month, kind, verdict",
    )?;
    let rows = stmt.query_map([s.id], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get::<_, i64>(3)? as usize,
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn citation_batch(
    c: &Connection,
    s: &Subject,
    at: DateTime<Utc>,
    n: usize,
) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
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

pub(crate) fn record_citation_check(
    c: &Connection,
    s: &Subject,
    episode_id: i64,
    at: DateTime<Utc>,
    status: &str,
    label: &str,
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO citation_checks (episode_id, subject_id, checked_at, status, label)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (episode_id) DO UPDATE SET checked_at = excluded.checked_at,
             status = excluded.status, label = excluded.label",
    )?
    .execute(params![episode_id, s.id, to_ms(at), status, label])?;
    Ok(())
}

pub(crate) fn citation_status_counts(
    c: &Connection,
    s: &Subject,
) -> Result<BTreeMap<String, usize>> {
    let mut stmt = c.prepare_cached(
        "SELECT status, COUNT(*) FROM citation_checks WHERE subject_id = ?1 GROUP BY status",
    )?;
    let rows = stmt.query_map([s.id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
