//! The web report at `/subjects/{learner}/{subject}`: one server-rendered
//! HTML page, no script, no build chain. Every piece of learner or file text
//! is HTML-escaped. Beliefs open their history in `<details>` (keyboard and
//! no-JavaScript friendly); a link to `#belief-…` opens it too, because the
//! anchor sits inside the details and browsers expand a details element
//! whose content is the fragment's target.
//!
//! Auth: the page takes the tenant's key as `Authorization: Bearer`, or as
//! `?key=` (for a link a person can open: the answer is then a 303 to the
//! same address without the key, setting a session cookie — signed, holding
//! no key, for this page alone, expiring after [`crate::session::SESSION_TTL`];
//! HttpOnly, SameSite=Strict, Secure behind HTTPS — with no referrer, so the
//! key neither stays in the browser's history nor travels on), then the
//! session cookie. Reports are never cached (`Cache-Control: no-store`).

use crate::api::ApiQuery;
use crate::auth::{Tenant, authenticate, bearer};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::view::{ReportView, gather};
use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt::Write;

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What a page's address may carry.
#[derive(Debug, Default)]
pub struct PageQuery {
    pub key: Option<String>,
    /// The report's instant (RFC 3339; default: now).
    pub at: Option<String>,
    /// The class page's JSON or CSV at its own address (`json`, `csv`).
    pub format: Option<String>,
    /// The home page's search.
    pub q: Option<String>,
    /// The class page's page of learners (1 on).
    pub page: Option<String>,
}

impl PageQuery {
    /// The page's parameters as a form decodes them (so `%6bey` is `key`),
    /// the first of each name counting; any other name is ignored. A doubled
    /// key is no error a browser would keep in its history: the first opens
    /// the page, and the clean address drops both.
    pub fn of(parts: &Parts) -> PageQuery {
        let mut q = PageQuery::default();
        for (name, value) in form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes()) {
            let slot = match name.as_ref() {
                "key" => &mut q.key,
                "at" => &mut q.at,
                "format" => &mut q.format,
                "q" => &mut q.q,
                "page" => &mut q.page,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        q
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// The report's instant (RFC 3339; default: now).
    pub at: Option<String>,
}

/// The values of the cookie `name` the request sends, in its order (a
/// browser sends two of one name when two paths set it, or a stale one
/// stays beside a new one), at most [`MAX_COOKIES_TRIED`].
fn cookies<'a>(parts: &'a Parts, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .filter(move |(n, _)| *n == name)
        .map(|(_, v)| v)
        .take(MAX_COOKIES_TRIED)
}

/// How many cookies of one name a page tries before it gives up.
const MAX_COOKIES_TRIED: usize = 4;

/// A report's answer is personal data: no cache may keep it.
pub(crate) fn no_store(res: &mut Response) {
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
}

pub(crate) fn page_error(e: ApiError) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>{}</title><body><h1>{}</h1><p>{}</p></body></html>",
        e.status.as_u16(),
        e.status.canonical_reason().unwrap_or("error"),
        esc(&tm_brain::cut_message(&e.message))
    );
    let mut res = html(body);
    *res.status_mut() = e.status;
    res
}

/// The report page of one subject.
pub async fn report_page(
    State(state): State<AppState>,
    Path((learner, subject)): Path<(String, String)>,
    parts: Parts,
) -> Response {
    let q = PageQuery::of(&parts);
    let mut res = page(&state, learner, subject, q, &parts)
        .await
        .unwrap_or_else(page_error);
    no_store(&mut res);
    res
}

async fn page(
    state: &AppState,
    learner: String,
    subject: String,
    q: PageQuery,
    parts: &Parts,
) -> ApiResult<Response> {
    let now = chrono::Utc::now();
    let path = parts.uri.path();
    let from_query = q.key.is_some();
    let presented = bearer(parts).map(str::to_string).or(q.key);
    let tenant = page_tenant(state, parts, presented.as_deref(), now).await?;
    let at = crate::api::at_or_now(q.at.as_deref())?;
    if let (true, Some(key)) = (from_query, presented) {
        // A key in the address stays in the browser's history: set the
        // session (only for a subject the key may see) and send the browser
        // on to the same page without it.
        let (l, s) = (learner.clone(), subject.clone());
        state
            .blocking(move |brain| crate::api::owned(brain, &tenant, &l, &s).map(|_| ()))
            .await?;
        return to_clean_url(parts, &key, now, crate::session::COOKIE, path);
    }
    let v = state
        .blocking(move |brain| {
            let s = crate::api::owned(brain, &tenant, &learner, &subject)?;
            gather(brain, &s, at)
        })
        .await?;
    Ok(html(render(&v)))
}

