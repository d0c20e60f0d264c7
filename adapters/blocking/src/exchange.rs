//! One exchange on one socket, run by one worker thread.
//!
//! # Why a thread per exchange, and why it reads only when asked
//!
//! The core can have more than one exchange open at a time (a background legacy cancellation or
//! `DELETE` next to the running request, a resumption `GET`), and `std::net` has no portable way
//! to wait on several sockets at once. So each exchange gets a worker thread that owns its socket
//! and reports to the session over one [`std::sync::mpsc`] channel as
//! `(ExchangeId, Report)`; the session waits on that channel with `recv_timeout` until the core's
//! next deadline, so every deadline is kept by the session, never by a socket timeout.
//!
//! The worker dials (or takes a pooled socket), writes the request and reads **once**; after that
//! it reads again only when the session sends [`Command::Read`], which the session does only after
//! it fed the previous bytes to the core *and* drained the core's events. When the core declares
//! the exchange finished, the worker is therefore parked on its command channel, not inside
//! `read`: no byte that follows the response can be taken by a stale reader, and
//! [`Command::Release`] hands the socket back (as the thread's result) for the pool. The cost is
//! one channel round trip per read, which is small next to a socket read.
//!
//! Closing: right after the TCP connect the worker publishes a `try_clone` of the socket in a
//! shared [`Slot`]; closing the exchange marks the slot cancelled and calls
//! `shutdown(Both)` on that handle, which unblocks a worker stuck in `read`, `write` or the TLS
//! handshake. A worker still inside `connect_timeout` cannot be interrupted: it notices the
//! cancellation right after the connect returns (at most the dial timeout later) and drops the
//! socket without sending anything.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use mcp_sansio::ExchangeId;
use mcp_sansio::{TransportError, TransportErrorKind};
use mcp_sansio_net::policy::parse_literal_host;
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, StreamOwned};

use crate::client::{lock, Inner};

/// Bytes requested from the socket per read.
const READ_SIZE: usize = 16 * 1024;

/// A socket of an exchange: plain TCP or TLS over TCP.
pub(crate) enum Stream {
    /// `http`.
    Plain(TcpStream),
    /// `https`.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }

