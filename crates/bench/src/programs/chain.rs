//! `bench chain`: append and verify throughput of the episode log (no
//! embedding) on either engine: the store itself, not the brain.

use super::machine;
use anyhow::{Context, Result};
use chrono::{Duration, TimeZone, Utc};
use std::time::Instant;
use tm_model::episodes::{Kind, NewEpisode, salience};
use tm_model::subject::SubjectKey;
use tm_store::StoreExt;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Episodes to append.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 200_000))]
    pub episodes: usize,
    /// Episodes per transaction.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10_000))]
    pub batch: usize,
    /// A scratch PostgreSQL database to run on instead (`postgres://…/…bench…`,
    /// wiped first); without it, a temporary SQLite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub pg: Option<String>,
}

pub fn run(o: &Options) -> Result<()> {
    let (n, batch) = (o.episodes, o.batch.max(1));
    let scratch = super::Scratch::new(o.pg.as_deref(), "bench.db")?;
    let mut store = scratch.store().context("opening the bench store")?;
    let key = SubjectKey::parse("bench/chain")?;
    let start_at = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .context("start time")?;
    let subject = store
        .write(|tx| tx.ensure_subject(tm_store::Owner::Operator, &key, "bench", None, start_at))?;
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
        salt: None,
    };
    println!("machine: {}", machine());
    println!(
        "appending {n} episodes in transactions of {batch} to {} ({})",
        scratch.location,
        scratch.engine()
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
    let report = tm_store::verify(&*store, &subject, None)?;
    let verify = t.elapsed();
    println!(
        "verify: {} episodes in {:.2} s = {:.0} episodes/s ({:?})",
        report.verified,
        verify.as_secs_f64(),
        report.verified as f64 / verify.as_secs_f64(),
        report.state
    );
    Ok(())
}
