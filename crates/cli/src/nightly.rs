//! `nightly` and `report`: the nightly loop as cron (or `--every`) calls it,
//! and the subject report for a teacher or learner.

use crate::progress::{advance, bar};
use anyhow::{Context, Result, bail};
use chrono::{Duration, NaiveDate, Utc};
use std::process::ExitCode;
use tm_brain::Brain;
use tm_brain::nightly::{NightlyOptions, NightlyReport};

#[derive(clap::Args)]
pub struct NightlyArgs {
    /// The night's instant T (RFC 3339): subjects active in the 24 h before it
    /// are visited. Default: now.
    #[arg(long)]
    at: Option<String>,
    /// Catch up every missed night from this day (YYYY-MM-DD, UTC) on, in day order.
    #[arg(long)]
    since: Option<String>,
    /// Citations verified per subject per night.
    #[arg(long, default_value_t = tm_brain::nightly::DEFAULT_BATCH)]
    batch: usize,
    /// Keep running: one night every interval (e.g. 24h, 90m, 1d), T advancing
    /// by the interval each time.
    #[arg(long)]
    every: Option<String>,
    /// Print what each night did as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    #[arg(long)]
    subject: String,
    /// The report's instant (RFC 3339; calibration counts checks up to it). Default: now.
    #[arg(long)]
    at: Option<String>,
    #[arg(long)]
    json: bool,
}

/// `24h`, `90m`, `3600s`, `1d` as a duration of at least one second.
pub fn parse_every(s: &str) -> Result<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: i64 = n
        .parse()
        .with_context(|| format!("--every {s:?}: expected a number and a unit, such as 24h"))?;
    let d = match unit {
        "s" => Duration::try_seconds(n),
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        _ => bail!("--every {s:?}: the unit must be s, m, h or d"),
    };
    match d {
        Some(d) if d >= Duration::seconds(1) => Ok(d),
        _ => bail!("--every {s:?} must be between one second and a very long time"),
    }
}

pub fn nightly(brain: &Brain, args: NightlyArgs) -> Result<ExitCode> {
    let since = args
        .since
        .as_deref()
        .map(|s| {
            s.parse::<NaiveDate>()
                .with_context(|| format!("--since {s:?} is not a day such as 2026-11-01"))
        })
        .transpose()?;
    let every = args.every.as_deref().map(parse_every).transpose()?;
    let mut at = crate::instant_or_now(args.at.as_deref())?;
    let mut opts = NightlyOptions {
        batch: args.batch,
        since,
    };
    loop {
        let progress = bar("night [{bar:40}] {pos}/{len} subjects");
        let report = brain.nightly(at, &opts, &mut |done, total| {
            advance(&progress, done, total)
        });
        progress.finish_and_clear();
        let mut failed = false;
        match (report, every) {
            (Ok(r), _) => {
                print(&r, args.json)?;
                for n in &r.nights {
                    for f in &n.failed {
                        eprintln!(
                            "night of {}: {}: {} (nothing of it written)",
                            n.day, f.subject, f.error
                        );
                    }
                }
                failed = r.failures() > 0;
            }
            // On a schedule a failed night is reported and the next one still runs.
            (Err(e), Some(_)) => eprintln!("night {}: error: {e}", at.to_rfc3339()),
            (Err(e), None) => return Err(e.into()),
        }
        let Some(every) = every else {
            return Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
        };
        // Catch-up happens once; later nights follow one another.
        opts.since = None;
        at += every;
        if let Ok(wait) = (at - Utc::now()).to_std() {
            std::thread::sleep(wait);
        }
    }
}

fn print(r: &NightlyReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(r)?);
        return Ok(());
    }
    for n in &r.nights {
        let changed: usize = n.subjects.iter().map(|s| s.citations.len()).sum();
        println!(
            "night of {} (T = {}): {} active, {} run, {} already done, {} failed; {} consolidated, {} beliefs decayed, {} citations verified ({} newly stale or unverifiable)",
            n.day,
            n.at.to_rfc3339(),
            n.active,
            n.ran,
            n.skipped,
            n.failed.len(),
            n.consolidated,
            n.decayed,
            n.verified,
            changed
        );
    }
    Ok(())
}

pub fn report(brain: &Brain, args: ReportArgs) -> Result<ExitCode> {
    let subject = brain.subject(&args.subject)?;
    let at = crate::instant_or_now(args.at.as_deref())?;
    let report = brain.report(&subject, at)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", tm_model::nightly::render_text(&report));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_and_nonsense_is_refused() {
        assert_eq!(parse_every("24h").unwrap(), Duration::hours(24));
        assert_eq!(parse_every("1d").unwrap(), Duration::days(1));
        assert_eq!(parse_every("90m").unwrap(), Duration::minutes(90));
        for bad in ["", "h", "24", "24x", "0s", "-1h", "99999999999999999999d"] {
            assert!(parse_every(bad).is_err(), "{bad}");
        }
    }
}
