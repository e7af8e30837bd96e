//! The episode log: appends that extend a subject's hash chain, reads by
//! seq, id, kind and time, the chain's rows for verification, annotations
//! and the import record.

use super::{Conn, SqliteTx, from_ms, id_list, query_ids, to_ms};
use crate::{Error, LogRead, LogWrite, Result};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeMap;
use tm_model::episodes::{
    Annotation, Appended, Episode, EpisodeFields, Hash, Kind, NewEpisode, StoredRow, genesis_hash,
};
use tm_model::subject::Subject;

pub(crate) const EPISODE_COLUMNS: &str = "id, seq, kind, at, salience, summary, text, concepts, evidence, data, external_id, hash, erased_by, salt";

pub(crate) fn episode_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Episode>> {
    let id: i64 = r.get(0)?;
    let kind: String = r.get(2)?;
    let concepts: String = r.get(7)?;
    let evidence: String = r.get(8)?;
    let data: String = r.get(9)?;
    let hash: Vec<u8> = r.get(11)?;
    let corrupt = |what: &str, e: &dyn std::fmt::Display| {
        Error::Corrupt(format!("episode {id}: {what}: {e}"))
    };
    let build = || -> Result<Episode> {
        Ok(Episode {
            id,
            seq: r.get::<_, i64>(1)? as u64,
            kind: Kind::parse(&kind).ok_or_else(|| corrupt("kind", &kind))?,
            at: from_ms(r.get(3)?),
            salience: r.get(4)?,
            summary: r.get(5)?,
            text: r.get(6)?,
            concepts: serde_json::from_str(&concepts).map_err(|e| corrupt("concepts", &e))?,
            evidence: serde_json::from_str(&evidence).map_err(|e| corrupt("evidence", &e))?,
            data: serde_json::from_str(&data).map_err(|e| corrupt("data", &e))?,
            external_id: r.get(10)?,
            hash: hash
                .as_slice()
                .try_into()
                .map_err(|_| corrupt("hash", &"not 32 bytes"))?,
            erased: r.get::<_, Option<i64>>(12)?.is_some(),
            salt: match r.get::<_, Option<Vec<u8>>>(13)? {
                None => None,
                Some(b) => Some(
                    b.as_slice()
                        .try_into()
                        .map_err(|_| corrupt("salt", &"not 16 bytes"))?,
                ),
            },
        })
    };
    Ok(build())
}

pub(crate) fn episodes_where(
    c: &Connection,
    filter: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<Episode>> {
    let mut stmt = c.prepare_cached(&format!("SELECT {EPISODE_COLUMNS} FROM episodes {filter}"))?;
    let rows = stmt.query_map(args, episode_row)?;
    rows.map(|r| r?).collect()
}

/// The subject's episodes: its head's `seq`, since a chain's rows run 1, 2, …
/// and are never deleted (an erasure keeps each row's skeleton). Read from
/// the `(subject_id, seq)` key's last entry, where `COUNT(*)` walked all of
/// them on every turn (recall asks; 3 % of a loaded server's CPU at 10,000).
pub(crate) fn count(c: &Connection, s: &Subject) -> Result<u64> {
    let n: i64 = c
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM episodes WHERE subject_id = ?1")?
        .query_row([s.id], |r| r.get(0))?;
    Ok(n as u64)
}

pub(crate) fn by_external_id(c: &Connection, s: &Subject, id: &str) -> Result<Option<Episode>> {
    Ok(episodes_where(
        c,
        "WHERE subject_id = ?1 AND external_id = ?2",
        params![s.id, id],
    )?
    .pop())
}

pub(crate) fn by_ids(c: &Connection, s: Option<&Subject>, ids: &[i64]) -> Result<Vec<Episode>> {
    episodes_where(
        c,
        "WHERE id IN (SELECT value FROM json_each(?1)) AND (?2 IS NULL OR subject_id = ?2) ORDER BY id",
        params![id_list(ids), s.map(|s| s.id)],
    )
}

pub(crate) fn imported(c: &Connection, s: &Subject, sha256: &str) -> Result<bool> {
    Ok(
        c.prepare_cached("SELECT 1 FROM imports WHERE subject_id = ?1 AND sha256 = ?2")?
            .query_row(params![s.id, sha256], |_| Ok(()))
            .optional()?
            .is_some(),
    )
}

/// Appends one episode after `head` (the chain head as read under the write
/// lock) and indexes it.
pub(crate) fn append(
    c: &Connection,
    s: &Subject,
    (head_seq, prev): (u64, Hash),
    e: &NewEpisode,
) -> Result<Appended> {
    let key = s.key.to_string();
    let seq = head_seq + 1;
    let crate::Sealed {
        concepts,
        evidence,
        data,
        salt,
        digest,
        hash,
    } = crate::seal(s, seq, &prev, e)?;
    let inserted = c
        .prepare_cached(
            "INSERT INTO episodes (subject_id, seq, kind, at, salience, summary, text, concepts, evidence, data,
                                   external_id, prev_hash, hash, import_key, enc, salt, digest)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 2, ?15, ?16)",
        )?
        .execute(params![
            s.id,
            seq as i64,
            e.kind.as_str(),
            to_ms(e.at),
            e.salience,
            e.summary,
            e.text,
            concepts,
            evidence,
            data,
            e.external_id,
            prev.as_slice(),
            hash.as_slice(),
            e.import_key.as_ref().map(|k| k.as_slice()),
            salt.as_slice(),
            digest.as_slice(),
        ]);
    if let Err(err) = inserted {
        if let (Some(id), rusqlite::Error::SqliteFailure(f, _)) = (&e.external_id, &err)
            && f.code == rusqlite::ErrorCode::ConstraintViolation
            && let Some(taken) = by_external_id(c, s, id)?
        {
            return Err(Error::ExternalIdTaken {
                key,
                id: id.clone(),
                seq: taken.seq,
            });
        }
        return Err(err.into());
    }
    let id = c.last_insert_rowid();
    super::index::index_episode(c, s.id, id, &e.text, &e.concepts)?;
    Ok(Appended { id, seq, hash })
}

