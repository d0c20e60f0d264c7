//! DPoP on MCP requests (RFC 9449 §4.2, §7, §9): with a [`Config::dpop`] binding, every
//! request carries `Authorization: DPoP <token>` (never `Bearer`) and a fresh proof, checked here
//! against the RFC's rules by an oracle of the test's own: header `typ` `dpop+jwt`, `alg`
//! `ES256`, the public `jwk` (no private member); claims `jti` unique per request, `htm` the
//! request's method, `htu` the endpoint without query, `iat` on the wall clock, `ath` =
//! base64url(SHA-256(token)), `nonce` once the server gave one; the signature verified with
//! ring's verifier on the public key. A `401` with `DPoP error="use_dpop_nonce"` and a
//! `DPoP-Nonce` is answered by one more request with that nonce; asked again, the request fails
//! with a typed authentication error. Over HTTP/1.1 (whole and byte by byte) and HTTP/2.

mod support;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use mcp_sansio::auth::{AuthError, DpopBinding, DpopKey, JwsAlgorithm, JwtSigner, SignError};
use mcp_sansio::{Config, Error, ErrorKind, Event, Instant};
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, UnparsedPublicKey};
use serde_json::Value;
use support::*;

const TOKEN: &str = "at-Zq9.bound-to-the-key";
const SEED: &str = "seed-for-the-jtis";
/// The wall-clock time at the connection's instant zero.
const WALL_AT_ZERO: u64 = 1_800_000_000;
const URL: &str = "http://127.0.0.1:9/mcp?tenant=7";
const HTU: &str = "http://127.0.0.1:9/mcp";

/// An ES256 signer on ring, written here (not the adapters' one).
struct TestKey {
    pair: EcdsaKeyPair,
}

impl TestKey {
    fn new() -> TestKey {
        let rng = ring::rand::SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        TestKey {
            pair: EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap(),
        }
    }

