//! The limits and the decisions of the authorization (its metadata, challenges, scopes, queries,
//! callbacks, tokens and configured clients), each at its edge: the limit
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

// ---------------------------------------------------------------------------------------------
// The rest of `src/auth/`: the challenge parser, the scopes, the query codec, the callback and
// token answers, the client's configured values. The oracles are literal numbers and the RFCs'
// grammars.

use mcp_sansio::auth::form::{decode, parse_query, QueryError};
use mcp_sansio::auth::{
    parse_challenges, AuthConfig, AuthSecrets, Authorizer, ChallengeError, ClientAuth,
    ClientCredentials, ClientSettings, Grant, IdentityProvider, IssuerPin, PendingAuthorization,
    TokenAuthMethod, TokenSet,
};
use mcp_sansio::internals::auth::{
    decode_registration, decode_token_response, is_header_safe, is_scope_token, parse_callback,
    split_scopes,
};

fn challenges(lines: &[&str]) -> Result<Vec<mcp_sansio::auth::Challenge>, ChallengeError> {
    parse_challenges(lines.iter().map(|l| l.as_bytes()))
}

/// `MAX_CHALLENGE_BYTES` (8 KiB, all `WWW-Authenticate` lines of a response together): two
/// lines of exactly 8,192 bytes in all are read; one byte more is refused, naming the limit.
#[test]
fn www_authenticate_of_8_kib_in_all_accepted_one_byte_more_refused() {
    let line = |len: usize| {
        let head = r#"Basic realm=""#;
        format!("{head}{}\"", "r".repeat(len - head.len() - 1))
    };
    let (a, b) = (line(4000), line(4192));
    assert_eq!(a.len() + b.len(), 8192);
    let read = challenges(&[&a, &b]).expect("8192 bytes");
    assert_eq!(read.len(), 2);
    assert_eq!(read[1].param("realm").map(str::len), Some(4192 - 14));
    let b = line(4193);
    assert_eq!(
        challenges(&[&a, &b]),
        Err(ChallengeError::TooLong { limit: 8192 })
    );
}

/// `MAX_CHALLENGES` (16 per response): sixteen challenges spread over two lines are read, a
/// seventeenth is refused, whichever line it comes on.
#[test]
fn sixteen_challenges_accepted_seventeen_refused() {
    let eight = ["Basic"; 8].join(", ");
    assert_eq!(challenges(&[&eight, &eight]).map(|c| c.len()), Ok(16));
    assert_eq!(
        challenges(&[&eight, &eight, "Bearer"]),
        Err(ChallengeError::TooManyChallenges { limit: 16 })
    );
    let seventeen = vec!["Basic"; 17].join(", ");
    assert_eq!(
        challenges(&[&seventeen]),
        Err(ChallengeError::TooManyChallenges { limit: 16 })
    );
}

