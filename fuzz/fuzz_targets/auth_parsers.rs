//! The authorization parsers and decoders on arbitrary bytes: `WWW-Authenticate` values,
//! protected-resource and authorization-server metadata, registration and token answers, the
//! callback query, and the `Authorizer` fed arbitrary answers. None panics; every accepted value
//! keeps the invariants the flow relies on (bounded challenges, a matching resource, the exact
//! issuer, header-safe tokens, policy-checked URLs, no Bearer token on any request, termination
//! within the exchange bound, tokens bound to the server they were obtained for).
//!
//! Input: the first byte picks the parser; the rest is its input (for the flow, answers
//! separated by `0xff`, each a status byte and a body).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::internals::auth::decode_registration;
use mcp_sansio::auth::form::parse_query;
use mcp_sansio::internals::auth::{decode_resource_metadata, decode_server_metadata, resource_designates, resource_matches};
use mcp_sansio::internals::auth::{decode_token_response, is_header_safe};
use mcp_sansio::auth::{
    parse_challenges, AuthConfig, AuthEvent, AuthResponse, AuthSecrets, Authorizer, ClientSettings,
    Purpose, ServerMetadata, TokenAuthMethod, UrlPolicy,
};
use mcp_sansio::internals::auth::{MAX_CHALLENGES, MAX_PARAMS};
use mcp_sansio::Endpoint;
use mcp_sansio::Instant;

const SERVER: &str = "http://127.0.0.1:3000/mcp";
const ISSUER: &str = "http://127.0.0.1:4000";
const POLICY: UrlPolicy = UrlPolicy {
    allow_loopback_http: true,
};

fn challenges(data: &[u8]) {
    let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    let by_lines = parse_challenges(lines.iter().copied());
    if let Ok(cs) = &by_lines {
        assert!(cs.len() <= MAX_CHALLENGES);
        for c in cs {
            assert!(!c.scheme.is_empty());
            assert!(c.params.len() <= MAX_PARAMS);
            assert!(c.token68.is_none() || c.params.is_empty());
        }
    }
    // Field lines are one comma-separated list: joined, they mean the same.
    let joined = lines.join(&b", "[..]);
    if let (Ok(a), Ok(b)) = (&by_lines, parse_challenges([joined.as_slice()])) {
        assert_eq!(a, &b);
    }
}

fn meta() -> ServerMetadata {
    ServerMetadata {
        issuer: ISSUER.into(),
        authorization_endpoint: format!("{ISSUER}/authorize"),
        token_endpoint: format!("{ISSUER}/token"),
        registration_endpoint: None,
        scopes_supported: None,
        token_endpoint_auth_methods_supported: None,
        token_endpoint_auth_signing_alg_values_supported: None,
        client_id_metadata_document_supported: false,
        iss_parameter_supported: false,
    }
}

fn decoders(mode: u8, data: &[u8]) {
    let server = Endpoint::parse(SERVER).expect("server URL");
    match mode {
        1 => {
            // The last byte says whether the document came from the root well-known URL.
            let at_root = data.last().is_some_and(|b| b & 1 == 1);
            if let Ok(m) = decode_resource_metadata(data, &server, SERVER, POLICY, at_root) {
                assert!(resource_designates(&m.resource, &server, at_root));
                assert!(at_root || resource_matches(&m.resource, &server));
                assert!(!m.authorization_servers.is_empty());
                for s in &m.authorization_servers {
                    assert!(POLICY.check("as", s).is_ok());
                }
            }
        }
        2 => {
            if let Ok(m) = decode_server_metadata(data, ISSUER, POLICY) {
                assert_eq!(m.issuer, ISSUER);
                assert!(POLICY.check("t", &m.token_endpoint).is_ok());
                assert!(POLICY.check("a", &m.authorization_endpoint).is_ok());
            }
        }
        3 => {
            let status = data
                .first()
                .map_or(200, |b| if *b < 128 { 200 } else { 400 });
            if let Ok(t) = decode_token_response(
                Purpose::Token,
                status,
                data.get(1..).unwrap_or_default(),
                &[],
                Some("rt"),
                0,
            ) {
                assert!(is_header_safe(&t.access_token));
                assert!(t.refresh_token.as_deref().is_none_or(is_header_safe));
            }
        }
        4 => {
            if let Ok(c) = decode_registration(data, &meta(), TokenAuthMethod::None) {
                assert!(!c.client_id.is_empty());
            }
        }
        _ => {
            let _ = parse_query(&String::from_utf8_lossy(data));
        }
    }
}

fn flow(data: &[u8]) {
    let mut parts = data.split(|b| *b == 0xff);
    let challenge = parts.next().unwrap_or_default();
    let mut config = AuthConfig::new(SERVER, ClientSettings::new("fuzz", "http://127.0.0.1:5/cb"));
    config.policy = POLICY;
    let max = config.limits.max_exchanges;
    let Ok(mut az) = Authorizer::new(config) else {
        return;
    };
    let secrets = AuthSecrets::from_random_bytes(&[7; 64]);
    let status = if challenge.first().is_some_and(|b| b & 1 == 1) {
        403
    } else {
        401
    };
    if az
        .handle_challenge(Instant::ZERO, status, &[challenge], secrets)
        .is_err()
    {
        assert!(az.poll_request().is_none());
        return;
    }
    let mut sent = 0u32;
    let mut now = Instant::ZERO;
    for _ in 0..64 {
        let mut moved = false;
        while let Some(req) = az.poll_request() {
            moved = true;
            sent += 1;
            assert!(
                sent <= 2 * max,
                "more requests than the exchange bound allows"
            );
            assert!(POLICY.check("u", &req.url).is_ok());
            for (_, v) in &req.request.headers {
                assert!(!v.to_ascii_lowercase().starts_with("bearer"));
            }
            let part = parts.next().unwrap_or_default();
            let (st, body) = match part.split_first() {
                Some((s, b)) => (u16::from(*s) + 150, b.to_vec()),
                None => (404, Vec::new()),
            };
            now = Instant::from_millis(sent.into());
            az.handle_response(now, req.id, AuthResponse::new(st, body));
        }
        while let Some(e) = az.poll_event() {
            moved = true;
            if let AuthEvent::OpenUserAgent { pending, .. } = e {
                let q = parts.next().unwrap_or_default();
                let mut query = String::from_utf8_lossy(q).into_owned();
                if query.starts_with('s') {
                    query = format!("state={}&{}", pending.secrets.state(), &query[1..]);
                }
                // A query starting with `/` is a whole redirect target (path checked).
                if query.starts_with('/') {
                    az.handle_redirect(now, &query);
                } else {
                    az.handle_callback(now, &query);
                }
            }
        }
        if !moved {
            break;
        }
    }
    assert!(az.poll_request().is_none(), "the flow did not settle");
    if let Some(b) = az.bearer() {
        assert!(is_header_safe(b));
    }
    // Whatever was obtained is bound to this server: another server's authorizer given the
    // same store has nothing to send.
    let other = AuthConfig::new(
        "http://127.0.0.1:3001/mcp",
        ClientSettings::new("fuzz", "http://127.0.0.1:5/cb"),
    );
    if let Ok(other) = Authorizer::new(other) {
        assert!(other.with_store(az.store().clone()).bearer().is_none());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 8 {
        0 => challenges(rest),
        6 | 7 => flow(rest),
        m => decoders(m, rest),
    }
});
