//! File versions and their pages. A version's bytes and checksum never
//! change (a trigger refuses it); only its replaced/removed status does.

use super::{from_ms, passages, to_ms};
use crate::{Error, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::subject::Subject;

pub(crate) fn versions(
    c: &Connection,
    subject_id: i64,
    name: Option<&str>,
) -> Result<Vec<FileVersion>> {
    let mut stmt = c.prepare_cached(
        "SELECT v.id, f.name, v.version, v.sha256, v.format, v.added_at, v.replaced_at, v.replaced_by, v.removed_at,
                (SELECT COUNT(*) FROM file_pages p WHERE p.version_id = v.id)
         FROM file_versions v JOIN files f ON f.id = v.file_id
         WHERE f.subject_id = ?1 AND (?2 IS NULL OR f.name = ?2)
         ORDER BY v.added_at, v.id",
    )?;
    let rows = stmt.query_map(params![subject_id, name], |r| {
        Ok(FileVersion {
            id: r.get(0)?,
            name: r.get(1)?,
            version: r.get(2)?,
            sha256: r.get(3)?,
            format: r.get(4)?,
            added_at: from_ms(r.get(5)?),
            replaced_at: r.get::<_, Option<i64>>(6)?.map(from_ms),
            replaced_by: r.get(7)?,
            removed_at: r.get::<_, Option<i64>>(8)?.map(from_ms),
            pages: r.get::<_, i64>(9)? as usize,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn current_version(
    c: &Connection,
    s: &Subject,
    name: &str,
) -> Result<Option<FileVersion>> {
    Ok(versions(c, s.id, Some(name))?
        .into_iter()
        .max_by_key(|v| v.version))
}

pub(crate) fn pages(c: &Connection, version_id: i64) -> Result<Vec<String>> {
    let mut stmt =
        c.prepare_cached("SELECT text FROM file_pages WHERE version_id = ?1 ORDER BY page")?;
    let rows = stmt.query_map([version_id], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn version_bytes(
    c: &Connection,
    s: &Subject,
    version_id: i64,
) -> Result<Option<Vec<u8>>> {
    Ok(c.query_row(
        "SELECT v.bytes FROM file_versions v JOIN files f ON f.id = v.file_id
         WHERE v.id = ?1 AND f.subject_id = ?2",
        [version_id, s.id],
        |r| r.get(0),
    )
    .optional()?)
}

pub(crate) fn add(
    c: &Connection,
    s: &Subject,
    name: &str,
    bytes: &[u8],
    format: &str,
    pages: &[String],
    at: DateTime<Utc>,
) -> Result<FileAdded> {
    let sha = hex::encode(Sha256::digest(bytes));
    let now = to_ms(at);
    c.execute(
        "INSERT INTO files (subject_id, name) VALUES (?1, ?2) ON CONFLICT (subject_id, name) DO NOTHING",
        params![s.id, name],
    )?;
    let file_id: i64 = c.query_row(
        "SELECT id FROM files WHERE subject_id = ?1 AND name = ?2",
        params![s.id, name],
        |r| r.get(0),
    )?;
    let current = current_version(c, s, name)?;
    if let Some(cur) = &current
        && cur.sha256 == sha
        && cur.removed_at.is_none()
    {
        return Ok(FileAdded::Unchanged(cur.clone()));
    }
    let version: i64 = c.query_row(
        "SELECT COALESCE(MAX(version), 0) + 1 FROM file_versions WHERE file_id = ?1",
        [file_id],
        |r| r.get(0),
    )?;
    c.execute(
        "INSERT INTO file_versions (file_id, version, sha256, bytes, format, added_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![file_id, version, sha, bytes, format, now],
    )?;
    let id = c.last_insert_rowid();
    {
        let mut ins = c.prepare_cached(
            "INSERT INTO file_pages (version_id, page, text) VALUES (?1, ?2, ?3)",
        )?;
        for (i, text) in pages.iter().enumerate() {
            ins.execute(params![id, i as i64 + 1, text])?;
        }
    }
    passages::index_version(c, s.id, id, pages)?;
    let replaced = match current {
        Some(cur) if cur.removed_at.is_none() => {
            c.execute(
                "UPDATE file_versions SET replaced_at = ?1, replaced_by = ?2 WHERE id = ?3",
                params![now, id, cur.id],
            )?;
            Some(cur.id)
        }
        _ => None,
    };
    let version = current_version(c, s, name)?
        .ok_or_else(|| Error::Corrupt(format!("file {name:?} vanished after insert")))?;
    Ok(FileAdded::New { version, replaced })
}

pub(crate) fn remove(
    c: &Connection,
    s: &Subject,
    name: &str,
    at: DateTime<Utc>,
) -> Result<FileVersion> {
    let cur = current_version(c, s, name)?.ok_or_else(|| Error::UnknownFile {
        key: s.key.to_string(),
        name: name.to_string(),
    })?;
    if cur.removed_at.is_none() {
        c.execute(
            "UPDATE file_versions SET removed_at = ?1 WHERE id = ?2",
            params![to_ms(at), cur.id],
        )?;
    }
    current_version(c, s, name)?.ok_or_else(|| Error::Corrupt(format!("file {name:?} vanished")))
}
