//! The tokio adapter of mcp-sansio: an MCP client for the Streamable HTTP transport, for servers
//! that are hostile until their answers are checked.
//!
//! The protocol lives in the sans-IO core ([`mcp_sansio::Connection`]): negotiation, requests,
//! every budget and every deadline; [`mcp_sansio_net`]'s session driver runs it (recording, the
//! clock, era hints, how an operation ends, which socket goes back to the pool), the same for
//! this adapter and the blocking one. This crate moves the bytes. For each request the core emits it
//! takes an idle keep-alive socket of the same origin from the client's pool, or dials a new one
//! through the network guard of [`mcp_sansio_net`]: the host is resolved once (on tokio's blocking
//! pool), every address is judged by the [`AddressPolicy`], and only admitted addresses are
//! dialled, in order, within one dial deadline that covers every address and TLS. A refused address never
//! sees a connection attempt. TLS is rustls with the ring provider, SNI set to the endpoint's host
//! and ALPN `h2` then `http/1.1`. No proxy variable is read and no redirect is followed.
//!
//! # HTTP/2
//!
//! When the TLS handshake of an `https` endpoint negotiates `h2`, the session speaks HTTP/2:
//! [`Client::connect`] dials once, and every exchange of the session is a stream of that socket,
//! driven by the core's HTTP/2 client (every frame byte budgeted); the socket is dialled again
//! when the server sends GOAWAY or a request must be retried on a fresh socket. Otherwise the
//! session speaks HTTP/1.1 as above, starting on the socket just dialled. [`Session::http_version`]
//! says which. [`ClientBuilder::http1_only`](mcp_sansio_net::ClientBuilder::http1_only) turns
//! HTTP/2 off; [`ClientBuilder::h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge)
//! speaks HTTP/2 in clear text to `http` endpoints. A client that records speaks HTTP/1.1, and an
//! origin with an idle HTTP/1.1 socket in the pool keeps HTTP/1.1. The HTTP/2 socket is the
//! session's own: sessions of one client do not share it yet.
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
//! aborts its tasks, which closes their sockets; the core never lets the socket of the `DELETE`
//! that ends a legacy session back into the pool.
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
use std::sync::Arc;
use std::time::Instant as StdInstant;

use mcp_sansio::{Config, Error};
use mcp_sansio::{Endpoint, ExchangeId, Scheme, Transmit, TransportError, TransportErrorKind};
use mcp_sansio_net::dial::{io_error, server_name, tls_error, DialDeadline};
pub use mcp_sansio_net::{
    read_ca_certificates, AddressPolicy, CaCertError, CallObserver, PoolLimits, Resolve,
    StaticResolver, SystemResolver,
};
pub mod auth;
pub use auth::AuthSession;
use mcp_sansio_net::{AsyncIo, Io, NoObserver, Report, SessionDriver, Shared, Start, Wake};
pub use mcp_sansio_transcript::{TranscriptFile, TranscriptSink};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 * 1024;

mod stream;
use stream::Stream;

// ---------------------------------------------------------------------------------------------
// Client

mcp_sansio_net::declare_client!(Stream);

impl Client {
    /// Opens a session: negotiates the protocol with the server of `config`.
    ///
    /// Fails with the core's error: [`Error::Config`] for a configuration it refuses, a
    /// transport error ([`TransportErrorKind`]) when the server cannot be reached or its address
    /// is refused, or what the negotiation came to.
    pub async fn connect(&self, config: Config) -> Result<Session, Error> {
        let mut driver = SessionDriver::new(&self.shared, config)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (h2tx, h2rx) = mpsc::unbounded_channel();
        let mut io = Tasks {
            shared: self.shared.clone(),
            origin: driver.origin().to_owned(),
            endpoint: Arc::new(driver.config().endpoint.clone()),
            tasks: HashMap::new(),
            parking: Vec::new(),
            queued: Vec::new(),
            tx,
            rx,
            h2: None,
            h2_gen: 0,
            h2tx,
            h2rx,
        };
        if let Some(scheme) = self.h2_scheme(&io.endpoint, &io.origin) {
            let (address, stream) = dial(&self.shared, &io.endpoint, true).await?;
            if scheme == "http" || stream.is_h2() {
                driver = SessionDriver::new_h2(&self.shared, driver.config().clone(), scheme)?;
                io.h2_attach(stream);
            } else {
                // The server chose HTTP/1.1: the socket serves the first exchange.
                self.shared.park(&io.origin, address, stream);
            }
        }
        let mut session = Session { driver, io };
        session
            .driver
            .run(&mut session.io, Start::Connect, &mut NoObserver)
            .await?;
        Ok(session)
    }

