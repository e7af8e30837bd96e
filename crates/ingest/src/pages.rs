//! Pages: what text does each page of a file carry, and in which order?
//!
//! A page is what a learner or a tutor cites (`{"file": "cells.md", "page": 2}`), so
//! page numbers must be stable and mean what a person sees:
//!
//! - **PDF** (detected by the `%PDF-` magic at the start, whatever the name): one page per
//!   PDF page, in page order, with the text of its text layer, lines in drawing order
//!   (lines more than 1.5 line heights apart come back with a blank line between them;
//!   leading and trailing blank space of a page is trimmed). A page without text (a
//!   scanned page, a picture) is an empty string: the file still reads, and
//!   [`Pages::blank_pages`] tells the caller which pages to warn about. A PDF that needs
//!   a password is [`Error::Encrypted`]; one that cannot be parsed, or on which the parser
//!   fails or panics, is [`Error::BrokenFile`] (never a panic).
//! - **Markdown** (`.md`, `.markdown`) and **text** (anything else): pages are separated by
//!   form feeds (U+000C); a file without one is a single page. A trailing form feed
//!   (as `pdftotext` writes after every page) does not open an empty last page.
//!   UTF-8 (a BOM is stripped) or UTF-16 with a BOM; CRLF and lone CR become LF.
//!   Invalid UTF-8 or a NUL byte is [`Error::InvalidText`] naming the byte offset: no
//!   lossy guessing, so a stored page is always the file's real text.
//! - **Inline pages** from a history file (`pages: [..]`): [`pages_from_list`].

mod pdf;

use std::borrow::Cow;

use crate::{Error, Result};

/// How a file's bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileFormat {
    Markdown,
    Text,
    Pdf,
}

impl FileFormat {
    /// The name stored beside a file version: `markdown`, `text` or `pdf`.
    pub fn as_str(self) -> &'static str {
        match self {
            FileFormat::Markdown => "markdown",
            FileFormat::Text => "text",
            FileFormat::Pdf => "pdf",
        }
    }
}

impl FileFormat {
    /// The format `read_pages` will use: PDF by content (`%PDF-` at byte 0, whatever the
    /// extension), else Markdown by extension, else text. This only classifies; whether
    /// the bytes are valid is for [`read_pages`] to say.
    pub fn detect(name: &str, bytes: &[u8]) -> FileFormat {
        if bytes.starts_with(PDF_MAGIC) {
            FileFormat::Pdf
        } else if has_extension(name, &["md", "markdown"]) {
            FileFormat::Markdown
        } else {
            FileFormat::Text
        }
    }
}

const PDF_MAGIC: &[u8] = b"%PDF-";

/// Bounds on what one file may cost to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Larger files are refused before parsing ([`Error::TooLarge`]).
    pub max_bytes: u64,
    /// Files with more pages are refused ([`Error::TooManyPages`]).
    pub max_pages: usize,
    /// A PDF whose compressed streams inflate past this many bytes in all
    /// is refused before its text is read ([`Error::Inflates`]): a 46 KB
    /// file can inflate to gigabytes.
    pub max_inflated: u64,
    /// Nor may one content stream (a page's, a form's) inflate past this:
    /// reading a page costs about a hundred times its content in memory.
    pub max_content_inflated: u64,
    /// The content operators a PDF's text reader may run for one page,
    /// counting a form's operators at every use of the form
    /// ([`Error::OverLimit`]): the reader decodes and runs a form again at
    /// each `Do`, so a few hundred bytes can ask for millions.
    pub max_page_operators: u64,
    /// The same over the whole file: at most this many, and at most
    /// [`Limits::operators_per_byte`] for each byte of the file (but always
    /// one page's worth). Ordinary files run well under one operator a byte;
    /// a work bomb runs thousands.
    pub max_operators: u64,
    /// See [`Limits::max_operators`].
    pub operators_per_byte: u64,
    /// The content bytes the text reader may decode over the whole file,
    /// counting a stream at every use (a page's, a form's).
    pub max_decoded: u64,
    /// The text one PDF page may give.
    pub max_page_text: u64,
    /// The text a whole PDF may give.
    pub max_text: u64,
    /// How long reading one file's pages may take: past it the file is
    /// refused between two pages.
    pub deadline: std::time::Duration,
}

