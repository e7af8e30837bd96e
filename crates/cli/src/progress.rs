//! Progress bars for long work, drawn only on a terminal: the CLI's own, and
//! the reporter it hands the benchmark programs.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar with `template` (indicatif's syntax).
pub fn bar(template: &str) -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

/// Moves `bar` to `done` of `total`.
pub fn advance(bar: &ProgressBar, done: usize, total: usize) {
    bar.set_length(total as u64);
    bar.set_position(done as u64);
}

/// A bar that is cleared when its work is done (dropped).
struct Cleared(ProgressBar);

impl Drop for Cleared {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The benchmark programs' progress ([`tm_bench::programs::Progress`]): a bar
/// "`what` [====> ] done/total `unit`" for each stage, cleared when it ends.
pub fn reporter(what: &str, unit: &str) -> Box<dyn FnMut(usize, usize)> {
    let b = Cleared(bar(&format!("{what} [{{bar:40}}] {{pos}}/{{len}} {unit}")));
    Box::new(move |done, total| advance(&b.0, done, total))
}
