//! Episodes: what happened, when, with what evidence — and the hash chain that
//! makes any later rewrite of that record visible.
//!
//! An episode is written once and never edited or deleted (the store's triggers
//! refuse both). Each subject's episodes form one chain: episode `seq` stores
//! the hash of episode `seq - 1`, and its own hash covers its immutable fields
//! plus that link. Recomputing the chain finds a tampered row, a missing row,
//! a reordered row, or — against an exported [`Checkpoint`] — a truncated or
//! rewritten prefix. The chain is tamper-*evident*, not tamper-*proof*.
//!
//! # Canonical encoding, version 1
//!
//! The hash is SHA-256 over these bytes, in order, where `str(x)` is the u32
//! big-endian byte length of `x` followed by its bytes:
//!
//! 1. `str(b"tutor-memory/episode/v1")`, the magic;
//! 2. `str(subject key)` (`learner/subject`, UTF-8);
//! 3. `str(kind name)` (`question`, `answer`, …);
//! 4. `str` of a 24-byte block: `seq` as u64, `at` as i64 milliseconds since the
//!    Unix epoch (UTC), salience as the IEEE-754 bits of an f64 as u64, all
//!    big-endian;
//! 5. `str(summary)`, 6. `str(text)`, 7. `str(concepts JSON array)`,
//!    8. `str(evidence JSON array)`, 9. `str(data JSON object)`, each exactly as
//!    stored;
//! 10. the external id: `str([0])` when absent, else `str([1])` then `str(id)`;
//! 11. the previous episode's hash, 32 raw bytes with no length (for `seq = 1`,
//!     the genesis hash: SHA-256 of `b"tutor-memory/chain/v1/genesis\0"` +
//!     subject key, so chains of different subjects cannot be spliced together).
//!
//! JSON fields are hashed as the exact stored text, so verification never has
//! to parse JSON; writers produce them deterministically with sorted keys.
//!
//! # Canonical encoding, version 2 (written since schema 8)
//!
//! Version 2 hashes a *digest* of the content instead of the content, so that
//! the content can later be erased while the chain still verifies. Each
//! episode has its own random 16-byte salt, stored beside it, so a short text
//! cannot be recovered from the digest by guessing it.
//!
//! The content digest is SHA-256 over
//! 1. `str(b"tutor-memory/content/v2")`, 2. `str(salt)`,
//! 3. `str(summary)`, `str(text)`, `str(concepts JSON)`, `str(evidence JSON)`,
//!    `str(data JSON)`, exactly as stored,
//! 4. the external id as in v1 (`str([0])`, or `str([1])` then `str(id)`).
//!
//! The episode hash is SHA-256 over
//! 1. `str(b"tutor-memory/episode/v2")`, 2. `str(subject key)`, 3. `str(kind)`,
//! 4. `str` of the same 24-byte block as v1 (seq, at, salience),
//! 5. `str(content digest)` (32 bytes),
//! 6. the previous episode's hash, 32 raw bytes (the genesis hash is v1's).
//!
//! A row stores its encoding (1 or 2), and for v2 its salt and its digest; a
//! v1 chain keeps verifying as v1 and may continue with v2 episodes.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// The version of the canonical encoding written by this code.
pub const ENCODING_VERSION: u32 = 2;
const MAGIC: &[u8] = b"tutor-memory/episode/v1";
const MAGIC_V2: &[u8] = b"tutor-memory/episode/v2";
const CONTENT_V2: &[u8] = b"tutor-memory/content/v2";
/// Bytes of a v2 episode's salt.
pub const SALT_BYTES: usize = 16;
const GENESIS: &[u8] = b"tutor-memory/chain/v1/genesis\0";

/// What kind of event an episode records. Salience is fixed by kind at write time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Question,
    Answer,
    Check,
    Quiz,
    File,
    Taught,
    Consolidation,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Question,
        Kind::Answer,
        Kind::Check,
        Kind::Quiz,
        Kind::File,
        Kind::Taught,
        Kind::Consolidation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Question => "question",
            Kind::Answer => "answer",
            Kind::Check => "check",
            Kind::Quiz => "quiz",
            Kind::File => "file",
            Kind::Taught => "taught",
            Kind::Consolidation => "consolidation",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A check's verdict, as the tutor judged the learner's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Right,
    Wrong,
    Partial,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Right => "right",
            Verdict::Wrong => "wrong",
            Verdict::Partial => "partial",
        }
    }
}

