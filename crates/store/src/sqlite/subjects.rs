//! Subjects and their learners: lookup by name and owner (a learner's
//! name is its owner's), creation, the time zone.

use super::{Conn, SqliteTx, to_ms};
use crate::{Error, Result, SubjectRead, SubjectWrite};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::Owner;

/// A subject's columns, with its learner's owner and whether it is retired,
/// read `FROM` [`SUBJECTS`].
pub(crate) const SUBJECT_COLUMNS: &str =
    "s.id, s.key, s.title, s.language, s.timezone, l.tenant_id, s.retired_by IS NOT NULL";
/// The subjects joined with their learners.
pub(crate) const SUBJECTS: &str = "subjects s JOIN learners l ON l.id = s.learner_id";

pub(crate) fn subject_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Subject>> {
    let key: String = r.get(1)?;
    let tz: Option<String> = r.get(4)?;
    Ok(SubjectKey::parse(&key)
        .map_err(Error::from)
        .and_then(|key| {
            let timezone = match tz {
                None => None,
                Some(name) => Some(tm_model::subject::parse_tz(&name).map_err(|_| {
                    Error::Corrupt(format!("subject {key} has time zone {name:?}"))
                })?),
            };
            Ok(Subject {
                id: r.get(0)?,
                key,
                title: r.get(2)?,
                language: r.get(3)?,
                timezone,
                owner: Owner::of(r.get(5)?),
                retired: r.get(6)?,
            })
        }))
}

pub(crate) fn subjects_where(
    c: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<Subject>> {
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(args, subject_row)?;
    rows.map(|r| r.map_err(Error::from).and_then(|s| s))
        .collect()
}

/// The subject named `key`: of `owner`, or of any owner (`None`; several
/// live ones are [`Error::AmbiguousSubject`]). A live subject first, else
/// the newest retired one.
pub(crate) fn subject_by_key(
    c: &Connection,
    owner: Option<Owner>,
    key: &str,
) -> Result<Option<Subject>> {
    let found = match owner {
        None => subjects_where(
            c,
            &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE s.key = ?1 ORDER BY s.id"),
            [key],
        )?,
        Some(o) => subjects_where(
            c,
            &format!(
                "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE s.key = ?1 AND IFNULL(l.tenant_id, 0) = ?2 ORDER BY s.id"
            ),
            params![key, o.index_key()],
        )?,
    };
    crate::pick_subject(key, found, |id| name(c, id))
}

pub(crate) fn subjects(c: &Connection) -> Result<Vec<Subject>> {
    subjects_where(
        c,
        &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} ORDER BY s.key, s.id"),
        [],
    )
}

/// The id of `owner`'s learner `slug`, if it has one.
pub(crate) fn learner_id(c: &Connection, owner: Owner, slug: &str) -> Result<Option<i64>> {
    Ok(c.query_row(
        "SELECT id FROM learners WHERE slug = ?1 AND IFNULL(tenant_id, 0) = ?2",
        params![slug, owner.index_key()],
        |r| r.get(0),
    )
    .optional()?)
}

/// The learner `slug` of `owner`: its id, made now when it has none.
pub(crate) fn ensure_learner(c: &Connection, owner: Owner, slug: &str, now: i64) -> Result<i64> {
    if let Some(id) = learner_id(c, owner, slug)? {
        return Ok(id);
    }
    c.execute(
        "INSERT INTO learners (slug, created_at, tenant_id) VALUES (?1, ?2, ?3)",
        params![slug, now, owner.tenant_id()],
    )?;
    Ok(c.last_insert_rowid())
}

/// The name of the tenant with this id.
pub(crate) fn name(c: &Connection, id: i64) -> Result<Option<String>> {
    Ok(
        c.query_row("SELECT name FROM tenants WHERE id = ?1", [id], |r| r.get(0))
            .optional()?,
    )
}

impl<T: Conn> SubjectRead for T {
    fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
    fn subject(&self, key: &SubjectKey) -> Result<Option<Subject>> {
        subject_by_key(self.conn(), None, &key.to_string())
    }
    fn subject_of(&self, owner: Owner, key: &SubjectKey) -> Result<Option<Subject>> {
        subject_by_key(self.conn(), Some(owner), &key.to_string())
    }
    fn subjects(&self) -> Result<Vec<Subject>> {
        subjects(self.conn())
    }
    fn active_subjects(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Result<Vec<Subject>> {
        let c = self.conn();
        subjects_where(
            c,
            &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS}
             WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.subject_id = s.id AND e.at > ?1 AND e.at <= ?2
                           AND e.kind != 'consolidation')
             ORDER BY s.key, s.id"),
            params![to_ms(from), to_ms(to)],
        )
    }
}

impl SubjectWrite for SqliteTx<'_> {
    fn lock_subject(&mut self, _: &Subject) -> Result<()> {
        // BEGIN IMMEDIATE took the database's write lock already.
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
        let c: &Connection = &self.tx;
        if let Some(s) = subject_by_key(c, Some(owner), &key.to_string())?
            && !s.retired
        {
            return Ok(s);
        }
        let now = to_ms(at);
        let learner_id = ensure_learner(c, owner, &key.learner, now)?;
        let title = if title.trim().is_empty() {
            key.subject.as_str()
        } else {
            title
        };
        c.execute(
            "INSERT INTO subjects (learner_id, slug, key, title, language, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![learner_id, key.subject, key.to_string(), title, language, now],
        )?;
        let id = c.last_insert_rowid();
        subjects_where(
            c,
            &format!("SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE s.id = ?1"),
            [id],
        )?
        .pop()
        .ok_or_else(|| Error::Corrupt(format!("subject {key} vanished after insert")))
    }
    fn set_timezone(&mut self, s: &Subject, tz: chrono_tz::Tz) -> Result<()> {
        let c: &Connection = &self.tx;
        c.execute(
            "UPDATE subjects SET timezone = ?1 WHERE id = ?2",
            params![tz.name(), s.id],
        )?;
        Ok(())
    }
}
