//! A TLS server on 127.0.0.1 that keeps its connection alive, answers `server/discover`, then
//! writes the answer to the next request as TLS records one byte at a time: the deadline tests
//! of both adapters (`adapters/{tokio,blocking}/tests/tls_deadline.rs`) include it by `#[path]`.
//! The listing then goes out on the pooled socket, where no TLS record completes for minutes.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// One byte of the trickled record every this long.
pub const INTERVAL: Duration = Duration::from_millis(100);

const DISCOVER: &str = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}"#;

/// A TLS server on 127.0.0.1 keeping its connection alive: it answers `server/discover`, then
/// writes the answer to the next request as TLS records one byte per [`INTERVAL`].
pub struct Server {
    /// The port.
    pub port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(config: Arc<rustls::ServerConfig>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let accept = std::thread::spawn(move || {
            for tcp in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let (config, s) = (config.clone(), s.clone());
                if let Ok(tcp) = tcp {
                    std::thread::spawn(move || serve(tcp, config, &s));
                }
            }
        });
        Server {
            port,
            stop,
            accept: Some(accept),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

/// One request's JSON-RPC id and method, read from `tls`.
fn request(
    tls: &mut rustls::StreamOwned<rustls::ServerConnection, TcpStream>,
) -> Option<(u64, String)> {
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
                let body: serde_json::Value =
                    serde_json::from_slice(&buf[end + 4..end + 4 + length]).ok()?;
                let id = body["id"].as_u64().unwrap_or(0);
                return Some((id, body["method"].as_str().unwrap_or("").to_owned()));
            }
        }
        match tls.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&b[..n]),
        }
    }
}

fn answer(id: u64, result: &str) -> Vec<u8> {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn serve(tcp: TcpStream, config: Arc<rustls::ServerConfig>, stop: &AtomicBool) {
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = tcp.set_nodelay(true);
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    while let Some((id, method)) = request(&mut tls) {
        if method == "server/discover" {
            if tls.write_all(&answer(id, DISCOVER)).is_err() {
                return;
            }
            continue;
        }
        // The answer's records, written one byte at a time.
        let body = format!(r#"{{"tools":[],"pad":"{}"}}"#, " ".repeat(8000));
        if tls.conn.writer().write_all(&answer(id, &body)).is_err() {
            return;
        }
        let mut records = Vec::new();
        while tls.conn.wants_write() {
            if tls.conn.write_tls(&mut records).is_err() {
                return;
            }
        }
        for b in records {
            if stop.load(Ordering::SeqCst) || tls.sock.write_all(&[b]).is_err() {
                return;
            }
            std::thread::sleep(INTERVAL);
        }
    }
}

/// A server presenting a new self-signed certificate for 127.0.0.1, and that certificate.
pub fn start() -> (Server, CertificateDer<'static>) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let cert = cert.der().clone();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    (Server::start(Arc::new(config)), cert)
}
