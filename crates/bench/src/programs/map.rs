//! `bench map`: offline concept extraction time per file, and merging 1,000
//! concepts into one map.

use super::machine;
use crate::rng::Rng;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Instant;
use tm_ingest::extract::{ConceptExtractor, OfflineExtractor};
use tm_model::map::{ConceptMap, ExtractedConcept, teaching_order, validate_definition};

#[derive(Debug, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Markdown or text files to read (default: the files the face gives,
    /// the sample subject's for the CLI).
    pub files: Vec<PathBuf>,
    /// Also list each file's concepts: name, pages, builds-on and definition.
    #[cfg_attr(feature = "cli", arg(long))]
    pub concepts: bool,
}

/// `default`: (name, text) of the files read when `o.files` names none.
pub fn run(o: &Options, default: &[(&str, &str)]) -> Result<()> {
    println!("machine: {}", machine());
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    if o.files.is_empty() {
        for (name, text) in default {
            inputs.push((name.to_string(), text.as_bytes().to_vec()));
        }
    }
    for f in &o.files {
        inputs.push((
            f.display().to_string(),
            std::fs::read(f).with_context(|| format!("reading {}", f.display()))?,
        ));
    }
    println!(
        "| file | bytes | pages | concepts | whole definitions | read pages | extract (median of 5) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let x = OfflineExtractor::default();
    let mut listed: Vec<(String, Vec<ExtractedConcept>)> = Vec::new();
    for (name, bytes) in &inputs {
        let t = Instant::now();
        let pages = tm_ingest::read_pages(name, bytes)?;
        let read_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::new();
        let mut concepts = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            concepts = x.extract(name, &pages.pages)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let n = concepts.len();
        let whole = concepts
            .iter()
            .filter(|c| validate_definition(&c.definition).is_ok())
            .count();
        times.sort_by(f64::total_cmp);
        let short = std::path::Path::new(name)
            .file_name()
            .map(|f| f.to_string_lossy().to_string())
            .unwrap_or_default();
        println!(
            "| {short} | {} | {} | {n} | {whole}/{n} | {read_ms:.1} ms | {:.1} ms |",
            bytes.len(),
            pages.pages.len(),
            times[2]
        );
        listed.push((short, concepts));
    }
    if o.concepts {
        for (file, concepts) in &listed {
            println!("\n{file}: {} concepts", concepts.len());
            for c in concepts {
                println!(
                    "- {} (pages {:?}; builds on {:?})\n  {}",
                    c.name, c.pages, c.builds_on, c.definition
                );
            }
        }
    }
    // 1,000 concepts in 25 files of 40, each building on up to two earlier ones.
    let mut rng = Rng::new(7);
    let files: Vec<Vec<ExtractedConcept>> = (0..25)
        .map(|f| {
            (0..40)
                .map(|i| {
                    let id = f * 40 + i;
                    let builds_on = (0..rng.below(3))
                        .filter(|_| id > 0)
                        .map(|_| format!("Concept {}", rng.below(id.max(1))))
                        .collect();
                    ExtractedConcept {
                        name: format!("Concept {id}"),
                        gist: format!("Concept {id} is the {id}th idea of the course."),
                        definition: format!("the {id}th idea"),
                        builds_on,
                        assumed: vec![],
                        pages: vec![1 + (i as u32 % 9)],
                        aliases: vec![],
                    }
                })
                .collect()
        })
        .collect();
    let t = Instant::now();
    let mut map = ConceptMap::new();
    for (f, concepts) in files.iter().enumerate() {
        map.merge_file(
            &format!("file{f}.md"),
            Some(f as i64),
            concepts,
            &|_, _| 0.0,
            f32::INFINITY,
        );
    }
    let merge_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let order = teaching_order(&map);
    let order_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "\nmerge: {} concepts from 25 files in {merge_ms:.0} ms (keys only, PageRank and layers settled after each file); teaching order {order_ms:.1} ms, {} layers",
        map.len(),
        order.layers.len()
    );
    Ok(())
}
