//! Tenants (the platforms that plug the service in), their API keys, and the
//! learners each tenant owns. A key is stored only as the SHA-256 of its
//! secret, found by its public prefix; the caller compares the digests (in
//! constant time). A learner's name is its owner's: each tenant, and the
//! operator (learners the CLI makes), has names of its own; an operator's
//! learner becomes a tenant's when it is assigned.

use super::episodes::{SUBJECT_COLUMNS, SUBJECTS, subjects_where};
use super::{from_ms, to_ms};
use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, params};
use tm_model::subject::Subject;
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};

const KEY_COLUMNS: &str = "k.id, t.name, k.prefix, k.admin, k.created_at, k.revoked_at";

fn key_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiKey> {
    Ok(ApiKey {
        id: r.get(0)?,
        tenant: r.get(1)?,
        prefix: r.get(2)?,
        admin: r.get(3)?,
        created_at: from_ms(r.get(4)?),
        revoked_at: r.get::<_, Option<i64>>(5)?.map(from_ms),
    })
}

/// The tenant's id, creating the tenant on first use.
fn ensure_tenant(c: &Connection, tenant: &str, at: DateTime<Utc>) -> Result<i64> {
    c.execute(
        "INSERT INTO tenants (name, created_at) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
        params![tenant, to_ms(at)],
    )?;
    Ok(
        c.query_row("SELECT id FROM tenants WHERE name = ?1", [tenant], |r| {
            r.get(0)
        })?,
    )
}

fn key_where(c: &Connection, filter: &str, arg: impl rusqlite::ToSql) -> Result<Option<ApiKey>> {
    Ok(c
        .query_row(
            &format!(
                "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE {filter}"
            ),
            [arg],
            key_row,
        )
        .optional()?)
}

pub(crate) fn add_api_key(
    c: &Connection,
    tenant: &str,
    prefix: &str,
    sha256: &str,
    admin: bool,
    at: DateTime<Utc>,
) -> Result<ApiKey> {
    let tenant_id = ensure_tenant(c, tenant, at)?;
    c.execute(
        "INSERT INTO api_keys (tenant_id, prefix, sha256, admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![tenant_id, prefix, sha256, admin, to_ms(at)],
    )?;
    let id = c.last_insert_rowid();
    key_where(c, "k.id = ?1", id)?
        .ok_or_else(|| crate::Error::Corrupt(format!("key {prefix} vanished after insert")))
}

pub(crate) fn api_keys(c: &Connection) -> Result<Vec<ApiKey>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.id"
    ))?;
    let rows = stmt.query_map([], key_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn revoke_api_key(
    c: &Connection,
    prefix: &str,
    at: DateTime<Utc>,
) -> Result<Option<ApiKey>> {
    c.execute(
        "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL",
        params![prefix, to_ms(at)],
    )?;
    key_where(c, "k.prefix = ?1", prefix)
}

pub(crate) fn key_by_prefix(c: &Connection, prefix: &str) -> Result<Option<KeyOwner>> {
    let mut stmt = c.prepare_cached(
        "SELECT k.id, k.tenant_id, t.name, k.admin, k.sha256, k.revoked_at IS NOT NULL
         FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.prefix = ?1",
    )?;
    Ok(stmt
        .query_row([prefix], |r| {
            Ok(KeyOwner {
                key_id: r.get(0)?,
                tenant_id: r.get(1)?,
                tenant: r.get(2)?,
                admin: r.get(3)?,
                sha256: r.get(4)?,
                revoked: r.get(5)?,
            })
        })
        .optional()?)
}

/// The id of `owner`'s learner `slug`, if it has one.
fn learner_id(c: &Connection, owner: Owner, slug: &str) -> Result<Option<i64>> {
    Ok(c.query_row(
        "SELECT id FROM learners WHERE slug = ?1 AND IFNULL(tenant_id, 0) = ?2",
        params![slug, owner.index_key()],
        |r| r.get(0),
    )
    .optional()?)
}

/// The learner `slug` of `owner`: its id, made now when it has none.
pub(crate) fn ensure_learner(c: &Connection, owner: Owner, slug: &str, now: i64) -> Result<i64> {
    if let Some(id) = learner_id(c, owner, slug)? {
        return Ok(id);
    }
    c.execute(
        "INSERT INTO learners (slug, created_at, tenant_id) VALUES (?1, ?2, ?3)",
        params![slug, now, owner.tenant_id()],
    )?;
    Ok(c.last_insert_rowid())
}

/// The name of the tenant with this id.
pub(crate) fn name(c: &Connection, id: i64) -> Result<Option<String>> {
    Ok(
        c.query_row("SELECT name FROM tenants WHERE id = ?1", [id], |r| r.get(0))
            .optional()?,
    )
}

/// The tenant's subjects: for each name, the one it resolves to (the live
/// subject, else the newest retired one).
pub(crate) fn tenant_subjects(c: &Connection, tenant_id: i64) -> Result<Vec<Subject>> {
    let all = subjects_where(
        c,
        &format!(
            "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE l.tenant_id = ?1 ORDER BY s.key, s.id"
        ),
        [tenant_id],
    )?;
    Ok(crate::resolved_by_name(all))
}

/// Gives the operator's learner `learner` to `tenant`: `None` when neither
/// has a learner of that name, `Taken` when the tenant has one of its own
/// already (names are per owner), `Mine` once it is the tenant's.
pub(crate) fn assign_learner(
    c: &Connection,
    learner: &str,
    tenant: &str,
    at: DateTime<Utc>,
) -> Result<Option<Claim>> {
    let tenant_id = ensure_tenant(c, tenant, at)?;
    let (moved, claim) = crate::assignment(
        learner_id(c, Owner::Operator, learner)?,
        learner_id(c, Owner::Tenant(tenant_id), learner)?,
    );
    if let Some(id) = moved {
        c.execute(
            "UPDATE learners SET tenant_id = ?2 WHERE id = ?1",
            params![id, tenant_id],
        )?;
    }
    Ok(claim)
}
