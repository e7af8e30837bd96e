//! `bench`: the benchmark programs of `tm_bench::programs`, as subcommands.

use crate::{progress, sample};
use anyhow::Result;
use clap::Subcommand;
use std::process::ExitCode;
use tm_bench::programs;

#[derive(Subcommand)]
pub enum What {
    /// Sustained block requests against one server on loopback.
    Load(programs::load::Options),
    /// Append and verify throughput of the episode log (no embedding).
    Chain(programs::chain::Options),
    /// Concept map: offline extraction time per file, and merging 1,000 concepts.
    Map(programs::map::Options),
    /// Erasure: one subject of many episodes erased beside another, with the
    /// compaction after it: wall time, peak memory, file size.
    Erase(programs::erase::Options),
    /// Block build latency per subject size (query embedding included).
    Block(programs::block::Options),
    /// One nightly run over many active subjects, generated into a temporary
    /// database file: wall time and peak memory (VmHWM) of the run.
    Nightly(programs::nightly::Options),
    /// Quality: the four designs on pre-registered questions over generated
    /// (or given) histories, graded at prompt level (and answer level when a
    /// chat endpoint is configured).
    Quality(programs::quality::Options),
    /// LoCoMo: evidence recall of the block at a budget, per category, with baselines.
    Locomo(programs::locomo::Options),
    /// LongMemEval: the same evidence recall, per question type, asked at each question's date.
    Longmemeval(programs::longmemeval::Options),
    /// Recall latency per subject size, with and without the question's embedding.
    Recall(programs::recall::Options),
    /// The class view: a generated class of learners × concepts, gathered,
    /// rendered as the page, as JSON and as CSV.
    Class(programs::class::Options),
    /// Cross-lingual recall@k of each embedder: a question in one language
    /// finding what was written in another (parallel textbook chapters, and
    /// our own sample history).
    Crosslingual(programs::crosslingual::Options),
    /// A hostile tenant's and an unlucky operator's attacks on a `serve`
    /// (slow connections, respelt cookies, a wide class, a one-word file),
    /// with `/healthz` and the server's memory watched from another address.
    Probe(programs::probe::Options),
}

pub fn run(what: What) -> Result<ExitCode> {
    match what {
        What::Load(o) => programs::load::run(&o, &progress::reporter),
        What::Chain(o) => programs::chain::run(&o),
        What::Map(o) => programs::map::run(&o, &sample::files()),
        What::Erase(o) => programs::erase::run(&o),
        What::Block(o) => programs::block::run(&o),
        What::Nightly(o) => programs::nightly::run(&o),
        What::Quality(o) => programs::quality::run(&o, &progress::reporter),
        What::Locomo(o) => programs::locomo::run(&o, &progress::reporter),
        What::Longmemeval(o) => programs::longmemeval::run(&o, &progress::reporter),
        What::Recall(o) => programs::recall::run(&o),
        What::Crosslingual(o) => programs::crosslingual::run(&o),
        What::Class(o) => programs::class::run(&o),
        What::Probe(o) => programs::probe::run(&o),
    }?;
    Ok(ExitCode::SUCCESS)
}
