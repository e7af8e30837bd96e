//! Who may see which learners? Tenants (the platforms that plug the service
//! in), their API keys, and the learners each tenant owns.
//!
//! A key is stored only as the SHA-256 of its secret, found by its public
//! prefix; the caller compares the digests (in constant time). A learner
//! belongs to at most one tenant; one created outside the service (by the
//! CLI) belongs to none until `assign_learner` gives it to one.

use crate::{Error, Result, Store, Subject, Tx, from_ms, subject_row, to_ms};
use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

/// An API key as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    pub id: i64,
    pub tenant: String,
    pub prefix: String,
    pub admin: bool,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The tenant a presented key speaks for, with the digest to compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOwner {
    pub key_id: i64,
    pub tenant_id: i64,
    pub tenant: String,
    pub admin: bool,
    /// Hex SHA-256 of the whole key, as stored.
    pub sha256: String,
    pub revoked: bool,
}

/// Whether a learner slug is the tenant's to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// The learner is (now) this tenant's.
    Mine,
    /// Another tenant owns it, or it was created outside the service.
    Taken,
}

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

impl Store {
    /// Stores a new key for `tenant` (created when absent). `sha256` is the hex
    /// digest of the whole key; `prefix` its public, unique part.
    pub fn add_api_key(
        &mut self,
        tenant: &str,
        prefix: &str,
        sha256: &str,
        admin: bool,
        at: DateTime<Utc>,
    ) -> Result<ApiKey> {
        let tx = self.conn.transaction()?;
        let tenant_id = ensure_tenant(&tx, tenant, at)?;
        tx.execute(
            "INSERT INTO api_keys (tenant_id, prefix, sha256, admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![tenant_id, prefix, sha256, admin, to_ms(at)],
        )?;
        let id = tx.last_insert_rowid();
        let key = tx.query_row(
            &format!(
                "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.id = ?1"
            ),
            [id],
            key_row,
        )?;
        tx.commit()?;
        Ok(key)
    }

    /// Every key, oldest first.
    pub fn api_keys(&self) -> Result<Vec<ApiKey>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id ORDER BY k.id"
        ))?;
        let rows = stmt.query_map([], key_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Revokes the key with this prefix; `None` when there is none. Revoking
    /// twice keeps the first instant.
    pub fn revoke_api_key(&mut self, prefix: &str, at: DateTime<Utc>) -> Result<Option<ApiKey>> {
        self.conn.execute(
            "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL",
            params![prefix, to_ms(at)],
        )?;
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.prefix = ?1"
                ),
                [prefix],
                key_row,
            )
            .optional()?)
    }

    /// The key with this public prefix, with its stored digest.
    pub fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyOwner>> {
        let mut stmt = self.conn.prepare_cached(
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

    /// The tenant owning the subject's learner (`None`: no tenant).
    pub fn subject_tenant(&self, subject: &Subject) -> Result<Option<i64>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT l.tenant_id FROM subjects s JOIN learners l ON l.id = s.learner_id WHERE s.id = ?1",
        )?;
        Ok(stmt
            .query_row([subject.id], |r| r.get::<_, Option<i64>>(0))
            .optional()?
            .flatten())
    }

    /// The subjects of the tenant's learners, by key.
    pub fn tenant_subjects(&self, tenant_id: i64) -> Result<Vec<Subject>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.id, s.key, s.title, s.language, s.timezone
             FROM subjects s JOIN learners l ON l.id = s.learner_id
             WHERE l.tenant_id = ?1 ORDER BY s.key",
        )?;
        let rows = stmt.query_map([tenant_id], subject_row)?;
        rows.map(|r| r.map_err(Error::from).and_then(|s| s))
            .collect()
    }

    /// Gives an existing learner that belongs to no tenant to `tenant`
    /// (created when absent): how subjects imported by the CLI reach the
    /// service. `Taken` when another tenant owns the learner already.
    pub fn assign_learner(
        &mut self,
        learner: &str,
        tenant: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Claim>> {
        let tx = self.conn.transaction()?;
        let tenant_id = ensure_tenant(&tx, tenant, at)?;
        let owner: Option<Option<i64>> = tx
            .query_row(
                "SELECT tenant_id FROM learners WHERE slug = ?1",
                [learner],
                |r| r.get(0),
            )
            .optional()?;
        let claim = match owner {
            None => None,
            Some(Some(t)) if t != tenant_id => Some(Claim::Taken),
            Some(_) => {
                tx.execute(
                    "UPDATE learners SET tenant_id = ?2 WHERE slug = ?1",
                    params![learner, tenant_id],
                )?;
                Some(Claim::Mine)
            }
        };
        tx.commit()?;
        Ok(claim)
    }
}

impl Tx<'_> {
    /// Makes `learner` the tenant's: created for it when absent, `Taken` when
    /// it exists and is not the tenant's (another tenant's, or no tenant's).
    pub fn claim_learner(
        &mut self,
        learner: &str,
        tenant_id: i64,
        at: DateTime<Utc>,
    ) -> Result<Claim> {
        let owner: Option<Option<i64>> = self
            .tx
            .query_row(
                "SELECT tenant_id FROM learners WHERE slug = ?1",
                [learner],
                |r| r.get(0),
            )
            .optional()?;
        match owner {
            Some(Some(t)) if t == tenant_id => Ok(Claim::Mine),
            Some(_) => Ok(Claim::Taken),
            None => {
                self.tx.execute(
                    "INSERT INTO learners (slug, created_at, tenant_id) VALUES (?1, ?2, ?3)",
                    params![learner, to_ms(at), tenant_id],
                )?;
                Ok(Claim::Mine)
            }
        }
    }
}

/// The tenant's id, creating the tenant on first use.
fn ensure_tenant(tx: &rusqlite::Transaction<'_>, tenant: &str, at: DateTime<Utc>) -> Result<i64> {
    tx.execute(
        "INSERT INTO tenants (name, created_at) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
        params![tenant, to_ms(at)],
    )?;
    Ok(
        tx.query_row("SELECT id FROM tenants WHERE name = ?1", [tenant], |r| {
            r.get(0)
        })?,
    )
}
