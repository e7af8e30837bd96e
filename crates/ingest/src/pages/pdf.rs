//! PDF pages: the text layer of each page of a PDF, in page order, without letting a
//! hostile or damaged file take the process down.
//!
//! Text comes from `pdf-extract` (ToUnicode maps, simple-font encodings such as
//! WinAnsi, CID fonts), page by page. That crate and the `lopdf` parser under it `unwrap`
//! freely and recurse through the page tree and form XObjects, so the reader:
//! - runs on its own thread with a large stack, every call inside `catch_unwind`, with
//!   the panic message kept out of stderr on that thread only (a hook installed once
//!   that defers to the previous hook on every other thread);
//! - rewrites, before extraction, the `'` and `"` text operators (next line, then show)
//!   into `T*` and `Tj`: pdf-extract ignores them, and Ghostscript and many typesetters
//!   draw every line after the first with them, so their text would silently vanish;
//! - refuses, before extraction, the cycles that would recurse forever (a page whose
//!   `Parent` chain loops, a form XObject that draws itself), since a stack overflow
//!   aborts the process and cannot be caught;
//! - bounds the work, not only the bytes: pdf-extract decodes, parses and runs a form
//!   XObject again at every `Do` that draws it, so before extraction the reader walks
//!   each page as pdf-extract will (every stream decoded and parsed once, its uses
//!   counted) and refuses a file whose pages would run more operators, or decode more
//!   content, than [`crate::Limits`] allow, however few bytes it weighs; the text a page
//!   and the file give is capped, and so is the time the pages take;
//! - empties image XObjects first: pdf-extract would decode an image drawn by `Do` and
//!   parse its pixels as content, which gives no text and costs the image's size at
//!   every use.
//!
//! A failure on any page fails the file ([`Error::BrokenFile`] naming the page): a file
//! with a silently missing page would shift every later citation.

use std::any::Any;
use std::cell::Cell;
use std::collections::{BTreeMap, HashSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use pdf_extract::content::{Content, Operation};
use pdf_extract::{Dictionary, Document, Object, ObjectId, PlainTextOutput};

use crate::{Error, Result};

/// Parser thread stack: legitimate files nest shallowly; this is margin, not a cure.
const PARSER_STACK: usize = 64 * 1024 * 1024;
/// Deepest `Parent` chain accepted (real page trees are a few levels deep).
const MAX_TREE_DEPTH: usize = 256;
/// Deepest chain of form XObjects drawing form XObjects accepted.
const MAX_XOBJECT_DEPTH: usize = 64;

/// Why the parser thread gave up, before the file name is attached.
enum Failure {
    Broken(String),
    Encrypted,
    TooManyPages(usize),
    Inflates,
    /// One of the limits on work, named.
    OverLimit(String),
}

pub(super) fn read(name: &str, bytes: &[u8], limits: &crate::Limits) -> Result<Vec<String>> {
    let max_pages = limits.max_pages;
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("tm-ingest-pdf".to_owned())
            .stack_size(PARSER_STACK)
            .spawn_scoped(scope, || extract(bytes, limits))
            .map(|handle| handle.join())
    });
    let failure = match outcome {
        Ok(Ok(Ok(pages))) => return Ok(pages),
        Ok(Ok(Err(failure))) => failure,
        Ok(Err(payload)) => Failure::Broken(format!(
            "the PDF reader failed: {}",
            panic_message(&*payload)
        )),
        Err(error) => Failure::Broken(format!("could not start the PDF reader: {error}")),
    };
    Err(match failure {
        Failure::Broken(reason) => Error::BrokenFile {
            name: name.to_owned(),
            reason,
        },
        Failure::Encrypted => Error::Encrypted {
            name: name.to_owned(),
        },
        Failure::TooManyPages(pages) => Error::TooManyPages {
            name: name.to_owned(),
            pages,
            limit: max_pages,
        },
        Failure::Inflates => Error::Inflates {
            name: name.to_owned(),
            limit: limits.max_inflated,
            content_limit: limits.max_content_inflated,
        },
        Failure::OverLimit(limit) => Error::OverLimit {
            name: name.to_owned(),
            limit,
        },
    })
}

