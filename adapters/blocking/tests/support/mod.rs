//! A std-only HTTP/1.1 test server on 127.0.0.1 with canned MCP answers. It counts accepted
//! connections, records requests, and stops (closing every socket, joining every thread) on drop.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Req {
    /// Index of the accepted connection it came on, from 0.
    pub conn: usize,
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC method, or the HTTP method for body-less requests.
    pub fn rpc_method(&self) -> String {
        if self.body.is_empty() {
            return self.method.clone();
        }
        let v: serde_json::Value = serde_json::from_slice(&self.body).expect("JSON body");
        v["method"].as_str().unwrap_or("").to_owned()
    }

    /// The JSON-RPC id, 0 for body-less requests and notifications.
    pub fn rpc_id(&self) -> u64 {
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        v["id"].as_u64().unwrap_or(0)
    }
}

/// What the server does with a request.
pub enum Reply {
    /// Writes the bytes and keeps the connection open for the next request.
    Send(Vec<u8>),
    /// Writes the bytes and closes the connection.
    SendAndClose(Vec<u8>),
    /// Never answers (holds the connection until the server stops or the client closes).
    Hang,
    /// Writes `head`, then `fill` bytes as fast as the client reads, forever.
    Flood { head: Vec<u8>, fill: u8 },
    /// Writes `head`, then one `fill` byte every `every`, forever.
    Trickle {
        head: Vec<u8>,
        fill: u8,
        every: Duration,
    },
}

pub type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// A TLS configuration for the server side, or none for plain HTTP.
pub type Tls = Option<Arc<rustls::ServerConfig>>;

pub struct Server {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Req>>>,
    stop: Arc<AtomicBool>,
    sockets: Arc<Mutex<Vec<TcpStream>>>,
    threads: Arc<Mutex<Vec<JoinHandle<()>>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_on("127.0.0.1:0", None, Arc::new(handler))
    }

    pub fn start_tls(
        tls: Arc<rustls::ServerConfig>,
        handler: impl Fn(&Req) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_on("127.0.0.1:0", Some(tls), Arc::new(handler))
    }

    /// A server that answers nothing useful, to count connections that reach it.
    pub fn counting(bind: &str) -> Option<Server> {
        TcpListener::bind(bind).ok()?;
        Some(Server::start_on(bind, None, Arc::new(|_| Reply::Hang)))
    }

    fn start_on(bind: &str, tls: Tls, handler: Handler) -> Server {
        let listener = TcpListener::bind(bind).expect("bind the test server");
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let sockets = Arc::new(Mutex::new(Vec::new()));
        let threads = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (accepted, requests, stop, sockets, threads) = (
                accepted.clone(),
                requests.clone(),
                stop.clone(),
                sockets.clone(),
                threads.clone(),
            );
            std::thread::spawn(move || {
                for socket in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(socket) = socket else { continue };
                    let conn = accepted.fetch_add(1, Ordering::SeqCst);
                    sockets.lock().unwrap().push(socket.try_clone().unwrap());
                    let (requests, stop, handler, tls) =
                        (requests.clone(), stop.clone(), handler.clone(), tls.clone());
                    let t = std::thread::spawn(move || {
                        // Other handles of the socket stay registered: end it explicitly.
                        let closer = socket.try_clone().unwrap();
                        match tls {
                            None => serve(socket, conn, &requests, &stop, &*handler),
                            Some(cfg) => {
                                let tls = rustls::ServerConnection::new(cfg).unwrap();
                                let stream = rustls::StreamOwned::new(tls, socket);
                                serve(stream, conn, &requests, &stop, &*handler)
                            }
                        }
                        let _ = closer.shutdown(Shutdown::Both);
                    });
                    threads.lock().unwrap().push(t);
                }
            })
        };
        Server {
            addr,
            accepted,
            requests,
            stop,
            sockets,
            threads,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:port/mcp` (or https with the given host).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Req> {
        self.requests.lock().unwrap().clone()
    }

    /// The JSON-RPC (or HTTP, when body-less) methods received, in order.
    pub fn methods(&self) -> Vec<String> {
        self.requests().iter().map(Req::rpc_method).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for s in self.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        let threads: Vec<_> = self.threads.lock().unwrap().drain(..).collect();
        for t in threads {
            let _ = t.join();
        }
    }
}

fn serve<S: Read + Write>(
    mut s: S,
    conn: usize,
    requests: &Mutex<Vec<Req>>,
    stop: &AtomicBool,
    handler: &(dyn Fn(&Req) -> Reply + Send + Sync),
) {
    let mut buf = Vec::new();
    while let Some(req) = read_request(&mut s, &mut buf, conn) {
        requests.lock().unwrap().push(req.clone());
        match handler(&req) {
            Reply::Send(b) => {
                if s.write_all(&b).and_then(|()| s.flush()).is_err() {
                    return;
                }
            }
            Reply::SendAndClose(b) => {
                let _ = s.write_all(&b).and_then(|()| s.flush());
                return;
            }
            Reply::Hang => {
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                return;
            }
            Reply::Flood { head, fill } => {
                let block = vec![fill; 64 * 1024];
                if s.write_all(&head).is_err() {
                    return;
                }
                while !stop.load(Ordering::SeqCst) {
                    if s.write_all(&block).is_err() {
                        return;
                    }
                }
                return;
            }
            Reply::Trickle { head, fill, every } => {
                if s.write_all(&head).and_then(|()| s.flush()).is_err() {
                    return;
                }
                while !stop.load(Ordering::SeqCst) {
                    if s.write_all(&[fill]).and_then(|()| s.flush()).is_err() {
                        return;
                    }
                    std::thread::sleep(every);
                }
                return;
            }
        }
    }
}

fn read_request<S: Read>(s: &mut S, buf: &mut Vec<u8>, conn: usize) -> Option<Req> {
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
    while buf.len() < head_end + length {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = buf[head_end..head_end + length].to_vec();
    buf.drain(..head_end + length);
    Some(Req {
        conn,
        method,
        target,
        headers,
        body,
    })
}

// ---------------------------------------------------------------------------------------------
// Canned answers

pub use canned::*;
use mcp_sansio_test_support::adapter_tests::canned;

/// A modern server: discover, two tools, every call answers "hi".
pub fn modern(req: &Req) -> Reply {
    Reply::Send(modern_answer(&req.rpc_method(), req.rpc_id()))
}

/// A legacy (2025-06-18) server with session id `sess-1`.
pub fn legacy(req: &Req) -> Reply {
    Reply::Send(legacy_answer("2025-06-18", &req.rpc_method(), req.rpc_id()))
}
