//! Reading pages as an importer would: names and bytes in, pages or a clear error out.

use std::time::Instant;

use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use proptest::prelude::*;
use tm_ingest::{Error, FileFormat, Limits, Pages, pages_from_list, read_pages, read_pages_with};

// ---------------------------------------------------------------- PDFs made here

/// A PDF with one page per entry, each line of a page drawn in 12 pt Helvetica with
/// WinAnsiEncoding (so Latin-1 letters such as "ô" are representable), 14 pt apart like ordinary single spacing.
fn make_pdf(pages: &[&[&str]]) -> Vec<u8> {
    let mut doc = make_doc(pages);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn make_doc(pages: &[&[&str]]) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for lines in pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 12.into()]),
            Operation::new("TL", vec![14.into()]),
            Operation::new("Td", vec![72.into(), 720.into()]),
        ];
        for line in *lines {
            // WinAnsi agrees with Latin-1 for the letters used here.
            let bytes: Vec<u8> = line
                .chars()
                .map(|c| u8::try_from(c as u32).unwrap())
                .collect();
            operations.push(Operation::new("Tj", vec![Object::string_literal(bytes)]));
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(page_id.into());
    }
    let count = i64::try_from(kids.len()).unwrap();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    doc
}

fn three_pages() -> Vec<u8> {
    make_pdf(&[
        &["Page one talks about osmosis"],
        &["Page two explains diffusion", "across the cell membrane"],
        &["Page three is about mitosis"],
    ])
}

fn broken_reason(result: tm_ingest::Result<Pages>) -> String {
    match result {
        Err(Error::BrokenFile { name, reason }) => {
            assert_eq!(name, "book.pdf");
            reason
        }
        other => panic!("expected BrokenFile, got {other:?}"),
    }
}

// ---------------------------------------------------------------- Markdown and text

#[test]
fn markdown_without_form_feed_is_one_page() {
    let pages = read_pages("notes.md", b"# Osmosis\n\nWater moves across a membrane.\n").unwrap();
    assert_eq!(pages.format, FileFormat::Markdown);
    assert_eq!(
        pages.pages,
        ["# Osmosis\n\nWater moves across a membrane.\n"]
    );
}

#[test]
fn markdown_form_feeds_split_pages_in_order() {
    let pages = read_pages(
        "cells.markdown",
        b"# One\nosmosis\n\x0c# Two\ndiffusion\n\x0c# Three\n",
    )
    .unwrap();
    assert_eq!(pages.format, FileFormat::Markdown);
    assert_eq!(
        pages.pages,
        ["# One\nosmosis\n", "# Two\ndiffusion\n", "# Three\n"]
    );
    assert_eq!(pages.page(2), Some("# Two\ndiffusion\n"));
    assert_eq!(pages.page(0), None);
    assert_eq!(pages.page(4), None);
}

#[test]
fn trailing_form_feed_does_not_add_an_empty_page() {
    // pdftotext ends every page, the last one included, with a form feed.
    let pages = read_pages("book.txt", b"first\n\x0csecond\n\x0c").unwrap();
    assert_eq!(pages.pages, ["first\n", "second\n"]);
    // An empty page in the middle is a real page and keeps later numbers right.
    let pages = read_pages("book.txt", b"first\x0c\x0cthird").unwrap();
    assert_eq!(pages.pages, ["first", "", "third"]);
    assert_eq!(pages.blank_pages(), [2]);
}

#[test]
fn text_with_bom_and_crlf_reads_as_lf_without_bom() {
    let pages = read_pages(
        "notes.TXT",
        b"\xEF\xBB\xBFline one\r\nline two\r\n\x0cpage two\rold mac\r\n",
    )
    .unwrap();
    assert_eq!(pages.format, FileFormat::Text);
    assert_eq!(pages.pages, ["line one\nline two\n", "page two\nold mac\n"]);
}