    /// Whether a pooled socket is still idle: not closed by the server and with no byte waiting
    /// (bytes an idle socket received cannot belong to a request not yet sent).
    fn still_idle(&mut self) -> bool {
        let mut b = [0u8; 1];
        if let Stream::Tls(s) = self {
            let buffered = s.conn.reader().read(&mut b);
            if !matches!(buffered, Err(e) if e.kind() == io::ErrorKind::WouldBlock) {
                return false;
            }
        }
        let tcp = self.tcp();
        if tcp.set_nonblocking(true).is_err() {
            return false;
        }
        let clean = matches!(tcp.peek(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        tcp.set_nonblocking(false).is_ok() && clean
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Where a session's exchanges go.
pub(crate) struct Target {
    /// The normalised origin: the pool and hint key.
    pub(crate) origin: String,
    /// The host as written in the URL.
    pub(crate) host: String,
    /// The port.
    pub(crate) port: u16,
    /// Whether to speak TLS.
    pub(crate) tls: bool,
}

/// What a worker reports.
pub(crate) enum Report {
    /// Bytes read; the worker now waits for a [`Command`].
    Bytes(Vec<u8>),
    /// The server closed the socket; the worker has ended.
    Eof,
    /// Dialling, the handshake, writing or reading failed; the worker has ended.
    Failed(TransportError),
}

/// What the session asks of a worker parked after a [`Report::Bytes`].
pub(crate) enum Command {
    /// Read once more.
    Read,
    /// End and return the socket (the core declared it reusable).
    Release,
}

/// The socket handle through which the session closes an exchange.
#[derive(Default)]
pub(crate) struct Slot {
    handle: Option<TcpStream>,
    cancelled: bool,
}

/// Marks the exchange of `slot` closed and shuts its socket down, unblocking its worker.
pub(crate) fn cancel(slot: &Mutex<Slot>) {
    let mut s = lock(slot);
    s.cancelled = true;
    if let Some(h) = s.handle.take() {
        let _ = h.shutdown(Shutdown::Both);
    }
}

/// Publishes `tcp`'s close handle; false if the exchange was cancelled meanwhile.
fn publish(slot: &Mutex<Slot>, tcp: &TcpStream) -> Result<bool, TransportError> {
    let handle = tcp.try_clone().map_err(|e| io_error(&e))?;
    let mut s = lock(slot);
    if s.cancelled {
        return Ok(false);
    }
    s.handle = Some(handle);
    Ok(true)
}

/// What a released worker returns: its socket and the address it was dialled to.
pub(crate) type Released = Option<(Stream, SocketAddr)>;

/// Everything a worker needs.
pub(crate) struct Job {
    pub(crate) inner: Arc<Inner>,
    pub(crate) target: Arc<Target>,
    pub(crate) exchange: ExchangeId,
    pub(crate) request: Vec<u8>,
    pub(crate) fresh: bool,
    pub(crate) slot: Arc<Mutex<Slot>>,
    pub(crate) reports: Sender<(ExchangeId, Report)>,
    pub(crate) commands: Receiver<Command>,
}

/// The worker's body.
pub(crate) fn run(job: Job) -> Released {
    let report = |r: Report| job.reports.send((job.exchange, r)).is_ok();
    let (mut stream, address) = match open(&job) {
        Ok(Some(s)) => s,
        Ok(None) => return None, // cancelled while dialling
        Err(e) => {
            report(Report::Failed(e));
            return None;
        }
    };
    let mut buf = vec![0u8; READ_SIZE];
    loop {
        let r = match stream.read(&mut buf) {
            Ok(0) => Report::Eof,
            Ok(n) => Report::Bytes(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Report::Failed(io_error(&e)),
        };
        let more = matches!(r, Report::Bytes(_));
        if !report(r) || !more {
            return None;
        }
        match job.commands.recv() {
            Ok(Command::Read) => {}
            Ok(Command::Release) => return Some((stream, address)),
            Err(_) => return None, // the session closed the exchange
        }
    }
}

/// A pooled socket (when allowed and still idle) or a newly dialled one, with the request written.
fn open(job: &Job) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    if !job.fresh {
        while let Some((address, mut stream)) = take_pooled(job) {
            if !stream.still_idle() || !publish(&job.slot, stream.tcp())? {
                continue;
            }
            if stream
                .write_all(&job.request)
                .and_then(|()| stream.flush())
                .is_ok()
            {
                return Ok(Some((stream, address)));
            }
            // A pooled socket the server had closed: nothing was read, dial afresh.
            lock(&job.slot).handle = None;
        }
    }
    let Some((mut stream, address)) = dial(job)? else {
        return Ok(None);
    };
    stream
        .write_all(&job.request)
        .and_then(|()| stream.flush())
        .map_err(|e| io_error(&e))?;
    Ok(Some((stream, address)))
}

fn take_pooled(job: &Job) -> Option<(SocketAddr, Stream)> {
    lock(&job.inner.pool).take(&job.target.origin, std::time::Instant::now())
}

/// Resolves and vets once, then dials the admitted addresses in order; refused addresses are
/// never dialled and no name is resolved twice.
fn dial(job: &Job) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    let inner = &job.inner;
    let target = &job.target;
    let addresses = mcp_sansio_net::vetted_addresses(
        inner.resolver.as_ref(),
        &inner.policy,
        &target.host,
        target.port,
    )?;
    let mut failures = Vec::new();
    let mut connected = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, inner.dial_timeout) {
            Ok(s) => {
                connected = Some((s, address));
                break;
            }
            Err(e) => failures.push(format!("{address}: {e}")),
        }
    }
    let Some((tcp, address)) = connected else {
        return Err(TransportError {
            kind: TransportErrorKind::Connect,
            message: failures.join("; "),
        });
    };
    if !publish(&job.slot, &tcp)? {
        return Ok(None);
    }
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok(Some((Stream::Plain(tcp), address)));
    }
    let tls = handshake(inner, &target.host, tcp)?;
    Ok(Some((Stream::Tls(Box::new(tls)), address)))
}

/// The TLS handshake, SNI = the endpoint host (an IP literal is verified as an address), each
/// socket operation bounded by the dial timeout.
fn handshake(
    inner: &Inner,
    host: &str,
    mut tcp: TcpStream,
) -> Result<StreamOwned<ClientConnection, TcpStream>, TransportError> {
    let tls_error = |message: String| TransportError {
        kind: TransportErrorKind::Tls,
        message,
    };
    let name = match parse_literal_host(host) {
        Some(ip) => ServerName::IpAddress(ip.into()),
        None => ServerName::try_from(host.to_owned())
            .map_err(|e| tls_error(format!("server name {host:?}: {e}")))?,
    };
    let mut conn =
        ClientConnection::new(inner.tls.clone(), name).map_err(|e| tls_error(e.to_string()))?;
    let timeout = Some(inner.dial_timeout).filter(|d| !d.is_zero());
    tcp.set_read_timeout(timeout).map_err(|e| io_error(&e))?;
    tcp.set_write_timeout(timeout).map_err(|e| io_error(&e))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp)
            .map_err(|e| tls_error(e.to_string()))?;
    }
    tcp.set_read_timeout(None).map_err(|e| io_error(&e))?;
    tcp.set_write_timeout(None).map_err(|e| io_error(&e))?;
    Ok(StreamOwned::new(conn, tcp))
}

fn io_error(e: &io::Error) -> TransportError {
    TransportError {
        kind: TransportErrorKind::Io,
        message: e.to_string(),
    }
}
