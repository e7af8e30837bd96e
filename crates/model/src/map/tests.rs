//! Behaviour of the map through its public surface: merge, provenance,
//! assumed prerequisites, PageRank, readiness, order, rendering, teaching.

use super::*;
use crate::teaching::teaching;

fn c(name: &str, gist: &str, builds_on: &[&str], pages: &[u32]) -> ExtractedConcept {
    ExtractedConcept {
        name: name.into(),
        gist: gist.into(),
        definition: gist.into(),
        builds_on: builds_on.iter().map(|s| s.to_string()).collect(),
        pages: pages.to_vec(),
        ..Default::default()
    }
}

fn keys_only(_: &str, _: &str) -> f32 {
    0.0
}

fn node<'a>(map: &'a ConceptMap, name: &str) -> &'a Node {
    map.get(name).unwrap_or_else(|| panic!("no node {name}"))
}

#[test]
fn same_concept_from_two_files_is_one_node_with_both_sources() {
    let mut map = ConceptMap::new();
    map.merge_file(
        "a.md",
        Some(1),
        &[c("Osmosis", "Osmosis moves water.", &[], &[3, 4])],
        &keys_only,
        0.86,
    );
    map.merge_file(
        "b.md",
        Some(1),
        &[c("OSMOSIS", "Water diffuses.", &[], &[7])],
        &keys_only,
        0.86,
    );
    assert_eq!(map.len(), 1);
    let n = node(&map, "osmosis");
    let files: Vec<(&str, &[u32])> = n
        .sources
        .iter()
        .map(|s| (s.file.as_str(), s.pages.as_slice()))
        .collect();
    assert_eq!(files, vec![("a.md", &[3, 4][..]), ("b.md", &[7][..])]);
    assert_eq!(n.name, "Osmosis");
    assert_eq!(n.gist, "Osmosis moves water.");
}

#[test]
fn similarity_above_threshold_joins_and_below_does_not() {
    let mut map = ConceptMap::new();
    map.merge_file(
        "a.md",
        None,
        &[c("Cell membrane", "", &[], &[1])],
        &keys_only,
        0.86,
    );
    let sim = |a: &str, b: &str| {
        let pair = [a, b];
        if pair.contains(&"Plasma membrane") && pair.contains(&"Cell membrane") {
            0.9
        } else {
            0.5
        }
    };
    let r = map.merge_file(
        "b.md",
        None,
        &[
            c("Plasma membrane", "", &[], &[2]),
            c("Cytoplasm", "", &[], &[2]),
        ],
        &sim,
        0.86,
    );
    assert_eq!(map.len(), 2);
    assert!(matches!(r.joined[0].1, Joined::Similar { score, .. } if score > 0.86));
    assert_eq!(
        node(&map, "Plasma membrane").key,
        "cell membrane",
        "the alias routes to the joined node"
    );
    assert_eq!(node(&map, "Cell membrane").sources.len(), 2);
}

#[test]
fn similarity_never_merges_two_entries_of_one_file() {
    let mut map = ConceptMap::new();
    let always = |_: &str, _: &str| 0.99;
    map.merge_file(
        "a.md",
        None,
        &[
            c("Hypertonic", "", &[], &[1]),
            c("Hypotonic", "", &[], &[1]),
        ],
        &always,
        0.86,
    );
    assert_eq!(map.len(), 2);
}

#[test]
fn invalid_names_are_rejected_at_merge() {
    let mut map = ConceptMap::new();
    let r = map.merge_file(
        "a.md",
        None,
        &[
            c("Introduction", "", &[], &[1]),
            c("Review Questions", "", &[], &[9]),
            c("Diffusion", "", &[], &[2]),
        ],
        &keys_only,
        0.86,
    );
    assert_eq!(map.len(), 1);
    assert_eq!(r.rejected.len(), 2);
}

#[test]
fn replaced_file_moves_its_contribution_and_removed_file_is_marked() {
    let mut map = ConceptMap::new();
    map.merge_file(
        "a.md",
        Some(1),
        &[c("Osmosis", "v1", &[], &[1]), c("Diffusion", "", &[], &[2])],
        &keys_only,
        0.86,
    );
    map.merge_file(
        "b.md",
        Some(1),
        &[c("Osmosis", "b", &[], &[5])],
        &keys_only,
        0.86,
    );
    // Version 2 of a.md no longer explains diffusion and moved osmosis to page 9.
    map.merge_file(
        "a.md",
        Some(2),
        &[c("Osmosis", "v2", &[], &[9])],
        &keys_only,
        0.86,
    );
    assert!(
        map.get("Diffusion").is_none(),
        "nothing else explained diffusion"
    );
    let o = node(&map, "Osmosis");
    let a: Vec<_> = o.sources.iter().filter(|s| s.file == "a.md").collect();
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].version, a[0].pages.as_slice()), (Some(2), &[9][..]));

    map.remove_file("b.md");
    map.remove_file("a.md");
    let o = node(&map, "Osmosis");
    assert!(
        o.sources.iter().all(|s| s.removed),
        "removed sources stay listed, marked"
    );
    assert_eq!(o.sources.len(), 2);
    assert_eq!(o.readiness, NAMED);
}

