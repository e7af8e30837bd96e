//! Tenants (the platforms that plug the service in), their API keys, and the
//! learners each tenant owns. A key is stored only as the SHA-256 of its
//! secret, found by its public prefix; the caller compares the digests (in
//! constant time). A learner's name is its owner's: each tenant, and the
//! operator (learners the CLI makes), has names of its own; an operator's
//! learner becomes a tenant's when it is assigned.

use super::subjects::{SUBJECT_COLUMNS, SUBJECTS, learner_id, subjects_where};
use super::{Conn, SqliteTx, from_ms, to_ms};
use crate::{Result, TenantRead, TenantWrite};
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

pub(crate) fn api_keys(c: &Connection) -> Result<Vec<ApiKey>> {
    let mut stmt = c.prepare(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.id"
    ))?;
    let rows = stmt.query_map([], key_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl<T: Conn> TenantRead for T {
    fn api_keys(&self) -> Result<Vec<ApiKey>> {
        api_keys(self.conn())
    }
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        let c = self.conn();
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
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        let c = self.conn();
        let all = subjects_where(
            c,
            &format!(
                "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE l.tenant_id = ?1 ORDER BY s.key, s.id"
            ),
            [tenant_id],
        )?;
        Ok(crate::resolved_by_name(all))
    }
}

impl TenantWrite for SqliteTx<'_> {
    fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        let c: &Connection = &self.tx;
        let tenant_id = ensure_tenant(c, tenant, at)?;
        c.execute(
            "INSERT INTO api_keys (tenant_id, prefix, sha256, admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![tenant_id, prefix, sha256, admin, to_ms(at)],
        )?;
        let id = c.last_insert_rowid();
        key_where(c, "k.id = ?1", id)?
            .ok_or_else(|| crate::Error::Corrupt(format!("key {prefix} vanished after insert")))
    }
    fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        let c: &Connection = &self.tx;
        c.execute(
            "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL",
            params![prefix, to_ms(at)],
        )?;
        key_where(c, "k.prefix = ?1", prefix)
    }
    fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        let c: &Connection = &self.tx;
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
}
