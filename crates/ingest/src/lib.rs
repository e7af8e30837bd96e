//! Reading files: what text does each page of a Markdown, plain-text or PDF file carry
//! (`pages`), and, later, which concepts does it teach.
//!
//! Everything here is a pure function of a file's name and bytes: the caller reads the
//! file, stores its version and checksum, and hands the bytes over.

pub mod extract;
#[cfg(feature = "testing")]
pub mod fuzzing;
pub mod pages;
#[cfg(feature = "testing")]
pub mod stand_in;

pub use pages::{FileFormat, Limits, Pages, pages_from_list, read_pages, read_pages_with};

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file is bigger than [`Limits::max_bytes`]; nothing was parsed.
    #[error("{name}: {size} bytes is more than the limit of {limit} bytes")]
    TooLarge { name: String, size: u64, limit: u64 },

    /// The PDF's streams inflate past [`Limits::max_inflated`] bytes, or
    /// one content stream past [`Limits::max_content_inflated`].
    #[error(
        "{name}: its compressed streams inflate past the limits ({limit} bytes in all, {content_limit} for a page's content): a compression bomb, or a file too large to read"
    )]
    Inflates {
        name: String,
        limit: u64,
        content_limit: u64,
    },
    /// The file has more pages than [`Limits::max_pages`].
    #[error("{name}: {pages} pages is more than the limit of {limit} pages")]
    TooManyPages {
        name: String,
        pages: usize,
        limit: usize,
    },

    /// Reading the file would pass one of the [`Limits`] on work (operators
    /// run, content decoded, text given, time taken), `limit` says which
    /// and how much; nothing of the file was kept.
    #[error("{name}: reading it would pass the limit of {limit}")]
    OverLimit { name: String, limit: String },

    /// A Markdown or text file that is not valid UTF-8 (or UTF-16 with a BOM), or holds
    /// binary content. `offset` counts bytes from the start of the file, BOM included.
    #[error("{name}: not readable as text at byte {offset} (line {line}): {reason}")]
    InvalidText {
        name: String,
        offset: usize,
        line: usize,
        reason: String,
    },

    /// A PDF that cannot be parsed, or whose parser failed or panicked on it.
    #[error("{name}: broken file: {reason}")]
    BrokenFile { name: String, reason: String },

    /// A PDF that needs a password to open. (PDFs encrypted with an empty user password,
    /// i.e. with only "permissions", are opened and read.)
    #[error("{name}: the PDF is encrypted and needs a password")]
    Encrypted { name: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
