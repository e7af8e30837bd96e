//! `bench probe`: what a hostile tenant and an unlucky operator do to a
//! running `serve`, and whether everyone else is still served meanwhile.
//!
//! It starts `serve --embedder hash` on a fresh store (this binary's, or
//! `--server-exe`'s: an older build, for the figures before a change) and
//! watches it from another loopback address (127.0.0.2) the whole time: a
//! fresh connection to `/healthz` every 50 ms, and the server's resident
//! memory. Meanwhile, one after the other, from 127.0.0.1:
//!
//! 1. **slow connections**: up to `--sockets` connections, half sending a
//!    head that never ends, half a body that stops at 11 of 1,000 bytes,
//!    held for `--seconds`;
//! 2. **cookies**: `--cookies` requests, each with a valid session cookie
//!    spelt anew (its expiry with ~100 KB of leading zeros);
//! 3. **a wide class**: one learner with `--files` files of 40 concepts and
//!    `--learners` empty learners on the same course, its page read by four
//!    clients at once;
//! 4. **a one-word file**: 20 MB of one word uploaded.
//!
//! Every loop is bounded in count and time, and talks only to the server it
//! started on loopback.

use anyhow::{Context, Result, bail};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// The binary whose `serve` is probed (default: this one).
    #[cfg_attr(feature = "cli", arg(long))]
    pub server_exe: Option<PathBuf>,
    /// Seconds the slow connections are held.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 15))]
    pub seconds: u64,
    /// Slow connections opened, at most.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 19_000))]
    pub sockets: usize,
    /// Requests with a respelt session cookie.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 3_000))]
    pub cookies: usize,
    /// Files of 40 concepts the wide class's first learner uploads.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 104))]
    pub files: usize,
    /// Empty learners on the wide class.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 400))]
    pub learners: usize,
}

/// One look at the server from the watcher's address.
struct Look {
    phase: usize,
    /// Milliseconds to a whole answer; `None`: no `200` within 8 s.
    ms: Option<f64>,
    rss_mib: Option<f64>,
}

const PHASES: [&str; 6] = [
    "at rest",
    "1. slow connections",
    "2. respelt cookies",
    "3. wide class",
    "4. one-word file",
    "after",
];

pub fn run(o: &Options) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("probe.db").display().to_string();
    let exe = match &o.server_exe {
        Some(p) => p.clone(),
        None => std::env::current_exe()?,
    };
    // Both ends hold many descriptors: this process takes what it may.
    let _ = tm_server::conn::raise_descriptor_limit();
    let out = std::process::Command::new(&exe)
        .args([
            "--db",
            &db,
            "--embedder",
            "hash",
            "keys",
            "create",
            "--tenant",
            "probe",
        ])
        .output()
        .context("creating a key")?;
    let key = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|w| w.starts_with("tm_"))
        .map(str::to_string)
        .context("`keys create` printed no key")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let log = std::fs::File::create(dir.path().join("serve.log"))?;
    let mut child = std::process::Command::new(&exe)
        .args([
            "--db",
            &db,
            "--embedder",
            "hash",
            "serve",
            "--addr",
            &addr.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting serve")?;
    let pid = child.id();
    let result = probe(o, addr, &key, pid);
    let _ = child.kill();
    let _ = child.wait();
    result
}

fn probe(o: &Options, addr: SocketAddr, key: &str, pid: u32) -> Result<()> {
    let up = Instant::now() + Duration::from_secs(60);
    while health(addr, "127.0.0.1").is_none() {
        if Instant::now() > up {
            bail!("the server did not come up on {addr}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("# bench probe: serve on {addr}, watched from 127.0.0.2");
    println!("machine: {}", super::machine());
    let phase = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let looks = Arc::new(Mutex::new(Vec::<Look>::new()));
    let watcher = {
        let (phase, stop, looks) = (phase.clone(), stop.clone(), looks.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let ms = health(addr, "127.0.0.2");
                let look = Look {
                    phase: phase.load(Ordering::Relaxed),
                    ms,
                    rss_mib: super::rss_mib(Some(pid)),
                };
                looks.lock().unwrap_or_else(|p| p.into_inner()).push(look);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(2));

    phase.store(1, Ordering::Relaxed);
    let slow = slow_connections(addr, o.sockets, Duration::from_secs(o.seconds));
    println!("1. {slow}");
    std::thread::sleep(Duration::from_secs(2));

    phase.store(2, Ordering::Relaxed);
    println!("2. {}", cookies(addr, key, o.cookies)?);

    phase.store(3, Ordering::Relaxed);
    println!("3. {}", wide_class(addr, key, o.files, o.learners)?);

    phase.store(4, Ordering::Relaxed);
    println!("4. {}", one_word(addr, key)?);

    phase.store(5, Ordering::Relaxed);
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    let _ = watcher.join();

    let looks = looks.lock().unwrap_or_else(|p| p.into_inner());
    let start = looks.iter().find_map(|l| l.rss_mib).unwrap_or(0.0);
    println!();
    println!("| phase | /healthz answered | p50 ms | max ms | resident MiB (most) |");
    println!("|---|---|---|---|---|");
    for (i, name) in PHASES.iter().enumerate() {
        let mine: Vec<&Look> = looks.iter().filter(|l| l.phase == i).collect();
        let mut ms: Vec<f64> = mine.iter().filter_map(|l| l.ms).collect();
        ms.sort_by(f64::total_cmp);
        let most = mine.iter().filter_map(|l| l.rss_mib).fold(0.0, f64::max);
        let at = |q: f64| {
            ms.get(((ms.len() as f64 - 1.0) * q).round() as usize)
                .map_or("–".to_string(), |v| format!("{v:.1}"))
        };
        println!(
            "| {name} | {} of {} | {} | {} | {most:.0} |",
            ms.len(),
            mine.len(),
            at(0.5),
            at(1.0)
        );
    }
    let end = looks.iter().rev().find_map(|l| l.rss_mib).unwrap_or(0.0);
    let most = looks.iter().filter_map(|l| l.rss_mib).fold(0.0, f64::max);
    println!(
        "\nresident memory: {start:.0} MiB at rest, {most:.0} MiB at most (+{:.0}), {end:.0} MiB at the end",
        most - start
    );
    Ok(())
}

/// A connection to `addr` from the loopback address `from`.
fn connect_from(addr: SocketAddr, from: &str) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    let local: SocketAddr = format!("{from}:0")
        .parse()
        .map_err(|_| std::io::Error::other("a bad address"))?;
    socket.bind(&local.into())?;
    socket.connect_timeout(&addr.into(), Duration::from_secs(8))?;
    Ok(socket.into())
}

/// Milliseconds to a whole `200` from `/healthz`, asked from `from` on a
/// fresh connection; `None` when it did not come within 8 s.
fn health(addr: SocketAddr, from: &str) -> Option<f64> {
    let t = Instant::now();
    let mut s = connect_from(addr, from).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(8))).ok()?;
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    out.starts_with(b"HTTP/1.1 200")
        .then(|| t.elapsed().as_secs_f64() * 1e3)
}

/// One request on a fresh connection: the status and the body's length.
fn exchange(addr: SocketAddr, request: &[u8]) -> Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    // The server may answer and close before it has read a huge request.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let head_end = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(out.len(), |i| i + 4);
    let status = std::str::from_utf8(out.get(9..12).unwrap_or(b"000"))
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, out.split_off(head_end)))
}

