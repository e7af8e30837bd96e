//! The API through the router, no socket: every route, tenant isolation,
//! malformed bodies, oversized uploads, unknown subjects, and the OpenAPI
//! document listing every route.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::Utc;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tm_server::{AppState, Config, app, auth};
use tower::ServiceExt;

pub(crate) struct Harness {
    pub(crate) app: Router,
    /// Tenant "acme".
    pub(crate) a: String,
    /// Tenant "blue".
    pub(crate) b: String,
    /// An admin key (tenant "ops").
    pub(crate) admin: String,
    _db: tm_store::postgres::cluster::TestLocation,
    _dir: tempfile::TempDir,
}

pub(crate) fn harness_with(config: Config) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let db = tm_store::postgres::cluster::location(dir.path().join("t.db"));
    let location = db.as_str().to_string();
    // Brain work blocks (the PostgreSQL client runs its own runtime): off the
    // test's async context, as the service runs it on the blocking pool.
    let (brain, (a, b, admin)) = std::thread::spawn(move || {
        let mut brain =
            tm_brain::Brain::open(&location, Arc::new(tm_embed::HashEmbedder::new())).unwrap();
        // The cap is not what these tests test, and a loaded CI machine must
        // not drop a block they read.
        brain.set_cap(std::time::Duration::from_secs(120));
        let key = |tenant: &str, admin: bool| {
            let k = auth::generate().unwrap();
            brain
                .add_api_key(tenant, &k.prefix, &k.sha256, admin, Utc::now())
                .unwrap();
            k.secret
        };
        let keys = (key("acme", false), key("blue", false), key("ops", true));
        (brain, keys)
    })
    .join()
    .unwrap();
    let state = AppState::new(Arc::new(brain), config).unwrap();
    Harness {
        app: app(state),
        a,
        b,
        admin,
        _db: db,
        _dir: dir,
    }
}

pub(crate) fn harness() -> Harness {
    harness_with(Config::default())
}

impl Harness {
    pub(crate) async fn send(&self, req: Request<Body>) -> (StatusCode, Value) {
        let res = self.app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        let v = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, v)
    }

    pub(crate) async fn call(
        &self,
        method: &str,
        uri: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(method).uri(uri);
        if !key.is_empty() {
            req = req.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let req = match body {
            Some(b) => req
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(b.to_string())),
            None => req.body(Body::empty()),
        };
        self.send(req.unwrap()).await
    }

    async fn raw(
        &self,
        method: &str,
        uri: &str,
        key: &str,
        kind: &str,
        body: Vec<u8>,
    ) -> (StatusCode, Value) {
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Bearer {key}"))
            .header(header::CONTENT_TYPE, kind)
            .body(Body::from(body))
            .unwrap();
        self.send(req).await
    }

    pub(crate) async fn upload(
        &self,
        uri: &str,
        key: &str,
        name: &str,
        bytes: &[u8],
        at: &str,
    ) -> (StatusCode, Value) {
        let boundary = "XbOuNdArYx";
        let mut body = Vec::new();
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"at\"\r\n\r\n{at}\r\n")
                .as_bytes(),
        );
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        self.raw(
            "POST",
            uri,
            key,
            &format!("multipart/form-data; boundary={boundary}"),
            body,
        )
        .await
    }

    /// A subject for tenant a with a file, a conversation, checks and a quiz.
    /// The episodes a list route answers.
    async fn episodes(&self, uri: &str, key: &str) -> Vec<Value> {
        let (s, v) = self.call("GET", uri, key, None).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v.as_array()
            .or_else(|| v["episodes"].as_array())
            .unwrap()
            .clone()
    }

    /// A turn of ana's `cells` taken with `body`: the whole answer's text
    /// (the event stream with a model).
    async fn turn_stream(&self, body: Value) -> String {
        let req = Request::builder()
            .method("POST")
            .uri("/v1/subjects/ana/cells/turns")
            .header(header::AUTHORIZATION, format!("Bearer {}", self.a))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let res = self.app.clone().oneshot(req).await.unwrap();
        String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    pub(crate) async fn sample(&self) {
        let (s, v) = self
            .call("POST", "/v1/subjects", &self.a,
                Some(json!({"learner":"ana","subject":"cells","title":"Cell biology","timezone":"Europe/Madrid","at":"2026-03-01T08:00:00Z"})))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
        let (s, v) = self
            .upload(
                "/v1/subjects/ana/cells/files",
                &self.a,
                "cells.md",
                SAMPLE_MD.as_bytes(),
                "2026-03-02T09:00:00Z",
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["file_versions"], 1);
        let (s, v) = self
            .call("POST", "/v1/subjects/ana/cells/events", &self.a, Some(json!([
                {"id":"e1","type":"learner","at":"2026-07-12T09:10:00Z","text":"What does the cell membrane do?"},
                {"id":"e2","type":"tutor","at":"2026-07-12T09:10:05Z","text":"The cell membrane decides what enters and leaves the cell.","cites":[{"file":"cells.md","page":1}]},
                {"id":"e3","type":"check","at":"2026-07-12T09:20:00Z","topic":"cell membrane","verdict":"right","evaluation":"Correct.","predicted":0.5},
                {"id":"e4","type":"check","at":"2026-07-12T09:25:00Z","topic":"cytoplasm","verdict":"wrong","evaluation":"Not quite: the cytoplasm is the gel inside.","predicted":0.6},
                {"id":"e5","type":"quiz","at":"2026-07-13T15:00:00Z","title":"Cells quiz","score":7,"max":10,"concepts":["Cell membrane"]}
            ])))
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["appended"], 5, "{v}");
    }
}

const SAMPLE_MD: &str = "# Cells\n\nA **cell** is the smallest unit of life.\n\n## Cell membrane\n\nThe **cell membrane** is the layer that surrounds the cell and controls what enters and leaves it.\n\n## Cytoplasm\n\nThe **cytoplasm** is the gel inside the cell membrane where the organelles sit.\n";

#[tokio::test]
async fn subjects_are_created_listed_and_read_per_tenant() {
    let h = harness();
    h.sample().await;
    let (s, v) = h.call("GET", "/v1/subjects", &h.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["subjects"][0]["key"], "ana/cells");
    assert_eq!(v["subjects"][0]["timezone"], "Europe/Madrid");
    let (_, v) = h.call("GET", "/v1/subjects", &h.b, None).await;
    assert_eq!(v["subjects"].as_array().unwrap().len(), 0, "{v}");

    let (s, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["episodes"], 6, "{v}");
    assert_eq!(v["files"][0]["name"], "cells.md");
    assert_eq!(v["files"][0]["format"], "markdown");

    // Creating it again is not an error.
    let body = json!({"learner":"ana","subject":"cells"});
    let (s, _) = h
        .call("POST", "/v1/subjects", &h.a, Some(body.clone()))
        .await;
    assert_eq!(s, StatusCode::OK);
}

