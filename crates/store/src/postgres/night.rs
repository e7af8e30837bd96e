//! The nightly loop's records: which nights ran, the working set and self-model caches, citation checks, activity by month.

use super::db::Db;
use super::log::{EPISODE_COLUMNS, episode_row};
use super::rows::*;
use super::{Pg, PgTx};
use crate::{NightRead, NightWrite, Result};
pub(crate) use crate::{from_ms, to_ms};
use chrono::{DateTime, Utc};
use postgres::{GenericClient, Row};
use std::collections::BTreeMap;
use tm_model::episodes::Episode;
use tm_model::nightly::{CitationCheck, SelfModel, WorkingSet};
use tm_model::subject::Subject;

pub(crate) fn cache<C: GenericClient, T: serde::de::DeserializeOwned>(
    c: &mut Db<'_, C>,
    table: &str,
    s: &Subject,
) -> Result<Option<T>> {
    Ok(c.query_opt(
        &format!("SELECT data FROM {table} WHERE subject_id = $1"),
        &[&s.id],
    )?
    .and_then(|r| serde_json::from_str(r.get::<_, &str>(0)).ok()))
}

pub(crate) fn put_cache<C: GenericClient, T: serde::Serialize>(
    c: &mut Db<'_, C>,
    table: &str,
    s: &Subject,
    at: DateTime<Utc>,
    value: &T,
) -> Result<()> {
    let text = serde_json::to_string(value)
        .map_err(|e| corrupt(format!("cannot serialise a nightly result: {e}")))?;
    c.execute(
        &format!(
            "INSERT INTO {table} (subject_id, at, data) VALUES ($1, $2, $3)
             ON CONFLICT (subject_id) DO UPDATE SET at = excluded.at, data = excluded.data"
        ),
        &[&s.id, &to_ms(at), &text],
    )?;
    Ok(())
}

pub(crate) fn citation_row(r: &Row) -> CitationCheck {
    CitationCheck {
        episode_id: r.get(0),
        checked_at: from_ms(r.get(1)),
        status: r.get(2),
        label: r.get(3),
    }
}

pub(crate) fn citation_checks<C: GenericClient>(
    c: &mut Db<'_, C>,
    s: &Subject,
    status: &str,
) -> Result<Vec<CitationCheck>> {
    Ok(c.query(
        "SELECT episode_id, checked_at, status, label FROM citation_checks
             WHERE subject_id = $1 AND status = $2 ORDER BY episode_id",
        &[&s.id, &status],
    )?
    .iter()
    .map(citation_row)
    .collect())
}

pub(crate) fn nightly_runs<C: GenericClient>(
    c: &mut Db<'_, C>,
    s: &Subject,
) -> Result<Vec<DateTime<Utc>>> {
    Ok(c.query(
        "SELECT at FROM nightly_runs WHERE subject_id = $1 ORDER BY at, day",
        &[&s.id],
    )?
    .iter()
    .map(|r| from_ms(r.get(0)))
    .collect())
}

impl<C: GenericClient> NightRead for Pg<C> {
    fn nightly_ran(&self, s: &Subject, day: &str) -> Result<bool> {
        self.with(|c| {
            Ok(c.query_opt(
                "SELECT 1 FROM nightly_runs WHERE subject_id = $1 AND day = $2",
                &[&s.id, &day],
            )?
            .is_some())
        })
    }
    fn nightly_runs(&self, s: &Subject) -> Result<Vec<DateTime<Utc>>> {
        self.with(|c| nightly_runs(c, s))
    }
    fn subject_stamp(&self, s: &Subject) -> Result<(i64, i64)> {
        self.with(|c| {
            let r = c.query_one(
                "SELECT (SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE subject_id = $1),
                        (SELECT COALESCE(MAX(id), 0) FROM concept_maps WHERE subject_id = $1)",
                &[&s.id],
            )?;
            Ok((r.get(0), r.get(1)))
        })
    }
    fn working_set(&self, s: &Subject) -> Result<Option<WorkingSet>> {
        self.with(|c| cache(c, "working_sets", s))
    }
    fn self_model(&self, s: &Subject) -> Result<Option<SelfModel>> {
        self.with(|c| cache(c, "self_models", s))
    }
    fn citation_checks(&self, s: &Subject, status: &str) -> Result<Vec<CitationCheck>> {
        self.with(|c| citation_checks(c, s, status))
    }
    fn citation_batch(
        &self,
        s: &Subject,
        at: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<(Episode, Option<CitationCheck>)>> {
        self.with(|c| {
            // The citation columns come after the episode's own.
            let cols_n = EPISODE_COLUMNS.split(", ").count();
            let cols: String = EPISODE_COLUMNS
                .split(", ")
                .map(|c| format!("e.{c}"))
                .collect::<Vec<_>>()
                .join(", ");
            c.query(
                &format!(
                    "SELECT {cols}, c.checked_at, c.status, c.label FROM episodes e
                     LEFT JOIN citation_checks c ON c.episode_id = e.id
                     WHERE e.subject_id = $1 AND e.kind NOT IN ('consolidation', 'file') AND e.at <= $2 AND e.erased_by IS NULL
                     ORDER BY c.checked_at IS NOT NULL, c.checked_at, e.id LIMIT $3"
                ),
                &[&s.id, &to_ms(at), &lim(n)],
            )?
            .iter()
            .map(|r| {
                let e = episode_row(r)?;
                let check = r.get::<_, Option<i64>>(cols_n).map(|ms| CitationCheck {
                    episode_id: e.id,
                    checked_at: from_ms(ms),
                    status: r.get(cols_n + 1),
                    label: r.get(cols_n + 2),
                });
                Ok((e, check))
            })
            .collect()
        })
    }
    fn citation_status_counts(&self, s: &Subject) -> Result<BTreeMap<String, usize>> {
        self.with(|c| {
            Ok(c.query(
                "SELECT status, COUNT(*) FROM citation_checks WHERE subject_id = $1 GROUP BY status",
                &[&s.id],
            )?
            .iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as usize))
            .collect())
        })
    }
}

impl NightWrite for PgTx<'_> {
    fn record_nightly(
        &mut self,
        s: &Subject,
        day: &str,
        at: DateTime<Utc>,
        summary: &serde_json::Value,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO nightly_runs (subject_id, day, at, summary) VALUES ($1, $2, $3, $4)",
                &[&s.id, &day, &to_ms(at), &summary.to_string()],
            )?;
            Ok(())
        })
    }
    fn record_citation_check(
        &mut self,
        s: &Subject,
        episode_id: i64,
        at: DateTime<Utc>,
        status: &str,
        label: &str,
    ) -> Result<()> {
        self.with(|c| {
            c.execute(
                "INSERT INTO citation_checks (episode_id, subject_id, checked_at, status, label)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (episode_id) DO UPDATE SET checked_at = excluded.checked_at,
                     status = excluded.status, label = excluded.label",
                &[&episode_id, &s.id, &to_ms(at), &status, &label],
            )?;
            Ok(())
        })
    }
    fn put_working_set(&mut self, s: &Subject, at: DateTime<Utc>, ws: &WorkingSet) -> Result<()> {
        self.with(|c| put_cache(c, "working_sets", s, at, ws))
    }
    fn put_self_model(&mut self, s: &Subject, at: DateTime<Utc>, m: &SelfModel) -> Result<()> {
        self.with(|c| put_cache(c, "self_models", s, at, m))
    }
}
