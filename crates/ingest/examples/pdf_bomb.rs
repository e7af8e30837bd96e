//! A compression bomb against the PDF reader: builds a one-page PDF whose
//! content stream inflates to N MiB of tiny drawing operators, reads it with
//! the given bound on one content stream (default: the library's), and
//! prints the file's size, the outcome and the time. Run under
//! `/usr/bin/time -f "%M KB"` to see the peak memory (BENCHMARKS.md).
//!
//! `cargo run --release -p tm-ingest --example pdf_bomb -- 30 [BYTES]`

use std::io::Write;

use lopdf::{Document, Object, Stream, dictionary};

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(30);
    let mut limits = tm_ingest::Limits::default();
    if let Some(bound) = args.next().and_then(|a| a.parse().ok()) {
        limits.max_content_inflated = bound;
        limits.max_inflated = bound.max(limits.max_inflated);
    }
    let mut content = b"BT /F1 12 Tf 72 720 Td (Bomb page) Tj ET\n".to_vec();
    while content.len() < mib * 1024 * 1024 {
        content.extend_from_slice(b"0 0 m ");
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&content).expect("compress");
    let packed = z.finish().expect("compress");

    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"},
    );
    let resources = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font}});
    let contents = doc.add_object(
        Stream::new(dictionary! {"Filter" => "FlateDecode"}, packed).with_compression(false),
    );
    let page = doc
        .add_object(dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => contents});
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("save");

    let started = std::time::Instant::now();
    let outcome = tm_ingest::read_pages_with("bomb.pdf", &bytes, &limits);
    println!(
        "{} bytes inflating to {mib} MiB, content bound {} bytes: {} in {:.1?}",
        bytes.len(),
        limits.max_content_inflated,
        match outcome {
            Ok(p) => format!("read ({} pages)", p.pages.len()),
            Err(e) => format!("refused ({e})"),
        },
        started.elapsed()
    );
}
