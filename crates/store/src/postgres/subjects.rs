//! Subjects and their learners: lookup by name and owner, creation, the per-subject lock.

use super::db::Db;
use super::rows::*;
use super::{Pg, PgTx};
pub(crate) use crate::to_ms;
use crate::{Result, SubjectRead, SubjectWrite};
use chrono::{DateTime, Utc};
use postgres::{GenericClient, Row};
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::Owner;

/// A subject's columns, with its learner's owner and whether it is retired,
/// read `FROM` [`SUBJECTS`].
pub(crate) const SUBJECT_COLUMNS: &str =
    "s.id, s.key, s.title, s.language, s.timezone, l.tenant_id, s.retired_by IS NOT NULL";
/// The subjects joined with their learners.
pub(crate) const SUBJECTS: &str = "subjects s JOIN learners l ON l.id = s.learner_id";

pub(crate) fn subject_row(r: &Row) -> Result<Subject> {
    let key: String = r.get(1);
    let key = SubjectKey::parse(&key)?;
    let tz: Option<String> = r.get(4);
    let timezone = match tz {
        None => None,
        Some(name) => Some(
            tm_model::subject::parse_tz(&name)
                .map_err(|_| corrupt(format!("subject {key} has time zone {name:?}")))?,
        ),
    };
    Ok(Subject {
        id: r.get(0),
        key,
        title: free_text(r, 2)?.to_string(),
        language: r.get(3),
        timezone,
        owner: Owner::of(r.get(5)),
        retired: r.get(6),
    })
}

pub(crate) fn subjects_where<C: GenericClient>(
    c: &mut Db<'_, C>,
    sql: &str,
    args: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<Subject>> {
    c.query(sql, args)?.iter().map(subject_row).collect()
}

/// The subject named `key`: of `owner`, or of any owner (`None`; several
/// live ones are [`crate::Error::AmbiguousSubject`]). A live subject first,
/// else the newest retired one.
pub(crate) fn subject_by_key<C: GenericClient>(
    c: &mut Db<'_, C>,
    owner: Option<Owner>,
    key: &str,
) -> Result<Option<Subject>> {
    let found = match owner {
        None => subjects_where(
            c,
            &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE s.key = $1 ORDER BY s.id"),
            &[&key],
        )?,
        Some(o) => subjects_where(
            c,
            &format!(
                "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE s.key = $1 AND COALESCE(l.tenant_id, 0) = $2 ORDER BY s.id"
            ),
            &[&key, &o.index_key()],
        )?,
    };
    crate::pick_subject(key, found, |id| {
        Ok(
            c.query_opt("SELECT name FROM tenants WHERE id = $1", &[&id])?
                .map(|r| r.get(0)),
        )
    })
}

pub(crate) fn subjects<C: GenericClient>(c: &mut Db<'_, C>) -> Result<Vec<Subject>> {
    subjects_where(
        c,
        &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} ORDER BY s.key, s.id"),
        &[],
    )
}

/// Serialises this transaction with every other writer of the subject, in
/// every process, until it ends.
pub(crate) fn lock_subject<C: GenericClient>(c: &mut Db<'_, C>, s: &Subject) -> Result<()> {
    c.execute(
        "SELECT pg_advisory_xact_lock(7001, $1::int4)",
        &[&(s.id as i32)],
    )?;
    Ok(())
}

/// The id of `owner`'s learner `slug`, if it has one.
pub(crate) fn learner_id<C: GenericClient>(
    c: &mut Db<'_, C>,
    owner: Owner,
    slug: &str,
) -> Result<Option<i64>> {
    Ok(c.query_opt(
        "SELECT id FROM learners WHERE slug = $1 AND COALESCE(tenant_id, 0) = $2",
        &[&slug, &owner.index_key()],
    )?
    .map(|r| r.get(0)))
}

/// The schema version: the migrations applied (none before the first).
pub(crate) const SCHEMA_VERSION: &str = "SELECT CASE WHEN to_regclass('tm_schema') IS NULL THEN 0
     ELSE (SELECT COALESCE(MAX(version), 0) FROM tm_schema) END";

impl<C: GenericClient> SubjectRead for Pg<C> {
    fn schema_version(&self) -> Result<i64> {
        self.with(|c| Ok(c.query_one(SCHEMA_VERSION, &[])?.get(0)))
    }
    fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        self.with(|c| subject_by_key(c, None, &key.to_string()))
    }
    fn subject_of(&self, owner: Owner, key: &SubjectKey) -> Result<Option<Subject>> {
        self.with(|c| subject_by_key(c, Some(owner), &key.to_string()))
    }
    fn subjects(&self) -> Result<Vec<Subject>> {
        self.with(|c| subjects(c))
    }
    fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>> {
        self.with(|c| {
            subjects_where(
                c,
                &format!(
                    "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS}
                     WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = s.id AND e.at > $1 AND e.at <= $2
                                   AND e.kind <> 'consolidation')
                     ORDER BY s.key, s.id"
                ),
                &[&to_ms(from), &to_ms(to)],
            )
        })
    }
}

impl SubjectWrite for PgTx<'_> {
    fn lock_subject(&mut self, s: &Subject) -> Result<()> {
        if self.locked.insert(s.id) {
            self.with(|c| lock_subject(c, s))?;
        }
        Ok(())
    }
    fn ensure_subject(
        &mut self,
        owner: Owner,
        key: &SubjectKey,
        title: &str,
        language: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<Subject> {
        self.with(|c| {
            let k = key.to_string();
            let live = |c: &mut Db<'_, postgres::Transaction<'_>>| -> Result<Option<Subject>> {
                Ok(subject_by_key(c, Some(owner), &k)?.filter(|s| !s.retired))
            };
            if let Some(s) = live(c)? {
                return Ok(s);
            }
            let now = to_ms(at);
            c.execute(
                "INSERT INTO learners (slug, created_at, tenant_id) VALUES ($1, $2, $3)
                 ON CONFLICT ((COALESCE(tenant_id, 0)), slug) DO NOTHING",
                &[&key.learner, &now, &owner.tenant_id()],
            )?;
            let learner_id = learner_id(c, owner, &key.learner)?
                .ok_or_else(|| corrupt(format!("learner {} vanished after insert", key.learner)))?;
            let title = if title.trim().is_empty() {
                key.subject.as_str()
            } else {
                title
            };
            c.execute(
                "INSERT INTO subjects (learner_id, slug, key, title, language, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (learner_id, slug) WHERE retired_by IS NULL DO NOTHING",
                &[
                    &learner_id,
                    &key.subject,
                    &k,
                    &title.as_bytes(),
                    &language,
                    &now,
                ],
            )?;
            live(c)?.ok_or_else(|| corrupt(format!("subject {key} vanished after insert")))
        })
    }
    fn set_timezone(&mut self, s: &Subject, tz: chrono_tz::Tz) -> Result<()> {
        self.with(|c| {
            c.execute(
                "UPDATE subjects SET timezone = $1 WHERE id = $2",
                &[&tz.name(), &s.id],
            )?;
            Ok(())
        })
    }
}
