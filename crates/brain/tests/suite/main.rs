//! The integration tests of `brain`, one module a concern, built as one binary
//! (a binary a file linked the crate and its dependencies once each).

mod beliefs;
mod block;
mod block_props;
mod block_routing;
mod block_snapshots;
mod common;
mod erase;
mod export;
mod fuzz_corpus;
mod grounding;
mod import;
mod nightly;
mod passages;
mod recall;
mod report;
mod two_brains;
