//! The class view (`tm_brain::class`): every learner of the tenant who has a
//! subject named `{course}`, learners × concepts by the current belief.
//!
//! * `GET /v1/classes/{course}`: JSON, or CSV with `Accept: text/csv`;
//! * `GET /classes/{course}`: the page, and the same JSON or CSV at the same
//!   address (`?format=json|csv`, or the `Accept` header), for a platform's
//!   own dashboards. The page authenticates as the report does
//!   ([`crate::web`]), including the home page's tenant-wide session.
//!
//! CSV: one row a learner (`learner,subject,last_seen,quiet`, then one
//! column a concept holding `understands`, `still_learning`, `struggles` or
//! `no_evidence`). A cell that a spreadsheet would read as a formula (it
//! begins with `=`, `+`, `-`, `@`, a tab or a carriage return) is written
//! with a leading `'`, so a concept named from a file cannot run in a
//! teacher's spreadsheet.

use crate::auth::{Tenant, bearer};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::state::AppState;
use crate::web::{PageQuery, esc, html_with_policy, no_store, page_error, page_head, page_tenant};
use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use std::fmt::Write;
use tm_brain::class::{ClassView, Standing};

/// How the class is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Json,
    Csv,
}

impl Format {
    /// `?format=` when given, else what `Accept` prefers (CSV or JSON over
    /// a page only when it names them and not HTML), else `default`.
    fn chosen(given: Option<&str>, headers: &HeaderMap, default: Format) -> ApiResult<Format> {
        match given {
            Some("html") => return Ok(Format::Html),
            Some("json") => return Ok(Format::Json),
            Some("csv") => return Ok(Format::Csv),
            Some(other) => {
                return Err(ApiError::invalid(format!(
                    "format must be html, json or csv, not {other:?}"
                )));
            }
            None => {}
        }
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        Ok(if accept.contains("text/html") {
            default
        } else if accept.contains("text/csv") {
            Format::Csv
        } else if accept.contains("application/json") {
            Format::Json
        } else {
            default
        })
    }
}

/// The class in the chosen format, never cached.
fn answer(v: &ClassView, format: Format) -> Response {
    let mut res = match format {
        // The grid is one image, inline: `data:` images are allowed here.
        Format::Html => html_with_policy(
            render(v),
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
        ),
        Format::Json => axum::Json(v).into_response(),
        Format::Csv => {
            let mut res = csv(v).into_response();
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            );
            res
        }
    };
    no_store(&mut res);
    res
}

async fn class_of(
    state: &AppState,
    tenant: Tenant,
    course: String,
    at: chrono::DateTime<chrono::Utc>,
    page: usize,
) -> ApiResult<ClassView> {
    if tm_model::subject::check_slug(&course).is_err() {
        return Err(ApiError::unknown_subject(&course));
    }
    state
        .blocking(move |brain| Ok(brain.class(tenant.id, &course, at, page)?))
        .await
}

/// A page number from the address: 1 on (default 1).
fn page_number(given: Option<&str>) -> ApiResult<usize> {
    match given {
        None => Ok(1),
        Some(p) => p
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| ApiError::invalid("`page` is a whole number from 1")),
    }
}

/// What the class API's address may carry.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClassQuery {
    /// The view's instant (RFC 3339; default: now).
    pub at: Option<String>,
    /// Which page of learners (1 on; `learners_total` and `pages` say how
    /// many there are).
    pub page: Option<usize>,
}

