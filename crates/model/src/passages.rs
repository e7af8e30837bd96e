//! Which pieces of a file page does a turn's prompt quote? A page is cut into
//! passages of a few lines, each remembered with its first line number, so a
//! prompt can cite `cells.md p.1 l.12` and a reader can find it.
//!
//! # Splitting
//! Lines are numbered from 1 on each page. A passage is a run of non-blank
//! lines: a blank line ends it, a Markdown heading (`#`) starts a new one and
//! stays with the lines under it (a heading alone says little), and a run
//! longer than [`PASSAGE_LINES`] lines or [`PASSAGE_CHARS`] characters is cut
//! there. Lines are kept as written (trimmed at the end only).

use serde::{Deserialize, Serialize};

/// At most this many lines in one passage.
pub const PASSAGE_LINES: usize = 4;
/// A passage is cut before the line that would take it past this many characters.
pub const PASSAGE_CHARS: usize = 700;

/// A passage of a file's page, as retrieval returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// The file's name in the subject.
    pub file: String,
    /// The stored file version it comes from.
    pub version_id: i64,
    /// 1-based page.
    pub page: u32,
    /// 1-based first line on the page.
    pub line: u32,
    pub text: String,
}

impl Passage {
    /// `[cells.md p.1 l.12] text` — how a prompt quotes it.
    pub fn quoted(&self) -> String {
        format!(
            "[{} p.{} l.{}] {}",
            self.file,
            self.page,
            self.line,
            self.text.replace('\n', " ")
        )
    }
}

/// Splits one page into `(first line, text)` passages (rules in the module docs).
pub fn split_page(page: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut first = 0u32;
    let mut chars = 0usize;
    let flush = |cur: &mut Vec<&str>, first: u32, out: &mut Vec<(u32, String)>| {
        if !cur.is_empty() {
            out.push((first, cur.join("\n")));
            cur.clear();
        }
    };
    for (i, raw) in page.lines().enumerate() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let line = raw.trim_end();
        if line.trim().is_empty() {
            flush(&mut cur, first, &mut out);
            continue;
        }
        let heading = line.trim_start().starts_with('#');
        let only_headings = cur.iter().all(|l| l.trim_start().starts_with('#'));
        let too_long = cur.len() >= PASSAGE_LINES || chars + line.len() > PASSAGE_CHARS;
        if !cur.is_empty() && ((heading && !only_headings) || too_long) {
            flush(&mut cur, first, &mut out);
        }
        if cur.is_empty() {
            first = n;
            chars = 0;
        }
        chars += line.len() + 1;
        cur.push(line);
    }
    flush(&mut cur, first, &mut out);
    out
}

/// Reciprocal-rank fusion: each list gives `1 / (k + rank)` (rank from 1) to
/// its items; the sum orders the union, ties by first appearance. `k = 60`
/// is the usual constant (Cormack et al. 2009).
pub fn rrf<T: Clone + Eq + std::hash::Hash>(lists: &[Vec<T>], k: f64) -> Vec<(T, f64)> {
    let mut score: std::collections::HashMap<T, (f64, usize)> = std::collections::HashMap::new();
    let mut order = 0usize;
    for list in lists {
        for (rank, item) in list.iter().enumerate() {
            let e = score.entry(item.clone()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            e.0 += 1.0 / (k + rank as f64 + 1.0);
        }
    }
    let mut v: Vec<(T, f64, usize)> = score.into_iter().map(|(t, (s, o))| (t, s, o)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    v.into_iter().map(|(t, s, _)| (t, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_stay_with_their_paragraph_and_lines_are_numbered() {
        let page = "# Cells\n\n## Cytoplasm\nThe cytoplasm is a gel.\nOrganelles float in it.\n\nNext paragraph.\n";
        let p = split_page(page);
        assert_eq!(
            p,
            vec![
                (1, "# Cells".to_string()),
                (
                    3,
                    "## Cytoplasm\nThe cytoplasm is a gel.\nOrganelles float in it.".to_string()
                ),
                (7, "Next paragraph.".to_string()),
            ]
        );
    }

    #[test]
    fn long_runs_are_cut_every_few_lines() {
        let page = (1..=10)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let p = split_page(&page);
        assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 5, 9]);
    }

    #[test]
    fn fusion_rewards_agreement() {
        let fused = rrf(&[vec!["a", "b", "c"], vec!["d", "b", "e"]], 60.0);
        assert_eq!(fused[0].0, "b");
        assert_eq!(fused.len(), 5);
    }
}
