//! Every core type that can hold a credential prints without it: each is formatted with `{:?}`
//! (and `{:#?}`) holding a planted secret — a bearer token, a DPoP token and proof, a refresh
//! token, a client secret, a cookie, the `state` and code challenge of an authorization URL —
//! and the secret must not appear.
//!
//! RFC 6750 §5.3: "Don't store bearer tokens in cookies [...] Issue short-lived bearer tokens
//! [...] Don't pass bearer tokens in page URLs"; RFC 6749 §10.3: "Access token credentials (as
//! well as any confidential access token attributes) MUST be kept confidential in transit and
//! storage". A `Debug` output ends up in logs and panic messages: it is such a storage.

use mcp_sansio::auth::{
    AuthConfig, AuthEvent, AuthExchange, AuthRequestId, AuthResponse, AuthSecrets, Authorizer,
    ClientCredentials, ClientSettings, IssuerPin, PreRegistered, Purpose, TokenAuthMethod,
};
use mcp_sansio::h2::{H2Config, StreamEvent, StreamId};
use mcp_sansio::internals::h2::hpack::Header;
use mcp_sansio::mux::H2Socket;
use mcp_sansio::wire::{Method, Request, ResponseHead};
use mcp_sansio::{Config, Connection, Instant};

const BEARER: &str = "bearer-SECRET-0001";
const DPOP_TOKEN: &str = "dpop-SECRET-0002";
const DPOP_PROOF: &str = "eyJproof.SECRET-0003";
const COOKIE: &str = "sid=cookie-SECRET-0004";
const PROXY: &str = "proxy-SECRET-0005";
const ACCESS: &str = "access-SECRET-0006";
const REFRESH: &str = "refresh-SECRET-0007";
const API_KEY: &str = "apikey-SECRET-0008";
const CLIENT_SECRET: &str = "client-SECRET-0009";

