//! How does untrusted text (learner messages, file text, composed notes) enter
//! the block without being able to close or forge its delimiters or headers?
//!
//! The exact rule, applied by [`neutralise`] to every untrusted text:
//! 1. NFKC normalisation, so fullwidth `＝`, `ＥＮＤ`, small/sub/superscript
//!    equals signs and similar compatibility forms become their plain letters.
//! 2. Equals look-alikes that NFKC keeps (`꞊` U+A78A, `᐀` U+1400, `⹀` U+2E40,
//!    `゠` U+30A0) become `=`.
//! 3. Invisible format characters (soft hyphen, zero-width joiners, word
//!    joiner, bidi controls and isolates, BOM, Arabic letter mark…) are
//!    removed, so they cannot hide a phrase from step 6; a zero-width space
//!    counts as a space.
//! 4. Every control character and line or paragraph separator (`\n`, `\r`,
//!    `\t`, U+0085, U+2028, U+2029…) becomes a space; runs of whitespace fold
//!    to one space; the ends are trimmed. The text is one line.
//! 5. Every run of `=` collapses to a single `=`.
//! 6. Every header phrase of the block ([`HEADER_PHRASES`]), found
//!    case-insensitively as a sequence of whole words with any non-word
//!    characters between them (`END_OF-MEMORY`), is replaced by its lowercase
//!    words in parentheses: `===== END OF MEMORY =====` → `= (end of memory) =`.
//!
//! So no untrusted text can produce a line of its own, a `=====` run, or an
//! upper-case header. Known limit: cross-script homoglyphs that NFKC keeps
//! apart (Cyrillic `Е` for Latin `E`) are not mapped; they cannot make a line
//! of their own either, so the delimiters stay unforgeable.

use unicode_normalization::UnicodeNormalization;

/// The block's structural phrases, as words. A text that contains one gets it
/// lowercased and bracketed.
pub const HEADER_PHRASES: [&[&str]; 7] = [
    &["your", "memory", "of"],
    &["end", "of", "memory"],
    &["the", "student", "is", "asking"],
    &["how", "to", "use", "this"],
    &["what", "you", "currently", "believe"],
    &["earlier", "work"],
    &["subject", "map"],
];

/// Characters with no visible form that could split a phrase unseen.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200C}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}')
}

fn equals_like(c: char) -> bool {
    matches!(c, '\u{A78A}' | '\u{1400}' | '\u{2E40}' | '\u{30A0}')
}

/// Flattens `text` to one line that cannot forge the block's structure (see
/// the module docs for the exact rule).
pub fn neutralise(text: &str) -> String {
    let mut flat = String::with_capacity(text.len());
    let mut space = false;
    let mut last_eq = false;
    for c in text.nfkc() {
        if invisible(c) {
            continue;
        }
        let c = if equals_like(c) { '=' } else { c };
        // A zero-width space separates words as a space does.
        if c.is_whitespace() || c.is_control() || c == '\u{200B}' {
            space = true;
            continue;
        }
        // A run of `=`, even split by spaces ("= = = ="), reads as a delimiter.
        if c == '=' && last_eq {
            continue;
        }
        if space && !flat.is_empty() {
            flat.push(' ');
        }
        space = false;
        last_eq = c == '=';
        flat.push(c);
    }
    defuse(&flat)
}

/// Word spans (byte ranges) of `text`: maximal runs of letters, marks and digits.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let wordy = c.is_alphanumeric();
        match (wordy, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// Step 6: brackets and lowercases every header phrase.
fn defuse(text: &str) -> String {
    let spans = words(text);
    let lower: Vec<String> = spans
        .iter()
        .map(|&(s, e)| text[s..e].to_lowercase())
        .collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut copied = 0;
    let mut i = 0;
    while i < spans.len() {
        let hit = HEADER_PHRASES.iter().find(|p| {
            p.len() <= spans.len() - i && p.iter().zip(&lower[i..]).all(|(a, b)| *a == b)
        });
        match hit {
            Some(p) => {
                let (s, _) = spans[i];
                let (_, e) = spans[i + p.len() - 1];
                out.push_str(&text[copied..s]);
                out.push('(');
                out.push_str(&p.join(" "));
                out.push(')');
                copied = e;
                i += p.len();
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}
