//! Passages of the subject's file pages, for the turn's material retrieval:
//! the rows, their full-text index and their vectors. Passages are derived
//! from `file_pages` (never part of the chain) and written when a file
//! version is stored; the migration that created them backfilled the rest.

use crate::{Error, Result, Store, Subject};
use rusqlite::{Connection, params};
use tm_model::passages::{Passage, split_page};
use tm_model::recall::index_text;

/// The token that confines a passage query to one subject.
fn subject_token(subject_id: i64) -> String {
    format!("s{subject_id}")
}

/// Splits and indexes the pages of one file version.
pub(crate) fn index_version(
    conn: &Connection,
    subject_id: i64,
    version_id: i64,
    pages: &[String],
) -> Result<()> {
    let mut ins = conn.prepare_cached(
        "INSERT OR IGNORE INTO passages (subject_id, version_id, page, line, text) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut fts = conn.prepare_cached("INSERT INTO passage_fts (rowid, terms) VALUES (?1, ?2)")?;
    for (i, page) in pages.iter().enumerate() {
        for (line, text) in split_page(page) {
            let n = ins.execute(params![subject_id, version_id, i as i64 + 1, line, text])?;
            if n == 1 {
                let id = conn.last_insert_rowid();
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
pub(crate) fn backfill(conn: &Connection) -> Result<()> {
    let versions: Vec<(i64, i64)> = conn
        .prepare("SELECT v.id, f.subject_id FROM file_versions v JOIN files f ON f.id = v.file_id ORDER BY v.id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (version, subject) in versions {
        let pages: Vec<String> = conn
            .prepare_cached("SELECT text FROM file_pages WHERE version_id = ?1 ORDER BY page")?
            .query_map([version], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        index_version(conn, subject, version, &pages)?;
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

impl Store {
    /// Full-text hits among the passages of the subject's current files (no
    /// replaced or removed version), best BM25 first, as (passage id, score).
    pub fn passage_hits(
        &self,
        subject: &Subject,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let expr = format!("{} AND ({query})", subject_token(subject.id));
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT h.rowid, h.score FROM
               (SELECT rowid, bm25(passage_fts) AS score FROM passage_fts WHERE passage_fts MATCH ?1) h
             JOIN passages p ON p.id = h.rowid
             JOIN file_versions v ON v.id = p.version_id
             WHERE {CURRENT}
             ORDER BY h.score LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![expr, limit as i64], |r| {
            Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The passages with these ids, in the order given (unknown ids skipped).
    pub fn passages_by_ids(&self, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {PASSAGE_COLUMNS} FROM passages p
             JOIN file_versions v ON v.id = p.version_id JOIN files f ON f.id = v.file_id
             WHERE p.id = ?1"
        ))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(row) = stmt.query_map([id], passage_row)?.next() {
                out.push(row?);
            }
        }
        Ok(out)
    }

    /// Every passage of the subject's current files, in file, page, line order.
    pub fn current_passages(&self, subject: &Subject) -> Result<Vec<(i64, Passage)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {PASSAGE_COLUMNS} FROM passages p
             JOIN file_versions v ON v.id = p.version_id JOIN files f ON f.id = v.file_id
             WHERE p.subject_id = ?1 AND {CURRENT} ORDER BY f.name, p.page, p.line"
        ))?;
        let rows = stmt.query_map([subject.id], passage_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Vectors of the subject's current passages made by `model`.
    pub fn passage_vectors(&self, subject: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT p.id, pv.vector FROM passage_vectors pv
             JOIN passages p ON p.id = pv.passage_id JOIN file_versions v ON v.id = p.version_id
             WHERE p.subject_id = ?1 AND pv.model = ?2 AND {CURRENT}"
        ))?;
        let rows = stmt.query_map(params![subject.id, model], |r| {
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
            let v = blob
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            Ok((id, v))
        })
        .collect()
    }

    /// Up to `limit` current passages of the subject with no vector from `model`.
    pub fn passages_missing_vectors(
        &self,
        subject: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT p.id, p.text FROM passages p JOIN file_versions v ON v.id = p.version_id
             LEFT JOIN passage_vectors pv ON pv.passage_id = p.id AND pv.model = ?2
             WHERE p.subject_id = ?1 AND pv.passage_id IS NULL AND {CURRENT}
             ORDER BY p.id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![subject.id, model, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl crate::Tx<'_> {
    /// Stores passage vectors (replacing one from another model).
    pub fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        let mut stmt = self.tx.prepare_cached(
            "INSERT OR REPLACE INTO passage_vectors (passage_id, model, vector) VALUES (?1, ?2, ?3)",
        )?;
        for (id, v) in vectors {
            let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            stmt.execute(params![id, model, blob])?;
        }
        Ok(())
    }
}
