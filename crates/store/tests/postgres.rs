//! What stays PostgreSQL-specific beyond the contract: the database itself
//! refuses edits behind the interface's back, tampering with the triggers
//! off is caught by the chain, a learner's text round-trips byte for byte
//! (NUL included), the same episodes make the same chain head as on SQLite,
//! and migrations run once however many processes open the database. Each
//! check says it was skipped when there is no PostgreSQL on the machine.

use chrono::{Duration, TimeZone, Utc};
use std::sync::Arc;
use tm_model::episodes::{Break, ChainState, Kind, NewEpisode, salience};
use tm_model::subject::{Subject, SubjectKey};
use tm_store::postgres::cluster::TestDb;
use tm_store::postgres::{PgEngine, PgStore};
use tm_store::prelude::*;
use tm_store::{Engine, Error, Store, StoreExt, verify};

fn db() -> Option<TestDb> {
    match TestDb::create() {
        Ok(db) => Some(db),
        Err(why) => {
            eprintln!("skipped: this check needs PostgreSQL: {why}");
            None
        }
    }
}

fn key() -> SubjectKey {
    SubjectKey::parse("ana/cells").unwrap()
}

fn episode(i: usize) -> NewEpisode {
    let mut data = serde_json::Map::new();
    data.insert("n".into(), (i as i64).into());
    if i.is_multiple_of(3) {
        data.insert("topic".into(), format!("topic {i}").into());
        data.insert("verdict".into(), "right".into());
    }
    NewEpisode {
        kind: if i.is_multiple_of(3) {
            Kind::Check
        } else {
            Kind::Question
        },
        at: Utc.with_ymd_and_hms(2026, 3, 1, 9, 0, 0).unwrap() + Duration::minutes(i as i64),
        salience: salience(Kind::Question, None),
        summary: format!("question {i}"),
        text: format!(
            "What is organelle number {i}? \u{0} ünïcödé 細胞 '); DROP TABLE episodes;--"
        ),
        concepts: vec![format!("organelle {}", i % 4)],
        evidence: vec![],
        data,
        external_id: i.is_multiple_of(2).then(|| format!("e{i}\u{0}")),
        import_key: None,
        // A fixed salt, so that both engines seal the same bytes.
        salt: Some([i as u8; tm_model::episodes::SALT_BYTES]),
    }
}

fn fill(store: &mut dyn Store, n: usize) -> Subject {
    store
        .write(|tx| {
            let s = tx.ensure_subject(
                tm_store::Owner::Operator,
                &key(),
                "Cells \u{0} title",
                Some("en"),
                Utc::now(),
            )?;
            for i in 0..n {
                tx.append(&s, &episode(i))?;
            }
            Ok(s)
        })
        .unwrap()
}

fn filled(db: &TestDb, n: usize) -> (PgStore, Subject) {
    let engine = PgEngine::open(&db.url).unwrap();
    let mut store = engine.connect_pg().unwrap();
    let subject = fill(&mut store, n);
    (store, subject)
}

fn raw(store: &PgStore, sql: &str) -> Result<u64, String> {
    store
        .raw_client()
        .execute(sql, &[])
        .map_err(|e| Error::from(e).to_string())
}

#[test]
fn the_database_refuses_edits_behind_the_interface() {
    let Some(db) = db() else { return };
    let (mut store, subject) = filled(&db, 3);
    let episode_id = store.episodes(&subject, 2, 1).unwrap()[0].id;
    store
        .write(|tx| tx.annotate(episode_id, "note", Utc::now(), &serde_json::json!({})))
        .unwrap();
    for (sql, refusal) in [
        (
            "UPDATE episodes SET at = at + 1 WHERE seq = 2",
            "append-only",
        ),
        ("DELETE FROM episodes WHERE seq = 2", "append-only"),
        ("TRUNCATE episodes CASCADE", "append-only"),
        ("UPDATE annotations SET kind = 'x'", "append-only"),
        ("DELETE FROM annotations", "append-only"),
    ] {
        let err = raw(&store, sql).expect_err(sql);
        assert!(err.contains(refusal), "{sql}: {err}");
    }
    assert_eq!(store.episode_count(&subject).unwrap(), 3);
    assert_eq!(
        verify(&store, &subject, None).unwrap().state,
        ChainState::Intact
    );
}

