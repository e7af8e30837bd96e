//! `serve`: the HTTP service over the database, until Ctrl-C or SIGTERM.

use anyhow::{Context, Result};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Options of `serve`.
pub struct ServeOptions<'a> {
    pub db: &'a Path,
    pub addr: &'a str,
    pub embedder: &'a str,
    pub model_dir: Option<&'a Path>,
    pub block_cap: Duration,
    /// Run the nightly loop in the background every interval.
    pub nightly_every: Option<Duration>,
}

/// The service's state for a database: the chosen embedder, and the chat
/// endpoint from TUTOR_MEMORY_CHAT_URL / _MODEL / _KEY when set.
pub fn state(
    db: &Path,
    embedder: &str,
    model_dir: Option<&Path>,
    block_cap: Duration,
) -> Result<tm_server::AppState> {
    let recaller = Arc::new(crate::recaller(embedder, model_dir)?);
    let config = tm_server::Config {
        block_cap,
        chat: tm_ingest::extract::LlmConfig::from_env(),
        ..tm_server::Config::default()
    };
    tm_server::AppState::new(db, recaller, config)
        .with_context(|| format!("opening the store {}", db.display()))
}

pub fn run(opts: ServeOptions<'_>) -> Result<ExitCode> {
    let state = state(opts.db, opts.embedder, opts.model_dir, opts.block_cap)?;
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(opts.addr)
            .await
            .with_context(|| format!("listening on {}", opts.addr))?;
        let local = listener.local_addr()?;
        eprintln!(
            "serving {} on http://{local} (API under /v1, OpenAPI at /v1/openapi.json, report at /subjects/<learner>/<subject>); Ctrl-C stops",
            opts.db.display()
        );
        if let Some(every) = opts.nightly_every {
            eprintln!("the nightly loop runs every {} s", every.as_secs());
            tokio::spawn(tm_server::admin::schedule(state.clone(), every));
        }
        if state.config().chat.is_none() {
            eprintln!("no chat endpoint configured (TUTOR_MEMORY_CHAT_URL): turns are dry runs");
        }
        tm_server::serve(listener, state, tm_server::shutdown_signal())
            .await
            .context("serving")?;
        eprintln!("stopped: requests in flight finished");
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}
