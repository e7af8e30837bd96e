//! A small quality run end to end with the hashing embedder: generated
//! histories, questions written to a file first, the four designs graded.

use std::sync::Arc;
use tm_bench::quality::{self, overall};
use tm_model::block::Design;

fn run_over(
    sources: &[tm_bench::subjects::SubjectSource],
    count: usize,
    seed: u64,
) -> quality::Report {
    let dir = tempfile::tempdir().unwrap();
    let hs = tm_bench::generate::generate(sources, count, seed).unwrap();
    let files = tm_bench::generate::write_all(&hs, &dir.path().join("h")).unwrap();
    let brain = tm_bench::programs::brain(
        dir.path().join("q.db").to_str().unwrap(),
        Arc::new(tm_embed::HashEmbedder::new()),
    )
    .unwrap();
    quality::import(&brain, &files, &mut |_, _| {}).unwrap();
    // Pre-registered: written, then read back, before any design runs.
    let qpath = dir.path().join("questions.jsonl");
    tm_bench::questions::write(&quality::register(&brain, &files, seed).unwrap(), &qpath).unwrap();
    let questions = tm_bench::questions::read(&qpath).unwrap();
    assert!(!questions.is_empty());
    quality::run(&brain, &questions, &Design::ALL, 1200, None, &mut |_, _| {}).unwrap()
}

#[test]
fn three_generated_histories_order_the_designs_plain_window_episodes_full() {
    let r = run_over(&tm_bench::subjects::shipped(), 3, 5);
    let pct = |d: &str| {
        let (p, n) = overall(&r.prompt, d);
        p as f64 / n as f64
    };
    assert!(
        pct("plain") < pct("window"),
        "{}",
        quality::markdown(&r.prompt, &r.designs)
    );
    assert!(
        pct("window") < pct("episodes"),
        "{}",
        quality::markdown(&r.prompt, &r.designs)
    );
    assert!(
        pct("episodes") < pct("full"),
        "{}",
        quality::markdown(&r.prompt, &r.designs)
    );
    assert!(pct("full") >= 0.9, "{}", quality::failures_text(&r));
    // Only the full design has a map to answer "what to review before X".
    let review = |d: &str| r.prompt[d].get("review_before").copied().unwrap_or((0, 0));
    assert_eq!(review("episodes").0, 0);
    assert!(review("full").0 > 0);
    // Every failure carries its question, expectation and excerpt.
    let text = quality::failures_text(&r);
    assert!(text.contains("expect:") && text.contains("(empty memory slot)"));
    assert!(r.answer.is_none());
    assert!(quality::svg(&r.prompt, &r.designs, "t").starts_with("<svg"));
}

#[test]
fn textbook_chapters_make_subjects_too() {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/textbooks"
    ));
    if !dir.exists() {
        println!("skipped: {} is absent", dir.display());
        return;
    }
    let sources = tm_bench::subjects::from_dir(dir).unwrap();
    assert!(sources.len() >= 4);
    // Two small histories per chapter is enough to prove the path works.
    let sources: Vec<_> = sources
        .into_iter()
        .filter(|s| s.slug.starts_with("en-"))
        .take(2)
        .collect();
    let r = run_over(&sources, 2, 9);
    let (p, n) = overall(&r.prompt, "full");
    assert!(n > 0);
    assert!(p * 10 >= n * 7, "{}", quality::failures_text(&r));
}
