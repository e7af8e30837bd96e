//! `keys`: the service's API keys, one or more per tenant (platform). A key's
//! secret is printed once, at creation; the store keeps only its SHA-256.

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use std::process::ExitCode;
use tm_brain::Brain;
use tm_model::tenants::Claim;

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Make a key for a tenant (created when new) and print it once.
    Create {
        /// The tenant (platform) the key speaks for.
        #[arg(long)]
        tenant: String,
        /// The key may run the nightly loop for every subject.
        #[arg(long)]
        admin: bool,
    },
    /// List keys (prefixes only; secrets are never stored).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its prefix (the 12 hex digits after `tm_`).
    Revoke { prefix: String },
    /// Give a learner created outside the service (by `import`) to a tenant.
    Assign {
        #[arg(long)]
        tenant: String,
        learner: String,
    },
}

/// Tenant names follow the slug rules of learners and subjects.
fn check_tenant(name: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        bail!("a tenant name is 1–64 lowercase letters, digits, '-' or '_'");
    }
    Ok(())
}

pub fn run(brain: &Brain, command: KeysCommand) -> Result<ExitCode> {
    let now = chrono::Utc::now();
    match command {
        KeysCommand::Create { tenant, admin } => {
            check_tenant(&tenant)?;
            let key = tm_server::auth::generate().context("reading the system's randomness")?;
            let stored = brain.add_api_key(&tenant, &key.prefix, &key.sha256, admin, now)?;
            println!("{}", key.secret);
            eprintln!(
                "key {} for tenant {}{} — shown once; send it as `Authorization: Bearer <key>`",
                stored.prefix,
                stored.tenant,
                if admin { " (admin)" } else { "" }
            );
        }
        KeysCommand::List { json } => {
            let keys = brain.api_keys()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&keys)?);
            } else if keys.is_empty() {
                println!("no keys");
            } else {
                for k in keys {
                    println!(
                        "{}  {:<20} {}{}  created {}",
                        k.prefix,
                        k.tenant,
                        if k.admin { "admin " } else { "" },
                        k.revoked_at
                            .map(|t| format!("REVOKED {}", t.format("%Y-%m-%d %H:%M")))
                            .unwrap_or_else(|| "active".into()),
                        k.created_at.format("%Y-%m-%d %H:%M"),
                    );
                }
            }
        }
        KeysCommand::Revoke { prefix } => match brain.revoke_api_key(&prefix, now)? {
            Some(k) => println!("key {} of tenant {} is revoked", k.prefix, k.tenant),
            None => bail!("no key has the prefix {prefix:?}"),
        },
        KeysCommand::Assign { tenant, learner } => {
            check_tenant(&tenant)?;
            match brain.assign_learner(&learner, &tenant, now)? {
                Some(Claim::Mine) => println!("learner {learner} now belongs to tenant {tenant}"),
                Some(Claim::Taken) => bail!(
                    "tenant {tenant} has a learner named {learner} already: names are per tenant, rename one of them"
                ),
                None => bail!("no learner {learner}"),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
