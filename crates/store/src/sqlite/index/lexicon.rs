//! A subject's full-text postings held in memory, and the BM25 the SQLite
//! engine's episode full-text reads answer with: FTS5's `bm25()` formula over
//! the subject's own statistics.
//!
//! The scores: for each phrase of the query in its order, the subject's token
//! first, over the rows holding it, `idf · f·(k1+1) / (f + k1·(1 − b + b·(−1)/avgdl))`
//! (k1 = 1.2, b = 0.75; a row's length reads as −1 in FTS5's contentless,
//! `columnsize=0` table), `idf = ln((N − n + 0.5)/(n + 0.5))` floored at 1e-6,
//! where N is the subject's live episodes, avgdl their tokens (the subject's
//! token included) over N, and n the subject's rows holding the phrase. A
//! phrase of several tokens (a term FTS5 reads as "mito chondria") is held
//! where each of its tokens is, as often as the rarest, as the PostgreSQL
//! engine counts it (FTS5 wants them adjacent); recall's terms are one token
//! each. For terms of one token, in a store holding one subject, these are
//! FTS5's own scores to the bit, on a build whose C compiler does not fuse a
//! multiply and an add (a unit test compares them; where the average row
//! holds exactly three tokens FTS5's score is NaN, ours finite). A subject's
//! ranking never depends on another subject's rows.
//!
//! Why the subject's statistics and not the table's, which FTS5's `bm25()`
//! uses (issue 17, LoCoMo `past_budget`): a word common in one learner's
//! history and rare in the store — the name every turn of a conversation
//! starts with, the subject's own topic — scored as a rare word, so turns
//! sharing nothing but the name ranked above turns found by meaning. The
//! PostgreSQL engine always used the subject's statistics.
//!
//! The subject's rows are tokenised once, as FTS5's `ascii` tokenizer cuts
//! them, and kept under a stamp of the index: its averages and structure
//! records (every committed write to the index changes the structure record:
//! a new segment, a merge). The stamp and the rows are read in one read
//! transaction, so a call sees one state of the store. Inside a transaction
//! (a write's pending rows may be in the index) the postings are read afresh
//! from that transaction's view and not kept. FTS5 itself answers only when
//! a row of the subject cannot be read (its concepts not JSON).

use super::searched_terms;
use crate::subject_token;
use crate::{Error, Result};
use rusqlite::{Connection, params};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tm_model::recall::episode_index_text;
use tm_model::subject::Subject;

/// FTS5 cuts longer tokens to this many bytes (`FTS5_MAX_TOKEN_SIZE`).
const MAX_TOKEN: usize = 32_768;

/// The tokens FTS5's `ascii` tokenizer makes of `text`: runs of bytes that
/// are not ASCII non-alphanumerics, ASCII letters folded to lower case, cut
/// to [`MAX_TOKEN`] bytes.
fn tokens(text: &str) -> impl Iterator<Item = Vec<u8>> + '_ {
    crate::ascii_runs(text).map(|t| t.as_bytes()[..t.len().min(MAX_TOKEN)].to_ascii_lowercase())
}

/// A row's BM25 as `fts5Bm25Function` sums it: phrase by phrase, in the
/// query's order, `freqs` the row's count of each phrase. A phrase the row
/// does not hold adds nothing (FTS5 adds a zero, which leaves the sum's bits
/// as they are, or a NaN when `avgdl` is exactly 3); `norm` is
/// [`bm25_norm`](crate::bm25_norm) of the average row.
fn bm25(freqs: impl Iterator<Item = f64>, idf: &[f64], norm: f64) -> f64 {
    let mut score = 0.0f64;
    for (f, idf) in freqs.zip(idf) {
        if f > 0.0 {
            score += idf * ((f * (crate::BM25_K1 + 1.0)) / (f + norm));
        }
    }
    score
}

/// Each token's (row id, count), ascending id. Tokens and lists are shared
/// between a subject's states: an append copies the map's pointers and the
/// lists it adds to, not every list.
type Terms = HashMap<Arc<[u8]>, Arc<Vec<(i64, u32)>>>;

/// One subject's rows in the index: each token's (row id, count), ascending
/// id.
struct Postings {
    stamp: Vec<u8>,
    /// Live episodes, their tokens (the subject's token included) and the
    /// largest id among them.
    live: i64,
    tokens: i64,
    max_id: i64,
    /// Shared between the states of the stamp that added no row to it: a
    /// write into another subject moves the stamp, and copying the postings
    /// then was most of a turn's full-text time.
    terms: Arc<Terms>,
}

