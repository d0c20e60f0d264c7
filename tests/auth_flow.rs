//! The authorization state machine driven by canned answers: the happy path (discovery,
//! registration, the user-agent event, callback, token, refresh), step-up, refresh on 401,
//! authorization-server migration, client identification, RFC 9207 `iss`, and refusals.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use base64::Engine as _;
use mcp_sansio::auth::form::parse_query;
use mcp_sansio::auth::{
    AuthBudget, AuthConfig, AuthError, AuthEvent, AuthExchange, AuthResponse, AuthSecrets,
    Authorizer, ClientCredentials, ClientSettings, IssuerPin, PendingAuthorization, PreRegistered,
    Purpose, TokenAuthMethod, UrlPolicy, MAX_BODY_BYTES,
};
use mcp_sansio::internals::auth::pkce_challenge;
use mcp_sansio::wire::Method;
use mcp_sansio::{ErrorKind, Instant};
use mcp_sansio::{TransportError, TransportErrorKind};
use serde_json::json;

const SERVER: &str = "https://mcp.example/mcp";
const PRM: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
const AS1: &str = "https://auth.example";
const AS2: &str = "https://auth2.example/tenant";
const REDIRECT: &str = "http://127.0.0.1:33418/callback";

/// Canned answers by "METHOD URL"; the last queued answer repeats; anything else is a 404.
#[derive(Default)]
struct Fake {
    routes: HashMap<String, VecDeque<AuthResponse>>,
    log: Vec<AuthExchange>,
}

impl Fake {
    fn on(&mut self, method: &str, url: &str, status: u16, body: impl Into<Vec<u8>>) -> &mut Self {
        self.routes
            .entry(format!("{method} {url}"))
            .or_default()
            .push_back(AuthResponse::new(status, body));
        self
    }

    fn answer(&mut self, req: &AuthExchange) -> AuthResponse {
        self.log.push(req.clone());
        let key = format!("{} {}", req.request.method.as_str(), req.url);
        match self.routes.get_mut(&key) {
            Some(q) if q.len() > 1 => q.pop_front().unwrap_or_default(),
            Some(q) => q.front().cloned().unwrap_or_default(),
            None => AuthResponse::new(404, "not found"),
        }
    }

    /// Sends every request and collects every event, until nothing moves.
    fn drive(&mut self, az: &mut Authorizer, now: Instant) -> Vec<AuthEvent> {
        let mut events = Vec::new();
        loop {
            let mut moved = false;
            while let Some(req) = az.poll_request() {
                let resp = self.answer(&req);
                az.handle_response(now, req.id, resp);
                moved = true;
            }
            while let Some(e) = az.poll_event() {
                events.push(e);
                moved = true;
            }
            if !moved {
                return events;
            }
        }
    }

    fn urls(&self) -> Vec<String> {
        self.log
            .iter()
            .map(|r| format!("{} {}", r.request.method.as_str(), r.url))
            .collect()
    }
}

fn prm_body(resource: &str, issuer: &str) -> Vec<u8> {
    json!({"resource": resource, "authorization_servers": [issuer], "scopes_supported": ["mcp:read"]})
        .to_string()
        .into_bytes()
}

fn as_body(issuer: &str, extra: serde_json::Value) -> Vec<u8> {
    let mut m = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "scopes_supported": ["mcp:read", "mcp:write", "offline_access"],
    });
    if let (Some(m), Some(e)) = (m.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            m.insert(k.clone(), v.clone());
        }
    }
    m.to_string().into_bytes()
}

fn token_body(access: &str, refresh: Option<&str>) -> Vec<u8> {
    let mut t = json!({"access_token": access, "token_type": "Bearer", "expires_in": 60});
    if let (Some(r), Some(o)) = (refresh, t.as_object_mut()) {
        o.insert("refresh_token".into(), r.into());
    }
    t.to_string().into_bytes()
}

/// A fake with the standard routes of one authorization server at `issuer` (no path).
fn standard(fake: &mut Fake, issuer: &str, client_id: &str) {
    fake.on("GET", PRM, 200, prm_body(SERVER, issuer))
        .on(
            "GET",
            &format!("{issuer}/.well-known/oauth-authorization-server"),
            200,
            as_body(issuer, json!({})),
        )
        .on(
            "POST",
            &format!("{issuer}/register"),
            201,
            json!({"client_id": client_id, "client_secret": format!("{client_id}-secret")})
                .to_string(),
        )
        .on(
            "POST",
            &format!("{issuer}/token"),
            200,
            token_body("at-1", Some("rt-1")),
        );
}

fn config() -> AuthConfig {
    AuthConfig::new(SERVER, ClientSettings::new("test client", REDIRECT))
}

fn secrets(n: u8) -> AuthSecrets {
    AuthSecrets::from_random_bytes(&[n; 64])
}

const CHALLENGE: &[u8] = br#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope="mcp:read""#;

fn query_of(url: &str) -> Vec<(String, String)> {
    parse_query(url.split_once('?').map(|(_, q)| q).unwrap_or("")).unwrap()
}

fn get<'a>(q: &'a [(String, String)], n: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str())
}

