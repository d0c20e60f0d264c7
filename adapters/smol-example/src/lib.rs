//! A third runtime for the [`mcp_sansio`] core: the shared session driver and network guard of
//! [`mcp_sansio_net`] on [`smol`].
//!
//! Everything that is not "how bytes move" is shared with the tokio and the blocking adapters:
//! the [`SessionDriver`](mcp_sansio_net::SessionDriver) runs the core (recording, the clock, era hints, how an operation ends,
//! which socket goes back to the pool), the [`ClientBuilder`](mcp_sansio_net::ClientBuilder) and the address policy decide which
//! addresses may be dialled, and [`mcp_sansio_net::dial`] is the dial rule (one deadline across
//! every admitted address and the TLS handshake, the TLS server name, the idle check of a pooled
//! socket). This crate only moves bytes on smol's [`Async<TcpStream>`](smol::Async), with TLS by
//! `futures-rustls`: one smol task per exchange, reading once each time the session asks.
//!
//! HTTP/2 takes the shared route ([`mcp_sansio_net::route::session_driver`]): when TLS negotiates
//! `h2` by ALPN, or for an `http` endpoint with
//! [`h2_prior_knowledge`](mcp_sansio_net::ClientBuilder::h2_prior_knowledge), every session of a
//! [`Client`] to the origin is a work item of its one shared connection
//! ([`SharedH2`]), whose socket one smol task serves (writes in order, each read fed to the
//! connection). [`Session::http_version`](mcp_sansio_net::Session::http_version) says which.
//!
//! ```no_run
//! use mcp_sansio::Config;
//! use mcp_sansio_smol_example::{AddressPolicy, Client};
//!
//! smol::block_on(async {
//!     let client = Client::builder()
//!         .policy(AddressPolicy::strict().allow_loopback(true))
//!         .build();
//!     let mut session = client.connect(Config::new("http://127.0.0.1:8080/mcp")?).await?;
//!     for tool in &session.list_tools().await?.tools {
//!         println!("{}", tool.name());
//!     }
//!     let result = session.call_tool("echo", br#"{"text":"hi"}"#).await?;
//!     println!("error: {}", result.is_error);
//!     session.close().await
//! })?;
//! # Ok::<(), mcp_sansio::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::future::{pending, Future};
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_rustls::client::TlsStream;
use mcp_sansio::{Config, Error};
use mcp_sansio::{Endpoint, ExchangeId, Scheme, Transmit, TransportError};
use mcp_sansio_net::client::lock;
use mcp_sansio_net::dial::{io_error, server_name, still_idle, tls_error, DialDeadline, Peek};
use mcp_sansio_net::route::{self, H2Glue};
use mcp_sansio_net::runtime::{self, Dialled, Runtime};
pub use mcp_sansio_net::{AddressPolicy, CallObserver, Resolve, StaticResolver, SystemResolver};
use mcp_sansio_net::{AsyncIo, H2Io, Io, NoObserver, Report, Shared, SharedH2, Start, Wake};
use smol::channel::{unbounded, Receiver, Sender};
use smol::future::FutureExt as _;
use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use smol::{Async, Task, Timer};

const READ_CHUNK: usize = 16 * 1024;

/// An MCP client on smol.
pub type Client = mcp_sansio_net::Client<SmolRuntime>;

/// The smol runtime: connecting is a future.
#[derive(Clone, Copy, Debug)]
pub struct SmolRuntime;

impl mcp_sansio_net::ClientRuntime for SmolRuntime {
    type Socket = Stream;
    type Connect<'a> = Pin<Box<dyn Future<Output = Result<Session, Error>> + Send + 'a>>;

    fn connect(client: &Client, config: Config) -> Self::Connect<'_> {
        Box::pin(connect(client, config))
    }
}

