//! The tests both adapters declare for the grants without a user agent: an `AuthSession`
//! configured for client credentials (`client_secret_basic`, `private_key_jwt`), for the JWT
//! bearer grant with a workload token, or for enterprise-managed authorization gets its tokens
//! from the project's test authorization server ([`crate::auth_server`]) on the server's 401
//! (and its 403 `insufficient_scope`) without opening a user agent; an error answer to the
//! grant is an authentication failure after one request, neither retried nor followed by
//! another grant. An adapter's `tests/auth_m2m.rs` declares them with [`crate::m2m_auth_tests!`].
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use mcp_sansio::auth::{AuthConfig, ClientAuth, Grant, IdentityProvider, IssuerPin, UrlPolicy};
use mcp_sansio_net::auth::KeySigner;
use mcp_sansio_net::auth::{AuthHttp, Authorization};
use mcp_sansio_net::AddressPolicy;

use crate::auth_server::{m2m, AuthServer, Browser};

/// The policy of the tests: loopback allowed.
pub fn policy() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// A user agent that refuses (a grant without a user agent must never open one) and counts.
pub fn refusing_browser() -> Browser {
    let mut b = Browser::new(AuthHttp::with_policy(policy()));
    b.refuse = true;
    b
}

/// The authorization of `server`'s MCP endpoint with `grant`; the user agent is `browser`.
pub fn authorization(server: &AuthServer, grant: Grant, browser: Browser) -> Authorization {
    let mut c = AuthConfig::machine(server.url(), "tests", grant);
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    Authorization::new(c, AuthHttp::with_policy(policy()), Box::new(browser)).unwrap()
}

/// [`authorization`] with a DPoP key (a fresh ES256 key pair): its tokens are bound to it.
pub fn dpop_authorization(server: &AuthServer, grant: Grant) -> Authorization {
    let mut c = AuthConfig::machine(server.url(), "tests", grant);
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let key = KeySigner::generate_es256().unwrap();
    c.dpop = Some(mcp_sansio::auth::DpopKey(Arc::new(key)));
    let browser = refusing_browser();
    Authorization::new(c, AuthHttp::with_policy(policy()), Box::new(browser)).unwrap()
}

/// The pin of credentials meant for `server`'s authorization server (its issuer is its base
/// URL).
pub fn pin(server: &AuthServer) -> IssuerPin {
    IssuerPin::Exactly(server.base())
}

/// Client credentials with `client_secret_basic`, pinned to `server`'s authorization server.
pub fn basic(server: &AuthServer) -> Grant {
    Grant::ClientCredentials {
        client: ClientAuth::SecretBasic {
            client_id: m2m::CLIENT_ID.into(),
            secret: m2m::SECRET.into(),
        },
        issuer: pin(server),
    }
}

/// A fresh P-256 key made by ring: its PKCS#8 PEM (what [`KeySigner::from_pem`] reads) and
/// its public point (uncompressed, what ring verifies with).
pub fn p256() -> (String, Vec<u8>) {
    use base64::Engine as _;
    use ring::signature::KeyPair as _;
    let rng = ring::rand::SystemRandom::new();
    let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
    let pair = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
    );
    (pem, pair.public_key().as_ref().to_vec())
}

