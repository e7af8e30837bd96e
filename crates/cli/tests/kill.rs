//! A process killed (SIGKILL) in the middle of an import leaves a store that
//! verifies and holds either none or all of that import; one killed right
//! after an erasure's commit leaves the compaction owed, said so, and the
//! next process to open the store finishes it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tm_model::episodes::ChainState;
use tm_model::subject::SubjectKey;
use tm_store::prelude::*;
use tm_store::sqlite::SqliteStore;
use tm_store::{require_subject, verify};

const EVENTS: usize = 20_000;

fn big_history(path: &std::path::Path, learner: &str) {
    big_history_about(path, learner, "the cell membrane")
}

fn big_history_about(path: &std::path::Path, learner: &str, topic: &str) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        r#"{{"type":"subject","learner":"{learner}","subject":"big","title":"Big"}}"#
    )
    .unwrap();
    for i in 0..EVENTS {
        let min = i % 60;
        let hour = (i / 60) % 24;
        let day = 1 + (i / 1440) % 28;
        let month = 1 + (i / 40320) % 12;
        writeln!(
            f,
            r#"{{"id":"q{i}","type":"learner","at":"2026-{month:02}-{day:02}T{hour:02}:{min:02}:00Z","text":"Question number {i} about {topic}"}}"#
        )
        .unwrap();
    }
}

#[test]
fn sigkill_during_import_leaves_none_or_all() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    // A first, completed import that must survive every kill untouched.
    let small = dir.path().join("small.jsonl");
    std::fs::write(
        &small,
        "{\"type\":\"subject\",\"learner\":\"ana\",\"subject\":\"cells\"}\n{\"id\":\"a\",\"type\":\"learner\",\"at\":\"2026-01-01T00:00:00Z\",\"text\":\"What is a cell?\"}\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_tutor-memory");

    let ok = Command::new(bin)
        // The hashing embedder: this test is about the import transaction, not the model.
        .env("TUTOR_MEMORY_EMBEDDER", "hash")
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&small)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );

    // Round 0: killed while its transaction is writing (the WAL file is
    // growing): none of it may remain. Round 1: left to finish: all of it.
    for (round, kill_mid_write) in [(0, true), (1, false)] {
        let learner = format!("big{round}");
        let history = dir.path().join(format!("{learner}.jsonl"));
        big_history(&history, &learner);
        let wal = dir.path().join("k.db-wal");
        let wal_before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        let mut child = Command::new(bin)
            // The hashing embedder: this test is about the import transaction, not the model.
            .env("TUTOR_MEMORY_EMBEDDER", "hash")
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(&history)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut killed_in_flight = false;
        if kill_mid_write {
            while started.elapsed() < Duration::from_secs(120) {
                let grown = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0)
                    > wal_before + (256 << 10);
                if grown && child.try_wait().unwrap().is_none() {
                    child.kill().unwrap(); // SIGKILL on Unix
                    killed_in_flight = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            assert!(
                killed_in_flight,
                "the import never reached its writing phase"
            );
        }
        let status = child.wait().unwrap();
        assert_eq!(status.success(), !kill_mid_write);

        let store = SqliteStore::open(&db).unwrap();
        for s in store.subjects().unwrap() {
            let r = verify(&store, &s, None).unwrap();
            assert_eq!(r.state, ChainState::Intact, "{r:?}");
        }
        let count = match store
            .subject(&SubjectKey::parse(&format!("{learner}/big")).unwrap())
            .unwrap()
        {
            None => 0,
            Some(s) => store.episode_count(&s).unwrap() as usize,
        };
        let expected = if kill_mid_write { 0 } else { EVENTS };
        assert_eq!(count, expected, "round {round}: a partial import");
        let ana = require_subject(&store, &SubjectKey::parse("ana/cells").unwrap()).unwrap();
        assert_eq!(
            store.episode_count(&ana).unwrap(),
            1,
            "the earlier import is untouched"
        );
    }
}

const CANARY: &str = "Zqxv7731Canary";

/// Every byte of the store's files (database, log, shared memory).
fn store_bytes(db: &std::path::Path) -> Vec<u8> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .flat_map(|suffix| {
            let mut p = db.as_os_str().to_owned();
            p.push(suffix);
            std::fs::read(std::path::PathBuf::from(p)).unwrap_or_default()
        })
        .collect()
}

fn holds_canary(db: &std::path::Path) -> bool {
    let bytes = store_bytes(db);
    bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes())
}

#[test]
fn sigkill_after_an_erasures_commit_leaves_the_compaction_to_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    let bin = env!("CARGO_BIN_EXE_tutor-memory");
    let tm = || {
        let mut c = Command::new(bin);
        // The hashing embedder: this test is about the erasure, not the model.
        c.env("TUTOR_MEMORY_EMBEDDER", "hash").arg("--db").arg(&db);
        c
    };
    let history = dir.path().join("canary.jsonl");
    big_history_about(&history, "canary", CANARY);
    let ok = tm().arg("import").arg(&history).output().unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(holds_canary(&db));

    let mut child = tm()
        .args(["erase", "--learner", "canary", "--reference", "kill test"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as the erasure's record is committed: its compaction
    // (a VACUUM of the whole file) is then still to come.
    let started = Instant::now();
    let committed = loop {
        let erasures: i64 =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| c.query_row("SELECT count(*) FROM erasures", [], |r| r.get(0)))
                .unwrap_or(0);
        if erasures > 0 || child.try_wait().unwrap().is_some() {
            break erasures > 0;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no erasure");
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = child.kill(); // SIGKILL on Unix
    let _ = child.wait();
    assert!(committed, "the erase process ended without an erasure");

    // Read without opening the engine (which would finish the work).
    let owed: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM compaction_owed", [], |r| r.get(0))
        .unwrap();
    if owed > 0 {
        let store = SqliteStore::open(&db).unwrap();
        let s = require_subject(&store, &SubjectKey::parse("canary/big").unwrap()).unwrap();
        let report = verify(&store, &s, None).unwrap();
        assert_eq!(report.compaction_owed.len(), 1, "{report:?}");
        assert!(
            report
                .erasure_note()
                .unwrap()
                .contains("COMPACTION NOT FINISHED"),
            "{report:?}"
        );
        assert!(
            holds_canary(&db),
            "killed before its compaction, the files still hold the erased text"
        );
    } else {
        println!(
            "the compaction finished before the kill: the owed path was not reached this run (tm-brain's erase test reaches it every run)"
        );
    }
    // The next process to open the store finishes it before it serves.
    let verified = tm()
        .args(["verify", "--subject", "canary/big"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{said}");
    assert!(
        said.contains("intact") && !said.contains("COMPACTION"),
        "{said}"
    );
    assert!(!holds_canary(&db), "the files still hold the canary");
    let owed: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM compaction_owed", [], |r| r.get(0))
        .unwrap();
    assert_eq!(owed, 0);
    // Asked again: the erasure is not recorded twice.
    let again = tm()
        .args(["erase", "--learner", "canary", "--json"])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let erasures: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM erasures", [], |r| r.get(0))
        .unwrap();
    assert_eq!(erasures, 1);
}
