//! A body the authorization transcript cannot read as JSON (nor as a form) is recorded as its
//! length, never verbatim: a token answer with a number `serde_json` refuses (`1e400`) in an
//! unknown field would otherwise be stored with its tokens in the clear.

use mcp_sansio::auth::redact::body as redact_auth_body;
use mcp_sansio::auth::AuthResponse;
use mcp_sansio_transcript::auth_response_bytes;

const TOKEN_ANSWER: &str = r#"{"access_token":"secret-at-9f2c","token_type":"Bearer","refresh_token":"secret-rt-77e1","x":1e400}"#;

#[test]
fn a_body_that_does_not_parse_is_recorded_as_its_length() {
    let body = TOKEN_ANSWER.as_bytes();
    assert!(serde_json::from_slice::<serde_json::Value>(body).is_err());
    let recorded = redact_auth_body(Some("application/json"), body);
    assert_eq!(recorded, format!("<{} bytes>", body.len()).into_bytes());
    // Whatever the content type says.
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let r = redact_auth_body(ct, b"\xff\xfe access_token=secret-at-9f2c");
        assert_eq!(r, b"<30 bytes>".to_vec(), "{ct:?}");
    }
    // Through the recorded answer as a whole.
    let mut resp = AuthResponse::new(200, body.to_vec());
    resp.headers
        .push(("Content-Type".into(), b"application/json".to_vec()));
    let text = String::from_utf8_lossy(&auth_response_bytes(&resp)).into_owned();
    assert!(!text.contains("secret-at-9f2c"), "{text}");
    assert!(!text.contains("secret-rt-77e1"), "{text}");
    assert!(text.contains(&format!("<{} bytes>", body.len())), "{text}");
}

#[test]
fn bodies_that_parse_and_empty_bodies_are_kept_redacted() {
    assert_eq!(
        redact_auth_body(Some("application/json"), b""),
        b"".to_vec()
    );
    let r = redact_auth_body(
        Some("application/json"),
        br#"{"access_token":"secret-at-9f2c","token_type":"Bearer"}"#,
    );
    let text = String::from_utf8(r).unwrap();
    assert!(!text.contains("secret-at-9f2c"), "{text}");
    assert!(text.contains("Bearer"), "{text}");
}