#[test]
fn extension_decides_markdown_case_insensitively_and_nothing_else_does() {
    assert_eq!(FileFormat::detect("A.MD", b"x"), FileFormat::Markdown);
    assert_eq!(FileFormat::detect("notes.md.txt", b"x"), FileFormat::Text);
    assert_eq!(FileFormat::detect("README", b"# title"), FileFormat::Text);
    // Content wins over the name for PDF.
    assert_eq!(
        FileFormat::detect("scan.md", b"%PDF-1.7\n"),
        FileFormat::Pdf
    );
    assert_eq!(
        FileFormat::detect("scan.bin", b"%PDF-1.7\n"),
        FileFormat::Pdf
    );
}

#[test]
fn utf16_with_bom_is_converted() {
    let text = "Mitocôndria\r\n\u{c}Zelle – Membran 🧬";
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let be: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
        .collect();
    for bytes in [le, be] {
        let pages = read_pages("notas.md", &bytes).unwrap();
        assert_eq!(pages.pages, ["Mitocôndria\n", "Zelle – Membran 🧬"]);
    }
}

#[test]
fn broken_utf16_names_the_offset() {
    // BOM, "A", then a lone high surrogate at byte 4.
    let bytes = [0xFF, 0xFE, b'A', 0, 0x00, 0xD8, b'B', 0];
    match read_pages("n.txt", &bytes) {
        Err(Error::InvalidText { offset, reason, .. }) => {
            assert_eq!(offset, 4);
            assert!(reason.contains("surrogate"), "{reason}");
        }
        other => panic!("expected InvalidText, got {other:?}"),
    }
    assert!(matches!(
        read_pages("n.txt", &[0xFF, 0xFE, b'A']),
        Err(Error::InvalidText { offset: 2, .. })
    ));
}