/// `MAX_PARAMS` (32 per challenge): 32 parameters, some continued on a second line (RFC 9110
/// §5.3: the lines join into one list), are read; a 33rd is refused.
#[test]
fn thirty_two_parameters_accepted_thirty_three_refused() {
    let params = |from: usize, to: usize| {
        (from..to)
            .map(|i| format!("p{i}=v{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let first = format!("Bearer {}", params(0, 20));
    let read = challenges(&[&first, &params(20, 32)]).expect("32 parameters");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].params.len(), 32);
    assert_eq!(read[0].param("p31"), Some("v31"));
    assert_eq!(
        challenges(&[&first, &params(20, 33)]),
        Err(ChallengeError::TooManyParams { limit: 32 })
    );
}

/// A quoted string (RFC 9110 §5.6.4: `qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E /
/// obs-text`, `quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )`): a space, a tab, `~` and
/// a byte above 0x7F are kept, plain or escaped; 0x1F and DEL are refused, plain or escaped.
#[test]
fn a_quoted_string_keeps_space_tab_and_visible_bytes_and_refuses_controls() {
    let realm = |inner: &[u8]| {
        let mut line = b"Bearer realm=\"".to_vec();
        line.extend_from_slice(inner);
        line.push(b'"');
        parse_challenges([line.as_slice()]).map(|c| c[0].param("realm").map(str::to_owned))
    };
    assert_eq!(realm(b"a b\tc~"), Ok(Some("a b\tc~".into())));
    assert_eq!(realm("é".as_bytes()), Ok(Some("é".into())));
    assert_eq!(realm(b"\\ \\\t\\~\\\"\\\\"), Ok(Some(" \t~\"\\".into())));
    assert_eq!(
        realm("\\é".as_bytes()).map(|r| r.map(|s| s.len())),
        Ok(Some(2))
    );
    for bad in [&b"a\x1fb"[..], b"a\x7fb", b"\\\x1f", b"\\\x7f", b"\\\x00"] {
        assert!(
            matches!(realm(bad), Err(ChallengeError::Syntax { .. })),
            "{bad:?} gave {:?}",
            realm(bad)
        );
    }
}

/// RFC 9110 §11.6.1: `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`. A scheme
/// followed by anything but a space, a comma or the end is refused where the scheme ends, on
/// any line and after other challenges too.
#[test]
fn a_scheme_glued_to_what_follows_is_refused_where_it_ends() {
    for (line, at) in [
        ("Bear(er", 4),
        ("Basic, Bear(er", 11),
        ("Basic,Bearer\"x\"", 12),
    ] {
        assert_eq!(
            challenges(&["Basic", line]),
            Err(ChallengeError::Syntax {
                line: 1,
                at,
                reason: "expected a space after the auth scheme"
            }),
            "{line}"
        );
    }
}

/// A scope token (RFC 6749 §3.3: `1*( %x21 / %x23-5B / %x5D-7E )`) of 256 bytes is kept, 257
/// are dropped (`MAX_SCOPE_LEN`); each edge of the character ranges is kept and each byte just
/// outside them is not.
#[test]
fn a_scope_of_256_bytes_is_kept_257_dropped_and_each_character_range_at_its_edges() {
    assert!(is_scope_token(&"s".repeat(256)));
    assert!(!is_scope_token(&"s".repeat(257)));
    assert!(!is_scope_token(""));
    for ok in ["!", "#", "[", "]", "~", "a!#[]~"] {
        assert!(is_scope_token(ok), "{ok:?}");
    }
    for bad in [" ", "\"", "\\", "\x7f", "\x20a", "é", "\x00"] {
        assert!(!is_scope_token(bad), "{bad:?}");
    }
    let at = format!("a {} b", "s".repeat(256));
    assert_eq!(split_scopes(&at).len(), 3);
    let over = format!("a {} b", "s".repeat(257));
    assert_eq!(split_scopes(&over), vec!["a".to_owned(), "b".to_owned()]);
}

/// `MAX_SCOPES` (64 per source): of 65 distinct scopes the first 64 are kept, in order.
#[test]
fn sixty_four_scopes_are_kept_the_sixty_fifth_dropped() {
    let all: Vec<String> = (0..65).map(|i| format!("s{i}")).collect();
    let kept = split_scopes(&all.join(" "));
    assert_eq!(kept, all[..64].to_vec());
    assert_eq!(split_scopes(&all[..64].join(" ")), all[..64].to_vec());
}

/// `MAX_QUERY_BYTES` (16 KiB, the leading `?` not counted) and `MAX_QUERY_PARAMS` (64): a
/// query of exactly 16,384 bytes and one of 64 parameters are read; one byte or one parameter
/// more is refused, naming the limit.
#[test]
fn a_query_of_16_kib_and_64_parameters_accepted_one_more_refused() {
    let of_len = |len: usize| format!("a={}", "v".repeat(len - 2));
    assert_eq!(
        parse_query(&format!("?{}", of_len(16_384))).map(|q| q[0].1.len()),
        Ok(16_382)
    );
    assert_eq!(
        parse_query(&of_len(16_385)),
        Err(QueryError::TooLong { limit: 16_384 })
    );
    let params = |n: usize| {
        (0..n)
            .map(|i| format!("p{i}=x"))
            .collect::<Vec<_>>()
            .join("&")
    };
    assert_eq!(parse_query(&params(64)).map(|q| q.len()), Ok(64));
    assert_eq!(
        parse_query(&params(65)),
        Err(QueryError::TooManyParams { limit: 64 })
    );
}

/// Percent-decoding (RFC 3986 §2.1: `HEXDIG` in either case): `%4a`, `%4A`, `%7e`, `%7E`,
/// `%2f` decode to their bytes, each digit read at its place.
#[test]
fn percent_escapes_decode_in_either_case() {
    let q = parse_query("a=%4a%4A%7e%7E%2f%2F%C3%a9&%62=%30%39").unwrap();
    assert_eq!(
        q,
        vec![
            ("a".to_owned(), "JJ~~//é".to_owned()),
            ("b".to_owned(), "09".to_owned())
        ]
    );
    for bad in ["a=%4", "a=%", "a=%g0", "a=%0g"] {
        assert_eq!(parse_query(bad), Err(QueryError::BadEscape), "{bad}");
    }
}

/// The `state` of an authorization: 1 to 256 unreserved characters (a state of 256 is
/// accepted, 257 refused); the PKCE verifier 43 to 128 (RFC 7636 §4.1: both ends accepted).
#[test]
fn a_state_of_256_and_verifiers_of_43_and_128_are_accepted_one_more_refused() {
    let v43 = "v".repeat(43);
    assert!(AuthSecrets::new("s".repeat(256), v43.clone()).is_ok());
    assert!(AuthSecrets::new("s".repeat(257), v43.clone()).is_err());
    assert!(AuthSecrets::new("s-._~", v43).is_ok());
    assert!(AuthSecrets::new("s", "v".repeat(128)).is_ok());
    assert!(AuthSecrets::new("s", "v".repeat(129)).is_err());
}

fn pending(iss_supported: bool) -> PendingAuthorization {
    PendingAuthorization {
        issuer: ISSUER.into(),
        iss_parameter_supported: iss_supported,
        token_endpoint: "https://auth.example/token".into(),
        client: ClientCredentials {
            client_id: "c".into(),
            client_secret: None,
            auth_method: TokenAuthMethod::None,
        },
        redirect_uri: "http://127.0.0.1/cb".into(),
        resource: None,
        scopes: Vec::new(),
        secrets: AuthSecrets::new("st", "v".repeat(43)).unwrap(),
        authorization_url: "https://auth.example/authorize".into(),
    }
}

/// `MAX_CODE_LEN` (4096): a callback with a code of 4,096 bytes gives the code; 4,097 bytes
/// or an empty code is no usable code.
#[test]
fn a_code_of_4096_bytes_is_redeemed_4097_refused() {
    let p = pending(false);
    let code = "c".repeat(4096);
    assert_eq!(
        parse_callback(&p, &format!("state=st&code={code}")),
        Ok(code)
    );
    for bad in ["c".repeat(4097), String::new()] {
        assert!(
            matches!(
                parse_callback(&p, &format!("state=st&code={bad}")),
                Err(AuthError::Callback { .. })
            ),
            "a code of {}",
            bad.len()
        );
    }
}

/// `Debug` of what holds an authorization's secrets (their output ends up in logs): the state
/// and PKCE verifier, the client secret and the tokens are never shown; what identifies the
/// value is (the type, the issuer, the endpoint, the client ID, the scopes, the expiry, the
/// DPoP binding), so that an empty output cannot pass.
#[test]
fn an_authorizations_secrets_and_tokens_are_not_shown_in_debug_what_names_them_is() {
    let secrets = AuthSecrets::new("state-SECRET", "verifier-SECRET-".repeat(3)).unwrap();
    let shown = format!("{secrets:?}");
    assert!(shown.contains("AuthSecrets"), "{shown}");
    assert!(!shown.contains("SECRET"), "{shown}");

    let mut p = pending(true);
    p.secrets = secrets;
    p.client.client_secret = Some("client-SECRET".into());
    p.scopes = vec!["mcp:read".into()];
    for shown in [format!("{p:?}"), format!("{p:#?}")] {
        for want in [
            "PendingAuthorization",
            ISSUER,
            "https://auth.example/token",
            "\"c\"",
            "mcp:read",
        ] {
            assert!(shown.contains(want), "{want} not in {shown}");
        }
        assert!(!shown.contains("SECRET"), "{shown}");
    }

    let tokens = TokenSet {
        access_token: "access-SECRET".into(),
        refresh_token: Some("refresh-SECRET".into()),
        expires_at_ms: Some(60_005),
        scopes: vec!["mcp:read".into()],
        dpop: true,
    };
    let shown = format!("{tokens:?}");
    for want in ["TokenSet", "60005", "mcp:read", "dpop: true"] {
        assert!(shown.contains(want), "{want} not in {shown}");
    }
    assert!(!shown.contains("SECRET"), "{shown}");
}

/// `MAX_TOKEN_LEN` (16 KiB): an access or refresh token of 16,384 visible ASCII bytes is
/// header-safe and accepted from a token endpoint; 16,385 bytes are refused.
#[test]
fn a_token_of_16_kib_is_accepted_one_byte_more_refused() {
    assert!(is_header_safe(&"t".repeat(16_384)));
    assert!(!is_header_safe(&"t".repeat(16_385)));
    let answer = |access: &str, refresh: &str| {
        serde_json::json!({
            "access_token": access, "refresh_token": refresh, "token_type": "Bearer",
            "expires_in": 60,
        })
        .to_string()
    };
    let at = "a".repeat(16_384);
    let rt = "r".repeat(16_384);
    let ok = decode_token_response(
        Purpose::Token,
        200,
        answer(&at, &rt).as_bytes(),
        &[],
        None,
        5,
    )
    .expect("16 KiB tokens");
    assert_eq!(ok.access_token.len(), 16_384);
    assert_eq!(ok.refresh_token.map(|r| r.len()), Some(16_384));
    assert_eq!(ok.expires_at_ms, Some(60_005));
    let long = "a".repeat(16_385);
    for (a, r) in [(&long, &rt), (&at, &long)] {
        assert!(matches!(
            decode_token_response(Purpose::Token, 200, answer(a, r).as_bytes(), &[], None, 5),
            Err(AuthError::UnsafeToken { .. })
        ));
    }
}

/// `MAX_CLIENT_VALUE_LEN` (2048) on a registration answer (RFC 7591 §3.2.1): a client ID and a
/// secret of 2,048 bytes are kept, 2,049 refused as a bad document.
#[test]
fn a_registered_client_id_and_secret_of_2048_bytes_kept_2049_refused() {
    let meta =
        decode_server_metadata_for(asm(true).to_string().as_bytes(), ISSUER, STRICT, true).unwrap();
    let answer = |id: usize, secret: usize| {
        serde_json::json!({"client_id": "i".repeat(id), "client_secret": "s".repeat(secret)})
            .to_string()
    };
    let ok = decode_registration(
        answer(2048, 2048).as_bytes(),
        &meta,
        TokenAuthMethod::ClientSecretBasic,
    )
    .expect("2048 bytes");
    assert_eq!(ok.client_id.len(), 2048);
    assert_eq!(ok.client_secret.map(|s| s.len()), Some(2048));
    for (id, secret) in [(2049, 1), (1, 2049)] {
        assert!(matches!(
            decode_registration(
                answer(id, secret).as_bytes(),
                &meta,
                TokenAuthMethod::ClientSecretBasic
            ),
            Err(AuthError::Document {
                purpose: Purpose::Registration,
                ..
            })
        ));
    }
}

/// A `client_name` of 1 to 256 bytes: 256 is accepted, 257 and none refused.
#[test]
fn a_client_name_of_256_bytes_is_accepted_257_refused() {
    let settings = |n: usize| ClientSettings::new("n".repeat(n), "http://127.0.0.1:1/cb");
    assert_eq!(settings(256).validate(), Ok(()));
    assert!(matches!(
        settings(257).validate(),
        Err(AuthError::Config { .. })
    ));
    assert!(matches!(
        settings(0).validate(),
        Err(AuthError::Config { .. })
    ));
}

fn secret_grant(id: usize, secret: usize, post: bool) -> Grant {
    let (client_id, secret) = ("i".repeat(id), "s".repeat(secret));
    let client = if post {
        ClientAuth::SecretPost { client_id, secret }
    } else {
        ClientAuth::SecretBasic { client_id, secret }
    };
    Grant::ClientCredentials {
        client,
        issuer: IssuerPin::Exactly(ISSUER.into()),
    }
}

fn configured(grant: Grant) -> Result<(), AuthError> {
    Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).map(|_| ())
}