#[test]
fn tampering_with_the_triggers_off_is_caught_by_the_chain() {
    let Some(db) = db() else { return };
    let (store, subject) = filled(&db, 10);
    // An attacker with a superuser's session: no triggers, no foreign keys.
    raw(&store, "SET session_replication_role = replica").unwrap();
    raw(
        &store,
        "UPDATE episodes SET text = convert_to('What is a nucleus?', 'UTF8') WHERE seq = 6",
    )
    .unwrap();
    let report = verify(&store, &subject, None).unwrap();
    assert_eq!(report.state, ChainState::Broken);
    assert!(
        matches!(report.first_break, Some(Break::Content { seq: 6 })),
        "{report:?}"
    );
    raw(&store, "DELETE FROM episodes WHERE seq = 3").unwrap();
    assert_eq!(
        verify(&store, &subject, None).unwrap().first_break,
        Some(Break::MissingSeq {
            expected: 3,
            found: 4
        })
    );
}

#[test]
fn free_text_round_trips_and_the_chain_head_matches_sqlite() {
    let Some(db) = db() else { return };
    let (pg, subject) = filled(&db, 30);
    let mut lite = tm_store::sqlite::SqliteStore::open_in_memory().unwrap();
    let lite_subject = fill(&mut lite, 30);
    assert_eq!(subject.title, "Cells \u{0} title");
    let (a, b) = (
        pg.episodes(&subject, 1, 100).unwrap(),
        lite.episodes(&lite_subject, 1, 100).unwrap(),
    );
    assert_eq!(a.len(), 30);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(
            (&x.text, &x.summary, &x.external_id, &x.data, x.hash),
            (&y.text, &y.summary, &y.external_id, &y.data, y.hash)
        );
    }
    assert_eq!(
        pg.head(&subject).unwrap(),
        lite.head(&lite_subject).unwrap()
    );
    let found = pg
        .episode_by_external_id(&subject, "e4\u{0}")
        .unwrap()
        .unwrap();
    assert_eq!(found.seq, 5);
    // The facts read for recall agree too (a check's topic holds free text).
    let ids: Vec<i64> = a.iter().map(|e| e.id).collect();
    let lite_ids: Vec<i64> = b.iter().map(|e| e.id).collect();
    let facts = pg.candidate_facts(&subject, &ids).unwrap();
    let lite_facts = lite.candidate_facts(&lite_subject, &lite_ids).unwrap();
    for (x, y) in facts.iter().zip(&lite_facts) {
        assert_eq!(
            (&x.topic, &x.verdict, x.kind),
            (&y.topic, &y.verdict, y.kind)
        );
    }
    // Full-text ranking: one subject per store, so the same order and scores.
    let terms = vec![
        "organelle".to_string(),
        "12".to_string(),
        "ünïcödé".to_string(),
    ];
    let pg_hits = pg.term_hits(&subject, &terms, 10).unwrap();
    let lite_hits = lite.term_hits(&lite_subject, &terms, 10).unwrap();
    assert_eq!(pg_hits.len(), lite_hits.len());
    for ((_, x), (_, y)) in pg_hits.iter().zip(&lite_hits) {
        assert!((x - y).abs() < 1e-9, "{pg_hits:?} vs {lite_hits:?}");
    }
}

#[test]
fn migrations_run_once_however_many_open_at_once() {
    let Some(db) = db() else { return };
    let url = Arc::new(db.url.clone());
    let opened: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgEngine::open(&url).map(|_| ()))
        })
        .collect();
    for t in opened {
        t.join().unwrap().unwrap();
    }
    let engine = PgEngine::open(&db.url).unwrap();
    let store = engine.connect().unwrap();
    let version = store.schema_version().unwrap();
    assert!(version >= 1);
    let rows: i64 = engine
        .connect_pg()
        .unwrap()
        .raw_client()
        .query_one("SELECT COUNT(*) FROM tm_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, version, "each migration recorded once");
    // A database from a newer build is refused, by opening and by connecting.
    raw(
        &engine.connect_pg().unwrap(),
        &format!("INSERT INTO tm_schema (version) VALUES ({})", version + 1),
    )
    .unwrap();
    assert!(matches!(
        PgEngine::open(&db.url),
        Err(Error::SchemaTooNew { .. })
    ));
    assert!(matches!(engine.connect(), Err(Error::SchemaTooNew { .. })));
}

#[test]
fn a_bad_url_or_an_absent_server_is_a_clear_error() {
    let err = tm_store::open("postgres://nobody@127.0.0.1:1/none")
        .err()
        .expect("no server listens on port 1");
    let text = err.to_string();
    assert!(
        text.contains("cannot open the database at postgres://nobody@127.0.0.1:1/none"),
        "{text}"
    );
    let err = tm_store::open("postgres://u:secret@127.0.0.1:1/x")
        .err()
        .unwrap();
    assert!(!err.to_string().contains("secret"), "{err}");
}