/// A class: every learner of yours with a subject of this name.
///
/// JSON by default; CSV (one row a learner, one column a concept) with
/// `Accept: text/csv`.
#[utoipa::path(get, path = "/v1/classes/{course}", tag = "classes",
    params(("course" = String, Path, description = "the subject name the learners share"), ClassQuery),
    responses((status = 200, body = ClassView), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn class_json(
    State(state): State<AppState>,
    tenant: Tenant,
    Path(course): Path<String>,
    crate::api::ApiQuery(q): crate::api::ApiQuery<ClassQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let at = crate::api::at_or_now(q.at.as_deref())?;
    let format = match Format::chosen(None, &headers, Format::Json)? {
        Format::Csv => Format::Csv,
        _ => Format::Json,
    };
    if q.page == Some(0) {
        return Err(ApiError::invalid("`page` is a whole number from 1"));
    }
    let v = class_of(&state, tenant, course, at, q.page.unwrap_or(1)).await?;
    Ok(answer(&v, format))
}

/// The class page (and its JSON or CSV at the same address).
pub async fn class_page(
    State(state): State<AppState>,
    Path(course): Path<String>,
    parts: Parts,
) -> Response {
    let q = PageQuery::of(&parts);
    let result = async {
        let now = chrono::Utc::now();
        let format = Format::chosen(q.format.as_deref(), &parts.headers, Format::Html)?;
        let presented = bearer(&parts).map(str::to_string).or(q.key.clone());
        let tenant = page_tenant(&state, &parts, presented.as_deref(), now).await?;
        let at = crate::api::at_or_now(q.at.as_deref())?;
        let page = page_number(q.page.as_deref())?;
        let v = class_of(&state, tenant, course, at, page).await?;
        if let Some(key) = &q.key {
            // A key in the address, whatever the format: the session is set
            // for a class the tenant has (just read), and the browser sent on
            // to the address without the key.
            let path = parts.uri.path();
            return crate::web::to_clean_url(&parts, key, now, crate::session::COOKIE, path);
        }
        Ok(answer(&v, format))
    }
    .await;
    let mut res = result.unwrap_or_else(page_error);
    no_store(&mut res);
    res
}

/// A CSV cell a spreadsheet will not run as a formula.
fn cell(s: &str) -> String {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_string(),
    }
}