/// A machine grant's client ID and secret (`MAX_CLIENT_VALUE_LEN`, 2048) are checked when the
/// authorizer is made: 2,048 bytes each are accepted, 2,049 or none refused, for the client at
/// the MCP server's authorization server and for the identity provider's client alike.
#[test]
fn a_grants_client_id_and_secret_of_2048_bytes_accepted_2049_or_none_refused() {
    for post in [false, true] {
        assert_eq!(configured(secret_grant(2048, 2048, post)), Ok(()));
        for (id, secret) in [(2049, 1), (1, 2049), (0, 1), (1, 0)] {
            assert!(
                matches!(
                    configured(secret_grant(id, secret, post)),
                    Err(AuthError::Config { .. })
                ),
                "id {id}, secret {secret}"
            );
        }
    }
    let enterprise = |idp_id: usize| Grant::EnterpriseManaged {
        idp: IdentityProvider {
            issuer: "https://idp.example".into(),
            token_endpoint: "https://idp.example/token".into(),
            client: ClientAuth::None {
                client_id: "i".repeat(idp_id),
            },
            id_token: std::sync::Arc::new(|| Ok::<String, String>("id-token".into())),
        },
        client: ClientAuth::None {
            client_id: "c".into(),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    assert_eq!(configured(enterprise(2048)), Ok(()));
    for bad in [2049, 0] {
        assert!(matches!(
            configured(enterprise(bad)),
            Err(AuthError::Config { .. })
        ));
    }
}

/// The names a grant and a client authentication give for logs (the registered names of
/// RFC 8414 §2 for the methods), which grant opens a user agent, the client ID each carries,
/// and their `Debug`: the method and client ID, never the secret.
#[test]
fn a_grant_names_itself_and_its_client_and_shows_no_secret() {
    let basic = secret_grant(3, 40, false);
    let post = secret_grant(3, 40, true);
    assert_eq!(basic.name(), "client_credentials");
    assert_eq!(Grant::AuthorizationCode.name(), "authorization_code");
    assert!(Grant::AuthorizationCode.needs_user_agent());
    assert!(!basic.needs_user_agent());
    assert!(Grant::AuthorizationCode.client().is_none());
    assert!(Grant::AuthorizationCode.issuer_pin().is_none());
    for (grant, method) in [
        (&basic, "client_secret_basic"),
        (&post, "client_secret_post"),
    ] {
        let client = grant.client().expect("a machine grant's client");
        assert_eq!(client.method_name(), method);
        assert_eq!(client.client_id(), "iii");
        assert_eq!(grant.issuer_pin(), Some(&IssuerPin::Exactly(ISSUER.into())));
        let shown = format!("{grant:?}");
        assert!(!shown.contains(&"s".repeat(40)), "{shown}");
        assert!(shown.contains(method) && shown.contains("iii"), "{shown}");
        assert!(shown.contains(ISSUER), "{shown}");
    }
    let none = ClientAuth::None {
        client_id: "pub".into(),
    };
    assert_eq!(none.method_name(), "none");
    assert_eq!(none.client_id(), "pub");
    assert!(format!("{none:?}").contains("\"none\""));
}

// ---------------------------------------------------------------------------------------------
// The JWTs of the grants without a user agent: the client assertion the core builds and signs
// (RFC 7523 §2.2, §3), the assertions the embedder supplies (RFC 7523 §2.1), and their bound.

use base64::Engine as _;
use mcp_sansio::auth::{AuthEvent, AuthExchange, AuthResponse, JwsAlgorithm, JwtSigner, SignError};
use mcp_sansio::Instant;
use std::sync::Arc;

/// The wall-clock second of the challenge.
const NOW_SECS: u64 = 1_800_000_000;
const TOKEN_ENDPOINT: &str = "https://auth.example/token";

fn unb64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A signer that signs nothing: its "signature" is `len(input)` bytes of 0xA5 (the core never
/// verifies one). It keeps the default `key_id` and `public_jwk`.
struct Fixed {
    alg: JwsAlgorithm,
    len: Box<dyn Fn(usize) -> usize + Send + Sync>,
}

impl JwtSigner for Fixed {
    fn algorithm(&self) -> JwsAlgorithm {
        self.alg
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, SignError> {
        Ok(vec![0xA5; (self.len)(input.len())])
    }
}

/// The same signer known to the authorization server by a key ID.
struct WithKid(Fixed);

impl JwtSigner for WithKid {
    fn algorithm(&self) -> JwsAlgorithm {
        self.0.alg
    }

    fn key_id(&self) -> Option<&str> {
        Some("key-1")
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, SignError> {
        self.0.sign(input)
    }
}

fn fixed(alg: JwsAlgorithm, len: usize) -> Fixed {
    Fixed {
        alg,
        len: Box::new(move |_| len),
    }
}

fn private_key_jwt(client_id: &str, signer: Arc<dyn JwtSigner>) -> Grant {
    Grant::ClientCredentials {
        client: ClientAuth::PrivateKeyJwt {
            client_id: client_id.into(),
            signer,
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    }
}

/// Runs `grant` against honest servers (the resource names [`ISSUER`]); every request sent
/// and every event.
fn drive(grant: Grant) -> (Vec<AuthExchange>, Vec<AuthEvent>) {
    let mut az = Authorizer::new(AuthConfig::machine(SERVER, "t", grant)).unwrap();
    let now = Instant::from_duration(std::time::Duration::from_secs(NOW_SECS));
    az.handle_challenge(now, 401, &[], AuthSecrets::from_random_bytes(&[7; 64]))
        .unwrap();
    let (mut sent, mut events) = (Vec::new(), Vec::new());
    while let Some(r) = az.poll_request() {
        let body = match r.purpose {
            Purpose::ResourceMetadata => {
                serde_json::json!({"resource": SERVER, "authorization_servers": [ISSUER]})
            }
            Purpose::ServerMetadata => serde_json::json!({
                "issuer": ISSUER,
                "token_endpoint": TOKEN_ENDPOINT,
                "code_challenge_methods_supported": ["S256"],
            }),
            _ => serde_json::json!({"access_token": "at-1", "token_type": "Bearer"}),
        };
        az.handle_response(now, r.id, AuthResponse::new(200, body.to_string()));
        sent.push(r);
    }
    while let Some(e) = az.poll_event() {
        events.push(e);
    }
    (sent, events)
}

/// The form of the token request among `sent`, if one was sent.
fn token_form(sent: &[AuthExchange]) -> Option<Vec<(String, String)>> {
    let r = sent.iter().find(|r| r.purpose == Purpose::Token)?;
    assert_eq!(r.url, TOKEN_ENDPOINT);
    // Split here: a body with a 16 KiB JWT is longer than `parse_query` reads.
    let body = String::from_utf8_lossy(&r.request.body).into_owned();
    Some(
        body.split('&')
            .map(|p| {
                let (n, v) = p.split_once('=').unwrap();
                (decode(n).unwrap(), decode(v).unwrap())
            })
            .collect(),
    )
}

fn form_field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The client assertion sent by `grant`, split: header, claims, signature.
fn sent_assertion(grant: Grant) -> (serde_json::Value, serde_json::Value, Vec<u8>) {
    let (sent, events) = drive(grant);
    assert!(
        matches!(&events[..], [AuthEvent::Authorized { .. }]),
        "{events:?}"
    );
    let form = token_form(&sent).expect("a token request");
    assert_eq!(form_field(&form, "grant_type"), Some("client_credentials"));
    assert_eq!(form_field(&form, "client_id"), Some("the-client"));
    assert_eq!(
        form_field(&form, "client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let jwt = form_field(&form, "client_assertion").expect("an assertion");
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3, "{jwt}");
    (
        serde_json::from_slice(&unb64(parts[0])).unwrap(),
        serde_json::from_slice(&unb64(parts[1])).unwrap(),
        unb64(parts[2]),
    )
}

fn failed_assertion(events: &[AuthEvent]) -> String {
    match events {
        [AuthEvent::Failed(AuthError::Assertion { reason })] => reason.clone(),
        other => panic!("{other:?}"),
    }
}

/// RFC 7523 §3: the client assertion of `private_key_jwt` has `iss` and `sub` the client ID,
/// `aud` the authorization server's issuer, `iat` the time of the challenge, `exp` 60 seconds
/// later (`ASSERTION_LIFETIME_SECS`), a `jti` of 22 base64url characters that differs with the
/// authorization's secrets; its header is `alg` and `typ: JWT`, with a `kid` only when the
/// signer has one; the signature is the signer's bytes.
#[test]
fn a_client_assertion_names_the_client_and_the_issuer_and_lives_sixty_seconds() {
    let (header, claims, signature) = sent_assertion(private_key_jwt(
        "the-client",
        Arc::new(fixed(JwsAlgorithm::ES256, 64)),
    ));
    assert_eq!(header, serde_json::json!({"alg": "ES256", "typ": "JWT"}));
    assert_eq!(claims["iss"], "the-client");
    assert_eq!(claims["sub"], "the-client");
    assert_eq!(claims["aud"], ISSUER);
    assert_eq!(claims["iat"], NOW_SECS);
    assert_eq!(claims["exp"], NOW_SECS + 60);
    let jti = claims["jti"].as_str().expect("a jti");
    assert_eq!(jti.len(), 22, "{jti}");
    assert_eq!(unb64(jti).len(), 16);
    assert_eq!(signature, vec![0xA5; 64]);

    let (header, _, _) = sent_assertion(private_key_jwt(
        "the-client",
        Arc::new(WithKid(fixed(JwsAlgorithm::ES384, 96))),
    ));
    assert_eq!(
        header,
        serde_json::json!({"alg": "ES384", "typ": "JWT", "kid": "key-1"})
    );
}

/// RFC 7518 §3.4: an ES256 signature is exactly 64 bytes, ES384 96 (`r || s`); a signer that
/// gives one byte less or more (a DER signature, say) is refused before anything is sent.
#[test]
fn an_ecdsa_signature_of_its_exact_length_is_sent_one_byte_off_refused() {
    for (alg, len) in [(JwsAlgorithm::ES256, 64), (JwsAlgorithm::ES384, 96)] {
        let (_, _, sig) = sent_assertion(private_key_jwt("the-client", Arc::new(fixed(alg, len))));
        assert_eq!(sig.len(), len);
        for off in [len - 1, len + 1] {
            let (sent, events) = drive(private_key_jwt("the-client", Arc::new(fixed(alg, off))));
            assert!(token_form(&sent).is_none(), "{alg:?} {off}");
            let reason = failed_assertion(&events);
            assert!(reason.contains(&format!("{off}-byte")), "{reason}");
        }
    }
}

/// Signature bytes whose base64url form makes a JWT of `total` bytes after `input` bytes of
/// signing input and the dot, or the nearest reachable length below (`at_most`) or above.
fn signature_len(input: usize, total: usize, at_most: bool) -> usize {
    let l = total - input - 1;
    match (l % 4, at_most) {
        (0, _) => 3 * l / 4,
        (2, _) => 3 * (l - 2) / 4 + 1,
        (3, _) => 3 * (l - 3) / 4 + 2,
        (_, true) => 3 * (l - 1) / 4,
        (_, false) => 3 * (l + 1) / 4,
    }
}

fn sized(client_id: &str, total: usize, at_most: bool) -> Grant {
    private_key_jwt(
        client_id,
        Arc::new(Fixed {
            alg: JwsAlgorithm::RS256,
            len: Box::new(move |input| signature_len(input, total, at_most)),
        }),
    )
}

/// `MAX_JWT_LEN` (16 KiB) on the client assertion made: a JWT of exactly 16,384 bytes (an RSA
/// signature has no fixed length) is sent; one of 16,385 (or 16,386 where 16,385 cannot be
/// written) is refused before anything is sent.
#[test]
fn a_client_assertion_of_16_kib_is_sent_one_byte_more_refused() {
    let mut exact = None;
    for n in 1..=4 {
        let id = "c".repeat(n);
        let (sent, _) = drive(sized(&id, 16_384, true));
        let form = token_form(&sent).expect("a token request");
        if form_field(&form, "client_assertion").map(str::len) == Some(16_384) {
            exact = Some(id);
            break;
        }
    }
    let id = exact.expect("a client ID for which the JWT is exactly 16,384 bytes");
    let (sent, events) = drive(sized(&id, 16_385, false));
    assert!(token_form(&sent).is_none());
    let reason = failed_assertion(&events);
    assert!(reason.contains("longer than the JWT limit"), "{reason}");
}

/// An unsigned compact JWT with `claims`, its third part padded so the whole is `len` bytes.
fn supplied_jwt(claims: serde_json::Value, len: usize) -> String {
    let head = format!(
        "{}.{}.",
        b64(br#"{"alg":"ES256"}"#),
        b64(claims.to_string().as_bytes())
    );
    assert!(head.len() < len);
    format!("{head}{}", "s".repeat(len - head.len()))
}

fn jwt_bearer(token: String) -> Grant {
    Grant::JwtBearer {
        client: ClientAuth::None {
            client_id: "the-client".into(),
        },
        assertion: Arc::new(move || Ok::<String, String>(token.clone())),
        issuer: IssuerPin::Exactly(ISSUER.into()),
    }
}

/// The assertion a JWT bearer grant sends, or the error that kept it.
fn bearer_outcome(token: String) -> Result<String, AuthError> {
    let (sent, events) = drive(jwt_bearer(token));
    match (token_form(&sent), &events[..]) {
        (Some(form), [AuthEvent::Authorized { .. }]) => {
            assert_eq!(
                form_field(&form, "grant_type"),
                Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
            );
            Ok(form_field(&form, "assertion").unwrap().to_owned())
        }
        (None, [AuthEvent::Failed(e)]) => Err(e.clone()),
        other => panic!("{other:?}"),
    }
}

/// `MAX_JWT_LEN` (16 KiB) on a supplied assertion: one of 16,384 bytes naming the server is
/// sent as it is; 16,385 bytes are refused, nothing sent.
#[test]
fn a_supplied_assertion_of_16_kib_is_sent_one_byte_more_refused() {
    let claims = serde_json::json!({"aud": ISSUER, "sub": "workload"});
    let at = supplied_jwt(claims.clone(), 16_384);
    assert_eq!(bearer_outcome(at.clone()), Ok(at));
    assert!(matches!(
        bearer_outcome(supplied_jwt(claims, 16_385)),
        Err(AuthError::Assertion { .. })
    ));
}

/// RFC 7523 §3: the assertion's `aud` must name the authorization server, by its issuer
/// identifier (a trailing `/` tolerated) or its token endpoint, as a string or among an array;
/// any other audience, none, or one that is not a string keeps it from being sent there.
#[test]
fn a_supplied_assertion_is_sent_only_where_its_audience_names_the_server() {
    let with_aud = |aud: serde_json::Value| {
        bearer_outcome(supplied_jwt(
            serde_json::json!({"aud": aud, "sub": "w"}),
            200,
        ))
    };
    for aud in [
        serde_json::json!(ISSUER),
        serde_json::json!(format!("{ISSUER}/")),
        serde_json::json!(TOKEN_ENDPOINT),
        serde_json::json!(["https://other.example", ISSUER]),
        serde_json::json!([TOKEN_ENDPOINT]),
    ] {
        assert!(with_aud(aud.clone()).is_ok(), "{aud}");
    }
    for aud in [
        serde_json::json!("https://other.example"),
        serde_json::json!("https://auth.example.evil"),
        serde_json::json!(format!("{TOKEN_ENDPOINT}/x")),
        serde_json::json!(["https://other.example"]),
        serde_json::json!(7),
        serde_json::json!(null),
    ] {
        assert_eq!(
            with_aud(aud.clone()),
            Err(AuthError::AudienceMismatch {
                issuer: ISSUER.into()
            }),
            "{aud}"
        );
    }
}

/// RFC 7518 §3.1: each algorithm's `alg` name (`ES256`, `ES384`, `RS256`, `PS256`) reads back
/// as that algorithm, byte for byte; any other name (another case, `none`, an HMAC or an
/// unsupported curve, the empty name, a trailing space) is no algorithm.
#[test]
fn each_jws_algorithm_is_read_back_from_its_alg_name_and_no_other_name() {
    for (name, alg) in [
        ("ES256", JwsAlgorithm::ES256),
        ("ES384", JwsAlgorithm::ES384),
        ("RS256", JwsAlgorithm::RS256),
        ("PS256", JwsAlgorithm::PS256),
    ] {
        assert_eq!(alg.as_str(), name);
        assert_eq!(JwsAlgorithm::from_name(name), Some(alg), "{name}");
    }
    for other in [
        "es256", "Es256", "none", "HS256", "ES512", "PS384", "", "ES256 ",
    ] {
        assert_eq!(JwsAlgorithm::from_name(other), None, "{other:?}");
    }
}

use mcp_sansio::internals::auth::{jwk_thumbprint, usable_nonce};

/// RFC 7638 §3.1's example: the thumbprint of its RSA key is
/// `NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs`; RFC 9449 §6.1's EC key's is
/// `0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I`. Members besides the required ones (and
/// their order) change nothing; a key type other than EC or RSA, or a required member missing,
/// has none.
#[test]
fn a_jwk_thumbprint_is_rfc_7638s_for_ec_and_rsa_keys_and_none_for_others() {
    let rsa = serde_json::json!({
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    });
    assert_eq!(
        jwk_thumbprint(&rsa).as_deref(),
        Some("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    );
    let ec = serde_json::json!({
        "kty": "EC",
        "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
        "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA",
        "crv": "P-256",
    });
    assert_eq!(
        jwk_thumbprint(&ec).as_deref(),
        Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    );
    let mut no_y = ec.clone();
    no_y.as_object_mut().unwrap().remove("y");
    for other in [
        serde_json::json!({"kty": "oct", "k": "c2VjcmV0"}),
        serde_json::json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
        no_y,
        serde_json::json!({"n": "AQAB", "e": "AQAB"}),
    ] {
        assert_eq!(jwk_thumbprint(&other), None, "{other}");
    }
}

/// A `DPoP-Nonce` (RFC 9449 §8.1: `nonce = 1*NQCHAR`, here visible ASCII) of 512 bytes
/// (`MAX_NONCE_LEN`) is used; 513 bytes, none, a space or a control byte are not.
#[test]
fn a_dpop_nonce_of_512_visible_bytes_is_used_513_or_others_are_not() {
    let at = "n".repeat(512);
    assert_eq!(usable_nonce(at.as_bytes()), Some(at));
    assert_eq!(usable_nonce(&[b'n'; 513]), None);
    assert_eq!(usable_nonce(b""), None);
    assert_eq!(usable_nonce(b"!~"), Some("!~".to_owned()));
    for bad in [&b"a b"[..], b"a\x7f", b"\x1fa", "é".as_bytes()] {
        assert_eq!(usable_nonce(bad), None, "{bad:?}");
    }
}

/// The `Debug` of an enterprise-managed grant shows its identity provider (issuer, token
/// endpoint, client) and the client at the MCP server's authorization server; never the
/// identity provider's client secret nor the ID token.
#[test]
fn an_enterprise_grant_shows_its_identity_provider_and_no_secret() {
    let grant = Grant::EnterpriseManaged {
        idp: IdentityProvider {
            issuer: "https://idp.example".into(),
            token_endpoint: "https://idp.example/oauth/token".into(),
            client: ClientAuth::SecretPost {
                client_id: "idp-client".into(),
                secret: "IDP-SECRET-VALUE".into(),
            },
            id_token: Arc::new(|| Ok::<String, String>("ID-TOKEN-VALUE".into())),
        },
        client: ClientAuth::None {
            client_id: "as-client".into(),
        },
        issuer: IssuerPin::Exactly(ISSUER.into()),
    };
    assert_eq!(grant.name(), "enterprise_managed");
    let shown = format!("{grant:?}");
    for part in [
        "IdentityProvider",
        "https://idp.example/oauth/token",
        "idp-client",
        "client_secret_post",
        "as-client",
        ISSUER,
    ] {
        assert!(shown.contains(part), "{part} not in {shown}");
    }
    for secret in ["IDP-SECRET-VALUE", "ID-TOKEN-VALUE"] {
        assert!(!shown.contains(secret), "{shown}");
    }
}

/// A DPoP proof carries the signer's public key (RFC 9449 §4.2: `jwk` is REQUIRED): a signer
/// that gives none (the trait's default) makes no proof, and no request headers, rather than
/// one with an empty or null `jwk`.
#[test]
fn a_signer_without_a_public_jwk_makes_no_dpop_proof() {
    let binding = mcp_sansio::auth::DpopBinding::new(
        "at-1",
        mcp_sansio::auth::DpopKey(Arc::new(fixed(JwsAlgorithm::ES256, 64))),
        "seed",
    );
    let made = binding.request_headers("POST", SERVER, Instant::ZERO, 0, None);
    match made {
        Err(e) => assert!(e.to_string().contains("no public JWK"), "{e}"),
        Ok(fields) => panic!("{fields:?}"),
    }
}

/// Each bound of an authorization has the stable snake_case name that logs and metrics key on,
/// shows as that name, and the budget error names it with its limit; each purpose shows as what
/// the step was doing.
#[test]
fn each_auth_budget_and_purpose_has_its_stable_name() {
    let budgets = [
        (AuthBudget::Exchanges, "auth_exchanges"),
        (AuthBudget::BodyBytes, "auth_body_bytes"),
        (AuthBudget::Time, "auth_time_ms"),
        (AuthBudget::CallbackTime, "auth_callback_time_ms"),
        (AuthBudget::Attempts, "auth_attempts"),
    ];
    for (b, name) in budgets {
        assert_eq!(b.name(), name);
        assert_eq!(b.to_string(), name);
    }
    let e = AuthError::Budget {
        budget: AuthBudget::BodyBytes,
        limit: 65_536,
    };
    assert_eq!(
        e.to_string(),
        "authorization budget exceeded: auth_body_bytes (limit 65536)"
    );
    let purposes = [
        (Purpose::ResourceMetadata, "protected-resource metadata"),
        (Purpose::ServerMetadata, "authorization-server metadata"),
        (Purpose::Registration, "client registration"),
        (Purpose::Token, "token request"),
        (Purpose::Refresh, "token refresh"),
        (
            Purpose::TokenExchange,
            "token exchange at the identity provider",
        ),
    ];
    for (p, text) in purposes {
        assert_eq!(p.to_string(), text);
    }
}

/// A client ID metadata document URL is the client's ID: it must be https and have a path
/// (draft-ietf-oauth-client-id-metadata-document §3). https with a path is accepted; http with
/// a path, or https with no path, is refused, each alone.
#[test]
fn a_client_metadata_document_url_must_be_https_and_have_a_path_each_alone() {
    use mcp_sansio::auth::ClientSettings;
    let with = |url: &str| {
        let mut c = ClientSettings::new("c", "http://127.0.0.1:9/cb");
        c.metadata_document_url = Some(url.into());
        c.validate()
    };
    assert_eq!(with("https://client.example/meta.json"), Ok(()));
    for url in [
        "http://client.example/meta.json",
        "https://client.example/",
        "https://client.example",
    ] {
        assert!(
            matches!(with(url), Err(AuthError::Config { .. })),
            "{url}: {:?}",
            with(url)
        );
    }
}
