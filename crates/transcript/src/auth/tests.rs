use super::recorder::redact_callback;
use super::replay::replay_callback;
use super::*;
use mcp_sansio::auth::redact;
use std::time::Duration;

use mcp_sansio::auth::{
    AuthConfig, AuthExchange, AuthRequestId, AuthResponse, AuthSecrets, Authorizer, ClientSettings,
    Purpose, UrlPolicy,
};
use mcp_sansio::Instant;

#[test]
fn form_bodies_before_and_after() {
    let table = [
        (
            "grant_type=authorization_code&code=abc123&redirect_uri=http%3A%2F%2Fx&code_verifier=vvv",
            "grant_type=authorization_code&code=<redacted>&redirect_uri=http%3A%2F%2Fx&code_verifier=<redacted>",
        ),
        (
            "grant_type=refresh_token&refresh_token=rt-1&client_id=c&client_secret=s3",
            "grant_type=refresh_token&refresh_token=<redacted>&client_id=c&client_secret=<redacted>",
        ),
        (
            "access_token=at&token_type=bearer&id_token=x.y.z",
            "access_token=<redacted>&token_type=bearer&id_token=<redacted>",
        ),
        // Names percent-encoded or in another case are secrets too.
        ("client%5Fsecret=s&CODE=c", "client%5Fsecret=<redacted>&CODE=<redacted>"),
        // Derived from the verifier: differs on every run.
        (
            "code_challenge=E9Mel&code_challenge_method=S256",
            "code_challenge=<redacted>&code_challenge_method=S256",
        ),
        ("registration_access_token=r", "registration_access_token=<redacted>"),
        // Harmless parameters, empty pairs and pairs without `=` are kept.
        ("scope=read+write&&flag&resource=x", "scope=read+write&&flag&resource=x"),
        ("", ""),
    ];
    for (before, after) in table {
        assert_eq!(redact::form(before), after, "{before}");
    }
}

#[test]
fn json_bodies_before_and_after() {
    let table: [(&str, &str); 5] = [
        (
            r#"{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt"}"#,
            r#"{"access_token":"<redacted>","expires_in":3600,"refresh_token":"<redacted>","token_type":"Bearer"}"#,
        ),
        (
            r#"{"client_id":"id","client_secret":"cs","registration_access_token":"rat","registration_client_uri":"https://as/r/1"}"#,
            r#"{"client_id":"id","client_secret":"<redacted>","registration_access_token":"<redacted>","registration_client_uri":"https://as/r/1"}"#,
        ),
        (
            r#"{"nested":{"id_token":"x"},"list":[{"code":"c"}]}"#,
            r#"{"list":[{"code":"<redacted>"}],"nested":{"id_token":"<redacted>"}}"#,
        ),
        (
            r#"{"error":"invalid_grant","error_description":"bad"}"#,
            r#"{"error":"invalid_grant","error_description":"bad"}"#,
        ),
        (
            r#"{"client_id":"a","redirect_uris":["http://127.0.0.1/cb"]}"#,
            r#"{"client_id":"a","redirect_uris":["http://127.0.0.1/cb"]}"#,
        ),
    ];
    for (before, after) in table {
        let got = redact::json(before.as_bytes()).unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), after, "{before}");
        // The same through the body dispatcher, as JSON.
        let via_body = redact::body(Some("application/json"), before.as_bytes());
        assert_eq!(String::from_utf8(via_body).unwrap(), after);
    }
    assert_eq!(redact::json(b"not json"), None);
    assert_eq!(redact::body(None, b"<html>"), b"<6 bytes>".to_vec());
    assert_eq!(
        redact::body(
            Some("application/x-www-form-urlencoded; charset=utf-8"),
            b"access_token=a&x=1"
        ),
        b"access_token=<redacted>&x=1".to_vec()
    );
}

#[test]
fn callback_and_location_urls_before_and_after() {
    let table = [
        (
            "http://localhost:3000/callback?code=abc&state=xyz&iss=https%3A%2F%2Fas",
            "http://localhost:3000/callback?code=<redacted>&state=<redacted>&iss=https%3A%2F%2Fas",
        ),
        (
            "https://as/authorize?response_type=code&client_id=c&code_challenge=ch&code_challenge_method=S256&state=s&scope=a",
            "https://as/authorize?response_type=code&client_id=c&code_challenge=<redacted>&code_challenge_method=S256&state=<redacted>&scope=a",
        ),
        (
            "http://cb/#access_token=t&state=s",
            "http://cb/#access_token=<redacted>&state=<redacted>",
        ),
        ("https://as/.well-known/x", "https://as/.well-known/x"),
    ];
    for (before, after) in table {
        assert_eq!(redact::url(before), after, "{before}");
    }
    assert_eq!(
        redact::header("Location", b"http://cb?code=c&state=s"),
        b"http://cb?code=<redacted>&state=<redacted>".to_vec()
    );
    assert_eq!(
        redact::header("authorization", b"Basic Y2xpZW50OnNlY3JldA=="),
        b"Basic <redacted>".to_vec()
    );
    assert_eq!(
        redact::header("Set-Cookie", b"sid=1"),
        b"<redacted>".to_vec()
    );
    assert_eq!(redact::header("Content-Type", b"a/b"), b"a/b".to_vec());
}

