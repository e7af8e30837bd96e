//! Two processes append to one subject at once, each event its own
//! transaction: one chain comes out, every event in it once, and it
//! verifies. On both engines (PostgreSQL when the machine has it, and says
//! so when it does not). The writers are this test binary run again with
//! `TM_WRITER_AT` set: the `writer` test then appends and exits. And when
//! both record the same events (a retry through another process), each is
//! appended once.

use chrono::{Duration, TimeZone, Utc};
use sha2::{Digest, Sha256};
use std::process::Command;
use tm_model::episodes::{ChainState, Kind, NewEpisode, salience};
use tm_model::subject::SubjectKey;
use tm_store::postgres::cluster::TestDb;
use tm_store::{StoreExt, require_subject, verify};

const EVENTS: usize = 1000;

fn key() -> SubjectKey {
    SubjectKey::parse("ana/cells").unwrap()
}

/// Run by the parent through `TM_WRITER_AT`: appends `EVENTS` episodes
/// named after `TM_WRITER_NAME`, one transaction each.
#[test]
fn writer() {
    let Ok(location) = std::env::var("TM_WRITER_AT") else {
        return; // Not a writer process: nothing to do.
    };
    let name = std::env::var("TM_WRITER_NAME").unwrap();
    let engine = tm_store::open(&location).unwrap();
    let mut store = engine.connect().unwrap();
    // Both writers start together, once both are connected.
    let go = std::path::PathBuf::from(std::env::var("TM_WRITER_GO").unwrap());
    std::fs::write(go.with_extension(&name), b"ready").unwrap();
    while !go.exists() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let t0 = Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap();
    // "shared": both writers record the same events (one retrying what the
    // other already wrote), each found by its import key first, as the
    // brain records: under the subject's lock, then appended only if absent.
    let shared = std::env::var("TM_WRITER_SHARED").is_ok();
    for i in 0..EVENTS {
        let who = if shared { "shared" } else { name.as_str() };
        let import_key: [u8; 32] = Sha256::digest(format!("{who} {i}").as_bytes()).into();
        store
            .write(|tx| {
                let s =
                    tx.ensure_subject(tm_store::Owner::Operator, &key(), "Cells", Some("en"), t0)?;
                tx.lock_subject(&s)?;
                if tx.episode_by_import_key(&s, &import_key)?.is_some() {
                    return Ok(());
                }
                tx.append(
                    &s,
                    &NewEpisode {
                        kind: Kind::Question,
                        at: t0 + Duration::seconds(i as i64),
                        salience: salience(Kind::Question, None),
                        summary: format!("{who} {i}"),
                        text: format!("Question {i} from {who}"),
                        concepts: vec![],
                        evidence: vec![],
                        data: serde_json::Map::new(),
                        external_id: Some(format!("{who}-{i}")),
                        import_key: Some(import_key),
                        salt: None,
                    },
                )?;
                Ok(())
            })
            .unwrap();
    }
}

fn spawn_writers(location: &str, shared: bool) {
    let exe = std::env::current_exe().unwrap();
    let signals = tempfile::tempdir().unwrap();
    let go = signals.path().join("go");
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            Command::new(&exe)
                .args(["--exact", "writer", "--nocapture", "--test-threads=1"])
                .env("TM_WRITER_AT", location)
                .env("TM_WRITER_NAME", name)
                .env("TM_WRITER_GO", &go)
                .envs(shared.then_some(("TM_WRITER_SHARED", "1")))
                .spawn()
                .unwrap()
        })
        .collect();
    while !(go.with_extension("a").exists() && go.with_extension("b").exists()) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::fs::write(&go, b"go").unwrap();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
}

fn two_writers(location: &str, queue_in_turn: bool) {
    spawn_writers(location, false);
    let engine = tm_store::open(location).unwrap();
    let store = engine.connect().unwrap();
    let s = require_subject(&*store, &key()).unwrap();
    let report = verify(&*store, &s, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(report.verified, 2 * EVENTS as u64);
    assert_eq!(report.head_seq, 2 * EVENTS as u64);
    // PostgreSQL's lock queue serves waiters in turn: the chain switches
    // between the writers again and again. SQLite's busy handler sleeps, so
    // one writer may well take every turn: correct, not required to share.
    let episodes = store.episodes(&s, 1, usize::MAX).unwrap();
    let switches = episodes
        .windows(2)
        .filter(|w| w[0].summary[..1] != w[1].summary[..1])
        .count();
    eprintln!("the chain switched writers {switches} times");
    if queue_in_turn {
        assert!(switches > 1, "the writers never interleaved");
    }
    for name in ["a", "b"] {
        for i in [0, EVENTS / 2, EVENTS - 1] {
            assert!(
                store
                    .episode_by_external_id(&s, &format!("{name}-{i}"))
                    .unwrap()
                    .is_some(),
                "{name}-{i} is missing"
            );
        }
    }
}

/// Both writers record the same 1,000 events: each is appended once.
fn a_retry_from_another_process(location: &str) {
    spawn_writers(location, true);
    let engine = tm_store::open(location).unwrap();
    let store = engine.connect().unwrap();
    let s = require_subject(&*store, &key()).unwrap();
    let report = verify(&*store, &s, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(
        report.head_seq, EVENTS as u64,
        "an event was appended twice"
    );
}

#[test]
fn two_processes_make_one_chain_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.db");
    tm_store::open(&path.display().to_string()).unwrap();
    two_writers(&path.display().to_string(), false);
}

#[test]
fn two_processes_make_one_chain_on_postgres() {
    let db = match TestDb::create() {
        Ok(db) => db,
        Err(why) => {
            eprintln!("skipped: two writers on PostgreSQL need a server: {why}");
            return;
        }
    };
    // Migrated once here, so the writers race on appends, not on the schema.
    tm_store::open(&db.url).unwrap();
    two_writers(&db.url, true);
}

#[test]
fn the_same_events_from_two_processes_are_appended_once_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retry.db").display().to_string();
    tm_store::open(&path).unwrap();
    a_retry_from_another_process(&path);
}

#[test]
fn the_same_events_from_two_processes_are_appended_once_on_postgres() {
    let db = match TestDb::create() {
        Ok(db) => db,
        Err(why) => {
            eprintln!("skipped: two writers on PostgreSQL need a server: {why}");
            return;
        }
    };
    tm_store::open(&db.url).unwrap();
    a_retry_from_another_process(&db.url);
}
