//! Reading files: pages of Markdown, text and PDF; concept extraction.
//!
//! Provisional: text and Markdown only, split on form feeds. PDF support
//! arrives with the full page reader.

/// What a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    Markdown,
    Text,
    Pdf,
}

impl FileFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            FileFormat::Markdown => "markdown",
            FileFormat::Text => "text",
            FileFormat::Pdf => "pdf",
        }
    }
}

/// A file's pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    pub format: FileFormat,
    pub pages: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{name} is not valid UTF-8 text (at byte {offset})")]
    NotUtf8 { name: String, offset: usize },
    #[error("{name}: PDF files cannot be read yet")]
    Unsupported { name: String },
}

pub type Result<T> = std::result::Result<T, Error>;

pub fn read_pages(name: &str, bytes: &[u8]) -> Result<Pages> {
    if bytes.starts_with(b"%PDF-") {
        return Err(Error::Unsupported { name: name.into() });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| Error::NotUtf8 {
        name: name.into(),
        offset: e.valid_up_to(),
    })?;
    let format = if name.ends_with(".md") || name.ends_with(".markdown") {
        FileFormat::Markdown
    } else {
        FileFormat::Text
    };
    Ok(Pages {
        format,
        pages: text.split('\u{c}').map(str::to_string).collect(),
    })
}

pub fn pages_from_list(pages: Vec<String>) -> Pages {
    Pages {
        format: FileFormat::Text,
        pages,
    }
}

pub mod extract;
