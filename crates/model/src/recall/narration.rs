//! Does an answer narrate past sessions ("In July we covered…")?
//!
//! Such an answer is the tutor remembering that it remembered: recalling it
//! as evidence of July would let one narration stand in for the record itself
//! (docs/mechanisms.md §3). Cues live in `data/narration/<lang>.txt`; each is a sequence of
//! folded words where `{month}` stands for any one word and `*` for one to
//! three words. Real month names belong to the time-window parser; a cue with
//! `{month}` therefore always carries a verb ("in {month} we covered") so that
//! "any word" stays precise enough. Meant for answers: a learner's question
//! ("what did we cover in July?") is not a narration and should not be tested.

use std::sync::OnceLock;

use crate::lang::{canonical_key, entries};

const FILES: [&str; 8] = [
    include_str!("../../data/narration/en.txt"),
    include_str!("../../data/narration/es.txt"),
    include_str!("../../data/narration/de.txt"),
    include_str!("../../data/narration/it.txt"),
    include_str!("../../data/narration/id.txt"),
    include_str!("../../data/narration/fr.txt"),
    include_str!("../../data/narration/pt.txt"),
    include_str!("../../data/narration/ar.txt"),
];

/// The widest stretch one `*` may cover: wide enough for "we covered cell
/// division in July", narrow enough not to join two unrelated sentences.
const MAX_STAR_WORDS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Word(String),
    AnyWord,
    Gap,
}

fn cues() -> &'static [Vec<Part>] {
    static CUES: OnceLock<Vec<Vec<Part>>> = OnceLock::new();
    CUES.get_or_init(|| {
        FILES
            .iter()
            .flat_map(|file| entries(file))
            .map(parse_cue)
            .filter(|cue| !cue.is_empty())
            .collect()
    })
}

fn parse_cue(cue: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    for raw in cue.split_whitespace() {
        match raw {
            "{month}" => parts.push(Part::AnyWord),
            "*" => parts.push(Part::Gap),
            // "l'ultima" folds to two words: each is a literal part.
            _ => parts.extend(
                canonical_key(raw)
                    .split(' ')
                    .filter(|w| !w.is_empty())
                    .map(|w| Part::Word(w.to_owned())),
            ),
        }
    }
    parts
}

/// True when `text` narrates past sessions in any of the supported languages.
pub fn narrates_period(text: &str) -> bool {
    // Sentences are matched one by one so a cue cannot straddle a full stop.
    text.split(['.', '!', '?', ';', '\n', '。', '؟', '!'])
        .map(canonical_key)
        .filter(|s| !s.is_empty())
        .any(|sentence| {
            let words: Vec<&str> = sentence.split(' ').collect();
            cues()
                .iter()
                .any(|cue| (0..words.len()).any(|start| matches_at(cue, &words[start..])))
        })
}

fn matches_at(cue: &[Part], words: &[&str]) -> bool {
    let Some((first, rest)) = cue.split_first() else {
        return true;
    };
    match first {
        Part::Word(w) => words.first() == Some(&w.as_str()) && matches_at(rest, &words[1..]),
        Part::AnyWord => !words.is_empty() && matches_at(rest, &words[1..]),
        Part::Gap => (1..=MAX_STAR_WORDS.min(words.len())).any(|n| matches_at(rest, &words[n..])),
    }
}

#[cfg(test)]
mod tests {
    use super::narrates_period;

    #[test]
    fn narrations_in_every_language_are_seen() {
        for text in [
            "In July we covered osmosis and diffusion.",
            "Good question! Last time we looked at the cell membrane.",
            "We covered cell division in March, remember?",
            "Im Juli haben wir die Osmose besprochen.",
            "En julio vimos la ósmosis.",
            "Nel luglio abbiamo studiato la mitosi.",
            "Pada bulan Juli kita belajar tentang osmosis.",
            "En juillet nous avons vu l'osmose.",
            "Em julho nós estudamos a osmose.",
            "في يوليو درسنا الخاصية الأسموزية.",
        ] {
            assert!(narrates_period(text), "{text}");
        }
    }

    #[test]
    fn plain_teaching_is_not_a_narration() {
        for text in [
            "Osmosis is the movement of water across a membrane.",
            "In mitosis the chromosomes line up at the equator.",
            "La ósmosis es pasiva. En general, el agua se mueve sola.",
            "Die Zelle ist die kleinste Einheit des Lebens.",
            "In July. We covered nothing yet", // a cue cannot straddle a full stop
            "",
        ] {
            assert!(!narrates_period(text), "{text}");
        }
    }
}
