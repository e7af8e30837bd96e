//! The deterministic extractor: reads a file's own structure, no model.
//!
//! A file is read in paragraphs (consecutive lines joined, as Markdown does:
//! a hard-wrapped sentence is one sentence). Evidence, strongest first: an
//! entry in a key-term list or glossary ("- **osmosis**: diffusion of water
//! …"), a definition sentence ("**Osmosis** is the diffusion …", "… is called
//! **osmosis**", with cues per language from `tm-model`'s
//! `data/definition_cues/`), a heading whose paragraph explains it, a bold
//! term inside running text, and a heading that repeats the term.
//!
//! A heading is a concept when its first paragraph names it ("## Mitochondria"
//! / "Mitochondria release energy …", in any language, copula or not), or, in
//! a file with no bold term and no glossary (plain study notes), whenever it
//! has a paragraph. A heading that is a task ("Solve Equations with
//! Fractions", "Representing Linear Functions": its first word from
//! `data/instructions/`) or a section title never is.
//!
//! Sections whose heading is furniture (review questions, exercises…) and
//! feature boxes (block quotes), figures and tables are not read for concepts.
//! Every name goes through the map's validator, and every gist and definition
//! is whole: a sentence, two short ones, or a long one cut at a clause
//! boundary with an ellipsis ([`tm_model::map::fit_definition`]). The list is
//! bounded (most-evidenced first). builds_on: the other listed concepts a
//! concept's definition or gist mentions (for a heading's concept, the opening
//! of its paragraph). assumed: acronyms
//! ("ATP", "DNA") used in a definition that the file never defines;
//! deliberately conservative.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use tm_model::lang::{canonical_key, capitalise, same_word};
use tm_model::map::{
    ExtractedConcept, MAX_DEFINITION_CHARS, fit_definition, lexicon, validate_name,
};

use super::{ConceptExtractor, MAX_CONCEPTS, Result};

/// A first sentence shorter than this takes the next one into a definition
/// (when both fit the bound).
const SHORT_SENTENCE_CHARS: usize = 90;
/// Most prerequisites read from one definition.
const MAX_BUILDS_ON: usize = 5;
/// Most assumed prerequisites recorded per concept.
const MAX_ASSUMED: usize = 3;

#[derive(Debug, Clone)]
pub struct OfflineExtractor {
    pub max_concepts: usize,
}

impl Default for OfflineExtractor {
    fn default() -> Self {
        Self {
            max_concepts: MAX_CONCEPTS,
        }
    }
}

impl ConceptExtractor for OfflineExtractor {
    fn extract(&self, _file_name: &str, pages: &[String]) -> Result<Vec<ExtractedConcept>> {
        let mut reader = Reader::default();
        for (i, page) in pages.iter().enumerate() {
            reader.read_page(u32::try_from(i + 1).unwrap_or(u32::MAX), page, i == 0);
        }
        Ok(reader.finish(self.max_concepts))
    }
}

#[derive(Debug, Default)]
struct Candidate {
    name: String,
    /// The name came from a glossary (lowercase as a dictionary writes it).
    aliases: BTreeSet<String>,
    score: f64,
    pages: BTreeSet<u32>,
    /// First definition sentence from the running text.
    gist: Option<String>,
    /// Glossary definition.
    glossary: Option<String>,
    /// The first sentence that set the term in bold: the gist of last resort.
    seen_in: Option<String>,
    /// The opening of the paragraph under the concept's heading: its
    /// definition when no glossary gives one.
    lead: Option<String>,
    /// Seen bold, defined or in a glossary (a heading alone does not count).
    attested: bool,
    order: usize,
    mentions: usize,
}

struct Heading {
    title: String,
    page: u32,
    level: usize,
    body: Option<String>,
}

