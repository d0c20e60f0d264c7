//! The TLS server of the HTTP/2 vs HTTP/1.1 benchmark (127.0.0.1 only).
//!
//! `bench-tls-server [--ca-out PATH] [--ttl SECONDS]`
//!
//! Makes a certificate authority and a leaf certificate for `127.0.0.1` and `localhost` at start
//! (rcgen), writes the authority's certificate as PEM to `--ca-out` (default: a file named after
//! the process id in the temporary directory) for the client to trust, and serves `https` on
//! `/mcp` with ALPN `h2` and `http/1.1`: the protocol the TLS handshake chose is the one the
//! connection speaks (hyper, HTTP/2 with its default settings, so at least 100 concurrent
//! streams). The MCP answers are those of `bench-server --eras modern` in JSON mode:
//! `server/discover`, `tools/list` (the one page of the tiny catalog,
//! [`bench_harness::catalog::tiny_page_result`], for the scaling rows' work items over HTTP/2),
//! `tools/call` of `small` (echoes its `text`), `ping`; `initialize` is refused as by a server of
//! the 2026 era only.
//!
//! Counters on a second, plain-HTTP listener that is not counted itself: `GET /stats` (JSON:
//! accepted TCP connections, completed TLS handshakes (and how many of them resumed a session:
//! rustls's default stateful session cache, with its two TLS 1.3 tickets), connections per protocol, requests per
//! HTTP version and per method) and `POST /reset`. It prints
//! `listening 127.0.0.1:PORT control 127.0.0.1:PORT ca PATH` once bound and exits after `--ttl`
//! seconds (default 1800), removing the PEM file (a server that is killed leaves it to its caller).

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use bench_harness::catalog;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// The protocol version of the modern era, the only one this server speaks.
const MODERN: &str = "2026-07-28";

/// Bytes of a request body read at most.
const MAX_BODY: usize = 1 << 20;

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Stats {
    connections: AtomicU64,
    open: AtomicU64,
    tls_handshakes: AtomicU64,
    tls_resumed: AtomicU64,
    tls_failed: AtomicU64,
    h2_connections: AtomicU64,
    h1_connections: AtomicU64,
    requests: AtomicU64,
    requests_h2: AtomicU64,
    requests_h1: AtomicU64,
    discover: AtomicU64,
    initialize: AtomicU64,
    notifications: AtomicU64,
    list: AtomicU64,
    call: AtomicU64,
    delete: AtomicU64,
    get: AtomicU64,
    other: AtomicU64,
}

impl Stats {
    fn fields(&self) -> [(&'static str, &AtomicU64); 18] {
        [
            ("connections", &self.connections),
            ("open", &self.open),
            ("tls_handshakes", &self.tls_handshakes),
            ("tls_resumed", &self.tls_resumed),
            ("tls_failed", &self.tls_failed),
            ("h2_connections", &self.h2_connections),
            ("h1_connections", &self.h1_connections),
            ("requests", &self.requests),
            ("requests_h2", &self.requests_h2),
            ("requests_h1", &self.requests_h1),
            ("discover", &self.discover),
            ("initialize", &self.initialize),
            ("notifications", &self.notifications),
            ("list", &self.list),
            ("call", &self.call),
            ("delete", &self.delete),
            ("get", &self.get),
            ("other", &self.other),
        ]
    }

    fn json(&self) -> String {
        let parts: Vec<String> = self
            .fields()
            .iter()
            .map(|(k, v)| format!("\"{k}\":{}", v.load(Relaxed)))
            .collect();
        format!("{{{}}}", parts.join(","))
    }

    /// Zeroes every counter but the open connections.
    fn reset(&self) {
        for (k, v) in self.fields() {
            if k != "open" {
                v.store(0, Relaxed);
            }
        }
    }
}

/// Decrements the open-connection count when the connection's task ends, however it ends.
struct OpenGuard(Arc<Stats>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Relaxed);
    }
}

fn rpc(id: &str, result: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}")
}

fn rpc_error(id: &str, code: i64, message: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":\"{message}\"}}}}")
}

fn reply(status: StatusCode, body: Option<String>) -> Response<Full<Bytes>> {
    let mut r = Response::builder().status(status);
    if body.is_some() {
        r = r.header("content-type", "application/json");
    }
    r.header("server", "bench-tls-server")
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .expect("a valid response")
}

