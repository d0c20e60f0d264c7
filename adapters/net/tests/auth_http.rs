//! The guarded runner of authorization requests and the synchronous driver, against loopback
//! servers.

use mcp_sansio_test_support::auth_server;

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use auth_server::{AuthServer, Browser, Mode};
use mcp_sansio::auth::{
    AuthBudget, AuthConfig, AuthError, AuthExchange, AuthRequestId, ClientSettings, Purpose,
    UrlPolicy,
};
use mcp_sansio::{Endpoint, TransportErrorKind};
use mcp_sansio_net::auth::{calls_for_authorization, AuthHttp, Authorization, AuthorizeError};
use mcp_sansio_net::{client_config, AddressPolicy, StaticResolver};

fn loopback_http() -> AuthHttp {
    AuthHttp::with_policy(AddressPolicy::strict().allow_loopback(true))
}

fn get(url: &str) -> AuthExchange {
    let endpoint = Endpoint::parse(url).unwrap();
    AuthExchange {
        id: AuthRequestId(1),
        purpose: Purpose::ServerMetadata,
        url: url.into(),
        request: mcp_sansio::wire::Request {
            method: mcp_sansio::wire::Method::Get,
            authority: endpoint.authority().into(),
            path: endpoint.target().into(),
            headers: vec![("Accept".into(), "application/json".into())],
            body: Vec::new(),
        },
        endpoint,
        max_response_bytes: 100,
    }
}

/// A server that answers every connection with `answer`, written one byte per write.
fn raw_server(answer: &'static [u8]) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let acc = accepted.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { continue };
            acc.fetch_add(1, Ordering::SeqCst);
            let _ = tcp.set_nodelay(true);
            let mut head = Vec::new();
            let mut b = [0u8; 512];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match tcp.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&b[..n]),
                }
            }
            for byte in answer {
                if tcp.write_all(std::slice::from_ref(byte)).is_err() {
                    break;
                }
            }
        }
    });
    (port, accepted)
}

#[test]
fn a_response_written_one_byte_at_a_time_is_read_whole() {
    let (port, _) = raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n",
    );
    let r = loopback_http()
        .send(&get(&format!("http://127.0.0.1:{port}/meta")))
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, br#"{"a":1}"#);
    assert!(r
        .headers
        .iter()
        .any(|(n, v)| n == "Content-Type" && v == b"application/json"));
}

#[test]
fn a_body_over_the_limit_is_cut_one_byte_past_it() {
    let (port, _) = raw_server(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    // A close-delimited body of 300 bytes from a second server.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let big = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut tcp, _) = listener.accept().unwrap();
        let mut b = [0u8; 512];
        let _ = tcp.read(&mut b);
        let mut answer = b"HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n".to_vec();
        answer.extend_from_slice(&[b'x'; 300]);
        let _ = tcp.write_all(&answer);
    });
    let r = loopback_http()
        .send(&get(&format!("http://127.0.0.1:{big}/meta")))
        .unwrap();
    assert_eq!(r.body.len(), 101);
    let r = loopback_http()
        .send(&get(&format!("http://127.0.0.1:{port}/meta")))
        .unwrap();
    assert_eq!((r.status, r.body.len()), (200, 0));
}

#[test]
fn a_redirect_is_handed_back_not_followed() {
    let (port, accepted) = raw_server(
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n",
    );
    let r = loopback_http()
        .send(&get(&format!("http://127.0.0.1:{port}/token")))
        .unwrap();
    assert_eq!(r.status, 307);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[test]
fn a_name_that_resolves_to_a_refused_address_is_never_dialled() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let resolver = StaticResolver::new().with("as.example", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]);
    let http = AuthHttp::new(AddressPolicy::strict(), Arc::new(resolver), client_config());
    let e = http
        .send(&get(&format!("http://as.example:{port}/meta")))
        .unwrap_err();
    assert_eq!(e.kind, TransportErrorKind::AddressRefused);
    assert!(listener.accept().is_err(), "a socket was opened");
}

#[test]
fn an_exchange_that_never_ends_fails_at_its_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(1).collect();
        std::thread::sleep(Duration::from_secs(5));
        drop(held);
    });
    let start = Instant::now();
    let e = loopback_http()
        .timeout(Duration::from_millis(300))
        .send(&get(&format!("http://127.0.0.1:{port}/meta")))
        .unwrap_err();
    assert_eq!(e.kind, TransportErrorKind::Io);
    assert!(start.elapsed() < Duration::from_secs(3));
}

