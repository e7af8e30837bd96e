//! The sample subject shipped in `examples/` (compiled in, so the demo and
//! `bench map` run from anywhere): its history and the files it names.

/// (path relative to the history's folder, text).
pub const SAMPLE: &[(&str, &str)] = &[
    (
        "history.jsonl",
        include_str!("../../../examples/cell-biology/history.jsonl"),
    ),
    (
        "files/cells.md",
        include_str!("../../../examples/cell-biology/files/cells.md"),
    ),
    (
        "files/cells-v2.md",
        include_str!("../../../examples/cell-biology/files/cells-v2.md"),
    ),
    (
        "files/transport.md",
        include_str!("../../../examples/cell-biology/files/transport.md"),
    ),
    (
        "files/notes.txt",
        include_str!("../../../examples/cell-biology/files/notes.txt"),
    ),
];

/// Writes the sample into `dir`; returns the history file's path.
pub fn write(dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    for (name, text) in SAMPLE {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
    }
    Ok(dir.join("history.jsonl"))
}

/// The sample's files (not its history), for `bench map`.
pub fn files() -> Vec<(&'static str, &'static str)> {
    SAMPLE
        .iter()
        .filter(|(n, _)| n.starts_with("files/"))
        .copied()
        .collect()
}
