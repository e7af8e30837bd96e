//! Does a memory's citation still hold? A lookup, not a model call: an
//! answer's evidence records the cited file version and its checksum at the
//! time, so the store's file versions say whether that version is still the
//! current one.
//!
//! Three results, all first-class (docs/mechanisms.md §8):
//! * **holds** — every cited version is still the file's current version, same checksum;
//! * **changed** — a cited file was replaced (by which version) or removed;
//! * **unverifiable** — the memory cites no file (a conversation, a check).
//!   Calling such a memory "holds" would be the real defect.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::episodes::Evidence;
use crate::files::FileVersion;

/// The latest verification of one episode's citation, as the night keeps it
/// (it orders the next batch: never checked first, then oldest checked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CitationCheck {
    pub episode_id: i64,
    pub checked_at: DateTime<Utc>,
    /// holds | changed | unverifiable
    pub status: String,
    pub label: String,
}

/// What the rules need from a stored file version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionFacts {
    pub id: i64,
    pub name: String,
    /// 1, 2, … per file name.
    pub version: i64,
    pub sha256: String,
    pub removed: bool,
}

impl VersionFacts {
    /// The version as it stood at `at`; `None` when it was added later. A
    /// removal after `at` has not happened yet.
    pub fn as_of(v: &FileVersion, at: DateTime<Utc>) -> Option<VersionFacts> {
        (v.added_at <= at).then(|| VersionFacts {
            id: v.id,
            name: v.name.clone(),
            version: v.version,
            sha256: v.sha256.clone(),
            removed: v.removed_at.is_some_and(|r| r <= at),
        })
    }

    /// Every version as it stands now.
    pub fn now(versions: &[FileVersion]) -> Vec<VersionFacts> {
        versions
            .iter()
            .filter_map(|v| VersionFacts::as_of(v, DateTime::<Utc>::MAX_UTC))
            .collect()
    }
}

/// What became of one cited file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "now", rename_all = "snake_case")]
pub enum Change {
    /// A newer version of the same name is current.
    Replaced {
        file: String,
        cited: i64,
        by_version: i64,
    },
    /// The file was removed (or its version is not stored at all).
    Removed { file: String },
    /// Same version, other bytes: cannot happen while the store's trigger
    /// holds, reported rather than assumed away.
    Altered { file: String },
}

/// The verification of one memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Citation {
    Holds,
    Changed { changes: Vec<Change> },
    Unverifiable,
}

impl Citation {
    pub fn status(&self) -> &'static str {
        match self {
            Citation::Holds => "holds",
            Citation::Changed { .. } => "changed",
            Citation::Unverifiable => "unverifiable",
        }
    }

    /// `holds`, `unverifiable`, `changed: replaced by notes.md v2`,
    /// `changed: removed`; with several changed files each names its file.
    pub fn label(&self) -> String {
        match self {
            Citation::Changed { changes } if changes.len() == 1 => {
                format!("changed: {}", change_text(&changes[0], false))
            }
            Citation::Changed { changes } => {
                let parts: Vec<String> = changes.iter().map(|c| change_text(c, true)).collect();
                format!("changed: {}", parts.join("; "))
            }
            other => other.status().to_string(),
        }
    }
}

fn change_text(c: &Change, name_file: bool) -> String {
    let prefix = |file: &str| {
        if name_file {
            format!("{file} ")
        } else {
            String::new()
        }
    };
    match c {
        Change::Replaced {
            file, by_version, ..
        } => format!("{}replaced by {file} v{by_version}", prefix(file)),
        Change::Removed { file } => format!("{}removed", prefix(file)),
        Change::Altered { file } => format!("{}checksum differs", prefix(file)),
    }
}

/// Verifies one memory's evidence against the subject's file versions.
///
/// The file's current state is its newest version by number: when that is the
/// cited version (and not removed) the citation holds; when a newer one is
/// current the file was replaced by it (also when it was re-added after a
/// removal); when the newest is removed, the file was removed.
pub fn verify(evidence: &[Evidence], versions: &[VersionFacts]) -> Citation {
    if evidence.is_empty() {
        return Citation::Unverifiable;
    }
    let mut changes: Vec<Change> = Vec::new();
    for ev in evidence {
        let cited = versions.iter().find(|v| ev.names(v.id, &v.name, v.version));
        let name = cited.map_or(ev.file.as_str(), |v| v.name.as_str());
        let newest = versions
            .iter()
            .filter(|v| v.name == name)
            .max_by_key(|v| v.version);
        let change = match (cited, newest) {
            (None, _) | (_, None) => Some(Change::Removed {
                file: ev.file.clone(),
            }),
            (Some(_), Some(n)) if n.removed => Some(Change::Removed {
                file: ev.file.clone(),
            }),
            (Some(c), Some(n)) if n.id != c.id => Some(Change::Replaced {
                file: ev.file.clone(),
                cited: c.version,
                by_version: n.version,
            }),
            (Some(c), _) if c.sha256 != ev.sha256 => Some(Change::Altered {
                file: ev.file.clone(),
            }),
            _ => None,
        };
        if let Some(c) = change
            && !changes.contains(&c)
        {
            changes.push(c);
        }
    }
    if changes.is_empty() {
        Citation::Holds
    } else {
        Citation::Changed { changes }
    }
}
