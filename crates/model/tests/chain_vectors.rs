//! The test vectors of the chain hash (`tools/chain_vectors.json`, the ones
//! an outside verifier checks itself against) are what this code computes.

use tm_model::episodes::{EpisodeFields, content_digest, episode_hash, genesis_hash};

fn vectors() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tools/chain_vectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn hash32(hex_text: &str) -> [u8; 32] {
    hex::decode(hex_text).unwrap().try_into().unwrap()
}

#[test]
fn the_published_vectors_are_what_the_code_computes() {
    let v = vectors();
    let genesis = v["genesis"].as_array().unwrap();
    assert!(!genesis.is_empty());
    for g in genesis {
        let subject = g["subject"].as_str().unwrap();
        assert_eq!(
            hex::encode(genesis_hash(subject)),
            g["genesis_hash"].as_str().unwrap(),
            "genesis of {subject}"
        );
    }
    let episodes = v["episodes"].as_array().unwrap();
    assert!(episodes.len() >= 3);
    for e in episodes {
        let s = |k: &str| e[k].as_str().unwrap();
        // Encoding 2 vectors carry their salt (hex); v1 vectors none.
        let salt = e["salt"].as_str().map(|h| hex::decode(h).unwrap());
        let fields = EpisodeFields {
            subject: s("subject"),
            seq: e["seq"].as_u64().unwrap(),
            kind: s("kind"),
            at_ms: e["at_ms"].as_i64().unwrap(),
            salience: e["salience"].as_f64().unwrap(),
            summary: s("summary"),
            text: s("text"),
            concepts_json: s("concepts"),
            evidence_json: s("evidence"),
            data_json: s("data"),
            external_id: e["external_id"].as_str(),
            salt: salt.as_deref(),
            digest: None,
        };
        if let Some(salt) = &salt {
            assert_eq!(
                hex::encode(content_digest(&fields, salt)),
                s("content_digest"),
                "{}",
                s("why")
            );
        }
        assert_eq!(
            hex::encode(episode_hash(&fields, &hash32(s("prev_hash")))),
            s("hash"),
            "{}",
            s("why")
        );
    }
}
