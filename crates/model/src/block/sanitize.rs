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
//!    removed (before step 1 as well, so that combining marks they separated
//!    are put in canonical order), so they cannot hide a phrase from step 6;
//!    a zero-width space counts as a space.
//! 4. Every control character and line or paragraph separator (`\n`, `\r`,
//!    `\t`, U+0085, U+2028, U+2029…) becomes a space; runs of whitespace fold
//!    to one space; the ends are trimmed. The text is one line.
//! 5. Every run of `=` collapses to a single `=`.
//! 6. Every header phrase of the block ([`HEADER_PHRASES`]), found
//!    case-insensitively anywhere (inside longer words too) with any run of
//!    non-word characters, or none, between its words (`END_OF-MEMORY`,
//!    `ENDOFMEMORY`), is replaced by its lowercase words in parentheses:
//!    `===== END OF MEMORY =====` → `= (end of memory) =`. Ordinary prose
//!    pays a little for this ("the (subject map)ping").
//!    An occurrence already in that form is left as it is, so neutralising
//!    twice changes nothing.
//!
//! So no untrusted text can produce a line of its own, a `=====` run, or an
//! upper-case header. Known limit: cross-script homoglyphs that NFKC keeps
//! apart (Cyrillic `Е` for Latin `E`) are not mapped; they cannot make a line
//! of their own either, so the delimiters stay unforgeable.

use unicode_normalization::UnicodeNormalization;

/// The block's structural phrases, as words. A text that contains one gets it
/// lowercased and bracketed.
pub const HEADER_PHRASES: [&[&str]; 8] = [
    &["your", "memory", "of"],
    &["end", "of", "memory"],
    &["the", "student", "is", "asking"],
    &["how", "to", "use", "this"],
    &["what", "you", "currently", "believe"],
    &["earlier", "work"],
    &["subject", "map"],
    &["also", "matching", "the", "question"],
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
    // Invisible characters go before normalising too: removed afterwards,
    // they could leave combining marks out of canonical order, which a
    // second pass would reorder (found by fuzzing).
    for c in text.chars().filter(|&c| !invisible(c)).nfkc() {
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

/// Where header phrase `phrase` matches `low` from index `k`: its end index.
/// Words must match letter for letter; between them any run (possibly empty)
/// of non-word characters, so `END_OF-MEMORY` and `ENDOFMEMORY` match too.
fn match_at(low: &[(char, usize, usize)], k: usize, phrase: &[&str]) -> Option<usize> {
    let mut j = k;
    for (n, word) in phrase.iter().enumerate() {
        if n > 0 {
            while low.get(j).is_some_and(|x| !x.0.is_alphanumeric()) {
                j += 1;
            }
        }
        for wc in word.chars() {
            if low.get(j).is_some_and(|x| x.0 == wc) {
                j += 1;
            } else {
                return None;
            }
        }
    }
    Some(j)
}

/// Step 6: brackets and lowercases every header phrase, wherever it occurs
/// (inside a longer word too: "MEMORYEND OF MEMORY" hides one).
fn defuse(text: &str) -> String {
    // Lowercased characters with the byte range of the source character.
    let low: Vec<(char, usize, usize)> = text
        .char_indices()
        .flat_map(|(i, c)| {
            let e = i + c.len_utf8();
            c.to_lowercase().map(move |l| (l, i, e))
        })
        .collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut copied = 0;
    let mut k = 0;
    while k < low.len() {
        let hit = HEADER_PHRASES
            .iter()
            .find_map(|p| match_at(&low, k, p).map(|end| (p, end)));
        let Some((phrase, end)) = hit else {
            k += 1;
            continue;
        };
        let (s, e) = (low[k].1, low[end - 1].2);
        let words = phrase.join(" ");
        // Already defused (our own output, neutralised again): keep it, so
        // the rule is idempotent.
        let done = text[..s].ends_with('(') && text[e..].starts_with(')') && text[s..e] == words;
        if s >= copied && !done {
            out.push_str(&text[copied..s]);
            out.push('(');
            out.push_str(&words);
            out.push(')');
            copied = e;
        }
        k = end;
    }
    out.push_str(&text[copied..]);
    out
}