/// Salience by kind (docs/mechanisms.md §2). Where the article gives no number we chose one
/// and say why:
///
/// | kind | salience | why |
/// |---|---|---|
/// | question | 0.35 | article: a correct recall, a useless reminder |
/// | answer | 0.40 | a little above the question it answers: it carries evidence |
/// | check right | 0.60 | article |
/// | check partial | 0.65 | between a pass and a miss |
/// | check wrong | 0.70 | article: a miss matters more than a pass |
/// | quiz | 0.55 | a scored result over several concepts, below a single miss |
/// | file | 0.30 | an arrival is bookkeeping; the map carries the content |
/// | taught | 0.85 | article: the one memory a person explicitly asked to keep |
/// | consolidation | 0.45 | a digest stands for a day, but repeats what its episodes say |
pub fn salience(kind: Kind, verdict: Option<Verdict>) -> f64 {
    match (kind, verdict) {
        (Kind::Question, _) => 0.35,
        (Kind::Answer, _) => 0.40,
        (Kind::Check, Some(Verdict::Wrong)) => 0.70,
        (Kind::Check, Some(Verdict::Partial)) => 0.65,
        (Kind::Check, _) => 0.60,
        (Kind::Quiz, _) => 0.55,
        (Kind::File, _) => 0.30,
        (Kind::Taught, _) => 0.85,
        (Kind::Consolidation, _) => 0.45,
    }
}

/// One piece of evidence an episode cites: a file version, a page, and the
/// file's SHA-256 at the moment the episode was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub file: String,
    /// Which version of the file was current at that moment.
    #[serde(flatten)]
    pub version: VersionRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    pub sha256: String,
}

impl Evidence {
    /// Whether this evidence names the store's version `id`, which is number
    /// `number` of the file `name`.
    pub fn names(&self, id: i64, name: &str, number: i64) -> bool {
        match self.version {
            VersionRef::Id(v) => v == id,
            VersionRef::Number(n) => self.file == name && n == number,
        }
    }
}

/// How an episode's evidence names a file version. Episodes written now say
/// its number among the file's versions (`"number": 2`), which means the
/// same in every store, so an exported history re-imported elsewhere gives
/// the same stored text and the same chain hash. Episodes written before
/// say the store's row id (`"version": 57`); they keep it, since their
/// stored text is what their hash covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum VersionRef {
    /// 1, 2, … among the versions of the file's name in the subject.
    #[serde(rename = "number")]
    Number(i64),
    /// The store's id of the version (episodes written before numbers).
    #[serde(rename = "version")]
    Id(i64),
}

/// An episode to append. Its seq, link and hash are the store's to assign.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEpisode {
    pub kind: Kind,
    pub at: chrono::DateTime<chrono::Utc>,
    pub salience: f64,
    pub summary: String,
    pub text: String,
    pub concepts: Vec<String>,
    pub evidence: Vec<Evidence>,
    /// Kind-specific facts (a check's topic and verdict, a quiz's score…).
    /// Serialised with sorted keys, so the same facts always hash the same.
    pub data: serde_json::Map<String, serde_json::Value>,
    pub external_id: Option<String>,
    /// Identity of the recorded event this episode came from, if any: a
    /// second event with the same key is the same event, and is skipped.
    pub import_key: Option<Hash>,
    /// The encoding-v2 salt to seal it with; `None` (every new event): a
    /// fresh random one. A re-import of an export passes the salt the
    /// episode was first sealed with, so it hashes the same.
    pub salt: Option<[u8; SALT_BYTES]>,
}

impl NewEpisode {
    /// A plain episode of `kind` said at `at`: `text` as its text and its
    /// summary, the kind's salience, and nothing else (no concepts,
    /// evidence, data, external id or import key; a fresh salt).
    pub fn plain(kind: Kind, at: chrono::DateTime<chrono::Utc>, text: impl Into<String>) -> Self {
        let text = text.into();
        NewEpisode {
            kind,
            at,
            salience: salience(kind, None),
            summary: text.clone(),
            text,
            concepts: vec![],
            evidence: vec![],
            data: serde_json::Map::new(),
            external_id: None,
            import_key: None,
            salt: None,
        }
    }
}

/// An episode as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Episode {
    pub id: i64,
    pub seq: u64,
    pub kind: Kind,
    pub at: chrono::DateTime<chrono::Utc>,
    pub salience: f64,
    pub summary: String,
    pub text: String,
    pub concepts: Vec<String>,
    pub evidence: Vec<Evidence>,
    pub data: serde_json::Map<String, serde_json::Value>,
    pub external_id: Option<String>,
    #[serde(serialize_with = "hex_hash")]
    pub hash: Hash,
    /// Its content was erased on request (the position, kind, time and
    /// digest stay; summary, text, concepts, evidence and data are empty).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub erased: bool,
    /// Its encoding-v2 salt (`None` for a v1 or erased row). Never shown:
    /// only an export carries it, so a re-import seals the same digest.
    #[serde(skip)]
    pub salt: Option<[u8; SALT_BYTES]>,
}

