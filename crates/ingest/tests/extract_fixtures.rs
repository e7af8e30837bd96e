//! The offline extractor on small hand-written files.

mod common;

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
    let mut text = String::from("## Things to know\n\n");
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

/// Study sheets written as headings with one short paragraph each, few or no
/// copulas, in five languages: every heading that names an idea is a concept,
/// no section title is, and prerequisites point from a concept to what its
/// paragraph builds on.
#[test]
fn heading_plus_paragraph_sheets_in_five_languages() {
    for (file, want, edges) in [
        (
            "sheet_en.md",
            &[
                "Cell membrane",
                "Chloroplasts",
                "Endosymbiosis",
                "Mitochondria",
                "Nucleus",
                "Prokaryotic Cells",
                "Respiration",
            ][..],
            &[
                ("Mitochondria", "Respiration"),
                ("Endosymbiosis", "Mitochondria"),
                ("Endosymbiosis", "Chloroplasts"),
                ("Prokaryotic Cells", "Nucleus"),
            ][..],
        ),
        (
            "apuntes_es.md",
            &[
                "Amplitud",
                "Frecuencia",
                "Longitud de onda",
                "Velocidad de una onda",
            ],
            &[
                ("Velocidad de una onda", "Frecuencia"),
                ("Velocidad de una onda", "Longitud de onda"),
            ],
        ),
        (
            "skript_de.md",
            &[
                "Chlorophyll",
                "Chloroplasten",
                "Photosynthese",
                "Zellatmung",
            ],
            &[
                ("Chloroplasten", "Chlorophyll"),
                ("Photosynthese", "Chlorophyll"),
                ("Zellatmung", "Photosynthese"),
            ],
        ),
        (
            "appunti_it.md",
            &["Fusione nucleare", "Orbita", "Pianeti", "Sole"],
            &[("Pianeti", "Sole"), ("Orbita", "Sole")],
        ),
        (
            "catatan_id.md",
            &["Fotosintesis", "Klorofil", "Kloroplas", "Stomata"],
            &[("Kloroplas", "Klorofil"), ("Fotosintesis", "Kloroplas")],
        ),
    ] {
        let cs = OfflineExtractor::default()
            .extract(file, &fixture(file))
            .expect("extracts");
        let mut got = names(&cs);
        got.sort();
        assert_eq!(got, want, "{file}");
        for (from, to) in edges {
            assert!(
                find(&cs, from).builds_on.iter().any(|b| b == to),
                "{file}: {from} builds on {to}: {:?}",
                find(&cs, from).builds_on
            );
            assert!(
                !find(&cs, to).builds_on.iter().any(|b| b == from),
                "{file}: {to} must not build on {from}"
            );
        }
        for c in &cs {
            // The definition is the paragraph's opening, whole.
            assert!(
                c.definition.ends_with('.') && c.gist.ends_with('.'),
                "{file}: {c:?}"
            );
            assert!(!c.pages.is_empty(), "{file}: {c:?}");
        }
    }
    // A heading's page is where its paragraph is.
    let cs = OfflineExtractor::default()
        .extract("sheet_en.md", &fixture("sheet_en.md"))
        .unwrap();
    assert_eq!(find(&cs, "Endosymbiosis").pages, vec![3]);
    assert_eq!(
        find(&cs, "Mitochondria").gist,
        "Mitochondria release energy from glucose by respiration."
    );
}

/// A heading that is a task ("Solve …", "Representing …") or whose paragraph
/// does not name it, in a file with bold terms, is no concept; the same
/// heading in plain notes is.
#[test]
fn task_headings_and_unnamed_headings_in_textbooks_are_not_concepts() {
    let text = "## Solve Equations with Fractions\n\nTo solve equations with fractions, clear the fractions first.\n\n\
                ## Why it works\n\nMultiplying both sides keeps the **equation** balanced.\n\n\
                ## Slope\n\nThe slope of a line measures how steep it rises.\n";
    let cs = OfflineExtractor::default()
        .extract("t.md", &[text.to_string()])
        .unwrap();
    let mut got = names(&cs);
    got.sort();
    assert_eq!(got, vec!["Equation", "Slope"]);
    let notes = "## Ribosomes\n\nThese tiny grains build proteins.\n";
    let cs = OfflineExtractor::default()
        .extract("n.md", &[notes.to_string()])
        .unwrap();
    assert_eq!(names(&cs), vec!["Ribosomes"]);
    assert_eq!(cs[0].definition, "These tiny grains build proteins.");
}

