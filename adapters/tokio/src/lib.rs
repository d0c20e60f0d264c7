//! The tokio adapter of mcp-sansio: an MCP client for the Streamable HTTP transport, for servers
//! that are hostile until their answers are checked.
//!
//! Connect, list the tools, call one, close (the same program on threads:
//! `mcp-sansio-blocking`; on smol: the `mcp-sansio-smol-example` crate of the repository):
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_tokio::Client;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), mcp_sansio::Error> {
//!     let client = Client::new(); // strict address policy, system resolver, webpki roots, pool
//!     let config = Config::new("https://mcp.example.com/mcp")?.with_bearer_token("secret");
//!     let mut session = client.connect(config).await?;
//!     println!("{} ({})", session.version(), session.era());
//!     let catalog = session.list_tools().await?;
//!     for tool in &catalog.tools {
//!         println!("{}", tool.name());
//!     }
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//!     println!("error: {}, {} blocks", result.is_error, result.content.len());
//!     session.close().await
//! }
//! ```
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
//! When the TLS handshake of an `https` endpoint negotiates `h2`, the session speaks HTTP/2 on
//! the origin's one HTTP/2 connection, shared by every session of the [`Client`]
//! ([`mcp_sansio_net::SharedH2`]): the first session to the origin dials (others connecting
//! meanwhile wait and join), every exchange of every session is a stream of that socket, driven by
//! the core's HTTP/2 client (every frame byte budgeted, each session keeping its own budgets), and
//! one fresh socket is dialled for all of them when the server sends GOAWAY or a request must be
//! retried on a fresh socket. A dropped session resets its own streams; when the last session leaves,
//! the socket stays idle for the next one (see [`mcp_sansio_net::SharedH2`]), and dropping the
//! client writes GOAWAY(NO_ERROR) and closes it. Otherwise the session speaks HTTP/1.1 as above,
//! starting on the socket just dialled. [`Session::http_version`] says which.
//! [`ClientBuilder::http1_only`](mcp_sansio_net::ClientBuilder::http1_only) turns HTTP/2 off;
//! [`ClientBuilder::h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge)
//! speaks HTTP/2 in clear text to `http` endpoints. A client that records gives each HTTP/2
//! session a socket of its own, recorded as an HTTP/2 transcript
//! ([`ClientBuilder::record_to`](mcp_sansio_net::ClientBuilder::record_to)); an origin with an
//! idle HTTP/1.1 socket in the pool keeps HTTP/1.1. Each HTTP/2 socket is served
//! by one task that writes what the connection sends and feeds it what it reads.
//!
//! # Sockets
//!
//! One tokio task serves one exchange: it opens or takes the socket, writes the request and
//! forwards what it reads, one read at a time, waiting for the session to feed it to the core
//! before reading again (so no response is buffered ahead of the core's budgets); while it waits, it
//! leaves the socket where the session can take it. When the core declares the response complete
//! and the socket reusable, the session takes the socket and parks it in the client's pool at once
//! (the next exchange finds it there); in every other case the task is aborted and the socket
//! closed.
//! A session's only live exchange, on an idle pooled socket (the pages of a listing, the calls of
//! a warm session), needs no task: the session writes the request and reads inside its own
//! future, under the same rules (one read at a time, only when the core has taken the previous
//! bytes), and hands the exchange to a task if another exchange starts meanwhile. A parked socket is taken again only
//! if the server has not closed it and it holds no unasked bytes. A [`Session`] that is dropped
//! aborts its tasks, which closes their sockets; the core never lets the socket of the `DELETE`
//! that ends a legacy session back into the pool.
//!
//! # Tracing
//!
//! With the feature `tracing` (of this crate, forwarded to [`mcp_sansio_net`]), every operation
//! is a `tracing` span (`connect`, `list`, `call`, `close`) with the origin, era, protocol and
//! HTTP versions, bytes read, pages, outcome and the budget that ended it; every HTTP/1.1
//! exchange a span inside it; retries, re-negotiations, resumptions, refusals and authorization
//! steps are events. No token, code, verifier, tool argument or result is ever a field
//! ([`mcp_sansio_net::trace`] lists them all). Route them to any subscriber, for example
//! `tracing-subscriber`'s formatter on stderr, filtered by `RUST_LOG`:
//!
//! ```no_run
//! use tracing_subscriber::fmt::format::FmtSpan;
//! use tracing_subscriber::EnvFilter;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), mcp_sansio::Error> {
//!     tracing_subscriber::fmt()
//!         // `RUST_LOG=mcp_sansio=debug` shows the exchanges too; INFO the operations.
//!         .with_env_filter(EnvFilter::from_default_env())
//!         // One line per span as it closes, with every field it recorded.
//!         .with_span_events(FmtSpan::CLOSE)
//!         .with_writer(std::io::stderr)
//!         .init();
//!     let client = mcp_sansio_tokio::Client::new();
//!     let mut session = client
//!         .connect(mcp_sansio::Config::new("https://mcp.example.com/mcp")?)
//!         .await?;
//!     // INFO list{origin=https://mcp.example.com:443 http_version="HTTP/2" era="modern"
//!     //     protocol_version="2026-07-28" pages=1 tools=3 bytes_read=2140 outcome="ok"}:
//!     //     mcp_sansio: close time.busy=… time.idle=…
//!     session.list_tools().await?;
//!     session.close().await
//! }
//! ```
//!
//! # Errors
//!
//! Every operation fails with the core's [`Error`], whose [`kind`](Error::kind) is one of the
//! three [`ErrorKind`](mcp_sansio::ErrorKind)s. What the adapter observes reaches the core as a
//! [`TransportError`] and comes back as [`Error::Transport`], of kind `ConnectionFailed`:
//!
//! | [`TransportErrorKind`](mcp_sansio::TransportErrorKind) | when |
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
//!
//! # Catalog cache
//!
//! Off by default; `Client::builder().catalog_cache(true)` turns it on. A 2026-07-28 listing
//! is then reused by the client's next sessions of the same server URL and bearer token for
//! min(`ttlMs`, 5 minutes): such a work item connects and lists with no request at all, and calls
//! a cached tool with its `x-mcp-header` parameters at once. It is off by default because a
//! cached listing hides the server's changes to its tools for that long. See
//! [`mcp_sansio_net::cache`] for its bounds, its invalidation and the shared store
//! (`ClientBuilder::shared_store`) a platform of many processes can give it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use std::time::Instant as StdInstant;

use mcp_sansio::Completion;
use mcp_sansio::{Config, Error};
use mcp_sansio::{Endpoint, ExchangeId, Scheme, Transmit, TransportError};
use mcp_sansio_net::dial::{io_error, server_name, tls_error, DialDeadline};
use mcp_sansio_net::route::{self, H2Glue};
use mcp_sansio_net::runtime::{self, Dialled, Runtime};
pub use mcp_sansio_net::{
    read_ca_certificates, AddressPolicy, CaCertError, CallObserver, PoolLimits, Resolve,
    StaticResolver, SystemResolver,
};
use mcp_sansio_net::{ClientRuntime, SessionRuntime};
use std::future::Future;
use std::pin::Pin;
pub mod auth;
pub use auth::AuthSession;
use mcp_sansio_net::client::lock;
use mcp_sansio_net::driver::{next_read_size, read_first, read_size, READ_MIN};
use mcp_sansio_net::inline::{read_on_inline, take_inline, HoldsInline};
use mcp_sansio_net::{
    AsyncIo, H2Io, InlineExchange, InlinePhase, InlineStep, Io, NoObserver, Report, Shared,
    SharedH2, Start, Wake, Waker,
};
pub use mcp_sansio_transcript::{TranscriptFile, TranscriptSink};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 * 1024;

mod stream;
use stream::Stream;

// ---------------------------------------------------------------------------------------------
// Client

/// An MCP client on tokio. Cheap to clone: clones share the address policy, resolver, TLS
/// configuration, idle-socket pool, HTTP/2 connections and the era hints learnt per origin.
pub type Client = mcp_sansio_net::Client<Tokio>;

/// Builds a [`Client`]; the same builder in every adapter.
pub type ClientBuilder = mcp_sansio_net::ClientBuilder<Client>;

impl ClientRuntime for Tokio {
    type Socket = Stream;
    type Connect<'a> = Pin<Box<dyn Future<Output = Result<Session, Error>> + Send + 'a>>;

    fn connect(client: &Client, config: Config) -> Self::Connect<'_> {
        Box::pin(connect(client, config))
    }
}