/// An erasure asked for: what it covers, and the caller's reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewErasure {
    pub at: chrono::DateTime<chrono::Utc>,
    /// `tenant`, `learner`, `subject` or `episode`.
    pub scope: String,
    /// The tenant's name, the learner's slug, the subject's key, or
    /// `learner/subject#seq` for one episode.
    pub target: String,
    /// The caller's reference for the request ("ticket 4711"); may be empty.
    /// Never the learner's own words: it stays.
    pub reference: String,
    /// Why ("a pasted phone number"); may be empty. Never the erased words.
    pub reason: String,
}

impl NewErasure {
    /// The erasure as recorded under `id`, having cleared these counts.
    pub fn recorded(&self, id: i64, subjects: u64, episodes: u64) -> Erasure {
        Erasure {
            id,
            at: self.at,
            scope: self.scope.clone(),
            target: self.target.clone(),
            reference: self.reference.clone(),
            reason: self.reason.clone(),
            subjects,
            episodes,
        }
    }
}

/// An erasure as recorded: it stays when everything it erased is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Erasure {
    pub id: i64,
    pub at: chrono::DateTime<chrono::Utc>,
    pub scope: String,
    pub target: String,
    pub reference: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Subjects and episodes whose content it removed.
    pub subjects: u64,
    pub episodes: u64,
}

fn hex_hash<S: serde::Serializer>(h: &Hash, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&hex::encode(h))
}

/// What an append wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub id: i64,
    pub seq: u64,
    pub hash: Hash,
}

/// A fact learned after an episode was written, appended beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub id: i64,
    pub episode_id: i64,
    pub kind: String,
    pub at: chrono::DateTime<chrono::Utc>,
    pub data: serde_json::Value,
}

/// The immutable fields of an episode, as hashed. JSON fields are the exact
/// stored text (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct EpisodeFields<'a> {
    pub subject: &'a str,
    pub seq: u64,
    pub kind: &'a str,
    pub at_ms: i64,
    pub salience: f64,
    pub summary: &'a str,
    pub text: &'a str,
    pub concepts_json: &'a str,
    pub evidence_json: &'a str,
    pub data_json: &'a str,
    pub external_id: Option<&'a str>,
    /// The episode's salt: `Some` for encoding v2, `None` for v1.
    pub salt: Option<&'a [u8]>,
    /// The stored content digest of a v2 row (what verification checks the
    /// recomputed digest against); `None` for v1 or when not yet computed.
    pub digest: Option<&'a [u8]>,
}

/// The hash a chain starts from: the `prev` of its first episode.
pub fn genesis_hash(subject: &str) -> Hash {
    let mut h = Sha256::new();
    h.update(GENESIS);
    h.update(subject.as_bytes());
    h.finalize().into()
}

/// The episode's hash under its encoding (module docs): v2 when it has a
/// salt, else v1.
pub fn episode_hash(f: &EpisodeFields<'_>, prev: &Hash) -> Hash {
    match f.salt {
        Some(salt) => episode_hash_v2(f, &content_digest(f, salt), prev),
        None => episode_hash_v1(f, prev),
    }
}

/// A SHA-256 fed `str(x)` pieces: each the u32 big-endian length, then the bytes.
struct Encoder(Sha256);

impl Encoder {
    fn new() -> Self {
        Encoder(Sha256::new())
    }

    fn put(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u32).to_be_bytes());
        self.0.update(bytes);
        self
    }

    /// Position, kind, time and salience: magic, key, kind, the 24-byte block.
    fn skeleton(&mut self, magic: &[u8], f: &EpisodeFields<'_>) -> &mut Self {
        let mut fixed = [0u8; 24];
        fixed[..8].copy_from_slice(&f.seq.to_be_bytes());
        fixed[8..16].copy_from_slice(&f.at_ms.to_be_bytes());
        fixed[16..].copy_from_slice(&f.salience.to_bits().to_be_bytes());
        self.put(magic)
            .put(f.subject.as_bytes())
            .put(f.kind.as_bytes())
            .put(&fixed)
    }

    /// The content: summary, text, the three JSON fields, the external id
    /// (a presence byte, then the id).
    fn content(&mut self, f: &EpisodeFields<'_>) -> &mut Self {
        self.put(f.summary.as_bytes())
            .put(f.text.as_bytes())
            .put(f.concepts_json.as_bytes())
            .put(f.evidence_json.as_bytes())
            .put(f.data_json.as_bytes());
        match f.external_id {
            None => self.put(&[0]),
            Some(id) => self.put(&[1]).put(id.as_bytes()),
        }
    }

    /// The previous hash, raw (no length), and the digest.
    fn finish(&mut self, prev: Option<&Hash>) -> Hash {
        if let Some(prev) = prev {
            self.0.update(prev);
        }
        std::mem::take(&mut self.0).finalize().into()
    }
}

