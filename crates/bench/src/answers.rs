//! Answer level for the conversation benchmarks (`bench locomo`, `bench
//! longmemeval` with `--answers N`): a model answers each chosen question
//! from what one method put in its prompt, and the answer is graded against
//! the benchmark's reference answer by normalised containment
//! ([`contains_answer`]). Two methods are asked, so a platform can put its
//! own model's figures beside the published ones: the fusion baseline
//! (`rrf`, the turns that fit the budget, in time order with their dates)
//! and the full design (its memory block). Which questions are asked:
//! [`crate::locomo::choose`].

use chrono::{DateTime, Utc};

/// One graded answer, kept in the report so every figure can be read back
/// to the answers behind it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Answered {
    pub sample: String,
    pub category: u8,
    pub question: String,
    pub reference: String,
    pub method: &'static str,
    pub answer: String,
    /// Whether `answer` holds `reference` ([`contains_answer`]).
    pub held: bool,
}

/// The instruction every method's prompt starts with.
pub const SYSTEM: &str = "You answer questions about earlier conversations, using only the memories below. Answer in a few words: a name, a date, a number or a short phrase. If the memories do not say, answer that you do not know.";

/// The methods whose answers are graded.
pub const METHODS: [&str; 2] = ["rrf", "full"];

/// Default cap on an answer's length, in tokens: the answers asked for are
/// a few words.
pub const DEFAULT_MAX_TOKENS: u32 = 64;

/// A text made comparable: Unicode case folding, every character that is
/// not a letter or a digit a space, the articles "a", "an" and "the"
/// dropped, and runs of spaces made one.
pub fn normalise(s: &str) -> String {
    let folded = caseless::default_case_fold_str(s);
    let spaced: String = folded
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    spaced
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `answer` holds `reference` whole: the normalised reference is a
/// run of whole words of the normalised answer. A reference with no words
/// is never held. Strict by design: "7 May 2023" is not held by "May 7th",
/// nor "two" by "2"; the figure is a floor of what the model got right.
pub fn contains_answer(answer: &str, reference: &str) -> bool {
    let r = normalise(reference);
    !r.is_empty() && format!(" {} ", normalise(answer)).contains(&format!(" {r} "))
}

/// The prompt for a method's context.
pub fn prompt(context: &str) -> String {
    format!("{SYSTEM}\n\n{context}")
}

/// A baseline's context: its turns in time order, each with its date.
pub fn baseline_context(mut turns: Vec<(DateTime<Utc>, &str)>) -> String {
    turns.sort_by_key(|t| t.0);
    let mut s = String::from("Memories:\n");
    for (at, text) in turns {
        s.push_str(&format!("- {}: {text}\n", at.format("%Y-%m-%d %H:%M")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_is_of_whole_words_after_normalising() {
        assert_eq!(normalise("The Red  Bike!"), "red bike");
        assert!(contains_answer(
            "She bought a red bike, I think.",
            "the red bike"
        ));
        assert!(contains_answer("On 7 May, 2023.", "7 May 2023"));
        assert!(!contains_answer("May 7th", "7 May 2023"));
        assert!(!contains_answer("2", "two"));
        // Whole words: "art" is not held by "party".
        assert!(!contains_answer("a party", "art"));
        assert!(!contains_answer("anything", ""));
        assert!(!contains_answer("anything", "the"));
        assert!(contains_answer("ÜBER Straße", "über strasse"));
    }

    #[test]
    fn a_baselines_context_is_in_time_order_with_dates() {
        let t = |d: u32| DateTime::parse_from_rfc3339(&format!("2023-05-0{d}T10:00:00Z")).unwrap();
        let c = baseline_context(vec![(t(2).into(), "B: later"), (t(1).into(), "A: first")]);
        assert_eq!(
            c,
            "Memories:\n- 2023-05-01 10:00: A: first\n- 2023-05-02 10:00: B: later\n"
        );
    }
}