/// Negotiates the protocol with the server of `config` and returns the session; fails with the
/// core's [`Error`] (a refused address, a failed dial or what the negotiation came to).
async fn connect(client: &Client, config: Config) -> Result<Session, Error> {
    // The session's waker: one pending wake at most, like a permit.
    let (wake_tx, h2) = smol::channel::bounded(1);
    let wake: mcp_sansio_net::Waker = Arc::new(move || {
        let _ = wake_tx.try_send(());
    });
    let endpoint = config.endpoint.clone();
    let mut glue = Route {
        shared: client.shared(),
        endpoint: &endpoint,
        h2: &h2,
    };
    let driver = route::session_driver(client.shared(), config, wake, &mut glue).await?;
    let (tx, rx) = unbounded();
    let io = Tasks {
        shared: client.shared().clone(),
        origin: driver.origin().to_owned(),
        endpoint: Arc::new(driver.config().endpoint.clone()),
        tasks: HashMap::new(),
        parking: Vec::new(),
        queued: Vec::new(),
        tx,
        rx,
        h2,
    };
    let mut session = Session::from_parts(driver, io);
    let (driver, io) = session.parts();
    driver.run(io, Start::Connect, &mut NoObserver).await?;
    Ok(session)
}

/// The smol side of a new session's HTTP/2 route ([`route::session_driver`]).
struct Route<'a> {
    shared: &'a Arc<Shared<Stream>>,
    endpoint: &'a Endpoint,
    h2: &'a Receiver<()>,
}

impl H2Glue for Route<'_> {
    type Stream = Stream;
    type Socket = Stream;
    type Sockets = SmolH2;

    async fn wait(&mut self) -> bool {
        self.h2.recv().await.is_ok()
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

    fn sockets(&self) -> SmolH2 {
        SmolH2(Arc::new(H2Sockets {
            shared: Arc::downgrade(self.shared),
            endpoint: self.endpoint.clone(),
            writers: Mutex::new(HashMap::new()),
        }))
    }

    fn attach(
        sockets: &SmolH2,
        conn: Arc<SharedH2>,
        generation: u64,
        socket: Stream,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError> {
        before_reading();
        sockets.serve(conn, generation, socket, false);
        Ok(())
    }
}

/// A connected MCP session on smol. Dropping it cancels its exchange tasks, which closes their
/// sockets; [`Session::close`](mcp_sansio_net::Session::close) also ends a legacy session on the
/// server.
pub type Session = mcp_sansio_net::Session<SmolRuntime>;

impl mcp_sansio_net::SessionRuntime for SmolRuntime {
    type Io = Tasks;
    type Op<'a, T: Send + 'a> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

    fn run<'a, T: Send + 'a>(
        session: &'a mut Session,
        op: Start<'a>,
        observer: &'a mut dyn CallObserver,
        then: fn(mcp_sansio::Completion) -> Result<T, Error>,
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
            driver.end_recording();
            result
        })
    }
}

/// A plain or TLS socket on smol's reactor.
pub enum Stream {
    /// `http`.
    Plain(Async<TcpStream>),
    /// `https`.
    Tls(Box<TlsStream<Async<TcpStream>>>),
}

impl Stream {
    /// Whether the TLS handshake negotiated HTTP/2 (ALPN `h2`); never for a plain socket.
    fn is_h2(&self) -> bool {
        match self {
            Stream::Plain(_) => false,
            Stream::Tls(s) => mcp_sansio_net::tls::is_h2(s.get_ref().1.alpn_protocol()),
        }
    }

    /// Whether a pooled socket may serve a new request (the shared rule, [`still_idle`]).
    fn is_idle(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let (tcp, tls, buffered) = match self {
            Stream::Plain(s) => (s.get_ref(), false, false),
            Stream::Tls(s) => {
                let (tcp, conn) = s.get_mut();
                let read = io::Read::read(&mut conn.reader(), &mut byte);
                let buffered = !matches!(read, Err(e) if e.kind() == io::ErrorKind::WouldBlock);
                (tcp.get_ref(), true, buffered)
            }
        };
        // The socket is non-blocking: a peek with nothing waiting says so at once.
        let peek = match tcp.peek(&mut byte) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Quiet,
            Ok(0) | Err(_) => Peek::Closed,
            Ok(_) => Peek::Bytes,
        };
        still_idle(tls, buffered, peek)
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, b),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, b),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, b),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, b),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_close(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_close(cx),
        }
    }
}