/// The v2 content digest of the episode's content under `salt`.
pub fn content_digest(f: &EpisodeFields<'_>, salt: &[u8]) -> Hash {
    Encoder::new()
        .put(CONTENT_V2)
        .put(salt)
        .content(f)
        .finish(None)
}

/// The v2 hash of an episode's position, kind, time and salience over its
/// content digest: all a verifier needs once the content is gone.
pub fn episode_hash_v2(f: &EpisodeFields<'_>, digest: &Hash, prev: &Hash) -> Hash {
    Encoder::new()
        .skeleton(MAGIC_V2, f)
        .put(digest)
        .finish(Some(prev))
}

/// The episode's hash under canonical encoding v1 (module docs).
pub fn episode_hash_v1(f: &EpisodeFields<'_>, prev: &Hash) -> Hash {
    Encoder::new()
        .skeleton(MAGIC, f)
        .content(f)
        .finish(Some(prev))
}

/// A one-line summary of a text: the first line, whitespace folded, cut at a
/// word boundary to at most `max_chars` characters with an ellipsis.
pub fn one_line(text: &str, max_chars: usize) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max_chars {
        return folded;
    }
    let mut cut: String = folded.chars().take(max_chars.saturating_sub(1)).collect();
    if let Some(space) = cut.rfind(' ')
        && space > cut.len() / 2
    {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}

/// Where a chain's head stood at a moment: exported so that truncation or a
/// rewrite before it can be detected later, even by someone who only kept this.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub subject: String,
    pub seq: u64,
    /// Hex SHA-256 of the episode at `seq`.
    pub head_hash: String,
}

/// How one subject's chain stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainState {
    Intact,
    Broken,
}

/// The result of verifying one subject's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainReport {
    pub subject: String,
    pub state: ChainState,
    /// Episodes verified before the first break (all of them when intact).
    pub verified: u64,
    /// The seq and hex hash of the last verified episode (0 and the genesis
    /// hash for an empty chain).
    pub head_seq: u64,
    pub head_hash: String,
    /// The first break, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_break: Option<Break>,
    /// Whether a checkpoint was compared.
    pub checkpoint_checked: bool,
    /// Episodes verified whose content was erased on request: their
    /// position, kind, time and digest still verify.
    #[serde(default)]
    pub erased: u64,
    /// Of those, v1 episodes (written before encoding 2), whose hash covered
    /// the content itself: only their place in the chain still verifies.
    #[serde(default)]
    pub erased_v1: u64,
    /// The erasures that removed this subject's content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub erasures: Vec<Erasure>,
    /// Of those, the ones (ids) whose compaction has not finished: the
    /// erased text may still be in the store's files until the store is
    /// next opened or compacted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compaction_owed: Vec<i64>,
}

