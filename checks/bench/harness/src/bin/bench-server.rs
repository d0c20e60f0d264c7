//! The local MCP server every contender talks to in a benchmark run (127.0.0.1 only).
//!
//! `bench-server [--port P] [--mode json|sse] [--eras both|modern|legacy] [--ttl SECONDS]
//! [--list-ttl-ms MS] [--pages N] [--tiny-catalog]` (`--list-ttl-ms`: the `ttlMs` its 2026-07-28
//! `tools/list` pages declare, default 0: not cacheable; `--pages`: the catalog's first `N` pages,
//! the last of them naming no next cursor, default all 100; `--tiny-catalog`: instead of those
//! pages, one page of the three tools it answers, [`bench_harness::catalog::tiny_page_result`],
//! for the scaling rows' work items that list as well as call)
//!
//! Serves on `/mcp`: `server/discover` (modern era), `initialize` / `notifications/initialized`
//! / `DELETE` (legacy era, with a session id), `tools/list` (the catalog of
//! [`bench_harness::catalog`], 100 pages of about 80 KiB), `tools/call` of `small` (echoes a short
//! text), `big` (about 4 MiB of text) and `slow` (answers after 3 s). Responses are JSON with a Content-Length (`json`) or
//! one-event SSE streams, chunked (`sse`). With `--eras legacy` it answers `server/discover` like a
//! 2025-era server (400, JSON-RPC error); with `--eras modern` it refuses `initialize`.
//!
//! Counters, not counted themselves: `GET /stats` (JSON) and `POST /reset`. It prints
//! `listening 127.0.0.1:PORT` once bound and exits after `--ttl` seconds (default 1800).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use bench_harness::catalog;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Default)]
struct Stats {
    connections: AtomicU64,
    open: AtomicU64,
    requests: AtomicU64,
    discover: AtomicU64,
    initialize: AtomicU64,
    notifications: AtomicU64,
    list: AtomicU64,
    call: AtomicU64,
    delete: AtomicU64,
    get: AtomicU64,
    other: AtomicU64,
    bytes_out: AtomicU64,
}

impl Stats {
    fn fields(&self) -> [(&'static str, &AtomicU64); 12] {
        [
            ("connections", &self.connections),
            ("open", &self.open),
            ("requests", &self.requests),
            ("discover", &self.discover),
            ("initialize", &self.initialize),
            ("notifications", &self.notifications),
            ("list", &self.list),
            ("call", &self.call),
            ("delete", &self.delete),
            ("get", &self.get),
            ("other", &self.other),
            ("bytes_out", &self.bytes_out),
        ]
    }
}

struct Server {
    sse: bool,
    modern_ok: bool,
    legacy_ok: bool,
    /// Page results, [legacy, modern].
    pages: [Vec<String>; 2],
    big: [String; 2],
    stats: Stats,
    sessions: AtomicU64,
}

const LEGACY: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const MODERN: &str = "2026-07-28";

struct Response {
    status: &'static str,
    session: Option<String>,
    body: Option<String>,
    /// Held back this long before it is written (the `slow` tool).
    delay: Duration,
}

impl Response {
    fn json(body: String) -> Response {
        Response {
            status: "200 OK",
            session: None,
            body: Some(body),
            delay: Duration::ZERO,
        }
    }
    fn empty(status: &'static str) -> Response {
        Response {
            status,
            session: None,
            body: None,
            delay: Duration::ZERO,
        }
    }
}

fn rpc(id: &str, result: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}")
}

fn rpc_error(id: &str, code: i64, message: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":\"{message}\"}}}}")
}

impl Server {
    fn count(&self, c: &AtomicU64) {
        c.fetch_add(1, Relaxed);
        self.stats.requests.fetch_add(1, Relaxed);
    }

