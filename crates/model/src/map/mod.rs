//! The concept map: what is this subject made of, and what builds on what (docs/mechanisms.md §4).
//!
//! Files come in as bounded lists of [`ExtractedConcept`]s; [`ConceptMap::merge_file`]
//! joins them by canonical key or embedding similarity, keeping every file's
//! provenance. After every change the map *settles*: edges are resolved,
//! assumed prerequisites become nodes only when two concepts assume them, and
//! readiness, centrality (edge-weighted PageRank) and teaching-order layers are
//! recomputed. Rendering, the validator and teaching live in sub-modules.
//!
//! Pure: no IO, no clock. The store persists a `ConceptMap` through serde.

pub mod centrality;
pub mod lexicon;
mod merge;
pub mod order;
pub mod readiness;
pub mod render;
pub mod teach;
mod validate;

use serde::{Deserialize, Serialize};

pub use centrality::page_rank;
pub use merge::{Joined, MergeReport};
pub use order::{BrokenEdge, TeachingOrder, teaching_order};
pub use readiness::{CONFIRMED, EXPLAINED, NAMED, TAUGHT, readiness, subject_readiness};
pub use render::{header, render_line, render_map};
pub use teach::{TeachOutcome, teach};
pub use validate::{
    DefinitionRejection, MAX_CHARS, MAX_DEFINITION_CHARS, MAX_WORDS, Rejection, fit_definition,
    validate_definition, validate_name,
};

/// One concept as an extractor (model pass or offline) reads it from one file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExtractedConcept {
    pub name: String,
    /// One sentence.
    pub gist: String,
    /// Short definition.
    pub definition: String,
    /// Names from the same file's list that this concept builds on.
    #[serde(default)]
    pub builds_on: Vec<String>,
    /// Prerequisites the file assumes but never explains.
    #[serde(default)]
    pub assumed: Vec<String>,
    /// 1-based pages where the file explains the concept.
    #[serde(default)]
    pub pages: Vec<u32>,
    /// Other spellings the file gives ("mitochondria" for "mitochondrion", "ECF").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// One file version's contribution to a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub file: String,
    pub version: Option<i64>,
    pub pages: Vec<u32>,
    /// The file was removed: the source stays listed, marked, and explains nothing.
    pub removed: bool,
    pub gist: String,
    pub definition: String,
    /// Names as the file gave them; resolved to nodes when the map settles.
    pub builds_on: Vec<String>,
    pub assumed: Vec<String>,
}

/// How a node came to be; derived assumed nodes are rebuilt on every settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    File,
    /// Assumed (not explained) by two or more concepts.
    Assumed,
    /// Created by a person teaching it.
    Taught,
}

/// A prerequisite edge: the node builds on `to`, with the number of sources that say so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub to: String,
    pub weight: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Canonical key of `name`: the node's identity.
    pub key: String,
    pub name: String,
    /// Canonical keys of other names that route here.
    pub aliases: Vec<String>,
    /// The first current source's gist (teaching notes are rendered after it).
    pub gist: String,
    pub definition: String,
    /// Teaching notes, oldest first.
    pub taught: Vec<String>,
    pub sources: Vec<Source>,
    /// Derived: prerequisites by key.
    pub builds_on: Vec<Edge>,
    /// Derived: prerequisites only this concept assumes, recorded and drawn nowhere.
    pub assumed: Vec<String>,
    pub origin: Origin,
    /// A check on this concept passed.
    pub confirmed: bool,
    pub readiness: f64,
    pub centrality: f64,
    /// Teaching-order layer, 0 = no prerequisites.
    pub layer: u32,
}

impl Node {
    fn new(name: &str, origin: Origin) -> Self {
        Self {
            key: crate::lang::canonical_key(name),
            name: name.trim().to_string(),
            aliases: Vec::new(),
            gist: String::new(),
            definition: String::new(),
            taught: Vec::new(),
            sources: Vec::new(),
            builds_on: Vec::new(),
            assumed: Vec::new(),
            origin,
            confirmed: false,
            readiness: NAMED,
            centrality: 0.0,
            layer: 0,
        }
    }

    /// A current (not removed) file explains this concept.
    pub fn explained(&self) -> bool {
        self.sources.iter().any(|s| !s.removed)
    }

    fn answers_to(&self, key: &str) -> bool {
        self.key == key || self.aliases.iter().any(|a| a == key)
    }
}

/// The subject's concepts, in the order they were added.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConceptMap {
    nodes: Vec<Node>,
    /// Edges dropped to break cycles on the last settle.
    broken: Vec<BrokenEdge>,
}

