//! A class: every learner of one tenant who has a subject of the same name
//! (a course, say `algebra-1`). What a teacher looks at across it, as of an
//! instant: learners × concepts by the current belief, the concepts the
//! class struggles with most, the learners not seen for
//! [`QUIET_AFTER_DAYS`] days, and the stale citations of every learner.
//!
//! A cell is the learner's **current** belief about the concept — the row
//! nothing superseded, decayed or not (a flagged belief still says what the
//! tutor believes until a check reconfirms it) — or `no_evidence` when no
//! current belief names it (a concept the learner's map lacks has none,
//! unless an older map of theirs had it when a check was routed to it).
//! Columns are the concepts of the learners' maps, those most learners'
//! maps share first; beliefs about topics outside the maps are not columns.
//! Nothing here writes: it is one read of each learner's stores.

use crate::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;
use tm_model::beliefs::Claim;
use tm_model::subject::Subject;
use tm_store::Reader;

/// A learner with no episode for this many days (before the view's
/// instant) is listed as not seen lately.
pub const QUIET_AFTER_DAYS: i64 = 14;
/// How many of the concepts the class struggles with most are listed.
pub const STRUGGLING_SHOWN: usize = 10;
/// The most concepts a view lays out as columns: past it, the ones the class
/// struggles with most (then still learns, then most shared) are the columns,
/// and [`ClassView::concepts_total`] says how many there are.
pub const MAX_COLUMNS: usize = 200;
/// The most learners a view lays out as rows: a class larger than this is
/// read a page at a time ([`ClassView::page`], [`ClassView::pages`]).
pub const LEARNERS_PER_PAGE: usize = 500;

/// A learner's standing on a concept: the current belief's claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    Understands,
    StillLearning,
    Struggles,
    NoEvidence,
}

impl Standing {
    pub fn of(claim: Claim) -> Standing {
        match claim {
            Claim::Understands => Standing::Understands,
            Claim::StillLearning => Standing::StillLearning,
            Claim::StrugglesWith => Standing::Struggles,
            Claim::Retired => Standing::NoEvidence,
        }
    }

    /// The serialised name (`still_learning`), also the CSV cell.
    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Understands => "understands",
            Standing::StillLearning => "still_learning",
            Standing::Struggles => "struggles",
            Standing::NoEvidence => "no_evidence",
        }
    }

    /// How it reads to a person.
    pub fn label(self) -> &'static str {
        match self {
            Standing::Understands => "understands",
            Standing::StillLearning => "still learning",
            Standing::Struggles => "struggles",
            Standing::NoEvidence => "no evidence",
        }
    }

    pub const ALL: [Standing; 4] = [
        Standing::Understands,
        Standing::StillLearning,
        Standing::Struggles,
        Standing::NoEvidence,
    ];
}

/// The class view as of `at`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassView {
    /// The subject name every learner's subject shares.
    pub course: String,
    pub at: DateTime<Utc>,
    /// The columns, in order: the most shared first, at most
    /// [`MAX_COLUMNS`] (those the class struggles with most when it has more).
    pub concepts: Vec<ClassConcept>,
    /// How many concepts the learners' maps hold in all (more than
    /// `concepts` holds when the course has more than [`MAX_COLUMNS`]).
    pub concepts_total: usize,
    /// The rows of this page, by learner name (at most [`LEARNERS_PER_PAGE`]).
    pub learners: Vec<ClassLearner>,
    /// How many learners the class has in all.
    pub learners_total: usize,
    /// This page (1 on) and how many there are.
    pub page: usize,
    pub pages: usize,
    /// The concepts most learners struggle with (at most ten; only those
    /// at least one learner struggles with), most first, over every concept
    /// and learner.
    pub struggling: Vec<ClassConcept>,
    /// Learners with no episode in the fourteen days before `at` (of every page).
    pub quiet: Vec<String>,
    /// Answers whose cited file has changed since, across the class.
    pub stale_citations: Vec<ClassStale>,
}

