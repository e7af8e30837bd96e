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
    /// The columns, in order.
    pub concepts: Vec<ClassConcept>,
    /// The rows, by learner name.
    pub learners: Vec<ClassLearner>,
    /// The concepts most learners struggle with (at most ten; only those
    /// at least one learner struggles with), most first.
    pub struggling: Vec<ClassConcept>,
    /// Learners with no episode in the fourteen days before `at`.
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
    Ok(Some(lay_out(course, at, facts, stale_citations)))
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
) -> ClassView {
    // Columns: every map's concepts, the most shared first, then the
    // earliest teaching layer, then by name.
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
    let mut concepts: Vec<ClassConcept> = columns
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
    let quiet_before = at - chrono::Duration::days(QUIET_AFTER_DAYS);
    let mut learners = Vec::with_capacity(facts.len());
    for f in &facts {
        let standings: Vec<Standing> = concepts
            .iter_mut()
            .map(|c| {
                let s = f
                    .standings
                    .get(&c.key)
                    .copied()
                    .unwrap_or(Standing::NoEvidence);
                *match s {
                    Standing::Understands => &mut c.understands,
                    Standing::StillLearning => &mut c.still_learning,
                    Standing::Struggles => &mut c.struggles,
                    Standing::NoEvidence => &mut c.no_evidence,
                } += 1;
                s
            })
            .collect();
        learners.push(ClassLearner {
            learner: f.subject.key.learner.clone(),
            subject: f.subject.key.to_string(),
            title: f.subject.title.clone(),
            last_seen: f.last_seen,
            quiet: f.last_seen.is_none_or(|t| t < quiet_before),
            standings,
        });
    }
    let mut struggling: Vec<ClassConcept> = concepts
        .iter()
        .filter(|c| c.struggles > 0)
        .cloned()
        .collect();
    struggling.sort_by(|a, b| b.struggles.cmp(&a.struggles).then(a.name.cmp(&b.name)));
    struggling.truncate(STRUGGLING_SHOWN);
    let quiet = learners
        .iter()
        .filter(|l| l.quiet)
        .map(|l| l.learner.clone())
        .collect();
    stale_citations.sort_by(|a, b| b.at.cmp(&a.at).then(a.learner.cmp(&b.learner)));
    ClassView {
        course: course.to_string(),
        at,
        concepts,
        learners,
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
    }
}
