//! The published OpenAPI document, tested as a property against a running
//! `serve` by schemathesis (PyPI): generated requests to every operation —
//! valid, invalid, hostile — never get a 5xx. Runs where
//! `TUTOR_MEMORY_SCHEMATHESIS` names the schemathesis executable (`.ci/run`
//! installs it); elsewhere it says plainly that it was skipped.

mod common;

#[test]
fn no_generated_request_gets_a_server_error() {
    let Ok(schemathesis) = std::env::var("TUTOR_MEMORY_SCHEMATHESIS") else {
        eprintln!(
            "skipped: TUTOR_MEMORY_SCHEMATHESIS is not set (pip install schemathesis, then point it at the executable)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("o.db");
    let key = common::key(&db, "acme");
    let (mut server, addr) = common::serve(&db);
    let created = common::agent()
        .post(format!("http://{addr}/v1/subjects"))
        .header("Authorization", &format!("Bearer {key}"))
        .send_json(serde_json::json!({
            "learner": "ana", "subject": "cells", "title": "Cells", "at": "2026-01-01T00:00:00Z"}))
        .unwrap();
    assert!(created.status().is_success());
    // Path parameters that exist, so generated requests reach the handlers.
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        "[parameters]\n\"path.learner\" = \"ana\"\n\"path.subject\" = \"cells\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(&schemathesis)
        .current_dir(dir.path())
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("http://{addr}/v1/openapi.json")])
        .args(["-H", &format!("Authorization: Bearer {key}")])
        .args(["-c", "not_a_server_error", "-n", "25", "--seed", "1"])
        .args(["--request-timeout", "10"])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schemathesis found failures:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = report
        .lines()
        .find(|l| l.contains(" generated, "))
        .unwrap_or("no summary line");
    eprintln!("schemathesis: {}", summary.trim());
}
