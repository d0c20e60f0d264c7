//! Secrets belong to an authorization server by construction: a grant without a user agent and
//! a pre-registered client carry an [`IssuerPin`], and their credentials go to that issuer
//! only: not on discovery when the MCP server names another, not on a renewal of tokens a
//! store (a token file written under another configuration) holds from another, and the
//! enterprise grant's identity assertion is asked for the pinned server only.
//!
//! The MCP server chooses which authorization server it names (RFC 9728 §2,
//! `authorization_servers`), so the oracle here is the configuration alone: with
//! `IssuerPin::Exactly(OURS)`, no request that goes to another host carries the secret, and the
//! authorization fails with `IssuerNotAllowed`. Client authentication is checked against
//! RFC 6749 §2.3.1 computed here (HTTP Basic over the form-encoded ID and secret;
//! `client_secret` in the body for `client_secret_post`).

use std::sync::Arc;

use base64::Engine as _;
use mcp_sansio::auth::form::parse_query;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthExchange, AuthResponse, AuthSecrets, Authorizer,
    ClientAuth, ClientCredentials, ClientSettings, CredentialStore, Grant, IdentityProvider,
    IssuerPin, PreRegistered, Purpose, TokenAuthMethod,
};
use mcp_sansio::internals::auth::{ID_JAG_TOKEN_TYPE, TOKEN_EXCHANGE};
use mcp_sansio::Instant;

const SERVER: &str = "https://mcp.example/mcp";
const OURS: &str = "https://as.example";
const HOSTILE: &str = "https://evil.example";
const IDP_TOKEN: &str = "https://idp.example/token";
const CLIENT_ID: &str = "the-client";
const SECRET: &str = "the-client-secret";

fn secrets(b: u8) -> AuthSecrets {
    AuthSecrets::from_random_bytes(&[b; 64])
}

