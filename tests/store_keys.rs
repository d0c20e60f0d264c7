//! The keys of everything a client stores: every credential form a connection can carry, for
//! every store use, on two resources, gives its own key; changing any part of a credential
//! changes the key; no key holds a credential or the URL.
//!
//! 2026-07-28 caching (SEP-2549): "Caches MUST NOT be shared across authorization contexts",
//! and "`private` means the cache is per authorization context".

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_sansio::auth::{DpopBinding, DpopKey, JwsAlgorithm, JwtSigner, SignError};
use mcp_sansio::{store_key, AuthContext, Config, GrantIdentity, GrantKind, StoreUse};

/// A signer that only gives its public JWK: enough to be known by its thumbprint.
struct PublicOnly(&'static str);

impl JwtSigner for PublicOnly {
    fn algorithm(&self) -> JwsAlgorithm {
        JwsAlgorithm::ES256
    }
    fn sign(&self, _: &[u8]) -> Result<Vec<u8>, SignError> {
        Ok(vec![0; 64])
    }
    fn public_jwk(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"kty": "EC", "crv": "P-256", "x": self.0, "y": "yyyy"}))
    }
}

fn key(x: &'static str) -> DpopKey {
    DpopKey(Arc::new(PublicOnly(x)))
}

fn grant(kind: GrantKind, issuer: &str, client: &str) -> Option<GrantIdentity> {
    Some(GrantIdentity {
        kind,
        issuer: issuer.to_owned(),
        client_id: client.to_owned(),
    })
}

const SECRETS: [&str; 4] = ["secret-one", "secret-two", "secret-dpop-1", "secret-dpop-2"];

/// Every credential form, named: anonymous, bearer, DPoP (token and key), each with and
/// without a grant; and variants that change one part at a time (token, DPoP token, DPoP key,
/// grant kind, issuer, client ID).
fn forms(url: &str) -> Vec<(String, Config)> {
    let base = || Config::new(url).unwrap();
    let dpop =
        |token: &str, k: &'static str| base().with_dpop(DpopBinding::new(token, key(k), "seed"));
    let code = || grant(GrantKind::AuthorizationCode, "", "client");
    let machine = || grant(GrantKind::ClientCredentials, "https://as.example", "cid");
    vec![
        ("anonymous".into(), base()),
        ("anonymous, grant".into(), base().with_grant(code())),
        ("bearer 1".into(), base().with_bearer_token(SECRETS[0])),
        ("bearer 2".into(), base().with_bearer_token(SECRETS[1])),
        ("dpop 1 key a".into(), dpop(SECRETS[2], "key-a")),
        ("dpop 2 key a".into(), dpop(SECRETS[3], "key-a")),
        ("dpop 1 key b".into(), dpop(SECRETS[2], "key-b")),
        // The same string as a bearer token and as a DPoP token are two contexts.
        ("dpop of bearer 1".into(), dpop(SECRETS[0], "key-a")),
        (
            "bearer 1, code".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(code()),
        ),
        (
            "bearer 1, machine".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(machine()),
        ),
        (
            "bearer 1, machine, other issuer".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(grant(
                GrantKind::ClientCredentials,
                "https://as2.example",
                "cid",
            )),
        ),
        (
            "bearer 1, machine, other client".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(grant(
                GrantKind::ClientCredentials,
                "https://as.example",
                "cid2",
            )),
        ),
        (
            "bearer 1, jwt bearer".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(grant(
                GrantKind::JwtBearer,
                "https://as.example",
                "cid",
            )),
        ),
        (
            "bearer 1, enterprise".into(),
            base().with_bearer_token(SECRETS[0]).with_grant(grant(
                GrantKind::EnterpriseManaged,
                "https://as.example",
                "cid",
            )),
        ),
        (
            "dpop 1 key a, machine".into(),
            dpop(SECRETS[2], "key-a").with_grant(machine()),
        ),
    ]
}

