//! The full-text read of a turn (`Reader::term_hits`, three terms) on a subject
//! of 10,000 generated episodes in a SQLite file, right after a write into
//! another subject, right after a write into the same subject, and with no
//! write between: every committed write moves the index's stamp, and the
//! in-memory postings are then brought up to date.
//!
//! `cargo run --release -p tm-store --example fulltext_after_write`
use chrono::{TimeZone, Utc};
use tm_model::episodes::{Kind, NewEpisode};
use tm_model::subject::SubjectKey;
use tm_store::StoreExt;
use tm_store::prelude::*;
use tm_store::sqlite::SqliteStore;

fn ep(i: usize, words: &[&str]) -> NewEpisode {
    let mut x = i as u64 * 2654435761 + 1;
    let mut text = Vec::new();
    for _ in 0..20 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push(words[(x % words.len() as u64) as usize].to_string());
    }
    text.push(format!("w{}", i % 997));
    NewEpisode::plain(
        Kind::Question,
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + chrono::Duration::minutes(i as i64),
        text.join(" "),
    )
}

fn main() {
    let words = [
        "cell", "membrane", "osmosis", "water", "enzyme", "protein", "energy", "light", "leaf",
        "root", "atp", "sugar", "carbon", "oxygen", "nucleus", "gene",
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut store = SqliteStore::open(dir.path().join("r.db")).unwrap();
    let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let a = store
        .write(|tx| {
            tx.ensure_subject(
                tm_store::Owner::Operator,
                &SubjectKey::parse("l/a").unwrap(),
                "t",
                Some("en"),
                at,
            )
        })
        .unwrap();
    let b = store
        .write(|tx| {
            tx.ensure_subject(
                tm_store::Owner::Operator,
                &SubjectKey::parse("l/b").unwrap(),
                "t",
                Some("en"),
                at,
            )
        })
        .unwrap();
    let batch: Vec<NewEpisode> = (0..10_000).map(|i| ep(i, &words)).collect();
    store
        .write(|tx| {
            for e in &batch {
                tx.append(&a, e)?;
            }
            Ok(())
        })
        .unwrap();
    let terms = vec!["osmosis".to_string(), "w17".to_string(), "gene".to_string()];
    store.term_hits(&a, &terms, 100).unwrap();
    let mut times = Vec::new();
    for i in 0..300 {
        let e = ep(20_000 + i, &words);
        store.write(|tx| tx.append(&b, &e).map(|_| ())).unwrap();
        let t = std::time::Instant::now();
        let h = store.term_hits(&a, &terms, 100).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!h.is_empty());
    }
    times.sort_by(|x, y| x.total_cmp(y));
    println!(
        "read of A after a write into B: p50 {:.3} ms, p90 {:.3} ms",
        times[150], times[270]
    );
    let mut times = Vec::new();
    for i in 0..300 {
        let e = ep(30_000 + i, &words);
        store.write(|tx| tx.append(&a, &e).map(|_| ())).unwrap();
        let t = std::time::Instant::now();
        store.term_hits(&a, &terms, 100).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|x, y| x.total_cmp(y));
    println!("read of A after a write into A: p50 {:.3} ms", times[150]);
    let mut times = Vec::new();
    for _ in 0..300 {
        let t = std::time::Instant::now();
        store.term_hits(&a, &terms, 100).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|x, y| x.total_cmp(y));
    println!("read of A, no write between: p50 {:.3} ms", times[150]);
}