/// The MCP answer to one JSON-RPC message (the body of a `POST /mcp`).
fn answer(stats: &Stats, body: &[u8]) -> (StatusCode, Option<String>) {
    let Ok(msg) = serde_json::from_slice::<Value>(body) else {
        stats.other.fetch_add(1, Relaxed);
        return (
            StatusCode::BAD_REQUEST,
            Some(rpc_error("null", -32700, "parse error")),
        );
    };
    let Some(id) = msg.get("id").map(Value::to_string) else {
        stats.notifications.fetch_add(1, Relaxed);
        return (StatusCode::ACCEPTED, None);
    };
    let ok = |s: String| (StatusCode::OK, Some(s));
    match msg.get("method").and_then(Value::as_str).unwrap_or("") {
        "server/discover" => {
            stats.discover.fetch_add(1, Relaxed);
            ok(rpc(&id, &format!(
                "{{\"supportedVersions\":[\"{MODERN}\"],\"capabilities\":{{\"tools\":{{}}}},\"resultType\":\"complete\",\"ttlMs\":3600000,\"cacheScope\":\"private\",\"_meta\":{{\"io.modelcontextprotocol/serverInfo\":{{\"name\":\"bench-tls-server\",\"version\":\"1.0.0\"}}}}}}"
            )))
        }
        "initialize" => {
            stats.initialize.fetch_add(1, Relaxed);
            (
                StatusCode::BAD_REQUEST,
                Some(rpc_error(&id, -32022, "Unsupported protocol version")),
            )
        }
        "tools/list" => {
            stats.list.fetch_add(1, Relaxed);
            ok(rpc(&id, &catalog::tiny_page_result(true)))
        }
        "tools/call" => {
            stats.call.fetch_add(1, Relaxed);
            match msg.pointer("/params/name").and_then(Value::as_str) {
                Some("small") => {
                    let text = msg
                        .pointer("/params/arguments/text")
                        .and_then(Value::as_str)
                        .unwrap_or("ok");
                    ok(rpc(&id, &catalog::call_result(text, true)))
                }
                _ => ok(rpc_error(&id, -32602, "unknown tool")),
            }
        }
        "ping" => {
            stats.other.fetch_add(1, Relaxed);
            ok(rpc(&id, "{}"))
        }
        _ => {
            stats.other.fetch_add(1, Relaxed);
            ok(rpc_error(&id, -32601, "method not found"))
        }
    }
}

/// One request on the TLS listener.
async fn handle(stats: Arc<Stats>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    stats.requests.fetch_add(1, Relaxed);
    if req.version() == Version::HTTP_2 {
        stats.requests_h2.fetch_add(1, Relaxed);
    } else {
        stats.requests_h1.fetch_add(1, Relaxed);
    }
    if req.uri().path() != "/mcp" {
        stats.other.fetch_add(1, Relaxed);
        return reply(StatusCode::NOT_FOUND, None);
    }
    match *req.method() {
        Method::POST => {}
        Method::GET => {
            stats.get.fetch_add(1, Relaxed);
            return reply(StatusCode::METHOD_NOT_ALLOWED, None);
        }
        Method::DELETE => {
            stats.delete.fetch_add(1, Relaxed);
            return reply(StatusCode::OK, None);
        }
        _ => {
            stats.other.fetch_add(1, Relaxed);
            return reply(StatusCode::METHOD_NOT_ALLOWED, None);
        }
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            stats.other.fetch_add(1, Relaxed);
            return reply(StatusCode::BAD_REQUEST, None);
        }
    };
    let (status, body) = answer(&stats, &body);
    reply(status, body)
}

/// One request on the control listener: the counters.
async fn control(stats: Arc<Stats>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/stats") => reply(StatusCode::OK, Some(stats.json())),
        (&Method::POST, "/reset") => {
            stats.reset();
            reply(StatusCode::OK, None)
        }
        _ => reply(StatusCode::NOT_FOUND, None),
    }
}

