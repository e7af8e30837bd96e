//! Time windows: which stretch of the learner's calendar does a question ask
//! about? "What did we cover in July?" becomes the half-open interval of
//! instants `[1 July 00:00, 1 August 00:00)` in the learner's time zone, so
//! recall can run inside it first (docs/mechanisms.md §3, "Time is a filter, not a hint").
//!
//! # What is recognised
//! * **Month names**, with or without a year ("in July", "im Juli 2025",
//!   "julio de 2025", "a luglio", "pada bulan Juli", "في تموز ٢٠٢٥"), from CLDR
//!   data through ICU4X (see `months.rs` for which names and forms). A month
//!   without a year is its most recent occurrence that has begun by the
//!   turn's instant: asked on 29 November, "November" is this November and
//!   "December" last December.
//! * **Relative phrases** ("yesterday", "last week", "letzte Woche", "el mes
//!   pasado", "الأسبوع الماضي", …) from `data/time/<lang>.txt`. Weeks start on
//!   Monday (ISO 8601), whatever the learner's locale. "This week/month/year"
//!   is the whole calendar unit, including the part still to come.
//! * **A bare year** ("in 2025", "im Jahr 2025", "pada tahun 2025", "عام ٢٠٢٥"):
//!   four digits (ASCII or Arabic-Indic) between 1900 and 2200, right after a
//!   `prep` word of any language, unless "1" stands before that word
//!   ("1 in 2000 births" is a ratio); right after a month name (optionally
//!   with a `link` word such as "de" between) it is that month's year instead.
//!
//! # Avoiding false positives
//! Matching is on whole words after `lang::canonical_key` folding. A month
//! name that is also an ordinary word ("may", "march", French "mars", Arabic
//! "مارس", Italian "mai" = "never", listed `weak` in the data files) counts only right before a year,
//! right after a `prep` of its own language ("in May", "en mars"), or, in a
//! language that capitalises month names, capitalised but not opening a
//! sentence ("the March exam"): "May I ask…", "march forward" and "Mars is a
//! planet" are not windows. Abbreviations ("Sept", "ago", "out") count only
//! right before a year. No numeric dates are read: "the date of the exam"
//! and "15/07" give nothing.
//!
//! # Several expressions
//! The most specific one wins (a day over a week over a month over a year);
//! among equally specific ones, the first. Two combinations are understood: a
//! month without its own year next to "this year"/"last year" takes that year
//! ("in July last year"); and two months joined by an `and` word of the data
//! files ("in March and April", "im März und im April", "مارس وأبريل") are one
//! window from the first day of the one to the last of the other, described
//! "March–April 2026" (a month without a year takes the other's, and the first
//! is the one before the second; a `weak` month name counts right after that
//! `and`). "Or" joins nothing: "in July or in August" is July. LongMemEval's
//! "in March and April" was read as March alone.

mod months;
mod words;

use std::collections::HashSet;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Days, LocalResult, Months, NaiveDate, TimeDelta, TimeZone, Utc};
use chrono_tz::Tz;
use unicode_normalization::char::is_combining_mark;

use crate::lang::canonical_key;

use months::{MonthTable, Strength};
use words::{Meaning, Unit, Words};

/// A half-open stretch of time `[from, to)` and how the learner named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub from: DateTime<Utc>,
    /// Excluded: the first instant after the window.
    pub to: DateTime<Utc>,
    pub kind: WindowKind,
    /// The first and last calendar days covered, in the learner's time zone
    /// (what [`Window::describe`] names; `from`/`to` are those days' bounds in UTC).
    pub first_day: NaiveDate,
    pub last_day: NaiveDate,
}

/// The calendar unit a window spans and, for relative phrases, how it was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowKind {
    Day,
    Week,
    Month,
    Year,
    Today,
    Yesterday,
    ThisWeek,
    LastWeek,
    ThisMonth,
    LastMonth,
    ThisYear,
    LastYear,
    /// Two months joined by "and" ("in March and April"): from the first
    /// day of the one to the last of the other.
    Months,
}

