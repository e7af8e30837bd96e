//! A language's own match floor (`tm_embed::LanguageFloors`), applied to
//! the candidates of one question.

use crate::Result;
use rustc_hash::FxHashSet as HashSet;
use tm_embed::LanguageFloors;
use tm_model::recall::Candidate;
use tm_model::subject::Subject;
use tm_store::Reader;

/// A candidate in the question's own language matches by meaning from that
/// language's floor, not the default one: in some languages texts on
/// unrelated matters sit closer together (`tm_embed::LanguageFloors`). A
/// text's language is told by its stop words, else it is the subject's.
/// Only those between the two floors are read, so a question in a language
/// without floors of its own costs nothing.
pub(super) fn own_language_floor(
    store: &dyn Reader,
    subject: &Subject,
    candidates: &mut [Candidate],
    default: f32,
    own: LanguageFloors,
) -> Result<()> {
    let between: Vec<i64> = candidates
        .iter()
        .filter(|c| (default..own.match_floor).contains(&c.semantic))
        .map(|c| c.id)
        .collect();
    if between.is_empty() {
        return Ok(());
    }
    let subject_lang = subject
        .language
        .as_deref()
        .map(tm_model::lang::primary_subtag);
    let own: HashSet<i64> = store
        .texts(subject, &between)?
        .into_iter()
        .filter(|(_, text)| {
            tm_model::lang::stem::language_of(text)
                .or(subject_lang.as_deref())
                .is_some_and(|l| l.eq_ignore_ascii_case(own.lang))
        })
        .map(|(id, _)| id)
        .collect();
    for c in candidates.iter_mut().filter(|c| own.contains(&c.id)) {
        c.semantic = 0.0;
        c.centred = None;
    }
    Ok(())
}
