//! Loopback servers that hold a client with bytes that come too slowly, shared by the deadline
//! tests of mcp-sansio-net, both adapters and `mcp-probe` (through the test-support crate):
//!
//! - [`Trickle::Handshake`]: after the ClientHello, a TLS handshake record header announcing
//!   16 KiB, then one byte of it per interval — a handshake that never completes;
//! - [`Trickle::TlsBody`]: a complete TLS handshake, then a response whose single TLS record
//!   (head and an 8,000-byte body) is written one byte per interval;
//! - [`Trickle::PooledTlsBody`]: a complete TLS handshake, `server/discover` answered at once on
//!   a connection kept alive, then the answer to the next request (a listing page) written as
//!   TLS records one byte per interval: the client's pooled socket waits on a record that
//!   completes only after minutes;
//!
//! and [`Challenger`], a plain MCP endpoint that answers every request 401 with a
//! `resource_metadata` URL (the trickling server's).
//!
//! Every connection thread stops when the client goes away or the server is dropped.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How a [`Trickler`] trickles.
#[derive(Clone)]
pub enum Trickle {
    /// A TLS handshake record that never completes.
    Handshake,
    /// A TLS response record written one byte at a time, with this certificate (DER) and its
    /// PKCS#8 key (DER).
    TlsBody {
        /// The certificate.
        cert: Vec<u8>,
        /// Its key.
        key: Vec<u8>,
    },
    /// `server/discover` answered, then the next answer's TLS records written one byte at a
    /// time, with this certificate (DER) and its PKCS#8 key (DER).
    PooledTlsBody {
        /// The certificate.
        cert: Vec<u8>,
        /// Its key.
        key: Vec<u8>,
    },
}

/// One byte every this long.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// A running trickling server on 127.0.0.1.
pub struct Trickler {
    port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    /// Connections accepted.
    pub accepted: Arc<AtomicUsize>,
}

impl Trickler {
    /// Starts one.
    pub fn start(how: Trickle) -> Trickler {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (sp, acc) = (stop.clone(), accepted.clone());
        let accept = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(tcp) = tcp else { continue };
                acc.fetch_add(1, Ordering::SeqCst);
                let (how, sp) = (how.clone(), sp.clone());
                std::thread::spawn(move || match how {
                    Trickle::Handshake => handshake(tcp, &sp),
                    Trickle::TlsBody { cert, key } => tls_body(tcp, cert, key, &sp),
                    Trickle::PooledTlsBody { cert, key } => pooled_tls_body(tcp, cert, key, &sp),
                });
            }
        });
        Trickler {
            port,
            stop,
            accept: Some(accept),
            accepted,
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:PORT/.well-known/oauth-protected-resource`.
    pub fn metadata_url(&self) -> String {
        format!(
            "https://127.0.0.1:{}/.well-known/oauth-protected-resource",
            self.port
        )
    }
}

impl Drop for Trickler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// Writes `bytes` one per [`INTERVAL`] until done, the client goes away or `stop`.
fn trickle(tcp: &mut TcpStream, bytes: impl IntoIterator<Item = u8>, stop: &AtomicBool) {
    let _ = tcp.set_nodelay(true);
    for b in bytes {
        if stop.load(Ordering::SeqCst) || tcp.write_all(&[b]).is_err() {
            return;
        }
        std::thread::sleep(INTERVAL);
    }
}

fn handshake(mut tcp: TcpStream, stop: &AtomicBool) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    let mut hello = [0u8; 4096];
    if !matches!(tcp.read(&mut hello), Ok(n) if n > 0) {
        return;
    }
    // A handshake record of 16 KiB, its header first: the client waits for the rest.
    let header = [0x16u8, 0x03, 0x03, 0x40, 0x00];
    trickle(
        &mut tcp,
        header.into_iter().chain(std::iter::repeat_n(0u8, 0x4000)),
        stop,
    );
}

/// A TLS server connection speaking HTTP/1.1 with `cert` and its `key` (both DER).
fn server_connection(cert: Vec<u8>, key: Vec<u8>) -> Option<rustls::ServerConnection> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert)],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key)),
        )
        .ok()?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    rustls::ServerConnection::new(Arc::new(config)).ok()
}

/// Writes every TLS record `conn` has to send one byte per [`INTERVAL`].
fn trickle_records(conn: &mut rustls::ServerConnection, tcp: &mut TcpStream, stop: &AtomicBool) {
    let mut records = Vec::new();
    while conn.wants_write() {
        if conn.write_tls(&mut records).is_err() {
            return;
        }
    }
    trickle(tcp, records, stop);
}

fn tls_body(mut tcp: TcpStream, cert: Vec<u8>, key: Vec<u8>, stop: &AtomicBool) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
    let Some(mut conn) = server_connection(cert, key) else {
        return;
    };
    // The handshake, then the request head.
    let mut head = Vec::new();
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if conn.complete_io(&mut tcp).is_err() {
            return;
        }
        let mut b = [0u8; 4096];
        match conn.reader().read(&mut b) {
            Ok(0) => return,
            Ok(n) => head.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return,
        }
    }
    let body = vec![b' '; 8000];
    let mut answer =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 8000\r\n\r\n"
            .to_vec();
    answer.extend_from_slice(&body);
    if conn.writer().write_all(&answer).is_err() {
        return;
    }
    trickle_records(&mut conn, &mut tcp, stop);
}

/// One request read from `tls`, head and body.
fn request(tls: &mut rustls::StreamOwned<rustls::ServerConnection, TcpStream>) -> Option<String> {
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(String::from_utf8_lossy(&buf[..end + 4 + length]).into_owned());
            }
        }
        match tls.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
}

/// A JSON answer to the request `request` with `result`, its JSON-RPC id copied.
fn answer(request: &str, result: &str) -> Vec<u8> {
    let id: String = request
        .split_once("\"id\":")
        .map(|(_, rest)| rest.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_else(|| "0".into());
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn pooled_tls_body(tcp: TcpStream, cert: Vec<u8>, key: Vec<u8>, stop: &AtomicBool) {
    const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}"#;
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(conn) = server_connection(cert, key) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    while let Some(request) = request(&mut tls) {
        if request.contains("\"server/discover\"") {
            if tls.write_all(&answer(&request, DISCOVER)).is_err() {
                return;
            }
            continue;
        }
        let page = format!(r#"{{"tools":[],"pad":"{}"}}"#, " ".repeat(8000));
        if tls
            .conn
            .writer()
            .write_all(&answer(&request, &page))
            .is_err()
        {
            return;
        }
        trickle_records(&mut tls.conn, &mut tls.sock, stop);
    }
}

/// A plain MCP endpoint on 127.0.0.1 answering every request 401 with
/// `Bearer resource_metadata="{metadata_url}"`, each answer closing its connection. Stops when
/// dropped.
pub struct Challenger {
    port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Challenger {
    /// Starts one.
    pub fn start(metadata_url: String) -> Challenger {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let sp = stop.clone();
        let accept = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if sp.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut tcp) = tcp else { continue };
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = Vec::new();
                let mut b = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&b[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer resource_metadata=\"{metadata_url}\"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = tcp.write_all(answer.as_bytes());
            }
        });
        Challenger {
            port,
            stop,
            accept: Some(accept),
        }
    }

    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Challenger {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}