#[derive(Default)]
struct Reader {
    cands: Vec<Candidate>,
    by_key: BTreeMap<String, usize>,
    /// Headings in content sections, with the paragraph under each.
    headings: Vec<Heading>,
    /// The heading whose first paragraph is still to come.
    awaiting: Option<usize>,
    /// (term, page, sentence) of plain "X is a …" sentences.
    plain: Vec<(String, u32, String)>,
    /// Canonical running text, for mention counts.
    body: Vec<String>,
    /// Heading stack: (level, furniture, glossary).
    stack: Vec<(usize, bool, bool)>,
    structured: bool,
    /// Keys of aliases too short to route by ("IF"): not assumed, never matched.
    shadow: BTreeSet<String>,
}

impl Reader {
    fn read_page(&mut self, page: u32, text: &str, first: bool) {
        let mut lines = text.lines().peekable();
        if first && lines.peek().is_some_and(|l| l.trim() == "---") {
            lines.next();
            for l in lines.by_ref() {
                if l.trim() == "---" {
                    break;
                }
            }
        }
        // Paragraphs: consecutive lines of prose are one text; a heading, a
        // list item, a table row, a quote, a figure or a label stands alone.
        let mut para = String::new();
        for line in lines {
            let line = line.trim();
            let item = is_item(line) || self.glossary() && line.starts_with("**");
            if line.is_empty() || item || stands_alone(line) {
                self.paragraph(page, &mut para);
                if item {
                    para.push_str(line);
                } else if !line.is_empty() {
                    self.read_line(page, line);
                }
            } else {
                if !para.is_empty() {
                    para.push(' ');
                }
                para.push_str(line);
            }
        }
        self.paragraph(page, &mut para);
    }

    /// Reads the paragraph gathered so far (and empties it); the first prose
    /// paragraph under a heading is kept as that heading's body.
    fn paragraph(&mut self, page: u32, para: &mut String) {
        if para.is_empty() {
            return;
        }
        let text = std::mem::take(para);
        if !is_item(&text)
            && !self.furniture()
            && let Some(h) = self.awaiting.take()
        {
            self.headings[h].body = Some(text.clone());
        }
        self.read_line(page, &text);
    }

    fn furniture(&self) -> bool {
        self.stack.iter().any(|s| s.1)
    }

    fn glossary(&self) -> bool {
        self.stack.last().is_some_and(|s| s.2)
    }