/// The policy of every page: it loads nothing but its own inline style (no
/// script runs on any page).
pub(crate) const PAGE_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/// A page's answer: no referrer, and [`PAGE_POLICY`].
pub(crate) fn html(page: String) -> Response {
    html_with_policy(page, PAGE_POLICY)
}

/// [`html`] with another content security policy (the class page adds its
/// inline image).
pub(crate) fn html_with_policy(page: String, policy: &'static str) -> Response {
    let mut res = Html(page).into_response();
    let h = res.headers_mut();
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(policy),
    );
    res
}

/// A page's opening up to `<body>`: its title (escaped here) and the shared
/// style, with `extra_style` after it.
pub(crate) fn page_head(title: &str, extra_style: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\"><meta name=\"viewport\" content=\"width=device-width\"><title>{} — Tutor Memory</title><style>{STYLE}{extra_style}</style></head><body>",
        esc(title)
    )
}

/// Who opens a page: the key it presents (`Authorization: Bearer` or
/// `?key=`), else the page's own session cookie, else the tenant-wide one the
/// home page sets (its session for `/`, sent on every page).
pub(crate) async fn page_tenant(
    state: &AppState,
    parts: &Parts,
    presented: Option<&str>,
    now: chrono::DateTime<chrono::Utc>,
) -> ApiResult<Tenant> {
    if let Some(key) = presented {
        return authenticate(state, key).await;
    }
    let mut refused = None;
    let sessions = [
        (crate::session::COOKIE, parts.uri.path()),
        (crate::session::TENANT_COOKIE, crate::session::HOME),
    ];
    for (name, scope) in sessions {
        for value in cookies(parts, name) {
            match crate::session::open(state, value, scope, now).await {
                Ok(t) => return Ok(t),
                Err(e) => refused = Some(e),
            }
        }
    }
    Err(refused.unwrap_or_else(|| {
        ApiError::unauthorized("open this page with the tenant's key: ?key=<key>")
    }))
}

/// 303 to the page's own address without `key`, setting the session cookie
/// `name` for `scope` (the page's path, or `/` for the tenant-wide session),
/// `Secure` when the request came over HTTPS, as a TLS-terminating
/// proxy says with `X-Forwarded-Proto`, and clearing the raw-key cookie
/// earlier versions set.
pub(crate) fn to_clean_url(
    parts: &Parts,
    key: &str,
    now: chrono::DateTime<chrono::Utc>,
    name: &str,
    scope: &str,
) -> ApiResult<Response> {
    let location = clean_url(parts.uri.path(), parts.uri.query());
    let https = parts.uri.scheme_str() == Some("https")
        || parts
            .headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("https"));
    let prefix = crate::auth::prefix_of(key).unwrap_or_default();
    let ttl = crate::session::SESSION_TTL;
    let session = crate::session::issue(prefix, &crate::auth::digest(key), scope, now + ttl);
    let cookie = format!(
        "{name}={session}; HttpOnly; SameSite=Strict; Path={scope}; Max-Age={}{}",
        ttl.num_seconds(),
        if https { "; Secure" } else { "" }
    );
    let (Ok(location), Ok(cookie)) = (
        HeaderValue::from_str(&location),
        HeaderValue::from_str(&cookie),
    ) else {
        return Err(ApiError::invalid("the address cannot be a header"));
    };
    let mut res = StatusCode::SEE_OTHER.into_response();
    let h = res.headers_mut();
    h.insert(header::LOCATION, location);
    h.append(header::SET_COOKIE, cookie);
    h.append(
        header::SET_COOKIE,
        HeaderValue::from_static("tm_key=; Max-Age=0; Path=/subjects; HttpOnly; SameSite=Strict"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    Ok(res)
}

/// The address `path?query` without any parameter whose name, decoded, is
/// `key` (`%6bey`, `k%65y` and a doubled key included): the query is read
/// as a form decodes it, the same reading that took the key, and written
/// again from what remains.
pub(crate) fn clean_url(path: &str, query: Option<&str>) -> String {
    let kept: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(name, _)| name != "key")
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect();
    let mut location = path.to_string();
    if !kept.is_empty() {
        location.push('?');
        location.push_str(
            &form_urlencoded::Serializer::new(String::new())
                .extend_pairs(kept)
                .finish(),
        );
    }
    location
}

