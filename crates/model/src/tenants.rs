//! Who may see which learners: tenants (the platforms that plug the service
//! in), their API keys, and the learners each tenant owns. A key is kept only
//! as the SHA-256 of its secret and found by its public prefix.

use chrono::{DateTime, Utc};
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