/// Task headings in the languages learners write, in plain notes (where any
/// other heading with a paragraph is a concept): imperatives ("Calcola…",
/// "Tentukan…"), and German's verb last ("Gleichungen lösen").
#[test]
fn task_headings_in_every_language_are_not_concepts() {
    for (task, concept) in [
        (
            "## Risolvi le equazioni di primo grado\n\nPorta tutte le incognite a sinistra.\n",
            "## Equazione\n\nUn'uguaglianza tra due espressioni con un'incognita.\n",
        ),
        (
            "## Lineare Gleichungen lösen\n\nBringe alle Unbekannten auf eine Seite.\n",
            "## Gleichung\n\nZwei Terme, die durch ein Gleichheitszeichen verbunden sind.\n",
        ),
        (
            "## Tentukan nilai x\n\nPindahkan semua suku ke ruas kiri.\n",
            "## Persamaan\n\nKalimat terbuka yang memuat tanda sama dengan.\n",
        ),
        (
            "## Calcula la pendiente\n\nDivide el cambio vertical entre el horizontal.\n",
            "## Pendiente\n\nLa inclinación de una recta.\n",
        ),
        (
            "## Calculez la pente\n\nDivisez la variation verticale par l'horizontale.\n",
            "## Pente\n\nL'inclinaison d'une droite.\n",
        ),
    ] {
        let notes = format!("{task}\n{concept}");
        let cs = OfflineExtractor::default()
            .extract("n.md", std::slice::from_ref(&notes))
            .unwrap();
        let want = concept
            .trim_start_matches("## ")
            .split('\n')
            .next()
            .unwrap();
        assert_eq!(names(&cs), vec![want], "{notes}");
    }
}

/// The sample files' definitions are whole sentences: hard-wrapped lines are
/// joined, and "e.g." does not end a sentence.
#[test]
fn definitions_are_whole_sentences() {
    let text = "## Transport\n\n**Osmosis** is the diffusion of water across a membrane, such as the\n\
                cell membrane, from the dilute side to the concentrated side.\n\n\
                **Diffusion** moves particles, e.g. ions and gases. It needs no energy.\n";
    let cs = OfflineExtractor::default()
        .extract("t.md", &[text.to_string()])
        .unwrap();
    assert_eq!(
        find(&cs, "Osmosis").definition,
        "Osmosis is the diffusion of water across a membrane, such as the cell membrane, from the dilute side to the concentrated side."
    );
    assert_eq!(
        find(&cs, "Diffusion").gist,
        "Diffusion moves particles, e.g. ions and gases."
    );
    let examples = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/cell-biology/files"
    );
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/extract");
    let mut checked = 0;
    for dir in [examples, fixtures] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let pages: Vec<String> = text.split('\u{c}').map(str::to_string).collect();
            for c in OfflineExtractor::default().extract("f", &pages).unwrap() {
                common::assert_whole(&path.display().to_string(), &text, &c);
                checked += 1;
            }
        }
    }
    assert!(checked >= 40, "{checked} definitions checked");
}

/// A concept only a glossary defines has the definition as its gist, as a
/// sentence, without its name in front (the map line already opens with it).
#[test]
fn a_glossary_only_concept_does_not_repeat_its_name() {
    let text = "## Energy\n\nCells spend energy all the time.\n\n### Key Terms\n\n- **ATP**: the molecule cells use to carry energy\n";
    let cs = OfflineExtractor::default()
        .extract("g.md", &[text.to_string()])
        .unwrap();
    let atp = find(&cs, "ATP");
    assert_eq!(atp.gist, "The molecule cells use to carry energy.");
    assert_eq!(atp.definition, "the molecule cells use to carry energy");
}

/// A "what to keep" box is the file's furniture in every language listed:
/// its heading is never a concept, in notes or in a textbook, while the
/// term it sums up still is.
#[test]
fn key_point_boxes_are_not_concepts_in_any_language() {
    for (heading, term, sentence) in [
        (
            "Key points",
            "Osmosis",
            "Osmosis is the movement of water across a membrane.",
        ),
        (
            "Punti chiave",
            "Osmosi",
            "L'osmosi è il passaggio dell'acqua attraverso una membrana.",
        ),
        (
            "Wichtige Punkte",
            "Osmose",
            "Die Osmose ist der Durchgang von Wasser durch eine Membran.",
        ),
        (
            "Poin penting",
            "Osmosis",
            "Osmosis adalah perpindahan air melalui membran.",
        ),
        (
            "Puntos clave",
            "Ósmosis",
            "La ósmosis es el paso del agua a través de una membrana.",
        ),
        (
            "À retenir",
            "Osmose",
            "L'osmose est le passage de l'eau à travers une membrane.",
        ),
    ] {
        let text = format!("## {term}\n\n{sentence}\n\n## {heading}\n\n{sentence}\n");
        let cs = OfflineExtractor::default()
            .extract("k.md", &[text])
            .unwrap();
        let got = names(&cs);
        assert!(
            !got.iter().any(|n| n.eq_ignore_ascii_case(heading)),
            "{heading}: {got:?}"
        );
        assert!(got.contains(&term), "{term}: {got:?}");
    }
}
