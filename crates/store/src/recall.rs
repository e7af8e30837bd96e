//! The derived indexes recall reads — full-text terms, concepts touched,
//! vectors — and the candidate pools gathered from them. Every pool reaches
//! the whole history of its subject; none of these rows is part of the chain.

use crate::{EPISODE_COLUMNS, Episode, Error, Result, Store, Subject, Tx, episode_row, to_ms};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};
use tm_model::episodes::Kind;
use tm_model::lang::canonical_key;
use tm_model::recall::index_text;

/// The token that confines a full-text query to one subject.
fn subject_token(subject_id: i64) -> String {
    format!("s{subject_id}")
}

/// Indexes one episode's terms and concepts (called inside the append).
pub(crate) fn index_episode(
    conn: &Connection,
    subject_id: i64,
    episode_id: i64,
    text: &str,
    concepts: &[String],
) -> Result<()> {
    let mut terms = index_text(text);
    for c in concepts {
        terms.push(' ');
        terms.push_str(&index_text(c));
    }
    conn.prepare_cached("INSERT INTO episode_fts (rowid, terms) VALUES (?1, ?2)")?
        .execute(params![
            episode_id,
            format!("{} {terms}", subject_token(subject_id))
        ])?;
    let mut ins = conn.prepare_cached(
        "INSERT OR IGNORE INTO episode_concepts (subject_id, concept, episode_id) VALUES (?1, ?2, ?3)",
    )?;
    for c in concepts {
        let key = canonical_key(c);
        if !key.is_empty() {
            ins.execute(params![subject_id, key, episode_id])?;
        }
    }
    Ok(())
}

/// Indexes every episode already stored (run once, by the migration that
/// created the indexes).
pub(crate) fn backfill_index(conn: &Connection) -> Result<()> {
    let rows: Vec<(i64, i64, String, String)> = conn
        .prepare("SELECT id, subject_id, text, concepts FROM episodes ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, subject_id, text, concepts) in rows {
        let concepts: Vec<String> = serde_json::from_str(&concepts)
            .map_err(|e| Error::Corrupt(format!("episode {id}: concepts: {e}")))?;
        index_episode(conn, subject_id, id, &text, &concepts)?;
    }
    Ok(())
}

