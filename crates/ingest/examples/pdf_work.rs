//! Work bombs against the PDF reader: files of a few hundred bytes that ask
//! the text reader for seconds and hundreds of megabytes, because it decodes
//! and runs a stream again at every use. Builds one, reads it with the
//! library's limits (or none on work, `--unbounded`), and prints the file's
//! size, the outcome and the time. Run under `/usr/bin/time -f "%M KB"` for
//! the peak memory (BENCHMARKS.md).
//!
//! - `forms N`: one page drawing one 10 KB text form N times;
//! - `shared PAGES MIB`: PAGES pages sharing one content stream of MIB MiB;
//! - `file PATH`: a PDF from disk (what its pages cost, for comparison).
//!
//! `cargo run --release -p tm-ingest --example pdf_work -- forms 3000 [--unbounded]`

use std::io::Write;

use lopdf::{Document, Object, Stream, dictionary};

fn packed(content: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(content).expect("compress");
    z.finish().expect("compress")
}

/// A document of `pages` pages, each drawing `contents` (one stream, shared),
/// with Helvetica as /F1 and `xobjects` as the pages' XObjects.
fn document(pages: usize, contents: Vec<u8>, xobjects: lopdf::Dictionary) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"},
    );
    let mut xobjects = xobjects;
    for (_, v) in xobjects.iter_mut() {
        if let Object::Stream(s) = v {
            let id = doc.add_object(Object::Stream(s.clone()));
            *v = id.into();
        }
    }
    let resources = doc.add_object(dictionary! {
        "Font" => dictionary! {"F1" => font},
        "XObject" => xobjects,
    });
    let contents = doc.add_object(
        Stream::new(dictionary! {"Filter" => "FlateDecode"}, packed(&contents))
            .with_compression(false),
    );
    let kids: Vec<Object> = (0..pages)
        .map(|_| {
            doc.add_object(
                dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => contents},
            )
            .into()
        })
        .collect();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => pages as i64, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");
    bytes
}

/// One page drawing a 10 KB form of text `uses` times.
fn forms(uses: usize) -> Vec<u8> {
    let mut form = b"BT /F1 10 Tf 72 720 Td 12 TL\n".to_vec();
    while form.len() < 10 * 1024 {
        form.extend_from_slice(
            b"(The same line of a form, drawn again at every use of it.) Tj T*\n",
        );
    }
    form.extend_from_slice(b"ET\n");
    let form = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Form", "Filter" => "FlateDecode",
            "BBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        },
        packed(&form),
    )
    .with_compression(false);
    document(
        1,
        b"/X0 Do\n".repeat(uses),
        dictionary! {"X0" => Object::Stream(form)},
    )
}

/// `pages` pages sharing one content stream of `mib` MiB of text lines.
fn shared(pages: usize, mib: usize) -> Vec<u8> {
    let mut content = b"BT /F1 10 Tf 72 720 Td 12 TL\n".to_vec();
    while content.len() < mib * 1024 * 1024 {
        content.extend_from_slice(b"(A line of the stream every page shares.) Tj T*\n");
    }
    content.extend_from_slice(b"ET\n");
    document(pages, content, lopdf::Dictionary::new())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (what, bytes) = match args.first().map(String::as_str) {
        Some("shared") => {
            let (p, m) = (num(1, 10), num(2, 1));
            (format!("{p} pages sharing a {m} MiB stream"), shared(p, m))
        }
        Some("file") => {
            let path = args.get(1).expect("file PATH");
            (path.clone(), std::fs::read(path).expect("read the file"))
        }
        _ => {
            let n = num(1, 3000);
            (format!("one page drawing a 10 KB form {n} times"), forms(n))
        }
    };
    let mut limits = tm_ingest::Limits::default();
    if args.iter().any(|a| a == "--unbounded") {
        limits.max_page_operators = u64::MAX;
        limits.max_operators = u64::MAX;
        limits.max_decoded = u64::MAX;
        limits.max_page_text = u64::MAX;
        limits.max_text = u64::MAX;
        limits.deadline = std::time::Duration::MAX;
    }
    if let Ok(doc) = Document::load_mem(&bytes) {
        // The pages' own operators, forms not expanded: what ordinary files hold.
        let ops: Vec<usize> = doc
            .get_pages()
            .values()
            .map(|&p| {
                doc.get_page_content(p)
                    .ok()
                    .and_then(|c| lopdf::content::Content::decode(&c).ok())
                    .map_or(0, |c| c.operations.len())
            })
            .collect();
        println!(
            "pages' own operators: {} in all, {} on the busiest page, {:.1} a byte of the file",
            ops.iter().sum::<usize>(),
            ops.iter().max().unwrap_or(&0),
            ops.iter().sum::<usize>() as f64 / bytes.len() as f64
        );
    }
    let started = std::time::Instant::now();
    let outcome = tm_ingest::read_pages_with("work.pdf", &bytes, &limits);
    println!(
        "{what}: {} bytes: {} in {:.2?}",
        bytes.len(),
        match outcome {
            Ok(p) => format!(
                "read ({} pages, {} bytes of text)",
                p.pages.len(),
                p.pages.iter().map(String::len).sum::<usize>()
            ),
            Err(e) => format!("refused ({e})"),
        },
        started.elapsed()
    );
}
