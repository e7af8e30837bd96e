//! The nightly loop's pure rules (SPEC §8): what one day compresses to, how
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
