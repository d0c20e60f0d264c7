//! The tokio adapter of mcp-sansio: an MCP client for the Streamable HTTP transport, for servers
//! that are hostile until their answers are checked.
//!
//! The protocol lives in the sans-IO core ([`mcp_sansio::Connection`]): negotiation, requests,
//! every budget and every deadline. This crate moves the bytes. For each request the core emits it
//! takes an idle keep-alive socket of the same origin from the client's pool, or dials a new one
//! through the network guard of [`mcp_sansio_net`]: the host is resolved once (on tokio's blocking
//! pool), every address is judged by the [`AddressPolicy`], and only admitted addresses are
//! dialled, in order, within the dial timeout that covers TCP and TLS. A refused address never
//! sees a connection attempt. TLS is rustls with the ring provider, SNI set to the endpoint's host
//! and ALPN `http/1.1`. No proxy variable is read and no redirect is followed.
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_tokio::Client;
//!
//! # async fn run() -> Result<(), mcp_sansio::Error> {
//! let client = Client::new(); // strict address policy, system resolver, webpki roots
//! let config = Config::new("https://mcp.example.com/mcp")?.with_bearer_token("secret");
//! let mut session = client.connect(config).await?;
//! println!("{} speaks {}", session.server_info().map_or("?", |i| &i.name), session.version());
//! let catalog = session.list_tools().await?;
//! for tool in &catalog.tools {
//!     println!("tool {}", tool.name());
//! }
//! let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//! println!("error: {}, {} content blocks", result.is_error, result.content.len());
//! session.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Sockets
//!
//! One tokio task serves one exchange: it opens or takes the socket, writes the request and
//! forwards what it reads, one read at a time, waiting for the session to feed it to the core
//! before reading again (so no response is buffered ahead of the core's budgets). When the core
//! declares the response complete and the socket reusable, the task parks the socket in the
//! client's pool; in every other case the socket is closed. A parked socket is taken again only
//! if the server has not closed it and it holds no unasked bytes. A [`Session`] that is dropped
//! aborts its tasks, which closes their sockets; the socket of the `DELETE` that ends a legacy
//! session is closed, not pooled.
//!
//! # Errors
//!
//! Every operation fails with the core's [`Error`], whose [`kind`](Error::kind) is one of the
//! three [`ErrorKind`](mcp_sansio::ErrorKind)s. What the adapter observes reaches the core as a
//! [`TransportError`] and comes back as [`Error::Transport`], of kind `ConnectionFailed`:
//!
//! | [`TransportErrorKind`] | when |
//! |---|---|
//! | `AddressRefused` | the policy refused every address of the host; no socket was opened |
//! | `Resolve` | the name did not resolve, or to no address |
//! | `Connect` | no admitted address accepted a connection within the dial timeout |
//! | `Tls` | the TLS handshake failed (untrusted certificate, wrong name, …) |
//! | `Io` | writing the request or reading the response failed |
//!
//! # Runtime and cancellation
//!
//! Sessions run on the tokio runtime they are used in (any flavour, with I/O and time
//! enabled): exchange tasks are spawned on it and name resolution runs on its blocking pool.
//! Operations take `&mut self` and run one at a time. Every operation is bounded by the core's
//! time budgets, so wrapping one in a timeout is not needed; a future that is dropped before it
//! completes leaves its operation unfinished in the core, and the session can then only be closed
//! (other operations fail as a misuse).
//!
//! # Era hints
//!
//! With era hints on (the default), the [`Client`] remembers per origin the era and version a
//! connection negotiated and offers them to the next [`Client::connect`] to the same origin whose
//! configuration has no hint of its own: a modern origin then connects without any request.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_sansio::call::CallResult;
use mcp_sansio::connection::ServerInfo;
use mcp_sansio::endpoint::{Endpoint, Scheme};
use mcp_sansio::error::{TransportError, TransportErrorKind};
use mcp_sansio::list::Catalog;
pub use mcp_sansio::transcript::TranscriptSink;
use mcp_sansio::transcript::{RecordedOperation, Recording};
use mcp_sansio::{Config, Connection, Era, EraHint, Error, Event, ExchangeId, Operation};
pub use mcp_sansio_net::TranscriptFile;
use mcp_sansio_net::{
    policy::parse_literal_host, vetted_addresses, AddressPolicy, IdlePool, PoolLimits, Resolve,
    SystemResolver, DEFAULT_DIAL_TIMEOUT,
};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 * 1024;

