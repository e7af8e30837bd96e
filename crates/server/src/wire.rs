//! The connection under the router: hyper answers a request it cannot parse
//! (a request line or URI too long for it, headers too large, a malformed
//! request line) itself, before any of our code sees the request, with a
//! status and an empty body. [`Answering`] wraps each accepted connection
//! so that such an answer goes out in the API's one error shape
//! (`{"error":{"code","message"}}`) like every other error.
//!
//! How: hyper writes its automatic answer as one bare head (`HTTP/1.1 4xx`,
//! `content-length: 0`, nothing after the blank line) and closes the
//! connection. The wrapper recognises exactly that write — a status this
//! module knows, a zero length, no body — and sends a head and JSON body of
//! its own in its place. A response from the router always has a body, so it
//! is never touched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// One connection: reads pass through; a bare automatic error head is
/// replaced by [`replacement`]'s answer.
pub struct Answering<IO> {
    io: IO,
    /// The replacement being written: its bytes, how many are out, and how
    /// many bytes of the caller's buffer it stands for.
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<IO> Answering<IO> {
    /// Wraps one accepted connection.
    pub fn new(io: IO) -> Self {
        Answering { io, pending: None }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Answering<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Answering<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.pending.is_none() {
            match replacement(buf) {
                Some(bytes) => this.pending = Some((bytes, 0, buf.len())),
                None => return Pin::new(&mut this.io).poll_write(cx, buf),
            }
        }
        // Write the whole replacement before saying the caller's head went
        // out (a caller that sees Pending calls again with the same bytes).
        while let Some((bytes, done, _)) = &mut this.pending {
            if *done == bytes.len() {
                break;
            }
            let n = ready!(Pin::new(&mut this.io).poll_write(cx, &bytes[*done..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *done += n;
        }
        let (_, _, claimed) = this.pending.take().expect("a replacement is pending");
        Poll::Ready(Ok(claimed))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The JSON answer standing for `buf` when `buf` is exactly one of hyper's
/// automatic error heads; `None` for anything else.
pub fn replacement(buf: &[u8]) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(buf).ok()?;
    let rest = head.strip_prefix("HTTP/1.1 ")?;
    let (code, message) = match rest.get(..4)? {
        "400 " => (
            "malformed_request",
            "the request line or a header could not be parsed as HTTP/1.1",
        ),
        "414 " => (
            "uri_too_long",
            "the request's URI is longer than 65,534 bytes; send large inputs in the body",
        ),
        "431 " => (
            "headers_too_large",
            "the request's line and headers are larger than the server reads (see `serve --max-header-bytes`); send large inputs in the body",
        ),
        _ => return None,
    };
    // One bare head: a blank line only at its end, and no body.
    let end = head.find("\r\n\r\n")?;
    if end + 4 != head.len() {
        return None;
    }
    let mut bare = false;
    let mut kept = Vec::new();
    for line in head[..end].split("\r\n").skip(1) {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" if value.trim() == "0" => bare = true,
            "content-length" | "content-type" | "transfer-encoding" => return None,
            _ => kept.push(line),
        }
    }
    if !bare {
        return None;
    }
    let body = serde_json::json!({"error": {"code": code, "message": message}}).to_string();
    let mut out = format!("{}\r\n", &head[..head.find("\r\n")?]);
    for line in kept {
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("content-type: application/json\r\n");
    out.push_str(&format!("content-length: {}\r\n", body.len()));
    out.push_str("connection: close\r\n\r\n");
    out.push_str(&body);
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::replacement;

    #[test]
    fn only_a_bare_automatic_head_is_replaced() {
        let bare = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: Tue, 01 Dec 2026 10:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(replacement(bare).unwrap()).unwrap();
        assert!(out.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{out}");
        assert!(out.contains("date: Tue, 01 Dec 2026"), "{out}");
        assert!(out.contains("content-type: application/json\r\n"), "{out}");
        let body = out.split("\r\n\r\n").nth(1).unwrap();
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "uri_too_long");
        assert!(out.contains(&format!("content-length: {}\r\n", body.len())));

        // A response of ours has a body (or a length), a 404 is not hyper's,
        // and a head with anything after it is not bare.
        for other in [
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n"[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}",
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 414",
        ] {
            assert!(replacement(other).is_none(), "{}", String::from_utf8_lossy(other));
        }
    }
}
