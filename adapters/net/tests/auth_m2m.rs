//! The grants without a user agent, below the adapters: the JWTs the client makes (a
//! `private_key_jwt` client assertion, RFC 7523 §2.2 and §3) checked against the RFCs' rules
//! with their signature verified by ring's verification API on the public key (not by the
//! signing code), for ES256 from a PKCS#8 PEM, ES256 from a JWK and RS256; and the hostile
//! cases: a token endpoint on an address the guard refuses, a workload token whose `aud` names
//! another authorization server, an authorization server that answers errors, and no secret
//! in `Debug`, errors or the authorization transcript.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthResponse, AuthSecrets, Authorizer, ClientAuth, Grant,
    IssuerPin, UrlPolicy,
};
use mcp_sansio::Instant;
use mcp_sansio_net::auth::KeySigner;
use mcp_sansio_net::auth::{AuthHttp, Authorization, AuthorizeError};
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_test_support::adapter_tests::m2m as support;
use mcp_sansio_test_support::auth_server::{m2m, pairs, AuthServer, Mode};
use mcp_sansio_transcript::TranscriptSink;
use ring::signature::{self, UnparsedPublicKey};
use serde_json::Value;
use support::{b64url, p256};

const ISSUER: &str = "https://as.example";
const SERVER: &str = "https://mcp.example/mcp";
const NOW_SECS: u64 = 1_800_000_000;
const EC_JWK: &str = r#"{"kty": "EC", "crv": "P-256", "kid": "test-key-1", "d": "G4MBIWetLm4zuy-pnvLN2Ya7RkcDWDKwCjJSYJYzizw", "x": "o9sBxWrfoEiBxvjwJXhffn-yQWU-_QiT3Tf4Ek64U-s", "y": "Ds22aRsebwilmULI3H-SqK_gm8UxZslSlYw0qRMyvc4"}"#;
const RSA_PEM: &str = include_str!("data/m2m-rsa-test-key.pem");
const RSA_PUBLIC_DER_B64: &str = include_str!("data/m2m-rsa-test-key.pub.der.b64");

fn at(secs: u64) -> Instant {
    Instant::from_duration(std::time::Duration::from_secs(secs))
}

/// Drives a sans-IO authorizer configured with `signer` through discovery to its token request
/// and returns that request's form.
fn assertion_request(signer: KeySigner) -> (Vec<(String, String)>, String, String) {
    let grant = Grant::ClientCredentials {
        client: ClientAuth::PrivateKeyJwt {
            client_id: "the-client".into(),
            signer: Arc::new(signer),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    let mut az = Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).unwrap();
    let now = at(NOW_SECS);
    az.handle_challenge(now, 401, &[], AuthSecrets::from_random_bytes(&[7; 64]))
        .unwrap();
    let prm = az.poll_request().unwrap();
    let doc = serde_json::json!({"resource": SERVER, "authorization_servers": [ISSUER]});
    az.handle_response(now, prm.id, AuthResponse::new(200, doc.to_string()));
    let asm = az.poll_request().unwrap();
    let doc = serde_json::json!({"issuer": ISSUER, "token_endpoint": format!("{ISSUER}/token")});
    az.handle_response(now, asm.id, AuthResponse::new(200, doc.to_string()));
    assert_eq!(az.poll_event(), None);
    let token = az.poll_request().unwrap();
    assert_eq!(token.url, format!("{ISSUER}/token"));
    let body = String::from_utf8(token.request.body.clone()).unwrap();
    let form: Vec<(String, String)> = pairs(&body).into_iter().collect();
    (form, token.redacted_text(), format!("{token:?}"))
}

fn get<'a>(form: &'a [(String, String)], name: &str) -> &'a str {
    form.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} in {form:?}"))
}