impl WindowKind {
    /// The plain unit: `LastWeek` → `Week`.
    pub fn unit(self) -> WindowKind {
        use WindowKind::*;
        match self {
            Day | Today | Yesterday => Day,
            Week | ThisWeek | LastWeek => Week,
            Month | ThisMonth | LastMonth | Months => Month,
            Year | ThisYear | LastYear => Year,
        }
    }

    fn specificity(self) -> u8 {
        match self.unit() {
            WindowKind::Day => 3,
            WindowKind::Week => 2,
            WindowKind::Month => 1,
            _ => 0,
        }
    }
}

impl Window {
    /// Whether `t` falls inside `[from, to)`.
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        self.from <= t && t < self.to
    }

    /// An English phrase for sentences like "There is no record of any work
    /// with this student in {describe}.": "July 2026", "2025", "the week of
    /// 16 Nov 2026", "last week (16–22 Nov 2026)", "yesterday (28 Nov 2026)".
    pub fn describe(&self) -> String {
        let day = |d: NaiveDate| d.format("%-d %b %Y").to_string();
        let month = |d: NaiveDate| d.format("%B %Y").to_string();
        let year = |d: NaiveDate| d.year().to_string();
        let span = day_span(self.first_day, self.last_day);
        match self.kind {
            WindowKind::Day => day(self.first_day),
            WindowKind::Today => format!("today ({})", day(self.first_day)),
            WindowKind::Yesterday => format!("yesterday ({})", day(self.first_day)),
            WindowKind::Week => format!("the week of {}", day(self.first_day)),
            WindowKind::ThisWeek => format!("this week ({span})"),
            WindowKind::LastWeek => format!("last week ({span})"),
            WindowKind::Month => month(self.first_day),
            WindowKind::ThisMonth => format!("this month ({})", month(self.first_day)),
            WindowKind::LastMonth => format!("last month ({})", month(self.first_day)),
            WindowKind::Year => year(self.first_day),
            WindowKind::ThisYear => format!("this year ({})", year(self.first_day)),
            WindowKind::LastYear => format!("last year ({})", year(self.first_day)),
            WindowKind::Months if self.first_day.year() == self.last_day.year() => {
                format!("{}–{}", self.first_day.format("%B"), month(self.last_day))
            }
            WindowKind::Months => format!("{} – {}", month(self.first_day), month(self.last_day)),
        }
    }

    /// The learner's calendar day `date` in `tz`.
    pub fn day(date: NaiveDate, tz: Tz) -> Option<Window> {
        Window::local(
            WindowKind::Day,
            date,
            date.checked_add_days(Days::new(1))?,
            tz,
        )
    }

    /// The Monday-to-Sunday week holding `date`.
    pub fn week_of(date: NaiveDate, tz: Tz) -> Option<Window> {
        let monday =
            date.checked_sub_days(Days::new(date.weekday().num_days_from_monday().into()))?;
        Window::local(
            WindowKind::Week,
            monday,
            monday.checked_add_days(Days::new(7))?,
            tz,
        )
    }

    /// Calendar month `month` (1 = January) of `year`.
    pub fn month(year: i32, month: u32, tz: Tz) -> Option<Window> {
        let first = NaiveDate::from_ymd_opt(year, month, 1)?;
        Window::local(
            WindowKind::Month,
            first,
            first.checked_add_months(Months::new(1))?,
            tz,
        )
    }

    /// Calendar year `year`.
    pub fn year(year: i32, tz: Tz) -> Option<Window> {
        let first = NaiveDate::from_ymd_opt(year, 1, 1)?;
        Window::local(
            WindowKind::Year,
            first,
            NaiveDate::from_ymd_opt(year + 1, 1, 1)?,
            tz,
        )
    }

    /// The days `[first, next)` of the learner's calendar.
    fn local(kind: WindowKind, first: NaiveDate, next: NaiveDate, tz: Tz) -> Option<Window> {
        Some(Window {
            from: local_midnight(first, tz)?,
            to: local_midnight(next, tz)?,
            kind,
            first_day: first,
            last_day: next.pred_opt()?,
        })
    }

    fn with_kind(mut self, kind: WindowKind) -> Window {
        self.kind = kind;
        self
    }
}