    fn read_line(&mut self, page: u32, line: &str) {
        if line.is_empty() || line.starts_with("<!--") {
            return;
        }
        // Mentions count everywhere, questions and captions included: a term the
        // review questions keep asking about matters.
        self.body.push(canonical_key(&strip_markup(line)));
        if line.starts_with('|') || line.starts_with('>') {
            return;
        }
        if let Some(hashes) = heading_level(line) {
            let title = strip_number(line[hashes..].trim());
            let glossary = lexicon::is_glossary_title(&title);
            // "Chapter 3: Cells" is a container, not furniture: only unnumbered
            // titles ("Review Questions") close a section to reading.
            let furniture =
                glossary || lexicon::section_title(&title).is_some_and(|t| !t.contains('#'));
            while self.stack.last().is_some_and(|s| s.0 >= hashes) {
                self.stack.pop();
            }
            self.stack.push((hashes, furniture, glossary));
            self.awaiting = None;
            if !self.furniture() {
                self.awaiting = Some(self.headings.len());
                self.headings.push(Heading {
                    title: clean(&title),
                    page,
                    level: hashes,
                    body: None,
                });
            }
            return;
        }
        if self.glossary() {
            if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
                self.glossary_item(page, item);
            } else if line.starts_with("**") {
                self.glossary_item(page, line);
            }
            return;
        }
        if self.furniture() || line.starts_with("[Figure") || is_label(line) {
            return;
        }
        let line = line
            .strip_prefix("- ")
            .or_else(|| line.strip_prefix("* "))
            .unwrap_or(line);
        for sentence in sentences(line) {
            self.sentence(page, sentence);
        }
    }

    fn glossary_item(&mut self, page: u32, item: &str) {
        let (term, def) = if let Some(rest) = item.strip_prefix("**") {
            match rest.split_once("**") {
                Some((t, d)) => (
                    t.to_string(),
                    d.trim_start_matches([':', ' ', '\u{2014}', '-'])
                        .to_string(),
                ),
                None => return,
            }
        } else {
            match item.split_once(": ") {
                Some((t, d)) if t.split_whitespace().count() <= 6 => (t.to_string(), d.to_string()),
                _ => return,
            }
        };
        let (term, mut aliases) = split_name(&term);
        let (def, def_aliases) = definition_aliases(&term, def.trim());
        aliases.extend(def_aliases);
        let Some(i) = self.candidate(&term, &aliases, page) else {
            return;
        };
        self.structured = true;
        let c = &mut self.cands[i];
        c.score += 3.0;
        c.attested = true;
        if c.glossary.is_none() && !def.is_empty() {
            c.glossary = Some(def);
        }
        // A glossary writes names as a dictionary does: prefer its spelling.
        c.name = display(&term);
    }

    fn sentence(&mut self, page: u32, sentence: &str) {
        let plain = strip_markup(sentence);
        let words = canonical_words(&strip_parens(&plain));
        let mut rest = sentence;
        let mut any_bold = false;
        while let Some(start) = rest.find("**") {
            let after = &rest[start + 2..];
            let Some(end) = after.find("**") else { break };
            let raw = &after[..end];
            let run_in = start == 0 && raw.trim_end().ends_with(['.', ':']);
            rest = &after[end + 2..];
            if run_in {
                // "**Cálculo de la presión osmótica.** Suponiendo …": a run-in title.
                continue;
            }
            let (term, mut aliases) = split_name(raw);
            // "(plural = mitochondria)" right after the term names the same concept.
            if let Some(p) = rest.trim_start().strip_prefix('(')
                && let Some((inside, _)) = p.split_once(')')
            {
                aliases.extend(paren_alias(&term, inside));
            }
            let Some(i) = self.candidate(&term, &aliases, page) else {
                continue;
            };
            any_bold = true;
            self.structured = true;
            let key = canonical_key(&term);
            let defines = defines(&words, &key);
            let c = &mut self.cands[i];
            c.attested = true;
            c.score += 2.0;
            if c.seen_in.is_none() {
                c.seen_in = Some(gist(&plain));
            }
            if defines && c.gist.is_none() {
                c.gist = Some(gist(&plain));
                c.score += 2.0;
            }
            if c.name.chars().next().is_some_and(char::is_uppercase) && !defines {
                // Bold mid-sentence keeps the writer's case ("Golgi apparatus").
                c.name = display(&term);
            }
        }
        if !any_bold && let Some(term) = plain_definition(&plain) {
            self.plain.push((term, page, gist(&plain)));
        }
    }

    /// The candidate for `term` (found by key, alias or a plural variant), created when new.
    fn candidate(&mut self, term: &str, aliases: &[String], page: u32) -> Option<usize> {
        if validate_name(term).is_err() {
            return None;
        }
        let key = canonical_key(term);
        self.shadow.extend(aliases.iter().map(|a| canonical_key(a)));
        // An alias must be a name on its own: not "i", "π" or "if" (IF, interstitial fluid),
        // which would match everywhere in running text.
        let alias_keys: Vec<String> = aliases
            .iter()
            .filter(|a| validate_name(a).is_ok() && !lexicon::is_function_word(a))
            .map(|a| canonical_key(a))
            .filter(|a| !a.is_empty() && *a != key)
            .collect();
        let found = std::iter::once(&key)
            .chain(&alias_keys)
            .find_map(|k| self.find(k));
        let i = match found {
            Some(i) => i,
            None => {
                self.cands.push(Candidate {
                    name: display(term),
                    order: self.cands.len(),
                    ..Default::default()
                });
                self.cands.len() - 1
            }
        };
        for k in std::iter::once(key).chain(alias_keys) {
            self.by_key.entry(k.clone()).or_insert(i);
            if k != canonical_key(&self.cands[i].name) {
                self.cands[i].aliases.insert(k);
            }
        }
        self.cands[i].pages.insert(page);
        Some(i)
    }

    /// A heading with a paragraph: a concept when the paragraph names it, or
    /// in plain notes whenever it has one; its paragraph's opening becomes the
    /// gist (one whole sentence) and the definition (one or two).
    fn heading_concept(&mut self, h: &Heading) {
        let Some(body) = &h.body else { return };
        let (term, aliases) = split_name(&h.title);
        if validate_name(&term).is_err()
            || lexicon::is_glossary_title(&term)
            || lexicon::is_task_heading(&term)
        {
            return;
        }
        let plain = strip_markup(body);
        let words = canonical_words(&strip_parens(&plain));
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let named = std::iter::once(&term).chain(&aliases).any(|n| {
            let key = canonical_key(n);
            let key: Vec<&str> = key.split(' ').collect();
            occurrences(&words, &key) > 0
        });
        if !named && self.structured {
            return;
        }
        let Some(i) = self.candidate(&term, &aliases, h.page) else {
            return;
        };
        let sentences = sentences(&plain);
        let c = &mut self.cands[i];
        c.attested = true;
        c.score += if named { 2.0 } else { 1.5 };
        if c.gist.is_none()
            && let Some((gist_text, lead)) = opening(&sentences, &canonical_key(&term))
        {
            c.gist = Some(gist_text);
            c.lead = Some(lead);
        }
    }

    fn find(&self, key: &str) -> Option<usize> {
        if let Some(i) = variants(key)
            .iter()
            .find_map(|k| self.by_key.get(k).copied())
        {
            return Some(i);
        }
        // "membranas semipermeables" = "membrana semipermeable": word by word.
        let words: Vec<&str> = key.split(' ').collect();
        self.by_key.iter().find_map(|(k, &i)| {
            let kw: Vec<&str> = k.split(' ').collect();
            (kw.len() == words.len() && matches_at(&words, &kw)).then_some(i)
        })
    }

    fn finish(mut self, max: usize) -> Vec<ExtractedConcept> {
        let headings = std::mem::take(&mut self.headings);
        let titles = headings.iter().filter(|h| h.level == 1).count();
        for h in headings {
            if h.level >= 2
                && let Some(i) = self.find(&canonical_key(&h.title))
            {
                self.cands[i].score += 1.0;
                self.cands[i].pages.insert(h.page);
            }
            // One "# Title" is the file's title; several are its sections.
            if h.level >= 2 || titles >= 2 {
                self.heading_concept(&h);
            }
        }
        for (term, page, sentence) in std::mem::take(&mut self.plain) {
            let key = canonical_key(&term);
            let i = match self.find(&key) {
                Some(i) => i,
                None if !self.structured && validate_name(&term).is_ok() => {
                    self.cands.push(Candidate {
                        name: display(&term),
                        order: self.cands.len(),
                        ..Default::default()
                    });
                    self.by_key.insert(key, self.cands.len() - 1);
                    self.cands.len() - 1
                }
                None => continue,
            };
            let c = &mut self.cands[i];
            c.attested = true;
            c.pages.insert(page);
            if c.gist.is_none() {
                c.gist = Some(sentence);
                c.score += 1.5;
            }
        }
        let body: Vec<Vec<&str>> = self.body.iter().map(|l| l.split(' ').collect()).collect();
        for c in &mut self.cands {
            let owned: Vec<String> = std::iter::once(canonical_key(&c.name))
                .chain(c.aliases.iter().cloned())
                .collect();
            let keys: Vec<Vec<&str>> = owned.iter().map(|k| k.split(' ').collect()).collect();
            c.mentions = body
                .iter()
                .map(|line| keys.iter().map(|k| occurrences(line, k)).sum::<usize>())
                .sum();
            c.score += 0.2 * c.mentions.min(30) as f64;
            let key = canonical_key(&c.name);
            c.aliases.remove(&key);
        }
        let mut picked: Vec<&Candidate> = self.cands.iter().filter(|c| c.attested).collect();
        picked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
        picked.truncate(max);
        let known: BTreeSet<String> = self
            .cands
            .iter()
            .flat_map(|c| std::iter::once(canonical_key(&c.name)).chain(c.aliases.iter().cloned()))
            .chain(self.shadow.iter().cloned())
            .collect();
        let listed: Vec<(String, Vec<String>)> = picked
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    std::iter::once(canonical_key(&c.name))
                        .chain(c.aliases.iter().cloned())
                        .collect(),
                )
            })
            .collect();
        picked
            .iter()
            .map(|c| {
                let gist_text = c.gist.clone().unwrap_or_else(|| match &c.glossary {
                    // The map line already opens with the name ("- ATP: …"):
                    // the gist is the definition itself, as a sentence.
                    Some(d) => gist(&capitalise(d.trim())),
                    None => c.seen_in.clone().unwrap_or_default(),
                });
                let definition = c
                    .glossary
                    .clone()
                    .or_else(|| c.lead.clone())
                    .unwrap_or_else(|| gist_text.clone());
                let about = format!("{definition} {gist_text}");
                let own: BTreeSet<String> = std::iter::once(canonical_key(&c.name))
                    .chain(c.aliases.iter().cloned())
                    .collect();
                ExtractedConcept {
                    name: c.name.clone(),
                    gist: gist_text,
                    definition: fit_definition(&strip_markup(&definition)),
                    builds_on: mentioned(&about, &own, &listed),
                    assumed: acronyms(&about, &known),
                    pages: c.pages.iter().copied().collect(),
                    aliases: c.aliases.iter().cloned().collect(),
                }
            })
            .collect()
    }
}

