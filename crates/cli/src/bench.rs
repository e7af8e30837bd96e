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
    /// Sustained block requests against one server on loopback (crates/cli/src/load.rs).
    Load(crate::load::LoadArgs),
    /// Append and verify throughput of the episode log (no embedding).
    Chain {
        /// Episodes to append.
        #[arg(long, default_value_t = 200_000)]
        episodes: usize,
        /// Episodes per transaction.
        #[arg(long, default_value_t = 10_000)]
        batch: usize,
    },
    /// Concept map: offline extraction time per file, and merging 1,000 concepts.
    Map {
        /// Markdown or text files to read (default: the sample subject's files).
        files: Vec<std::path::PathBuf>,
    },
    /// Block build latency per subject size (query embedding included).
    Block {
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
        episodes: Vec<usize>,
        #[arg(long, default_value_t = 1000)]
        turns: usize,
        #[arg(long, default_value = "minilm")]
        embedder: String,
        #[arg(long)]
        model_dir: Option<std::path::PathBuf>,
    },
    /// One nightly run over many active subjects, generated into a temporary
    /// database file: wall time and peak memory (VmHWM) of the run.
    Nightly {
        /// Active subjects.
        #[arg(long, default_value_t = 10_000)]
        subjects: usize,
        /// Episodes per subject on the day consolidated.
        #[arg(long, default_value_t = 12)]
        episodes: usize,
    },
    /// Quality: the four designs on pre-registered questions over generated
    /// (or given) histories, graded at prompt level (and answer level when a
    /// chat endpoint is configured).
    Quality {
        /// A folder of history files (*.jsonl) to run instead of the generated ones.
        #[arg(long)]
        histories: Option<std::path::PathBuf>,
        /// A question file to run instead of generating one.
        #[arg(long)]
        questions: Option<std::path::PathBuf>,
        /// `all`, or designs separated by commas (plain,window,episodes,full).
        #[arg(long, default_value = "all")]
        design: String,
        /// Where histories, questions, results.json, chart.svg and failures.md go.
        #[arg(long, default_value = "bench-quality")]
        out: std::path::PathBuf,
        /// Token budget of the memory block.
        #[arg(long, default_value_t = tm_brain::block::DEFAULT_BUDGET)]
        budget: usize,
        /// Histories to generate.
        #[arg(long, default_value_t = tm_bench::generate::DEFAULT_COUNT)]
        count: usize,
        /// The generator's (and the question picker's) seed.
        #[arg(long, default_value_t = tm_bench::generate::DEFAULT_SEED)]
        seed: u64,
        #[arg(long, default_value = "minilm")]
        embedder: String,
        #[arg(long)]
        model_dir: Option<std::path::PathBuf>,
    },
    /// LoCoMo: evidence recall of the block at a budget, per category, with baselines.
    Locomo {
        /// Path to locomo10.json.
        #[arg(long)]
        data: std::path::PathBuf,
        #[arg(long, default_value_t = 1500)]
        budget: usize,
        /// Also write the figures as JSON here.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Keep the imported conversations in this database (a rerun skips
        /// the import and the embedding); default: a temporary one.
        #[arg(long)]
        store: Option<std::path::PathBuf>,
        #[arg(long, default_value = "minilm")]
        embedder: String,
        #[arg(long)]
        model_dir: Option<std::path::PathBuf>,
    },
    /// Recall latency per subject size, with and without the question's embedding.
    Recall {
        /// Subject sizes (episodes), comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
        episodes: Vec<usize>,
        /// Turns measured per size.
        #[arg(long, default_value_t = 300)]
        turns: usize,
        /// The embedder (minilm, hash).
        #[arg(long, default_value = "minilm")]
        embedder: String,
        #[arg(long)]
        model_dir: Option<std::path::PathBuf>,
    },
}

