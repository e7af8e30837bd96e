//! Reading files: pages of Markdown, text and PDF; concept extraction.

pub mod extract;
