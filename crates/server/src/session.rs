//! The web report's session cookie. A person opens a report with the
//! tenant's key once (`?key=`); the page answers with a cookie that holds no
//! key: `v1.<key prefix>.<expiry, Unix seconds>.<mac>`, where the mac is
//! HMAC-SHA256, keyed by the stored digest of the key, over the prefix, the
//! expiry and the report's path. So the cookie opens that one report until
//! it expires ([`SESSION_TTL`]) or the key is revoked, and no longer; it
//! cannot be moved to another page or given a later expiry without the key
//! (the home page's session, [`TENANT_COOKIE`], is the one made for `/`: it
//! opens every page of the tenant's);
//! and every server process over the same store accepts it, with no secret
//! of its own to share.

use crate::auth::{Tenant, constant_time_eq};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use chrono::{DateTime, Utc};
use hmac::{KeyInit, Mac};

/// The cookie's name.
pub const COOKIE: &str = "tm_session";
/// The tenant-wide session's cookie: the home page's session, for its path
/// [`HOME`], sent with every page (`Path=/`), so the pages the home links to
/// open without the key again.
pub const TENANT_COOKIE: &str = "tm_tenant";
/// The home page's path, the tenant-wide session's scope.
pub const HOME: &str = "/";

/// How long a session lasts: a working day.
pub const SESSION_TTL: chrono::Duration = chrono::Duration::hours(12);

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

fn mac(sha256: &str, prefix: &str, expires: i64, path: &str) -> String {
    // Any key length is valid for HMAC: `new_from_slice` cannot fail here.
    let mut m = HmacSha256::new_from_slice(sha256.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    m.update(format!("tm-session v1\n{prefix}\n{expires}\n{path}").as_bytes());
    hex::encode(m.finalize().into_bytes())
}

/// The cookie value for a key (its public prefix and stored digest) on the
/// report at `path`, valid until `expires`.
pub fn issue(prefix: &str, sha256: &str, path: &str, expires: DateTime<Utc>) -> String {
    let exp = expires.timestamp();
    format!("v1.{prefix}.{exp}.{}", mac(sha256, prefix, exp, path))
}

/// The tenant a session cookie speaks for on `path` at `now`: 401 when it is
/// malformed, expired, made for another page, or its key is revoked.
pub async fn open(
    state: &AppState,
    value: &str,
    path: &str,
    now: DateTime<Utc>,
) -> ApiResult<Tenant> {
    let expired = || {
        ApiError::unauthorized(
            "the report's session has expired or is not valid here: open the page again with ?key=<key>",
        )
    };
    let (prefix, exp, given) = canonical(value).ok_or_else(expired)?;
    if exp <= now.timestamp() {
        return Err(expired());
    }
    let cache_key = format!("session\n{value}\n{path}");
    if let Some(t) = state.cached_key(&cache_key) {
        return Ok(t);
    }
    let p = prefix.to_string();
    let owner = state
        .blocking(move |brain| Ok(brain.key_by_prefix(&p)?))
        .await?
        .ok_or_else(expired)?;
    let want = mac(&owner.sha256, prefix, exp, path);
    if owner.revoked || !constant_time_eq(want.as_bytes(), given.as_bytes()) {
        return Err(expired());
    }
    Ok(state.remember(&cache_key, owner))
}

/// The fields of a cookie spelt exactly as [`issue`] spells them: `v1`, a
/// prefix of [`crate::auth::PREFIX_LEN`] lowercase hex digits, the expiry in
/// decimal digits with no sign and no leading zero, a MAC of 64 lowercase
/// hex digits. Any other spelling is refused before a MAC is computed or the
/// store asked, so one valid cookie has one spelling and so one cache entry.
fn canonical(value: &str) -> Option<(&str, i64, &str)> {
    let lower_hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let mut parts = value.split('.');
    let (Some("v1"), Some(prefix), Some(exp), Some(mac), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    if !lower_hex(prefix, crate::auth::PREFIX_LEN) || !lower_hex(mac, 64) {
        return None;
    }
    let digits = !exp.is_empty() && exp.len() <= 12 && exp.bytes().all(|b| b.is_ascii_digit());
    if !digits || exp.starts_with('0') {
        return None;
    }
    Some((prefix, exp.parse().ok()?, mac))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_has_one_spelling() {
        let d = "ab".repeat(32);
        let good = issue(
            "0123456789ab",
            &d,
            "/",
            DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        );
        let (prefix, exp, mac) = canonical(&good).unwrap();
        assert_eq!((prefix, exp), ("0123456789ab", 1_800_000_000));
        assert_eq!(mac.len(), 64);
        let mac = mac.to_string();
        for other in [
            format!("v1.0123456789ab.01800000000.{mac}"),
            format!("v1.0123456789ab.0001800000000.{mac}"),
            format!("v1.0123456789ab.+1800000000.{mac}"),
            format!("v1.0123456789ab.-1800000000.{mac}"),
            format!("v1.0123456789ab. 1800000000.{mac}"),
            format!("v1.0123456789AB.1800000000.{mac}"),
            format!("v1.0123456789ab.1800000000.{}", mac.to_uppercase()),
            format!("v1.0123456789ab.1800000000.{mac}0"),
            format!("v1.0123456789ab.1800000000.{mac}.x"),
            format!("v1.0123456789ab.{}.{mac}", "9".repeat(13)),
            format!("v2.0123456789ab.1800000000.{mac}"),
            "v1.0123456789ab..".to_string(),
        ] {
            assert!(canonical(&other).is_none(), "{other}");
        }
    }

    #[test]
    fn a_mac_binds_the_key_the_expiry_and_the_page() {
        let d = "ab".repeat(32);
        let a = mac(&d, "0123456789ab", 100, "/subjects/ana/x");
        assert_eq!(a.len(), 64);
        assert_ne!(a, mac(&d, "0123456789ab", 101, "/subjects/ana/x"));
        assert_ne!(a, mac(&d, "0123456789ab", 100, "/subjects/ana/y"));
        assert_ne!(
            a,
            mac(&"cd".repeat(32), "0123456789ab", 100, "/subjects/ana/x")
        );
        let at = DateTime::from_timestamp(100, 0).unwrap();
        assert_eq!(
            issue("0123456789ab", &d, "/subjects/ana/x", at),
            format!("v1.0123456789ab.100.{a}")
        );
    }
}
