//! Every input the fuzz targets keep (`fuzz/corpus/<target>/`: the seeds, and
//! what fuzzing found, each finding fixed) replayed through the targets'
//! bodies (`tm_brain::fuzzing`) on every `cargo test`, on stable and without
//! libFuzzer: what was once found stays fixed.

use std::path::Path;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for f in files {
        let data = std::fs::read(&f).unwrap();
        if std::panic::catch_unwind(|| body(&data)).is_err() {
            panic!("{target}: {} fails", f.display());
        }
    }
}

#[test]
fn the_history_corpus() {
    replay("history", tm_brain::fuzzing::history);
}

#[test]
fn the_window_corpus() {
    replay("window", tm_brain::fuzzing::window);
}

#[test]
fn the_pages_corpus() {
    replay("pages", tm_brain::fuzzing::pages);
}

#[test]
fn the_neutralise_corpus() {
    replay("neutralise", tm_brain::fuzzing::neutralise);
}

#[test]
fn the_pdf_walk_corpus() {
    replay("pdf_walk", tm_ingest::fuzzing::pdf_walk);
}