impl Limits {
    /// The operators a file of `size` bytes may run ([`Limits::max_operators`]).
    pub fn operators_for(&self, size: u64) -> u64 {
        self.operators_per_byte
            .saturating_mul(size)
            .max(self.max_page_operators)
            .min(self.max_operators)
    }

    pub const DEFAULT_MAX_BYTES: u64 = 50 * 1024 * 1024;
    pub const DEFAULT_MAX_PAGES: usize = 5_000;
    pub const DEFAULT_MAX_INFLATED: u64 = 64 * 1024 * 1024;
    pub const DEFAULT_MAX_CONTENT_INFLATED: u64 = 4 * 1024 * 1024;
    pub const DEFAULT_MAX_PAGE_OPERATORS: u64 = 100_000;
    pub const DEFAULT_MAX_OPERATORS: u64 = 5_000_000;
    pub const DEFAULT_OPERATORS_PER_BYTE: u64 = 20;
    pub const DEFAULT_MAX_DECODED: u64 = 128 * 1024 * 1024;
    pub const DEFAULT_MAX_PAGE_TEXT: u64 = 256 * 1024;
    pub const DEFAULT_MAX_TEXT: u64 = 32 * 1024 * 1024;
    pub const DEFAULT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_pages: Self::DEFAULT_MAX_PAGES,
            max_inflated: Self::DEFAULT_MAX_INFLATED,
            max_content_inflated: Self::DEFAULT_MAX_CONTENT_INFLATED,
            max_page_operators: Self::DEFAULT_MAX_PAGE_OPERATORS,
            max_operators: Self::DEFAULT_MAX_OPERATORS,
            operators_per_byte: Self::DEFAULT_OPERATORS_PER_BYTE,
            max_decoded: Self::DEFAULT_MAX_DECODED,
            max_page_text: Self::DEFAULT_MAX_PAGE_TEXT,
            max_text: Self::DEFAULT_MAX_TEXT,
            deadline: Self::DEFAULT_DEADLINE,
        }
    }
}

/// The pages of one file, in order. Page numbers are 1-based, as in citations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    pub format: FileFormat,
    pub pages: Vec<String>,
}

impl Pages {
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The text of page `number` (1-based), if the file has that page.
    pub fn page(&self, number: usize) -> Option<&str> {
        number
            .checked_sub(1)
            .and_then(|index| self.pages.get(index))
            .map(String::as_str)
    }

    /// Numbers (1-based) of the pages with no text but whitespace: for a PDF, pages with
    /// no text layer (scanned or drawn). The caller decides whether to warn.
    pub fn blank_pages(&self) -> Vec<usize> {
        self.pages
            .iter()
            .enumerate()
            .filter(|(_, text)| text.trim().is_empty())
            .map(|(index, _)| index + 1)
            .collect()
    }
}

/// Reads the pages of the file `name` (used for the format and in errors) with the
/// default [`Limits`].
pub fn read_pages(name: &str, bytes: &[u8]) -> Result<Pages> {
    read_pages_with(name, bytes, &Limits::default())
}

/// Reads the pages of the file `name` within `limits`.
pub fn read_pages_with(name: &str, bytes: &[u8], limits: &Limits) -> Result<Pages> {
    let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if size > limits.max_bytes {
        return Err(Error::TooLarge {
            name: name.to_owned(),
            size,
            limit: limits.max_bytes,
        });
    }
    let format = FileFormat::detect(name, bytes);
    let pages = match format {
        FileFormat::Pdf => pdf::read(name, bytes, limits)?,
        FileFormat::Markdown | FileFormat::Text => {
            // A `.pdf` without the magic is a damaged or mislabelled PDF; reading it as
            // text would only produce a confusing "invalid UTF-8" error.
            if has_extension(name, &["pdf"]) {
                return Err(Error::BrokenFile {
                    name: name.to_owned(),
                    reason: "named .pdf but does not start with %PDF-".to_owned(),
                });
            }
            split_pages(&decode_text(name, bytes)?)
        }
    };
    if pages.len() > limits.max_pages {
        return Err(Error::TooManyPages {
            name: name.to_owned(),
            pages: pages.len(),
            limit: limits.max_pages,
        });
    }
    Ok(Pages { format, pages })
}