/// "16–22 Nov 2026", "26 Oct – 1 Nov 2026", "29 Dec 2025 – 4 Jan 2026".
fn day_span(first: NaiveDate, last: NaiveDate) -> String {
    if first.year() != last.year() {
        format!(
            "{} – {}",
            first.format("%-d %b %Y"),
            last.format("%-d %b %Y")
        )
    } else if first.month() != last.month() {
        format!("{} – {}", first.format("%-d %b"), last.format("%-d %b %Y"))
    } else {
        format!("{}–{}", first.format("%-d"), last.format("%-d %b %Y"))
    }
}

/// The instant a local calendar day begins. Where midnight is skipped by a
/// daylight-saving jump (Santiago, Beirut…), the day begins at the first
/// local time that exists; where it happens twice, at the earlier one.
fn local_midnight(date: NaiveDate, tz: Tz) -> Option<DateTime<Utc>> {
    let mut local = date.and_hms_opt(0, 0, 0)?;
    // No zone has a gap longer than a day; 15-minute steps find its end.
    for _ in 0..=96 {
        match tz.from_local_datetime(&local) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => {
                return Some(t.with_timezone(&Utc));
            }
            LocalResult::None => local = local.checked_add_signed(TimeDelta::minutes(15))?,
        }
    }
    None
}

struct Tables {
    words: Words,
    months: MonthTable,
    /// The first words of every relative phrase and month name: a token that
    /// is none of them, nor a year, starts no time expression, and is passed
    /// over without building the phrases that would start at it (most words
    /// of a text; `tells_of` reads whole turns).
    starts: HashSet<String>,
    /// The first words of every `none` phrase.
    none_starts: HashSet<String>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let words = Words::load();
    let months = months::build(&words.weak_months);
    let first = |key: &String| key.split(' ').next().unwrap_or_default().to_owned();
    let mut starts: HashSet<String> = months.names.keys().map(first).collect();
    let mut none_starts = HashSet::new();
    for (key, meanings) in &words.phrases {
        for (meaning, _) in meanings {
            match meaning {
                Meaning::Relative { .. } => {
                    starts.insert(first(key));
                }
                Meaning::None => {
                    none_starts.insert(first(key));
                }
                _ => {}
            }
        }
    }
    Tables {
        words,
        months,
        starts,
        none_starts,
    }
});

/// Whether a time expression may start at `token` (see [`Tables::starts`]);
/// an Arabic month behind a one-letter prefix ([`arabic_clitic_month`]) may.
fn may_start(tables: &Tables, token: &Token) -> bool {
    token.year.is_some()
        || tables.starts.contains(&token.key)
        || token.key.starts_with(['و', 'ب', 'ل', 'ف'])
}

/// Finds the time expression of a learner's question, read in the learner's
/// time zone `tz` at the turn's instant `at`; `None` when there is none.
pub fn parse_window(question: &str, at: DateTime<Utc>, tz: Tz) -> Option<Window> {
    let tables = &*TABLES;
    let tokens = tokenize(question);
    let found = find(tables, &tokens);
    let today = at.with_timezone(&tz).date_naive();
    let relative_year = found.iter().find_map(|c| match c.what {
        What::Relative {
            unit: Unit::Year,
            offset,
        } => today.year().checked_add(offset),
        _ => None,
    });
    let window_of = |what: What| match what {
        What::Month { month, year: None } if relative_year.is_some() => {
            Window::month(relative_year?, month, tz)
        }
        _ => what.window(today, tz),
    };
    let mut windows: Vec<(usize, Window)> = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let c = &found[i];
        if let Some(next) = found.get(i + 1)
            && joined_by_and(tables, &tokens, c, next)
            && let Some(w) = months_span(c.what, next.what, &window_of)
        {
            windows.push((c.start, w));
            i += 2;
            continue;
        }
        if let Some(w) = window_of(c.what) {
            windows.push((c.start, w));
        }
        i += 1;
    }
    windows
        .into_iter()
        // Most specific first; among equals, the earliest.
        .max_by_key(|(start, w)| (w.kind.specificity(), std::cmp::Reverse(*start)))
        .map(|(_, w)| w)
}

