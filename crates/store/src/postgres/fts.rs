//! Full-text search on PostgreSQL over our own terms: postings with term
//! frequencies and per-subject statistics, ranked by Okapi BM25 computed
//! exactly as SQLite's FTS5 computes it for the SQLite engine's tables
//! (contentless, `columnsize=0`: the row length reads as −1, so
//! `score = Σ idf(q) · f·(k1+1) / (f + k1·(1 − b − b/avgdl))`, k1 = 1.2,
//! b = 0.75, `idf = ln((N − n + 0.5)/(n + 0.5))` floored at 1e-6, over every
//! phrase of the query, the subject's token included). The one difference:
//! N, n and avgdl are the subject's own here, where FTS5's are its whole
//! table's; in a store holding one subject the two rank identically, and a
//! subject's ranking never depends on another tenant's data.

use super::db::Db;
use crate::Result;
use postgres::GenericClient;
use std::collections::HashMap;

use crate::{BM25_B as B, BM25_K1 as K1};

/// Episodes' index.
pub(crate) const EPISODES: &str = "e";
/// Passages' index.
pub(crate) const PASSAGES: &str = "p";

/// Tokens as FTS5's `ascii` tokenizer cuts them: runs of anything but ASCII
/// non-alphanumerics, ASCII letters folded to lower case.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    crate::ascii_runs(text)
        .map(str::to_ascii_lowercase)
        .collect()
}

/// One row's postings: (terms, their frequencies, tokens in all), the
/// subject's token included (`doc` is the text the SQLite engine indexes,
/// without it).
pub(crate) fn postings(subject_id: i64, doc: &str) -> (Vec<String>, Vec<i32>, i64) {
    let own = crate::subject_token(subject_id);
    let all = tokens(doc);
    let total = all.len() as i64 + 1;
    let mut tf: HashMap<&str, i32> = HashMap::new();
    tf.insert(own.as_str(), 1);
    for t in &all {
        *tf.entry(t.as_str()).or_default() += 1;
    }
    let (terms, counts): (Vec<&str>, Vec<i32>) = tf.into_iter().unzip();
    (
        terms.into_iter().map(str::to_string).collect(),
        counts,
        total,
    )
}

/// Indexes one row, in one statement.
pub(crate) fn index<C: GenericClient>(
    c: &mut Db<'_, C>,
    kind: &str,
    subject_id: i64,
    doc_id: i64,
    doc: &str,
) -> Result<()> {
    let (terms, counts, total) = postings(subject_id, doc);
    c.execute(
        "WITH p AS (INSERT INTO fts_postings (kind, subject_id, term, doc_id, tf)
                    SELECT $1, $2, t, $3, n FROM unnest($4::text[], $5::int[]) AS x(t, n))
         INSERT INTO fts_stats (kind, subject_id, docs, tokens) VALUES ($1, $2, 1, $6)
         ON CONFLICT (kind, subject_id) DO UPDATE
         SET docs = fts_stats.docs + 1, tokens = fts_stats.tokens + excluded.tokens",
        &[&kind, &subject_id, &doc_id, &terms, &counts, &total],
    )?;
    Ok(())
}

/// Indexes many rows of one subject at once (a copy from another engine):
/// the same postings and statistics as [`index`] row by row, in a few
/// statements.
pub(crate) fn index_many<C: GenericClient>(
    c: &mut Db<'_, C>,
    kind: &str,
    subject_id: i64,
    docs: &[(i64, String)],
) -> Result<()> {
    if docs.is_empty() {
        return Ok(());
    }
    let mut doc_ids = Vec::new();
    let mut terms: Vec<String> = Vec::new();
    let mut counts = Vec::new();
    let mut tokens_total = 0i64;
    for (id, doc) in docs {
        let (t, n, total) = postings(subject_id, doc);
        tokens_total += total;
        doc_ids.extend(std::iter::repeat_n(*id, t.len()));
        terms.extend(t);
        counts.extend(n);
    }
    for start in (0..doc_ids.len()).step_by(50_000) {
        let end = (start + 50_000).min(doc_ids.len());
        c.execute(
            "INSERT INTO fts_postings (kind, subject_id, term, doc_id, tf)
             SELECT $1, $2, t, d, n FROM unnest($3::text[], $4::bigint[], $5::int[]) AS x(t, d, n)",
            &[
                &kind,
                &subject_id,
                &&terms[start..end],
                &&doc_ids[start..end],
                &&counts[start..end],
            ],
        )?;
    }
    c.execute(
        "INSERT INTO fts_stats (kind, subject_id, docs, tokens) VALUES ($1, $2, $3, $4)
         ON CONFLICT (kind, subject_id) DO UPDATE
         SET docs = fts_stats.docs + excluded.docs, tokens = fts_stats.tokens + excluded.tokens",
        &[&kind, &subject_id, &(docs.len() as i64), &tokens_total],
    )?;
    Ok(())
}

