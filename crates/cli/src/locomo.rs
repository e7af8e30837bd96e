//! `bench locomo`: evidence recall of the block on LoCoMo at a budget, per
//! category, for the window, episodes and full designs and the BM25-only,
//! vector-only, fused and most-recent baselines.

use anyhow::{Context, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tm_store::Store;

pub fn run(
    data: PathBuf,
    budget: usize,
    out: Option<PathBuf>,
    store_path: Option<PathBuf>,
    embedder: &str,
    model_dir: Option<&std::path::Path>,
) -> Result<ExitCode> {
    println!("machine: {}", crate::bench::machine());
    let convs = tm_bench::locomo::load(&data)?;
    let qa: usize = convs.iter().map(|c| c.qa.len()).sum();
    let turns: usize = convs.iter().map(|c| c.turns.len()).sum();
    println!(
        "{}: {} conversations, {turns} turns, {qa} QA items",
        data.display(),
        convs.len()
    );
    let recaller = crate::recaller(embedder, model_dir)?;
    // A kept store is imported and embedded once; a rerun finds it done.
    let dir = tempfile::tempdir().context("a folder for the LoCoMo store")?;
    let db = store_path.unwrap_or_else(|| dir.path().join("locomo.db"));
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    let t = Instant::now();
    let bar = crate::progress_bar("importing [{bar:40}] {pos}/{len} conversations");
    let subjects = tm_bench::locomo::import(&mut store, &recaller, &convs, &mut |d, n| {
        crate::advance(&bar, d, n)
    })?;
    bar.finish_and_clear();
    println!(
        "imported and embedded with {} in {:.1} s",
        recaller.embedder().name(),
        t.elapsed().as_secs_f64()
    );
    let bar = crate::progress_bar("questions [{bar:40}] {pos}/{len}");
    let report =
        tm_bench::locomo::run(&store, &recaller, &convs, &subjects, budget, &mut |d, n| {
            crate::advance(&bar, d, n)
        })?;
    bar.finish_and_clear();
    println!(
        "evidence recall at {budget} o200k tokens ({} QA items skipped: no evidence id names a turn), {:.1} s:\n",
        report.skipped, report.seconds
    );
    println!("{}", tm_bench::locomo::markdown(&report));
    if let Some(out) = out {
        std::fs::write(&out, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", out.display()))?;
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
