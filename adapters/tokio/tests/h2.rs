//! HTTP/2 through the tokio adapter, against a scripted HTTP/2 server on 127.0.0.1 (the core's
//! own frame codec and HPACK, from the core's test support): ALPN `h2` over TLS, h2c with prior
//! knowledge, the switch that forces HTTP/1.1, and recorded HTTP/2 sessions (checks shared with
//! the blocking adapter in `checks/adapter_tests/recording.rs`).

#[path = "../../net/tests/h2_server/mod.rs"]
mod h2_server;

#[allow(unused_macros)]
#[path = "../../../checks/adapter_tests/recording.rs"]
mod recording;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use h2_server::{config, is_cancel, is_goaway, Behaviour, Server};
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio::{Budget, TransportErrorKind};
use mcp_sansio_tokio::{AddressPolicy, Client};
use tokio_rustls::rustls;

/// A CA and a server configuration presenting a certificate it issued for 127.0.0.1, offering
/// `alpn`.
fn tls_server(
    alpn: &[&[u8]],
) -> (
    rustls::pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "h2 test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(leaf_key.serialize_der());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone()], key.into())
        .unwrap();
    server.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    (ca.der().clone(), Arc::new(server))
}

fn loopback() -> AddressPolicy {
    AddressPolicy::strict().allow_loopback(true)
}

#[tokio::test]
async fn alpn_h2_runs_every_exchange_as_a_stream_of_one_socket() {
    let (ca, server_config) = tls_server(&[b"h2", b"http/1.1"]);
    let server = Server::start(Some(server_config));
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    let catalog = session.list_tools().await.unwrap();
    assert_eq!(catalog.tools.len(), 1);
    let called = session.call_tool("echo", b"{}").await.unwrap();
    assert!(!called.is_error);
    assert_eq!(called.content.len(), 1);
    session.close().await.unwrap();
    assert_eq!(server.methods(), ["tools/list", "tools/call"]);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1, "one socket");
    let requests = server.requests.lock().unwrap();
    let first = &requests[0];
    assert_eq!(first.header(":scheme"), Some("https"));
    assert_eq!(first.header(":method"), Some("POST"));
    assert_eq!(first.header(":path"), Some("/mcp"));
    let authority = format!("127.0.0.1:{}", server.port);
    assert_eq!(first.header(":authority"), Some(authority.as_str()));
    assert_eq!(first.header("host"), None, "no Host over HTTP/2");
    assert_ne!(requests[0].stream, requests[1].stream);
}

#[tokio::test]
async fn h2c_with_prior_knowledge_only_when_asked() {
    let server = Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .h2_prior_knowledge(true)
        .build();
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
    session.close().await.unwrap();
    let scheme = server.requests.lock().unwrap()[0]
        .header(":scheme")
        .map(str::to_owned);
    assert_eq!(scheme.as_deref(), Some("http"));

    // Forcing HTTP/1.1 wins over prior knowledge: the HTTP/2 server cannot read the request.
    let forced = Client::builder()
        .policy(loopback())
        .h2_prior_knowledge(true)
        .http1_only(true)
        .build();
    let mut cfg = config(&url);
    cfg.budgets.request_time = std::time::Duration::from_secs(2);
    cfg.budgets.list_time = std::time::Duration::from_secs(2);
    let mut session = forced.connect(cfg).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    assert!(session.list_tools().await.is_err());
    assert_eq!(
        server.methods(),
        ["tools/list"],
        "no HTTP/2 request the second time"
    );
}

#[tokio::test]
async fn forcing_http1_offers_no_h2_in_the_tls_handshake() {
    // A server that speaks h2 only refuses a handshake that does not offer it.
    let (ca, server_config) = tls_server(&[b"h2"]);
    let server = Server::start(Some(server_config));
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca.clone()])
        .http1_only(true)
        .build();
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    let e = session.list_tools().await.unwrap_err();
    match e {
        mcp_sansio::Error::Transport(t) => assert_eq!(t.kind, TransportErrorKind::Tls, "{t}"),
        other => panic!("expected a TLS failure, got {other:?}"),
    }
    assert!(server.methods().is_empty());

    // The same server through a default client: HTTP/2.
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
}