fn slow_connections(addr: SocketAddr, most: usize, hold: Duration) -> String {
    let started = Instant::now();
    let mut held = Vec::new();
    let mut failed = None;
    for i in 0..most {
        if started.elapsed() > hold {
            break;
        }
        match TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(mut s) => {
                let part: &[u8] = if i % 2 == 0 {
                    b"GET /v1/subjects HTTP/1.1\r\nHost: probe\r\n"
                } else {
                    b"POST /v1/subjects HTTP/1.1\r\nHost: probe\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"learner\":"
                };
                let _ = s.write_all(part);
                held.push(s);
            }
            Err(e) => {
                failed = Some(e.to_string());
                break;
            }
        }
    }
    let opened = held.len();
    let took = started.elapsed().as_secs_f64();
    if let Some(rest) = hold.checked_sub(started.elapsed()) {
        std::thread::sleep(rest);
    }
    // Which the server has closed by now (refused at once, or timed out).
    let mut closed = 0;
    for s in &held {
        let _ = s.set_nonblocking(true);
        let mut buf = [0u8; 512];
        let mut s = s;
        loop {
            match s.read(&mut buf) {
                Ok(0) => {
                    closed += 1;
                    break;
                }
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    closed += 1;
                    break;
                }
            }
        }
    }
    drop(held);
    format!(
        "slow connections: {opened} opened in {took:.1} s{}, held {:.0} s; {closed} closed by the server by then",
        failed.map_or(String::new(), |e| format!(" (then: {e})")),
        hold.as_secs_f64()
    )
}

fn cookies(addr: SocketAddr, key: &str, n: usize) -> Result<String> {
    // The session cookie the home page sets, from the raw answer's head.
    let mut s = TcpStream::connect(addr)?;
    s.write_all(
        format!("GET /?key={key} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n").as_bytes(),
    )?;
    let mut head = String::new();
    s.read_to_string(&mut head)?;
    let cookie = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("set-cookie: tm_tenant=")
                .then(|| {
                    l["set-cookie: ".len()..]
                        .split(';')
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
        })
        .with_context(|| format!("no session cookie in {head:?}"))?;
    let value = cookie.trim_start_matches("tm_tenant=");
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() != 4 {
        bail!("an unexpected cookie {cookie}");
    }
    let started = Instant::now();
    let counts = Mutex::new(std::collections::BTreeMap::<u16, usize>::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let zeros = "0".repeat(100_000 + i);
                    let request = format!(
                        "GET / HTTP/1.1\r\nHost: probe\r\nCookie: tm_tenant=v1.{}.{zeros}{}.{}\r\nConnection: close\r\n\r\n",
                        parts[1], parts[2], parts[3]
                    );
                    let status = exchange(addr, request.as_bytes()).map_or(0, |(s, _)| s);
                    *counts.lock().unwrap_or_else(|p| p.into_inner()).entry(status).or_default() += 1;
                }
            });
        }
    });
    let counts = counts.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok(format!(
        "respelt cookies: {n} requests of ~100 KB cookies in {:.1} s; answers {}",
        started.elapsed().as_secs_f64(),
        statuses(&counts)
    ))
}