    /// The scheme of the HTTP/2 socket a new session of `endpoint` tries first, if any: `https`
    /// (ALPN decides) unless HTTP/1.1 is forced or an HTTP/1.1 socket of the origin is idle;
    /// `http` with prior knowledge only when the client was built for it.
    fn h2_scheme(&self, endpoint: &Endpoint, origin: &str) -> Option<&'static str> {
        if self.shared.http1_only {
            return None;
        }
        match endpoint.scheme() {
            Scheme::Https if !self.shared.has_idle(origin) => Some("https"),
            Scheme::Http if self.shared.h2c => Some("http"),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Session

mcp_sansio_net::declare_session!(
    /// A negotiated connection to one MCP server. Operations run one at a time.
    Tasks
);

impl Session {
    mcp_sansio_net::session_accessors!();

    mcp_sansio_net::async_session_operations!();

    /// Closes the session: a legacy session is ended with `DELETE` within the close budget. Every
    /// socket still serving an exchange of the session is closed; sockets parked earlier stay in
    /// the client's pool for other sessions.
    pub async fn close(mut self) -> Result<(), Error> {
        let result = self
            .driver
            .run(&mut self.io, Start::Close, &mut NoObserver)
            .await
            .map(|_| ());
        self.io.abort_all();
        // Ending the recording flushes it and closes the session's transcript.
        self.driver.end_recording();
        result
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

/// What the session tells an exchange task.
enum Cmd {
    /// Read on.
    Continue,
    /// The response is complete and the socket reusable: park it in the pool.
    Park,
}

struct Task<C = Cmd> {
    cmd: mpsc::UnboundedSender<C>,
    handle: JoinHandle<()>,
}

/// The exchanges of one session, one tokio task each.
struct Tasks {
    shared: Arc<Shared<Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    tasks: HashMap<ExchangeId, Task>,
    /// Tasks parking their sockets in the pool.
    parking: Vec<JoinHandle<()>>,
    /// Requests of the last pump, started by [`Tasks::launch`].
    queued: Vec<Transmit>,
    tx: mpsc::UnboundedSender<(ExchangeId, Report)>,
    rx: mpsc::UnboundedReceiver<(ExchangeId, Report)>,
    /// The session's HTTP/2 socket, if it speaks HTTP/2.
    h2: Option<Task<H2Cmd>>,
    /// The number of the current HTTP/2 socket: reports of earlier ones are ignored.
    h2_gen: u64,
    h2tx: mpsc::UnboundedSender<(u64, H2Msg)>,
    h2rx: mpsc::UnboundedReceiver<(u64, H2Msg)>,
}

/// What the session tells its HTTP/2 socket's task.
enum H2Cmd {
    /// Write these bytes.
    Write(Vec<u8>),
    /// Read on.
    Continue,
}

/// What the HTTP/2 socket's task reports.
enum H2Msg {
    Report(Report),
    Dialled(Result<(), TransportError>),
}

impl Io for Tasks {
    fn h2_write(&mut self, bytes: Vec<u8>) {
        if let Some(task) = &self.h2 {
            let _ = task.cmd.send(H2Cmd::Write(bytes));
        }
    }

    fn h2_read_on(&mut self) {
        if let Some(task) = &self.h2 {
            let _ = task.cmd.send(H2Cmd::Continue);
        }
    }

    fn h2_dial(&mut self) {
        if let Some(old) = self.h2.take() {
            old.handle.abort();
        }
        self.h2_gen += 1;
        let generation = self.h2_gen;
        let (cmd, cmd_rx) = mpsc::unbounded_channel();
        let shared = self.shared.clone();
        let endpoint = self.endpoint.clone();
        let out = self.h2tx.clone();
        let handle = tokio::spawn(async move {
            let stream = match dial(&shared, &endpoint, true).await {
                Ok((_, s)) if endpoint.scheme() == Scheme::Http || s.is_h2() => s,
                Ok(_) => {
                    let e = tls_error("the server no longer negotiates HTTP/2");
                    let _ = out.send((generation, H2Msg::Dialled(Err(e))));
                    return;
                }
                Err(e) => {
                    let _ = out.send((generation, H2Msg::Dialled(Err(e))));
                    return;
                }
            };
            let _ = out.send((generation, H2Msg::Dialled(Ok(()))));
            h2_run(stream, cmd_rx, out, generation).await;
        });
        self.h2 = Some(Task { cmd, handle });
    }

    fn start(&mut self, transmit: Transmit) -> Result<(), TransportError> {
        self.queued.push(transmit);
        Ok(())
    }

    fn read_on(&mut self, exchange: ExchangeId) {
        if let Some(task) = self.tasks.get(&exchange) {
            let _ = task.cmd.send(Cmd::Continue);
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        self.queued.retain(|t| t.exchange != exchange);
        let Some(task) = self.tasks.remove(&exchange) else {
            return;
        };
        if reusable && task.cmd.send(Cmd::Park).is_ok() {
            self.parking.push(task.handle);
        } else {
            task.handle.abort();
        }
    }

    fn abandon(&mut self, exchange: ExchangeId) {
        self.queued.retain(|t| t.exchange != exchange);
        if let Some(task) = self.tasks.remove(&exchange) {
            task.handle.abort();
        }
    }
}

impl AsyncIo for Tasks {
    /// Starts the queued exchanges; one that may take a pooled socket waits until the sockets
    /// being parked are in the pool.
    async fn launch(&mut self) {
        if self.queued.iter().any(|t| !t.fresh_socket) {
            self.settle().await;
        }
        for t in std::mem::take(&mut self.queued) {
            let (cmd, cmd_rx) = mpsc::unbounded_channel();
            let job = Job {
                shared: self.shared.clone(),
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
    }

    /// Waits until every parking task has parked its socket.
    async fn settle(&mut self) {
        for handle in self.parking.drain(..) {
            let _ = handle.await;
        }
    }

    /// The next wake-up: a task's report, a report of the HTTP/2 socket (those of a socket
    /// already replaced are stale and skipped), or the deadline (first when both are due).
    async fn next(&mut self, until: Option<StdInstant>) -> Wake {
        let until = until.map(tokio::time::Instant::from_std);
        loop {
            tokio::select! {
                biased;
                () = sleep_or_pend(until) => return Wake::Timeout,
                // The session holds a sender, so the channel never closes.
                Some((id, report)) = self.rx.recv() => return Wake::Report(id, report),
                Some((generation, msg)) = self.h2rx.recv() => {
                    if let Some(wake) = self.h2_wake(generation, msg) {
                        return wake;
                    }
                }
            }
        }
    }

    /// What the HTTP/2 socket reported while no operation ran (the server closed an idle
    /// connection, say), so that the operation's requests go to a fresh socket.
    fn pending(&mut self) -> Option<Wake> {
        while let Ok((generation, msg)) = self.h2rx.try_recv() {
            if let Some(wake) = self.h2_wake(generation, msg) {
                return Some(wake);
            }
        }
        None
    }
}

impl Tasks {
    /// A report of HTTP/2 socket `generation` as a wake-up, unless that socket was replaced.
    fn h2_wake(&self, generation: u64, msg: H2Msg) -> Option<Wake> {
        (generation == self.h2_gen).then_some(match msg {
            H2Msg::Report(report) => Wake::H2Report(report),
            H2Msg::Dialled(result) => Wake::H2Dialled(result),
        })
    }

    /// Serves the session's HTTP/2 socket `stream` from a task of its own.
    fn h2_attach(&mut self, stream: Stream) {
        let (cmd, cmd_rx) = mpsc::unbounded_channel();
        let handle = tokio::spawn(h2_run(stream, cmd_rx, self.h2tx.clone(), self.h2_gen));
        self.h2 = Some(Task { cmd, handle });
    }

    fn abort_all(&mut self) {
        if let Some(task) = self.h2.take() {
            task.handle.abort();
        }
        for (_, task) in self.tasks.drain() {
            task.handle.abort();
        }
        for handle in self.parking.drain(..) {
            handle.abort();
        }
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.abort_all();
    }
}

struct Job {
    shared: Arc<Shared<Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    exchange: ExchangeId,
    request: Vec<u8>,
    fresh: bool,
    out: mpsc::UnboundedSender<(ExchangeId, Report)>,
    cmd: mpsc::UnboundedReceiver<Cmd>,
}

impl Job {
    async fn run(mut self) {
        let id = self.exchange;
        let pooled = if self.fresh {
            None
        } else {
            self.shared.take_idle(&self.origin, Stream::is_idle)
        };
        let (address, mut stream) = match pooled {
            Some(s) => s,
            None => match dial(&self.shared, &self.endpoint, false).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = self.out.send((id, Report::Failed(e)));
                    return;
                }
            },
        };
        if let Err(e) = write_request(&mut stream, &self.request).await {
            let _ = self.out.send((id, Report::Failed(io_error(&e))));
            return;
        }
        let mut buf = vec![0u8; READ_CHUNK];
        let mut waiting = false;
        loop {
            tokio::select! {
                cmd = self.cmd.recv() => match cmd {
                    Some(Cmd::Continue) => waiting = false,
                    Some(Cmd::Park) => {
                        self.shared.park(&self.origin, address, stream);
                        return;
                    }
                    None => return,
                },
                read = stream.read(&mut buf), if !waiting => {
                    let report = match read {
                        Ok(0) => Report::Eof,
                        Ok(n) => Report::Bytes(buf[..n].to_vec()),
                        Err(e) => Report::Failed(io_error(&e)),
                    };
                    let more = matches!(report, Report::Bytes(_));
                    waiting = true;
                    if self.out.send((id, report)).is_err() || !more {
                        return;
                    }
                }
            }
        }
    }
}

/// The task of an HTTP/2 socket: writes what the session sends, reads once per permission and
/// reports, until the socket or the session ends.
async fn h2_run(
    mut stream: Stream,
    mut cmd: mpsc::UnboundedReceiver<H2Cmd>,
    out: mpsc::UnboundedSender<(u64, H2Msg)>,
    generation: u64,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut waiting = false;
    loop {
        tokio::select! {
            c = cmd.recv() => match c {
                Some(H2Cmd::Write(bytes)) => {
                    if let Err(e) = write_request(&mut stream, &bytes).await {
                        let report = Report::Failed(io_error(&e));
                        let _ = out.send((generation, H2Msg::Report(report)));
                        return;
                    }
                }
                Some(H2Cmd::Continue) => waiting = false,
                None => return,
            },
            read = stream.read(&mut buf), if !waiting => {
                let report = match read {
                    Ok(0) => Report::Eof,
                    Ok(n) => Report::Bytes(buf[..n].to_vec()),
                    Err(e) => Report::Failed(io_error(&e)),
                };
                let more = matches!(report, Report::Bytes(_));
                waiting = true;
                if out.send((generation, H2Msg::Report(report))).is_err() || !more {
                    return;
                }
            }
        }
    }
}

async fn write_request(stream: &mut Stream, request: &[u8]) -> io::Result<()> {
    stream.write_all(request).await?;
    stream.flush().await
}

/// Resolves and vets the endpoint's host (on the blocking pool), then dials the admitted
/// addresses in order within one deadline that also covers the TLS handshake.
/// With `h2`, TLS offers ALPN `h2` first ([`Stream::is_h2`] tells what was chosen).
async fn dial(
    shared: &Arc<Shared<Stream>>,
    endpoint: &Endpoint,
    h2: bool,
) -> Result<(SocketAddr, Stream), TransportError> {
    let host = endpoint.host().to_owned();
    let port = endpoint.port();
    let guard = shared.clone();
    let vetted = tokio::task::spawn_blocking(move || guard.vetted(&host, port))
        .await
        .map_err(|e| TransportError {
            kind: TransportErrorKind::Resolve,
            message: e.to_string(),
        })??;
    let deadline = DialDeadline::new(StdInstant::now(), shared.dial_timeout);
    let mut failures = Vec::new();
    let mut tcp = None;
    for (i, &address) in vetted.iter().enumerate() {
        let Some(share) = deadline.share(StdInstant::now(), vetted.len() - i) else {
            break;
        };
        match tokio::time::timeout(share, TcpStream::connect(address)).await {
            Ok(Ok(s)) => {
                tcp = Some((address, s));
                break;
            }
            Ok(Err(e)) => failures.push(format!("{address}: {e}")),
            Err(_) => failures.push(format!("{address}: timed out")),
        }
    }
    let Some((address, tcp)) = tcp else {
        return Err(deadline.failed(StdInstant::now(), &failures));
    };
    let _ = tcp.set_nodelay(true);
    if endpoint.scheme() == Scheme::Http {
        return Ok((address, Stream::Plain(tcp)));
    }
    let name = server_name(endpoint.host())?;
    let left = deadline
        .left(StdInstant::now())
        .ok_or_else(|| deadline.expired())?;
    let tls = if h2 { &shared.tls_h2 } else { &shared.tls };
    let connector = tokio_rustls::TlsConnector::from(tls.clone());
    match tokio::time::timeout(left, connector.connect(name, tcp)).await {
        Ok(Ok(tls)) => Ok((address, Stream::Tls(Box::new(tls)))),
        Ok(Err(e)) => Err(tls_error(e.to_string())),
        Err(_) => Err(deadline.expired()),
    }
}