fn config(server: &AuthServer) -> AuthConfig {
    let mut c = AuthConfig::new(
        server.url(),
        ClientSettings::new("tests", "http://127.0.0.1:9/callback"),
    );
    c.policy = UrlPolicy {
        allow_loopback_http: true,
    };
    c
}

fn challenge(server: &AuthServer) -> String {
    format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        server.base()
    )
}

#[test]
fn an_authorization_runs_to_a_token_and_saves_it() {
    let server = AuthServer::start(Mode::Normal);
    let browser = Browser::new(loopback_http());
    let (opened, saved) = (browser.opened.clone(), browser.saved.clone());
    let mut auth = Authorization::new(config(&server), loopback_http(), Box::new(browser)).unwrap();
    assert_eq!(auth.bearer(), None);
    auth.authorize(401, Some(&challenge(&server))).unwrap();
    assert_eq!(auth.bearer(), Some("tok-1"));
    // The token goes into a session's configuration with the grant that obtained it: both
    // are its authorization context, the key prefix of what the client stores.
    let mut session = mcp_sansio::Config::new(&server.url()).unwrap();
    auth.present(&mut session);
    assert_eq!(session.bearer_token, "tok-1");
    let grant = session.grant.clone().expect("the grant identity");
    assert_eq!(grant, config(&server).grant_identity());
    assert_eq!(grant.client_id, "tests");
    assert_ne!(
        mcp_sansio::AuthContext::of(&session),
        mcp_sansio::AuthContext::of(&session.clone().with_grant(None))
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert_eq!(server.count("POST", "/register"), 1);
    assert!(!server.bearer_leaked_to_authorization_server());
    let store = saved.lock().unwrap().clone().expect("saved");
    // A new authorization starts from the saved store.
    let mut again = Browser::new(loopback_http());
    again.stored = Some(store.clone());
    let auth = Authorization::new(config(&server), loopback_http(), Box::new(again)).unwrap();
    assert_eq!(auth.bearer(), Some("tok-1"));
    assert!(
        !auth.token_expired(),
        "expiry is on the wall clock, an hour away"
    );

    // Expired in the store: refreshed (and rotated) without the user agent.
    let mut expired = store;
    for bound in expired.resources.values_mut() {
        bound.tokens.expires_at_ms = Some(1);
    }
    let mut third = Browser::new(loopback_http());
    third.stored = Some(expired);
    let opened_third = third.opened.clone();
    let mut auth = Authorization::new(config(&server), loopback_http(), Box::new(third)).unwrap();
    assert!(auth.token_expired());
    auth.refresh().unwrap();
    assert_eq!(auth.bearer(), Some("tok-2"));
    assert!(!auth.token_expired());
    assert_eq!(opened_third.load(Ordering::SeqCst), 0);
    assert_eq!(server.count("GET", "/authorize"), 1);
    assert_eq!(server.count("POST", "/token"), 2);
}

#[test]
fn a_307_on_the_token_request_fails_the_authorization() {
    let server = AuthServer::start(Mode::TokenRedirect);
    let mut auth = Authorization::new(
        config(&server),
        loopback_http(),
        Box::new(Browser::new(loopback_http())),
    )
    .unwrap();
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    assert!(
        matches!(
            e,
            AuthorizeError::Auth(AuthError::Redirect {
                purpose: Purpose::Token,
                status: 307
            })
        ),
        "{e:?}"
    );
    assert_eq!(server.count("POST", "/elsewhere"), 0);
    assert_eq!(auth.bearer(), None);
}

#[test]
fn oversized_metadata_fails_on_the_body_budget() {
    let server = AuthServer::start(Mode::HugeMetadata);
    let mut auth = Authorization::new(
        config(&server),
        loopback_http(),
        Box::new(Browser::new(loopback_http())),
    )
    .unwrap();
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    assert!(
        matches!(
            e,
            AuthorizeError::Auth(AuthError::Budget {
                budget: AuthBudget::BodyBytes,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn a_resource_metadata_url_on_a_refused_address_is_refused_before_any_socket() {
    let server = AuthServer::start(Mode::Normal);
    let strict = AuthHttp::with_policy(AddressPolicy::strict());
    let mut auth = Authorization::new(
        config(&server),
        strict.clone(),
        Box::new(Browser::new(strict)),
    )
    .unwrap();
    let before = server.accepted.load(Ordering::SeqCst);
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    match e {
        AuthorizeError::Auth(AuthError::Transport { source, .. }) => {
            assert_eq!(source.kind, TransportErrorKind::AddressRefused)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.accepted.load(Ordering::SeqCst), before);
}

#[test]
fn a_failing_user_agent_abandons_the_authorization() {
    let server = AuthServer::start(Mode::Normal);
    let mut browser = Browser::new(loopback_http());
    browser.refuse = true;
    let mut auth = Authorization::new(config(&server), loopback_http(), Box::new(browser)).unwrap();
    let e = auth.authorize(401, Some(&challenge(&server))).unwrap_err();
    assert_eq!(
        e,
        AuthorizeError::UserAgent("the user closed the window".into())
    );
    assert!(!auth.authorizer().is_busy());
    assert_eq!(server.count("POST", "/token"), 0);
}

#[test]
fn only_401_and_403_insufficient_scope_call_for_authorization() {
    assert!(calls_for_authorization(401, None));
    assert!(calls_for_authorization(401, Some("Basic realm=x")));
    assert!(calls_for_authorization(
        403,
        Some(r#"Bearer error="insufficient_scope", scope="a b""#)
    ));
    assert!(!calls_for_authorization(
        403,
        Some(r#"Bearer error="invalid_token""#)
    ));
    assert!(!calls_for_authorization(403, None));
    assert!(!calls_for_authorization(
        403,
        Some("Bearer error=\"insufficient_scope")
    ));
    assert!(!calls_for_authorization(500, None));
}

/// A sink that keeps the text of each session in memory.
#[derive(Default)]
struct MemorySink {
    text: std::sync::Mutex<String>,
    finished: AtomicUsize,
}

impl mcp_sansio_transcript::TranscriptSink for MemorySink {
    fn write(&self, session: u64, text: &str) {
        assert_eq!(session, 7);
        self.text.lock().unwrap().push_str(text);
    }

    fn finish(&self, _session: u64) {
        self.finished.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_recorded_authorization_holds_no_secret_and_replays() {
    use mcp_sansio_transcript::{replay_auth, AuthRecord, AuthTranscript};
    let server = AuthServer::start(Mode::Normal);
    let sink = Arc::new(MemorySink::default());
    let browser = Browser::new(loopback_http());
    let mut auth = Authorization::new(config(&server), loopback_http(), Box::new(browser))
        .unwrap()
        .record_to(sink.clone(), 7, "a test");
    auth.authorize(401, Some(&challenge(&server))).unwrap();
    assert_eq!(auth.bearer(), Some("tok-1"));
    auth.accepted();
    // Written after the authorization, before the end of the recording.
    let text = sink.text.lock().unwrap().clone();
    assert!(text.contains("\"access_token\":\"<redacted>\""), "{text}");
    drop(auth);
    assert_eq!(sink.finished.load(Ordering::SeqCst), 1);
    let text = sink.text.lock().unwrap().clone();
    for secret in ["tok-1", "rt-for-", "code_verifier=", "Bearer tok"] {
        if secret == "code_verifier=" {
            assert!(text.contains("code_verifier=<redacted>"), "{text}");
        } else {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    let t = AuthTranscript::parse(&text).unwrap();
    assert_eq!(t.comments, ["a test"]);
    assert!(t.entries.iter().any(
        |e| matches!(&e.record, AuthRecord::Callback(q) if q.contains("state=<pending-state>"))
    ));
    assert!(t
        .entries
        .iter()
        .any(|e| matches!(e.record, AuthRecord::Accepted)));
    let r = replay_auth(&t).unwrap();
    r.check(&t).unwrap();
    assert!(r.has_bearer);
    assert!(r.sends.len() >= 4, "{}", r.sends.len());
}

#[test]
fn a_refused_challenge_is_recorded_as_refused() {
    use mcp_sansio_transcript::{replay_auth, AuthTranscript};
    let server = AuthServer::start(Mode::Normal);
    let sink = Arc::new(MemorySink::default());
    let browser = Browser::new(loopback_http());
    let mut auth = Authorization::new(config(&server), loopback_http(), Box::new(browser))
        .unwrap()
        .record_to(sink.clone(), 7, "refused");
    assert!(auth
        .authorize(403, Some("Bearer error=\"invalid_token\""))
        .is_err());
    drop(auth);
    let t = AuthTranscript::parse(&sink.text.lock().unwrap()).unwrap();
    assert!(t.outcome()[0].get("refused").is_some(), "{:?}", t.outcome());
    assert!(t.sends().is_empty());
    replay_auth(&t).unwrap().check(&t).unwrap();
}
