//! `bench recall`: recall latency per subject size, with and without the
//! question's embedding, and where the time goes (embed, pools, scoring).

use super::synthetic::{QUESTIONS, each_size};
use super::{embedder, machine, percentile};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Instant;
use tm_brain::recall::RecallQuery;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Subject sizes (episodes), comma-separated.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_delimiter = ',', default_value = "1000,10000,100000")
    )]
    pub episodes: Vec<usize>,
    /// Turns measured per size.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 300))]
    pub turns: usize,
    /// The embedder (e5, the default; minilm, openai, hash).
    #[cfg_attr(feature = "cli", arg(long, default_value = "e5"))]
    pub embedder: String,
    #[cfg_attr(feature = "cli", arg(long))]
    pub model_dir: Option<PathBuf>,
    /// A scratch PostgreSQL database to run on instead (`postgres://…/…bench…`,
    /// wiped first); without it, a temporary SQLite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub pg: Option<String>,
}

pub fn run(o: &Options) -> Result<()> {
    let turns = o.turns.max(1);
    let e = embedder(&o.embedder, o.model_dir.as_deref())?;
    println!("machine: {}", machine());
    println!(
        "engine: {}",
        if o.pg.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    println!("embedder: {}", e.name());
    println!(
        "| episodes | turns | recall p50 | p95 | p99 | with embedding p50 | p95 | p99 | candidates (mean) | embed / pools / scoring (mean) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    each_size(&o.episodes, o.pg.as_deref(), &e, |n, brain, subject, at| {
        let recaller = brain.recaller()?;
        let query = |question| RecallQuery {
            question,
            at,
            tz: chrono_tz::UTC,
            limit: 12,
            exclude: None,
        };
        // Warm the vector cache once, as a running service would have it.
        brain.recall(subject, &query(QUESTIONS[0]))?;
        let (mut plain, mut full) = (Vec::with_capacity(turns), Vec::with_capacity(turns));
        let mut cands = 0usize;
        let (mut pools_ms, mut score_ms, mut embed_total) = (0.0, 0.0, 0.0);
        for k in 0..turns {
            let question = QUESTIONS[k % QUESTIONS.len()];
            let t0 = Instant::now();
            let qv = recaller.embed_question(question)?;
            let embed_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = Instant::now();
            let r = brain.with_store(|s| {
                recaller.recall_with_vector(&*s, subject, &query(question), qv.as_deref(), embed_ms)
            })?;
            let recall_ms = t1.elapsed().as_secs_f64() * 1e3;
            cands += r.candidates;
            pools_ms += r.pools_ms;
            score_ms += r.score_ms;
            embed_total += embed_ms;
            plain.push(recall_ms);
            full.push(recall_ms + embed_ms);
        }
        plain.sort_by(f64::total_cmp);
        full.sort_by(f64::total_cmp);
        println!(
            "| {n} | {turns} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {} | {:.1} / {:.1} / {:.1} ms |",
            percentile(&plain, 0.5),
            percentile(&plain, 0.95),
            percentile(&plain, 0.99),
            percentile(&full, 0.5),
            percentile(&full, 0.95),
            percentile(&full, 0.99),
            cands / turns,
            embed_total / turns as f64,
            pools_ms / turns as f64,
            score_ms / turns as f64
        );
        Ok(())
    })
}