/// What the session tells an exchange task.
enum Cmd {
    /// Read once more.
    Continue,
    /// Put the socket back in the pool and end.
    Park,
}

/// The exchange tasks of a session: the adapter's [`Io`]. Dropping a smol task cancels it.
#[doc(hidden)]
pub struct Tasks {
    shared: Arc<Shared<Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    tasks: HashMap<ExchangeId, (Sender<Cmd>, Task<()>)>,
    parking: Vec<Task<()>>,
    queued: Vec<Transmit>,
    tx: Sender<(ExchangeId, Report)>,
    rx: Receiver<(ExchangeId, Report)>,
    /// Wakes of the shared HTTP/2 connection (none once its waker is gone).
    h2: Receiver<()>,
}

impl Io for Tasks {
    fn start(&mut self, transmit: Transmit) -> Result<(), TransportError> {
        self.queued.push(transmit);
        Ok(())
    }

    fn read_on(&mut self, exchange: ExchangeId) {
        if let Some((cmd, _)) = self.tasks.get(&exchange) {
            let _ = cmd.try_send(Cmd::Continue);
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        self.queued.retain(|t| t.exchange != exchange);
        if let Some((cmd, task)) = self.tasks.remove(&exchange) {
            if reusable && cmd.try_send(Cmd::Park).is_ok() {
                self.parking.push(task);
            }
        }
    }

    fn abandon(&mut self, exchange: ExchangeId) {
        self.queued.retain(|t| t.exchange != exchange);
        self.tasks.remove(&exchange);
    }
}

impl AsyncIo for Tasks {
    async fn launch(&mut self) {
        if self.queued.iter().any(|t| !t.fresh_socket) {
            self.settle().await;
        }
        for t in std::mem::take(&mut self.queued) {
            let id = t.exchange;
            let (cmd, cmd_rx) = unbounded();
            let (shared, origin) = (self.shared.clone(), self.origin.clone());
            let job = exchange(
                shared,
                origin,
                self.endpoint.clone(),
                t,
                self.tx.clone(),
                cmd_rx,
            );
            self.tasks.insert(id, (cmd, smol::spawn(job)));
        }
    }

    async fn settle(&mut self) {
        for task in self.parking.drain(..) {
            task.await;
        }
    }