    fn handle(&self, method: &str, headers: &[(String, String)], body: &[u8]) -> Response {
        let header = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.as_str())
        };
        match method {
            "GET" => {
                self.count(&self.stats.get);
                return Response::empty("405 Method Not Allowed");
            }
            "DELETE" => {
                self.count(&self.stats.delete);
                return Response::empty("200 OK");
            }
            "POST" => {}
            _ => {
                self.count(&self.stats.other);
                return Response::empty("405 Method Not Allowed");
            }
        }
        let Ok(msg) = serde_json::from_slice::<Value>(body) else {
            self.count(&self.stats.other);
            return Response {
                status: "400 Bad Request",
                session: None,
                body: Some(rpc_error("null", -32700, "parse error")),
                delay: Duration::ZERO,
            };
        };
        let id = msg.get("id").map(|v| v.to_string());
        let rpc_method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let modern = header("mcp-protocol-version") == Some(MODERN)
            || msg
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_some();
        let Some(id) = id else {
            self.count(&self.stats.notifications);
            return Response::empty("202 Accepted");
        };
        match rpc_method {
            "server/discover" => {
                self.count(&self.stats.discover);
                if !self.modern_ok {
                    return Response {
                        status: "400 Bad Request",
                        session: None,
                        body: Some(rpc_error(
                            "null",
                            -32000,
                            "Bad Request: No valid session ID provided",
                        )),
                        delay: Duration::ZERO,
                    };
                }
                Response::json(rpc(&id, &format!(
                    "{{\"supportedVersions\":[\"{MODERN}\"],\"capabilities\":{{\"tools\":{{}}}},\"resultType\":\"complete\",\"ttlMs\":3600000,\"cacheScope\":\"private\",\"_meta\":{{\"io.modelcontextprotocol/serverInfo\":{{\"name\":\"bench-server\",\"version\":\"1.0.0\"}}}}}}"
                )))
            }
            "initialize" => {
                self.count(&self.stats.initialize);
                if !self.legacy_ok {
                    return Response {
                        status: "400 Bad Request",
                        session: None,
                        body: Some(rpc_error(&id, -32022, "Unsupported protocol version")),
                        delay: Duration::ZERO,
                    };
                }
                let asked = msg
                    .pointer("/params/protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let version = if LEGACY.contains(&asked) {
                    asked
                } else {
                    LEGACY[0]
                };
                let n = self.sessions.fetch_add(1, Relaxed);
                Response {
                    status: "200 OK",
                    session: Some(format!("bench-session-{n}")),
                    body: Some(rpc(&id, &format!(
                        "{{\"protocolVersion\":\"{version}\",\"capabilities\":{{\"tools\":{{}}}},\"serverInfo\":{{\"name\":\"bench-server\",\"version\":\"1.0.0\"}}}}"
                    ))),
                    delay: Duration::ZERO,
                }
            }
            "tools/list" => {
                self.count(&self.stats.list);
                let cursor = msg
                    .pointer("/params/cursor")
                    .and_then(Value::as_str)
                    .unwrap_or("p0");
                let page = cursor
                    .strip_prefix('p')
                    .and_then(|n| n.parse::<usize>().ok());
                match page.filter(|p| *p < self.pages[0].len()) {
                    Some(p) => Response::json(rpc(&id, &self.pages[modern as usize][p])),
                    None => Response::json(rpc_error(&id, -32602, "invalid cursor")),
                }
            }
            "tools/call" => {
                self.count(&self.stats.call);
                match msg.pointer("/params/name").and_then(Value::as_str) {
                    Some("big") => Response::json(rpc(&id, &self.big[modern as usize])),
                    Some("slow") => Response {
                        delay: Duration::from_secs(3),
                        ..Response::json(rpc(&id, &catalog::call_result("slow", modern)))
                    },
                    Some("small") => {
                        let text = msg
                            .pointer("/params/arguments/text")
                            .and_then(Value::as_str)
                            .unwrap_or("ok");
                        Response::json(rpc(&id, &catalog::call_result(text, modern)))
                    }
                    _ => Response::json(rpc_error(&id, -32602, "unknown tool")),
                }
            }
            "ping" => {
                self.count(&self.stats.other);
                Response::json(rpc(&id, "{}"))
            }
            _ => {
                self.count(&self.stats.other);
                Response::json(rpc_error(&id, -32601, "method not found"))
            }
        }
    }

    fn stats_json(&self) -> String {
        let parts: Vec<String> = self
            .stats
            .fields()
            .iter()
            .map(|(k, v)| format!("\"{k}\":{}", v.load(Relaxed)))
            .collect();
        format!("{{{}}}", parts.join(","))
    }

    fn reset(&self) {
        for (k, v) in self.stats.fields() {
            if k != "open" {
                v.store(0, Relaxed);
            }
        }
    }

    /// Serializes `r` onto `out`.
    fn write(r: &Response, close: bool, sse: bool, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = write!(out, "HTTP/1.1 {}\r\nserver: bench-server\r\n", r.status);
        if let Some(s) = &r.session {
            let _ = write!(out, "mcp-session-id: {s}\r\n");
        }
        if close {
            out.extend_from_slice(b"connection: close\r\n");
        }
        match &r.body {
            None => out.extend_from_slice(b"content-length: 0\r\n\r\n"),
            Some(b) if sse && r.status.starts_with("200") => {
                out.extend_from_slice(b"content-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n");
                let event_len = "event: message\ndata: ".len() + b.len() + 2;
                let _ = write!(out, "{event_len:x}\r\nevent: message\ndata: ");
                out.extend_from_slice(b.as_bytes());
                out.extend_from_slice(b"\n\n\r\n0\r\n\r\n");
            }
            Some(b) => {
                let _ = write!(
                    out,
                    "content-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    b.len()
                );
                out.extend_from_slice(b.as_bytes());
            }
        }
    }
}

