#![allow(dead_code)] // each test binary uses part of it
//! What the binary's tests share.

use std::path::Path;
use std::process::{Command, Output};

/// `tutor-memory --db DB` with the hashing embedder (these tests are about
/// the store and the service, not the model).
pub fn tm(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tutor-memory"));
    c.env("TUTOR_MEMORY_EMBEDDER", "hash").arg("--db").arg(db);
    c
}

/// Runs `tutor-memory --db DB ARGS…` to the end.
pub fn run(db: &Path, args: &[&str]) -> Output {
    tm(db).args(args).output().unwrap()
}
