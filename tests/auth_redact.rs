//! Redaction of authorization secrets, and properties of the form codec and resource matching.

use mcp_sansio::auth::form::{decode, encode, encode_pairs, parse_query};
use mcp_sansio::auth::redact;
use mcp_sansio::auth::{
    AuthConfig, AuthResponse, AuthSecrets, Authorizer, ClientCredentials, ClientSettings,
    IssuerPin, PreRegistered, TokenAuthMethod,
};
use mcp_sansio::internals::auth::resource_matches;
use mcp_sansio::Endpoint;
use mcp_sansio::Instant;
use proptest::prelude::*;

#[test]
fn form_and_url_redaction() {
    assert_eq!(
        redact::form("grant_type=authorization_code&code=abc&code_verifier=v&client_id=c&client_secret=s"),
        "grant_type=authorization_code&code=<redacted>&code_verifier=<redacted>&client_id=c&client_secret=<redacted>"
    );
    assert_eq!(
        redact::url("http://127.0.0.1:1/cb?code=xyz&state=st&iss=https%3A%2F%2Fa"),
        "http://127.0.0.1:1/cb?code=<redacted>&state=<redacted>&iss=https%3A%2F%2Fa"
    );
    // Encoded names are recognised; malformed parts are kept as they are.
    assert_eq!(
        redact::form("?c%6Fde=1&%zz=2&x"),
        "?c%6Fde=<redacted>&%zz=2&x"
    );
    assert_eq!(redact::url("https://a/b"), "https://a/b");
}

