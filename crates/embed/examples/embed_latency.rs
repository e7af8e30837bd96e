//! How long does embedding take? Prints p50/p95/p99 for one short query and for a batch of
//! 32 episode-length texts, and the throughput of each, with MiniLM and multilingual-e5-small
//! (each when it can be loaded) and the hashing embedder, in one run.
//!
//! Run: `cargo run --release -p tm-embed --example embed_latency [-- --model-dir DIR]
//! [--only minilm|e5|hash] [--batches N]`. `--only` measures one embedder (a short
//! process, to alternate with another build's; `--model-dir` is MiniLM's folder, or
//! e5's with `--only e5`); `--batches 0` skips the batches.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tm_embed::{E5, Embedder, HashEmbedder, MiniLm};

const QUERY: &str = "what did we cover about cell membranes last week?";

fn episode(i: usize) -> String {
    // About 60–80 words, the length of a tutor turn worth remembering.
    format!(
        "Episode {i}: the learner asked why the cell membrane lets water through but keeps \
         most ions out. We compared the phospholipid bilayer to a crowded doorway, talked \
         about channel proteins and pumps, and worked through an example with a red blood \
         cell placed in salt water number {i}. The learner predicted shrinking correctly \
         but confused osmosis with diffusion of the salt itself, so we revisited the \
         difference and agreed to check it again next session."
    )
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    (at(0.50), at(0.95), at(0.99))
}

fn measure(label: &str, runs: usize, texts: usize, mut f: impl FnMut()) {
    for _ in 0..runs.div_ceil(10) {
        f(); // warm-up
    }
    let started = Instant::now();
    let samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let per_s = (runs * texts) as f64 / started.elapsed().as_secs_f64();
    let (p50, p95, p99) = percentiles(samples);
    println!(
        "{label:<48} n={runs:<4} p50 {p50:8.3} ms  p95 {p95:8.3} ms  p99 {p99:8.3} ms  {per_s:8.1} texts/s"
    );
}

fn bench(e: &dyn Embedder, query_runs: usize, batch_runs: usize) {
    let episodes: Vec<String> = (0..32).map(episode).collect();
    let batch: Vec<&str> = episodes.iter().map(String::as_str).collect();
    measure(
        &format!("{}: one short query", e.name()),
        query_runs,
        1,
        || {
            e.embed_query(QUERY)
                .map(drop)
                .unwrap_or_else(|err| panic!("{err}"));
        },
    );
    if batch_runs == 0 {
        return;
    }
    measure(
        &format!("{}: batch of 32 episodes", e.name()),
        batch_runs,
        32,
        || {
            e.embed(&batch)
                .map(drop)
                .unwrap_or_else(|err| panic!("{err}"));
        },
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let model_dir = value("--model-dir").map(PathBuf::from);
    let only = value("--only").map(String::as_str);
    if let Some(o) = only.filter(|o| !["minilm", "e5", "hash"].contains(o)) {
        eprintln!("--only takes minilm, e5 or hash, not {o:?}");
        std::process::exit(2);
    }
    let wanted = |name: &str| only.is_none_or(|o| o == name);
    let batches = match value("--batches").map(|v| v.parse::<usize>()) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(e)) => {
            eprintln!("--batches takes a number: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "threads available: {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    if wanted("minilm") {
        let t = Instant::now();
        match MiniLm::load_default(model_dir.as_deref()) {
            Ok(m) => {
                println!("MiniLM loaded in {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
                bench(&m, 300, batches.unwrap_or(20));
            }
            Err(e) => println!("MiniLM skipped: {e}"),
        }
    }
    if wanted("e5") {
        let t = Instant::now();
        // The folder named is MiniLM's, unless e5 is measured alone.
        match E5::load_default(model_dir.as_deref().filter(|_| only == Some("e5"))) {
            Ok(m) => {
                println!("e5 loaded in {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
                bench(&m, 300, batches.unwrap_or(20));
            }
            Err(e) => println!("e5 skipped: {e}"),
        }
    }
    if wanted("hash") {
        bench(&HashEmbedder::new(), 2000, batches.unwrap_or(200));
    }
}