impl ChainReport {
    /// "12 episodes erased on 2026-03-09 (learner ana, reference ticket 4711)",
    /// one clause per erasure; `None` when nothing was erased. The v1 rows
    /// among them (whose own fields can no longer be recomputed) are named.
    pub fn erasure_note(&self) -> Option<String> {
        if self.erased == 0 {
            return None;
        }
        let each: Vec<String> = self
            .erasures
            .iter()
            .map(|e| {
                let mut reference = String::new();
                if !e.reason.is_empty() {
                    reference.push_str(&format!(", reason {}", e.reason));
                }
                if !e.reference.is_empty() {
                    reference.push_str(&format!(", reference {}", e.reference));
                }
                format!(
                    "on {} ({} {}{reference})",
                    e.at.format("%Y-%m-%d"),
                    e.scope,
                    e.target
                )
            })
            .collect();
        let v1 = if self.erased_v1 > 0 {
            format!(
                "; {} of them written before encoding 2, checked by their links only",
                self.erased_v1
            )
        } else {
            String::new()
        };
        let owed = if self.compaction_owed.is_empty() {
            String::new()
        } else {
            format!(
                "; COMPACTION NOT FINISHED after erasure {}: the erased text may still be in the store's files until the store is next opened or `tutor-memory compact` runs",
                self.compaction_owed
                    .iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Some(format!(
            "{} episode{} erased {}{v1}{owed}",
            self.erased,
            if self.erased == 1 { "" } else { "s" },
            each.join(", ")
        ))
    }
}

/// The first place a chain stops being what was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Break {
    /// The row's fields no longer hash to its stored hash: it was edited.
    Content { seq: u64 },
    /// The row is intact but does not link to the row before it: the row
    /// before was rewritten (and rehashed), or rows were spliced in.
    Link {
        seq: u64,
        expected_prev: String,
        found_prev: String,
    },
    /// A sequence number is missing: a row was deleted (or moved away).
    MissingSeq { expected: u64, found: u64 },
    /// The row now at `seq` was written as `written_as`: rows were reordered.
    Reordered { seq: u64, written_as: u64 },
    /// The chain ends before a checkpoint taken earlier: truncated.
    Truncated { checkpoint_seq: u64, head_seq: u64 },
    /// The row at `seq` cannot even be read as an episode (a field of the
    /// wrong type, text that is not UTF-8): it was written behind the
    /// store's back. `seq` is the row's own when that much reads, else the
    /// position after the last row verified.
    Unreadable { seq: u64, reason: String },
    /// The episode at the checkpoint's position no longer has the
    /// checkpoint's hash: the history up to it was rewritten.
    CheckpointMismatch {
        seq: u64,
        expected: String,
        found: String,
    },
}

impl Break {
    /// The sequence number the break is reported at.
    pub fn seq(&self) -> u64 {
        match self {
            Break::Content { seq }
            | Break::Link { seq, .. }
            | Break::Reordered { seq, .. }
            | Break::CheckpointMismatch { seq, .. }
            | Break::Unreadable { seq, .. } => *seq,
            Break::MissingSeq { expected, .. } => *expected,
            Break::Truncated { head_seq, .. } => head_seq + 1,
        }
    }
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Break::Content { seq } => {
                write!(
                    f,
                    "seq {seq}: content differs from what was hashed (the row was edited)"
                )
            }
            Break::Link {
                seq,
                expected_prev,
                found_prev,
            } => write!(
                f,
                "seq {seq}: link broken: it points at {} but the episode before it hashes to {}",
                short(found_prev),
                short(expected_prev)
            ),
            Break::MissingSeq { expected, found } => {
                write!(
                    f,
                    "seq {expected}: missing (the next episode found is seq {found})"
                )
            }
            Break::Reordered { seq, written_as } => {
                write!(
                    f,
                    "seq {seq}: reordered (this episode was written as seq {written_as})"
                )
            }
            Break::Truncated {
                checkpoint_seq,
                head_seq,
            } => write!(
                f,
                "truncated: the checkpoint was taken at seq {checkpoint_seq} but the chain now ends at seq {head_seq}"
            ),
            Break::CheckpointMismatch {
                seq,
                expected,
                found,
            } => write!(
                f,
                "seq {seq}: rewritten before the checkpoint: the checkpoint says {} but the chain has {}",
                short(expected),
                short(found)
            ),
            Break::Unreadable { seq, reason } => write!(
                f,
                "seq {seq}: the row cannot be read as an episode ({reason}): written behind the store's back"
            ),
        }
    }
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

/// One stored row, as the verifier needs it.
#[derive(Debug, Clone, Copy)]
pub struct StoredRow<'a> {
    pub fields: EpisodeFields<'a>,
    pub prev_hash: &'a [u8],
    pub hash: &'a [u8],
    /// The row's encoding (1 or 2).
    pub encoding: u32,
    /// Its content was erased by a recorded erasure.
    pub erased: bool,
}

/// What the verifier needs to know about a row whose content no longer
/// matches, to tell a reordering from an edit: where its stored `prev_hash`
/// points, if it points at a row of the chain.
pub trait PrevLookup {
    /// The seq of the row whose stored hash equals `hash`, if any.
    fn seq_of_hash(&mut self, hash: &[u8]) -> Option<u64>;
}

/// How far from its position a moved row is looked for.
pub const REORDER_SEARCH: u64 = 1024;

/// Walks one subject's rows in seq order and finds the first break.
pub struct ChainVerifier {
    subject: String,
    expected_seq: u64,
    prev: Hash,
    verified: u64,
    erased: u64,
    erased_v1: u64,
    /// A v2 row was verified: a v1 row after it is a downgrade, refused.
    seen_v2: bool,
}

