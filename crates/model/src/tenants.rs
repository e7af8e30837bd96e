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

/// Whose a learner is. Learner names are per owner: two tenants may each
/// have an `ana`, and the operator (the CLI) has learners of its own until
/// it assigns them to a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// Made outside the service, by the operator's CLI.
    Operator,
    /// A tenant's (its id).
    Tenant(i64),
}

impl Owner {
    /// The tenant's id, or `None` for the operator.
    pub fn tenant_id(self) -> Option<i64> {
        match self {
            Owner::Operator => None,
            Owner::Tenant(id) => Some(id),
        }
    }

    /// From a learner row's tenant column.
    pub fn of(tenant_id: Option<i64>) -> Owner {
        tenant_id.map_or(Owner::Operator, Owner::Tenant)
    }

    /// The number that stands for the owner in a uniqueness index (0 for the
    /// operator; tenant ids start at 1).
    pub fn index_key(self) -> i64 {
        self.tenant_id().unwrap_or(0)
    }
}
