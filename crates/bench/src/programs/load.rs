//! `bench load`: how many blocks a second does one server give, and how
//! fast? Generates a subject of N episodes, serves it on loopback, and has C
//! concurrent clients (threads with keep-alive connections) request blocks
//! for S seconds; prints throughput, latency percentiles, errors and drops.
//! With `--writers W`, W more clients record learner messages into the same
//! subject meanwhile (through every server in turn) at `--write-rate` in
//! all, and afterwards the chain must hold every acknowledged write,
//! verified intact.

use anyhow::{Context, Result};
use chrono::{Duration as ChronoDuration, TimeZone, Utc};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tm_model::episodes::{Kind, NewEpisode, salience};
use tm_model::subject::{Subject, SubjectKey};
use tm_store::{Store, StoreExt};

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Concurrent clients.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 32))]
    pub clients: usize,
    /// How long to measure, in seconds.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 60))]
    pub seconds: u64,
    /// Episodes in the generated subject.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10_000))]
    pub episodes: usize,
    /// Subjects of `--episodes` each (`load/cells`, `load/cells-2`, …); the
    /// clients spread their requests over all of them, and the servers'
    /// resident memory is printed after the first and after every subject is
    /// warm, so what one more subject costs can be read off.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub subjects: usize,
    /// The embedder (e5, the default; minilm, openai, hash).
    #[cfg_attr(feature = "cli", arg(long, default_value = "e5"))]
    pub embedder: String,
    #[cfg_attr(feature = "cli", arg(long))]
    pub model_dir: Option<PathBuf>,
    /// A scratch PostgreSQL database to serve from (`postgres://…/…bench…`,
    /// wiped first); without it, a temporary SQLite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub pg: Option<String>,
    /// Service processes sharing the store (`tutor-memory serve`, each its
    /// own process; the clients take turns between them). 1: one server in
    /// this process.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub servers: usize,
    /// Clients that record a learner message per request into the same
    /// subject meanwhile (besides the block clients); the chain is verified
    /// afterwards.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub writers: usize,
    /// Writes a second, all writers together, at most (each writer paces
    /// itself, so the block figures of two runs compare).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10.0))]
    pub write_rate: f64,
    /// Blocks each server builds at once (default: two a core).
    #[cfg_attr(feature = "cli", arg(long))]
    pub block_workers: Option<usize>,
    /// Print a line every this many seconds (blocks, p99, errors, drops and
    /// the servers' resident memory over the interval): a soak's time line.
    #[cfg_attr(feature = "cli", arg(long))]
    pub every: Option<u64>,
}

const TOPICS: &[&str] = &[
    "osmosis",
    "diffusion",
    "the cell membrane",
    "mitochondria",
    "ribosomes",
    "the nucleus",
    "active transport",
    "cytoplasm",
    "photosynthesis",
    "enzymes",
    "DNA replication",
    "protein synthesis",
];

const QUESTIONS: &[&str] = &[
    "How does osmosis work again?",
    "What did we cover in July?",
    "What have I got wrong so far?",
    "Can you explain active transport?",
    "What did we do last week about enzymes?",
    "Why do cells need mitochondria?",
    "What is the difference between diffusion and osmosis?",
    "What did we cover in May?",
];

/// The key of the `i`-th generated subject (from 0).
fn subject_key(i: usize) -> String {
    match i {
        0 => "load/cells".to_string(),
        _ => format!("load/cells-{}", i + 1),
    }
}