impl ChainVerifier {
    pub fn new(subject: &str) -> Self {
        ChainVerifier {
            subject: subject.to_string(),
            expected_seq: 1,
            prev: genesis_hash(subject),
            verified: 0,
            erased: 0,
            erased_v1: 0,
            seen_v2: false,
        }
    }

    /// Erased rows verified so far, and how many of them were v1.
    pub fn erased(&self) -> (u64, u64) {
        (self.erased, self.erased_v1)
    }

    /// How many rows verified so far.
    pub fn verified(&self) -> u64 {
        self.verified
    }

    /// The seq and hash of the last verified row.
    pub fn head(&self) -> (u64, Hash) {
        (self.expected_seq - 1, self.prev)
    }

    /// Checks the next row (rows must come in ascending seq order).
    pub fn push(&mut self, row: &StoredRow<'_>, lookup: &mut dyn PrevLookup) -> Result<(), Break> {
        let seq = row.fields.seq;
        if seq != self.expected_seq {
            return Err(Break::MissingSeq {
                expected: self.expected_seq,
                found: seq,
            });
        }
        // Only encodings 1 and 2 exist, and a chain never goes back from 2
        // to 1 (else a row could pass as an unverifiable erased v1 row).
        if !(1..=2).contains(&row.encoding) || (row.encoding == 1 && self.seen_v2) {
            return Err(Break::Content { seq });
        }
        let computed = if row.erased {
            // An erased row holds no content and no salt: anything else was
            // written behind the store's back.
            let f = &row.fields;
            let empty = f.summary.is_empty()
                && f.text.is_empty()
                && f.concepts_json == "[]"
                && f.evidence_json == "[]"
                && f.data_json == "{}"
                && f.external_id.is_none()
                && f.salt.is_none();
            // A v2 row's skeleton still hashes over its stored digest; a v1
            // row hashed its content, which is gone, so only its links (here,
            // and from the next row to its stored hash) are checked.
            match (row.encoding, f.digest) {
                (2, Some(digest)) if empty && digest.len() == 32 => {
                    let h = episode_hash_v2(f, &as_hash(digest), &as_hash(row.prev_hash));
                    if h.as_slice() != row.hash {
                        return Err(Break::Content { seq });
                    }
                    h
                }
                (1, None) if empty => as_hash(row.hash),
                _ => return Err(Break::Content { seq }),
            }
        } else {
            // A v2 row's stored digest must be what its content and salt give.
            if let (Some(salt), Some(stored)) = (row.fields.salt, row.fields.digest)
                && content_digest(&row.fields, salt).as_slice() != stored
            {
                return Err(Break::Content { seq });
            }
            let computed = episode_hash(&row.fields, &as_hash(row.prev_hash));
            if computed.as_slice() != row.hash {
                return Err(self.content_break(row, lookup));
            }
            computed
        };
        if row.prev_hash != self.prev.as_slice() {
            return Err(Break::Link {
                seq,
                expected_prev: hex::encode(self.prev),
                found_prev: hex::encode(row.prev_hash),
            });
        }
        if row.erased {
            self.erased += 1;
            if row.encoding == 1 {
                self.erased_v1 += 1;
            }
        }
        self.seen_v2 |= row.encoding == 2;
        self.prev = computed;
        self.expected_seq += 1;
        self.verified += 1;
        Ok(())
    }

    /// A row that no longer hashes to its stored hash was either edited or
    /// moved: if it hashes correctly under another seq, it moved. Candidates:
    /// the seq after the row its link points at, then every seq within
    /// [`REORDER_SEARCH`] positions (only ever computed on a broken chain).
    fn content_break(&self, row: &StoredRow<'_>, lookup: &mut dyn PrevLookup) -> Break {
        let seq = row.fields.seq;
        let prev = as_hash(row.prev_hash);
        let linked = if prev == genesis_hash(&self.subject) {
            Some(1)
        } else {
            lookup.seq_of_hash(row.prev_hash).map(|s| s + 1)
        };
        let nearby = (1..=REORDER_SEARCH)
            .flat_map(|d| [seq.checked_add(d), seq.checked_sub(d)])
            .flatten();
        for original in linked
            .into_iter()
            .chain(nearby)
            .filter(|&s| s != seq && s > 0)
        {
            let fields = EpisodeFields {
                seq: original,
                ..row.fields
            };
            if episode_hash(&fields, &prev).as_slice() == row.hash {
                return Break::Reordered {
                    seq,
                    written_as: original,
                };
            }
        }
        Break::Content { seq }
    }

