//! File versions and their pages. A version's bytes and checksum never
//! change (a trigger refuses it); only its replaced/removed status does.
//!
//! Passages of the subject's file pages, for the turn's material retrieval:
//! the rows, their full-text index and their vectors. Passages are derived
//! from `file_pages` (never part of the chain) and written when a file
//! version is stored; the migration that created them backfilled the rest.

use super::index::{blob_to_vec, bm25_hits, vec_to_blob};
use super::{Conn, SqliteTx, from_ms, id_list, subject_token, to_ms};
use crate::{Error, FileRead, FileWrite, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::passages::{Passage, split_page};
use tm_model::recall::index_text;
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

/// Splits and indexes the pages of one file version.
pub(crate) fn index_version(
    c: &Connection,
    subject_id: i64,
    version_id: i64,
    pages: &[String],
) -> Result<()> {
    let mut ins = c.prepare_cached(
        "INSERT OR IGNORE INTO passages (subject_id, version_id, page, line, text) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut fts = c.prepare_cached("INSERT INTO passage_fts (rowid, terms) VALUES (?1, ?2)")?;
    for (i, page) in pages.iter().enumerate() {
        for (line, text) in split_page(page) {
            let n = ins.execute(params![subject_id, version_id, i as i64 + 1, line, text])?;
            if n == 1 {
                let id = c.last_insert_rowid();
                fts.execute(params![
                    id,
                    format!("{} {}", subject_token(subject_id), index_text(&text))
                ])?;
            }
        }
    }
    Ok(())
}

/// Splits every stored file version into passages (run once, by the
/// migration that created the passage tables).
pub(crate) fn backfill(c: &Connection) -> Result<()> {
    let versions: Vec<(i64, i64)> = c
        .prepare("SELECT v.id, f.subject_id FROM file_versions v JOIN files f ON f.id = v.file_id ORDER BY v.id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (version, subject) in versions {
        let pages = pages(c, version)?;
        index_version(c, subject, version, &pages)?;
    }
    Ok(())
}

const PASSAGE_COLUMNS: &str = "p.id, f.name, p.version_id, p.page, p.line, p.text";
const CURRENT: &str = "v.replaced_at IS NULL AND v.removed_at IS NULL";

fn passage_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, Passage)> {
    Ok((
        r.get(0)?,
        Passage {
            file: r.get(1)?,
            version_id: r.get(2)?,
            page: r.get::<_, i64>(3)?.clamp(0, u32::MAX as i64) as u32,
            line: r.get::<_, i64>(4)?.clamp(0, u32::MAX as i64) as u32,
            text: r.get(5)?,
        },
    ))
}

fn passages_where(
    c: &Connection,
    filter: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<(i64, Passage)>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {PASSAGE_COLUMNS} FROM passages p
         JOIN file_versions v ON v.id = p.version_id JOIN files f ON f.id = v.file_id {filter}"
    ))?;
    let rows = stmt.query_map(args, passage_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn hits(
    c: &Connection,
    s: &Subject,
    terms: &[String],
    limit: usize,
) -> Result<Vec<(i64, f64)>> {
    bm25_hits(
        c,
        &format!(
            "SELECT h.rowid, h.score FROM
               (SELECT rowid, bm25(passage_fts) AS score FROM passage_fts WHERE passage_fts MATCH ?1) h
             JOIN passages p ON p.id = h.rowid
             JOIN file_versions v ON v.id = p.version_id
             WHERE {CURRENT}
             ORDER BY h.score LIMIT ?2"
        ),
        s,
        terms,
        limit,
    )
}

pub(crate) fn by_ids(c: &Connection, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
    let mut found = passages_where(
        c,
        "WHERE p.id IN (SELECT value FROM json_each(?1)) AND +p.subject_id = ?2",
        params![id_list(ids), s.id],
    )?;
    // In the order asked for.
    let mut out = Vec::with_capacity(found.len());
    for id in ids {
        if let Some(i) = found.iter().position(|(pid, _)| pid == id) {
            out.push(found.swap_remove(i));
        }
    }
    Ok(out)
}

pub(crate) fn current(c: &Connection, s: &Subject) -> Result<Vec<(i64, Passage)>> {
    passages_where(
        c,
        &format!("WHERE p.subject_id = ?1 AND {CURRENT} ORDER BY f.name, p.page, p.line"),
        [s.id],
    )
}

pub(crate) fn vectors(c: &Connection, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT p.id, pv.vector FROM passage_vectors pv
         JOIN passages p ON p.id = pv.passage_id JOIN file_versions v ON v.id = p.version_id
         WHERE p.subject_id = ?1 AND pv.model = ?2 AND {CURRENT}"
    ))?;
    let rows = stmt.query_map(params![s.id, model], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
    })?;
    rows.map(|r| {
        let (id, blob) = r?;
        if blob.len() % 4 != 0 {
            return Err(Error::Corrupt(format!(
                "passage {id}: vector length {}",
                blob.len()
            )));
        }
        Ok((id, blob_to_vec(&blob)))
    })
    .collect()
}

