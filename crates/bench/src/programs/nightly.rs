//! `bench nightly`: one nightly run over many active subjects, generated
//! into a temporary database file: wall time and peak memory (VmHWM) of the
//! run, and the second run for the same instant (which skips every subject).

use super::{machine, peak_mib, reset_peak};
use anyhow::{Context, Result};
use chrono::{Duration, TimeZone, Utc};
use std::sync::Arc;
use std::time::Instant;
use tm_brain::nightly::NightlyOptions;
use tm_model::beliefs::{BeliefRow, Claim};
use tm_model::episodes::{Evidence, Kind, NewEpisode, Verdict, VersionRef, salience};
use tm_model::subject::SubjectKey;
use tm_store::StoreExt;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Active subjects.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 10_000))]
    pub subjects: usize,
    /// Episodes per subject on the day consolidated.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 12))]
    pub episodes: usize,
    /// A scratch PostgreSQL database to run on instead (`postgres://…/…bench…`,
    /// wiped first); without it, a temporary SQLite file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub pg: Option<String>,
}

pub fn run(o: &Options) -> Result<()> {
    let (subjects, per_subject) = (o.subjects.max(1), o.episodes.max(1));
    let scratch = super::Scratch::new(o.pg.as_deref(), "nightly.db")?;
    let mut store = scratch.store().context("opening the bench store")?;
    let day = Utc
        .with_ymd_and_hms(2026, 11, 28, 8, 0, 0)
        .single()
        .context("start time")?;
    let at = day + Duration::hours(16);
    println!("machine: {}", machine());
    println!("engine: {} ({})", scratch.engine(), scratch.location);
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
                let s = tx.ensure_subject(
                    tm_store::Owner::Operator,
                    &key,
                    "Cells",
                    Some("en"),
                    day - Duration::days(90),
                )?;
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
                                version: VersionRef::Number(v.version),
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
                            salt: None,
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
    drop(store);
    scratch.settle()?;
    let brain = super::brain(&scratch.location, Arc::new(tm_embed::HashEmbedder::new()))?;
    let reset = reset_peak();
    let t = Instant::now();
    let report = brain.nightly(at, &NightlyOptions::default(), &mut |_, _| {})?;
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
    let again = brain.nightly(at, &NightlyOptions::default(), &mut |_, _| {})?;
    println!(
        "second run for the same T: {} skipped, {} run, in {:.1} s",
        again.nights[0].skipped,
        again.nights[0].ran,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
