//! The pure model of Tutor Memory: episodes and their hash chain, recall
//! scoring and the gate, time windows, the concept map, belief rules, block
//! rendering and the languages learners write in.
//!
//! This crate does no IO and knows no SQL, HTTP or CLI types: every function
//! takes its inputs (including "now") as arguments and returns values.

pub mod beliefs;
pub mod block;
pub mod episodes;
pub mod events;
pub mod files;
pub mod grounding;
pub mod instant;
pub mod lang;
pub mod map;
pub mod nightly;
pub mod passages;
pub mod recall;
pub mod subject;
pub mod teaching;
pub mod tenants;
pub mod window;