#[test]
fn assumed_prerequisite_needs_two_concepts_to_become_a_node() {
    let mut map = ConceptMap::new();
    let mut a = c("Active transport", "", &[], &[1]);
    a.assumed = vec!["ATP".into(), "Electrochemical gradient".into()];
    let mut b = c("Mitochondrion", "", &[], &[2]);
    b.assumed = vec!["atp".into()];
    map.merge_file("a.md", None, &[a, b], &keys_only, 0.86);
    let atp = node(&map, "ATP");
    assert_eq!(atp.origin, Origin::Assumed);
    assert_eq!(atp.readiness, NAMED);
    assert!(
        node(&map, "Mitochondrion")
            .builds_on
            .iter()
            .any(|e| e.to == "atp")
    );
    assert!(
        map.get("Electrochemical gradient").is_none(),
        "single case: not a node"
    );
    assert_eq!(
        node(&map, "Active transport").assumed,
        vec!["Electrochemical gradient".to_string()]
    );
    assert!(
        !render_map(&map).contains("Electrochemical"),
        "drawn nowhere"
    );
    // A file that explains ATP turns the assumed node into an explained one.
    map.merge_file(
        "b.md",
        None,
        &[c("ATP", "ATP carries energy.", &[], &[4])],
        &keys_only,
        0.86,
    );
    assert_eq!(node(&map, "ATP").origin, Origin::File);
    assert_eq!(map.len(), 3);
}

/// A builds on B (one source) and C (two sources); B and D build on C; C is dangling.
fn hand_graph() -> ConceptMap {
    let mut map = ConceptMap::new();
    map.merge_file(
        "f1.md",
        None,
        &[
            c("Alpha", "a.", &["Bravo", "Charlie"], &[1]),
            c("Bravo", "b.", &["Charlie"], &[1]),
            c("Charlie", "c.", &[], &[1]),
            c("Delta", "d.", &["Charlie"], &[1]),
        ],
        &keys_only,
        0.86,
    );
    map.merge_file(
        "f2.md",
        None,
        &[c("Alpha", "a2.", &["Charlie"], &[2])],
        &keys_only,
        0.86,
    );
    map
}

#[test]
fn page_rank_matches_hand_computation() {
    // d = 0.85, N = 4, C is the only dangling node. A and D have no in-edges:
    //   a = (0.15 + 0.85 c) / 4
    //   b = a + 0.85 * a * (1/3)                 (A splits 1:2 between B and C)
    //   c = a + 0.85 * (a * 2/3 + b + a)         (A's 2/3, all of B, all of D)
    // so b = 1.283333 a, c = 3.5075 a, a = 0.15 / (4 - 0.85 * 3.5075) = 0.147257332…
    let map = hand_graph();
    let r = page_rank(&map);
    let want = [
        0.1472573321879985,
        0.18898024297459806,
        0.5165050926494047,
        0.1472573321879985,
    ];
    for (got, want) in r.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{r:?}");
    }
    assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(
        node(&map, "Alpha")
            .builds_on
            .iter()
            .find(|e| e.to == "charlie")
            .map(|e| e.weight),
        Some(2.0)
    );
}

#[test]
fn readiness_bands_and_weighted_subject_readiness() {
    let mut map = hand_graph();
    assert!(map.nodes().iter().all(|n| n.readiness == EXPLAINED));
    map.confirm("Charlie");
    let cue = teaching("Remember that Alpha comes first").expect("a teaching cue");
    assert!(matches!(
        teach(&mut map, "Remember that Alpha comes first", &cue),
        TeachOutcome::Attached { .. }
    ));
    assert_eq!(node(&map, "Alpha").readiness, TAUGHT);
    assert_eq!(node(&map, "Charlie").readiness, CONFIRMED);
    assert_eq!(node(&map, "Bravo").readiness, EXPLAINED);
    // 0.147257*1.0 + 0.188980*0.60 + 0.516505*0.85 + 0.147257*0.60 (centralities above)
    assert!((subject_readiness(&map) - 0.7880292060375504).abs() < 1e-6);
    assert_eq!(
        readiness(node(&map, "Bravo"), true),
        CONFIRMED,
        "a passed check lifts an explained concept"
    );
}