/// Rows of the subject holding any of `terms`, as (id, positive BM25), best
/// first (ties by id), at most `limit`; `keep` is a condition on the
/// candidate `s.doc_id` applied before the limit (the passages of current
/// file versions, say). Scored in the database, in one statement, so only
/// the best rows travel: the same arithmetic, in the same order (phrase by
/// phrase, then the subject's own token), as FTS5's and as written here.
/// With `newest`, only the newest that many hits (by id) are ranked, as the
/// SQLite store ranks episodes ([`TERM_HITS_BOUND`](crate::TERM_HITS_BOUND)).
pub(crate) fn hits<C: GenericClient>(
    c: &mut Db<'_, C>,
    kind: &str,
    subject_id: i64,
    terms: &[String],
    limit: usize,
    keep: &str,
    newest: Option<usize>,
) -> Result<Vec<(i64, f64)>> {
    // Each term is one phrase of the query, tokenized as FTS5 would; a term
    // with no token searches for nothing (as FTS5's query builder skips it).
    let mut phrase_of: Vec<i32> = Vec::new();
    let mut token: Vec<String> = Vec::new();
    let mut phrases = 0i32;
    for t in terms {
        let toks = tokens(&t.replace('\0', ""));
        if toks.is_empty() {
            continue;
        }
        for tok in toks {
            phrase_of.push(phrases);
            token.push(tok);
        }
        phrases += 1;
    }
    if phrases == 0 {
        return Ok(Vec::new());
    }
    let limit = limit.min(i64::MAX as usize) as i64;
    let newest = newest.map_or(i64::MAX, |n| n.min(i64::MAX as usize) as i64);
    if token.len() == phrases as usize {
        return single_token_hits(c, kind, subject_id, &token, limit, keep, newest);
    }
    // idf = ln((N − n + 0.5)/(n + 0.5)), floored at 1e-6; a phrase of several
    // tokens counts where all occur, as often as the rarest (FTS5 matches
    // them adjacent; our terms are one token).
    let sql = format!(
        "WITH st AS (
             SELECT docs::float8 AS n,
                    {K1}::float8 * (1.0::float8 - {B}::float8
                        - {B}::float8 / (tokens::float8 / GREATEST(docs::float8, 1.0::float8))) AS norm
             FROM fts_stats WHERE kind = $1 AND subject_id = $2),
         q AS (SELECT DISTINCT phrase, term FROM unnest($3::int[], $4::text[]) AS q(phrase, term)),
         qn AS (SELECT phrase, count(*) AS k FROM q GROUP BY phrase),
         m AS (SELECT q.phrase, p.doc_id, min(p.tf) AS f, count(*) AS c
               FROM q JOIN fts_postings p ON p.kind = $1 AND p.subject_id = $2 AND p.term = q.term
               GROUP BY q.phrase, p.doc_id),
         hit AS (SELECT m.phrase, m.doc_id, m.f::float8 AS f FROM m JOIN qn USING (phrase) WHERE m.c = qn.k),
         w AS (SELECT hit.phrase, ln((st.n - count(*)::float8 + 0.5::float8) / (count(*)::float8 + 0.5::float8)) AS v
               FROM hit, st GROUP BY hit.phrase, st.n),
         s AS (SELECT hit.doc_id,
                      sum((CASE WHEN w.v <= 0 THEN 1e-6::float8 ELSE w.v END)
                          * ((hit.f * ({K1}::float8 + 1.0::float8)) / (hit.f + st.norm))
                          ORDER BY hit.phrase) AS score
               FROM hit JOIN w USING (phrase), st
               WHERE hit.doc_id >= (SELECT COALESCE(min(doc_id), 0) FROM
                   (SELECT DISTINCT doc_id FROM hit ORDER BY doc_id DESC LIMIT $6) top)
               GROUP BY hit.doc_id),
         own AS (SELECT (CASE WHEN v <= 0 THEN 1e-6::float8 ELSE v END)
                        * ((1.0::float8 * ({K1}::float8 + 1.0::float8)) / (1.0::float8 + norm)) AS o
                 FROM (SELECT ln((n - n + 0.5::float8) / (n + 0.5::float8)) AS v, norm FROM st) x)
         SELECT s.doc_id, s.score + own.o AS score FROM s, own
         WHERE {keep}
         ORDER BY score DESC, s.doc_id LIMIT $5"
    );
    Ok(c.query(
        &sql,
        &[&kind, &subject_id, &phrase_of, &token, &limit, &newest],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect())
}