/// Fills the store with `n` questions, answers and checks over two years,
/// in the subject `key`.
fn generate(
    store: &mut dyn Store,
    key: &str,
    n: usize,
) -> Result<(Subject, chrono::DateTime<Utc>)> {
    let key = SubjectKey::parse(key)?;
    let start = Utc
        .with_ymd_and_hms(2025, 1, 1, 8, 0, 0)
        .single()
        .context("start")?;
    let span = 700 * 86_400i64;
    let subject = store.write(|tx| {
        tx.ensure_subject(
            tm_store::Owner::Operator,
            &key,
            "Load test",
            Some("en"),
            start,
        )
    })?;
    let mut rng = crate::rng::Rng::new(7);
    let mut i = 0;
    while i < n {
        let end = (i + 5_000).min(n);
        let batch: Vec<NewEpisode> = (i..end)
            .map(|j| {
                let t = TOPICS[rng.below(TOPICS.len())];
                let (kind, text, data) = match j % 5 {
                    0 | 1 => (
                        Kind::Question,
                        format!("Can we go over {t} again? I keep mixing it up (take {j})."),
                        serde_json::Map::new(),
                    ),
                    2 | 3 => (
                        Kind::Answer,
                        format!(
                            "Of course. {t}: here is the idea once more, step by step (take {j})."
                        ),
                        serde_json::Map::new(),
                    ),
                    _ => {
                        let verdict = ["right", "wrong", "partial"][rng.below(3)];
                        let mut d = serde_json::Map::new();
                        d.insert("topic".into(), t.into());
                        d.insert("verdict".into(), verdict.into());
                        (Kind::Check, format!("Check on {t}: {verdict}"), d)
                    }
                };
                NewEpisode {
                    kind,
                    at: start + ChronoDuration::seconds(span * j as i64 / n.max(1) as i64),
                    salience: salience(kind, None),
                    summary: text.clone(),
                    text,
                    concepts: vec![t.to_string()],
                    evidence: vec![],
                    data,
                    external_id: None,
                    import_key: None,
                    salt: None,
                }
            })
            .collect();
        store.write(|tx| {
            for e in &batch {
                tx.append(&subject, e)?;
            }
            Ok(())
        })?;
        i = end;
    }
    Ok((subject, start + ChronoDuration::seconds(span + 86_400)))
}

