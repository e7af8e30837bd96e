//! Does a learner's message explicitly teach the tutor something to keep?
//!
//! Only an explicit cue ("remember that", "merk dir", "recuerda que", "treat X as"
//! and their kin, from `data/teach/<lang>.txt`) at the start of a sentence
//! teaches. Questions never teach: "can you remember what osmosis is?" is a question.

use std::sync::LazyLock;

use crate::lang::{LANGS, canonical_key, entries};

const FILES: [&str; 8] = [
    include_str!("../data/teach/en.txt"),
    include_str!("../data/teach/es.txt"),
    include_str!("../data/teach/de.txt"),
    include_str!("../data/teach/it.txt"),
    include_str!("../data/teach/id.txt"),
    include_str!("../data/teach/fr.txt"),
    include_str!("../data/teach/pt.txt"),
    include_str!("../data/teach/ar.txt"),
];

/// A message that teaches: the language whose cue matched and the cue itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Teaching {
    pub lang: &'static str,
    pub cue: &'static str,
}

/// A cue with its parts folded once: the head the sentence opens with and,
/// for a cue like "treat * as", the tail that must follow something.
struct Cue {
    lang: &'static str,
    cue: &'static str,
    head: String,
    tail: Option<String>,
}

/// Every language's cues, in the files' order, folded once (folding each cue
/// again for every sentence of every imported message was a tenth of an
/// import's serial work).
static CUES: LazyLock<Vec<Cue>> = LazyLock::new(|| {
    LANGS
        .iter()
        .zip(FILES)
        .flat_map(|(lang, file)| {
            entries(file).map(move |cue| {
                let mut parts = cue.split('*').map(canonical_key);
                Cue {
                    lang,
                    cue,
                    head: parts.next().unwrap_or_default(),
                    tail: parts.next(),
                }
            })
        })
        .collect()
});

/// Returns the teaching cue a message opens a sentence with, if any.
pub fn teaching(text: &str) -> Option<Teaching> {
    if is_question(text) {
        return None;
    }
    let sentences: Vec<String> = text
        .split(['.', '!', ';', '\n', '。', '،'])
        .map(canonical_key)
        .filter(|s| !s.is_empty())
        .collect();
    CUES.iter()
        .find(|c| sentences.iter().any(|s| c.matches(s)))
        .map(|c| Teaching {
            lang: c.lang,
            cue: c.cue,
        })
}

fn is_question(text: &str) -> bool {
    text.contains(['?', '¿', '؟'])
}

impl Cue {
    /// `sentence` is already canonical.
    fn matches(&self, sentence: &str) -> bool {
        let Some(rest) = starts_with_words(sentence, &self.head) else {
            return false;
        };
        match &self.tail {
            None => true,
            // "treat * as": something must stand between the two halves.
            Some(tail) => rest.match_indices(tail.as_str()).any(|(i, _)| {
                i > 0 && rest[..i].ends_with(' ') && word_end(&rest[i + tail.len()..])
            }),
        }
    }
}

fn starts_with_words<'a>(sentence: &'a str, head: &str) -> Option<&'a str> {
    let rest = sentence.strip_prefix(head)?;
    word_end(rest).then_some(rest)
}

fn word_end(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with(' ')
}

#[cfg(test)]
mod tests {
    use super::teaching;

    #[test]
    fn explicit_cues_teach_in_many_languages() {
        for (text, lang) in [
            (
                "Remember that in our class we call the mitochondria the powerhouse of the cell",
                "en",
            ),
            ("Treat ATP as the cell's energy currency.", "en"),
            ("Recuerda que la ósmosis es pasiva", "es"),
            ("Merk dir, dass Osmose passiv ist", "de"),
            ("Ricorda che l'osmosi è passiva", "it"),
            ("Ingat bahwa osmosis itu pasif", "id"),
            ("OK. Souviens-toi que l'osmose est passive", "fr"),
            ("Lembre-se de que a osmose é passiva", "pt"),
            ("تذكر أن الانتشار عملية سلبية", "ar"),
        ] {
            assert_eq!(teaching(text).map(|t| t.lang), Some(lang), "{text}");
        }
    }

    #[test]
    fn questions_and_plain_talk_never_teach() {
        for text in [
            "can you remember what osmosis is?",
            "Remember that thing about osmosis?",
            "¿Recuerdas que hablamos de la ósmosis?",
            "I remember that osmosis was hard",
            "What is a cell",
            "treat",
        ] {
            assert_eq!(teaching(text), None, "{text}");
        }
    }
}