/// Checks a client assertion against RFC 7523 §3 and RFC 7515 and verifies its signature with
/// `verify`; returns its claims.
fn check_assertion(
    form: &[(String, String)],
    alg: &str,
    verify: impl Fn(&[u8], &[u8]) -> bool,
) -> Value {
    assert_eq!(get(form, "grant_type"), "client_credentials");
    assert_eq!(
        get(form, "client_assertion_type"),
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert!(form.iter().all(|(n, _)| n != "client_secret"));
    let jwt = get(form, "client_assertion");
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "compact JWS");
    let header: Value = serde_json::from_slice(&b64url(parts[0])).unwrap();
    assert_eq!(header["alg"], alg);
    assert_eq!(header["typ"], "JWT");
    let claims: Value = serde_json::from_slice(&b64url(parts[1])).unwrap();
    assert_eq!(claims["iss"], "the-client");
    assert_eq!(claims["sub"], "the-client");
    assert_eq!(claims["aud"], ISSUER);
    let (iat, exp) = (
        claims["iat"].as_u64().unwrap(),
        claims["exp"].as_u64().unwrap(),
    );
    assert_eq!(iat, NOW_SECS, "iat is the time passed in");
    assert!(
        exp > iat && exp - iat <= 300,
        "a short expiry: {iat}..{exp}"
    );
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
    let signing_input = format!("{}.{}", parts[0], parts[1]);
    assert!(
        verify(signing_input.as_bytes(), &b64url(parts[2])),
        "the signature does not verify"
    );
    // A changed claim no longer verifies.
    assert!(!verify(
        format!("{signing_input}x").as_bytes(),
        &b64url(parts[2])
    ));
    claims
}

#[test]
fn an_es256_client_assertion_from_a_pkcs8_pem_follows_rfc_7523() {
    let (pem, public) = p256();
    let (form, redacted, debug) = assertion_request(KeySigner::from_pem(pem.as_bytes()).unwrap());
    let key = UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &public);
    check_assertion(&form, "ES256", |m, s| key.verify(m, s).is_ok());
    let jwt = get(&form, "client_assertion");
    assert!(!redacted.contains(jwt) && redacted.contains("client_assertion=<redacted>"));
    assert!(!debug.contains(jwt));
}

#[test]
fn an_es256_client_assertion_from_a_jwk_carries_its_kid() {
    let jwk: Value = serde_json::from_str(EC_JWK).unwrap();
    let mut public = vec![4u8];
    public.extend(b64url(jwk["x"].as_str().unwrap()));
    public.extend(b64url(jwk["y"].as_str().unwrap()));
    let (form, _, _) = assertion_request(KeySigner::from_jwk(EC_JWK.as_bytes()).unwrap());
    let key = UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &public);
    check_assertion(&form, "ES256", |m, s| key.verify(m, s).is_ok());
    let header = get(&form, "client_assertion").split('.').next().unwrap();
    let header: Value = serde_json::from_slice(&b64url(header)).unwrap();
    assert_eq!(header["kid"], "test-key-1");
}

#[test]
fn an_rs256_client_assertion_verifies_with_the_rsa_public_key() {
    let public = base64::engine::general_purpose::STANDARD
        .decode(RSA_PUBLIC_DER_B64.trim())
        .unwrap();
    let (form, _, _) = assertion_request(KeySigner::from_pem(RSA_PEM.as_bytes()).unwrap());
    let key = UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, &public);
    check_assertion(&form, "RS256", |m, s| key.verify(m, s).is_ok());
}

#[test]
fn key_files_that_are_not_private_keys_are_refused_without_quoting_them() {
    for bad in [
        &b"-----BEGIN PUBLIC KEY-----\nc2VjcmV0LWJ5dGVz\n-----END PUBLIC KEY-----\n"[..],
        br#"{"kty":"EC","crv":"P-256","x":"c2VjcmV0LWJ5dGVz","y":"c2VjcmV0LWJ5dGVz"}"#,
        br#"{"kty":"oct","k":"c2VjcmV0LWJ5dGVz"}"#,
    ] {
        let e = KeySigner::from_bytes(bad).unwrap_err().to_string();
        assert!(!e.contains("c2VjcmV0LWJ5dGVz"), "{e}");
    }
    let s = KeySigner::from_jwk(EC_JWK.as_bytes()).unwrap();
    assert!(!format!("{s:?}").contains("G4MBIWetLm4zuy"));
}

fn authorization(server: &AuthServer, grant: Grant) -> Authorization {
    let mut c = AuthConfig::machine(server.url(), "t", grant);
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let http = AuthHttp::with_policy(AddressPolicy::strict().allow_loopback(true));
    Authorization::new(c, http, Box::new(support::refusing_browser())).unwrap()
}