// ---------------------------------------------------------------------------------------------
// Client

/// A client: the address policy, the resolver, the TLS configuration, the pool of idle sockets
/// and the era hints learnt per origin. Cloning is cheap and shares all of it.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    policy: AddressPolicy,
    resolver: Arc<dyn Resolve>,
    tls: Arc<rustls::ClientConfig>,
    dial_timeout: Duration,
    pool: Mutex<IdlePool<Stream>>,
    era_hints: bool,
    hints: Mutex<HashMap<String, EraHint>>,
    sink: Option<Arc<dyn TranscriptSink>>,
    sessions: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("policy", &self.inner.policy)
            .field("dial_timeout", &self.inner.dial_timeout)
            .field("era_hints", &self.inner.era_hints)
            .finish_non_exhaustive()
    }
}

impl Default for Client {
    fn default() -> Self {
        Client::new()
    }
}

impl Client {
    /// A client with the strict address policy (public addresses only), the system resolver and
    /// the webpki roots.
    pub fn new() -> Client {
        Client::builder().build()
    }

    /// A builder, starting from the defaults of [`Client::new`].
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            policy: AddressPolicy::strict(),
            resolver: None,
            tls: None,
            dial_timeout: DEFAULT_DIAL_TIMEOUT,
            pool_limits: PoolLimits::default(),
            era_hints: true,
            sink: None,
        }
    }

    /// Opens a session: negotiates the protocol with the server of `config`.
    ///
    /// Fails with the core's error: [`Error::Config`] for a configuration it refuses, a
    /// transport error ([`TransportErrorKind`]) when the server cannot be reached or its address
    /// is refused, or what the negotiation came to.
    pub async fn connect(&self, mut config: Config) -> Result<Session, Error> {
        let origin = config.endpoint.origin();
        if self.inner.era_hints && config.era_hint.is_none() {
            if let Some(hint) = self.hint(&origin) {
                let offered = match hint.era {
                    Era::Modern => config.modern_versions.contains(&hint.version),
                    Era::Legacy => config.legacy_versions.contains(&hint.version),
                };
                if offered {
                    config.era_hint = Some(hint);
                }
            }
        }
        let endpoint = Arc::new(config.endpoint.clone());
        let recording = self.inner.sink.as_ref().map(|sink| {
            let n = self
                .inner
                .sessions
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::new(Recording::new(
                &config,
                mcp_sansio::Instant::ZERO,
                sink.clone(),
                n + 1,
            ))
        });
        let conn = Connection::new(config)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut session = Session {
            client: self.clone(),
            conn,
            zero: tokio::time::Instant::now(),
            origin,
            endpoint,
            version: String::new(),
            era: Era::Modern,
            server_info: None,
            tasks: HashMap::new(),
            parking: Vec::new(),
            tx,
            rx,
            recording,
        };
        let now = session.now();
        session.record_op(now, || RecordedOperation::Connect);
        session.conn.connect(now);
        session.run(Operation::Connect, None).await?;
        Ok(session)
    }

    /// The era hint remembered for `origin` (as [`Endpoint::origin`] spells it), if any.
    pub fn hint(&self, origin: &str) -> Option<EraHint> {
        lock(&self.inner.hints).get(origin).cloned()
    }

    /// Idle sockets held in the pool now.
    pub fn idle_sockets(&self) -> usize {
        lock(&self.inner.pool).len()
    }

    fn remember(&self, origin: &str, hint: EraHint) {
        if self.inner.era_hints {
            lock(&self.inner.hints).insert(origin.to_owned(), hint);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    policy: AddressPolicy,
    resolver: Option<Arc<dyn Resolve>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    dial_timeout: Duration,
    pool_limits: PoolLimits,
    era_hints: bool,
    sink: Option<Arc<dyn TranscriptSink>>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("policy", &self.policy)
            .field("dial_timeout", &self.dial_timeout)
            .field("pool_limits", &self.pool_limits)
            .field("era_hints", &self.era_hints)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The address policy every dial is judged by. Default: [`AddressPolicy::strict`].
    pub fn policy(mut self, p: AddressPolicy) -> Self {
        self.policy = p;
        self
    }

    /// The resolver of host names. Default: [`SystemResolver`].
    pub fn resolver(mut self, r: impl Resolve) -> Self {
        self.resolver = Some(Arc::new(r));
        self
    }

    /// The rustls configuration for `https` endpoints. Default:
    /// [`mcp_sansio_net::client_config`] (webpki roots, ALPN `http/1.1`).
    pub fn tls_config(mut self, c: Arc<rustls::ClientConfig>) -> Self {
        self.tls = Some(c);
        self
    }

    /// The deadline of one dial, TCP connect and TLS handshake together. Default
    /// [`DEFAULT_DIAL_TIMEOUT`].
    pub fn dial_timeout(mut self, d: Duration) -> Self {
        self.dial_timeout = d;
        self
    }

    /// The limits of the idle-socket pool.
    pub fn pool_limits(mut self, l: PoolLimits) -> Self {
        self.pool_limits = l;
        self
    }

    /// Whether the era learnt per origin is offered to the next connect. Default on.
    pub fn era_hints(mut self, on: bool) -> Self {
        self.era_hints = on;
        self
    }

    /// Records every session of the client to `sink`: one transcript per session (connect to
    /// close or drop), written as it goes, that replays against the core exactly. Secrets are
    /// redacted before the sink sees them. Default: no recording.
    pub fn record_to(mut self, sink: Arc<dyn TranscriptSink>) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The client.
    pub fn build(self) -> Client {
        Client {
            inner: Arc::new(Inner {
                policy: self.policy,
                resolver: self.resolver.unwrap_or_else(|| Arc::new(SystemResolver)),
                tls: self.tls.unwrap_or_else(mcp_sansio_net::client_config),
                dial_timeout: self.dial_timeout,
                pool: Mutex::new(IdlePool::new(self.pool_limits)),
                era_hints: self.era_hints,
                hints: Mutex::new(HashMap::new()),
                sink: self.sink,
                sessions: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Observer

/// Receives what a running tool call reports before it finishes. Every method does nothing by
/// default.
pub trait CallObserver: Send {
    /// Progress the server reported.
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let _ = (progress, total, message);
    }

    /// Input requests of a multi-round-trip call (only when `Config::input_hook` is set); return
    /// the JSON object of responses keyed like the requests, or `None` to decline.
    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        let _ = requests;
        None
    }
}

/// An observer that ignores everything (and declines input requests).
struct NoObserver;

impl CallObserver for NoObserver {}

// ---------------------------------------------------------------------------------------------
// Session

/// A negotiated connection to one MCP server. Operations run one at a time.
pub struct Session {
    client: Client,
    conn: Connection,
    /// The core's zero instant.
    zero: tokio::time::Instant,
    origin: String,
    endpoint: Arc<Endpoint>,
    version: String,
    era: Era,
    server_info: Option<ServerInfo>,
    tasks: HashMap<ExchangeId, Task>,
    /// Tasks parking their sockets in the pool.
    parking: Vec<JoinHandle<()>>,
    tx: mpsc::UnboundedSender<(ExchangeId, Msg)>,
    rx: mpsc::UnboundedReceiver<(ExchangeId, Msg)>,
    /// The transcript being recorded, when the client records.
    recording: Option<Box<Recording>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("origin", &self.origin)
            .field("version", &self.version)
            .field("era", &self.era)
            .field("server_info", &self.server_info)
            .finish_non_exhaustive()
    }
}

/// What an operation ended with.
enum Outcome {
    Connected,
    Listed(Catalog),
    Called(CallResult),
    Closed,
}

impl Session {
    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The server's era.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The server's name and version, if it said.
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server_info.as_ref()
    }

    /// Lists every tool, following cursors to the end, within the core's budgets.
    pub async fn list_tools(&mut self) -> Result<Catalog, Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::ListTools);
        self.conn.list_tools(now);
        match self.run(Operation::ListTools, None).await? {
            Outcome::Listed(c) => Ok(c),
            _ => Err(unexpected()),
        }
    }

    /// Calls tool `name` with `arguments_json`, a JSON object sent verbatim (empty means `{}`).
    pub async fn call_tool(
        &mut self,
        name: &str,
        arguments_json: &[u8],
    ) -> Result<CallResult, Error> {
        self.call_tool_with(name, arguments_json, &mut NoObserver)
            .await
    }

    /// Calls tool `name`, reporting progress and input requests to `observer`.
    pub async fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::CallTool {
            name: name.to_owned(),
            arguments: arguments_json.to_vec(),
        });
        self.conn.call_tool(now, name, arguments_json);
        match self.run(Operation::CallTool, Some(observer)).await? {
            Outcome::Called(r) => Ok(r),
            _ => Err(unexpected()),
        }
    }

    /// Closes the session: a legacy session is ended with `DELETE` within the close budget. Every
    /// socket still serving an exchange of the session is closed; sockets parked earlier stay in
    /// the client's pool for other sessions.
    pub async fn close(mut self) -> Result<(), Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::Close);
        self.conn.close(now);
        let result = self.run(Operation::Close, None).await.map(|_| ());
        self.abort_all();
        // Dropping the recording flushes it and ends the session's transcript.
        self.recording = None;
        result
    }

    /// Now on the core's clock, in whole microseconds (a transcript's resolution, so that a
    /// recording replays at the very instants the core saw).
    fn now(&self) -> mcp_sansio::Instant {
        let micros = u64::try_from(self.zero.elapsed().as_micros()).unwrap_or(u64::MAX);
        mcp_sansio::Instant::from_duration(Duration::from_micros(micros))
    }

    /// Records an operation (built only when recording).
    fn record_op(&mut self, now: mcp_sansio::Instant, op: impl FnOnce() -> RecordedOperation) {
        if let Some(r) = &mut self.recording {
            r.recorder().operation(now, op());
        }
    }

    /// The recorder, when recording.
    fn rec(&mut self) -> Option<&mut mcp_sansio::transcript::Recorder> {
        self.recording.as_deref_mut().map(Recording::recorder)
    }

    /// Drives the core until the operation `op` ends.
    async fn run(
        &mut self,
        op: Operation,
        mut observer: Option<&mut dyn CallObserver>,
    ) -> Result<Outcome, Error> {
        let mut outcome: Option<Result<Outcome, Error>> = None;
        let mut acks: Vec<ExchangeId> = Vec::new();
        loop {
            // Drain: transmits first (they start tasks), then events, until both are empty.
            loop {
                let mut busy = false;
                while let Some(t) = self.conn.poll_transmit() {
                    busy = true;
                    if self.recording.is_some() {
                        let now = self.now();
                        if let Some(r) = self.rec() {
                            r.transmit(now, &t);
                        }
                    }
                    self.start_exchange(t);
                }
                while let Some(event) = self.conn.poll_event() {
                    busy = true;
                    if let Some(r) = self.rec() {
                        r.event(&event);
                    }
                    self.on_event(op, event, &mut observer, &mut outcome);
                }
                if !busy {
                    break;
                }
            }
            if let Some(r) = &mut self.recording {
                r.flush();
            }
            for id in acks.drain(..) {
                if let Some(task) = self.tasks.get(&id) {
                    let _ = task.cmd.send(Cmd::Continue);
                }
            }
            if let Some(o) = outcome.take() {
                // Parking takes a moment: the next operation finds the sockets in the pool.
                for handle in self.parking.drain(..) {
                    let _ = handle.await;
                }
                return o;
            }
            let deadline = self.conn.poll_timeout();
            if deadline.is_none() && self.tasks.is_empty() {
                return Err(Error::Misuse {
                    reason: "the operation waits for nothing",
                });
            }
            let sleep_until = deadline.map(|d| self.zero + d.as_duration());
            tokio::select! {
                msg = self.rx.recv() => {
                    // The session holds a sender, so the channel never closes.
                    let Some((id, msg)) = msg else { continue };
                    let now = self.now();
                    match msg {
                        Msg::Chunk(bytes) => {
                            if self.tasks.contains_key(&id) {
                                if let Some(r) = self.rec() {
                                    r.bytes(now, id, &bytes);
                                }
                                self.conn.handle_bytes(now, id, &bytes);
                                acks.push(id);
                            }
                        }
                        Msg::Eof => {
                            if self.tasks.remove(&id).is_some() {
                                if let Some(r) = self.rec() {
                                    r.eof(now, id);
                                }
                                self.conn.handle_eof(now, id);
                            }
                        }
                        Msg::Failed(e) => {
                            if self.tasks.remove(&id).is_some() {
                                if let Some(r) = self.rec() {
                                    r.transport_error(now, id, &e);
                                }
                                self.conn.handle_transport_error(now, id, e);
                            }
                        }
                    }
                }
                () = sleep_or_pend(sleep_until) => {
                    let now = self.now();
                    if let Some(r) = self.rec() {
                        r.timeout(now);
                    }
                    self.conn.handle_timeout(now);
                }
            }
        }
    }

    fn on_event(
        &mut self,
        op: Operation,
        event: Event,
        observer: &mut Option<&mut dyn CallObserver>,
        outcome: &mut Option<Result<Outcome, Error>>,
    ) {
        match event {
            Event::Connected {
                era,
                version,
                server_info,
                from_hint,
            } => {
                self.era = era;
                self.version = version;
                if server_info.is_some() || !from_hint {
                    self.server_info = server_info;
                }
                if !from_hint {
                    if let Some(hint) = self.conn.era_hint() {
                        self.client.remember(&self.origin, hint);
                    }
                }
                if op == Operation::Connect {
                    outcome.get_or_insert(Ok(Outcome::Connected));
                }
            }
            Event::ToolsListed(c) if op == Operation::ListTools => {
                outcome.get_or_insert(Ok(Outcome::Listed(c)));
            }
            Event::CallFinished(r) if op == Operation::CallTool => {
                outcome.get_or_insert(Ok(Outcome::Called(r)));
            }
            Event::Progress {
                progress,
                total,
                message,
            } => {
                if let Some(o) = observer {
                    o.progress(progress, total, message.as_deref());
                }
            }
            Event::InputRequired { requests } => {
                let answer = observer.as_mut().and_then(|o| o.input_required(&requests));
                let now = self.now();
                self.record_op(now, || RecordedOperation::ProvideInput(answer.clone()));
                self.conn.provide_input(now, answer.as_deref());
            }
            // Closing always ends with `Closed`; a failure it reports belongs to an operation it
            // interrupted.
            Event::Failed { operation, error }
                if op != Operation::Close || operation == Operation::Close =>
            {
                outcome.get_or_insert(Err(error));
            }
            Event::Closed if op == Operation::Close => {
                outcome.get_or_insert(Ok(Outcome::Closed));
            }
            Event::ExchangeFinished { exchange, reusable } => {
                if let Some(task) = self.tasks.remove(&exchange) {
                    if reusable && op != Operation::Close {
                        if task.cmd.send(Cmd::Park).is_ok() {
                            self.parking.push(task.handle);
                        } else {
                            task.handle.abort();
                        }
                    } else {
                        task.handle.abort();
                    }
                }
            }
            Event::ExchangeAbandoned { exchange } => {
                if let Some(task) = self.tasks.remove(&exchange) {
                    task.handle.abort();
                }
            }
            _ => {}
        }
    }

    fn start_exchange(&mut self, t: mcp_sansio::Transmit) {
        let (cmd, cmd_rx) = mpsc::unbounded_channel();
        let job = Job {
            client: self.client.clone(),
            origin: self.origin.clone(),
            endpoint: self.endpoint.clone(),
            exchange: t.exchange,
            request: t.bytes,
            fresh: t.fresh_socket,
            out: self.tx.clone(),
            cmd: cmd_rx,
        };
        let handle = tokio::spawn(job.run());
        self.tasks.insert(t.exchange, Task { cmd, handle });
    }

    fn abort_all(&mut self) {
        for (_, task) in self.tasks.drain() {
            task.handle.abort();
        }
        for handle in self.parking.drain(..) {
            handle.abort();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.abort_all();
    }
}