pub fn run(args: &Options, progress: super::Progress) -> Result<()> {
    let scratch = super::Scratch::new(args.pg.as_deref(), "load.db")?;
    let embedder = super::embedder(&args.embedder, args.model_dir.as_deref())?;
    let n_subjects = args.subjects.max(1);
    if n_subjects > 1 && args.writers > 0 {
        anyhow::bail!("--writers writes into one subject: use it with --subjects 1");
    }
    // Every subject is generated over the same two years, so one turn instant
    // serves them all.
    let (subjects, at) = {
        let mut store = scratch.store()?;
        let mut subjects = Vec::with_capacity(n_subjects);
        let mut at = None;
        for i in 0..n_subjects {
            eprintln!(
                "generating {} episodes in {} ({}/{n_subjects})…",
                args.episodes,
                subject_key(i),
                i + 1
            );
            let (s, a) = generate(&mut *store, &subject_key(i), args.episodes)?;
            subjects.push(s);
            at = Some(a);
        }
        (subjects, at.context("no subject generated")?)
    };
    let subject = subjects[0].clone();
    let mut brain = super::brain(&scratch.location, embedder)?;
    if let Some(n) = args.block_workers {
        brain.set_block_workers(n);
    }
    let mut embedded = 0;
    for s in &subjects {
        let mut tick = progress("embedding", "episodes");
        embedded += brain.reembed(s, &mut |d, n| tick(d, n))?.embedded;
        drop(tick);
    }
    scratch.settle()?;
    let key = tm_server::auth::generate().context("randomness")?;
    brain.add_api_key("load", &key.prefix, &key.sha256, false, Utc::now())?;
    brain.assign_learner("load", "load", Utc::now())?;
    let embedder_name = brain.embedder_name()?;
    let servers = Servers::start(args, brain, &scratch.location)?;
    // Per server, the block URL of every subject.
    let urls: Vec<Vec<String>> = servers
        .addrs
        .iter()
        .map(|a| {
            (0..n_subjects)
                .map(|i| format!("http://{a}/v1/subjects/{}/block", subject_key(i)))
                .collect()
        })
        .collect();
    let auth = format!("Bearer {}", key.secret);
    println!("machine: {}", super::machine());
    // Warm-up: each server's first blocks of a subject load its vectors.
    let agent = new_agent();
    let warm_started = Instant::now();
    for i in 0..n_subjects {
        for server in &urls {
            for q in QUESTIONS {
                post(&agent, &server[i], &auth, q, at).map_err(anyhow::Error::msg)?;
            }
        }
        if n_subjects > 1 && (i == 0 || i + 1 == n_subjects) {
            println!(
                "resident memory with {} subject{} warm: {}",
                i + 1,
                if i == 0 { "" } else { "s" },
                servers.rss()
            );
        }
    }
    if n_subjects > 1 {
        println!(
            "warmed {n_subjects} subjects in {:.1} s",
            warm_started.elapsed().as_secs_f64()
        );
    }
    println!(
        "subject{}: {} × {} episodes ({embedded} embedded with {embedder_name}) in {}; {} clients for {} s on {} server{} ({})",
        if n_subjects == 1 { "" } else { "s" },
        n_subjects,
        args.episodes,
        scratch.engine(),
        args.clients,
        args.seconds,
        urls.len(),
        if urls.len() == 1 {
            ""
        } else {
            "s, each its own process"
        },
        servers.addrs.join(", ")
    );
    let running = Arc::new(AtomicBool::new(true));
    let started = Instant::now();
    let writers: Vec<_> = (0..args.writers)
        .map(|w| {
            let urls: Vec<String> = urls.iter().map(|u| u[0].replace("/block", "/events")).collect();
            let (auth, running) = (auth.clone(), running.clone());
            let every = Duration::from_secs_f64(args.writers as f64 / args.write_rate.max(0.001));
            std::thread::spawn(move || {
                let agent = new_agent();
                let (mut acknowledged, mut errors) = (Vec::new(), 0usize);
                let mut i = 0usize;
                let mut next = Instant::now();
                while running.load(Ordering::Relaxed) {
                    if let Some(wait) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    next += every;
                    let event = serde_json::json!({
                        "type": "learner",
                        "id": format!("writer-{w}-{i}"),
                        "at": (at - ChronoDuration::hours(12)).to_rfc3339(),
                        "text": format!("Writer {w} asks again about {} (message {i}).", TOPICS[i % TOPICS.len()]),
                    });
                    match send(&agent, &urls[(w + i) % urls.len()], &auth, &event) {
                        Ok(()) => acknowledged.push(format!("writer-{w}-{i}")),
                        Err(_) => errors += 1,
                    }
                    i += 1;
                }
                (acknowledged, errors)
            })
        })
        .collect();
    // The time line's shared record, only when one is asked for: otherwise
    // the clients take no lock per request.
    let timeline = args.every.filter(|&e| e > 0);
    let window = Arc::new(std::sync::Mutex::new(Interval::default()));
    let workers: Vec<_> = (0..args.clients.max(1))
        .map(|c| {
            let urls = urls[c % urls.len()].clone();
            let (auth, running, window) = (auth.clone(), running.clone(), window.clone());
            std::thread::spawn(move || {
                let agent = new_agent();
                let mut lat = Vec::new();
                let (mut errors, mut dropped) = (0usize, 0usize);
                let mut i = c;
                while running.load(Ordering::Relaxed) {
                    let q = QUESTIONS[i % QUESTIONS.len()];
                    // A new subject each round of the questions.
                    let url = &urls[(c + i / QUESTIONS.len()) % urls.len()];
                    i += 1;
                    let t = Instant::now();
                    let outcome = post(&agent, url, &auth, q, at);
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    match outcome {
                        Ok(d) => {
                            lat.push(ms);
                            dropped += usize::from(d);
                        }
                        Err(_) => errors += 1,
                    }
                    if timeline.is_some()
                        && let Ok(mut w) = window.lock()
                    {
                        w.record(outcome.ok(), ms);
                    }
                }
                (lat, errors, dropped)
            })
        })
        .collect();
    match timeline {
        None => std::thread::sleep(Duration::from_secs(args.seconds)),
        Some(every) => {
            println!("| second | blocks/s | p99 ms | errors | dropped | servers' memory (VmRSS) |");
            println!("|---|---|---|---|---|---|");
            let end = started + Duration::from_secs(args.seconds);
            while Instant::now() < end {
                std::thread::sleep(Duration::from_secs(every).min(end - Instant::now()));
                let mut w = std::mem::take(
                    &mut *window
                        .lock()
                        .map_err(|_| anyhow::anyhow!("a client thread failed"))?,
                );
                println!(
                    "| {:.0} | {:.0} | {:.1} | {} | {} | {} |",
                    started.elapsed().as_secs_f64(),
                    w.ms.len() as f64 / every as f64,
                    w.p99(),
                    w.errors,
                    w.dropped,
                    servers.rss()
                );
            }
        }
    }
    running.store(false, Ordering::Relaxed);
    let mut lat = Vec::new();
    let (mut errors, mut dropped) = (0, 0);
    for w in workers {
        let (l, e, d) = w
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread failed"))?;
        lat.extend(l);
        errors += e;
        dropped += d;
    }
    let (mut acknowledged, mut write_errors) = (Vec::new(), 0);
    for w in writers {
        let (a, e) = w
            .join()
            .map_err(|_| anyhow::anyhow!("a writer thread failed"))?;
        acknowledged.extend(a);
        write_errors += e;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rss_after = servers.rss();
    servers.stop()?;
    if args.writers > 0 {
        // Every acknowledged write is in the one chain, which verifies.
        let store = scratch.store()?;
        let report = tm_store::verify(&*store, &subject, None)?;
        let missing = acknowledged
            .iter()
            .filter(|id| matches!(store.episode_by_external_id(&subject, id), Ok(None)))
            .count();
        let intact = report.first_break.is_none();
        println!(
            "writes: {} acknowledged ({:.0}/s), {write_errors} failed, {missing} acknowledged but missing; chain: {} episodes ({} generated + {}), {}",
            acknowledged.len(),
            acknowledged.len() as f64 / elapsed,
            report.head_seq,
            args.episodes,
            report.head_seq.saturating_sub(args.episodes as u64),
            if intact { "verified intact" } else { "BROKEN" },
        );
        if !intact || missing > 0 || report.head_seq != (args.episodes + acknowledged.len()) as u64
        {
            anyhow::bail!(
                "the chain does not hold exactly the generated and acknowledged episodes"
            );
        }
        if write_errors > 0 {
            anyhow::bail!("{write_errors} writes failed");
        }
    }
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "| engine | servers | clients | seconds | blocks | blocks/s | p50 ms | p90 ms | p99 ms | max ms | errors | dropped |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {} | {} | {:.0} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {errors} | {dropped} |",
        scratch.engine(),
        urls.len(),
        args.clients,
        elapsed,
        lat.len(),
        lat.len() as f64 / elapsed,
        pct(0.50),
        pct(0.90),
        pct(0.99),
        lat.last().copied().unwrap_or(f64::NAN),
    );
    println!("resident memory at the end: {rss_after}");
    if errors > 0 {
        anyhow::bail!("{errors} requests failed");
    }
    Ok(())
}