#[tokio::test]
async fn a_server_that_chooses_http1_keeps_http1_on_the_socket_already_dialled() {
    let (ca, server_config) = tls_server(&[b"http/1.1"]);
    let server = Server::start(Some(server_config));
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let client = Client::builder()
        .policy(loopback())
        .add_root_certificates([ca])
        .build();
    let session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
    // The modern hint connects without a request: the socket dialled to learn the protocol
    // waits in the pool for the first exchange.
    assert_eq!(client.idle_sockets(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    drop(session);
}

#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_dialled_again() {
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
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
    // The server closes the socket once it answered; the session learns it while idle.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let called = session.call_tool("echo", b"{}").await.unwrap();
    assert_eq!(called.content.len(), 1);
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(server.methods(), ["tools/list", "tools/call"]);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "a fresh socket for the call"
    );
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_of_a_client_share_one_socket_and_one_tls_handshake() {
    const N: usize = 6;
    let (server, client, url) = tls_setup(Behaviour::default());
    let tasks: Vec<_> = (0..N)
        .map(|i| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move {
                let mut session = client.connect(config(&url)).await.unwrap();
                assert_eq!(session.http_version(), "HTTP/2");
                assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
                let args = format!(r#"{{"i":{i}}}"#);
                let called = session.call_tool("echo", args.as_bytes()).await.unwrap();
                assert_eq!(called.content.len(), 1);
                session
            })
        })
        .collect();
    let mut sessions = Vec::new();
    for t in tasks {
        sessions.push(t.await.unwrap());
    }
    assert_eq!(client.h2_connections(), 1);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        1,
        "one TCP connection, so one TLS handshake, for {N} sessions"
    );
    let mut methods = server.methods();
    methods.sort();
    assert_eq!(methods.len(), 2 * N);
    let streams: std::collections::BTreeSet<u32> = server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.stream)
        .collect();
    assert_eq!(streams.len(), 2 * N, "one stream per request");
    for s in sessions {
        s.close().await.unwrap();
    }
    assert_eq!(
        client.h2_connections(),
        1,
        "the last session leaves the socket idle for the next"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_dropped_mid_call_resets_only_its_stream() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut a = client.connect(config(&url)).await.unwrap();
    let mut b = client.connect(config(&url)).await.unwrap();
    let hung = tokio::spawn(async move {
        let mut doomed = client.connect(config(&url)).await.unwrap();
        let _ = doomed.call_tool("hang", b"{}").await;
        unreachable!("the server never answers");
    });
    assert!(server.wait_for(|s| s.methods().contains(&"tools/call".to_owned())));
    let hung_stream = server.requests.lock().unwrap()[0].stream;
    hung.abort();
    let _ = hung.await;
    assert!(
        server.wait_for(|s| !s.frames_on(1, is_cancel).is_empty()),
        "the dropped session's stream is reset"
    );
    let resets = server.frames_on(1, is_cancel);
    assert!(
        resets
            .iter()
            .all(|f| matches!(f, Frame::RstStream { stream_id, .. } if *stream_id == hung_stream)),
        "{resets:?}"
    );
    assert_eq!(a.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(b.call_tool("echo", b"{}").await.unwrap().content.len(), 1);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the socket stays open"
    );
}

#[tokio::test]
async fn a_goaway_moves_every_session_to_one_fresh_socket() {
    let (server, client, url) = tls_setup(Behaviour {
        goaway_first: true,
        ..Behaviour::default()
    });
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(client.connect(config(&url)).await.unwrap());
    }
    // The first answer comes with GOAWAY: the socket takes no further request.
    assert_eq!(sessions[0].list_tools().await.unwrap().tools.len(), 1);
    let [s0, s1, s2] = &mut sessions[..] else {
        unreachable!()
    };
    let (r1, r2, r0) = tokio::join!(
        s1.list_tools(),
        s2.call_tool("echo", b"{}"),
        s0.call_tool("echo", b"{}")
    );
    assert_eq!(r1.unwrap().tools.len(), 1);
    assert_eq!(r2.unwrap().content.len(), 1);
    assert_eq!(r0.unwrap().content.len(), 1);
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "one fresh socket for every session"
    );
    let on_second = server
        .frames_on(2, |f| matches!(f, Frame::Headers { .. }))
        .len();
    assert_eq!(on_second, 3);
    assert_eq!(client.h2_connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_stays_idle_for_the_next_session_and_the_client_closes_it_with_goaway() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut a = client.connect(config(&url)).await.unwrap();
    let b = client.connect(config(&url)).await.unwrap();
    assert_eq!(a.list_tools().await.unwrap().tools.len(), 1);
    a.close().await.unwrap();
    drop(b);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        server.frames_on(1, is_goaway).is_empty(),
        "the last session's leaving keeps the socket, idle"
    );
    assert_eq!(client.h2_connections(), 1);
    // The next session joins the idle socket: no second connection, no second handshake.
    let mut c = client.connect(config(&url)).await.unwrap();
    assert_eq!(c.list_tools().await.unwrap().tools.len(), 1);
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