    fn public(&self) -> Vec<u8> {
        self.pair.public_key().as_ref().to_vec()
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64(s: &str) -> Vec<u8> {
    assert!(!s.contains(['=', '+', '/']), "not unpadded base64url: {s}");
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .unwrap()
}

impl JwtSigner for TestKey {
    fn algorithm(&self) -> JwsAlgorithm {
        JwsAlgorithm::ES256
    }

    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, SignError> {
        let rng = ring::rand::SystemRandom::new();
        self.pair
            .sign(&rng, input)
            .map(|s| s.as_ref().to_vec())
            .map_err(|_| SignError {
                reason: "ring".into(),
            })
    }

    fn public_jwk(&self) -> Option<Value> {
        let p = self.public();
        Some(serde_json::json!({
            "kty": "EC", "crv": "P-256", "x": b64(&p[1..33]), "y": b64(&p[33..65]),
        }))
    }
}

fn binding(key: Arc<TestKey>) -> DpopBinding {
    let mut b = DpopBinding::new(TOKEN, DpopKey(key), SEED);
    b.unix_at_zero = Duration::from_secs(WALL_AT_ZERO);
    b
}

fn config(key: Arc<TestKey>) -> Config {
    Config::new(URL).unwrap().with_dpop(binding(key))
}

/// The RFC 9449 §4.2/§4.3 checks of a proof sent with `method` at `now` for `TOKEN`, and its
/// claims. Written from the RFC: nothing of the crate's proof code is used.
fn check_proof(proof: &str, public: &[u8], method: &str, now: Instant) -> Value {
    let parts: Vec<&str> = proof.split('.').collect();
    assert_eq!(parts.len(), 3, "a compact JWS: {proof}");
    let header: Value = serde_json::from_slice(&unb64(parts[0])).unwrap();
    let claims: Value = serde_json::from_slice(&unb64(parts[1])).unwrap();
    assert_eq!(header["typ"], "dpop+jwt");
    assert_eq!(header["alg"], "ES256");
    let jwk = &header["jwk"];
    assert_eq!(jwk["kty"], "EC");
    assert_eq!(jwk["crv"], "P-256");
    assert!(jwk.get("d").is_none(), "no private member in the jwk");
    let mut point = vec![4u8];
    point.extend(unb64(jwk["x"].as_str().unwrap()));
    point.extend(unb64(jwk["y"].as_str().unwrap()));
    assert_eq!(point, public, "the header's jwk is the signing key");
    let input = format!("{}.{}", parts[0], parts[1]);
    let sig = unb64(parts[2]);
    assert_eq!(sig.len(), 64, "ES256 signature is r || s");
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
        .verify(input.as_bytes(), &sig)
        .expect("the proof's signature verifies");
    assert_eq!(claims["htm"], method);
    assert_eq!(claims["htu"], HTU, "htu without query or fragment");
    assert_eq!(
        claims["iat"].as_u64(),
        Some(WALL_AT_ZERO + now.as_duration().as_secs())
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, TOKEN.as_bytes());
    assert_eq!(claims["ath"].as_str(), Some(b64(digest.as_ref()).as_str()));
    let jti = claims["jti"].as_str().expect("a jti");
    assert!(jti.len() >= 16, "a jti with enough entropy: {jti}");
    claims
}

/// The `Authorization` field of a request carrying the bound token.
fn check_authorization(value: Option<&str>) {
    assert_eq!(value, Some(format!("DPoP {TOKEN}").as_str()));
}

#[test]
fn every_http1_request_carries_the_token_as_dpop_with_a_fresh_signed_proof() {
    for split in [Split::Whole, Split::Bytes] {
        let key = Arc::new(TestKey::new());
        let public = key.public();
        let mut h = Harness::new(config(key), split);
        h.connect();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
        assert!(matches!(h.single_event(), Event::Connected { .. }));
        h.advance(Duration::from_secs(7));
        h.list();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
        );
        h.advance(Duration::from_secs(5));
        h.call("echo", "{}");
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert_eq!(h.sent.len(), 3);
        let mut jtis = Vec::new();
        for (r, at) in h.sent.iter().zip([0, 7, 12]) {
            check_authorization(r.header("authorization"));
            assert!(!r.headers.iter().any(|(_, v)| v.contains("Bearer")));
            let proof = r.header("dpop").expect("a DPoP proof on every request");
            let now = Instant::from_duration(Duration::from_secs(at));
            let claims = check_proof(proof, &public, &r.method, now);
            assert!(
                claims.get("nonce").is_none(),
                "no nonce before one is given"
            );
            jtis.push(claims["jti"].as_str().unwrap().to_owned());
        }
        jtis.sort();
        jtis.dedup();
        assert_eq!(jtis.len(), 3, "a fresh jti per request");
    }
}

fn nonce_401(nonce: &str) -> Vec<u8> {
    let challenge = r#"DPoP error="use_dpop_nonce", error_description="nonce required""#;
    json_response_with(
        401,
        &[("www-authenticate", challenge), ("dpop-nonce", nonce)],
        r#"{"error":"use_dpop_nonce"}"#,
    )
}

#[test]
fn a_use_dpop_nonce_answer_is_retried_once_with_the_nonce_which_later_proofs_keep() {
    for split in [Split::Whole, Split::Bytes] {
        let key = Arc::new(TestKey::new());
        let public = key.public();
        let mut h = Harness::new(config(key), split);
        h.connect();
        let first = h.next();
        h.feed(first.exchange, &nonce_401("n-1"));
        let again = h.next();
        // The same request sent once more, under a new id: the server refused the first one,
        // and no request is sent twice with one id.
        let (mut a, mut b) = (again.json(), first.json());
        assert_ne!(a["id"], b["id"], "a re-send carries a new id");
        a["id"] = Value::Null;
        b["id"] = Value::Null;
        assert_eq!(a, b, "the same request, sent once more");
        let claims = check_proof(again.header("dpop").unwrap(), &public, "POST", h.now);
        assert_eq!(claims["nonce"], "n-1");
        let first_claims = check_proof(first.header("dpop").unwrap(), &public, "POST", h.now);
        assert_ne!(
            claims["jti"], first_claims["jti"],
            "a new proof, not a replay"
        );
        // A nonce given with a success replaces the one kept.
        h.feed(
            again.exchange,
            &json_response_with(
                200,
                &[("dpop-nonce", "n-2")],
                &result_msg(again.rpc_id(), DISCOVER_OK),
            ),
        );
        assert!(matches!(h.single_event(), Event::Connected { .. }));
        h.list();
        let r = h.next();
        let claims = check_proof(r.header("dpop").unwrap(), &public, "POST", h.now);
        assert_eq!(claims["nonce"], "n-2");
        // Every request has its own retry: this one too is sent once more.
        h.feed(r.exchange, &nonce_401("n-3"));
        let r = h.next();
        let claims = check_proof(r.header("dpop").unwrap(), &public, "POST", h.now);
        assert_eq!(claims["nonce"], "n-3");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
        );
        assert!(matches!(h.single_event(), Event::ToolsListed(_)));
        assert_eq!(h.sent.len(), 4);
    }
}

