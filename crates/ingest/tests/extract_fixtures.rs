//! The offline extractor on small hand-written files.

use tm_ingest::extract::{ConceptExtractor, ExtractedConcept, OfflineExtractor};

fn fixture(name: &str) -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/extract/");
    let text = std::fs::read_to_string(format!("{path}{name}")).expect("fixture");
    text.split('\u{c}').map(str::to_string).collect()
}

fn find<'a>(cs: &'a [ExtractedConcept], name: &str) -> &'a ExtractedConcept {
    cs.iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", names(cs)))
}

fn names(cs: &[ExtractedConcept]) -> Vec<&str> {
    cs.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn markdown_terms_definitions_and_glossary() {
    let cs = OfflineExtractor::default()
        .extract("membranes_en.md", &fixture("membranes_en.md"))
        .expect("extracts");
    let mut got = names(&cs);
    got.sort();
    assert_eq!(
        got,
        vec!["Diffusion", "Lipid bilayer", "Osmosis", "Sodium pump"]
    );
    let osmosis = find(&cs, "Osmosis");
    assert_eq!(
        osmosis.gist,
        "Water crossing a lipid bilayer by diffusion is called osmosis."
    );
    assert_eq!(
        osmosis.definition,
        "diffusion of water across a lipid bilayer"
    );
    assert_eq!(osmosis.builds_on, vec!["Diffusion", "Lipid bilayer"]);
    assert!(
        find(&cs, "Diffusion").builds_on.is_empty(),
        "diffusion does not build on osmosis"
    );
    assert_eq!(find(&cs, "Sodium pump").assumed, vec!["ATP", "NADH"]);
    assert!(osmosis.assumed.is_empty());
    assert_eq!(osmosis.pages, vec![1]);
}

#[test]
fn plain_notes_use_definition_sentences_and_form_feed_pages() {
    let cs = OfflineExtractor::default()
        .extract("notizen_de.txt", &fixture("notizen_de.txt"))
        .expect("extracts");
    let mut got = names(&cs);
    got.sort();
    assert_eq!(got, vec!["Diffusion", "Membran", "Osmose"]);
    assert_eq!(find(&cs, "Osmose").pages, vec![1]);
    assert_eq!(find(&cs, "Membran").pages, vec![2]);
    assert_eq!(find(&cs, "Osmose").builds_on, vec!["Diffusion", "Membran"]);
}

#[test]
fn the_list_is_bounded_most_evidenced_first() {
    let mut text = String::from("## Things\n\n");
    for i in 0..60 {
        let name: String = format!("term{}", (b'a' + (i % 26) as u8) as char).repeat(1 + i / 26);
        text.push_str(&format!("The **{name}** is a thing number {i}.\n"));
    }
    text.push_str("### Key Terms\n\n- **termz**: the most explained one\n");
    let x = OfflineExtractor { max_concepts: 10 };
    let cs = x.extract("many.md", &[text]).expect("extracts");
    assert_eq!(cs.len(), 10);
    assert_eq!(cs[0].name, "Termz");
}