fn extract(bytes: &[u8], limits: &crate::Limits) -> Result<Vec<String>, Failure> {
    let started = std::time::Instant::now();
    let max_pages = limits.max_pages;
    let mut doc = quietly(|| Document::load_mem(bytes))
        .map_err(|panic| Failure::Broken(format!("the PDF parser failed: {panic}")))?
        .map_err(|error| Failure::Broken(format!("cannot parse the PDF: {error}")))?;
    // lopdf opens files encrypted with an empty user password by itself and then drops
    // `/Encrypt`; one still there needs a password we do not have.
    if doc.is_encrypted() {
        return Err(Failure::Encrypted);
    }
    let pages = quietly(|| doc.get_pages())
        .map_err(|panic| Failure::Broken(format!("cannot walk the page tree: {panic}")))?;
    if pages.len() > max_pages {
        return Err(Failure::TooManyPages(pages.len()));
    }
    if pages.is_empty() {
        return Err(Failure::Broken("the PDF has no pages".to_owned()));
    }
    // Before anything inflates a stream without a bound (the operator
    // rewrite and the extractor both do).
    if !inflates_within(&doc, &pages, limits) {
        return Err(Failure::Inflates);
    }
    empty_images(&mut doc);
    quietly(|| expand_next_line_operators(&mut doc, &pages))
        .map_err(|panic| Failure::Broken(format!("cannot read the page contents: {panic}")))?;
    for (&number, &page_id) in &pages {
        check_recursion(&doc, page_id)
            .map_err(|why| Failure::Broken(format!("page {number}: {why}")))?;
    }
    let size = bytes.len() as u64;
    quietly(|| work_within(&doc, &pages, limits, size, started))
        .map_err(|panic| Failure::Broken(format!("cannot read the page contents: {panic}")))??;
    let mut texts = Vec::with_capacity(pages.len());
    let mut total = 0u64;
    for &number in pages.keys() {
        past_deadline(started, limits)?;
        let broken = |why: String| Failure::Broken(format!("page {number}: {why}"));
        let mut text = CappedText {
            bytes: Vec::new(),
            cap: usize::try_from(limits.max_page_text).unwrap_or(usize::MAX),
            over: false,
        };
        let read = quietly(|| {
            let mut output = PlainTextOutput::new(&mut text as &mut dyn std::io::Write);
            pdf_extract::output_doc_page(&doc, &mut output, number)
        })
        .map_err(|panic| broken(format!("the PDF reader failed: {panic}")))?;
        if text.over {
            return Err(Failure::OverLimit(format!(
                "{} bytes of text on one page (page {number} gives more)",
                limits.max_page_text
            )));
        }
        read.map_err(|error| broken(error.to_string()))?;
        // Only whole `&str`s were written: the bytes are UTF-8.
        let text = tidy(&String::from_utf8_lossy(&text.bytes));
        total += text.len() as u64;
        if total > limits.max_text {
            return Err(Failure::OverLimit(format!(
                "{} bytes of text in one file",
                limits.max_text
            )));
        }
        texts.push(text);
    }
    past_deadline(started, limits)?;
    Ok(texts)
}

/// Refuses a file whose reading began at `started` once it has taken longer
/// than its deadline.
fn past_deadline(started: std::time::Instant, limits: &crate::Limits) -> Result<(), Failure> {
    if started.elapsed() > limits.deadline {
        return Err(Failure::OverLimit(format!(
            "{} s of reading for one file",
            limits.deadline.as_secs_f64()
        )));
    }
    Ok(())
}