/// Other listed concepts a text mentions, in order of first mention, longest match first.
fn mentioned(text: &str, own: &BTreeSet<String>, listed: &[(String, Vec<String>)]) -> Vec<String> {
    let words: Vec<String> = canonical_words(text);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut keys: Vec<(Vec<&str>, usize, bool)> = Vec::new();
    for (i, (_, ks)) in listed.iter().enumerate() {
        let is_own = ks.iter().any(|k| own.contains(k));
        for k in ks {
            keys.push((k.split(' ').collect(), i, is_own));
        }
    }
    keys.sort_by_key(|k| std::cmp::Reverse(k.0.len()));
    let mut out: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let hit = keys.iter().find(|(k, _, _)| matches_at(&words[at..], k));
        match hit {
            Some((k, i, is_own)) => {
                if !is_own && !out.contains(i) {
                    out.push(*i);
                }
                at += k.len();
            }
            None => at += 1,
        }
    }
    out.into_iter()
        .take(MAX_BUILDS_ON)
        .map(|i| listed[i].0.clone())
        .collect()
}

/// Acronyms the text uses that the file never defines.
fn acronyms(text: &str, known: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let upper = w.chars().filter(|c| c.is_uppercase()).count();
        let is_acronym = (2..=6).contains(&w.chars().count())
            && upper >= 2
            && w.chars()
                .all(|c| c.is_uppercase() || c.is_ascii_digit() || c.is_lowercase() && upper >= 3)
            && !w
                .chars()
                .all(|c| matches!(c, 'I' | 'V' | 'X' | 'L' | 'C' | 'D' | 'M'));
        if is_acronym && !known.contains(&canonical_key(w)) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out.truncate(MAX_ASSUMED);
    out
}