fn statuses(counts: &std::collections::BTreeMap<u16, usize>) -> String {
    counts
        .iter()
        .map(|(s, n)| {
            format!(
                "{n}× {}",
                if *s == 0 {
                    "none".to_string()
                } else {
                    s.to_string()
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(120)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// A made-up word for concept `i`: three syllables, distinct for distinct `i`.
fn word(i: usize) -> String {
    const S: [&str; 20] = [
        "ba", "ke", "lo", "mi", "nu", "pa", "re", "si", "to", "vu", "da", "fe", "gi", "ho", "ju",
        "ka", "le", "mo", "ni", "po",
    ];
    format!("{}{}{}", S[i % 20], S[(i / 20) % 20], S[(i / 400) % 20])
}

fn wide_class(addr: SocketAddr, key: &str, files: usize, learners: usize) -> Result<String> {
    let agent = agent();
    let base = format!("http://{addr}");
    let auth = format!("Bearer {key}");
    let create = |learner: &str| -> Result<u16> {
        let r = agent
            .post(format!("{base}/v1/subjects"))
            .header("Authorization", &auth)
            .send_json(
                serde_json::json!({"learner": learner, "subject": "wide", "title": "Wide"}),
            )?;
        Ok(r.status().as_u16())
    };
    create("aa-wide")?;
    let boundary = "probeboundary";
    let mut uploads = std::collections::BTreeMap::<u16, usize>::new();
    for f in 0..files {
        let mut md = format!("# Unit {}\n\n", word(100_000 + f));
        for c in 0..40 {
            let w = format!("{} {}", word(f * 40 + c), word(7_000 + f * 40 + c));
            md.push_str(&format!(
                "## {w}\n\nA {w} is one of the course's topics.\n\n"
            ));
        }
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"unit-{f}.md\"\r\nContent-Type: text/markdown\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(md.as_bytes());
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let r = agent
            .post(format!("{base}/v1/subjects/aa-wide/wide/files"))
            .header("Authorization", &auth)
            .header(
                "Content-Type",
                &format!("multipart/form-data; boundary={boundary}"),
            )
            .send(&body[..])?;
        *uploads.entry(r.status().as_u16()).or_default() += 1;
    }
    for l in 0..learners {
        create(&format!("l{l:04}"))?;
    }
    let started = Instant::now();
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..3 {
                    let t = Instant::now();
                    let got = agent
                        .get(format!("{base}/classes/wide"))
                        .header("Authorization", &auth)
                        .call()
                        .ok()
                        .and_then(|mut r| {
                            let status = r.status().as_u16();
                            r.body_mut()
                                .with_config()
                                .limit(1 << 30)
                                .read_to_vec()
                                .ok()
                                .map(|b| (status, b.len()))
                        });
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((got, t.elapsed().as_secs_f64()));
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let most_bytes = results
        .iter()
        .filter_map(|(g, _)| g.map(|g| g.1))
        .max()
        .unwrap_or(0);
    let slowest = results.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    let ok = results
        .iter()
        .filter(|(g, _)| matches!(g, Some((200, _))))
        .count();
    Ok(format!(
        "wide class: {files} files of 40 concepts uploaded ({}) and {learners} empty learners; 4 clients × 3 reads of the page in {:.1} s: {ok} of {} answered 200, the largest {:.1} MB, the slowest {slowest:.2} s",
        statuses(&uploads),
        started.elapsed().as_secs_f64(),
        results.len(),
        most_bytes as f64 / 1e6
    ))
}

fn one_word(addr: SocketAddr, key: &str) -> Result<String> {
    let agent = agent();
    let boundary = "probeboundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"word.txt\"\r\nContent-Type: text/plain\r\n\r\n"
    )
    .into_bytes();
    body.extend(std::iter::repeat_n(b'a', 20_000_000));
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let t = Instant::now();
    let r = agent
        .post(format!("http://{addr}/v1/subjects/aa-wide/wide/files"))
        .header("Authorization", &format!("Bearer {key}"))
        .header(
            "Content-Type",
            &format!("multipart/form-data; boundary={boundary}"),
        )
        .send(&body[..])?;
    Ok(format!(
        "one-word file: 20 MB of one word uploaded in {:.1} s, answered {}",
        t.elapsed().as_secs_f64(),
        r.status().as_u16()
    ))
}