fn ids(conn: &Connection, sql: &str, args: impl rusqlite::Params) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(args, |r| r.get::<_, i64>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl Store {
    /// The `n` most recent episodes at or before `at`, newest first.
    pub fn recent_ids(&self, subject: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>> {
        ids(
            &self.conn,
            "SELECT id FROM episodes WHERE subject_id = ?1 AND at <= ?2 ORDER BY at DESC, seq DESC LIMIT ?3",
            params![subject.id, to_ms(at), n as i64],
        )
    }

    /// Up to `n` episodes inside `[from, to)`, newest first.
    pub fn window_ids(
        &self,
        subject: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>> {
        ids(
            &self.conn,
            "SELECT id FROM episodes WHERE subject_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY at DESC, seq DESC LIMIT ?4",
            params![subject.id, to_ms(from), to_ms(to), n as i64],
        )
    }

    /// Full-text hits for an FTS5 expression built by
    /// `tm_model::recall::fts5_query`, best first, with a positive BM25 score.
    pub fn fts_hits(
        &self,
        subject: &Subject,
        query: &str,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let expr = format!("{} AND ({query})", subject_token(subject.id));
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid, bm25(episode_fts) FROM episode_fts WHERE episode_fts MATCH ?1 ORDER BY rank LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expr, limit as i64], |r| {
            Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Episodes touching any of these concepts (canonical keys), newest first.
    pub fn concept_ids(
        &self,
        subject: &Subject,
        concepts: &[String],
        limit: usize,
    ) -> Result<Vec<i64>> {
        if concepts.is_empty() {
            return Ok(Vec::new());
        }
        let keys = serde_json::to_string(concepts).map_err(|e| Error::Corrupt(e.to_string()))?;
        ids(
            &self.conn,
            "SELECT DISTINCT episode_id FROM episode_concepts
             WHERE subject_id = ?1 AND concept IN (SELECT value FROM json_each(?2))
             ORDER BY episode_id DESC LIMIT ?3",
            params![subject.id, keys, limit as i64],
        )
    }

    /// The episodes with these ids (any order in, ascending id out).
    pub fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        let list = serde_json::to_string(ids).map_err(|e| Error::Corrupt(e.to_string()))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id"
        ))?;
        let rows = stmt.query_map([list], episode_row)?;
        rows.map(|r| r?).collect()
    }

    /// The subject's episodes among these ids (ids of other subjects or of no
    /// episode are left out), ascending id.
    pub fn subject_episodes_by_ids(&self, subject: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
        let list = serde_json::to_string(ids).map_err(|e| Error::Corrupt(e.to_string()))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {EPISODE_COLUMNS} FROM episodes WHERE subject_id = ?2 AND id IN (SELECT value FROM json_each(?1)) ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![list, subject.id], episode_row)?;
        rows.map(|r| r?).collect()
    }

    /// What recall needs of each candidate before it knows which win: kind,
    /// time, salience, and a check's topic and verdict (no text, no JSON
    /// parsing), ascending id.
    pub fn candidate_facts(&self, ids: &[i64]) -> Result<Vec<CandidateFacts>> {
        let list = serde_json::to_string(ids).map_err(|e| Error::Corrupt(e.to_string()))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, kind, at, salience, json_extract(data, '$.topic'), json_extract(data, '$.verdict')
             FROM episodes WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
        )?;
        let rows = stmt.query_map([list], |r| {
            let kind: String = r.get(1)?;
            Ok((r.get(0)?, kind, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })?;
        rows.map(|r| {
            let (id, kind, at, salience, topic, verdict): (
                i64,
                String,
                i64,
                f64,
                Option<String>,
                Option<String>,
            ) = r?;
            let kind = Kind::parse(&kind)
                .ok_or_else(|| Error::Corrupt(format!("episode {id}: kind {kind:?}")))?;
            Ok(CandidateFacts {
                id,
                kind,
                at: crate::from_ms(at),
                salience,
                topic,
                verdict,
            })
        })
        .collect()
    }

    /// The text of these episodes, by id.
    pub fn texts(&self, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        let list = serde_json::to_string(ids).map_err(|e| Error::Corrupt(e.to_string()))?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, text FROM episodes WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id")?;
        let rows = stmt.query_map([list], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every stored vector of the subject made by `model`.
    pub fn vectors(&self, subject: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT episode_id, vector FROM episode_vectors WHERE subject_id = ?1 AND model = ?2 ORDER BY episode_id",
        )?;
        let rows = stmt.query_map(params![subject.id, model], |r| {
            let blob = r.get_ref(1)?.as_blob()?;
            Ok((r.get::<_, i64>(0)?, blob_to_vec(blob)))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many of the subject's episodes have no vector from `model`.
    pub fn count_missing_vectors(&self, subject: &Subject, model: &str) -> Result<usize> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
             WHERE e.subject_id = ?1 AND (v.episode_id IS NULL OR v.model != ?2)",
            )?
            .query_row(params![subject.id, model], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Episodes of the subject with no vector from `model` (none, or another
    /// model's), with the text to embed: oldest first, at most `limit`.
    pub fn episodes_missing_vectors(
        &self,
        subject: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.id, e.text FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
             WHERE e.subject_id = ?1 AND (v.episode_id IS NULL OR v.model != ?2)
             ORDER BY e.id LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![subject.id, model, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// (count, max episode id) of the subject's vectors from `model`: changes
    /// whenever vectors are added, so an in-memory copy knows it is stale.
    pub fn vector_stamp(&self, subject: &Subject, model: &str) -> Result<(u64, i64)> {
        Ok(self.conn.prepare_cached(
            "SELECT COUNT(*), COALESCE(MAX(episode_id), 0) FROM episode_vectors WHERE subject_id = ?1 AND model = ?2",
        )?
        .query_row(params![subject.id, model], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?)
    }

    /// The distinct concepts (canonical keys) the subject's episodes touch.
    pub fn concept_keys(&self, subject: &Subject) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT concept FROM episode_concepts WHERE subject_id = ?1 ORDER BY concept",
        )?;
        let rows = stmt.query_map([subject.id], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Which of these episodes carry at least one annotation of `kind`.
    pub fn annotated_ids(&self, ids: &[i64], kind: &str) -> Result<Vec<i64>> {
        let list = serde_json::to_string(ids).map_err(|e| Error::Corrupt(e.to_string()))?;
        self::ids(
            &self.conn,
            "SELECT DISTINCT episode_id FROM annotations
             WHERE kind = ?2 AND episode_id IN (SELECT value FROM json_each(?1)) ORDER BY episode_id",
            params![list, kind],
        )
    }

    /// Which embedder names the subject's stored vectors were made by, with counts.
    pub fn vector_models(&self, subject: &Subject) -> Result<Vec<(String, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT model, COUNT(*) FROM episode_vectors WHERE subject_id = ?1 GROUP BY model ORDER BY model",
        )?;
        let rows = stmt.query_map([subject.id], |r| {
            Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Tx<'_> {
    /// Stores (or replaces) episodes' vectors. Vectors are derived data, not
    /// part of the chain, so replacing them is allowed.
    pub fn put_vectors(
        &mut self,
        subject: &Subject,
        model: &str,
        vectors: &[(i64, Vec<f32>)],
    ) -> Result<()> {
        let mut stmt = self.tx.prepare_cached(
            "INSERT INTO episode_vectors (episode_id, subject_id, model, vector) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (episode_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
        )?;
        for (id, v) in vectors {
            stmt.execute(params![id, subject.id, model, vec_to_blob(v)])?;
        }
        Ok(())
    }
}

/// The light facts of a candidate episode.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateFacts {
    pub id: i64,
    pub kind: Kind,
    pub at: DateTime<Utc>,
    pub salience: f64,
    pub topic: Option<String>,
    pub verdict: Option<String>,
}

fn vec_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn blob_to_vec(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
