//! The fuzz targets' bodies (`fuzz/fuzz_targets/`), written once: libFuzzer
//! calls them with generated inputs, and `tests/fuzz_corpus.rs` replays the
//! kept corpus through them on every `cargo test`. Each takes any bytes and
//! must never panic; a property that fails is an assertion.

use chrono::{TimeZone, Utc};

/// A history file, whatever its bytes: parsed, or refused naming a line.
pub fn history(data: &[u8]) {
    let _ = crate::history::parse("fuzz.jsonl", data);
}

/// The time window a question names, for any text, instant (1900–9999) and
/// zone (the first byte picks the instant and the zone).
pub fn window(data: &[u8]) {
    const ZONES: [chrono_tz::Tz; 4] = [
        chrono_tz::UTC,
        chrono_tz::Europe::Berlin,
        chrono_tz::Pacific::Apia,     // skipped a whole day in 2011
        chrono_tz::America::Santiago, // skips midnight at DST
    ];
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(question) = std::str::from_utf8(rest) else {
        return;
    };
    let (earliest, latest) = (
        tm_model::instant::earliest().timestamp(),
        tm_model::instant::latest().timestamp(),
    );
    let offset = (i64::from(first) * 7_919_000_003) % (latest - earliest);
    let Some(at) = Utc.timestamp_opt(earliest + offset, 0).single() else {
        return;
    };
    let _ = tm_model::window::parse_window(question, at, ZONES[usize::from(first) % ZONES.len()]);
}

/// A file's bytes as Markdown, text or PDF (the first byte picks).
pub fn pages(data: &[u8]) {
    let Some((&first, bytes)) = data.split_first() else {
        return;
    };
    let name = ["notes.md", "notes.txt", "notes.pdf"][usize::from(first) % 3];
    let _ = tm_ingest::read_pages(name, bytes);
}

/// Untrusted text entering the block: one line, no `==` run, and
/// neutralising twice changes nothing.
pub fn neutralise(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let once = tm_model::block::neutralise(text);
    assert!(
        !once.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}']),
        "{once:?}"
    );
    assert!(!once.contains("=="), "{once:?}");
    assert_eq!(
        tm_model::block::neutralise(&once),
        once,
        "not idempotent for {text:?}"
    );
}
