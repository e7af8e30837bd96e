//! What this machine's arithmetic allows e5 at the least, beside what it takes.
//!
//! e5's products run on 8-bit inputs times 4-bit weights, 32 multiply-adds to one
//! AVX2 `vpmaddubsw` (`src/q4.rs`). This example measures how many of those the
//! machine's cores do in a second, with nothing else in the loop (the roof), and
//! counts the multiply-adds e5 must do for a question and for the turns of a
//! history (`E5::work`: the model's own shape and tokenizer). Their quotient is a
//! floor no kernel can go below on this machine; beside it, the time the encoder
//! really takes, and so how near the roof it runs.
//!
//! Run: `cargo run --release -p tm-embed --example e5_floor [-- --locomo FILE]
//! [--longmemeval FILE] [--model-dir DIR]` (the files: LoCoMo's `locomo10.json`
//! and LongMemEval's oracle JSON; without them only the question is measured).

use std::path::PathBuf;
use std::time::Instant;

use tm_embed::{E5, Embedder};

const QUERY: &str = "what did we cover about cell membranes last week?";

/// Multiply-adds per `vpmaddubsw` on 256 bits (32 byte products summed in pairs).
const PER_OP: f64 = 32.0;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(PathBuf::from)
    };
    let Some((one, all, threads)) = roof() else {
        println!(
            "this CPU lacks AVX2 or FMA: e5 runs its plain kernel here, and no roof is measured"
        );
        return;
    };
    println!(
        "roof: {:.1} G multiply-adds/s on one core, {:.1} G on {threads} threads together \
         (8-bit × 4-bit, vpmaddubsw alone)",
        one / 1e9,
        all / 1e9
    );
    let e5 = match E5::load_default(arg("--model-dir").as_deref()) {
        Ok(m) => m,
        Err(e) => {
            println!("e5 could not be loaded: {e}");
            std::process::exit(1);
        }
    };

    let (tokens, macs) = e5.work("query: ", QUERY).unwrap_or_else(|e| panic!("{e}"));
    let mut ms: Vec<f64> = (0..220)
        .map(|_| {
            let t = Instant::now();
            e5.embed_query(QUERY).unwrap_or_else(|e| panic!("{e}"));
            t.elapsed().as_secs_f64() * 1e3
        })
        .skip(20)
        .collect();
    ms.sort_by(f64::total_cmp);
    let p50 = ms[ms.len() / 2];
    let floor_ms = macs as f64 / all * 1e3;
    println!(
        "question \"{QUERY}\": {tokens} tokens, {:.0} M multiply-adds: floor {floor_ms:.2} ms, \
         measured p50 {p50:.2} ms ({:.0} % of the roof)",
        macs as f64 / 1e6,
        100.0 * floor_ms / p50
    );

    if let Some(path) = arg("--locomo") {
        // Every turn, as the benchmark's import writes it: `speaker: text`.
        let turns = texts(&path, "conversation", ("speaker", "text"), false, |v| {
            v.as_object()
                .into_iter()
                .flat_map(|o| o.iter())
                .filter(|(k, _)| k.starts_with("session_") && !k.ends_with("date_time"))
                .map(|(_, s)| s)
                .collect()
        });
        history(&e5, "LoCoMo turns", &turns, all, 150.0, 512);
    }
    if let Some(path) = arg("--longmemeval") {
        // Each distinct turn once (the questions share sessions), as the
        // benchmark's import writes it: `role: content`.
        let turns = texts(&path, "haystack_sessions", ("role", "content"), true, |v| {
            v.as_array().into_iter().flatten().collect()
        });
        history(&e5, "LongMemEval turns", &turns, all, 40.0, 64);
    }
}

