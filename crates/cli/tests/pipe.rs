//! A one-shot command whose reader goes away (`tutor-memory log … | head`)
//! ends quietly, as `cat` does, instead of panicking in `println!`.

mod common;

#[cfg(unix)]
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p.db");
    common::sample_taught(&db);
    // The reading end is gone before the command writes a byte.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = common::tm(&db)
        .args(["log", "--subject", "ana/cell-biology"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.signal(), Some(13), "{:?}: {stderr}", out.status);
}
