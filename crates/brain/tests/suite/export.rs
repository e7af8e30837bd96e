//! A learner's export, imported into another store, gives the same chain:
//! every episode with the same hash (so the same content, position and
//! time), the same head, the same current beliefs and the same concept map —
//! although the other store numbers its rows differently.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use tm_brain::nightly::NightlyOptions;
use tm_brain::{Brain, Scope};
use tm_model::subject::Subject;

use crate::common;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn lines(values: &[Value]) -> String {
    values
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

const NOTES: &str = "# Cells\n\n## Osmosis\n\n**Osmosis** is the diffusion of water across a membrane.\n\n## Diffusion\n\n**Diffusion** spreads particles from high to low concentration.\n\u{c}## Membrane\n\nThe **membrane** lets water through and keeps proteins in.\n";
const NOTES_V2: &str = "# Cells\n\n## Osmosis\n\n**Osmosis** is the movement of water across a membrane towards more solute.\n\n## Active transport\n\n**Active transport** moves particles against the gradient, using ATP.\n";

fn first(learner: &str) -> String {
    lines(&[
        json!({"type":"subject","learner":learner,"subject":"cells","title":"Cells","language":"en","timezone":"Europe/Berlin"}),
        json!({"type":"file","at":"2026-03-02T09:00:00Z","name":"notes.md","content":NOTES}),
        json!({"type":"file","at":"2026-03-02T09:01:00Z","name":"extra.txt","pages":["Page one about ribosomes.","Page two about the nucleus."]}),
        json!({"id":"q1","type":"learner","at":"2026-03-03T09:00:00Z","text":"What is osmosis?"}),
        json!({"id":"a1","type":"tutor","at":"2026-03-03T09:01:00Z","text":"Osmosis moves water across a membrane.","cites":[{"file":"notes.md","page":1},{"file":"extra.txt"}]}),
        json!({"type":"check","at":"2026-03-04T09:00:00Z","topic":"Osmosis","verdict":"wrong","evaluation":"Mixed it up with diffusion."}),
        json!({"type":"check","at":"2026-03-04T09:05:00Z","topic":"Diffusion","verdict":"right","predicted":0.7}),
        json!({"type":"check","at":"2026-03-04T09:10:00Z","topic":"the Krebs cycle","verdict":"partial"}),
        json!({"type":"quiz","at":"2026-03-05T09:00:00Z","title":"Membranes","score":3,"max":5,"concepts":["Osmosis"]}),
        json!({"type":"learner","at":"2026-03-06T09:00:00Z","text":"Remember that in our class we call osmosis the water walk"}),
        json!({"type":"file","at":"2026-03-06T10:00:00Z","name":"notes.md","content":NOTES}),
    ])
}

fn later(learner: &str) -> String {
    lines(&[
        json!({"type":"subject","learner":learner,"subject":"cells"}),
        json!({"type":"file","at":"2026-05-10T09:00:00Z","name":"notes.md","content":NOTES_V2}),
        json!({"type":"file_removed","at":"2026-05-10T09:30:00Z","name":"extra.txt"}),
        json!({"id":"q2","type":"learner","at":"2026-05-11T09:00:00Z","text":"How does active transport use ATP?"}),
        json!({"type":"check","at":"2026-05-11T09:10:00Z","topic":"Osmosis","verdict":"right"}),
    ])
}

/// Events older than the chain's newest: a second history file.
fn backfill(learner: &str) -> String {
    lines(&[
        json!({"type":"subject","learner":learner,"subject":"cells"}),
        json!({"id":"old","type":"learner","at":"2026-02-20T09:00:00Z","text":"An early question about cells."}),
    ])
}

fn import(brain: &Brain, text: &str) {
    brain
        .import_bytes("h.jsonl", text.as_bytes(), None, &mut |_, _, _| {})
        .unwrap();
}

fn night(brain: &Brain, t: &str, since: Option<&str>) {
    let opts = NightlyOptions {
        since: since.map(|d| d.parse().unwrap()),
        ..NightlyOptions::default()
    };
    let report = brain.nightly(at(t), &opts, &mut |_, _| {}).unwrap();
    assert!(
        report.nights.iter().all(|n| n.failed.is_empty()),
        "{report:?}"
    );
}

/// The learner's data, with every store-local id left out or replaced by
/// what it means in the chain: beliefs' checks by time, file versions by
/// (name, number).
fn portable(brain: &Brain, s: &Subject) -> (Vec<Value>, Vec<Value>, Value) {
    let log = brain.episodes(s, 1, 10_000).unwrap();
    let episodes = log
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            v.as_object_mut().unwrap().remove("id");
            v
        })
        .collect();
    let beliefs = common::portable_beliefs(brain, s);
    let numbers: HashMap<i64, (String, i64)> = brain
        .file_versions(s)
        .unwrap()
        .into_iter()
        .map(|v| (v.id, (v.name, v.version)))
        .collect();
    let mut map = serde_json::to_value(brain.map(s).unwrap()).unwrap();
    fn renumber(v: &mut Value, numbers: &HashMap<i64, (String, i64)>) {
        match v {
            Value::Object(o) => {
                if let (Some(Value::String(_)), Some(Value::Number(n))) =
                    (o.get("file"), o.get("version"))
                {
                    let id = n.as_i64().unwrap();
                    o.insert("version".into(), json!(numbers[&id]));
                }
                o.values_mut().for_each(|x| renumber(x, numbers));
            }
            Value::Array(a) => a.iter_mut().for_each(|x| renumber(x, numbers)),
            _ => {}
        }
    }
    renumber(&mut map, &numbers);
    (episodes, beliefs, map)
}

