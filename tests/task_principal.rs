//! A task handle belongs to the principal a session acts for (`AuthContext::principal`), not to
//! one access token: with a grant (`Config::grant`), every token of that grant, before and after a
//! refresh or a DPoP key rotation, resumes it; another grant, anonymous or a token the embedder
//! brings does not; without a grant the principal is the credential, as before. A handle of the
//! token-bound format (version 1) is refused with its own error, never read under the new meaning.
//!
//! SEP-2663: "Clients SHOULD persist task IDs to durable storage so that polling can resume after
//! a crash or restart", and "Servers MUST perform authentication and authorization checks on each
//! task-related request": the client keeps a handle for as long as the task runs (an hour by
//! default) and never presents one principal's task under another's credential.

use std::sync::Arc;

use mcp_sansio::auth::{DpopBinding, DpopKey, JwsAlgorithm, JwtSigner, SignError};
use mcp_sansio::task::{
    parse_create_result, HandleError, TaskHandle, HANDLE_VERSION, TOKEN_BOUND_HANDLE_VERSION,
};
use mcp_sansio::{AuthContext, Config, Credential, Era, GrantIdentity, GrantKind};

const CREATE: &str = r#"{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}"#;

const URL: &str = "http://127.0.0.1:8080/mcp";

fn base() -> Config {
    Config::new(URL).unwrap().with_tasks(true)
}

fn grant(client: &str) -> Option<GrantIdentity> {
    Some(GrantIdentity {
        kind: GrantKind::ClientCredentials,
        issuer: "https://as.example".to_owned(),
        client_id: client.to_owned(),
    })
}

/// Token `token` of grant `client`.
fn granted(token: &str, client: &str) -> Config {
    base().with_bearer_token(token).with_grant(grant(client))
}

fn handle_of(config: &Config) -> TaskHandle {
    let task = parse_create_result(CREATE, &config.budgets).unwrap();
    TaskHandle::new(config, Era::Modern, "2026-07-28", &task, 1_000).unwrap()
}

/// A signer known by its public JWK only (its `x` names the key).
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

fn dpop(token: &str, key: &'static str) -> Config {
    base().with_dpop(DpopBinding::new(
        token,
        DpopKey(Arc::new(PublicOnly(key))),
        "seed",
    ))
}

/// A refreshed token of the same grant resumes the handle; another grant, anonymous, and the
/// same token presented without a grant (a static bearer token the embedder brings) do not.
#[test]
fn a_refreshed_token_of_the_grant_keeps_the_handle() {
    let h = handle_of(&granted("token-a", "cid-g"));
    assert_eq!(h.check(&granted("token-b", "cid-g")), Ok(()));
    assert_eq!(h.check(&granted("token-a", "cid-g")), Ok(()));
    assert_eq!(
        h.check(&granted("token-b", "cid-h")),
        Err(HandleError::OtherContext)
    );
    assert_eq!(h.check(&base()), Err(HandleError::OtherContext));
    assert_eq!(
        h.check(&base().with_grant(grant("cid-g"))),
        Err(HandleError::OtherContext),
        "a grant with no token presents nothing: anonymous"
    );
    assert_eq!(
        h.check(&base().with_bearer_token("token-a")),
        Err(HandleError::OtherContext)
    );
    assert_eq!(
        h.check(&base().with_bearer_token("token-b")),
        Err(HandleError::OtherContext)
    );
    // The grant's other parts count: kind and issuer.
    let mut other_kind = granted("token-b", "cid-g");
    other_kind.grant.as_mut().unwrap().kind = GrantKind::JwtBearer;
    assert_eq!(h.check(&other_kind), Err(HandleError::OtherContext));
    let mut other_issuer = granted("token-b", "cid-g");
    other_issuer.grant.as_mut().unwrap().issuer = "https://as2.example".into();
    assert_eq!(h.check(&other_issuer), Err(HandleError::OtherContext));
    // Still one server's.
    let elsewhere = Config::new("http://127.0.0.1:8080/other")
        .unwrap()
        .with_bearer_token("token-b")
        .with_grant(grant("cid-g"));
    assert_eq!(h.check(&elsewhere), Err(HandleError::OtherServer));
}

/// Without a grant the client cannot tell a refresh from another principal's token: the
/// principal is the credential, and token A's handle is refused under token B (as before).
#[test]
fn without_a_grant_the_principal_is_the_credential() {
    let h = handle_of(&base().with_bearer_token("token-a"));
    assert_eq!(h.check(&base().with_bearer_token("token-a")), Ok(()));
    assert_eq!(
        h.check(&base().with_bearer_token("token-b")),
        Err(HandleError::OtherContext)
    );
    assert_eq!(
        h.check(&granted("token-a", "cid-g")),
        Err(HandleError::OtherContext)
    );
    assert_eq!(h.check(&base()), Err(HandleError::OtherContext));
    // The principal of a credential without a grant is its context.
    let c = base().with_bearer_token("token-a");
    assert_eq!(AuthContext::principal(&c), AuthContext::of(&c));
    // Anonymous stays anonymous.
    let anonymous = handle_of(&base());
    assert_eq!(anonymous.check(&base()), Ok(()));
    assert_eq!(
        AuthContext::principal(&base()),
        AuthContext::new(Credential::None, None)
    );
}

