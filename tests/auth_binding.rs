//! Tokens stay with the resource they were issued for: one credential store serves two MCP
//! servers without ever sending one server's token to the other, refreshing one server's token
//! for the other, or accepting a protected-resource `resource` that is only a prefix of the
//! server's URL; and the redirect URI binds an authorization response to its authorization
//! server (mix-up defence, RFC 9700 §4.4.2).

use std::collections::{HashMap, VecDeque};

use mcp_sansio::auth::form::parse_query;
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, AuthExchange, AuthResponse, AuthSecrets, Authorizer,
    ClientAuth, ClientSettings, CredentialStore, Grant, IssuerPin, PendingAuthorization, Purpose,
};
use mcp_sansio::{Endpoint, Instant};
use serde_json::json;

const SERVER_A: &str = "https://a.example/mcp";
const PRM_A: &str = "https://a.example/.well-known/oauth-protected-resource/mcp";
const SERVER_B: &str = "https://b.example/mcp";
const PRM_B: &str = "https://b.example/.well-known/oauth-protected-resource/mcp";
const AS: &str = "https://auth.example";
const AS_H: &str = "https://hostile-auth.example";
const REDIRECT: &str = "http://127.0.0.1:33418/callback";

/// Canned answers by "METHOD URL" (the last one repeats); anything else is a 404.
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

    fn drive(&mut self, az: &mut Authorizer) -> Vec<AuthEvent> {
        let mut events = Vec::new();
        loop {
            let mut moved = false;
            while let Some(req) = az.poll_request() {
                self.log.push(req.clone());
                let key = format!("{} {}", req.request.method.as_str(), req.url);
                let resp = match self.routes.get_mut(&key) {
                    Some(q) if q.len() > 1 => q.pop_front().unwrap_or_default(),
                    Some(q) => q.front().cloned().unwrap_or_default(),
                    None => AuthResponse::new(404, "not found"),
                };
                az.handle_response(Instant::ZERO, req.id, resp);
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
}

fn as_meta(issuer: &str, iss_supported: bool) -> Vec<u8> {
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": iss_supported,
    })
    .to_string()
    .into_bytes()
}

/// The routes of resource `server` (metadata at `prm`) protected by `issuer`, and of `issuer`.
fn routes(fake: &mut Fake, server: &str, prm: &str, issuer: &str, access: &str) {
    fake.on(
        "GET",
        prm,
        200,
        json!({"resource": server, "authorization_servers": [issuer]}).to_string(),
    )
    .on(
        "GET",
        &format!("{issuer}/.well-known/oauth-authorization-server"),
        200,
        as_meta(issuer, false),
    )
    .on(
        "POST",
        &format!("{issuer}/register"),
        201,
        json!({"client_id": "cid", "token_endpoint_auth_method": "none"}).to_string(),
    );
    let token = json!({"access_token": access, "token_type": "Bearer", "expires_in": 60, "refresh_token": format!("rt-{access}")});
    fake.routes.remove(&format!("POST {issuer}/token"));
    fake.on("POST", &format!("{issuer}/token"), 200, token.to_string());
}

fn challenge(prm: &str) -> Vec<u8> {
    format!("Bearer resource_metadata=\"{prm}\"").into_bytes()
}

fn authorizer(server: &str) -> Authorizer {
    Authorizer::new(AuthConfig::new(
        server,
        ClientSettings::new("test client", REDIRECT),
    ))
    .unwrap()
}

fn open_event(events: &[AuthEvent]) -> (String, PendingAuthorization) {
    for e in events {
        if let AuthEvent::OpenUserAgent { url, pending } = e {
            return (url.clone(), (**pending).clone());
        }
    }
    panic!("no OpenUserAgent in {events:?}");
}

