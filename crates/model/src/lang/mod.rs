//! Which languages learners write in, how their word lists are read, and how a
//! name becomes a canonical key that compares equal across case, accents,
//! Unicode forms, spacing and punctuation.
//!
//! Word lists live in data files, one per language and concern:
//! `crates/model/data/<concern>/<lang>.txt`, one entry a line, `#` starts a
//! comment. Each module that needs a list embeds its own files with
//! `include_str!` and reads them with [`entries`]; no list is typed in code.

mod canonical;
pub mod stem;

pub use canonical::canonical_key;

/// The languages every word list covers (BCP 47 primary subtags).
pub const LANGS: [&str; 8] = ["en", "es", "de", "it", "id", "fr", "pt", "ar"];

/// The primary subtag of a BCP 47 tag, lowercased: "pt-BR" and "pt_br" → "pt".
pub fn primary_subtag(tag: &str) -> String {
    tag.split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// The entries of one data file: trimmed, non-empty lines with `#` comments removed.
pub fn entries(file: &'static str) -> impl Iterator<Item = &'static str> {
    file.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
}

/// Equal, or one is the other plus "s" or "es": the plural tolerance with
/// which a concept's name (canonical words) is recognised in running text.
/// Enough for the languages whose plurals are suffixes, harmless for the rest.
pub fn same_word(w: &str, k: &str) -> bool {
    let plural = |long: &str, short: &str| {
        long.strip_suffix('s').is_some_and(|x| x == short)
            || long.strip_suffix("es").is_some_and(|x| x == short)
    };
    w == k || plural(w, k) || plural(k, w)
}

/// The text with its first letter upper-cased ("the molecule …" → "The molecule …").
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_lowercase() => f.to_uppercase().chain(c).collect(),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tag_s_primary_subtag_is_its_first_part_lowercased() {
        for (tag, primary) in [
            ("pt-BR", "pt"),
            ("pt_br", "pt"),
            ("DE", "de"),
            ("ar", "ar"),
            ("", ""),
        ] {
            assert_eq!(super::primary_subtag(tag), primary, "{tag}");
        }
    }
}
