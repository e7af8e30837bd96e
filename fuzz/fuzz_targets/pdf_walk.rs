//! See `tm_ingest::fuzzing::pdf_walk`: the body is written once, there, and
//! the kept corpus is replayed through it by `cargo test`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| tm_ingest::fuzzing::pdf_walk(data));
