//! The recall index: the candidate pools a turn ranks (recent, time window, full text, concepts), episode texts and facts, and the episodes' vectors.

use super::db::Db;
use super::rows::*;
use super::{Pg, PgTx, fts};
use crate::{IndexRead, IndexWrite, Result};
pub(crate) use crate::{from_ms, to_ms};
use chrono::{DateTime, Utc};
use postgres::GenericClient;
use tm_model::episodes::Kind;
use tm_model::recall::CandidateFacts;
use tm_model::subject::Subject;

pub(crate) fn ids<C: GenericClient>(
    c: &mut Db<'_, C>,
    sql: &str,
    args: &[&(dyn postgres::types::ToSql + Sync)],
) -> Result<Vec<i64>> {
    Ok(c.query(sql, args)?.iter().map(|r| r.get(0)).collect())
}

pub(crate) fn vec_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn blob_to_vec(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl<C: GenericClient> IndexRead for Pg<C> {
    fn recent_ids(&self, s: &Subject, at: DateTime<Utc>, n: usize) -> Result<Vec<i64>> {
        self.with(|c| {
            ids(
                c,
                "SELECT id FROM episodes WHERE subject_id = $1 AND at <= $2 AND erased_by IS NULL ORDER BY at DESC, seq DESC LIMIT $3",
                &[&s.id, &to_ms(at), &lim(n)],
            )
        })
    }
    fn window_ids(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        n: usize,
    ) -> Result<Vec<i64>> {
        self.with(|c| {
            ids(
                c,
                "SELECT id FROM episodes WHERE subject_id = $1 AND at >= $2 AND at < $3 AND erased_by IS NULL ORDER BY at DESC, seq DESC LIMIT $4",
                &[&s.id, &to_ms(from), &to_ms(to), &lim(n)],
            )
        })
    }
    fn term_hits(&self, s: &Subject, terms: &[String], limit: usize) -> Result<Vec<(i64, f64)>> {
        self.with(|c| {
            fts::hits(
                c,
                fts::EPISODES,
                s.id,
                terms,
                limit,
                "TRUE",
                Some(crate::TERM_HITS_BOUND),
            )
        })
    }
    fn terms_with_prefix(
        &self,
        s: &Subject,
        prefix: &str,
        keep: &dyn Fn(&str) -> bool,
        limit: usize,
    ) -> Result<Vec<String>> {
        self.with(|c| {
            let Some((prefix, upper)) = crate::prefix_range(prefix).filter(|_| limit > 0) else {
                return Ok(Vec::new());
            };
            let rows = c.query(
                "SELECT DISTINCT term FROM fts_postings
                 WHERE kind = $1 AND subject_id = $2 AND term >= $3 AND term < $4
                 ORDER BY term",
                &[&fts::EPISODES, &s.id, &prefix, &upper],
            )?;
            Ok(rows
                .iter()
                .map(|r| r.get::<_, String>(0))
                .filter(|w| w.starts_with(&prefix) && keep(w))
                .take(limit)
                .collect())
        })
    }
    fn concept_ids(&self, s: &Subject, concepts: &[String], limit: usize) -> Result<Vec<i64>> {
        self.with(|c| {
            if concepts.is_empty() {
                return Ok(Vec::new());
            }
            ids(
                c,
                "SELECT DISTINCT episode_id FROM episode_concepts
                 WHERE subject_id = $1 AND concept = ANY($2) ORDER BY episode_id DESC LIMIT $3",
                &[&s.id, &concepts, &lim(limit)],
            )
        })
    }
    fn concept_keys(&self, s: &Subject) -> Result<Vec<String>> {
        self.with(|c| {
            // A skip scan: one index probe per distinct concept, however many
            // episodes touch each.
            Ok(c.query(
                "WITH RECURSIVE k(concept) AS (
                     (SELECT concept FROM episode_concepts WHERE subject_id = $1 ORDER BY concept LIMIT 1)
                     UNION ALL
                     SELECT (SELECT e.concept FROM episode_concepts e
                             WHERE e.subject_id = $1 AND e.concept > k.concept ORDER BY e.concept LIMIT 1)
                     FROM k WHERE k.concept IS NOT NULL)
                 SELECT concept FROM k WHERE concept IS NOT NULL",
                &[&s.id],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })
    }
    fn candidate_facts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<CandidateFacts>> {
        self.with(|c| {
            c.query(
                "SELECT id, kind, at, salience, topic, verdict, seq FROM episodes
                 WHERE subject_id = $2 AND id = ANY($1) ORDER BY id",
                &[&ids, &s.id],
            )?
            .iter()
            .map(|r| {
                let id: i64 = r.get(0);
                let kind: String = r.get(1);
                let seq: i64 = r.get(6);
                Ok(CandidateFacts {
                    id,
                    seq: u64::try_from(seq)
                        .map_err(|_| corrupt(format!("episode {id}: seq {seq}")))?,
                    kind: Kind::parse(&kind)
                        .ok_or_else(|| corrupt(format!("episode {id}: kind {kind:?}")))?,
                    at: from_ms(r.get(2)),
                    salience: r.get(3),
                    topic: free_text_opt(r, 4)?.map(str::to_string),
                    verdict: r.get(5),
                })
            })
            .collect()
        })
    }
    fn texts(&self, s: &Subject, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        self.with(|c| {
            c.query(
                "SELECT id, text FROM episodes WHERE subject_id = $2 AND id = ANY($1) ORDER BY id",
                &[&ids, &s.id],
            )?
            .iter()
            .map(|r| Ok((r.get(0), free_text(r, 1)?.to_string())))
            .collect()
        })
    }
    fn vectors(&self, s: &Subject, model: &str) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| {
            Ok(c
                .query(
                    "SELECT episode_id, vector FROM episode_vectors WHERE subject_id = $1 AND model = $2 ORDER BY episode_id",
                    &[&s.id, &model],
                )?
                .iter()
                .map(|r| (r.get(0), blob_to_vec(r.get(1))))
                .collect())
        })
    }
    fn vectors_after(&self, s: &Subject, model: &str, after: i64) -> Result<Vec<(i64, Vec<f32>)>> {
        self.with(|c| {
            Ok(c.query(
                "SELECT episode_id, vector FROM episode_vectors
                     WHERE subject_id = $1 AND model = $2 AND episode_id > $3 ORDER BY episode_id",
                &[&s.id, &model, &after],
            )?
            .iter()
            .map(|r| (r.get(0), blob_to_vec(r.get(1))))
            .collect())
        })
    }
    fn vector_stamp(&self, s: &Subject, model: &str) -> Result<(u64, i64)> {
        self.with(|c| {
            // (vectors written, highest episode id) from the subject's counter row:
            // one row read, not a count over every vector, and it moves on every
            // write, whichever process made it.
            Ok(c.query_opt(
                "SELECT writes, max_id FROM vector_stats WHERE subject_id = $1 AND model = $2",
                &[&s.id, &model],
            )?
            .map(|r| (r.get::<_, i64>(0) as u64, r.get(1)))
            .unwrap_or((0, 0)))
        })
    }
    fn vector_models(&self, s: &Subject) -> Result<Vec<(String, u64)>> {
        self.with(|c| {
            Ok(c
                .query(
                    "SELECT model, COUNT(*) FROM episode_vectors WHERE subject_id = $1 GROUP BY model ORDER BY model",
                    &[&s.id],
                )?
                .iter()
                .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
                .collect())
        })
    }
    fn store_vector_models(&self) -> Result<Vec<(String, u64)>> {
        self.with(|c| {
            Ok(c
                .query(
                    "SELECT model, COUNT(*) AS n FROM episode_vectors GROUP BY model ORDER BY n DESC, model",
                    &[],
                )?
                .iter()
                .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
                .collect())
        })
    }
    fn count_missing_vectors(&self, s: &Subject, model: &str) -> Result<usize> {
        self.with(|c| {
            let n: i64 = c
                .query_one(
                    "SELECT COUNT(*) FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
                     WHERE e.subject_id = $1 AND e.erased_by IS NULL AND (v.episode_id IS NULL OR v.model <> $2)",
                    &[&s.id, &model],
                )?
                .get(0);
            Ok(n as usize)
        })
    }
    fn episodes_missing_vectors(
        &self,
        s: &Subject,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>> {
        self.with(|c| {
            c.query(
                "SELECT e.id, e.text FROM episodes e LEFT JOIN episode_vectors v ON v.episode_id = e.id
                     WHERE e.subject_id = $1 AND e.erased_by IS NULL AND (v.episode_id IS NULL OR v.model <> $2)
                     ORDER BY e.id LIMIT $3",
                &[&s.id, &model, &lim(limit)],
            )?
            .iter()
            .map(|r| Ok((r.get(0), free_text(r, 1)?.to_string())))
            .collect()
        })
    }
}

impl IndexWrite for PgTx<'_> {
    fn put_vectors(&mut self, s: &Subject, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<()> {
        self.with(|c| {
            if vectors.is_empty() {
                return Ok(());
            }
            let ids: Vec<i64> = vectors.iter().map(|v| v.0).collect();
            let blobs: Vec<Vec<u8>> = vectors.iter().map(|v| vec_to_blob(&v.1)).collect();
            c.execute(
                "WITH v AS (INSERT INTO episode_vectors (episode_id, subject_id, model, vector)
                            SELECT x.id, $1, $2, x.v FROM unnest($3::bigint[], $4::bytea[]) AS x(id, v)
                            WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.id = x.id AND e.erased_by IS NULL)
                            ON CONFLICT (episode_id) DO UPDATE SET model = excluded.model, vector = excluded.vector)
                 INSERT INTO vector_stats (subject_id, model, writes, max_id)
                 VALUES ($1, $2, cardinality($3::bigint[]), (SELECT MAX(x) FROM unnest($3::bigint[]) AS x))
                 ON CONFLICT (subject_id, model) DO UPDATE
                 SET writes = vector_stats.writes + excluded.writes,
                     max_id = GREATEST(vector_stats.max_id, excluded.max_id)",
                &[&s.id, &model, &ids, &blobs],
            )?;
            Ok(())
        })
    }
}
