//! Files: versions with their bytes and pages, and the passages cut from them (full text and vectors).

use super::db::Db;
use super::index::{blob_to_vec, vec_to_blob};
use super::rows::*;
use super::{Pg, PgTx, fts};
use crate::{Error, FileRead, FileWrite, Result, SubjectWrite};
pub(crate) use crate::{from_ms, to_ms};
use chrono::{DateTime, Utc};
use postgres::{GenericClient, Row};
use sha2::{Digest, Sha256};
use tm_model::files::{FileAdded, FileVersion};
use tm_model::passages::{Passage, split_page};
use tm_model::recall::index_text;
use tm_model::subject::Subject;

pub(crate) fn version_row(r: &Row) -> FileVersion {
    FileVersion {
        id: r.get(0),
        name: r.get(1),
        version: r.get(2),
        sha256: r.get(3),
        format: r.get(4),
        added_at: from_ms(r.get(5)),
        replaced_at: r.get::<_, Option<i64>>(6).map(from_ms),
        replaced_by: r.get(7),
        removed_at: r.get::<_, Option<i64>>(8).map(from_ms),
        pages: r.get::<_, i64>(9) as usize,
    }
}

pub(crate) fn versions<C: GenericClient>(
    c: &mut Db<'_, C>,
    subject_id: i64,
    name: Option<&str>,
) -> Result<Vec<FileVersion>> {
    Ok(c
        .query(
            "SELECT v.id, f.name, v.version, v.sha256, v.format, v.added_at, v.replaced_at, v.replaced_by, v.removed_at,
                    (SELECT COUNT(*) FROM file_pages p WHERE p.version_id = v.id)
             FROM file_versions v JOIN files f ON f.id = v.file_id
             WHERE f.subject_id = $1 AND ($2::text IS NULL OR f.name = $2)
             ORDER BY v.added_at, v.id",
            &[&subject_id, &name],
        )?
        .iter()
        .map(version_row)
        .collect())
}

pub(crate) fn current_version<C: GenericClient>(
    c: &mut Db<'_, C>,
    s: &Subject,
    name: &str,
) -> Result<Option<FileVersion>> {
    Ok(versions(c, s.id, Some(name))?
        .into_iter()
        .max_by_key(|v| v.version))
}

/// Splits and indexes the pages of one file version into passages.
pub(crate) fn index_version<C: GenericClient>(
    c: &mut Db<'_, C>,
    subject_id: i64,
    version_id: i64,
    pages: &[String],
) -> Result<()> {
    for (i, page) in pages.iter().enumerate() {
        for (line, text) in split_page(page) {
            let row = c.query_opt(
                "INSERT INTO passages (subject_id, version_id, page, line, text) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT DO NOTHING RETURNING id",
                &[&subject_id, &version_id, &(i as i64 + 1), &(line as i64), &text],
            )?;
            if let Some(r) = row {
                fts::index(c, fts::PASSAGES, subject_id, r.get(0), &index_text(&text))?;
            }
        }
    }
    Ok(())
}

const CURRENT: &str = "v.replaced_at IS NULL AND v.removed_at IS NULL";

pub(crate) fn passage_rows(rows: &[Row]) -> Vec<(i64, Passage)> {
    rows.iter()
        .map(|r| {
            (
                r.get(0),
                Passage {
                    file: r.get(1),
                    version_id: r.get(2),
                    page: r.get::<_, i64>(3).clamp(0, u32::MAX as i64) as u32,
                    line: r.get::<_, i64>(4).clamp(0, u32::MAX as i64) as u32,
                    text: r.get(5),
                },
            )
        })
        .collect()
}

