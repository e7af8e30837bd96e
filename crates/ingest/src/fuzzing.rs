//! The PDF page/form walk's fuzz body (`fuzz/fuzz_targets/pdf_walk.rs`),
//! written once: libFuzzer calls it with generated inputs, and the project's
//! corpus replay (`crates/brain/tests/suite/fuzz_corpus.rs`) and a property test
//! (`tests/pages.rs`) run it on every `cargo test`.
//!
//! The bytes describe a small PDF rather than being one: a few pages and a
//! few text forms, each drawing others some number of times, with or
//! without resources of their own (a form without them uses its caller's).
//! The reader's answer is checked against an oracle that counts the same
//! work by plain recursion over the description: a form that draws itself
//! is a broken file; past a limit on operators, the file is refused naming
//! it; otherwise it reads, each page within its text bound.

use crate::{Error, Limits};
use pdf_extract::{Dictionary, Document, Object, ObjectId, Stream};

/// One content stream of the description: text lines and draws of forms.
#[derive(Debug, Clone, Default)]
struct Content {
    lines: u64,
    /// (form index, times)
    draws: Vec<(usize, u64)>,
}

impl Content {
    /// Its own operators: BT, Tf, Td, TL, a Tj and T* a line, ET; a Do a draw.
    fn operators(&self) -> u64 {
        5 + 2 * self.lines + self.draws.iter().map(|d| d.1).sum::<u64>()
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = b"BT /F1 10 Tf 72 720 Td 12 TL\n".to_vec();
        for i in 0..self.lines {
            out.extend_from_slice(format!("(line {i}) Tj T*\n").as_bytes());
        }
        out.extend_from_slice(b"ET\n");
        for &(form, times) in &self.draws {
            for _ in 0..times {
                out.extend_from_slice(format!("/X{form} Do\n").as_bytes());
            }
        }
        out
    }
}

/// A described document.
#[derive(Debug, Clone, Default)]
struct Described {
    pages: Vec<Content>,
    forms: Vec<(Content, bool)>, // (content, has resources of its own)
}

fn describe(data: &[u8]) -> Described {
    let mut bytes = data.iter().copied();
    let mut next = || bytes.next().unwrap_or(0);
    let n_pages = usize::from(next() % 4) + 1;
    let n_forms = usize::from(next() % 5);
    let content = |next: &mut dyn FnMut() -> u8| {
        let lines = u64::from(next() % 16);
        let draws = (0..next() % 4)
            .filter(|_| n_forms > 0)
            .map(|_| {
                let form = usize::from(next()) % n_forms.max(1);
                let times = u64::from(next()) * u64::from(next() % 8 + 1);
                (form, times)
            })
            .collect();
        Content { lines, draws }
    };
    let forms = (0..n_forms)
        .map(|_| {
            let own = next() % 2 == 0;
            (content(&mut next), own)
        })
        .collect();
    let pages = (0..n_pages).map(|_| content(&mut next)).collect();
    Described { pages, forms }
}

fn dict(entries: Vec<(&str, Object)>) -> Dictionary {
    let mut d = Dictionary::new();
    for (k, v) in entries {
        d.set(k, v);
    }
    d
}

/// The PDF the bytes `data` describe (see the module docs): for tests that
/// need a PDF of a given shape, such as a form drawn thousands of times.
pub fn pdf(data: &[u8]) -> Vec<u8> {
    build(&describe(data))
}

/// The PDF a description stands for.
fn build(d: &Described) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dict(vec![
        ("Type", Object::Name(b"Font".to_vec())),
        ("Subtype", Object::Name(b"Type1".to_vec())),
        ("BaseFont", Object::Name(b"Helvetica".to_vec())),
    ]));
    let form_ids: Vec<ObjectId> = d.forms.iter().map(|_| doc.new_object_id()).collect();
    let mut xobjects = Dictionary::new();
    for (i, id) in form_ids.iter().enumerate() {
        xobjects.set(format!("X{i}"), Object::Reference(*id));
    }
    let resources = dict(vec![
        (
            "Font",
            Object::Dictionary(dict(vec![("F1", Object::Reference(font))])),
        ),
        ("XObject", Object::Dictionary(xobjects)),
    ]);
    let resources_id = doc.add_object(resources);
    for ((content, own), id) in d.forms.iter().zip(&form_ids) {
        let mut fd = dict(vec![
            ("Type", Object::Name(b"XObject".to_vec())),
            ("Subtype", Object::Name(b"Form".to_vec())),
            (
                "BBox",
                Object::Array(vec![0.into(), 0.into(), 595.into(), 842.into()]),
            ),
        ]);
        if *own {
            fd.set("Resources", Object::Reference(resources_id));
        }
        doc.objects
            .insert(*id, Object::Stream(Stream::new(fd, content.encode())));
    }
    let kids: Vec<Object> = d
        .pages
        .iter()
        .map(|content| {
            let c = doc.add_object(Stream::new(Dictionary::new(), content.encode()));
            doc.add_object(dict(vec![
                ("Type", Object::Name(b"Page".to_vec())),
                ("Parent", Object::Reference(pages_id)),
                ("Contents", Object::Reference(c)),
            ]))
            .into()
        })
        .collect();
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dict(vec![
            ("Type", Object::Name(b"Pages".to_vec())),
            ("Kids", Object::Array(kids)),
            ("Count", Object::Integer(count)),
            ("Resources", Object::Reference(resources_id)),
            (
                "MediaBox",
                Object::Array(vec![0.into(), 0.into(), 595.into(), 842.into()]),
            ),
        ])),
    );
    let catalog = doc.add_object(dict(vec![
        ("Type", Object::Name(b"Catalog".to_vec())),
        ("Pages", Object::Reference(pages_id)),
    ]));
    doc.trailer.set("Root", catalog);
    doc.compress();
    let mut bytes = Vec::new();
    // Writing to memory cannot fail but for a bug in lopdf.
    let _ = doc.save_to(&mut bytes);
    bytes
}

