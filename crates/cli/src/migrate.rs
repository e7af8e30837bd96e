//! `tutor-memory migrate`: a SQLite store copied into an empty PostgreSQL
//! database, ids and hashes as they are, every chain verified on arrival.

use crate::progress::{advance, bar};
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MigrateArgs {
    /// The SQLite file to copy (left as it is).
    #[arg(long)]
    from: PathBuf,
    /// The empty PostgreSQL database to copy into (`postgres://user:pass@host/db`).
    #[arg(long)]
    to: String,
    /// Print what was copied as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: MigrateArgs) -> Result<ExitCode> {
    if !tm_store::is_postgres(&a.to) {
        bail!("--to must be a postgres:// URL, not {:?}", a.to);
    }
    if !a.from.is_file() {
        bail!("--from {} is not a SQLite file", a.from.display());
    }
    let progress = bar("{msg} [{bar:40}] {pos}/{len}");
    let copied =
        tm_store::postgres::copy::copy_sqlite(&a.from, &a.to, &mut |stage, done, total| {
            progress.set_message(stage.to_string());
            advance(&progress, done as usize, total as usize);
        });
    progress.finish_and_clear();
    let copied = copied.with_context(|| {
        format!(
            "copying {} into {}",
            a.from.display(),
            tm_store::postgres::redact(&a.to)
        )
    })?;
    if a.json {
        println!("{}", serde_json::to_string(&copied)?);
    } else {
        let episodes = copied.rows.get("episodes").copied().unwrap_or(0);
        println!(
            "copied {} subjects and {episodes} episodes into {}; every chain verified with the source's head",
            copied.subjects_verified,
            tm_store::postgres::redact(&a.to)
        );
        for (table, n) in &copied.rows {
            println!("  {table:<18} {n}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