fn unexpected() -> Error {
    Error::Misuse {
        reason: "the operation ended with another operation's result",
    }
}

async fn sleep_or_pend(until: Option<tokio::time::Instant>) {
    match until {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

// ---------------------------------------------------------------------------------------------
// Exchanges

/// What an exchange task reports.
enum Msg {
    /// Bytes read; the task reads again after [`Cmd::Continue`].
    Chunk(Vec<u8>),
    /// The server closed the socket.
    Eof,
    /// The socket could not be opened, written or read.
    Failed(TransportError),
}

/// What the session tells an exchange task.
enum Cmd {
    /// Read on.
    Continue,
    /// The response is complete and the socket reusable: park it in the pool.
    Park,
}

struct Task {
    cmd: mpsc::UnboundedSender<Cmd>,
    handle: JoinHandle<()>,
}

struct Job {
    client: Client,
    origin: String,
    endpoint: Arc<Endpoint>,
    exchange: ExchangeId,
    request: Vec<u8>,
    fresh: bool,
    out: mpsc::UnboundedSender<(ExchangeId, Msg)>,
    cmd: mpsc::UnboundedReceiver<Cmd>,
}

impl Job {
    async fn run(mut self) {
        let id = self.exchange;
        let pooled = if self.fresh {
            None
        } else {
            take_live(&self.client.inner.pool, &self.origin)
        };
        let (address, mut stream) = match pooled {
            Some(s) => s,
            None => match dial(&self.client.inner, &self.endpoint).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = self.out.send((id, Msg::Failed(e)));
                    return;
                }
            },
        };
        if let Err(e) = write_request(&mut stream, &self.request).await {
            let _ = self.out.send((id, Msg::Failed(io_error(&e))));
            return;
        }
        let mut buf = vec![0u8; READ_CHUNK];
        let mut waiting = false;
        loop {
            tokio::select! {
                cmd = self.cmd.recv() => match cmd {
                    Some(Cmd::Continue) => waiting = false,
                    Some(Cmd::Park) => {
                        let now = std::time::Instant::now();
                        lock(&self.client.inner.pool).put(&self.origin, address, stream, now);
                        return;
                    }
                    None => return,
                },
                read = stream.read(&mut buf), if !waiting => match read {
                    Ok(0) => {
                        let _ = self.out.send((id, Msg::Eof));
                        return;
                    }
                    Ok(n) => {
                        waiting = true;
                        if self.out.send((id, Msg::Chunk(buf[..n].to_vec()))).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = self.out.send((id, Msg::Failed(io_error(&e))));
                        return;
                    }
                },
            }
        }
    }
}

