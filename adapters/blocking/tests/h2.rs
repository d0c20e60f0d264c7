//! HTTP/2 through the blocking adapter, against the in-test HTTP/2 server on 127.0.0.1 (the
//! core's own frame codec and HPACK): ALPN `h2` over TLS, h2c with prior knowledge, the switch
//! that forces HTTP/1.1, one socket shared by every session of a client, and recorded HTTP/2
//! sessions (checks shared with the tokio adapter in `checks/adapter_tests/recording.rs`).

#[path = "../../net/tests/h2_server/mod.rs"]
mod h2_server;

#[allow(unused_macros)]
#[path = "../../../checks/adapter_tests/recording.rs"]
mod recording;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use h2_server::{config, is_goaway, Behaviour, Server};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::{Budget, TransportErrorKind};
use mcp_sansio_blocking::{AddressPolicy, Client};

/// A server configuration presenting a self-signed certificate for 127.0.0.1 (trusted as a root
/// by the client), offering `alpn`.
fn tls_server(
    alpn: &[&[u8]],
) -> (
    rustls::pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let der = ck.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .unwrap();
    server.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    (der, Arc::new(server))
}

fn loopback() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

/// A TLS server offering `h2`, a client trusting it, and the endpoint's URL.
fn tls_setup(b: Behaviour) -> (Server, Client, String) {
    let (ca, server_config) = tls_server(&[b"h2", b"http/1.1"]);
    let server = Server::start_with(Some(server_config), b);
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    (server, client, url)
}

#[test]
fn sessions_on_several_threads_share_one_socket_and_one_tls_handshake() {
    const N: usize = 6;
    let (server, client, url) = tls_setup(Behaviour::default());
    let threads: Vec<_> = (0..N)
        .map(|i| {
            let (client, url) = (client.clone(), url.clone());
            std::thread::spawn(move || {
                let mut session = client.connect(config(&url)).unwrap();
                assert_eq!(session.http_version(), "HTTP/2");
                assert_eq!(session.list_tools().unwrap().tools.len(), 1);
                let args = format!(r#"{{"i":{i}}}"#);
                let called = session.call_tool("echo", args.as_bytes()).unwrap();
                assert_eq!(called.content.len(), 1);
                session
            })
        })
        .collect();
    let sessions: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(client.h2_connections(), 1);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "one TCP connection, so one TLS handshake, for {N} sessions"
    );
    assert_eq!(server.methods().len(), 2 * N);
    let first = &server.requests.lock().unwrap()[0];
    assert_eq!(first.header(":scheme"), Some("https"));
    assert_eq!(first.header("host"), None, "no Host over HTTP/2");
    drop(sessions);
    assert_eq!(
        client.h2_connections(),
        1,
        "the last session leaves the socket idle for the next"
    );
}

#[test]
fn the_socket_stays_idle_for_the_next_session_and_the_client_closes_it_with_goaway() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut a = client.connect(config(&url)).unwrap();
    let b = client.connect(config(&url)).unwrap();
    assert_eq!(a.list_tools().unwrap().tools.len(), 1);
    a.close().unwrap();
    b.close().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the last session's close keeps the socket, idle"
    );
    assert_eq!(client.h2_connections(), 1);
    // The next session joins the idle socket: no second connection, no second handshake.
    let mut c = client.connect(config(&url)).unwrap();
    assert_eq!(c.list_tools().unwrap().tools.len(), 1);
    assert_eq!(c.http_version(), "HTTP/2");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    drop(c);
    drop(client);
    assert!(
        server.wait_for(|s| s.frames_on(1, is_goaway).len() == 1),
        "dropping the client writes GOAWAY"
    );
    let goaway = server.frames_on(1, is_goaway).remove(0);
    assert!(
        matches!(goaway, Frame::GoAway { reason, .. } if reason == Reason::NO_ERROR),
        "{goaway:?}"
    );
}

#[test]
fn a_goaway_moves_every_session_to_one_fresh_socket() {
    let (server, client, url) = tls_setup(Behaviour {
        goaway_first: true,
        ..Behaviour::default()
    });
    let mut sessions: Vec<_> = (0..3)
        .map(|_| client.connect(config(&url)).unwrap())
        .collect();
    assert_eq!(sessions[0].list_tools().unwrap().tools.len(), 1);
    let threads: Vec<_> = sessions
        .drain(..)
        .map(|mut s| {
            std::thread::spawn(move || {
                assert_eq!(s.call_tool("echo", b"{}").unwrap().content.len(), 1);
                s
            })
        })
        .collect();
    let sessions: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "one fresh socket for every session"
    );
    let on_second = server
        .frames_on(2, |f| matches!(f, Frame::Headers { .. }))
        .len();
    assert_eq!(on_second, 3);
    drop(sessions);
}