/// Learner names are per tenant: another tenant's learner name answers
/// exactly as a free one does (same status, same body) and is usable as the
/// tenant's own, with nothing of the other's in it; a name erased is free
/// again, and probing names claims nothing for anyone else.
#[tokio::test]
async fn learner_names_are_per_tenant_and_leak_nothing() {
    let h = harness();
    h.sample().await;
    let create = |learner: &str, subject: &str| json!({"learner": learner, "subject": subject, "title": "Maths", "at": "2026-03-01T08:00:00Z"});
    // acme holds "ana"; "zed" is held by nobody. For tenant b, both answer alike.
    let (s_taken, v_taken) = h
        .call("POST", "/v1/subjects", &h.b, Some(create("ana", "cells")))
        .await;
    let (s_free, v_free) = h
        .call("POST", "/v1/subjects", &h.b, Some(create("zed", "cells")))
        .await;
    assert_eq!(
        (s_taken, s_free),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    let without_key = |mut v: Value| {
        v.as_object_mut().unwrap().remove("key");
        v.as_object_mut().unwrap().remove("learner");
        v
    };
    assert_eq!(without_key(v_taken), without_key(v_free), "same body");
    // b's ana is b's own: empty, and acme's is untouched.
    let (_, mine) = h.call("GET", "/v1/subjects/ana/cells", &h.b, None).await;
    assert_eq!(mine["episodes"], 0, "{mine}");
    let (_, theirs) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(theirs["episodes"], 6, "{theirs}");
    let (s, _) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/events",
            &h.b,
            Some(
                json!({"type":"learner","at":"2026-03-02T10:00:00Z","text":"What is a fraction?"}),
            ),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let (_, theirs) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(theirs["episodes"], 6, "acme's ana got nothing of b's");
    let list = |key: String| {
        let h = &h;
        async move {
            let (_, v) = h.call("GET", "/v1/subjects", &key, None).await;
            v["subjects"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["key"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(list(h.b.clone()).await, ["ana/cells", "zed/cells"]);
    assert_eq!(list(h.a.clone()).await, ["ana/cells"]);
    // An erased learner's name is free again: a new subject, not the old one.
    let (s, _) = h
        .call("DELETE", "/v1/learners/zed?reference=probe", &h.b, None)
        .await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = h
        .call("POST", "/v1/subjects", &h.b, Some(create("zed", "cells")))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["title"], "Maths", "{v}");
    let (_, fresh) = h
        .call("GET", "/v1/subjects/zed/cells/verify", &h.b, None)
        .await;
    assert_eq!(
        (&fresh["verified"], &fresh["erased"]),
        (&json!(0), &json!(0)),
        "{fresh}"
    );
    // Erasing again finishes the work without a second record.
    let (s, first) = h
        .call("DELETE", "/v1/learners/zed?reference=again", &h.b, None)
        .await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let (s, again) = h
        .call("DELETE", "/v1/learners/zed?reference=again", &h.b, None)
        .await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(again["repeated"], true, "{again}");
    assert_eq!(again["erasure"]["id"], first["erasure"]["id"]);
    // Two erased `zed/cells` now: an export holds the name once (the newest).
    let res = h
        .app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/v1/learners/zed/export")
                .header(header::AUTHORIZATION, format!("Bearer {}", h.b))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    // Probing claimed nothing for anyone else: acme can still make a "zed".
    let (s, _) = h
        .call("POST", "/v1/subjects", &h.a, Some(create("zed", "cells")))
        .await;
    assert_eq!(s, StatusCode::CREATED);
}

#[tokio::test]
async fn another_tenants_subject_is_not_found_on_every_route() {
    let h = harness();
    h.sample().await;
    let q = json!({"question":"what is a cell","at":"2026-11-20T10:00:00Z"});
    let routes: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", "/v1/subjects/ana/cells".into(), None),
        (
            "POST",
            "/v1/subjects/ana/cells/events".into(),
            Some(json!({"type":"learner","at":"2026-11-01T10:00:00Z","text":"hi"})),
        ),
        (
            "POST",
            "/v1/subjects/ana/cells/teach".into(),
            Some(
                json!({"text":"Remember that we call it the cell skin","at":"2026-11-01T10:00:00Z"}),
            ),
        ),
        ("POST", "/v1/subjects/ana/cells/block".into(), Some(q)),
        (
            "POST",
            "/v1/subjects/ana/cells/turns".into(),
            Some(json!({"text":"hi","at":"2026-11-20T10:00:00Z"})),
        ),
        ("GET", "/v1/subjects/ana/cells/beliefs".into(), None),
        (
            "GET",
            "/v1/subjects/ana/cells/beliefs/cytoplasm".into(),
            None,
        ),
        ("GET", "/v1/subjects/ana/cells/map".into(), None),
        ("GET", "/v1/subjects/ana/cells/episodes".into(), None),
        ("GET", "/v1/subjects/ana/cells/verify".into(), None),
        ("GET", "/v1/subjects/ana/cells/checkpoint".into(), None),
        ("GET", "/v1/subjects/ana/cells/report".into(), None),
        (
            "POST",
            "/v1/subjects/ana/cells/grounding".into(),
            Some(json!({"answer":"The membrane controls what enters.","question":"membrane?"})),
        ),
        ("DELETE", "/v1/subjects/ana/cells".into(), None),
    ];
    for (method, uri, body) in &routes {
        let (s, v) = h.call(method, uri, &h.b, body.clone()).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{method} {uri}: {v}");
        assert_eq!(v["error"]["code"], "unknown_subject", "{method} {uri}");
        // Exactly what a subject that does not exist answers.
        let missing = uri.replace("ana/cells", "ana/nothing");
        let (s2, v2) = h.call(method, &missing, &h.a, body.clone()).await;
        assert_eq!(s2, StatusCode::NOT_FOUND, "{method} {missing}: {v2}");
        assert_eq!(v2["error"]["code"], "unknown_subject");
    }
    let (s, _) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.b,
            "x.md",
            b"# X\n",
            "2026-03-02T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    // Nothing the other tenant sent was written.
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(v["episodes"], 6);
}

#[tokio::test]
async fn keys_are_required_and_checked() {
    let h = harness();
    let (s, v) = h.call("GET", "/v1/subjects", "", None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert_eq!(v["error"]["code"], "unauthorized");
    let forged = format!("tm_{}", "0".repeat(64));
    let (s, _) = h.call("GET", "/v1/subjects", &forged, None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // The right prefix with a wrong secret.
    let wrong = format!("{}{}", &h.a[..15], "f".repeat(h.a.len() - 15));
    let (s, _) = h.call("GET", "/v1/subjects", &wrong, None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _) = h.call("GET", "/v1/subjects", "garbage key", None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn malformed_bodies_get_json_errors_and_write_nothing() {
    let h = harness();
    h.sample().await;
    let ev = "/v1/subjects/ana/cells/events";
    let (s, v) = h
        .raw("POST", ev, &h.a, "application/json", b"{not json".to_vec())
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["code"], "malformed_json");
    let (s, v) = h.raw("POST", ev, &h.a, "text/plain", b"{}".to_vec()).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(v["error"]["code"], "unsupported_media_type");
    // A bad verdict in the second event: the first is not written either.
    let (s, v) = h
        .call(
            "POST",
            ev,
            &h.a,
            Some(json!([
                {"type":"learner","at":"2026-11-01T10:00:00Z","text":"fine"},
                {"type":"check","at":"2026-11-01T10:01:00Z","topic":"x","verdict":"maybe"}
            ])),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["error"]["code"], "invalid_event");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("event 2"),
        "{v}"
    );
    for bad in [
        json!({"type":"file","at":"2026-11-01T10:00:00Z","name":"p","path":"../../etc/passwd"}),
        json!({"type":"subject","learner":"x","subject":"y"}),
        json!(42),
        json!([]),
        json!({"type":"learner","at":"yesterday","text":"x"}),
    ] {
        let (s, v) = h.call("POST", ev, &h.a, Some(bad.clone())).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {v}");
    }
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects",
            &h.a,
            Some(json!({"learner":"Not A Slug!","subject":"x"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/block",
            &h.a,
            Some(json!({"question":"x","budget":"big"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/teach",
            &h.a,
            Some(json!({"text":"What is a cell?"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(v["error"]["code"], "not_teaching");
    // A subject's language must be a language tag, its title a short line.
    for bad in [
        json!({"learner":"ana","subject":"new","language":"english, mostly"}),
        json!({"learner":"ana","subject":"new","language":"en_US"}),
        json!({"learner":"ana","subject":"new","title":"x".repeat(201)}),
        json!({"learner":"ana","subject":"new","title":"two\nlines"}),
    ] {
        let (s, v) = h
            .call("POST", "/v1/subjects", &h.a, Some(bad.clone()))
            .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {v}");
        assert_eq!(v["error"]["code"], "invalid_request", "{v}");
    }
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects",
            &h.a,
            Some(json!({"learner":"ana","subject":"new","language":"es-419","title":"Ciencias"})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    // A query value of the wrong form is 422 on every route, as in a body.
    for uri in [
        "/v1/subjects/ana/cells/export?at=10000-01-01T00:00:00Z",
        "/v1/learners/ana/export?at=yesterday",
        "/v1/subjects/ana/cells/episodes?limit=many",
        "/v1/subjects/ana/cells/verify?seq=-1",
        "/v1/subjects/ana/cells/report?at=10000-01-01T00:00:00Z",
    ] {
        let (s, v) = h.call("GET", uri, &h.a, None).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{uri}: {v}");
        assert_eq!(v["error"]["code"], "invalid_request", "{uri}: {v}");
    }
    let (s, v) = h
        .call("DELETE", "/v1/subjects/ana/cells?at=nonsense", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    // JSON nested past the parser's depth on /mcp: JSON-RPC's parse error, 400.
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    for body in [deep.into_bytes(), b"{\"jsonrpc\": \"2.0\", ".to_vec()] {
        let req = Request::builder()
            .method("POST")
            .uri("/mcp")
            .header(header::HOST, "localhost")
            .header(header::AUTHORIZATION, format!("Bearer {}", h.a))
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .body(Body::from(body))
            .unwrap();
        let (s, v) = h.send(req).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["error"]["code"], -32700, "{v}");
    }
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(v["episodes"], 6, "nothing was written: {v}");
    // Unknown routes and methods answer in the same shape.
    let (s, v) = h.call("GET", "/v1/nothing-here", &h.a, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(v["error"]["code"], "not_found");
    let (s, v) = h.call("DELETE", "/v1/subjects", &h.a, None).await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(v["error"]["code"], "method_not_allowed");
}

#[tokio::test]
async fn oversized_bodies_are_refused() {
    let h = harness_with(Config {
        max_json_bytes: 4 * 1024,
        max_upload_bytes: 16 * 1024,
        ..Config::default()
    });
    h.sample().await;
    let big = "word ".repeat(2000);
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/events",
            &h.a,
            Some(json!({"type":"learner","at":"2026-11-01T10:00:00Z","text":big})),
        )
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    assert_eq!(v["error"]["code"], "payload_too_large");
    // An upload may be larger than a JSON body, up to its own limit.
    let medium = format!("# Notes\n\n{}", "Osmosis moves water. ".repeat(300));
    let (s, v) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "notes.md",
            medium.as_bytes(),
            "2026-03-03T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let huge = vec![b'a'; 64 * 1024];
    let (s, v) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "huge.txt",
            &huge,
            "2026-03-03T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    assert_eq!(v["error"]["code"], "payload_too_large");
}

#[tokio::test]
async fn uploads_read_markdown_text_and_refuse_broken_pdfs() {
    let h = harness();
    h.sample().await;
    let (s, v) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "notes.txt",
            b"Osmosis\n\nOsmosis is the movement of water across a membrane.",
            "2026-03-04T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (s, v) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "broken.pdf",
            b"%PDF-1.4 not really a pdf",
            "2026-03-04T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["error"]["code"], "invalid_event");
    // A few hundred bytes asking for a form to be run four thousand times:
    // refused with the limit named, and nothing stored.
    let (_, before) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    let bomb = tm_ingest::fuzzing::pdf(&[0, 1, 0, 15, 0, 0, 2, 0, 255, 7, 0, 255, 7]);
    assert!(bomb.len() < 2048, "{} bytes", bomb.len());
    let (s, v) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "reuse.pdf",
            &bomb,
            "2026-03-04T09:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("content operators for one page"),
        "{v}"
    );
    let (_, after) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(after, before, "nothing was stored");
    // A replacement: same name, new bytes, a new version.
    let (s, _) = h
        .upload(
            "/v1/subjects/ana/cells/files",
            &h.a,
            "cells.md",
            format!("{SAMPLE_MD}\n## Nucleus\n\nThe **nucleus** holds the DNA.\n").as_bytes(),
            "2026-10-01T08:00:00Z",
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    let files = v["files"].as_array().unwrap();
    let cells: Vec<&Value> = files.iter().filter(|f| f["name"] == "cells.md").collect();
    assert_eq!(cells.len(), 2, "{v}");
    assert!(cells.iter().any(|f| !f["replaced_at"].is_null()));
    let (_, m) = h
        .call("GET", "/v1/subjects/ana/cells/map", &h.a, None)
        .await;
    let names: Vec<&str> = m["map"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().any(|n| n.eq_ignore_ascii_case("nucleus")),
        "{names:?}"
    );
    // The answer that cited the old version now reads as changed.
    let (_, b) = h
        .call("POST", "/v1/subjects/ana/cells/block", &h.a, Some(json!({"question":"What did we cover in July about the cell membrane?","at":"2026-11-20T10:00:00Z"})))
        .await;
    let e2 = b["recalled"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["external_id"] == "e2");
    assert_eq!(
        e2.map(|r| r["citation"].clone()),
        Some(json!("changed")),
        "{b}"
    );
}

#[tokio::test]
async fn block_beliefs_map_log_verify_checkpoint_and_teach() {
    let h = harness();
    h.sample().await;
    let (s, b) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/block",
            &h.a,
            Some(json!({"question":"What did we cover in July?","at":"2026-11-20T10:00:00Z"})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b["mode"], "record");
    assert_eq!(b["dropped"], false);
    assert!(
        b["block"]
            .as_str()
            .unwrap()
            .starts_with("===== YOUR MEMORY"),
        "{b}"
    );
    assert!(b["tokens"].as_u64().unwrap() > 0);
    assert_eq!(b["window"]["empty"], false);
    let ids: Vec<&str> = b["recalled"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["external_id"].as_str())
        .collect();
    assert!(ids.contains(&"e1") || ids.contains(&"e2"), "{ids:?}");
    // An empty month says so.
    let (_, b) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/block",
            &h.a,
            Some(json!({"question":"What did we cover in May?","at":"2026-11-20T10:00:00Z"})),
        )
        .await;
    assert_eq!(b["window"]["empty"], true, "{b}");
    assert!(
        b["block"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("no record"),
        "{b}"
    );

    let (s, v) = h
        .call("GET", "/v1/subjects/ana/cells/beliefs", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::OK);
    let cur = v["current"].as_array().unwrap();
    assert!(cur.len() >= 2, "{v}");
    assert!(
        cur.iter()
            .all(|b| b["history"].as_array().is_some_and(|h| !h.is_empty()))
    );
    assert_eq!(v["checks"]["recorded"], 2);
    let (s, v) = h
        .call(
            "GET",
            "/v1/subjects/ana/cells/beliefs/Cytoplasm",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v[0]["claim"], "struggles_with", "{v}");
    let (s, v) = h
        .call(
            "GET",
            "/v1/subjects/ana/cells/beliefs/photosynthesis",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");

    let (_, m) = h
        .call("GET", "/v1/subjects/ana/cells/map", &h.a, None)
        .await;
    assert!(
        m["teaching_order"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|l| l.as_array().unwrap())
            .any(|c| c == "Cytoplasm"),
        "{m}"
    );

    let (_, log) = h
        .call(
            "GET",
            "/v1/subjects/ana/cells/episodes?from=2&limit=2",
            &h.a,
            None,
        )
        .await;
    assert_eq!(log.as_array().unwrap().len(), 2);
    assert_eq!(log[0]["seq"], 2);

    let (_, cp) = h
        .call("GET", "/v1/subjects/ana/cells/checkpoint", &h.a, None)
        .await;
    assert_eq!(cp["seq"], 6);
    let uri = format!(
        "/v1/subjects/ana/cells/verify?seq=6&head_hash={}",
        cp["head_hash"].as_str().unwrap()
    );
    let (s, r) = h.call("GET", &uri, &h.a, None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(r["state"], "intact", "{r}");
    assert_eq!(r["checkpoint_checked"], true);
    let (s, _) = h
        .call("GET", "/v1/subjects/ana/cells/verify?seq=6", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    let (s, t) = h
        .call("POST", "/v1/subjects/ana/cells/teach", &h.a,
            Some(json!({"text":"Remember that in our class we call the cytoplasm the cell soup","at":"2026-11-01T10:00:00Z"})))
        .await;
    assert_eq!(s, StatusCode::OK, "{t}");
    assert_eq!(t["appended"], 1);
    assert!(
        t["concepts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "Cytoplasm"),
        "{t}"
    );
    // The same event again is recognised and skipped.
    let (_, t) = h
        .call("POST", "/v1/subjects/ana/cells/teach", &h.a,
            Some(json!({"text":"Remember that in our class we call the cytoplasm the cell soup","at":"2026-11-01T10:00:00Z"})))
        .await;
    assert_eq!(t["appended"], 0, "{t}");
}

#[tokio::test]
async fn health_metrics_and_openapi() {
    let h = harness();
    h.sample().await;
    let (s, v) = h.call("GET", "/healthz", "", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v, "ok\n");
    h.call(
        "POST",
        "/v1/subjects/ana/cells/block",
        &h.a,
        Some(json!({"question":"what is a cell","at":"2026-11-20T10:00:00Z"})),
    )
    .await;
    let (_, m) = h.call("GET", "/metrics", "", None).await;
    let m = m.as_str().unwrap();
    assert!(m.contains(r#"tm_http_requests_total{method="POST",route="/v1/subjects/{learner}/{subject}/block",status="200"} 1"#), "{m}");
    assert!(m.contains("tm_http_request_duration_seconds_bucket"), "{m}");
    assert!(m.contains("tm_blocks_built_total 1"), "{m}");
    assert!(m.contains("tm_blocks_dropped_total 0"), "{m}");
}

/// Every route the router serves, as (method, OpenAPI path).
const ROUTES: &[(&str, &str)] = &[
    ("get", "/healthz"),
    ("get", "/metrics"),
    ("post", "/v1/subjects"),
    ("get", "/v1/subjects"),
    ("get", "/v1/subjects/{learner}/{subject}"),
    ("post", "/v1/subjects/{learner}/{subject}/events"),
    ("post", "/v1/subjects/{learner}/{subject}/files"),
    ("post", "/v1/subjects/{learner}/{subject}/teach"),
    ("post", "/v1/subjects/{learner}/{subject}/block"),
    ("post", "/v1/subjects/{learner}/{subject}/turns"),
    ("get", "/v1/subjects/{learner}/{subject}/beliefs"),
    ("get", "/v1/subjects/{learner}/{subject}/beliefs/{about}"),
    ("get", "/v1/subjects/{learner}/{subject}/map"),
    ("get", "/v1/subjects/{learner}/{subject}/episodes"),
    ("get", "/v1/subjects/{learner}/{subject}/verify"),
    ("get", "/v1/subjects/{learner}/{subject}/checkpoint"),
    ("get", "/v1/subjects/{learner}/{subject}/report"),
    ("post", "/v1/subjects/{learner}/{subject}/grounding"),
    ("post", "/v1/admin/nightly"),
    ("delete", "/v1/subjects/{learner}/{subject}"),
    ("delete", "/v1/subjects/{learner}/{subject}/episodes/{seq}"),
    ("delete", "/v1/learners/{learner}"),
    ("delete", "/v1/learners"),
    ("get", "/v1/subjects/{learner}/{subject}/export"),
    ("get", "/v1/learners/{learner}/export"),
    ("get", "/v1/classes/{course}"),
];

#[tokio::test]
async fn the_openapi_document_lists_every_route() {
    let h = harness();
    let (s, doc) = h.call("GET", "/v1/openapi.json", "", None).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().unwrap();
    for (method, path) in ROUTES {
        assert!(
            paths.get(*path).and_then(|p| p.get(*method)).is_some(),
            "{method} {path} is missing from the document"
        );
    }
    let documented: usize = paths.values().map(|p| p.as_object().unwrap().len()).sum();
    assert_eq!(
        documented,
        ROUTES.len(),
        "the document lists a route this test does not know: {:?}",
        paths.keys().collect::<Vec<_>>()
    );
    // And each listed route is really served (not 404/405 for lack of a route).
    for (method, path) in ROUTES {
        let uri = path
            .replace("{learner}", "ana")
            .replace("{subject}", "cells")
            .replace("{about}", "x")
            .replace("{course}", "cells");
        let (s, v) = h.call(&method.to_uppercase(), &uri, &h.a, None).await;
        assert!(
            s != StatusCode::METHOD_NOT_ALLOWED
                && !(s == StatusCode::NOT_FOUND && v["error"]["code"] == "not_found"),
            "{method} {uri}: {s} {v}"
        );
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
}

#[tokio::test]
async fn a_turn_without_a_model_is_a_marked_dry_run_and_records_the_question() {
    let h = harness();
    h.sample().await;
    let (s, v) = h
        .call("POST", "/v1/subjects/ana/cells/turns", &h.a,
            Some(json!({"text":"What did we cover in July about the cell membrane?","at":"2026-11-20T10:00:00Z","id":"t1",
                "assessment":"ASSESSMENT RESULTS:\nNO QUIZ ATTEMPTS recorded"})))
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["dry_run"], true);
    let prompt = v["prompt"].as_str().unwrap();
    assert!(prompt.contains("===== YOUR MEMORY"), "{prompt}");
    // The legacy section that only says nothing is recorded is dropped.
    assert!(!prompt.contains("NO QUIZ ATTEMPTS"), "{prompt}");
    assert_eq!(
        v["messages"][1]["content"],
        "What did we cover in July about the cell membrane?"
    );
    assert_eq!(v["block"]["mode"], "record");
    // The question was recorded after the block was built: it never recalls itself.
    assert_eq!(v["learner_seq"], 7);
    assert!(
        v["block"]["recalled"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["external_id"] != "t1")
    );
    let (_, log) = h
        .call("GET", "/v1/subjects/ana/cells/episodes?from=7", &h.a, None)
        .await;
    assert_eq!(log[0]["external_id"], "t1");
    assert_eq!(log[0]["kind"], "question");
}

/// A tiny OpenAI-compatible chat endpoint on loopback that streams a fixed
/// answer and keeps the requests it received.
async fn fake_model() -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::routing::post;
    let seen = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let kept = seen.clone();
    let router = Router::new().route(
        "/v1/chat/completions",
        post(move |axum::Json(body): axum::Json<Value>| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push(body);
                let mut sse = String::new();
                for piece in ["In July we ", "went over the ", "cell membrane."] {
                    sse.push_str(&format!(
                        "data: {}\n\n",
                        json!({"choices":[{"delta":{"content":piece}}]})
                    ));
                }
                sse.push_str("data: [DONE]\n\n");
                ([(header::CONTENT_TYPE, "text/event-stream")], sse)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{addr}"), seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_with_a_model_streams_the_answer_and_records_it_with_its_memories() {
    let (url, seen) = fake_model().await;
    let h = harness_with(Config {
        chat: Some(tm_ingest::extract::LlmConfig::new(url, "fake-model")),
        ..Config::default()
    });
    h.sample().await;
    let req = Request::builder()
        .method("POST")
        .uri("/v1/subjects/ana/cells/turns")
        .header(header::AUTHORIZATION, format!("Bearer {}", h.a))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"text":"What did we cover in July?","at":"2026-11-20T10:00:00Z"}).to_string(),
        ))
        .unwrap();
    let res = h.app.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let body =
        String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let events: Vec<(&str, Value)> = body
        .split("\n\n")
        .filter_map(|chunk| {
            let name = chunk.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = chunk.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name, serde_json::from_str(data).unwrap()))
        })
        .collect();
    let names: Vec<&str> = events.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        ["block", "delta", "delta", "delta", "done"],
        "{body}"
    );
    let streamed: String = events
        .iter()
        .filter(|(n, _)| *n == "delta")
        .map(|(_, v)| v["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "In July we went over the cell membrane.");
    let recalled = events[0].1["recalled"].as_array().unwrap().clone();
    assert!(!recalled.is_empty());
    assert_eq!(events[4].1["answer_seq"], 8);
    assert!(
        ["answered", "partial", "couldnt"].contains(&events[4].1["stance"].as_str().unwrap()),
        "{}",
        events[4].1
    );

    // The model was sent the assembled prompt with the memory block in it.
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["stream"], true);
    assert!(
        sent[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("===== YOUR MEMORY")
    );

    // The answer is in the log, after the question.
    let (_, log) = h
        .call("GET", "/v1/subjects/ana/cells/episodes?from=7", &h.a, None)
        .await;
    assert_eq!(log[0]["kind"], "question");
    assert_eq!(log[1]["kind"], "answer");
    assert_eq!(log[1]["text"], "In July we went over the cell membrane.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_model_ends_the_stream_with_an_error_event() {
    // Nothing listens on this port: the call fails.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let h = harness_with(Config {
        chat: Some(tm_ingest::extract::LlmConfig::new(url, "m")),
        ..Config::default()
    });
    h.sample().await;
    let body = h
        .turn_stream(json!({"text":"hello","at":"2026-11-20T10:00:00Z"}))
        .await;
    assert!(body.contains("event: error"), "{body}");
    assert!(body.contains("model_failed"), "{body}");
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(
        v["episodes"], 7,
        "the question is recorded, no answer is invented"
    );
}

/// A model server killed mid-answer: the learner's message is kept, the
/// turn ends with an error event after the piece that arrived, and nothing
/// half-written is recorded as the tutor's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_killed_mid_answer_ends_the_turn_with_an_error_and_records_no_answer() {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = std::io::Read::read_exact(&mut reader, &mut body);
            let chunk = json!({"choices":[{"delta":{"content":"In July we went over "}}]});
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {chunk}\n\n"
            );
            let _ = stream.flush();
            // Killed: the connection closes with the answer half said.
            drop(stream);
        }
    });
    let h = harness_with(Config {
        chat: Some(tm_ingest::extract::LlmConfig::new(url, "m")),
        ..Config::default()
    });
    h.sample().await;
    let body = h
        .turn_stream(
            json!({"text":"What did we cover in July?","at":"2026-11-20T10:00:00Z","id":"t9"}),
        )
        .await;
    let (delta, error) = (body.find("event: delta"), body.find("event: error"));
    assert!(
        delta.is_some() && error > delta,
        "the piece, then the error: {body}"
    );
    assert!(body.contains("model_failed"), "{body}");
    assert!(
        body.contains("ended before the answer was finished"),
        "{body}"
    );
    assert!(!body.contains("event: done"), "{body}");
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(
        v["episodes"], 7,
        "the question is kept, no answer recorded: {v}"
    );
    let (_, log) = h
        .call("GET", "/v1/subjects/ana/cells/episodes?from=7", &h.a, None)
        .await;
    assert_eq!(log[0]["external_id"], "t9");
    assert_eq!(log[0]["kind"], "question");
}

#[tokio::test]
async fn the_report_as_json_and_as_a_page() {
    let h = harness();
    h.sample().await;
    // Learner text with markup, taught: the note is drawn on the page.
    let (s, t) = h
        .call("POST", "/v1/subjects/ana/cells/teach", &h.a,
            Some(json!({"text":"Remember that the cytoplasm is <script>alert('x')</script> jelly","at":"2026-09-01T10:00:00Z"})))
        .await;
    assert_eq!(s, StatusCode::OK, "{t}");
    let (s, r) = h
        .call(
            "GET",
            "/v1/subjects/ana/cells/report?at=2026-11-20T10:00:00Z",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["chain"]["state"], "intact");
    let months: Vec<&str> = r["report"]["activity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["month"].as_str().unwrap())
        .collect();
    assert_eq!(months, ["2026-03", "2026-07", "2026-09"]);
    assert_eq!(
        r["report"]["calibration"]["n"], 2,
        "{}",
        r["report"]["calibration"]
    );
    assert!(
        r["concepts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "Cytoplasm")
    );
    assert!(
        r["beliefs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| !b["history"].as_array().unwrap().is_empty())
    );

    let page = |uri: String, cookie: Option<String>| {
        let mut req = Request::builder().uri(uri);
        if let Some(c) = cookie {
            req = req.header(header::COOKIE, c);
        }
        let app = h.app.clone();
        async move {
            let res = app.oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
            let status = res.status();
            let cookie = res
                .headers()
                .get(header::SET_COOKIE)
                .map(|v| v.to_str().unwrap().to_string());
            let body =
                String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec())
                    .unwrap();
            (status, cookie, body)
        }
    };
    // A key in the address: a 303 to the address without it, with the cookie.
    let (s, cookie, _) = page(
        format!("/subjects/ana/cells?key={}&at=2026-11-20T10:00:00Z", h.a),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    let cookie = cookie.unwrap();
    assert!(
        cookie.contains("HttpOnly") && !cookie.contains("Secure"),
        "{cookie}"
    );
    assert!(
        cookie.starts_with("tm_session=v1.")
            && cookie.contains("Path=/subjects/ana/cells;")
            && cookie.contains("Max-Age=43200")
            && !cookie.contains(&h.a[3..]),
        "a signed session for this page, holding no key: {cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_string();
    let res = h
        .app
        .clone()
        .oneshot(
            Request::builder()
                .uri(format!("/subjects/ana/cells?key={}", h.a))
                .header("x-forwarded-proto", "https")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.headers()[header::LOCATION], "/subjects/ana/cells");
    assert!(
        res.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("; Secure"),
        "behind HTTPS the cookie is Secure"
    );
    let (s, _, html) = page(
        "/subjects/ana/cells?at=2026-11-20T10:00:00Z".into(),
        Some(session.clone()),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        html.contains("data-concept=\"Cytoplasm\""),
        "the map draws its concepts"
    );
    assert!(html.contains("<details class=\"belief\">"));
    assert!(html.contains("&lt;script&gt;"), "learner text is escaped");
    assert!(
        !html.contains("<script>"),
        "no learner markup reaches the page"
    );
    assert!(
        html.contains("no record"),
        "the quiet months between are shown"
    );
    assert!(html.contains("Chain intact"));
    // Reports are never cached.
    for uri in ["/subjects/ana/cells", "/v1/subjects/ana/cells/report"] {
        let res = h
            .app
            .clone()
            .oneshot(
                Request::builder()
                    .uri(uri)
                    .header(header::AUTHORIZATION, format!("Bearer {}", h.a))
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{uri}");
        assert_eq!(res.headers()[header::CACHE_CONTROL], "no-store", "{uri}");
    }
    // The raw key as a cookie opens nothing; a session opens only its own
    // page, only until it expires, and cannot be given a later expiry.
    let (s, _, _) = page(
        "/subjects/ana/cells".into(),
        Some(format!("tm_key={}", h.a)),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _, _) = page("/subjects/ana/other".into(), Some(session.clone())).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "a session is for its own page");
    let prefix = tm_server::auth::prefix_of(&h.a).unwrap();
    let digest = tm_server::auth::digest(&h.a);
    let past = chrono::Utc::now() - chrono::Duration::minutes(1);
    let old = tm_server::session::issue(prefix, &digest, "/subjects/ana/cells", past);
    let (s, _, _) = page(
        "/subjects/ana/cells".into(),
        Some(format!("tm_session={old}")),
    )
    .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "an expired session");
    let (exp, mac) = session.rsplit_once('.').unwrap();
    let (head, secs) = exp.rsplit_once('.').unwrap();
    let later = format!("{head}.{}.{mac}", secs.parse::<i64>().unwrap() + 86_400);
    let (s, _, _) = page("/subjects/ana/cells".into(), Some(later)).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "an expiry moved by hand");
    // Without a key: 401; another tenant's key: 404, as HTML.
    let (s, _, html) = page("/subjects/ana/cells".into(), None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(html.starts_with("<!doctype html>"));
    let (s, _, _) = page(format!("/subjects/ana/cells?key={}", h.b), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn grounding_traces_claims_and_saves_the_stance() {
    let h = harness();
    h.sample().await;
    // An answer recorded with an id, which the stance is saved on.
    h.call("POST", "/v1/subjects/ana/cells/events", &h.a, Some(json!([
        {"type":"learner","at":"2026-09-01T10:00:00Z","text":"What is photosynthesis?"},
        {"id":"a9","type":"tutor","at":"2026-09-01T10:00:05Z","text":"I cannot answer that from your files: they do not cover photosynthesis."}
    ]))).await;
    let (s, g) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/grounding",
            &h.a,
            Some(json!({
            "answer": "The cytoplasm is the gel inside the cell membrane where the organelles sit.",
            "question": "What is the cytoplasm?", "at": "2026-11-20T10:00:00Z"})),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["stance"], "answered", "{g}");
    assert_eq!(g["saved"], false);
    let traced = &g["traces"][0]["source"];
    assert_eq!(traced["type"], "file", "{g}");
    assert_eq!(traced["file"], "cells.md");

    let (s, g) = h
        .call("POST", "/v1/subjects/ana/cells/grounding", &h.a, Some(json!({
            "answer": "I cannot answer that from your files: they do not cover photosynthesis.",
            "question": "What is photosynthesis?", "answer_id": "a9", "at": "2026-09-01T10:00:06Z"})))
        .await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["stance"], "couldnt", "{g}");
    assert_eq!(g["saved"], true);
    // The report lists it among the questions the files could not answer.
    let (_, r) = h
        .call("GET", "/v1/subjects/ana/cells/report", &h.a, None)
        .await;
    let unanswered = r["report"]["couldnt_answer"].as_array().unwrap();
    assert_eq!(unanswered.len(), 1, "{r}");
    assert_eq!(unanswered[0]["question"], "What is photosynthesis?");
    // Naming a question as the answer is refused.
    let (s, _) = h
        .call(
            "POST",
            "/v1/subjects/ana/cells/grounding",
            &h.a,
            Some(json!({
            "answer": "x", "question": "y", "answer_id": "e1"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn the_nightly_loop_is_for_admin_keys_and_runs_once_a_day() {
    let h = harness();
    h.sample().await;
    let body = json!({"at":"2026-07-14T03:00:00Z"});
    let (s, v) = h
        .call("POST", "/v1/admin/nightly", &h.a, Some(body.clone()))
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    assert_eq!(v["error"]["code"], "forbidden");
    let (s, v) = h
        .call("POST", "/v1/admin/nightly", &h.admin, Some(body.clone()))
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["nights"][0]["ran"], 1, "{v}");
    assert_eq!(v["nights"][0]["consolidated"], 1, "{v}");
    // Idempotent: the same night again writes nothing.
    let (_, again) = h
        .call("POST", "/v1/admin/nightly", &h.admin, Some(body))
        .await;
    assert_eq!(again["nights"][0]["ran"], 0, "{again}");
    let (s, _) = h
        .call(
            "POST",
            "/v1/admin/nightly",
            &h.admin,
            Some(json!({"since":"last week"})),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
}

/// One rule for a file's name whether it comes in an event or an upload, and
/// an upload carries one file: a second `file` field is refused, not dropped.
#[tokio::test]
async fn file_names_follow_one_rule_and_an_upload_carries_one_file() {
    let h = harness();
    h.sample().await;
    for bad in [
        "../notes.md",
        "a/b.md",
        "nul\u{0}.md",
        "..",
        "back\\slash.md",
    ] {
        let (s, v) = h
            .call(
                "POST",
                "/v1/subjects/ana/cells/events",
                &h.a,
                Some(json!({"type":"file","at":"2026-09-01T10:00:00Z","name":bad,"content":"x"})),
            )
            .await;
        assert_eq!(
            s,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad:?} as an event: {v}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not a usable file name")
        );
        let (s, v) = h
            .upload(
                "/v1/subjects/ana/cells/files",
                &h.a,
                &bad.replace('\0', "%00"),
                b"x",
                "2026-09-01T10:00:00Z",
            )
            .await;
        if !bad.contains('\0') {
            assert_eq!(
                s,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{bad:?} as an upload: {v}"
            );
            assert!(
                v["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("not a usable file name"),
                "{v}"
            );
        }
    }
    let boundary = "XbOuNdArYx";
    let part = |name: &str, text: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\r\n{text}\r\n"
        )
    };
    let body = format!(
        "{}{}--{boundary}--\r\n",
        part("one.md", "# One"),
        part("two.md", "# Two")
    );
    let (s, v) = h
        .raw(
            "POST",
            "/v1/subjects/ana/cells/files",
            &h.a,
            &format!("multipart/form-data; boundary={boundary}"),
            body.into_bytes(),
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sent twice"),
        "{v}"
    );
}

/// Erasure is tenant-scoped: another tenant's learner is a missing one, the
/// whole tenant needs its name to confirm, and an erased subject verifies
/// intact with its episodes marked erased.
#[tokio::test]
async fn erasure_routes_are_tenant_scoped_and_leave_a_verifiable_chain() {
    let h = harness();
    h.sample().await;
    // Another tenant cannot erase acme's learner: exactly a missing learner.
    let (s, v) = h
        .call("DELETE", "/v1/learners/ana?reference=x", &h.b, None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    let (s2, v2) = h
        .call("DELETE", "/v1/learners/nobody?reference=x", &h.a, None)
        .await;
    assert_eq!(
        (s2, &v2["error"]["code"]),
        (StatusCode::NOT_FOUND, &v["error"]["code"])
    );
    let (_, v) = h.call("GET", "/v1/subjects/ana/cells", &h.a, None).await;
    assert_eq!(v["episodes"], 6, "nothing was erased");
    // A whole tenant needs confirm=<its name>; bad input is a 4xx.
    let (s, v) = h
        .call("DELETE", "/v1/learners?confirm=blue", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let long = "r".repeat(201);
    let (s, v) = h
        .call(
            "DELETE",
            &format!("/v1/learners/ana?reference={long}"),
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let (s, _) = h
        .call("DELETE", "/v1/learners/ana?at=yesterday", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    let (s, v) = h
        .call(
            "DELETE",
            "/v1/learners/ana?reference=ticket%204711&at=2026-11-30T12:00:00Z",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["subjects"], json!(["ana/cells"]));
    assert_eq!(v["erasure"]["episodes"], 6);
    assert_eq!(v["erasure"]["reference"], "ticket 4711");
    let (_, v) = h
        .call("GET", "/v1/subjects/ana/cells/verify", &h.a, None)
        .await;
    assert_eq!(v["state"], "intact", "{v}");
    assert_eq!(v["erased"], 6);
    assert_eq!(v["erasures"][0]["scope"], "learner");
    let list = h.episodes("/v1/subjects/ana/cells/episodes", &h.a).await;
    assert_eq!(list.len(), 6);
    assert!(
        list.iter().all(|e| e["erased"] == true && e["text"] == ""),
        "{v}"
    );
    // The report says the positions were erased; it never fails on them.
    let (s, v) = h
        .call(
            "GET",
            "/v1/subjects/ana/cells/report?at=2026-12-01T00:00:00Z",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["chain"]["erased"], 6, "{v}");
    assert_eq!(v["chain"]["state"], "intact");
    // The whole tenant, confirmed by name: what is left of it (ana was
    // erased already).
    let (s, _) = h
        .call(
            "POST",
            "/v1/subjects",
            &h.a,
            Some(json!({"learner":"ben","subject":"maths"})),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, v) = h
        .call(
            "DELETE",
            "/v1/learners?confirm=acme&reference=closing",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["erasure"]["scope"], "tenant");
    assert_eq!(v["subjects"], json!(["ben/maths"]));
    assert_eq!(v["repeated"], false);
    // Asked again: nothing left to erase, no second record.
    let (s, again) = h
        .call(
            "DELETE",
            "/v1/learners?confirm=acme&reference=closing",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(again["repeated"], true);
    assert_eq!(again["erasure"]["id"], v["erasure"]["id"]);
}

/// An export is tenant-scoped like an erasure: another tenant's learner or
/// subject is a missing one; the archive holds the learner's histories with
/// their files, and nothing of another learner.
#[tokio::test]
async fn export_routes_are_tenant_scoped_and_hold_the_learners_histories() {
    let h = harness();
    h.sample().await;
    let (s, v) = h
        .call("POST", "/v1/subjects", &h.b,
            Some(json!({"learner":"ben","subject":"maths","title":"Maths","at":"2026-03-01T08:00:00Z"})))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let (s, v) = h
        .call(
            "POST",
            "/v1/subjects/ben/maths/events",
            &h.b,
            Some(json!([
                {"type":"learner","at":"2026-07-12T09:10:00Z","text":"What is a prime number?"}
            ])),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let get = |uri: String, key: String| {
        let app = h.app.clone();
        async move {
            let req = Request::builder()
                .uri(uri)
                .header(header::AUTHORIZATION, format!("Bearer {key}"))
                .body(Body::empty())
                .unwrap();
            let res = app.oneshot(req).await.unwrap();
            let status = res.status();
            let kind = res
                .headers()
                .get(header::CONTENT_TYPE)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            let bytes = res.into_body().collect().await.unwrap().to_bytes().to_vec();
            (status, kind, bytes)
        }
    };
    // Another tenant's learner and subject: exactly missing ones.
    for uri in ["/v1/learners/ana/export", "/v1/subjects/ana/cells/export"] {
        let (s, _, body) = get(uri.into(), h.b.clone()).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{uri}");
        // Nothing but the error shape: no byte of the learner's data.
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert!(v["error"]["code"].is_string(), "{v}");
        assert!(!v.to_string().contains("membrane"), "{v}");
    }
    let (s, _, theirs) = get("/v1/learners/ana/export".into(), h.b.clone()).await;
    let (s2, _, missing) = get("/v1/learners/nobody/export".into(), h.a.clone()).await;
    assert_eq!((s, s2), (StatusCode::NOT_FOUND, StatusCode::NOT_FOUND));
    let code = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap()["error"]["code"].clone();
    assert_eq!(code(&theirs), code(&missing));
    let (s, _, body) = get("/v1/learners/ana/export?at=tomorrow".into(), h.a.clone()).await;
    assert_eq!(
        s,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        String::from_utf8_lossy(&body)
    );

    let (s, kind, body) = get(
        "/v1/learners/ana/export?at=2026-11-30T12:00:00Z".into(),
        h.a.clone(),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(kind, "application/zip");
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(body)).unwrap();
    let read = |zip: &mut zip::ZipArchive<std::io::Cursor<Vec<u8>>>, name: &str| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name(name).unwrap(), &mut text).unwrap();
        text
    };
    let manifest: Value = serde_json::from_str(&read(&mut zip, "manifest.json")).unwrap();
    assert_eq!(manifest["scope"], "learner");
    assert_eq!(manifest["subjects"][0]["subject"], "ana/cells");
    assert_eq!(manifest["subjects"][0]["events"], 6);
    assert_eq!(manifest["subjects"][0]["same_head_on_import"], true);
    let history = read(&mut zip, "ana/cells/history.jsonl");
    let first: Value = serde_json::from_str(history.lines().next().unwrap()).unwrap();
    assert_eq!(
        (&first["type"], &first["learner"]),
        (&json!("subject"), &json!("ana"))
    );
    assert_eq!(history.lines().count(), 7, "{history}");
    assert!(history.contains("What does the cell membrane do?"));
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("ana/cells/files/") && n.ends_with("cells.md")),
        "{names:?}"
    );
    for n in &names {
        assert!(!n.contains("ben"), "{names:?}");
        assert!(!read(&mut zip, n).contains("prime number"), "{n}");
    }
    // One subject alone.
    let (s, _, body) = get("/v1/subjects/ben/maths/export".into(), h.b.clone()).await;
    assert_eq!(s, StatusCode::OK);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(body)).unwrap();
    let manifest: Value = serde_json::from_str(&read(&mut zip, "manifest.json")).unwrap();
    assert_eq!(manifest["scope"], "subject");
    assert_eq!(manifest["subjects"].as_array().unwrap().len(), 1);
}

/// One episode is erased through its subject's route, tenant-scoped, with a
/// reason; the chain stays intact and says so.
#[tokio::test]
async fn one_episode_is_erased_with_a_reason() {
    let h = harness();
    h.sample().await;
    let list = h.episodes("/v1/subjects/ana/cells/episodes", &h.a).await;
    let wrong = list
        .iter()
        .find(|e| e["external_id"] == "e4")
        .expect("the wrong check")["seq"]
        .as_u64()
        .unwrap();
    let uri = format!(
        "/v1/subjects/ana/cells/episodes/{wrong}?reason=a%20wrong%20fact&at=2026-11-30T12:00:00Z"
    );
    let (s, v) = h.call("DELETE", &uri, &h.b, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "another tenant's subject: {v}");
    let (s, v) = h
        .call("DELETE", "/v1/subjects/ana/cells/episodes/999", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    let (s, v) = h
        .call("DELETE", "/v1/subjects/ana/cells/episodes/1", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "a file's episode: {v}");
    let (s, v) = h.call("DELETE", &uri, &h.a, None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["erasure"]["scope"], "episode");
    assert_eq!(v["erasure"]["reason"], "a wrong fact");
    let (_, v) = h
        .call("GET", "/v1/subjects/ana/cells/verify", &h.a, None)
        .await;
    assert_eq!(
        (&v["state"], &v["erased"]),
        (&json!("intact"), &json!(1)),
        "{v}"
    );
    let (_, v) = h
        .call("GET", "/v1/subjects/ana/cells/beliefs", &h.a, None)
        .await;
    assert!(
        !v.to_string().contains("cytoplasm"),
        "re-derived without it: {v}"
    );
    let (s, _) = h.call("DELETE", &uri, &h.a, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "erased already");
}