/// The report as JSON (the data the page draws).
#[utoipa::path(get, path = "/v1/subjects/{learner}/{subject}/report", tag = "report",
    params(("learner" = String, Path), ("subject" = String, Path), ReportQuery),
    responses((status = 200, body = ReportView), (status = 404, body = crate::error::ErrorBody)),
    security(("bearer" = [])))]
pub async fn report_json(
    State(state): State<AppState>,
    tenant: Tenant,
    Path((learner, subject)): Path<(String, String)>,
    ApiQuery(q): ApiQuery<ReportQuery>,
) -> ApiResult<Response> {
    let at = crate::api::at_or_now(q.at.as_deref())?;
    let v = state
        .blocking(move |brain| {
            let s = crate::api::owned(brain, &tenant, &learner, &subject)?;
            gather(brain, &s, at)
        })
        .await?;
    let mut res = axum::Json(v).into_response();
    no_store(&mut res);
    Ok(res)
}

pub(crate) const STYLE: &str = r#"
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 1.5rem;color:#1d1d1f}
h1{margin:.2rem 0}h2{margin-top:2rem;border-bottom:1px solid #ddd}
.muted{color:#666}.ok{color:#176b2c}.bad{color:#a11}
svg{max-width:100%;height:auto;border:1px solid #eee;background:#fcfcfc}
.ready{fill:#2e8b57}.explained{fill:#4682b4}.named{fill:#e0a030}
.edge{stroke:#999;stroke-width:1.2;fill:none}
.label{font-size:12px;text-anchor:middle}
a:focus,summary:focus{outline:3px solid #4682b4}
details{margin:.3rem 0;padding:.2rem .5rem;border-left:3px solid #ddd}
details[open]{border-color:#4682b4}
table{border-collapse:collapse}td,th{padding:.15rem .6rem;text-align:left;border-bottom:1px solid #eee}
.bar{display:inline-block;height:.8rem;background:#4682b4;vertical-align:middle}
.legend span{margin-right:1rem}
"#;

/// The whole page.
pub fn render(v: &ReportView) -> String {
    let mut o = String::new();
    o.push_str(&page_head(&v.title, ""));
    let _ = write!(
        o,
        "<header><h1>{}</h1><p class=\"muted\">{} · {} episodes · readiness of the material {:.0}% ({})</p>{}</header><main>",
        esc(&v.title),
        esc(&v.subject),
        v.episodes,
        v.report.readiness.material * 100.0,
        esc(&v.report.readiness.note),
        chain_line(v)
    );
    map_section(&mut o, v);
    beliefs_section(&mut o, v);
    timeline_section(&mut o, v);
    calibration_section(&mut o, v);
    stale_section(&mut o, v);
    unanswered_section(&mut o, v);
    o.push_str("</main></body></html>");
    o
}

fn chain_line(v: &ReportView) -> String {
    match &v.chain.first_break {
        None => format!(
            "<p id=\"chain\" class=\"ok\">Chain intact: {} episodes verified, head {}…{}</p>",
            v.chain.verified,
            esc(v.chain.head_hash.get(..16).unwrap_or("")),
            // Erased positions are there, without content: said, not hidden.
            v.chain
                .erasure_note()
                .map(|n| format!("; {}", esc(&n)))
                .unwrap_or_default()
        ),
        Some(b) => format!(
            "<p id=\"chain\" class=\"bad\">Chain BROKEN: {} ({} episodes verified before it)</p>",
            esc(&b.to_string()),
            v.chain.verified
        ),
    }
}

fn map_section(o: &mut String, v: &ReportView) {
    o.push_str("<section id=\"map\"><h2>Concept map</h2>");
    if v.concepts.is_empty() {
        o.push_str("<p>No concepts yet: no file has been read into the map.</p></section>");
        return;
    }
    o.push_str("<p class=\"legend muted\">Columns are the teaching order (prerequisites left); size is centrality; colour is readiness: <span style=\"color:#e0a030\">● named</span><span style=\"color:#4682b4\">● explained by the files</span><span style=\"color:#2e8b57\">● confirmed or taught</span>. ✎ marks a concept the learner taught.</p>");
    let by_key: HashMap<&str, &crate::view::ConceptView> =
        v.concepts.iter().map(|c| (c.key.as_str(), c)).collect();
    let belief_of: HashMap<String, &str> = v
        .beliefs
        .iter()
        .map(|b| (tm_model::lang::canonical_key(&b.about), b.anchor.as_str()))
        .collect();
    // Room at the sides for the longest labels, centred under their nodes.
    let (col_w, row_h, pad) = (190.0, 70.0, 95.0);
    let rows = v.layers.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let width = pad * 2.0 + col_w * (v.layers.len().max(1) as f64 - 1.0);
    // 50 above the first row (the largest node's radius), 55 below the last
    // (its radius and its label).
    let top = 50.0;
    let height = top + row_h * (rows as f64 - 1.0) + 55.0;
    let max_c = v
        .concepts
        .iter()
        .map(|c| c.centrality)
        .fold(f64::MIN_POSITIVE, f64::max);
    let mut pos: HashMap<&str, (f64, f64)> = HashMap::new();
    for (i, layer) in v.layers.iter().enumerate() {
        let offset = (rows - layer.len()) as f64 * row_h / 2.0;
        for (j, k) in layer.iter().enumerate() {
            pos.insert(
                k.as_str(),
                (pad + i as f64 * col_w, top + offset + j as f64 * row_h),
            );
        }
    }
    let _ = write!(
        o,
        "<svg role=\"img\" aria-labelledby=\"map-title\" viewBox=\"0 0 {width:.0} {height:.0}\" width=\"{width:.0}\" height=\"{height:.0}\" xmlns=\"http://www.w3.org/2000/svg\"><title id=\"map-title\">Concept map of {} in teaching order</title>",
        esc(&v.title)
    );
    for c in &v.concepts {
        let Some(&(x1, y1)) = pos.get(c.key.as_str()) else {
            continue;
        };
        for to in &c.builds_on {
            if let Some(&(x2, y2)) = pos.get(to.as_str()) {
                let mid = (x1 + x2) / 2.0;
                let _ = write!(
                    o,
                    "<path class=\"edge\" d=\"M{x2:.1},{y2:.1} C{mid:.1},{y2:.1} {mid:.1},{y1:.1} {x1:.1},{y1:.1}\"/>"
                );
            }
        }
    }
    for layer in &v.layers {
        for k in layer {
            let (Some(c), Some(&(x, y))) = (by_key.get(k.as_str()), pos.get(k.as_str())) else {
                continue;
            };
            let r = 7.0 + 17.0 * (c.centrality / max_c).sqrt();
            let taught = if c.taught.is_empty() { "" } else { " ✎" };
            let tip = format!(
                "{} — readiness {:.2} ({}), centrality {:.3}, layer {}{}",
                c.name,
                c.readiness,
                c.band,
                c.centrality,
                c.layer + 1,
                c.taught
                    .iter()
                    .map(|t| format!("\ntaught: {t}"))
                    .collect::<String>()
            );
            let circle = format!(
                "<circle class=\"{}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r:.1}\"><title>{}</title></circle><text class=\"label\" x=\"{x:.1}\" y=\"{:.1}\">{}{taught}</text>",
                esc(&c.band),
                esc(&tip),
                y + r + 13.0,
                esc(&c.name)
            );
            match belief_of.get(&c.key) {
                Some(anchor) => {
                    let _ = write!(
                        o,
                        "<a href=\"#{}\" class=\"concept\" data-concept=\"{}\">{circle}</a>",
                        esc(anchor),
                        esc(&c.name)
                    );
                }
                None => {
                    let _ = write!(
                        o,
                        "<g class=\"concept\" data-concept=\"{}\">{circle}</g>",
                        esc(&c.name)
                    );
                }
            }
        }
    }
    o.push_str("</svg>");
    let taught: Vec<&crate::view::ConceptView> =
        v.concepts.iter().filter(|c| !c.taught.is_empty()).collect();
    if !taught.is_empty() {
        o.push_str("<h3>Taught by the learner</h3><ul id=\"taught\">");
        for c in taught {
            for t in &c.taught {
                let _ = write!(o, "<li><b>{}</b>: {}</li>", esc(&c.name), esc(t));
            }
        }
        o.push_str("</ul>");
    }
    o.push_str("<h3>Teaching order</h3><ol id=\"order\">");
    for layer in &v.layers {
        let names: Vec<String> = layer
            .iter()
            .map(|k| {
                esc(by_key
                    .get(k.as_str())
                    .map_or(k.as_str(), |c| c.name.as_str()))
            })
            .collect();
        let _ = write!(o, "<li>{}</li>", names.join(", "));
    }
    o.push_str("</ol></section>");
}

fn beliefs_section(o: &mut String, v: &ReportView) {
    o.push_str("<section id=\"beliefs\"><h2>What the tutor believes</h2>");
    if v.beliefs.is_empty() {
        o.push_str("<p>No beliefs yet: no check has been recorded.</p></section>");
        return;
    }
    o.push_str("<p class=\"muted\">From the learner's checks; open one for its history.</p>");
    if let Some(sentence) = &v.report.checks.sentence {
        let _ = write!(o, "<p id=\"checks\">{}</p>", esc(sentence));
    }
    for b in &v.beliefs {
        let flag = if b.flagged {
            " <span class=\"muted\">(decayed, to reconfirm)</span>"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<details class=\"belief\"><summary>{} <b>{}</b> ({:.2}){flag}</summary><div id=\"{}\" class=\"history\"><table><thead><tr><th>when</th><th>claim</th><th>confidence</th><th>why</th></tr></thead><tbody>",
            esc(&b.claim.replace('_', " ")),
            esc(&b.about),
            b.confidence,
            esc(&b.anchor)
        );
        for s in &b.history {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td></tr>",
                s.at.format("%Y-%m-%d"),
                esc(&s.claim.replace('_', " ")),
                s.confidence,
                esc(&s.reason)
            );
        }
        o.push_str("</tbody></table></div></details>");
    }
    o.push_str("</section>");
}

fn timeline_section(o: &mut String, v: &ReportView) {
    o.push_str("<section id=\"timeline\"><h2>Month by month</h2>");
    let months = &v.report.activity;
    if months.is_empty() {
        o.push_str("<p>No episodes yet.</p></section>");
        return;
    }
    // Every month between the first and the last, so a quiet month shows as one.
    let parse = |m: &str| -> Option<(i32, u32)> {
        let (y, mo) = m.split_once('-')?;
        Some((y.parse().ok()?, mo.parse().ok()?))
    };
    let by_month: HashMap<&str, &tm_model::nightly::report::MonthActivity> =
        months.iter().map(|m| (m.month.as_str(), m)).collect();
    let max = months.iter().map(|m| m.episodes).max().unwrap_or(1).max(1);
    let row = |o: &mut String, key: &str, a: &tm_model::nightly::report::MonthActivity| {
        let _ = write!(
            o,
            "<tr><td>{}</td><td><span class=\"bar\" style=\"width:{}px\"></span> {}</td><td>{}</td><td>{} ({} / {} / {})</td></tr>",
            esc(key),
            (a.episodes * 200 / max).max(2),
            a.episodes,
            a.questions,
            a.checks,
            a.right,
            a.partial,
            a.wrong
        );
    };
    o.push_str("<table><thead><tr><th>month</th><th>episodes</th><th>questions</th><th>checks (right / partial / wrong)</th></tr></thead><tbody>");
    let dated: Vec<(i32, u32)> = months.iter().filter_map(|m| parse(&m.month)).collect();
    if let (Some(&first), Some(&last)) = (dated.first(), dated.last()) {
        let (mut y, mut m) = first;
        let mut guard = 0;
        while (y, m) <= last && guard < 1200 {
            guard += 1;
            let key = format!("{y:04}-{m:02}");
            match by_month.get(key.as_str()) {
                Some(a) => row(o, &key, a),
                None => {
                    let _ = write!(
                        o,
                        "<tr class=\"quiet\"><td>{key}</td><td>0</td><td colspan=\"2\" class=\"muted\">no record</td></tr>"
                    );
                }
            }
            (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        }
    }
    // A row stored outside the years a month can be named in.
    for a in months.iter().filter(|m| parse(&m.month).is_none()) {
        row(o, &a.month, a);
    }
    o.push_str("</tbody></table></section>");
}

fn calibration_section(o: &mut String, v: &ReportView) {
    let c = &v.report.calibration;
    o.push_str("<section id=\"calibration\"><h2>Calibration</h2>");
    if c.n == 0 {
        o.push_str("<p>No check carried a predicted mastery yet: treat confidence as a ranking, not a probability.</p></section>");
        return;
    }
    let fmt = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{x:.3}"));
    let _ = write!(
        o,
        "<p>{} checks with a predicted mastery: <b>{}</b>. ECE {}, Brier {}.</p>",
        c.n,
        esc(c.status.as_str()),
        fmt(c.ece),
        fmt(c.brier)
    );
    let bins: Vec<(f64, f64, usize, f64, f64)> = c
        .bins
        .iter()
        .filter_map(|b| Some((b.mean_predicted?, b.mean_outcome?, b.n, b.lo, b.hi)))
        .collect();
    let (s, p) = (240.0, 30.0);
    let _ = write!(
        o,
        "<svg role=\"img\" aria-label=\"Reliability curve: predicted mastery against observed share right\" viewBox=\"0 0 {w} {w}\" width=\"{w}\" height=\"{w}\" xmlns=\"http://www.w3.org/2000/svg\"><rect x=\"{p}\" y=\"{p}\" width=\"{s}\" height=\"{s}\" fill=\"none\" stroke=\"#ccc\"/><line x1=\"{p}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{p}\" stroke=\"#bbb\" stroke-dasharray=\"4\"/>",
        w = s + 2.0 * p,
        y0 = p + s,
        x1 = p + s
    );
    let pts: Vec<(f64, f64)> = bins
        .iter()
        .map(|b| (p + b.0 * s, p + (1.0 - b.1) * s))
        .collect();
    if pts.len() > 1 {
        let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"#4682b4\" stroke-width=\"2\"/>",
            d.join(" ")
        );
    }
    for (b, (x, y)) in bins.iter().zip(&pts) {
        let _ = write!(
            o,
            "<circle class=\"bin\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"#4682b4\"><title>predicted {:.2}, observed {:.2}, {} checks</title></circle>",
            b.0, b.1, b.2
        );
    }
    let _ = write!(
        o,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">predicted mastery</text><text x=\"12\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 12 {})\">share right</text></svg>",
        p + s / 2.0,
        s + 2.0 * p - 6.0,
        p + s / 2.0,
        p + s / 2.0
    );
    o.push_str("<table><thead><tr><th>predicted</th><th>checks</th><th>mean predicted</th><th>observed</th></tr></thead><tbody>");
    for b in &bins {
        let _ = write!(
            o,
            "<tr><td>{:.1}–{:.1}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td></tr>",
            b.3, b.4, b.2, b.0, b.1
        );
    }
    o.push_str("</tbody></table></section>");
}

fn stale_section(o: &mut String, v: &ReportView) {
    let items = &v.report.stale_citations;
    o.push_str("<section id=\"stale\"><h2>Stale citations</h2>");
    if items.is_empty() {
        o.push_str("<p>None: every verified citation still holds (the nightly loop verifies them).</p></section>");
        return;
    }
    let _ = write!(
        o,
        "<p class=\"muted\">{} memories cite a file that has since been replaced or removed.</p><ul>",
        items.len()
    );
    for e in items {
        let _ = write!(
            o,
            "<li>{} · {} · {} <span class=\"muted\">({}, checked {})</span></li>",
            e.at.format("%Y-%m-%d"),
            esc(&e.kind),
            esc(&e.summary),
            esc(&e.change),
            e.checked_at.format("%Y-%m-%d")
        );
    }
    o.push_str("</ul></section>");
}

fn unanswered_section(o: &mut String, v: &ReportView) {
    let items = &v.report.couldnt_answer;
    o.push_str("<section id=\"unanswered\"><h2>Unanswered questions</h2>");
    if items.is_empty() {
        o.push_str(
            "<p>None: no answer was graded as unable to answer from the files.</p></section>",
        );
        return;
    }
    o.push_str("<ul>");
    for u in items {
        let _ = write!(
            o,
            "<li>{} · <b>{}</b><br><span class=\"muted\">answer: {}</span></li>",
            u.at.format("%Y-%m-%d"),
            esc(u.question.as_deref().unwrap_or("(no question recorded)")),
            esc(&u.answer)
        );
    }
    o.push_str("</ul></section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }
}
