//! The TLS session resumption tests of both adapters: cold work items (the HTTP/1.1 servers
//! close every connection once they answered, so the pool is empty and every request dials) to
//! one origin make one full handshake and resume the session
//! after it; two origins on one host make one each; over HTTP/2 the redial after GOAWAY
//! resumes. The servers count the handshakes they finish, full or resumed, as rustls reports
//! them (`ServerConnection::handshake_kind`), and issue TLS 1.3 tickets (stateless, ring's
//! ticketer). An adapter's `tests/tls_resume.rs` brings its `Client` and this module (as
//! `resume`) into scope and declares the tests with [`crate::resume_tests!`].
#![allow(dead_code)]

pub use crate::h2_server;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_sansio_net::{AddressPolicy, BuildClient, ClientBuilder};
use rustls::HandshakeKind;

use super::canned::modern_answer;

/// A self-signed certificate for 127.0.0.1 and a server configuration presenting it that
/// offers `alpn` and issues stateless TLS 1.3 tickets (ring's ticketer, a key of its own).
pub fn ticketing_server(
    alpn: &[&[u8]],
) -> (
    rustls::pki_types::CertificateDer<'static>,
    Arc<rustls::ServerConfig>,
) {
    let (der, config) = super::h2::tls_server(alpn);
    let mut config = Arc::unwrap_or_clone(config);
    config.ticketer = rustls::crypto::ring::Ticketer::new().unwrap();
    (der, Arc::new(config))
}

/// Finishes the server side of a handshake over `tcp`; `None` if it failed.
fn handshake(
    config: Arc<rustls::ServerConfig>,
    mut tcp: std::net::TcpStream,
) -> Option<(rustls::ServerConnection, std::net::TcpStream, HandshakeKind)> {
    let mut conn = rustls::ServerConnection::new(config).ok()?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).ok()?;
    }
    let kind = conn.handshake_kind()?;
    Some((conn, tcp, kind))
}

/// An HTTP/1.1 server over TLS on 127.0.0.1 answering one request per connection as a modern
/// server ([`modern_answer`]) and closing it, recording the kind of each handshake it finished.
pub struct CountingServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Connections accepted.
    pub accepted: Arc<AtomicUsize>,
    /// The kind of every handshake finished, in the order they finished.
    pub handshakes: Arc<Mutex<Vec<HandshakeKind>>>,
}

impl CountingServer {
    /// A server presenting `config`.
    pub fn start(config: Arc<rustls::ServerConfig>) -> CountingServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let handshakes = Arc::new(Mutex::new(Vec::new()));
        let (a, h) = (accepted.clone(), handshakes.clone());
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                a.fetch_add(1, Ordering::SeqCst);
                let (config, h) = (config.clone(), h.clone());
                std::thread::spawn(move || {
                    let Some((conn, tcp, kind)) = handshake(config, tcp) else {
                        return;
                    };
                    h.lock().unwrap().push(kind);
                    serve_http1(rustls::StreamOwned::new(conn, tcp));
                });
            }
        });
        CountingServer {
            port,
            accepted,
            handshakes,
        }
    }

    /// The handshakes finished so far: (full, resumed).
    pub fn counts(&self) -> (usize, usize) {
        count(&self.handshakes)
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}/mcp", self.port)
    }
}

/// (full, resumed) among `kinds`: a full handshake after a HelloRetryRequest is full too.
pub fn count(kinds: &Mutex<Vec<HandshakeKind>>) -> (usize, usize) {
    let kinds = kinds.lock().unwrap();
    let resumed = kinds
        .iter()
        .filter(|k| **k == HandshakeKind::Resumed)
        .count();
    (kinds.len() - resumed, resumed)
}

/// Reads one request (head, then a `content-length` body), answers it with `connection:
/// close` and closes (with close_notify): the client cannot keep the socket, so its next request
/// dials.
fn serve_http1(mut stream: rustls::StreamOwned<rustls::ServerConnection, std::net::TcpStream>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, body_len) = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, len);
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    while buf.len() < head_end + body_len {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body: serde_json::Value =
        serde_json::from_slice(&buf[head_end..head_end + body_len]).unwrap_or_default();
    let method = body["method"].as_str().unwrap_or("");
    let mut answer = modern_answer(method, body["id"].as_u64().unwrap_or(0));
    let status_end = answer
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(0, |p| p + 2);
    answer.splice(
        status_end..status_end,
        b"connection: close\r\n".iter().copied(),
    );
    let _ = stream.write_all(&answer).and_then(|()| stream.flush());
    stream.conn.send_close_notify();
    let _ = stream.flush();
}

/// An HTTP/2 server over TLS (ALPN `h2`) behaving as `b` ([`h2_server::Server`]), recording
/// the kind of each handshake it finished.
pub fn h2_counting_server(b: h2_server::Behaviour) -> (h2_server::Server, Vec<u8>) {
    let (der, config) = ticketing_server(&[b"h2", b"http/1.1"]);
    (h2_server::Server::start_with(Some(config), b), der.to_vec())
}

/// The builder of a client of either adapter that allows loopback addresses.
pub fn loopback<C: BuildClient>() -> ClientBuilder<C> {
    ClientBuilder::<C>::new().policy(AddressPolicy::strict().allow_loopback(true))
}

