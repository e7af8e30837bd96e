//! `tools/verify_chain.py`, a verifier written from ARCHITECTURE.md's
//! description of the chain hash alone, agrees with `tutor-memory verify` on
//! an intact store and on tampered copies: an outsider can check our log.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn python() -> Option<String> {
    let ok = Command::new("python3").arg("--version").output().ok()?;
    ok.status.success().then(|| "python3".to_string())
}

fn ours(db: &Path) -> (Option<i32>, serde_json::Value) {
    let out = common::run(db, &["verify", "--json"]);
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

fn theirs(py: &str, db: &Path) -> (Option<i32>, serde_json::Value) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/verify_chain.py");
    let out = Command::new(py)
        .arg(script)
        .arg(db)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

/// What both must agree on (the wording of a reason may differ).
fn essentials(reports: &serde_json::Value) -> Vec<String> {
    reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} {} {}",
                r["subject"],
                r["state"],
                r["head_seq"],
                r["head_hash"],
                r["first_break"]["kind"],
                r["first_break"]["seq"],
                r["erased"]
            )
        })
        .collect()
}

fn copy_with(dir: &Path, from: &Path, name: &str, sql: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap();
    let store = tm_store::sqlite::SqliteStore::open(&to).unwrap();
    store
        .raw_connection()
        .execute_batch(&format!(
            "PRAGMA foreign_keys = OFF; DROP TRIGGER episodes_no_update; DROP TRIGGER episodes_no_delete; {sql}"
        ))
        .unwrap();
    to
}

#[test]
fn a_verifier_written_from_the_docs_agrees_with_ours() {
    let Some(py) = python() else {
        eprintln!("skipped: python3 is not installed, so the outside verifier cannot run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cell-biology/history.jsonl");
    let out = common::tm(&db).arg("import").arg(&sample).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One connection's checkpoint, so the copies hold every row.
    tm_store::sqlite::SqliteStore::open(&db)
        .unwrap()
        .raw_connection()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    let cases = [
        ("intact.db", "", 0),
        (
            "edited.db",
            "UPDATE episodes SET text = text || '!' WHERE seq = 12;",
            2,
        ),
        ("deleted.db", "DELETE FROM episodes WHERE seq = 20;", 2),
        (
            "swapped.db",
            "UPDATE episodes SET seq = -1 WHERE seq = 4; UPDATE episodes SET seq = 4 WHERE seq = 5; UPDATE episodes SET seq = 5 WHERE seq = -1;",
            2,
        ),
        (
            "typed.db",
            "UPDATE episodes SET at = 'noon' WHERE seq = 9;",
            2,
        ),
        (
            "not-utf8.db",
            "UPDATE episodes SET summary = CAST(X'C328' AS TEXT) WHERE seq = 6;",
            2,
        ),
        // A v2 row dressed up as an erased v1 row (whose own fields can no
        // longer be checked), its kind changed: a downgrade both refuse.
        (
            "downgraded.db",
            "INSERT INTO erasures (at, scope, target, reference, subjects, episodes) VALUES (0, 'subject', 'x', '', 1, 1);
             UPDATE episodes SET enc = 1, digest = NULL, salt = NULL, summary = '', text = '', concepts = '[]',
                    evidence = '[]', data = '{}', external_id = NULL, erased_by = 1, kind = 'quiz' WHERE seq = 7;",
            2,
        ),
    ];
    for (name, sql, code) in cases {
        let copy = copy_with(dir.path(), &db, name, sql);
        let (our_code, our) = ours(&copy);
        let (their_code, their) = theirs(&py, &copy);
        assert_eq!(our_code, Some(code), "{name}: {our}");
        assert_eq!(their_code, Some(code), "{name}: {their}");
        assert_eq!(essentials(&our), essentials(&their), "{name}");
    }

    // Erased on request: both still verify it (v2 rows over their stored
    // digests), and both catch a changed time on an erased row. The frozen
    // v1 fixture erased: v1 rows checked by their links.
    let v1 = dir.path().join("v1.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../store/tests/fixtures/schema-v1.db"),
        &v1,
    )
    .unwrap();
    for (from, subject) in [(&db, "ana/cell-biology"), (&v1, "ana/cell-biology")] {
        let erased = dir.path().join(format!(
            "erased-{}.db",
            if from == &db { "v2" } else { "v1" }
        ));
        std::fs::copy(from, &erased).unwrap();
        let out = common::tm(&erased)
            .args([
                "erase",
                "--subject",
                subject,
                "--reference",
                "ticket 1",
                "--at",
                "2026-12-01T10:00:00Z",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // An erased v1 row's own fields were hashed with its content, which
        // is gone: a changed time there can no longer be seen (the limit the
        // report states as `erased_v1`); on a v2 row it can.
        let moved = if from == &db { 2 } else { 0 };
        let cases = [
            ("erased-intact.db", "", 0),
            (
                "erased-moved.db",
                "UPDATE episodes SET at = at + 1 WHERE seq = 3;",
                moved,
            ),
            // Text put back into an erased row is not an erased row.
            (
                "erased-refilled.db",
                "UPDATE episodes SET text = 'forged' WHERE seq = 3;",
                2,
            ),
        ];
        for (name, sql, code) in cases {
            let name = format!("{}-{name}", erased.file_stem().unwrap().to_string_lossy());
            let copy = copy_with(dir.path(), &erased, &name, sql);
            let (our_code, our) = ours(&copy);
            let (their_code, their) = theirs(&py, &copy);
            assert_eq!(our_code, Some(code), "{name}: {our}");
            assert_eq!(their_code, Some(code), "{name}: {their}");
            assert_eq!(essentials(&our), essentials(&their), "{name}");
            if code == 0 {
                assert!(our[0]["erased"].as_u64().unwrap() > 0, "{name}: {our}");
            }
        }
    }
}
