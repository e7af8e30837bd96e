#![allow(dead_code)] // each test binary uses part of it
//! What the binary's tests share.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `tutor-memory --db DB` with the hashing embedder (these tests are about
/// the store and the service, not the model).
pub fn tm(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tutor-memory"));
    c.env("TUTOR_MEMORY_EMBEDDER", "hash").arg("--db").arg(db);
    c
}

/// Runs `tutor-memory --db DB ARGS…` to the end.
pub fn run(db: &Path, args: &[&str]) -> Output {
    tm(db).args(args).output().unwrap()
}

/// [`run`], which must succeed: its standard output.
pub fn ok(db: &Path, args: &[&str]) -> String {
    succeeded(args, run(db, args))
}

/// The standard output of a run of `args` that must have succeeded.
pub fn succeeded(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The sample history (`examples/cell-biology`).
pub const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/cell-biology/history.jsonl"
);

/// Imports the sample history into `db` and teaches one note on top.
pub fn sample_taught(db: &Path) {
    ok(db, &["import", SAMPLE]);
    let taught = ok(
        db,
        &[
            "teach",
            "--subject",
            "ana/cell-biology",
            "--at",
            "2026-11-20T10:00:00Z",
            "Remember that ATP is the cell's energy currency",
        ],
    );
    assert!(taught.contains("1 episode appended"), "{taught}");
}

/// `tutor-memory serve` on a free loopback port, once it answers /healthz:
/// the process and its address.
pub fn serve(db: &Path) -> (Child, String) {
    serve_with(db, &[])
}

/// [`serve`] with extra environment variables (a chat endpoint, say). The
/// server binds port 0 itself and its first line says where it listens, so
/// two servers started at once never race for one port.
pub fn serve_with(db: &Path, env: &[(&str, &str)]) -> (Child, String) {
    let mut child = tm(db)
        .envs(env.iter().copied())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let addr = loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(n > 0, "serve ended before it listened:\n{said}");
        said.push_str(&line);
        if let Some(rest) = line.split(" on http://").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    // Keep reading what it says, so a full pipe never blocks it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let agent = agent();
    let deadline = Instant::now() + Duration::from_secs(60);
    while agent.get(format!("http://{addr}/healthz")).call().is_err() {
        assert!(Instant::now() < deadline, "serve did not come up");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, addr)
}

/// An HTTP client that returns error statuses as responses.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// A tenant's new API key in the store at `db`.
pub fn key(db: &Path, tenant: &str) -> String {
    let out = run(db, &["keys", "create", "--tenant", tenant]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}