/// The oracle: the operators one use of `form` runs, or `None` when it
/// draws itself (directly or not), by plain recursion over the description;
/// past `cap` the count stops growing (it only has to be compared with it).
fn form_operators(d: &Described, form: usize, path: &mut Vec<usize>, cap: u64) -> Option<u64> {
    if path.contains(&form) {
        return None;
    }
    path.push(form);
    let counted = draws_operators(d, &d.forms[form].0, path, cap);
    path.pop();
    counted.map(|c| c.min(cap))
}

fn draws_operators(d: &Described, c: &Content, path: &mut Vec<usize>, cap: u64) -> Option<u64> {
    let mut n = c.operators();
    for &(form, times) in &c.draws {
        if times == 0 {
            continue;
        }
        let one = form_operators(d, form, path, cap)?;
        n = n.saturating_add(one.saturating_mul(times)).min(cap);
    }
    Some(n)
}

/// The limits the body reads with: small, so the bounds are reached often.
pub fn limits() -> Limits {
    Limits {
        max_page_operators: 2_000,
        max_operators: 5_000,
        operators_per_byte: 20,
        max_decoded: u64::MAX,
        max_page_text: 4_096,
        max_text: 10_000,
        deadline: std::time::Duration::from_secs(600),
        ..Limits::default()
    }
}

/// Reads the PDF `data` describes and checks the answer against the oracle.
pub fn pdf_walk(data: &[u8]) {
    let d = describe(data);
    let bytes = build(&d);
    let limits = limits();
    let got = crate::read_pages_with("walk.pdf", &bytes, &limits);
    // What the oracle expects, page by page in order, as the reader checks.
    let cap = u64::MAX / 4;
    let file_budget = limits.operators_for(bytes.len() as u64);
    let mut file = 0u64;
    for (i, page) in d.pages.iter().enumerate() {
        let number = i + 1;
        let Some(ops) = draws_operators(&d, page, &mut Vec::new(), cap) else {
            match &got {
                Err(Error::BrokenFile { reason, .. }) => {
                    assert!(reason.contains("draws itself"), "page {number}: {reason}");
                    return;
                }
                other => panic!("page {number} draws a form that draws itself: {other:?}"),
            }
        };
        if ops > limits.max_page_operators {
            match &got {
                Err(Error::OverLimit { limit, .. }) => {
                    assert!(limit.contains("operators for one page"), "{limit}");
                    assert!(limit.contains(&format!("page {number}")), "{limit}");
                    return;
                }
                other => panic!("page {number} runs {ops} operators: {other:?}"),
            }
        }
        file = file.saturating_add(ops);
        if file > file_budget {
            match &got {
                Err(Error::OverLimit { limit, .. }) => {
                    assert!(limit.contains("operators for a file"), "{limit}");
                    return;
                }
                other => panic!("the file runs {file} operators by page {number}: {other:?}"),
            }
        }
    }
    match got {
        Ok(pages) => {
            assert_eq!(pages.pages.len(), d.pages.len());
            let total: usize = pages.pages.iter().map(String::len).sum();
            assert!(total as u64 <= limits.max_text, "{total} bytes of text");
            for p in &pages.pages {
                assert!(p.len() as u64 <= limits.max_page_text);
            }
        }
        Err(Error::OverLimit { limit, .. }) => {
            assert!(limit.contains("bytes of text"), "refused for {limit}");
        }
        Err(e) => panic!("an ordinary file was refused: {e}"),
    }
}