/// Whether two month expressions stand joined by an `and` word of the data
/// files (and the `prep` of the second, if it has one): "in March and April",
/// "im März und im April".
fn joined_by_and(tables: &Tables, tokens: &[Token], first: &Found, second: &Found) -> bool {
    let (What::Month { .. }, What::Month { .. }) = (first.what, second.what) else {
        return false;
    };
    let end = first.start + first.len;
    // Arabic writes "and" joined to the month: "مارس وأبريل".
    if end == second.start {
        return tokens[end].key.starts_with('و')
            && arabic_clitic_month(&tables.months, &tokens[end].key).is_some();
    }
    // "in March and in April", "pada bulan Maret dan pada bulan April".
    end + 1 == start_with_preps(&tables.words, tokens, second.start)
        && is_and(&tables.words, &tokens[end].key)
}

/// Where the expression at token `start` begins with the `prep` words of any
/// language that stand right before it: "pada bulan", "au mois de" (several
/// may stand in a row).
fn start_with_preps(words: &Words, tokens: &[Token], mut start: usize) -> usize {
    while let Some(len) = prep_len_before(words, tokens, start, u8::MAX) {
        start -= len;
    }
    start
}

fn is_and(words: &Words, key: &str) -> bool {
    and_langs(words, key) != 0
}

/// The languages in which `key` is an `and` word (their bits; 0 for none).
fn and_langs(words: &Words, key: &str) -> u8 {
    words
        .get(key)
        .iter()
        .filter(|(m, _)| *m == Meaning::And)
        .fold(0, |bits, (_, l)| bits | l)
}

/// The window from the first month's first day to the second's last. A month
/// without a year takes the other's ("March and April 2025"), and the first is
/// the one before the second ("in November and January", asked in December
/// 2026: November 2025 to January 2026; "December 2025 and January": January
/// 2026). `None` when they do not run forwards.
fn months_span(
    first: What,
    second: What,
    window_of: &dyn Fn(What) -> Option<Window>,
) -> Option<Window> {
    let (
        What::Month {
            month: m1,
            year: y1,
        },
        What::Month {
            month: m2,
            year: y2,
        },
    ) = (first, second)
    else {
        return None;
    };
    if m1 == m2 {
        return None;
    }
    let mut second = window_of(What::Month {
        month: m2,
        year: y2.or(y1),
    })?;
    let mut first = window_of(What::Month {
        month: m1,
        year: y1.or(y2),
    })?;
    if let (Some(y), None) = (y1, y2)
        && second.first_day <= first.first_day
    {
        // "December 2025 and January": the January after it.
        second = window_of(What::Month {
            month: m2,
            year: Some(y + 1),
        })?;
    }
    if y1.is_none() && first.first_day >= second.first_day {
        // The latest such month before the second: "November and January"
        // asked in December 2026 is November 2025; "November and December"
        // asked in November 2026 is November and December 2025.
        first = window_of(What::Month {
            month: m1,
            year: Some(second.first_day.year() - i32::from(m1 >= m2)),
        })?;
    }
    if first.first_day >= second.first_day {
        return None;
    }
    Some(Window {
        from: first.from,
        to: second.to,
        kind: WindowKind::Months,
        first_day: first.first_day,
        last_day: second.last_day,
    })
}