#[test]
fn a_server_asking_for_a_nonce_forever_gets_one_retry_then_a_typed_authentication_error() {
    for split in [Split::Whole, Split::Bytes] {
        let mut h = Harness::new(config(Arc::new(TestKey::new())), split);
        h.connect();
        for n in 0..2 {
            let r = h.next();
            h.feed(r.exchange, &nonce_401(&format!("n-{n}")));
        }
        let Event::Failed { error, .. } = h.single_event() else {
            panic!("the operation fails");
        };
        assert!(
            matches!(error, Error::Auth(AuthError::DpopNonceRepeated)),
            "{error:?}"
        );
        assert_eq!(error.kind(), ErrorKind::AuthenticationFailed);
        assert!(!h.has_outstanding());
        assert_eq!(h.sent.len(), 2, "one retry, no more");
        let text = format!("{error} {error:?}");
        assert!(!text.contains(TOKEN));
    }
}

#[test]
fn a_nonce_challenge_without_a_nonce_or_in_another_scheme_is_not_retried() {
    let cases: [&[(&str, &str)]; 2] = [
        &[("www-authenticate", r#"DPoP error="use_dpop_nonce""#)],
        &[
            ("www-authenticate", r#"Bearer error="use_dpop_nonce""#),
            ("dpop-nonce", "n-1"),
        ],
    ];
    for headers in cases {
        let mut h = Harness::new(config(Arc::new(TestKey::new())), Split::Whole);
        h.connect();
        let r = h.next();
        h.feed(r.exchange, &json_response_with(401, headers, "{}"));
        let Event::Failed { error, .. } = h.single_event() else {
            panic!("the operation fails");
        };
        assert!(matches!(error, Error::Authentication { status: 401, .. }));
        assert_eq!(h.sent.len(), 1);
    }
}

#[test]
fn neither_the_token_nor_the_seed_shows_in_debug_and_a_bearer_with_dpop_is_refused() {
    let c = config(Arc::new(TestKey::new()));
    let text = format!("{c:?}");
    assert!(!text.contains(TOKEN) && !text.contains(SEED), "{text}");
    assert!(text.contains("DpopBinding"));
    let both = c.with_bearer_token("other");
    assert!(mcp_sansio::Connection::new(both).is_err());
}

mod http2 {
    use super::*;
    use mcp_sansio::h2::H2Config;
    use mcp_sansio::mux::H2Socket;
    use mcp_sansio::{Connection, Era, EraHint};
    use mcp_sansio_test_support::h2server::{drive, hello, result, H2Peer, SeenRequest, Split};

    const H2_URL: &str = "https://mcp.example.com:8443/mcp?tenant=7";
    const H2_HTU: &str = "https://mcp.example.com:8443/mcp";
    const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;

    fn proof_claims(r: &SeenRequest, public: &[u8]) -> Value {
        check_authorization(r.header("authorization"));
        let proof = r.header("dpop").expect("a DPoP proof");
        let parts: Vec<&str> = proof.split('.').collect();
        let input = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &unb64(parts[2]))
            .expect("the proof's signature verifies");
        let header: Value = serde_json::from_slice(&unb64(parts[0])).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        let claims: Value = serde_json::from_slice(&unb64(parts[1])).unwrap();
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], H2_HTU);
        let digest = ring::digest::digest(&ring::digest::SHA256, TOKEN.as_bytes());
        assert_eq!(claims["ath"].as_str(), Some(b64(digest.as_ref()).as_str()));
        claims
    }

    #[test]
    fn http2_requests_carry_dpop_proofs_and_a_nonce_challenge_is_retried_once() {
        for split in [Split::Whole, Split::Chunks(1)] {
            let key = Arc::new(TestKey::new());
            let public = key.public();
            let mut c = Config::new(H2_URL).unwrap().with_dpop(binding(key));
            c.era_hint = Some(EraHint {
                era: Era::Modern,
                version: "2026-07-28".into(),
            });
            let mut s = H2Socket::new(Instant::ZERO, H2Config::default(), "https");
            let w = s.add(Connection::new(c).unwrap());
            let mut peer = H2Peer::default();
            let mut now = Instant::ZERO;
            let conn = s.connection_mut(w).unwrap();
            conn.connect(now);
            conn.list_tools(now);
            let mut asked = false;
            let run = drive(
                &mut s,
                &mut peer,
                &mut now,
                split,
                hello(),
                Duration::from_secs(60),
                |peer, r| {
                    let claims = proof_claims(r, &public);
                    if !asked {
                        asked = true;
                        assert!(claims.get("nonce").is_none());
                        return peer.headers(
                            r.stream,
                            &[
                                (":status", "401"),
                                ("www-authenticate", r#"DPoP error="use_dpop_nonce""#),
                                ("dpop-nonce", "h2-nonce"),
                            ],
                            true,
                        );
                    }
                    assert_eq!(claims["nonce"], "h2-nonce");
                    peer.json(r.stream, &result(r.rpc_id(), TOOLS))
                },
            );
            assert!(run.socket_errors.is_empty());
            let listed = run
                .events
                .iter()
                .any(|(_, e)| matches!(e, Event::ToolsListed(_)));
            assert!(listed, "{:?}", run.summary());
            assert_eq!(peer.requests.len(), 2, "one retry");
            let jtis: Vec<Value> = peer
                .requests
                .iter()
                .map(|r| proof_claims(r, &public)["jti"].clone())
                .collect();
            assert_ne!(jtis[0], jtis[1]);
        }
    }
}

/// RFC 9449 §7.1: "the DPoP proof MUST be sent with every request that uses the DPoP-bound
/// access token" — the standalone `GET` stream of a legacy session with the input hook
/// included: its proof names `GET` as `htm`, and the answer it POSTs back has a proof of its own.
#[test]
fn the_standalone_get_of_a_hooked_legacy_session_carries_its_own_proof() {
    for split in [Split::Whole, Split::Bytes] {
        let key = Arc::new(TestKey::new());
        let public = key.public();
        let mut cfg = config(key);
        cfg.input_hook = true;
        cfg.era_hint = Some(mcp_sansio::EraHint {
            era: mcp_sansio::Era::Legacy,
            version: "2025-11-25".into(),
        });
        let mut h = Harness::new(cfg, split);
        h.connect();
        let r = h.next();
        assert_eq!(r.rpc_method(), "initialize");
        h.feed(
            r.exchange,
            &json_response_with(
                200,
                &[("mcp-session-id", "sess-1")],
                &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
            ),
        );
        let r = h.next();
        h.feed(r.exchange, &empty_response(202));
        let get = h.next();
        assert_eq!(get.method, "GET", "{split:?}");
        assert_eq!(get.header("accept"), Some("text/event-stream"));
        check_authorization(get.header("authorization"));
        let proof = get.header("dpop").expect("the GET carries a proof");
        check_proof(proof, &public, "GET", h.now);
        let mut jtis: Vec<String> = h
            .sent
            .iter()
            .map(|r| {
                let claims = check_proof(r.header("dpop").unwrap(), &public, &r.method, h.now);
                claims["jti"].as_str().unwrap().to_owned()
            })
            .collect();
        let n = jtis.len();
        jtis.sort();
        jtis.dedup();
        assert_eq!(jtis.len(), n, "a fresh jti per request, the GET's included");
    }
}
