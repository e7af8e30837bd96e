//! The benchmark programs: each prints the figures that go to
//! BENCHMARKS.md (with the machine they ran on). The CLI's `bench`
//! subcommands parse their options (`clap` behind the `cli` feature) and call
//! `run`; timings live here, never in tests. They reach the memory through
//! the brain, as a platform would; `chain` measures the store itself, and
//! the synthetic subjects are written straight into the store (benchmark
//! data, generated fast), then embedded by the brain's `reembed`.

pub mod block;
pub mod chain;
pub mod class;
pub mod crosslingual;
pub mod erase;
pub mod load;
pub mod locomo;
pub mod longmemeval;
pub mod map;
pub mod nightly;
pub mod probe;
pub mod quality;
pub mod recall;
pub mod synthetic;

use std::path::Path;
use std::sync::Arc;

/// A line naming the machine (CPU, cores, load), for the figures' context.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{cpu}, {cores} cores; load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// The embedder a benchmark names (`minilm`, `e5`, `openai`, `hash`); a fallback
/// is printed, never silent.
pub fn embedder(
    choice: &str,
    model_dir: Option<&Path>,
) -> anyhow::Result<Arc<dyn tm_embed::Embedder>> {
    let (e, warning) = tm_embed::choose(choice, model_dir)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    Ok(e.into())
}

/// An embedder that embeds each distinct text once per run: a haystack with
/// distractors repeats other instances' sessions word for word in many
/// subjects (`bench longmemeval --distractors`), and embedding them again was
/// most of the import. The vectors are the inner embedder's own.
pub struct Remembering {
    inner: Arc<dyn tm_embed::Embedder>,
    seen: std::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
}

impl Remembering {
    pub fn new(inner: Arc<dyn tm_embed::Embedder>) -> Remembering {
        Remembering {
            inner,
            seen: Default::default(),
        }
    }
}

impl tm_embed::Embedder for Remembering {
    fn calibration(&self) -> tm_embed::Calibration {
        self.inner.calibration()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        let poisoned = || tm_embed::Error::Inference("the text cache was poisoned".into());
        let missing: Vec<&str> = {
            let seen = self.seen.lock().map_err(|_| poisoned())?;
            let mut m: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|t| !seen.contains_key(*t))
                .collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        if !missing.is_empty() {
            let vectors = self.inner.embed(&missing)?;
            let mut seen = self.seen.lock().map_err(|_| poisoned())?;
            for (t, v) in missing.iter().zip(vectors) {
                seen.insert((*t).to_string(), v);
            }
        }
        let seen = self.seen.lock().map_err(|_| poisoned())?;
        texts
            .iter()
            .map(|t| seen.get(*t).cloned().ok_or_else(poisoned))
            .collect()
    }
    fn embed_queries(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
        self.inner.embed_queries(texts)
    }
}

/// The brain over a benchmark's store, with the embedder it names. A kept
/// store whose episode vectors another embedder made is refused: its ranking
/// would find no vector of the named one and rank by words alone, without a
/// word said (the bench's default embedder is not the store's).
pub fn brain(
    location: &str,
    embedder: Arc<dyn tm_embed::Embedder>,
) -> anyhow::Result<tm_brain::Brain> {
    let name = embedder.name().to_string();
    let brain = tm_brain::Brain::open(location, embedder)?;
    if let Some((other, n)) = brain.vector_models()?.into_iter().find(|(m, _)| *m != name) {
        anyhow::bail!(
            "{location}: {n} of its episode vectors were made with {other}, not {name}; \
             name that embedder (--embedder) or give a new store"
        );
    }
    Ok(brain)
}

/// Where a benchmark keeps its data: a SQLite file in a fresh temporary
/// folder, or a scratch PostgreSQL database emptied for the run.
pub struct Scratch {
    pub location: String,
    _dir: Option<tempfile::TempDir>,
}

impl Scratch {
    /// With `db` (a `postgres://` URL), that database wiped: every table of
    /// its `public` schema dropped, so its name must say it is a scratch
    /// database (contain `bench`); without, `file` in a new temporary folder.
    pub fn new(db: Option<&str>, file: &str) -> anyhow::Result<Scratch> {
        match db {
            None => {
                let dir = tempfile::tempdir()?;
                Ok(Scratch {
                    location: dir.path().join(file).display().to_string(),
                    _dir: Some(dir),
                })
            }
            Some(url) => {
                if !tm_store::is_postgres(url) {
                    anyhow::bail!(
                        "--pg must be a postgres:// URL (without it, a temporary SQLite file)"
                    );
                }
                let name = url
                    .split('?')
                    .next()
                    .and_then(|u| u.rsplit('/').next())
                    .unwrap_or("");
                if !name.contains("bench") {
                    anyhow::bail!(
                        "refusing to wipe the database {name:?} for a benchmark: name a scratch database whose name contains \"bench\""
                    );
                }
                let mut c = postgres::Client::connect(url, postgres::NoTls)?;
                c.batch_execute("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public")?;
                Ok(Scratch {
                    location: url.to_string(),
                    _dir: None,
                })
            }
        }
    }

