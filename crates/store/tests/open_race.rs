//! Workers that open one new database file at the same moment all succeed:
//! creating, switching to WAL and migrating wait for each other (a platform
//! starting two workers at once must not see "database is locked").

use std::sync::{Arc, Barrier};
use tm_store::sqlite::SqliteEngine;

#[test]
fn openers_of_one_new_file_wait_for_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for trial in 0..40 {
        let path = dir.path().join(format!("race{trial}.db"));
        let start = Arc::new(Barrier::new(4));
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let (path, start) = (path.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    SqliteEngine::open(&path).map(|_| ())
                })
            })
            .collect();
        for o in openers {
            if let Err(e) = o.join().unwrap() {
                failures.push(format!("trial {trial}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
