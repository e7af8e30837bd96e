//! End to end in headless Chromium: the demo subject's report page, served
//! on loopback, shows every concept of the map, and a link to a belief's
//! history opens it. A screenshot is saved under `target/e2e/` (a CI
//! artifact). Without Chromium (`/usr/bin/chromium`, or `$CHROMIUM`) the test
//! says it was skipped; CI installs it.

use crate::common;

use chrono::Utc;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn chromium() -> Option<PathBuf> {
    let p = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    p.exists().then_some(p)
}

/// Runs Chromium headless on `url` with extra arguments; returns its stdout.
fn run_chromium(bin: &Path, profile: &Path, args: &[&str], url: &str) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    out
}

#[test]
fn the_demo_report_shows_its_map_and_opens_a_belief_history_in_chromium() {
    let Some(bin) = chromium() else {
        println!("skipped: chromium is not installed (apt-get install chromium; CI does)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let history = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    );
    let brain = tm_brain::Brain::open(
        &db.display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    brain
        .import_file(Path::new(history), &mut |_, _, _| {})
        .unwrap();
    let key = tm_server::auth::generate().unwrap();
    brain
        .add_api_key("demo", &key.prefix, &key.sha256, false, Utc::now())
        .unwrap();
    brain.assign_learner("ana", "demo", Utc::now()).unwrap();
    let subject = brain.subject("ana/cell-biology").unwrap();
    let map = brain.map(&subject).unwrap();
    let concepts: Vec<String> = map.nodes().iter().map(|n| n.name.clone()).collect();
    let belief = brain.beliefs(&subject).unwrap().current[0]
        .subject_key
        .clone();
    let served = common::serve(brain);
    let addr = served.addr;

    let profile = dir.path().join("profile");
    let url = format!("http://{addr}/subjects/ana/cell-biology?key={}", key.secret);
    let dom = run_chromium(&bin, &profile, &["--dump-dom"], &url);
    assert!(
        dom.contains("Cell biology"),
        "the page loaded: {}",
        &dom[..dom.len().min(500)]
    );
    assert!(concepts.len() >= 5, "{concepts:?}");
    for name in &concepts {
        let escaped = name.replace('&', "&amp;").replace('"', "&quot;");
        assert!(
            dom.contains(&format!("data-concept=\"{escaped}\"")),
            "the map shows {name}"
        );
    }
    assert!(
        !dom.contains("<details class=\"belief\" open"),
        "closed by default"
    );

    // A link to a belief's history opens its <details>, with no script.
    let anchor = tm_server::view::belief_anchor(&belief);
    let dom = run_chromium(&bin, &profile, &["--dump-dom"], &format!("{url}#{anchor}"));
    let at = dom
        .find(&format!("id=\"{anchor}\""))
        .expect("the anchor is on the page");
    let opened = dom[..at]
        .rfind("<details")
        .expect("inside a details element");
    assert!(
        dom[opened..at].starts_with("<details class=\"belief\" open"),
        "the belief's history opened: {}",
        &dom[opened..at]
    );

    let shots = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/e2e"));
    std::fs::create_dir_all(shots).unwrap();
    // The whole page, and the page opened at the belief's history.
    for (file, target) in [
        ("report.png", url.clone()),
        ("report-belief.png", format!("{url}#{anchor}")),
    ] {
        let png = shots.join(file);
        let _ = std::fs::remove_file(&png);
        run_chromium(
            &bin,
            &profile,
            &[
                "--window-size=1200,2600",
                &format!("--screenshot={}", png.display()),
            ],
            &target,
        );
        let bytes = std::fs::read(&png).expect("the screenshot was written");
        assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
        assert!(
            bytes.len() > 10_000,
            "a real page, not a blank: {} bytes",
            bytes.len()
        );
        println!("screenshot: {}", png.display());
    }

    served.stop();
}