/// A JWT part (or a JWK member) decoded: RFC 7515 §2's base64url without padding; a padded
/// or standard-alphabet part fails the test.
pub fn b64url(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    assert!(!s.contains(['=', '+', '/']), "not unpadded base64url: {s}");
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

/// Client credentials with `private_key_jwt`: a fresh P-256 key, its public half trusted by
/// `server`, the private half given to the signer as a PKCS#8 PEM.
pub fn private_key_jwt(server: &AuthServer) -> Grant {
    let (pem, public) = p256();
    server.trust_client_key(&public);
    Grant::ClientCredentials {
        client: ClientAuth::PrivateKeyJwt {
            client_id: m2m::CLIENT_ID.into(),
            signer: Arc::new(KeySigner::from_pem(pem.as_bytes()).unwrap()),
        },
        issuer: pin(server),
    }
}

/// The JWT bearer grant with a workload token for `server`'s issuer whose `sub` is `sub`; the
/// counter counts the calls of the token source.
pub fn workload(server: &AuthServer, sub: &str) -> (Grant, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let (c, base, sub) = (calls.clone(), server.base(), sub.to_owned());
    let source = move || {
        c.fetch_add(1, Ordering::SeqCst);
        Ok::<_, String>(m2m::unsigned_jwt(
            &serde_json::json!({"iss": "https://workload.example", "sub": sub, "aud": base}),
        ))
    };
    let grant = Grant::JwtBearer {
        client: ClientAuth::None {
            client_id: m2m::CLIENT_ID.into(),
        },
        assertion: Arc::new(source),
        issuer: pin(server),
    };
    (grant, calls)
}

/// Enterprise-managed authorization with `server`'s identity provider (`/idp/token`).
pub fn enterprise(server: &AuthServer) -> Grant {
    Grant::EnterpriseManaged {
        idp: IdentityProvider {
            issuer: format!("{}/idp", server.base()),
            token_endpoint: format!("{}/idp/token", server.base()),
            client: ClientAuth::None {
                client_id: "idp-client".into(),
            },
            id_token: Arc::new(|| Ok::<_, String>(m2m::ID_TOKEN.to_owned())),
        },
        client: ClientAuth::SecretBasic {
            client_id: m2m::CLIENT_ID.into(),
            secret: m2m::SECRET.into(),
        },
        issuer: pin(server),
    }
}

/// Declares the tests of the grants without a user agent for an adapter whose `Client`,
/// `AuthSession` and `AuthSessionError` are in scope: `#[$test]` is its test attribute, `async`
/// is present when its operations are futures and `[$($wait)*]` is what waits for one.
#[macro_export]
macro_rules! m2m_auth_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        use $crate::adapter_tests::m2m as m2m_support;
        use $crate::auth_server::{m2m as m2m_names, AuthServer as M2mServer, Mode as M2mMode};

        #[$test]
        $($async)? fn client_credentials_with_client_secret_basic_authorizes_without_a_user_agent() {
            let server = M2mServer::start(M2mMode::Normal);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let b = m2m_support::refusing_browser();
            let opened = b.opened.clone();
            let auth = m2m_support::authorization(&server, m2m_support::basic(&server), b);
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            let catalog = s.list_tools()$($wait)*.unwrap();
            assert_eq!(catalog.tools[0].name(), "echo");
            // tools/call needs `write`: the 403 insufficient_scope runs the grant again.
            assert!(!s.call_tool("echo", b"{}")$($wait)*.unwrap().is_error);
            assert_eq!(opened.load(std::sync::atomic::Ordering::SeqCst), 0);
            let grants = server.grants("/token", "client_credentials");
            assert_eq!(grants.len(), 2, "{grants:?}");
            assert_eq!(grants[1].get("scope").map(String::as_str), Some("read write"));
            for g in &grants {
                assert!(!g.contains_key("client_secret"), "the secret went in the body");
                assert_eq!(g.get("resource"), Some(&server.url()));
            }
            assert_eq!(server.refusal(), None);
            assert!(!server.bearer_leaked_to_authorization_server());
            assert_eq!(server.count("GET", "/authorize"), 0);
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn client_credentials_with_private_key_jwt_authorizes_with_a_verified_assertion() {
            let server = M2mServer::start(M2mMode::Normal);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let grant = m2m_support::private_key_jwt(&server);
            let auth = m2m_support::authorization(&server, grant, m2m_support::refusing_browser());
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            assert!(!s.call_tool("echo", b"{}")$($wait)*.unwrap().is_error);
            assert_eq!(server.refusal(), None);
            // Two assertions (the 401 and the step-up), each verified and with its own jti.
            assert_eq!(server.grants("/token", "client_credentials").len(), 2);
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_workload_token_gets_a_token_with_the_jwt_bearer_grant() {
            let server = M2mServer::start(M2mMode::Normal);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let (grant, calls) = m2m_support::workload(&server, "workload-1");
            let auth = m2m_support::authorization(&server, grant, m2m_support::refusing_browser());
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
            assert_eq!(server.grants("/token", mcp_sansio::internals::auth::JWT_BEARER).len(), 1);
            assert_eq!(server.refusal(), None);
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_refused_workload_token_is_an_authentication_failure_without_retry_or_other_grant() {
            let server = M2mServer::start(M2mMode::Normal);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let (grant, _) = m2m_support::workload(&server, "denied");
            let b = m2m_support::refusing_browser();
            let opened = b.opened.clone();
            let auth = m2m_support::authorization(&server, grant, b);
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let e = AuthSession::connect(&client, config, auth)$($wait)*.unwrap_err();
            assert_eq!(e.kind(), mcp_sansio::ErrorKind::AuthenticationFailed, "{e:?}");
            assert!(e.to_string().contains("invalid_grant"), "{e}");
            // One token request, of the configured grant; no user agent, no registration.
            assert_eq!(server.count("POST", "/token"), 1);
            assert_eq!(server.count("POST", "/register"), 0);
            assert_eq!(opened.load(std::sync::atomic::Ordering::SeqCst), 0);
        }

        #[$test]
        $($async)? fn enterprise_managed_authorization_exchanges_the_id_token_then_uses_the_grant() {
            let server = M2mServer::start(M2mMode::Normal);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let grant = m2m_support::enterprise(&server);
            let auth = m2m_support::authorization(&server, grant, m2m_support::refusing_browser());
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(server.refusal(), None);
            let exchanges = server.grants("/idp/token", mcp_sansio::internals::auth::TOKEN_EXCHANGE);
            assert_eq!(exchanges.len(), 1);
            let bearer = server.grants("/token", mcp_sansio::internals::auth::JWT_BEARER);
            assert_eq!(bearer.len(), 1);
            // The identity assertion grant the provider issued is the assertion.
            assert!(bearer[0]["assertion"].split('.').count() == 3);
            assert_ne!(bearer[0]["assertion"], m2m_names::ID_TOKEN);
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn with_dpop_every_mcp_request_carries_the_bound_token_and_a_verified_proof() {
            let server = M2mServer::start(M2mMode::Dpop);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let auth = m2m_support::dpop_authorization(&server, m2m_support::basic(&server));
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
            // tools/call needs `write`: the 403 (a DPoP challenge) runs the grant again, and
            // the new token is bound to the same key.
            assert!(!s.call_tool("echo", b"{}")$($wait)*.unwrap().is_error);
            assert_eq!(server.refusal(), None, "every proof passed the server's checks");
            assert!(!server.saw_a_bearer(), "a DPoP-bound token went as Bearer");
            assert_eq!(server.grants("/token", "client_credentials").len(), 2);
            // Every request but the first of each connection (without credentials) had a proof.
            let nonces = server.mcp_proof_nonces();
            let with_proof = nonces.iter().filter(|n| n.is_some()).count();
            assert!(with_proof >= 3, "{nonces:?}");
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_dpop_nonce_asked_by_the_mcp_server_is_sent_after_one_retry_and_kept() {
            let server = M2mServer::start(M2mMode::DpopNonce);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let auth = m2m_support::dpop_authorization(&server, m2m_support::basic(&server));
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(&client, config, auth)$($wait)*.unwrap();
            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(server.refusal(), None);
            let nonce = $crate::auth_server::DPOP_NONCE.to_owned();
            let nonces = server.mcp_proof_nonces();
            // No credentials; a proof without a nonce (answered use_dpop_nonce); then the
            // nonce in every later proof.
            assert_eq!(nonces[0], None, "{nonces:?}");
            assert_eq!(nonces[1].as_deref(), Some(""), "{nonces:?}");
            assert!(nonces[2..].iter().all(|n| n.as_ref() == Some(&nonce)), "{nonces:?}");
            assert!(nonces.len() >= 4, "{nonces:?}");
            s.close()$($wait)*.unwrap();
        }

        #[$test]
        $($async)? fn a_server_asking_for_a_dpop_nonce_forever_gets_one_retry_and_a_typed_error() {
            let server = M2mServer::start(M2mMode::DpopNonceForever);
            let client = Client::builder().policy(m2m_support::policy()).build();
            let auth = m2m_support::dpop_authorization(&server, m2m_support::basic(&server));
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let e = AuthSession::connect(&client, config, auth)$($wait)*.unwrap_err();
            assert!(
                matches!(
                    e,
                    AuthSessionError::Mcp(mcp_sansio::Error::Auth(
                        mcp_sansio::auth::AuthError::DpopNonceRepeated
                    ))
                ),
                "{e:?}"
            );
            assert_eq!(e.kind(), mcp_sansio::ErrorKind::AuthenticationFailed);
            // Without credentials, then the proof and its one retry.
            assert_eq!(server.mcp_proof_nonces().len(), 3);
            assert_eq!(server.count("POST", "/token"), 1);
            let text = format!("{e} {e:?}");
            assert!(!text.contains("tok-") && !text.contains("eyJ"), "{text}");
        }
    };
}
