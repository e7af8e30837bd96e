//! Tenants, their API keys, and which learners are theirs.

use super::db::Db;
use super::rows::*;
use super::subjects::{SUBJECT_COLUMNS, SUBJECTS, learner_id, subjects_where};
use super::{Pg, PgTx};
use crate::{Result, TenantRead, TenantWrite};
pub(crate) use crate::{from_ms, to_ms};
use chrono::{DateTime, Utc};
use postgres::{GenericClient, Row};
use tm_model::subject::Subject;
use tm_model::tenants::{ApiKey, Claim, KeyOwner, Owner};

const KEY_COLUMNS: &str = "k.id, t.name, k.prefix, k.admin, k.created_at, k.revoked_at";

pub(crate) fn key_row(r: &Row) -> ApiKey {
    ApiKey {
        id: r.get(0),
        tenant: r.get(1),
        prefix: r.get(2),
        admin: r.get(3),
        created_at: from_ms(r.get(4)),
        revoked_at: r.get::<_, Option<i64>>(5).map(from_ms),
    }
}

pub(crate) fn ensure_tenant<C: GenericClient>(
    c: &mut Db<'_, C>,
    tenant: &str,
    at: DateTime<Utc>,
) -> Result<i64> {
    c.execute(
        "INSERT INTO tenants (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        &[&tenant, &to_ms(at)],
    )?;
    Ok(
        c.query_one("SELECT id FROM tenants WHERE name = $1", &[&tenant])?
            .get(0),
    )
}

pub(crate) fn key_where<C: GenericClient>(
    c: &mut Db<'_, C>,
    filter: &str,
    arg: &(dyn postgres::types::ToSql + Sync),
) -> Result<Option<ApiKey>> {
    Ok(c
        .query_opt(
            &format!("SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE {filter}"),
            &[arg],
        )?
        .map(|r| key_row(&r)))
}

pub(crate) fn api_keys<C: GenericClient>(c: &mut Db<'_, C>) -> Result<Vec<ApiKey>> {
    Ok(c
        .query(
            &format!("SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.id"),
            &[],
        )?
        .iter()
        .map(key_row)
        .collect())
}

impl<C: GenericClient> TenantRead for Pg<C> {
    fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        self.with(|c| {
            let all = subjects_where(
                c,
                &format!(
                    "SELECT {SUBJECT_COLUMNS} FROM {SUBJECTS} WHERE l.tenant_id = $1 ORDER BY s.key, s.id"
                ),
                &[&tenant_id],
            )?;
            Ok(crate::resolved_by_name(all))
        })
    }
    fn api_keys(&self) -> Result<Vec<ApiKey>> {
        self.with(|c| api_keys(c))
    }
    fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        self.with(|c| {
            Ok(c.query_opt(
                "SELECT k.id, k.tenant_id, t.name, k.admin, k.sha256, k.revoked_at IS NOT NULL
                     FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.prefix = $1",
                &[&prefix],
            )?
            .map(|r| KeyOwner {
                key_id: r.get(0),
                tenant_id: r.get(1),
                tenant: r.get(2),
                admin: r.get(3),
                sha256: r.get(4),
                revoked: r.get(5),
            }))
        })
    }
}

impl TenantWrite for PgTx<'_> {
    fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        self.with(|c| {
            let tenant_id = ensure_tenant(c, tenant, at)?;
            let id: i64 = c
                .query_one(
                    "INSERT INTO api_keys (tenant_id, prefix, sha256, admin, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
                    &[&tenant_id, &prefix, &sha256, &admin, &to_ms(at)],
                )?
                .get(0);
            key_where(c, "k.id = $1", &id)?
                .ok_or_else(|| corrupt(format!("key {prefix} vanished after insert")))
        })
    }
    fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        self.with(|c| {
            c.execute(
                "UPDATE api_keys SET revoked_at = $2 WHERE prefix = $1 AND revoked_at IS NULL",
                &[&prefix, &to_ms(at)],
            )?;
            key_where(c, "k.prefix = $1", &prefix)
        })
    }
    fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        self.with(|c| {
            let tenant_id = ensure_tenant(c, tenant, at)?;
            let (moved, claim) = crate::assignment(
                learner_id(c, Owner::Operator, learner)?,
                learner_id(c, Owner::Tenant(tenant_id), learner)?,
            );
            if let Some(id) = moved {
                c.execute(
                    "UPDATE learners SET tenant_id = $2 WHERE id = $1",
                    &[&id, &tenant_id],
                )?;
            }
            Ok(claim)
        })
    }
}
