//! `bench class`: a generated class (one tenant, `--learners` learners who
//! each have the subject `algebra-1` with the same file of `--concepts`
//! concepts and checks on some of them), then the class view as a teacher
//! asks for it: gathered from the store, rendered as the page, as JSON and
//! as CSV, each timed over `--runs` runs (median and worst).
//!
//! The class is made through the brain's public writes (a subject, a file
//! event, check events), so its beliefs are the ones the rules derive.

use super::machine;
use anyhow::{Context, Result};
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::sync::Arc;
use std::time::Instant;
use tm_brain::Brain;
use tm_model::episodes::Verdict;
use tm_model::events::{Event, EventBody, FileSource};
use tm_model::subject::SubjectKey;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Learners in the class.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 500))]
    pub learners: usize,
    /// Concepts of the course's file (at most 64).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 40))]
    pub concepts: usize,
    /// Timed runs of each step.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10))]
    pub runs: usize,
    /// Also write the page here (to time a browser drawing it).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub page: Option<std::path::PathBuf>,
}

/// The course every generated learner shares.
pub const COURSE: &str = "algebra-1";

const KINDS: [&str; 8] = [
    "Linear",
    "Quadratic",
    "Rational",
    "Prime",
    "Inverse",
    "Composite",
    "Absolute",
    "Complex",
];
const THINGS: [&str; 8] = [
    "function", "equation", "number", "factor", "graph", "sequence", "matrix", "vector",
];

/// The course's concept names: `n` distinct two-word names (at most 64).
pub fn concept_names(n: usize) -> Vec<String> {
    THINGS
        .iter()
        .flat_map(|t| KINDS.iter().map(move |k| format!("{k} {t}")))
        .take(n.min(KINDS.len() * THINGS.len()))
        .collect()
}

/// The course's file: a section for each concept.
pub fn course_file(names: &[String]) -> String {
    let mut md = String::from("# Algebra 1\n\n");
    for name in names {
        let lower = name.to_lowercase();
        md.push_str(&format!(
            "## {name}\n\nA {lower} is one of the course's topics; the exercises use it.\n\n"
        ));
    }
    md
}