#[test]
fn invalid_utf8_is_an_error_with_file_offset_and_line() {
    // "é" in Latin-1 (0xE9) on the second line, after a UTF-8 BOM.
    let bytes = b"\xEF\xBB\xBFcaf\xC3\xA9\ncaf\xE9 au lait\n";
    let error = read_pages("menu.txt", bytes).unwrap_err();
    match &error {
        Error::InvalidText {
            name, offset, line, ..
        } => {
            assert_eq!(name, "menu.txt");
            assert_eq!(*offset, 12);
            assert_eq!(*line, 2);
        }
        other => panic!("expected InvalidText, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("menu.txt") && message.contains("byte 12") && message.contains("0xE9"),
        "{message}"
    );
}

#[test]
fn binary_content_is_not_text() {
    let error = read_pages("image.txt", b"GIF89a\0\0\x01").unwrap_err();
    assert!(
        matches!(error, Error::InvalidText { offset: 6, .. }),
        "{error:?}"
    );
}

#[test]
fn a_pdf_name_without_pdf_content_is_broken() {
    let reason = broken_reason(read_pages("book.pdf", b"just some text"));
    assert!(reason.contains("%PDF-"), "{reason}");
}

#[test]
fn inline_pages_are_kept_as_given() {
    let pages = pages_from_list(vec![
        "one\r\ntwo".to_owned(),
        String::new(),
        "three".to_owned(),
    ]);
    assert_eq!(pages.format, FileFormat::Text);
    assert_eq!(pages.pages, ["one\ntwo", "", "three"]);
}

#[test]
fn limits_refuse_large_files_and_too_many_pages() {
    let limits = Limits {
        max_bytes: 10,
        max_pages: 2,
        ..Limits::default()
    };
    match read_pages_with("big.txt", b"eleven byte", &limits) {
        Err(Error::TooLarge {
            size: 11,
            limit: 10,
            ..
        }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(read_pages_with("ok.txt", b"a\x0cb", &limits).is_ok());
    match read_pages_with("many.txt", b"a\x0cb\x0cc", &limits) {
        Err(Error::TooManyPages {
            pages: 3, limit: 2, ..
        }) => {}
        other => panic!("expected TooManyPages, got {other:?}"),
    }
    let pdf = three_pages();
    let limits = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    assert!(matches!(
        read_pages_with("book.pdf", &pdf, &limits),
        Err(Error::TooManyPages { pages: 3, .. })
    ));
    assert_eq!(Limits::default().max_bytes, 50 * 1024 * 1024);
    assert_eq!(Limits::default().max_pages, 5_000);
}

// ---------------------------------------------------------------- PDF

#[test]
fn pdf_pages_come_back_in_order_with_their_text() {
    // Named .txt on purpose: the %PDF- magic decides.
    let pages = read_pages("book.txt", &three_pages()).unwrap();
    assert_eq!(pages.format, FileFormat::Pdf);
    assert_eq!(
        pages.pages,
        [
            "Page one talks about osmosis",
            "Page two explains diffusion\nacross the cell membrane",
            "Page three is about mitosis",
        ]
    );
    assert!(pages.blank_pages().is_empty());
}

#[test]
fn pdf_latin_letters_survive_through_winansi() {
    let pdf = make_pdf(&[
        &["Mitocôndria é a usina da célula"],
        &["Zellatmung: Glukose für Energie"],
    ]);
    let pages = read_pages("biologia.pdf", &pdf).unwrap();
    assert_eq!(
        pages.pages,
        [
            "Mitocôndria é a usina da célula",
            "Zellatmung: Glukose für Energie"
        ]
    );
}

#[test]
fn pdf_page_without_text_is_an_empty_page_reported_as_blank() {
    let pdf = make_pdf(&[&["Cover text"], &[], &["Last page"]]);
    let pages = read_pages("scan.pdf", &pdf).unwrap();
    assert_eq!(pages.pages, ["Cover text", "", "Last page"]);
    assert_eq!(pages.blank_pages(), [2]);
}

#[test]
fn hundred_page_pdf_reads_every_page() {
    let lines: Vec<[String; 2]> = (1..=100)
        .map(|n| {
            [
                format!("Chapter {n} on osmosis and diffusion"),
                format!("Water crosses membrane number {n}"),
            ]
        })
        .collect();
    let refs: Vec<Vec<&str>> = lines
        .iter()
        .map(|pair| pair.iter().map(String::as_str).collect())
        .collect();
    let pages: Vec<&[&str]> = refs.iter().map(Vec::as_slice).collect();
    let pdf = make_pdf(&pages);
    let started = Instant::now();
    let read = read_pages("long.pdf", &pdf).unwrap();
    let elapsed = started.elapsed();
    eprintln!(
        "read {} PDF pages ({} bytes) in {elapsed:?}",
        read.len(),
        pdf.len()
    );
    assert_eq!(read.len(), 100);
    for (n, text) in (1..=100).zip(&read.pages) {
        assert_eq!(
            text,
            &format!("Chapter {n} on osmosis and diffusion\nWater crosses membrane number {n}")
        );
    }
}

#[test]
fn truncated_pdf_is_broken_not_a_panic() {
    let pdf = three_pages();
    for keep in [pdf.len() / 2, pdf.len() - 40, 9] {
        broken_reason(read_pages("book.pdf", &pdf[..keep]));
    }
}

#[test]
fn garbage_after_the_header_is_broken() {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    broken_reason(read_pages("book.pdf", &bytes));
}

#[test]
fn a_parser_panic_is_a_broken_file_naming_the_page() {
    // pdf-extract `expect`s a MediaBox; without one it panics inside the reader.
    let mut doc = make_doc(&[&["Fine page"], &["Page without a box"]]);
    let pages_id = doc
        .catalog()
        .unwrap()
        .get(b"Pages")
        .unwrap()
        .as_reference()
        .unwrap();
    doc.get_dictionary_mut(pages_id)
        .unwrap()
        .remove(b"MediaBox");
    let (_, first) = doc.get_pages().into_iter().next().unwrap();
    doc.get_dictionary_mut(first)
        .unwrap()
        .set("MediaBox", vec![0.into(), 0.into(), 612.into(), 792.into()]);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let reason = broken_reason(read_pages("book.pdf", &bytes));
    assert!(
        reason.contains("page 2") && reason.contains("MediaBox"),
        "{reason}"
    );
}

#[test]
fn a_page_tree_that_loops_is_broken_not_a_stack_overflow() {
    let mut doc = make_doc(&[&["Looping page"]]);
    let (_, page_id) = doc.get_pages().into_iter().next().unwrap();
    // The page becomes its own parent: inherited attributes would be looked up forever.
    doc.get_dictionary_mut(page_id)
        .unwrap()
        .set("Parent", page_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let result = read_pages("book.pdf", &bytes);
    assert!(
        matches!(result, Err(Error::BrokenFile { .. })),
        "{result:?}"
    );
}

#[test]
fn a_form_xobject_that_draws_itself_is_broken_not_a_stack_overflow() {
    let mut doc = make_doc(&[&["Before the loop"]]);
    let form_id = doc.new_object_id();
    let form = Stream::new(
        dictionary! {
            "Type" => "XObject",
            "Subtype" => "Form",
            "BBox" => vec![0.into(), 0.into(), 10.into(), 10.into()],
            "Resources" => dictionary! { "XObject" => dictionary! { "X1" => form_id } },
        },
        b"/X1 Do".to_vec(),
    );
    doc.objects.insert(form_id, Object::Stream(form));
    let (_, page_id) = doc.get_pages().into_iter().next().unwrap();
    let content_id = doc.add_object(Stream::new(dictionary! {}, b"/X1 Do".to_vec()));
    let page = doc.get_dictionary_mut(page_id).unwrap();
    page.set("Contents", content_id);
    page.set(
        "Resources",
        dictionary! { "XObject" => dictionary! { "X1" => form_id } },
    );
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let reason = broken_reason(read_pages("book.pdf", &bytes));
    assert!(
        reason.contains("page 1") && reason.contains("XObject"),
        "{reason}"
    );
}

#[test]
fn a_pdf_with_a_user_password_is_encrypted_and_one_without_reads() {
    use lopdf::{EncryptionState, EncryptionVersion, Permissions};
    let encrypt = |user_password: &str| {
        let mut doc = make_doc(&[&["Secret osmosis notes"]]);
        doc.trailer.set(
            "ID",
            vec![
                Object::string_literal(b"0123456789abcdef".to_vec()),
                Object::string_literal(b"0123456789abcdef".to_vec()),
            ],
        );
        let version = EncryptionVersion::V2 {
            document: &doc,
            owner_password: "owner",
            user_password,
            key_length: 128,
            permissions: Permissions::PRINTABLE,
        };
        let state = EncryptionState::try_from(version).unwrap();
        doc.encrypt(&state).unwrap();
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    };
    match read_pages("locked.pdf", &encrypt("secret")) {
        Err(error @ Error::Encrypted { .. }) => assert!(error.to_string().contains("locked.pdf")),
        other => panic!("expected Encrypted, got {other:?}"),
    }
    let pages = read_pages("restricted.pdf", &encrypt("")).unwrap();
    assert_eq!(pages.pages, ["Secret osmosis notes"]);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever follows the magic, the reader answers with pages or an error.
    #[test]
    fn random_bytes_after_the_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut bytes = b"%PDF-".to_vec();
        bytes.extend(tail);
        let _ = read_pages("fuzz.pdf", &bytes);
    }

    /// Damage to a real PDF (bytes overwritten anywhere) never panics either.
    #[test]
    fn corrupted_real_pdf_never_panics(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16)) {
        let mut bytes = three_pages();
        for (index, byte) in edits {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        let _ = read_pages("fuzz.pdf", &bytes);
    }
}

// ---------------------------------------------------------------- PDFs from other writers

/// fpdf2 with an embedded DejaVu subset (CID font, Identity-H, ToUnicode), as office
/// suites write PDFs; made once by `fixtures/pages/make_fpdf2.py`.
#[test]
fn fpdf2_pdf_with_embedded_unicode_font_reads_per_page() {
    let bytes = include_bytes!("fixtures/pages/fpdf2-dejavu.pdf");
    let pages = read_pages("fpdf2-dejavu.pdf", bytes).unwrap();
    assert_eq!(pages.format, FileFormat::Pdf);
    assert_eq!(
        pages.pages,
        [
            "Osmosis: water crosses a membrane\ntowards the side with more solute.",
            "Mitocôndria é a usina de energia da célula.\nRibossomos fazem proteínas.",
            "Zellatmung – Glukose wird zu Energie, außerdem Wärme.\nΕλληνικά: το κύτταρο.",
        ]
    );
}

/// `'` and `"` (next line, then show) carry every line after the first in many
/// typesetters' output; pdf-extract alone drops that text.
#[test]
fn next_line_show_operators_keep_their_text() {
    let mut doc = make_doc(&[&["First line"]]);
    let (_, page_id) = doc.get_pages().into_iter().next().unwrap();
    let content =
        b"BT /F1 12 Tf 14 TL 72 720 Td (First line) Tj (Second line) ' 1 0 (Third line) \" ET";
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.to_vec()));
    doc.get_dictionary_mut(page_id)
        .unwrap()
        .set("Contents", content_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let pages = read_pages("lines.pdf", &bytes).unwrap();
    assert_eq!(pages.pages, ["First line\nSecond line\nThird line"]);
}

/// Ghostscript's pdfwrite from PostScript (`fixtures/pages/gs-latin1.ps`): embedded
/// Type1C subsets re-encoded to WinAnsi, and a page with a drawing but no text.
#[test]
fn ghostscript_pdf_reads_per_page_and_reports_the_drawing_as_blank() {
    let bytes = include_bytes!("fixtures/pages/gs-latin1.pdf");
    let pages = read_pages("gs-latin1.pdf", bytes).unwrap();
    assert_eq!(
        pages.pages,
        [
            // 20 pt below an 11 pt line: pdf-extract reads a gap over 1.5 lines as a paragraph.
            "Photosynthesis turns light into sugar\n\nin the chloroplasts of plant cells.",
            "Mitocôndria produz ATP para a célula.\nDie Zellmembran schützt das Innere.",
            "",
            "Last page: the nucleus holds DNA.",
        ]
    );
    assert_eq!(pages.blank_pages(), [3]);
}

/// A small PDF whose content stream inflates to far more than it weighs (a
/// compression bomb, Flate or LZW) is refused before anything inflates it
/// without a bound; under the bound the same file reads.
#[test]
fn a_pdf_that_inflates_past_the_bound_is_refused_before_it_is_read() {
    use std::io::Write;
    // 4 MB of content: one line of text, then spaces (valid, and it compresses ~1000:1).
    let mut content = b"BT /F1 12 Tf 72 720 Td (Bomb page) Tj ET\n".to_vec();
    content.resize(4 * 1024 * 1024, b' ');
    let flate = {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&content).unwrap();
        z.finish().unwrap()
    };
    let lzw = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .encode(&content)
        .unwrap();
    for (filter, packed) in [("FlateDecode", flate), ("LZWDecode", lzw)] {
        let mut doc = make_doc(&[&["placeholder"]]);
        let page = *doc.get_pages().values().next().unwrap();
        let contents = doc
            .get_dictionary(page)
            .unwrap()
            .get(b"Contents")
            .unwrap()
            .as_reference()
            .unwrap();
        doc.objects.insert(
            contents,
            Object::Stream(
                Stream::new(dictionary! { "Filter" => filter }, packed.clone())
                    .with_compression(false),
            ),
        );
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        assert!(bytes.len() < 200 * 1024, "{filter}: {} bytes", bytes.len());
        let small = Limits {
            max_inflated: 1024 * 1024,
            ..Limits::default()
        };
        match read_pages_with("bomb.pdf", &bytes, &small) {
            Err(e @ Error::Inflates { .. }) => {
                assert!(e.to_string().contains("inflate"), "{e}");
            }
            other => panic!("{filter}: expected Inflates, got {other:?}"),
        }
        let pages = read_pages_with("bomb.pdf", &bytes, &Limits::default()).unwrap();
        assert!(
            pages.pages[0].contains("Bomb page"),
            "{filter}: {:?}",
            pages.pages
        );
        // One page's content past its own bound, the file's budget aside.
        let one_page = Limits {
            max_content_inflated: 1024 * 1024,
            ..Limits::default()
        };
        assert!(
            matches!(
                read_pages_with("bomb.pdf", &bytes, &one_page),
                Err(Error::Inflates { .. })
            ),
            "{filter}"
        );
    }
    assert_eq!(Limits::default().max_inflated, 64 * 1024 * 1024);
    assert_eq!(Limits::default().max_content_inflated, 4 * 1024 * 1024);
}

// ---------------------------------------------------------------- work bombs

/// The object `key` of dictionary `id` refers to.
fn reference(doc: &Document, id: lopdf::ObjectId, key: &[u8]) -> lopdf::ObjectId {
    doc.get_dictionary(id)
        .unwrap()
        .get(key)
        .unwrap()
        .as_reference()
        .unwrap()
}

/// A page drawing one text form `uses` times; the form has resources of its
/// own when `own_resources`, else uses the page's (which list it). The PDF,
/// and how many lines the form draws.
fn form_reuse(uses: usize, own_resources: bool) -> (Vec<u8>, usize) {
    use std::io::Write;
    let mut doc = make_doc(&[&["placeholder"]]);
    let page = *doc.get_pages().values().next().unwrap();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let mut form = b"BT /F1 10 Tf 72 720 Td 12 TL\n".to_vec();
    while form.len() < 10 * 1024 {
        form.extend_from_slice(b"(The same line of a form, drawn at every use.) Tj T*\n");
    }
    form.extend_from_slice(b"ET\n");
    let lines = form.windows(4).filter(|w| w == b") Tj").count();
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&form).unwrap();
    let mut form_dict = dictionary! {
        "Type" => "XObject", "Subtype" => "Form", "Filter" => "FlateDecode",
        "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
    };
    if own_resources {
        form_dict.set(
            "Resources",
            dictionary! { "Font" => dictionary! { "F1" => font_id } },
        );
    }
    let form_id = doc.add_object(Object::Stream(
        Stream::new(form_dict, z.finish().unwrap()).with_compression(false),
    ));
    let content_id = doc.add_object(Stream::new(dictionary! {}, b"/X0 Do\n".repeat(uses)));
    let p = doc.get_dictionary_mut(page).unwrap();
    p.set("Contents", content_id);
    p.set(
        "Resources",
        dictionary! {
            "Font" => dictionary! { "F1" => font_id },
            "XObject" => dictionary! { "X0" => form_id },
        },
    );
    doc.compress();
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    (bytes, lines)
}

