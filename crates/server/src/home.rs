//! A tenant's home page at `/`: its learners and their subjects, newest
//! activity first, searchable (`?q=` matches learner, subject and title),
//! with a link to each subject's report and to each class view (every
//! subject name is a class, of one learner or of many).
//!
//! Opened once with `?key=`, it answers with a 303 to `/` and the
//! tenant-wide session cookie ([`crate::session::TENANT_COOKIE`]), which
//! opens every report and class page it links to until it expires.

use crate::auth::bearer;
use crate::error::ApiResult;
use crate::state::AppState;
use crate::web::{PageQuery, esc, html, no_store, page_error, page_head, page_tenant};
use axum::extract::State;
use axum::http::request::Parts;
use axum::response::Response;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::fmt::Write;
use tm_model::subject::Subject;

/// The home page.
pub async fn home_page(State(state): State<AppState>, parts: Parts) -> Response {
    let q = PageQuery::of(&parts);
    let mut res = page(&state, q, &parts).await.unwrap_or_else(page_error);
    no_store(&mut res);
    res
}

async fn page(state: &AppState, q: PageQuery, parts: &Parts) -> ApiResult<Response> {
    let now = Utc::now();
    let presented = bearer(parts).map(str::to_string).or(q.key.clone());
    let tenant = page_tenant(state, parts, presented.as_deref(), now).await?;
    if let Some(key) = &q.key {
        return crate::web::to_clean_url(
            parts,
            key,
            now,
            crate::session::TENANT_COOKIE,
            crate::session::HOME,
        );
    }
    let roster = state
        .blocking(move |brain| Ok(brain.tenant_roster(tenant.id)?))
        .await?;
    Ok(html(render(&roster, q.q.as_deref().unwrap_or(""))))
}

/// Whether a subject answers the search (case-insensitive, any part).
fn matches(s: &Subject, search: &str) -> bool {
    let search = search.trim().to_lowercase();
    search.is_empty()
        || [&s.key.learner, &s.key.subject, &s.title]
            .iter()
            .any(|t| t.to_lowercase().contains(&search))
}

/// The page for a roster (every live subject of the tenant, with its newest
/// episode's instant) and a search.
pub fn render(roster: &[(Subject, Option<DateTime<Utc>>)], search: &str) -> String {
    let mut rows: Vec<&(Subject, Option<DateTime<Utc>>)> =
        roster.iter().filter(|(s, _)| matches(s, search)).collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(a.0.key.to_string().cmp(&b.0.key.to_string()))
    });
    let mut courses: BTreeMap<&str, (usize, Option<DateTime<Utc>>)> = BTreeMap::new();
    for (s, seen) in &rows {
        let c = courses.entry(s.key.subject.as_str()).or_default();
        c.0 += 1;
        c.1 = c.1.max(*seen);
    }
    let learners: std::collections::BTreeSet<&str> =
        rows.iter().map(|(s, _)| s.key.learner.as_str()).collect();
    let mut o = String::new();
    o.push_str(&page_head("Learners", ""));
    o.push_str("<header><h1>Learners and subjects</h1>");
    let _ = write!(
        o,
        "<form method=\"get\" action=\"/\" role=\"search\"><label>Search <input type=\"search\" name=\"q\" value=\"{}\"></label> <button>Search</button></form><p class=\"muted\">{} learners · {} subjects{}</p></header><main>",
        esc(search),
        learners.len(),
        rows.len(),
        if search.trim().is_empty() {
            String::new()
        } else {
            format!(" matching “{}” · <a href=\"/\">all</a>", esc(search.trim()))
        }
    );
    o.push_str("<h2>Classes</h2>");
    if courses.is_empty() {
        o.push_str("<p class=\"muted\">No subject.</p>");
    } else {
        o.push_str(
            "<table id=\"classes\"><tr><th>class</th><th>learners</th><th>last activity</th></tr>",
        );
        for (course, (n, seen)) in &courses {
            let _ = write!(
                o,
                "<tr><td><a href=\"/classes/{0}\">{0}</a></td><td>{n}</td><td>{1}</td></tr>",
                esc(course),
                when(*seen)
            );
        }
        o.push_str("</table>");
    }
    o.push_str("<h2>Subjects, newest activity first</h2>");
    if rows.is_empty() {
        o.push_str("<p class=\"muted\">No subject matches.</p>");
    } else {
        o.push_str("<table id=\"subjects\"><tr><th>learner</th><th>subject</th><th>title</th><th>last activity</th></tr>");
        for (s, seen) in &rows {
            let _ = write!(
                o,
                "<tr data-subject=\"{0}\"><td>{1}</td><td><a href=\"/subjects/{0}\">{2}</a></td><td>{3}</td><td>{4}</td></tr>",
                esc(&s.key.to_string()),
                esc(&s.key.learner),
                esc(&s.key.subject),
                esc(&s.title),
                when(*seen)
            );
        }
        o.push_str("</table>");
    }
    o.push_str("</main></body></html>");
    o
}

fn when(t: Option<DateTime<Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| "never".to_string())
}
