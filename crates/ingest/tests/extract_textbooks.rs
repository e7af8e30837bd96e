//! The offline extractor on real textbook chapters (../shared/data/textbooks/).
//! Skipped with a printed line when the data is absent.

mod common;

use std::path::PathBuf;

use tm_ingest::extract::{ConceptExtractor, ExtractedConcept, OfflineExtractor};
use tm_model::lang::canonical_key;
use tm_model::map::{ConceptMap, Origin, validate_name};

const AP: &str = "biology/en_anatomy-physiology-2e_ch03_cellular-level-of-organization.md";
const GB: &str = "biology/en_general-biology-i_ch04_cells.md";
const ES: &str = "biology/es_quimica-2ed_ch11_soluciones-y-coloides_excerpt-osmosis.md";
const ALGEBRA: [&str; 3] = [
    "algebra/en_elementary-algebra-2e_ch02_solving-linear-equations-and-inequalities.md",
    "algebra/en_precalculus-2e_ch02_linear-functions.md",
    "algebra/es_precalculo-2ed_ch02_funciones-lineales.md",
];

fn textbooks() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/textbooks"
    ));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped: textbook chapters not found at {}", dir.display());
        None
    }
}

/// A text file is one page unless it has form feeds.
fn pages(dir: &std::path::Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(file)).expect("readable chapter");
    text.split('\u{c}').map(str::to_string).collect()
}

fn extract(dir: &std::path::Path, file: &str) -> Vec<ExtractedConcept> {
    OfflineExtractor::default()
        .extract(file, &pages(dir, file))
        .expect("extracts")
}

fn keys_only(_: &str, _: &str) -> f32 {
    0.0
}

fn merged(dir: &std::path::Path) -> ConceptMap {
    let mut map = ConceptMap::new();
    for f in [AP, GB, ES] {
        let cs = extract(dir, f);
        map.merge_file(f, Some(1), &cs, &keys_only, 0.86);
    }
    map
}

#[test]
fn no_section_title_becomes_a_concept() {
    let Some(dir) = textbooks() else { return };
    for f in [AP, GB, ES].into_iter().chain(ALGEBRA) {
        let cs = extract(&dir, f);
        assert!(
            cs.len() >= 10 && cs.len() <= 40,
            "{f}: {} concepts",
            cs.len()
        );
        for c in &cs {
            assert_eq!(validate_name(&c.name), Ok(()), "{f}: {}", c.name);
            assert!(!c.pages.is_empty() && !c.gist.is_empty(), "{f}: {c:?}");
        }
        let keys: Vec<String> = cs.iter().map(|c| canonical_key(&c.name)).collect();
        for furniture in [
            "introduction",
            "key terms",
            "review questions",
            "learning objectives",
            "exercise",
            "solution",
            "introduccion",
            "conceptos clave",
            "ejercicios",
            "summary",
            "section summary",
            "chapter review",
        ] {
            assert!(!keys.contains(&furniture.to_string()), "{f}: {furniture}");
        }
    }
}

#[test]
fn two_chapters_explaining_the_same_concept_give_one_node_with_both_files() {
    let Some(dir) = textbooks() else { return };
    let map = merged(&dir);
    let files = |name: &str| -> Vec<String> {
        let n = map.get(name).unwrap_or_else(|| panic!("no {name}"));
        n.sources.iter().map(|s| s.file.clone()).collect()
    };
    // Mitochondria: A&P says "mitochondrion (plural = mitochondria)", General Biology the reverse.
    assert_eq!(files("mitochondria"), vec![AP.to_string(), GB.to_string()]);
    assert_eq!(
        map.get("Mitochondrion").map(|n| &n.key),
        map.get("Mitochondria").map(|n| &n.key)
    );
    // General Biology never mentions osmosis; the Spanish chemistry excerpt does ("ósmosis").
    assert_eq!(files("osmosis"), vec![AP.to_string(), ES.to_string()]);
    // "cell membrane … also known as plasma membrane" joins General Biology's plasma membrane.
    assert_eq!(
        files("plasma membrane"),
        vec![AP.to_string(), GB.to_string()]
    );
    assert!(
        map.get("osmosis")
            .is_some_and(|n| n.sources.iter().all(|s| !s.pages.is_empty()))
    );
}

#[test]
fn prerequisites_point_from_the_concept_to_what_it_builds_on() {
    let Some(dir) = textbooks() else { return };
    let map = merged(&dir);
    let builds_on = |a: &str, b: &str| {
        let (a, b) = (map.get(a).expect(a), map.get(b).expect(b));
        a.builds_on.iter().any(|e| e.to == b.key)
    };
    // "Osmosis is the diffusion of water through a semipermeable membrane."
    assert!(builds_on("Osmosis", "Diffusion"));
    assert!(!builds_on("Diffusion", "Osmosis"));
    // "Facilitated diffusion is the diffusion process used for those substances …"
    assert!(
        map.get("Facilitated diffusion").is_none()
            || builds_on("Facilitated diffusion", "Diffusion")
    );
    // Spanish: "hemólisis: … exceso de agua por ósmosis"; "ósmosis: … membrana semipermeable".
    assert!(map.get("Hemólisis").is_none() || builds_on("Hemólisis", "Ósmosis"));
    assert!(builds_on("Ósmosis", "Membrana semipermeable"));
    let osm = map.get("osmosis").expect("osmosis");
    let diff = map.get("diffusion").expect("diffusion");
    assert!(
        osm.layer > diff.layer,
        "prerequisites come first in the teaching order"
    );
}

#[test]
fn assumed_once_is_recorded_twice_is_a_node() {
    let Some(dir) = textbooks() else { return };
    let map = merged(&dir);
    // ATP is used by A&P's mitochondrion and active transport and by General
    // Biology's mitochondria, and defined by neither file.
    let atp = map.get("ATP").expect("ATP is a node");
    assert_eq!(atp.origin, Origin::Assumed);
    assert!(atp.sources.is_empty());
    let by = map
        .nodes()
        .iter()
        .filter(|n| n.builds_on.iter().any(|e| e.to == atp.key))
        .count();
    assert!(by >= 2);
    // Every single-case assumption is recorded on its concept and is no node.
    let singles: Vec<&String> = map.nodes().iter().flat_map(|n| &n.assumed).collect();
    for s in &singles {
        assert!(map.get(s).is_none(), "{s} is drawn");
    }
    let header = tm_model::map::header(&map);
    assert!(
        header.starts_with(&format!(
            "SUBJECT MAP ({} concepts; the files explain",
            map.len()
        )),
        "{header}"
    );
}

#[test]
fn print_biology_concepts() {
    let Some(dir) = textbooks() else { return };
    for f in [AP, GB] {
        let t = std::time::Instant::now();
        let cs = extract(&dir, f);
        let took = t.elapsed();
        let names: Vec<&str> = cs.iter().map(|c| c.name.as_str()).collect();
        println!(
            "{f} ({} concepts, {took:?}): {}",
            cs.len(),
            names.join(", ")
        );
    }
}

/// Every gist and definition read from the chapters is whole: no ",." and no
/// cut inside a clause (see `common::assert_whole`); the counts are printed.
#[test]
fn every_definition_in_the_chapters_is_whole() {
    let Some(dir) = textbooks() else { return };
    for f in [AP, GB, ES].into_iter().chain(ALGEBRA) {
        let source = std::fs::read_to_string(dir.join(f)).unwrap();
        let cs = extract(&dir, f);
        println!("{f}: {} concepts", cs.len());
        for c in &cs {
            common::assert_whole(f, &source, c);
        }
    }
}
