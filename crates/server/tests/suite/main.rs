//! The integration tests of `server`, one module a concern, built as one binary
//! (a binary a file linked the crate and its dependencies once each).

mod api;
mod class;
mod common;
mod e2e;
mod hardening;
mod shutdown;
mod wire;