fn occurrences(line: &[&str], key: &[&str]) -> usize {
    (0..line.len())
        .filter(|&i| matches_at(&line[i..], key))
        .count()
}

/// `key` occurs at the start of `words`, each word allowing a plural ending.
fn matches_at(words: &[&str], key: &[&str]) -> bool {
    !key.is_empty()
        && words.len() >= key.len()
        && words.iter().zip(key).all(|(w, k)| same_word(w, k))
}

/// A key and its simple plural/singular variants (s, es); enough for the
/// languages whose plurals are suffixes, harmless for the rest.
fn variants(key: &str) -> Vec<String> {
    let mut v = vec![key.to_string(), format!("{key}s"), format!("{key}es")];
    if let Some(s) = key.strip_suffix("es") {
        v.push(s.to_string());
    }
    if let Some(s) = key.strip_suffix('s') {
        v.push(s.to_string());
    }
    v
}

/// Does this sentence (canonical words) define `key` by one of the cues?
fn defines(words: &[String], key: &str) -> bool {
    let key: Vec<&str> = key.split(' ').collect();
    let positions: Vec<usize> = (0..words.len())
        .filter(|&i| {
            words[i..].iter().zip(&key).filter(|(w, k)| w == k).count() == key.len()
                && words.len() - i >= key.len()
        })
        .collect();
    lexicon::definition_cues().iter().any(|cue| {
        positions.iter().any(|&p| {
            if cue.term_first {
                let after = &words[p + key.len()..];
                after.len() >= cue.words.len() && after.iter().zip(&cue.words).all(|(a, b)| a == b)
            } else {
                p >= cue.words.len()
                    && words[p - cue.words.len()..p]
                        .iter()
                        .zip(&cue.words)
                        .all(|(a, b)| a == b)
            }
        })
    })
}