fn open_event(events: &[AuthEvent]) -> (String, PendingAuthorization) {
    for e in events {
        if let AuthEvent::OpenUserAgent { url, pending } = e {
            return (url.clone(), (**pending).clone());
        }
    }
    panic!("no OpenUserAgent in {events:?}");
}

fn failure(events: &[AuthEvent]) -> AuthError {
    for e in events {
        if let AuthEvent::Failed(err) = e {
            return err.clone();
        }
    }
    panic!("no failure in {events:?}");
}

fn callback_query(pending: &PendingAuthorization, code: &str, iss: Option<&str>) -> String {
    let mut q = format!("code={code}&state={}", pending.secrets.state());
    if let Some(i) = iss {
        q.push_str(&format!("&iss={}", mcp_sansio::auth::form::encode(i)));
    }
    q
}

fn no_bearer_anywhere(fake: &Fake) {
    for r in &fake.log {
        for (n, v) in &r.request.headers {
            assert!(
                !v.to_ascii_lowercase().starts_with("bearer"),
                "{n}: a Bearer token was sent to {}",
                r.url
            );
        }
    }
}

/// Authorizes once against AS1 and returns the authorizer, authorized with at-1/rt-1.
fn authorized(fake: &mut Fake) -> Authorizer {
    standard(fake, AS1, "client-1");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    let (_, pending) = open_event(&events);
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c1", None));
    let events = fake.drive(&mut az, Instant::ZERO);
    assert!(
        matches!(events.as_slice(), [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    az
}

#[test]
fn happy_path_discovery_registration_user_agent_token_refresh() {
    let mut fake = Fake::default();
    fake.on("GET", PRM, 200, prm_body(SERVER, AS1))
        .on(
            "GET",
            "https://auth.example/.well-known/openid-configuration",
            200,
            as_body(
                AS1,
                json!({"authorization_response_iss_parameter_supported": true}),
            ),
        )
        .on(
            "POST",
            "https://auth.example/register",
            201,
            json!({"client_id": "client 1", "client_secret": "s3cr:et"}).to_string(),
        )
        .on(
            "POST",
            "https://auth.example/token",
            200,
            token_body("at-1", Some("rt-1")),
        )
        .on(
            "POST",
            "https://auth.example/token",
            200,
            token_body("at-2", Some("rt-2")),
        );
    let mut az = Authorizer::new(config()).unwrap();
    let t0 = Instant::from_millis(5_000);
    az.handle_challenge(
        t0,
        401,
        &[b"Basic realm=x".as_slice(), CHALLENGE],
        secrets(7),
    )
    .unwrap();
    assert_eq!(az.poll_timeout(), Some(Instant::from_millis(65_000)));
    let events = fake.drive(&mut az, t0);
    assert_eq!(
        fake.urls(),
        vec![
            format!("GET {PRM}"),
            "GET https://auth.example/.well-known/oauth-authorization-server".to_owned(),
            "GET https://auth.example/.well-known/openid-configuration".to_owned(),
            "POST https://auth.example/register".to_owned(),
        ]
    );
    // The registration asks for what the client is.
    let reg: serde_json::Value = serde_json::from_slice(&fake.log[3].request.body).unwrap();
    assert_eq!(
        reg["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(reg["redirect_uris"], json!([REDIRECT]));
    assert_eq!(reg["application_type"], "native");
    assert_eq!(reg["token_endpoint_auth_method"], "client_secret_basic");
    assert_eq!(reg["client_name"], "test client");

    // The user-agent step.
    let (url, pending) = open_event(&events);
    assert!(url.starts_with("https://auth.example/authorize?"));
    let q = query_of(&url);
    assert_eq!(get(&q, "client_id"), Some("client 1"));
    assert_eq!(get(&q, "scope"), Some("mcp:read offline_access"));
    assert_eq!(get(&q, "resource"), Some(SERVER));
    assert_eq!(get(&q, "redirect_uri"), Some(REDIRECT));
    assert_eq!(get(&q, "state"), Some(secrets(7).state()));
    assert_eq!(
        get(&q, "code_challenge"),
        Some(pkce_challenge(secrets(7).verifier()).as_str())
    );
    assert!(az.is_busy());

    // The pending state survives a round trip through storage, into a new authorizer.
    let saved = serde_json::to_string(&pending).unwrap();
    let store = serde_json::to_string(az.store()).unwrap();
    let mut az = Authorizer::new(config())
        .unwrap()
        .with_store(serde_json::from_str(&store).unwrap());
    let t1 = Instant::from_millis(30_000);
    az.resume(t1, serde_json::from_str(&saved).unwrap())
        .unwrap();
    az.handle_callback(t1, &callback_query(&pending, "code-1", Some(AS1)));
    let events = fake.drive(&mut az, t1);
    assert_eq!(
        events,
        vec![AuthEvent::Authorized {
            issuer: AS1.into(),
            scopes: vec!["mcp:read".into(), "offline_access".into()]
        }]
    );
    let token_req = &fake.log[4];
    assert_eq!(token_req.request.method, Method::Post);
    assert_eq!(token_req.purpose, Purpose::Token);
    let basic = token_req
        .request
        .headers
        .iter()
        .find(|(n, _)| n == "Authorization")
        .map(|(_, v)| v.clone())
        .unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic.strip_prefix("Basic ").unwrap())
        .unwrap();
    // Form-encoded before base64 (RFC 6749 §2.3.1).
    assert_eq!(decoded, b"client%201:s3cr%3Aet");
    let form = parse_query(std::str::from_utf8(&token_req.request.body).unwrap()).unwrap();
    assert_eq!(get(&form, "grant_type"), Some("authorization_code"));
    assert_eq!(get(&form, "code"), Some("code-1"));
    assert_eq!(get(&form, "code_verifier"), Some(secrets(7).verifier()));
    assert_eq!(get(&form, "redirect_uri"), Some(REDIRECT));
    assert_eq!(get(&form, "resource"), Some(SERVER));
    assert_eq!(get(&form, "client_secret"), None);
    assert_eq!(az.bearer(), Some("at-1"));
    assert!(!az.is_busy());
    assert!(!format!("{:?} {:?}", az, fake.log).contains("at-1"));

    // Expiry is on the caller's timeline; a refresh rotates the refresh token.
    assert!(!az.token_expired(Instant::from_millis(89_999)));
    assert!(az.token_expired(Instant::from_millis(90_000)));
    az.start_refresh(Instant::from_millis(90_000)).unwrap();
    let events = fake.drive(&mut az, Instant::from_millis(90_000));
    assert!(matches!(events.as_slice(), [AuthEvent::Authorized { .. }]));
    let form = parse_query(std::str::from_utf8(&fake.log[5].request.body).unwrap()).unwrap();
    assert_eq!(get(&form, "grant_type"), Some("refresh_token"));
    assert_eq!(get(&form, "refresh_token"), Some("rt-1"));
    assert_eq!(get(&form, "resource"), Some(SERVER));
    assert_eq!(az.bearer(), Some("at-2"));
    let tokens = az.store().resources[az.token_key()].tokens.clone();
    assert_eq!(tokens.refresh_token.as_deref(), Some("rt-2"));
    no_bearer_anywhere(&fake);
}

#[test]
fn step_up_asks_for_the_union_and_attempts_are_bounded() {
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    let registrations = |f: &Fake| {
        f.log
            .iter()
            .filter(|r| r.purpose == Purpose::Registration)
            .count()
    };
    assert_eq!(registrations(&fake), 1);
    let step_up: &[u8] = br#"Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#;
    az.handle_challenge(Instant::ZERO, 403, &[step_up], secrets(2))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    let (url, pending) = open_event(&events);
    assert_eq!(
        get(&query_of(&url), "scope"),
        Some("mcp:read offline_access mcp:write")
    );
    // Registered once per issuer: no second registration.
    assert_eq!(registrations(&fake), 1);
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c2", None));
    fake.drive(&mut az, Instant::ZERO);
    // Third attempt, then the bound.
    az.handle_challenge(Instant::ZERO, 403, &[step_up], secrets(3))
        .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c3", None));
    fake.drive(&mut az, Instant::ZERO);
    let err = az
        .handle_challenge(Instant::ZERO, 403, &[step_up], secrets(4))
        .unwrap_err();
    assert_eq!(
        err,
        AuthError::Budget {
            budget: AuthBudget::Attempts,
            limit: 3
        }
    );
    assert!(az.poll_request().is_none());
    // Once the server accepts a token, attempts start over.
    az.accepted();
    az.handle_challenge(Instant::ZERO, 403, &[step_up], secrets(5))
        .unwrap();
    open_event(&fake.drive(&mut az, Instant::ZERO));
}

#[test]
fn a_plain_403_or_a_foreign_challenge_does_not_authorize() {
    let mut az = Authorizer::new(config()).unwrap();
    let e = az
        .handle_challenge(
            Instant::ZERO,
            403,
            &[b"Bearer error=\"invalid_token\"".as_slice()],
            secrets(1),
        )
        .unwrap_err();
    assert!(matches!(e, AuthError::NotAuthorizable { status: 403, .. }));
    let e = az
        .handle_challenge(Instant::ZERO, 403, &[], secrets(1))
        .unwrap_err();
    assert!(matches!(e, AuthError::NotAuthorizable { status: 403, .. }));
    let e = az
        .handle_challenge(
            Instant::ZERO,
            401,
            &[b"Basic realm=x".as_slice()],
            secrets(1),
        )
        .unwrap_err();
    assert!(matches!(e, AuthError::NotAuthorizable { status: 401, .. }));
    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
    let e = az
        .handle_challenge(Instant::ZERO, 500, &[], secrets(1))
        .unwrap_err();
    assert!(matches!(e, AuthError::NotAuthorizable { status: 500, .. }));
    let e = az
        .handle_challenge(
            Instant::ZERO,
            401,
            &[b"Bearer realm=\"x".as_slice()],
            secrets(1),
        )
        .unwrap_err();
    assert!(matches!(e, AuthError::Challenge(_)));
    assert!(az.poll_request().is_none());
}

#[test]
fn without_resource_metadata_the_well_known_urls_are_tried_in_order() {
    let mut fake = Fake::default();
    fake.on(
        "GET",
        "https://mcp.example/.well-known/oauth-protected-resource",
        200,
        prm_body("https://mcp.example", "https://auth.example/t1"),
    )
    .on(
        "GET",
        "https://auth.example/t1/.well-known/openid-configuration",
        200,
        as_body("https://auth.example/t1", json!({})),
    );
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[b"Bearer".as_slice()], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert_eq!(
        fake.urls(),
        vec![
            "GET https://mcp.example/.well-known/oauth-protected-resource/mcp",
            "GET https://mcp.example/.well-known/oauth-protected-resource",
            "GET https://auth.example/.well-known/oauth-authorization-server/t1",
            "GET https://auth.example/.well-known/openid-configuration/t1",
            "GET https://auth.example/t1/.well-known/openid-configuration",
            "POST https://auth.example/t1/register",
        ]
    );
    // The registration endpoint answered 404: that is a failure, not a redirect or a retry.
    assert_eq!(
        failure(&events),
        AuthError::HttpStatus {
            purpose: Purpose::Registration,
            status: 404
        }
    );
}

#[test]
fn nothing_found_is_a_typed_failure() {
    let mut fake = Fake::default();
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert_eq!(
        failure(&events),
        AuthError::NotFound {
            purpose: Purpose::ResourceMetadata,
            last_status: Some(404)
        }
    );
    assert_eq!(fake.log.len(), 2);
}

#[test]
fn refusals_before_any_request() {
    let mut az = Authorizer::new(config()).unwrap();
    for (challenge, want) in [
        (
            &br#"Bearer resource_metadata="http://mcp.example/prm""#[..],
            "InsecureUrl",
        ),
        (
            br#"Bearer resource_metadata="https://u:p@mcp.example/prm""#,
            "Url",
        ),
        (
            br#"Bearer resource_metadata="http://127.0.0.1/prm""#,
            "InsecureUrl",
        ),
        (br#"Bearer resource_metadata="file:///etc/passwd""#, "Url"),
    ] {
        let e = az
            .handle_challenge(Instant::ZERO, 401, &[challenge], secrets(1))
            .unwrap_err();
        assert!(format!("{e:?}").starts_with(want), "{e:?}");
        assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
        assert!(az.poll_request().is_none());
        assert!(!az.is_busy());
    }
    // An http MCP server is fine for the core only on loopback with the flag.
    let mut cfg = AuthConfig::new(
        "http://127.0.0.1:3000/mcp",
        ClientSettings::new("c", REDIRECT),
    );
    let mut az = Authorizer::new(cfg.clone()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[], secrets(1))
        .unwrap();
    let events = {
        let mut fake = Fake::default();
        fake.drive(&mut az, Instant::ZERO)
    };
    assert!(matches!(failure(&events), AuthError::InsecureUrl { .. }));
    cfg.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    let mut az = Authorizer::new(cfg).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[], secrets(1))
        .unwrap();
    let req = az.poll_request().unwrap();
    assert_eq!(
        req.url,
        "http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        req.endpoint.target(),
        "/.well-known/oauth-protected-resource/mcp"
    );
}

#[test]
fn resource_mismatch_stops_before_the_authorization_server() {
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    fake.routes.remove(&format!("GET {PRM}"));
    fake.on("GET", PRM, 200, prm_body("https://evil.example/mcp", AS1));
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert!(matches!(
        failure(&events),
        AuthError::ResourceMismatch { .. }
    ));
    assert_eq!(fake.log.len(), 1, "{:?}", fake.urls());
}

#[test]
fn authorization_servers_must_be_https() {
    let mut fake = Fake::default();
    fake.on("GET", PRM, 200, prm_body(SERVER, "http://auth.example"));
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert!(matches!(failure(&events), AuthError::InsecureUrl { .. }));
    assert_eq!(fake.log.len(), 1);
}

#[test]
fn issuer_mismatch_and_missing_pkce_stop_before_registration() {
    for (meta, want) in [
        (as_body("https://evil.example", json!({})), "IssuerMismatch"),
        (
            as_body(AS1, json!({"code_challenge_methods_supported": ["plain"]})),
            "PkceUnsupported",
        ),
    ] {
        let mut fake = Fake::default();
        fake.on("GET", PRM, 200, prm_body(SERVER, AS1)).on(
            "GET",
            "https://auth.example/.well-known/oauth-authorization-server",
            200,
            meta,
        );
        let mut az = Authorizer::new(config()).unwrap();
        az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
            .unwrap();
        let events = fake.drive(&mut az, Instant::ZERO);
        assert!(format!("{:?}", failure(&events)).starts_with(want));
        assert_eq!(fake.log.len(), 2);
    }
}

#[test]
fn a_redirect_is_never_followed() {
    // A 307 on the token POST.
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    fake.routes.remove("POST https://auth.example/token");
    fake.on("POST", "https://auth.example/token", 307, "");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
    let events = fake.drive(&mut az, Instant::ZERO);
    assert_eq!(
        failure(&events),
        AuthError::Redirect {
            purpose: Purpose::Token,
            status: 307
        }
    );
    assert_eq!(az.bearer(), None);
    // A 302 on metadata.
    let mut fake = Fake::default();
    fake.on("GET", PRM, 302, "");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert_eq!(
        failure(&events),
        AuthError::Redirect {
            purpose: Purpose::ResourceMetadata,
            status: 302
        }
    );
    assert_eq!(fake.log.len(), 1);
}

#[test]
fn oversized_metadata_is_refused() {
    let mut fake = Fake::default();
    let mut big = prm_body(SERVER, AS1);
    big.resize(MAX_BODY_BYTES + 1, b' ');
    fake.on("GET", PRM, 200, big);
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let req = az.poll_request().unwrap();
    assert_eq!(req.max_response_bytes, MAX_BODY_BYTES);
    let resp = fake.answer(&req);
    az.handle_response(Instant::ZERO, req.id, resp);
    assert_eq!(
        az.poll_event(),
        Some(AuthEvent::Failed(AuthError::Budget {
            budget: AuthBudget::BodyBytes,
            limit: MAX_BODY_BYTES as u64
        }))
    );
}

#[test]
fn bad_tokens_are_refused() {
    for body in [
        json!({"access_token": "a", "token_type": "DPoP"}),
        json!({"access_token": "a\r\nSet-Cookie: x", "token_type": "Bearer"}),
    ] {
        let mut fake = Fake::default();
        standard(&mut fake, AS1, "c");
        fake.routes.remove("POST https://auth.example/token");
        fake.on("POST", "https://auth.example/token", 200, body.to_string());
        let mut az = Authorizer::new(config()).unwrap();
        az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
            .unwrap();
        let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
        az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
        let err = failure(&fake.drive(&mut az, Instant::ZERO));
        assert!(
            matches!(
                err,
                AuthError::NotBearer { .. } | AuthError::UnsafeToken { .. }
            ),
            "{err:?}"
        );
        assert_eq!(err.kind(), ErrorKind::ServerAnswered);
        assert_eq!(az.bearer(), None);
    }
}

#[test]
fn callback_checks_state_and_iss() {
    // (advertised, iss in the callback, accepted)
    let table: &[(bool, Option<&str>, Option<&str>)] = &[
        (true, Some(AS1), None),
        (false, None, None),
        (false, Some(AS1), None),
        (true, None, Some("IssuerParameter")),
        (true, Some("https://evil.example"), Some("IssuerParameter")),
        (false, Some("https://evil.example"), Some("IssuerParameter")),
        (true, Some("https://auth.example/"), Some("IssuerParameter")),
        (false, Some("https://AUTH.example"), Some("IssuerParameter")),
    ];
    for (advertised, iss, refused) in table {
        let mut fake = Fake::default();
        standard(&mut fake, AS1, "c");
        fake.routes
            .remove("GET https://auth.example/.well-known/oauth-authorization-server");
        fake.on(
            "GET",
            "https://auth.example/.well-known/oauth-authorization-server",
            200,
            as_body(
                AS1,
                json!({"authorization_response_iss_parameter_supported": advertised}),
            ),
        );
        let mut az = Authorizer::new(config()).unwrap();
        az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
            .unwrap();
        let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
        let before = fake.log.len();
        az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", *iss));
        let events = fake.drive(&mut az, Instant::ZERO);
        match refused {
            None => {
                assert!(
                    matches!(events.as_slice(), [AuthEvent::Authorized { .. }]),
                    "{iss:?}: {events:?}"
                );
            }
            Some(want) => {
                assert!(
                    format!("{:?}", failure(&events)).starts_with(want),
                    "{iss:?}"
                );
                assert_eq!(
                    fake.log.len(),
                    before,
                    "no token request after a refused callback"
                );
            }
        }
    }
    // State, errors, and a callback without a pending authorization.
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    let again = |q: &str| {
        let mut az = Authorizer::new(config()).unwrap();
        az.resume(Instant::ZERO, pending.clone()).unwrap();
        az.handle_callback(Instant::ZERO, q);
        az.poll_event()
    };
    assert_eq!(
        again("code=x&state=wrong"),
        Some(AuthEvent::Failed(AuthError::StateMismatch))
    );
    assert_eq!(
        again("code=x"),
        Some(AuthEvent::Failed(AuthError::StateMismatch))
    );
    let denied = again(&format!(
        "error=access_denied&error_description=no+way&state={}",
        pending.secrets.state()
    ));
    assert_eq!(
        denied,
        Some(AuthEvent::Failed(AuthError::Denied {
            error: "access_denied".into(),
            description: Some("no way".into())
        }))
    );
    assert!(matches!(
        again(&format!("state={}", pending.secrets.state())),
        Some(AuthEvent::Failed(AuthError::Callback { .. }))
    ));
    let mut idle = Authorizer::new(config()).unwrap();
    idle.handle_callback(Instant::ZERO, "code=x");
    assert!(matches!(
        idle.poll_event(),
        Some(AuthEvent::Failed(AuthError::Misuse { .. }))
    ));
}

#[test]
fn a_401_refreshes_once_then_authorizes() {
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    fake.routes.remove("POST https://auth.example/token");
    fake.on(
        "POST",
        "https://auth.example/token",
        200,
        token_body("at-2", None),
    );
    let expired: &[u8] = br#"Bearer error="invalid_token", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#;
    az.handle_challenge(Instant::ZERO, 401, &[expired], secrets(2))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert!(
        matches!(events.as_slice(), [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    assert_eq!(fake.log.last().unwrap().purpose, Purpose::Refresh);
    assert_eq!(az.bearer(), Some("at-2"));
    // Kept, since no new refresh token came.
    assert_eq!(
        az.store().resources[az.token_key()]
            .tokens
            .refresh_token
            .as_deref(),
        Some("rt-1")
    );
    // A second 401 before the server accepted the refreshed token: the user agent.
    az.handle_challenge(Instant::ZERO, 401, &[expired], secrets(3))
        .unwrap();
    open_event(&fake.drive(&mut az, Instant::ZERO));
}

#[test]
fn a_refused_refresh_falls_back_to_the_user_agent() {
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    fake.routes.remove("POST https://auth.example/token");
    fake.on(
        "POST",
        "https://auth.example/token",
        400,
        r#"{"error":"invalid_grant"}"#,
    );
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(2))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    open_event(&events);
    assert!(!az.store().resources.contains_key(az.token_key()));
    // A refresh the caller asked for reports the refusal.
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    fake.routes.remove("POST https://auth.example/token");
    fake.on(
        "POST",
        "https://auth.example/token",
        400,
        r#"{"error":"invalid_grant"}"#,
    );
    az.start_refresh(Instant::ZERO).unwrap();
    assert!(matches!(
        failure(&fake.drive(&mut az, Instant::ZERO)),
        AuthError::TokenError {
            purpose: Purpose::Refresh,
            status: 400,
            ..
        }
    ));
    assert!(az.start_refresh(Instant::ZERO).is_err());
}

#[test]
fn a_rejected_client_is_registered_again() {
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    // The server no longer knows the client: the refresh says invalid_client.
    fake.routes.remove("POST https://auth.example/token");
    fake.on(
        "POST",
        "https://auth.example/token",
        401,
        r#"{"error":"invalid_client"}"#,
    );
    fake.routes.remove("POST https://auth.example/register");
    fake.on(
        "POST",
        "https://auth.example/register",
        201,
        r#"{"client_id":"client-2"}"#,
    );
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(2))
        .unwrap();
    let (url, _) = open_event(&fake.drive(&mut az, Instant::ZERO));
    assert_eq!(get(&query_of(&url), "client_id"), Some("client-2"));
    let purposes: Vec<Purpose> = fake.log.iter().rev().take(2).map(|r| r.purpose).collect();
    assert_eq!(purposes, vec![Purpose::Registration, Purpose::Refresh]);
}

#[test]
fn a_new_authorization_server_is_registered_with_anew() {
    let mut fake = Fake::default();
    let mut az = authorized(&mut fake);
    az.accepted();
    // The resource now names AS2 (an issuer with a path).
    fake.routes.remove(&format!("GET {PRM}"));
    fake.on("GET", PRM, 200, prm_body(SERVER, AS2));
    let as2_meta = json!({
        "issuer": AS2,
        "authorization_endpoint": "https://auth2.example/tenant/authorize",
        "token_endpoint": "https://auth2.example/tenant/token",
        "registration_endpoint": "https://auth2.example/tenant/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
    });
    fake.on(
        "GET",
        "https://auth2.example/.well-known/oauth-authorization-server/tenant",
        200,
        as2_meta.to_string(),
    )
    .on(
        "POST",
        "https://auth2.example/tenant/register",
        201,
        json!({"client_id": "as2-client", "client_secret": "as2-secret"}).to_string(),
    )
    .on(
        "POST",
        "https://auth2.example/tenant/token",
        200,
        token_body("as2-at", None),
    );
    let first = fake.log.len();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(2))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    let (url, pending) = open_event(&events);
    assert_eq!(get(&query_of(&url), "client_id"), Some("as2-client"));
    // No refresh at AS2 with AS1's refresh token: straight to registration.
    assert!(fake.log[first..]
        .iter()
        .all(|r| r.purpose != Purpose::Refresh));
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
    fake.drive(&mut az, Instant::ZERO);
    assert_eq!(az.bearer(), Some("as2-at"));
    assert_eq!(az.store().resources[az.token_key()].issuer, AS2);
    // AS1's credentials are kept under AS1 and never reached AS2.
    assert_eq!(
        az.store().issuers[AS1].client.as_ref().unwrap().client_id,
        "client-1"
    );
    for r in fake.log[first..]
        .iter()
        .filter(|r| r.url.starts_with("https://auth2.example"))
    {
        let text = format!(
            "{} {:?} {}",
            r.url,
            r.request.headers,
            String::from_utf8_lossy(&r.request.body)
        );
        assert!(
            !text.contains("client-1") && !text.contains("rt-1"),
            "{text}"
        );
    }
    let token = fake.log.last().unwrap();
    let form = parse_query(std::str::from_utf8(&token.request.body).unwrap()).unwrap();
    assert_eq!(get(&form, "client_id"), Some("as2-client"));
    assert_eq!(get(&form, "client_secret"), Some("as2-secret"));
    assert!(token
        .request
        .headers
        .iter()
        .all(|(n, _)| n != "Authorization"));
}

#[test]
fn client_metadata_document_and_pre_registration_skip_registration() {
    // A client ID metadata document where the server supports them.
    let mut cfg = config();
    cfg.client.metadata_document_url = Some("https://client.example/meta.json".into());
    let doc: serde_json::Value =
        serde_json::from_slice(&cfg.client.metadata_document().unwrap()).unwrap();
    assert_eq!(doc["client_id"], "https://client.example/meta.json");
    assert_eq!(
        doc["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    fake.routes
        .remove("GET https://auth.example/.well-known/oauth-authorization-server");
    fake.on(
        "GET",
        "https://auth.example/.well-known/oauth-authorization-server",
        200,
        as_body(AS1, json!({"client_id_metadata_document_supported": true})),
    );
    let mut az = Authorizer::new(cfg.clone()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (url, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    assert_eq!(
        get(&query_of(&url), "client_id"),
        Some("https://client.example/meta.json")
    );
    assert!(fake.log.iter().all(|r| r.purpose != Purpose::Registration));
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
    fake.drive(&mut az, Instant::ZERO);
    let form =
        parse_query(std::str::from_utf8(&fake.log.last().unwrap().request.body).unwrap()).unwrap();
    assert_eq!(
        get(&form, "client_id"),
        Some("https://client.example/meta.json")
    );
    // Without server support, the document is not used: registration happens.
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    let mut az = Authorizer::new(cfg).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    fake.drive(&mut az, Instant::ZERO);
    assert!(fake.log.iter().any(|r| r.purpose == Purpose::Registration));

    // Pre-registered credentials for this issuer, with client_secret_post.
    let mut cfg = config();
    cfg.client.pre_registered.push(PreRegistered {
        issuer: IssuerPin::Exactly(AS1.into()),
        credentials: ClientCredentials {
            client_id: "pre".into(),
            client_secret: Some("pre-secret".into()),
            auth_method: TokenAuthMethod::ClientSecretPost,
        },
    });
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    let mut az = Authorizer::new(cfg).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (url, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    assert_eq!(get(&query_of(&url), "client_id"), Some("pre"));
    assert!(fake.log.iter().all(|r| r.purpose != Purpose::Registration));
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
    fake.drive(&mut az, Instant::ZERO);
    let form =
        parse_query(std::str::from_utf8(&fake.log.last().unwrap().request.body).unwrap()).unwrap();
    assert_eq!(get(&form, "client_secret"), Some("pre-secret"));

    // No registration endpoint and nothing else: refused.
    let mut fake = Fake::default();
    fake.on("GET", PRM, 200, prm_body(SERVER, AS1)).on(
        "GET",
        "https://auth.example/.well-known/oauth-authorization-server",
        200,
        as_body(AS1, json!({"registration_endpoint": null})),
    );
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    assert!(matches!(
        failure(&fake.drive(&mut az, Instant::ZERO)),
        AuthError::NoRegistration { .. }
    ));
}

#[test]
fn public_client_sends_its_id_and_no_secret() {
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    fake.routes
        .remove("GET https://auth.example/.well-known/oauth-authorization-server");
    fake.routes.remove("POST https://auth.example/register");
    fake.on(
        "GET",
        "https://auth.example/.well-known/oauth-authorization-server",
        200,
        as_body(
            AS1,
            json!({"token_endpoint_auth_methods_supported": ["none"]}),
        ),
    )
    .on(
        "POST",
        "https://auth.example/register",
        201,
        r#"{"client_id":"pub"}"#,
    );
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    let reg: serde_json::Value =
        serde_json::from_slice(&fake.log.last().unwrap().request.body).unwrap();
    assert_eq!(reg["token_endpoint_auth_method"], "none");
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c", None));
    fake.drive(&mut az, Instant::ZERO);
    let token = fake.log.last().unwrap();
    let form = parse_query(std::str::from_utf8(&token.request.body).unwrap()).unwrap();
    assert_eq!(get(&form, "client_id"), Some("pub"));
    assert_eq!(get(&form, "client_secret"), None);
    assert!(token
        .request
        .headers
        .iter()
        .all(|(n, _)| n != "Authorization"));
}

#[test]
fn deadlines_and_exchange_bounds() {
    // The network deadline.
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let req = az.poll_request().unwrap();
    let late = Instant::from_millis(60_000);
    az.handle_response(late, req.id, AuthResponse::new(200, prm_body(SERVER, AS1)));
    assert_eq!(
        az.poll_event(),
        Some(AuthEvent::Failed(AuthError::Budget {
            budget: AuthBudget::Time,
            limit: 60_000
        }))
    );
    assert!(az.poll_request().is_none());
    assert!(!az.is_busy());
    assert_eq!(az.poll_timeout(), None);

    // The callback deadline.
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    open_event(&fake.drive(&mut az, Instant::ZERO));
    assert_eq!(az.poll_timeout(), Some(Instant::from_millis(600_000)));
    az.handle_timeout(Instant::from_millis(600_000));
    assert!(matches!(
        az.poll_event(),
        Some(AuthEvent::Failed(AuthError::Budget {
            budget: AuthBudget::CallbackTime,
            ..
        }))
    ));
    assert!(!az.is_busy());

    // A callback after its deadline is reported once, as the deadline, and redeems nothing.
    let mut fake = Fake::default();
    standard(&mut fake, AS1, "c");
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az, Instant::ZERO));
    let sent = fake.log.len();
    az.handle_callback(
        Instant::from_millis(600_000),
        &callback_query(&pending, "c", None),
    );
    let events = fake.drive(&mut az, Instant::from_millis(600_000));
    assert_eq!(
        events,
        vec![AuthEvent::Failed(AuthError::Budget {
            budget: AuthBudget::CallbackTime,
            limit: 600_000
        })]
    );
    assert_eq!(fake.log.len(), sent);

    // The exchange bound.
    let mut cfg = config();
    cfg.limits.max_exchanges = 2;
    let mut fake = Fake::default();
    let mut az = Authorizer::new(cfg).unwrap();
    let custom: &[u8] = br#"Bearer resource_metadata="https://mcp.example/custom.json""#;
    az.handle_challenge(Instant::ZERO, 401, &[custom], secrets(1))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    assert_eq!(
        failure(&events),
        AuthError::Budget {
            budget: AuthBudget::Exchanges,
            limit: 2
        }
    );
    assert_eq!(fake.log.len(), 2);

    // A transport failure ends the authorization; a stale answer is ignored.
    let mut az = Authorizer::new(config()).unwrap();
    az.handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .unwrap();
    let req = az.poll_request().unwrap();
    az.handle_transport_error(
        Instant::ZERO,
        req.id,
        TransportError {
            kind: TransportErrorKind::AddressRefused,
            message: "refused".into(),
        },
    );
    let err = match az.poll_event() {
        Some(AuthEvent::Failed(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(matches!(
        err,
        AuthError::Transport {
            purpose: Purpose::ResourceMetadata,
            ..
        }
    ));
    assert_eq!(
        mcp_sansio::Error::from(err).kind(),
        ErrorKind::ConnectionFailed
    );
    az.handle_response(Instant::ZERO, req.id, AuthResponse::new(200, "{}"));
    assert_eq!(az.poll_event(), None);
    assert!(az
        .handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .is_ok());
    assert!(az
        .handle_challenge(Instant::ZERO, 401, &[CHALLENGE], secrets(1))
        .is_err());
}

#[test]
fn the_same_inputs_give_the_same_requests() {
    let run = || {
        let mut fake = Fake::default();
        let mut az = authorized(&mut fake);
        az.start_refresh(Instant::from_millis(1)).unwrap();
        fake.drive(&mut az, Instant::from_millis(1));
        fake.log
            .iter()
            .map(|r| {
                (
                    r.url.clone(),
                    r.request.headers.clone(),
                    r.request.body.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
    let _ = Duration::ZERO;
}

/// Each request of an authorization is the crate's one request type, built from its URL: the
/// path is the URL's path and query (RFC 9112 §3.2.1: `origin-form = absolute-path [ "?" query
/// ]`), the authority its host and port (RFC 9110 §7.2: the `Host` field "provides the host and
/// port information from the target URI"), and it passes the checks every wire shares.
#[test]
fn every_request_is_a_wire_request_for_its_url() {
    let issuer = "https://auth.example:8443";
    let prm = "https://mcp.example/prm?v=1";
    let mut fake = Fake::default();
    standard(&mut fake, issuer, "client-p");
    fake.on("GET", prm, 200, prm_body(SERVER, issuer));
    let mut az = Authorizer::new(config()).unwrap();
    let challenge = format!(r#"Bearer resource_metadata="{prm}""#);
    az.handle_challenge(Instant::ZERO, 401, &[challenge.as_bytes()], secrets(2))
        .unwrap();
    let events = fake.drive(&mut az, Instant::ZERO);
    let (_, pending) = open_event(&events);
    az.handle_callback(Instant::ZERO, &callback_query(&pending, "c1", None));
    let events = fake.drive(&mut az, Instant::ZERO);
    assert!(
        matches!(events.as_slice(), [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    assert_eq!(
        fake.urls(),
        [
            format!("GET {prm}"),
            format!("GET {issuer}/.well-known/oauth-authorization-server"),
            format!("POST {issuer}/register"),
            format!("POST {issuer}/token"),
        ]
    );
    for ex in &fake.log {
        let rest = ex.url.strip_prefix("https://").unwrap();
        let slash = rest.find('/').unwrap();
        assert_eq!(ex.request.authority, rest[..slash], "{ex:?}");
        assert_eq!(ex.request.path, rest[slash..], "{ex:?}");
        assert_eq!(ex.request.check(), Ok(()), "{ex:?}");
        assert_eq!(
            ex.request.body.is_empty(),
            ex.request.method == Method::Get,
            "{ex:?}"
        );
    }
}
