//! Passages of the subject's file pages, for the turn's material retrieval:
//! the rows, their full-text index and their vectors. Passages are derived
//! from `file_pages` (never part of the chain) and written when a file
//! version is stored; the migration that created them backfilled the rest.

use super::recall::{blob_to_vec, bm25_hits, vec_to_blob};
use super::{id_list, subject_token};
use crate::{Error, Result};
use rusqlite::{Connection, params};
use tm_model::passages::{Passage, split_page};
use tm_model::recall::index_text;
use tm_model::subject::Subject;

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
        let pages = super::files::pages(c, version)?;
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

pub(crate) fn of_version(c: &Connection, version_id: i64) -> Result<Vec<(i64, Passage)>> {
    passages_where(
        c,
        "WHERE p.version_id = ?1 ORDER BY p.page, p.line",
        [version_id],
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

pub(crate) fn missing_vectors(
    c: &Connection,
    s: &Subject,
    model: &str,
    limit: usize,
) -> Result<Vec<(i64, String)>> {
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

pub(crate) fn put_vectors(c: &Connection, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
    let mut stmt = c.prepare_cached(
        "INSERT OR REPLACE INTO passage_vectors (passage_id, model, vector) VALUES (?1, ?2, ?3)",
    )?;
    for (id, v) in vectors {
        stmt.execute(params![id, model, vec_to_blob(v)])?;
    }
    Ok(())
}