/// "Osmosis is the diffusion …" without markup: the term before a term-first cue.
fn plain_definition(sentence: &str) -> Option<String> {
    let words = canonical_words(&strip_parens(sentence));
    let orig: Vec<&str> = sentence.split_whitespace().collect();
    for cue in lexicon::definition_cues().iter().filter(|c| c.term_first) {
        for p in 1..=5.min(words.len()) {
            let after = &words[p..];
            if after.len() >= cue.words.len() && after.iter().zip(&cue.words).all(|(a, b)| a == b) {
                let start = usize::from(lexicon::is_function_word(&words[0]));
                if start >= p || words[start..p].iter().any(|w| lexicon::is_function_word(w)) {
                    return None;
                }
                // Map back to the original spelling when word counts agree.
                let term = if orig.len() >= p && canonical_words(&orig[..p].join(" ")).len() == p {
                    orig[start..p].join(" ")
                } else {
                    words[start..p].join(" ")
                };
                return Some(
                    term.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_string(),
                );
            }
        }
    }
    None
}

fn canonical_words(text: &str) -> Vec<String> {
    canonical_key(text)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Splits running text at sentence ends (". ", "? ", "! "). One pass over
/// the text with two characters of look-ahead: a file's text is never copied
/// here, however long its one line.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if !matches!(c, '.' | '?' | '!') || c == '.' && abbreviation_before(text, at) {
            continue;
        }
        let mut rest = text[at + c.len_utf8()..].char_indices();
        let mut next = rest.next();
        // A closing mark after the stop belongs to the sentence.
        if next.is_some_and(|(_, n)| matches!(n, ')' | '"' | '\u{201d}')) {
            next = rest.next();
        }
        if let Some((k, ' ')) = next {
            let end = at + c.len_utf8() + k;
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The longest word looked at before a dot: no abbreviation is longer, and
/// looking further would make a line of dots quadratic.
const LONGEST_ABBREVIATION_BYTES: usize = 128;

/// Does the dot at byte `at` close an abbreviation ("e.g.", "z. B.", "Fig.")
/// rather than a sentence? A single letter or a word with a dot inside counts,
/// as does any entry of `data/abbreviations/`.
fn abbreviation_before(text: &str, at: usize) -> bool {
    let mut from = at.saturating_sub(LONGEST_ABBREVIATION_BYTES);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = &text[from..at];
    let Some(word) = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .filter(|w| w.len() < before.len() || from == 0)
    else {
        return false;
    };
    !word.is_empty()
        && word.chars().all(|c| c.is_alphabetic() || c == '.')
        && (word.chars().count() == 1 || word.contains('.') || lexicon::is_abbreviation(word))
}

/// The gist (the first whole sentence) and the definition (that sentence,
/// with the next when both are short enough) of a heading's paragraph. A
/// first sentence past the bound gives way to a later one that names the
/// concept; failing that it is cut at a clause boundary.
fn opening(sentences: &[&str], key: &str) -> Option<(String, String)> {
    let fits = |s: &str| s.chars().count() <= MAX_DEFINITION_CHARS;
    let first = *sentences.first()?;
    if !fits(first) {
        let names = |s: &&str| canonical_key(s).contains(key);
        let pick = sentences[1..].iter().find(|s| fits(s) && names(s));
        let one = gist(pick.copied().unwrap_or(first));
        return Some((one.clone(), one));
    }
    let one = gist(first);
    let two = match sentences.get(1) {
        Some(next) if first.chars().count() < SHORT_SENTENCE_CHARS => {
            let both = format!("{one} {}", gist(next));
            if fits(&both) { both } else { one.clone() }
        }
        _ => one.clone(),
    };
    Some((one, two))
}

/// A Markdown list item ("- ", "* ", "1. ").
fn is_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line.split_once(". ").is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
        })
}