fn challenge(server: &AuthServer) -> String {
    format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        server.base()
    )
}

#[test]
fn a_token_endpoint_on_a_refused_address_is_never_dialled() {
    let server = AuthServer::start(Mode::Normal);
    // https, so the URL policy admits it; the address guard refuses link-local addresses.
    server.set_token_endpoint("https://169.254.169.254/token");
    let mut auth = authorization(&server, support::basic(&server));
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    let AuthorizeError::Auth(AuthError::Transport { source, .. }) = &e else {
        panic!("{e:?}");
    };
    assert!(source.message.contains("169.254.169.254"), "{source}");
    assert!(!e.to_string().contains(m2m::SECRET));
    assert_eq!(auth.bearer(), None);
}

#[test]
fn a_workload_token_for_another_authorization_server_is_never_sent() {
    let server = AuthServer::start(Mode::Normal);
    let token = m2m::unsigned_jwt(&serde_json::json!({"sub": "w", "aud": "https://other.example"}));
    let sent = token.clone();
    let grant = Grant::JwtBearer {
        client: ClientAuth::None {
            client_id: m2m::CLIENT_ID.into(),
        },
        assertion: Arc::new(move || Ok::<_, String>(sent.clone())),
        issuer: support::pin(&server),
    };
    let mut auth = authorization(&server, grant);
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    assert!(
        matches!(e, AuthorizeError::Auth(AuthError::AudienceMismatch { .. })),
        "{e:?}"
    );
    assert_eq!(server.count("POST", "/token"), 0);
    assert!(!server.seen().iter().any(|s| s.body.contains(&token)));
}

#[test]
fn an_authorization_server_that_answers_errors_ends_the_grant_after_one_request() {
    let server = AuthServer::start(Mode::Normal);
    let grant = Grant::ClientCredentials {
        client: ClientAuth::SecretPost {
            client_id: m2m::CLIENT_ID.into(),
            secret: "a-wrong-secret".into(),
        },
        issuer: support::pin(&server),
    };
    let sink = Arc::new(Memory::default());
    let mut auth = authorization(&server, grant).record_to(sink.clone(), 1, "m2m");
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    assert!(
        matches!(&e, AuthorizeError::Auth(AuthError::TokenError { error, status: 401, .. }) if error == "invalid_client"),
        "{e:?}"
    );
    assert_eq!(server.count("POST", "/token"), 1);
    assert_eq!(server.count("POST", "/register"), 0);
    // The secret was sent once, in the form, and is nowhere in what is shown or recorded.
    assert!(server
        .seen()
        .iter()
        .any(|s| s.body.contains("a-wrong-secret")));
    drop(auth);
    let text = sink.0.lock().unwrap().clone();
    assert!(text.contains("client_secret=<redacted>"), "{text}");
    assert!(!text.contains("a-wrong-secret"));
    assert!(!format!("{e:?} {e}").contains("a-wrong-secret"));
}

#[test]
fn the_configuration_of_every_grant_shows_no_secret() {
    let server = AuthServer::start(Mode::Normal);
    let grants = [
        support::basic(&server),
        support::private_key_jwt(&server),
        support::workload(&server, "w").0,
        support::enterprise(&server),
    ];
    for g in grants {
        let text = format!("{g:?} {:?}", authorization(&server, g.clone()));
        assert!(!text.contains(m2m::SECRET), "{text}");
        assert!(!text.contains(m2m::ID_TOKEN), "{text}");
    }
}

#[test]
fn the_identity_provider_token_endpoint_passes_the_url_policy() {
    let mut grant = support::enterprise(&AuthServer::start(Mode::Normal));
    if let Grant::EnterpriseManaged { idp, .. } = &mut grant {
        idp.token_endpoint = "http://idp.example/token".into();
    }
    let mut c = AuthConfig::machine(SERVER, "t", grant);
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let e = Authorizer::new(c).unwrap_err();
    assert!(matches!(e, AuthError::InsecureUrl { .. }), "{e:?}");
}

