//! Month names from CLDR (through ICU4X's compiled data), folded into one
//! lookup table shared by every language.
//!
//! Which names: for each locale in [`LOCALES`], the wide names in both the
//! in-date ("format", `MMMM`) and the stand-alone (`LLLL`) forms, and the
//! abbreviated names (`MMM`, `LLL`) with a trailing dot removed. Regional
//! locales are read where they name months differently (Austrian "Jänner",
//! Levantine and Iraqi "تموز", "آذار", Maghrebi "يوليوز", "جويلية").
//!
//! How strong a name is (see [`Strength`]):
//! * a wide name is `Strong` unless a data file marks it `weak` (it is also
//!   an ordinary word: English "may", French "mars", Arabic "مارس");
//! * an abbreviation is `Abbrev` and counts only right before a year
//!   ("Sept 2025"): many are ordinary words somewhere ("mar", "set", "ago",
//!   "out"); abbreviations shorter than three letters, or equal to a wide
//!   name, are not kept;
//! * a folded spelling that names two different months in two locales is
//!   dropped altogether (none does today; the rule keeps a future CLDR safe).

use std::collections::{HashMap, HashSet};

use icu_calendar::{Date, Gregorian};
use icu_datetime::fieldsets::enums::DateFieldSet;
use icu_datetime::pattern::{DateTimePattern, FixedCalendarDateTimeNames, MonthNameLength};
use icu_locale_core::Locale;
use writeable::TryWriteable;

use crate::lang::{LANGS, canonical_key};

/// The CLDR locales whose month names are read, with the language of
/// [`LANGS`] each belongs to.
pub(crate) const LOCALES: [(&str, &str); 12] = [
    ("en", "en"),
    ("es", "es"),
    ("de", "de"),
    ("de-AT", "de"),
    ("it", "it"),
    ("id", "id"),
    ("fr", "fr"),
    ("pt", "pt"),
    ("ar", "ar"),
    ("ar-LB", "ar"),
    ("ar-MA", "ar"),
    ("ar-DZ", "ar"),
];

/// How much context a month name needs before it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Strength {
    /// Only right before a year.
    Abbrev,
    /// Before a year, after a `prep` of its language, or capitalised mid-sentence
    /// when its language capitalises month names.
    Weak,
    /// Anywhere, as a whole word.
    Strong,
}

#[derive(Debug, Clone)]
pub(crate) struct MonthName {
    /// 1 = January.
    pub month: u32,
    pub strength: Strength,
    /// Bit i set: the name is a month name in `LANGS[i]`.
    pub langs: u8,
    /// Some language writing this name capitalises month names (so a capital
    /// letter mid-sentence is a signal, unlike French "Mars" the planet).
    pub capitalised: bool,
}

/// Folded month name (space-joined tokens) → month.
pub(crate) struct MonthTable {
    pub names: HashMap<String, MonthName>,
    /// The most tokens any name has ("كانون الثاني" has two).
    pub max_tokens: usize,
}

