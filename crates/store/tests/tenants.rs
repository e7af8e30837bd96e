//! Tenants own learners; keys are found by prefix and revoked for good.

use chrono::{TimeZone, Utc};
use tm_model::subject::SubjectKey;
use tm_store::{Claim, Store};

#[test]
fn a_learner_is_claimed_once_and_keys_revoke() {
    let mut store = Store::open_in_memory().unwrap();
    let at = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
    let a = store.add_api_key("acme", "aaaa", "00", false, at).unwrap();
    let b = store.add_api_key("blue", "bbbb", "11", true, at).unwrap();
    let a_id = store.key_by_prefix("aaaa").unwrap().unwrap().tenant_id;
    let b_id = store.key_by_prefix("bbbb").unwrap().unwrap().tenant_id;
    assert_ne!(a_id, b_id);
    assert!(store.key_by_prefix("bbbb").unwrap().unwrap().admin);
    let key = SubjectKey::parse("ana/cells").unwrap();
    let subject = store
        .write(|tx| {
            assert_eq!(tx.claim_learner("ana", a_id, at)?, Claim::Mine);
            assert_eq!(tx.claim_learner("ana", b_id, at)?, Claim::Taken);
            tx.ensure_subject(&key, "Cells", None, at)
        })
        .unwrap();
    assert_eq!(store.subject_tenant(&subject).unwrap(), Some(a_id));
    assert_eq!(store.tenant_subjects(a_id).unwrap().len(), 1);
    assert!(store.tenant_subjects(b_id).unwrap().is_empty());
    // A learner made outside the service belongs to nobody until assigned.
    let other = SubjectKey::parse("bo/cells").unwrap();
    store
        .write(|tx| tx.ensure_subject(&other, "", None, at))
        .unwrap();
    assert_eq!(
        store.assign_learner("bo", "blue", at).unwrap(),
        Some(Claim::Mine)
    );
    assert_eq!(
        store.assign_learner("bo", "acme", at).unwrap(),
        Some(Claim::Taken)
    );
    assert_eq!(store.assign_learner("nobody", "acme", at).unwrap(), None);

    let revoked = store.revoke_api_key(&a.prefix, at).unwrap().unwrap();
    assert_eq!(revoked.revoked_at, Some(at));
    assert!(store.key_by_prefix("aaaa").unwrap().unwrap().revoked);
    assert!(store.revoke_api_key("zzzz", at).unwrap().is_none());
    assert_eq!(store.api_keys().unwrap().len(), 2);
    assert_eq!(b.tenant, "blue");
}