/// The turns of each record of the JSON array at `path`: `sessions` picks the
/// sessions (arrays of turns) under the record's `key`, and each turn reads
/// `who: what` from its two fields; each distinct text once when `distinct`.
fn texts(
    path: &std::path::Path,
    key: &str,
    (who, what): (&str, &str),
    distinct: bool,
    sessions: impl Fn(&serde_json::Value) -> Vec<&serde_json::Value>,
) -> Vec<String> {
    let raw = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut seen = std::collections::HashSet::new();
    records
        .iter()
        .filter_map(|r| r.get(key))
        .flat_map(&sessions)
        .filter_map(|s| s.as_array())
        .flatten()
        .filter_map(|t| {
            Some(format!(
                "{}: {}",
                t.get(who)?.as_str()?,
                t.get(what)?.as_str()?
            ))
        })
        .filter(|t| !distinct || seen.insert(t.clone()))
        .collect()
}

/// The floor of embedding all of `turns` on this machine, and the time a sample
/// of about `size` of them really takes in the batches an import uses; against
/// `target` a second.
fn history(e5: &E5, label: &str, turns: &[String], roof: f64, target: f64, size: usize) {
    let work: Vec<(usize, u64)> = turns
        .iter()
        .map(|t| e5.work("passage: ", t).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let n = turns.len().max(1) as f64;
    let tokens: usize = work.iter().map(|w| w.0).sum();
    let macs: u64 = work.iter().map(|w| w.1).sum();
    let floor_s = macs as f64 / roof;
    println!(
        "{label}: {} texts, {:.1} tokens and {:.0} M multiply-adds each on average; \
         all of them need at least {floor_s:.1} s here, at most {:.0} a second \
         ({target:.0} a second would need {:.1} G multiply-adds/s)",
        turns.len(),
        tokens as f64 / n,
        macs as f64 / n / 1e6,
        n / floor_s,
        target * macs as f64 / n / 1e9
    );
    // Every k-th turn, so the sample has the history's lengths; its work is
    // what was counted above.
    let step = (turns.len() / size).max(1);
    let sample: Vec<&str> = turns.iter().step_by(step).map(String::as_str).collect();
    let sample_macs: u64 = work.iter().step_by(step).map(|w| w.1).sum();
    let t = Instant::now();
    for batch in sample.chunks(32) {
        e5.embed(batch).unwrap_or_else(|e| panic!("{e}"));
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "  embedded {} of them in {secs:.1} s: {:.0} a second, {:.0} % of the roof",
        sample.len(),
        sample.len() as f64 / secs,
        100.0 * sample_macs as f64 / roof / secs
    );
}

/// Multiply-adds a second of `vpmaddubsw` with its sums, on one thread and on every
/// thread together, and the number of threads; `None` without AVX2 and FMA (what
/// e5's kernel needs).
fn roof() -> Option<(f64, f64, usize)> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        const ITERS: u64 = 50_000_000;
        let run = || {
            // SAFETY: the CPU has AVX2.
            std::hint::black_box(unsafe { maddubs(std::hint::black_box(ITERS)) });
        };
        run();
        let t = Instant::now();
        run();
        let one = ITERS as f64 * 8.0 * PER_OP / t.elapsed().as_secs_f64();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(run);
            }
        });
        let all = (threads as u64 * ITERS) as f64 * 8.0 * PER_OP / t.elapsed().as_secs_f64();
        return Some((one, all, threads));
    }
    None
}

/// `iters` rounds of eight independent `vpmaddubsw`, each summed into its own
/// 16-bit register as the kernel does; the weights change every round, so nothing
/// can be lifted out of the loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn maddubs(iters: u64) -> i32 {
    use std::arch::x86_64::*;
    let mut w = _mm256_set1_epi8(3);
    let step = _mm256_set1_epi8(1);
    let x: [__m256i; 8] = std::array::from_fn(|k| _mm256_set1_epi8(k as i8 + 1));
    let mut acc = [_mm256_setzero_si256(); 8];
    for _ in 0..iters {
        for (a, x) in acc.iter_mut().zip(&x) {
            *a = _mm256_add_epi16(*a, _mm256_maddubs_epi16(w, *x));
        }
        w = _mm256_add_epi8(w, step);
    }
    let sum = acc
        .iter()
        .fold(_mm256_setzero_si256(), |s, a| _mm256_add_epi16(s, *a));
    _mm256_extract_epi16::<0>(sum)
}