async fn serve(server: Arc<Server>, mut sock: TcpStream) {
    let _ = sock.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut out: Vec<u8> = Vec::new();
    loop {
        // Read one request head.
        let (head_len, method, path, headers) = loop {
            let mut hs = [httparse::EMPTY_HEADER; 64];
            let mut req = httparse::Request::new(&mut hs);
            match req.parse(&buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let headers: Vec<(String, String)> = req
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_owned(),
                                String::from_utf8_lossy(h.value).into_owned(),
                            )
                        })
                        .collect();
                    break (
                        n,
                        req.method.unwrap_or("").to_owned(),
                        req.path.unwrap_or("").to_owned(),
                        headers,
                    );
                }
                Ok(httparse::Status::Partial) => {}
                Err(_) => return,
            }
            let mut chunk = [0u8; 16384];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let header = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.as_str())
        };
        let len: usize = header("content-length")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let close = header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        while buf.len() < head_len + len {
            let mut chunk = [0u8; 16384];
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = buf[head_len..head_len + len].to_vec();
        buf.drain(..head_len + len);
        let response = match (method.as_str(), path.as_str()) {
            ("GET", "/stats") => Response::json(server.stats_json()),
            ("POST", "/reset") => {
                server.reset();
                Response::empty("200 OK")
            }
            (m, p) if p == "/mcp" || p.starts_with("/mcp?") => server.handle(m, &headers, &body),
            _ => Response::empty("404 Not Found"),
        };
        if !response.delay.is_zero() {
            tokio::time::sleep(response.delay).await;
        }
        out.clear();
        if path.starts_with("/mcp") {
            Server::write(&response, close, server.sse, &mut out);
            server.stats.bytes_out.fetch_add(out.len() as u64, Relaxed);
        } else {
            // Control answers: plain JSON, not counted.
            Server::write(&response, close, false, &mut out);
        }
        if sock.write_all(&out).await.is_err() || close {
            return;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.to_owned())
    };
    let port: u16 = opt("--port", "0").parse().expect("--port");
    let mode = opt("--mode", "json");
    let eras = opt("--eras", "both");
    let ttl: u64 = opt("--ttl", "1800").parse().expect("--ttl");
    let list_ttl_ms: u64 = opt("--list-ttl-ms", "0").parse().expect("--list-ttl-ms");
    let pages: usize = opt("--pages", &catalog::PAGES.to_string())
        .parse()
        .expect("--pages");
    let tiny = args.iter().any(|a| a == "--tiny-catalog");
    let big_text = catalog::big_text();
    let server = Arc::new(Server {
        sse: mode == "sse",
        modern_ok: eras != "legacy",
        legacy_ok: eras != "modern",
        pages: if tiny {
            [
                vec![catalog::tiny_page_result(false)],
                vec![catalog::tiny_page_result(true)],
            ]
        } else {
            [
                (0..pages)
                    .map(|p| catalog::page_result_of(p, pages, false, 0))
                    .collect(),
                (0..pages)
                    .map(|p| catalog::page_result_of(p, pages, true, list_ttl_ms))
                    .collect(),
            ]
        },
        big: [
            catalog::call_result(&big_text, false),
            catalog::call_result(&big_text, true),
        ],
        stats: Stats::default(),
        sessions: AtomicU64::new(0),
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind 127.0.0.1");
        println!("listening {}", listener.local_addr().expect("addr"));
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let accept = async {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let server = server.clone();
                server.stats.connections.fetch_add(1, Relaxed);
                server.stats.open.fetch_add(1, Relaxed);
                tokio::spawn(async move {
                    serve(server.clone(), sock).await;
                    server.stats.open.fetch_sub(1, Relaxed);
                });
            }
        };
        tokio::select! {
            _ = accept => {}
            _ = tokio::time::sleep(Duration::from_secs(ttl)) => {}
        }
    });
}
