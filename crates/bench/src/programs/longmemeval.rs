//! `bench longmemeval`: evidence recall of the block on LongMemEval, measured
//! as `bench locomo` measures it (the same designs, baselines, budgets and
//! failure classes), per question type: a conversation set beside LoCoMo.

use super::locomo::measure;
use anyhow::Result;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// `--data`, `--budgets`, `--out`, `--store` (a rerun with the same file
    /// and choice skips the import), `--embedder`, `--model-dir`, `--split`
    /// (by question id), as `bench locomo`.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub common: super::locomo::Options,
    /// At most this many instances, spread evenly over the file (the oracle's
    /// 500 take some minutes to embed: their assistant turns are long).
    #[cfg_attr(feature = "cli", arg(long))]
    pub limit: Option<usize>,
    /// At most this many instances of each question type, spread evenly
    /// (before `--limit`).
    #[cfg_attr(feature = "cli", arg(long))]
    pub per_type: Option<usize>,
    /// Add this many sessions of other instances of the same half to each
    /// haystack, redated into its span (as LongMemEval_S is built).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub distractors: usize,
    /// Seeds the distractors' choice and dates.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 1))]
    pub seed: u64,
}

pub fn run(o: &Options, progress: super::Progress) -> Result<()> {
    let pick = crate::longmemeval::Pick {
        split: o.common.split,
        per_type: o.per_type,
        limit: o.limit,
        distractors: o.distractors,
        seed: o.seed,
    };
    let convs = crate::longmemeval::load(&o.common.data, &pick)?;
    if o.distractors > 0 {
        println!(
            "haystacks: each instance's sessions and {} of other instances of the same half (seed {})",
            o.distractors, o.seed
        );
    }
    measure(
        &o.common,
        &convs,
        &crate::longmemeval::CATEGORIES,
        o.distractors > 0,
        progress,
    )
}