pub fn run(what: What) -> Result<ExitCode> {
    match what {
        What::Nightly { subjects, episodes } => nightly(subjects.max(1), episodes.max(1)),
        What::Load(args) => crate::load::run(args),
        What::Chain { episodes, batch } => chain(episodes, batch.max(1)),
        What::Map { files } => map(&files),
        What::Block {
            episodes,
            turns,
            embedder,
            model_dir,
        } => block(&episodes, turns.max(1), &embedder, model_dir.as_deref()),
        What::Quality {
            histories,
            questions,
            design,
            out,
            budget,
            count,
            seed,
            embedder,
            model_dir,
        } => crate::quality::run(crate::quality::Args {
            histories,
            questions,
            design,
            out,
            budget,
            count,
            seed,
            embedder,
            model_dir,
        }),
        What::Locomo {
            data,
            budget,
            out,
            store,
            embedder,
            model_dir,
        } => crate::locomo::run(data, budget, out, store, &embedder, model_dir.as_deref()),
        What::Recall {
            episodes,
            turns,
            embedder,
            model_dir,
        } => recall(&episodes, turns.max(1), &embedder, model_dir.as_deref()),
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

const TOPICS: &[&str] = &[
    "osmosis",
    "diffusion",
    "the cell membrane",
    "mitochondria",
    "the nucleus",
    "ribosomes",
    "cytoplasm",
    "active transport",
    "ATP",
    "photosynthesis",
    "chloroplasts",
    "the Golgi apparatus",
    "lysosomes",
    "the endoplasmic reticulum",
    "eukaryotic cells",
    "prokaryotic cells",
    "DNA replication",
    "mitosis",
    "meiosis",
    "enzymes",
    "proteins",
    "amino acids",
    "glucose",
    "cellular respiration",
    "the cell wall",
    "vacuoles",
    "the cytoskeleton",
    "vesicles",
    "endocytosis",
    "exocytosis",
    "concentration gradients",
    "tonicity",
    "hypertonic solutions",
    "hypotonic solutions",
    "linear equations",
    "slope",
    "the y-intercept",
    "inequalities",
    "fractions",
    "percentages",
    "ratios",
    "functions",
    "the distributive property",
    "like terms",
    "absolute value",
    "graphing lines",
    "parallel lines",
    "perpendicular lines",
    "systems of equations",
    "exponents",
];
const PHRASINGS: &[&str] = &[
    "Can we go over {t} today?",
    "I still don't understand {t}.",
    "What is the difference between {t} and {u}?",
    "Why does {t} matter for {u}?",
    "Could you give me an example of {t}?",
    "I keep mixing up {t} with {u}.",
    "Explain {t} again please, slowly.",
    "Is {t} on the exam?",
    "How does {t} work step by step?",
    "What should I review before {t}?",
];
const ANSWERS: &[&str] = &[
    "Of course. {T} is easiest to see next to {u}: start with what each one does.",
    "Think of {t} as a process; {u} is what it acts on.",
    "Here is an example of {t}, and how it differs from {u}.",
];
const QUESTIONS: &[&str] = &[
    "How does osmosis work again?",
    "What is the difference between mitochondria and ribosomes?",
    "What did we cover in July?",
    "What have I got wrong so far?",
    "Can you remind me what we said about slope?",
    "¿Qué vimos sobre la ósmosis?",
    "Was haben wir im März gemacht?",
    "Explain active transport and ATP",
    "ماذا درسنا في يوليو؟",
    "What is a cell?",
];

/// A deterministic stream of numbers (a 64-bit LCG): same seed, same subject.
pub(crate) struct Lcg(pub(crate) u64);
impl Lcg {
    pub(crate) fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn fill(template: &str, t: &str, u: &str) -> String {
    let cap: String = t
        .chars()
        .take(1)
        .flat_map(char::to_uppercase)
        .chain(t.chars().skip(1))
        .collect();
    template
        .replace("{T}", &cap)
        .replace("{t}", t)
        .replace("{u}", u)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn recall(
    sizes: &[usize],
    turns: usize,
    embedder: &str,
    model_dir: Option<&std::path::Path>,
) -> Result<ExitCode> {
    use std::collections::HashMap;
    let recaller = crate::recaller(embedder, model_dir)?;
    println!("machine: {}", machine());
    println!("embedder: {}", recaller.embedder().name());
    println!(
        "| episodes | turns | recall p50 | p95 | p99 | with embedding p50 | p95 | p99 | candidates (mean) | embed / pools / scoring (mean) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut vector_cache: HashMap<String, Vec<f32>> = HashMap::new();
    for &n in sizes {
        let (_dir, store, subject, at) = generated_subject(n, &recaller, &mut vector_cache)?;
        let mut plain = Vec::with_capacity(turns);
        let mut full = Vec::with_capacity(turns);
        let mut cands = 0usize;
        let (mut pools_ms, mut score_ms, mut embed_total) = (0.0, 0.0, 0.0);
        // Warm the vector cache once, as a running service would have it.
        let q0 = tm_brain::recall::RecallQuery {
            question: QUESTIONS[0],
            at,
            tz: chrono_tz::UTC,
            limit: 12,
            exclude: None,
        };
        recaller.recall(&store, &subject, &q0)?;
        for k in 0..turns {
            let question = QUESTIONS[k % QUESTIONS.len()];
            let q = tm_brain::recall::RecallQuery {
                question,
                at,
                tz: chrono_tz::UTC,
                limit: 12,
                exclude: None,
            };
            let t0 = Instant::now();
            let qv = recaller.embed_question(question)?;
            let embed_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = Instant::now();
            let r = recaller.recall_with_vector(&store, &subject, &q, qv.as_deref(), embed_ms)?;
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
    }
    Ok(ExitCode::SUCCESS)
}

fn map(files: &[std::path::PathBuf]) -> Result<ExitCode> {
    use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
    use tm_model::map::{ConceptMap, ExtractedConcept, teaching_order};
    println!("machine: {}", machine());
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    if files.is_empty() {
        for (name, text) in crate::demo::SAMPLE
            .iter()
            .filter(|(n, _)| n.starts_with("files/"))
        {
            inputs.push((name.to_string(), text.as_bytes().to_vec()));
        }
    }
    for f in files {
        inputs.push((
            f.display().to_string(),
            std::fs::read(f).with_context(|| format!("reading {}", f.display()))?,
        ));
    }
    println!("| file | bytes | pages | concepts | read pages | extract (median of 5) |");
    println!("|---|---|---|---|---|---|");
    let x = OfflineExtractor::default();
    for (name, bytes) in &inputs {
        let t = Instant::now();
        let pages = tm_ingest::read_pages(name, bytes)?;
        let read_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::new();
        let mut n = 0;
        for _ in 0..5 {
            let t = Instant::now();
            n = x.extract(name, &pages.pages)?.len();
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let short = std::path::Path::new(name)
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        println!(
            "| {short} | {} | {} | {n} | {read_ms:.1} ms | {:.1} ms |",
            bytes.len(),
            pages.pages.len(),
            times[2]
        );
    }
    // 1,000 concepts in 25 files of 40, each building on up to two earlier ones.
    let mut rng = Lcg(7);
    let files: Vec<Vec<ExtractedConcept>> = (0..25)
        .map(|f| {
            (0..40)
                .map(|i| {
                    let id = f * 40 + i;
                    let builds_on = (0..rng.next(3))
                        .filter(|_| id > 0)
                        .map(|_| format!("Concept {}", rng.next(id.max(1))))
                        .collect();
                    ExtractedConcept {
                        name: format!("Concept {id}"),
                        gist: format!("Concept {id} is the {id}th idea of the course."),
                        definition: format!("the {id}th idea"),
                        builds_on,
                        assumed: vec![],
                        pages: vec![1 + (i as u32 % 9)],
                        aliases: vec![],
                    }
                })
                .collect()
        })
        .collect();
    let t = Instant::now();
    let mut map = ConceptMap::new();
    for (f, concepts) in files.iter().enumerate() {
        map.merge_file(
            &format!("file{f}.md"),
            Some(f as i64),
            concepts,
            &|_, _| 0.0,
            f32::INFINITY,
        );
    }
    let merge_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let order = teaching_order(&map);
    let order_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "\nmerge: {} concepts from 25 files in {merge_ms:.0} ms (keys only, PageRank and layers settled after each file); teaching order {order_ms:.1} ms, {} layers",
        map.len(),
        order.layers.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// A generated subject of `n` episodes over two years, embedded (each distinct
/// text once), in a temporary database; and the instant a day after its end.
fn generated_subject(
    n: usize,
    recaller: &tm_brain::recall::Recaller,
    vector_cache: &mut std::collections::HashMap<String, Vec<f32>>,
) -> Result<(
    tempfile::TempDir,
    Store,
    tm_store::Subject,
    chrono::DateTime<Utc>,
)> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(dir.path().join("recall.db"))?;
    let key = SubjectKey::parse("bench/recall")?;
    let start = Utc
        .with_ymd_and_hms(2025, 1, 1, 8, 0, 0)
        .single()
        .context("start")?;
    let span_secs = 700 * 86_400i64;
    let subject = store.write(|tx| tx.ensure_subject(&key, "bench", Some("en"), start))?;
    let mut rng = Lcg(42);
    let mut texts: Vec<(i64, String)> = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let end = (i + 10_000).min(n);
        let batch: Vec<NewEpisode> = (i..end)
            .map(|j| {
                let t = TOPICS[rng.next(TOPICS.len())];
                let u = TOPICS[rng.next(TOPICS.len())];
                let (kind, text) = match j % 3 {
                    0 | 1 => (
                        Kind::Question,
                        fill(PHRASINGS[rng.next(PHRASINGS.len())], t, u),
                    ),
                    _ => (Kind::Answer, fill(ANSWERS[rng.next(ANSWERS.len())], t, u)),
                };
                NewEpisode {
                    kind,
                    at: start + Duration::seconds(span_secs * j as i64 / n as i64),
                    salience: salience(kind, None),
                    summary: text.clone(),
                    text,
                    concepts: vec![t.to_string()],
                    evidence: vec![],
                    data: serde_json::Map::new(),
                    external_id: None,
                    import_key: None,
                }
            })
            .collect();
        let ids = store.write(|tx| {
            batch
                .iter()
                .map(|e| tx.append(&subject, e).map(|a| a.id))
                .collect::<tm_store::Result<Vec<_>>>()
        })?;
        texts.extend(ids.into_iter().zip(batch.into_iter().map(|e| e.text)));
        i = end;
    }
    // Vectors: each distinct text is embedded once (a repeated text has the same vector).
    let distinct: Vec<String> = {
        let mut d: Vec<String> = texts
            .iter()
            .map(|(_, t)| t.clone())
            .filter(|t| !vector_cache.contains_key(t))
            .collect();
        d.sort();
        d.dedup();
        d
    };
    for chunk in distinct.chunks(32) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        let vs = recaller.embedder().embed(&refs)?;
        for (t, v) in chunk.iter().zip(vs) {
            vector_cache.insert(t.clone(), v);
        }
    }
    let vectors: Vec<(i64, Vec<f32>)> = texts
        .iter()
        .filter_map(|(id, t)| vector_cache.get(t).map(|v| (*id, v.clone())))
        .collect();
    let name = recaller.embedder().name().to_string();
    store.write(|tx| tx.put_vectors(&subject, &name, &vectors))?;

    Ok((
        dir,
        store,
        subject,
        start + Duration::seconds(span_secs + 86_400),
    ))
}

fn block(
    sizes: &[usize],
    turns: usize,
    embedder: &str,
    model_dir: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let recaller = crate::recaller(embedder, model_dir)?;
    println!("machine: {}", machine());
    println!("embedder: {}", recaller.embedder().name());
    println!("| episodes | turns | p50 | p90 | p95 | p99 | max | tokens (mean) |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut vector_cache = std::collections::HashMap::new();
    for &n in sizes {
        let (_dir, store, subject, at) = generated_subject(n, &recaller, &mut vector_cache)?;
        let req = |q: &str| tm_brain::block::BlockRequest {
            question: q.to_string(),
            at,
            tz: chrono_tz::UTC,
            budget: tm_brain::block::DEFAULT_BUDGET,
            design: tm_model::block::Design::Full,
        };
        tm_brain::block::build(&store, &recaller, &subject, &req(QUESTIONS[0]))?;
        let mut times = Vec::with_capacity(turns);
        let mut tokens = 0;
        for k in 0..turns {
            let t = Instant::now();
            let b = tm_brain::block::build(
                &store,
                &recaller,
                &subject,
                &req(QUESTIONS[k % QUESTIONS.len()]),
            )?;
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
    }
    Ok(ExitCode::SUCCESS)
}

/// Peak resident memory of this process so far (VmHWM), in MiB.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resets VmHWM to the current resident size (Linux ≥ 4.0), so the next
/// reading is the peak of what follows, not of the data generation.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn nightly(subjects: usize, per_subject: usize) -> Result<ExitCode> {
    use tm_model::beliefs::{BeliefRow, Claim};
    use tm_model::episodes::{Evidence, Verdict};
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("nightly.db");
    let mut store = Store::open(&path).context("opening the bench store")?;
    let day = Utc
        .with_ymd_and_hms(2026, 11, 28, 8, 0, 0)
        .single()
        .context("start time")?;
    let at = day + Duration::hours(16);
    println!("machine: {}", machine());
    println!(
        "generating {subjects} subjects, each with a file, a belief untouched for 60 days and {per_subject} episodes on {}; every tenth subject's file replaced that day",
        day.date_naive()
    );
    let t = Instant::now();
    let notes = "# Osmosis\n**Osmosis** is the diffusion of water across a membrane.\n";
    for chunk in (0..subjects).collect::<Vec<_>>().chunks(250) {
        store.write(|tx| {
            for &i in chunk {
                let key = SubjectKey::parse(&format!("l{i}/cells"))?;
                let s = tx.ensure_subject(&key, "Cells", Some("en"), day - Duration::days(90))?;
                let v = tx
                    .add_file(
                        &s,
                        "notes.md",
                        notes.as_bytes(),
                        "markdown",
                        &[notes.to_string()],
                        day - Duration::days(90),
                    )?
                    .version()
                    .clone();
                tx.insert_belief(
                    &s,
                    &BeliefRow {
                        id: None,
                        subject_key: "osmosis".into(),
                        concept: Some("Osmosis".into()),
                        unmapped: false,
                        claim: Claim::Understands,
                        confidence: 2.0 / 3.0,
                        alpha: 2.0,
                        beta: 1.0,
                        support: vec![],
                        created_at: day - Duration::days(60),
                        reason: "bench".into(),
                        flagged: false,
                        superseded_by: None,
                    },
                    None,
                )?;
                for j in 0..per_subject {
                    let when = day + Duration::minutes(j as i64 * 5);
                    let (kind, verdict, evidence, mut data) = match j % 3 {
                        0 => (Kind::Question, None, vec![], serde_json::Map::new()),
                        1 => (
                            Kind::Answer,
                            None,
                            vec![Evidence {
                                file: "notes.md".into(),
                                version: v.id,
                                page: Some(1),
                                sha256: v.sha256.clone(),
                            }],
                            serde_json::Map::new(),
                        ),
                        _ => {
                            let verdict = if (i + j) % 2 == 0 {
                                Verdict::Right
                            } else {
                                Verdict::Wrong
                            };
                            let mut d = serde_json::Map::new();
                            d.insert("topic".into(), "osmosis".into());
                            d.insert("verdict".into(), verdict.as_str().into());
                            (Kind::Check, Some(verdict), vec![], d)
                        }
                    };
                    if kind == Kind::Check {
                        data.insert("predicted".into(), (0.1 + (j % 9) as f64 / 10.0).into());
                    }
                    tx.append(
                        &s,
                        &NewEpisode {
                            kind,
                            at: when,
                            salience: salience(kind, verdict),
                            summary: format!("{} {j} of subject {i}", kind.as_str()),
                            text: format!("{} {j} of subject {i} about osmosis", kind.as_str()),
                            concepts: vec!["Osmosis".into()],
                            evidence,
                            data,
                            external_id: None,
                            import_key: None,
                        },
                    )?;
                }
                if i % 10 == 0 {
                    let v2 = format!("{notes}\nRevised.\n");
                    tx.add_file(
                        &s,
                        "notes.md",
                        v2.as_bytes(),
                        "markdown",
                        std::slice::from_ref(&v2),
                        day + Duration::hours(12),
                    )?;
                }
            }
            Ok(())
        })?;
    }
    println!(
        "generated in {:.1} s; peak memory so far {:.0} MiB",
        t.elapsed().as_secs_f64(),
        peak_mib().unwrap_or(f64::NAN)
    );
    let reset = reset_peak();
    let t = Instant::now();
    let report = tm_brain::nightly::run(
        &mut store,
        at,
        &tm_brain::nightly::NightlyOptions::default(),
    )?;
    let wall = t.elapsed();
    let n = &report.nights[0];
    let stale: usize = n.subjects.iter().map(|s| s.stale_citations).sum();
    println!(
        "nightly: {} active subjects, {} consolidated, {} beliefs decayed, {} citations verified ({stale} stale) in {:.1} s ({:.2} ms per subject)",
        n.active,
        n.consolidated,
        n.decayed,
        n.verified,
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1e3 / n.active.max(1) as f64
    );
    println!(
        "peak memory (VmHWM){}: {:.0} MiB",
        if reset {
            " during the run"
        } else {
            " of the whole process"
        },
        peak_mib().unwrap_or(f64::NAN)
    );
    let t = Instant::now();
    let again = tm_brain::nightly::run(
        &mut store,
        at,
        &tm_brain::nightly::NightlyOptions::default(),
    )?;
    println!(
        "second run for the same T: {} skipped, {} run, in {:.1} s",
        again.nights[0].skipped,
        again.nights[0].ran,
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