/// Opens a session ([`Client::connect`]).
async fn connect(client: &Client, config: Config) -> Result<Session, Error> {
    let notify = Arc::new(Notify::new());
    let n = notify.clone();
    let wake: Waker = Arc::new(move || n.notify_one());
    let endpoint = config.endpoint.clone();
    let mut glue = Route {
        shared: client.shared(),
        endpoint: &endpoint,
        notify: &notify,
    };
    let driver = route::session_driver(client.shared(), config, wake, &mut glue).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let io = Tasks {
        shared: client.shared().clone(),
        origin: driver.origin().to_owned(),
        endpoint: Arc::new(driver.config().endpoint.clone()),
        tasks: HashMap::new(),
        queued: Vec::new(),
        tx,
        rx,
        notify,
        read_cap: READ_MIN,
        expect: 0,
        inline: None,
    };
    let mut session = Session::from_parts(driver, io);
    let (driver, io) = session.parts();
    driver.run(io, Start::Connect, &mut NoObserver).await?;
    Ok(session)
}

/// The tokio side of a new session's HTTP/2 route ([`route::session_driver`]).
struct Route<'a> {
    shared: &'a Arc<Shared<Stream>>,
    endpoint: &'a Endpoint,
    notify: &'a Arc<Notify>,
}

impl H2Glue for Route<'_> {
    type Stream = Stream;
    type Socket = Stream;
    type Sockets = TokioH2;

    async fn wait(&mut self) -> bool {
        self.notify.notified().await;
        true
    }

    async fn dial(&mut self) -> Result<(SocketAddr, Stream), TransportError> {
        dial(self.shared, self.endpoint, true).await
    }

    fn h2_socket(stream: Stream, h2c: bool) -> Result<Stream, Stream> {
        if h2c || stream.is_h2() {
            Ok(stream)
        } else {
            Err(stream)
        }
    }

    fn sockets(&self) -> TokioH2 {
        TokioH2::new(self.shared, self.endpoint)
    }

    fn attach(
        sockets: &TokioH2,
        conn: Arc<SharedH2>,
        generation: u64,
        socket: Stream,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError> {
        before_reading();
        sockets.attach(conn, generation, socket);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Session

/// A negotiated connection to one MCP server on tokio. Operations run one at a time.
pub type Session = mcp_sansio_net::Session<Tokio>;

impl SessionRuntime for Tokio {
    type Io = Tasks;
    type Op<'a, T: Send + 'a> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

    fn run<'a, T: Send + 'a>(
        session: &'a mut Session,
        op: Start<'a>,
        observer: &'a mut dyn CallObserver,
        then: fn(Completion) -> Result<T, Error>,
    ) -> Self::Op<'a, T> {
        Box::pin(async move {
            let (driver, io) = session.parts();
            then(driver.run(io, op, observer).await?)
        })
    }

    fn close(mut session: Session) -> Self::Op<'static, ()> {
        Box::pin(async move {
            let (driver, io) = session.parts();
            let result = driver
                .run(io, Start::Close, &mut NoObserver)
                .await
                .map(|_| ());
            io.abort_all();
            // Ending the recording flushes it and closes the session's transcript.
            driver.end_recording();
            result
        })
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

/// What the session tells an exchange task waiting after a [`Report::Bytes`]. The task ends
/// when the session drops its sender (or aborts it).
enum Cmd {
    /// Read on, at most this many bytes ([`read_size`] of the session's byte budget).
    Continue(usize),
}

/// An exchange's socket while its task waits for a [`Cmd`] after a [`Report::Bytes`]: the task
/// leaves it here, so that the session parks a reusable socket in the pool itself, at once,
/// without a hand-off to the task and back.
type Held = Arc<Mutex<Option<(SocketAddr, Stream)>>>;

struct Task {
    cmd: mpsc::UnboundedSender<Cmd>,
    handle: JoinHandle<()>,
    held: Held,
    /// Bytes reported so far.
    read: usize,
}

/// The exchanges of one session, one tokio task each (the I/O of a [`Session`]; nothing of it
/// is public).
#[doc(hidden)]
pub struct Tasks {
    shared: Arc<Shared<Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    tasks: HashMap<ExchangeId, Task>,
    /// Requests of the last pump, started by [`Tasks::launch`].
    queued: Vec<Transmit>,
    tx: mpsc::UnboundedSender<(ExchangeId, Report)>,
    rx: mpsc::UnboundedReceiver<(ExchangeId, Report)>,
    /// Notified when the shared HTTP/2 connection has events for the session.
    notify: Arc<Notify>,
    /// The largest read the next [`Cmd::Continue`] allows ([`Io::read_allowance`]).
    read_cap: usize,
    /// Bytes the last exchange whose socket was parked read: the next exchange's first read
    /// asks that much ([`read_first`]).
    expect: usize,
    /// The exchange the session drives in its own future, if any.
    inline: Option<Inline>,
}

/// The exchange the session drives in its own future ([`AsyncIo::next`]): started on an idle
/// pooled socket while no other exchange of the session was open, it costs no task and no
/// hand-off per read. If another exchange starts, it moves to a task where it is.
struct Inline {
    state: InlineExchange,
    stream: Stream,
    address: SocketAddr,
}

impl HoldsInline for Inline {
    fn state(&self) -> &InlineExchange {
        &self.state
    }
    fn state_mut(&mut self) -> &mut InlineExchange {
        &mut self.state
    }
}

impl Inline {
    /// One write, flush or read; `Some` once there is something to report. Cancel-safe: a
    /// write or read that did not complete moved no byte.
    async fn step(&mut self) -> io::Result<Option<Report>> {
        match self.state.next() {
            InlineStep::Write(bytes) => {
                let n = self.stream.write(bytes).await?;
                self.state.wrote(n)?;
                Ok(None)
            }
            InlineStep::Flush => {
                self.stream.flush().await?;
                self.state.flushed();
                Ok(None)
            }
            InlineStep::Read(size) => {
                let mut buf: Vec<u8> = Vec::with_capacity(size);
                let n = self.stream.read_buf(&mut buf).await?;
                Ok(Some(if self.state.read(n) {
                    Report::Eof
                } else {
                    Report::Bytes(buf)
                }))
            }
        }
    }
}

/// The inline exchange's next report; never, without one that may move bytes.
async fn drive(inline: Option<&mut Inline>) -> (ExchangeId, Report) {
    let Some(inline) = inline else {
        return std::future::pending().await;
    };
    loop {
        match inline.step().await {
            Ok(Some(report)) => return (inline.state.exchange(), report),
            Ok(None) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                inline.state.failed();
                return (inline.state.exchange(), Report::Failed(io_error(&e)));
            }
        }
    }
}

/// Where a task takes over an exchange the session drove inline.
type Resume = mcp_sansio_net::Resume<Stream>;

impl Io for Tasks {
    fn start(&mut self, transmit: Transmit) -> Result<(), TransportError> {
        self.queued.push(transmit);
        Ok(())
    }

    fn read_on(&mut self, exchange: ExchangeId) {
        if read_on_inline(&mut self.inline, exchange, self.read_cap) {
            return;
        }
        if let Some(task) = self.tasks.get(&exchange) {
            let _ = task.cmd.send(Cmd::Continue(self.read_cap));
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        self.queued.retain(|t| t.exchange != exchange);
        if let Some(inline) = take_inline(&mut self.inline, exchange) {
            if reusable && inline.state.phase() == InlinePhase::Parked {
                self.expect = inline.state.bytes_read();
                self.shared
                    .park(&self.origin, inline.address, inline.stream);
            }
            return;
        }
        let Some(task) = self.tasks.remove(&exchange) else {
            return;
        };
        // A task that reported bytes and waits for a command left its socket in `held`; one
        // that is still reading or writing has it, and is aborted with it (the socket closes).
        let held = if reusable {
            lock(&task.held).take()
        } else {
            None
        };
        task.handle.abort();
        if let Some((address, stream)) = held {
            self.shared.park(&self.origin, address, stream);
            self.expect = task.read;
        }
    }

    fn abandon(&mut self, exchange: ExchangeId) {
        self.queued.retain(|t| t.exchange != exchange);
        take_inline(&mut self.inline, exchange);
        if let Some(task) = self.tasks.remove(&exchange) {
            task.handle.abort();
        }
    }

    fn read_allowance(&mut self, bytes_left: u64) {
        self.read_cap = read_size(bytes_left);
    }
}

impl AsyncIo for Tasks {
    /// Starts the queued exchanges (every socket handed back is already in the pool: the
    /// session parks it in [`Io::finish`]).
    async fn launch(&mut self) {
        for t in std::mem::take(&mut self.queued) {
            if let Some(inline) = self.inline.take() {
                // Another exchange starts: the inline one moves to a task.
                self.demote(inline);
            } else if !t.fresh_socket && self.tasks.is_empty() {
                let pooled = self.shared.take_idle(&self.origin, Stream::is_idle);
                if let Some((address, stream)) = pooled {
                    let size = read_first(self.expect, self.read_cap);
                    self.inline = Some(Inline {
                        state: InlineExchange::new(t.exchange, t.bytes, size),
                        stream,
                        address,
                    });
                    continue;
                }
            }
            let first = read_first(self.expect, self.read_cap);
            self.spawn(t.exchange, t.bytes, t.fresh_socket, first, None);
        }
    }

    /// Nothing to wait for: [`Io::finish`] parks a reusable socket in the pool itself.
    async fn settle(&mut self) {}

    /// The next wake-up: a task's report, events of the shared HTTP/2 connection, or the
    /// deadline (first when several are due).
    async fn next(&mut self, until: Option<StdInstant>) -> Wake {
        let until = until.map(tokio::time::Instant::from_std);
        let inline = self
            .inline
            .as_mut()
            .filter(|i| i.state.phase() == InlinePhase::Go);
        tokio::select! {
            biased;
            () = sleep_or_pend(until) => Wake::Timeout,
            () = self.notify.notified() => Wake::H2,
            (id, report) = drive(inline) => Wake::Report(id, report),
            // The session holds a sender, so the channel never closes.
            Some((id, report)) = self.rx.recv() => {
                if let (Report::Bytes(b), Some(task)) = (&report, self.tasks.get_mut(&id)) {
                    task.read = task.read.saturating_add(b.len());
                }
                Wake::Report(id, report)
            }
        }
    }
}

impl Tasks {
    /// Starts a task for an exchange (`resume`: one the session drove inline until now).
    fn spawn(
        &mut self,
        exchange: ExchangeId,
        request: Vec<u8>,
        fresh: bool,
        first: usize,
        resume: Option<Resume>,
    ) {
        let (cmd, cmd_rx) = mpsc::unbounded_channel();
        let held = Held::default();
        let job = Job {
            shared: self.shared.clone(),
            origin: self.origin.clone(),
            endpoint: self.endpoint.clone(),
            exchange,
            request,
            fresh,
            out: self.tx.clone(),
            cmd: cmd_rx,
            held: held.clone(),
            first,
            resume,
        };
        let handle = tokio::spawn(job.run());
        let task = Task {
            cmd,
            handle,
            held,
            read: 0,
        };
        self.tasks.insert(exchange, task);
    }

    /// Hands the inline exchange to a task, where it is: request partly written, reading, or
    /// waiting for [`Io::read_on`]. One whose end was reported is dropped (its socket closes).
    fn demote(&mut self, inline: Inline) {
        let Some(over) = inline.state.hand_over() else {
            return;
        };
        let resume = Resume::new(inline.stream, inline.address, &over);
        let exchange = over.exchange;
        self.spawn(exchange, over.request, false, over.size, Some(resume));
        if let Some(task) = self.tasks.get_mut(&exchange) {
            task.read = over.read;
        }
    }

    fn abort_all(&mut self) {
        self.inline = None;
        for (_, task) in self.tasks.drain() {
            task.handle.abort();
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
    held: Held,
    /// The first read's size ([`read_first`]).
    first: usize,
    /// The exchange was driven inline until now: its socket, and where it is.
    resume: Option<Resume>,
}

impl Job {
    async fn run(mut self) {
        let id = self.exchange;
        let (mut address, mut stream, mut parked, mut got) = match self.resume.take() {
            Some(r) => {
                let mut stream = r.stream;
                if r.flush {
                    if let Err(e) = write_request(&mut stream, &self.request).await {
                        let _ = self.out.send((id, Report::Failed(io_error(&e))));
                        return;
                    }
                }
                (r.address, stream, r.parked, r.got)
            }
            None => {
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
                (address, stream, false, 0)
            }
        };
        // The first read asks `first` bytes; each read that fills its buffer lets the next one
        // ask four times more, within what the session's byte budget allows (Cmd::Continue).
        // Each read fills a new buffer's spare capacity, and that buffer is the report: what was
        // read is not copied again before the core has it. The session sends a command only
        // after a report, and ends the task by dropping its sender or aborting it.
        let mut size = self.first;
        loop {
            // A task that takes over a parked inline exchange waits for a command first.
            let report = if parked {
                parked = false;
                None
            } else {
                let mut buf: Vec<u8> = Vec::with_capacity(size);
                let report;
                (report, got) = match stream.read_buf(&mut buf).await {
                    Ok(0) => (Report::Eof, 0),
                    Ok(n) => (Report::Bytes(buf), n),
                    Err(e) => (Report::Failed(io_error(&e)), 0),
                };
                if !matches!(report, Report::Bytes(_)) {
                    let _ = self.out.send((id, report));
                    return;
                }
                Some(report)
            };
            // Waiting: the socket stays in `held`, where the session may park it.
            *lock(&self.held) = Some((address, stream));
            if let Some(report) = report {
                if self.out.send((id, report)).is_err() {
                    return;
                }
            }
            match self.cmd.recv().await {
                Some(Cmd::Continue(cap)) => {
                    size = next_read_size(size, got, cap);
                    match lock(&self.held).take() {
                        Some(s) => (address, stream) = s,
                        None => return,
                    }
                }
                None => return,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP/2 sockets

/// The socket I/O of a client's shared HTTP/2 connection to one origin: one task per socket
/// writes what the connection sends, in order, and feeds what it reads to the connection.
#[derive(Clone)]
struct TokioH2(Arc<H2Sockets>);

struct H2Sockets {
    /// The client (weak: the client holds its connections, which hold this).
    shared: Weak<Shared<Stream>>,
    endpoint: Endpoint,
    runtime: tokio::runtime::Handle,
    /// The writer of each open socket, by generation; dropping it closes the socket once the
    /// bytes queued before are written.
    writers: Mutex<HashMap<u64, mpsc::UnboundedSender<Vec<u8>>>>,
}

impl TokioH2 {
    fn new(shared: &Arc<Shared<Stream>>, endpoint: &Endpoint) -> TokioH2 {
        TokioH2(Arc::new(H2Sockets {
            shared: Arc::downgrade(shared),
            endpoint: endpoint.clone(),
            runtime: tokio::runtime::Handle::current(),
            writers: Mutex::new(HashMap::new()),
        }))
    }

    /// Serves `stream` as socket `generation` of `conn` from a task of its own.
    fn attach(&self, conn: Arc<SharedH2>, generation: u64, stream: Stream) {
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.0.writers).insert(generation, tx);
        let stall = self
            .0
            .shared
            .upgrade()
            .map_or(mcp_sansio_net::DEFAULT_WRITE_STALL, |s| s.write_stall);
        self.0
            .runtime
            .spawn(h2_socket(stream, rx, conn, generation, stall));
    }

    fn close_socket(&self, generation: u64) {
        lock(&self.0.writers).remove(&generation);
    }
}

impl H2Io for TokioH2 {
    fn write(&self, generation: u64, bytes: Vec<u8>) {
        if let Some(tx) = lock(&self.0.writers).get(&generation) {
            let _ = tx.send(bytes);
        }
    }

    fn close(&self, generation: u64) {
        self.close_socket(generation);
    }

    fn dial(&self, conn: Arc<SharedH2>, generation: u64) {
        let me = self.clone();
        self.0.runtime.spawn(async move {
            let inner = &me.0;
            let Some(shared) = inner.shared.upgrade() else {
                let e = io_error(&io::Error::other("the client is gone"));
                conn.dialled(generation, Err(e));
                return;
            };
            let stream = match dial(&shared, &inner.endpoint, true).await {
                Ok((_, s)) if inner.endpoint.scheme() == Scheme::Http || s.is_h2() => s,
                Ok(_) => {
                    let e = tls_error("the server no longer negotiates HTTP/2");
                    conn.dialled(generation, Err(e));
                    return;
                }
                Err(e) => {
                    conn.dialled(generation, Err(e));
                    return;
                }
            };
            // The writer is registered before the connection hears of the socket, and the
            // reader starts after: nothing the socket carries is lost.
            let (tx, rx) = mpsc::unbounded_channel();
            lock(&inner.writers).insert(generation, tx);
            conn.dialled(generation, Ok(()));
            let stall = shared.write_stall;
            drop(shared);
            h2_socket(stream, rx, conn, generation, stall).await;
        });
    }
}

/// The task of HTTP/2 socket `generation`: writes what the connection sends, in order, and
/// feeds every read to the connection, until either side closes. While a write waits for the
/// server, nothing is read; a write that has not finished within `stall` (the client's
/// `write_stall`, 30 s by default) fails the socket, so a server that stops reading cannot hold
/// the task forever.
async fn h2_socket(
    mut stream: Stream,
    mut writes: mpsc::UnboundedReceiver<Vec<u8>>,
    conn: Arc<SharedH2>,
    generation: u64,
    stall: Duration,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        tokio::select! {
            bytes = writes.recv() => match bytes {
                Some(bytes) => {
                    let written = tokio::time::timeout(stall, write_request(&mut stream, &bytes))
                        .await
                        .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::TimedOut, "the server stopped reading")));
                    if let Err(e) = written {
                        conn.feed(generation, Report::Failed(io_error(&e)));
                        return;
                    }
                }
                None => {
                    let _ = stream.shutdown().await;
                    return;
                }
            },
            read = stream.read(&mut buf) => {
                let report = match read {
                    Ok(0) => Report::Eof,
                    Ok(n) => Report::Bytes(buf[..n].to_vec()),
                    Err(e) => Report::Failed(io_error(&e)),
                };
                let more = matches!(report, Report::Bytes(_));
                conn.feed(generation, report);
                if !more {
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

/// The tokio runtime of the shared dial ([`mcp_sansio_net::runtime`]): name resolution on the
/// blocking pool, tokio sockets, tokio-rustls.
#[derive(Clone, Copy, Debug)]
pub struct Tokio;

impl Runtime for Tokio {
    type Tcp = TcpStream;
    type Tls = tokio_rustls::client::TlsStream<TcpStream>;

    async fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| e.to_string())
    }

    async fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> io::Result<Option<TcpStream>> {
        match tokio::time::timeout(limit, TcpStream::connect(address)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                Ok(Some(s))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(None),
        }
    }

    async fn tls(
        &self,
        tcp: TcpStream,
        config: &Arc<rustls::ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> Result<Self::Tls, TransportError> {
        let name = server_name(host)?;
        let connector = tokio_rustls::TlsConnector::from(config.clone());
        match tokio::time::timeout_at(deadline.at().into(), connector.connect(name, tcp)).await {
            Ok(Ok(tls)) => Ok(tls),
            Ok(Err(e)) => Err(tls_error(e.to_string())),
            Err(_) => Err(deadline.expired()),
        }
    }
}

/// The shared dial ([`runtime::dial_socket`]) on tokio. With `h2`, TLS offers ALPN `h2` first
/// ([`Stream::is_h2`] tells what was chosen).
async fn dial(
    shared: &Arc<Shared<Stream>>,
    endpoint: &Endpoint,
    h2: bool,
) -> Result<(SocketAddr, Stream), TransportError> {
    let (address, s) = runtime::dial_socket(&Tokio, shared, endpoint, h2).await?;
    Ok(match s {
        Dialled::Plain(tcp) => (address, Stream::Plain(tcp)),
        Dialled::Tls(tls) => (address, Stream::Tls(Box::new(tls))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::Transmit;
    use std::io::{Read, Write};

    fn tasks(client: &Client, url: &str) -> Tasks {
        let config = Config::new(url).unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        Tasks {
            shared: client.shared().clone(),
            origin: config.endpoint.origin(),
            endpoint: Arc::new(config.endpoint.clone()),
            tasks: HashMap::new(),
            queued: Vec::new(),
            tx,
            rx,
            notify: Arc::new(Notify::new()),
            read_cap: READ_MIN,
            expect: 0,
            inline: None,
        }
    }

    fn transmit(id: u64, bytes: &[u8], fresh_socket: bool) -> Transmit {
        Transmit {
            exchange: ExchangeId(id),
            bytes: bytes.to_vec(),
            request: None,
            fresh_socket,
        }
    }

    async fn expect_bytes(io: &mut Tasks, id: u64, want: &[u8]) {
        let until = StdInstant::now() + Duration::from_secs(10);
        match io.next(Some(until)).await {
            Wake::Report(got, Report::Bytes(b)) => {
                assert_eq!(got, ExchangeId(id));
                assert_eq!(b, want);
            }
            other => panic!("expected bytes of exchange {id}, got {other:?}"),
        }
    }

    fn client() -> Client {
        Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .build()
    }

    /// The inline exchange moves to a task when a second one starts, parked where it was: it
    /// reads on when told, and its socket goes back to the pool when it finishes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_inline_exchange_moves_to_a_task_when_another_starts() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = client();
        let mut io = tasks(&client, &format!("http://{addr}/mcp"));
        let pooled = std::net::TcpStream::connect(addr).unwrap();
        let (mut first, _) = listener.accept().unwrap();
        pooled.set_nonblocking(true).unwrap();
        let pooled = TcpStream::from_std(pooled).unwrap();
        client
            .shared()
            .park(&io.origin, addr, Stream::Plain(pooled));
        let server = std::thread::spawn(move || {
            let mut req = [0u8; 4];
            first.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"one!");
            first.write_all(b"A").unwrap();
            let (mut second, _) = listener.accept().unwrap();
            second.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"two!");
            second.write_all(b"B").unwrap();
            first.write_all(b"C").unwrap();
            let mut rest = [0u8; 1];
            let _ = second.read(&mut rest);
            first
        });

        io.start(transmit(1, b"one!", false)).unwrap();
        io.launch().await;
        assert!(
            io.inline.is_some(),
            "a pooled socket, no other exchange: inline"
        );
        assert!(io.tasks.is_empty());
        expect_bytes(&mut io, 1, b"A").await;

        io.start(transmit(2, b"two!", true)).unwrap();
        io.launch().await;
        assert!(io.inline.is_none(), "moved to a task");
        assert_eq!(io.tasks.len(), 2);
        expect_bytes(&mut io, 2, b"B").await;
        io.read_on(ExchangeId(1));
        expect_bytes(&mut io, 1, b"C").await;

        io.finish(ExchangeId(1), true);
        assert_eq!(
            client.idle_sockets(),
            1,
            "the moved exchange's socket is pooled"
        );
        io.abandon(ExchangeId(2));
        let _first = tokio::task::spawn_blocking(move || server.join().unwrap())
            .await
            .unwrap();
    }

    /// An inline exchange whose server never answers ends its wait at the deadline, and its
    /// socket is not pooled.
    #[tokio::test]
    async fn an_inline_exchange_waits_no_longer_than_asked() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = client();
        let mut io = tasks(&client, &format!("http://{addr}/mcp"));
        let pooled = std::net::TcpStream::connect(addr).unwrap();
        let (_silent, _) = listener.accept().unwrap();
        pooled.set_nonblocking(true).unwrap();
        let pooled = TcpStream::from_std(pooled).unwrap();
        client
            .shared()
            .park(&io.origin, addr, Stream::Plain(pooled));
        io.start(transmit(1, b"one!", false)).unwrap();
        io.launch().await;
        assert!(io.inline.is_some());
        let start = StdInstant::now();
        let wake = io.next(Some(start + Duration::from_millis(200))).await;
        assert!(matches!(wake, Wake::Timeout), "{wake:?}");
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        io.finish(ExchangeId(1), true);
        assert_eq!(client.idle_sockets(), 0);
    }
}
