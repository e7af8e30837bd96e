//! Every public conversation set is split once into a **dev** half, which
//! ranking changes are tuned on, and a **test** half, which they are judged
//! on. The split is a rule on the items' own ids, so it never moves when a
//! file is read again or a limit changes:
//!
//! - LoCoMo, by conversation: the conversations ordered by [`fnv1a`] of their
//!   `sample_id`; the first half (rounded down) is dev, the rest test. On
//!   `locomo10.json`: five and five.
//! - LongMemEval, by question: dev when [`fnv1a`] of the `question_id` is
//!   even, test when it is odd.

use std::str::FromStr;

/// Which half of a set a run reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Split {
    /// The half ranking changes are tuned on.
    Dev,
    /// The half they are judged on.
    Test,
    /// Both.
    #[default]
    All,
}

impl Split {
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
            Split::All => "all",
        }
    }

    /// Whether an item of `half` (dev or test) is read by this split.
    pub fn keeps(self, half: Split) -> bool {
        self == Split::All || self == half
    }
}

impl FromStr for Split {
    type Err = String;
    fn from_str(s: &str) -> Result<Split, String> {
        match s {
            "dev" => Ok(Split::Dev),
            "test" => Ok(Split::Test),
            "all" => Ok(Split::All),
            other => Err(format!("a split is dev, test or all, not {other:?}")),
        }
    }
}

/// 64-bit FNV-1a of the id's UTF-8 bytes: small, fixed, and the same on
/// every machine and build.
pub fn fnv1a(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A LongMemEval question's half, by its id.
pub fn by_question(question_id: &str) -> Split {
    if fnv1a(question_id).is_multiple_of(2) {
        Split::Dev
    } else {
        Split::Test
    }
}

/// The half of each of a set's conversations (LoCoMo's rule), in the order given.
pub fn by_conversation(sample_ids: &[&str]) -> Vec<Split> {
    let mut order: Vec<(u64, usize)> = sample_ids
        .iter()
        .enumerate()
        .map(|(i, id)| (fnv1a(id), i))
        .collect();
    order.sort();
    let mut out = vec![Split::Test; sample_ids.len()];
    for (_, i) in order.iter().take(sample_ids.len() / 2) {
        out[*i] = Split::Dev;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_halves_are_fixed_and_cover_the_set() {
        // FNV-1a's published test vectors.
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
        let ids = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"];
        let halves = by_conversation(&ids);
        assert_eq!(halves.iter().filter(|h| **h == Split::Dev).count(), 3);
        assert_eq!(halves, by_conversation(&ids));
        // An id's half does not depend on the others around it.
        let mut rev = ids;
        rev.reverse();
        let mut back = by_conversation(&rev);
        back.reverse();
        assert_eq!(back, halves);
        assert!(Split::All.keeps(Split::Dev) && Split::All.keeps(Split::Test));
        assert!(!Split::Dev.keeps(Split::Test));
        assert_eq!("test".parse::<Split>(), Ok(Split::Test));
        assert!("train".parse::<Split>().is_err());
    }
}
