//! Through the binary: what `teach` and `answer` record is indexed like
//! every other event (full text and a vector), so semantic recall sees it.

use std::process::Command;
use tm_model::subject::SubjectKey;
use tm_store::prelude::*;
use tm_store::require_subject;
use tm_store::sqlite::SqliteStore;

mod common;

use common::{ok as cli, sample_taught};

#[test]
fn teach_and_answer_from_the_command_line_leave_no_episode_without_a_vector() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    sample_taught(&db);
    let answered = cli(
        &db,
        &[
            "answer",
            "--subject",
            "ana/cell-biology",
            "--at",
            "2026-11-20T10:01:00Z",
            "ATP carries energy inside the cell.",
        ],
    );
    assert!(answered.contains("answer recorded"), "{answered}");

    let store = SqliteStore::open(&db).unwrap();
    let s = require_subject(&store, &SubjectKey::parse("ana/cell-biology").unwrap()).unwrap();
    let last_two: Vec<_> = store
        .episodes(&s, 1, usize::MAX)
        .unwrap()
        .into_iter()
        .rev()
        .take(2)
        .collect();
    assert_eq!(
        last_two.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["answer", "taught"]
    );
    assert_eq!(
        store.count_missing_vectors(&s, "hash-v1-384").unwrap(),
        0,
        "every episode, the taught one and the answer included, has a vector"
    );
    let hits = store.term_hits(&s, &["currency".to_string()], 10).unwrap();
    assert!(
        hits.iter().any(|(id, _)| *id == last_two[1].id),
        "the taught episode is in the full-text index"
    );
}

#[test]
fn an_export_folder_imports_into_a_new_store_with_the_same_heads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    sample_taught(&db);
    cli(&db, &["nightly", "--at", "2026-11-21T03:00:00Z"]);
    let out = dir.path().join("export");
    let said = cli(
        &db,
        &[
            "export",
            "--learner",
            "ana",
            "--out",
            out.to_str().unwrap(),
            "--at",
            "2026-11-21T00:00:00Z",
        ],
    );
    assert!(said.contains("importing it gives the same head"), "{said}");
    assert!(out.join("manifest.json").is_file());
    assert!(out.join("ana/cell-biology/history.jsonl").is_file());
    assert!(out.join("ana/cell-biology/beliefs.json").is_file());

    // A second export into the same folder is refused: nothing is mixed.
    let again = Command::new(env!("CARGO_BIN_EXE_tutor-memory"))
        .env("TUTOR_MEMORY_EMBEDDER", "hash")
        .arg("--db")
        .arg(&db)
        .args(["export", "--learner", "ana", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("not empty"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    let copy = dir.path().join("b.db");
    cli(&copy, &["import", out.to_str().unwrap()]);
    let head = |db: &std::path::Path| {
        let v: serde_json::Value =
            serde_json::from_str(&cli(db, &["checkpoint", "--subject", "ana/cell-biology"]))
                .unwrap();
        (v["seq"].clone(), v["head_hash"].clone())
    };
    assert_eq!(head(&db), head(&copy));
    let verified = cli(&copy, &["verify"]);
    assert!(verified.contains("intact"), "{verified}");
}

#[test]
fn a_history_named_by_its_bare_name_reads_its_files_from_the_current_folder() {
    // The README's first command, run from the history's own folder: the
    // history's parent is then empty, and its files' paths must still
    // resolve beside it.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bare.db");
    let folder = std::path::Path::new(common::SAMPLE).parent().unwrap();
    let out = common::tm(&db)
        .current_dir(folder)
        .args(["import", "history.jsonl"])
        .output()
        .unwrap();
    let said = common::succeeded(&["import", "history.jsonl"], out);
    assert!(said.contains("appended"), "{said}");

    // A file the history names that is missing: the error names the path tried.
    let elsewhere = dir.path().join("h");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("history.jsonl"),
        concat!(
            r#"{"type":"subject","learner":"ana","subject":"lost","title":"Lost"}"#,
            "\n",
            r#"{"type":"file","at":"2026-11-01T10:00:00Z","name":"missing.md","path":"files/missing.md"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = common::tm(&db)
        .current_dir(&elsewhere)
        .args(["import", "history.jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("files/missing.md"), "{err}");
    assert!(!err.contains("cannot read :"), "{err}");
}

#[test]
fn learner_names_are_per_owner_and_the_operator_says_whose() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("owners.db");
    cli(&db, &["import", common::SAMPLE]);
    cli(&db, &["keys", "create", "--tenant", "acme"]);
    let said = cli(&db, &["keys", "assign", "--tenant", "acme", "ana"]);
    assert!(said.contains("now belongs to tenant acme"), "{said}");
    // The operator makes an `ana` of its own: a second subject of that name.
    cli(&db, &["--owner", "-", "import", common::SAMPLE]);
    let ambiguous = common::run(&db, &["verify", "--subject", "ana/cell-biology"]);
    assert!(!ambiguous.status.success());
    let err = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        err.contains("tenant acme")
            && err.contains("the operator's own")
            && err.contains("--owner"),
        "{err}"
    );
    for owner in ["acme", "-"] {
        let ok = cli(
            &db,
            &["--owner", owner, "verify", "--subject", "ana/cell-biology"],
        );
        assert!(ok.contains("intact"), "{owner}: {ok}");
    }
    // Erasing `ana` must say whose; the operator's goes, acme's stays.
    let refused = common::run(&db, &["erase", "--learner", "ana"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("several owners"));
    cli(
        &db,
        &[
            "--owner",
            "-",
            "erase",
            "--learner",
            "ana",
            "--reference",
            "t1",
        ],
    );
    let acme = cli(
        &db,
        &["--owner", "acme", "verify", "--subject", "ana/cell-biology"],
    );
    assert!(
        acme.contains("intact") && !acme.contains("erased"),
        "{acme}"
    );
    // With the operator's own retired, the name means acme's again.
    let plain = cli(&db, &["verify", "--subject", "ana/cell-biology"]);
    assert!(!plain.contains("erased"), "{plain}");
}
