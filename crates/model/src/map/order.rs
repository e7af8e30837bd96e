//! In what order should the subject be taught?
//!
//! Topological layers: a concept sits one layer above its deepest prerequisite,
//! so prerequisites come first; within a layer hubs come first (higher
//! centrality), ties by name. Model output can make cycles; each is broken by
//! dropping one of its edges, chosen deterministically: the lowest weight, then
//! the edge out of the most recently added concept, then the edge to the
//! most recently added target. Dropped edges are reported, never a panic.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::ConceptMap;

/// An edge dropped to break a cycle: `from` builds on `to` (keys).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokenEdge {
    pub from: String,
    pub to: String,
    pub weight: f64,
}

/// Layers of keys, prerequisites first, and the edges dropped to get there.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TeachingOrder {
    pub layers: Vec<Vec<String>>,
    pub broken: Vec<BrokenEdge>,
}

pub fn teaching_order(map: &ConceptMap) -> TeachingOrder {
    let nodes = map.nodes();
    let n = nodes.len();
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, x)| (x.key.as_str(), i))
        .collect();
    // prereqs[i]: (j, weight), sorted by j.
    let mut prereqs: Vec<Vec<(usize, f64)>> = nodes
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let mut v: Vec<(usize, f64)> = x
                .builds_on
                .iter()
                .filter_map(|e| index.get(e.to.as_str()).map(|&j| (j, e.weight)))
                .filter(|&(j, _)| j != i)
                .collect();
            v.sort_by_key(|&(j, _)| j);
            v.dedup_by_key(|&mut (j, _)| j);
            v
        })
        .collect();
    let mut layer: Vec<Option<usize>> = vec![None; n];
    let mut broken = Vec::new();
    let mut placed = 0;
    while placed < n {
        let ready: Vec<usize> = (0..n)
            .filter(|&i| layer[i].is_none() && prereqs[i].iter().all(|&(j, _)| layer[j].is_some()))
            .collect();
        if ready.is_empty() {
            let (from, pos) = cycle_edge(&prereqs, &layer);
            if pos >= prereqs[from].len() {
                // Cannot happen (a stuck set always holds a cycle); place the rest
                // rather than loop or panic.
                for l in layer.iter_mut().filter(|l| l.is_none()) {
                    *l = Some(0);
                }
                break;
            }
            let (to, weight) = prereqs[from].remove(pos);
            broken.push(BrokenEdge {
                from: nodes[from].key.clone(),
                to: nodes[to].key.clone(),
                weight,
            });
            continue;
        }
        for &i in &ready {
            let l = prereqs[i]
                .iter()
                .filter_map(|&(j, _)| layer[j])
                .map(|l| l + 1)
                .max()
                .unwrap_or(0);
            layer[i] = Some(l);
        }
        placed += ready.len();
    }
    let depth = layer.iter().flatten().max().map_or(0, |m| m + 1);
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (i, l) in layer.iter().enumerate() {
        if let Some(l) = l {
            layers[*l].push(i);
        }
    }
    let layers = layers
        .into_iter()
        .map(|mut l| {
            l.sort_by(|&a, &b| {
                nodes[b]
                    .centrality
                    .total_cmp(&nodes[a].centrality)
                    .then_with(|| nodes[a].name.cmp(&nodes[b].name))
                    .then_with(|| nodes[a].key.cmp(&nodes[b].key))
            });
            l.into_iter().map(|i| nodes[i].key.clone()).collect()
        })
        .collect();
    TeachingOrder { layers, broken }
}

/// Every unplaced node has an unplaced prerequisite, so walking from the first
/// one must close a cycle; returns the edge of that cycle to drop as
/// (from node, position in its prerequisite list).
fn cycle_edge(prereqs: &[Vec<(usize, f64)>], layer: &[Option<usize>]) -> (usize, usize) {
    let start = layer.iter().position(Option::is_none).unwrap_or(0);
    let mut path = vec![start];
    let mut seen = BTreeSet::from([start]);
    let mut at = start;
    loop {
        let next = prereqs[at]
            .iter()
            .map(|&(j, _)| j)
            .find(|&j| layer[j].is_none());
        let Some(next) = next else {
            // Unreachable by the invariant above; dropping nothing would loop, so
            // fall back to the first edge of `at` if any.
            return (at, 0);
        };
        if !seen.insert(next) {
            let begin = path.iter().position(|&p| p == next).unwrap_or(0);
            let cycle = &path[begin..];
            let mut best: Option<(usize, usize, f64, usize)> = None; // from, pos, weight, to
            for (k, &from) in cycle.iter().enumerate() {
                let to = cycle.get(k + 1).copied().unwrap_or(next);
                let Some(pos) = prereqs[from].iter().position(|&(j, _)| j == to) else {
                    continue;
                };
                let w = prereqs[from][pos].1;
                let better = match best {
                    None => true,
                    Some((bf, _, bw, bt)) => {
                        w < bw || (w == bw && (from > bf || (from == bf && to > bt)))
                    }
                };
                if better {
                    best = Some((from, pos, w, to));
                }
            }
            return best.map_or((at, 0), |(f, p, _, _)| (f, p));
        }
        path.push(next);
        at = next;
    }
}