impl ConceptMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Gives every source's file version the id `f` says it has in another
    /// store (a map derived in one store, kept in another); a version `f`
    /// does not know loses its id.
    pub fn renumber_versions(&mut self, f: impl Fn(i64) -> Option<i64>) {
        for node in &mut self.nodes {
            for source in &mut node.sources {
                source.version = source.version.and_then(&f);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node a name routes to: exact canonical key or alias, nothing fuzzy.
    pub fn get(&self, name: &str) -> Option<&Node> {
        let key = crate::lang::canonical_key(name);
        self.nodes.iter().find(|n| n.answers_to(&key))
    }

    fn index_of(&self, key: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.answers_to(key))
    }

    /// Cycle edges the last teaching order had to drop.
    pub fn broken_edges(&self) -> &[BrokenEdge] {
        &self.broken
    }

    /// Records that a check on the named concept passed (readiness 0.85 unless taught).
    /// Returns false when no concept has that name.
    pub fn confirm(&mut self, name: &str) -> bool {
        let key = crate::lang::canonical_key(name);
        let Some(i) = self.index_of(&key) else {
            return false;
        };
        if self.nodes[i].origin == Origin::Assumed {
            // Keep it past the next settle: a check on it is evidence of its own.
            self.nodes[i].origin = Origin::Taught;
        }
        self.nodes[i].confirmed = true;
        self.settle();
        true
    }

    /// Marks every source from `file` as removed; the nodes stay, their provenance marked.
    pub fn remove_file(&mut self, file: &str) {
        for s in self.nodes.iter_mut().flat_map(|n| n.sources.iter_mut()) {
            if s.file == file {
                s.removed = true;
            }
        }
        self.settle();
    }

    /// Recomputes everything derived: gists, edges, assumed nodes, readiness,
    /// centrality and layers.
    fn settle(&mut self) {
        self.nodes.retain(|n| match n.origin {
            Origin::Assumed => false,
            Origin::File => !n.sources.is_empty() || !n.taught.is_empty() || n.confirmed,
            Origin::Taught => true,
        });
        for n in &mut self.nodes {
            let current = n.sources.iter().find(|s| !s.removed).or(n.sources.first());
            if let Some(s) = current {
                n.gist = s.gist.clone();
                n.definition = s.definition.clone();
            }
        }
        self.resolve_edges();
        for n in &mut self.nodes {
            n.readiness = readiness(n, n.confirmed);
        }
        let ranks = page_rank(self);
        for (n, r) in self.nodes.iter_mut().zip(ranks) {
            n.centrality = r;
        }
        let order = teaching_order(self);
        for (layer, keys) in order.layers.iter().enumerate() {
            for key in keys {
                if let Some(i) = self.nodes.iter().position(|n| &n.key == key) {
                    self.nodes[i].layer = layer as u32;
                }
            }
        }
        self.broken = order.broken;
    }

    /// Builds-on names become weighted edges to existing nodes; assumed names
    /// become edges when a node explains them, a node of their own when two
    /// distinct concepts assume them, and a note on the concept otherwise.
    fn resolve_edges(&mut self) {
        use std::collections::BTreeMap;
        let mut assumers: BTreeMap<String, (String, Vec<usize>)> = BTreeMap::new();
        let mut all_edges = Vec::with_capacity(self.nodes.len());
        for (i, n) in self.nodes.iter().enumerate() {
            let mut edges: BTreeMap<String, f64> = BTreeMap::new();
            for s in n.sources.iter().filter(|s| !s.removed) {
                let mut seen = std::collections::BTreeSet::new();
                for name in &s.builds_on {
                    let key = crate::lang::canonical_key(name);
                    if let Some(j) = self.index_of(&key)
                        && j != i
                        && seen.insert(j)
                    {
                        *edges.entry(self.nodes[j].key.clone()).or_default() += 1.0;
                    }
                }
                for name in &s.assumed {
                    let key = crate::lang::canonical_key(name);
                    if key.is_empty() {
                        continue;
                    }
                    match self.index_of(&key) {
                        Some(j) if j != i => {
                            if seen.insert(j) {
                                *edges.entry(self.nodes[j].key.clone()).or_default() += 1.0;
                            }
                        }
                        Some(_) => {}
                        None => {
                            let e = assumers
                                .entry(key)
                                .or_insert_with(|| (name.trim().to_string(), vec![]));
                            if !e.1.contains(&i) {
                                e.1.push(i);
                            }
                        }
                    }
                }
            }
            all_edges.push(edges);
        }
        for (n, edges) in self.nodes.iter_mut().zip(all_edges) {
            n.builds_on = edges
                .into_iter()
                .map(|(to, weight)| Edge { to, weight })
                .collect();
            n.assumed.clear();
        }
        for (key, (name, by)) in assumers {
            if by.len() >= 2 {
                for &i in &by {
                    self.nodes[i].builds_on.push(Edge {
                        to: key.clone(),
                        weight: 1.0,
                    });
                }
                let mut node = Node::new(&name, Origin::Assumed);
                node.key = key;
                self.nodes.push(node);
            } else {
                for &i in &by {
                    self.nodes[i].assumed.push(name.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
