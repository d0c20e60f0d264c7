//! DPoP (RFC 9449) in the authorizer: the proof of a token request and of an MCP request checked
//! against the RFC's rules (header `typ`, `alg`, public `jwk`; `htm`, `htu` without query or
//! fragment, `iat`, `jti`, `ath`, `nonce`), the signature verified with ring's verifier on the
//! public key; a `use_dpop_nonce` answer retried once, never more, as a request made anew (a
//! fresh client assertion); an authorization server's nonce sent to it alone; a DPoP-bound
//! token never given out as a Bearer token.

use std::sync::Arc;

use base64::Engine as _;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthExchange, AuthResponse, AuthSecrets, Authorizer,
    ClientAuth, DpopKey, Grant, IssuerPin,
};
use mcp_sansio::Instant;
use mcp_sansio_net::auth::KeySigner;
use mcp_sansio_test_support::adapter_tests::m2m::{b64url, p256};
use ring::signature::{self, UnparsedPublicKey};
use serde_json::Value;

const ISSUER: &str = "https://as.example";
const TOKEN_ENDPOINT: &str = "https://as.example/token?tenant=7";
const SERVER: &str = "https://mcp.example/mcp";
const NOW_SECS: u64 = 1_800_000_000;

/// A P-256 key made by ring: the signer (from its PKCS#8 PEM) and the public point.
fn key() -> (KeySigner, Vec<u8>) {
    let (pem, public) = p256();
    (KeySigner::from_pem(pem.as_bytes()).unwrap(), public)
}

fn now() -> Instant {
    Instant::from_duration(std::time::Duration::from_secs(NOW_SECS))
}