    async fn next(&mut self, until: Option<Instant>) -> Wake {
        let timer = async {
            match until {
                Some(t) => drop(Timer::at(t).await),
                None => pending::<()>().await,
            }
            Wake::Timeout
        };
        // The session holds a sender, so the channel never closes.
        let report = async {
            match self.rx.recv().await {
                Ok((id, report)) => Wake::Report(id, report),
                Err(_) => Wake::Timeout,
            }
        };
        let h2 = async {
            match self.h2.recv().await {
                Ok(()) => Wake::H2,
                Err(_) => pending().await,
            }
        };
        timer.or(report).or(h2).await
    }
}

/// One exchange: take an idle pooled socket (unless the core asks for a fresh one) or dial, write
/// the request, then read once each time the session asks, until the core finishes it.
async fn exchange(
    shared: Arc<Shared<Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    transmit: Transmit,
    out: Sender<(ExchangeId, Report)>,
    cmd: Receiver<Cmd>,
) {
    let id = transmit.exchange;
    let pooled = if transmit.fresh_socket {
        None
    } else {
        shared.take_idle(&origin, Stream::is_idle)
    };
    let (address, mut stream) = match pooled {
        Some(s) => s,
        None => match dial(&shared, &endpoint, false).await {
            Ok(s) => s,
            Err(e) => return drop(out.try_send((id, Report::Failed(e)))),
        },
    };
    let written = async {
        stream.write_all(&transmit.bytes).await?;
        stream.flush().await
    };
    if let Err(e) = written.await {
        return drop(out.try_send((id, Report::Failed(io_error(&e)))));
    }
    let mut buf = vec![0u8; READ_CHUNK];
    let mut waiting = false;
    loop {
        // A command is heard even while a read is pending (the core may finish an exchange
        // whose socket was told to read on).
        let command = async { Step::Command(cmd.recv().await.ok()) };
        let step = if waiting {
            command.await
        } else {
            command
                .or(async { Step::Read(stream.read(&mut buf).await) })
                .await
        };
        let report = match step {
            Step::Command(Some(Cmd::Continue)) => {
                waiting = false;
                continue;
            }
            Step::Command(Some(Cmd::Park)) => return shared.park(&origin, address, stream),
            Step::Command(None) | Step::Write(_) => return,
            Step::Read(Ok(0)) => Report::Eof,
            Step::Read(Ok(n)) => Report::Bytes(buf[..n].to_vec()),
            Step::Read(Err(e)) => Report::Failed(io_error(&e)),
        };
        waiting = true;
        let more = matches!(report, Report::Bytes(_));
        if out.try_send((id, report)).is_err() || !more {
            return;
        }
    }
}

/// What an exchange task woke up for.
enum Step {
    /// A command of the session, `None` once the session dropped the exchange.
    Command(Option<Cmd>),
    /// A read ended.
    Read(io::Result<usize>),
    /// The HTTP/2 connection has bytes to write (`None`: the socket is to close).
    Write(Option<Vec<u8>>),
}

/// `future`, or `None` once `limit` passed.
async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    async { Some(future.await) }
        .or(async {
            Timer::after(limit).await;
            None
        })
        .await
}

/// The smol runtime of the shared dial ([`runtime::dial`]).
struct Smol;

impl Runtime for Smol {
    type Tcp = Async<TcpStream>;
    type Tls = futures_rustls::client::TlsStream<Async<TcpStream>>;

    async fn unblock<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        Ok(smol::unblock(f).await)
    }

    async fn connect_tcp(
        &self,
        address: SocketAddr,
        limit: Duration,
    ) -> io::Result<Option<Self::Tcp>> {
        let tcp = within(limit, Async::<TcpStream>::connect(address))
            .await
            .transpose()?;
        if let Some(tcp) = &tcp {
            let _ = tcp.get_ref().set_nodelay(true);
        }
        Ok(tcp)
    }

    async fn tls(
        &self,
        tcp: Self::Tcp,
        config: &Arc<rustls::ClientConfig>,
        host: &str,
        deadline: &DialDeadline,
    ) -> Result<Self::Tls, TransportError> {
        let name = server_name(host)?;
        let left = deadline
            .left(Instant::now())
            .ok_or_else(|| deadline.expired())?;
        let connector = futures_rustls::TlsConnector::from(config.clone());
        match within(left, connector.connect(name, tcp)).await {
            Some(Ok(tls)) => Ok(tls),
            Some(Err(e)) => Err(tls_error(e.to_string())),
            None => Err(deadline.expired()),
        }
    }
}

/// The shared dial on smol; with `h2`, TLS offers ALPN `h2` first ([`Stream::is_h2`]).
async fn dial(
    shared: &Arc<Shared<Stream>>,
    endpoint: &Endpoint,
    h2: bool,
) -> Result<(SocketAddr, Stream), TransportError> {
    Ok(
        match runtime::dial_socket(&Smol, shared, endpoint, h2).await? {
            (address, Dialled::Plain(tcp)) => (address, Stream::Plain(tcp)),
            (address, Dialled::Tls(tls)) => (address, Stream::Tls(Box::new(tls))),
        },
    )
}