/// A concept of the course and how the class stands on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassConcept {
    /// Canonical key (what beliefs name).
    pub key: String,
    pub name: String,
    /// How many learners' maps have it.
    pub in_maps: usize,
    pub understands: usize,
    pub still_learning: usize,
    pub struggles: usize,
    pub no_evidence: usize,
}

/// One learner's row.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassLearner {
    pub learner: String,
    /// The subject's key, `learner/course`.
    pub subject: String,
    pub title: String,
    /// The newest episode's instant; none for an empty log.
    pub last_seen: Option<DateTime<Utc>>,
    /// Not seen in the fourteen days before the view's instant.
    pub quiet: bool,
    /// One standing per column of [`ClassView::concepts`], in its order.
    pub standings: Vec<Standing>,
}

/// A stale citation of one learner's.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassStale {
    pub learner: String,
    pub episode_id: i64,
    pub at: DateTime<Utc>,
    pub summary: String,
    /// `changed: replaced by notes.md v2`, `changed: removed`.
    pub change: String,
}

/// What one learner's stores say, before the class is laid out.
struct Facts {
    subject: Subject,
    /// The map's concepts: (key, name, layer).
    concepts: Vec<(String, String, u32)>,
    standings: HashMap<String, Standing>,
    last_seen: Option<DateTime<Utc>>,
}

/// The class of `course` among `subjects` (a tenant's), as of `at`; `None`
/// when no live subject has that name.
pub fn gather(
    store: &dyn Reader,
    subjects: &[Subject],
    course: &str,
    at: DateTime<Utc>,
    page: usize,
) -> Result<Option<ClassView>> {
    let mut members: Vec<&Subject> = subjects
        .iter()
        .filter(|s| !s.retired && s.key.subject == course)
        .collect();
    if members.is_empty() {
        return Ok(None);
    }
    members.sort_by(|a, b| a.key.learner.cmp(&b.key.learner));
    let mut facts = Vec::with_capacity(members.len());
    let mut stale_citations = Vec::new();
    for s in members {
        let concepts = store
            .latest_map(s)?
            .map(|m| {
                m.nodes()
                    .iter()
                    .map(|n| (n.key.clone(), n.name.clone(), n.layer))
                    .collect()
            })
            .unwrap_or_default();
        let standings = store
            .current_beliefs(s)?
            .into_iter()
            .filter(|b| !b.unmapped)
            .map(|b| (b.subject_key, Standing::of(b.claim)))
            .collect();
        let last_seen = last_seen(store, s)?;
        for c in crate::report::stale_citations(store, s)? {
            stale_citations.push(ClassStale {
                learner: s.key.learner.clone(),
                episode_id: c.episode_id,
                at: c.at,
                summary: c.summary,
                change: c.change,
            });
        }
        facts.push(Facts {
            subject: s.clone(),
            concepts,
            standings,
            last_seen,
        });
    }
    Ok(Some(lay_out(course, at, facts, stale_citations, page)))
}

/// The newest episode's instant; `None` for an empty log.
pub fn last_seen(store: &dyn Reader, s: &Subject) -> Result<Option<DateTime<Utc>>> {
    Ok(match store.head(s)?.0 {
        0 => None,
        seq => store.episode_at_seq(s, seq)?.map(|e| e.at),
    })
}

