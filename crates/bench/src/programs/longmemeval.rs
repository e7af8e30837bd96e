//! `bench longmemeval`: evidence recall of the block on LongMemEval, measured
//! as `bench locomo` measures it (the same designs, baselines, budgets and
//! failure classes), per question type: a conversation set beside LoCoMo.

use super::locomo::measure;
use anyhow::Result;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// `--data`, `--budgets`, `--out`, `--store` (a rerun with the same file
    /// and limit skips the import), `--embedder`, `--model-dir`, as `bench locomo`.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub common: super::locomo::Options,
    /// At most this many instances, spread evenly over the file (the oracle's
    /// 500 take some minutes to embed: their assistant turns are long).
    #[cfg_attr(feature = "cli", arg(long))]
    pub limit: Option<usize>,
}

pub fn run(o: &Options, progress: super::Progress) -> Result<()> {
    let convs = crate::longmemeval::load(&o.common.data, o.limit)?;
    measure(&o.common, &convs, &crate::longmemeval::CATEGORIES, progress)
}
