//! Graceful shutdown: a write in flight when the signal comes is finished,
//! answered and committed; afterwards the server takes no new connection.

use crate::common;

use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_write_in_flight_at_shutdown_is_answered_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let brain = tm_brain::Brain::open(
        &db.display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    let key = tm_server::auth::generate().unwrap();
    brain
        .add_api_key("acme", &key.prefix, &key.sha256, false, Utc::now())
        .unwrap();
    let mut served = common::serve(brain);
    let addr = served.addr;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let auth = format!("Bearer {}", key.secret);
    let base = format!("http://{addr}/v1/subjects");
    let res = agent
        .post(&base)
        .header("Authorization", &auth)
        .send_json(serde_json::json!({"learner":"ana","subject":"cells"}))
        .unwrap();
    assert_eq!(res.status(), 201);

    // A file upload of many pages takes a while to import: shut down while it runs.
    let pages: String = (0..400)
        .map(|i| format!("# Topic {i}\n\nThe **term {i}** is defined here at some length.\n\u{c}"))
        .collect();
    let (a2, auth2, url) = (
        agent.clone(),
        auth.clone(),
        format!("{base}/ana/cells/events"),
    );
    let writer = std::thread::spawn(move || {
        a2.post(&url)
            .header("Authorization", &auth2)
            .send_json(serde_json::json!({"type":"file","at":"2026-03-02T09:00:00Z","name":"big.txt","content":pages}))
            .map(|r| r.status().as_u16())
    });
    std::thread::sleep(Duration::from_millis(30));
    served.signal();
    let status = writer
        .join()
        .unwrap()
        .expect("the request in flight was answered");
    assert_eq!(status, 200);
    served.stop();

    // Committed before it was answered.
    let store = tm_store::sqlite::SqliteStore::open(&db).unwrap();
    let subject = tm_store::require_subject(
        &store,
        &tm_model::subject::SubjectKey::parse("ana/cells").unwrap(),
    )
    .unwrap();
    assert_eq!(
        tm_store::LogRead::episode_count(&store, &subject).unwrap(),
        1
    );
    // And the server is gone.
    assert!(std::net::TcpStream::connect(addr).is_err());
}
