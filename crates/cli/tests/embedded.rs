//! Through the binary: what `teach` and `answer` record is indexed like
//! every other event (full text and a vector), so semantic recall sees it.

use std::process::Command;
use tm_model::subject::SubjectKey;
use tm_store::prelude::*;
use tm_store::require_subject;
use tm_store::sqlite::SqliteStore;

mod common;

use common::{ok as cli, sample_taught};

#[test]
fn teach_and_answer_from_the_command_line_leave_no_episode_without_a_vector() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("e.db");
    sample_taught(&db);
    let answered = cli(
        &db,
        &[
            "answer",
            "--subject",
            "ana/cell-biology",
            "--at",
            "2026-11-20T10:01:00Z",
            "ATP carries energy inside the cell.",
        ],
    );
    assert!(answered.contains("answer recorded"), "{answered}");

    let store = SqliteStore::open(&db).unwrap();
    let s = require_subject(&store, &SubjectKey::parse("ana/cell-biology").unwrap()).unwrap();
    let last_two: Vec<_> = store
        .episodes(&s, 1, usize::MAX)
        .unwrap()
        .into_iter()
        .rev()
        .take(2)
        .collect();
    assert_eq!(
        last_two.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
        ["answer", "taught"]
    );
    assert_eq!(
        store.count_missing_vectors(&s, "hash-v1-384").unwrap(),
        0,
        "every episode, the taught one and the answer included, has a vector"
    );
    let hits = store.term_hits(&s, &["currency".to_string()], 10).unwrap();
    assert!(
        hits.iter().any(|(id, _)| *id == last_two[1].id),
        "the taught episode is in the full-text index"
    );
}

