//! A deterministic feature-hashing embedder: how do we get usable vectors without a model?
//!
//! For tests and for machines where the neural model cannot be had. Its vectors are lexical,
//! not semantic: texts that share words or word pieces score high, paraphrases do not.
//!
//! The scheme, `hash-v1-384`, is frozen: changing anything below changes every stored vector
//! and must come with a new name.
//!
//! 1. Normalise: Unicode NFKC, then lowercase.
//! 2. Words: maximal runs of alphanumeric characters (any script).
//! 3. Features, each a string with a kind prefix:
//!    `w:<word>` (weight 1.0), `b:<word> <next word>` (weight 0.7), and the character
//!    3-, 4- and 5-grams of `<` + word + `>` as `c:<gram>` (weight 0.3 each).
//! 4. Each feature is hashed with 64-bit FNV-1a over its UTF-8 bytes (offset basis
//!    0xcbf29ce484222325, prime 0x100000001b3). Bucket = hash mod 384; the sign is the
//!    hash's top bit (set = negative), so unrelated collisions tend to cancel.
//! 5. Accumulate in f64 in text order, cast to f32, L2-normalise. A text with no words
//!    gives the zero vector (cosine 0 with everything).

use unicode_normalization::UnicodeNormalization;

use crate::{Embedder, Result, l2_normalise};

const DIM: usize = 384;
const WORD_WEIGHT: f64 = 1.0;
const BIGRAM_WEIGHT: f64 = 0.7;
const CHAR_WEIGHT: f64 = 0.3;

/// The deterministic feature-hashing embedder (`hash-v1-384`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HashEmbedder;

impl HashEmbedder {
    /// The name stored beside its vectors.
    pub const NAME: &'static str = "hash-v1-384";

    pub fn new() -> Self {
        HashEmbedder
    }

    /// One text's vector; infallible, unlike the trait method.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let normalised: String = text.nfkc().collect::<String>().to_lowercase();
        let words: Vec<&str> = normalised
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut acc = [0f64; DIM];
        let mut feature = String::new();
        for (i, word) in words.iter().enumerate() {
            feature.clear();
            feature.push_str("w:");
            feature.push_str(word);
            add(&mut acc, &feature, WORD_WEIGHT);

            if let Some(next) = words.get(i + 1) {
                feature.clear();
                feature.push_str("b:");
                feature.push_str(word);
                feature.push(' ');
                feature.push_str(next);
                add(&mut acc, &feature, BIGRAM_WEIGHT);
            }

            let chars: Vec<char> = std::iter::once('<')
                .chain(word.chars())
                .chain(std::iter::once('>'))
                .collect();
            for n in 3..=5 {
                for gram in chars.windows(n) {
                    feature.clear();
                    feature.push_str("c:");
                    feature.extend(gram);
                    add(&mut acc, &feature, CHAR_WEIGHT);
                }
            }
        }
        let mut v: Vec<f32> = acc.iter().map(|&x| x as f32).collect();
        l2_normalise(&mut v);
        v
    }
}

fn add(acc: &mut [f64; DIM], feature: &str, weight: f64) {
    let h = fnv1a64(feature.as_bytes());
    // DIM is tiny, so the modulo's bias is negligible; the cast is exact after the modulo.
    let bucket = (h % DIM as u64) as usize;
    let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
    acc[bucket] += sign * weight;
}

/// 64-bit FNV-1a: fixed, tiny, identical on every platform.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn calibration(&self) -> crate::Calibration {
        crate::Calibration::HASHED
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_published_test_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn text_without_words_is_the_zero_vector() {
        let v = HashEmbedder.vector(" ... ?! ");
        assert_eq!(v.len(), DIM);
        assert!(v.iter().all(|&x| x == 0.0));
    }

    #[test]
    fn nfkc_and_case_do_not_change_the_vector() {
        // Fullwidth letters fold to ASCII under NFKC.
        assert_eq!(
            HashEmbedder.vector("ＣＥＬＬ Membrane"),
            HashEmbedder.vector("cell membrane")
        );
    }
}