#[test]
fn a_matching_callback_state_is_marked_and_a_wrong_one_redacted() {
    assert_eq!(
        redact_callback("code=c&state=st&iss=x", Some("st")),
        "code=<redacted>&state=<pending-state>&iss=x"
    );
    assert_eq!(
        redact_callback("state=other&code=c", Some("st")),
        "state=<redacted>&code=<redacted>"
    );
    assert_eq!(
        redact_callback("error=access_denied", None),
        "error=access_denied"
    );
    assert_eq!(
        replay_callback("code=<redacted>&state=<pending-state>", Some("abc")),
        "code=replay-secret&state=abc"
    );
    assert_eq!(
        replay_callback("state=<redacted>", Some("abc")),
        "state=replay-secret"
    );
}

fn request(body: &[u8]) -> AuthExchange {
    let url = "https://as.example/token?x=1";
    let endpoint = mcp_sansio::Endpoint::parse(url).unwrap();
    AuthExchange {
        id: AuthRequestId(3),
        purpose: Purpose::Token,
        url: url.into(),
        request: mcp_sansio::wire::Request {
            method: mcp_sansio::wire::Method::Post,
            authority: endpoint.authority().into(),
            path: endpoint.target().into(),
            headers: vec![
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("Authorization".into(), "Basic c2VjcmV0".into()),
            ],
            body: body.to_vec(),
        },
        endpoint,
        max_response_bytes: 10,
    }
}

#[test]
fn requests_and_responses_are_recorded_redacted_and_read_back() {
    let bytes = auth_request_bytes(&request(b"grant_type=authorization_code&code=c1"));
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        "POST https://as.example/token?x=1\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: Basic <redacted>\r\n\r\ngrant_type=authorization_code&code=<redacted>"
    );
    let resp = AuthResponse {
        status: 302,
        headers: vec![("Location".into(), b"http://cb?code=c&state=s".to_vec())],
        body: Vec::new(),
    };
    let bytes = auth_response_bytes(&resp);
    let back = response_from_bytes(302, &bytes);
    assert_eq!(
        back.headers,
        vec![(
            "Location".to_owned(),
            b"http://cb?code=<redacted>&state=<redacted>".to_vec()
        )]
    );
    assert!(back.body.is_empty());
    let no_headers = response_from_bytes(200, b"\r\n{}");
    assert!(no_headers.headers.is_empty());
    assert_eq!(no_headers.body, b"{}");
}

fn config() -> AuthConfig {
    let mut client = ClientSettings::new("t", "http://127.0.0.1:1/cb");
    client.pre_registered.push(mcp_sansio::auth::PreRegistered {
        issuer: mcp_sansio::auth::IssuerPin::AnyIssuerUnsafe,
        credentials: mcp_sansio::auth::ClientCredentials {
            client_id: "id".into(),
            client_secret: Some("very-secret".into()),
            auth_method: mcp_sansio::auth::TokenAuthMethod::ClientSecretBasic,
        },
    });
    let mut c = AuthConfig::new("https://mcp.example/mcp?api_key=k", client);
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    c
}

/// Records a short run by hand: a challenge whose metadata request fails.
fn recorded() -> AuthTranscript {
    let config = config();
    let mut az = Authorizer::new(config.clone()).unwrap();
    let mut rec = AuthRecorder::new(&config, false, Instant::ZERO);
    let now = Instant::from_duration(Duration::from_millis(5));
    let www = r#"Bearer resource_metadata="https://mcp.example/prm""#;
    let r = az.handle_challenge(
        now,
        401,
        &[www.as_bytes()],
        AuthSecrets::from_random_bytes(&[7; 64]),
    );
    rec.challenge(now, 401, Some(www), r.as_ref().copied());
    let req = az.poll_request().unwrap();
    rec.request(now, &req);
    let resp = AuthResponse::new(500, "oops");
    rec.response(now, req.id, &resp);
    az.handle_response(now, req.id, resp);
    while let Some(req) = az.poll_request() {
        rec.request(now, &req);
        let resp = AuthResponse::new(404, "");
        rec.response(now, req.id, &resp);
        az.handle_response(now, req.id, resp);
    }
    while let Some(ev) = az.poll_event() {
        rec.event(&ev);
    }
    rec.finish()
}

