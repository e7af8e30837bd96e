//! A circuit breaker over one model endpoint. A model that is down, or so
//! slow that every call runs into its deadline, should not hold each turn
//! (and a server worker) for the whole deadline: after [`Breaker::THRESHOLD`]
//! failed calls in a row the endpoint is not called for
//! [`Breaker::COOL_DOWN`], and calls fail at once, saying when the next try
//! is. After the cool-down one call goes through (half-open): its success
//! closes the circuit, its failure opens it again for another cool-down.
//!
//! The rules take the instant as an argument (monotonic time, from the
//! caller), so they are tested without waiting.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    /// Failed calls in a row.
    failures: u32,
    /// While open: when a call may try again.
    open_until: Option<Instant>,
    /// A half-open trial call is under way.
    trial: bool,
}

/// See the module docs.
#[derive(Debug, Default)]
pub struct Breaker {
    state: Mutex<State>,
}

impl Breaker {
    /// Failed calls in a row that open the circuit.
    pub const THRESHOLD: u32 = 5;
    /// How long an open circuit refuses calls.
    pub const COOL_DOWN: Duration = Duration::from_secs(30);

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the counters in a
        // state worse than stale: keep using them.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// May a call go out at `now`? `Err(wait)` while the circuit is open (or
    /// a half-open trial is already under way): how long until a try.
    pub fn admit(&self, now: Instant) -> Result<(), Duration> {
        let mut s = self.state();
        match s.open_until {
            None => Ok(()),
            Some(until) if now < until => Err(until - now),
            Some(_) if s.trial => Err(Duration::from_secs(1)),
            Some(_) => {
                s.trial = true;
                Ok(())
            }
        }
    }

    /// The outcome of a call admitted earlier, at `now`.
    pub fn record(&self, ok: bool, now: Instant) {
        let mut s = self.state();
        if ok {
            *s = State::default();
            return;
        }
        s.failures = s.failures.saturating_add(1);
        if s.trial || s.failures >= Self::THRESHOLD {
            s.open_until = Some(now + Self::COOL_DOWN);
            s.trial = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_opens_after_the_threshold_waits_the_cool_down_then_tries_once() {
        let b = Breaker::default();
        let t0 = Instant::now();
        for _ in 0..Breaker::THRESHOLD - 1 {
            assert!(b.admit(t0).is_ok());
            b.record(false, t0);
        }
        assert!(b.admit(t0).is_ok(), "four failures do not open it");
        b.record(false, t0);
        let wait = b.admit(t0 + Duration::from_secs(10)).unwrap_err();
        assert_eq!(wait, Breaker::COOL_DOWN - Duration::from_secs(10));
        // After the cool-down, one trial; a second caller waits for it.
        let later = t0 + Breaker::COOL_DOWN;
        assert!(b.admit(later).is_ok());
        assert!(b.admit(later).is_err(), "one trial at a time");
        // The trial fails: open again for a whole cool-down.
        b.record(false, later);
        assert!(b.admit(later + Breaker::COOL_DOWN / 2).is_err());
        let again = later + Breaker::COOL_DOWN;
        assert!(b.admit(again).is_ok());
        // The trial succeeds: closed, the count starts over.
        b.record(true, again);
        assert!(b.admit(again).is_ok());
        b.record(false, again);
        assert!(
            b.admit(again).is_ok(),
            "one failure after a success does not open it"
        );
    }
}