/// The level of a Markdown heading line ("## Osmosis" → 2), if it is one.
fn heading_level(line: &str) -> Option<usize> {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    ((1..=6).contains(&hashes) && line[hashes..].starts_with(' ')).then_some(hashes)
}

/// A line that is never part of a paragraph: a heading, table row, quote,
/// comment, figure or label.
fn stands_alone(line: &str) -> bool {
    heading_level(line).is_some()
        || line.starts_with('|')
        || line.starts_with('>')
        || line.starts_with("<!--")
        || line.starts_with("[Figure")
        || is_label(line)
}

/// "3.1 The Cell Membrane" → "The Cell Membrane".
fn strip_number(title: &str) -> String {
    let mut words = title.split_whitespace().peekable();
    while words.peek().is_some_and(|w| {
        w.trim_end_matches([':', '.'])
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
    }) {
        words.next();
    }
    words.collect::<Vec<_>>().join(" ")
}

/// A line that is only a bold label ("**Exercise**", "**Learning Objectives**").
fn is_label(line: &str) -> bool {
    line.starts_with("**") && line.ends_with("**") && line[2..line.len() - 2].find("**").is_none()
        || line.starts_with('_') && line.ends_with('_')
}

/// Bold and italic marks and link stubs removed; a parenthesis a stripped
/// link left empty (" ()") goes too.
fn strip_markup(text: &str) -> Cow<'_, str> {
    // Each pattern is removed in turn, and the text copied only when it holds
    // one: most lines hold none, and a file's one long line is not copied at all.
    let mut out = Cow::Borrowed(text);
    for mark in ["**", "[see figure]", "[link]", "_", " ()"] {
        if out.contains(mark) {
            out = Cow::Owned(out.replace(mark, ""));
        }
    }
    out
}

fn strip_parens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

fn clean(text: &str) -> String {
    strip_markup(text)
        .trim()
        .trim_matches([':', '.', ',', ';'])
        .trim()
        .to_string()
}