#[test]
fn json_redaction_at_any_depth() {
    let body = br#"{"access_token":"at","token_type":"Bearer","nested":[{"refresh_token":"rt","client_secret":{"x":1}}],"client_id":"c"}"#;
    let out = String::from_utf8(redact::json(body).unwrap()).unwrap();
    assert!(!out.contains("\"at\"") && !out.contains("rt") && !out.contains("\"x\""));
    assert!(out.contains(r#""client_id":"c""#) && out.contains(r#""token_type":"Bearer""#));
    assert_eq!(redact::json(b"not json"), None);
    assert_eq!(
        redact::authorization("Basic dXNlcjpwYXNz"),
        "Basic <redacted>"
    );
    assert_eq!(redact::authorization("bearer abc"), "bearer <redacted>");
    assert_eq!(redact::authorization("abc"), "<redacted>");
}

#[test]
fn requests_print_without_secrets() {
    let mut client = ClientSettings::new("c", "http://127.0.0.1:9/cb");
    client.pre_registered.push(PreRegistered {
        issuer: IssuerPin::Exactly("https://auth.example".into()),
        credentials: ClientCredentials {
            client_id: "pre-id".into(),
            client_secret: Some("TOPSECRET".into()),
            auth_method: TokenAuthMethod::ClientSecretPost,
        },
    });
    let mut az = Authorizer::new(AuthConfig::new("https://mcp.example/mcp", client)).unwrap();
    az.handle_challenge(
        Instant::ZERO,
        401,
        &[],
        AuthSecrets::from_random_bytes(&[3; 64]),
    )
    .unwrap();
    let prm = br#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://auth.example"]}"#;
    let meta = br#"{"issuer":"https://auth.example","authorization_endpoint":"https://auth.example/a","token_endpoint":"https://auth.example/t","code_challenge_methods_supported":["S256"]}"#;
    let req = az.poll_request().unwrap();
    az.handle_response(
        Instant::ZERO,
        req.id,
        AuthResponse::new(200, prm.as_slice()),
    );
    let req = az.poll_request().unwrap();
    az.handle_response(
        Instant::ZERO,
        req.id,
        AuthResponse::new(200, meta.as_slice()),
    );
    let pending = match az.poll_event() {
        Some(mcp_sansio::auth::AuthEvent::OpenUserAgent { pending, .. }) => pending,
        other => panic!("{other:?}"),
    };
    assert!(!format!("{pending:?}").contains("TOPSECRET"));
    let q = format!("code=THECODE&state={}", pending.secrets.state());
    az.handle_callback(Instant::ZERO, &q);
    let token = az.poll_request().unwrap();
    let text = token.redacted_text();
    assert!(text.starts_with("POST https://auth.example/t\n"), "{text}");
    assert!(text.contains("client_id=pre-id"), "{text}");
    for secret in ["TOPSECRET", "THECODE", pending.secrets.verifier()] {
        assert!(!text.contains(secret), "{secret} in {text}");
        assert!(!format!("{token:?}").contains(secret));
        // The real body carries them.
        assert!(String::from_utf8_lossy(&token.request.body).contains(secret));
    }
}

proptest! {
    #[test]
    fn form_codec_round_trips(pairs in prop::collection::vec(("[ -~é\u{1F600}]{1,12}", "\\PC{0,16}"), 0..6)) {
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let text = encode_pairs(refs.iter().copied());
        // Every byte of the encoding is unreserved, `%`, `=` or `&`.
        prop_assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%=&".contains(&b)));
        let mut dedup: Vec<(String, String)> = Vec::new();
        for (n, v) in &pairs {
            if !dedup.iter().any(|(d, _)| d == n) {
                dedup.push((n.clone(), v.clone()));
            }
        }
        if dedup.len() == pairs.len() {
            prop_assert_eq!(parse_query(&text).unwrap(), pairs.clone());
        }
        for (n, _) in refs {
            prop_assert_eq!(decode(&encode(n)).unwrap(), n);
        }
    }

    #[test]
    fn query_parsing_never_panics(s in "\\PC{0,64}") {
        let _ = parse_query(&s);
        let _ = redact::form(&s);
        let _ = redact::url(&s);
    }

    #[test]
    fn a_resource_on_another_origin_never_matches(
        host in "[a-z]{1,8}\\.example",
        other in "[a-z]{1,8}\\.example",
        path in "(/[a-z]{1,5}){0,3}",
    ) {
        let same = format!("https://{host}{path}");
        let root = format!("https://{host}");
        let plain = format!("http://{host}{path}");
        let elsewhere = format!("https://{other}{path}");
        let server = Endpoint::parse(&same).unwrap();
        let matches_same = resource_matches(&same, &server);
        let matches_root = resource_matches(&root, &server);
        let matches_plain = resource_matches(&plain, &server);
        let matches_elsewhere = resource_matches(&elsewhere, &server);
        prop_assert!(matches_same);
        prop_assert_eq!(matches_root, path.is_empty());
        prop_assert!(!matches_plain);
        prop_assert!(other == host || !matches_elsewhere);
    }
}

/// `body` inside `levels` arrays: it sits at depth `levels`.
fn nested(levels: usize, body: &str) -> String {
    format!("{}{body}{}", "[".repeat(levels), "]".repeat(levels))
}

/// A secret is hidden however deep it is nested (serde_json reads up to 128 levels): a document
/// is walked 64 levels deep, and what lies deeper is `<redacted>` whole. A plain value at the
/// walk's last level is kept; one level deeper it is hidden with everything there.
#[test]
fn a_secret_nested_past_the_walk_is_hidden_and_the_walks_last_level_is_kept() {
    for levels in [0, 1, 63, 64, 65, 66, 100, 126] {
        let body = nested(levels, r#"{"access_token":"SECRET-AT","keep":"VISIBLE"}"#);
        let out = String::from_utf8(redact::json(body.as_bytes()).unwrap()).unwrap();
        assert!(!out.contains("SECRET-AT"), "{levels} levels: {out}");
        // The object is at depth `levels`, its members one deeper.
        assert_eq!(
            out.contains("VISIBLE"),
            levels < redact::MAX_JSON_DEPTH,
            "{levels} levels: {out}"
        );
    }
    assert_eq!(redact::MAX_JSON_DEPTH, 64);
}

/// Each credential-bearing header is redacted by its name in any case, an unknown
/// `Authorization` scheme is hidden with its credentials, and a secret's `Debug` form shows
/// only whether one is held.
#[test]
fn headers_redacted_by_name_and_secrets_shown_only_as_held() {
    for name in [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "PROXY-AUTHORIZATION",
    ] {
        assert_eq!(
            redact::header(name, b"Bearer tok-123"),
            b"Bearer <redacted>".to_vec(),
            "{name}"
        );
        assert_eq!(
            redact::header(name, b"Digest user=a"),
            b"<redacted>".to_vec(),
            "{name}"
        );
    }
    assert_eq!(redact::authorization("Digest user=a"), "<redacted>");
    assert_eq!(redact::authorization("DPoP tok"), "DPoP <redacted>");
    for name in ["Location", "content-location"] {
        assert_eq!(
            redact::header(name, b"http://127.0.0.1:1/cb?code=xyz&iss=a"),
            b"http://127.0.0.1:1/cb?code=<redacted>&iss=a".to_vec(),
            "{name}"
        );
    }
    assert_eq!(redact::header("X-Other", b"kept"), b"kept".to_vec());
    assert_eq!(redact::debug_secret("s3cret"), "<redacted>");
    assert_eq!(redact::debug_secret(""), "");
}