#[test]
fn teaching_order_puts_prerequisites_first_and_hubs_first() {
    let map = hand_graph();
    let order = teaching_order(&map);
    assert_eq!(
        order.layers,
        vec![
            vec!["charlie".to_string()],
            vec!["bravo".into(), "delta".into()],
            vec!["alpha".into()]
        ]
    );
    assert!(order.broken.is_empty());
    assert_eq!(node(&map, "Alpha").layer, 2);
}

#[test]
fn cycles_are_broken_deterministically_and_reported() {
    let mut map = ConceptMap::new();
    map.merge_file(
        "f.md",
        None,
        &[
            c("Xray", "", &["Yankee"], &[1]),
            c("Yankee", "", &["Zulu"], &[1]),
            c("Zulu", "", &["Xray"], &[1]),
            c("Whiskey", "", &["Xray"], &[1]),
        ],
        &keys_only,
        0.86,
    );
    map.merge_file(
        "g.md",
        None,
        &[
            c("Xray", "", &["Yankee"], &[1]),
            c("Yankee", "", &["Zulu"], &[1]),
        ],
        &keys_only,
        0.86,
    );
    // X→Y and Y→Z have weight 2, Z→X weight 1: Z→X is dropped.
    let order = teaching_order(&map);
    assert_eq!(
        order.broken,
        vec![BrokenEdge {
            from: "zulu".into(),
            to: "xray".into(),
            weight: 1.0
        }]
    );
    assert_eq!(order.layers[0], vec!["zulu".to_string()]);
    assert_eq!(map.broken_edges(), order.broken.as_slice());
    assert_eq!(teaching_order(&map), order, "same input, same answer");
}

#[test]
fn header_says_what_the_percentage_is_about() {
    let mut map = ConceptMap::new();
    let concepts: Vec<ExtractedConcept> = (0..15)
        .map(|i| c(&format!("Concept {}", (b'a' + i) as char), "", &[], &[1]))
        .collect();
    map.merge_file("f.md", None, &concepts, &keys_only, 0.86);
    let mut a = c("Extra one", "", &[], &[1]);
    a.assumed = vec!["Hidden".into()];
    let mut b = c("Extra two", "", &[], &[1]);
    b.assumed = vec!["Hidden".into()];
    map.merge_file("g.md", None, &[a, b], &keys_only, 0.86);
    map.remove_file("g.md");
    // 18 nodes? No: removed sources drop their assumptions, so 17 nodes, 15 explained.
    assert_eq!(map.len(), 17);
    assert_eq!(
        header(&map),
        "SUBJECT MAP (17 concepts; the files explain 88% of it, this is about the material, NOT the student's mastery):"
    );
}

#[test]
fn map_line_reads_as_in_the_spec() {
    let mut map = ConceptMap::new();
    map.merge_file(
        "bio.md",
        None,
        &[
            c("Cytoplasm", "The cytoplasm fills the cell.", &[], &[1]),
            c(
                "Mitochondria",
                "Mitochondria release energy from glucose.",
                &["Cytoplasm"],
                &[2],
            ),
        ],
        &keys_only,
        0.86,
    );
    let text = "Remember that in our class we call the mitochondria the powerhouse of the cell";
    let cue = teaching(text).expect("teaches");
    teach(&mut map, text, &cue);
    assert_eq!(
        render_line(&map, node(&map, "Mitochondria")),
        "- Mitochondria: Mitochondria release energy from glucose. [taught: in our class we call the mitochondria the powerhouse of the cell] (builds on: Cytoplasm)"
    );
}

fn biology_map(names: &[&str]) -> ConceptMap {
    let mut map = ConceptMap::new();
    let cs: Vec<ExtractedConcept> = names.iter().map(|n| c(n, "", &[], &[1])).collect();
    map.merge_file("f.md", None, &cs, &keys_only, 0.86);
    map
}

#[test]
fn teaching_attaches_by_exact_name_in_five_languages() {
    for (names, text, want) in [
        (
            &["Cell", "Mitochondria"][..],
            "Remember that in our class we call the mitochondria the powerhouse of the cell",
            "mitochondria",
        ),
        (
            &["Ósmosis", "Membrana"][..],
            "Recuerda que la ósmosis es pasiva",
            "osmosis",
        ),
        (
            &["Osmose", "Zelle"][..],
            "Merk dir, dass Osmose passiv ist",
            "osmose",
        ),
        (&["Osmosi"][..], "Ricorda che l'osmosi è passiva", "osmosi"),
        (
            &["Osmose"][..],
            "OK. Souviens-toi que l'osmose est passive",
            "osmose",
        ),
    ] {
        let mut map = biology_map(names);
        let cue = teaching(text).expect("teaches");
        let out = teach(&mut map, text, &cue);
        match out {
            TeachOutcome::Attached { key, note, .. } => {
                assert_eq!(key, want, "{text}");
                assert!(!note.is_empty() && text.ends_with(&note), "{note}");
            }
            other => panic!("{text}: {other:?}"),
        }
        assert_eq!(map.len(), names.len());
        assert_eq!(node(&map, want).readiness, TAUGHT);
        assert!(render_line(&map, node(&map, want)).contains("[taught: "));
    }
}

