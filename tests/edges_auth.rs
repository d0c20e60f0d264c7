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

use mcp_sansio::auth::form::{parse_query, QueryError};
use mcp_sansio::auth::{
    parse_challenges, AuthConfig, AuthSecrets, Authorizer, ChallengeError, ClientAuth,
    ClientCredentials, ClientSettings, Grant, IdentityProvider, IssuerPin, PendingAuthorization,
    TokenAuthMethod,
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
    let eight = vec!["Basic"; 8].join(", ");
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
