//! A small HTTP/1.1 server for the CLI tests, plain or TLS, on 127.0.0.1: it counts the TCP
//! connections it accepts, records every request (head and raw body) and answers through a
//! handler. Dropping it stops the listener and every connection thread.

#![allow(dead_code)]

pub mod oauth;

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::value::RawValue;

/// How often a connection thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Req {
    /// The index of the connection it came on, from 0.
    pub conn: usize,
    /// The request head, as sent.
    pub head: String,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

impl Req {
    /// The body's top-level members, each kept as raw JSON (so that a number beyond `f64`
    /// inside them does not stop the reading).
    fn members(&self) -> BTreeMap<String, Box<RawValue>> {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }

    /// The JSON-RPC method, empty for a body-less request.
    pub fn rpc_method(&self) -> String {
        self.members()
            .get("method")
            .and_then(|m| serde_json::from_str::<String>(m.get()).ok())
            .unwrap_or_default()
    }

    /// The JSON-RPC id, 0 when there is none.
    pub fn id(&self) -> u64 {
        self.members()
            .get("id")
            .and_then(|m| m.get().parse().ok())
            .unwrap_or(0)
    }
}

/// What the server does with a request.
pub enum Reply {
    /// Writes the bytes and waits for the next request on the connection.
    Send(Vec<u8>),
    /// Never answers; holds the connection until the client closes it or the server stops.
    Never,
}

type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// A listening server.
pub struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    /// A plain HTTP server.
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_with(None, Arc::new(handler))
    }

    /// An HTTPS server presenting the certificate of `tls`.
    pub fn start_tls(
        tls: Arc<rustls::ServerConfig>,
        handler: impl Fn(&Req) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_with(Some(tls), Arc::new(handler))
    }

    fn start_with(tls: Option<Arc<rustls::ServerConfig>>, handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (accepted, requests, stop, threads) = (
                accepted.clone(),
                requests.clone(),
                stop.clone(),
                threads.clone(),
            );
            std::thread::spawn(move || {
                for tcp in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(tcp) = tcp else { continue };
                    let conn = accepted.fetch_add(1, Ordering::SeqCst);
                    let c = Conn {
                        conn,
                        handler: handler.clone(),
                        requests: requests.clone(),
                        stop: stop.clone(),
                    };
                    let tls = tls.clone();
                    let t = std::thread::spawn(move || c.serve(tcp, tls));
                    threads.lock().unwrap().push(t);
                }
            })
        };
        Server {
            addr,
            accepted,
            requests,
            stop,
            threads,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// TCP connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Req> {
        self.requests.lock().unwrap().clone()
    }

    /// The JSON-RPC methods received so far.
    pub fn methods(&self) -> Vec<String> {
        self.requests().iter().map(Req::rpc_method).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the acceptor, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for t in self.threads.lock().unwrap().drain(..) {
            let _ = t.join();
        }
    }
}

struct Conn {
    conn: usize,
    handler: Handler,
    requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
}

impl Conn {
    fn serve(self, tcp: TcpStream, tls: Option<Arc<rustls::ServerConfig>>) {
        if tcp.set_read_timeout(Some(POLL)).is_err() {
            return;
        }
        match tls {
            None => self.serve_stream(tcp),
            Some(config) => {
                let Ok(session) = rustls::ServerConnection::new(config) else {
                    return;
                };
                self.serve_stream(rustls::StreamOwned::new(session, tcp));
            }
        }
    }

    fn serve_stream(&self, mut stream: impl Read + Write) {
        let mut buf = Vec::new();
        while let Some(req) = self.next_request(&mut stream, &mut buf) {
            self.requests.lock().unwrap().push(req.clone());
            match (self.handler)(&req) {
                Reply::Send(bytes) => {
                    if stream
                        .write_all(&bytes)
                        .and_then(|()| stream.flush())
                        .is_err()
                    {
                        return;
                    }
                }
                Reply::Never => {
                    while !self.stop.load(Ordering::SeqCst) {
                        let mut b = [0u8; 64];
                        match stream.read(&mut b) {
                            Ok(0) => return,
                            Ok(_) => {}
                            Err(e) if waiting(&e) => {}
                            Err(_) => return,
                        }
                    }
                    return;
                }
            }
        }
    }

    /// Reads one request (head and `Content-Length` body); `None` at EOF, on an error or when
    /// the server stops.
    fn next_request(&self, stream: &mut impl Read, buf: &mut Vec<u8>) -> Option<Req> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                let length = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if buf.len() >= end + 4 + length {
                    let body = buf[end + 4..end + 4 + length].to_vec();
                    buf.drain(..end + 4 + length);
                    return Some(Req {
                        conn: self.conn,
                        head,
                        body,
                    });
                }
            }
            if self.stop.load(Ordering::SeqCst) {
                return None;
            }
            match stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) if waiting(&e) => {}
                Err(_) => return None,
            }
        }
    }
}

fn waiting(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

// ---------------------------------------------------------------------------------------------
// Answers of a 2026-07-28 server

/// The result of `server/discover`.
pub const DISCOVER_OK: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1"}}}"#;

/// A JSON response.
pub fn json_response(status: u16, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A JSON-RPC result message.
pub fn result_msg(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// A modern server with the tools `echo` and `add`; every call answers "ok".
pub fn modern(req: &Req) -> Reply {
    let id = req.id();
    let result = match req.rpc_method().as_str() {
        "server/discover" => DISCOVER_OK,
        "tools/list" => {
            r#"{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"add","inputSchema":{"type":"object"}}]}"#
        }
        "tools/call" => r#"{"content":[{"type":"text","text":"ok"}],"isError":false}"#,
        _ => return Reply::Send(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_vec()),
    };
    Reply::Send(json_response(200, &result_msg(id, result)))
}

// ---------------------------------------------------------------------------------------------
// A private certificate authority

/// A test CA and a server certificate it issued for `127.0.0.1` and `localhost`.
pub struct PrivateCa {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The server configuration presenting the issued certificate.
    pub server: Arc<rustls::ServerConfig>,
}

impl PrivateCa {
    /// A new CA and server certificate.
    pub fn new() -> PrivateCa {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mcp-probe test CA");
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf_params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &ca, &ca_key).unwrap();
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(leaf_key.serialize_der());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], key.into())
            .unwrap();
        server.alpn_protocols = vec![b"http/1.1".to_vec()];
        PrivateCa {
            ca_pem: ca.pem(),
            server: Arc::new(server),
        }
    }
}

/// Runs the `mcp-probe` binary of this package with `args`, without a bearer token or a
/// `RUST_LOG` from the environment (the tests read its stderr), and waits for it.
pub fn probe(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}
