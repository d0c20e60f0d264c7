//! One redaction policy: the connection transcripts, the authorization transcripts and the
//! core (`mcp_sansio::auth::redact`, `AuthExchange::redacted_text`) hide the same values of the
//! same input, and keep the same others.

use mcp_sansio::auth::redact;
use mcp_sansio::auth::{AuthExchange, AuthRequestId, Purpose};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::Endpoint;
use mcp_sansio_transcript::{auth_request_bytes, redact_request};
use proptest::prelude::*;

/// Parameter names of every kind the policy tells apart: OAuth secrets, derived values, names
/// with a marker, public OAuth names with a marker, harmless names, encoded and cased names.
const NAMES: &[&str] = &[
    "code",
    "state",
    "access_token",
    "client_secret",
    "code_verifier",
    "code_challenge",
    "nonce",
    "assertion",
    "api_key",
    "X-Amz-Signature",
    "session_id",
    "code_challenge_method",
    "token_type",
    "country_code",
    "scope",
    "resource",
    "page",
    "client_id",
    "c%6Fde",
    "STATE",
    "client%5Fsecret",
    "%zz",
];

/// The request line's target as `redact_request` records it.
fn recorded_target(target: &str) -> String {
    let request = format!("GET {target} HTTP/1.1\r\nHost: h\r\n\r\n");
    let recorded = String::from_utf8(redact_request(request.as_bytes())).unwrap();
    let line = recorded.split("\r\n").next().unwrap();
    line.strip_prefix("GET ")
        .and_then(|l| l.strip_suffix(" HTTP/1.1"))
        .unwrap()
        .to_owned()
}

/// An authorization request to `url` with these headers and form body.
fn auth_request(url: &str, headers: &[(&str, &str)], body: &str) -> AuthExchange {
    AuthExchange {
        id: AuthRequestId(0),
        purpose: Purpose::Token,
        url: url.to_owned(),
        // Where it is dialled plays no part in what is recorded.
        endpoint: Endpoint::parse("https://h.example/").unwrap(),
        request: Request {
            method: Method::Post,
            authority: "h.example".to_owned(),
            path: "/".to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.as_bytes().to_vec(),
        },
        max_response_bytes: 1024,
    }
}

/// The authorization transcript's record of `req`, as the core's text form writes it (LF line
/// ends; the core omits the empty line before an empty body).
fn recorded_auth_text(req: &AuthExchange) -> String {
    let text = String::from_utf8(auth_request_bytes(req))
        .unwrap()
        .replace("\r\n", "\n");
    match text.strip_suffix("\n\n") {
        Some(head) if req.request.body.is_empty() => format!("{head}\n"),
        _ => text,
    }
}

#[test]
fn the_transcripts_and_the_core_redact_the_same_input_the_same_way() {
    let url = "https://as.example/token?api_key=k&page=2&state=s&code_challenge_method=S256#code=c";
    let target = "/token?api_key=k&page=2&state=s&code_challenge_method=S256#code=c";
    let redacted =
        "?api_key=<redacted>&page=2&state=<redacted>&code_challenge_method=S256#code=<redacted>";
    // The core's policy.
    assert_eq!(
        redact::url(url),
        format!("https://as.example/token{redacted}")
    );
    // A connection transcript's request line.
    assert_eq!(recorded_target(target), format!("/token{redacted}"));
    // An authorization transcript and the core's text form of the same request.
    let req = auth_request(
        url,
        &[
            ("Authorization", "Basic dXNlcjpwYXNz"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        "grant_type=authorization_code&code=abc&code_verifier=v&client_id=c&client_secret=s",
    );
    let expected = format!(
        "POST https://as.example/token{redacted}\n\
         Authorization: Basic <redacted>\n\
         Content-Type: application/x-www-form-urlencoded\n\n\
         grant_type=authorization_code&code=<redacted>&code_verifier=<redacted>&client_id=c&client_secret=<redacted>"
    );
    assert_eq!(req.redacted_text(), expected);
    assert_eq!(recorded_auth_text(&req), expected);
    // The Authorization header of a connection transcript keeps the same part.
    for value in [
        "Bearer tok-1",
        "bearer tok-2",
        "Basic dXNlcjpwYXNz",
        "Digest a=b",
        "tok",
    ] {
        let request = format!("GET /mcp HTTP/1.1\r\nAuthorization: {value}\r\n\r\n");
        let recorded = String::from_utf8(redact_request(request.as_bytes())).unwrap();
        assert_eq!(
            recorded,
            format!(
                "GET /mcp HTTP/1.1\r\nAuthorization: {}\r\n\r\n",
                redact::authorization(value)
            ),
            "{value}"
        );
    }
}

fn query() -> impl Strategy<Value = String> {
    let param = (
        prop::sample::select(NAMES),
        prop::option::of("[a-zA-Z0-9%.~-]{0,8}"),
    )
        .prop_map(|(name, value)| match value {
            Some(v) => format!("{name}={v}"),
            None => name.to_owned(),
        });
    prop::collection::vec(param, 0..6).prop_map(|ps| ps.join("&"))
}

proptest! {
    /// On any query and fragment made of those names, the connection transcript's request line,
    /// the authorization transcript and the core's text form agree with the core's policy, and
    /// no value of a secret parameter survives.
    #[test]
    fn every_recording_applies_the_core_policy(q in query(), f in query()) {
        let target = format!("/mcp?{q}#{f}");
        let url = format!("https://h.example{target}");
        let core = redact::url(&url);
        prop_assert_eq!(format!("https://h.example{}", recorded_target(&target)), core.clone());
        let req = auth_request(&url, &[], "");
        prop_assert_eq!(recorded_auth_text(&req), req.redacted_text());
        prop_assert_eq!(req.redacted_text(), format!("POST {core}\n"));
        for part in core.split(['?', '#', '&']).skip(1) {
            if let Some((name, value)) = part.split_once('=') {
                if redact::is_secret_param(name.as_bytes()) {
                    prop_assert_eq!(value, redact::REDACTED);
                }
            }
        }
    }
}