/// The words (folded with `canonical_key`) that make up the question's time
/// expressions: what is left of a question once they are removed says whether
/// it asks about anything besides the period ("what did we cover in July?"
/// asks about nothing else; "what did we do on osmosis in July?" does).
///
/// The `prep` words standing right before an expression belong to it: in
/// "pada bulan Oktober 2025" the word `bulan` ("month") is part of the time
/// expression, and left in the topic it matched unrelated turns by meaning.
pub fn window_words(question: &str) -> Vec<String> {
    let tables = &*TABLES;
    let tokens = tokenize(question);
    let found = find(tables, &tokens);
    found
        .iter()
        .enumerate()
        .flat_map(|(i, f)| {
            let mut start = start_with_preps(&tables.words, &tokens, f.start);
            // The "and" that joins two months ("in March and April") is theirs too.
            if i > 0 && joined_by_and(tables, &tokens, &found[i - 1], f) {
                start = start.min(found[i - 1].start + found[i - 1].len);
            }
            tokens[start..(f.start + f.len).min(tokens.len())].iter()
        })
        .map(|t| t.key.clone())
        .collect()
}

/// One word of the question.
#[derive(Debug)]
struct Token {
    /// Folded with `canonical_key`.
    key: String,
    /// Written with a capital first letter.
    capital: bool,
    /// First word of the text or of a sentence.
    opens_sentence: bool,
    /// A four-digit year in 1900..=2200 (ASCII or Arabic-Indic digits).
    year: Option<i32>,
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut boundary = true;
    let flush = |word: &mut String, boundary: &mut bool, tokens: &mut Vec<Token>| {
        if word.is_empty() {
            return;
        }
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let year = year_of(word);
        for key in canonical_key(word).split(' ').filter(|k| !k.is_empty()) {
            tokens.push(Token {
                key: key.to_owned(),
                capital,
                opens_sentence: *boundary,
                year,
            });
        }
        *boundary = false;
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || is_combining_mark(c) || c == '\u{0640}' {
            word.push(c);
        } else {
            flush(&mut word, &mut boundary, &mut tokens);
            if matches!(
                c,
                '.' | '?' | '!' | '¿' | '¡' | '؟' | '…' | ';' | ':' | '\n'
            ) {
                boundary = true;
            }
        }
    }
    flush(&mut word, &mut boundary, &mut tokens);
    tokens
}

fn year_of(word: &str) -> Option<i32> {
    let mut value: i32 = 0;
    let mut digits = 0;
    for c in word.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            '\u{0660}'..='\u{0669}' => c as u32 - 0x0660, // Arabic-Indic
            '\u{06F0}'..='\u{06F9}' => c as u32 - 0x06F0, // Extended (Persian, Urdu)
            _ => return None,
        };
        value = value * 10 + d as i32;
        digits += 1;
        if digits > 4 {
            return None;
        }
    }
    (digits == 4 && (1900..=2200).contains(&value)).then_some(value)
}

/// A time expression found at token `start`.
#[derive(Debug)]
struct Found {
    start: usize,
    /// How many tokens the expression spans.
    len: usize,
    what: What,
}

#[derive(Debug, Clone, Copy)]
enum What {
    Relative { unit: Unit, offset: i32 },
    Month { month: u32, year: Option<i32> },
    Year(i32),
}

impl What {
    fn window(self, today: NaiveDate, tz: Tz) -> Option<Window> {
        match self {
            What::Relative { unit, offset } => relative(unit, offset, today, tz),
            What::Month { month, year } => {
                let year = match year {
                    Some(y) => y,
                    // The latest occurrence that has begun: the current month counts.
                    None if month <= today.month() => today.year(),
                    None => today.year() - 1,
                };
                Window::month(year, month, tz)
            }
            What::Year(year) => Window::year(year, tz),
        }
    }
}

fn relative(unit: Unit, offset: i32, today: NaiveDate, tz: Tz) -> Option<Window> {
    use WindowKind as K;
    let named = |this, last| match offset {
        0 => Some(this),
        -1 => Some(last),
        _ => None,
    };
    let (window, kind) = match unit {
        Unit::Day => (
            Window::day(shift_days(today, i64::from(offset))?, tz)?,
            named(K::Today, K::Yesterday),
        ),
        Unit::Week => (
            Window::week_of(shift_days(today, 7 * i64::from(offset))?, tz)?,
            named(K::ThisWeek, K::LastWeek),
        ),
        Unit::Month => {
            let first = today.with_day(1)?;
            let first = if offset >= 0 {
                first.checked_add_months(Months::new(offset.unsigned_abs()))?
            } else {
                first.checked_sub_months(Months::new(offset.unsigned_abs()))?
            };
            (
                Window::month(first.year(), first.month(), tz)?,
                named(K::ThisMonth, K::LastMonth),
            )
        }
        Unit::Year => (
            Window::year(today.year().checked_add(offset)?, tz)?,
            named(K::ThisYear, K::LastYear),
        ),
    };
    Some(match kind {
        Some(kind) => window.with_kind(kind),
        None => window,
    })
}

