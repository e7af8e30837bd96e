//! The hashing embedder: stable, lexical, and good enough to tell related from unrelated.

use tm_embed::{Embedder, HashEmbedder, cosine};

#[test]
fn shared_words_score_higher_than_unrelated_text() {
    let e = HashEmbedder::new();
    let v = e
        .embed(&[
            "what is a cell membrane",
            "the cell membrane surrounds the cell",
            "fractions with a common denominator",
        ])
        .unwrap();
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2);
}

#[test]
fn word_pieces_link_inflected_forms_in_other_languages() {
    // Character n-grams: "Zellen" shares pieces with "Zelle", not with "Brüche".
    let e = HashEmbedder::new();
    let q = e.embed_one("Zelle").unwrap();
    let near = e.embed_one("die Zellen teilen sich").unwrap();
    let far = e.embed_one("Brüche addieren").unwrap();
    assert!(cosine(&q, &near) > cosine(&q, &far));
}

#[test]
fn vectors_are_unit_length_and_384_wide() {
    let e = HashEmbedder::new();
    assert_eq!(e.name(), "hash-v1-384");
    assert_eq!(e.dim(), 384);
    for t in ["a", "ما هي الخلية", "細胞は生物の基本単位です"] {
        let v = e.embed_one(t).unwrap();
        assert_eq!(v.len(), 384);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-6, "{t}: {norm}");
    }
}

#[test]
fn output_is_frozen_for_a_fixed_input() {
    // Stored vectors are compared across runs and machines under the name hash-v1-384:
    // if this test fails, the scheme changed and needs a new name, not new numbers.
    let v = HashEmbedder::new()
        .embed_one("The Cell, the cell!")
        .unwrap();
    let frozen: &[(usize, u32)] = FROZEN;
    for &(i, bits) in frozen {
        assert_eq!(v[i].to_bits(), bits, "component {i}: {}", v[i]);
    }
    let nonzero = v.iter().filter(|x| **x != 0.0).count();
    assert_eq!(nonzero, FROZEN_NONZERO);
}

// Computed by an independent Python transcription of the scheme documented in src/hash.rs.
// 19 distinct features, no collisions: "the" and "cell" twice, "the cell" twice, one
// "cell the", 6 + 9 character n-grams.
const FROZEN: &[(usize, u32)] = &[
    (3, 0xbe1a533a),  // -0.150708: a character n-gram seen twice (2 × 0.3), negative sign
    (66, 0x3e340bc3), //  0.175826: the bigram "cell the" (0.7)
    (128, 0xbeb40bc3), // -0.351652: the bigram "the cell", seen twice (1.4)
    (192, 0x3e1a533a), //  0.150708: a character n-gram seen twice, positive sign
    (0, 0x00000000),  // an untouched bucket stays exactly zero
];
const FROZEN_NONZERO: usize = 19;
