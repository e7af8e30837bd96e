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

/// A screenshot of `url` saved as `target/e2e/{file}` (a CI artifact),
/// checked to be a PNG of a real page.
fn screenshot(bin: &Path, profile: &Path, file: &str, url: &str, size: &str) {
    let shots = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/e2e"));
    std::fs::create_dir_all(shots).unwrap();
    let png = shots.join(file);
    let _ = std::fs::remove_file(&png);
    run_chromium(
        bin,
        profile,
        &[
            &format!("--window-size={size}"),
            &format!("--screenshot={}", png.display()),
        ],
        url,
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

    // The whole page, and the page opened at the belief's history.
    screenshot(&bin, &profile, "report.png", &url, "1200,2600");
    screenshot(
        &bin,
        &profile,
        "report-belief.png",
        &format!("{url}#{anchor}"),
        "1200,2600",
    );

    served.stop();
}

/// A class of three learners of one tenant: each has `algebra-1` with the
/// same file; ana struggles with Slope, ben understands it, cy has no check
/// and was last seen a month before the view.
fn small_class(brain: &tm_brain::Brain, tenant: i64) {
    use tm_model::episodes::Verdict;
    use tm_model::events::{Event, EventBody, FileSource};
    let notes = "# Lines\n\n## Slope\n\nThe slope of a line is how much it rises for each step to the right.\n\n## Intercept\n\nThe intercept is where the line crosses the vertical axis.\n";
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&Utc)
    };
    for (learner, checks, day) in [
        (
            "ana",
            vec![("Slope", Verdict::Wrong)],
            "2026-11-28T10:00:00Z",
        ),
        (
            "ben",
            vec![("Slope", Verdict::Right), ("Intercept", Verdict::Wrong)],
            "2026-11-29T10:00:00Z",
        ),
        ("cy", vec![], "2026-10-30T10:00:00Z"),
    ] {
        let key = tm_model::subject::SubjectKey::parse(&format!("{learner}/algebra-1")).unwrap();
        let (s, _) = brain
            .create_subject(
                tenant,
                &key,
                "Algebra 1",
                Some("en"),
                None,
                at("2026-10-01T00:00:00Z"),
            )
            .unwrap();
        let mut events = vec![Event::new(
            at(day),
            EventBody::File {
                name: "lines.md".into(),
                source: FileSource::Content(notes.into()),
            },
        )];
        for (topic, verdict) in checks {
            events.push(Event::new(
                at(day),
                EventBody::Check {
                    topic: topic.into(),
                    verdict,
                    evaluation: None,
                    predicted: None,
                },
            ));
        }
        brain.record(&s, &events).unwrap();
    }
}

#[test]
fn the_home_page_leads_to_the_class_view_in_chromium() {
    let Some(bin) = chromium() else {
        println!("skipped: chromium is not installed (apt-get install chromium; CI does)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let brain = tm_brain::Brain::open(
        &dir.path().join("class.db").display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    let key = tm_server::auth::generate().unwrap();
    brain
        .add_api_key("school", &key.prefix, &key.sha256, false, Utc::now())
        .unwrap();
    let tenant = brain.tenant_id("school").unwrap().unwrap();
    small_class(&brain, tenant);
    // Another tenant's learner of the same course is in neither page.
    let other = tm_server::auth::generate().unwrap();
    brain
        .add_api_key("elsewhere", &other.prefix, &other.sha256, false, Utc::now())
        .unwrap();
    let elsewhere = brain.tenant_id("elsewhere").unwrap().unwrap();
    let key_dee = tm_model::subject::SubjectKey::parse("dee/algebra-1").unwrap();
    brain
        .create_subject(elsewhere, &key_dee, "Algebra 1", None, None, Utc::now())
        .unwrap();
    let served = common::serve(brain);
    let addr = served.addr;
    let profile = dir.path().join("profile");

    // The home page, opened once with the key: every learner, a link to the class.
    let home = run_chromium(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("http://{addr}/?key={}", key.secret),
    );
    for subject in ["ana/algebra-1", "ben/algebra-1", "cy/algebra-1"] {
        assert!(
            home.contains(&format!("data-subject=\"{subject}\"")),
            "the home lists {subject}: {}",
            &home[..home.len().min(800)]
        );
    }
    assert!(home.contains("href=\"/classes/algebra-1\""));
    assert!(
        !home.contains("dee/"),
        "another tenant's learner is not listed"
    );

    // The class page, with no key: the home's session opens it.
    let url = format!("http://{addr}/classes/algebra-1?at=2026-12-01T00:00:00Z");
    let class = run_chromium(&bin, &profile, &["--dump-dom"], &url);
    assert!(
        class.contains("id=\"class-grid\""),
        "the class page opened with the home's session: {}",
        &class[..class.len().min(800)]
    );
    let row = |learner: &str| {
        let from = class
            .find(&format!("data-learner=\"{learner}\""))
            .unwrap_or_else(|| panic!("{learner} has a row"));
        let to = class[from..].find("</li>").unwrap() + from;
        class[from..to].to_string()
    };
    // Each row says its standings in words (the learner's link) and the
    // grid's image draws them as colours: ana struggles with Slope, ben understands it and
    // struggles with Intercept, cy has no evidence on either.
    let label = |learner: &str| {
        let r = row(learner);
        let from = r.find("title=\"").expect("a row said in words") + "title=\"".len();
        r[from..from + r[from..].find('"').unwrap()].to_string()
    };
    assert_eq!(label("ana"), "struggles: Slope; no evidence: Intercept");
    assert_eq!(label("ben"), "understands: Slope; struggles: Intercept");
    assert_eq!(label("cy"), "no evidence: Intercept, Slope");
    assert!(
        class.contains("<img src=\"data:image/png;base64,"),
        "the grid's image"
    );
    assert!(!class.contains("data-learner=\"dee\""));
    let quiet = &class[class.find("id=\"quiet\"").expect("a quiet list")..];
    assert!(quiet[..quiet.find("</ul>").unwrap()].contains(">cy</a>"));

    screenshot(
        &bin,
        &profile,
        "home.png",
        &format!("http://{addr}/"),
        "1200,1400",
    );
    screenshot(&bin, &profile, "class.png", &url, "1200,1400");
    served.stop();
}