/// What the clients saw since the last line of a time line.
#[derive(Default)]
struct Interval {
    ms: Vec<f64>,
    errors: usize,
    dropped: usize,
}

impl Interval {
    fn record(&mut self, dropped: Option<bool>, ms: f64) {
        match dropped {
            Some(d) => {
                self.ms.push(ms);
                self.dropped += usize::from(d);
            }
            None => self.errors += 1,
        }
    }

    fn p99(&mut self) -> f64 {
        self.ms.sort_by(f64::total_cmp);
        super::percentile(&self.ms, 0.99)
    }
}

/// The servers under load: one in this process, or several
/// `tutor-memory serve` processes over the same store.
struct Servers {
    addrs: Vec<String>,
    local: Option<(
        tokio::runtime::Runtime,
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<std::io::Result<()>>,
    )>,
    children: Vec<std::process::Child>,
}

impl Servers {
    /// Their resident memory now: this process's (server and clients) when
    /// the server runs here, else each server process's.
    fn rss(&self) -> String {
        let mib = super::rss_parts;
        if self.children.is_empty() {
            format!("{} (this process)", mib(None))
        } else {
            self.children
                .iter()
                .map(|c| mib(Some(c.id())))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    fn start(args: &Options, brain: tm_brain::Brain, location: &str) -> Result<Servers> {
        if args.servers <= 1 {
            let state = tm_server::AppState::new(Arc::new(brain), tm_server::Config::default())
                .map_err(anyhow::Error::msg)?;
            let runtime = tokio::runtime::Runtime::new()?;
            let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
            let addr = listener.local_addr()?.to_string();
            let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
            let server = runtime.spawn(tm_server::serve(listener, state, async {
                let _ = stop_rx.await;
            }));
            return Ok(Servers {
                addrs: vec![addr],
                local: Some((runtime, stop_tx, server)),
                children: Vec::new(),
            });
        }
        drop(brain);
        // This program runs inside the `tutor-memory` binary: the servers are
        // that binary's `serve`, over the same store.
        let exe = std::env::current_exe()?;
        let mut servers = Servers {
            addrs: Vec::new(),
            local: None,
            children: Vec::new(),
        };
        for _ in 0..args.servers {
            let port = std::net::TcpListener::bind("127.0.0.1:0")?
                .local_addr()?
                .port();
            let addr = format!("127.0.0.1:{port}");
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg("--db")
                .arg(location)
                .arg("--embedder")
                .arg(&args.embedder)
                .args(["serve", "--addr", &addr])
                .stdout(std::process::Stdio::null());
            if let Some(n) = args.block_workers {
                cmd.arg("--block-workers").arg(n.to_string());
            }
            if let Some(dir) = &args.model_dir {
                cmd.arg("--model-dir").arg(dir);
            }
            servers
                .children
                .push(cmd.spawn().context("starting a serve process")?);
            servers.addrs.push(addr);
        }
        let agent = new_agent();
        for addr in &servers.addrs {
            let deadline = Instant::now() + Duration::from_secs(120);
            while agent.get(format!("http://{addr}/healthz")).call().is_err() {
                if Instant::now() > deadline {
                    anyhow::bail!("the server on {addr} did not come up");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(servers)
    }

    fn stop(mut self) -> Result<()> {
        if let Some((runtime, stop, server)) = self.local.take() {
            let _ = stop.send(());
            runtime.block_on(server)??;
        }
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        Ok(())
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn new_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// One write; `Ok` on a 200.
fn send(
    agent: &ureq::Agent,
    url: &str,
    auth: &str,
    event: &serde_json::Value,
) -> std::result::Result<(), String> {
    post_json(agent, url, auth, event).map(|_| ())
}

/// One block request; `Ok(dropped)` on a 200.
fn post(
    agent: &ureq::Agent,
    url: &str,
    auth: &str,
    question: &str,
    at: chrono::DateTime<Utc>,
) -> std::result::Result<bool, String> {
    let body = serde_json::json!({"question": question, "at": at.to_rfc3339()});
    let text = post_json(agent, url, auth, &body)?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok(v["dropped"].as_bool().unwrap_or(false))
}

/// POSTs `body` with the key; the response text on a 2xx, else why not.
fn post_json(
    agent: &ureq::Agent,
    url: &str,
    auth: &str,
    body: &serde_json::Value,
) -> std::result::Result<String, String> {
    let mut res = agent
        .post(url)
        .header("Authorization", auth)
        .send_json(body)
        .map_err(|e| e.to_string())?;
    let status = res.status();
    let text = res.body_mut().read_to_string().map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {text}"));
    }
    Ok(text)
}