/// Builds the table; `weak` holds folded wide names the data files mark as ordinary words.
pub(crate) fn build(weak: &HashSet<String>) -> MonthTable {
    let mut names: HashMap<String, MonthName> = HashMap::new();
    let mut conflicts: Vec<String> = Vec::new();
    let mut abbrevs: Vec<(String, MonthName)> = Vec::new();
    for (locale, lang) in LOCALES {
        let bit = lang_bit(lang);
        for (pattern, length, wide) in [
            ("MMMM", MonthNameLength::Wide, true),
            ("LLLL", MonthNameLength::StandaloneWide, true),
            ("MMM", MonthNameLength::Abbreviated, false),
            ("LLL", MonthNameLength::StandaloneAbbreviated, false),
        ] {
            for (month, raw) in cldr_names(locale, pattern, length).into_iter().enumerate() {
                let raw = raw.trim_end_matches('.');
                let key = canonical_key(raw);
                if key.is_empty() {
                    continue;
                }
                let capitalised = raw.chars().next().is_some_and(char::is_uppercase);
                let name = MonthName {
                    month: month as u32 + 1,
                    strength: if !wide {
                        Strength::Abbrev
                    } else if weak.contains(&key) {
                        Strength::Weak
                    } else {
                        Strength::Strong
                    },
                    langs: bit,
                    capitalised,
                };
                if wide {
                    insert(&mut names, &mut conflicts, key, name);
                } else if key.chars().count() >= 3 {
                    abbrevs.push((key, name));
                }
            }
        }
    }
    // Abbreviations go in last so that a wide name always wins its spelling.
    for (key, name) in abbrevs {
        match names.get(&key) {
            Some(existing) if existing.strength != Strength::Abbrev => {}
            _ => insert(&mut names, &mut conflicts, key, name),
        }
    }
    for key in conflicts {
        names.remove(&key);
    }
    let max_tokens = names
        .keys()
        .map(|k| k.split(' ').count())
        .max()
        .unwrap_or(1);
    MonthTable { names, max_tokens }
}

fn insert(
    names: &mut HashMap<String, MonthName>,
    conflicts: &mut Vec<String>,
    key: String,
    name: MonthName,
) {
    match names.get_mut(&key) {
        None => {
            names.insert(key, name);
        }
        Some(existing) if existing.month == name.month => {
            existing.langs |= name.langs;
            existing.capitalised |= name.capitalised;
            existing.strength = existing.strength.max(name.strength);
        }
        Some(_) => conflicts.push(key),
    }
}

pub(crate) fn lang_bit(lang: &str) -> u8 {
    LANGS.iter().position(|l| *l == lang).map_or(0, |i| 1 << i)
}

/// The twelve names of one locale, pattern and length; empty when ICU4X has no data.
fn cldr_names(locale: &str, pattern: &str, length: MonthNameLength) -> Vec<String> {
    let Ok(locale) = locale.parse::<Locale>() else {
        return Vec::new();
    };
    let Ok(mut names) =
        FixedCalendarDateTimeNames::<Gregorian, DateFieldSet>::try_new((&locale).into())
    else {
        return Vec::new();
    };
    if names.include_month_names(length).is_err() {
        return Vec::new();
    }
    let Ok(pattern) = pattern.parse::<DateTimePattern>() else {
        return Vec::new();
    };
    let formatter = names.with_pattern_unchecked(&pattern);
    let mut out = Vec::with_capacity(12);
    for month in 1..=12 {
        let Ok(date) = Date::try_new_gregorian(2000, month, 1) else {
            return Vec::new();
        };
        match formatter.format(&date).try_write_to_string() {
            Ok(text) => out.push(text.into_owned()),
            Err(_) => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_locale_yields_twelve_wide_names() {
        for (locale, _) in LOCALES {
            let wide = cldr_names(locale, "MMMM", MonthNameLength::Wide);
            assert_eq!(wide.len(), 12, "{locale}: {wide:?}");
        }
    }

    #[test]
    fn table_has_regional_and_accented_names() {
        let table = build(&HashSet::new());
        let month = |s: &str| table.names.get(&canonical_key(s)).map(|n| n.month);
        assert_eq!(month("März"), Some(3));
        assert_eq!(month("marz"), Some(3));
        assert_eq!(month("Jänner"), Some(1));
        assert_eq!(month("تموز"), Some(7));
        assert_eq!(month("كانون الثاني"), Some(1));
        assert_eq!(month("août"), Some(8));
        assert_eq!(month("Agustus"), Some(8));
        assert_eq!(table.max_tokens, 2);
        // "sept" is an abbreviation, "set" too (Italian, Portuguese): year-only.
        assert_eq!(
            table.names[&canonical_key("set")].strength,
            Strength::Abbrev
        );
        assert_eq!(
            table.names[&canonical_key("julio")].strength,
            Strength::Strong
        );
    }
}