fn lay_out(
    course: &str,
    at: DateTime<Utc>,
    facts: Vec<Facts>,
    mut stale_citations: Vec<ClassStale>,
    page: usize,
) -> ClassView {
    // Every map's concepts, the most shared first, then the earliest
    // teaching layer, then by name.
    let mut seen: HashMap<&str, (usize, u32, &str)> = HashMap::new();
    for f in &facts {
        for (key, name, layer) in &f.concepts {
            let e = seen.entry(key.as_str()).or_insert((0, *layer, name));
            e.0 += 1;
            e.1 = e.1.min(*layer);
        }
    }
    let mut columns: Vec<(&str, usize, u32, &str)> = seen
        .into_iter()
        .map(|(k, (n, l, name))| (k, n, l, name))
        .collect();
    columns.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(b.3))
            .then(a.0.cmp(b.0))
    });
    // How the whole class stands on every concept.
    let mut all: Vec<ClassConcept> = columns
        .iter()
        .map(|(key, n, _, name)| ClassConcept {
            key: key.to_string(),
            name: name.to_string(),
            in_maps: *n,
            understands: 0,
            still_learning: 0,
            struggles: 0,
            no_evidence: 0,
        })
        .collect();
    let standing = |f: &Facts, key: &str| {
        f.standings
            .get(key)
            .copied()
            .unwrap_or(Standing::NoEvidence)
    };
    for f in &facts {
        for c in all.iter_mut() {
            *match standing(f, &c.key) {
                Standing::Understands => &mut c.understands,
                Standing::StillLearning => &mut c.still_learning,
                Standing::Struggles => &mut c.struggles,
                Standing::NoEvidence => &mut c.no_evidence,
            } += 1;
        }
    }
    let concepts_total = all.len();
    let mut struggling: Vec<ClassConcept> =
        all.iter().filter(|c| c.struggles > 0).cloned().collect();
    struggling.sort_by(|a, b| b.struggles.cmp(&a.struggles).then(a.name.cmp(&b.name)));
    struggling.truncate(STRUGGLING_SHOWN);
    // The columns: all of them, or those the class struggles with most,
    // kept in the order above.
    let concepts: Vec<ClassConcept> = if all.len() <= MAX_COLUMNS {
        all
    } else {
        let mut rank: Vec<usize> = (0..all.len()).collect();
        rank.sort_by(|&a, &b| {
            let (x, y) = (&all[a], &all[b]);
            y.struggles
                .cmp(&x.struggles)
                .then(y.still_learning.cmp(&x.still_learning))
                .then(a.cmp(&b))
        });
        let mut kept = rank[..MAX_COLUMNS].to_vec();
        kept.sort_unstable();
        kept.into_iter().map(|i| all[i].clone()).collect()
    };
    let quiet_before = at - chrono::Duration::days(QUIET_AFTER_DAYS);
    let is_quiet = |f: &Facts| f.last_seen.is_none_or(|t| t < quiet_before);
    let quiet = facts
        .iter()
        .filter(|f| is_quiet(f))
        .map(|f| f.subject.key.learner.clone())
        .collect();
    let learners_total = facts.len();
    let pages = learners_total.div_ceil(LEARNERS_PER_PAGE).max(1);
    let page = page.clamp(1, pages);
    let learners = facts
        .iter()
        .skip((page - 1) * LEARNERS_PER_PAGE)
        .take(LEARNERS_PER_PAGE)
        .map(|f| ClassLearner {
            learner: f.subject.key.learner.clone(),
            subject: f.subject.key.to_string(),
            title: f.subject.title.clone(),
            last_seen: f.last_seen,
            quiet: is_quiet(f),
            standings: concepts.iter().map(|c| standing(f, &c.key)).collect(),
        })
        .collect();
    stale_citations.sort_by(|a, b| b.at.cmp(&a.at).then(a.learner.cmp(&b.learner)));
    ClassView {
        course: course.to_string(),
        at,
        concepts,
        concepts_total,
        learners,
        learners_total,
        page,
        pages,
        struggling,
        quiet,
        stale_citations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tm_model::subject::SubjectKey;

    fn facts(
        learner: &str,
        concepts: &[&str],
        standings: &[(&str, Standing)],
        days_ago: Option<i64>,
        at: DateTime<Utc>,
    ) -> Facts {
        Facts {
            subject: Subject {
                id: 1,
                key: SubjectKey {
                    learner: learner.into(),
                    subject: "algebra".into(),
                },
                title: "Algebra".into(),
                language: None,
                timezone: None,
                owner: tm_model::tenants::Owner::Operator,
                retired: false,
            },
            concepts: concepts
                .iter()
                .enumerate()
                .map(|(i, c)| (c.to_lowercase(), c.to_string(), i as u32))
                .collect(),
            standings: standings.iter().map(|(k, s)| (k.to_string(), *s)).collect(),
            last_seen: days_ago.map(|d| at - chrono::Duration::days(d)),
        }
    }

    #[test]
    fn cells_columns_struggling_and_quiet_follow_the_beliefs() {
        let at = DateTime::parse_from_rfc3339("2026-06-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let v = lay_out(
            "algebra",
            at,
            vec![
                facts(
                    "ana",
                    &["Slope", "Ratio"],
                    &[
                        ("slope", Standing::Struggles),
                        ("other topic", Standing::Understands),
                    ],
                    Some(1),
                    at,
                ),
                facts(
                    "ben",
                    &["Slope"],
                    &[
                        ("slope", Standing::Struggles),
                        ("ratio", Standing::Understands),
                    ],
                    Some(15),
                    at,
                ),
                facts("cy", &["Slope", "Ratio"], &[], None, at),
            ],
            Vec::new(),
            1,
        );
        let keys: Vec<&str> = v.concepts.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            ["slope", "ratio"],
            "most shared first; no unmapped topic"
        );
        assert_eq!(
            v.learners[1].standings,
            [Standing::Struggles, Standing::Understands],
            "a belief counts even where the learner's own map lacks the concept"
        );
        assert_eq!(v.learners[2].standings, [Standing::NoEvidence; 2]);
        assert_eq!((v.concepts[0].struggles, v.concepts[0].no_evidence), (2, 1));
        assert_eq!(v.struggling.len(), 1);
        assert_eq!(v.struggling[0].key, "slope");
        assert_eq!(
            v.quiet,
            ["ben", "cy"],
            "15 days and never are quiet; 1 day is not"
        );
        assert_eq!(
            (v.concepts_total, v.learners_total, v.page, v.pages),
            (2, 3, 1, 1)
        );
    }

    #[test]
    fn a_wide_class_is_laid_out_within_its_columns_and_a_page_of_rows() {
        let at = DateTime::parse_from_rfc3339("2026-06-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        // One learner with many more concepts than columns, struggling with
        // two that sort late; and a page and a half of empty learners.
        let names: Vec<String> = (0..MAX_COLUMNS + 50).map(|i| format!("C{i:04}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let late = names[MAX_COLUMNS + 40].to_lowercase();
        let later = names[MAX_COLUMNS + 49].to_lowercase();
        let mut all = vec![facts(
            "aa",
            &refs,
            &[
                (&late, Standing::Struggles),
                (&later, Standing::StillLearning),
            ],
            Some(1),
            at,
        )];
        for i in 0..LEARNERS_PER_PAGE + LEARNERS_PER_PAGE / 2 {
            all.push(facts(&format!("l{i:04}"), &[], &[], None, at));
        }
        let v = lay_out("algebra", at, all, Vec::new(), 2);
        assert_eq!(v.concepts.len(), MAX_COLUMNS);
        assert_eq!(v.concepts_total, MAX_COLUMNS + 50);
        let keys: Vec<&str> = v.concepts.iter().map(|c| c.key.as_str()).collect();
        assert!(keys.contains(&late.as_str()) && keys.contains(&later.as_str()));
        assert_eq!(keys[0], "c0000", "the usual order kept");
        assert_eq!((v.page, v.pages), (2, 2));
        assert_eq!(
            v.learners_total,
            1 + LEARNERS_PER_PAGE + LEARNERS_PER_PAGE / 2
        );
        assert_eq!(v.learners.len(), v.learners_total - LEARNERS_PER_PAGE);
        assert!(v.learners.iter().all(|l| l.standings.len() == MAX_COLUMNS));
        assert_eq!(v.struggling[0].key, late);
        assert_eq!(
            v.quiet.len(),
            v.learners_total - 1,
            "quiet counts every page"
        );
        // A page past the last is the last.
        let again = lay_out(
            "algebra",
            at,
            vec![facts("x", &["A"], &[], None, at)],
            Vec::new(),
            9,
        );
        assert_eq!((again.page, again.pages), (1, 1));
    }
}
