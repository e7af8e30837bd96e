//! Which concepts are hubs? Edge-weighted PageRank over the prerequisite graph.
//!
//! Edges point from a concept to what it builds on, so rank flows towards
//! prerequisites: the one everything builds on is the hub. A node spreads its
//! rank over its out-edges in proportion to their weights (the number of sources
//! that state the edge); a node with no out-edges spreads it uniformly over all
//! nodes. Damping 0.85; iterate until the L1 change is below 1e-10 or 100
//! rounds. Nodes are visited in map order, so the result is deterministic.
//! (petgraph's `page_rank` ignores weights, hence our own.)

use super::ConceptMap;

pub const DAMPING: f64 = 0.85;
pub const TOLERANCE: f64 = 1e-10;
pub const MAX_ROUNDS: usize = 100;

/// PageRank of every node, in map order; the ranks sum to 1.
pub fn page_rank(map: &ConceptMap) -> Vec<f64> {
    let nodes = map.nodes();
    let n = nodes.len();
    if n == 0 {
        return Vec::new();
    }
    let index: std::collections::HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, x)| (x.key.as_str(), i))
        .collect();
    // Out-edges by index with weights normalised per node.
    let out: Vec<Vec<(usize, f64)>> = nodes
        .iter()
        .map(|node| {
            let edges: Vec<(usize, f64)> = node
                .builds_on
                .iter()
                .filter(|e| e.weight > 0.0)
                .filter_map(|e| index.get(e.to.as_str()).map(|&j| (j, e.weight)))
                .collect();
            let total: f64 = edges.iter().map(|(_, w)| w).sum();
            edges.into_iter().map(|(j, w)| (j, w / total)).collect()
        })
        .collect();
    let nf = n as f64;
    let mut rank = vec![1.0 / nf; n];
    for _ in 0..MAX_ROUNDS {
        let dangling: f64 = (0..n).filter(|&i| out[i].is_empty()).map(|i| rank[i]).sum();
        let base = (1.0 - DAMPING) / nf + DAMPING * dangling / nf;
        let mut next = vec![base; n];
        for (i, edges) in out.iter().enumerate() {
            for &(j, w) in edges {
                next[j] += DAMPING * rank[i] * w;
            }
        }
        let change: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
        rank = next;
        if change < TOLERANCE {
            break;
        }
    }
    rank
}
