//! Through the binary: `tutor-memory migrate` copies a SQLite store into an
//! empty PostgreSQL database, and the copy is the same memory: the same
//! chain heads, the same log, the same block for the same question. A
//! second copy into a database that holds data is refused. Skipped (and
//! says so) when there is no PostgreSQL on the machine.

use std::process::{Command, Output};
use tm_store::postgres::cluster::TestDb;

mod common;

fn run(db: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tutor-memory"));
    // The hashing embedder: the test is about the copy, not the model.
    cmd.env("TUTOR_MEMORY_EMBEDDER", "hash");
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    cmd.args(args).output().unwrap()
}

fn ok(db: Option<&str>, args: &[&str]) -> String {
    common::succeeded(args, run(db, args))
}

#[test]
fn a_sqlite_store_copied_to_postgres_is_the_same_memory() {
    let target = match TestDb::create() {
        Ok(db) => db,
        Err(why) => {
            eprintln!("skipped: migrate needs PostgreSQL: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let lite = dir.path().join("m.db").display().to_string();
    common::sample_taught(std::path::Path::new(&lite));
    ok(Some(&lite), &["nightly", "--at", "2026-11-21T03:00:00Z"]);

    let copied = ok(
        None,
        &["migrate", "--from", &lite, "--to", &target.url, "--json"],
    );
    let copied: serde_json::Value = serde_json::from_str(&copied).unwrap();
    assert_eq!(copied["subjects_verified"], 1, "{copied}");
    assert!(
        copied["rows"]["episodes"].as_u64().unwrap() > 40,
        "{copied}"
    );
    assert!(copied["rows"]["beliefs"].as_u64().unwrap() > 0, "{copied}");

    // The same chains, log, beliefs and block, read through either engine.
    for args in [
        &["verify"][..],
        &["checkpoint", "--subject", "ana/cell-biology"],
        &["log", "--subject", "ana/cell-biology"],
        &["beliefs", "--subject", "ana/cell-biology"],
    ] {
        assert_eq!(
            ok(Some(&lite), args),
            ok(Some(&target.url), args),
            "{args:?} differs between the engines"
        );
    }
    for question in [
        "What did I get wrong about osmosis last week?",
        "How does osmosis relate to diffusion across the membrane?",
    ] {
        let args = [
            "block",
            "--subject",
            "ana/cell-biology",
            "--at",
            "2026-11-22T10:00:00Z",
            "--json",
            question,
        ];
        let block = |db: &str| {
            let mut v: serde_json::Value = serde_json::from_str(&ok(Some(db), &args)).unwrap();
            v.as_object_mut().unwrap().remove("elapsed_ms");
            v
        };
        let (a, b) = (block(&lite), block(&target.url));
        assert_eq!(
            a, b,
            "the block for {question:?} differs between the engines"
        );
        if question.starts_with("How") {
            assert!(!a["recalled"].as_array().unwrap().is_empty(), "{a}");
        }
    }
    // The copy goes on as a store: new events append to the copied chain.
    ok(
        Some(&target.url),
        &[
            "teach",
            "--subject",
            "ana/cell-biology",
            "--at",
            "2026-11-23T10:00:00Z",
            "Remember that ribosomes build proteins",
        ],
    );
    assert!(ok(Some(&target.url), &["verify"]).contains("intact"));

    // A database that holds data is never a target.
    let again = run(None, &["migrate", "--from", &lite, "--to", &target.url]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("already holds data"), "{err}");
}