/// Takes the newest idle socket of `origin` that the server has not closed and that holds no
/// unread bytes; the others are dropped.
fn take_live(pool: &Mutex<IdlePool<Stream>>, origin: &str) -> Option<(SocketAddr, Stream)> {
    loop {
        let now = std::time::Instant::now();
        let (address, stream) = lock(pool).take(origin, now)?;
        if stream.is_idle() {
            return Some((address, stream));
        }
    }
}

async fn write_request(stream: &mut Stream, request: &[u8]) -> io::Result<()> {
    stream.write_all(request).await?;
    stream.flush().await
}

fn io_error(e: &io::Error) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        message: e.to_string(),
    }
}

fn transport(kind: TransportErrorKind, message: impl Into<String>) -> TransportError {
    TransportError {
        kind,
        message: message.into(),
    }
}

/// Resolves and vets the endpoint's host, then dials the admitted addresses in order.
async fn dial(inner: &Inner, endpoint: &Endpoint) -> Result<(SocketAddr, Stream), TransportError> {
    let host = endpoint.host().to_owned();
    let port = endpoint.port();
    let resolver = inner.resolver.clone();
    let policy = inner.policy;
    let vetted = tokio::task::spawn_blocking(move || {
        vetted_addresses(resolver.as_ref(), &policy, &host, port)
    })
    .await
    .map_err(|e| transport(TransportErrorKind::Resolve, e.to_string()))?
    .map_err(TransportError::from)?;
    let limit = inner.dial_timeout;
    let deadline = tokio::time::Instant::now() + limit;
    match tokio::time::timeout_at(deadline, connect(inner, endpoint, &vetted, deadline)).await {
        Ok(r) => r,
        Err(_) => Err(transport(
            TransportErrorKind::Connect,
            format!("dial timed out after {} ms", limit.as_millis()),
        )),
    }
}

