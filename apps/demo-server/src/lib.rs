//! An in-process MCP server on loopback, for demos, integration tests and benchmarks.
//!
//! [`DemoServer::start`] binds `127.0.0.1` (port 0 by default), runs its own tokio runtime on
//! its own thread (so synchronous and asynchronous callers can both use it) and stops when
//! dropped or on [`DemoServer::shutdown`]. It speaks the Streamable HTTP transport over a
//! hand-written HTTP/1.1 (keep-alive, `Content-Length` and chunked responses):
//!
//! - the **modern** era (2026-07-28): `server/discover`, stateless requests carrying the
//!   protocol version in `_meta`, the `-32022` unsupported-version error with the supported list,
//!   and the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers checked against the body
//!   (`-32020` on a mismatch);
//! - the **legacy** era (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05): `initialize`,
//!   `notifications/initialized` (202), `Mcp-Session-Id` sessions and `DELETE`.
//!
//! Tools: `echo` {text}, `add` {a, b} (text and structured content), `image` (PNG), `audio`
//! (WAV), `resource` (embedded text and blob), `resource_link`, `fail` (`isError: true`), `slow`
//! {steps, delay_ms} (progress notifications on an SSE stream), `big` (a long text), and as many
//! `filler_NNNNN` tools with realistic schemas as asked for. An unknown tool is a JSON-RPC error.
//!
//! Tasks (SEP-2663): to a modern request that declares the `io.modelcontextprotocol/tasks`
//! extension, `tools/list` also lists `slow_count` {to}, whose call answers with a
//! `CreateTaskResult`; `tasks/get`, `tasks/update` and `tasks/cancel` drive it (see [`tasks`]).
//!
//! ```
//! use mcp_sansio_demo_server::{DemoServer, Options};
//!
//! let server = DemoServer::start(Options::default())?;
//! assert!(server.url().starts_with("http://127.0.0.1:"));
//! assert_eq!(server.stats().requests_served, 0);
//! server.shutdown();
//! # Ok::<(), std::io::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod http;
pub mod mcp;
pub mod tasks;
pub mod tools;

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

pub use mcp::{LEGACY_VERSIONS, MODERN_VERSION};

/// Which protocol eras the server speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eras {
    /// Modern (2026-07-28) and legacy on the same endpoint.
    #[default]
    Both,
    /// Legacy only: `server/discover` gets `400 -32000` like a 2025 server.
    LegacyOnly,
    /// Modern only: `initialize` gets `404 -32601`.
    ModernOnly,
}

/// How results are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ResponseMode {
    /// `application/json` with `Content-Length`; only the `slow` tool with a progress token
    /// answers with an event stream.
    #[default]
    Json,
    /// `text/event-stream`, chunked, for every request that has a result.
    Sse,
}

/// The server's options. Start from [`Options::default`] and change what matters.
#[derive(Clone)]
pub struct Options {
    /// Where to listen; default `127.0.0.1:0`. Only loopback addresses are accepted.
    pub addr: SocketAddr,
    /// Which eras are spoken.
    pub eras: Eras,
    /// JSON or SSE answers.
    pub response_mode: ResponseMode,
    /// Tools per `tools/list` page; 0 means all on one page. Default 0.
    pub page_size: usize,
    /// How many filler tools follow the built-in ones. Default 0.
    pub filler_tools: usize,
    /// The approximate serialized size of each filler tool's input schema. Default 2048.
    pub filler_schema_bytes: usize,
    /// The length of the `big` tool's text. Default 4 MiB.
    pub big_text_bytes: usize,
    /// A bearer token every request must carry (`401` with `WWW-Authenticate` otherwise).
    pub bearer_token: Option<String>,
    /// Worker threads of the server's runtime. Default 2.
    pub worker_threads: usize,
    /// The listen backlog. Default 4096.
    pub backlog: u32,
    /// Whether the catalog also lists [`tools::BROKEN_TOOLS`] (after the built-in tools), entries a
    /// careful client refuses. Default false.
    pub broken_tools: bool,
    /// Whether connections are kept alive between requests; when false every answer carries
    /// `Connection: close`. Default true.
    pub keep_alive: bool,
}

/// Every option, the bearer token redacted.
impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("addr", &self.addr)
            .field("eras", &self.eras)
            .field("response_mode", &self.response_mode)
            .field("page_size", &self.page_size)
            .field("filler_tools", &self.filler_tools)
            .field("filler_schema_bytes", &self.filler_schema_bytes)
            .field("big_text_bytes", &self.big_text_bytes)
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| "<redacted>"),
            )
            .field("worker_threads", &self.worker_threads)
            .field("backlog", &self.backlog)
            .field("broken_tools", &self.broken_tools)
            .field("keep_alive", &self.keep_alive)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            eras: Eras::Both,
            response_mode: ResponseMode::Json,
            page_size: 0,
            filler_tools: 0,
            filler_schema_bytes: 2048,
            big_text_bytes: 4 << 20,
            bearer_token: None,
            worker_threads: 2,
            backlog: 4096,
            keep_alive: true,
            broken_tools: false,
        }
    }
}