/// An authorizer with client credentials and a DPoP key, driven to its token request.
fn to_token_request() -> (Authorizer, AuthExchange, Vec<u8>) {
    let (signer, public) = key();
    let grant = Grant::ClientCredentials {
        client: ClientAuth::SecretBasic {
            client_id: "c".into(),
            secret: "s3cret".into(),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    let mut config = AuthConfig::machine(SERVER, "t", grant);
    config.dpop = Some(DpopKey(Arc::new(signer)));
    let mut az = Authorizer::new(config).unwrap();
    az.handle_challenge(now(), 401, &[], AuthSecrets::from_random_bytes(&[3; 64]))
        .unwrap();
    let prm = az.poll_request().unwrap();
    let doc = serde_json::json!({"resource": SERVER, "authorization_servers": [ISSUER]});
    az.handle_response(now(), prm.id, AuthResponse::new(200, doc.to_string()));
    let asm = az.poll_request().unwrap();
    let doc = serde_json::json!({"issuer": ISSUER, "token_endpoint": TOKEN_ENDPOINT});
    az.handle_response(now(), asm.id, AuthResponse::new(200, doc.to_string()));
    let req = az.poll_request().unwrap();
    (az, req, public)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Checks a proof against RFC 9449 §4.2 and verifies it with `public`; returns its claims.
fn check_proof(proof: &str, public: &[u8], htm: &str, htu: &str) -> Value {
    let parts: Vec<&str> = proof.split('.').collect();
    assert_eq!(parts.len(), 3);
    let h: Value = serde_json::from_slice(&b64url(parts[0])).unwrap();
    assert_eq!(h["typ"], "dpop+jwt");
    assert_eq!(h["alg"], "ES256");
    let jwk = &h["jwk"];
    assert_eq!(jwk["kty"], "EC");
    assert_eq!(jwk["crv"], "P-256");
    assert!(jwk.get("d").is_none(), "a private member in the header");
    let mut point = vec![4u8];
    point.extend(b64url(jwk["x"].as_str().unwrap()));
    point.extend(b64url(jwk["y"].as_str().unwrap()));
    assert_eq!(point, public, "the header's key is the client's");
    let c: Value = serde_json::from_slice(&b64url(parts[1])).unwrap();
    assert_eq!(c["htm"], htm);
    assert_eq!(c["htu"], htu);
    assert_eq!(c["iat"], NOW_SECS);
    assert!(c["jti"].as_str().is_some_and(|j| j.len() >= 16));
    let input = format!("{}.{}", parts[0], parts[1]);
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
        .verify(input.as_bytes(), &b64url(parts[2]))
        .expect("the proof verifies with the public key");
    c
}

#[test]
fn a_token_request_carries_a_proof_for_its_endpoint_without_query() {
    let (_, req, public) = to_token_request();
    let proof = header(&req.request.headers, "dpop").expect("a DPoP header");
    let c = check_proof(proof, &public, "POST", "https://as.example/token");
    assert!(c.get("ath").is_none() && c.get("nonce").is_none(), "{c}");
    assert!(!req.redacted_text().contains(proof));
}

#[test]
fn a_use_dpop_nonce_answer_is_retried_once_with_the_nonce_and_never_more() {
    let (mut az, first, public) = to_token_request();
    let nonce_answer = || {
        let mut r = AuthResponse::new(400, r#"{"error":"use_dpop_nonce"}"#);
        r.headers.push(("DPoP-Nonce".into(), b"n-1".to_vec()));
        r
    };
    az.handle_response(now(), first.id, nonce_answer());
    let second = az
        .poll_request()
        .expect("the request again, with the nonce");
    assert_eq!(second.request.body, first.request.body);
    let p1 = header(&first.request.headers, "dpop").unwrap();
    let p2 = header(&second.request.headers, "dpop").unwrap();
    let c1 = check_proof(p1, &public, "POST", "https://as.example/token");
    let c2 = check_proof(p2, &public, "POST", "https://as.example/token");
    assert_eq!(c2["nonce"], "n-1");
    assert_ne!(c1["jti"], c2["jti"], "a fresh proof");
    // A server that asks for a nonce forever gets no third request.
    az.handle_response(now(), second.id, nonce_answer());
    assert!(az.poll_request().is_none());
    match az.poll_event() {
        Some(AuthEvent::Failed(AuthError::TokenError { error, .. })) => {
            assert_eq!(error, "use_dpop_nonce")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_dpop_token_is_sent_with_a_proof_of_its_own_and_never_as_bearer() {
    let (mut az, req, public) = to_token_request();
    let body = r#"{"access_token":"the-dpop-token","token_type":"DPoP","expires_in":60}"#;
    az.handle_response(now(), req.id, AuthResponse::new(200, body));
    assert!(matches!(
        az.poll_event(),
        Some(AuthEvent::Authorized { .. })
    ));
    assert_eq!(az.bearer(), None, "a bound token is never a Bearer token");
    az.set_resource_nonce("rs-nonce");
    let h = az
        .authorization_headers("POST", "https://mcp.example/mcp?x=1#f", now())
        .unwrap()
        .unwrap();
    assert_eq!(header(&h, "authorization"), Some("DPoP the-dpop-token"));
    let c = check_proof(
        header(&h, "dpop").unwrap(),
        &public,
        "POST",
        "https://mcp.example/mcp",
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, b"the-dpop-token");
    assert_eq!(
        c["ath"],
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
    );
    assert_eq!(c["nonce"], "rs-nonce");
    // Each request gets a proof of its own.
    let again = az
        .authorization_headers("POST", SERVER, now())
        .unwrap()
        .unwrap();
    let c2 = check_proof(header(&again, "dpop").unwrap(), &public, "POST", SERVER);
    assert_ne!(c["jti"], c2["jti"]);
}

#[test]
fn without_a_dpop_key_a_dpop_token_is_refused() {
    let grant = Grant::ClientCredentials {
        client: ClientAuth::None {
            client_id: "c".into(),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    let mut az = Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).unwrap();
    az.handle_challenge(now(), 401, &[], AuthSecrets::from_random_bytes(&[3; 64]))
        .unwrap();
    let prm = az.poll_request().unwrap();
    let doc = serde_json::json!({"resource": SERVER, "authorization_servers": [ISSUER]});
    az.handle_response(now(), prm.id, AuthResponse::new(200, doc.to_string()));
    let asm = az.poll_request().unwrap();
    let doc = serde_json::json!({"issuer": ISSUER, "token_endpoint": TOKEN_ENDPOINT});
    az.handle_response(now(), asm.id, AuthResponse::new(200, doc.to_string()));
    let req = az.poll_request().unwrap();
    assert!(header(&req.request.headers, "dpop").is_none());
    let body = r#"{"access_token":"t","token_type":"DPoP"}"#;
    az.handle_response(now(), req.id, AuthResponse::new(200, body));
    assert!(matches!(
        az.poll_event(),
        Some(AuthEvent::Failed(AuthError::NotBearer { .. }))
    ));
    assert_eq!(az.bearer(), None);
}

/// Drives `az` (challenged with `seed`) through discovery naming `issuer` to its token request.
fn discover(az: &mut Authorizer, issuer: &str, seed: u8) -> AuthExchange {
    az.handle_challenge(now(), 401, &[], AuthSecrets::from_random_bytes(&[seed; 64]))
        .unwrap();
    let prm = az.poll_request().unwrap();
    let doc = serde_json::json!({"resource": SERVER, "authorization_servers": [issuer]});
    az.handle_response(now(), prm.id, AuthResponse::new(200, doc.to_string()));
    let asm = az.poll_request().unwrap();
    let doc = serde_json::json!({"issuer": issuer, "token_endpoint": format!("{issuer}/token")});
    az.handle_response(now(), asm.id, AuthResponse::new(200, doc.to_string()));
    az.poll_request().expect("the token request")
}

fn use_dpop_nonce(nonce: &str) -> AuthResponse {
    let mut r = AuthResponse::new(400, r#"{"error":"use_dpop_nonce"}"#);
    r.headers
        .push(("DPoP-Nonce".into(), nonce.as_bytes().to_vec()));
    r
}

fn form_field(r: &AuthExchange, name: &str) -> String {
    mcp_sansio::auth::form::parse_query(&String::from_utf8_lossy(&r.request.body))
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn claims(jwt: &str) -> Value {
    serde_json::from_slice(&b64url(jwt.split('.').nth(1).unwrap())).unwrap()
}

/// RFC 7523 §3: "The authorization server MAY ensure that JWTs are not replayed by maintaining
/// the set of used "jti" values". The resend that a `use_dpop_nonce` answer calls for (RFC
/// 9449 §8) is a new token request: a new client assertion (a new `jti`, signed and verifying
/// with the client's key) and a new proof carrying the nonce, not the stored body again.
#[test]
fn a_nonce_resend_signs_a_new_client_assertion() {
    let (dpop, dpop_public) = key();
    let (client_key, client_public) = key();
    let grant = Grant::ClientCredentials {
        client: ClientAuth::PrivateKeyJwt {
            client_id: "c".into(),
            signer: Arc::new(client_key),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    let mut config = AuthConfig::machine(SERVER, "t", grant);
    config.dpop = Some(DpopKey(Arc::new(dpop)));
    let mut az = Authorizer::new(config).unwrap();
    let first = discover(&mut az, ISSUER, 5);
    az.handle_response(now(), first.id, use_dpop_nonce("n-1"));
    let second = az
        .poll_request()
        .expect("the request again, with the nonce");
    assert_eq!(second.url, first.url);
    let (a1, a2) = (
        form_field(&first, "client_assertion"),
        form_field(&second, "client_assertion"),
    );
    let verify = |jwt: &str| {
        let (input, sig) = jwt.rsplit_once('.').unwrap();
        UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &client_public)
            .verify(input.as_bytes(), &b64url(sig))
            .is_ok()
    };
    assert!(verify(&a1) && verify(&a2), "both assertions verify");
    let (c1, c2) = (claims(&a1), claims(&a2));
    assert_ne!(c1["jti"], c2["jti"], "the assertion's jti is sent once");
    assert_eq!(c2["aud"], ISSUER);
    assert_eq!(form_field(&second, "grant_type"), "client_credentials");
    let p2 = header(&second.request.headers, "dpop").unwrap();
    let proof = check_proof(p2, &dpop_public, "POST", "https://as.example/token");
    assert_eq!(proof["nonce"], "n-1");
}

/// RFC 9449 §8: the nonce is "provided by the authorization server" for its own proofs. A
/// nonce one authorization server gave is not sent to another: after the first server's
/// nonce, a token request to a second one (named by a later challenge) carries a proof
/// without it.
#[test]
fn an_authorization_servers_dpop_nonce_is_sent_to_it_alone() {
    const OTHER: &str = "https://as2.example";
    let (signer, public) = key();
    let grant = Grant::ClientCredentials {
        client: ClientAuth::None {
            client_id: "c".into(),
        },
        issuer: IssuerPin::AnyIssuerUnsafe,
    };
    let mut config = AuthConfig::machine(SERVER, "t", grant);
    config.dpop = Some(DpopKey(Arc::new(signer)));
    let mut az = Authorizer::new(config).unwrap();
    let first = discover(&mut az, ISSUER, 6);
    az.handle_response(now(), first.id, use_dpop_nonce("n-of-as1"));
    let again = az.poll_request().unwrap();
    let body = r#"{"access_token":"t1","token_type":"DPoP"}"#;
    az.handle_response(now(), again.id, AuthResponse::new(200, body));
    assert!(matches!(
        az.poll_event(),
        Some(AuthEvent::Authorized { .. })
    ));
    az.accepted();
    let other = discover(&mut az, OTHER, 7);
    assert_eq!(other.url, format!("{OTHER}/token"));
    let c = check_proof(
        header(&other.request.headers, "dpop").unwrap(),
        &public,
        "POST",
        &format!("{OTHER}/token"),
    );
    assert!(c.get("nonce").is_none(), "another server's nonce: {c}");
}
