//! A subject's full-text postings held in memory, scored exactly as FTS5's
//! `bm25()` scores the episode index: the same hits, the same doubles.
//!
//! FTS5 answered a turn's `s<id> AND ("a" OR "b")` by walking the subject's
//! token's whole doclist against the terms', then, for every hit, asking for
//! its phrase counts; its first `bm25()` call also counted every row of each
//! phrase, the subject's token included (a quarter of a block worker's time
//! under `bench load`). Here the subject's rows are tokenised once, as FTS5's
//! `ascii` tokenizer cuts them, and kept under a stamp of the index; a turn
//! then scores only the rows holding one of its terms, with the table's
//! statistics FTS5 uses (row count, token count, each phrase's hit count over
//! the whole table), in FTS5's order of arithmetic. A term FTS5 would read
//! as a phrase of several tokens, a token past FTS5's length limit, or a
//! subject token found in another subject's rows sends the call back to FTS5
//! (`None`).
//!
//! The stamp is the index's averages and structure records: every committed
//! write to the index changes the structure record (a new segment, a merge),
//! and the averages record holds the row and token counts. It is read in the
//! same read transaction as everything else a call uses, so a call sees one
//! state of the store. Reads inside a write transaction never come here (the
//! index may hold that transaction's pending rows).

use super::recall::{searched_terms, subject_match};
use super::subject_token;
use crate::{Error, Result};
use rusqlite::{Connection, params};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tm_model::recall::episode_index_text;
use tm_model::subject::Subject;

/// FTS5's BM25 constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// FTS5 cuts longer tokens to this many bytes (`FTS5_MAX_TOKEN_SIZE`).
const MAX_TOKEN: usize = 32_768;
/// A row's length as FTS5 reads it in a contentless table without
/// `columnsize`.
const ROW_LENGTH: f64 = -1.0;

/// The tokens FTS5's `ascii` tokenizer makes of `text`: runs of bytes that
/// are not ASCII non-alphanumerics, ASCII letters folded to lower case, cut
/// to [`MAX_TOKEN`] bytes.
fn tokens(text: &str) -> impl Iterator<Item = Vec<u8>> + '_ {
    crate::ascii_runs(text).map(|t| t.as_bytes()[..t.len().min(MAX_TOKEN)].to_ascii_lowercase())
}

/// A row's BM25 as `fts5Bm25Function` sums it: phrase by phrase, in the
/// query's order, `freqs` the row's count of each phrase.
fn bm25(freqs: impl Iterator<Item = f64>, idf: &[f64], avgdl: f64) -> f64 {
    let mut score = 0.0f64;
    for (f, idf) in freqs.zip(idf) {
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * ROW_LENGTH / avgdl)));
    }
    score
}