/// `value`'s `Debug` output, plain and pretty, holds none of `secrets`; and it says what it
/// is (`name`), so that an empty output cannot pass.
fn no_secret(name: &str, value: &impl std::fmt::Debug, secrets: &[&str]) {
    for text in [format!("{value:?}"), format!("{value:#?}")] {
        assert!(text.contains(name), "{name} not in {text}");
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
}

fn request() -> Request {
    Request {
        method: Method::Post,
        authority: "mcp.example.com".into(),
        path: format!("/mcp?api_key={API_KEY}&x=1"),
        headers: vec![
            ("Authorization".into(), format!("DPoP {DPOP_TOKEN}")),
            ("DPoP".into(), DPOP_PROOF.into()),
            ("Cookie".into(), COOKIE.into()),
            ("Proxy-Authorization".into(), format!("Basic {PROXY}")),
            ("content-type".into(), "application/json".into()),
        ],
        body: format!(r#"{{"refresh_token":"{REFRESH}"}}"#).into_bytes(),
    }
}

fn config() -> Config {
    Config::new(&format!("https://mcp.example.com/mcp?api_key={API_KEY}"))
        .unwrap()
        .with_bearer_token(BEARER)
}

#[test]
fn a_request_redacts_its_credentials_and_shows_its_body_length() {
    let r = request();
    no_secret(
        "Request",
        &r,
        &[DPOP_TOKEN, DPOP_PROOF, COOKIE, PROXY, REFRESH, API_KEY],
    );
    let text = format!("{r:?}");
    // What is not a secret is still shown: the schemes, a plain header, the body's length.
    assert!(text.contains("DPoP <redacted>"), "{text}");
    assert!(text.contains("Basic <redacted>"), "{text}");
    assert!(text.contains("application/json"), "{text}");
    assert!(
        text.contains(&format!("body_len: {}", r.body.len())),
        "{text}"
    );
}

#[test]
fn a_config_never_shows_its_bearer_token() {
    let c = config();
    no_secret("Config", &c, &[BEARER, API_KEY]);
    assert!(format!("{c:?}").contains("mcp.example.com"));
}

/// An MCP server's URL may carry a key in its query; the endpoint's Debug hides it.
#[test]
fn an_endpoint_redacts_the_secrets_of_its_query() {
    let e = mcp_sansio::Endpoint::parse(&format!(
        "https://mcp.example.com/mcp?api_key={API_KEY}&page=2"
    ))
    .unwrap();
    assert!(e.target().contains(API_KEY));
    no_secret("Endpoint", &e, &[API_KEY]);
    assert!(format!("{e:?}").contains("page=2"));
}

#[test]
fn a_connection_and_its_transmits_never_show_the_bearer_token() {
    let mut conn = Connection::new(config()).unwrap();
    conn.connect(Instant::ZERO);
    no_secret("Connection", &conn, &[BEARER, API_KEY]);
    let t = conn
        .poll_transmit()
        .expect("the connection sends its first request");
    // The request as sent does carry the token...
    assert!(t
        .request
        .headers
        .iter()
        .any(|(n, v)| n.eq_ignore_ascii_case("authorization") && v.contains(BEARER)));
    // ...its Debug does not.
    no_secret("Transmit", &t, &[BEARER, API_KEY]);
}

/// `s`'s octets as Debug lists them, without the brackets: `1, 2, 3`.
fn octets(s: &str) -> String {
    let list = format!("{:?}", s.as_bytes());
    list.trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned()
}

/// The request went out in `written` with its token.
fn assert_went_out_with_the_token(written: &[u8]) {
    assert!(
        written
            .windows(BEARER.len())
            .any(|w| w == BEARER.as_bytes()),
        "the request went out with its token"
    );
}

#[test]
fn an_h2_socket_never_shows_the_credentials_of_its_work_items() {
    let mut socket = H2Socket::new(Instant::ZERO, H2Config::default(), "https");
    let mut conn = Connection::new(config()).unwrap();
    conn.connect(Instant::ZERO);
    socket.add(conn);
    // The socket takes the request and opens its stream: its HEADERS (the token an HPACK
    // literal) are queued, not yet taken.
    assert!(socket.poll_fresh().is_none());
    no_secret("H2Socket", &socket, &[BEARER, API_KEY]);
    // Not even as a list of octets.
    no_secret("H2Socket", &socket, &[&octets(BEARER)]);
    let mut written = Vec::new();
    while let Some(bytes) = socket.poll_transmit(Instant::ZERO) {
        written.extend(bytes);
    }
    assert_went_out_with_the_token(&written);
}

/// An HTTP/2 connection with a stream just opened holds its HEADERS (the token an HPACK literal)
/// and its body, queued for the socket: its Debug shows neither.
#[test]
fn an_h2_connection_never_shows_the_octets_it_queued() {
    use mcp_sansio::h2::ClientConnection;
    use mcp_sansio::Scheme;
    let mut c = ClientConnection::new(Instant::ZERO, H2Config::default());
    let mut r = request();
    r.headers[0].1 = format!("Bearer {BEARER}");
    c.open_stream(Scheme::Https, &r, 1 << 20).unwrap();
    no_secret(
        "ClientConnection",
        &c,
        &[
            BEARER,
            &octets(BEARER),
            REFRESH,
            &octets(REFRESH),
            DPOP_PROOF,
        ],
    );
    let mut written = Vec::new();
    while let Some(bytes) = c.poll_transmit() {
        written.extend(bytes);
    }
    assert_went_out_with_the_token(&written);
}

/// A HEADERS frame's fragment (HPACK, here a literal `authorization`) and a DATA frame's
/// payload are shown by their length.
#[test]
fn a_frame_shows_its_header_block_and_data_by_length() {
    use mcp_sansio::internals::h2::frame::Frame;
    use mcp_sansio::internals::h2::hpack::Encoder;
    let auth = format!("Bearer {BEARER}");
    let mut fragment = Vec::new();
    Encoder::new().encode([(&b"authorization"[..], auth.as_bytes())], &mut fragment);
    let headers = Frame::Headers {
        stream_id: 1,
        end_stream: false,
        end_headers: true,
        priority: None,
        fragment: fragment.clone(),
        pad_len: None,
    };
    let octets = format!("{:?}", BEARER.as_bytes());
    let octets = octets.trim_start_matches('[').trim_end_matches(']');
    no_secret("Headers", &headers, &[BEARER, octets]);
    assert!(format!("{headers:?}").contains(&format!("<{} octets>", fragment.len())));
    let data = Frame::Data {
        stream_id: 1,
        end_stream: true,
        data: format!(r#"{{"refresh_token":"{REFRESH}"}}"#).into_bytes(),
        pad_len: None,
    };
    let octets = format!("{:?}", REFRESH.as_bytes());
    let octets = octets.trim_start_matches('[').trim_end_matches(']');
    no_secret("Data", &data, &[REFRESH, octets]);
}

#[test]
fn response_heads_and_header_fields_redact_cookies() {
    let set_cookie = format!("{COOKIE}; HttpOnly");
    let head = ResponseHead {
        status: 200,
        headers: vec![
            ("Set-Cookie".into(), set_cookie.clone().into_bytes()),
            ("content-type".into(), b"application/json".to_vec()),
        ],
        content_length: None,
        close_delimited: false,
    };
    no_secret("ResponseHead", &head, &[COOKIE]);
    let header = Header {
        name: b"set-cookie".to_vec(),
        value: set_cookie.clone().into_bytes(),
        never_indexed: false,
    };
    no_secret("Header", &header, &[COOKIE]);
    let auth = Header {
        name: b"authorization".to_vec(),
        value: format!("Bearer {BEARER}").into_bytes(),
        never_indexed: true,
    };
    no_secret("Header", &auth, &[BEARER]);
    let event = StreamEvent::Head {
        stream: StreamId(1),
        status: 200,
        headers: vec![header],
        raw: 0,
    };
    no_secret("Head", &event, &[COOKIE]);
}

#[test]
fn an_http1_response_head_redacts_its_cookies() {
    use mcp_sansio::http1::{ResponseDecoder, ResponseEvent, ResponseLimits};
    let bytes = format!("HTTP/1.1 200 OK\r\nSet-Cookie: {COOKIE}\r\nContent-Length: 0\r\n\r\n");
    let mut d = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = mcp_sansio::ByteLedger::new(1 << 20);
    let mut input = bytes.as_bytes();
    let mut head = None;
    loop {
        let step = d.decode(input, &mut ledger).unwrap();
        input = &input[step.consumed..];
        match step.event {
            Some(ResponseEvent::Head(h)) => head = Some(h),
            Some(ResponseEvent::End { .. }) | None => break,
            Some(_) => {}
        }
    }
    let head = head.expect("a head");
    assert!(head
        .header_str("set-cookie")
        .is_some_and(|v| v.contains(COOKIE)));
    no_secret("ResponseHead", &head, &[COOKIE]);
}

/// RFC 6749 §5.1: the token response's body holds `access_token` and `refresh_token`.
#[test]
fn an_auth_response_shows_its_body_length_only() {
    let body = format!(
        r#"{{"access_token":"{ACCESS}","token_type":"Bearer","refresh_token":"{REFRESH}"}}"#
    );
    let mut r = AuthResponse::new(200, body.clone());
    r.headers
        .push(("Set-Cookie".into(), COOKIE.as_bytes().to_vec()));
    no_secret("AuthResponse", &r, &[ACCESS, REFRESH, COOKIE]);
    assert!(format!("{r:?}").contains(&format!("body_len: {}", body.len())));
}

/// An authorization's request is the crate's one request type with its id and URL: its
/// `Debug` output hides what [`Request`] hides, and the secrets of the URL's query too (RFC
/// 6750 §5.3: "Don't pass bearer tokens in page URLs"; a URL a server names may carry one).
#[test]
fn an_auth_exchange_redacts_its_url_request_and_body() {
    let url = format!("https://mcp.example.com/mcp?api_key={API_KEY}&x=1");
    let exchange = AuthExchange {
        id: AuthRequestId(7),
        purpose: Purpose::Token,
        endpoint: mcp_sansio::Endpoint::parse(&url).unwrap(),
        url,
        request: request(),
        max_response_bytes: 10,
    };
    no_secret(
        "AuthExchange",
        &exchange,
        &[API_KEY, DPOP_TOKEN, DPOP_PROOF, COOKIE, PROXY, REFRESH],
    );
    assert!(format!("{exchange:?}").contains("mcp.example.com/mcp"));
}

/// RFC 6749 §10.12 and RFC 7636 §4.4: `state` and the PKCE values bind the callback to this
/// client; the URL the user agent opens carries them.
#[test]
fn the_user_agent_event_redacts_state_and_code_challenge() {
    let mut client = ClientSettings::new("c", "http://127.0.0.1:9/cb");
    client.pre_registered.push(PreRegistered {
        issuer: IssuerPin::Exactly("https://auth.example".into()),
        credentials: ClientCredentials {
            client_id: "pre-id".into(),
            client_secret: Some(CLIENT_SECRET.into()),
            auth_method: TokenAuthMethod::ClientSecretPost,
        },
    });
    let mut az = Authorizer::new(AuthConfig::new("https://mcp.example/mcp", client)).unwrap();
    let secrets = AuthSecrets::from_random_bytes(&[7; 64]);
    let state = secrets.state().to_owned();
    let verifier = secrets.verifier().to_owned();
    az.handle_challenge(Instant::ZERO, 401, &[], secrets)
        .unwrap();
    let prm = br#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://auth.example"]}"#;
    let meta = br#"{"issuer":"https://auth.example","authorization_endpoint":"https://auth.example/a","token_endpoint":"https://auth.example/t","code_challenge_methods_supported":["S256"],"client_id_metadata_document_supported":true}"#;
    for body in [&prm[..], &meta[..]] {
        let req = az.poll_request().unwrap();
        az.handle_response(Instant::ZERO, req.id, AuthResponse::new(200, body));
    }
    let event = az.poll_event().expect("an event");
    let AuthEvent::OpenUserAgent { url, .. } = &event else {
        panic!("{event:?}");
    };
    // The URL itself carries them; the event's Debug does not.
    assert!(url.contains(&state), "{url}");
    let challenge = url
        .split(['?', '&'])
        .find_map(|p| p.strip_prefix("code_challenge="))
        .expect("a code challenge")
        .to_owned();
    no_secret(
        "OpenUserAgent",
        &event,
        &[&state, &verifier, &challenge, CLIENT_SECRET],
    );
    assert!(format!("{event:?}").contains("https://auth.example/a"));
}

/// `value`'s `Debug` output shows `secret` neither as text nor as a list of its octets.
fn no_octets(name: &str, value: &impl std::fmt::Debug, secret: &str) {
    no_secret(name, value, &[secret]);
    let octets = format!("{:?}", &secret.as_bytes()[..6]);
    let octets = octets.trim_start_matches('[').trim_end_matches(']');
    for text in [format!("{value:?}"), format!("{value:#?}")] {
        assert!(!text.contains(octets), "the octets of {secret} in {text}");
    }
}

/// A response decoder holding part of a head (a `Set-Cookie` line the server sent, RFC 6265
/// §4.1) shows what it buffers by length only; so does the HTTP/1.1 socket that runs it.
#[test]
fn a_decoder_holding_part_of_a_head_shows_it_by_length_only() {
    use mcp_sansio::http1::{ResponseDecoder, ResponseLimits};
    let partial = format!("HTTP/1.1 200 OK\r\nSet-Cookie: {COOKIE}\r\nContent-Le");
    let mut d = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = mcp_sansio::ByteLedger::new(1 << 20);
    let step = d.decode(partial.as_bytes(), &mut ledger).unwrap();
    assert!(step.event.is_none(), "the head is not complete yet");
    no_octets("ResponseDecoder", &d, COOKIE);
    assert!(format!("{d:?}").contains(&format!("buffered: {}", partial.len())));

    let mut conn = Connection::new(config()).unwrap();
    let mut socket = mcp_sansio::socket::Http1Socket::new();
    conn.connect(Instant::ZERO);
    let t = conn.poll_transmit().expect("the first request");
    socket.handle_bytes(&mut conn, Instant::ZERO, t.exchange, partial.as_bytes());
    no_octets("Http1Socket", &socket, COOKIE);
}

/// RFC 7541 §2.3.2: a field decoded with incremental indexing stays in the decoder's dynamic
/// table; the decoder shows its table, and octets of an unfinished block, by size only.
#[test]
fn an_hpack_decoder_shows_its_table_by_size_only() {
    use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder};
    let (name, value) = (b"set-cookie".as_slice(), COOKIE.as_bytes());
    // Literal with incremental indexing, new name (0x40), neither string Huffman-coded.
    let mut block = vec![0x40, name.len() as u8];
    block.extend_from_slice(name);
    block.push(value.len() as u8);
    block.extend_from_slice(value);
    let mut d = Decoder::new(DecodeLimits::default());
    let fields = d.decode_block(&block).unwrap();
    assert_eq!(fields.len(), 1, "the field is decoded");
    no_octets("Decoder", &d, COOKIE);
    // The same field again, cut before its end: the unfinished octets are held.
    d.feed(&block[..block.len() - 2]).unwrap();
    no_octets("Decoder", &d, COOKIE);
}