impl Postings {
    fn empty(stamp: Vec<u8>) -> Postings {
        Postings {
            stamp,
            live: 0,
            tokens: 0,
            max_id: 0,
            terms: Arc::default(),
        }
    }

    fn add(&mut self, id: i64, doc: &str) {
        let mut counts: HashMap<Vec<u8>, u32> = HashMap::new();
        for t in tokens(doc) {
            *counts.entry(t).or_default() += 1;
            self.tokens += 1;
        }
        let terms = Arc::make_mut(&mut self.terms);
        for (t, n) in counts {
            match terms.get_mut(t.as_slice()) {
                Some(list) => Arc::make_mut(list).push((id, n)),
                None => {
                    terms.insert(Arc::from(t), Arc::new(vec![(id, n)]));
                }
            }
        }
        self.live += 1;
        self.max_id = self.max_id.max(id);
    }

    fn of(&self, token: &[u8]) -> &[(i64, u32)] {
        self.terms.get(token).map_or(&[], |list| list.as_slice())
    }

    /// The rows holding `phrase`: every one of its tokens, counted as often as
    /// the rarest of them in the row.
    fn phrase(&self, phrase: &[Vec<u8>]) -> Cow<'_, [(i64, u32)]> {
        let mut lists: Vec<&[(i64, u32)]> = phrase.iter().map(|t| self.of(t)).collect();
        lists.sort_by_key(|l| l.len());
        match lists.as_slice() {
            [] => Cow::Borrowed(&[]),
            [one] => Cow::Borrowed(one),
            [first, rest @ ..] => Cow::Owned(
                first
                    .iter()
                    .filter_map(|&(id, n)| {
                        rest.iter()
                            .try_fold(n, |f, l| {
                                l.binary_search_by_key(&id, |x| x.0)
                                    .ok()
                                    .map(|i| f.min(l[i].1))
                            })
                            .map(|f| (id, f))
                    })
                    .collect(),
            ),
        }
    }

    /// The subject's rows holding any phrase after the first (the subject's
    /// token), the newest [`TERM_HITS_BOUND`](crate::TERM_HITS_BOUND) of
    /// them scored, best first (ties by id), at most `limit`.
    fn hits(&self, phrases: &[Vec<Vec<u8>>], limit: usize) -> Vec<(i64, f64)> {
        if self.live <= 0 || phrases.len() < 2 {
            return Vec::new();
        }
        let lists: Vec<Cow<'_, [(i64, u32)]>> = phrases.iter().map(|p| self.phrase(p)).collect();
        let idf: Vec<f64> = lists
            .iter()
            .map(|l| crate::bm25_idf(self.live as f64, l.len() as f64))
            .collect();
        // The newest hits, as FTS5's `ORDER BY rowid DESC LIMIT` gives them.
        let mut ids: Vec<i64> = lists[1..]
            .iter()
            .flat_map(|l| l.iter().map(|x| x.0))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.dedup();
        ids.truncate(crate::TERM_HITS_BOUND);
        let norm = crate::bm25_norm(self.tokens as f64 / self.live as f64);
        let mut hits: Vec<(i64, f64)> = ids
            .into_iter()
            .map(|id| {
                let score = bm25(
                    lists.iter().map(|list| {
                        list.binary_search_by_key(&id, |x| x.0)
                            .map_or(0.0, |i| f64::from(list[i].1))
                    }),
                    &idf,
                    norm,
                );
                (id, score)
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(limit);
        hits
    }
}

/// The in-memory postings of the subjects this engine has served, shared by
/// its connections.
#[derive(Default)]
pub(crate) struct Lexicon {
    subjects: Mutex<HashMap<i64, Arc<Postings>>>,
}

/// The phrases of a query, each as its tokens, as FTS5 builds them from
/// `terms`: the subject's token first.
fn phrases(subject_id: i64, terms: &[String]) -> Vec<Vec<Vec<u8>>> {
    let mut out = vec![vec![subject_token(subject_id).into_bytes()]];
    out.extend(
        searched_terms(terms)
            .map(|t| tokens(&t).collect::<Vec<_>>())
            .filter(|p| !p.is_empty()),
    );
    out
}

/// The subject's postings: `lexicon`'s, kept under the index's stamp, or,
/// without one or inside a transaction, read afresh. `None` when a row of the
/// subject cannot be read (or the index lacks the records FTS5 writes when it
/// creates the table): FTS5 answers then.
fn postings(
    lexicon: Option<&Lexicon>,
    c: &Connection,
    s: &Subject,
) -> Result<Option<Arc<Postings>>> {
    match lexicon {
        Some(l) if c.is_autocommit() => {
            let tx = c.unchecked_transaction()?;
            let p = l.postings(c, s)?;
            drop(tx);
            Ok(p)
        }
        _ => Ok(refreshed(c, s, None, Vec::new())?.map(Arc::new)),
    }
}

/// As [`crate::IndexRead::term_hits`] answers, or `None` when FTS5 must.
pub(crate) fn term_hits(
    lexicon: Option<&Lexicon>,
    c: &Connection,
    s: &Subject,
    terms: &[String],
    limit: usize,
) -> Result<Option<Vec<(i64, f64)>>> {
    let phrases = phrases(s.id, terms);
    if phrases.len() == 1 {
        return Ok(Some(Vec::new()));
    }
    Ok(postings(lexicon, c, s)?.map(|p| p.hits(&phrases, limit)))
}

/// As [`crate::IndexRead::term_count`] answers, or `None` when FTS5 must.
pub(crate) fn term_count(
    lexicon: Option<&Lexicon>,
    c: &Connection,
    s: &Subject,
    term: &str,
    limit: usize,
) -> Result<Option<usize>> {
    let phrases = phrases(s.id, std::slice::from_ref(&term.to_string()));
    let Some(phrase) = phrases.get(1) else {
        return Ok(Some(0));
    };
    Ok(postings(lexicon, c, s)?.map(|p| p.phrase(phrase).len().min(limit)))
}

impl Lexicon {
    /// The subject's postings at the index's current stamp (built or brought
    /// up to date when it moved); `None` when the index lacks its records
    /// (FTS5 writes them when it creates the table) or a row cannot be read.
    fn postings(&self, c: &Connection, s: &Subject) -> Result<Option<Arc<Postings>>> {
        let mut records = c.prepare_cached(
            "SELECT id, block FROM episode_fts_data WHERE id IN (1, 10) ORDER BY id",
        )?;
        let blocks: Vec<(i64, Vec<u8>)> = records
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let [(1, averages), (10, structure)] = blocks.as_slice() else {
            return Ok(None);
        };
        let mut stamp = averages.clone();
        stamp.extend_from_slice(structure);
        let old = self
            .subjects
            .lock()
            .map_err(|_| poisoned())?
            .get(&s.id)
            .cloned();
        match old {
            Some(p) if p.stamp == stamp => Ok(Some(p)),
            old => {
                let Some(p) = refreshed(c, s, old.as_deref(), stamp)? else {
                    return Ok(None);
                };
                let p = Arc::new(p);
                self.subjects
                    .lock()
                    .map_err(|_| poisoned())?
                    .insert(s.id, p.clone());
                Ok(Some(p))
            }
        }
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
    // The live count from the live rows' index alone, and the newest id as
    // the head's (ids grow with the chain): counting the rows' erasure marks
    // sought every row in the table, most of a read after any write.
    let live: i64 = c
        .prepare_cached(
            "SELECT count(*) FROM episodes WHERE subject_id = ?1 AND erased_by IS NULL",
        )?
        .query_row([s.id], |r| r.get(0))?;
    let newest: i64 = c
        .prepare_cached(
            "SELECT COALESCE((SELECT id FROM episodes WHERE subject_id = ?1 ORDER BY seq DESC LIMIT 1), 0)",
        )?
        .query_row([s.id], |r| r.get(0))?;
    let Some(rows) = live_rows(c, s, old.map_or(0, |p| p.max_id))? else {
        return Ok(None);
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
                tokens: o.tokens,
                max_id: o.max_id,
                terms: o.terms.clone(),
            },
            rows,
        ),
        Some(_) => match live_rows(c, s, 0)? {
            Some(rows) => (Postings::empty(stamp), rows),
            None => return Ok(None),
        },
        None => (Postings::empty(stamp), rows),
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
    // After a known row, the few rows appended since by id (every subject's);
    // from the start, the subject's own rows by its live rows' index.
    let mut stmt = c.prepare_cached(if after > 0 {
        "SELECT id, text, concepts FROM episodes
         WHERE id > ?2 AND +subject_id = ?1 AND erased_by IS NULL ORDER BY id"
    } else {
        "SELECT id, text, concepts FROM episodes
         WHERE subject_id = ?1 AND erased_by IS NULL AND id > ?2 ORDER BY id"
    })?;
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

fn poisoned() -> Error {
    Error::Corrupt("the full-text postings' lock was poisoned by a panic".into())
}

#[cfg(test)]
mod tests {
    use crate::StoreExt;
    use crate::prelude::*;
    use crate::sqlite::{Conn, SqliteStore, index};
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
            concepts,
            ..NewEpisode::plain(
                Kind::Question,
                Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
                    + chrono::Duration::minutes(i as i64),
                text.join(" "),
            )
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

    /// FTS5's own answer for `s` in a table holding only the subject's live
    /// rows (the same ids and index texts): what FTS5's `bm25()` gives when
    /// the table's statistics are the subject's.
    fn fts5_alone(
        store: &SqliteStore,
        s: &Subject,
        terms: &[String],
        limit: usize,
    ) -> Vec<(i64, f64)> {
        let alone = rusqlite::Connection::open_in_memory().unwrap();
        alone
            .execute_batch(
                "CREATE VIRTUAL TABLE episode_fts USING fts5(terms, tokenize = 'ascii', content = '', columnsize = 0);",
            )
            .unwrap();
        for (id, doc) in super::live_rows(store.conn(), s, 0).unwrap().unwrap() {
            alone
                .execute(
                    "INSERT INTO episode_fts (rowid, terms) VALUES (?1, ?2)",
                    rusqlite::params![id, format!("{} {doc}", super::subject_token(s.id))],
                )
                .unwrap();
        }
        index::term_hits(&alone, s, terms, limit).unwrap()
    }

    /// A subject's scores are FTS5's, to the bit, in a table holding that
    /// subject alone, while three subjects share the store's index (one
    /// writes another's token), with appends between reads and erasures;
    /// counts are the subject's rows holding the term; and a read inside a
    /// write transaction gives what a read outside it gives.
    #[test]
    fn a_subjects_scores_are_fts5s_over_its_rows_alone() {
        let mut store = SqliteStore::open_in_memory().unwrap();
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let subjects: Vec<Subject> = (1..=3)
            .map(|i| {
                let key = SubjectKey::parse(&format!("l/s{i}")).unwrap();
                store
                    .write(|tx| {
                        tx.ensure_subject(crate::Owner::Operator, &key, "t", Some("en"), at)
                    })
                    .unwrap()
            })
            .collect();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut compared, mut counted) = (0, 0);
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
                // Rounds 3, 7, 11: subjects 1, 2, 1.
                let s = &subjects[(round / 4) % 2];
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
                    let mine = store.term_hits(s, &terms, limit).unwrap();
                    // FTS5 reads a term of several tokens as adjacent ones;
                    // ours, as each of them anywhere in the row.
                    if terms.iter().all(|t| super::tokens(t).count() <= 1) {
                        let bits = |h: &[(i64, f64)]| {
                            h.iter().map(|(i, x)| (*i, x.to_bits())).collect::<Vec<_>>()
                        };
                        assert_eq!(
                            bits(&mine),
                            bits(&fts5_alone(&store, s, &terms, limit)),
                            "{terms:?} in {}",
                            s.key
                        );
                        compared += 1;
                    }
                    let inside = store.write(|tx| tx.term_hits(s, &terms, limit)).unwrap();
                    assert_eq!(inside, mine, "{terms:?} inside a write transaction");
                    for t in &terms {
                        let hits = store.term_hits(s, std::slice::from_ref(t), 5000).unwrap();
                        assert_eq!(store.term_count(s, t, 7).unwrap(), hits.len().min(7));
                        counted += 1;
                    }
                }
            }
        }
        assert!(compared > 300, "{compared} answers compared with FTS5");
        assert!(counted > 500, "{counted} counts checked");
    }

    /// A phrase of several tokens is held where each of them is, as often
    /// as the rarest; a token nowhere holds nothing.
    #[test]
    fn a_phrase_is_held_where_all_its_tokens_are() {
        let mut p = super::Postings::empty(Vec::new());
        p.add(1, "mito chondria mito");
        p.add(2, "mito");
        p.add(3, "chondria mito chondria chondria");
        let phrase = |t: &str| super::tokens(t).collect::<Vec<_>>();
        assert_eq!(&*p.phrase(&phrase("mito-chondria")), &[(1, 1), (3, 1)]);
        assert_eq!(&*p.phrase(&phrase("MITO")), &[(1, 2), (2, 1), (3, 1)]);
        assert!(p.phrase(&phrase("nowhere mito")).is_empty());
        assert_eq!(p.tokens, 3 + 1 + 4);
    }
}