fn param(url: &str, name: &str) -> Option<String> {
    let q = parse_query(url.split_once('?').map(|(_, q)| q).unwrap_or("")).unwrap();
    q.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// Authorizes the client against server A (through `AS`) and gives the store it ends with.
fn store_with_a_token_for_a(fake: &mut Fake) -> CredentialStore {
    routes(fake, SERVER_A, PRM_A, AS, "at-a");
    let mut az = authorizer(SERVER_A);
    az.handle_challenge(
        Instant::ZERO,
        401,
        &[&challenge(PRM_A)],
        AuthSecrets::from_random_bytes(&[1; 64]),
    )
    .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut az));
    az.handle_callback(
        Instant::ZERO,
        &format!("code=c&state={}", pending.secrets.state()),
    );
    let events = fake.drive(&mut az);
    assert!(
        matches!(events.as_slice(), [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    assert_eq!(az.bearer(), Some("at-a"));
    az.store().clone()
}

#[test]
fn a_token_for_one_server_is_never_sent_to_another() {
    let mut fake = Fake::default();
    let store = store_with_a_token_for_a(&mut fake);
    // The same store, given to the authorizer of server B: nothing to send.
    let b = authorizer(SERVER_B).with_store(store.clone());
    assert_eq!(b.bearer(), None);
    assert!(
        !b.token_expired(Instant::from_duration(std::time::Duration::from_secs(
            1 << 40
        )))
    );
    // …while server A, however its URL is spelt, still gets its own.
    for spelling in [
        SERVER_A,
        "https://A.EXAMPLE/mcp",
        "https://a.example:443/mcp",
        "HTTPS://a.example/mcp",
    ] {
        let a = authorizer(spelling).with_store(store.clone());
        assert_eq!(a.bearer(), Some("at-a"), "{spelling}");
    }
    // A path that is only a prefix, or longer, is another resource.
    for other in [
        "https://a.example/",
        "https://a.example/mcp/",
        "https://a.example/mcp/x",
    ] {
        assert_eq!(
            authorizer(other).with_store(store.clone()).bearer(),
            None,
            "{other}"
        );
    }
}

#[test]
fn a_server_naming_another_servers_authorization_server_gets_no_refreshed_token() {
    let mut fake = Fake::default();
    let store = store_with_a_token_for_a(&mut fake);
    // Hostile B answers 401 and names A's authorization server.
    routes(&mut fake, SERVER_B, PRM_B, AS, "at-b");
    let first = fake.log.len();
    let mut b = authorizer(SERVER_B).with_store(store);
    b.handle_challenge(
        Instant::ZERO,
        401,
        &[&challenge(PRM_B)],
        AuthSecrets::from_random_bytes(&[2; 64]),
    )
    .unwrap();
    let events = fake.drive(&mut b);
    // No refresh of A's token: the user agent is asked for B's own authorization.
    assert!(
        fake.log[first..]
            .iter()
            .all(|r| r.purpose != Purpose::Refresh),
        "a refresh was sent for server B"
    );
    assert_eq!(b.bearer(), None);
    let (url, _) = open_event(&events);
    assert_eq!(param(&url, "resource").as_deref(), Some(SERVER_B));
    // The registration at the shared authorization server is reused, not its tokens.
    assert_eq!(param(&url, "client_id").as_deref(), Some("cid"));
    assert!(fake.log[first..]
        .iter()
        .all(|r| !String::from_utf8_lossy(&r.request.body).contains("rt-at-a")));
}

#[test]
fn a_refresh_is_for_the_resource_the_token_was_issued_for() {
    let mut fake = Fake::default();
    let store = store_with_a_token_for_a(&mut fake);
    let mut a = authorizer(SERVER_A).with_store(store.clone());
    a.start_refresh(Instant::ZERO).unwrap();
    let req = a.poll_request().unwrap();
    assert_eq!(req.purpose, Purpose::Refresh);
    assert_eq!(req.url, format!("{AS}/token"));
    let form = parse_query(std::str::from_utf8(&req.request.body).unwrap()).unwrap();
    let get = |n: &str| form.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    assert_eq!(get("resource"), Some(SERVER_A));
    assert_eq!(get("refresh_token"), Some("rt-at-a"));
    // Server B has nothing to refresh.
    let mut b = authorizer(SERVER_B).with_store(store);
    assert!(matches!(
        b.start_refresh(Instant::ZERO),
        Err(AuthError::Misuse { .. })
    ));
    assert!(b.poll_request().is_none());
}

#[test]
fn both_servers_keep_their_own_tokens_in_one_store() {
    let mut fake = Fake::default();
    let store = store_with_a_token_for_a(&mut fake);
    routes(&mut fake, SERVER_B, PRM_B, AS, "at-b");
    let mut b = authorizer(SERVER_B).with_store(store);
    b.handle_challenge(
        Instant::ZERO,
        401,
        &[&challenge(PRM_B)],
        AuthSecrets::from_random_bytes(&[3; 64]),
    )
    .unwrap();
    let (_, pending) = open_event(&fake.drive(&mut b));
    b.handle_callback(
        Instant::ZERO,
        &format!("code=c&state={}", pending.secrets.state()),
    );
    fake.drive(&mut b);
    assert_eq!(b.bearer(), Some("at-b"));
    let store = b.store().clone();
    assert_eq!(
        authorizer(SERVER_A).with_store(store.clone()).bearer(),
        Some("at-a")
    );
    assert_eq!(store.resources.len(), 2);
    // Tokens belong to the grant that obtained them too: another client, or a machine grant
    // of the same client ID (pinned to one issuer or to another), finds none of them for the
    // same server, and the two pins have keys of their own.
    let other_client = AuthConfig::new(SERVER_A, ClientSettings::new("other client", REDIRECT));
    let machine = |issuer: &str| {
        AuthConfig::machine(
            SERVER_A,
            "test client",
            Grant::ClientCredentials {
                client: ClientAuth::SecretBasic {
                    client_id: "test client".into(),
                    secret: "s".into(),
                },
                issuer: IssuerPin::Exactly(issuer.to_owned()),
            },
        )
    };
    let mut keys = vec![authorizer(SERVER_A).token_key().to_owned()];
    for config in [
        other_client,
        machine(AS),
        machine("https://other-as.example"),
    ] {
        let az = Authorizer::new(config).unwrap().with_store(store.clone());
        assert_eq!(az.bearer(), None);
        assert!(!keys.contains(&az.token_key().to_owned()));
        keys.push(az.token_key().to_owned());
    }
    let key_b = authorizer(SERVER_B).token_key().to_owned();
    assert_eq!(store.resources[&key_b].resource, SERVER_B);
    assert_eq!(store.resources[&key_b].issuer, AS);
    // The store round-trips through JSON with its version.
    let text = serde_json::to_string(&store).unwrap();
    let back: CredentialStore = serde_json::from_str(&text).unwrap();
    assert_eq!(back, store);
    assert_eq!(back.version, CredentialStore::FORMAT_VERSION);
}

/// A store of format 2 (tokens keyed by the server's URL only, whatever grant obtained them)
/// loads with its client registrations and without its tokens: the next authorization asks for
/// tokens bound to its grant.
#[test]
fn a_store_of_format_2_keeps_its_registrations_and_drops_its_tokens() {
    let v2 = json!({
        "version": 2,
        "issuers": {
            AS: {
                "client": {"client_id": "cid", "client_secret": null, "auth_method": "None"},
                "token_endpoint": format!("{AS}/token"),
            }
        },
        "resources": {
            mcp_sansio::internals::auth::resource_key(&Endpoint::parse(SERVER_A).unwrap()): {
                "issuer": AS,
                "resource": SERVER_A,
                "tokens": {"access_token": "at-v2", "refresh_token": "rt-v2", "expires_at_ms": null, "scopes": []},
            }
        },
    });
    let store: CredentialStore = serde_json::from_value(v2).unwrap();
    assert_eq!(store.resources.len(), 1);
    let az = authorizer(SERVER_A).with_store(store);
    assert_eq!(az.bearer(), None);
    assert!(az.store().resources.is_empty());
    assert_eq!(az.store().version, CredentialStore::FORMAT_VERSION);
    assert_eq!(
        az.store().issuers[AS].client.as_ref().unwrap().client_id,
        "cid"
    );
}

#[test]
fn a_store_of_the_earlier_format_keeps_its_registrations_and_drops_unbound_tokens() {
    let old = json!({
        "issuers": {
            AS: {
                "client": {"client_id": "cid", "client_secret": null, "auth_method": "None"},
                "tokens": {"access_token": "at-old", "refresh_token": "rt-old", "expires_at_ms": null, "scopes": []},
                "token_endpoint": format!("{AS}/token"),
                "resource": SERVER_A,
            }
        },
        "current": AS,
    });
    let store: CredentialStore = serde_json::from_value(old).unwrap();
    assert_eq!(store.version, 0);
    assert!(store.resources.is_empty());
    for server in [SERVER_A, SERVER_B] {
        let az = authorizer(server).with_store(store.clone());
        assert_eq!(az.bearer(), None, "{server}");
        assert_eq!(az.store().version, CredentialStore::FORMAT_VERSION);
        assert_eq!(
            az.store().issuers[AS].client.as_ref().unwrap().client_id,
            "cid"
        );
    }
}

#[test]
fn a_resource_that_is_only_a_prefix_of_the_server_url_is_refused() {
    for (resource, prm) in [
        ("https://a.example/", PRM_A),
        ("https://a.example", PRM_A),
        ("https://a.example/mc", PRM_A),
        ("https://a.example/mcp/", PRM_A),
    ] {
        let mut fake = Fake::default();
        routes(&mut fake, resource, prm, AS, "at");
        let mut az = authorizer(SERVER_A);
        az.handle_challenge(
            Instant::ZERO,
            401,
            &[&challenge(prm)],
            AuthSecrets::from_random_bytes(&[4; 64]),
        )
        .unwrap();
        let events = fake.drive(&mut az);
        assert!(
            matches!(
                events.as_slice(),
                [AuthEvent::Failed(AuthError::ResourceMismatch { .. })]
            ),
            "{resource}: {events:?}"
        );
        assert_eq!(fake.log.len(), 1, "{resource}: nothing after the metadata");
    }
}

#[test]
fn the_origin_is_accepted_only_from_the_root_well_known_url() {
    // No resource_metadata in the challenge, no document at the path-inserted URL: the root
    // document names the origin, the identifier its URL is built from (RFC 9728 §3.3).
    let mut fake = Fake::default();
    let root = "https://a.example/.well-known/oauth-protected-resource";
    routes(&mut fake, "https://a.example", root, AS, "at");
    let mut az = authorizer(SERVER_A);
    az.handle_challenge(
        Instant::ZERO,
        401,
        &[b"Bearer"],
        AuthSecrets::from_random_bytes(&[5; 64]),
    )
    .unwrap();
    let (url, pending) = open_event(&fake.drive(&mut az));
    assert_eq!(
        param(&url, "resource").as_deref(),
        Some("https://a.example")
    );
    az.handle_callback(
        Instant::ZERO,
        &format!("code=c&state={}", pending.secrets.state()),
    );
    fake.drive(&mut az);
    // Bound to the server it was obtained for, refreshed with the resource it was asked for.
    assert_eq!(az.bearer(), Some("at"));
    assert_eq!(
        authorizer("https://a.example/")
            .with_store(az.store().clone())
            .bearer(),
        None
    );
}

#[test]
fn each_authorization_server_without_iss_gets_its_own_redirect_uri() {
    // Mix-up (RFC 9700 §4.4.2): a hostile authorization server that does not send `iss` sends
    // the browser on to an honest one; the honest answer comes back to the honest server's
    // redirect URI, which is not the one the hostile server's authorization is waiting on.
    let mut fake = Fake::default();
    routes(&mut fake, SERVER_A, PRM_A, AS, "at-a");
    routes(&mut fake, SERVER_B, PRM_B, AS_H, "at-h");
    let mut honest = authorizer(SERVER_A);
    honest
        .handle_challenge(
            Instant::ZERO,
            401,
            &[&challenge(PRM_A)],
            AuthSecrets::from_random_bytes(&[6; 64]),
        )
        .unwrap();
    let (honest_url, _) = open_event(&fake.drive(&mut honest));
    let mut hostile = authorizer(SERVER_B);
    hostile
        .handle_challenge(
            Instant::ZERO,
            401,
            &[&challenge(PRM_B)],
            AuthSecrets::from_random_bytes(&[7; 64]),
        )
        .unwrap();
    let (hostile_url, hostile_pending) = open_event(&fake.drive(&mut hostile));
    let honest_redirect = param(&honest_url, "redirect_uri").unwrap();
    let hostile_redirect = param(&hostile_url, "redirect_uri").unwrap();
    assert_ne!(honest_redirect, hostile_redirect);
    for r in [&honest_redirect, &hostile_redirect] {
        assert!(r.starts_with(&format!("{REDIRECT}/")), "{r}");
    }
    // Registered with the same redirect URI it sends.
    let registered: Vec<String> = fake
        .log
        .iter()
        .filter(|r| r.purpose == Purpose::Registration)
        .map(|r| String::from_utf8_lossy(&r.request.body).into_owned())
        .collect();
    assert!(
        registered[0].contains(&honest_redirect.replace('/', "\\/"))
            || registered[0].contains(&honest_redirect)
    );
    // The honest server's answer, arriving at its own redirect URI, is refused by the
    // hostile server's pending authorization, with no token request.
    let honest_path = Endpoint::parse(&honest_redirect)
        .unwrap()
        .target()
        .to_owned();
    let before = fake.log.len();
    hostile.handle_redirect(
        Instant::ZERO,
        &format!(
            "{honest_path}?code=honest-code&state={}",
            hostile_pending.secrets.state()
        ),
    );
    let events = fake.drive(&mut hostile);
    assert!(
        matches!(
            events.as_slice(),
            [AuthEvent::Failed(AuthError::RedirectMismatch)]
        ),
        "{events:?}"
    );
    assert_eq!(fake.log.len(), before, "no token request");
    // At its own redirect URI, the answer is redeemed.
    let mut fake2 = Fake::default();
    routes(&mut fake2, SERVER_B, PRM_B, AS_H, "at-h");
    let mut again = authorizer(SERVER_B);
    again
        .handle_challenge(
            Instant::ZERO,
            401,
            &[&challenge(PRM_B)],
            AuthSecrets::from_random_bytes(&[8; 64]),
        )
        .unwrap();
    let (url, pending) = open_event(&fake2.drive(&mut again));
    let own = Endpoint::parse(&param(&url, "redirect_uri").unwrap())
        .unwrap()
        .target()
        .to_owned();
    again.handle_redirect(
        Instant::ZERO,
        &format!("{own}?code=c&state={}", pending.secrets.state()),
    );
    fake2.drive(&mut again);
    assert_eq!(again.bearer(), Some("at-h"));
}
