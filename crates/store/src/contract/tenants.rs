//! The tenants' contract: keys, learner names per owner, retired subjects.

use super::fixtures::*;
use crate::{Engine, Error, Store, StoreExt};
use tm_model::subject::SubjectKey;
use tm_model::tenants::{Claim as Taking, Owner};

/// Keys belong to tenants; learner names are per owner; a subject erased
/// whole is retired and frees its name.
pub fn tenants_own_learners_and_keys(engine: &dyn Engine) {
    let mut store = engine.connect().unwrap();
    let key = store
        .write(|tx| tx.add_api_key("acme", "aaaabbbbcccc", &"d".repeat(64), false, t(1, 0)))
        .unwrap();
    assert_eq!((key.tenant.as_str(), key.admin), ("acme", false));
    let owner = store.key_by_prefix("aaaabbbbcccc").unwrap().unwrap();
    assert_eq!((owner.tenant.as_str(), owner.revoked), ("acme", false));
    assert_eq!(owner.sha256, "d".repeat(64));
    assert!(store.api_keys().unwrap().iter().any(|k| k.id == key.id));
    let revoked = store
        .write(|tx| tx.revoke_api_key("aaaabbbbcccc", t(2, 0)))
        .unwrap()
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(t(2, 0)));
    let again = store
        .write(|tx| tx.revoke_api_key("aaaabbbbcccc", t(3, 0)))
        .unwrap()
        .unwrap();
    assert_eq!(again.revoked_at, Some(t(2, 0)), "the first instant stays");
    assert!(
        store
            .key_by_prefix("aaaabbbbcccc")
            .unwrap()
            .unwrap()
            .revoked
    );
    assert!(
        store
            .write(|tx| tx.revoke_api_key("nope", t(3, 0)))
            .unwrap()
            .is_none()
    );

    let acme = owner.tenant_id;
    let zoe_key = SubjectKey::parse("zoe/cells").unwrap();
    let make = |store: &mut dyn Store, owner: Owner| {
        store
            .write(|tx| tx.ensure_subject(owner, &zoe_key, "Cells", Some("en"), t(1, 0)))
            .unwrap()
    };
    let zoe = make(&mut *store, Owner::Tenant(acme));
    assert_eq!(zoe.owner, Owner::Tenant(acme));
    assert_eq!(
        store
            .tenant_subjects(acme)
            .unwrap()
            .iter()
            .map(|s| s.key.to_string())
            .collect::<Vec<_>>(),
        ["zoe/cells"]
    );
    let other = store
        .write(|tx| tx.add_api_key("globex", "eeeeffff0000", &"e".repeat(64), true, t(1, 0)))
        .unwrap();
    let globex = store
        .key_by_prefix(&other.prefix)
        .unwrap()
        .unwrap()
        .tenant_id;
    // Learner names are per tenant: globex has a zoe of its own.
    let theirs = make(&mut *store, Owner::Tenant(globex));
    assert_ne!(theirs.id, zoe.id);
    assert_eq!(
        make(&mut *store, Owner::Tenant(acme)),
        zoe,
        "found, not made again"
    );
    assert_eq!(
        store.subject_of(Owner::Tenant(acme), &zoe_key).unwrap(),
        Some(zoe.clone())
    );
    assert_eq!(
        store.subject_of(Owner::Tenant(globex), &zoe_key).unwrap(),
        Some(theirs.clone())
    );
    assert_eq!(store.subject_of(Owner::Operator, &zoe_key).unwrap(), None);
    match store.subject(&zoe_key) {
        Err(e @ Error::AmbiguousSubject { .. }) => {
            let said = e.to_string();
            assert!(
                said.contains("tenant acme") && said.contains("tenant globex"),
                "{said}"
            );
        }
        other => panic!("the operator's lookup of a shared name: {other:?}"),
    }
    // A learner the operator made becomes a tenant's when assigned, unless
    // the tenant has one of that name.
    let cli = subject(&mut *store, "cli-made/cells");
    assert_eq!(cli.owner, Owner::Operator);
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("cli-made", "globex", t(1, 0)))
            .unwrap(),
        Some(Taking::Mine)
    );
    assert_eq!(
        store.subject(&cli.key).unwrap().map(|s| s.owner),
        Some(Owner::Tenant(globex))
    );
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("cli-made", "acme", t(1, 0)))
            .unwrap(),
        None,
        "the operator has no cli-made any more, nor has acme"
    );
    subject(&mut *store, "zoe/notes");
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("zoe", "acme", t(1, 0)))
            .unwrap(),
        Some(Taking::Taken),
        "acme has a zoe already"
    );
    assert_eq!(
        store
            .write(|tx| tx.assign_learner("nobody", "acme", t(1, 0)))
            .unwrap(),
        None
    );
    // A subject erased whole is retired: it stays found (its chain and the
    // erasure are kept) until a new subject takes its name.
    let erasure = tm_model::episodes::NewErasure {
        at: t(2, 0),
        scope: "learner".into(),
        target: "zoe".into(),
        reference: String::new(),
        reason: String::new(),
    };
    store
        .write(|tx| tx.erase(&erasure, std::slice::from_ref(&zoe)))
        .unwrap();
    let retired = store
        .subject_of(Owner::Tenant(acme), &zoe_key)
        .unwrap()
        .unwrap();
    assert_eq!((retired.id, retired.retired), (zoe.id, true));
    let again = make(&mut *store, Owner::Tenant(acme));
    assert!(again.id != zoe.id && !again.retired);
    assert_eq!(
        store.subject_of(Owner::Tenant(acme), &zoe_key).unwrap(),
        Some(again.clone())
    );
    assert_eq!(
        store
            .tenant_subjects(acme)
            .unwrap()
            .iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        [again.id],
        "a name lists the subject it resolves to"
    );
    assert_eq!(
        store
            .subjects()
            .unwrap()
            .iter()
            .filter(|s| s.key == zoe_key)
            .count(),
        3,
        "the operator lists every subject, the retired one too"
    );
}