/// The text of one page as the reader writes it, refusing to grow past
/// `cap` bytes: the reader stops at the first refused write, so a page's
/// text never costs more than its bound.
struct CappedText {
    bytes: Vec<u8>,
    cap: usize,
    over: bool,
}

impl std::io::Write for CappedText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > self.cap {
            self.over = true;
            return Err(std::io::Error::other("past the page's text limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Replaces every image XObject's data with nothing: the text reader would
/// decode an image drawn by `Do` and parse its pixels as page content.
fn empty_images(doc: &mut Document) {
    for object in doc.objects.values_mut() {
        if let Object::Stream(stream) = object
            && stream.dict.get(b"Subtype").and_then(Object::as_name).ok()
                == Some(b"Image".as_slice())
        {
            stream.dict.remove(b"Filter");
            stream.dict.remove(b"DecodeParms");
            stream.set_plain_content(Vec::new());
        }
    }
}

/// What running one content stream costs, counted as pdf-extract spends it:
/// its decoded bytes and its operators, with those of every form it draws
/// at each `Do`.
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    bytes: u64,
    operators: u64,
}

impl Work {
    fn add(self, other: Work, times: u64) -> Work {
        Work {
            bytes: self.bytes.saturating_add(other.bytes.saturating_mul(times)),
            operators: self
                .operators
                .saturating_add(other.operators.saturating_mul(times)),
        }
    }
}

/// One stream decoded and parsed once: its own work (size, operators), and
/// the XObject names its `Do` operators draw, with how often.
struct Parsed {
    own: Work,
    draws: Vec<(Vec<u8>, u64)>,
}

fn parse_content(plain: &[u8]) -> Parsed {
    let mut draws: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut operators = 0u64;
    // pdf-extract unwraps the decode: a stream that does not parse fails its
    // page there, at no cost worth counting here.
    if let Ok(content) = Content::decode(plain) {
        operators = content.operations.len() as u64;
        for op in &content.operations {
            if op.operator == "Do"
                && let Some(Ok(name)) = op.operands.first().map(Object::as_name)
            {
                *draws.entry(name.to_vec()).or_default() += 1;
            }
        }
    }
    Parsed {
        own: Work {
            bytes: plain.len() as u64,
            operators,
        },
        draws: draws.into_iter().collect(),
    }
}

/// Refuses a file whose pages would make pdf-extract run more operators or
/// decode more content than `limits` allow, counting each form at every use;
/// each stream is decoded and parsed once here, and a form's work under a
/// given set of resources is summed once.
fn work_within(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    limits: &crate::Limits,
    size: u64,
    started: std::time::Instant,
) -> Result<(), Failure> {
    let max_operators = limits.operators_for(size);
    let mut walk = WorkWalk {
        doc,
        parsed: std::collections::HashMap::new(),
        summed: std::collections::HashMap::new(),
        path: Vec::new(),
    };
    let mut file = Work::default();
    for (&number, &page_id) in pages {
        past_deadline(started, limits)?;
        let Ok(page) = doc.get_dictionary(page_id) else {
            continue;
        };
        let content = doc.get_page_content(page_id).unwrap_or_default();
        let resources = inherited_resources(doc, page);
        let parsed = parse_content(&content);
        let work = walk
            .draws(&parsed, resources)
            .map_err(|why| Failure::Broken(format!("page {number}: {why}")))?;
        let page_work = parsed.own.add(work, 1);
        if page_work.operators > limits.max_page_operators {
            return Err(Failure::OverLimit(format!(
                "{} content operators for one page (page {number} would run {}, counting each form at every use)",
                limits.max_page_operators, page_work.operators
            )));
        }
        file = file.add(page_work, 1);
        if file.operators > max_operators {
            return Err(Failure::OverLimit(format!(
                "{max_operators} content operators for a file of {size} bytes, counting each form at every use ({} a byte, at least {}, at most {})",
                limits.operators_per_byte, limits.max_page_operators, limits.max_operators
            )));
        }
        if file.bytes > limits.max_decoded {
            return Err(Failure::OverLimit(format!(
                "{} bytes of content decoded for one file, counting each stream at every use",
                limits.max_decoded
            )));
        }
    }
    Ok(())
}

/// A page's resources, from it or the nearest ancestor that has them (as
/// pdf-extract inherits them).
fn inherited_resources<'a>(doc: &'a Document, page: &'a Dictionary) -> Option<&'a Dictionary> {
    let mut node = page;
    for _ in 0..MAX_TREE_DEPTH {
        if let Some(r) = dictionary(doc, node.get(b"Resources").ok()) {
            return Some(r);
        }
        let parent = node.get(b"Parent").and_then(Object::as_reference).ok()?;
        node = doc.get_dictionary(parent).ok()?;
    }
    None
}

struct WorkWalk<'a> {
    doc: &'a Document,
    /// Each stream parsed once, by its address in the document.
    parsed: std::collections::HashMap<usize, std::rc::Rc<Parsed>>,
    /// A form's work (its own and what it draws), by (form, resources).
    summed: std::collections::HashMap<(usize, usize), Work>,
    /// The forms being summed, to stop on a cycle.
    path: Vec<usize>,
}

impl<'a> WorkWalk<'a> {
    /// The work of what `content` draws under `resources`.
    fn draws(
        &mut self,
        content: &Parsed,
        resources: Option<&'a Dictionary>,
    ) -> Result<Work, String> {
        let mut work = Work::default();
        let Some(resources) = resources else {
            return Ok(work);
        };
        let Some(xobjects) = dictionary(self.doc, resources.get(b"XObject").ok()) else {
            return Ok(work);
        };
        for (name, times) in &content.draws {
            let Some(stream) = xobjects
                .get(name)
                .ok()
                .and_then(|v| resolve(self.doc, v))
                .and_then(|o| o.as_stream().ok())
            else {
                continue;
            };
            // Every form is summed whole (once per resources, so this stays
            // linear), past any bound too: a form that draws itself is found
            // wherever it is drawn.
            work = work.add(self.form(stream, resources)?, *times);
        }
        Ok(work)
    }

