//! In-test HTTP/1.1 servers on 127.0.0.1 with canned MCP answers.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::Budgets;
use mcp_sansio::{Config, Era, EraHint};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Req {
    /// The index of the connection it came on (0 for the first accepted).
    pub conn: usize,
    pub method: String,
    pub path: String,
    pub head: String,
    pub body: Vec<u8>,
}

impl Req {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The JSON-RPC method, or the HTTP method for a body-less request.
    pub fn rpc_method(&self) -> String {
        match self.json()["method"].as_str() {
            Some(m) => m.to_owned(),
            None => self.method.clone(),
        }
    }

    pub fn id(&self) -> u64 {
        self.json()["id"].as_u64().unwrap_or(0)
    }
}

/// What the server does with a request.
pub enum Reply {
    /// Writes the bytes and waits for the next request on the connection.
    Send(Vec<u8>),
    /// Writes the bytes and closes the connection.
    SendClose(Vec<u8>),
    /// Writes the bytes, then after the pause the extra bytes (unasked), then serves on.
    SendThen(Vec<u8>, Duration, Vec<u8>),
    /// Writes the bytes one at a time, pausing between them, then closes.
    Trickle(Vec<u8>, Duration),
    /// Never answers; keeps the connection open until the client closes it.
    Never,
    /// Writes this head, then body bytes without end, as fast as the client reads.
    Flood(Vec<u8>),
    /// Closes the connection without answering.
    Close,
}

pub type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// A listening server; dropping it stops the listener and every connection.
pub struct Server {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    closed: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<Req>>>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// A plain HTTP server on 127.0.0.1.
    pub async fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_with(None, Arc::new(handler)).await
    }

    /// A server that wraps every accepted connection in TLS with `acceptor`.
    pub async fn start_tls(
        acceptor: tokio_rustls::TlsAcceptor,
        handler: impl Fn(&Req) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_with(Some(acceptor), Arc::new(handler)).await
    }

    async fn start_with(tls: Option<tokio_rustls::TlsAcceptor>, handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (a, c, l) = (accepted.clone(), closed.clone(), log.clone());
        let task = tokio::spawn(async move {
            // Dropping the set (when this task is aborted) aborts every connection task.
            let mut conns = JoinSet::new();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let index = a.fetch_add(1, Ordering::SeqCst);
                let (handler, log, tls, closed) =
                    (handler.clone(), l.clone(), tls.clone(), c.clone());
                conns.spawn(async move {
                    match tls {
                        None => serve(tcp, index, handler, log).await,
                        Some(acceptor) => {
                            if let Ok(s) = acceptor.accept(tcp).await {
                                serve(s, index, handler, log).await;
                            }
                        }
                    }
                    closed.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        Server {
            addr,
            accepted,
            closed,
            log,
            task,
        }
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.addr.port())
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Connections that ended so far (the client closed them, or the reply did).
    pub fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }

    /// Waits up to two seconds for `n` connections to have ended; returns how many did.
    pub async fn wait_closed(&self, n: usize) -> usize {
        for _ in 0..200 {
            if self.closed() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.closed()
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    /// The JSON-RPC methods received so far, in order.
    pub fn methods(&self) -> Vec<String> {
        self.requests().iter().map(Req::rpc_method).collect()
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    conn: usize,
    handler: Handler,
    log: Arc<Mutex<Vec<Req>>>,
) {
    let mut buf = Vec::new();
    loop {
        let Some(req) = read_request(&mut s, &mut buf, conn).await else {
            return;
        };
        log.lock().unwrap().push(req.clone());
        match handler(&req) {
            Reply::Send(bytes) => {
                if s.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Reply::SendThen(bytes, pause, extra) => {
                if s.write_all(&bytes).await.is_err() {
                    return;
                }
                tokio::time::sleep(pause).await;
                if s.write_all(&extra).await.is_err() {
                    return;
                }
            }
            Reply::SendClose(bytes) => {
                let _ = s.write_all(&bytes).await;
                let _ = s.shutdown().await;
                return;
            }
            Reply::Trickle(bytes, pause) => {
                for b in bytes {
                    if s.write_all(&[b]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(pause).await;
                }
                return;
            }
            Reply::Flood(head) => {
                if s.write_all(&head).await.is_err() {
                    return;
                }
                let block = vec![b'x'; 8192];
                while s.write_all(&block).await.is_ok() {}
                return;
            }
            Reply::Never => {
                let mut sink = [0u8; 1024];
                while matches!(s.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
            Reply::Close => return,
        }
    }
}

/// Reads one request (head and Content-Length body); `None` at end of stream.
async fn read_request<S: AsyncRead + Unpin>(
    s: &mut S,
    buf: &mut Vec<u8>,
    conn: usize,
) -> Option<Req> {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.trim().parse::<usize>().unwrap());
    while buf.len() < head_end + length {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + length].to_vec();
    buf.drain(..head_end + length);
    let mut first = head.lines().next().unwrap_or("").split(' ');
    Some(Req {
        conn,
        method: first.next().unwrap_or("").to_owned(),
        path: first.next().unwrap_or("").to_owned(),
        head,
        body,
    })
}

// ---------------------------------------------------------------------------------------------
// Canned answers (the shapes of a 2026-07-28 server)

pub use canned::*;
use mcp_sansio_test_support::adapter_tests::canned;

/// The answer of a well-behaved modern server with tools `echo` and `add`.
pub fn mcp(req: &Req) -> Reply {
    Reply::Send(mcp_bytes(req))
}

/// The bytes of [`mcp`]'s answer.
pub fn mcp_bytes(req: &Req) -> Vec<u8> {
    modern_answer(&req.rpc_method(), req.id())
}

/// A 2025-11-25 server: no `server/discover`, an `initialize` handshake and the session `sess-1`.
pub fn legacy(req: &Req) -> Reply {
    Reply::Send(legacy_answer("2025-11-25", &req.rpc_method(), req.id()))
}

// ---------------------------------------------------------------------------------------------
// Configurations

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Every time budget set to `limit`.
pub fn time_budgets(limit: Duration) -> Budgets {
    let mut b = Budgets::default();
    b.request_time = limit;
    b.list_time = limit;
    b.call_time = limit;
    b.close_time = limit;
    b
}

pub fn modern_hint() -> Option<EraHint> {
    Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    })
}

/// A configuration for `url` that knows the server is modern (connecting sends nothing).
pub fn hinted(url: &str) -> Config {
    Config::new(url).unwrap().with_era_hint(modern_hint())
}

/// The loopback policy the tests' servers need.
pub fn loopback_client() -> mcp_sansio_tokio::Client {
    mcp_sansio_tokio::Client::builder()
        .policy(mcp_sansio_net::AddressPolicy::strict().allow_loopback(true))
        .build()
}
