//! `bench`: programs that print figures for BENCHMARKS.md. Timings live here,
//! never in tests.

use anyhow::{Context, Result};
use chrono::{Duration, TimeZone, Utc};
use clap::Subcommand;
use std::process::ExitCode;
use std::time::Instant;
use tm_model::episodes::{Kind, salience};
use tm_model::subject::SubjectKey;
use tm_store::{NewEpisode, Store};

#[derive(Subcommand)]
pub enum What {
    /// Append and verify throughput of the episode log (no embedding).
    Chain {
        /// Episodes to append.
        #[arg(long, default_value_t = 200_000)]
        episodes: usize,
        /// Episodes per transaction.
        #[arg(long, default_value_t = 10_000)]
        batch: usize,
    },
}

pub fn run(what: What) -> Result<ExitCode> {
    match what {
        What::Chain { episodes, batch } => chain(episodes, batch.max(1)),
    }
}

/// A line naming the machine, for the figures' context.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores")
}

fn chain(n: usize, batch: usize) -> Result<ExitCode> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.db");
    let mut store = Store::open(&path).context("opening the bench store")?;
    let key = SubjectKey::parse("bench/chain")?;
    let start_at = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .context("start time")?;
    let subject = store.write(|tx| tx.ensure_subject(&key, "bench", None, start_at))?;
    let episode = |i: usize| NewEpisode {
        kind: Kind::Question,
        at: start_at + Duration::seconds(i as i64),
        salience: salience(Kind::Question, None),
        summary: format!("What does organelle {i} do in the cell?"),
        text: format!(
            "What does organelle {i} do in the cell? I read the chapter twice and I still mix it up with the nucleus."
        ),
        concepts: vec!["Nucleus".into()],
        evidence: vec![],
        data: serde_json::Map::new(),
        external_id: Some(format!("q{i}")),
        import_key: None,
    };
    println!("machine: {}", machine());
    println!(
        "appending {n} episodes in transactions of {batch} to {}",
        path.display()
    );
    let t = Instant::now();
    let mut done = 0;
    while done < n {
        let end = (done + batch).min(n);
        store.write(|tx| {
            for i in done..end {
                tx.append(&subject, &episode(i))?;
            }
            Ok(())
        })?;
        done = end;
    }
    let append = t.elapsed();
    println!(
        "append: {n} episodes in {:.2} s = {:.0} episodes/s",
        append.as_secs_f64(),
        n as f64 / append.as_secs_f64()
    );
    let t = Instant::now();
    let report = store.verify_subject(&subject, None)?;
    let verify = t.elapsed();
    println!(
        "verify: {} episodes in {:.2} s = {:.0} episodes/s ({:?})",
        report.verified,
        verify.as_secs_f64(),
        report.verified as f64 / verify.as_secs_f64(),
        report.state
    );
    Ok(ExitCode::SUCCESS)
}
