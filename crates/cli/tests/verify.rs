//! `verify` through the binary: a corrupt row in one subject is a break at
//! its position (exit 2), and every other subject is still verified.

use common::run;

mod common;

fn history(learner: &str) -> String {
    let mut text = format!(
        r#"{{"type":"subject","learner":"{learner}","subject":"cells","title":"Cells","language":"en"}}"#
    );
    for i in 0..5 {
        text.push_str(&format!(
            "\n{{\"id\":\"q{i}\",\"type\":\"learner\",\"at\":\"2026-03-0{}T09:00:00Z\",\"text\":\"Question {i} about osmosis\"}}",
            i + 1
        ));
    }
    text
}

#[test]
fn a_corrupt_row_is_a_break_and_the_other_subjects_are_still_verified() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.db");
    for learner in ["ana", "bo", "cy"] {
        let h = dir.path().join(format!("{learner}.jsonl"));
        std::fs::write(&h, history(learner)).unwrap();
        let out = run(&db, &["import", h.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    {
        let store = tm_store::sqlite::SqliteStore::open(&db).unwrap();
        store
            .raw_connection()
            .execute_batch(
                "DROP TRIGGER episodes_no_update;
                 UPDATE episodes SET at = 'not a time' WHERE seq = 3
                   AND subject_id = (SELECT id FROM subjects WHERE key = 'bo/cells');",
            )
            .unwrap();
    }
    let out = run(&db, &["verify", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let by: std::collections::HashMap<String, &serde_json::Value> = reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["subject"].as_str().unwrap().to_string(), r))
        .collect();
    assert_eq!(by.len(), 3);
    assert_eq!(by["ana/cells"]["state"], "intact");
    assert_eq!(by["cy/cells"]["state"], "intact");
    assert_eq!(by["bo/cells"]["state"], "broken");
    assert_eq!(by["bo/cells"]["first_break"]["kind"], "unreadable");
    assert_eq!(by["bo/cells"]["first_break"]["seq"], 3);
    assert_eq!(by["bo/cells"]["head_seq"], 2);
    let text = run(&db, &["verify"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("seq 3: the row cannot be read"), "{text}");
}