/// `Authorization: Basic` for the client (RFC 6749 §2.3.1; the ID and secret have no
/// character that form-encoding changes).
fn basic_header() -> String {
    let pair = format!("{CLIENT_ID}:{SECRET}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

fn form(r: &AuthExchange) -> Vec<(String, String)> {
    parse_query(&String::from_utf8_lossy(&r.request.body)).unwrap()
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Whether `r` carries the client secret, in a header field or the body.
fn carries_secret(r: &AuthExchange) -> bool {
    let basic = basic_header();
    r.request
        .headers
        .iter()
        .any(|(_, v)| v.contains(SECRET) || *v == basic)
        || String::from_utf8_lossy(&r.request.body).contains(SECRET)
}

/// An unsigned compact JWT with `claims` (what an identity provider would sign).
fn jwt(claims: &serde_json::Value) -> String {
    let b64 = |v: &serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    format!(
        "{}.{}.c2ln",
        b64(&serde_json::json!({"alg": "ES256"})),
        b64(claims)
    )
}

/// The issuer part of a metadata URL (`https://host/.well-known/...` → `https://host`).
fn issuer_of(url: &str) -> String {
    url.split("/.well-known/").next().unwrap().to_owned()
}

/// Answers every request as honest servers would, the protected resource naming `named`;
/// returns every request sent and every event.
fn run(az: &mut Authorizer, named: &str) -> (Vec<AuthExchange>, Vec<AuthEvent>) {
    let now = Instant::ZERO;
    let (mut sent, mut events) = (Vec::new(), Vec::new());
    while let Some(r) = az.poll_request() {
        let answer = match r.purpose {
            Purpose::ResourceMetadata => AuthResponse::new(
                200,
                serde_json::json!({"resource": SERVER, "authorization_servers": [named]})
                    .to_string(),
            ),
            Purpose::ServerMetadata => {
                let issuer = issuer_of(&r.url);
                AuthResponse::new(
                    200,
                    serde_json::json!({
                        "issuer": issuer,
                        "authorization_endpoint": format!("{issuer}/authorize"),
                        "token_endpoint": format!("{issuer}/token"),
                        "registration_endpoint": format!("{issuer}/register"),
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported":
                            ["client_secret_basic", "client_secret_post", "none"],
                    })
                    .to_string(),
                )
            }
            Purpose::Registration => AuthResponse::new(201, r#"{"client_id":"registered-here"}"#),
            Purpose::TokenExchange => AuthResponse::new(
                200,
                serde_json::json!({
                    "access_token": jwt(&serde_json::json!({
                        "sub": "u",
                        "aud": field(&form(&r), "audience"),
                    })),
                    "issued_token_type": ID_JAG_TOKEN_TYPE,
                    "token_type": "N_A",
                })
                .to_string(),
            ),
            Purpose::Token | Purpose::Refresh => AuthResponse::new(
                200,
                r#"{"access_token":"at-new","token_type":"Bearer","expires_in":3600}"#,
            ),
            _ => AuthResponse::new(500, ""),
        };
        az.handle_response(now, r.id, answer);
        sent.push(r);
    }
    while let Some(e) = az.poll_event() {
        events.push(e);
    }
    (sent, events)
}

fn machine(grant: Grant) -> Authorizer {
    Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).unwrap()
}

fn challenged(mut az: Authorizer, named: &str) -> (Vec<AuthExchange>, Vec<AuthEvent>) {
    az.handle_challenge(Instant::ZERO, 401, &[], secrets(1))
        .unwrap();
    run(&mut az, named)
}

fn refused(events: &[AuthEvent]) -> bool {
    matches!(
        events,
        [AuthEvent::Failed(AuthError::IssuerNotAllowed { issuer })] if issuer == HOSTILE
    )
}

fn to_host(sent: &[AuthExchange], origin: &str) -> usize {
    sent.iter().filter(|r| r.url.starts_with(origin)).count()
}

fn client_credentials(auth: ClientAuth) -> Grant {
    Grant::ClientCredentials {
        client: auth,
        issuer: IssuerPin::Exactly(OURS.into()),
    }
}

/// Challenged by a resource naming [`HOSTILE`], `grant` is refused: no request goes there and
/// none carries the secret.
fn assert_refused_for_hostile(grant: Grant) {
    let (sent, events) = challenged(machine(grant), HOSTILE);
    assert!(refused(&events), "{events:?}");
    assert_eq!(to_host(&sent, HOSTILE), 0, "{sent:?}");
    assert!(!sent.iter().any(carries_secret));
}

/// The token request among `sent`, which goes to our authorization server's token endpoint.
fn token_request_to_ours(sent: &[AuthExchange]) -> &AuthExchange {
    let token = sent.iter().find(|r| r.purpose == Purpose::Token).unwrap();
    assert_eq!(token.url, format!("{OURS}/token"));
    token
}

/// Client credentials with `client_secret_basic` pinned to our authorization server: a
/// protected resource naming another gets nothing (not even a metadata request); one naming
/// ours gets the grant with the Basic header.
#[test]
fn a_client_secret_basic_goes_to_the_pinned_issuer_only() {
    let grant = || {
        client_credentials(ClientAuth::SecretBasic {
            client_id: CLIENT_ID.into(),
            secret: SECRET.into(),
        })
    };
    assert_refused_for_hostile(grant());
    // The control: named by the resource, the pinned server gets the grant.
    let (sent, events) = challenged(machine(grant()), OURS);
    assert!(
        matches!(&events[..], [AuthEvent::Authorized { issuer, .. }] if issuer == OURS),
        "{events:?}"
    );
    let token = token_request_to_ours(&sent);
    assert!(token
        .request
        .headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("authorization") && *v == basic_header()));
}

/// The same with `client_secret_post`: the secret in the form goes to no other server.
#[test]
fn a_client_secret_post_goes_to_the_pinned_issuer_only() {
    let grant = || {
        client_credentials(ClientAuth::SecretPost {
            client_id: CLIENT_ID.into(),
            secret: SECRET.into(),
        })
    };
    assert_refused_for_hostile(grant());
    let (sent, _) = challenged(machine(grant()), OURS);
    let token = token_request_to_ours(&sent);
    assert_eq!(field(&form(token), "client_secret"), Some(SECRET));
}

fn enterprise() -> Grant {
    Grant::EnterpriseManaged {
        idp: IdentityProvider {
            issuer: "https://idp.example".into(),
            token_endpoint: IDP_TOKEN.into(),
            client: ClientAuth::None {
                client_id: "idp-client".into(),
            },
            id_token: Arc::new(|| Ok::<_, String>(jwt(&serde_json::json!({"sub": "u"})))),
        },
        client: ClientAuth::SecretBasic {
            client_id: CLIENT_ID.into(),
            secret: SECRET.into(),
        },
        issuer: IssuerPin::Exactly(OURS.into()),
    }
}

/// Enterprise-managed authorization: the identity assertion grant is asked for the pinned
/// authorization server only. A resource naming another gets no token exchange at the
/// identity provider at all (whose `audience` would name it); naming ours, the exchange's
/// `audience` is ours (the draft's token exchange: `audience` the issuer of the MCP server's
/// authorization server).
#[test]
fn the_identity_assertion_grant_is_asked_for_the_pinned_authorization_server_only() {
    let (sent, events) = challenged(machine(enterprise()), HOSTILE);
    assert!(refused(&events), "{events:?}");
    assert_eq!(to_host(&sent, IDP_TOKEN), 0, "{sent:?}");
    assert_eq!(to_host(&sent, HOSTILE), 0, "{sent:?}");
    let (sent, events) = challenged(machine(enterprise()), OURS);
    assert!(
        matches!(&events[..], [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    let exchange = sent.iter().find(|r| r.url == IDP_TOKEN).unwrap();
    let f = form(exchange);
    assert_eq!(field(&f, "grant_type"), Some(TOKEN_EXCHANGE));
    assert_eq!(field(&f, "audience"), Some(OURS));
}

fn pre_registered(pin: IssuerPin) -> AuthConfig {
    let mut client = ClientSettings::new("t", "http://127.0.0.1:9/cb");
    client.pre_registered.push(PreRegistered {
        issuer: pin,
        credentials: ClientCredentials {
            client_id: CLIENT_ID.into(),
            client_secret: Some(SECRET.into()),
            auth_method: TokenAuthMethod::ClientSecretBasic,
        },
    });
    AuthConfig::new(SERVER, client)
}

fn opened_client_id(events: &[AuthEvent]) -> String {
    let Some(AuthEvent::OpenUserAgent { url, .. }) = events.first() else {
        panic!("{events:?}");
    };
    let query = url.split_once('?').unwrap().1;
    field(&parse_query(query).unwrap(), "client_id")
        .unwrap()
        .to_owned()
}

/// Pre-registered credentials pinned to our server are not used with another: the client
/// registers there on its own instead. Only the explicit opt-out uses them anywhere.
#[test]
fn pre_registered_credentials_are_used_with_their_issuer_only() {
    let az = Authorizer::new(pre_registered(IssuerPin::Exactly(OURS.into()))).unwrap();
    let (sent, events) = challenged(az, HOSTILE);
    assert_eq!(opened_client_id(&events), "registered-here");
    assert!(!sent.iter().any(carries_secret));
    let az = Authorizer::new(pre_registered(IssuerPin::Exactly(OURS.into()))).unwrap();
    let (_, events) = challenged(az, OURS);
    assert_eq!(opened_client_id(&events), CLIENT_ID);
    // The opt-out, named as such, is the only way to present them to any server.
    let az = Authorizer::new(pre_registered(IssuerPin::AnyIssuerUnsafe)).unwrap();
    let (_, events) = challenged(az, HOSTILE);
    assert_eq!(opened_client_id(&events), CLIENT_ID);
}

/// A store as an earlier run without the pin check wrote it, for `az`'s grant (under its
/// `token_key`): this server's tokens (with a refresh token, when `refresh`) issued by the
/// hostile server, whose token endpoint is stored, and the pre-registered credentials stored as
/// the client there (when `client`).
fn store_from_an_unpinned_run(az: &Authorizer, refresh: bool, client: bool) -> CredentialStore {
    let mut issuer = serde_json::json!({"token_endpoint": format!("{HOSTILE}/token")});
    if client {
        issuer["client"] = serde_json::json!({
            "client_id": CLIENT_ID,
            "client_secret": SECRET,
            "auth_method": "ClientSecretBasic",
        });
    }
    serde_json::from_value(serde_json::json!({
        "version": CredentialStore::FORMAT_VERSION,
        "issuers": {HOSTILE: issuer},
        "resources": {az.token_key(): {
            "issuer": HOSTILE,
            "resource": SERVER,
            "tokens": {
                "access_token": "at-old",
                "refresh_token": refresh.then_some("rt-old"),
                "expires_at_ms": 1,
                "scopes": [],
            },
        }},
    }))
    .unwrap()
}

/// A renewal is checked against the pin again: tokens a store holds from another issuer are
/// not renewed there (the grant would present the secret at the stored token endpoint), and
/// they are forgotten, so that the next challenge discovers the server anew.
#[test]
fn a_renewal_of_tokens_from_another_issuer_sends_nothing_there() {
    for refresh in [false, true] {
        let grant = client_credentials(ClientAuth::SecretBasic {
            client_id: CLIENT_ID.into(),
            secret: SECRET.into(),
        });
        let az = machine(grant);
        let store = store_from_an_unpinned_run(&az, refresh, refresh);
        let mut az = az.with_store(store);
        assert_eq!(az.bearer(), Some("at-old"));
        let e = az.start_refresh(Instant::ZERO).unwrap_err();
        assert!(
            matches!(&e, AuthError::IssuerNotAllowed { issuer } if issuer == HOSTILE),
            "{e:?}"
        );
        assert!(az.poll_request().is_none(), "something was sent");
        assert_eq!(az.bearer(), None, "the tokens from another issuer are kept");
    }
}

/// A stored registration that carries pre-registered credentials pinned elsewhere (written
/// under another configuration) is not presented to the server it is stored for: neither on a
/// refresh nor when a challenge rediscovers that server.
#[test]
fn a_stored_client_carrying_a_secret_pinned_elsewhere_is_never_presented() {
    let config = || pre_registered(IssuerPin::Exactly(OURS.into()));
    let az = Authorizer::new(config()).unwrap();
    let store = store_from_an_unpinned_run(&az, true, true);
    let mut az = az.with_store(store);
    let e = az.start_refresh(Instant::ZERO).unwrap_err();
    assert!(matches!(e, AuthError::IssuerNotAllowed { .. }), "{e:?}");
    assert!(az.poll_request().is_none());
    let az = Authorizer::new(config()).unwrap();
    let store = store_from_an_unpinned_run(&az, true, true);
    let az = az.with_store(store);
    let (sent, events) = challenged(az, HOSTILE);
    assert!(refused(&events), "{events:?}");
    assert!(!sent.iter().any(carries_secret), "{sent:?}");
}

/// An authorization persisted (from `OpenUserAgent`) under a configuration that presented the
/// pre-registered credentials to any server is not resumed under one that pins them to ours:
/// its code would be redeemed at the other server with the secret.
#[test]
fn a_persisted_authorization_is_not_resumed_with_a_secret_pinned_elsewhere() {
    let az = Authorizer::new(pre_registered(IssuerPin::AnyIssuerUnsafe)).unwrap();
    let (_, events) = challenged(az, HOSTILE);
    let Some(AuthEvent::OpenUserAgent { pending, .. }) = events.into_iter().next() else {
        panic!("no user agent");
    };
    let mut pinned = Authorizer::new(pre_registered(IssuerPin::Exactly(OURS.into()))).unwrap();
    let e = pinned
        .resume(Instant::ZERO, (*pending).clone())
        .unwrap_err();
    assert!(
        matches!(&e, AuthError::IssuerNotAllowed { issuer } if issuer == HOSTILE),
        "{e:?}"
    );
    assert!(!pinned.is_busy());
    // The same under the configuration it was made with resumes.
    let mut any = Authorizer::new(pre_registered(IssuerPin::AnyIssuerUnsafe)).unwrap();
    any.resume(Instant::ZERO, *pending).unwrap();
    assert!(any.is_busy());
}