impl Options {
    /// Sets the eras.
    pub fn eras(mut self, eras: Eras) -> Self {
        self.eras = eras;
        self
    }
    /// Sets the response mode.
    pub fn response_mode(mut self, mode: ResponseMode) -> Self {
        self.response_mode = mode;
        self
    }
    /// Sets the page size of `tools/list` (0: one page).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n;
        self
    }
    /// Adds `n` filler tools whose schemas are about `schema_bytes` long.
    pub fn filler_tools(mut self, n: usize, schema_bytes: usize) -> Self {
        self.filler_tools = n;
        self.filler_schema_bytes = schema_bytes;
        self
    }
    /// Sets the length of the `big` tool's text.
    pub fn big_text_bytes(mut self, n: usize) -> Self {
        self.big_text_bytes = n;
        self
    }
    /// Requires this bearer token.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }
    /// Keeps connections alive between requests (true) or closes each after its answer.
    pub fn keep_alive(mut self, on: bool) -> Self {
        self.keep_alive = on;
        self
    }
    /// Lists the broken tools too.
    pub fn broken_tools(mut self, on: bool) -> Self {
        self.broken_tools = on;
        self
    }
    /// Sets the number of worker threads.
    pub fn worker_threads(mut self, n: usize) -> Self {
        self.worker_threads = n;
        self
    }
}

/// Counters shared by the server's tasks.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) open: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) streams_cancelled: AtomicU64,
}

/// A snapshot of the server's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// TCP connections accepted since the start.
    pub connections_accepted: u64,
    /// TCP connections open now.
    pub connections_open: u64,
    /// HTTP requests answered (every status, including 401 and 405).
    pub requests_served: u64,
    /// Legacy sessions alive now.
    pub sessions: u64,
    /// Event streams the client closed before their end (a cancelled `slow` call, for one).
    pub streams_cancelled: u64,
}

/// A running server; stops when dropped.
pub struct DemoServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    server: Arc<mcp::Server>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl DemoServer {
    /// Binds and starts serving.
    pub fn start(options: Options) -> io::Result<DemoServer> {
        if !options.addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the demo server listens on loopback only",
            ));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.worker_threads.max(1))
            .thread_name("mcp-demo-server")
            .enable_io()
            .enable_time()
            .build()?;
        // Bind on the server thread: the caller may itself be inside a runtime.
        let (bound, bound_rx) = std::sync::mpsc::channel();
        let counters = Arc::new(Counters::default());
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let c = counters.clone();
        let thread = std::thread::Builder::new()
            .name("mcp-demo-server".into())
            .spawn(move || {
                let listener = runtime.block_on(async {
                    let socket = match options.addr {
                        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
                        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
                    };
                    socket.set_reuseaddr(true)?;
                    socket.bind(options.addr)?;
                    let listener = socket.listen(options.backlog)?;
                    let addr = listener.local_addr()?;
                    Ok::<_, io::Error>((listener, addr))
                });
                let (listener, addr) = match listener {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = bound.send(Err(e));
                        return;
                    }
                };
                let server = Arc::new(mcp::Server::new(options, addr.port()));
                let _ = bound.send(Ok((addr, server.clone())));
                runtime.block_on(http::serve(listener, server, c, stopped));
                // Dropping the runtime here cancels every connection task.
                drop(runtime);
            })?;
        let (addr, server) = bound_rx
            .recv()
            .map_err(|_| io::Error::other("the server thread ended before binding"))??;
        Ok(DemoServer {
            addr,
            counters,
            server,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp` (every path is served the same).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The counters now.
    pub fn stats(&self) -> Stats {
        Stats {
            connections_accepted: self.counters.accepted.load(Ordering::Relaxed),
            connections_open: self.counters.open.load(Ordering::Relaxed),
            requests_served: self.counters.requests.load(Ordering::Relaxed),
            sessions: self.server.session_count() as u64,
            streams_cancelled: self.counters.streams_cancelled.load(Ordering::Relaxed),
        }
    }

    /// How many `slow_count` calls asked for a task since the start (each would have started the
    /// tool once): a test's count of the tool's runs.
    pub fn tasks_created(&self) -> u64 {
        self.server.tasks_created()
    }

    /// The trace contexts (`traceparent`, `tracestate`, `baggage`) requests carried in
    /// `params._meta`, oldest first: the latest [`mcp::MAX_RECORDED_TRACES`].
    pub fn trace_contexts(&self) -> Vec<mcp::ReceivedTrace> {
        self.server.trace_contexts()
    }

    /// The options the server runs with.
    pub fn options(&self) -> &Options {
        &self.server.options
    }

    /// Stops accepting, closes every connection and waits for the server thread.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

impl std::fmt::Debug for DemoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bearer token every request must carry is a credential: the options' `Debug` output
    /// says one is set, never what it is.
    #[test]
    fn the_options_debug_never_shows_the_bearer_token() {
        let o = Options::default().bearer_token("demo-SECRET-token");
        for text in [format!("{o:?}"), format!("{o:#?}")] {
            assert!(text.contains("bearer_token: Some("), "{text}");
            assert!(!text.contains("demo-SECRET-token"), "{text}");
            assert!(text.contains("page_size"), "{text}");
        }
    }
}