    /// The work of one use of `form`, drawn from `caller`'s resources.
    fn form(
        &mut self,
        form: &'a pdf_extract::Stream,
        caller: &'a Dictionary,
    ) -> Result<Work, String> {
        let node = std::ptr::from_ref(form) as usize;
        let resources = dictionary(self.doc, form.dict.get(b"Resources").ok()).unwrap_or(caller);
        let key = (node, std::ptr::from_ref(resources) as usize);
        if let Some(w) = self.summed.get(&key) {
            return Ok(*w);
        }
        // pdf-extract would recurse without end, and a stack overflow
        // cannot be caught.
        if self.path.contains(&node) {
            return Err("a form XObject draws itself".to_owned());
        }
        if self.path.len() >= MAX_XOBJECT_DEPTH {
            return Err("form XObjects nest too deeply".to_owned());
        }
        let parsed = match self.parsed.get(&node) {
            Some(p) => p.clone(),
            None => {
                // As pdf-extract reads a form: decompressed, else its raw bytes.
                let plain = if form.filters().is_ok() {
                    form.decompressed_content()
                        .unwrap_or_else(|_| form.content.clone())
                } else {
                    form.content.clone()
                };
                let p = std::rc::Rc::new(parse_content(&plain));
                self.parsed.insert(node, p.clone());
                p
            }
        };
        self.path.push(node);
        let inner = self.draws(&parsed, Some(resources));
        self.path.pop();
        let work = parsed.own.add(inner?, 1);
        self.summed.insert(key, work);
        Ok(work)
    }
}

/// Whether every compressed stream of the document (images left out: the
/// text reader never decodes them) inflates to at most the file's budget in
/// all, and each content stream (a page's, a form XObject's) to at most its
/// own, decoding with the filters lopdf would, through the budget.
fn inflates_within(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    limits: &crate::Limits,
) -> bool {
    let mut contents: HashSet<ObjectId> = HashSet::new();
    for &page in pages.values() {
        if let Ok(dict) = doc.get_dictionary(page) {
            match dict.get(b"Contents") {
                Ok(Object::Reference(id)) => {
                    contents.insert(*id);
                }
                Ok(Object::Array(parts)) => {
                    contents.extend(parts.iter().filter_map(|p| p.as_reference().ok()));
                }
                _ => {}
            }
        }
    }
    let mut left = limits.max_inflated;
    for (id, object) in &doc.objects {
        let Object::Stream(stream) = object else {
            continue;
        };
        let subtype = stream.dict.get(b"Subtype").and_then(Object::as_name).ok();
        let budget = if contents.contains(id) || subtype == Some(b"Form".as_slice()) {
            left.min(limits.max_content_inflated)
        } else {
            left
        };
        if subtype == Some(b"Image".as_slice()) {
            continue;
        }
        let Ok(filters) = stream.filters() else {
            continue; // not compressed: its size is the file's
        };
        let mut data = std::borrow::Cow::Borrowed(stream.content.as_slice());
        for filter in filters {
            let decoded = match filter {
                b"FlateDecode" => inflate_bounded(&data, budget),
                b"LZWDecode" => lzw_bounded(&data, budget, early_change(&stream.dict)),
                _ => break, // ASCII85 and the like shrink; unknown ones fail later
            };
            match decoded {
                Some(d) => data = std::borrow::Cow::Owned(d),
                None => return false,
            }
        }
        if !matches!(data, std::borrow::Cow::Borrowed(_)) {
            left = left.saturating_sub(data.len() as u64);
        }
    }
    true
}

/// At most `limit` bytes of a zlib (else raw deflate) stream; `None` past it.
/// A stream that does not decode is left for the reader to report.
fn inflate_bounded(input: &[u8], limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    let zlib = flate2::read::ZlibDecoder::new(input)
        .take(limit + 1)
        .read_to_end(&mut out);
    if zlib.is_err() && out.is_empty() && input.len() > 2 {
        let _ = flate2::read::DeflateDecoder::new(&input[2..])
            .take(limit + 1)
            .read_to_end(&mut out);
    }
    (out.len() as u64 <= limit).then_some(out)
}

/// `/DecodeParms /EarlyChange` (default 1), as lopdf reads it.
fn early_change(dict: &Dictionary) -> bool {
    dict.get(b"DecodeParms")
        .and_then(Object::as_dict)
        .and_then(|p| p.get(b"EarlyChange"))
        .and_then(Object::as_i64)
        .map_or(true, |v| v != 0)
}

/// At most `limit` bytes of an LZW stream (as lopdf decodes it); `None` past it.
fn lzw_bounded(input: &[u8], limit: u64, early_change: bool) -> Option<Vec<u8>> {
    let mut decoder = if early_change {
        weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
    } else {
        weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut rest = input;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let r = decoder.decode_bytes(rest, &mut buf);
        out.extend_from_slice(&buf[..r.consumed_out]);
        rest = &rest[r.consumed_in..];
        if out.len() as u64 > limit {
            return None;
        }
        match r.status {
            Ok(weezl::LzwStatus::Ok) if r.consumed_in > 0 || r.consumed_out > 0 => {}
            _ => return Some(out),
        }
    }
}

/// Rewrites `'` (`T*` then `Tj`) and `"` (`Tw`, `Tc`, `T*`, `Tj`) in the pages' content
/// streams and in every form XObject, the operators pdf-extract does not know. Streams
/// that do not decode are left alone for the extractor to report.
fn expand_next_line_operators(doc: &mut Document, pages: &BTreeMap<u32, ObjectId>) {
    let mut ids: Vec<ObjectId> = pages
        .values()
        .flat_map(|&page| doc.get_page_contents(page))
        .collect();
    ids.extend(doc.objects.iter().filter_map(|(&id, object)| {
        match object {
            Object::Stream(stream)
                if stream
                    .dict
                    .get(b"Subtype")
                    .and_then(Object::as_name)
                    .is_ok_and(|subtype| subtype == b"Form") =>
            {
                Some(id)
            }
            _ => None,
        }
    }));
    for id in ids {
        let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) else {
            continue;
        };
        let Ok(plain) = stream.get_plain_content() else {
            continue;
        };
        // Most streams have neither operator; skip decoding those twice.
        if !plain.iter().any(|&byte| byte == b'\'' || byte == b'"') {
            continue;
        }
        let Ok(content) = Content::decode(&plain) else {
            continue;
        };
        if !content
            .operations
            .iter()
            .any(|operation| operation.operator == "'" || operation.operator == "\"")
        {
            continue;
        }
        let mut operations = Vec::with_capacity(content.operations.len() * 2);
        for operation in content.operations {
            match operation.operator.as_str() {
                "'" => {
                    operations.push(Operation::new("T*", vec![]));
                    operations.push(Operation::new("Tj", operation.operands));
                }
                "\"" if operation.operands.len() == 3 => {
                    let mut operands = operation.operands.into_iter();
                    let (word, character, text) =
                        (operands.next(), operands.next(), operands.next());
                    operations.extend([
                        Operation::new("Tw", word.into_iter().collect()),
                        Operation::new("Tc", character.into_iter().collect()),
                        Operation::new("T*", vec![]),
                        Operation::new("Tj", text.into_iter().collect()),
                    ]);
                }
                _ => operations.push(operation),
            }
        }
        if let Ok(bytes) = (Content { operations }).encode() {
            stream.set_plain_content(bytes);
        }
    }
}