/// Pages given inline in a history file (`"pages": [..]`), one string per page, kept as
/// given except that line endings become LF like every other page.
pub fn pages_from_list(pages: Vec<String>) -> Pages {
    Pages {
        format: FileFormat::Text,
        pages: pages
            .into_iter()
            .map(|page| match normalise_newlines(&page) {
                Cow::Borrowed(_) => page,
                Cow::Owned(normalised) => normalised,
            })
            .collect(),
    }
}

fn has_extension(name: &str, extensions: &[&str]) -> bool {
    std::path::Path::new(name)
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            extensions
                .iter()
                .any(|wanted| extension.eq_ignore_ascii_case(wanted))
        })
}

/// Text from UTF-8 (BOM optional) or UTF-16 with a BOM; everything else is refused with
/// the offending byte offset.
fn decode_text<'b>(name: &str, bytes: &'b [u8]) -> Result<Cow<'b, str>> {
    let invalid = |offset: usize, reason: String| Error::InvalidText {
        name: name.to_owned(),
        offset,
        line: line_at(bytes, offset),
        reason,
    };
    if let Some(body) = bytes.strip_prefix(b"\xFF\xFE") {
        return decode_utf16(body, u16::from_le_bytes)
            .map(Cow::Owned)
            .map_err(|(at, why)| invalid(2 + at, why));
    }
    if let Some(body) = bytes.strip_prefix(b"\xFE\xFF") {
        return decode_utf16(body, u16::from_be_bytes)
            .map(Cow::Owned)
            .map_err(|(at, why)| invalid(2 + at, why));
    }
    let (start, body) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(body) => (3, body),
        None => (0, bytes),
    };
    let text = std::str::from_utf8(body).map_err(|error| {
        let at = error.valid_up_to();
        let shown: Vec<String> = body[at..]
            .iter()
            .take(error.error_len().unwrap_or(body.len() - at).max(1))
            .map(|byte| format!("0x{byte:02X}"))
            .collect();
        invalid(
            start + at,
            format!(
                "invalid UTF-8 ({}); save the file as UTF-8",
                shown.join(" ")
            ),
        )
    })?;
    if let Some(at) = text.find('\0') {
        return Err(invalid(start + at, binary_reason()));
    }
    Ok(Cow::Borrowed(text))
}

fn binary_reason() -> String {
    "a NUL byte: this looks like a binary file, not text".to_owned()
}

/// Decodes UTF-16 code units; an error carries the byte offset within `body`.
fn decode_utf16(
    body: &[u8],
    unit: fn([u8; 2]) -> u16,
) -> std::result::Result<String, (usize, String)> {
    if !body.len().is_multiple_of(2) {
        return Err((
            body.len() - 1,
            "UTF-16 text with an odd number of bytes".to_owned(),
        ));
    }
    let units = body.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    let mut text = String::with_capacity(body.len() / 2);
    let mut at = 0;
    for decoded in char::decode_utf16(units) {
        match decoded {
            Ok('\0') => return Err((at, binary_reason())),
            Ok(c) => {
                text.push(c);
                at += 2 * c.len_utf16();
            }
            Err(error) => {
                return Err((
                    at,
                    format!(
                        "an unpaired UTF-16 surrogate 0x{:04X}",
                        error.unpaired_surrogate()
                    ),
                ));
            }
        }
    }
    Ok(text)
}

/// 1-based line of byte `offset`, counting LF (and so CRLF) line ends before it.
fn line_at(bytes: &[u8], offset: usize) -> usize {
    let before = &bytes[..offset.min(bytes.len())];
    // UTF-16 newlines are a 0x0A byte next to a 0x00; counting 0x0A alone is close enough
    // for a hint in an error message.
    1 + before.iter().filter(|&&byte| byte == b'\n').count()
}

/// LF line ends; the text itself (no copy) when it has no CR, which is the
/// usual case and keeps a large upload from being copied twice more.
fn normalise_newlines(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The text's pages, split at form feeds: each page is the one copy made of
/// the file's text.
fn split_pages(text: &str) -> Vec<String> {
    let text = normalise_newlines(text);
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
    if pages.len() > 1 && pages.last().is_some_and(|last| last.trim().is_empty()) {
        pages.pop();
    }
    pages
}
