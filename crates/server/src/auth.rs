//! Who is asking? API keys are `tm_` followed by 64 hex digits (32 random
//! bytes); the first 12 digits are the public prefix the key is found by, and
//! only the SHA-256 of the whole key is stored. Digests are compared in
//! constant time. A key is presented as `Authorization: Bearer <key>`; the
//! HTML report also accepts the `tm_key` cookie or `?key=` (see `web`).

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
pub use crate::state::{KEY_CACHE_TTL, Tenant};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use std::time::Instant;

/// Length of the public prefix, in hex digits.
pub const PREFIX_LEN: usize = 12;

/// A freshly made key: the secret (shown once) and what is stored.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub secret: String,
    pub prefix: String,
    pub sha256: String,
}

/// Makes a key from 32 bytes of the operating system's randomness.
pub fn generate() -> Result<NewKey, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    let secret = format!("tm_{}", hex::encode(bytes));
    let prefix = secret[3..3 + PREFIX_LEN].to_string();
    let sha256 = digest(&secret);
    Ok(NewKey {
        secret,
        prefix,
        sha256,
    })
}

/// Hex SHA-256 of a presented key.
pub fn digest(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// The public prefix of a well-formed key.
pub fn prefix_of(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("tm_")?;
    (rest.len() == 64 && rest.bytes().all(|b| b.is_ascii_hexdigit())).then(|| &rest[..PREFIX_LEN])
}

/// Equal byte strings, in time that depends only on their lengths.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Resolves a presented key to its tenant (cached for [`KEY_CACHE_TTL`]).
pub async fn authenticate(state: &AppState, key: &str) -> ApiResult<Tenant> {
    let bad = || ApiError::unauthorized("the API key is not valid");
    let prefix = prefix_of(key).ok_or_else(bad)?.to_string();
    let presented = digest(key);
    if let Some(t) = state.cached_key(&presented) {
        return Ok(t);
    }
    let owner = state
        .blocking(move |brain| Ok(brain.key_by_prefix(&prefix)?))
        .await?
        .ok_or_else(bad)?;
    if owner.revoked || !constant_time_eq(owner.sha256.as_bytes(), presented.as_bytes()) {
        return Err(bad());
    }
    Ok(state.remember(&presented, owner))
}

impl AppState {
    /// The tenant a verified key (or session) speaks for, remembered under
    /// `cache_key` for [`KEY_CACHE_TTL`].
    pub(crate) fn remember(&self, cache_key: &str, owner: tm_model::tenants::KeyOwner) -> Tenant {
        let tenant = Tenant {
            id: owner.tenant_id,
            name: owner.tenant,
            admin: owner.admin,
        };
        self.cache_key(cache_key, tenant.clone(), Instant::now());
        tenant
    }
}

/// The bearer token of a request, if any.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(axum::http::header::AUTHORIZATION)?;
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

impl FromRequestParts<AppState> for Tenant {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Tenant> {
        let key = bearer(parts).ok_or_else(|| {
            ApiError::unauthorized("send an API key as `Authorization: Bearer <key>`")
        })?;
        authenticate(state, key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_and_found_by_their_prefix() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a.secret, b.secret);
        assert_eq!(prefix_of(&a.secret), Some(a.prefix.as_str()));
        assert_eq!(digest(&a.secret), a.sha256);
        assert!(prefix_of("tm_short").is_none());
        assert!(prefix_of(&a.secret.replace("tm_", "xx_")).is_none());
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