/// A kilobyte that asks for a form to be run three thousand times is refused
/// before the reader runs it, naming the limit; the same form drawn a few
/// times reads, with or without resources of its own.
#[test]
fn a_form_drawn_thousands_of_times_is_refused_naming_the_limit() {
    let (bomb, _) = form_reuse(3000, true);
    assert!(bytes_under(&bomb, 2048));
    match read_pages("reuse.pdf", &bomb) {
        Err(e @ Error::OverLimit { .. }) => {
            let said = e.to_string();
            assert!(said.contains("content operators for one page"), "{said}");
            assert!(said.contains("counting each form at every use"), "{said}");
        }
        other => panic!("expected OverLimit, got {other:?}"),
    }
    for own in [true, false] {
        let (pdf, lines) = form_reuse(3, own);
        let pages = read_pages("reuse.pdf", &pdf).unwrap();
        assert_eq!(
            pages.pages[0].matches("The same line of a form").count(),
            3 * lines,
            "own resources: {own}"
        );
    }
}

fn bytes_under(bytes: &[u8], n: usize) -> bool {
    bytes.len() < n
}

/// Ten pages sharing one large content stream: the file's work is counted at
/// every use of the stream, and bounded by the file's size.
#[test]
fn pages_sharing_one_large_stream_are_refused_by_the_files_work() {
    let refs = vec!["A line of the stream every page shares."; 20_000];
    let mut doc = make_doc(&[&refs]);
    let page = *doc.get_pages().values().next().unwrap();
    let contents = doc
        .get_dictionary(page)
        .unwrap()
        .get(b"Contents")
        .unwrap()
        .clone();
    let pages_id = reference(&doc, page, b"Parent");
    let mut kids = vec![Object::Reference(page)];
    for _ in 0..9 {
        kids.push(
            doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => contents.clone() })
                .into(),
        );
    }
    let pages_dict = doc.get_dictionary_mut(pages_id).unwrap();
    pages_dict.set("Kids", kids);
    pages_dict.set("Count", 10);
    doc.compress();
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    match read_pages("shared.pdf", &bytes) {
        Err(e @ Error::OverLimit { .. }) => {
            assert!(e.to_string().contains("operators for a file of"), "{e}");
        }
        other => panic!("expected OverLimit, got {other:?}"),
    }
    // One page of it alone is an ordinary long page, within every bound.
    let one = make_pdf(&[&refs[..2_000]]);
    assert_eq!(read_pages("one.pdf", &one).unwrap().pages.len(), 1);
}

