//! Throwaway PostgreSQL databases for tests and benchmarks (not for
//! application code).
//!
//! A server is found once per process: the one `TUTOR_MEMORY_TEST_PG` names
//! (an admin URL such as `postgres://tm@127.0.0.1:5432/postgres`; `.ci/run`
//! starts one and sets it), or else a private cluster started here from the
//! PostgreSQL binaries installed on the machine (`initdb`, `pg_ctl`, found
//! through `pg_config`, `/usr/lib/postgresql/*/bin` or `PATH`), in a
//! temporary folder, on a free port, stopped and removed by a watchdog when
//! this process ends however it ends. Each [`TestDb`] is then a fresh
//! database on that server, dropped with the value.
//!
//! Engine-parametrised tests ask [`location`] where to keep their data:
//! `TUTOR_MEMORY_TEST_ENGINE=postgres` makes it a fresh database (and a
//! missing server a test failure), anything else the SQLite path given.

use postgres::{Client, NoTls};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The engine-parametrised tests' choice: `TUTOR_MEMORY_TEST_ENGINE`.
pub const ENGINE_VAR: &str = "TUTOR_MEMORY_TEST_ENGINE";
/// An existing server to make test databases on.
pub const SERVER_VAR: &str = "TUTOR_MEMORY_TEST_PG";

/// Whether the engine-parametrised tests run on PostgreSQL.
pub fn postgres_requested() -> bool {
    std::env::var(ENGINE_VAR).is_ok_and(|v| v.eq_ignore_ascii_case("postgres"))
}

struct Server {
    /// URL of the server's `postgres` database, for CREATE/DROP DATABASE.
    admin: String,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static COUNTER: AtomicU32 = AtomicU32::new(0);

fn server() -> Result<&'static Server, String> {
    SERVER
        .get_or_init(|| match std::env::var(SERVER_VAR) {
            Ok(url) if !url.trim().is_empty() => Ok(Server { admin: url }),
            _ => start_cluster(),
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A fresh database, dropped when the value is.
pub struct TestDb {
    /// Connect here.
    pub url: String,
    name: String,
    admin: String,
}

impl TestDb {
    /// A fresh empty database, or why this machine has no server to make
    /// one on. A server that is there but fails is a panic, not a skip.
    pub fn create() -> Result<TestDb, String> {
        let server = server()?;
        let name = format!(
            "tm_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        off_runtime(|| {
            let mut admin = Client::connect(&server.admin, NoTls)
                .unwrap_or_else(|e| panic!("cannot reach the test server {}: {e:?}", server.admin));
            for sql in [
                format!("DROP DATABASE IF EXISTS {name}"),
                format!("CREATE DATABASE {name}"),
            ] {
                admin
                    .batch_execute(&sql)
                    .unwrap_or_else(|e| panic!("cannot create a test database: {e:?}"));
            }
        });
        Ok(TestDb {
            url: with_database(&server.admin, &name),
            name,
            admin: server.admin.clone(),
        })
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        off_runtime(|| {
            if let Ok(mut admin) = Client::connect(&self.admin, NoTls) {
                let _ = admin.batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ));
            }
        });
    }
}

/// Runs `f` on a thread of its own: the blocking client must not run inside
/// an async test's runtime.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// `url` naming database `db` instead of its own.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let after_scheme = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{db}?{q}"),
        None => format!("{base}/{db}"),
    }
}

/// Where an engine-parametrised test keeps its data: the SQLite path given,
/// or with `TUTOR_MEMORY_TEST_ENGINE=postgres` a fresh database (panicking
/// when there is no server: the run asked for one).
pub struct TestLocation {
    pub location: String,
    _db: Option<TestDb>,
}

impl TestLocation {
    pub fn as_str(&self) -> &str {
        &self.location
    }

    /// The location, its database kept until the server goes (for tests
    /// whose helpers return only what they built over it).
    pub fn keep(self) -> String {
        let location = self.location.clone();
        std::mem::forget(self);
        location
    }
}

pub fn location(sqlite_path: impl AsRef<Path>) -> TestLocation {
    if postgres_requested() {
        match TestDb::create() {
            Ok(db) => TestLocation {
                location: db.url.clone(),
                _db: Some(db),
            },
            Err(why) => panic!("{ENGINE_VAR}=postgres, but there is no PostgreSQL: {why}"),
        }
    } else {
        TestLocation {
            location: sqlite_path.as_ref().display().to_string(),
            _db: None,
        }
    }
}

// ---------------------------------------------------------------- a private cluster

fn bin_dir() -> Option<PathBuf> {
    let has = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file();
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if has(&d) {
            return Some(d);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let d = e.path().join("bin");
            has(&d).then_some((v, d))
        })
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return Some(d);
    }
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).find(|d| has(d)))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

fn start_cluster() -> Result<Server, String> {
    let bin = bin_dir().ok_or_else(|| {
        format!(
            "no PostgreSQL binaries (initdb, pg_ctl) on this machine, and {SERVER_VAR} is not set"
        )
    })?;
    // initdb refuses to run as root: then the cluster belongs to `postgres`.
    let owner = if is_root() { Some("postgres") } else { None };
    let dir = std::env::temp_dir().join(format!("tm-pg-{}-{}", std::process::id(), free_port()?));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let run = |program: &str, args: &[&str]| -> Result<(), String> {
        let exe = bin.join(program);
        let mut cmd = match owner {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    if let Some(user) = owner {
        let ok = Command::new("chown")
            .arg(user)
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Err(format!("cannot give {} to the {user} user", dir.display()));
        }
    }
    let data = dir.join("data");
    let data_s = data.display().to_string();
    let dir_s = dir.display().to_string();
    run(
        "initdb",
        &[
            "-D",
            &data_s,
            "-A",
            "trust",
            "-U",
            "tm",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ],
    )?;
    let port = free_port()?;
    let options = format!(
        "-p {port} -k {dir_s} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    );
    let log = dir.join("log").display().to_string();
    run(
        "pg_ctl",
        &["-D", &data_s, "-o", &options, "-l", &log, "-w", "start"],
    )?;
    // The watchdog: when this process ends (passed, failed, killed), the
    // cluster is stopped and its folder removed.
    let pg_ctl = bin.join("pg_ctl").display().to_string();
    let stop = match owner {
        Some(user) => format!("runuser -u {user} -- {pg_ctl}"),
        None => pg_ctl,
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
         {stop} -D '{data_s}' -m immediate stop >/dev/null 2>&1; rm -rf '{dir_s}'",
        pid = std::process::id()
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the cluster's watchdog: {e}"))?;
    Ok(Server {
        admin: format!("postgres://tm@127.0.0.1:{port}/postgres"),
    })
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn a_url_names_another_database() {
        assert_eq!(
            with_database("postgres://tm@127.0.0.1:5432/postgres", "x"),
            "postgres://tm@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://tm:pw@h:1/postgres?sslmode=disable", "x"),
            "postgres://tm:pw@h:1/x?sslmode=disable"
        );
        assert_eq!(with_database("postgres://tm@h", "x"), "postgres://tm@h/x");
    }
}