/// Declares the TLS resumption tests of an adapter whose `Client` is in scope, with this module
/// as `resume`: `#[$test]` is its test attribute; `async` is present when its operations are
/// futures; `[$($wait)*]` is what waits for an operation (`.await`, or nothing).
#[macro_export]
macro_rules! resume_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        /// One cold work item: a session, the tool list and a call, each request on a socket
        /// of its own (the server closes each).
        $($async)? fn work_item(client: &Client, url: &str) {
            let mut session = client
                .connect(resume::h2_server::config(url))$($wait)*
                .unwrap();
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 2);
            assert!(!session.call_tool("echo", b"{}")$($wait)*.unwrap().is_error);
            session.close()$($wait)*.unwrap();
        }

        /// RFC 8446 §2.2: a server may send a ticket "which the client can use to resume the
        /// session in a later handshake"; the client keeps the session of each origin it dialled
        /// for its later dials. Five cold work items (ten dials) to one origin: one full
        /// handshake, every later dial resumed.
        #[$test]
        $($async)? fn cold_work_items_to_one_origin_make_one_full_handshake() {
            let (ca, config) = resume::ticketing_server(&[b"http/1.1"]);
            let server = resume::CountingServer::start(config);
            let client: Client = resume::loopback().add_root_certificates([ca]).build();
            for _ in 0..5 {
                work_item(&client, &server.url())$($wait)*;
            }
            let dials = server.accepted.load(std::sync::atomic::Ordering::SeqCst);
            assert_eq!(dials, 10, "the server closes every socket: each request dials");
            assert_eq!(server.counts(), (1, dials - 1));
        }

        /// Two origins on one host (127.0.0.1, two ports, each with its own ticket key): the
        /// session of one is never offered to the other, so each makes one full handshake and
        /// resumes after it, whatever the order of the dials (RFC 6454: the port is part of the
        /// origin).
        #[$test]
        $($async)? fn two_origins_on_one_host_make_one_full_handshake_each() {
            let (ca, config) = resume::ticketing_server(&[b"http/1.1"]);
            let a = resume::CountingServer::start(config.clone());
            // The second origin presents the same certificate under a ticket key of its own.
            let mut other = std::sync::Arc::unwrap_or_clone(config);
            other.ticketer = rustls::crypto::ring::Ticketer::new().unwrap();
            let other = std::sync::Arc::new(other);
            let b = resume::CountingServer::start(other);
            let client: Client = resume::loopback().add_root_certificates([ca]).build();
            for _ in 0..3 {
                work_item(&client, &a.url())$($wait)*;
                work_item(&client, &b.url())$($wait)*;
            }
            assert_eq!(a.counts(), (1, 5), "origin a");
            assert_eq!(b.counts(), (1, 5), "origin b");
        }

        /// Two clients keep their sessions apart: each makes its own full handshake.
        #[$test]
        $($async)? fn each_client_makes_its_own_full_handshake() {
            let (ca, config) = resume::ticketing_server(&[b"http/1.1"]);
            let server = resume::CountingServer::start(config);
            let one: Client = resume::loopback().add_root_certificates([ca.clone()]).build();
            let two: Client = resume::loopback().add_root_certificates([ca]).build();
            work_item(&one, &server.url())$($wait)*;
            work_item(&two, &server.url())$($wait)*;
            work_item(&one, &server.url())$($wait)*;
            assert_eq!(server.counts(), (2, 4));
        }

        /// A configuration given whole (`tls_config`) keeps its own session store, which rustls
        /// gives every configuration by default: cold work items resume with it too.
        #[$test]
        $($async)? fn a_given_tls_configuration_resumes_with_its_own_store() {
            let (ca, config) = resume::ticketing_server(&[b"http/1.1"]);
            let server = resume::CountingServer::start(config);
            let mut roots = rustls::RootCertStore::empty();
            roots.add(ca).unwrap();
            let client: Client = resume::loopback()
                .tls_config(mcp_sansio_net::client_config_with_roots(roots))
                .build();
            for _ in 0..3 {
                work_item(&client, &server.url())$($wait)*;
            }
            assert_eq!(server.counts(), (1, 5));
        }

        /// Over HTTP/2 the socket a GOAWAY retires is replaced by a dial that resumes the
        /// session of the first (RFC 9113 §6.8: new streams go "on a new connection").
        #[$test]
        $($async)? fn the_redial_after_goaway_resumes() {
            let (server, ca) = resume::h2_counting_server(resume::h2_server::Behaviour {
                goaway_first: true,
                ..resume::h2_server::Behaviour::default()
            });
            let ca = rustls::pki_types::CertificateDer::from(ca);
            let client: Client = resume::loopback().add_root_certificates([ca]).build();
            let url = format!("https://127.0.0.1:{}/mcp", server.port);
            let mut session = client
                .connect(resume::h2_server::config(&url))$($wait)*
                .unwrap();
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(session.list_tools()$($wait)*.unwrap().tools.len(), 1);
            assert_eq!(session.http_version(), "HTTP/2");
            session.close()$($wait)*.unwrap();
            assert_eq!(
                server.accepted.load(std::sync::atomic::Ordering::SeqCst),
                2,
                "a fresh socket after GOAWAY"
            );
            assert_eq!(resume::count(&server.handshakes), (1, 1));
        }
    };
}