/// pdf-extract places text by position, so a page starts with the blank lines above
/// its first line and lines can end in spaces; neither is content.
fn tidy(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.join("\n").trim().to_owned()
}

/// Refuses a looping `Parent` chain, on which pdf-extract would recurse
/// without end looking for inherited attributes. (A form XObject that draws
/// itself is found by the work walk, which follows the `Do`s pdf-extract
/// will run: a form without resources of its own uses its caller's, so the
/// resources alone would refuse ordinary files.)
fn check_recursion(doc: &Document, page_id: ObjectId) -> Result<(), String> {
    let page = doc
        .get_dictionary(page_id)
        .map_err(|error| format!("not a page dictionary: {error}"))?;
    let mut seen = HashSet::from([page_id]);
    let mut node = page;
    while let Ok(parent) = node.get(b"Parent").and_then(Object::as_reference) {
        if !seen.insert(parent) || seen.len() > MAX_TREE_DEPTH {
            return Err("the page tree loops back on itself".to_owned());
        }
        let Ok(parent_dict) = doc.get_dictionary(parent) else {
            break;
        };
        node = parent_dict;
    }
    Ok(())
}

fn resolve<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Object> {
    doc.dereference(object).ok().map(|(_, object)| object)
}

fn dictionary<'a>(doc: &'a Document, object: Option<&'a Object>) -> Option<&'a Dictionary> {
    match resolve(doc, object?)? {
        Object::Dictionary(dictionary) => Some(dictionary),
        _ => None,
    }
}

thread_local! {
    /// Set while this thread runs parser code whose panics we catch and report.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning a panic into its message. The panic hook is process-wide, so ours
/// is installed once and stays silent only on a thread inside `quietly`.
fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET.with(|quiet| quiet.replace(true));
    // The document is only read, so a panic leaves nothing half-updated behind.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|quiet| quiet.set(was_quiet));
    result.map_err(|payload| panic_message(&*payload))
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