#[test]
fn a_recording_round_trips_through_text_and_replays() {
    let t = recorded();
    let text = t.to_text();
    assert!(!text.contains("very-secret"), "{text}");
    assert!(!text.contains("api_key=k"), "{text}");
    assert!(text.contains("\"client_secret\":\"<redacted>\""), "{text}");
    let back = AuthTranscript::parse(&text).unwrap();
    assert_eq!(back, t);
    assert!(t.sends().len() >= 2);
    assert!(t.outcome().last().unwrap().get("failed").is_some());
    let r = replay_auth(&back).unwrap();
    r.check(&back).unwrap();
    assert!(!r.has_bearer);
}

#[test]
fn a_replay_that_differs_is_reported() {
    let mut t = recorded();
    // Another answer to the first request: the core goes another way.
    for e in &mut t.entries {
        if let AuthRecord::Recv { status, bytes, .. } = &mut e.record {
            *status = 200;
            // No headers, then a valid protected-resource metadata document.
            let body = r#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}"#;
            *bytes = [b"\r\n".as_slice(), body.as_bytes()].concat();
            break;
        }
    }
    let r = replay_auth(&t).unwrap();
    assert!(r.check(&recorded()).is_err());
    // A recorded request that the core would not send.
    let mut t = recorded();
    for e in &mut t.entries {
        if let AuthRecord::Send { bytes, .. } = &mut e.record {
            bytes.extend_from_slice(b"x");
            break;
        }
    }
    let r = replay_auth(&t).unwrap();
    assert!(matches!(
        r.check(&t),
        Err(AuthMismatch::Send { index: 0, .. })
    ));
    // Stored credentials are never recorded, so such a recording does not replay.
    let mut t = recorded();
    t.config.stored_credentials = true;
    assert_eq!(
        replay_auth(&t).unwrap_err(),
        AuthReplayError::StoredCredentials
    );
}

#[test]
fn malformed_text_is_refused_with_its_line() {
    let good = recorded().to_text();
    let cases = [
        ("mcp-transcript 1\n", 1),
        (&good.replace("config limits 12", "config limits x"), 0),
        (&format!("{good}@1.000 nonsense\n"), 0),
        (&format!("{good}> stray\n"), 0),
        (&format!("{good}@1.000 recv 1\n"), 0),
        (&format!("{good}@1.000 challenge 401 notjson\n"), 0),
    ];
    for (text, line) in cases {
        let e = AuthTranscript::parse(text).unwrap_err();
        if line > 0 {
            assert_eq!(e.line, line);
        }
    }
    assert!(AuthTranscript::parse(&format!("{good}@9.000 timeout\n@9.000 accepted\n")).is_ok());
}

/// The recorder keeps the `state` of the authorization URL it saw (to mark the callback's
/// match); its `Debug` output never shows it (RFC 6749 §10.12: `state` binds the callback to
/// the user agent's session), nor the client secret.
#[test]
fn the_recorder_debug_never_shows_the_pending_state() {
    let config = config();
    let mut az = Authorizer::new(config.clone()).unwrap();
    let mut rec = AuthRecorder::new(&config, false, Instant::ZERO);
    let secrets = AuthSecrets::from_random_bytes(&[9; 64]);
    let state = secrets.state().to_owned();
    az.handle_challenge(Instant::ZERO, 401, &[], secrets)
        .unwrap();
    let prm = br#"{"resource":"https://mcp.example/mcp?api_key=k","authorization_servers":["https://auth.example"]}"#;
    let meta = br#"{"issuer":"https://auth.example","authorization_endpoint":"https://auth.example/a","token_endpoint":"https://auth.example/t","code_challenge_methods_supported":["S256"]}"#;
    for body in [&prm[..], &meta[..]] {
        let req = az.poll_request().unwrap();
        rec.request(Instant::ZERO, &req);
        let resp = AuthResponse::new(200, body);
        rec.response(Instant::ZERO, req.id, &resp);
        az.handle_response(Instant::ZERO, req.id, resp);
    }
    let mut opened = false;
    while let Some(ev) = az.poll_event() {
        opened |= matches!(ev, mcp_sansio::auth::AuthEvent::OpenUserAgent { .. });
        rec.event(&ev);
    }
    assert!(opened, "the authorization opens the user agent");
    // The recorder keeps the state: the callback carrying it is marked as the match.
    let marked = redact_callback(&format!("code=c&state={state}"), Some(&state));
    assert!(!marked.contains(&state));
    for text in [format!("{rec:?}"), format!("{rec:#?}")] {
        assert!(text.contains("AuthRecorder"), "{text}");
        assert!(text.contains("pending_state: Some("), "{text}");
        assert!(!text.contains(&state), "the state in {text}");
        assert!(!text.contains("very-secret"), "the client secret in {text}");
    }
}
