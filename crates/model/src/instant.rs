//! The instants the memory accepts: from 1900-01-01T00:00:00Z to
//! 9999-12-31T23:59:59.999Z, in UTC. One range for every entry point (a
//! history line, an HTTP or MCP request, a CLI `--at`, an event built in
//! code), so nothing is stored that a later reader (a report grouping by
//! month, a date printed in a block) cannot show: an append-only log could
//! never repair it.

use chrono::{DateTime, TimeZone, Utc};

/// The earliest instant accepted.
pub fn earliest() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(1900, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// The latest instant accepted (the last millisecond of year 9999, UTC).
pub fn latest() -> DateTime<Utc> {
    Utc.timestamp_millis_opt(253_402_300_799_999)
        .single()
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `t` itself when it is in the accepted range, else why not.
pub fn check(t: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if t < earliest() || t > latest() {
        return Err(format!(
            "{} is outside the accepted range of times (1900-01-01T00:00:00Z to 9999-12-31T23:59:59Z, in UTC)",
            t.to_rfc3339()
        ));
    }
    Ok(t)
}

/// An RFC 3339 instant in the accepted range, in UTC.
pub fn parse(s: &str) -> Result<DateTime<Utc>, String> {
    let t = DateTime::parse_from_rfc3339(s)
        .map_err(|e| format!("{s:?} is not an RFC 3339 time such as 2026-09-20T10:00:00Z: {e}"))?;
    check(t.with_timezone(&Utc))
}

/// How far past the receiving server's clock a client's instant may be: two
/// machines' clocks disagree by seconds, and a write dated later than this
/// did not happen yet.
pub const FUTURE_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// `t` itself when it is no later than `now` + [`FUTURE_SKEW`], else why
/// not. For what a client writes over the network (an event, an answer, an
/// erasure); imports of history and the operator's own `--at` are not held
/// to the clock.
pub fn not_future(t: DateTime<Utc>, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    if t > now + FUTURE_SKEW {
        return Err(format!(
            "{} is later than the server's clock ({}) by more than {} minutes: a write is dated when it happened",
            t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            FUTURE_SKEW.num_minutes()
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_instant_is_not_later_than_the_clock_and_its_skew() {
        let now = parse("2026-12-07T10:00:00Z").unwrap();
        assert!(not_future(now, now).is_ok());
        assert!(not_future(now + FUTURE_SKEW, now).is_ok());
        assert!(not_future(parse("1990-01-01T00:00:00Z").unwrap(), now).is_ok());
        let err = not_future(latest(), now).unwrap_err();
        assert!(err.contains("later than the server's clock"), "{err}");
        assert!(not_future(now + FUTURE_SKEW + chrono::Duration::seconds(1), now).is_err());
    }

    #[test]
    fn the_range_is_inclusive_and_read_in_utc() {
        assert!(parse("1900-01-01T00:00:00Z").is_ok());
        assert!(parse("9999-12-31T23:59:59.999Z").is_ok());
        // The last minute of 9999 one minute west of UTC is year 10000 in UTC.
        let err = parse("9999-12-31T23:59:59-00:01").unwrap_err();
        assert!(err.contains("outside the accepted range"), "{err}");
        assert!(parse("1899-12-31T23:59:59Z").is_err());
        // 00:59 on 1 January 1900 at +01:00 is still 1899 in UTC.
        assert!(parse("1900-01-01T00:59:00+01:00").is_err());
        assert!(
            parse("yesterday")
                .unwrap_err()
                .contains("not an RFC 3339 time")
        );
        assert!(check(DateTime::<Utc>::MAX_UTC).is_err());
        assert_eq!(
            latest().timestamp_millis() + 1,
            Utc.with_ymd_and_hms(10000, 1, 1, 0, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
    }
}