pub(crate) fn passages_where<C: GenericClient>(
    c: &mut Db<'_, C>,
    filter: &str,
    args: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<(i64, Passage)>> {
    Ok(passage_rows(&c.query(
        &format!(
            "SELECT p.id, f.name, p.version_id, p.page, p.line, p.text FROM passages p
             JOIN file_versions v ON v.id = p.version_id JOIN files f ON f.id = v.file_id {filter}"
        ),
        args,
    )?))
}

pub(crate) fn passage_vectors<C: GenericClient>(
    c: &mut Db<'_, C>,
    s: &Subject,
    model: &str,
) -> Result<Vec<(i64, Vec<f32>)>> {
    c.query(
        &format!(
            "SELECT p.id, pv.vector FROM passage_vectors pv
             JOIN passages p ON p.id = pv.passage_id JOIN file_versions v ON v.id = p.version_id
             WHERE p.subject_id = $1 AND pv.model = $2 AND {CURRENT}"
        ),
        &[&s.id, &model],
    )?
    .iter()
    .map(|r| {
        let id: i64 = r.get(0);
        let blob: &[u8] = r.get(1);
        if !blob.len().is_multiple_of(4) {
            return Err(corrupt(format!(
                "passage {id}: vector length {}",
                blob.len()
            )));
        }
        Ok((id, blob_to_vec(blob)))
    })
    .collect()
}

impl<C: GenericClient> FileRead for Pg<C> {
    fn file_versions(&self, s: &Subject) -> Result<Vec<FileVersion>> {
        self.with(|c| versions(c, s.id, None))
    }
    fn current_version(&self, s: &Subject, name: &str) -> Result<Option<FileVersion>> {
        self.with(|c| current_version(c, s, name))
    }
    fn pages(&self, version_id: i64) -> Result<Vec<String>> {
        self.with(|c| {
            Ok(c.query(
                "SELECT text FROM file_pages WHERE version_id = $1 ORDER BY page",
                &[&version_id],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }
    fn version_bytes(&self, s: &Subject, version_id: i64) -> Result<Option<Vec<u8>>> {
        self.with(|c| {
            Ok(c.query_opt(
                "SELECT v.bytes FROM file_versions v JOIN files f ON f.id = v.file_id
                 WHERE v.id = $1 AND f.subject_id = $2",
                &[&version_id, &s.id],
            )?
            .map(|r| r.get(0)))
        })
    }
    fn passage_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        self.with(|c| {
            fts::hits(
                c,
                fts::PASSAGES,
                s.id,
                terms,
                limit,
                &format!(
                    "EXISTS (SELECT 1 FROM passages p JOIN file_versions v ON v.id = p.version_id
                             WHERE p.id = s.doc_id AND {CURRENT})"
                ),
                None,
            )
        })
    }
    fn passages_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| {
            let mut found = passages_where(
                c,
                "WHERE p.subject_id = $2 AND p.id = ANY($1)",
                &[&ids, &s.id],
            )?;
            let mut out = Vec::with_capacity(found.len());
            for id in ids {
                if let Some(i) = found.iter().position(|(pid, _)| pid == id) {
                    out.push(found.swap_remove(i));
                }
            }
            Ok(out)
        })
    }
    fn current_passages(&self, s: &Subject) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| {
            passages_where(
                c,
                &format!("WHERE p.subject_id = $1 AND {CURRENT} ORDER BY f.name, p.page, p.line"),
                &[&s.id],
            )
        })
    }
    fn version_passages(&self, version_id: i64) -> Result<Vec<(i64, Passage)>> {
        self.with(|c| {
            passages_where(
                c,
                "WHERE p.version_id = $1 ORDER BY p.page, p.line",
                &[&version_id],
            )
        })
    }
    fn passage_vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| passage_vectors(c, s, model))
    }
    fn passages_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        self.with(|c| {
            Ok(c.query(
                &format!(
                    "SELECT p.id, p.text FROM passages p JOIN file_versions v ON v.id = p.version_id
                         LEFT JOIN passage_vectors pv ON pv.passage_id = p.id AND pv.model = $2
                         WHERE p.subject_id = $1 AND pv.passage_id IS NULL AND {CURRENT}
                         ORDER BY p.id LIMIT $3"
                ),
                &[&s.id, &model, &lim(limit)],
            )?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
        })
    }
}

impl FileWrite for PgTx<'_> {
    fn add_file(
        &mut self,
        s: &Subject,
        name: &str,
        bytes: &[u8],
        format: &str,
        pages: &[String],
        at: DateTime<Utc>,
    ) -> Result<FileAdded> {
        self.lock_subject(s)?;
        self.with(|c| {
            let sha = hex::encode(Sha256::digest(bytes));
            let now = to_ms(at);
            c.execute(
                "INSERT INTO files (subject_id, name) VALUES ($1, $2) ON CONFLICT (subject_id, name) DO NOTHING",
                &[&s.id, &name],
            )?;
            let file_id: i64 = c
                .query_one(
                    "SELECT id FROM files WHERE subject_id = $1 AND name = $2",
                    &[&s.id, &name],
                )?
                .get(0);
            let current = current_version(c, s, name)?;
            if let Some(cur) = &current
                && cur.sha256 == sha
                && cur.removed_at.is_none()
            {
                return Ok(FileAdded::Unchanged(cur.clone()));
            }
            let version: i64 = c
                .query_one(
                    "SELECT COALESCE(MAX(version), 0) + 1 FROM file_versions WHERE file_id = $1",
                    &[&file_id],
                )?
                .get(0);
            let id: i64 = c
                .query_one(
                    "INSERT INTO file_versions (file_id, version, sha256, bytes, format, added_at)
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                    &[&file_id, &version, &sha, &bytes, &format, &now],
                )?
                .get(0);
            for (i, text) in pages.iter().enumerate() {
                c.execute(
                    "INSERT INTO file_pages (version_id, page, text) VALUES ($1, $2, $3)",
                    &[&id, &(i as i64 + 1), text],
                )?;
            }
            index_version(c, s.id, id, pages)?;
            let replaced = match current {
                Some(cur) if cur.removed_at.is_none() => {
                    c.execute(
                        "UPDATE file_versions SET replaced_at = $1, replaced_by = $2 WHERE id = $3",
                        &[&now, &id, &cur.id],
                    )?;
                    Some(cur.id)
                }
                _ => None,
            };
            let version = current_version(c, s, name)?
                .ok_or_else(|| corrupt(format!("file {name:?} vanished after insert")))?;
            Ok(FileAdded::New { version, replaced })
        })
    }
    fn remove_file(&mut self, s: &Subject, name: &str, at: DateTime<Utc>) -> Result<FileVersion> {
        self.lock_subject(s)?;
        self.with(|c| {
            let cur = current_version(c, s, name)?.ok_or_else(|| Error::UnknownFile {
                key: s.key.to_string(),
                name: name.to_string(),
            })?;
            if cur.removed_at.is_none() {
                c.execute(
                    "UPDATE file_versions SET removed_at = $1 WHERE id = $2",
                    &[&to_ms(at), &cur.id],
                )?;
            }
            current_version(c, s, name)?.ok_or_else(|| corrupt(format!("file {name:?} vanished")))
        })
    }
    fn put_passage_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        self.with(|c| {
            if vectors.is_empty() {
                return Ok(());
            }
            let ids: Vec<i64> = vectors.iter().map(|v| v.0).collect();
            let blobs: Vec<Vec<u8>> = vectors.iter().map(|v| vec_to_blob(&v.1)).collect();
            c.execute(
                "INSERT INTO passage_vectors (passage_id, model, vector)
                 SELECT id, $1, v FROM unnest($2::bigint[], $3::bytea[]) AS x(id, v)
                 ON CONFLICT (passage_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
                &[&model, &ids, &blobs],
            )?;
            Ok(())
        })
    }
}
