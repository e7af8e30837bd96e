//! Requests hyper refuses before our router sees them (a URI too long, headers
//! too large, a request line that is not HTTP) are answered in the API's one
//! JSON error shape, and an ordinary request on the same server is untouched.

use crate::common;

use std::io::{Read, Write};
use std::sync::Arc;

fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    // The server may answer and close before it has read all of a huge request.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole answer");
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

#[test]
fn requests_hyper_refuses_get_the_json_error_shape() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let brain = tm_brain::Brain::open(
        &db.display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    // A head limit past the long URI, so that hyper reads it whole and
    // refuses its length (under the default 32 KiB it is a 431, below).
    let config = tm_server::Config {
        limits: tm_server::conn::Limits {
            header_bytes: 256 * 1024,
            ..Default::default()
        },
        ..Default::default()
    };
    let served = common::serve_with(brain, config);
    let addr = served.addr;

    let long_uri = format!(
        "GET /v1/subjects?q={} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(100_000)
    );
    let big_header = format!(
        "GET /v1/subjects HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
        "b".repeat(600_000)
    );
    for (request, status, code) in [
        (long_uri.as_bytes(), 414, "uri_too_long"),
        (big_header.as_bytes(), 431, "headers_too_large"),
        (&b"NOT HTTP AT ALL\r\n\r\n"[..], 400, "malformed_request"),
    ] {
        let (got, head, body) = exchange(addr, request);
        assert_eq!(got, status, "{head}");
        assert!(head.contains("content-type: application/json"), "{head}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| {
            panic!("{status}: the body is not JSON ({e}): {body:?}");
        });
        assert_eq!(v["error"]["code"], code, "{body}");
        assert!(v["error"]["message"].as_str().unwrap().len() > 10);
    }

    // An ordinary request (refused for want of a key) is our router's own answer.
    let (got, _, body) = exchange(
        addr,
        b"GET /v1/subjects HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(got, 401);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "unauthorized", "{body}");

    served.stop();
}