/// Makes the class in `brain` for the tenant `tenant_id`, as of `at`: each
/// learner's subject starts 30 days before `at` with the course file; a
/// learner of ability p checks about a third of the concepts, right with
/// probability p; every seventh learner was last seen 20 days before `at`,
/// the others in the last week.
pub fn build(
    brain: &Brain,
    tenant_id: i64,
    learners: usize,
    concepts: usize,
    at: DateTime<Utc>,
    seed: u64,
) -> Result<()> {
    let names = concept_names(concepts);
    let file = course_file(&names);
    let start = at - Duration::days(30);
    // Each learner's events are drawn in order (the same class for a seed),
    // then recorded by one worker a core: a record's reading, mapping and
    // embedding run outside its transaction.
    let mut rng = crate::rng::Rng::new(seed);
    let mut class = Vec::with_capacity(learners);
    for i in 0..learners {
        let key = SubjectKey::parse(&format!("learner-{i:04}/{COURSE}"))?;
        let mut events = vec![Event::new(
            start,
            EventBody::File {
                name: "algebra.md".into(),
                source: FileSource::Content(file.clone()),
            },
        )];
        let ability = rng.unit();
        let last = if i % 7 == 3 {
            at - Duration::days(20)
        } else {
            at - Duration::hours(1 + rng.below(24 * 7) as i64)
        };
        let checked: Vec<&String> = names.iter().filter(|_| rng.below(3) == 0).collect();
        let n = checked.len().max(1) as i64;
        for (j, name) in checked.into_iter().enumerate() {
            let when = start + (last - start) * (j as i32 + 1) / n as i32;
            let verdict = match rng.unit() {
                x if x < ability => Verdict::Right,
                x if x < ability + 0.15 => Verdict::Partial,
                _ => Verdict::Wrong,
            };
            events.push(Event::new(
                when,
                EventBody::Check {
                    topic: name.clone(),
                    verdict,
                    evaluation: None,
                    predicted: None,
                },
            ));
        }
        class.push((key, events));
    }
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let class = &class;
                scope.spawn(move || -> Result<()> {
                    for (key, events) in class.iter().skip(w).step_by(workers) {
                        let (subject, _) = brain.create_subject(
                            tenant_id,
                            key,
                            "Algebra 1",
                            Some("en"),
                            None,
                            start,
                        )?;
                        brain
                            .record(&subject, events)
                            .with_context(|| format!("recording {key}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().map_err(|_| anyhow::anyhow!("a worker panicked"))?)
    })
}

/// A brain over a fresh SQLite file with the hashing embedder (the class
/// view embeds nothing) and one tenant: (brain, tenant id).
pub fn class_brain(path: &std::path::Path) -> Result<(Brain, i64)> {
    let brain = Brain::open(
        &path.display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )?;
    let key = tm_server::auth::generate().context("drawing a key")?;
    let at = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .context("instant")?;
    brain.add_api_key("school", &key.prefix, &key.sha256, false, at)?;
    let tenant = brain
        .tenant_id("school")?
        .context("the tenant was just made")?;
    Ok((brain, tenant))
}

fn timed<T>(runs: usize, mut f: impl FnMut() -> Result<T>) -> Result<(f64, f64, T)> {
    let mut ms = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        last = Some(f()?);
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    let out = last.context("at least one run")?;
    Ok((ms[ms.len() / 2], ms[ms.len() - 1], out))
}

pub fn run(o: &Options) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (brain, tenant) = class_brain(&dir.path().join("class.db"))?;
    let at = Utc
        .with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .context("instant")?;
    println!("machine: {}", machine());
    println!(
        "generating a class of {} learners × {} concepts (one file and about a third of the concepts checked each)",
        o.learners, o.concepts
    );
    let t = Instant::now();
    build(&brain, tenant, o.learners, o.concepts, at, 7)?;
    println!("generated in {:.1} s", t.elapsed().as_secs_f64());
    let (g50, gmax, view) = timed(o.runs, || Ok(brain.class(tenant, COURSE, at, 1)?))?;
    let (h50, hmax, page) = timed(o.runs, || Ok(tm_server::class::render(&view)))?;
    let (j50, jmax, json) = timed(o.runs, || Ok(serde_json::to_vec(&view)?))?;
    let (c50, cmax, csv) = timed(o.runs, || Ok(tm_server::class::csv(&view)))?;
    println!(
        "class view of {} learners × {} concepts, {} runs each (median / worst):",
        view.learners.len(),
        view.concepts.len(),
        o.runs
    );
    println!("  gathered from the store  {g50:8.1} / {gmax:8.1} ms");
    println!(
        "  page (HTML)              {h50:8.1} / {hmax:8.1} ms  ({} KiB)",
        page.len() / 1024
    );
    println!(
        "  JSON                     {j50:8.1} / {jmax:8.1} ms  ({} KiB)",
        json.len() / 1024
    );
    println!(
        "  CSV                      {c50:8.1} / {cmax:8.1} ms  ({} KiB)",
        csv.len() / 1024
    );
    println!(
        "  page end to end (gather + HTML) {:.1} ms median",
        g50 + h50
    );
    if let Some(path) = &o.page {
        std::fs::write(path, &page).with_context(|| format!("writing {}", path.display()))?;
        println!("page written to {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tm_brain::class::Standing;

    /// The class view of 500 generated learners says, cell by cell, what
    /// each learner's current beliefs say; its counts, struggling list and
    /// quiet list follow from the cells.
    #[test]
    fn a_class_of_500_summarises_each_learners_beliefs() {
        let dir = tempfile::tempdir().unwrap();
        let (brain, tenant) = class_brain(&dir.path().join("c.db")).unwrap();
        let at = Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap();
        build(&brain, tenant, 500, 40, at, 11).unwrap();
        let v = brain.class(tenant, COURSE, at, 1).unwrap();
        assert_eq!(v.learners.len(), 500);
        assert_eq!(v.concepts.len(), 40);
        let mut evidence = 0;
        for row in &v.learners {
            let s = brain.tenant_subject(tenant, &row.subject).unwrap();
            let beliefs = brain.beliefs(&s).unwrap().current;
            for (c, standing) in v.concepts.iter().zip(&row.standings) {
                let want = beliefs
                    .iter()
                    .find(|b| b.subject_key == c.key && !b.unmapped)
                    .map_or(Standing::NoEvidence, |b| Standing::of(b.claim));
                assert_eq!(*standing, want, "{} on {}", row.learner, c.name);
                evidence += usize::from(want != Standing::NoEvidence);
            }
            assert_eq!(row.quiet, row.last_seen.unwrap() < at - Duration::days(14));
        }
        assert!(
            evidence > 500 * 40 / 5,
            "the class has evidence: {evidence}"
        );
        let roster = brain.tenant_roster(tenant).unwrap();
        assert_eq!(roster.len(), 500);
        for (s, seen) in &roster {
            let row = v
                .learners
                .iter()
                .find(|l| l.learner == s.key.learner)
                .unwrap();
            assert_eq!(*seen, row.last_seen, "the home page and the class agree");
        }
        for (i, c) in v.concepts.iter().enumerate() {
            let column: Vec<Standing> = v.learners.iter().map(|l| l.standings[i]).collect();
            let count = |s| column.iter().filter(|x| **x == s).count();
            assert_eq!(
                (c.understands, c.still_learning, c.struggles, c.no_evidence),
                (
                    count(Standing::Understands),
                    count(Standing::StillLearning),
                    count(Standing::Struggles),
                    count(Standing::NoEvidence)
                ),
                "{}",
                c.name
            );
        }
        let most = v.concepts.iter().map(|c| c.struggles).max().unwrap();
        assert_eq!(v.struggling[0].struggles, most);
        assert_eq!(v.quiet.len(), (0..500).filter(|i| i % 7 == 3).count());
        let csv = tm_server::class::csv(&v);
        assert_eq!(csv.lines().count(), 501, "a header and a row a learner");
    }
}
