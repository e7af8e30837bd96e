//! The derived indexes recall reads — full-text terms, concepts touched,
//! vectors — and the candidate pools gathered from them. Every pool reaches
//! the whole history of its subject; none of these rows is part of the chain.
//! Full-text search is FTS5 (its MATCH syntax lives here and nowhere else),
//! scored from the subject's own postings (`lexicon`), which build a query's
//! phrases from the same `searched_terms`.

pub(crate) mod lexicon;

use super::{Conn, SqliteTx, from_ms, id_list, query_ids, subject_token, to_ms};
use crate::{Error, IndexRead, IndexWrite, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};
use tm_model::episodes::Kind;
use tm_model::lang::canonical_key;
use tm_model::recall::{CandidateFacts, episode_index_text};
use tm_model::subject::Subject;

/// An FTS5 MATCH expression that finds rows holding any of `terms`, or `None`
/// when there is nothing to search for.
///
/// Every term is a double-quoted string with its inner quotes doubled, so
/// FTS5 reads it as a phrase and never as syntax: `AND`, `NEAR(`, `*`, `-`,
/// `:` or `^` inside a term are plain text. Terms with no letter or digit are
/// skipped (they would be empty phrases), NUL characters are removed (a bound
/// string would be cut there), and the rest are joined with `OR`.
pub(crate) fn fts5_query(terms: &[String]) -> Option<String> {
    let quoted: Vec<String> = searched_terms(terms)
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!quoted.is_empty()).then(|| quoted.join(" OR "))
}

/// The terms a MATCH expression searches for, as [`fts5_query`] passes them:
/// NULs removed, terms with no letter or digit skipped.
pub(crate) fn searched_terms(terms: &[String]) -> impl Iterator<Item = String> + '_ {
    terms
        .iter()
        .map(|t| t.replace('\0', ""))
        .filter(|t| t.chars().any(char::is_alphanumeric))
}

/// `s<subject> AND (<terms>)`: the subject's rows holding any of `terms`.
pub(crate) fn subject_match(subject_id: i64, terms: &[String]) -> Option<String> {
    fts5_query(terms).map(|q| format!("{} AND ({q})", subject_token(subject_id)))
}

/// Indexes one episode's terms and concepts (called inside the append).
pub(crate) fn index_episode(
    c: &Connection,
    subject_id: i64,
    episode_id: i64,
    text: &str,
    concepts: &[String],
) -> Result<()> {
    let terms = episode_index_text(text, concepts);
    c.prepare_cached("INSERT INTO episode_fts (rowid, terms) VALUES (?1, ?2)")?
        .execute(params![
            episode_id,
            format!("{} {terms}", subject_token(subject_id))
        ])?;
    let mut ins = c.prepare_cached(
        "INSERT OR IGNORE INTO episode_concepts (subject_id, concept, episode_id) VALUES (?1, ?2, ?3)",
    )?;
    for concept in concepts {
        let key = canonical_key(concept);
        if !key.is_empty() {
            ins.execute(params![subject_id, key, episode_id])?;
        }
    }
    Ok(())
}

/// Indexes every episode already stored (run once, by the migration that
/// created the indexes).
pub(crate) fn backfill_index(c: &Connection) -> Result<()> {
    let rows: Vec<(i64, i64, String, String)> = c
        .prepare("SELECT id, subject_id, text, concepts FROM episodes ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, subject_id, text, concepts) in rows {
        let concepts: Vec<String> = serde_json::from_str(&concepts)
            .map_err(|e| Error::Corrupt(format!("episode {id}: concepts: {e}")))?;
        index_episode(c, subject_id, id, &text, &concepts)?;
    }
    Ok(())
}

/// A turn's recent pool: read from `episodes_live_by_time` alone (schema 12).
const RECENT_SQL: &str =
    "SELECT id FROM episodes WHERE subject_id = ?1 AND at <= ?2 AND erased_by IS NULL
     ORDER BY at DESC, seq DESC LIMIT ?3";
/// A turn's window pool: read from `episodes_live_by_time` alone (schema 12).
const WINDOW_SQL: &str =
    "SELECT id FROM episodes WHERE subject_id = ?1 AND at >= ?2 AND at < ?3 AND erased_by IS NULL
     ORDER BY at DESC, seq DESC LIMIT ?4";

