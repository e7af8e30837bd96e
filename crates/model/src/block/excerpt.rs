//! Query-biased excerpts: a long episode shows the sentences that carry the
//! question's words, not only its first [`EPISODE_CHARS`](super::EPISODE_CHARS) characters.
//!
//! The failure that motivates it (issue "Recall that beats a fusion
//! baseline", LoCoMo by content): a block line is cut to
//! [`EPISODE_CHARS`](super::EPISODE_CHARS), so a long turn that recall found
//! reached the prompt without the words that answer the question.

use crate::recall::lexical_overlap;

/// The text to print for an episode: as it is when it fits `max_chars`;
/// otherwise, when some sentence holds a distinctive word of the question
/// (`terms`), the best such sentences — most of the question's words first,
/// then the earlier — in their own order, whole, within `max_chars`, with
/// "…" where text was left out (so it reads as an excerpt). Without such a
/// sentence, `None`: the caller cuts the text from its start as before.
pub fn excerpt(text: &str, terms: &[String], max_chars: usize) -> Option<String> {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max_chars || terms.is_empty() {
        return None;
    }
    let sentences = split_sentences(&folded);
    let mut scored: Vec<(usize, f32)> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| (i, lexical_overlap(terms, s)))
        .filter(|(_, o)| *o > 0.0)
        .collect();
    if scored.is_empty() {
        return None;
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut chosen: Vec<usize> = Vec::new();
    // Room for the marks: "… " before, " …" between and after.
    let mut used = 0;
    for (i, _) in scored {
        let len = sentences[i].chars().count() + 2;
        if used + len + 2 > max_chars {
            continue;
        }
        used += len;
        chosen.push(i);
    }
    if chosen.is_empty() {
        return None;
    }
    chosen.sort_unstable();
    let mut out = String::new();
    if chosen[0] > 0 {
        out.push_str("… ");
    }
    for (k, &i) in chosen.iter().enumerate() {
        if k > 0 {
            out.push_str(if chosen[k - 1] + 1 == i { " " } else { " … " });
        }
        out.push_str(sentences[i]);
    }
    if chosen.last() != Some(&(sentences.len() - 1)) {
        out.push_str(" …");
    }
    Some(out)
}

/// Sentences of a single-spaced text: cut after `.`, `!`, `?` (and their
/// full-width and Arabic forms) followed by a space.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev_end = false;
    for (i, c) in text.char_indices() {
        if c == ' ' && prev_end {
            let s = text[start..i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
        prev_end = matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '؟');
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::distinctive_terms;

    #[test]
    fn a_long_episode_shows_the_sentences_that_answer() {
        let text = "Caroline: We spent the weekend at my parents' place and it rained the whole time, so we mostly played board games and cooked. My brother came too, with his two dogs, which was chaos. On Sunday I finally told them about the adoption agency interview, and they were thrilled. Then we drove home late at night.";
        let terms =
            distinctive_terms("When did Caroline tell her parents about the adoption agency?");
        let e = excerpt(text, &terms, 280).unwrap();
        // The sentences with the question's words, whole, in their order;
        // the two without any are left out, and the gap and the end say so.
        assert_eq!(
            e,
            "Caroline: We spent the weekend at my parents' place and it rained the whole time, so we mostly played board games and cooked. … On Sunday I finally told them about the adoption agency interview, and they were thrilled. …"
        );
        assert!(e.chars().count() <= 280, "{e}");
        // Where the opening sentence holds none of them, the excerpt opens with a mark.
        let terms = distinctive_terms("What about the dogs and the adoption?");
        let e = excerpt(text, &terms, 160).unwrap();
        assert!(e.starts_with("… "), "{e}");
        assert!(e.contains("dogs") || e.contains("adoption"), "{e}");
    }

    #[test]
    fn a_text_that_fits_or_shares_no_word_is_left_to_the_cut() {
        let terms = distinctive_terms("adoption agency");
        assert_eq!(excerpt("Short text about adoption.", &terms, 200), None);
        let long = "A sentence about cooking. ".repeat(20);
        assert_eq!(excerpt(&long, &terms, 200), None);
        assert_eq!(excerpt(&long, &[], 200), None);
    }
}
