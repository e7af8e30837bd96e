//! What a hostile tenant or an unlucky operator tried, each held here: a key
//! in the address in any spelling, session cookies in other spellings,
//! dates far ahead, huge values quoted back, answers a cache or a frame may
//! keep, JSON-RPC batches, erased learners still listed, a body that stops
//! half way; and on a real socket, heads that never finish, heads too large,
//! and one address holding every connection.

use crate::api::{harness, harness_with};
use crate::common;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

/// (status, headers, body) of a GET with optional headers.
async fn get(
    app: &axum::Router,
    uri: &str,
    headers: &[(header::HeaderName, String)],
) -> (StatusCode, axum::http::HeaderMap, String) {
    crate::class::get_raw(app, uri, headers.iter().cloned()).await
}

fn location(h: &axum::http::HeaderMap) -> String {
    h.get(header::LOCATION)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

fn session_of(h: &axum::http::HeaderMap) -> Option<String> {
    h.get_all(header::SET_COOKIE)
        .iter()
        .map(|v| v.to_str().unwrap())
        .find(|c| c.starts_with("tm_session=") || c.starts_with("tm_tenant="))
        .map(|c| c.split(';').next().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_any_spelling_leaves_the_address() {
    let h = harness();
    h.sample().await;
    let k = &h.a;
    for (uri, clean) in [
        (format!("/?%6bey={k}"), "/".to_string()),
        (format!("/?k%65y={k}&q=cell"), "/?q=cell".to_string()),
        (format!("/?key={k}&key={k}"), "/".to_string()),
        (
            format!("/subjects/ana/cells?%6B%65%79={k}&at=2026-07-20T00%3A00%3A00Z"),
            "/subjects/ana/cells?at=2026-07-20T00%3A00%3A00Z".to_string(),
        ),
        (
            format!("/classes/cells?k%65y={k}"),
            "/classes/cells".to_string(),
        ),
        // The class's JSON and CSV at the page's address leave it too.
        (
            format!("/classes/cells?key={k}&format=csv"),
            "/classes/cells?format=csv".to_string(),
        ),
        (
            format!("/classes/cells?format=json&key={k}"),
            "/classes/cells?format=json".to_string(),
        ),
    ] {
        let (s, headers, _) = get(&h.app, &uri, &[]).await;
        assert_eq!(s, StatusCode::SEE_OTHER, "{uri}");
        let to = location(&headers);
        assert_eq!(to, clean, "{uri}");
        assert!(!to.contains("tm_"), "{uri} → {to}");
        let session = session_of(&headers).unwrap_or_else(|| panic!("{uri}: no session"));
        // Following the redirect opens the page: no second redirect.
        let (s, _, _) = get(&h.app, &to, &[(header::COOKIE, session)]).await;
        assert_eq!(s, StatusCode::OK, "{uri} → {to}");
    }
    // `KEY` is not the key: not taken, no session, nothing to clean.
    let (s, headers, _) = get(&h.app, &format!("/?KEY={k}"), &[]).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(session_of(&headers).is_none());
    // A class the tenant does not have sets no session for it.
    let (s, headers, _) = get(&h.app, &format!("/classes/nothing-here?key={k}"), &[]).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(session_of(&headers).is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_cookie_has_one_spelling_and_a_stale_one_does_not_lock_out() {
    let h = harness();
    h.sample().await;
    let (_, headers, _) = get(&h.app, &format!("/?key={}", h.a), &[]).await;
    let good = session_of(&headers).unwrap();
    let value = good.strip_prefix("tm_tenant=").unwrap();
    let parts: Vec<&str> = value.split('.').collect();
    let (prefix, exp, mac) = (parts[1], parts[2], parts[3]);
    for other in [
        format!("v1.{prefix}.0{exp}.{mac}"),
        format!("v1.{prefix}.{}{exp}.{mac}", "0".repeat(5000)),
        format!("v1.{prefix}.+{exp}.{mac}"),
        format!("v1.{}.{exp}.{mac}", prefix.to_uppercase()),
    ] {
        let (s, _, _) = get(
            &h.app,
            "/",
            &[(header::COOKIE, format!("tm_tenant={other}"))],
        )
        .await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{}", &other[..40]);
    }
    let (s, _, _) = get(&h.app, "/", &[(header::COOKIE, good.clone())]).await;
    assert_eq!(s, StatusCode::OK);
    // A stale cookie of the same name first, the good one after it.
    let stale = format!("tm_tenant=v1.{prefix}.1000.{}", "0".repeat(64));
    let (s, _, _) = get(&h.app, "/", &[(header::COOKIE, format!("{stale}; {good}"))]).await;
    assert_eq!(
        s,
        StatusCode::OK,
        "the good cookie after a stale one opens the page"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dated_far_ahead_is_refused_and_a_huge_value_is_not_quoted_back() {
    let h = harness();
    h.sample().await;
    let far = "9999-12-31T00:00:00Z";
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/events",
            &h.a,
            Some(json!([{"type": "learner", "at": far, "text": "hello"}])),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("later than the server's clock"),
        "{v}"
    );
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/teach",
            &h.a,
            Some(json!({"text": "Remember that ATP is the cell's currency", "at": far})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects",
            &h.a,
            Some(json!({"learner": "zed", "subject": "cells", "at": far})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = h
        .call(
            "DELETE",
            &format!(
                "/v1/learners/ana?reference=t&at={}",
                far.replace(':', "%3A")
            ),
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    // Nothing of it was stored: the log holds the sample's five episodes.
    let (s, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["episodes"], 6, "a file and five events: {v}");

    // A 100 KB name is not answered back whole.
    let name = "x".repeat(100_000);
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects",
            &h.a,
            Some(json!({"learner": name, "subject": "cells"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.len() < 1_000 && message.contains("(cut:"),
        "{}",
        message.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_never_cached_nor_framed_and_an_erased_learner_is_gone() {
    let h = harness();
    h.sample().await;
    let bearer = (header::AUTHORIZATION, format!("Bearer {}", h.a));
    for uri in [
        "/v1/subjects/ana/cells/beliefs",
        "/v1/subjects/ana/cells/export",
        "/v1/subjects",
        "/subjects/ana/cells",
        "/classes/cells",
        "/",
    ] {
        let (s, headers, body) = get(&h.app, uri, std::slice::from_ref(&bearer)).await;
        assert_eq!(s, StatusCode::OK, "{uri}: {body}");
        assert_eq!(headers[header::CACHE_CONTROL], "no-store", "{uri}");
        assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY", "{uri}");
        if let Some(csp) = headers.get(header::CONTENT_SECURITY_POLICY) {
            assert!(
                csp.to_str().unwrap().contains("frame-ancestors 'none'"),
                "{uri}"
            );
        }
    }
    // An error page is framed by nobody either.
    let (s, headers, _) = get(&h.app, "/subjects/ana/cells", &[]).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");

    let (s, v) = h
        .call(
            "DELETE",
            "/v1/learners/ana?reference=ticket%201",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let compaction = v["compaction"].as_str().unwrap();
    assert!(
        !compaction.contains(".db") && !compaction.contains('/'),
        "{compaction}"
    );
    let (s, v) = h.call("GET", "/v1/subjects", &h.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        v["subjects"],
        json!([]),
        "an erased learner is not listed: {v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_rpc_batch_is_refused_in_json_rpc() {
    let h = harness();
    let req = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {}", h.a))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Body::from(
            json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]).to_string(),
        ))
        .unwrap();
    let (s, v) = h.send(req).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("batch"),
        "{v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_half_way_is_a_408() {
    let config = tm_server::Config {
        limits: tm_server::conn::Limits {
            body_timeout: Duration::from_millis(300),
            ..Default::default()
        },
        ..Default::default()
    };
    let h = harness_with(config);
    h.sample().await;
    // 11 bytes of the 1,000 declared, then nothing.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(1);
    tx.send(Ok(axum::body::Bytes::from_static(b"[{\"type\":\"l")))
        .await
        .unwrap();
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    let req = Request::builder()
        .method("POST")
        .uri("/v1/subjects/ana/cells/events")
        .header(header::AUTHORIZATION, format!("Bearer {}", h.a))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, "1000")
        .body(body)
        .unwrap();
    let res = h.app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(res.headers()[header::CONNECTION], "close");
    let v: Value =
        serde_json::from_slice(&res.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(v["error"]["code"], "request_timeout", "{v}");
    drop(tx);
}

// ------------------------------------------------------------ on a socket

fn served(limits: tm_server::conn::Limits) -> (common::Served, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let brain = tm_brain::Brain::open(
        &dir.path().join("h.db").display().to_string(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    let config = tm_server::Config {
        limits,
        ..Default::default()
    };
    (common::serve_with(brain, config), dir)
}

/// Reads until the server closes the connection; a server that keeps it
/// open for 20 s fails the test (the limits under test are far shorter).
fn read_all(s: &mut std::net::TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!(
            "the server kept the connection open ({e}) after {:?}",
            String::from_utf8_lossy(&out)
        ),
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn healthz(addr: std::net::SocketAddr, from: &str) -> String {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = rt
        .block_on(socket.connect(addr))
        .unwrap()
        .into_std()
        .unwrap();
    stream.set_nonblocking(false).unwrap();
    let mut stream = stream;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    read_all(&mut stream)
}

#[test]
fn a_head_that_never_finishes_is_closed_and_a_large_one_refused() {
    let (served, _dir) = served(tm_server::conn::Limits {
        header_timeout: Duration::from_millis(400),
        ..Default::default()
    });
    let addr = served.addr;
    // Half a head, then silence; and a connection that sends nothing.
    let mut half = std::net::TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut silent = std::net::TcpStream::connect(addr).unwrap();
    assert_eq!(read_all(&mut half), "", "closed without an answer");
    assert_eq!(read_all(&mut silent), "");
    // Headers past the default 32 KiB: 431 in the JSON shape.
    let mut big = std::net::TcpStream::connect(addr).unwrap();
    let _ = big.write_all(
        format!(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: tm_tenant={}\r\n\r\n",
            "0".repeat(40_000)
        )
        .as_bytes(),
    );
    let answer = read_all(&mut big);
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    assert!(answer.contains("\"headers_too_large\""), "{answer}");
    // Headers a browser sends go through.
    let mut ok = std::net::TcpStream::connect(addr).unwrap();
    ok.write_all(
        format!(
            "GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: a={}\r\nConnection: close\r\n\r\n",
            "0".repeat(8_000)
        )
        .as_bytes(),
    )
    .unwrap();
    assert!(read_all(&mut ok).starts_with("HTTP/1.1 200 "));
    served.stop();
}

#[test]
fn one_address_cannot_hold_every_connection() {
    let (served, _dir) = served(tm_server::conn::Limits {
        max_per_address: 3,
        max_connections: 5,
        ..Default::default()
    });
    let addr = served.addr;
    // Three idle connections from 127.0.0.1 (each half a head).
    let mut held: Vec<std::net::TcpStream> = (0..3)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    // Let the server accept them before the fourth arrives.
    std::thread::sleep(Duration::from_millis(300));
    let mut fourth = std::net::TcpStream::connect(addr).unwrap();
    let answer = read_all(&mut fourth);
    assert!(answer.starts_with("HTTP/1.1 429 "), "{answer}");
    assert!(answer.contains("\"too_many_connections\""), "{answer}");
    // Another address is still served.
    let other = healthz(addr, "127.0.0.2");
    assert!(other.starts_with("HTTP/1.1 200 "), "{other}");
    // One closed, one more is taken.
    drop(held.pop());
    std::thread::sleep(Duration::from_millis(300));
    let again = healthz(addr, "127.0.0.1");
    assert!(again.starts_with("HTTP/1.1 200 "), "{again}");
    drop(held);
    served.stop();
}
