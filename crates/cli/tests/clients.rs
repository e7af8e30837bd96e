//! The typed clients under `clients/` against a live `tutor-memory serve`:
//! the Python client's tests (pytest) and the TypeScript client's (node's
//! test runner) walk the clients' READMEs end to end, with a streamed turn
//! answered by a stand-in OpenAI-compatible chat endpoint, and check that
//! another tenant's learner is the typed 404.
//!
//! Each half runs where CI prepared it: `TUTOR_MEMORY_CLIENTS_PYTHON` names
//! a Python with `pip install ./clients/python pytest` done, and
//! `TUTOR_MEMORY_CLIENTS_NODE` a folder where `npm install <repo>/clients/typescript`
//! was done (`.ci/run` does both). Elsewhere each says it was skipped.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLIENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../clients");

/// A chat endpoint on loopback that streams a fixed answer in three pieces,
/// as an OpenAI-compatible server does, to every request.
fn stand_in_model() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let mut sse = String::new();
                for piece in ["The slope is ", "the rise for ", "each step to the right."] {
                    let chunk = serde_json::json!({"choices": [{"delta": {"content": piece}}]});
                    sse.push_str(&format!("data: {chunk}\n\n"));
                }
                sse.push_str("data: [DONE]\n\n");
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                    sse.len()
                );
            });
        }
    });
    format!("http://{addr}")
}

/// A served store with two tenants' keys: (server, address, key, other key).
fn service(dir: &Path) -> (std::process::Child, String, String, String) {
    let db = dir.join("clients.db");
    let key = common::key(&db, "acme");
    let other = common::key(&db, "globex");
    let model = stand_in_model();
    let (server, addr) = common::serve_with(
        &db,
        &[
            ("TUTOR_MEMORY_CHAT_URL", &model),
            ("TUTOR_MEMORY_CHAT_MODEL", "stand-in"),
        ],
    );
    (server, format!("http://{addr}"), key, other)
}

fn run(mut cmd: Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} failed:\n{stdout}\n{stderr}");
    eprintln!("{what}:\n{}", stdout.trim_end());
}

#[test]
fn the_python_client_walks_its_readme_against_a_live_service() {
    let Ok(python) = std::env::var("TUTOR_MEMORY_CLIENTS_PYTHON") else {
        eprintln!(
            "skipped: TUTOR_MEMORY_CLIENTS_PYTHON is not set (a Python with `pip install ./clients/python pytest`; .ci/run makes one)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url, key, other) = service(dir.path());
    let mut cmd = Command::new(python);
    // From a folder of its own, so the installed package is what is tested,
    // not the source folder beside the tests.
    cmd.current_dir(dir.path())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(Path::new(CLIENTS).join("python/tests"))
        .env("TM_URL", &url)
        .env("TM_KEY", &key)
        .env("TM_OTHER_KEY", &other)
        .env("TM_STREAMS", "1");
    run(cmd, "pytest clients/python/tests");
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn the_typescript_client_walks_its_readme_against_a_live_service() {
    let Ok(folder) = std::env::var("TUTOR_MEMORY_CLIENTS_NODE") else {
        eprintln!(
            "skipped: TUTOR_MEMORY_CLIENTS_NODE is not set (a folder where `npm install ./clients/typescript` was done; .ci/run makes one)"
        );
        return;
    };
    let folder = PathBuf::from(folder);
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url, key, other) = service(dir.path());
    // The test file runs beside the installed package, which it imports by name.
    let test = folder.join("walkthrough.test.mjs");
    std::fs::copy(
        Path::new(CLIENTS).join("typescript/test/walkthrough.test.mjs"),
        &test,
    )
    .unwrap();
    let mut cmd = Command::new("node");
    cmd.current_dir(&folder)
        .args(["--test", "walkthrough.test.mjs"])
        .env("TM_URL", &url)
        .env("TM_KEY", &key)
        .env("TM_OTHER_KEY", &other)
        .env("TM_STREAMS", "1");
    run(
        cmd,
        "node --test clients/typescript/test/walkthrough.test.mjs",
    );

    // The README's walk-through as written (its address and key replaced),
    // compiled by the package's pinned tsc (a type error fails it) and run.
    let readme = std::fs::read_to_string(Path::new(CLIENTS).join("typescript/README.md")).unwrap();
    let code = readme
        .split("```ts\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README has a ts walk-through");
    assert!(code.contains("\"http://127.0.0.1:8080\"") && code.contains("\"tm_…\""));
    let code = code
        .replace("\"http://127.0.0.1:8080\"", &format!("{url:?}"))
        .replace("\"tm_…\"", &format!("{key:?}"));
    std::fs::write(folder.join("readme.mts"), code).unwrap();
    let tsc = Path::new(CLIENTS).join("typescript/node_modules/.bin/tsc");
    assert!(
        tsc.exists(),
        "{} is missing: run `npm ci` in clients/typescript (.ci/run does)",
        tsc.display()
    );
    let mut cmd = Command::new(tsc);
    cmd.current_dir(&folder).args([
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--strict",
        "readme.mts",
    ]);
    run(cmd, "tsc README.md's walk-through");
    let mut cmd = Command::new("node");
    cmd.current_dir(&folder).arg("readme.mjs");
    run(cmd, "node README.md's walk-through");
    let _ = server.kill();
    let _ = server.wait();
}
