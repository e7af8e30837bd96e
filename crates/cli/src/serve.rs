//! `serve`: the HTTP service over the brain (the `/v1` API, the MCP endpoint
//! `/mcp`, the web report), until Ctrl-C or SIGTERM; `mcp`: the MCP server
//! over stdio.

use anyhow::{Context, Result};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tm_brain::Brain;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// Hard time cap on a block, in milliseconds.
    #[arg(long, default_value_t = 2500)]
    cap_ms: u64,
    /// Blocks built at once; the rest wait their turn in order (default:
    /// two a core: a block is CPU work, with a thread of its own for the
    /// question's embedding).
    #[arg(long)]
    block_workers: Option<usize>,
    /// Also run the nightly loop in the background every interval (e.g. 24h).
    #[arg(long)]
    nightly_every: Option<String>,
    /// The most concepts one subject's map may hold; a file that would grow
    /// a map past it is refused (422).
    #[arg(long, default_value_t = tm_brain::record::DEFAULT_MAX_CONCEPTS)]
    max_concepts: usize,
    /// The most bytes of a request's line and headers (431 beyond).
    #[arg(long, default_value_t = tm_server::conn::Limits::default().header_bytes)]
    max_header_bytes: usize,
    /// Seconds a request's line and headers may take to arrive; also how
    /// long a kept-alive connection may wait idle for its next request.
    #[arg(long, default_value_t = tm_server::conn::Limits::default().header_timeout.as_secs())]
    header_timeout: u64,
    /// Seconds a request's body may take to arrive after its head (408 beyond).
    #[arg(long, default_value_t = tm_server::conn::Limits::default().body_timeout.as_secs())]
    body_timeout: u64,
    /// Connections held open at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = tm_server::conn::Limits::default().max_connections)]
    max_connections: usize,
    /// Connections held open at once from one address; one more is
    /// answered 429 and closed.
    #[arg(long, default_value_t = tm_server::conn::Limits::default().max_per_address)]
    max_connections_per_address: usize,
}

impl ServeArgs {
    /// The connection limits the flags set.
    fn limits(&self) -> Result<tm_server::conn::Limits> {
        let limits = tm_server::conn::Limits {
            header_bytes: self.max_header_bytes,
            header_timeout: Duration::from_secs(self.header_timeout),
            body_timeout: Duration::from_secs(self.body_timeout),
            max_connections: self.max_connections,
            max_per_address: self.max_connections_per_address,
        };
        limits.check().map_err(anyhow::Error::msg)?;
        Ok(limits)
    }
}

/// The service's state for a brain: the chat endpoint from
/// TUTOR_MEMORY_CHAT_URL / _MODEL / _KEY when set.
pub fn state(brain: Brain, limits: tm_server::conn::Limits) -> Result<tm_server::AppState> {
    let config = tm_server::Config {
        chat: tm_ingest::extract::LlmConfig::from_env(),
        limits,
        ..tm_server::Config::default()
    };
    tm_server::AppState::new(Arc::new(brain), config).map_err(anyhow::Error::msg)
}

pub fn run(mut brain: Brain, a: ServeArgs) -> Result<ExitCode> {
    let every = a
        .nightly_every
        .as_deref()
        .map(|s| {
            crate::nightly::parse_every(s).and_then(|d| {
                d.to_std()
                    .map_err(|_| anyhow::anyhow!("--nightly-every must be positive"))
            })
        })
        .transpose()?;
    let limits = a.limits()?;
    if a.max_concepts == 0 {
        anyhow::bail!("--max-concepts must be at least 1");
    }
    brain.set_max_concepts(a.max_concepts);
    brain.set_cap(Duration::from_millis(a.cap_ms));
    if let Some(n) = a.block_workers {
        if n == 0 {
            anyhow::bail!("--block-workers must be at least 1");
        }
        brain.set_block_workers(n);
    }
    // Made now, not on the first request: a model that cannot be had is
    // said at start-up.
    let embedder = brain.embedder_name()?;
    let location = brain.location().to_string();
    let state = state(brain, limits.clone())?;
    // Every connection is a descriptor: take what the system allows.
    match tm_server::conn::raise_descriptor_limit() {
        Ok(n) if (n as usize) < limits.max_connections + 64 => eprintln!(
            "warning: this process may open {n} files, fewer than --max-connections {} needs",
            limits.max_connections
        ),
        Ok(_) => {}
        Err(e) => eprintln!("warning: the open-files limit could not be read ({e})"),
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = tm_server::conn::bind(&a.addr)
            .await
            .with_context(|| format!("listening on {}", a.addr))?;
        let local = listener.local_addr()?;
        eprintln!(
            "serving {location} on http://{local} with {embedder} (API under /v1, OpenAPI at /v1/openapi.json, MCP at /mcp, report at /subjects/<learner>/<subject>); Ctrl-C stops"
        );
        if let Some(every) = every {
            eprintln!("the nightly loop runs every {} s", every.as_secs());
            tokio::spawn(tm_server::admin::schedule(state.clone(), every));
        }
        if state.chat().is_none() {
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

/// Serves the memory over stdin/stdout to an MCP host until it disconnects.
/// Everything this process says besides the protocol goes to stderr.
pub fn mcp(brain: Brain) -> Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime
        .block_on(tm_mcp::serve_stdio(Arc::new(brain)))
        .map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}