/// The rows `sql` (with `?1` the MATCH expression, `?2` the limit) finds
/// for the subject's rows holding any of `terms`, as (rowid, positive BM25).
pub(crate) fn bm25_hits(
    c: &Connection,
    sql: &str,
    s: &Subject,
    terms: &[String],
    limit: usize,
) -> Result<Vec<(i64, f64)>> {
    let Some(expr) = subject_match(s.id, terms) else {
        return Ok(Vec::new());
    };
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(params![expr, limit as i64], |r| {
        Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The newest [`TERM_HITS_BOUND`](crate::TERM_HITS_BOUND) hits in id order (FTS5
/// stops there, scoring only those), then ranked here as FTS5's `ORDER BY rank`
/// ranks: best first, ties in id order. FTS5's `bm25()` takes the whole
/// table's statistics: the store answers from the subject's own postings
/// (`lexicon`), and from here only when those cannot be read.
pub(crate) fn term_hits(
    c: &Connection,
    s: &Subject,
    terms: &[String],
    limit: usize,
) -> Result<Vec<(i64, f64)>> {
    let mut hits = bm25_hits(
        c,
        "SELECT rowid, bm25(episode_fts) FROM episode_fts WHERE episode_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
        s,
        terms,
        crate::TERM_HITS_BOUND,
    )?;
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(limit);
    Ok(hits)
}

/// Counting needs no BM25 and no sort: a common term's thousands of hits were
/// ranked on every turn only to be counted (`distinctive_in_subject`).
pub(crate) fn term_count(c: &Connection, s: &Subject, term: &str, limit: usize) -> Result<usize> {
    let Some(expr) = subject_match(s.id, std::slice::from_ref(&term.to_string())) else {
        return Ok(0);
    };
    let n: i64 = c
        .prepare_cached(
            "SELECT count(*) FROM (SELECT rowid FROM episode_fts WHERE episode_fts MATCH ?1 LIMIT ?2)",
        )?
        .query_row(params![expr, limit as i64], |r| r.get(0))?;
    Ok(n as usize)
}

/// The index's words from `prefix` on, in byte order (FTS5 orders its terms
/// so): the vocabulary is shared by every subject, so each word `keep`
/// accepts is kept only when one of this subject's episodes holds it.
pub(crate) fn terms_with_prefix(
    c: &Connection,
    prefix: &str,
    keep: &dyn Fn(&str) -> bool,
    limit: usize,
    count: &dyn Fn(&str) -> Result<usize>,
) -> Result<Vec<String>> {
    let Some((prefix, upper)) = crate::prefix_range(prefix).filter(|_| limit > 0) else {
        return Ok(Vec::new());
    };
    let mut stmt = c.prepare_cached(
        "SELECT term FROM temp.episode_vocab WHERE term >= ?1 AND term < ?2 ORDER BY term",
    )?;
    let words = stmt
        .query_map(params![prefix, upper], |r| r.get::<_, String>(0))?
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for w in words {
        if out.len() >= limit {
            break;
        }
        if w.starts_with(&prefix) && keep(&w) && count(&w)? > 0 {
            out.push(w);
        }
    }
    Ok(out)
}

pub(crate) fn vectors(c: &Connection, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
    let mut stmt = c.prepare_cached(
        "SELECT episode_id, vector FROM episode_vectors WHERE subject_id = ?1 AND model = ?2 ORDER BY episode_id",
    )?;
    let rows = stmt.query_map(params![s.id, model], |r| {
        let blob = r.get_ref(1)?.as_blob()?;
        Ok((r.get::<_, i64>(0)?, blob_to_vec(blob)))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn put_vectors(
    c: &Connection,
    s: &Subject,
    model: &str,
    vectors: &[(i64, Vec<f32>)],
) -> Result<()> {
    let mut stmt = c.prepare_cached(
        // Never for an erased episode: a vector embedded from its text
        // before the erasure (a `reembed` in flight) is dropped here.
        "INSERT INTO episode_vectors (episode_id, subject_id, model, vector)
         SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM episodes WHERE id = ?1 AND erased_by IS NULL)
         ON CONFLICT (episode_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
    )?;
    for (id, v) in vectors {
        stmt.execute(params![id, s.id, model, vec_to_blob(v)])?;
    }
    Ok(())
}

pub(crate) fn vec_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn blob_to_vec(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl<T: Conn> IndexRead for T {
    fn recent_ids(&self, s: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>> {
        let c = self.conn();
        query_ids(c, RECENT_SQL, params![s.id, to_ms(at), n as i64])
    }
    fn window_ids(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>> {
        let c = self.conn();
        query_ids(
            c,
            WINDOW_SQL,
            params![s.id, to_ms(from), to_ms(to), n as i64],
        )
    }
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        match lexicon::term_hits(self.lexicon(), self.conn(), s, terms, limit)? {
            Some(hits) => Ok(hits),
            None => term_hits(self.conn(), s, terms, limit),
        }
    }
    fn term_count(&self, s: &Subject, term: &str, limit: usize) -> Result<usize> {
        match lexicon::term_count(self.lexicon(), self.conn(), s, term, limit)? {
            Some(n) => Ok(n),
            None => term_count(self.conn(), s, term, limit),
        }
    }
    fn terms_with_prefix(
        &self,
        s: &Subject,
        prefix: &str,
        keep: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<String>> {
        terms_with_prefix(self.conn(), prefix, keep, limit, &|w| {
            self.term_count(s, w, 1)
        })
    }
    fn concept_ids(&self, s: &Subject, concepts: &[String], limit: usize) -> Result<Vec<i64>> {
        let c = self.conn();
        if concepts.is_empty() {
            return Ok(Vec::new());
        }
        // The newest `limit` of each concept, read backwards along the primary
        // key, hold the newest `limit` of them all. One statement for all the
        // concepts read every episode of each and sorted them (4 % of a loaded
        // server's CPU at 10,000 episodes).
        let mut out = Vec::new();
        for concept in concepts {
            out.extend(query_ids(
                c,
                "SELECT episode_id FROM episode_concepts WHERE subject_id = ?1 AND concept = ?2
                 ORDER BY episode_id DESC LIMIT ?3",
                params![s.id, concept, limit as i64],
            )?);
        }
        out.sort_unstable_by(|a, b| b.cmp(a));
        out.dedup();
        out.truncate(limit);
        Ok(out)
    }
    fn concept_keys(&self, s: &Subject) -> Result<Vec<String>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT DISTINCT concept FROM episode_concepts WHERE subject_id = ?1 ORDER BY concept",
        )?;
        let rows = stmt.query_map([s.id], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn candidate_facts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<CandidateFacts>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT id, kind, at, salience, json_extract(data, '$.topic'), json_extract(data, '$.verdict'), seq
             FROM episodes WHERE id IN (SELECT value FROM json_each(?1)) AND +subject_id = ?2 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![id_list(ids), s.id], |r| {
            let kind: String = r.get(1)?;
            Ok((
                r.get(0)?,
                kind,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })?;
        rows.map(|r| {
            let (id, kind, at, salience, topic, verdict, seq): (
                i64,
                String,
                i64,
                f64,
                Option<String>,
                Option<String>,
                i64,
            ) = r?;
            let kind = Kind::parse(&kind)
                .ok_or_else(|| Error::Corrupt(format!("episode {id}: kind {kind:?}")))?;
            Ok(CandidateFacts {
                id,
                seq: u64::try_from(seq)
                    .map_err(|_| Error::Corrupt(format!("episode {id}: seq {seq}")))?,
                kind,
                at: from_ms(at),
                salience,
                topic,
                verdict,
            })
        })
        .collect()
    }
    fn texts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT id, text FROM episodes WHERE id IN (SELECT value FROM json_each(?1)) AND +subject_id = ?2
             ORDER BY id",
        )?;
        let rows = stmt.query_map(params![id_list(ids), s.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        vectors(self.conn(), s, model)
    }
    fn vectors_after(&self, s: &Subject, model: &str, after: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT episode_id, vector FROM episode_vectors
             WHERE subject_id = ?1 AND model = ?2 AND episode_id > ?3 ORDER BY episode_id",
        )?;
        let rows = stmt.query_map(params![s.id, model, after], |r| {
            let blob = r.get_ref(1)?.as_blob()?;
            Ok((r.get::<_, i64>(0)?, blob_to_vec(blob)))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn vector_stamp(&self, s: &Subject, model: &str) -> Result<(u64, i64)> {
        let c = self.conn();
        // One row kept by triggers (migration 11), not a count of the vectors.
        Ok(c.prepare_cached(
            "SELECT COALESCE(MAX(writes), 0), COALESCE(MAX(max_id), 0) FROM vector_stats WHERE subject_id = ?1 AND model = ?2",
        )?
        .query_row(params![s.id, model], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))?)
    }
    fn vector_models(&self, s: &Subject) -> Result<Vec<(String, u64)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT model, COUNT(*) FROM episode_vectors WHERE subject_id = ?1 GROUP BY model ORDER BY model",
        )?;
        let rows = stmt.query_map([s.id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn store_vector_models(&self) -> Result<Vec<(String, u64)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT model, COUNT(*) AS n FROM episode_vectors GROUP BY model ORDER BY n DESC, model",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn count_missing_vectors(&self, s: &Subject, model: &str) -> Result<usize> {
        let c = self.conn();
        let n: i64 = c
            .prepare_cached(
                "SELECT COUNT(*) FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
                 WHERE e.subject_id = ?1 AND e.erased_by IS NULL AND (v.episode_id IS NULL OR v.model != ?2)",
            )?
            .query_row(params![s.id, model], |r| r.get(0))?;
        Ok(n as usize)
    }
    fn episodes_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT e.id, e.text FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
             WHERE e.subject_id = ?1 AND e.erased_by IS NULL AND (v.episode_id IS NULL OR v.model != ?2)
             ORDER BY e.id LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![s.id, model, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl IndexWrite for SqliteTx<'_> {
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        put_vectors(&self.tx, s, model, vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tm_model::recall::distinctive_terms;

    /// The recent and window pools read the index alone, in its order: no
    /// episode row (wide: its text) and no sort per turn.
    #[test]
    fn the_time_pools_read_the_live_index_alone() {
        let store = crate::sqlite::SqliteStore::open_in_memory().unwrap();
        for (sql, range) in [(RECENT_SQL, "at<?"), (WINDOW_SQL, "at>? AND at<?")] {
            let mut stmt = store
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let args = rusqlite::params_from_iter(std::iter::repeat_n(1, stmt.parameter_count()));
            let plan: Vec<String> = stmt
                .query_map(args, |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(
                plan,
                [format!(
                    "SEARCH episodes USING COVERING INDEX episodes_live_by_time (subject_id=? AND {range})"
                )],
                "{sql}"
            );
        }
    }

    proptest! {
    /// Hostile question text never yields an unquoted FTS5 token.
    #[test]
    fn fts5_query_is_always_quoted(question in ".{0,80}") {
        let terms = distinctive_terms(&question);
        if let Some(q) = fts5_query(&terms) {
            let mut inside = false;
            let mut outside = String::new();
            let mut chars = q.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '"' {
                    if inside && chars.peek() == Some(&'"') {
                        chars.next();
                    } else {
                        inside = !inside;
                    }
                } else if !inside {
                    outside.push(c);
                }
            }
            prop_assert!(!inside, "unbalanced quotes in {}", q);
            prop_assert!(outside.split(' ').all(|w| w.is_empty() || w == "OR"), "{}", q);
        }
    }
    }

    #[test]
    fn hostile_strings_give_only_quoted_terms() {
        let hostile: Vec<String> = [
            "\"",
            "a\"b",
            "NEAR(",
            "NEAR(a b, 3)",
            "*",
            "cell*",
            "-x",
            "col:val",
            "AND",
            "OR",
            "NOT",
            "^start",
            "(",
            ")",
            "\"\"\"",
            "\0",
            "x\0y",
            "",
            "  ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let q = fts5_query(&hostile).expect("some terms have letters");
        // Re-read the expression: it must be quoted strings joined by OR, nothing else.
        let mut rest = q.as_str();
        let mut count = 0;
        loop {
            rest = rest
                .strip_prefix('"')
                .expect("each term opens with a quote");
            let mut end = None;
            let bytes = rest.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'"' {
                    if bytes.get(i + 1) == Some(&b'"') {
                        i += 2;
                        continue;
                    }
                    end = Some(i);
                    break;
                }
                i += 1;
            }
            let end = end.expect("each term closes its quote");
            count += 1;
            rest = &rest[end + 1..];
            if rest.is_empty() {
                break;
            }
            rest = rest.strip_prefix(" OR ").expect("terms are joined by OR");
        }
        assert_eq!(count, 11);
        assert!(!q.contains('\0'));
        assert!(q.contains("\"a\"\"b\""));
        assert!(q.contains("\"NEAR(a b, 3)\""));
    }

    #[test]
    fn nothing_to_search_gives_no_query() {
        assert_eq!(fts5_query(&[]), None);
        assert_eq!(fts5_query(&["*".into(), "\"".into(), " ".into()]), None);
        assert_eq!(fts5_query(&distinctive_terms("what is it?")), None);
        assert_eq!(
            fts5_query(&distinctive_terms("what is a cell?")).as_deref(),
            Some("\"cell\"")
        );
    }
}
