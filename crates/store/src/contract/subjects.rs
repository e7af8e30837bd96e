//! The subjects' contract.

use super::fixtures::*;
use crate::{Engine, StoreExt};
use tm_model::subject::SubjectKey;
use tm_model::tenants::Owner;

/// A subject is created once, keeps its fields, and takes a time zone.
pub fn subjects_keep_their_time_zone(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let s = subject(&mut *store, "ana/zone");
    let key = s.key.clone();
    let again = store
        .write(|tx| tx.ensure_subject(Owner::Operator, &key, "Another title", None, t(5, 0)))
        .unwrap();
    assert_eq!(again, s, "an existing subject is returned as it is");
    assert_eq!(s.title, "Cells");
    assert_eq!(s.timezone, None);
    store
        .write(|tx| tx.set_timezone(&s, chrono_tz::Europe::Berlin))
        .unwrap();
    let s = store.subject(&key).unwrap().unwrap();
    assert_eq!(s.timezone, Some(chrono_tz::Europe::Berlin));
    assert!(store.subjects().unwrap().iter().any(|x| x.key == key));
    let missing = SubjectKey::parse("nobody/nothing").unwrap();
    assert_eq!(store.subject(&missing).unwrap(), None);
}