/// The IDF `fts5Bm25GetData` gives a phrase that `n_hit` of `n_row` rows hold.
fn idf(n_row: i64, n_hit: i64) -> f64 {
    let idf = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// Whether [`bm25`] gives this build's FTS5 scores to the bit, checked once on
/// a small table of its own: a C compiler that fuses a multiply and an add
/// (`-ffp-contract`, the default of some targets) would round differently,
/// and then FTS5 answers every query.
fn arithmetic_is_fts5s() -> bool {
    static SAME: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SAME.get_or_init(|| same_arithmetic().unwrap_or(false))
}

fn same_arithmetic() -> Result<bool> {
    let c = Connection::open_in_memory()?;
    c.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'ascii', content = '', columnsize = 0);",
    )?;
    let rows: Vec<String> = (1..=23)
        .map(|i| {
            let mut words = vec!["s7".to_string()];
            for k in 0..(i % 5 + i % 3) {
                words.push(["cell", "osmosis", "water", "Cell"][(i + k) % 4].to_string());
            }
            words.push(format!("w{}", i % 6));
            words.join(" ")
        })
        .collect();
    for (i, r) in rows.iter().enumerate() {
        c.execute(
            "INSERT INTO t (rowid, x) VALUES (?1, ?2)",
            params![i as i64 + 1, r],
        )?;
    }
    let query = ["s7", "cell", "osmosis", "w2"];
    let terms: Vec<String> = query[1..].iter().map(|q| q.to_string()).collect();
    let n_row = rows.len() as i64;
    let n_token: usize = rows.iter().map(|r| tokens(r).count()).sum();
    // Each row's count of each phrase of the query.
    let freqs: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| {
            query
                .iter()
                .map(|q| tokens(r).filter(|t| t == q.as_bytes()).count() as f64)
                .collect()
        })
        .collect();
    let idfs: Vec<f64> = (0..query.len())
        .map(|j| idf(n_row, freqs.iter().filter(|f| f[j] > 0.0).count() as i64))
        .collect();
    let avgdl = n_token as f64 / n_row as f64;
    let mut stmt = c.prepare("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?1")?;
    let got: Vec<(i64, f64)> = stmt
        .query_map([subject_match(7, &terms)], |r| {
            Ok((r.get(0)?, -r.get::<_, f64>(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(!got.is_empty()
        && got.iter().all(|&(id, score)| {
            let mine = bm25(freqs[id as usize - 1].iter().copied(), &idfs, avgdl);
            mine.to_bits() == score.to_bits()
        }))
}

/// What the table's statistics are at one stamp, and each phrase's hit count
/// there, counted once.
struct Table {
    stamp: Vec<u8>,
    rows: i64,
    tokens: i64,
    hits: Mutex<HashMap<Vec<u8>, i64>>,
}

/// One subject's rows in the index: each token's (row id, count), ascending
/// id.
struct Postings {
    stamp: Vec<u8>,
    /// Live episodes and the largest id among them.
    live: i64,
    max_id: i64,
    terms: HashMap<Box<[u8]>, Vec<(i64, u32)>>,
}

impl Postings {
    fn add(&mut self, id: i64, doc: &str) {
        let mut counts: HashMap<Vec<u8>, u32> = HashMap::new();
        for t in tokens(doc) {
            *counts.entry(t).or_default() += 1;
        }
        for (t, n) in counts {
            self.terms
                .entry(t.into_boxed_slice())
                .or_default()
                .push((id, n));
        }
        self.live += 1;
        self.max_id = self.max_id.max(id);
    }

    fn of(&self, token: &[u8]) -> &[(i64, u32)] {
        self.terms.get(token).map_or(&[], Vec::as_slice)
    }
}

/// The in-memory postings of the subjects this engine has served, shared by
/// its connections.
#[derive(Default)]
pub(crate) struct Lexicon {
    table: Mutex<Option<Arc<Table>>>,
    subjects: Mutex<HashMap<i64, Arc<Postings>>>,
}

/// The phrases of a query as FTS5 builds them from `terms` (the subject's
/// token first), or `None` when one is not a single token.
fn phrases(subject_id: i64, terms: &[String]) -> Option<Vec<Vec<u8>>> {
    let mut out = vec![subject_token(subject_id).into_bytes()];
    for t in searched_terms(terms) {
        let mut toks = tokens(&t);
        let (Some(tok), None) = (toks.next(), toks.next()) else {
            return None;
        };
        if tok.len() >= MAX_TOKEN {
            return None;
        }
        out.push(tok);
    }
    Some(out)
}

/// One state of the index as a call sees it.
struct Snapshot {
    table: Arc<Table>,
    postings: Arc<Postings>,
}

impl Lexicon {
    /// As [`super::recall::term_hits`] answers, or `None` when FTS5 must.
    pub(crate) fn term_hits(
        &self,
        c: &Connection,
        s: &Subject,
        terms: &[String],
        limit: usize,
    ) -> Result<Option<Vec<(i64, f64)>>> {
        let Some(phrases) = phrases(s.id, terms).filter(|_| arithmetic_is_fts5s()) else {
            return Ok(None);
        };
        if phrases.len() == 1 {
            return Ok(Some(Vec::new()));
        }
        let tx = c.unchecked_transaction()?;
        let Some(snap) = self.snapshot(c, s)? else {
            return Ok(None);
        };
        let idf = match phrases
            .iter()
            .enumerate()
            .map(|(i, p)| snap.idf(c, p, i == 0))
            .collect::<Result<Option<Vec<f64>>>>()?
        {
            Some(idf) => idf,
            None => return Ok(None),
        };
        drop(tx);
        let lists: Vec<&[(i64, u32)]> = phrases.iter().map(|p| snap.postings.of(p)).collect();
        // The newest hits, as FTS5's `ORDER BY rowid DESC LIMIT` gives them.
        let mut ids: Vec<i64> = lists[1..]
            .iter()
            .flat_map(|l| l.iter().map(|x| x.0))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.dedup();
        ids.truncate(crate::TERM_HITS_BOUND);
        let avgdl = snap.table.tokens as f64 / snap.table.rows as f64;
        let mut hits: Vec<(i64, f64)> = ids
            .into_iter()
            .map(|id| {
                let score = bm25(
                    lists.iter().map(|list| {
                        list.binary_search_by_key(&id, |x| x.0)
                            .map_or(0.0, |i| f64::from(list[i].1))
                    }),
                    &idf,
                    avgdl,
                );
                // FTS5 returns −1.0 × score, which the FTS5 path negates back.
                (id, score)
            })
            .collect();
        // A 0/0 (an average of exactly three tokens a row): FTS5's NaN
        // becomes NULL, which its path reports; let it.
        if hits.iter().any(|h| h.1.is_nan()) {
            return Ok(None);
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(limit);
        Ok(Some(hits))
    }

    /// As [`super::recall::term_count`] answers, or `None` when FTS5 must.
    pub(crate) fn term_count(
        &self,
        c: &Connection,
        s: &Subject,
        term: &str,
        limit: usize,
    ) -> Result<Option<usize>> {
        let Some(phrases) = phrases(s.id, std::slice::from_ref(&term.to_string()))
            .filter(|_| arithmetic_is_fts5s())
        else {
            return Ok(None);
        };
        let Some(token) = phrases.get(1) else {
            return Ok(Some(0));
        };
        let tx = c.unchecked_transaction()?;
        let Some(snap) = self.snapshot(c, s)? else {
            return Ok(None);
        };
        // Only when no other subject's row holds this subject's token do the
        // subject's rows alone answer `s<id> AND "term"`.
        if snap.idf(c, &phrases[0], true)?.is_none() {
            return Ok(None);
        }
        drop(tx);
        Ok(Some(snap.postings.of(token).len().min(limit)))
    }

    /// The table's statistics and the subject's postings at the index's
    /// current stamp (built or brought up to date when it moved); `None`
    /// when the index has no statistics to score by.
    fn snapshot(&self, c: &Connection, s: &Subject) -> Result<Option<Snapshot>> {
        let mut records = c.prepare_cached(
            "SELECT id, block FROM episode_fts_data WHERE id IN (1, 10) ORDER BY id",
        )?;
        let blocks: Vec<(i64, Vec<u8>)> = records
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let [(1, averages), (10, structure)] = blocks.as_slice() else {
            return Ok(None);
        };
        let Some((rows, tokens)) = averages_counts(averages) else {
            return Ok(None);
        };
        if rows <= 0 {
            return Ok(None);
        }
        let mut stamp = averages.clone();
        stamp.extend_from_slice(structure);

        let table = {
            let mut cached = self.table.lock().map_err(|_| poisoned())?;
            match cached.as_ref() {
                Some(t) if t.stamp == stamp => t.clone(),
                _ => {
                    let t = Arc::new(Table {
                        stamp: stamp.clone(),
                        rows,
                        tokens,
                        hits: Mutex::new(HashMap::new()),
                    });
                    *cached = Some(t.clone());
                    t
                }
            }
        };
        let old = self
            .subjects
            .lock()
            .map_err(|_| poisoned())?
            .get(&s.id)
            .cloned();
        let postings = match old {
            Some(p) if p.stamp == stamp => p,
            old => {
                let Some(p) = refreshed(c, s, old.as_deref(), stamp)? else {
                    return Ok(None);
                };
                let p = Arc::new(p);
                self.subjects
                    .lock()
                    .map_err(|_| poisoned())?
                    .insert(s.id, p.clone());
                p
            }
        };
        Ok(Some(Snapshot { table, postings }))
    }
}

impl Snapshot {
    /// The IDF FTS5 gives `phrase`: ln((N − n + 0.5)/(n + 0.5)), at least
    /// 1e-6, n the rows of the whole table holding it. `None` for the
    /// subject's token when rows of another subject hold it too (FTS5 would
    /// then also return those rows).
    fn idf(&self, c: &Connection, phrase: &[u8], subject: bool) -> Result<Option<f64>> {
        let cached = self
            .table
            .hits
            .lock()
            .map_err(|_| poisoned())?
            .get(phrase)
            .copied();
        let n_hit = match cached {
            Some(n) => n,
            None => {
                let quoted = format!(
                    "\"{}\"",
                    String::from_utf8_lossy(phrase).replace('"', "\"\"")
                );
                let n: i64 = c
                    .prepare_cached("SELECT count(*) FROM episode_fts WHERE episode_fts MATCH ?1")?
                    .query_row([quoted], |r| r.get(0))?;
                self.table
                    .hits
                    .lock()
                    .map_err(|_| poisoned())?
                    .insert(phrase.to_vec(), n);
                n
            }
        };
        if subject && self.postings.of(phrase).len() as i64 != n_hit {
            return Ok(None);
        }
        Ok(Some(idf(self.table.rows, n_hit)))
    }
}

/// The subject's postings at `stamp`: `old` with the rows appended since, or
/// all of them read again when any was erased.
fn refreshed(
    c: &Connection,
    s: &Subject,
    old: Option<&Postings>,
    stamp: Vec<u8>,
) -> Result<Option<Postings>> {
    let (live, newest): (i64, i64) = c
        .prepare_cached(
            "SELECT count(*) FILTER (WHERE erased_by IS NULL), COALESCE(max(id), 0)
             FROM episodes WHERE subject_id = ?1",
        )?
        .query_row([s.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let Some(rows) = live_rows(c, s, old.map_or(0, |p| p.max_id))? else {
        return Ok(None);
    };
    let empty = |stamp| Postings {
        stamp,
        live: 0,
        max_id: 0,
        terms: HashMap::new(),
    };
    let (mut p, rows) = match old {
        // Only appends since (ids only grow): none of its rows was erased.
        // Another connection may have cached a newer state than this read
        // sees; holding its newest row, this view is no older than the
        // append of that row, and then equal counts mean the same rows.
        Some(o) if o.max_id <= newest && o.live + rows.len() as i64 == live => (
            Postings {
                stamp,
                live: o.live,
                max_id: o.max_id,
                terms: o.terms.clone(),
            },
            rows,
        ),
        Some(_) => match live_rows(c, s, 0)? {
            Some(rows) => (empty(stamp), rows),
            None => return Ok(None),
        },
        None => (empty(stamp), rows),
    };
    let token = subject_token(s.id);
    for (id, doc) in rows {
        p.add(id, &format!("{token} {doc}"));
    }
    Ok(Some(p))
}

/// The subject's live episodes after `after`, ascending id, as the index holds
/// them (without the subject's token); `None` when a row cannot be read (its
/// concepts not JSON, its text not UTF-8): FTS5 answers for that subject.
fn live_rows(c: &Connection, s: &Subject, after: i64) -> Result<Option<Vec<(i64, String)>>> {
    let mut stmt = c.prepare_cached(
        "SELECT id, text, concepts FROM episodes
         WHERE subject_id = ?1 AND erased_by IS NULL AND id > ?2 ORDER BY id",
    )?;
    let mut rows = stmt.query(params![s.id, after])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let (Ok(text), Ok(concepts)) = (r.get::<_, String>(1), r.get::<_, String>(2)) else {
            return Ok(None);
        };
        let Ok(concepts) = serde_json::from_str::<Vec<String>>(&concepts) else {
            return Ok(None);
        };
        out.push((id, episode_index_text(&text, &concepts)));
    }
    Ok(Some(out))
}

/// (rows, tokens of the one column) from FTS5's averages record: SQLite
/// varints, the row count then each column's token count.
fn averages_counts(block: &[u8]) -> Option<(i64, i64)> {
    let (rows, n) = varint(block)?;
    let (tokens, _) = varint(&block[n..])?;
    Some((rows as i64, tokens as i64))
}

/// A SQLite varint (big-endian, seven bits a byte, the ninth byte whole):
/// its value and length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn poisoned() -> Error {
    Error::Corrupt("the full-text postings' lock was poisoned by a panic".into())
}

#[cfg(test)]
mod tests {
    use super::super::{Conn, SqliteStore, recall};
    use crate::{Reader, StoreExt};
    use chrono::{TimeZone, Utc};
    use tm_model::episodes::{Kind, NewEpisode, NewErasure};
    use tm_model::subject::{Subject, SubjectKey};

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    const WORDS: &[&str] = &[
        "cell",
        "Cell",
        "membrane",
        "osmosis",
        "osmosis",
        "water",
        "ósmosis",
        "细胞",
        "s1",
        "S9",
        "s10x",
        "mito-chondria",
        "ATP",
        "atp",
        "enzyme",
        "x",
        "2024",
        "don't",
        "l'eau",
        "细胞膜",
    ];

    fn episode(rng: &mut Rng, i: usize) -> NewEpisode {
        let n = 1 + rng.below(12);
        let text: Vec<&str> = (0..n).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        let concepts = if rng.below(3) == 0 {
            vec![WORDS[rng.below(WORDS.len())].to_string()]
        } else {
            vec![]
        };
        NewEpisode {
            kind: Kind::Question,
            at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
                + chrono::Duration::minutes(i as i64),
            salience: 0.35,
            summary: String::new(),
            text: text.join(" "),
            concepts,
            evidence: vec![],
            data: serde_json::Map::new(),
            external_id: None,
            import_key: None,
            salt: None,
        }
    }

    fn query(rng: &mut Rng) -> Vec<String> {
        let n = 1 + rng.below(4);
        (0..n)
            .map(|_| match rng.below(12) {
                0 => "mito-chondria".to_string(),
                1 => "?!".to_string(),
                2 => "nowhere".to_string(),
                _ => tm_model::lang::canonical_key(WORDS[rng.below(WORDS.len())]),
            })
            .collect()
    }

    /// Every answer the in-memory postings give is FTS5's, to the bit:
    /// several subjects sharing the index (one writes another's token),
    /// appends between reads, erasures.
    #[test]
    fn postings_score_exactly_as_fts5() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let subjects: Vec<Subject> = (1..=3)
            .map(|i| {
                let key = SubjectKey::parse(&format!("l/s{i}")).unwrap();
                store
                    .write(|tx| tx.ensure_subject(&key, "t", Some("en"), at))
                    .unwrap()
            })
            .collect();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut answered, mut asked, mut counted) = (0, 0, 0);
        for round in 0..12 {
            for (k, s) in subjects.iter().enumerate() {
                let n = [40, 25, 3][k] + rng.below(10);
                let batch: Vec<NewEpisode> =
                    (0..n).map(|i| episode(&mut rng, round * 100 + i)).collect();
                store
                    .write(|tx| {
                        for e in &batch {
                            tx.append(s, e)?;
                        }
                        Ok(())
                    })
                    .unwrap();
            }
            if round % 4 == 3 {
                let s = &subjects[round % 2];
                let seqs = vec![1 + rng.below(20) as u64];
                let e = NewErasure {
                    at,
                    scope: "episode".into(),
                    target: format!("{}#{}", s.key, seqs[0]),
                    reference: String::new(),
                    reason: String::new(),
                };
                let _ = store.write(|tx| tx.erase_episodes(&e, s, &seqs, false).map(|_| ()));
            }
            for s in &subjects {
                for _ in 0..20 {
                    let terms = query(&mut rng);
                    let limit = [1, 5, 50, 5000][rng.below(4)];
                    let fts = recall::term_hits(store.conn(), s, &terms, limit).unwrap();
                    asked += 1;
                    if let Some(mine) = store
                        .lexicon()
                        .unwrap()
                        .term_hits(store.conn(), s, &terms, limit)
                        .unwrap()
                    {
                        answered += 1;
                        let bits = |h: &[(i64, f64)]| {
                            h.iter().map(|(i, x)| (*i, x.to_bits())).collect::<Vec<_>>()
                        };
                        assert_eq!(bits(&mine), bits(&fts), "{terms:?} in {}", s.key);
                    }
                    // What a reader is given is FTS5's answer either way.
                    assert_eq!(store.term_hits(s, &terms, limit).unwrap(), fts);
                    for t in &terms {
                        let want = recall::term_count(store.conn(), s, t, 7).unwrap();
                        if let Some(n) = store
                            .lexicon()
                            .unwrap()
                            .term_count(store.conn(), s, t, 7)
                            .unwrap()
                        {
                            counted += 1;
                            assert_eq!(n, want, "count of {t:?} in {}", s.key);
                        }
                        assert_eq!(store.term_count(s, t, 7).unwrap(), want);
                    }
                }
            }
        }
        // Subject 1's token is written in the others' rows, so it is FTS5's
        // to answer; subjects 2 and 3 mostly are not ("S2" and "s3" are).
        assert!(
            answered * 4 > asked,
            "{answered} of {asked} answered in memory"
        );
        assert!(counted > 100, "{counted} counts answered in memory");
    }

    /// This build's FTS5 rounds as `bm25` does (else every query would go
    /// to FTS5 and the test above would prove nothing).
    #[test]
    fn this_builds_fts5_sums_as_ours() {
        assert!(super::arithmetic_is_fts5s());
    }

    #[test]
    fn varints_read_as_sqlite_writes_them() {
        assert_eq!(super::varint(&[0x05]), Some((5, 1)));
        assert_eq!(super::varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(super::varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(super::varint(&[0x81]), None);
    }
}