fn write(root: &Path, files: &[(String, Vec<u8>)]) {
    for (path, bytes) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, bytes).unwrap();
    }
}

#[test]
fn an_export_imported_elsewhere_gives_the_same_chain_beliefs_and_map() {
    let dir = tempfile::tempdir().unwrap();
    let src_loc = tm_store::postgres::cluster::location(dir.path().join("src.db"));
    let dst_loc = tm_store::postgres::cluster::location(dir.path().join("dst.db"));
    let embedder = Arc::new(tm_embed::HashEmbedder::new());
    let src = Brain::open(src_loc.as_str(), embedder.clone()).unwrap();
    // Another learner first, so the learner's rows have other ids here than
    // they will in the store the export goes to.
    import(&src, &first("zed"));
    import(&src, &first("ana"));
    // Nights caught up after the import (their consolidations come after
    // every event in the chain), then one in its time, which decays the
    // beliefs nobody checked for 45 days; the night of July 1 finds the
    // subject idle and does not run.
    night(&src, "2026-03-07T03:00:00Z", Some("2026-03-03"));
    import(&src, &later("ana"));
    night(&src, "2026-05-12T03:00:00Z", None);
    night(&src, "2026-07-01T03:00:00Z", None);
    import(&src, &backfill("ana"));
    night(&src, "2026-07-02T03:00:00Z", None);

    let ana = src.subject("ana/cells").unwrap();
    let log = src.episodes(&ana, 1, 1000).unwrap();
    assert!(
        log.iter().any(|e| e.kind.as_str() == "consolidation"),
        "the chain has nights to carry"
    );
    let decayed = src
        .beliefs(&ana)
        .unwrap()
        .current
        .iter()
        .any(|b| b.reason.contains("decay"));
    assert!(decayed, "a quiet night decayed a belief");

    let export = src
        .export(&Scope::Learner("ana".into()), at("2026-07-03T00:00:00Z"))
        .unwrap();
    let m = &export.manifest;
    assert_eq!(m.subjects.len(), 1);
    let entry = &m.subjects[0];
    assert!(entry.same_head_on_import, "{entry:?}");
    assert_eq!(entry.histories.len(), 2, "the backfill is a second history");
    assert_eq!(entry.erased + entry.local, 0);
    let not_nights = log
        .iter()
        .filter(|e| e.kind.as_str() != "consolidation")
        .count();
    assert_eq!(entry.events, not_nights);
    assert_eq!(
        entry.nights,
        log.len() - not_nights,
        "every night consolidated"
    );
    let root = dir.path().join("export");
    write(&root, &export.files);
    // Nothing of another learner is in it.
    for (path, bytes) in &export.files {
        assert!(!path.contains("zed"), "{path}");
        assert!(
            !String::from_utf8_lossy(bytes).contains("\"zed\""),
            "{path}"
        );
    }

    let dst = Brain::open(dst_loc.as_str(), embedder).unwrap();
    for h in &entry.histories {
        dst.import_file(&root.join(h), &mut |_, _, _| {}).unwrap();
    }
    let copy = dst.subject("ana/cells").unwrap();
    let (src_head, dst_head) = (
        src.verify(&ana, None).unwrap(),
        dst.verify(&copy, None).unwrap(),
    );
    assert_eq!(dst_head.state, tm_model::episodes::ChainState::Intact);
    assert_eq!(
        (dst_head.head_seq, &dst_head.head_hash),
        (src_head.head_seq, &src_head.head_hash),
        "the same head"
    );
    assert_eq!(src.checkpoint(&ana).unwrap().head_hash, entry.head_hash);
    let (e1, b1, m1) = portable(&src, &ana);
    let (e2, b2, m2) = portable(&dst, &copy);
    assert_eq!(e1.len(), e2.len());
    for (a, b) in e1.iter().zip(&e2) {
        assert_eq!(a, b, "the same episode");
    }
    assert!(!b1.is_empty());
    assert_eq!(b1, b2, "the same current beliefs");
    assert_eq!(m1, m2, "the same map");
    // The subject's own facts came along too.
    assert_eq!(
        (copy.title.as_str(), copy.language.as_deref(), copy.timezone),
        (ana.title.as_str(), ana.language.as_deref(), ana.timezone)
    );

    // Importing the export into the store it came from changes nothing:
    // each event is recognised by its episode's salt.
    for h in &entry.histories {
        let r = src.import_file(&root.join(h), &mut |_, _, _| {}).unwrap();
        assert_eq!(r.appended, 0, "{r:?}");
    }
    assert_eq!(
        src.verify(&ana, None).unwrap().head_hash,
        src_head.head_hash
    );

    // Importing the export again changes nothing.
    for h in &entry.histories {
        let r = dst.import_file(&root.join(h), &mut |_, _, _| {}).unwrap();
        assert_eq!(r.appended, 0);
    }
    assert_eq!(
        dst.verify(&copy, None).unwrap().head_hash,
        src_head.head_hash
    );
}

#[test]
fn an_export_says_what_it_cannot_carry_back() {
    let dir = tempfile::tempdir().unwrap();
    let loc = tm_store::postgres::cluster::location(dir.path().join("e.db"));
    let brain = Brain::open(loc.as_str(), Arc::new(tm_embed::HashEmbedder::new())).unwrap();
    import(&brain, &first("ana"));
    assert!(matches!(
        brain.export(&Scope::Learner("nobody".into()), at("2026-07-03T00:00:00Z")),
        Err(tm_brain::Error::NotFound(_))
    ));
    let s = brain.subject("ana/cells").unwrap();
    brain
        .erase(&Scope::Subject(s), "ticket 1", at("2026-07-01T00:00:00Z"))
        .unwrap();
    let export = brain
        .export(&Scope::Learner("ana".into()), at("2026-07-03T00:00:00Z"))
        .unwrap();
    let entry = &export.manifest.subjects[0];
    assert_eq!(entry.erased, entry.episodes);
    assert_eq!(entry.events, 0);
    assert!(!entry.same_head_on_import);
}