#[test]
fn each_session_keeps_its_own_byte_budget_on_the_shared_socket() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut roomy = client.connect(config(&url)).unwrap();
    let mut tight_config = config(&url);
    tight_config.budgets.response_bytes = 64;
    let mut tight = client.connect(tight_config).unwrap();
    let e = tight.list_tools().unwrap_err();
    let exceeded = e.budget().expect("a budget error");
    assert_eq!(exceeded.budget, Budget::ResponseBytes);
    assert_eq!(exceeded.limit, 64);
    assert_eq!(roomy.list_tools().unwrap().tools.len(), 1);
    assert_eq!(roomy.call_tool("echo", b"{}").unwrap().content.len(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
}

#[test]
fn h2c_with_prior_knowledge_only_when_asked_and_http1_only_wins() {
    let server = Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .h2_prior_knowledge(true)
        .build();
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
    session.close().unwrap();
    assert_eq!(
        server.requests.lock().unwrap()[0].header(":scheme"),
        Some("http")
    );

    let forced = Client::builder()
        .policy(loopback())
        .h2_prior_knowledge(true)
        .http1_only(true)
        .build();
    let mut cfg = config(&url);
    cfg.budgets.request_time = Duration::from_secs(2);
    cfg.budgets.list_time = Duration::from_secs(2);
    let mut session = forced.connect(cfg).unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    assert!(session.list_tools().is_err());
    assert_eq!(server.methods(), ["tools/list"], "no HTTP/2 request");
}

#[test]
fn forcing_http1_offers_no_h2_in_the_tls_handshake() {
    let (ca, server_config) = tls_server(&[b"h2"]);
    let server = Server::start(Some(server_config));
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca.clone()])
        .http1_only(true)
        .build();
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    match session.list_tools().unwrap_err() {
        mcp_sansio::Error::Transport(t) => assert_eq!(t.kind, TransportErrorKind::Tls, "{t}"),
        other => panic!("expected a TLS failure, got {other:?}"),
    }
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
}

#[test]
fn a_server_that_chooses_http1_keeps_http1_on_the_socket_already_dialled() {
    let (ca, server_config) = tls_server(&[b"http/1.1"]);
    let server = Server::start(Some(server_config));
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let session = client.connect(config(&url)).unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    assert_eq!(client.idle_sockets(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert_eq!(client.h2_connections(), 0);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_dialled_again() {
    let server = Server::start_with(
        None,
        Behaviour {
            close_after_answer: true,
            ..Behaviour::default()
        },
    );
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .h2_prior_knowledge(true)
        .build();
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(session.call_tool("echo", b"{}").unwrap().content.len(), 1);
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(server.accepted.load(Ordering::SeqCst), 2);
}

#[test]
fn a_call_that_times_out_resets_only_its_stream_and_the_socket_serves_on() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut a = client.connect(config(&url)).unwrap();
    let mut short = config(&url);
    short.budgets.call_time = Duration::from_millis(300);
    let mut doomed = client.connect(short).unwrap();
    let e = doomed.call_tool("hang", b"{}").unwrap_err();
    assert_eq!(
        e.budget().map(|x| x.budget),
        Some(Budget::CallTime),
        "{e:?}"
    );
    let hung_stream = server.requests.lock().unwrap()[0].stream;
    assert!(server.wait_for(|s| !s.frames_on(1, h2_server::is_cancel).is_empty()));
    let resets = server.frames_on(1, h2_server::is_cancel);
    assert!(
        resets
            .iter()
            .all(|f| matches!(f, Frame::RstStream { stream_id, .. } if *stream_id == hung_stream)),
        "{resets:?}"
    );
    drop(doomed);
    assert_eq!(a.list_tools().unwrap().tools.len(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the socket stays open"
    );
}

/// A recorded HTTP/2 session with a bearer token: list, call `echo`, close.
fn recorded_session(client: &Client, url: &str) {
    let mut cfg = config(url).with_bearer_token("tok-s3cr3t");
    cfg.budgets.request_time = Duration::from_secs(10);
    let mut session = client.connect(cfg).unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
    assert_eq!(session.call_tool("echo", b"{}").unwrap().content.len(), 1);
    session.close().unwrap();
}

#[test]
fn a_recording_client_records_an_alpn_h2_session_that_replays() {
    let (ca, server_config) = tls_server(&[b"h2", b"http/1.1"]);
    let server = Server::start(Some(server_config));
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), vec![ca], false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    recorded_session(&client, &url);
    assert_eq!(server.methods(), ["tools/list", "tools/call"]);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    let t = recording::check_h2(&sink, "https");
    assert!(t.to_text().contains(":authority: 127.0.0.1:"));
    // The session's socket was its own: none is left shared for the origin.
    assert_eq!(client.h2_connections(), 0);
}

#[test]
fn a_recording_client_records_an_h2c_session_that_replays() {
    let server = Server::start(None);
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    recorded_session(&client, &url);
    assert_eq!(
        server.requests.lock().unwrap()[0].header(":scheme"),
        Some("http")
    );
    recording::check_h2(&sink, "http");
}

#[test]
fn each_session_of_a_recording_client_has_its_own_h2_socket_and_transcript() {
    let server = Server::start(None);
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mut a = client.connect(config(&url)).unwrap();
    let mut b = client.connect(config(&url)).unwrap();
    assert_eq!(a.list_tools().unwrap().tools.len(), 1);
    assert_eq!(b.list_tools().unwrap().tools.len(), 1);
    a.close().unwrap();
    b.close().unwrap();
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "a socket per session"
    );
    let texts = sink.texts();
    assert_eq!(texts.len(), 2);
    for text in texts {
        let t = mcp_sansio_transcript::Transcript::parse(&text).unwrap();
        assert!(t.config.http2.is_some());
        let outcome = t.outcome();
        assert_eq!(
            outcome[1]["tools_listed"]["tools"],
            serde_json::json!(["echo"])
        );
        for split in [
            mcp_sansio_transcript::Split::Recorded,
            mcp_sansio_transcript::Split::BYTE_BY_BYTE,
        ] {
            mcp_sansio_transcript::replay(&t, split)
                .unwrap()
                .check(&t)
                .unwrap();
        }
    }
}

#[test]
fn a_recorded_session_moved_to_a_fresh_socket_by_goaway_replays() {
    let server = Server::start_with(
        None,
        Behaviour {
            goaway_first: true,
            ..Behaviour::default()
        },
    );
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
    assert_eq!(session.list_tools().unwrap().tools.len(), 1);
    session.close().unwrap();
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "a fresh socket after GOAWAY"
    );
    recording::check_h2_fresh_socket(&sink);
}
