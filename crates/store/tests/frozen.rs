//! An old database, frozen as a fixture, still opens, migrates and verifies.

use tm_model::episodes::ChainState;
use tm_model::episodes::{Kind, NewEpisode};
use tm_model::subject::SubjectKey;
use tm_store::prelude::*;
use tm_store::sqlite::SqliteStore;
use tm_store::{StoreExt, require_subject, verify};

#[test]
fn frozen_schema_v1_opens_migrates_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/schema-v1.db"),
        &path,
    )
    .unwrap();
    let mut store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 14);
    let subject = require_subject(&store, &SubjectKey::parse("ana/cell-biology").unwrap()).unwrap();
    // Learners and subjects were rebuilt (names per owner, retirement) with
    // their ids and rows: the operator's learner, live.
    assert_eq!(
        (subject.owner, subject.retired),
        (tm_store::Owner::Operator, false)
    );
    let fk_errors: i64 = store
        .raw_connection()
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(fk_errors, 0);
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(report.verified, 46);
    // The head hash written by schema v1's code: the canonical encoding is unchanged.
    assert_eq!(
        report.head_hash,
        "9052eec22e3a2a50d21dc44cb9089a4a1f2d0e8b758b9960c3a419e200cfd8c6"
    );
    // The migration backfilled the full-text index for the old episodes
    // (FTS5's own table: recall scores from the episodes' texts).
    let indexed: i64 = store
        .raw_connection()
        .query_row(
            "SELECT count(*) FROM episode_fts WHERE episode_fts MATCH ?1",
            [format!("s{} AND osmosis", subject.id)],
            |r| r.get(0),
        )
        .unwrap();
    assert!(indexed >= 4, "{indexed} rows indexed with osmosis");
    let hits = store
        .term_hits(&subject, &["osmosis".to_string()], 50)
        .unwrap();
    assert_eq!(hits.len() as i64, indexed, "{hits:?}");
    // The passage migration split the old file pages into passages.
    let passages = store.current_passages(&subject).unwrap();
    assert!(!passages.is_empty());
    let hits = store
        .passage_hits(&subject, &["osmosis".to_string()], 10)
        .unwrap();
    assert!(!hits.is_empty(), "no passage about osmosis");

    // The v1 chain continues with v2 episodes and still verifies, v1 rows as
    // v1 and the new row as v2.
    let at = chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
        .unwrap()
        .to_utc();
    store
        .write(|tx| {
            tx.append(
                &subject,
                &NewEpisode {
                    summary: "what is osmosis again".into(),
                    ..NewEpisode::plain(Kind::Question, at, "what is osmosis again?")
                },
            )
        })
        .unwrap();
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Intact, "{report:?}");
    assert_eq!(report.verified, 47);
    let encodings: Vec<i64> = store
        .raw_connection()
        .prepare("SELECT enc FROM episodes WHERE seq IN (46, 47) ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(encodings, vec![1, 2]);
}
