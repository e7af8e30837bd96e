//! The class view and the tenant's home page through the router: JSON and
//! CSV at the API and at the page's own address, tenant scoping, and the
//! home page's tenant-wide session.

use crate::api::harness;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

/// (status, headers, body) of a GET with optional headers.
pub(crate) async fn get_raw(
    app: &axum::Router,
    uri: &str,
    headers: impl IntoIterator<Item = (header::HeaderName, String)>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut req = Request::builder().uri(uri);
    for (name, value) in headers {
        req = req.header(name, value);
    }
    let res = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (status, h) = (res.status(), res.headers().clone());
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, h, String::from_utf8_lossy(&body).into_owned())
}

/// (status, content type, set-cookie, body) of a GET with optional headers.
async fn get(
    app: &axum::Router,
    uri: &str,
    headers: impl IntoIterator<Item = (header::HeaderName, String)>,
) -> (StatusCode, String, Option<String>, String) {
    let (status, h, body) = get_raw(app, uri, headers).await;
    let kind = h
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let cookie = h
        .get(header::SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    (status, kind, cookie, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_is_every_learner_of_the_tenant_with_the_subject_name() {
    let h = harness();
    h.sample().await;
    // A second learner of acme's in the same course, and one of blue's.
    for (key, learner) in [(&h.a, "ben"), (&h.b, "dee")] {
        let (s, v) = h
            .call("POST", "/v1/subjects", key,
                Some(json!({"learner": learner, "subject": "cells", "title": "Cell biology", "at": "2026-03-01T08:00:00Z"})))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    let (s, v) = h
        .call(
            "GET",
            "/v1/classes/cells?at=2026-07-20T00:00:00Z",
            &h.a,
            None,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let learners: Vec<&str> = v["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["learner"].as_str().unwrap())
        .collect();
    assert_eq!(learners, ["ana", "ben"], "acme's learners only");
    let concepts: Vec<&str> = v["concepts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    let col = |k: &str| concepts.iter().position(|c| *c == k).unwrap();
    assert_eq!(
        v["learners"][0]["standings"][col("cell membrane")],
        "understands"
    );
    assert_eq!(v["learners"][0]["standings"][col("cytoplasm")], "struggles");
    assert_eq!(
        v["learners"][1]["standings"][col("cytoplasm")],
        "no_evidence"
    );
    assert_eq!(v["struggling"][0]["key"], "cytoplasm");
    assert_eq!(v["quiet"], json!(["ben"]), "ben has no episode at all");

    // Blue sees its own class of one; a course nobody has is a 404.
    let (_, v) = h.call("GET", "/v1/classes/cells", &h.b, None).await;
    assert_eq!(v["learners"].as_array().unwrap().len(), 1);
    let (s, v) = h.call("GET", "/v1/classes/physics", &h.a, None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert_eq!(
        v["error"]["code"], "unknown_subject",
        "as a missing subject is"
    );
    let (s, _) = h
        .call("GET", "/v1/classes/Not%20a%20slug", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = h.call("GET", "/v1/classes/cells", "", None).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, _) = h
        .call("GET", "/v1/classes/cells?at=yesterday", &h.a, None)
        .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    // CSV at the API, and JSON and CSV at the page's own address.
    let bearer = (header::AUTHORIZATION, format!("Bearer {}", h.a));
    let csv_accept = (header::ACCEPT, "text/csv".to_string());
    let (s, kind, _, csv) = get(
        &h.app,
        "/v1/classes/cells",
        [bearer.clone(), csv_accept.clone()],
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(kind.starts_with("text/csv"), "{kind}");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("learner,subject,last_seen,quiet,")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("ana,ana/cells,2026-07-13T15:00:00+00:00,")
    );
    let (_, kind, _, page_csv) = get(&h.app, "/classes/cells", [bearer.clone(), csv_accept]).await;
    assert!(kind.starts_with("text/csv"), "{kind}");
    assert_eq!(page_csv.lines().count(), 3);
    let (_, kind, _, body) = get(&h.app, "/classes/cells?format=json", [bearer.clone()]).await;
    assert!(kind.starts_with("application/json"), "{kind}");
    assert!(body.contains("\"course\":\"cells\""));
    let (s, kind, _, html) = get(&h.app, "/classes/cells", [bearer.clone()]).await;
    assert_eq!(s, StatusCode::OK);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(html.contains("data-learner=\"ben\"") && !html.contains("data-learner=\"dee\""));
    let (s, _, _, _) = get(&h.app, "/classes/cells?format=xml", [bearer]).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_home_page_sets_a_tenant_wide_session_that_opens_the_tenants_pages() {
    let h = harness();
    h.sample().await;
    let (s, _, _, html) = get(&h.app, "/", []).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    assert!(html.starts_with("<!doctype html>"));

    let (s, _, cookie, _) = get(&h.app, &format!("/?key={}", h.a), []).await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    let cookie = cookie.unwrap();
    assert!(
        cookie.starts_with("tm_tenant=v1.")
            && cookie.contains("Path=/;")
            && !cookie.contains(&h.a[3..]),
        "{cookie}"
    );
    let session = (
        header::COOKIE,
        cookie.split(';').next().unwrap().to_string(),
    );
    let (s, _, _, home) = get(&h.app, "/", [session.clone()]).await;
    assert_eq!(s, StatusCode::OK);
    assert!(home.contains("data-subject=\"ana/cells\""), "{home}");
    assert!(home.contains("href=\"/classes/cells\""));
    let (_, _, _, searched) = get(&h.app, "/?q=nobody", [session.clone()]).await;
    assert!(!searched.contains("data-subject=\"ana/cells\""));
    assert!(searched.contains("No subject matches."));
    let (_, _, _, found) = get(&h.app, "/?q=CELL", [session.clone()]).await;
    assert!(
        found.contains("data-subject=\"ana/cells\""),
        "search ignores case"
    );

    // The home's session opens the report and the class; not another
    // tenant's subject, and a page's own session does not open the home.
    let (s, _, _, _) = get(&h.app, "/subjects/ana/cells", [session.clone()]).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _, _) = get(&h.app, "/classes/cells", [session.clone()]).await;
    assert_eq!(s, StatusCode::OK);
    let (_, _, page_cookie, _) = get(&h.app, &format!("/subjects/ana/cells?key={}", h.a), []).await;
    let page_session = (
        header::COOKIE,
        page_cookie.unwrap().split(';').next().unwrap().to_string(),
    );
    let (s, _, _, _) = get(&h.app, "/", [page_session]).await;
    assert_eq!(
        s,
        StatusCode::UNAUTHORIZED,
        "a report's session is for its page alone"
    );
    let (s, _, _, _) = get(&h.app, &format!("/?key={}", h.b), []).await;
    assert_eq!(s, StatusCode::SEE_OTHER);
    let (s, _, _, _) = get(
        &h.app,
        "/subjects/ana/cells",
        [(header::AUTHORIZATION, format!("Bearer {}", h.b))],
    )
    .await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "another tenant's report stays hidden"
    );
}