/// The certificate authority's PEM and the server's TLS configuration (ALPN `h2`, `http/1.1`).
fn tls_setup() -> (String, rustls::ServerConfig) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "bench-tls-server CA");
    let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
    let leaf_key = rcgen::KeyPair::generate().expect("leaf key");
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .expect("leaf params")
        .signed_by(&leaf_key, &ca, &ca_key)
        .expect("leaf certificate");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), ca.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .expect("server certificate");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (ca.pem(), config)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| -> Option<String> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let ttl: u64 = opt("--ttl")
        .unwrap_or_else(|| "1800".into())
        .parse()
        .expect("--ttl");
    let ca_out = opt("--ca-out").unwrap_or_else(|| {
        std::env::temp_dir()
            .join(format!("bench-tls-server-{}.pem", std::process::id()))
            .display()
            .to_string()
    });
    let (ca_pem, config) = tls_setup();
    std::fs::write(&ca_out, ca_pem).expect("write the CA certificate");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let stats = Arc::new(Stats::default());
    let shown = ca_out.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1");
        let control_listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind 127.0.0.1");
        println!(
            "listening {} control {} ca {shown}",
            listener.local_addr().expect("addr"),
            control_listener.local_addr().expect("addr")
        );
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let control_stats = stats.clone();
        let control_loop = async move {
            loop {
                let Ok((sock, _)) = control_listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let stats = control_stats.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let stats = stats.clone();
                        async move { Ok::<_, Infallible>(control(stats, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(sock), service)
                        .await;
                });
            }
        };
        let accept = async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                stats.connections.fetch_add(1, Relaxed);
                stats.open.fetch_add(1, Relaxed);
                let (stats, acceptor) = (stats.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let _open = OpenGuard(stats.clone());
                    let _ = sock.set_nodelay(true);
                    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(sock))
                        .await
                    {
                        Ok(Ok(tls)) => tls,
                        _ => {
                            stats.tls_failed.fetch_add(1, Relaxed);
                            return;
                        }
                    };
                    stats.tls_handshakes.fetch_add(1, Relaxed);
                    if tls.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
                        stats.tls_resumed.fetch_add(1, Relaxed);
                    }
                    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
                    let builder = auto::Builder::new(TokioExecutor::new());
                    let builder = if h2 {
                        stats.h2_connections.fetch_add(1, Relaxed);
                        builder.http2_only()
                    } else {
                        stats.h1_connections.fetch_add(1, Relaxed);
                        builder.http1_only()
                    };
                    let service_stats = stats.clone();
                    let service = hyper::service::service_fn(move |req| {
                        let stats = service_stats.clone();
                        async move { Ok::<_, Infallible>(handle(stats, req).await) }
                    });
                    let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                });
            }
        };
        tokio::select! {
            _ = accept => {}
            _ = control_loop => {}
            _ = tokio::time::sleep(Duration::from_secs(ttl)) => {}
        }
    });
    let _ = std::fs::remove_file(&ca_out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(body: &Option<String>) -> Value {
        let v: Value = serde_json::from_str(body.as_deref().expect("a body")).expect("JSON");
        v["result"].clone()
    }

    #[test]
    fn small_echoes_its_text_in_the_modern_era() {
        let stats = Stats::default();
        let (status, body) = answer(
            &stats,
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"small","arguments":{"text":"hello"}}}"#,
        );
        assert_eq!(status, StatusCode::OK);
        let r = result(&body);
        assert_eq!(r["content"][0]["text"], "hello");
        assert_eq!(r["resultType"], "complete");
        assert_eq!(stats.call.load(Relaxed), 1);
    }

    #[test]
    fn discover_offers_the_modern_version_and_initialize_is_refused() {
        let stats = Stats::default();
        let (status, body) = answer(
            &stats,
            br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#,
        );
        assert_eq!(status, StatusCode::OK);
        assert_eq!(result(&body)["supportedVersions"][0], MODERN);
        let (status, _) = answer(
            &stats,
            br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
        );
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(stats.discover.load(Relaxed), 1);
        assert_eq!(stats.initialize.load(Relaxed), 1);
    }

    #[test]
    fn notifications_are_accepted_without_a_body_and_garbage_is_a_parse_error() {
        let stats = Stats::default();
        let (status, body) = answer(
            &stats,
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
        );
        assert_eq!((status, body), (StatusCode::ACCEPTED, None));
        let (status, _) = answer(&stats, b"{not json");
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(stats.notifications.load(Relaxed), 1);
        assert_eq!(stats.other.load(Relaxed), 1);
    }

    #[test]
    fn reset_keeps_the_open_count() {
        let stats = Stats::default();
        stats.open.store(3, Relaxed);
        stats.requests.store(5, Relaxed);
        stats.reset();
        let v: Value = serde_json::from_str(&stats.json()).expect("JSON");
        assert_eq!(v["open"], 3);
        assert_eq!(v["requests"], 0);
    }

    #[test]
    fn the_certificate_authority_is_pem_and_alpn_offers_h2_first() {
        let (pem, config) = tls_setup();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(
            config.alpn_protocols,
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        );
    }
}