/// One chain row's fields, exactly as stored.
fn stored_row<'r>(r: &'r rusqlite::Row<'_>, key: &'r str) -> rusqlite::Result<StoredRow<'r>> {
    let text = |i: usize| -> rusqlite::Result<&'r str> { Ok(r.get_ref(i)?.as_str()?) };
    let encoding: i64 = r.get(12)?;
    let erased = r.get::<_, Option<i64>>(15)?.is_some();
    Ok(StoredRow {
        encoding: u32::try_from(encoding).unwrap_or(0),
        erased,
        fields: EpisodeFields {
            subject: key,
            seq: r.get::<_, i64>(0)? as u64,
            kind: text(1)?,
            at_ms: r.get(2)?,
            salience: r.get(3)?,
            summary: text(4)?,
            text: text(5)?,
            concepts_json: text(6)?,
            evidence_json: text(7)?,
            data_json: text(8)?,
            external_id: r.get_ref(9)?.as_str_or_null()?,
            // Encoding 2 names its salt (a v2 row stripped of it fails as an
            // edit, never silently); the verifier refuses other encodings.
            // An erased row's salt is read as stored: it must be gone.
            salt: match (encoding, erased) {
                (_, true) => r.get_ref(13)?.as_blob_or_null()?,
                (1, false) => None,
                _ => Some(r.get_ref(13)?.as_blob()?),
            },
            digest: r.get_ref(14)?.as_blob_or_null()?,
        },
        prev_hash: r.get_ref(10)?.as_blob()?,
        hash: r.get_ref(11)?.as_blob()?,
    })
}