/// A DPoP grant's tokens are bound to its key, but the key proves possession, it does not name
/// the principal: after a key rotation (new key, new token, same grant) the handle resumes.
/// Without a grant the DPoP binding is the credential: a new key or a new token is another
/// principal.
#[test]
fn a_dpop_key_rotation_keeps_the_handle_of_a_grant_only() {
    let h = handle_of(&dpop("dpop-a", "key-1").with_grant(grant("cid-g")));
    assert_eq!(
        h.check(&dpop("dpop-b", "key-1").with_grant(grant("cid-g"))),
        Ok(())
    );
    assert_eq!(
        h.check(&dpop("dpop-c", "key-2").with_grant(grant("cid-g"))),
        Ok(())
    );
    assert_eq!(
        h.check(&dpop("dpop-c", "key-2").with_grant(grant("cid-h"))),
        Err(HandleError::OtherContext)
    );
    assert_eq!(
        h.check(&dpop("dpop-a", "key-1")),
        Err(HandleError::OtherContext)
    );
    let bare = handle_of(&dpop("dpop-a", "key-1"));
    assert_eq!(bare.check(&dpop("dpop-a", "key-1")), Ok(()));
    assert_eq!(
        bare.check(&dpop("dpop-a", "key-2")),
        Err(HandleError::OtherContext)
    );
    assert_eq!(
        bare.check(&dpop("dpop-b", "key-1")),
        Err(HandleError::OtherContext)
    );
}

/// A grant's principal is digested apart from every per-credential context: it equals no
/// `AuthContext::new` of the grant (with or without a credential), so nothing keyed by a
/// credential is ever found under a principal.
#[test]
fn a_grants_principal_is_no_credential_context() {
    let c = granted("token-a", "cid-g");
    let p = AuthContext::principal(&c);
    assert_ne!(p, AuthContext::of(&c));
    assert_ne!(
        p,
        AuthContext::new(Credential::None, grant("cid-g").as_ref())
    );
    assert_ne!(
        p,
        AuthContext::new(Credential::Bearer("token-a"), grant("cid-g").as_ref())
    );
    assert_eq!(p, AuthContext::principal(&granted("token-b", "cid-g")));
}

/// The handle's bytes in the documented format ("magic `MCPTASK\0`, version, length-prefixed
/// fields, an 8-byte SHA-256 check"), written here independently of the crate's writer with
/// `ring`'s SHA-256: `version` and the 32-byte `bound` digest are the test's to choose.
fn handle_bytes(version: u8, bound: &[u8; 32]) -> Vec<u8> {
    let mut out = b"MCPTASK\0".to_vec();
    out.push(version);
    for s in [URL, "786512e2-9e0d-44bd-8f29-789f320fe840"] {
        out.extend_from_slice(&(s.len() as u16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(bound);
    out.push(0); // the modern era
    out.push(10);
    out.extend_from_slice(b"2026-07-28");
    out.extend_from_slice(&1_000u64.to_be_bytes());
    out.extend_from_slice(&3_601_000u64.to_be_bytes());
    out.push(1);
    out.extend_from_slice(&60_000u64.to_be_bytes());
    out.push(0); // no answered keys
    let check = ring::digest::digest(&ring::digest::SHA256, &out);
    out.extend_from_slice(&check.as_ref()[..8]);
    out
}

/// The bound digest's meaning changed (the token, then the principal), so the format version
/// did: a version 1 handle, whatever digest it holds, is refused with `HandleError::TokenBound`,
/// a typed error naming why, never read as bound to a principal. The same bytes at the current
/// version read back as the crate's own handle (the hand-written format is the real one).
#[test]
fn a_token_bound_handle_is_refused_with_its_own_error() {
    assert_eq!(TOKEN_BOUND_HANDLE_VERSION, 1);
    assert_eq!(HANDLE_VERSION, 2);
    let config = granted("token-a", "cid-g");
    let mine = handle_of(&config);
    let principal = {
        // The digest the crate binds: taken from its own bytes, at the offset the format gives.
        let b = mine.to_bytes();
        let at = 8 + 1 + 2 + URL.len() + 2 + 36;
        <[u8; 32]>::try_from(&b[at..at + 32]).unwrap()
    };
    let current = handle_bytes(HANDLE_VERSION, &principal);
    assert_eq!(current, mine.to_bytes());
    assert_eq!(
        TaskHandle::from_bytes(&current).unwrap().check(&config),
        Ok(())
    );
    for bound in [principal, [7; 32]] {
        let old = handle_bytes(1, &bound);
        let e = TaskHandle::from_bytes(&old).unwrap_err();
        assert_eq!(e, HandleError::TokenBound { found: 1 });
        let text = e.to_string();
        assert!(
            text.contains("version 1") && text.contains("access token"),
            "{text}"
        );
    }
    assert_eq!(
        TaskHandle::from_bytes(&handle_bytes(3, &principal)),
        Err(HandleError::ForeignVersion { found: 3 })
    );
}

/// `TaskHandle::rebound` (a recording's stand-in) binds the stand-in's principal: with a grant,
/// any token of it passes.
#[test]
fn a_rebound_handle_binds_the_stand_ins_principal() {
    let h = handle_of(&base().with_bearer_token("token-a"));
    let stand_in = granted("replay-token", "cid-g");
    let rebound = h.rebound(&stand_in).unwrap();
    assert_eq!(rebound.check(&granted("other-token", "cid-g")), Ok(()));
    assert_eq!(
        rebound.check(&base().with_bearer_token("token-a")),
        Err(HandleError::OtherContext)
    );
}
