//! HTTP/2 through the tokio adapter, against a scripted HTTP/2 server on 127.0.0.1 (the core's
//! own frame codec and HPACK, from the core's test support): ALPN `h2` over TLS, h2c with prior
//! knowledge, and the switch that forces HTTP/1.1.

#[path = "../../../tests/support/h2server.rs"]
mod h2server;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use h2server::{hello, result, H2Peer, SeenRequest};
use mcp_sansio::{Config, Era, EraHint, TransportErrorKind};
use mcp_sansio_tokio::{AddressPolicy, Client};
use tokio_rustls::rustls;

const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}"#;
const CALLED: &str = r#"{"content":[{"type":"text","text":"hi"}]}"#;

/// A modern configuration whose era hint spares the negotiation: every request is a tool
/// request.
fn config(url: &str) -> Config {
    let mut c = Config::new(url).unwrap();
    c.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    c
}

/// A server answering `tools/list` and `tools/call` over HTTP/2 on every accepted connection.
struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<SeenRequest>>>,
    _thread: JoinHandle<()>,
}

impl Server {
    fn start(tls: Option<Arc<rustls::ServerConfig>>) -> Server {
        Server::start_with(tls, false)
    }

    /// With `close_after_answer`, the server closes each connection once it answered a request.
    fn start_with(tls: Option<Arc<rustls::ServerConfig>>, close_after_answer: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (a, r) = (accepted.clone(), requests.clone());
        let thread = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                a.fetch_add(1, Ordering::SeqCst);
                let (tls, r) = (tls.clone(), r.clone());
                std::thread::spawn(move || match tls {
                    Some(config) => {
                        let Ok(conn) = rustls::ServerConnection::new(config) else {
                            return;
                        };
                        serve(rustls::StreamOwned::new(conn, tcp), &r, close_after_answer);
                    }
                    None => serve(tcp, &r, close_after_answer),
                });
            }
        });
        Server {
            port,
            accepted,
            requests,
            _thread: thread,
        }
    }

    fn methods(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(SeenRequest::rpc_method)
            .collect()
    }
}

fn serve(mut stream: impl Read + Write, seen: &Mutex<Vec<SeenRequest>>, close_after: bool) {
    let mut peer = H2Peer::default();
    if stream.write_all(&hello()).is_err() {
        return;
    }
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        for req in peer.read(&buf[..n]) {
            let body = match req.rpc_method().as_str() {
                "tools/list" => result(req.rpc_id(), TOOLS),
                "tools/call" => result(req.rpc_id(), CALLED),
                _ => result(req.rpc_id(), "{}"),
            };
            let answer = peer.json(req.stream, &body);
            seen.lock().unwrap().push(req);
            if stream
                .write_all(&answer)
                .and_then(|()| stream.flush())
                .is_err()
                || close_after
            {
                return;
            }
        }
    }
}

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
    let server = Server::start_with(None, true);
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