/// "extracellular fluid (ECF)" → ("extracellular fluid", ["ECF"]).
fn split_name(raw: &str) -> (String, Vec<String>) {
    let raw = clean(raw);
    // "**La molalidad** es …": the article is not part of the name.
    let raw = match raw.split_once(' ') {
        Some((first, rest)) if lexicon::is_function_word(first) => rest.to_string(),
        _ => raw,
    };
    if let Some((name, rest)) = raw.split_once(" (") {
        let inside = rest.trim_end_matches(')').trim();
        let aliases = if inside.chars().count() <= 8 && !inside.contains(' ') {
            vec![inside.to_string()]
        } else {
            vec![]
        };
        return (name.trim().to_string(), aliases);
    }
    (raw, Vec::new())
}

/// "(singular: mitochondrion) the cellular organelles …; also known as plasma membrane"
/// → the definition without its alias notes, and the aliases.
fn definition_aliases(term: &str, def: &str) -> (String, Vec<String>) {
    let mut def = strip_markup(def).trim().to_string();
    let mut aliases = Vec::new();
    if def.starts_with('(')
        && let Some((inside, rest)) = def[1..].split_once(')')
    {
        aliases.extend(paren_alias(term, inside));
        def = rest.trim().to_string();
    }
    for marker in ["; also known as ", ", also known as ", "; also called "] {
        if let Some((head, tail)) = def.split_once(marker) {
            let alias = tail.trim().trim_end_matches('.').to_string();
            if validate_name(&alias).is_ok() {
                aliases.push(alias);
            }
            def = head.to_string();
        }
    }
    (def, aliases)
}

/// "plural = mitochondria", "singular: mitochondrion", "also, X": the alias, if short.
/// Only plural/singular forms (sharing the term's first four letters) are taken,
/// so "(endo = within)" is not.
fn paren_alias(term: &str, inside: &str) -> Option<String> {
    let (_, alias) = inside.split_once(['=', ':', ','])?;
    let alias = clean(alias);
    let stem = |s: &str| canonical_key(s).chars().take(4).collect::<String>();
    (alias.split_whitespace().count() <= 3
        && validate_name(&alias).is_ok()
        && stem(&alias) == stem(term))
    .then_some(alias)
}

/// Capitalises an all-lowercase name; keeps "pH", "mRNA", "Golgi apparatus".
fn display(term: &str) -> String {
    let term = clean(term);
    let mut chars = term.chars();
    match chars.next() {
        Some(f)
            if f.is_lowercase()
                && !term
                    .split(' ')
                    .next()
                    .unwrap_or("")
                    .chars()
                    .any(char::is_uppercase) =>
        {
            f.to_uppercase().chain(chars).collect()
        }
        _ => term,
    }
}

/// One sentence, markup removed, whole: ended with a full stop when it has no
/// end mark, cut at a clause boundary with an ellipsis when it is too long or
/// was cut off ([`fit_definition`]).
fn gist(sentence: &str) -> String {
    let mut s = fit_definition(&strip_markup(sentence));
    if !s.ends_with(['.', '?', '!', '\u{2026}']) {
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_at_stops_before_a_space_and_keep_closing_marks() {
        assert_eq!(
            sentences("Cells divide. They grow! Why? (It is so.) \"Yes.\" Done"),
            vec![
                "Cells divide.",
                "They grow!",
                "Why?",
                "(It is so.)",
                "\"Yes.\"",
                "Done"
            ]
        );
        assert_eq!(
            sentences("See e.g. the membrane. Then Fig. 2 shows it."),
            vec!["See e.g. the membrane.", "Then Fig. 2 shows it."]
        );
        assert_eq!(
            sentences("Zellen, z. B. Hefe. Ende."),
            vec!["Zellen, z. B. Hefe.", "Ende."]
        );
    }

    #[test]
    fn a_line_of_dots_or_one_long_word_is_read_in_linear_time() {
        // A look-behind to the start of the line at every dot would make this
        // take minutes.
        let dots = ".".repeat(2_000_000);
        assert_eq!(sentences(&dots), vec![dots.as_str()]);
        let word = format!("{}. Next.", "a".repeat(2_000_000));
        assert_eq!(sentences(&word).len(), 2);
    }
}