/// The socket I/O of a client's shared HTTP/2 connection to one origin: one smol task per socket
/// writes what the connection sends, in order, and feeds what it reads to the connection.
#[derive(Clone)]
struct SmolH2(Arc<H2Sockets>);

struct H2Sockets {
    /// The client (weak: the client holds its connections, which hold this).
    shared: Weak<Shared<Stream>>,
    endpoint: Endpoint,
    /// The writer of each open socket, by generation; dropping it closes the socket once the
    /// bytes queued before are written.
    writers: Mutex<HashMap<u64, Sender<Vec<u8>>>>,
}

impl SmolH2 {
    /// Serves `stream` as socket `generation` of `conn` from a task of its own; `dialled` is
    /// told once the writer is registered and before anything is read.
    fn serve(&self, conn: Arc<SharedH2>, generation: u64, stream: Stream, dialled: bool) {
        let (tx, rx) = unbounded();
        lock(&self.0.writers).insert(generation, tx);
        if dialled {
            conn.dialled(generation, Ok(()));
        }
        let stall = self
            .0
            .shared
            .upgrade()
            .map_or(mcp_sansio_net::DEFAULT_WRITE_STALL, |s| s.write_stall);
        smol::spawn(h2_socket(stream, rx, conn, generation, stall)).detach();
    }
}

impl H2Io for SmolH2 {
    fn write(&self, generation: u64, bytes: Vec<u8>) {
        if let Some(tx) = lock(&self.0.writers).get(&generation) {
            let _ = tx.try_send(bytes);
        }
    }

    fn close(&self, generation: u64) {
        lock(&self.0.writers).remove(&generation);
    }

    fn dial(&self, conn: Arc<SharedH2>, generation: u64) {
        let me = self.clone();
        smol::spawn(async move {
            let Some(shared) = me.0.shared.upgrade() else {
                let e = io_error(&io::Error::other("the client is gone"));
                return conn.dialled(generation, Err(e));
            };
            match dial(&shared, &me.0.endpoint, true).await {
                Ok((_, s)) if me.0.endpoint.scheme() == Scheme::Http || s.is_h2() => {
                    drop(shared);
                    me.serve(conn, generation, s, true);
                }
                Ok(_) => {
                    let e = tls_error("the server no longer negotiates HTTP/2");
                    conn.dialled(generation, Err(e));
                }
                Err(e) => conn.dialled(generation, Err(e)),
            }
        })
        .detach();
    }
}

/// The task of HTTP/2 socket `generation`: writes what the connection sends, in order, and feeds
/// every read to the connection, until either side closes. A write that has not finished within
/// `stall` (the client's `write_stall`) fails the socket.
async fn h2_socket(
    mut stream: Stream,
    writes: Receiver<Vec<u8>>,
    conn: Arc<SharedH2>,
    generation: u64,
    stall: Duration,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let write = async { Step::Write(writes.recv().await.ok()) };
        let step = write
            .or(async { Step::Read(stream.read(&mut buf).await) })
            .await;
        let report = match step {
            Step::Write(Some(bytes)) => {
                let written = async {
                    stream.write_all(&bytes).await?;
                    stream.flush().await
                };
                match within(stall, written).await {
                    Some(Ok(())) => continue,
                    Some(Err(e)) => Report::Failed(io_error(&e)),
                    None => Report::Failed(io_error(&io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the server stopped reading",
                    ))),
                }
            }
            Step::Write(None) => return drop(stream.close().await),
            Step::Read(Ok(0)) => Report::Eof,
            Step::Read(Ok(n)) => Report::Bytes(buf[..n].to_vec()),
            Step::Read(Err(e)) => Report::Failed(io_error(&e)),
            Step::Command(_) => continue,
        };
        let more = matches!(report, Report::Bytes(_));
        conn.feed(generation, report);
        if !more {
            return;
        }
    }
}
