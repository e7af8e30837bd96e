//! How the CLI prints what the brain answers: recall with its signals, the
//! map, the log, a chain's state.

use tm_model::episodes::{ChainReport, Episode};

pub fn print_recall(r: &tm_brain::recall::RecallResult, tz: chrono_tz::Tz) {
    if let Some(w) = &r.window {
        let state = if w.empty {
            "EMPTY: no episode inside it"
        } else {
            "recall ran inside it"
        };
        println!(
            "window: {} [{} .. {}) — {state}",
            w.label,
            w.from.to_rfc3339(),
            w.to.to_rfc3339()
        );
    }
    println!(
        "basis: {}; {} candidates; routed to: {}; embedder {}; embed {:.1} ms, pools {:.1} ms, scoring {:.1} ms",
        r.basis,
        r.candidates,
        if r.routed.is_empty() {
            "-".to_string()
        } else {
            r.routed.join(", ")
        },
        r.embedder,
        r.embed_ms,
        r.pools_ms,
        r.score_ms
    );
    println!(
        "{:>3} {:>5} {:<10} {:<8} {:>6} | {:>5} {:>5} {:>3} {:>4} {:>4} {:>4} | summary",
        "#", "seq", "date", "kind", "score", "lex", "sem", "con", "ctx", "sal", "rec"
    );
    for (i, m) in r.ranked.iter().enumerate() {
        let e = &m.episode;
        let more = if m.count > 1 {
            format!(" (and {} more times like it)", m.count - 1)
        } else {
            String::new()
        };
        println!(
            "{:>3} {:>5} {:<10} {:<8} {:>6.3} | {:>5.2} {:>5.2} {:>3} {:>4.2} {:>4.2} {:>4.2} | {}{more}",
            i + 1,
            e.seq,
            e.at.with_timezone(&tz).format("%Y-%m-%d"),
            e.kind.as_str(),
            m.signals.score,
            m.signals.lexical,
            m.signals.semantic,
            if m.signals.concept { "yes" } else { "-" },
            m.signals.context,
            m.signals.salience,
            m.signals.recency,
            e.summary
        );
    }
}

pub fn print_map(map: &tm_model::map::ConceptMap) {
    if map.is_empty() {
        println!("no concepts yet: files have not been read into the map");
        return;
    }
    println!("{}", tm_model::map::render_map(map));
    let order = tm_model::map::teaching_order(map);
    println!("\nteaching order (prerequisites first, hubs first within a layer):");
    for (i, layer) in order.layers.iter().enumerate() {
        let names: Vec<&str> = layer
            .iter()
            .map(|k| map.get(k).map_or(k.as_str(), |n| n.name.as_str()))
            .collect();
        println!("  layer {}: {}", i + 1, names.join(", "));
    }
    let name = |k: &str| map.get(k).map_or(k.to_string(), |n| n.name.clone());
    for b in &order.broken {
        println!(
            "  (the prerequisites ran in a circle: {} is ordered as if it did not need {}, the weakest link of the circle)",
            name(&b.from),
            name(&b.to)
        );
    }
    println!(
        "\n{:<32} {:>9} {:>10}  sources",
        "concept", "readiness", "centrality"
    );
    for n in map.nodes() {
        let sources: Vec<String> = n
            .sources
            .iter()
            .map(|s| {
                let pages: Vec<String> = s.pages.iter().map(u32::to_string).collect();
                let removed = if s.removed { " (removed)" } else { "" };
                format!("{} p.{}{removed}", s.file, pages.join(","))
            })
            .collect();
        let assumed = if n.assumed.is_empty() {
            String::new()
        } else {
            format!("; assumes {}", n.assumed.join(", "))
        };
        println!(
            "{:<32} {:>9.2} {:>10.4}  {}{assumed}",
            n.name,
            n.readiness,
            n.centrality,
            sources.join("; ")
        );
    }
}

pub fn describe(r: &ChainReport) -> String {
    let cp = if r.checkpoint_checked {
        ", checkpoint reached unchanged"
    } else {
        ""
    };
    let erased = r
        .erasure_note()
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    match &r.first_break {
        None => format!(
            "{}: intact, {} episodes verified, head seq {} {}{cp}{erased}",
            r.subject,
            r.verified,
            r.head_seq,
            &r.head_hash[..16]
        ),
        Some(b) => format!(
            "{}: BROKEN — {b} ({} episodes verified before it)",
            r.subject, r.verified
        ),
    }
}

pub fn print_log(episodes: &[Episode]) {
    for e in episodes {
        let ext = e
            .external_id
            .as_deref()
            .map(|id| format!(" [{id}]"))
            .unwrap_or_default();
        println!(
            "{:>6}  {}  {:<13} {}{ext}",
            e.seq,
            e.at.format("%Y-%m-%d %H:%M"),
            e.kind.as_str(),
            if e.erased { "(erased)" } else { &e.summary }
        );
    }
}
