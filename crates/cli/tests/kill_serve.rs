//! `serve` killed (SIGKILL) again and again while clients write over HTTP:
//! every write the server acknowledged is in the store afterwards, and
//! every chain verifies. A write is acknowledged only once committed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tm_model::episodes::ChainState;
use tm_model::subject::SubjectKey;
use tm_store::prelude::*;
use tm_store::sqlite::SqliteStore;
use tm_store::{require_subject, verify};

mod common;

const CYCLES: usize = 20;
const WRITERS: usize = 4;

#[test]
fn every_acknowledged_write_survives_sigkill_of_serve() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let key = common::key(&db, "acme");
    let auth = format!("Bearer {key}");

    let mut acknowledged: Vec<String> = Vec::new();
    for cycle in 0..CYCLES {
        let (mut child, addr) = common::serve(&db);
        if cycle == 0 {
            let res = common::agent()
                .post(format!("http://{addr}/v1/subjects"))
                .header("Authorization", &auth)
                .send_json(serde_json::json!({
                    "learner": "ana", "subject": "cells", "title": "Cells",
                    "at": "2026-01-01T00:00:00Z"}))
                .unwrap();
            assert!(res.status().is_success(), "{:?}", res.status());
        }
        let running = Arc::new(AtomicBool::new(true));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (addr, auth, running) = (addr.clone(), auth.clone(), running.clone());
                std::thread::spawn(move || {
                    let agent = common::agent();
                    let mut ok = Vec::new();
                    let mut i = 0;
                    while running.load(Ordering::Relaxed) {
                        let id = format!("c{cycle}-w{w}-{i}");
                        i += 1;
                        let res = agent
                            .post(format!("http://{addr}/v1/subjects/ana/cells/events"))
                            .header("Authorization", &auth)
                            .send_json(serde_json::json!([{
                                "id": id, "type": "learner", "at": "2026-02-01T10:00:00Z",
                                "text": format!("Message {id} about osmosis")}]));
                        match res {
                            Ok(r) if r.status().is_success() => ok.push(id),
                            // The server is gone (or going): not acknowledged.
                            _ => {}
                        }
                    }
                    ok
                })
            })
            .collect();
        // Kill at a different moment each cycle, while the writers write.
        std::thread::sleep(Duration::from_millis(120 + (cycle as u64 * 37) % 250));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        running.store(false, Ordering::Relaxed);
        for w in writers {
            let ok = w.join().unwrap();
            acknowledged.extend(ok);
        }
    }
    assert!(
        acknowledged.len() > CYCLES,
        "the writers wrote too little to test anything: {}",
        acknowledged.len()
    );

    let store = SqliteStore::open(&db).unwrap();
    let subject = require_subject(&store, &SubjectKey::parse("ana/cells").unwrap()).unwrap();
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    let missing: Vec<&String> = acknowledged
        .iter()
        .filter(|id| {
            store
                .episode_by_external_id(&subject, id)
                .unwrap()
                .is_none()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged writes are missing: {:?}",
        missing.len(),
        acknowledged.len(),
        &missing[..missing.len().min(5)]
    );
    // Nothing is there twice, and nothing unacknowledged beyond the writes
    // in flight at each kill (at most one per writer per cycle).
    let stored = store.episode_count(&subject).unwrap() as usize;
    assert!(
        stored >= acknowledged.len() && stored <= acknowledged.len() + CYCLES * WRITERS,
        "{stored} stored, {} acknowledged",
        acknowledged.len()
    );
    eprintln!(
        "{CYCLES} kills: {} acknowledged writes, all present; {stored} episodes; chain intact",
        acknowledged.len()
    );
}
