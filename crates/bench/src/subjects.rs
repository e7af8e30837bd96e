//! The material generated histories are about: the shipped benchmark's
//! subjects (our own files under `examples/`, compiled in) or every chapter
//! file of a folder (the textbooks in tests).

use std::path::Path;

use crate::{Error, Result, io_err};

/// One subject's files, first file first.
#[derive(Debug, Clone)]
pub struct SubjectSource {
    pub slug: String,
    pub title: String,
    /// (name, text). The first file is the main one (it gets a revised
    /// version); a file named `notes.txt` is removed later in a history.
    pub files: Vec<(String, String)>,
    /// A revised text for the first file, when the subject ships one.
    pub revised: Option<String>,
}

macro_rules! ex {
    ($dir:literal, $file:literal) => {
        (
            $file.to_string(),
            include_str!(concat!("../../../examples/", $dir, "/files/", $file)).to_string(),
        )
    };
}

/// The subjects of the shipped benchmark: our own sample files.
pub fn shipped() -> Vec<SubjectSource> {
    vec![
        SubjectSource {
            slug: "cell-biology".into(),
            title: "Cell biology".into(),
            files: vec![
                ex!("cell-biology", "cells.md"),
                ex!("cell-biology", "transport.md"),
                ex!("cell-biology", "notes.txt"),
            ],
            revised: Some(
                include_str!("../../../examples/cell-biology/files/cells-v2.md").to_string(),
            ),
        },
        SubjectSource {
            slug: "photosynthesis".into(),
            title: "Photosynthesis".into(),
            files: vec![
                ex!("photosynthesis", "plants.md"),
                ex!("photosynthesis", "soil.md"),
                ex!("photosynthesis", "notes.txt"),
            ],
            revised: None,
        },
        SubjectSource {
            slug: "electric-circuits".into(),
            title: "Electric circuits".into(),
            files: vec![
                ex!("electric-circuits", "circuits.md"),
                ex!("electric-circuits", "safety.md"),
                ex!("electric-circuits", "notes.txt"),
            ],
            revised: None,
        },
        SubjectSource {
            slug: "fractions".into(),
            title: "Fractions".into(),
            files: vec![
                ex!("fractions", "fractions.md"),
                ex!("fractions", "decimals.md"),
                ex!("fractions", "notes.txt"),
            ],
            revised: None,
        },
        SubjectSource {
            slug: "water-cycle".into(),
            title: "The water cycle".into(),
            files: vec![
                ex!("water-cycle", "water.md"),
                ex!("water-cycle", "climate.md"),
                ex!("water-cycle", "notes.txt"),
            ],
            revised: None,
        },
    ]
}

/// One subject per Markdown or text file directly under each sub-folder of
/// `dir` (the textbooks' layout: `<topic>/<chapter>.md`), slug from the file
/// name. `SOURCE.md` and `README.md` are skipped.
pub fn from_dir(dir: &Path) -> Result<Vec<SubjectSource>> {
    let mut out = Vec::new();
    let mut topics: Vec<_> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    topics.sort();
    for topic in topics {
        let mut files: Vec<_> = std::fs::read_dir(&topic)
            .map_err(io_err(&topic))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                matches!(p.extension().and_then(|e| e.to_str()), Some("md" | "txt"))
                    && !matches!(
                        p.file_name().and_then(|n| n.to_str()),
                        Some("SOURCE.md" | "README.md")
                    )
            })
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(io_err(&f))?;
            let name = f
                .file_name()
                .and_then(|n| n.to_str())
                .ok_or_else(|| Error::Invalid(format!("{}: no file name", f.display())))?
                .to_string();
            let stem: String = name
                .trim_end_matches(".md")
                .trim_end_matches(".txt")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '-'
                    }
                })
                .collect();
            let slug: String = stem
                .chars()
                .take(40)
                .collect::<String>()
                .trim_matches('-')
                .to_string();
            out.push(SubjectSource {
                slug,
                title: name.clone(),
                files: vec![(name, text)],
                revised: None,
            });
        }
    }
    Ok(out)
}
