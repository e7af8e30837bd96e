//! Canonical keys: "Osmosis" = "osmosis" = "OSMOSIS" = " osmosis. " and
//! "Mitocôndria" = "mitocondria", while scripts whose marks carry meaning keep them.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Folds a name to the key two spellings of the same name share.
///
/// Steps: NFKC, full Unicode case folding, then NFD so marks can be judged one
/// by one. Combining marks are dropped after Latin, Greek and Cyrillic letters
/// (accents there are often omitted by learners) and after Arabic letters
/// (harakat are optional in writing); they are kept after every other script
/// (Devanagari vowel signs, Thai tone marks…), where dropping them would merge
/// different words. Arabic tatweel is removed. Every run of characters that is
/// neither a letter, a mark nor a digit becomes one space; the result is
/// trimmed and recomposed with NFC.
pub fn canonical_key(name: &str) -> String {
    if name.is_ascii() {
        return ascii_key(name);
    }
    unicode_key(name)
}

/// [`canonical_key`] of an ASCII text, without the Unicode tables: NFKC,
/// NFD and NFC leave ASCII as it is, full case folding is lowercasing, and
/// no ASCII character is a mark. The same key, in one pass (a textbook's
/// lines are mostly ASCII, and a 20 MB line took seconds the long way).
fn ascii_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut pending_space = false;
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(b.to_ascii_lowercase() as char);
        } else {
            pending_space = true;
        }
    }
    out
}

fn unicode_key(name: &str) -> String {
    let folded = caseless::default_case_fold_str(&name.nfkc().collect::<String>());
    let mut out = String::with_capacity(folded.len());
    let mut base_droppable = false;
    let mut pending_space = false;
    for c in folded.nfd() {
        if is_combining_mark(c) {
            if !base_droppable {
                out.push(c);
            }
            continue;
        }
        if c == '\u{0640}' {
            continue; // Arabic tatweel: elongation only.
        }
        if c.is_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            base_droppable = marks_are_optional(c);
            out.push(c);
        } else {
            pending_space = true;
            base_droppable = false;
        }
    }
    out.nfc().collect()
}

fn marks_are_optional(c: char) -> bool {
    matches!(c as u32,
        0x0041..=0x024F     // Latin, Latin-1, Latin Extended-A/B
        | 0x1E00..=0x1EFF   // Latin Extended Additional (Vietnamese keeps its base letters)
        | 0x0370..=0x03FF   // Greek
        | 0x0400..=0x04FF   // Cyrillic
        | 0x0600..=0x06FF   // Arabic
        | 0x0750..=0x077F) // Arabic Supplement
}

#[cfg(test)]
mod tests {
    use super::{ascii_key, canonical_key, unicode_key};

    #[test]
    fn ascii_keys_are_the_unicode_rules_keys() {
        // Every ASCII character, in runs that start, end and double on
        // separators, and a long one.
        let all: String = (0u8..128).map(char::from).collect();
        let mut texts = vec![
            "  Cell  MEMBRANE -- (ECF) 2nd\tLaw\n".to_string(),
            String::new(),
            "---".to_string(),
            "a".repeat(1000),
        ];
        for i in 0..all.len() {
            texts.push(all[i..].to_string() + &all[..i]);
            texts.push(all[i..].chars().rev().collect());
        }
        for t in &texts {
            assert_eq!(ascii_key(t), unicode_key(t), "{t:?}");
        }
    }

    #[test]
    fn case_accents_space_and_punctuation_fold() {
        assert_eq!(canonical_key("Osmosis"), "osmosis");
        assert_eq!(canonical_key("  OSMOSIS. "), "osmosis");
        assert_eq!(canonical_key("Mitocôndria"), "mitocondria");
        assert_eq!(canonical_key("Straße"), "strasse");
        assert_eq!(
            canonical_key("cell   membrane"),
            canonical_key("Cell-Membrane")
        );
        assert_eq!(canonical_key("ﬁbre"), "fibre"); // NFKC ligature
    }

    #[test]
    fn arabic_harakat_and_tatweel_fold() {
        assert_eq!(canonical_key("الخَلِيَّة"), canonical_key("الخلية"));
        assert_eq!(canonical_key("الخـلية"), canonical_key("الخلية"));
    }

    #[test]
    fn devanagari_vowel_signs_are_kept() {
        // कोशिका (cell) and कशक differ only by vowel signs: they must not merge.
        assert_ne!(canonical_key("कोशिका"), canonical_key("कशक"));
    }
}