fn shift_days(date: NaiveDate, days: i64) -> Option<NaiveDate> {
    date.checked_add_signed(TimeDelta::try_days(days)?)
}

fn find(tables: &Tables, tokens: &[Token]) -> Vec<Found> {
    let blocked = blocked_tokens(tables, tokens);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if blocked.contains(&i) || !may_start(tables, &tokens[i]) {
            i += 1;
            continue;
        }
        if let Some((len, what)) = relative_at(&tables.words, tokens, i) {
            found.push(Found {
                start: i,
                len,
                what,
            });
            i += len;
        } else if let Some((len, what)) = month_at(
            tables,
            tokens,
            i,
            after_month_and(tables, tokens, &found, i),
        ) {
            found.push(Found {
                start: i,
                len,
                what,
            });
            i += len;
        } else if let Some(year) = tokens[i]
            .year
            .filter(|_| bare_year_counts(&tables.words, tokens, i))
        {
            found.push(Found {
                start: i,
                len: 1,
                what: What::Year(year),
            });
            i += 1;
        } else {
            i += 1;
        }
    }
    found
}

/// The folded phrase made of tokens `start..end`.
fn phrase(tokens: &[Token], start: usize, end: usize) -> Option<String> {
    let slice = tokens.get(start..end)?;
    Some(
        slice
            .iter()
            .map(|t| t.key.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Tokens covered by a `none` phrase ("في اليوم").
fn blocked_tokens(tables: &Tables, tokens: &[Token]) -> HashSet<usize> {
    let words = &tables.words;
    let mut blocked = HashSet::new();
    for start in 0..tokens.len() {
        if !tables.none_starts.contains(&tokens[start].key) {
            continue;
        }
        for len in 1..=words.max_tokens {
            let Some(key) = phrase(tokens, start, start + len) else {
                break;
            };
            if words.get(&key).iter().any(|(m, _)| *m == Meaning::None) {
                blocked.extend(start..start + len);
            }
        }
    }
    blocked
}

/// The longest relative phrase starting at `i`: (tokens it spans, meaning).
fn relative_at(words: &Words, tokens: &[Token], i: usize) -> Option<(usize, What)> {
    for len in (1..=words.max_tokens).rev() {
        let Some(key) = phrase(tokens, i, i + len) else {
            continue;
        };
        for (meaning, lang) in words.get(&key) {
            let Meaning::Relative { unit, offset, weak } = *meaning else {
                continue;
            };
            if weak && !has_hint(words, tokens, i, i + len, *lang) {
                continue;
            }
            return Some((len, What::Relative { unit, offset }));
        }
    }
    None
}

/// Whether a `hint` word of `lang` stands in the question outside `start..end`.
fn has_hint(words: &Words, tokens: &[Token], start: usize, end: usize, lang: u8) -> bool {
    tokens.iter().enumerate().any(|(j, t)| {
        !(start..end).contains(&j)
            && words
                .get(&t.key)
                .iter()
                .any(|(m, l)| *m == Meaning::Hint && l & lang != 0)
    })
}

/// Whether a `prep` of one of `langs` ends right before token `i`.
fn prep_before(words: &Words, tokens: &[Token], i: usize, langs: u8) -> bool {
    prep_len_before(words, tokens, i, langs).is_some()
}

/// How many tokens the `prep` of one of `langs` ending right before token `i` spans.
/// The longest one wins: "au mois de" over "mois de".
fn prep_len_before(words: &Words, tokens: &[Token], i: usize, langs: u8) -> Option<usize> {
    (1..=words.max_tokens.min(i)).rev().find(|&len| {
        phrase(tokens, i - len, i).is_some_and(|key| {
            words
                .get(&key)
                .iter()
                .any(|(m, l)| *m == Meaning::Prep && l & langs != 0)
        })
    })
}

/// A year standing alone counts after a `prep` of any language ("in 2025"),
/// unless a "1" stands before that prep: "1 in 2000 births" is a ratio
/// (while "World War 2 in 1939" is a year).
fn bare_year_counts(words: &Words, tokens: &[Token], i: usize) -> bool {
    let Some(len) = prep_len_before(words, tokens, i, u8::MAX) else {
        return false;
    };
    let before = (i - len).checked_sub(1).and_then(|j| tokens.get(j));
    before.is_none_or(|t| t.key != "1")
}

/// The year right after token `end - 1`, maybe behind a `link` word: (year, tokens used).
fn year_after(words: &Words, tokens: &[Token], end: usize) -> Option<(i32, usize)> {
    let next = tokens.get(end)?;
    if let Some(year) = next.year {
        return Some((year, 1));
    }
    let is_link = words
        .get(&next.key)
        .iter()
        .any(|(m, _)| *m == Meaning::Link);
    let year = tokens.get(end + 1)?.year.filter(|_| is_link)?;
    Some((year, 2))
}

/// When token `i` follows an `and` that follows a month expression ("in March
/// and april"): the languages of that `and` and whether the month before it was
/// written with a capital. A `weak` month name of one of those languages counts
/// there, as after a `prep`, when it is written as the month before it was:
/// "in march and april", not "in March and may I see it".
fn after_month_and(
    tables: &Tables,
    tokens: &[Token],
    found: &[Found],
    i: usize,
) -> Option<(u8, bool)> {
    let before = found
        .last()
        .filter(|f| matches!(f.what, What::Month { .. }) && i > 0 && f.start + f.len + 1 == i)?;
    let langs = and_langs(&tables.words, &tokens[i - 1].key);
    (langs != 0).then_some((langs, tokens[before.start].capital))
}

/// A month name starting at token `i` that its context lets count.
fn month_at(
    tables: &Tables,
    tokens: &[Token],
    i: usize,
    after_and: Option<(u8, bool)>,
) -> Option<(usize, What)> {
    let (len, name) = (1..=tables.months.max_tokens)
        .rev()
        .find_map(|len| {
            let key = phrase(tokens, i, i + len)?;
            tables.months.names.get(&key).map(|n| (len, n.clone()))
        })
        .or_else(|| arabic_clitic_month(&tables.months, &tokens[i].key).map(|n| (1, n)))?;
    let year = year_after(&tables.words, tokens, i + len);
    let first = &tokens[i];
    let counts = match name.strength {
        Strength::Strong => true,
        Strength::Weak => {
            year.is_some()
                || after_and.is_some_and(|(langs, capital)| {
                    langs & name.langs != 0 && (!name.capitalised || first.capital == capital)
                })
                || prep_before(&tables.words, tokens, i, name.langs)
                || (name.capitalised && first.capital && !first.opens_sentence)
        }
        Strength::Abbrev => year.is_some(),
    };
    if !counts {
        return None;
    }
    let used = len + year.map_or(0, |(_, n)| n);
    Some((
        used,
        What::Month {
            month: name.month,
            year: year.map(|(y, _)| y),
        },
    ))
}

/// Arabic writes "and", "in/with", "to" and "so" as one-letter prefixes
/// ("وتموز", "بيوليو"): a strong month name behind one of them still counts.
fn arabic_clitic_month(months: &MonthTable, key: &str) -> Option<months::MonthName> {
    let mut chars = key.chars();
    let first = chars.next()?;
    if !matches!(first, 'و' | 'ب' | 'ل' | 'ف') {
        return None;
    }
    let rest = chars.as_str();
    months
        .names
        .get(rest)
        .filter(|n| n.strength == Strength::Strong && n.langs & months::lang_bit("ar") != 0)
        .cloned()
}

#[cfg(test)]
mod tests;
