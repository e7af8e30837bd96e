//! What every contract check builds on: fixed instants, a subject, episodes.

use crate::{Store, StoreExt};
use chrono::{DateTime, Duration, TimeZone, Utc};
use tm_model::episodes::{Kind, NewEpisode, salience};
use tm_model::subject::{Subject, SubjectKey};
use tm_model::tenants::Owner;

pub(crate) fn t(day: u32, minute: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, 9, 0, 0).unwrap() + Duration::minutes(minute)
}

pub(crate) fn subject(store: &mut dyn Store, key: &str) -> Subject {
    let key = SubjectKey::parse(key).unwrap();
    store
        .write(|tx| tx.ensure_subject(Owner::Operator, &key, "Cells", Some("en"), t(1, 0)))
        .unwrap()
}

pub(crate) fn episode(i: usize, text: &str) -> NewEpisode {
    let kind = if i.is_multiple_of(3) {
        Kind::Check
    } else {
        Kind::Question
    };
    let mut data = serde_json::Map::new();
    if kind == Kind::Check {
        data.insert("topic".into(), "osmosis".into());
        data.insert("verdict".into(), "wrong".into());
    }
    NewEpisode {
        kind,
        at: t(1, i as i64),
        salience: salience(kind, None),
        summary: format!("episode {i}"),
        text: text.to_string(),
        concepts: vec![format!("Organelle {}", i % 3)],
        evidence: Vec::new(),
        data,
        external_id: None,
        import_key: None,
        salt: None,
    }
}

pub(crate) fn fill(store: &mut dyn Store, s: &Subject, n: usize) -> Vec<i64> {
    store
        .write(|tx| {
            (0..n)
                .map(|i| {
                    tx.append(s, &episode(i, &format!("What does organelle {i} do?")))
                        .map(|a| a.id)
                })
                .collect::<crate::Result<Vec<_>>>()
        })
        .unwrap()
}
