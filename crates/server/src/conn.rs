//! The connections under the router: how many the server holds, for how
//! long, and how much of a request it reads before it refuses.
//!
//! * **Heads**: a request's line and headers must arrive whole within
//!   [`Limits::header_timeout`] and fit in [`Limits::header_bytes`] (past it,
//!   `431`: [`head_limit`]; hyper's read buffer is held near it too). hyper arms the same timer while a kept-alive connection waits
//!   for its next request, so it is the idle timeout too; it never runs while
//!   a request is being answered (a long turn or a night is not cut).
//! * **Bodies**: a request's body must arrive whole within
//!   [`Limits::body_timeout`] of its head; past it the request is answered
//!   `408 request_timeout` and the connection closed ([`body_deadline`]).
//! * **How many**: at most [`Limits::max_connections`] open at once, and at
//!   most [`Limits::max_per_address`] from one address; one more is answered
//!   at once (`503` or `429`, `too_many_connections`) and closed, so one
//!   client cannot take the descriptors every other client needs.
//!
//! [`raise_descriptor_limit`] lifts the process's own limit to what the
//! system allows, at start.

use crate::error::ApiError;
use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;

/// What the server holds for its clients, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// A request's line and headers, at most (a browser's cookies and
    /// headers take a few KiB).
    pub header_bytes: usize,
    /// A request's head must arrive within this, and a kept-alive
    /// connection's next request begin within it.
    pub header_timeout: Duration,
    /// A request's body must arrive whole within this of its head.
    pub body_timeout: Duration,
    /// Connections open at once, from anyone.
    pub max_connections: usize,
    /// Connections open at once from one address.
    pub max_per_address: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_bytes: 32 * 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            max_connections: 4096,
            max_per_address: 512,
        }
    }
}

impl Limits {
    /// Refuses settings hyper cannot run with (its read buffer is at least
    /// 8 KiB) or that would refuse every connection.
    pub fn check(&self) -> Result<(), String> {
        if self.header_bytes < 8 * 1024 {
            return Err("the header limit must be at least 8 KiB".into());
        }
        if self.max_connections == 0 || self.max_per_address == 0 {
            return Err("the connection limits must be at least 1".into());
        }
        if self.header_timeout.is_zero() || self.body_timeout.is_zero() {
            return Err("the timeouts must be positive".into());
        }
        Ok(())
    }
}

/// The connections open now, in all and by address.
#[derive(Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// Counts a connection while it is open.
struct Admitted {
    open: Arc<Mutex<Open>>,
    address: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

/// Why a connection is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    Full,
    Address,
}

fn admit(open: &Arc<Mutex<Open>>, address: IpAddr, limits: &Limits) -> Result<Admitted, Refusal> {
    let mut o = open.lock().unwrap_or_else(|p| p.into_inner());
    if o.total >= limits.max_connections {
        return Err(Refusal::Full);
    }
    let mine = o.by_address.entry(address).or_insert(0);
    if *mine >= limits.max_per_address {
        return Err(Refusal::Address);
    }
    *mine += 1;
    o.total += 1;
    Ok(Admitted {
        open: open.clone(),
        address,
    })
}