    /// The engine's name, for the figures.
    pub fn engine(&self) -> &'static str {
        if tm_store::is_postgres(&self.location) {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    }

    /// After generating the data: on PostgreSQL, `VACUUM ANALYZE`, the state
    /// autovacuum leaves a live database in (planner statistics, visibility
    /// map); on SQLite nothing.
    pub fn settle(&self) -> anyhow::Result<()> {
        if tm_store::is_postgres(&self.location) {
            let mut c = postgres::Client::connect(&self.location, postgres::NoTls)?;
            c.batch_execute("VACUUM ANALYZE")?;
        }
        Ok(())
    }

    /// A connection to the (migrated) store.
    pub fn store(&self) -> anyhow::Result<Box<dyn tm_store::Store>> {
        Ok(tm_store::open(&self.location)?.connect()?)
    }
}

/// The value at fraction `p` of sorted figures (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Peak resident memory of this process so far (VmHWM), in MiB.
pub fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resident memory of a process now (VmRSS; `pid` none: this one), in MiB.
pub fn rss_mib(pid: Option<u32>) -> Option<f64> {
    status_mib(&status(pid)?, "VmRSS:")
}

/// `/proc/<pid>/status` (this process's without a pid).
fn status(pid: Option<u32>) -> Option<String> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_string(),
    };
    std::fs::read_to_string(path).ok()
}

/// One `… kB` line of a `/proc/<pid>/status`, in MiB.
fn status_mib(status: &str, field: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The resident memory as "X MiB (anonymous A, file-backed F)": the file-backed
/// part is the store's pages mapped by SQLite's `mmap_size`, page cache the
/// kernel can take back, not memory the process holds.
pub fn rss_parts(pid: Option<u32>) -> String {
    let Some(status) = status(pid) else {
        return "?".to_string();
    };
    let field = |f| status_mib(&status, f);
    match field("VmRSS:") {
        None => "?".to_string(),
        Some(all) => match (field("RssAnon:"), field("RssFile:")) {
            (Some(anon), Some(file)) => {
                format!("{all:.0} MiB (anonymous {anon:.0}, file-backed {file:.0})")
            }
            _ => format!("{all:.0} MiB"),
        },
    }
}

/// Resets VmHWM to the current resident size (Linux ≥ 4.0), so the next
/// reading is the peak of what follows.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Where a long program says how far it got: given `(what, unit)` for a
/// stage (`("importing", "conversations")`), the face returns what to call
/// with `(done, total)` as the stage goes; the stage ends when it is dropped.
/// The CLI draws a bar on a terminal; a test can count.
pub type Progress<'a> = &'a dyn Fn(&str, &str) -> Box<dyn FnMut(usize, usize)>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The hashing embedder under another name: another model's vectors.
    struct Renamed(tm_embed::HashEmbedder);

    impl tm_embed::Embedder for Renamed {
        fn name(&self) -> &str {
            "renamed-384"
        }
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn embed(&self, texts: &[&str]) -> tm_embed::Result<Vec<Vec<f32>>> {
            self.0.embed(texts)
        }
    }

    #[test]
    fn a_kept_store_another_embedder_made_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("kept.db").display().to_string();
        let history = concat!(
            r#"{"type":"subject","learner":"ana","subject":"cells"}"#,
            "\n",
            r#"{"type":"learner","at":"2026-01-01T09:00:00Z","text":"What does a ribosome make?"}"#,
        );
        let kept = brain(&db, Arc::new(tm_embed::HashEmbedder::new())).unwrap();
        kept.import_bytes("h.jsonl", history.as_bytes(), None, &mut |_, _, _| {})
            .unwrap();
        drop(kept);
        assert!(brain(&db, Arc::new(tm_embed::HashEmbedder::new())).is_ok());
        let err = brain(&db, Arc::new(Renamed(tm_embed::HashEmbedder::new())))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("made with hash-v1-384, not renamed-384"),
            "{err}"
        );
    }
}
