//! What every extracted concept's text must satisfy.

use tm_ingest::extract::ExtractedConcept;
use tm_model::map::validate_definition;

/// The gist and definition pass the map's validator, never end in ",." and,
/// when cut with an ellipsis, were cut at a clause boundary of the source:
/// the words before the "…" are followed there by a comma, semicolon, colon,
/// dash or parenthesis (or by a list the sentence introduced).
pub fn assert_whole(file: &str, source: &str, c: &ExtractedConcept) {
    let flat = flatten(source);
    for text in [&c.gist, &c.definition] {
        assert_eq!(
            validate_definition(text),
            Ok(()),
            "{file}: {}: {text:?}",
            c.name
        );
        assert!(
            !text.ends_with(",.") && !text.ends_with(";."),
            "{file}: {text:?}"
        );
        if let Some(head) = text.strip_suffix('\u{2026}') {
            let head = flatten(head);
            let tail = head.rsplit(' ').take(4).collect::<Vec<_>>();
            let tail: String = tail.into_iter().rev().collect::<Vec<_>>().join(" ");
            let at = flat
                .match_indices(&tail)
                .map(|(i, _)| i + tail.len())
                .find(|&end| {
                    flat[end..]
                        .trim_start()
                        .starts_with([',', ';', ':', '(', '\u{2014}', '\u{2013}', '-'])
                        || flat[end..].trim_start().is_empty()
                });
            assert!(
                at.is_some(),
                "{file}: {}: cut inside a clause: {text:?}",
                c.name
            );
        }
    }
}

/// Markup and line breaks removed, whitespace collapsed.
fn flatten(text: &str) -> String {
    text.replace("**", "")
        .replace('_', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