#[tokio::test]
async fn each_session_keeps_its_own_byte_budget_on_the_shared_socket() {
    let (server, client, url) = tls_setup(Behaviour::default());
    let mut roomy = client.connect(config(&url)).await.unwrap();
    let mut tight_config = config(&url);
    tight_config.budgets.response_bytes = 64;
    let mut tight = client.connect(tight_config).await.unwrap();
    let e = tight.list_tools().await.unwrap_err();
    let exceeded = e.budget().expect("a budget error");
    assert_eq!(exceeded.budget, Budget::ResponseBytes);
    assert_eq!(exceeded.limit, 64);
    assert_eq!(roomy.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(
        roomy.call_tool("echo", b"{}").await.unwrap().content.len(),
        1
    );
    assert!(roomy.bytes_read() > 64);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
}

/// A recorded HTTP/2 session with a bearer token: list, call `echo`, close.
async fn recorded_session(client: &Client, url: &str) {
    let mut cfg = config(url).with_bearer_token("tok-s3cr3t");
    cfg.budgets.request_time = Duration::from_secs(10);
    let mut session = client.connect(cfg).await.unwrap();
    assert_eq!(session.http_version(), "HTTP/2");
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(
        session
            .call_tool("echo", b"{}")
            .await
            .unwrap()
            .content
            .len(),
        1
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn a_recording_client_records_an_alpn_h2_session_that_replays() {
    let (ca, server_config) = tls_server(&[b"h2", b"http/1.1"]);
    let server = Server::start(Some(server_config));
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), vec![ca], false);
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    recorded_session(&client, &url).await;
    assert_eq!(server.methods(), ["tools/list", "tools/call"]);
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1);
    let t = recording::check_h2(&sink, "https");
    assert!(t.to_text().contains(":authority: 127.0.0.1:"));
    // The session's socket was its own: none is left shared for the origin.
    assert_eq!(client.h2_connections(), 0);
}

#[tokio::test]
async fn a_recording_client_records_an_h2c_session_that_replays() {
    let server = Server::start(None);
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    recorded_session(&client, &url).await;
    assert_eq!(
        server.requests.lock().unwrap()[0].header(":scheme"),
        Some("http")
    );
    recording::check_h2(&sink, "http");
}

#[tokio::test]
async fn each_session_of_a_recording_client_has_its_own_h2_socket_and_transcript() {
    let server = Server::start(None);
    let sink = Arc::new(recording::Memory::default());
    let client: Client = recording::recording_h2_client(sink.clone(), Vec::new(), true);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mut a = client.connect(config(&url)).await.unwrap();
    let mut b = client.connect(config(&url)).await.unwrap();
    assert_eq!(a.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(b.list_tools().await.unwrap().tools.len(), 1);
    a.close().await.unwrap();
    b.close().await.unwrap();
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

#[tokio::test]
async fn a_recorded_session_moved_to_a_fresh_socket_by_goaway_replays() {
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
    let mut session = client.connect(config(&url)).await.unwrap();
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
    assert_eq!(session.list_tools().await.unwrap().tools.len(), 1);
    session.close().await.unwrap();
    assert_eq!(
        server.accepted.load(Ordering::SeqCst),
        2,
        "a fresh socket after GOAWAY"
    );
    recording::check_h2_fresh_socket(&sink);
}