    /// After every row was pushed: compares against a checkpoint, if any.
    pub fn finish(&self, checkpoint: Option<(&Checkpoint, Option<&[u8]>)>) -> Result<(), Break> {
        let Some((cp, hash_at_cp)) = checkpoint else {
            return Ok(());
        };
        let head_seq = self.expected_seq - 1;
        match hash_at_cp {
            None if cp.seq > head_seq => Err(Break::Truncated {
                checkpoint_seq: cp.seq,
                head_seq,
            }),
            None => Err(Break::CheckpointMismatch {
                seq: cp.seq,
                expected: cp.head_hash.clone(),
                found: String::new(),
            }),
            Some(h) if !hex::encode(h).eq_ignore_ascii_case(&cp.head_hash) => {
                Err(Break::CheckpointMismatch {
                    seq: cp.seq,
                    expected: cp.head_hash.clone(),
                    found: hex::encode(h),
                })
            }
            Some(_) => Ok(()),
        }
    }
}

fn as_hash(bytes: &[u8]) -> Hash {
    let mut h = [0u8; 32];
    let n = bytes.len().min(32);
    h[..n].copy_from_slice(&bytes[..n]);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoLookup;
    impl PrevLookup for NoLookup {
        fn seq_of_hash(&mut self, _: &[u8]) -> Option<u64> {
            None
        }
    }

    fn fields(seq: u64, text: &str) -> EpisodeFields<'_> {
        EpisodeFields {
            subject: "ana/cells",
            seq,
            kind: "question",
            at_ms: 1_700_000_000_000 + seq as i64,
            salience: 0.35,
            summary: text,
            text,
            concepts_json: "[]",
            evidence_json: "[]",
            data_json: "{}",
            external_id: None,
            salt: None,
            digest: None,
        }
    }

    #[test]
    fn every_field_changes_the_hash() {
        let base = fields(1, "what is a cell");
        let prev = genesis_hash("ana/cells");
        let h = episode_hash(&base, &prev);
        let variants = [
            EpisodeFields {
                subject: "ana/cellz",
                ..base
            },
            EpisodeFields { seq: 2, ..base },
            EpisodeFields {
                kind: "answer",
                ..base
            },
            EpisodeFields {
                at_ms: base.at_ms + 1,
                ..base
            },
            EpisodeFields {
                salience: 0.36,
                ..base
            },
            EpisodeFields {
                summary: "x",
                ..base
            },
            EpisodeFields { text: "x", ..base },
            EpisodeFields {
                concepts_json: "[\"a\"]",
                ..base
            },
            EpisodeFields {
                evidence_json: "[{}]",
                ..base
            },
            EpisodeFields {
                data_json: "{\"a\":1}",
                ..base
            },
            EpisodeFields {
                external_id: Some(""),
                ..base
            },
        ];
        for v in variants {
            assert_ne!(episode_hash(&v, &prev), h, "{v:?}");
            // The same under v2, where the content enters through its digest.
            let salted = |f: EpisodeFields<'_>| {
                episode_hash(
                    &EpisodeFields {
                        salt: Some(&[7; 16]),
                        ..f
                    },
                    &prev,
                )
            };
            assert_ne!(salted(v), salted(base), "v2: {v:?}");
        }
        assert_ne!(episode_hash(&base, &[0; 32]), h);
    }

    /// Under v2 the hash is the skeleton over the content digest: with the
    /// content gone, the stored digest still gives the same hash; another
    /// salt gives another digest (a guess of the text needs the salt).
    #[test]
    fn v2_hashes_the_content_through_a_salted_digest() {
        let prev = genesis_hash("ana/cells");
        let salt = [3u8; SALT_BYTES];
        let full = EpisodeFields {
            salt: Some(&salt),
            ..fields(1, "my phone is 555-0100")
        };
        let h = episode_hash(&full, &prev);
        assert_ne!(h, episode_hash_v1(&full, &prev), "v2 is not v1");
        let digest = content_digest(&full, &salt);
        let gone = EpisodeFields {
            summary: "",
            text: "",
            salt: None,
            ..full
        };
        assert_eq!(episode_hash_v2(&gone, &digest, &prev), h);
        assert_ne!(content_digest(&full, &[4; SALT_BYTES]), digest);
        // A verifier refuses a v2 row whose stored digest is not its content's.
        let mut v = ChainVerifier::new("ana/cells");
        let wrong = [9u8; 32];
        let row = StoredRow {
            fields: EpisodeFields {
                digest: Some(&wrong),
                ..full
            },
            prev_hash: &prev,
            hash: &h,
            encoding: 2,
            erased: false,
        };
        assert_eq!(v.push(&row, &mut NoLookup), Err(Break::Content { seq: 1 }));
        let row = StoredRow {
            fields: EpisodeFields {
                digest: Some(&digest),
                ..full
            },
            prev_hash: &prev,
            hash: &h,
            encoding: 2,
            erased: false,
        };
        assert_eq!(
            ChainVerifier::new("ana/cells").push(&row, &mut NoLookup),
            Ok(())
        );

        // Erased: the content is gone, the stored digest still verifies the
        // skeleton; a changed time does not.
        let gone = StoredRow {
            fields: EpisodeFields {
                summary: "",
                text: "",
                salt: None,
                digest: Some(&digest),
                ..full
            },
            prev_hash: &prev,
            hash: &h,
            encoding: 2,
            erased: true,
        };
        let mut v = ChainVerifier::new("ana/cells");
        assert_eq!(v.push(&gone, &mut NoLookup), Ok(()));
        assert_eq!(v.erased(), (1, 0));
        let moved = StoredRow {
            fields: EpisodeFields {
                at_ms: full.at_ms + 1,
                ..gone.fields
            },
            ..gone
        };
        assert_eq!(
            ChainVerifier::new("ana/cells").push(&moved, &mut NoLookup),
            Err(Break::Content { seq: 1 })
        );
        // An "erased" row that still holds text, a v1 row after a v2 one, an
        // unknown encoding: each a break, never an unverifiable pass.
        let forged = StoredRow {
            fields: EpisodeFields {
                text: "forged",
                ..gone.fields
            },
            ..gone
        };
        assert_eq!(
            ChainVerifier::new("ana/cells").push(&forged, &mut NoLookup),
            Err(Break::Content { seq: 1 })
        );
        let mut v = ChainVerifier::new("ana/cells");
        assert_eq!(v.push(&gone, &mut NoLookup), Ok(()));
        let h2 = [5u8; 32];
        let downgraded = StoredRow {
            fields: EpisodeFields {
                seq: 2,
                digest: None,
                ..gone.fields
            },
            prev_hash: &h,
            hash: &h2,
            encoding: 1,
            erased: true,
        };
        assert_eq!(
            v.push(&downgraded, &mut NoLookup),
            Err(Break::Content { seq: 2 })
        );
        let unknown = StoredRow { encoding: 3, ..row };
        assert_eq!(
            ChainVerifier::new("ana/cells").push(&unknown, &mut NoLookup),
            Err(Break::Content { seq: 1 })
        );
    }

    #[test]
    fn field_boundaries_are_unambiguous() {
        let a = EpisodeFields {
            summary: "ab",
            text: "c",
            ..fields(1, "")
        };
        let b = EpisodeFields {
            summary: "a",
            text: "bc",
            ..fields(1, "")
        };
        let prev = [0; 32];
        assert_ne!(episode_hash(&a, &prev), episode_hash(&b, &prev));
    }

    #[test]
    fn a_valid_chain_verifies_and_a_gap_is_named() {
        let texts = ["a", "b", "c"];
        let mut prev = genesis_hash("ana/cells");
        let mut rows = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let f = fields(i as u64 + 1, t);
            let h = episode_hash(&f, &prev);
            rows.push((f, prev, h));
            prev = h;
        }
        let mut v = ChainVerifier::new("ana/cells");
        for (f, p, h) in &rows {
            v.push(
                &StoredRow {
                    fields: *f,
                    prev_hash: p,
                    hash: h,
                    encoding: 1,
                    erased: false,
                },
                &mut NoLookup,
            )
            .unwrap();
        }
        assert_eq!(v.verified(), 3);

        let mut v = ChainVerifier::new("ana/cells");
        let (f, p, h) = &rows[0];
        v.push(
            &StoredRow {
                fields: *f,
                prev_hash: p,
                hash: h,
                encoding: 1,
                erased: false,
            },
            &mut NoLookup,
        )
        .unwrap();
        let (f, p, h) = &rows[2];
        let err = v.push(
            &StoredRow {
                fields: *f,
                prev_hash: p,
                hash: h,
                encoding: 1,
                erased: false,
            },
            &mut NoLookup,
        );
        assert_eq!(
            err,
            Err(Break::MissingSeq {
                expected: 2,
                found: 3
            })
        );
    }

    #[test]
    fn one_line_cuts_at_a_word() {
        assert_eq!(one_line("what  is\na cell", 80), "what is a cell");
        assert_eq!(one_line("alpha beta gamma delta", 12), "alpha beta…");
    }
}
