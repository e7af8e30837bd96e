//! How does the map read inside the memory block?
//!
//! The header says what its percentage is about (docs/mechanisms.md §4):
//! `SUBJECT MAP (16 concepts; the files explain 79% of it, this is about the material, NOT the student's mastery):`
//! The percentage is the share of the map's concepts that at least one current
//! (not removed) file explains, rounded to the nearest whole percent. Concepts
//! only named (assumed by the files) or only taught by a person do not count:
//! the number says how much of the map the *files* cover, nothing about the
//! learner. For file concepts this is exactly "readiness ≥ 0.60".

use super::{ConceptMap, Node, teaching_order};

/// The map's header line, with the honest percentage.
pub fn header(map: &ConceptMap) -> String {
    let n = map.len();
    let explained = map.nodes().iter().filter(|x| x.explained()).count();
    let pct = (explained * 100 + n / 2).checked_div(n).unwrap_or(0);
    let noun = if n == 1 { "concept" } else { "concepts" };
    format!(
        "SUBJECT MAP ({n} {noun}; the files explain {pct}% of it, this is about the material, NOT the student's mastery):"
    )
}

/// `- Mitochondria: gist [taught: note] (builds on: Cytoplasm)`.
pub fn render_line(map: &ConceptMap, node: &Node) -> String {
    let mut line = format!("- {}:", node.name);
    if !node.gist.is_empty() {
        line.push(' ');
        line.push_str(&node.gist);
    } else if node.taught.is_empty() {
        line.push_str(" (named by the files, not explained)");
    }
    if !node.taught.is_empty() {
        line.push_str(&format!(" [taught: {}]", node.taught.join("; ")));
    }
    let mut edges: Vec<_> = node.builds_on.iter().collect();
    edges.sort_by(|a, b| b.weight.total_cmp(&a.weight).then_with(|| a.to.cmp(&b.to)));
    let names: Vec<&str> = edges
        .iter()
        .filter_map(|e| {
            map.nodes()
                .iter()
                .find(|m| m.key == e.to)
                .map(|m| m.name.as_str())
        })
        .collect();
    if !names.is_empty() {
        line.push_str(&format!(" (builds on: {})", names.join(", ")));
    }
    line
}

/// Header and one line per concept, in teaching order.
pub fn render_map(map: &ConceptMap) -> String {
    let mut out = header(map);
    for key in teaching_order(map).layers.iter().flatten() {
        if let Some(node) = map.nodes().iter().find(|n| &n.key == key) {
            out.push('\n');
            out.push_str(&render_line(map, node));
        }
    }
    out
}