pub(crate) fn put_vectors(c: &Connection, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
    let mut stmt = c.prepare_cached(
        "INSERT OR REPLACE INTO passage_vectors (passage_id, model, vector) VALUES (?1, ?2, ?3)",
    )?;
    for (id, v) in vectors {
        stmt.execute(params![id, model, vec_to_blob(v)])?;
    }
    Ok(())
}

impl<T: Conn> FileRead for T {
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>> {
        versions(self.conn(), s.id, None)
    }
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>> {
        current_version(self.conn(), s, name)
    }
    fn pages(&self, version_id: i64) -> Result<Vec<String>> {
        pages(self.conn(), version_id)
    }
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>> {
        let c = self.conn();
        Ok(c.query_row(
            "SELECT v.bytes FROM file_versions v JOIN files f ON f.id = v.file_id
             WHERE v.id = ?1 AND f.subject_id = ?2",
            [version_id, s.id],
            |r| r.get(0),
        )
        .optional()?)
    }
    fn passage_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        hits(self.conn(), s, terms, limit)
    }
    fn passages_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
        by_ids(self.conn(), s, ids)
    }
    fn current_passages(&self, s: &Subject) -> Result<Vec<(i64, Passage)>> {
        current(self.conn(), s)
    }
    fn version_passages(&self, version_id: i64) -> Result<Vec<(i64, Passage)>> {
        let c = self.conn();
        passages_where(
            c,
            "WHERE p.version_id = ?1 ORDER BY p.page, p.line",
            [version_id],
        )
    }
    fn passage_vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        vectors(self.conn(), s, model)
    }
    fn passages_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(&format!(
            "SELECT p.id, p.text FROM passages p JOIN file_versions v ON v.id = p.version_id
             LEFT JOIN passage_vectors pv ON pv.passage_id = p.id AND pv.model = ?2
             WHERE p.subject_id = ?1 AND pv.passage_id IS NULL AND {CURRENT}
             ORDER BY p.id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![s.id, model, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl FileWrite for SqliteTx<'_> {
    fn add_file(
        &mut self,
        s: &Subject,
        name: &str,
        bytes: &[u8],
        format: &str,
        pages: &[String],
        at: DateTime<Utc>,
    ) -> Result<FileAdded> {
        let c: &Connection = &self.tx;
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
        index_version(c, s.id, id, pages)?;
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
    fn remove_file(&mut self, s: &Subject, name: &str, at: DateTime<Utc>) -> Result<FileVersion> {
        let c: &Connection = &self.tx;
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
        current_version(c, s, name)?
            .ok_or_else(|| Error::Corrupt(format!("file {name:?} vanished")))
    }
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        put_vectors(&self.tx, model, vectors)
    }
}
