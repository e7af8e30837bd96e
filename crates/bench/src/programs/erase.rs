//! `bench erase`: erasing one check of a subject of many episodes (its
//! beliefs and map re-derived from the rest), then one learner's subject
//! (with its vectors and full-text terms) while another subject stays: wall
//! time of each erasure's transaction and of the compaction after it, peak
//! memory (VmHWM), and the database size before and after.

use super::{machine, peak_mib, reset_peak};
use anyhow::{Context, Result};
use std::time::Instant;
use tm_brain::Scope;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Episodes of the subject erased (another subject of the same size stays).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10_000))]
    pub episodes: usize,
    /// A scratch PostgreSQL database to run on instead (`postgres://…/…bench…`,
    /// wiped first); without it, a temporary SQLite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub pg: Option<String>,
}

pub fn run(o: &Options) -> Result<()> {
    let n = o.episodes.max(1);
    let scratch = super::Scratch::new(o.pg.as_deref(), "erase.db")?;
    println!("machine: {}", machine());
    println!("engine: {} ({})", scratch.engine(), scratch.location);
    let embedder: std::sync::Arc<dyn tm_embed::Embedder> =
        std::sync::Arc::new(tm_embed::HashEmbedder::new());
    let t = Instant::now();
    let mut cache = super::synthetic::VectorCache::new();
    let (subject, at) = {
        let mut store = scratch.store()?;
        let made = super::synthetic::subject(&mut *store, n, &*embedder, &mut cache)?;
        // A second learner whose memory must stay.
        super::synthetic::subject_as(&mut *store, "other/recall", n, &*embedder, &mut cache)?;
        made
    };
    scratch.settle()?;
    println!(
        "generated 2 subjects of {n} episodes with vectors (hash embedder) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let size = |label: &str| {
        if let Ok(m) = std::fs::metadata(&scratch.location) {
            println!(
                "{label}: database file {:.1} MiB",
                m.len() as f64 / 1048576.0
            );
        }
    };
    size("before");
    let brain = super::brain(&scratch.location, embedder.clone())?;
    // One check recorded on the other learner, then erased: the rest of its
    // chain is replayed into a scratch store to re-derive beliefs and map.
    let other = brain.subject("other/recall")?;
    let check = tm_model::events::Event::new(
        at,
        tm_model::events::EventBody::Check {
            topic: "osmosis".into(),
            verdict: tm_model::episodes::Verdict::Wrong,
            evaluation: None,
            predicted: None,
        },
    );
    let recorded = brain.record(&other, &[check])?;
    reset_peak();
    let t = Instant::now();
    brain
        .erase_episode(&other, recorded.head_seq, "bench", "", at)
        .context("erasing one check")?;
    println!(
        "erased one check of a subject of {} episodes, its beliefs and map re-derived from the other {n}, in {:.2} s (transaction and compaction); peak RSS {}",
        recorded.head_seq,
        t.elapsed().as_secs_f64(),
        peak_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB"))
    );
    reset_peak();
    let t = Instant::now();
    let erased = brain
        .erase(&Scope::Subject(subject.clone()), "bench", at)
        .context("erasing")?;
    let total = t.elapsed().as_secs_f64();
    println!(
        "erased {} episodes of {} in {total:.2} s (transaction and compaction); peak RSS {}",
        erased.erasure.episodes,
        erased.subjects.join(", "),
        peak_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB"))
    );
    println!("compacted: {}", erased.compaction);
    size("after");
    let t = Instant::now();
    let report = brain.verify(&subject, None)?;
    println!(
        "verify after: {:?}, {} verified, {} erased, in {:.2} s",
        report.state,
        report.verified,
        report.erased,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