/// Every (credential form, resource, store use) has a key of its own: no two contexts, no two
/// resources (two paths of one origin) and no two uses share an entry; a change of any part of
/// a credential (token, DPoP token, DPoP key, grant kind, issuer, client ID) or of the path is
/// a change of key.
#[test]
fn every_credential_form_and_store_use_has_its_own_key() {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut count = 0;
    for url in [
        "https://gw.example.com/tenant-a",
        "https://gw.example.com/tenant-b",
    ] {
        for (name, config) in forms(url) {
            let context = AuthContext::of(&config);
            assert_eq!(context, AuthContext::of(&config.clone()), "deterministic");
            for store_use in [
                StoreUse::catalog(&config),
                StoreUse::EraHint,
                StoreUse::Tokens,
                StoreUse::ToolPins,
            ] {
                let key = store_key(store_use, &config.endpoint, &context);
                let what = format!("{name} at {url} for {}", store_use.name());
                assert!(key.starts_with(store_use.name()), "{key}");
                for secret in SECRETS {
                    assert!(!key.contains(secret), "{what}: {key}");
                }
                assert!(
                    !key.contains("gw.example") && !key.contains("tenant"),
                    "{key}"
                );
                if let Some(other) = seen.insert(key.clone(), what.clone()) {
                    panic!("{what} and {other} share the key {key}");
                }
                count += 1;
            }
        }
    }
    assert_eq!(count, 2 * forms("https://x/").len() * 4);
}

/// The resource is the URL normalised (scheme and host case, the default port), path kept:
/// the same server spelt two ways is one resource.
#[test]
fn the_resource_is_the_normalised_url() {
    let a = Config::new("https://GW.example.com:443/tenant-a").unwrap();
    let b = Config::new("https://gw.example.com/tenant-a").unwrap();
    let key = |c: &Config| store_key(StoreUse::EraHint, &c.endpoint, &AuthContext::of(c));
    assert_eq!(key(&a), key(&b));
    let c = Config::new("https://gw.example.com/tenant-a/").unwrap();
    assert_ne!(key(&c), key(&b));
}

/// Task handles and tool pins outlive a token: their keys are built with the principal
/// (`AuthContext::principal`), so a refreshed token of one grant (bearer or DPoP, the key
/// rotated or not) finds the same entries, and another grant, a token without a grant or
/// anonymous does not. The catalog and the era hint stay per credential: a refresh changes
/// their keys.
#[test]
fn task_handle_and_pin_keys_are_the_principals() {
    let url = "https://gw.example.com/tenant-a";
    let machine = || grant(GrantKind::ClientCredentials, "https://as.example", "cid");
    let base = || Config::new(url).unwrap();
    let before = base().with_bearer_token(SECRETS[0]).with_grant(machine());
    let refreshed = base().with_bearer_token(SECRETS[1]).with_grant(machine());
    let rotated = base()
        .with_dpop(DpopBinding::new(SECRETS[3], key("key-b"), "seed"))
        .with_grant(machine());
    let others = [
        base().with_bearer_token(SECRETS[1]).with_grant(grant(
            GrantKind::ClientCredentials,
            "https://as.example",
            "cid2",
        )),
        base().with_bearer_token(SECRETS[1]).with_grant(grant(
            GrantKind::JwtBearer,
            "https://as.example",
            "cid",
        )),
        base().with_bearer_token(SECRETS[1]),
        base().with_bearer_token(SECRETS[0]),
        base(),
        base().with_grant(machine()),
    ];
    for store_use in [StoreUse::task_handle("task-1"), StoreUse::ToolPins] {
        let key = |c: &Config| store_key(store_use, &c.endpoint, &AuthContext::principal(c));
        assert_eq!(key(&before), key(&refreshed), "{}", store_use.name());
        assert_eq!(key(&before), key(&rotated), "{}", store_use.name());
        for (i, other) in others.iter().enumerate() {
            assert_ne!(key(&before), key(other), "{} other {i}", store_use.name());
        }
        for secret in SECRETS {
            assert!(!key(&refreshed).contains(secret));
        }
    }
    // Per credential: a refresh is a miss there.
    for store_use in [StoreUse::catalog(&before), StoreUse::EraHint] {
        let key = |c: &Config| store_key(store_use, &c.endpoint, &AuthContext::of(c));
        assert_ne!(key(&before), key(&refreshed), "{}", store_use.name());
    }
}
