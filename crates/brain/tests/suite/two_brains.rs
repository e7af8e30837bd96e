//! Two brains over one store, as two `serve` processes over one database:
//! what one records, the other recalls on its next turn, though its caches
//! (vectors, derived facts, the map's concept vectors) were warm before the
//! write. On SQLite (one file) and, with `TUTOR_MEMORY_TEST_ENGINE=postgres`,
//! on PostgreSQL.

use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;
use tm_brain::Brain;
use tm_brain::block::BlockRequest;
use tm_embed::HashEmbedder;
use tm_model::events::{Event, EventBody, FileSource};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

fn brain(location: &str) -> Brain {
    let mut b = Brain::open(location, Arc::new(HashEmbedder::new())).unwrap();
    // Not a test of the cap: a loaded machine must not drop the block.
    b.set_cap(Duration::from_secs(120));
    b
}

fn request(q: &str) -> BlockRequest {
    BlockRequest {
        question: q.into(),
        at: at("2026-11-21T10:00:00Z"),
        tz: chrono_tz::UTC,
        budget: 1500,
        design: tm_model::block::Design::Full,
    }
}

#[test]
fn what_one_brain_records_the_other_recalls_on_its_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    let place = tm_store::postgres::cluster::location(dir.path().join("two.db"));
    let (a, b) = (brain(place.as_str()), brain(place.as_str()));
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/history.jsonl"
    );
    a.import_file(std::path::Path::new(sample), &mut |_, _, _| {})
        .unwrap();
    let subject = b.subject("ana/cell-biology").unwrap();
    // B's caches are warm: vectors, derived facts, the map's concepts.
    let before = b
        .build_block(
            &subject,
            &request("Tell me about tardigrades and zebrafish"),
        )
        .unwrap();
    assert!(!before.block.contains("Tardigrade"), "{}", before.block);

    // A records a question and a new file.
    let question = Event::new(
        at("2026-11-20T09:00:00Z"),
        EventBody::Learner {
            text: "Do tardigrades survive in space, like the zebrafish embryos we read about?"
                .into(),
        },
    )
    .with_id(Some("late-1".into()));
    let file = Event::new(
        at("2026-11-20T09:05:00Z"),
        EventBody::File {
            name: "extremophiles.md".into(),
            source: FileSource::Content(
                "# Tardigrade\n**Tardigrade**: a tiny animal that survives drying out and the vacuum of space.\n"
                    .into(),
            ),
        },
    );
    a.record(&subject, &[question, file]).unwrap();

    // B's next turn sees both: the episode is recalled, the concept is mapped.
    let after = b
        .build_block(
            &subject,
            &request("Tell me about tardigrades and zebrafish"),
        )
        .unwrap();
    assert!(
        after
            .recalled
            .iter()
            .any(|r| r.external_id.as_deref() == Some("late-1")),
        "{:?}",
        after.recalled
    );
    assert!(after.block.contains("Tardigrade"), "{}", after.block);
    // And both read one chain.
    let (va, vb) = (
        a.verify(&subject, None).unwrap(),
        b.verify(&subject, None).unwrap(),
    );
    assert_eq!(va.head_hash, vb.head_hash);
}
