//! Which design of the tutor builds the memory slot (docs/mechanisms.md §9)? The benchmark
//! compares four that differ only in what reaches the prompt; all of them
//! receive the same file passages and the same token budget.

use std::fmt;
use std::str::FromStr;

/// What fills the memory slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Design {
    /// Plain retrieval: no memory at all (the slot stays empty).
    Plain,
    /// The last twenty turns (learner and tutor messages, checks) in time
    /// order, pasted unranked within the budget.
    Window,
    /// Ranked recall over the episode log only: no map, no beliefs, no
    /// record-question branch.
    Episodes,
    /// Everything: beliefs, ranked recall, the map, the record branch.
    #[default]
    Full,
}

/// How many turns the window design pastes.
pub const WINDOW_TURNS: usize = 20;

impl Design {
    /// Every design, weakest first.
    pub const ALL: [Design; 4] = [
        Design::Plain,
        Design::Window,
        Design::Episodes,
        Design::Full,
    ];

    /// `plain`, `window`, `episodes` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Design::Plain => "plain",
            Design::Window => "window",
            Design::Episodes => "episodes",
            Design::Full => "full",
        }
    }
}

impl fmt::Display for Design {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A design name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown design {0:?}: expected plain, window, episodes or full")]
pub struct UnknownDesign(pub String);

impl FromStr for Design {
    type Err = UnknownDesign;
    fn from_str(s: &str) -> Result<Design, UnknownDesign> {
        match s.trim().to_ascii_lowercase().as_str() {
            "plain" => Ok(Design::Plain),
            "window" => Ok(Design::Window),
            "episodes" => Ok(Design::Episodes),
            "full" => Ok(Design::Full),
            _ => Err(UnknownDesign(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_nonsense_is_refused() {
        for d in Design::ALL {
            assert_eq!(d.as_str().parse::<Design>(), Ok(d));
        }
        assert_eq!(" Full ".parse::<Design>(), Ok(Design::Full));
        assert!("memory".parse::<Design>().is_err());
        assert_eq!(Design::default(), Design::Full);
    }
}
