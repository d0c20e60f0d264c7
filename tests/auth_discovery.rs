//! Discovery and the pieces of the flow, one by one: candidate URLs, resource and issuer
//! matching, the URL policy, PKCE, scope selection, registration and token decoding.

use mcp_sansio::auth::form::{encode, parse_query, QueryError};
use mcp_sansio::auth::{
    AuthBudget, AuthError, AuthSecrets, ClientCredentials, Purpose, ServerMetadata,
    TokenAuthMethod, UrlPolicy, MAX_BODY_BYTES,
};
use mcp_sansio::internals::auth::{
    auth_method_for_secret, authorization_url, decode_registration, decode_resource_metadata,
    decode_server_metadata, decode_token_response, is_header_safe, pkce_challenge,
    registration_auth_method, resource_designates, resource_matches, resource_metadata_candidates,
    select_scopes, server_metadata_candidates, split_scopes, step_up_scopes,
};
use mcp_sansio::ErrorKind;
use mcp_sansio::{Endpoint, EndpointError};

fn ep(url: &str) -> Endpoint {
    Endpoint::parse(url).expect(url)
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

const LOOPBACK: UrlPolicy = UrlPolicy {
    allow_loopback_http: true,
};
const STRICT: UrlPolicy = UrlPolicy {
    allow_loopback_http: false,
};

#[test]
fn pkce_vector_of_rfc_7636_appendix_b() {
    assert_eq!(
        pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    // The verifier of Appendix B is the base64url of these 32 octets.
    let mut bytes = [0u8; 64];
    bytes[32..].copy_from_slice(&[
        116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37,
        77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
    ]);
    let s = AuthSecrets::from_random_bytes(&bytes);
    assert_eq!(s.verifier(), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    assert_eq!(s.state().len(), 43);
}

#[test]
fn secrets_are_checked() {
    let good_verifier = "a".repeat(43);
    assert!(AuthSecrets::new("s", good_verifier.clone()).is_ok());
    assert!(AuthSecrets::new("", good_verifier.clone()).is_err());
    assert!(AuthSecrets::new("a b", good_verifier.clone()).is_err());
    assert!(AuthSecrets::new("s", "a".repeat(42)).is_err());
    assert!(AuthSecrets::new("s", "a".repeat(129)).is_err());
    assert!(AuthSecrets::new("s", format!("{}+", "a".repeat(43))).is_err());
    let s = AuthSecrets::new("s", good_verifier).unwrap();
    assert!(!format!("{s:?}").contains("aaaa"));
}

#[test]
fn resource_metadata_candidates_in_order() {
    let table: &[(&str, Option<&str>, &[&str])] = &[
        (
            "https://mcp.example/mcp",
            None,
            &[
                "https://mcp.example/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example/public/mcp/?x=1",
            Some("https://mcp.example/custom/prm.json"),
            &[
                "https://mcp.example/custom/prm.json",
                "https://mcp.example/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example/mcp",
            Some("https://mcp.example/.well-known/oauth-protected-resource"),
            &[
                "https://mcp.example/.well-known/oauth-protected-resource",
                "https://mcp.example/.well-known/oauth-protected-resource/mcp",
            ],
        ),
        (
            "https://MCP.example:443/",
            None,
            &["https://mcp.example/.well-known/oauth-protected-resource"],
        ),
        (
            "http://127.0.0.1:8080",
            None,
            &["http://127.0.0.1:8080/.well-known/oauth-protected-resource"],
        ),
    ];
    for (server, rm, want) in table {
        assert_eq!(
            resource_metadata_candidates(&ep(server), *rm),
            v(want),
            "{server}"
        );
    }
}

#[test]
fn server_metadata_candidates_in_order() {
    assert_eq!(
        server_metadata_candidates(&ep("https://auth.example")),
        v(&[
            "https://auth.example/.well-known/oauth-authorization-server",
            "https://auth.example/.well-known/openid-configuration",
        ])
    );
    assert_eq!(
        server_metadata_candidates(&ep("https://auth.example/")),
        server_metadata_candidates(&ep("https://auth.example"))
    );
    assert_eq!(
        server_metadata_candidates(&ep("https://auth.example:8443/tenant1")),
        v(&[
            "https://auth.example:8443/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example:8443/.well-known/openid-configuration/tenant1",
            "https://auth.example:8443/tenant1/.well-known/openid-configuration",
        ])
    );
    assert_eq!(
        server_metadata_candidates(&ep("https://auth.example/a/b/")),
        v(&[
            "https://auth.example/.well-known/oauth-authorization-server/a/b",
            "https://auth.example/.well-known/openid-configuration/a/b",
            "https://auth.example/a/b/.well-known/openid-configuration",
        ])
    );
}

#[test]
fn resource_matching_table() {
    let server = ep("https://mcp.example/api/mcp");
    let table: &[(&str, bool)] = &[
        ("https://mcp.example/api/mcp", true),
        ("https://mcp.example/api/mcp/", false),
        ("https://MCP.EXAMPLE:443/api/mcp", true),
        ("HTTPS://mcp.example/api/mcp", true),
        ("https://mcp.example/api", false),
        ("https://mcp.example/", false),
        ("https://mcp.example", false),
        ("https://mcp.example/ap", false),
        ("https://mcp.example/api/mcp/more", false),
        ("https://mcp.example/other", false),
        ("http://mcp.example/api/mcp", false),
        ("https://mcp.example:8443/api/mcp", false),
        ("https://evil.example/api/mcp", false),
        ("https://mcp.example.evil/api/mcp", false),
        ("https://user@mcp.example/api/mcp", false),
        ("https://mcp.example/api/mcp#frag", false),
        ("not a url", false),
        ("", false),
    ];
    for (resource, want) in table {
        assert_eq!(resource_matches(resource, &server), *want, "{resource}");
        // Away from the root well-known URL, designating is matching exactly.
        assert_eq!(
            resource_designates(resource, &server, false),
            *want,
            "{resource}"
        );
    }
    // At the root well-known URL, the origin (the identifier that URL is built from) too; no
    // other prefix.
    for (resource, want) in [
        ("https://mcp.example", true),
        ("https://MCP.example:443/", true),
        ("https://mcp.example/api", false),
        ("https://mcp.example/api/", false),
        ("https://mcp.example/#x", false),
        ("https://other.example", false),
        ("https://mcp.example/api/mcp", true),
    ] {
        assert_eq!(
            resource_designates(resource, &server, true),
            want,
            "{resource}"
        );
    }
}

fn prm(resource: &str, servers: &[&str]) -> Vec<u8> {
    serde_json::json!({"resource": resource, "authorization_servers": servers, "scopes_supported": ["a", "b c", "a"]})
        .to_string()
        .into_bytes()
}

#[test]
fn resource_metadata_is_checked() {
    let server = ep("https://mcp.example/mcp");
    let url = "https://mcp.example/mcp";
    let ok = decode_resource_metadata(
        &prm("https://mcp.example/mcp", &["https://auth.example"]),
        &server,
        url,
        STRICT,
        false,
    )
    .expect("ok");
    assert_eq!(ok.resource, "https://mcp.example/mcp");
    assert_eq!(ok.scopes_supported, Some(v(&["a"])));
    let mismatch = decode_resource_metadata(
        &prm("https://evil.example/mcp", &["https://auth.example"]),
        &server,
        url,
        STRICT,
        false,
    );
    assert!(matches!(mismatch, Err(AuthError::ResourceMismatch { .. })));
    assert_eq!(
        mismatch.unwrap_err().kind(),
        ErrorKind::AuthenticationFailed
    );
    // authorization_servers must be https (or loopback http when allowed), without userinfo.
    for (servers, policy) in [
        (&["http://auth.example"][..], STRICT),
        (&["http://auth.example"][..], LOOPBACK),
        (&["http://127.0.0.1:9000"][..], STRICT),
        (&["https://u:p@auth.example"][..], STRICT),
        (&["https://auth.example", "ftp://x"][..], STRICT),
        (&["https://auth.example/?q=1"][..], STRICT),
    ] {
        let r = decode_resource_metadata(
            &prm("https://mcp.example/mcp", servers),
            &server,
            url,
            policy,
            false,
        );
        assert!(
            matches!(
                r,
                Err(AuthError::InsecureUrl { .. }
                    | AuthError::Url { .. }
                    | AuthError::UrlNotAllowed { .. })
            ),
            "{servers:?}: {r:?}"
        );
    }
    let loop_server = ep("http://127.0.0.1:3000/mcp");
    assert!(decode_resource_metadata(
        &prm("http://127.0.0.1:3000/mcp", &["http://localhost:9000"]),
        &loop_server,
        "http://127.0.0.1:3000/mcp",
        LOOPBACK,
        false
    )
    .is_ok());
    assert!(matches!(
        decode_resource_metadata(
            &prm("https://mcp.example/mcp", &[]),
            &server,
            url,
            STRICT,
            false
        ),
        Err(AuthError::NoAuthorizationServer)
    ));
    assert!(matches!(
        decode_resource_metadata(
            b"{\"authorization_servers\":[]}",
            &server,
            url,
            STRICT,
            false
        ),
        Err(AuthError::Document { .. })
    ));
    assert!(matches!(
        decode_resource_metadata(b"<html>", &server, url, STRICT, false),
        Err(AuthError::Document { .. })
    ));
}

#[test]
fn oversized_metadata_is_refused() {
    let server = ep("https://mcp.example/mcp");
    let mut big = prm("https://mcp.example/mcp", &["https://auth.example"]);
    big.extend(std::iter::repeat_n(b' ', MAX_BODY_BYTES));
    let r = decode_resource_metadata(&big, &server, "https://mcp.example/mcp", STRICT, false);
    assert_eq!(
        r,
        Err(AuthError::Budget {
            budget: AuthBudget::BodyBytes,
            limit: MAX_BODY_BYTES as u64
        })
    );
    assert!(matches!(
        decode_server_metadata(&big, "https://auth.example", STRICT),
        Err(AuthError::Budget { .. })
    ));
}

fn asm(issuer: &str, extra: serde_json::Value) -> Vec<u8> {
    let mut m = serde_json::json!({
        "issuer": issuer,
        "authorization_endpoint": "https://auth.example/authorize",
        "token_endpoint": "https://auth.example/token",
        "registration_endpoint": "https://auth.example/register",
        "code_challenge_methods_supported": ["S256"],
    });
    if let (Some(m), Some(e)) = (m.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            m.insert(k.clone(), v.clone());
        }
    }
    m.to_string().into_bytes()
}

#[test]
fn issuer_matching_table() {
    // The issuer in the document must be the issuer the URL was built from, byte for byte.
    let table: &[(&str, &str, bool)] = &[
        ("https://auth.example", "https://auth.example", true),
        (
            "https://auth.example/tenant1",
            "https://auth.example/tenant1",
            true,
        ),
        ("https://auth.example", "https://auth.example/", false),
        ("https://auth.example/", "https://auth.example", false),
        ("https://auth.example", "https://AUTH.example", false),
        ("https://auth.example", "https://auth.example:443", false),
        ("https://auth.example", "https://evil.example", false),
        (
            "https://auth.example/tenant1",
            "https://auth.example/tenant2",
            false,
        ),
    ];
    for (expected, got, ok) in table {
        let r = decode_server_metadata(&asm(got, serde_json::json!({})), expected, STRICT);
        assert_eq!(r.is_ok(), *ok, "{expected} vs {got}: {r:?}");
        if !ok {
            assert!(matches!(r, Err(AuthError::IssuerMismatch { .. })));
        }
    }
}

#[test]
fn server_metadata_refusals() {
    let i = "https://auth.example";
    for methods in [
        serde_json::json!(null),
        serde_json::json!(["plain"]),
        serde_json::json!([]),
    ] {
        let r = decode_server_metadata(
            &asm(
                i,
                serde_json::json!({"code_challenge_methods_supported": methods}),
            ),
            i,
            STRICT,
        );
        assert_eq!(r, Err(AuthError::PkceUnsupported));
    }
    for (field, url) in [
        ("token_endpoint", "http://auth.example/token"),
        ("authorization_endpoint", "https://u@auth.example/authorize"),
        ("registration_endpoint", "http://10.0.0.1/register"),
    ] {
        let r = decode_server_metadata(&asm(i, serde_json::json!({ field: url })), i, STRICT);
        assert!(
            matches!(
                r,
                Err(AuthError::InsecureUrl { .. }
                    | AuthError::Url {
                        source: EndpointError::UserInfo,
                        ..
                    })
            ),
            "{field}: {r:?}"
        );
    }
    let m = decode_server_metadata(
        &asm(
            i,
            serde_json::json!({"authorization_response_iss_parameter_supported": true, "client_id_metadata_document_supported": true, "scopes_supported": ["x", "offline_access"]}),
        ),
        i,
        STRICT,
    )
    .expect("ok");
    assert!(m.iss_parameter_supported && m.client_id_metadata_document_supported);
    assert_eq!(m.scopes_supported, Some(v(&["x", "offline_access"])));
}

#[test]
fn url_policy() {
    for (url, policy, ok) in [
        ("https://auth.example/x", STRICT, true),
        ("http://auth.example/x", STRICT, false),
        ("http://auth.example/x", LOOPBACK, false),
        ("http://localhost:8080/x", LOOPBACK, true),
        ("http://LOCALHOST./x", LOOPBACK, true),
        ("http://127.0.0.1/x", LOOPBACK, true),
        ("http://127.1/x", LOOPBACK, true),
        ("http://[::1]:9/x", LOOPBACK, true),
        ("http://localhost:8080/x", STRICT, false),
        ("http://10.0.0.1/x", LOOPBACK, false),
        ("https://user:pw@auth.example/", STRICT, false),
        ("https://auth.example/x#frag", STRICT, false),
        ("https://auth.example/a b", STRICT, false),
    ] {
        assert_eq!(policy.check("u", url).is_ok(), ok, "{url} {policy:?}");
    }
}

#[test]
fn scope_selection() {
    let a = v(&["a"]);
    let ab = v(&["a", "b"]);
    let off = v(&["a", "offline_access"]);
    // The challenge wins, then the resource's scopes_supported, then nothing.
    assert_eq!(select_scopes(&a, Some(&ab), None), a);
    assert_eq!(select_scopes(&[], Some(&ab), None), ab);
    assert_eq!(select_scopes(&[], None, None), Vec::<String>::new());
    // offline_access only when the authorization server offers it.
    assert_eq!(
        select_scopes(&a, None, Some(&off)),
        v(&["a", "offline_access"])
    );
    assert_eq!(select_scopes(&a, None, Some(&ab)), a);
    assert_eq!(select_scopes(&[], None, Some(&off)), Vec::<String>::new());
    assert_eq!(
        select_scopes(&v(&["offline_access", "a"]), None, Some(&ab)),
        a
    );
    // Step-up: union, previous first, no duplicates.
    assert_eq!(
        step_up_scopes(&ab, &v(&["b", "c"]), None),
        v(&["a", "b", "c"])
    );
    assert_eq!(
        step_up_scopes(&[], &v(&["c"]), Some(&off)),
        v(&["c", "offline_access"])
    );
    // Malformed tokens are dropped.
    assert_eq!(split_scopes("a  b \"c a"), v(&["a", "b"]));
}

#[test]
fn authorization_url_carries_pkce_state_scope_and_resource_verbatim() {
    let s = AuthSecrets::new("st-1", "v".repeat(43)).unwrap();
    let url = authorization_url(
        "https://auth.example/authorize?tenant=1",
        "client id",
        "http://127.0.0.1:33418/callback",
        &s,
        &v(&["a", "b"]),
        Some("https://mcp.example"),
    );
    let (base, query) = url.split_once('?').unwrap();
    assert_eq!(base, "https://auth.example/authorize");
    let q = parse_query(query).unwrap();
    let get = |n: &str| q.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    assert_eq!(get("tenant"), Some("1"));
    assert_eq!(get("response_type"), Some("code"));
    assert_eq!(get("client_id"), Some("client id"));
    assert_eq!(get("redirect_uri"), Some("http://127.0.0.1:33418/callback"));
    assert_eq!(
        get("code_challenge"),
        Some(pkce_challenge(&"v".repeat(43)).as_str())
    );
    assert_eq!(get("code_challenge_method"), Some("S256"));
    assert_eq!(get("state"), Some("st-1"));
    assert_eq!(get("scope"), Some("a b"));
    // Verbatim: no trailing slash added.
    assert_eq!(get("resource"), Some("https://mcp.example"));
    let no_scope = authorization_url("https://a/authorize", "c", "https://r/cb", &s, &[], None);
    assert!(!no_scope.contains("scope=") && !no_scope.contains("resource="));
}

#[test]
fn query_codec() {
    assert_eq!(encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    assert_eq!(
        parse_query("?a=1&b=x+y%2B&c"),
        Ok(vec![
            ("a".into(), "1".into()),
            ("b".into(), "x y+".into()),
            ("c".into(), String::new())
        ])
    );
    assert_eq!(parse_query("a=%zz"), Err(QueryError::BadEscape));
    assert_eq!(parse_query("a=%ff"), Err(QueryError::NotUtf8));
    assert_eq!(
        parse_query("code=1&code=2"),
        Err(QueryError::Duplicate {
            name: "code".into()
        })
    );
}

fn meta(methods: Option<&[&str]>) -> ServerMetadata {
    ServerMetadata {
        issuer: "https://auth.example".into(),
        authorization_endpoint: "https://auth.example/authorize".into(),
        token_endpoint: "https://auth.example/token".into(),
        registration_endpoint: Some("https://auth.example/register".into()),
        scopes_supported: None,
        token_endpoint_auth_methods_supported: methods.map(v),
        client_id_metadata_document_supported: false,
        iss_parameter_supported: false,
        token_endpoint_auth_signing_alg_values_supported: None,
    }
}

#[test]
fn registration_and_auth_methods() {
    use TokenAuthMethod::*;
    assert_eq!(
        registration_auth_method(&meta(Some(&["none", "client_secret_basic"]))),
        Ok(None)
    );
    assert_eq!(
        registration_auth_method(&meta(Some(&["client_secret_post"]))),
        Ok(ClientSecretPost)
    );
    assert_eq!(
        registration_auth_method(&meta(Option::None)),
        Ok(ClientSecretBasic)
    );
    assert_eq!(
        registration_auth_method(&meta(Some(&["private_key_jwt"]))),
        Err(AuthError::UnsupportedAuthMethod)
    );
    assert_eq!(
        auth_method_for_secret(&meta(Some(&["client_secret_post"])), true),
        ClientSecretPost
    );
    assert_eq!(
        auth_method_for_secret(&meta(Option::None), true),
        ClientSecretBasic
    );
    assert_eq!(auth_method_for_secret(&meta(Option::None), false), None);

    let m = meta(Some(&["client_secret_post"]));
    let c = decode_registration(
        br#"{"client_id":"id1","client_secret":"sec"}"#,
        &m,
        ClientSecretPost,
    )
    .unwrap();
    assert_eq!(
        c,
        ClientCredentials {
            client_id: "id1".into(),
            client_secret: Some("sec".into()),
            auth_method: ClientSecretPost
        }
    );
    assert!(!format!("{c:?}").contains("sec\""));
    let named = decode_registration(
        br#"{"client_id":"id1","client_secret":"sec","token_endpoint_auth_method":"client_secret_basic"}"#,
        &m,
        ClientSecretPost,
    )
    .unwrap();
    assert_eq!(named.auth_method, ClientSecretBasic);
    // No method named: the one asked for, when the credentials allow it.
    let asked = |body: &[u8], requested| {
        decode_registration(body, &m, requested)
            .unwrap()
            .auth_method
    };
    assert_eq!(
        asked(
            br#"{"client_id":"a","client_secret":"s"}"#,
            ClientSecretBasic
        ),
        ClientSecretBasic
    );
    assert_eq!(asked(br#"{"client_id":"a"}"#, ClientSecretBasic), None);
    // Asked for a public client, given a secret anyway without a method: still public.
    assert_eq!(
        asked(br#"{"client_id":"a","client_secret":"s"}"#, None),
        None
    );
    // A method that needs a secret, named without one: a public client.
    assert_eq!(
        asked(
            br#"{"client_id":"a","token_endpoint_auth_method":"client_secret_post"}"#,
            None
        ),
        None
    );
    // A server supporting only `none` that hands out a secret anyway: `none`.
    let only_none = meta(Some(&["none"]));
    assert_eq!(
        decode_registration(
            br#"{"client_id":"a","client_secret":"s"}"#,
            &only_none,
            None
        )
        .unwrap()
        .auth_method,
        None
    );
    assert!(matches!(
        decode_registration(br#"{"client_secret":"x"}"#, &m, None),
        Err(AuthError::Document { .. })
    ));
    assert!(matches!(
        decode_registration(b"{\"client_id\":\"a\\nb\"}", &m, None),
        Err(AuthError::Document { .. })
    ));
    assert!(matches!(
        decode_registration(
            br#"{"client_id":"a","token_endpoint_auth_method":"private_key_jwt"}"#,
            &m,
            None
        ),
        Err(AuthError::Document { .. })
    ));
}

#[test]
fn token_responses() {
    let req = v(&["a"]);
    let ok = decode_token_response(
        Purpose::Token,
        200,
        br#"{"access_token":"at-1","token_type":"bearer","expires_in":60,"refresh_token":"rt-1"}"#,
        &req,
        None,
        1_000,
    )
    .unwrap();
    assert_eq!(ok.access_token, "at-1");
    assert_eq!(ok.refresh_token.as_deref(), Some("rt-1"));
    assert_eq!(ok.expires_at_ms, Some(61_000));
    assert_eq!(ok.scopes, req);
    assert!(!format!("{ok:?}").contains("at-1"));
    // No new refresh token: the previous one is kept; a new one replaces it (rotation).
    let kept = decode_token_response(
        Purpose::Refresh,
        200,
        br#"{"access_token":"at-2","token_type":"Bearer","scope":"x y"}"#,
        &req,
        Some("rt-1"),
        0,
    )
    .unwrap();
    assert_eq!(kept.refresh_token.as_deref(), Some("rt-1"));
    assert_eq!(kept.scopes, v(&["x", "y"]));
    // Not Bearer, CRLF or space in a token, a missing token.
    assert!(matches!(
        decode_token_response(
            Purpose::Token,
            200,
            br#"{"access_token":"a","token_type":"DPoP"}"#,
            &req,
            None,
            0
        ),
        Err(AuthError::NotBearer { .. })
    ));
    assert!(matches!(
        decode_token_response(
            Purpose::Token,
            200,
            br#"{"access_token":"a","token_type":"mac"}"#,
            &req,
            None,
            0
        ),
        Err(AuthError::NotBearer { .. })
    ));
    for bad in [
        r#""a\r\nX-Evil: 1""#,
        r#""a b""#,
        r#""a\u0000""#,
        r#""é""#,
        r#""""#,
    ] {
        let body = format!(r#"{{"access_token":{bad},"token_type":"Bearer"}}"#);
        let r = decode_token_response(Purpose::Token, 200, body.as_bytes(), &req, None, 0);
        assert_eq!(
            r,
            Err(AuthError::UnsafeToken {
                what: "access token"
            }),
            "{bad}"
        );
    }
    let body = r#"{"access_token":"ok","token_type":"Bearer","refresh_token":"r\nx"}"#;
    assert_eq!(
        decode_token_response(Purpose::Token, 200, body.as_bytes(), &req, None, 0),
        Err(AuthError::UnsafeToken {
            what: "refresh token"
        })
    );
    assert!(matches!(
        decode_token_response(
            Purpose::Token,
            200,
            br#"{"token_type":"Bearer"}"#,
            &req,
            None,
            0
        ),
        Err(AuthError::Document { .. })
    ));
    // Error answers.
    assert_eq!(
        decode_token_response(
            Purpose::Refresh,
            400,
            br#"{"error":"invalid_grant"}"#,
            &req,
            None,
            0
        ),
        Err(AuthError::TokenError {
            purpose: Purpose::Refresh,
            status: 400,
            error: "invalid_grant".into()
        })
    );
    assert_eq!(
        decode_token_response(Purpose::Token, 500, b"oops", &req, None, 0),
        Err(AuthError::HttpStatus {
            purpose: Purpose::Token,
            status: 500
        })
    );
    assert!(is_header_safe("eyJ.abc-_~+/="));
    assert!(!is_header_safe("a\tb"));
}