/// The class as CSV (the module docs give its columns).
pub fn csv(v: &ClassView) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let mut head = vec![
        "learner".to_string(),
        "subject".to_string(),
        "last_seen".to_string(),
        "quiet".to_string(),
    ];
    head.extend(v.concepts.iter().map(|c| cell(&c.name)));
    // Writing to a Vec cannot fail; a record of strings always serialises.
    let _ = w.write_record(&head);
    for l in &v.learners {
        let mut row = vec![
            cell(&l.learner),
            cell(&l.subject),
            l.last_seen.map(|t| t.to_rfc3339()).unwrap_or_default(),
            l.quiet.to_string(),
        ];
        row.extend(l.standings.iter().map(|s| s.as_str().to_string()));
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A cell of the grid's image, in pixels (a pixel of white between cells).
const CELL_W: u32 = 11;
const CELL_H: u32 = 12;

const CLASS_STYLE: &str = r#"
.grid{overflow:auto;max-height:80vh;border:1px solid #eee;font-size:calc(var(--h) - 1px)}
.grid .heads{display:flex;position:sticky;top:0;background:#fff;align-items:flex-end}
.grid .corner{box-sizing:border-box;width:9rem;flex:none;font-weight:bold;padding:0 .3rem}
.grid .c{flex:none;width:var(--w);height:10rem;writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;overflow:hidden;font-weight:bold;line-height:var(--w)}
.grid .body{display:flex;align-items:flex-start}
.grid ol{list-style:none;margin:0;padding:0;width:9rem;flex:none}
.grid li{height:var(--h);line-height:var(--h);padding:0 .3rem;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.grid img{flex:none;display:block;image-rendering:pixelated}
.key span{display:inline-block;padding:0 .4rem;margin-right:.4rem;color:#fff}
"#;

/// A standing's colour on the page (red, green, blue).
fn colour(s: Standing) -> [u8; 3] {
    match s {
        Standing::Understands => [0x2e, 0x8b, 0x57],
        Standing::StillLearning => [0xe0, 0xa0, 0x30],
        Standing::Struggles => [0xc0, 0x39, 0x2b],
        Standing::NoEvidence => [0xe6, 0xe6, 0xe6],
    }
}

fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The grid as one PNG: a cell of [`CELL_W`] × [`CELL_H`] pixels a learner
/// and concept, coloured by standing. One image is what keeps a class of
/// 500 × 40 quick to draw: the same 20,000 cells as table cells, or as
/// gradient stops, took a browser most of a second to lay out.
fn grid_png(v: &ClassView) -> Vec<u8> {
    // A view is at most MAX_COLUMNS × LEARNERS_PER_PAGE cells; the sizes are
    // checked all the same, and a size that does not fit is no image.
    let size = |n: usize, cell: u32| {
        u32::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(cell))
            .map(|x| x.max(1))
    };
    let (Some(w), Some(h)) = (
        size(v.concepts.len(), CELL_W),
        size(v.learners.len(), CELL_H),
    ) else {
        return Vec::new();
    };
    let Some(area) = (w as usize).checked_mul(h as usize) else {
        return Vec::new();
    };
    // Palette: white (the gaps), then the standings in `Standing::ALL`'s order.
    let mut palette = vec![0xff, 0xff, 0xff];
    for s in Standing::ALL {
        palette.extend_from_slice(&colour(s));
    }
    let index = |s: Standing| 1 + Standing::ALL.iter().position(|x| *x == s).unwrap_or(3) as u8;
    let mut pixels = vec![0u8; area];
    let (row_len, cw, ch) = (w as usize, CELL_W as usize, CELL_H as usize);
    for (r, l) in v.learners.iter().enumerate() {
        for (c, s) in l.standings.iter().enumerate().take(v.concepts.len()) {
            let ink = index(*s);
            for y in 0..ch - 1 {
                let from = (r * ch + y) * row_len + c * cw;
                if let Some(cells) = pixels.get_mut(from..from + cw - 1) {
                    cells.fill(ink);
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, w, h);
    e.set_color(png::ColorType::Indexed);
    e.set_depth(png::BitDepth::Eight);
    e.set_palette(palette);
    e.set_compression(png::Compression::Fast);
    // Encoding a well-formed indexed image into memory cannot fail.
    if let Ok(mut writer) = e.write_header() {
        let _ = writer.write_image_data(&pixels);
    }
    out
}

/// The class page.
pub fn render(v: &ClassView) -> String {
    let mut o = String::new();
    o.push_str(&page_head(&format!("Class {}", v.course), CLASS_STYLE));
    let page = if v.pages > 1 {
        format!("&amp;page={}", v.page)
    } else {
        String::new()
    };
    let _ = write!(
        o,
        "<header><p><a href=\"/\">All learners</a></p><h1>Class {}</h1><p class=\"muted\">{} learners · {} concepts · as of {} · <a href=\"?format=csv{page}\">CSV</a> · <a href=\"?format=json{page}\">JSON</a></p></header><main>",
        esc(&v.course),
        v.learners_total,
        v.concepts_total,
        v.at.format("%Y-%m-%d %H:%M UTC"),
    );
    bounds(&mut o, v);
    o.push_str("<p class=\"key\">");
    for s in Standing::ALL {
        let ink = if s == Standing::NoEvidence {
            ";color:#333"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<span style=\"background:{}{ink}\">{}</span>",
            hex(colour(s)),
            s.label()
        );
    }
    o.push_str("</p>");
    grid(&mut o, v);
    struggling(&mut o, v);
    quiet(&mut o, v);
    stale(&mut o, v);
    o.push_str("</main></body></html>");
    o
}

/// Learners × concepts: the concepts' names over one image of the cells
/// ([`grid_png`]), each row's learner beside it. The learner's link says the
/// row in words, standing by standing, in its title (a tooltip, and the
/// link's description to a screen reader).
fn grid(o: &mut String, v: &ClassView) {
    o.push_str("<h2>Learners × concepts</h2>");
    if v.concepts.is_empty() {
        o.push_str("<p class=\"muted\">No concept in the learners' maps yet: upload the course's files.</p>");
        return;
    }
    // A small class is drawn twice the size: the image scaled without
    // smoothing, the names and rows with it.
    let scale = if v.learners.len() <= 100 { 2 } else { 1 };
    let (cw, ch) = (CELL_W * scale, CELL_H * scale);
    let _ = write!(
        o,
        "<div class=\"grid\" id=\"class-grid\" style=\"--w:{cw}px;--h:{ch}px\"><div class=\"heads\"><span class=\"corner\">learner</span>"
    );
    for c in &v.concepts {
        let _ = write!(
            o,
            "<span class=\"c\" title=\"{0}\">{0}</span>",
            esc(&c.name)
        );
    }
    o.push_str("</div><div class=\"body\"><ol>");
    for l in &v.learners {
        let mut said = Vec::new();
        for standing in Standing::ALL {
            let names: Vec<&str> = v
                .concepts
                .iter()
                .zip(&l.standings)
                .filter(|(_, s)| **s == standing)
                .map(|(c, _)| c.name.as_str())
                .collect();
            if !names.is_empty() {
                said.push(format!("{}: {}", standing.label(), names.join(", ")));
            }
        }
        let said = esc(&said.join("; "));
        let _ = write!(
            o,
            "<li data-learner=\"{0}\"><a href=\"/subjects/{1}\" title=\"{said}\">{0}</a></li>",
            esc(&l.learner),
            esc(&l.subject)
        );
    }
    let png = grid_png(v);
    let _ = write!(
        o,
        "</ol><img src=\"data:image/png;base64,{}\" width=\"{}\" height=\"{}\" alt=\"Each learner's standing on each concept, a row a learner in the order of the list beside it, a column a concept in the order of the names above it; each learner's row is also said in words on their name.\"></div></div>",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, png),
        v.concepts.len() as u32 * cw,
        v.learners.len() as u32 * ch
    );
}

/// What the page leaves out, said where it is left out: the concepts past
/// the columns, and the other pages of learners.
fn bounds(o: &mut String, v: &ClassView) {
    if v.concepts.len() < v.concepts_total {
        let _ = write!(
            o,
            "<p id=\"columns-shown\" class=\"muted\">The grid shows {} of the course's {} concepts: those the class struggles with most, then still learns. The counts below are over every concept.</p>",
            v.concepts.len(),
            v.concepts_total
        );
    }
    if v.pages > 1 {
        let first = (v.page - 1) * tm_brain::class::LEARNERS_PER_PAGE + 1;
        let last = first + v.learners.len().saturating_sub(1);
        let _ = write!(
            o,
            "<nav id=\"pages\" aria-label=\"pages of learners\"><p>Learners {first}–{last} of {} (page {} of {})",
            v.learners_total, v.page, v.pages
        );
        if v.page > 1 {
            let _ = write!(
                o,
                " · <a href=\"?page={}\" rel=\"prev\">previous</a>",
                v.page - 1
            );
        }
        if v.page < v.pages {
            let _ = write!(
                o,
                " · <a href=\"?page={}\" rel=\"next\">next</a>",
                v.page + 1
            );
        }
        o.push_str("</p></nav>");
    }
}

fn struggling(o: &mut String, v: &ClassView) {
    o.push_str("<h2>What the class struggles with most</h2>");
    if v.struggling.is_empty() {
        o.push_str("<p class=\"muted\">No learner struggles with a concept of the course.</p>");
        return;
    }
    o.push_str("<table id=\"struggling\"><tr><th>concept</th><th>struggle</th><th>still learning</th><th>understand</th><th>no evidence</th></tr>");
    let n = v.learners_total.max(1) as f64;
    for c in &v.struggling {
        let _ = write!(
            o,
            "<tr><td>{}</td><td><span class=\"bar\" style=\"width:{:.1}rem\"></span> {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.name),
            6.0 * c.struggles as f64 / n,
            c.struggles,
            c.still_learning,
            c.understands,
            c.no_evidence
        );
    }
    o.push_str("</table>");
}

fn quiet(o: &mut String, v: &ClassView) {
    let _ = write!(
        o,
        "<h2>Not seen for {} days</h2>",
        tm_brain::class::QUIET_AFTER_DAYS
    );
    if v.quiet.is_empty() {
        o.push_str("<p class=\"muted\">Every learner was here in the last two weeks.</p>");
        return;
    }
    o.push_str("<ul id=\"quiet\">");
    for l in v.learners.iter().filter(|l| l.quiet) {
        let seen = l
            .last_seen
            .map(|t| format!("last seen {}", t.format("%Y-%m-%d")))
            .unwrap_or_else(|| "never seen".to_string());
        let _ = write!(
            o,
            "<li><a href=\"/subjects/{}\">{}</a> <span class=\"muted\">{seen}</span></li>",
            esc(&l.subject),
            esc(&l.learner)
        );
    }
    o.push_str("</ul>");
}

fn stale(o: &mut String, v: &ClassView) {
    o.push_str("<h2>Stale citations across the class</h2>");
    if v.stale_citations.is_empty() {
        o.push_str("<p class=\"muted\">No answer cites a file that has changed since.</p>");
        return;
    }
    o.push_str(
        "<table id=\"stale\"><tr><th>learner</th><th>when</th><th>answer</th><th>change</th></tr>",
    );
    for c in &v.stale_citations {
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.learner),
            c.at.format("%Y-%m-%d"),
            esc(&c.summary),
            esc(&c.change)
        );
    }
    o.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formula_is_never_a_csv_cell() {
        assert_eq!(cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(cell("-2+3"), "'-2+3");
        assert_eq!(cell("Slope"), "Slope");
    }

    #[test]
    fn the_grids_image_has_a_cell_of_each_learners_standing() {
        use tm_brain::class::{ClassConcept, ClassLearner};
        let concept = |key: &str| ClassConcept {
            key: key.into(),
            name: key.into(),
            in_maps: 2,
            understands: 0,
            still_learning: 0,
            struggles: 0,
            no_evidence: 0,
        };
        let learner = |name: &str, standings: Vec<Standing>| ClassLearner {
            learner: name.into(),
            subject: format!("{name}/algebra"),
            title: "Algebra".into(),
            last_seen: None,
            quiet: true,
            standings,
        };
        let v = ClassView {
            course: "algebra".into(),
            at: chrono::Utc::now(),
            concepts: vec![concept("slope"), concept("ratio"), concept("graph")],
            learners: vec![
                learner(
                    "ana",
                    vec![
                        Standing::Struggles,
                        Standing::Understands,
                        Standing::NoEvidence,
                    ],
                ),
                learner(
                    "ben",
                    vec![
                        Standing::StillLearning,
                        Standing::NoEvidence,
                        Standing::Understands,
                    ],
                ),
            ],
            concepts_total: 3,
            learners_total: 2,
            page: 1,
            pages: 1,
            struggling: vec![],
            quiet: vec![],
            stale_citations: vec![],
        };
        let png = grid_png(&v);
        let mut reader = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let (w, h) = (reader.info().width, reader.info().height);
        assert_eq!((w, h), (3 * CELL_W, 2 * CELL_H));
        let palette = reader.info().palette.clone().unwrap().to_vec();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut pixels).unwrap();
        let at = |x: u32, y: u32| {
            let i = pixels[(y * w + x) as usize] as usize;
            [palette[3 * i], palette[3 * i + 1], palette[3 * i + 2]]
        };
        for (r, l) in v.learners.iter().enumerate() {
            for (c, s) in l.standings.iter().enumerate() {
                let (x, y) = (c as u32 * CELL_W + 3, r as u32 * CELL_H + 3);
                assert_eq!(
                    at(x, y),
                    colour(*s),
                    "{} × {}",
                    l.learner,
                    v.concepts[c].key
                );
            }
        }
        assert_eq!(at(CELL_W - 1, 0), [0xff; 3], "a white gap between cells");
    }

    #[test]
    fn the_format_follows_the_query_then_accept() {
        let mut h = HeaderMap::new();
        assert_eq!(
            Format::chosen(None, &h, Format::Html).unwrap(),
            Format::Html
        );
        h.insert(header::ACCEPT, HeaderValue::from_static("text/csv"));
        assert_eq!(Format::chosen(None, &h, Format::Html).unwrap(), Format::Csv);
        assert_eq!(
            Format::chosen(Some("json"), &h, Format::Html).unwrap(),
            Format::Json
        );
        h.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/json;q=0.9"),
        );
        assert_eq!(
            Format::chosen(None, &h, Format::Html).unwrap(),
            Format::Html
        );
        assert!(Format::chosen(Some("xml"), &h, Format::Html).is_err());
    }
}