#[test]
fn an_export_folder_imports_into_a_new_store_with_the_same_heads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    sample_taught(&db);
    cli(&db, &["nightly", "--at", "2026-11-21T03:00:00Z"]);
    let out = dir.path().join("export");
    let said = cli(
        &db,
        &[
            "export",
            "--learner",
            "ana",
            "--out",
            out.to_str().unwrap(),
            "--at",
            "2026-11-21T00:00:00Z",
        ],
    );
    assert!(said.contains("importing it gives the same head"), "{said}");
    assert!(out.join("manifest.json").is_file());
    assert!(out.join("ana/cell-biology/history.jsonl").is_file());
    assert!(out.join("ana/cell-biology/beliefs.json").is_file());

    // A second export into the same folder is refused: nothing is mixed.
    let again = Command::new(env!("CARGO_BIN_EXE_tutor-memory"))
        .env("TUTOR_MEMORY_EMBEDDER", "hash")
        .arg("--db")
        .arg(&db)
        .args(["export", "--learner", "ana", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("not empty"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    let copy = dir.path().join("b.db");
    cli(&copy, &["import", out.to_str().unwrap()]);
    let head = |db: &std::path::Path| {
        let v: serde_json::Value =
            serde_json::from_str(&cli(db, &["checkpoint", "--subject", "ana/cell-biology"]))
                .unwrap();
        (v["seq"].clone(), v["head_hash"].clone())
    };
    assert_eq!(head(&db), head(&copy));
    let verified = cli(&copy, &["verify"]);
    assert!(verified.contains("intact"), "{verified}");
}

#[test]
fn a_history_named_by_its_bare_name_reads_its_files_from_the_current_folder() {
    // The README's first command, run from the history's own folder: the
    // history's parent is then empty, and its files' paths must still
    // resolve beside it.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bare.db");
    let folder = std::path::Path::new(common::SAMPLE).parent().unwrap();
    let out = common::tm(&db)
        .current_dir(folder)
        .args(["import", "history.jsonl"])
        .output()
        .unwrap();
    let said = common::succeeded(&["import", "history.jsonl"], out);
    assert!(said.contains("appended"), "{said}");

    // A file the history names that is missing: the error names the path tried.
    let elsewhere = dir.path().join("h");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("history.jsonl"),
        concat!(
            r#"{"type":"subject","learner":"ana","subject":"lost","title":"Lost"}"#,
            "\n",
            r#"{"type":"file","at":"2026-11-01T10:00:00Z","name":"missing.md","path":"files/missing.md"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = common::tm(&db)
        .current_dir(&elsewhere)
        .args(["import", "history.jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("files/missing.md"), "{err}");
    assert!(!err.contains("cannot read :"), "{err}");
}

#[test]
fn learner_names_are_per_owner_and_the_operator_says_whose() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("owners.db");
    cli(&db, &["import", common::SAMPLE]);
    cli(&db, &["keys", "create", "--tenant", "acme"]);
    let said = cli(&db, &["keys", "assign", "--tenant", "acme", "ana"]);
    assert!(said.contains("now belongs to tenant acme"), "{said}");
    // The operator makes an `ana` of its own: a second subject of that name.
    cli(&db, &["--owner", "-", "import", common::SAMPLE]);
    let ambiguous = common::run(&db, &["verify", "--subject", "ana/cell-biology"]);
    assert!(!ambiguous.status.success());
    let err = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(
        err.contains("tenant acme")
            && err.contains("the operator's own")
            && err.contains("--owner"),
        "{err}"
    );
    for owner in ["acme", "-"] {
        let ok = cli(
            &db,
            &["--owner", owner, "verify", "--subject", "ana/cell-biology"],
        );
        assert!(ok.contains("intact"), "{owner}: {ok}");
    }
    // Erasing `ana` must say whose; the operator's goes, acme's stays.
    let refused = common::run(&db, &["erase", "--learner", "ana"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("several owners"));
    cli(
        &db,
        &[
            "--owner",
            "-",
            "erase",
            "--learner",
            "ana",
            "--reference",
            "t1",
        ],
    );
    let acme = cli(
        &db,
        &["--owner", "acme", "verify", "--subject", "ana/cell-biology"],
    );
    assert!(
        acme.contains("intact") && !acme.contains("erased"),
        "{acme}"
    );
    // With the operator's own retired, the name means acme's again.
    let plain = cli(&db, &["verify", "--subject", "ana/cell-biology"]);
    assert!(!plain.contains("erased"), "{plain}");
}

/// An English subject of six explanations, for the embedder tests below.
fn english_subject(dir: &std::path::Path) -> std::path::PathBuf {
    let lines = [
        r#"{"type": "subject", "learner": "lin", "subject": "general-science", "title": "General science", "language": "en"}"#,
        r#"{"id": "t1", "type": "tutor", "at": "2026-10-01T09:00:00Z", "text": "Green leaves turn sunlight, water and carbon dioxide into glucose inside their chloroplasts; that is photosynthesis."}"#,
        r#"{"id": "t2", "type": "tutor", "at": "2026-10-02T09:00:00Z", "text": "In a right triangle the square of the hypotenuse equals the sum of the squares of the two legs: the Pythagorean theorem."}"#,
        r#"{"id": "t3", "type": "tutor", "at": "2026-10-03T09:00:00Z", "text": "Osmosis: water crosses a membrane toward the side with more dissolved salt, so a plant cell placed in fresh water swells up."}"#,
        r#"{"id": "t4", "type": "tutor", "at": "2026-10-04T09:00:00Z", "text": "Volcanoes erupt when molten rock, lighter than the solid rock around it, rises and gas pressure builds inside the magma chamber."}"#,
        r#"{"id": "t5", "type": "tutor", "at": "2026-10-05T09:00:00Z", "text": "When demand for a product grows while supply stays the same, sellers can raise its price."}"#,
        r#"{"id": "t6", "type": "tutor", "at": "2026-10-06T09:00:00Z", "text": "Ice floats because frozen water is less dense than liquid water: its molecules lock into an open lattice."}"#,
    ];
    let path = dir.join("science.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// `tutor-memory` with no embedder named (nothing inherited from the environment).
fn unnamed(db: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tutor-memory"));
    c.env_remove("TUTOR_MEMORY_EMBEDDER")
        .env_remove("TUTOR_MEMORY_MODEL_DIR")
        .arg("--db")
        .arg(db);
    c
}

/// `recall --json` of `question` on the science subject: the answer, and
/// what was printed on standard error.
fn recalled(c: &mut Command, question: &str) -> (serde_json::Value, String) {
    let out = c
        .args(["recall", "--subject", "lin/general-science"])
        .args(["--at", "2026-11-01T09:00:00Z", "--json", question])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&common::succeeded(&["recall"], out)).unwrap();
    (json, stderr)
}

/// The first memory `recall` gives for `question`, and the embedder it compared.
fn first_recalled(c: &mut Command, question: &str) -> (String, String) {
    let (json, _) = recalled(c, question);
    let text = json["ranked"][0]["episode"]["text"].as_str();
    (
        text.unwrap_or_default().to_string(),
        json["embedder"].as_str().unwrap_or_default().to_string(),
    )
}

/// Through the default embedder, with nothing named: a question in Spanish,
/// German, Italian or Indonesian, sharing no word with the English
/// explanation that answers it, finds that explanation first. The hashing
/// embedder, which matches words, finds none of them first (so the meaning is
/// what found them).
#[test]
fn the_default_finds_english_answers_to_questions_in_four_languages() {
    if let Err(e) = tm_embed::E5::load_default(None) {
        println!("skipped: the e5 model cannot be had here ({e})");
        return;
    }
    assert_eq!(
        tm_embed::EmbedderChoice::DEFAULT.model(),
        Some(tm_embed::E5::NAME)
    );
    let dir = tempfile::tempdir().unwrap();
    let history = english_subject(dir.path());
    let db = dir.path().join("default.db");
    let out = unnamed(&db).arg("import").arg(&history).output().unwrap();
    common::succeeded(&["import"], out);
    let hashed = dir.path().join("hashed.db");
    cli(&hashed, &["import", history.to_str().unwrap()]);

    let cases = [
        (
            "es",
            "¿Cómo fabrican su alimento las hojas verdes con la luz?",
            "photosynthesis",
        ),
        (
            "de",
            "Wie berechnet man die längste Seite eines rechtwinkligen Dreiecks?",
            "Pythagorean",
        ),
        (
            "it",
            "Perché una cellula vegetale si gonfia nell'acqua dolce?",
            "Osmosis",
        ),
        ("id", "Mengapa gunung berapi meletus?", "Volcanoes"),
    ];
    let mut words_alone = 0;
    // The default needs no note.
    let (json, stderr) = recalled(&mut unnamed(&db), "volcano");
    assert_eq!(json["embedder"], tm_embed::E5::NAME);
    assert!(!stderr.contains("keeps that embedder"), "{stderr}");
    for (lang, question, answer) in cases {
        let (first, embedder) = first_recalled(&mut unnamed(&db), question);
        assert_eq!(embedder, tm_embed::E5::NAME);
        assert!(
            first.contains(answer),
            "{lang}: {question:?} found {first:?} first"
        );
        let (first, _) = first_recalled(&mut common::tm(&hashed), question);
        words_alone += usize::from(first.contains(answer));
    }
    assert_eq!(
        words_alone, 0,
        "the hashing embedder should not find these by their words"
    );
}

/// A German learner's subject, in German: a question matches the episode
/// that answers it, and not those on other subjects, which e5 puts closer to
/// a German question (0.81–0.82) than to an English one; German's own floor
/// stops them where the default one would not.
#[test]
fn a_german_question_matches_no_german_episode_on_another_subject() {
    if let Err(e) = tm_embed::E5::load_default(None) {
        println!("skipped: the e5 model cannot be had here ({e})");
        return;
    }
    let lines = [
        r#"{"type": "subject", "learner": "lin", "subject": "general-science", "title": "Naturwissenschaften", "language": "de"}"#,
        r#"{"id": "t1", "type": "tutor", "at": "2026-10-01T09:00:00Z", "text": "Bei der Photosynthese wandeln Pflanzen Licht in chemische Energie um."}"#,
        r#"{"id": "t2", "type": "tutor", "at": "2026-10-02T09:00:00Z", "text": "Die Steigung ist der Höhenunterschied geteilt durch den waagerechten Abstand."}"#,
        r#"{"id": "t3", "type": "tutor", "at": "2026-10-03T09:00:00Z", "text": "Wasser kocht auf Meereshöhe bei 100 Grad."}"#,
        r#"{"id": "t4", "type": "tutor", "at": "2026-10-04T09:00:00Z", "text": "Newtons zweites Gesetz: Kraft ist Masse mal Beschleunigung."}"#,
        r#"{"id": "t5", "type": "tutor", "at": "2026-10-05T09:00:00Z", "text": "Die Französische Revolution begann 1789."}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("wissen.jsonl");
    std::fs::write(&history, lines.join("\n") + "\n").unwrap();
    let db = dir.path().join("de.db");
    common::succeeded(
        &["import"],
        unnamed(&db).arg("import").arg(&history).output().unwrap(),
    );
    for (question, answer) in [
        ("Wie funktioniert die Photosynthese?", "Photosynthese"),
        ("Wie berechnet man die Steigung?", "Steigung"),
    ] {
        let (json, _) = recalled(&mut unnamed(&db), question);
        let texts: Vec<&str> = json["ranked"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["episode"]["text"].as_str())
            .collect();
        assert!(
            texts.first().is_some_and(|t| t.contains(answer)),
            "{question:?} found {texts:?}"
        );
        for elsewhere in ["Wasser kocht", "Newtons", "Revolution"] {
            assert!(
                !texts.iter().any(|t| t.contains(elsewhere)),
                "{question:?} matched the episode on {elsewhere:?}: {texts:?}"
            );
        }
    }
}

/// A store made with MiniLM (the default until issue 45) keeps it when
/// opened with nothing named, and says so and how to move it: its vectors are
/// never ranked against a question embedded by the new default.
#[test]
fn a_store_made_with_minilm_keeps_it_and_says_so() {
    if let Err(e) = tm_embed::MiniLm::load_default(None) {
        println!("skipped: the MiniLM model cannot be had here ({e})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let history = english_subject(dir.path());
    let db = dir.path().join("minilm.db");
    let out = unnamed(&db)
        .args(["--embedder", "minilm", "import"])
        .arg(&history)
        .output()
        .unwrap();
    common::succeeded(&["import"], out);
    let (json, stderr) = recalled(&mut unnamed(&db), "Why does ice float?");
    assert_eq!(json["embedder"], tm_embed::MiniLm::DEFAULT_NAME);
    let kept = "vectors were made with all-MiniLM-L6-v2, so it keeps that embedder";
    assert!(stderr.contains(kept), "{stderr}");
    assert!(stderr.contains("reembed --embedder NAME"), "{stderr}");
    let first = json["ranked"][0]["episode"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(first.contains("Ice floats"), "{first}");
}

/// The hashing embedder is kept only when named: it is also what a model that
/// cannot be loaded falls back to. A store it made, opened with nothing named,
/// gets the default and says why, counting the vectors left to re-embed; a
/// `reembed` that would replace a store's vectors with hashing it was not
/// asked for is refused; named, hashing is used without a word.
#[test]
fn hashing_is_kept_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let history = english_subject(dir.path());
    let db = dir.path().join("hashed.db");
    cli(&db, &["import", history.to_str().unwrap()]);

    let (json, stderr) = recalled(&mut common::tm(&db), "volcano");
    assert_eq!(json["embedder"], tm_embed::HashEmbedder::NAME);
    assert!(stderr.is_empty(), "{stderr}");

    // A model folder without the model: the default falls back to hashing,
    // and a reembed with that stand-in is refused.
    let empty = dir.path().join("no-model");
    std::fs::create_dir_all(&empty).unwrap();
    let out = unnamed(&db)
        .arg("--model-dir")
        .arg(&empty)
        .arg("reembed")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("warning: could not load"), "{err}");
    assert!(
        err.contains("refusing to re-embed with the hashing embedder"),
        "{err}"
    );

    // Erasing an episode clears the caches of a recaller only if one was
    // made: it loads no model (none could be had here, and nothing warns).
    let out = unnamed(&db)
        .arg("--model-dir")
        .arg(&empty)
        .args(["erase", "--subject", "lin/general-science", "--seq", "6"])
        .args(["--reason", "a test", "--reference", "t-1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("could not load"), "{err}");

    let (json, stderr) = recalled(&mut unnamed(&db), "volcano");
    assert!(
        stderr.contains("which a store keeps only when it is named"),
        "{stderr}"
    );
    if json["embedder"] == tm_embed::HashEmbedder::NAME {
        println!("skipped the default model's half: it cannot be had here ({stderr})");
    } else {
        assert_eq!(
            Some(json["embedder"].as_str().unwrap_or_default()),
            tm_embed::EmbedderChoice::DEFAULT.model()
        );
        let other = "note: 5 of this store's episode vectors were made by another embedder";
        assert!(stderr.contains(other), "{stderr}");
    }
}
