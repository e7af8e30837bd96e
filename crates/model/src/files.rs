//! The learner's files as the stores keep them: every version of every file,
//! its bytes' checksum and its pages. A version's bytes never change; a new
//! upload under the same name is a new version that replaces the old one.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// A stored version of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileVersion {
    /// The store's id of this version (what evidence and passages point at).
    pub id: i64,
    pub name: String,
    /// 1 for the first upload under the name, then 2, 3, …
    pub version: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    /// `markdown`, `text` or `pdf`.
    pub format: String,
    pub added_at: DateTime<Utc>,
    pub replaced_at: Option<DateTime<Utc>>,
    pub replaced_by: Option<i64>,
    pub removed_at: Option<DateTime<Utc>>,
    pub pages: usize,
}

impl FileVersion {
    /// Neither replaced nor removed: the learner's material now.
    pub fn is_current(&self) -> bool {
        self.replaced_at.is_none() && self.removed_at.is_none()
    }
}

/// The result of adding a file's bytes under a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAdded {
    /// A new version was stored; `replaced` is the version it replaced.
    New {
        version: FileVersion,
        replaced: Option<i64>,
    },
    /// The current version already has these bytes: nothing was stored.
    Unchanged(FileVersion),
}

impl FileAdded {
    pub fn version(&self) -> &FileVersion {
        match self {
            FileAdded::New { version, .. } | FileAdded::Unchanged(version) => version,
        }
    }
}
