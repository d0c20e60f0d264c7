//! The limits and the decisions of the authorization metadata, each at its edge: the limit
//! accepted, one more refused. The oracles are literal numbers and the documents' own rules,
//! never the constants the code reads (a changed constant must fail here).

use mcp_sansio::auth::{AuthBudget, AuthError, Purpose, UrlPolicy};
use mcp_sansio::internals::auth::{decode_resource_metadata, decode_server_metadata_for};
use mcp_sansio::Endpoint;

const STRICT: UrlPolicy = UrlPolicy {
    allow_loopback_http: false,
};
const SERVER: &str = "https://mcp.example/mcp";
const ISSUER: &str = "https://auth.example";

/// 64 KiB: the documented largest metadata, registration or token body.
const BODY_LIMIT: usize = 65_536;

fn server() -> Endpoint {
    Endpoint::parse(SERVER).expect("server URL")
}

/// `doc` padded with trailing JSON whitespace to exactly `len` bytes.
fn padded(doc: serde_json::Value, len: usize) -> Vec<u8> {
    let mut body = doc.to_string().into_bytes();
    assert!(
        body.len() <= len,
        "the document alone is {} bytes",
        body.len()
    );
    body.resize(len, b' ');
    body
}

fn prm(servers: &[String]) -> serde_json::Value {
    serde_json::json!({ "resource": SERVER, "authorization_servers": servers })
}

fn issuers(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("https://auth{i}.example")).collect()
}

fn resource_metadata(body: &[u8]) -> Result<Vec<String>, AuthError> {
    decode_resource_metadata(body, &server(), SERVER, STRICT, false)
        .map(|m| m.authorization_servers)
}

fn body_refused() -> Result<Vec<String>, AuthError> {
    Err(AuthError::Budget {
        budget: AuthBudget::BodyBytes,
        limit: BODY_LIMIT as u64,
    })
}

/// Body limit (`MAX_BODY_BYTES`, 64 KiB): protected-resource metadata (RFC 9728 §3.2) of
/// exactly 65,536 bytes is read; 65,537 bytes are refused with the body budget, naming the
/// limit.
#[test]
fn resource_metadata_body_of_64_kib_accepted_one_byte_more_refused() {
    let doc = prm(&issuers(1));
    assert_eq!(
        resource_metadata(&padded(doc.clone(), BODY_LIMIT)),
        Ok(issuers(1))
    );
    assert_eq!(
        resource_metadata(&padded(doc, BODY_LIMIT + 1)),
        body_refused()
    );
}

fn asm(with_authorization_endpoint: bool) -> serde_json::Value {
    let mut m = serde_json::json!({
        "issuer": ISSUER,
        "token_endpoint": "https://auth.example/token",
        "code_challenge_methods_supported": ["S256"],
    });
    if with_authorization_endpoint {
        m["authorization_endpoint"] = "https://auth.example/authorize".into();
    }
    m
}

/// Body limit (`MAX_BODY_BYTES`, 64 KiB) on authorization-server metadata (RFC 8414 §3.2):
/// 65,536 bytes are read, 65,537 refused with the body budget.
#[test]
fn server_metadata_body_of_64_kib_accepted_one_byte_more_refused() {
    let at_limit = decode_server_metadata_for(&padded(asm(true), BODY_LIMIT), ISSUER, STRICT, true);
    assert_eq!(at_limit.map(|m| m.issuer), Ok(ISSUER.to_owned()));
    let over = decode_server_metadata_for(&padded(asm(true), BODY_LIMIT + 1), ISSUER, STRICT, true);
    assert_eq!(
        over,
        Err(AuthError::Budget {
            budget: AuthBudget::BodyBytes,
            limit: BODY_LIMIT as u64,
        })
    );
}

/// `MAX_AUTHORIZATION_SERVERS` (8): RFC 9728 §2 lets `authorization_servers` be "a list of
/// OAuth authorization server issuer identifiers"; the client reads at most eight. Eight are
/// accepted, all eight kept in order; nine are refused as a bad document.
#[test]
fn eight_authorization_servers_accepted_nine_refused() {
    for n in 1..=8 {
        assert_eq!(
            resource_metadata(prm(&issuers(n)).to_string().as_bytes()),
            Ok(issuers(n)),
            "{n} authorization servers"
        );
    }
    for n in [9, 10, 64] {
        let r = resource_metadata(prm(&issuers(n)).to_string().as_bytes());
        assert!(
            matches!(
                r,
                Err(AuthError::Document {
                    purpose: Purpose::ResourceMetadata,
                    ..
                })
            ),
            "{n} authorization servers: {r:?}"
        );
    }
}

/// RFC 8414 §2: `authorization_endpoint` is "REQUIRED unless no grant types are supported that
/// use the authorization endpoint". A grant without a user agent (client credentials, JWT
/// bearer) accepts metadata without it and leaves it empty; a grant with a user agent refuses
/// the same document, naming the missing field.
#[test]
fn authorization_endpoint_optional_only_without_a_user_agent() {
    let doc = asm(false).to_string().into_bytes();
    let machine = decode_server_metadata_for(&doc, ISSUER, STRICT, false).expect("machine grant");
    assert_eq!(machine.authorization_endpoint, "");
    assert_eq!(machine.token_endpoint, "https://auth.example/token");

    match decode_server_metadata_for(&doc, ISSUER, STRICT, true) {
        Err(AuthError::Document { purpose, reason }) => {
            assert_eq!(purpose, Purpose::ServerMetadata);
            assert!(reason.contains("authorization_endpoint"), "{reason}");
        }
        other => panic!("a user-agent grant took metadata without the endpoint: {other:?}"),
    }

    // Where the document names the endpoint, both kinds of grant keep it.
    let with = asm(true).to_string().into_bytes();
    for user_agent in [false, true] {
        let m = decode_server_metadata_for(&with, ISSUER, STRICT, user_agent).expect("metadata");
        assert_eq!(m.authorization_endpoint, "https://auth.example/authorize");
    }
}