/// Text past a page's bound, or the file's, is refused while the reader
/// writes it; a deadline of zero refuses any PDF.
#[test]
fn text_and_time_are_bounded_and_named() {
    let bytes = three_pages();
    let small_page = Limits {
        max_page_text: 8,
        ..Limits::default()
    };
    let e = read_pages_with("t.pdf", &bytes, &small_page).unwrap_err();
    assert!(e.to_string().contains("8 bytes of text on one page"), "{e}");
    let small_file = Limits {
        max_text: 40,
        ..Limits::default()
    };
    let e = read_pages_with("t.pdf", &bytes, &small_file).unwrap_err();
    assert!(
        e.to_string().contains("40 bytes of text in one file"),
        "{e}"
    );
    let no_time = Limits {
        deadline: std::time::Duration::ZERO,
        ..Limits::default()
    };
    let e = read_pages_with("t.pdf", &bytes, &no_time).unwrap_err();
    assert!(e.to_string().contains("s of reading for one file"), "{e}");
    assert!(read_pages("t.pdf", &bytes).is_ok());
}

/// An image drawn by `Do` gives no text and costs nothing: its pixels are
/// never parsed as page content (a flate image of a megabyte, drawn 500
/// times, reads).
#[test]
fn an_image_drawn_many_times_is_not_parsed_as_content() {
    use std::io::Write;
    let mut doc = make_doc(&[&["Text beside a picture"]]);
    let page = *doc.get_pages().values().next().unwrap();
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![7u8; 1024 * 1024]).unwrap();
    let image = doc.add_object(Object::Stream(
        Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => 1024, "Height" => 1024,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8, "Filter" => "FlateDecode",
            },
            z.finish().unwrap(),
        )
        .with_compression(false),
    ));
    let contents = reference(&doc, page, b"Contents");
    let Object::Stream(s) = doc.objects.get_mut(&contents).unwrap() else {
        panic!("contents")
    };
    let mut plain = s.content.clone();
    plain.extend(b"\nq 10 0 0 10 0 0 cm /Im0 Do Q\n".repeat(500));
    s.set_plain_content(plain);
    let pages_id = reference(&doc, page, b"Parent");
    let shared = reference(&doc, pages_id, b"Resources");
    let mut resources = doc.get_dictionary(shared).unwrap().clone();
    resources.set("XObject", dictionary! { "Im0" => image });
    doc.get_dictionary_mut(page)
        .unwrap()
        .set("Resources", resources);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    let pages = read_pages("picture.pdf", &bytes).unwrap();
    assert!(
        pages.pages[0].contains("Text beside a picture"),
        "{:?}",
        pages.pages
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The page/form walk against its oracle (the fuzz target's body), on
    /// random descriptions of small PDFs.
    #[test]
    fn the_page_and_form_walk_agrees_with_its_oracle(data in prop::collection::vec(any::<u8>(), 0..48)) {
        tm_ingest::fuzzing::pdf_walk(&data);
    }
}