async fn connect(
    inner: &Inner,
    endpoint: &Endpoint,
    addresses: &[SocketAddr],
    deadline: tokio::time::Instant,
) -> Result<(SocketAddr, Stream), TransportError> {
    let mut last = None;
    let mut tcp = None;
    for (i, &address) in addresses.iter().enumerate() {
        // Each address gets an equal share of the time left, so that one that never answers
        // does not use up the whole dial; the last one gets all of it.
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let share = left / u32::try_from(addresses.len() - i).unwrap_or(u32::MAX);
        match tokio::time::timeout(share, TcpStream::connect(address)).await {
            Ok(Ok(s)) => {
                tcp = Some((address, s));
                break;
            }
            Ok(Err(e)) => last = Some(format!("{address}: {e}")),
            Err(_) => last = Some(format!("{address}: timed out")),
        }
    }
    let Some((address, tcp)) = tcp else {
        return Err(transport(
            TransportErrorKind::Connect,
            last.unwrap_or_else(|| "no address to dial".to_owned()),
        ));
    };
    let _ = tcp.set_nodelay(true);
    match endpoint.scheme() {
        Scheme::Http => Ok((address, Stream::Plain(tcp))),
        Scheme::Https => {
            let name = server_name(endpoint.host())?;
            let connector = tokio_rustls::TlsConnector::from(inner.tls.clone());
            let tls = connector
                .connect(name, tcp)
                .await
                .map_err(|e| transport(TransportErrorKind::Tls, e.to_string()))?;
            Ok((address, Stream::Tls(Box::new(tls))))
        }
    }
}

/// The TLS server name of `host`: an IP address for a literal in any spelling, else the DNS name
/// without a trailing dot.
fn server_name(host: &str) -> Result<ServerName<'static>, TransportError> {
    if let Some(ip) = parse_literal_host(host) {
        return Ok(ServerName::IpAddress(ip.into()));
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_owned();
    ServerName::try_from(name).map_err(|e| {
        transport(
            TransportErrorKind::Tls,
            format!("server name {host:?}: {e}"),
        )
    })
}

/// A plain or TLS socket.
enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Stream {
    /// Whether the socket is still open with nothing to read: the state a parked keep-alive
    /// socket must be in. Bytes on a plain socket between responses are not a response to
    /// anything; on a TLS socket they may be a session ticket, so only the end of stream counts.
    fn is_idle(&self) -> bool {
        let (tcp, tls) = match self {
            Stream::Plain(s) => (s, false),
            Stream::Tls(s) => (s.get_ref().0, true),
        };
        let mut byte = [0u8; 1];
        let mut buf = ReadBuf::new(&mut byte);
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match tcp.poll_peek(&mut cx, &mut buf) {
            Poll::Pending => true,
            Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => false,
            Poll::Ready(Ok(_)) => tls,
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
