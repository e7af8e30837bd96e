//! `bench block`: block build latency per subject size, the question's
//! embedding included (built on the calling thread: the build, not the cap).

use super::synthetic::{QUESTIONS, each_size};
use super::{embedder, machine, percentile};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    #[cfg_attr(
        feature = "cli",
        arg(long, value_delimiter = ',', default_value = "1000,10000,100000")
    )]
    pub episodes: Vec<usize>,
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1000))]
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
    println!("| episodes | turns | p50 | p90 | p95 | p99 | max | tokens (mean) |");
    println!("|---|---|---|---|---|---|---|---|");
    each_size(&o.episodes, o.pg.as_deref(), &e, |n, brain, subject, at| {
        let req = |q: &str| brain.block_request(subject, q, at, None);
        brain.build_block(subject, &req(QUESTIONS[0]))?;
        let mut times = Vec::with_capacity(turns);
        let mut tokens = 0;
        for k in 0..turns {
            let t = Instant::now();
            let b = brain.build_block(subject, &req(QUESTIONS[k % QUESTIONS.len()]))?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            tokens += b.tokens;
        }
        times.sort_by(f64::total_cmp);
        println!(
            "| {n} | {turns} | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {} |",
            percentile(&times, 0.5),
            percentile(&times, 0.9),
            percentile(&times, 0.95),
            percentile(&times, 0.99),
            times.last().copied().unwrap_or(0.0),
            tokens / turns
        );
        Ok(())
    })
}
