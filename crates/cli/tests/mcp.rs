//! The MCP face driven by a real MCP client: the official Python SDK (`mcp`
//! on PyPI, run by `tests/mcp_client.py`) over stdio (`tutor-memory mcp`) and
//! over streamable HTTP (`/mcp` of `tutor-memory serve`, with the API's keys
//! and tenants). `.ci/run` installs the SDK in a virtual environment and names
//! its interpreter in TUTOR_MEMORY_MCP_PYTHON; without it the tests say they
//! were skipped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tutor-memory");
const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_client.py");

/// An interpreter that has the MCP SDK, or why there is none.
fn python() -> Result<String, String> {
    let python = std::env::var("TUTOR_MEMORY_MCP_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import mcp.client.session, httpx2"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Ok(python)
    } else {
        Err(format!(
            "skipped: {python} has no MCP SDK (pip install mcp; .ci/run does and sets TUTOR_MEMORY_MCP_PYTHON)"
        ))
    }
}

fn cli(db: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .env("TUTOR_MEMORY_EMBEDDER", "hash")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store holding the sample subject `ana/cell-biology`.
fn sample(dir: &Path) -> PathBuf {
    let db = dir.join("mcp.db");
    cli(
        &db,
        &[
            "import",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/cell-biology/history.jsonl"
            ),
        ],
    );
    db
}

fn run_client(python: &str, config: serde_json::Value) {
    let out = Command::new(python)
        .arg(CLIENT)
        .arg(config.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_mcp_client_over_stdio_records_events_and_finds_them_in_the_block() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            println!("{why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    run_client(
        &python,
        serde_json::json!({
            "mode": "stdio",
            "subject": "ana/cell-biology",
            "command": [BIN, "--db", db, "mcp"],
            "env": {"TUTOR_MEMORY_EMBEDDER": "hash"},
        }),
    );
}

/// `tutor-memory serve` on a free loopback port; killed when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_mcp_client_over_http_uses_the_api_keys_and_another_tenant_sees_nothing() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            println!("{why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let acme = cli(&db, &["keys", "create", "--tenant", "acme"]);
    let blue = cli(&db, &["keys", "create", "--tenant", "blue"]);
    cli(&db, &["keys", "assign", "--tenant", "acme", "ana"]);
    let mut child = Command::new(BIN)
        .env("TUTOR_MEMORY_EMBEDDER", "hash")
        .arg("--db")
        .arg(&db)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    // "serving … on http://127.0.0.1:PORT with …": the port the system chose.
    // The rest of stderr is drained, so the server never writes to a closed pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("on http://").nth(1) {
                let _ = tx.send(rest.split_whitespace().next().map(str::to_string));
            }
        }
    });
    let addr = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .ok()
        .flatten()
        .expect("the server said where it listens");
    run_client(
        &python,
        serde_json::json!({
            "mode": "http",
            "subject": "ana/cell-biology",
            "url": format!("http://{addr}/mcp"),
            "key": acme.trim(),
            "other_key": blue.trim(),
        }),
    );
    // Without a key the endpoint answers the API's 401.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut res = agent
        .post(&format!("http://{addr}/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .send_json(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .unwrap();
    assert_eq!(res.status(), 401);
    let body: serde_json::Value = res.body_mut().read_json().unwrap();
    assert_eq!(body["error"]["code"], "unauthorized");
    drop(server);
}
