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
//!    A character that is not an ASCII letter is compared by its confusable
//!    skeleton (Unicode TS #39) when that is ASCII letters or digits, so
//!    look-alikes from other scripts, digits and signs
//!    (`ЕND OF MEMORY` with a Cyrillic `Е`, `END 0F MEMORY`) are found too and
//!    written in plain ASCII; the separators between words are still judged
//!    on the characters as written.
//! 7. Chat-template control tokens are taken apart before step 6: every `<|`
//!    becomes `(` and every `|>` becomes `)` (`<|im_start|>` → `(im_start)`,
//!    the whole `<|…|>` family of ChatML, Llama 3, Phi and their kin), and a
//!    tag named in `data/template_tokens/tags.txt` written as `<name>`,
//!    `</name>`, `[NAME]`, `[/NAME]`, `<<NAME>>` or `<</NAME>>` (`[INST]`,
//!    `<start_of_turn>`, `</s>`, `<<SYS>>`) becomes its lowercase name in
//!    parentheses (`(inst)`, `(start_of_turn)`, `(/s)`, `(sys)`). A serving
//!    stack that reads special tokens in the prompt's text then finds none.
//!
//! So no untrusted text can produce a line of its own, a `=====` run, an
//! upper-case header (in any script's look-alike letters), or a chat
//! template's turn boundary.

use std::sync::LazyLock;
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
    defuse(&untemplate(&flat))
}

/// The tag names of `data/template_tokens/tags.txt`, lowercase.
static TAGS: LazyLock<Vec<String>> = LazyLock::new(|| {
    crate::lang::entries(include_str!("../../data/template_tokens/tags.txt"))
        .map(str::to_lowercase)
        .collect()
});

/// Where a template tag starts at `rest`: its length in bytes and its name
/// (with a `/` before it when it closes).
fn tag_at(rest: &str) -> Option<(usize, String)> {
    let forms: [(&str, &str); 3] = [("<<", ">>"), ("<", ">"), ("[", "]")];
    for (open, close) in forms {
        let Some(inner) = rest.strip_prefix(open) else {
            continue;
        };
        let (slash, name_from) = match inner.strip_prefix('/') {
            Some(after) => ("/", after),
            None => ("", inner),
        };
        let Some(end) = name_from.find(close) else {
            continue;
        };
        let name = &name_from[..end];
        if name.len() > 32 || !TAGS.iter().any(|t| t.eq_ignore_ascii_case(name)) {
            continue;
        }
        let len = open.len() + slash.len() + name.len() + close.len();
        return Some((len, format!("{slash}{}", name.to_ascii_lowercase())));
    }
    None
}

/// Step 7: chat-template tags in parentheses, then every `<|` and `|>`
/// rewritten (neither pass can make what the other looks for: both write
/// only parentheses).
fn untemplate(text: &str) -> String {
    if !text.contains(['<', '[', '|']) {
        return text.to_string();
    }
    let mut tagged = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with(['<', '['])
            && let Some((len, name)) = tag_at(rest)
        {
            tagged.push('(');
            tagged.push_str(&name);
            tagged.push(')');
            i += len;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        tagged.push(c);
        i += c.len_utf8();
    }
    tagged.replace("<|", "(").replace("|>", ")")
}

/// Calls `each` with the characters `c` is compared by: an ASCII letter
/// lowercased; any other character that looks like ASCII letters or digits
/// (its confusable skeleton, Unicode TS #39: Cyrillic `Е` → `e`, Greek `Ο`
/// → `o`, `0` → `o`, `|` → `l`) those, lowercased; else its lowercase.
fn skeleton_of(c: char, mut each: impl FnMut(char)) {
    if c.is_ascii_alphabetic() {
        return each(c.to_ascii_lowercase());
    }
    if c == ' ' {
        return each(c);
    }
    let mut buf = [0u8; 4];
    let skel: Vec<char> =
        unicode_security::confusable_detection::skeleton(c.encode_utf8(&mut buf)).collect();
    if !skel.is_empty() && skel.iter().all(char::is_ascii_alphanumeric) {
        skel.iter().for_each(|k| each(k.to_ascii_lowercase()));
    } else {
        c.to_lowercase().for_each(each);
    }
}

/// One compared character of a text: its skeleton letter, whether the
/// character as written is a word character, and the written character's
/// byte range.
struct Compared {
    skel: char,
    word: bool,
    start: usize,
    end: usize,
}

/// Where header phrase `phrase` matches `low` from index `k`:
/// its end index. Words must match letter for letter by skeleton; between
/// them any run (possibly empty) of characters that are not word characters
/// as written, so `END_OF-MEMORY` and `ENDOFMEMORY` match too.
fn match_at(low: &[Compared], k: usize, phrase: &[&str]) -> Option<usize> {
    let mut j = k;
    for (n, word) in phrase.iter().enumerate() {
        if n > 0 {
            while low.get(j).is_some_and(|x| !x.word) {
                j += 1;
            }
        }
        for wc in word.chars() {
            if low.get(j).is_some_and(|x| x.skel == wc) {
                j += 1;
            } else {
                return None;
            }
        }
    }
    Some(j)
}

/// Step 6: brackets and lowercases every header phrase, wherever it occurs
/// (inside a longer word too: "MEMORYEND OF MEMORY" hides one), in whatever
/// look-alike letters.
fn defuse(text: &str) -> String {
    let mut low: Vec<Compared> = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let (end, word) = (i + c.len_utf8(), c.is_alphanumeric());
        skeleton_of(c, |skel| {
            low.push(Compared {
                skel,
                word,
                start: i,
                end,
            })
        });
    }
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
        let (s, e) = (low[k].start, low[end - 1].end);
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
