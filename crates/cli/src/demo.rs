//! `demo`: builds the sample subject shipped in `examples/` (compiled into the
//! binary, so the demo runs from anywhere) and shows what the memory holds.

use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;
use tm_model::subject::SubjectKey;
use tm_store::Store;

/// The sample subject: its history and the files the history names.
pub(crate) const SAMPLE: &[(&str, &str)] = &[
    (
        "history.jsonl",
        include_str!("../../../examples/cell-biology/history.jsonl"),
    ),
    (
        "files/cells.md",
        include_str!("../../../examples/cell-biology/files/cells.md"),
    ),
    (
        "files/cells-v2.md",
        include_str!("../../../examples/cell-biology/files/cells-v2.md"),
    ),
    (
        "files/transport.md",
        include_str!("../../../examples/cell-biology/files/transport.md"),
    ),
    (
        "files/notes.txt",
        include_str!("../../../examples/cell-biology/files/notes.txt"),
    ),
];

pub fn run(db: &Path, embedder: &str, model_dir: Option<&Path>, serve: bool) -> Result<ExitCode> {
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", db.display());
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the old demo database {p}")),
        }
    }
    let dir = tempfile::tempdir().context("creating a folder for the sample files")?;
    for (name, text) in SAMPLE {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    let mut store = Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    let history = dir.path().join("history.jsonl");

    println!("== Importing the sample subject into {}", db.display());
    let recaller = crate::recaller(embedder, model_dir)?;
    let report = crate::import_with_progress(
        &mut store,
        &history,
        &tm_ingest::extract::OfflineExtractor::default(),
        Some(&recaller),
    )?;
    println!(
        "{}: {} events → {} episodes, {} file versions",
        report.subject, report.events, report.appended, report.file_versions
    );
    let again = crate::import_with_progress(
        &mut store,
        &history,
        &tm_ingest::extract::OfflineExtractor::default(),
        Some(&recaller),
    )?;
    println!(
        "importing the same history again: already imported = {}",
        again.already_imported
    );

    let key = SubjectKey::parse(&report.subject)?;
    let subject = store.require_subject(&key)?;
    let embedded = crate::embed_with_progress(&recaller, &mut store, &subject)?;
    println!(
        "{embedded} episodes embedded with {}",
        recaller.embedder().name()
    );
    println!("\n== The episode log of {key} (append-only, hash-chained)");
    crate::print_log(&store.episodes(&subject, 1, usize::MAX)?);

    println!("\n== The concept map built from the files (offline extractor)");
    crate::print_map(&tm_brain::map::load(
        store.latest_map(&subject)?.as_deref(),
    )?);

    println!("\n== Files and their versions");
    for v in store.file_versions(&subject)? {
        let status = match (v.replaced_at, v.removed_at) {
            (_, Some(t)) => format!("removed {}", t.format("%Y-%m-%d")),
            (Some(t), _) => format!("replaced {}", t.format("%Y-%m-%d")),
            _ => "current".to_string(),
        };
        println!(
            "{} v{} ({}, {} page(s)) sha256 {}… added {} — {status}",
            v.name,
            v.version,
            v.format,
            v.pages,
            &v.sha256[..12],
            v.added_at.format("%Y-%m-%d")
        );
    }

    // The turns the demo asks, at a fixed instant so every run shows the same.
    let at =
        chrono::DateTime::parse_from_rfc3339("2026-11-20T10:00:00Z")?.with_timezone(&chrono::Utc);
    for question in [
        "How does osmosis work again?",
        "What did we cover in July?",
        "¿Qué vimos en mayo?",
        "what is a cell",
    ] {
        println!("\n== Recall at {} for: {question}", at.format("%Y-%m-%d"));
        let query = tm_brain::recall::RecallQuery {
            question,
            at,
            tz: chrono_tz::UTC,
            limit: 6,
            exclude: None,
        };
        crate::print_recall(&recaller.recall(&store, &subject, &query)?, chrono_tz::UTC);
    }

    println!("\n== Verifying the chain");
    let cp = store.checkpoint(&subject)?;
    for r in crate::verify(&store, None, Some(&cp))? {
        println!("{}", crate::describe(&r));
    }
    println!("checkpoint: {}", serde_json::to_string(&cp)?);
    drop(store);

    // Turns through the service's own path (block under the cap, the
    // learner's message recorded, passages, the prompt), as dry runs: the
    // demo needs no model.
    let state = tm_server::AppState::new(
        db,
        std::sync::Arc::new(recaller),
        tm_server::Config::default(),
    )?;
    let mut store = Store::open(db)?;
    let key = tm_server::auth::generate().context("reading the system's randomness")?;
    store.add_api_key("demo", &key.prefix, &key.sha256, true, chrono::Utc::now())?;
    store.assign_learner(&subject.key.learner, "demo", chrono::Utc::now())?;
    drop(store);
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let app = tm_server::app(state.clone());
    let turns = [
        (
            "an ordinary question",
            "2026-11-20T10:00:00Z",
            "How does osmosis work again?",
        ),
        (
            "a question about the record",
            "2026-11-20T10:05:00Z",
            "What have I got wrong so far?",
        ),
        (
            "an empty month",
            "2026-11-20T10:10:00Z",
            "What did we cover in May?",
        ),
        (
            "a July question",
            "2026-11-20T10:15:00Z",
            "What did we cover in July about eukaryotic cells?",
        ),
    ];
    for (what, at, text) in turns {
        println!("\n== Turn ({what}) at {at}: {text}");
        let body = serde_json::json!({"text": text, "at": at});
        let v = runtime.block_on(call(
            &app,
            &key.secret,
            &format!("/v1/subjects/{key_path}/turns", key_path = subject.key),
            body,
        ))?;
        let b = &v["block"];
        println!("{}", b["block"].as_str().unwrap_or("(no block)"));
        let recalled: Vec<String> = b["recalled"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|m| {
                        m["external_id"]
                            .as_str()
                            .map_or_else(|| format!("#{}", m["id"]), str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default();
        println!(
            "mode {}, {} tokens, {:.1} ms, dropped {}; recalled: {}; {} passages in the prompt (dry run: {})",
            b["mode"].as_str().unwrap_or("?"),
            b["tokens"],
            b["elapsed_ms"].as_f64().unwrap_or(0.0),
            b["dropped"],
            if recalled.is_empty() {
                "-".to_string()
            } else {
                recalled.join(", ")
            },
            v["passages"].as_array().map_or(0, Vec::len),
            v["dry_run"]
        );
    }

    println!("\n== The nightly loop for the night ending 2026-11-21T03:00:00Z");
    let night = runtime.block_on(call(
        &app,
        &key.secret,
        "/v1/admin/nightly",
        serde_json::json!({"at": "2026-11-21T03:00:00Z"}),
    ))?;
    for n in night["nights"].as_array().into_iter().flatten() {
        println!(
            "{}: {} active, {} ran, {} consolidated, {} beliefs decayed, {} citations verified",
            n["day"].as_str().unwrap_or("?"),
            n["active"],
            n["ran"],
            n["consolidated"],
            n["decayed"],
            n["verified"]
        );
    }

    if !serve {
        println!(
            "\nTry: tutor-memory --db {} report --subject {key_s}   |   tutor-memory --db {} serve",
            db.display(),
            db.display(),
            key_s = subject.key
        );
        return Ok(ExitCode::SUCCESS);
    }
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("listening on loopback")?;
        let addr = listener.local_addr()?;
        println!(
            "\n== The web report: http://{addr}/subjects/{}?key={}\n   (API at http://{addr}/v1, OpenAPI at /v1/openapi.json; the key above is this demo's; Ctrl-C stops)",
            subject.key, key.secret
        );
        tm_server::serve(listener, state, tm_server::shutdown_signal())
            .await
            .context("serving")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// One JSON POST through the service's router (no socket).
async fn call(
    app: &tm_server::Router,
    key: &str,
    uri: &str,
    body: serde_json::Value,
) -> Result<serde_json::Value> {
    tm_server::post_json(app, key, uri, &body)
        .await
        .map_err(|e| anyhow::anyhow!("{uri}: {e}"))
}