fn annotations_where(
    c: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
) -> Result<Vec<Annotation>> {
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(args, |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    rows.map(|r| {
        let (id, episode_id, kind, at, data) = r?;
        let data = serde_json::from_str(&data)
            .map_err(|e| Error::Corrupt(format!("annotation {id}: {e}")))?;
        Ok(Annotation {
            id,
            episode_id,
            kind,
            at: from_ms(at),
            data,
        })
    })
    .collect()
}

pub(crate) fn annotations(c: &Connection, episode_id: i64) -> Result<Vec<Annotation>> {
    annotations_where(
        c,
        "SELECT id, episode_id, kind, at, data FROM annotations WHERE episode_id = ?1 ORDER BY at, id",
        [episode_id],
    )
}

impl<T: Conn> LogRead for T {
    fn episodes(&self, s: &Subject, from_seq: u64, limit: usize) -> Result<Vec<Episode>> {
        let c = self.conn();
        episodes_where(
            c,
            "WHERE subject_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3",
            params![s.id, from_seq as i64, limit.min(i64::MAX as usize) as i64],
        )
    }
    fn episodes_of_kind(
        &self,
        s: &Subject,
        kind: Kind,
        until: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        let c = self.conn();
        episodes_where(
            c,
            "WHERE subject_id = ?1 AND kind = ?2 AND at <= ?3 AND erased_by IS NULL ORDER BY seq",
            params![s.id, kind.as_str(), to_ms(until)],
        )
    }
    fn episodes_between(
        &self,
        s: &Subject,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<Vec<Episode>> {
        let c = self.conn();
        episodes_where(
            c,
            "WHERE subject_id = ?1 AND at > ?2 AND at <= ?3 AND erased_by IS NULL ORDER BY seq",
            params![s.id, to_ms(from), to_ms(to)],
        )
    }
    fn episode_count(&self, s: &Subject) -> Result<u64> {
        count(self.conn(), s)
    }
    fn episode_counts(&self, s: &Subject, at: DateTime<Utc>) -> Result<BTreeMap<String, usize>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            "SELECT kind, COUNT(*) FROM episodes WHERE subject_id = ?1 AND at <= ?2 GROUP BY kind",
        )?;
        let rows = stmt.query_map(params![s.id, to_ms(at)], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn episode_by_external_id(&self, s: &Subject, id: &str) -> Result<Option<Episode>> {
        by_external_id(self.conn(), s, id)
    }
    fn episode_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Episode>> {
        let c = self.conn();
        Ok(episodes_where(
            c,
            "WHERE subject_id = ?1 AND seq = ?2",
            params![s.id, seq as i64],
        )?
        .pop())
    }
    fn episodes_by_ids(&self, ids: &[i64]) -> Result<Vec<Episode>> {
        by_ids(self.conn(), None, ids)
    }
    fn subject_episodes_by_ids(&self, s: &Subject, ids: &[i64]) -> Result<Vec<Episode>> {
        by_ids(self.conn(), Some(s), ids)
    }
    fn episode_by_import_key(&self, s: &Subject, key: &Hash) -> Result<Option<(i64, u64)>> {
        let c = self.conn();
        Ok(c.prepare_cached(
            "SELECT id, seq FROM episodes WHERE subject_id = ?1 AND import_key = ?2",
        )?
        .query_row(params![s.id, key.as_slice()], |r| {
            Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
        })
        .optional()?)
    }
    fn episode_by_salt(&self, s: &Subject, salt: &[u8]) -> Result<Option<(i64, u64)>> {
        let c = self.conn();
        Ok(
            c.prepare_cached("SELECT id, seq FROM episodes WHERE subject_id = ?1 AND salt = ?2")?
                .query_row(params![s.id, salt], |r| {
                    Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
                })
                .optional()?,
        )
    }
    fn activity_by_month(&self, s: &Subject) -> Result<Vec<(String, String, String, usize)>> {
        let c = self.conn();
        let mut stmt = c.prepare_cached(
            // A row stored before times were bounded (years 1900-9999 UTC) may
            // lie outside what strftime can name: it is counted, under its own
            // label, rather than failing the report.
            "SELECT COALESCE(strftime('%Y-%m', at / 1000, 'unixepoch'), 'out of range') AS month, kind,
                    COALESCE(json_extract(data, '$.verdict'), '') AS verdict, COUNT(*)
             FROM episodes WHERE subject_id = ?1 AND erased_by IS NULL
             GROUP BY month, kind, verdict ORDER BY month, kind, verdict",
        )?;
        let rows = stmt.query_map([s.id], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, i64>(3)? as usize,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn imported(&self, s: &Subject, sha256: &str) -> Result<bool> {
        imported(self.conn(), s, sha256)
    }
    fn head(&self, s: &Subject) -> Result<(u64, Hash)> {
        let c = self.conn();
        let row: Option<(i64, Vec<u8>)> = c
            .prepare_cached(
                "SELECT seq, hash FROM episodes WHERE subject_id = ?1 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(match row {
            None => (0, genesis_hash(&s.key.to_string())),
            Some((seq, hash)) => (
                seq as u64,
                hash.as_slice()
                    .try_into()
                    .map_err(|_| Error::Corrupt(format!("{}: head hash is not 32 bytes", s.key)))?,
            ),
        })
    }
    fn chain_rows(&self, s: &Subject, visit: &mut dyn FnMut(&StoredRow<'_>) -> bool) -> Result<()> {
        let c = self.conn();
        let key = s.key.to_string();
        let mut stmt = c.prepare_cached(
            "SELECT seq, kind, at, salience, summary, text, concepts, evidence, data, external_id, prev_hash, hash,
                    enc, salt, digest, erased_by
             FROM episodes WHERE subject_id = ?1 ORDER BY seq",
        )?;
        let mut rows = stmt.query([s.id])?;
        let mut last = 0;
        while let Some(r) = rows.next()? {
            // A field of the wrong type (SQLite keeps whatever it is given)
            // is a break at this row, not a failure of the whole check.
            let row = stored_row(r, &key).map_err(|e| Error::UnreadableRow {
                seq: r
                    .get::<_, i64>(0)
                    .ok()
                    .filter(|&q| q > 0)
                    .map_or(last + 1, |q| q as u64),
                reason: e.to_string(),
            })?;
            last = row.fields.seq;
            if !visit(&row) {
                break;
            }
        }
        Ok(())
    }
    fn seq_of_hash(&self, s: &Subject, hash: &[u8]) -> Result<Option<u64>> {
        let c = self.conn();
        Ok(
            c.prepare_cached("SELECT seq FROM episodes WHERE subject_id = ?1 AND hash = ?2")?
                .query_row(params![s.id, hash], |r| r.get::<_, i64>(0))
                .optional()?
                .map(|s| s as u64),
        )
    }
    fn hash_at_seq(&self, s: &Subject, seq: u64) -> Result<Option<Vec<u8>>> {
        let c = self.conn();
        Ok(
            c.prepare_cached("SELECT hash FROM episodes WHERE subject_id = ?1 AND seq = ?2")?
                .query_row(params![s.id, seq as i64], |r| r.get(0))
                .optional()?,
        )
    }
    fn annotations(&self, episode_id: i64) -> Result<Vec<Annotation>> {
        annotations(self.conn(), episode_id)
    }
    fn annotations_of_kind(&self, s: &Subject, kind: &str) -> Result<Vec<Annotation>> {
        let c = self.conn();
        annotations_where(
            c,
            "SELECT a.id, a.episode_id, a.kind, a.at, a.data FROM annotations a
             JOIN episodes e ON e.id = a.episode_id
             WHERE e.subject_id = ?1 AND a.kind = ?2 ORDER BY a.at, a.id",
            params![s.id, kind],
        )
    }
    fn annotated_ids(&self, s: &Subject, ids: &[i64], kind: &str) -> Result<Vec<i64>> {
        query_ids(
            self.conn(),
            // Driven by the id list (CROSS JOIN keeps that order): joined the
            // other way, SQLite walked every episode of the subject on each turn.
            "SELECT DISTINCT a.episode_id FROM json_each(?1) AS j
             CROSS JOIN annotations a ON a.episode_id = j.value AND a.kind = ?2
             CROSS JOIN episodes e ON e.id = a.episode_id AND e.subject_id = ?3
             ORDER BY a.episode_id",
            params![id_list(ids), kind, s.id],
        )
    }
}

impl LogWrite for SqliteTx<'_> {
    fn append(&mut self, s: &Subject, e: &NewEpisode) -> Result<Appended> {
        let head = match self.heads.get(&s.id) {
            Some(h) => *h,
            None => self.head(s)?,
        };
        let appended = append(&self.tx, s, head, e)?;
        self.heads.insert(s.id, (appended.seq, appended.hash));
        Ok(appended)
    }
    fn annotate(
        &mut self,
        episode_id: i64,
        kind: &str,
        at: DateTime<Utc>,
        data: &serde_json::Value,
    ) -> Result<i64> {
        let c: &Connection = &self.tx;
        c.execute(
            "INSERT INTO annotations (episode_id, kind, at, data) VALUES (?1, ?2, ?3, ?4)",
            params![episode_id, kind, to_ms(at), data.to_string()],
        )?;
        Ok(c.last_insert_rowid())
    }
    fn record_import(
        &mut self,
        s: &Subject,
        sha256: &str,
        source: &str,
        at: DateTime<Utc>,
        events: usize,
        appended: usize,
    ) -> Result<()> {
        let c: &Connection = &self.tx;
        c.execute(
            "INSERT INTO imports (subject_id, sha256, source, at, events, appended) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![s.id, sha256, source, to_ms(at), events as i64, appended as i64],
        )?;
        Ok(())
    }
}
