use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

use super::{Window, WindowKind as K, parse_window, window_words};

/// Sunday 29 November 2026, 10:00 UTC.
fn at() -> DateTime<Utc> {
    utc("2026-11-29T10:00:00Z")
}

fn utc(s: &str) -> DateTime<Utc> {
    s.parse().expect("test instant")
}

fn day(s: &str) -> NaiveDate {
    s.parse().expect("test date")
}

/// Parses in UTC at [`at`] and checks the window's first and last local days and kind.
fn check(question: &str, first: &str, last: &str, kind: K) {
    let w = parse_window(question, at(), Tz::UTC)
        .unwrap_or_else(|| panic!("no window in {question:?}"));
    assert_eq!(
        (w.first_day, w.last_day, w.kind),
        (day(first), day(last), kind),
        "{question:?}"
    );
}

#[test]
fn english() {
    check(
        "What did we cover in July?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "what did we do in march 2025",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check(
        "What did we do in May?",
        "2026-05-01",
        "2026-05-31",
        K::Month,
    );
    check("and in may?", "2026-05-01", "2026-05-31", K::Month);
    check(
        "the March exam, how did it go?",
        "2026-03-01",
        "2026-03-31",
        K::Month,
    );
    check("Sept 2025 topics", "2025-09-01", "2025-09-30", K::Month);
    check(
        "what did we see yesterday",
        "2026-11-28",
        "2026-11-28",
        K::Yesterday,
    );
    check(
        "what did we do today?",
        "2026-11-29",
        "2026-11-29",
        K::Today,
    );
    check(
        "Recap last week please",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check(
        "anything this week?",
        "2026-11-23",
        "2026-11-29",
        K::ThisWeek,
    );
    check(
        "what about last month",
        "2026-10-01",
        "2026-10-31",
        K::LastMonth,
    );
    check("and this month", "2026-11-01", "2026-11-30", K::ThisMonth);
    check(
        "what did we learn in 2025?",
        "2025-01-01",
        "2025-12-31",
        K::Year,
    );
    check(
        "the day before yesterday",
        "2026-11-27",
        "2026-11-27",
        K::Day,
    );
    check("in July last year", "2025-07-01", "2025-07-31", K::Month);
    check(
        "Tell me about World War 2 in 1939",
        "1939-01-01",
        "1939-12-31",
        K::Year,
    );
    check(
        "what did we do in April?",
        "2026-04-01",
        "2026-04-30",
        K::Month,
    );
}

#[test]
fn spanish() {
    check("¿Qué vimos en julio?", "2026-07-01", "2026-07-31", K::Month);
    check(
        "¿Qué estudiamos en marzo de 2025?",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check("¿Y ayer?", "2026-11-28", "2026-11-28", K::Yesterday);
    check(
        "¿Qué hicimos la semana pasada?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check(
        "repasa el mes pasado",
        "2026-10-01",
        "2026-10-31",
        K::LastMonth,
    );
    check("¿Qué aprendí en 2025?", "2025-01-01", "2025-12-31", K::Year);
    check(
        "en julio del año pasado",
        "2025-07-01",
        "2025-07-31",
        K::Month,
    );
}

#[test]
fn german() {
    check(
        "Was haben wir im Juli gemacht?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "Was war im Juli 2025?",
        "2025-07-01",
        "2025-07-31",
        K::Month,
    );
    check(
        "Was hatten wir im März?",
        "2026-03-01",
        "2026-03-31",
        K::Month,
    );
    check(
        "Was haben wir letzte Woche gelernt?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check("und gestern?", "2026-11-28", "2026-11-28", K::Yesterday);
    check(
        "Was haben wir diese Woche gemacht?",
        "2026-11-23",
        "2026-11-29",
        K::ThisWeek,
    );
    check("Was war im Jahr 2025?", "2025-01-01", "2025-12-31", K::Year);
    check(
        "Was haben wir im Jänner gemacht?",
        "2026-01-01",
        "2026-01-31",
        K::Month,
    );
}

#[test]
fn italian() {
    check(
        "Cosa abbiamo fatto a luglio?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "Cosa abbiamo visto nel marzo 2025?",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check(
        "Cosa abbiamo fatto la settimana scorsa?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check("e ieri?", "2026-11-28", "2026-11-28", K::Yesterday);
    check(
        "cosa abbiamo fatto quest'anno",
        "2026-01-01",
        "2026-12-31",
        K::ThisYear,
    );
}

#[test]
fn indonesian() {
    check(
        "Apa yang kita pelajari pada bulan Juli?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "Apa yang kita bahas Maret 2025?",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check(
        "Apa yang kita pelajari minggu lalu?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check(
        "kemarin kita belajar apa?",
        "2026-11-28",
        "2026-11-28",
        K::Yesterday,
    );
    check("bulan ini", "2026-11-01", "2026-11-30", K::ThisMonth);
}

#[test]
fn french() {
    check(
        "Qu'avons-nous vu en juillet ?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "Qu'avons-nous fait en mars ?",
        "2026-03-01",
        "2026-03-31",
        K::Month,
    );
    check(
        "Qu'avons-nous fait hier ?",
        "2026-11-28",
        "2026-11-28",
        K::Yesterday,
    );
    check(
        "Qu'avons-nous fait la semaine dernière ?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check(
        "Qu'est-ce qu'on a vu aujourd'hui ?",
        "2026-11-29",
        "2026-11-29",
        K::Today,
    );
    check(
        "Et l'année dernière ?",
        "2025-01-01",
        "2025-12-31",
        K::LastYear,
    );
}

#[test]
fn portuguese() {
    check(
        "O que estudamos em julho?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check(
        "O que vimos em março de 2025?",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check(
        "O que fizemos na semana passada?",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check("e ontem?", "2026-11-28", "2026-11-28", K::Yesterday);
    check("no mês passado", "2026-10-01", "2026-10-31", K::LastMonth);
}

#[test]
fn arabic() {
    check("ماذا درسنا في يوليو؟", "2026-07-01", "2026-07-31", K::Month);
    check("ماذا درسنا في تموز؟", "2026-07-01", "2026-07-31", K::Month);
    check(
        "ماذا درسنا في آذار ٢٠٢٥؟",
        "2025-03-01",
        "2025-03-31",
        K::Month,
    );
    check(
        "ماذا درسنا في كانون الثاني؟",
        "2026-01-01",
        "2026-01-31",
        K::Month,
    );
    check("ماذا درسنا في مارس؟", "2026-03-01", "2026-03-31", K::Month);
    check(
        "ماذا درسنا الأسبوع الماضي؟",
        "2026-11-16",
        "2026-11-22",
        K::LastWeek,
    );
    check("ماذا فعلنا أمس؟", "2026-11-28", "2026-11-28", K::Yesterday);
    check(
        "ماذا تعلمنا في عام ٢٠٢٥؟",
        "2025-01-01",
        "2025-12-31",
        K::Year,
    );
    check("وتموز؟", "2026-07-01", "2026-07-31", K::Month);
}

#[test]
fn a_month_is_its_latest_occurrence_not_in_the_future() {
    // Asked on 29 November: November is this one, December the last one.
    check("in November", "2026-11-01", "2026-11-30", K::Month);
    check("in December", "2025-12-01", "2025-12-31", K::Month);
    check("in January", "2026-01-01", "2026-01-31", K::Month);
    // 30 Nov 23:30 UTC is already 1 December in Berlin: December is this one there.
    let late = utc("2026-11-30T23:30:00Z");
    let berlin = parse_window("im Dezember", late, Tz::Europe__Berlin).expect("window");
    assert_eq!(berlin.first_day, day("2026-12-01"));
    let london = parse_window("in December", late, Tz::UTC).expect("window");
    assert_eq!(london.first_day, day("2025-12-01"));
}

#[test]
fn boundaries_are_local_midnights() {
    let july = parse_window("im Juli", at(), Tz::Europe__Berlin).expect("window");
    assert_eq!(july.from, utc("2026-06-30T22:00:00Z"));
    assert_eq!(july.to, utc("2026-07-31T22:00:00Z"));
    assert!(july.contains(utc("2026-06-30T22:00:00Z")));
    assert!(
        !july.contains(utc("2026-07-31T22:00:00Z")),
        "the end is excluded"
    );

    // 03:00 UTC on 29 Nov is still 28 Nov, 21:00 in Mexico City (UTC-6).
    let evening = utc("2026-11-29T03:00:00Z");
    let ayer = parse_window("¿qué vimos ayer?", evening, Tz::America__Mexico_City).expect("window");
    assert_eq!(ayer.from, utc("2026-11-27T06:00:00Z"));
    assert_eq!(ayer.to, utc("2026-11-28T06:00:00Z"));
    assert_eq!(ayer.describe(), "yesterday (27 Nov 2026)");
}

#[test]
fn last_week_runs_monday_to_sunday() {
    let w = parse_window("last week", at(), Tz::UTC).expect("window");
    assert_eq!(
        (w.from, w.to),
        (utc("2026-11-16T00:00:00Z"), utc("2026-11-23T00:00:00Z"))
    );
    // Asked at the very first instant of a Monday, last week is the one just ended.
    let monday = parse_window("last week", utc("2026-11-23T00:00:00Z"), Tz::UTC).expect("window");
    assert_eq!(monday.first_day, day("2026-11-16"));
    // 23:30 UTC Sunday is Monday 00:30 in Berlin: there the week just ended is 16–22 Nov too.
    let berlin = parse_window(
        "letzte Woche",
        utc("2026-11-22T23:30:00Z"),
        Tz::Europe__Berlin,
    )
    .expect("window");
    assert_eq!(
        (berlin.first_day, berlin.last_day),
        (day("2026-11-16"), day("2026-11-22"))
    );
    assert_eq!(berlin.from, utc("2026-11-15T23:00:00Z"));
    // A week across a daylight-saving change is 7 local days, not 168 hours.
    // (Berlin leaves summer time on Sunday 25 Oct 2026: that week lasts 169 hours.)
    let dst =
        parse_window("last week", utc("2026-10-27T12:00:00Z"), Tz::Europe__Berlin).expect("window");
    assert_eq!(
        (dst.from, dst.to),
        (utc("2026-10-18T22:00:00Z"), utc("2026-10-25T23:00:00Z"))
    );
}

#[test]
fn no_time_expression_gives_none() {
    for question in [
        "May I ask what osmosis is?",
        "march forward with the next chapter",
        "What is the date of the exam?",
        "Can you explain Mars and its moons?",
        "What happened 2 days ago?",
        "explain set theory",
        "Was bedeutet hier Osmose?",
        "I have a 2025 calendar",
        "It occurs in 1 in 2000 births",
        "Non ho mai capito la mitosi",
        "Kannst du mir hier helfen?",
        "Was ist hier die Rolle des Zellkerns?",
        "April said I should ask about cells",
        "كم ساعة في اليوم؟",
        "مارس الطالب الرياضة",
        "What was Jolene doing with her partner in Rio de Janeiro?",
        "O que vimos no Rio de Janeiro?",
        // All that came before today is not today (LongMemEval).
        "What is the order of airlines I flew with from earliest to latest before today?",
        "What have I learned until today?",
        "¿Qué hemos visto hasta hoy?",
        "Was haben wir bis heute gelernt?",
        "Cosa abbiamo fatto fino ad oggi?",
        "Qu'avons-nous vu jusqu'à aujourd'hui ?",
        "Apa yang sudah kita pelajari sampai hari ini?",
        "ماذا تعلمنا حتى اليوم؟",
        "O que aprendemos até hoje?",
        "What is a cell?",
        "",
    ] {
        assert_eq!(parse_window(question, at(), Tz::UTC), None, "{question:?}");
    }
}

#[test]
fn the_most_specific_expression_wins() {
    check(
        "last month, and yesterday in particular",
        "2026-11-28",
        "2026-11-28",
        K::Yesterday,
    );
    check(
        "in July or in August?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    check("in 2025, in March", "2026-03-01", "2026-03-31", K::Month);
}

#[test]
fn describe_reads_in_a_sentence() {
    let describe = |q: &str| parse_window(q, at(), Tz::UTC).expect("window").describe();
    assert_eq!(describe("in July"), "July 2026");
    assert_eq!(describe("in 2025"), "2025");
    assert_eq!(describe("last week"), "last week (16–22 Nov 2026)");
    assert_eq!(describe("yesterday"), "yesterday (28 Nov 2026)");
    assert_eq!(describe("today"), "today (29 Nov 2026)");
    assert_eq!(describe("last month"), "last month (October 2026)");
    assert_eq!(describe("this year"), "this year (2026)");
    let week = Window::week_of(day("2026-11-18"), Tz::UTC).expect("window");
    assert_eq!(week.describe(), "the week of 16 Nov 2026");
    let across = parse_window("last week", utc("2026-11-04T12:00:00Z"), Tz::UTC).expect("window");
    assert_eq!(across.describe(), "last week (26 Oct – 1 Nov 2026)");
}

#[test]
fn every_day_has_a_window_even_where_midnight_is_skipped() {
    // Chile moves its clocks at midnight: some local midnights do not exist.
    let mut date = day("2026-01-01");
    while date < day("2027-01-01") {
        let w = Window::day(date, Tz::America__Santiago).expect("window");
        assert!(w.from < w.to, "{date}");
        date = date.succ_opt().expect("next day");
    }
}

proptest! {
    #[test]
    fn a_month_name_never_starts_after_the_question(
        secs in 0i64..4_102_444_800, // 1970 to 2100
        month in 0usize..12,
        tz in prop::sample::select(vec![Tz::UTC, Tz::Europe__Berlin, Tz::America__Mexico_City, Tz::Pacific__Auckland]),
    ) {
        const NAMES: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July",
            "August", "September", "October", "November", "December"];
        let at = DateTime::from_timestamp(secs, 0).expect("instant");
        let w = parse_window(&format!("in {}", NAMES[month]), at, tz).expect("window");
        prop_assert!(w.from <= at);
        prop_assert!(w.from < w.to);
        // Either the month under way, or one wholly past and less than a year ago.
        prop_assert!(w.contains(at) || (w.to <= at && at - w.to < chrono::TimeDelta::days(366)));
    }
}

/// The word "month" of each language belongs to the time expression, so it
/// leaves the question's topic with the month name (issue 9: "pada bulan
/// Oktober 2025" kept `bulan` in the topic and matched unrelated turns).
fn assert_window_words(question: &str, expected: &[&str]) {
    let words = super::window_words(question);
    for e in expected {
        assert!(
            words.iter().any(|w| w == e),
            "{question:?}: {e:?} not among {words:?}"
        );
    }
    assert!(
        parse_window(question, at(), Tz::UTC).is_some(),
        "{question:?}"
    );
}

#[test]
fn month_word_is_a_window_word_in_english() {
    assert_window_words(
        "What did we study in the month of October 2025?",
        &["month", "october", "2025"],
    );
}

#[test]
fn month_word_is_a_window_word_in_spanish() {
    assert_window_words(
        "¿Qué estudiamos en el mes de octubre de 2025?",
        &["mes", "octubre", "2025"],
    );
}

#[test]
fn month_word_is_a_window_word_in_german() {
    assert_window_words(
        "Was haben wir im Monat Oktober 2025 gelernt?",
        &["im", "monat", "oktober"],
    );
}

#[test]
fn month_word_is_a_window_word_in_italian() {
    assert_window_words(
        "Cosa abbiamo studiato nel mese di ottobre 2025?",
        &["nel", "mese", "ottobre"],
    );
}

#[test]
fn month_word_is_a_window_word_in_indonesian() {
    assert_window_words(
        "Apa yang kita pelajari pada bulan Oktober 2025?",
        &["pada", "bulan", "oktober", "2025"],
    );
    assert!(
        !super::window_words("Apa yang kita pelajari pada bulan Oktober 2025?")
            .iter()
            .any(|w| w == "pelajari")
    );
}

#[test]
fn month_word_is_a_window_word_in_french() {
    assert_window_words(
        "Qu'avons-nous étudié au mois d'octobre 2025 ?",
        &["au", "mois", "octobre"],
    );
    assert_window_words(
        "Qu'avons-nous étudié pendant le mois de mars 2025 ?",
        &["mois", "mars"],
    );
}

#[test]
fn month_word_is_a_window_word_in_portuguese() {
    assert_window_words(
        "O que estudamos no mês de outubro de 2025?",
        &["no", "mes", "outubro"],
    );
}

#[test]
fn month_word_is_a_window_word_in_arabic() {
    let words = super::window_words("ماذا درسنا في شهر أكتوبر 2025؟");
    assert!(
        words.iter().any(|w| w == "شهر") && words.iter().any(|w| w == "في"),
        "{words:?}"
    );
    assert!(parse_window("ماذا درسنا في شهر أكتوبر 2025؟", at(), Tz::UTC).is_some());
}

#[test]
fn two_months_joined_by_and_are_one_window() {
    // Asked on 29 Nov 2026. LongMemEval: "in March and April" was read as March alone.
    for q in [
        "What did we do in March and April?",
        "what did we do in march and april?",
        "What did we do in March and in April?",
        "¿Qué hicimos en marzo y abril?",
        "Was haben wir im März und April gemacht?",
        "Cosa abbiamo fatto a marzo e aprile?",
        "Apa yang kita kerjakan pada bulan Maret dan April?",
        "Qu'avons-nous fait en mars et avril ?",
        "O que fizemos em março e abril?",
        "ماذا فعلنا في مارس وأبريل؟",
        "ماذا فعلنا في مارس و أبريل؟",
    ] {
        check(q, "2026-03-01", "2026-04-30", K::Months);
    }
    check(
        "in March and April 2025",
        "2025-03-01",
        "2025-04-30",
        K::Months,
    );
    // The first month is the one before the second.
    check(
        "what did we cover in November and January?",
        "2025-11-01",
        "2026-01-31",
        K::Months,
    );
    check(
        "in December 2025 and January",
        "2025-12-01",
        "2026-01-31",
        K::Months,
    );
    check(
        "in March and April last year",
        "2025-03-01",
        "2025-04-30",
        K::Months,
    );
    // "or" joins nothing: the first expression stands.
    check(
        "in July or in August?",
        "2026-07-01",
        "2026-07-31",
        K::Month,
    );
    // A month and a year are not two months.
    check("in March and 2025", "2026-03-01", "2026-03-31", K::Month);
    // Two months that do not run forwards stay apart.
    check(
        "in April 2026 and March 2026",
        "2026-04-01",
        "2026-04-30",
        K::Month,
    );
    // A month that has begun this year before one that has not: both last year.
    check(
        "in November and December",
        "2025-11-01",
        "2025-12-31",
        K::Months,
    );
    check(
        "Apa yang kita kerjakan pada bulan Maret dan pada bulan April?",
        "2026-03-01",
        "2026-04-30",
        K::Months,
    );
    // A weak month name after "and" written otherwise than the month before it,
    // or of another language, stays a word.
    check(
        "in March and may I see it?",
        "2026-03-01",
        "2026-03-31",
        K::Month,
    );
    check(
        "We did fractions in April and may revisit them",
        "2026-04-01",
        "2026-04-30",
        K::Month,
    );
    check(
        "Ne abbiamo parlato a marzo e mai più?",
        "2026-03-01",
        "2026-03-31",
        K::Month,
    );
    // The same month twice is that month.
    check("in March and March", "2026-03-01", "2026-03-31", K::Month);
    assert_eq!(
        window_words("What did we do in March and April?"),
        ["in", "march", "and", "april"]
    );
    let describe = |q: &str| parse_window(q, at(), Tz::UTC).expect("window").describe();
    assert_eq!(describe("in March and April"), "March–April 2026");
    assert_eq!(
        describe("in November and January"),
        "November 2025 – January 2026"
    );
}
