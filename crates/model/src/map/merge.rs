//! Which node does a file's concept join, and what happens to a file's earlier version?
//!
//! A concept joins the node that answers to its canonical key (or one of its
//! aliases); failing that, the existing node whose name is most similar above
//! the caller's threshold. docs/mechanisms.md §4 gives 0.86 for the neural embedder. A
//! feature-hashing embedder scores unrelated short names higher and related
//! ones lower, so its caller should pass a stricter threshold (0.92 or above)
//! or rely on keys alone (`threshold >= 1.0`); the caller decides and owns the choice.
//!
//! A node that already took a concept from this same file is never joined by
//! similarity again in that merge: two entries of one file's list are two ideas
//! ("hypertonic" and "hypotonic" embed close but are opposites).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{ConceptMap, ExtractedConcept, Node, Origin, Rejection, Source, validate_name};
use crate::lang::canonical_key;

/// How one concept joined the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Joined {
    /// A new node.
    New { key: String },
    /// An existing node with the same canonical key or alias.
    Key { key: String },
    /// An existing node whose name scored above the threshold.
    Similar { key: String, score: f32 },
}

/// What a merge did, concept by concept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MergeReport {
    pub joined: Vec<(String, Joined)>,
    pub rejected: Vec<(String, Rejection)>,
}

impl ConceptMap {
    /// Merges one file version's concepts. A file already in the map under the
    /// same name is replaced: its old sources are dropped first, so concepts the
    /// new version no longer explains lose that source (and vanish when nothing
    /// else holds them).
    pub fn merge_file(
        &mut self,
        file: &str,
        version: Option<i64>,
        concepts: &[ExtractedConcept],
        similarity: &dyn Fn(&str, &str) -> f32,
        threshold: f32,
    ) -> MergeReport {
        for n in &mut self.nodes {
            n.sources.retain(|s| s.file != file);
        }
        // Derived nodes must not be joined by name: they are rebuilt on settle,
        // and a file that explains one turns it into a file node.
        self.nodes.retain(|n| n.origin != Origin::Assumed);
        let mut report = MergeReport::default();
        let mut touched: BTreeSet<usize> = BTreeSet::new();
        for c in concepts {
            if let Err(r) = validate_name(&c.name) {
                report.rejected.push((c.name.clone(), r));
                continue;
            }
            let keys: Vec<String> = std::iter::once(&c.name)
                .chain(&c.aliases)
                .map(|n| canonical_key(n))
                .filter(|k| !k.is_empty())
                .collect();
            let (i, how) = match keys.iter().find_map(|k| self.index_of(k)) {
                Some(i) => (
                    i,
                    Joined::Key {
                        key: self.nodes[i].key.clone(),
                    },
                ),
                None => match self.most_similar(&c.name, similarity, threshold, &touched) {
                    Some((i, score)) => (
                        i,
                        Joined::Similar {
                            key: self.nodes[i].key.clone(),
                            score,
                        },
                    ),
                    None => {
                        let node = Node::new(&c.name, Origin::File);
                        self.nodes.push(node);
                        let i = self.nodes.len() - 1;
                        (
                            i,
                            Joined::New {
                                key: self.nodes[i].key.clone(),
                            },
                        )
                    }
                },
            };
            touched.insert(i);
            let node = &mut self.nodes[i];
            for k in keys {
                if k != node.key && !node.aliases.contains(&k) {
                    node.aliases.push(k);
                }
            }
            let mut pages = c.pages.clone();
            pages.sort_unstable();
            pages.dedup();
            // One file listing a concept twice (or two aliases of it) is one source.
            if let Some(s) = node.sources.iter_mut().find(|s| s.file == file) {
                s.pages.extend(pages);
                s.pages.sort_unstable();
                s.pages.dedup();
                s.builds_on.extend(c.builds_on.iter().cloned());
                s.assumed.extend(c.assumed.iter().cloned());
            } else {
                node.sources.push(Source {
                    file: file.to_string(),
                    version,
                    pages,
                    removed: false,
                    gist: c.gist.trim().to_string(),
                    definition: c.definition.trim().to_string(),
                    builds_on: c.builds_on.clone(),
                    assumed: c.assumed.clone(),
                });
            }
            report.joined.push((c.name.clone(), how));
        }
        self.settle();
        report
    }

    fn most_similar(
        &self,
        name: &str,
        similarity: &dyn Fn(&str, &str) -> f32,
        threshold: f32,
        touched: &BTreeSet<usize>,
    ) -> Option<(usize, f32)> {
        let mut best: Option<(usize, f32)> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            if touched.contains(&i) {
                continue;
            }
            let s = similarity(name, &n.name);
            // Strictly greater keeps the earliest node on ties: deterministic.
            if s > threshold && best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
        best
    }
}