#[test]
fn teaching_an_unknown_concept_creates_a_short_name() {
    for (text, want) in [
        ("Treat ATP as the cell's energy currency.", "ATP"),
        (
            "Recuerda que la glucólisis es anaerobia y ocurre en el citoplasma de todas las células",
            "Glucólisis",
        ),
        (
            "Remember that in our class we call the nucleolus the ribosome factory of the nucleus",
            "Nucleolus",
        ),
        (
            "Ricorda che il ciclo di Krebs è nella matrice",
            "Ciclo di Krebs",
        ),
        (
            "Souviens-toi que la photosynthèse produit du glucose",
            "Photosynthèse",
        ),
        (
            "Remember that the Golgi apparatus packages proteins",
            "Golgi apparatus",
        ),
        ("Consider ATP as the cell's energy currency", "ATP"),
        (
            "Treat the Krebs cycle as the hub of respiration",
            "Krebs cycle",
        ),
    ] {
        let mut map = biology_map(&["Cell membrane"]);
        let cue = teaching(text).expect("teaches");
        match teach(&mut map, text, &cue) {
            TeachOutcome::Created { name, .. } => {
                assert_eq!(name, want, "{text}");
                assert!(name.split_whitespace().count() <= teach::SHORT_NAME_WORDS);
                let n = node(&map, &name);
                assert_eq!((n.readiness, n.origin), (TAUGHT, Origin::Taught));
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// The note goes to the concept the sentence is about (the object of "we
/// call", the subject of "X is"), never to a name that only appears later in
/// it; with no such concept the new node is named by that noun phrase.
#[test]
fn teaching_routes_to_what_the_sentence_is_about_in_four_languages() {
    for (map_names, text, about) in [
        (
            &["Cell"][..],
            "Remember that in our class we call the mitochondria the powerhouse of the cell",
            "Mitochondria",
        ),
        (
            &["Cellula"][..],
            "Ricorda che in classe chiamiamo i mitocondri la centrale energetica della cellula",
            "Mitocondri",
        ),
        (
            &["Sel"][..],
            "Ingat bahwa di kelas kami menyebut mitokondria sebagai pembangkit tenaga sel",
            "Mitokondria",
        ),
        (
            &["Célula"][..],
            "Recuerda que en nuestra clase llamamos a las mitocondrias la central de energía de la célula",
            "Mitocondrias",
        ),
        (
            &["Zelle"][..],
            "In unserer Klasse nennen wir die Mitochondrien das Kraftwerk der Zelle",
            "Mitochondrien",
        ),
    ] {
        // Without the concept: a new node named by the phrase, the other untouched.
        let mut map = biology_map(map_names);
        let cue = teaching(text).expect("teaches");
        match teach(&mut map, text, &cue) {
            TeachOutcome::Created { name, .. } => assert_eq!(name, about, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
        assert!(node(&map, map_names[0]).taught.is_empty(), "{text}");
        // With it: the note lands there.
        let mut names = map_names.to_vec();
        names.push(about);
        let mut map = biology_map(&names);
        match teach(&mut map, text, &cue) {
            TeachOutcome::Attached { name, .. } => assert_eq!(name, about, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
        assert_eq!(map.len(), names.len());
        assert!(node(&map, map_names[0]).taught.is_empty(), "{text}");
    }
    // The subject of "X is…", found word for word ("Golgi apparatus packages…").
    let mut map = biology_map(&["Protein", "Golgi apparatus"]);
    let text = "Remember that the Golgi apparatus packages proteins";
    let out = teach(&mut map, text, &teaching(text).unwrap());
    assert!(
        matches!(&out, TeachOutcome::Attached { name, .. } if name == "Golgi apparatus"),
        "{out:?}"
    );
}

#[test]
fn a_question_never_teaches() {
    let mut map = biology_map(&["Osmosis"]);
    for text in [
        "can you remember what osmosis is?",
        "¿Recuerdas que la ósmosis es pasiva?",
    ] {
        if let Some(cue) = teaching(text) {
            teach(&mut map, text, &cue);
        }
    }
    assert_eq!(node(&map, "Osmosis").readiness, EXPLAINED);
    assert_eq!(map.len(), 1);
}

#[test]
fn map_round_trips_through_serde() {
    let map = hand_graph();
    let json = serde_json::to_string(&map).expect("serialise");
    let back: ConceptMap = serde_json::from_str(&json).expect("deserialise");
    assert_eq!(back, map);
}
