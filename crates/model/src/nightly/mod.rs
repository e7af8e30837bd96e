//! The nightly loop's pure rules (docs/mechanisms.md §8): what one day compresses to, how
//! well predicted mastery matched the verdicts, whether a cited file still
//! holds, what the next turn should read first, how the memory describes its
//! own limits, and the report a teacher or learner reads.
//!
//! Nothing here reads a clock or a database: the brain gathers the facts,
//! passes the instant, and stores what these functions return.

pub mod calibration;
pub mod citations;
pub mod consolidate;
pub mod report;
pub mod self_model;
pub mod working_set;

#[cfg(test)]
mod tests;

pub use calibration::{Bin, Calibration, Prediction, Status, calibrate};
pub use citations::{Change, Citation, CitationCheck, VersionFacts, verify};
pub use consolidate::{Consolidation, DayEpisode, Headline, Tally, consolidate};
pub use report::{Report, render_text};
pub use self_model::{SelfModel, SelfModelInput, compose};
pub use working_set::{Stamp, WorkingSet};

/// A night's log entry (`nightly_runs.summary`) without the names of the
/// beliefs it decayed (a belief's name may be a check's topic as the learner
/// wrote it): the list becomes its length. `None` when it names nothing.
pub fn summary_without_names(summary: &str) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_str(summary).ok()?;
    let decayed = v.get("decayed")?.as_array()?;
    if decayed.is_empty() {
        return None;
    }
    let n = decayed.len();
    v["decayed"] = n.into();
    Some(v.to_string())
}

#[cfg(test)]
mod summary_tests {
    #[test]
    fn a_nights_summary_keeps_how_many_it_decayed_not_which() {
        let s = r#"{"calibration":"ranking","decayed":["my phone 0176","Osmosis"],"verified":3}"#;
        let out = super::summary_without_names(s).unwrap();
        assert_eq!(out, r#"{"calibration":"ranking","decayed":2,"verified":3}"#);
        assert_eq!(super::summary_without_names(&out), None);
        assert_eq!(super::summary_without_names(r#"{"decayed":[]}"#), None);
        assert_eq!(super::summary_without_names("not json"), None);
    }
}