/// [`hits`] when every phrase is one token (what recall's terms are): the
/// statistics and each term's document count first, then the scores with
/// those weights, summed phrase by phrase in the database.
fn single_token_hits<C: GenericClient>(
    c: &mut Db<'_, C>,
    kind: &str,
    subject_id: i64,
    terms: &[String],
    limit: i64,
    keep: &str,
    newest: i64,
) -> Result<Vec<(i64, f64)>> {
    let Some(row) = c.query_opt(
        "SELECT s.docs, s.tokens,
                ARRAY(SELECT (SELECT count(*) FROM fts_postings p
                              WHERE p.kind = $1 AND p.subject_id = $2 AND p.term = t.term)
                      FROM unnest($3::text[]) WITH ORDINALITY AS t(term, i) ORDER BY t.i)
         FROM fts_stats s WHERE s.kind = $1 AND s.subject_id = $2",
        &[&kind, &subject_id, &terms],
    )?
    else {
        return Ok(Vec::new());
    };
    let (n_docs, n_tokens, counts): (i64, i64, Vec<i64>) = (row.get(0), row.get(1), row.get(2));
    let n = n_docs as f64;
    let avgdl = n_tokens as f64 / n.max(1.0);
    let norm = crate::bm25_norm(avgdl);
    let idf = |docs: f64| crate::bm25_idf(n, docs);
    let weights: Vec<f64> = counts.iter().map(|&d| idf(d as f64)).collect();
    // The subject's own token is a phrase of every query, in every row once.
    let own = idf(n) * ((1.0 * (K1 + 1.0)) / (1.0 + norm));
    // More hits than `newest` (at most the sum of the terms' counts): rank only
    // the newest that many, from the smallest of their ids on.
    let from: i64 = if counts.iter().sum::<i64>() > newest {
        c.query_one(
            "SELECT COALESCE(min(doc_id), 0) FROM
                 (SELECT DISTINCT p.doc_id FROM fts_postings p
                  WHERE p.kind = $1 AND p.subject_id = $2 AND p.term = ANY($3)
                  ORDER BY p.doc_id DESC LIMIT $4) top",
            &[&kind, &subject_id, &terms, &newest],
        )?
        .get(0)
    } else {
        i64::MIN
    };
    let phrase: Vec<i32> = (0..terms.len() as i32).collect();
    let sql = format!(
        "SELECT s.doc_id, s.score + $7 AS score FROM (
             SELECT p.doc_id,
                    sum(q.idf * ((p.tf::float8 * $8) / (p.tf::float8 + $6)) ORDER BY q.phrase) AS score
             FROM unnest($3::int[], $4::text[], $5::float8[]) AS q(phrase, term, idf)
             JOIN fts_postings p ON p.kind = $1 AND p.subject_id = $2 AND p.term = q.term
             WHERE p.doc_id >= $10
             GROUP BY p.doc_id) s
         WHERE {keep}
         ORDER BY score DESC, s.doc_id LIMIT $9"
    );
    Ok(c.query(
        &sql,
        &[
            &kind,
            &subject_id,
            &phrase,
            &terms,
            &weights,
            &norm,
            &own,
            &(K1 + 1.0),
            &limit,
            &from,
        ],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1)))
    .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_cut_as_fts5_ascii_cuts_them() {
        assert_eq!(tokens("s12 cell  membrane"), ["s12", "cell", "membrane"]);
        assert_eq!(tokens("Don't-Stop"), ["don", "t", "stop"]);
        assert_eq!(tokens("ósmosis 細胞"), ["ósmosis", "細胞"]);
        assert!(tokens("*-()").is_empty());
    }
}