/// The whole answer to a connection refused at accept: a status and the
/// API's error JSON, and the connection closed.
fn refusal(why: Refusal, limits: &Limits) -> Vec<u8> {
    let (status, message) = match why {
        Refusal::Full => (
            "503 Service Unavailable",
            format!(
                "the server holds its most connections ({}): try again shortly",
                limits.max_connections
            ),
        ),
        Refusal::Address => (
            "429 Too Many Requests",
            format!(
                "this address holds the most connections one address may ({}): close some or reuse them",
                limits.max_per_address
            ),
        ),
    };
    let body = serde_json::json!({"error": {"code": "too_many_connections", "message": message}})
        .to_string();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The queue of connections the kernel holds for the accept loop: a burst
/// of connections (many refused at once) must not overflow it, or every
/// client's connect waits a second for its retry.
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` (a host and port) with [`LISTEN_BACKLOG`].
pub async fn bind(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let socket = if a.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(a).and_then(|()| socket.listen(LISTEN_BACKLOG)) {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other(format!("{addr} names no address"))))
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves; then
/// takes no new connection, closes idle ones, and lets requests in flight
/// finish (their writes commit before their answers).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.header_bytes.max(8 * 1024));
    let open = Arc::new(Mutex::new(Open::default()));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors or memory for a moment: the
                    // connections open now go on; try again soon.
                    if !matches!(e.kind(), std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset) {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let admitted = match admit(&open, peer.ip(), &limits) {
            Ok(a) => a,
            Err(why) => {
                // Best effort and never waiting: the answer fits a fresh
                // socket's buffer, and the socket closes when dropped.
                let _ = stream.try_write(&refusal(why, &limits));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(crate::wire::Answering::new(stream));
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let conn = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            let _ = conn.await;
            drop(admitted);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Middleware: a request whose line and headers take more than `limit`
/// bytes is answered `431 headers_too_large` and its connection closed.
/// hyper's read buffer bounds what a connection holds, but only roughly (a
/// head that arrives in one read may pass it); this is the exact limit.
pub async fn head_limit(limit: usize, req: Request, next: Next) -> Response {
    let size = req.uri().to_string().len()
        + req
            .headers()
            .iter()
            .map(|(n, v)| n.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if size <= limit {
        return next.run(req).await;
    }
    let mut res = ApiError::new(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "headers_too_large",
        format!(
            "the request's line and headers take {size} bytes; the server reads at most {limit}"
        ),
    )
    .into_response();
    res.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    res
}

/// Middleware: the request's body must arrive whole within `limit` of its
/// head. Past it the body fails for the handler, and whatever the handler
/// answered is replaced by `408 request_timeout` with the connection closed.
pub async fn body_deadline(limit: Duration, req: Request, next: Next) -> Response {
    let late = Arc::new(AtomicBool::new(false));
    let req = req.map(|body| {
        axum::body::Body::new(Deadline {
            inner: body,
            sleep: Box::pin(tokio::time::sleep(limit)),
            late: late.clone(),
        })
    });
    let response = next.run(req).await;
    if !late.load(Ordering::Relaxed) {
        return response;
    }
    let mut res = ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        "request_timeout",
        format!(
            "the request's body did not arrive within {} s",
            limit.as_secs_f64()
        ),
    )
    .into_response();
    res.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    res
}

/// A body that fails once its deadline passes.
struct Deadline {
    inner: axum::body::Body,
    sleep: Pin<Box<tokio::time::Sleep>>,
    late: Arc<AtomicBool>,
}

/// The error a late body ends with.
#[derive(Debug)]
struct Late;

impl std::fmt::Display for Late {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request's body did not arrive in time")
    }
}

impl std::error::Error for Late {}

impl http_body::Body for Deadline {
    type Data = axum::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.late.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(Box::new(Late))))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Raises the soft limit on open descriptors to the hard limit, where the
/// system allows; returns the limit in force after.
#[cfg(unix)]
pub fn raise_descriptor_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the one struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if lim.rlim_cur < lim.rlim_max {
            let want = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                lim = want;
            }
        }
    }
    Ok(lim.rlim_cur)
}

#[cfg(not(unix))]
pub fn raise_descriptor_limit() -> std::io::Result<u64> {
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_counted_in_all_and_by_address() {
        let limits = Limits {
            max_connections: 3,
            max_per_address: 2,
            ..Limits::default()
        };
        let open = Arc::new(Mutex::new(Open::default()));
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let a1 = admit(&open, a, &limits).unwrap();
        let _a2 = admit(&open, a, &limits).unwrap();
        assert_eq!(admit(&open, a, &limits).err(), Some(Refusal::Address));
        let _b1 = admit(&open, b, &limits).unwrap();
        assert_eq!(admit(&open, b, &limits).err(), Some(Refusal::Full));
        drop(a1);
        let _a3 = admit(&open, a, &limits).unwrap();
        assert_eq!(open.lock().unwrap().total, 3);
        let text = String::from_utf8(refusal(Refusal::Address, &limits)).unwrap();
        assert!(text.starts_with("HTTP/1.1 429 "), "{text}");
        let body: serde_json::Value =
            serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
        assert_eq!(body["error"]["code"], "too_many_connections");
    }

    #[test]
    fn limits_that_cannot_run_are_refused() {
        assert!(Limits::default().check().is_ok());
        for bad in [
            Limits {
                header_bytes: 1024,
                ..Limits::default()
            },
            Limits {
                max_per_address: 0,
                ..Limits::default()
            },
            Limits {
                body_timeout: Duration::ZERO,
                ..Limits::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