#[test]
fn no_user_agent_event_comes_from_a_grant_without_one() {
    let (pem, _) = p256();
    let grant = Grant::ClientCredentials {
        client: ClientAuth::PrivateKeyJwt {
            client_id: "c".into(),
            signer: Arc::new(KeySigner::from_pem(pem.as_bytes()).unwrap()),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    let mut az = Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).unwrap();
    let now = at(NOW_SECS);
    az.handle_challenge(now, 401, &[], AuthSecrets::from_random_bytes(&[1; 64]))
        .unwrap();
    let prm = az.poll_request().unwrap();
    let doc = serde_json::json!({"resource": SERVER, "authorization_servers": [ISSUER]});
    az.handle_response(now, prm.id, AuthResponse::new(200, doc.to_string()));
    let asm = az.poll_request().unwrap();
    // The server lists only RS256 for client assertions: an ES256 key is refused before sending.
    let doc = serde_json::json!({"issuer": ISSUER, "token_endpoint": format!("{ISSUER}/token"),
        "token_endpoint_auth_signing_alg_values_supported": ["RS256"]});
    az.handle_response(now, asm.id, AuthResponse::new(200, doc.to_string()));
    assert!(az.poll_request().is_none());
    assert!(matches!(
        az.poll_event(),
        Some(AuthEvent::Failed(AuthError::AlgorithmUnsupported {
            alg: "ES256"
        }))
    ));
}

#[derive(Default)]
struct Memory(Mutex<String>);

impl TranscriptSink for Memory {
    fn write(&self, _session: u64, text: &str) {
        self.0.lock().unwrap().push_str(text);
    }
}

#[test]
fn a_refresh_runs_the_grant_again_with_a_fresh_assertion_even_in_a_new_process() {
    let server = AuthServer::start(Mode::Normal);
    let grant = support::private_key_jwt(&server);
    let http = || AuthHttp::with_policy(AddressPolicy::strict().allow_loopback(true));
    let config = || {
        let mut c = AuthConfig::machine(server.url(), "t", grant.clone());
        c.policy = UrlPolicy {
            allow_loopback_http: true,
        };
        c
    };
    let first = support::refusing_browser();
    let saved = first.saved.clone();
    let mut auth = Authorization::new(config(), http(), Box::new(first)).unwrap();
    auth.authorize(401, Some(&challenge(&server))).unwrap();
    let token = auth.bearer().unwrap().to_owned();
    // A later process starts from the saved store, with no challenge: the refresh runs the
    // grant again (no refresh token was issued) with an assertion of its own.
    let mut later = support::refusing_browser();
    later.stored = saved.lock().unwrap().clone();
    let mut auth = Authorization::new(config(), http(), Box::new(later)).unwrap();
    assert_eq!(auth.bearer(), Some(token.as_str()));
    auth.refresh().unwrap();
    assert_ne!(auth.bearer(), Some(token.as_str()));
    assert_eq!(server.refusal(), None);
    assert_eq!(server.grants("/token", "client_credentials").len(), 2);
    assert_eq!(
        server.count("GET", "/.well-known/oauth-protected-resource/mcp"),
        1
    );
}

#[test]
fn credentials_pinned_to_an_issuer_are_never_presented_to_another() {
    let ours = AuthServer::start(Mode::Normal);
    // A hostile resource names another authorization server as its own.
    let hostile = AuthServer::start_naming(&ours.base());
    let mut c = AuthConfig::machine(hostile.url(), "t", support::basic(&hostile));
    if let Grant::ClientCredentials { issuer, .. } = &mut c.grant {
        *issuer = IssuerPin::Exactly("https://as.example".into());
    }
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let http = AuthHttp::with_policy(AddressPolicy::strict().allow_loopback(true));
    let mut auth = Authorization::new(c, http, Box::new(support::refusing_browser())).unwrap();
    let e = auth.authorize(401, Some(&challenge(&hostile))).unwrap_err();
    assert!(
        matches!(e, AuthorizeError::Auth(AuthError::IssuerNotAllowed { .. })),
        "{e:?}"
    );
    // Nothing went to the authorization server it named, not even a metadata request.
    assert!(ours.seen().is_empty(), "{:?}", ours.seen());
}
