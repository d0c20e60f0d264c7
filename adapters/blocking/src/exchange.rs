//! Exchanges on `std::net` sockets, one worker thread each: the [`Io`] of the session driver.
//!
//! # Why a thread per exchange, and why it reads only when asked
//!
//! The core can have more than one exchange open at a time (a background legacy cancellation or
//! `DELETE` next to the running request, a resumption `GET`), and `std::net` has no portable way
//! to wait on several sockets at once. So each exchange gets a worker thread that owns its socket
//! and reports to the session over one [`std::sync::mpsc`] channel as `(ExchangeId, Report)`; the
//! session waits on that channel with `recv_timeout` until the core's next deadline, so every
//! deadline is kept by the session.
//!
//! # The inline exchange
//!
//! While a session has only one exchange open and it runs on an idle pooled socket (the pages of
//! a listing, the calls of a warm session), the session moves its bytes itself ([`Inline`]): it
//! writes the request and reads when it waits, with the socket's read and write timeouts set to
//! what is left before the core's next deadline (set again after one runs out, so the wait ends
//! at the deadline as on the channel), and reads again only after [`Io::read_on`], as a worker
//! does. When another exchange starts, the inline one is handed to a worker thread where it is
//! ([`Resume`]); its socket's timeouts are cleared before it goes to a worker.
//!
//! Few system calls per warm exchange: a [`Stream`] remembers the timeouts its socket carries.
//! An inline exchange parks its socket in the pool with them; whoever hands a pooled socket to a
//! worker (the session when it moves the inline exchange, a worker when it takes one from the
//! pool) clears them first, so a worker's reads never stop early. The next inline exchange keeps
//! the timeout it finds when that is no longer than what is left before the deadline and at
//! most a sixteenth shorter ([`Stream::bound_wait`]; it sets them a thirty-second short, so the
//! next pages, whose deadlines are as far away, find them fitting): a read never waits past the
//! deadline, and one that ends early makes the wait set the exact rest, as before. The pool's
//! idle check is one peek that does not wait (`MSG_PEEK | MSG_DONTWAIT` on Unix; elsewhere the
//! socket is non-blocking for the peek only), in the same blocking mode the exchange needs, so a
//! socket with unread bytes or a closed peer is still never reused. A warm page thus costs its
//! write, its reads and that peek.
//!
//! The worker dials (or takes a pooled socket), writes the request and reads **once**; after that
//! it reads again only when the driver says [`Io::read_on`], which it does only after it fed the
//! previous bytes to the core *and* drained the core's outputs. When the core declares the
//! exchange finished, the worker is therefore parked on its command channel, not inside `read`:
//! no byte that follows the response can be taken by a stale reader. A parked worker leaves its
//! socket in the exchange's [`Slot`] (it takes it back only on [`Command::Read`]), so the session
//! takes a reusable socket from there and parks it in the pool itself, without waiting on the
//! worker.
//!
//! # Worker threads are reused
//!
//! A worker whose exchange ended with its socket handed back is idle: the session keeps it (up to
//! [`IDLE_WORKERS`]) and gives it the next exchange rather than starting a thread per exchange
//! (a listing of many pages is as many exchanges, one after the other). A worker of an exchange
//! that was closed or abandoned is never reused: it may still be inside `connect` or `read`, and
//! it ends on its own once its socket is shut and its job done.
//!
//! A pooled socket whose write or first read fails is reported as failed like any other: the
//! core decides to send once more on a fresh socket, and the recording shows it.
//!
//! Closing: right after the TCP connect the worker publishes a `try_clone` of the socket in a
//! shared [`Slot`]; closing the exchange marks the slot cancelled and calls `shutdown(Both)` on
//! that handle, which unblocks a worker stuck in `read`, `write` or the TLS handshake. A worker
//! still inside `connect_timeout` cannot be interrupted: it notices the cancellation right after
//! the connect returns (within the dial deadline) and drops the socket without sending anything.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mcp_sansio::{Endpoint, ExchangeId, Scheme, Transmit, TransportError};
use mcp_sansio_net::client::lock;
use mcp_sansio_net::dial::{io_error, still_idle, Peek};
use mcp_sansio_net::driver::{next_read_size, read_first, read_size, READ_MIN};
use mcp_sansio_net::inline::{read_on_inline, take_inline, HoldsInline};
use mcp_sansio_net::runtime::{self, block_on, Dialled, StdNet};
use mcp_sansio_net::{InlineExchange, InlinePhase, InlineStep, Io, Report, Shared};
use rustls::{ClientConnection, StreamOwned};

/// A socket of an exchange: plain TCP or TLS over TCP, with the timeouts it carries.
pub struct Stream {
    conn: Conn,
    /// The read and write timeouts set on the socket (the adapter always sets both alike).
    timeouts: Timeouts,
}

/// The connection under a [`Stream`].
pub(crate) enum Conn {
    /// `http`.
    Plain(TcpStream),
    /// `https`.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// What a [`Stream`] knows of its socket's read and write timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timeouts {
    /// None: a read or write waits until it can go on.
    Cleared,
    /// Both are this long.
    Set(Duration),
    /// Setting them failed half-way: set them again before relying on them.
    Unknown,
}

impl Stream {
    /// A newly dialled plain socket (it carries no timeouts).
    pub(crate) fn plain(tcp: TcpStream) -> Stream {
        Stream {
            conn: Conn::Plain(tcp),
            timeouts: Timeouts::Cleared,
        }
    }

    /// A TLS socket whose handshake cleared the timeouts it used.
    fn tls(tls: StreamOwned<ClientConnection, TcpStream>) -> Stream {
        Stream {
            conn: Conn::Tls(Box::new(tls)),
            timeouts: Timeouts::Cleared,
        }
    }

    /// The connection of a newly dialled stream (it carries no timeouts) if it speaks HTTP/2
    /// (`h2c`: a plain socket); otherwise the stream back.
    pub(crate) fn into_h2(self, h2c: bool) -> Result<Conn, Stream> {
        match self.conn {
            Conn::Plain(tcp) if h2c => Ok(Conn::Plain(tcp)),
            Conn::Tls(s) if mcp_sansio_net::tls::is_h2(s.conn.alpn_protocol()) => Ok(Conn::Tls(s)),
            conn => Err(Stream {
                conn,
                timeouts: self.timeouts,
            }),
        }
    }

    fn tcp(&self) -> &TcpStream {
        match &self.conn {
            Conn::Plain(s) => s,
            Conn::Tls(s) => &s.sock,
        }
    }

    /// Sets both timeouts to `to`, unless the socket is known to carry exactly that already.
    fn set_timeouts(&mut self, to: Option<Duration>) -> io::Result<()> {
        let want = to.map_or(Timeouts::Cleared, Timeouts::Set);
        if self.timeouts == want {
            return Ok(());
        }
        self.timeouts = Timeouts::Unknown;
        let tcp = self.tcp();
        tcp.set_read_timeout(to)?;
        tcp.set_write_timeout(to)?;
        self.timeouts = want;
        Ok(())
    }

    /// Clears the timeouts an inline exchange may have left, so that a worker's reads and writes
    /// wait without end (no system call when there are none).
    fn clear_timeouts(&mut self) -> io::Result<()> {
        self.set_timeouts(None)
    }

    /// Bounds one read or write by `left` (`None`: no bound) before an inline exchange waits.
    ///
    /// A timeout the socket already carries is kept when it is no longer than `left` and at
    /// most a sixteenth shorter: a read it ends early only makes the waiting loop set the exact
    /// rest ([`Stream::set_timeouts`]), and nothing ever waits past `left`. A timeout set here is
    /// a thirty-second shorter than `left`, so that the next exchanges, whose deadlines are as
    /// far away give or take the time a page takes, find it fitting as it is.
    fn bound_wait(&mut self, left: Option<Duration>) -> io::Result<()> {
        match (self.timeouts, left) {
            (Timeouts::Cleared, None) => Ok(()),
            (Timeouts::Set(t), Some(l)) if fits(t, l) => Ok(()),
            (_, None) => self.set_timeouts(None),
            (_, Some(l)) => self.set_timeouts(Some(l - l / 32)),
        }
    }

    /// Whether a pooled socket may serve a new request ([`still_idle`]): no decrypted bytes
    /// wait and a peek that does not wait finds the socket open and quiet.
    pub(crate) fn is_idle(&mut self) -> bool {
        let mut b = [0u8; 1];
        let (tls, buffered) = match &mut self.conn {
            Conn::Plain(_) => (false, false),
            Conn::Tls(s) => (
                true,
                !matches!(s.conn.reader().read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock),
            ),
        };
        still_idle(tls, buffered, peek_now(self.tcp()))
    }
}

/// Whether a socket's timeout `t` may bound a wait of at most `left` ([`Stream::bound_wait`]).
fn fits(t: Duration, left: Duration) -> bool {
    t <= left && t >= left - left / 16
}

/// A peek at `tcp` that does not wait: one `recv(MSG_PEEK | MSG_DONTWAIT)`, the socket stays in
/// blocking mode.
#[cfg(unix)]
fn peek_now(tcp: &TcpStream) -> Peek {
    use rustix::io::Errno;
    use rustix::net::{recv, RecvFlags};
    let mut b = [0u8; 1];
    loop {
        return match recv(tcp, &mut b[..], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
            Ok((_, 0)) => Peek::Closed,
            Ok(_) => Peek::Bytes,
            Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => Peek::Quiet,
            #[allow(unreachable_patterns)] // EWOULDBLOCK is EAGAIN where they are the same
            Err(Errno::WOULDBLOCK) => Peek::Quiet,
            Err(_) => Peek::Closed,
        };
    }
}

/// A peek at `tcp` that does not wait: the socket is non-blocking for the peek only.
#[cfg(not(unix))]
fn peek_now(tcp: &TcpStream) -> Peek {
    let mut b = [0u8; 1];
    if tcp.set_nonblocking(true).is_err() {
        return Peek::Closed;
    }
    let peek = match tcp.peek(&mut b) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Quiet,
        Ok(0) | Err(_) => Peek::Closed,
        Ok(_) => Peek::Bytes,
    };
    if tcp.set_nonblocking(false).is_err() {
        return Peek::Closed;
    }
    peek
}

impl Stream {
    /// Reads at most `size` bytes into a buffer of their own, which the session then gives to
    /// the core as it is ([`Connection::handle_owned_bytes`](mcp_sansio::Connection)). On a
    /// plain socket the kernel writes straight into the buffer's spare capacity, so a page is
    /// neither zeroed first nor copied after. Otherwise (TLS, where a read gives what a record
    /// or a few held) the bytes are read into `scratch`, kept by the caller from read to read,
    /// and copied out at their length.
    fn read_fresh(&mut self, size: usize, scratch: &mut Vec<u8>) -> io::Result<Vec<u8>> {
        #[cfg(unix)]
        if let Conn::Plain(tcp) = &self.conn {
            let mut bytes = Vec::with_capacity(size);
            rustix::io::read(tcp, rustix::buffer::spare_capacity(&mut bytes))?;
            return Ok(bytes);
        }
        if scratch.len() < size {
            scratch.resize(size, 0);
        }
        let n = self.read(&mut scratch[..size])?;
        Ok(scratch[..n].to_vec())
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.conn {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(s) => tls_read(&mut s.conn, &mut s.sock, buf),
        }
    }
}

/// Reads plaintext with at most one read of the socket: rustls' own `Stream::read` goes on
/// reading for as long as no whole record has come, so a server trickling one record a byte at a
/// time would hold it past any deadline, each byte within the socket's timeout. Here a socket
/// read that completes no record returns `WouldBlock`, and the caller looks at its deadline
/// before reading again (a worker, whose socket has no timeout, just reads again: the session
/// closes the socket at the deadline).
fn tls_read(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    buf: &mut [u8],
) -> io::Result<usize> {
    match conn.reader().read(buf) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        done => return done,
    }
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    conn.read_tls(sock)?;
    conn.process_new_packets()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    // After the end of the stream the reader says whether it was clean (`Ok(0)`) or not.
    conn.reader().read(buf)
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.conn {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.conn {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

/// Where a session's exchanges go.
pub(crate) struct Target {
    pub(crate) origin: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) tls: bool,
}

impl Target {
    pub(crate) fn new(endpoint: &Endpoint, origin: &str) -> Target {
        Target {
            origin: origin.to_owned(),
            endpoint: endpoint.clone(),
            tls: endpoint.scheme() == Scheme::Https,
        }
    }
}

/// Idle worker threads a session keeps for its next exchanges.
const IDLE_WORKERS: usize = 2;

/// What the session asks of a worker parked after a [`Report::Bytes`]. Dropping the command
/// channel ends the exchange (the session took the socket from the [`Slot`], or closed it).
enum Command {
    /// Read once more, at most this many bytes ([`read_size`] of the session's byte budget).
    Read(usize),
}

/// The socket handle through which the session closes an exchange, and the socket itself while
/// the worker is parked.
#[derive(Default)]
struct Slot {
    handle: Option<TcpStream>,
    cancelled: bool,
    /// The exchange's socket while its worker waits for a command after a [`Report::Bytes`].
    held: Option<(Stream, SocketAddr)>,
}

/// Marks the exchange of `slot` closed and shuts its socket down, unblocking its worker.
fn cancel(slot: &Mutex<Slot>) {
    let mut s = lock(slot);
    s.cancelled = true;
    if let Some(h) = s.handle.take() {
        let _ = h.shutdown(Shutdown::Both);
    }
    s.held = None;
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

/// A worker thread: it runs the jobs sent to it, one after the other, until its job channel
/// is dropped.
struct Worker {
    jobs: Sender<Job>,
    _thread: JoinHandle<()>,
}

impl Worker {
    fn spawn() -> Result<Worker, TransportError> {
        let (jobs, jobs_rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("mcp-exchange".into())
            .spawn(move || {
                while let Ok(job) = jobs_rx.recv() {
                    run(job);
                }
            })
            .map_err(|e| {
                io_error(&io::Error::new(
                    e.kind(),
                    format!("cannot start the exchange thread: {e}"),
                ))
            })?;
        Ok(Worker {
            jobs,
            _thread: thread,
        })
    }
}

/// An exchange whose worker is running.
struct Open {
    commands: Sender<Command>,
    worker: Worker,
    slot: Arc<Mutex<Slot>>,
    /// The worker sent bytes and waits for a command (it is not inside `read`).
    parked: bool,
    /// Bytes reported so far.
    read: usize,
}

impl Open {
    /// Closes the socket; the worker ends on its own (and is not reused).
    fn close(self) {
        cancel(&self.slot);
        drop(self.commands);
    }
}

/// The exchanges of one session.
#[doc(hidden)]
pub struct Workers {
    shared: Arc<Shared<Stream>>,
    target: Arc<Target>,
    reports_tx: Sender<Msg>,
    reports: Receiver<Msg>,
    open: HashMap<ExchangeId, Open>,
    /// Workers whose last exchange handed its socket back, ready for the next one.
    idle: Vec<Worker>,
    /// The exchange the session drives on its own thread, if any.
    inline: Option<Inline>,
    /// The largest read the next [`Command::Read`] allows ([`Io::read_allowance`]).
    read_cap: usize,
    /// Bytes the last exchange that handed its socket back read: the next exchange's first
    /// read asks that much (within [`read_first`]).
    expect: usize,
    /// The inline exchanges' scratch buffer for TLS reads ([`Stream::read_fresh`]), kept from
    /// one to the next; empty while they are plain.
    scratch: Vec<u8>,
}

/// What wakes a waiting session.
pub(crate) enum Msg {
    /// A worker's report on its exchange.
    Report(ExchangeId, Report),
    /// The shared HTTP/2 connection has events for the session.
    H2,
}

impl Workers {
    /// The workers of a session; `(reports_tx, reports)` is the session's channel, on which an
    /// HTTP/2 session is also woken ([`Msg::H2`]).
    pub(crate) fn new(
        shared: Arc<Shared<Stream>>,
        target: Arc<Target>,
        (reports_tx, reports): (Sender<Msg>, Receiver<Msg>),
    ) -> Workers {
        Workers {
            shared,
            target,
            reports_tx,
            reports,
            open: HashMap::new(),
            idle: Vec::new(),
            inline: None,
            read_cap: READ_MIN,
            expect: 0,
            scratch: Vec::new(),
        }
    }

    /// The next report, waiting at most `timeout` (`None`: until one comes); `None` when the
    /// time ran out.
    pub(crate) fn recv(&mut self, timeout: Option<Duration>) -> Option<Msg> {
        if self
            .inline
            .as_ref()
            .is_some_and(|i| i.state.phase() == InlinePhase::Go)
        {
            // Late reports of closed workers go first (the driver ignores them).
            if let Ok(got) = self.reports.try_recv() {
                return Some(got);
            }
            return self.drive_inline(timeout);
        }
        let got = match timeout {
            Some(t) => match self.reports.recv_timeout(t) {
                Ok(r) => r,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            },
            // The session holds a sender: the channel never disconnects.
            None => self.reports.recv().ok()?,
        };
        if let Msg::Report(id, Report::Bytes(b)) = &got {
            if let Some(open) = self.open.get_mut(id) {
                open.parked = true;
                open.read = open.read.saturating_add(b.len());
            }
        }
        Some(got)
    }

    /// Moves the inline exchange's bytes on the session's thread until it has a report, or
    /// `None` once `timeout` passed (never, when `None`). The socket's timeouts are at most what
    /// is left of `timeout` ([`Stream::bound_wait`]), then exactly what is left after one ran
    /// out, so the session ends its wait at the core's deadline as it does on the channel.
    fn drive_inline(&mut self, timeout: Option<Duration>) -> Option<Msg> {
        let due = timeout.map(|t| Instant::now() + t);
        let inline = self.inline.as_mut()?;
        // The timeouts are set again only after one ran out (a socket timeout may end a little
        // before `due`): then to exactly what is left.
        let mut set = false;
        let mut first = true;
        loop {
            if !set {
                let left = match due {
                    Some(due) => {
                        let left = due.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return None;
                        }
                        Some(left)
                    }
                    None => None,
                };
                set = true;
                let bounded = if first {
                    inline.stream.bound_wait(left)
                } else {
                    inline.stream.set_timeouts(left)
                };
                first = false;
                if let Err(e) = bounded {
                    inline.state.failed();
                    let failed = Report::Failed(io_error(&e));
                    return Some(Msg::Report(inline.state.exchange(), failed));
                }
            }
            let report = match inline.step() {
                Ok(Some(report)) => report,
                Ok(None) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    set = false;
                    continue;
                }
                Err(e) => {
                    inline.state.failed();
                    Report::Failed(io_error(&e))
                }
            };
            return Some(Msg::Report(inline.state.exchange(), report));
        }
    }

    /// Hands the inline exchange to a worker thread (another exchange starts): it goes on from
    /// where it is. A worker that cannot start fails the exchange.
    fn demote(&mut self, inline: Inline) {
        let exchange = inline.state.exchange();
        if inline.state.phase() == InlinePhase::Ended {
            return; // its end is reported; the socket is not reusable
        }
        if let Err(e) = self.demote_to_worker(inline) {
            let _ = self
                .reports_tx
                .send(Msg::Report(exchange, Report::Failed(e)));
        }
    }

    fn demote_to_worker(&mut self, mut inline: Inline) -> Result<(), TransportError> {
        inline.stream.clear_timeouts().map_err(|e| io_error(&e))?;
        let Some(over) = inline.state.hand_over() else {
            return Ok(());
        };
        let resume = Resume::new(inline.stream, inline.address, &over);
        let exchange = over.exchange;
        let (job, commands, slot) =
            self.job(exchange, over.request, false, over.size, Some(resume));
        let worker = self.worker_for(job)?;
        let open = Open {
            commands,
            worker,
            slot,
            parked: over.parked,
            read: over.read,
        };
        self.open.insert(exchange, open);
        Ok(())
    }

    /// A job for a worker, with its command channel and slot.
    fn job(
        &self,
        exchange: ExchangeId,
        request: Vec<u8>,
        fresh: bool,
        first: usize,
        resume: Option<Resume>,
    ) -> (Job, Sender<Command>, Arc<Mutex<Slot>>) {
        let slot = Arc::new(Mutex::new(Slot::default()));
        let (commands, commands_rx) = mpsc::channel();
        let job = Job {
            shared: self.shared.clone(),
            target: self.target.clone(),
            exchange,
            request,
            fresh,
            slot: slot.clone(),
            reports: self.reports_tx.clone(),
            commands: commands_rx,
            first,
            resume,
        };
        (job, commands, slot)
    }

    /// Gives `job` to an idle worker, or to a new one.
    fn worker_for(&mut self, mut job: Job) -> Result<Worker, TransportError> {
        loop {
            let (worker, reused) = match self.idle.pop() {
                Some(worker) => (worker, true),
                None => (Worker::spawn()?, false),
            };
            match worker.jobs.send(job) {
                Ok(()) => return Ok(worker),
                // A reused worker's thread ended: try the next one.
                Err(mpsc::SendError(back)) if reused => job = back,
                Err(_) => {
                    return Err(io_error(&io::Error::other(
                        "the exchange thread ended before its first job",
                    )))
                }
            }
        }
    }
}

/// The exchange the session drives on its own thread: started on an idle pooled socket while no
/// other exchange of the session was open. No hand-off to a worker and back per read; if another
/// exchange starts, it moves to a worker ([`Workers::demote`]).
struct Inline {
    state: InlineExchange,
    stream: Stream,
    address: SocketAddr,
    /// [`Workers::scratch`], lent for the exchange.
    scratch: Vec<u8>,
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
    /// One write, flush or read; `Some` once there is something to report.
    fn step(&mut self) -> io::Result<Option<Report>> {
        match self.state.next() {
            InlineStep::Write(bytes) => {
                let n = self.stream.write(bytes)?;
                self.state.wrote(n)?;
                Ok(None)
            }
            InlineStep::Flush => {
                self.stream.flush()?;
                self.state.flushed();
                Ok(None)
            }
            InlineStep::Read(size) => {
                let bytes = self.stream.read_fresh(size, &mut self.scratch)?;
                Ok(Some(if self.state.read(bytes.len()) {
                    Report::Eof
                } else {
                    Report::Bytes(bytes)
                }))
            }
        }
    }
}

/// Where a worker takes over an exchange the session drove inline.
type Resume = mcp_sansio_net::Resume<Stream>;

impl Io for Workers {
    fn start(&mut self, t: Transmit) -> Result<(), TransportError> {
        if let Some(inline) = self.inline.take() {
            self.demote(inline);
        } else if !t.fresh_socket && self.open.is_empty() {
            if let Some((address, stream)) =
                self.shared.take_idle(&self.target.origin, Stream::is_idle)
            {
                let size = read_first(self.expect, self.read_cap);
                self.inline = Some(Inline {
                    state: InlineExchange::new(t.exchange, t.bytes, size),
                    stream,
                    address,
                    scratch: core::mem::take(&mut self.scratch),
                });
                return Ok(());
            }
        }
        let first = read_first(self.expect, self.read_cap);
        let (job, commands, slot) = self.job(t.exchange, t.bytes, t.fresh_socket, first, None);
        let worker = self.worker_for(job)?;
        let open = Open {
            commands,
            worker,
            slot,
            parked: false,
            read: 0,
        };
        self.open.insert(t.exchange, open);
        Ok(())
    }

    fn read_on(&mut self, exchange: ExchangeId) {
        if read_on_inline(&mut self.inline, exchange, self.read_cap) {
            return;
        }
        if let Some(open) = self.open.get_mut(&exchange) {
            if open.parked && open.commands.send(Command::Read(self.read_cap)).is_ok() {
                open.parked = false;
            }
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        if let Some(mut inline) = take_inline(&mut self.inline, exchange) {
            self.scratch = core::mem::take(&mut inline.scratch);
            // The socket is pooled with its timeouts: the next inline exchange bounds its waits
            // anyway, and a worker that takes it clears them first (`open`).
            if reusable && inline.state.phase() == InlinePhase::Parked {
                self.expect = inline.state.bytes_read();
                self.shared
                    .park(&self.target.origin, inline.address, inline.stream);
            }
            return;
        }
        let Some(open) = self.open.remove(&exchange) else {
            return;
        };
        if !(reusable && open.parked) {
            return open.close();
        }
        // The worker is parked on its command channel and left the socket in the slot: take it,
        // then end the job (the worker's command channel closes) and keep the worker.
        let held = lock(&open.slot).held.take();
        drop(open.commands);
        if let Some((stream, address)) = held {
            self.shared.park(&self.target.origin, address, stream);
        }
        self.expect = open.read;
        if self.idle.len() < IDLE_WORKERS {
            self.idle.push(open.worker);
        }
    }

    fn abandon(&mut self, exchange: ExchangeId) {
        if take_inline(&mut self.inline, exchange).is_some() {
            return;
        }
        if let Some(open) = self.open.remove(&exchange) {
            open.close();
        }
    }

    fn read_allowance(&mut self, bytes_left: u64) {
        self.read_cap = read_size(bytes_left);
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for (_, open) in self.open.drain() {
            open.close();
        }
    }
}

/// Everything a worker needs.
struct Job {
    shared: Arc<Shared<Stream>>,
    target: Arc<Target>,
    exchange: ExchangeId,
    request: Vec<u8>,
    fresh: bool,
    slot: Arc<Mutex<Slot>>,
    reports: Sender<Msg>,
    commands: Receiver<Command>,
    /// The size of the first read ([`read_first`]).
    first: usize,
    /// The exchange was driven inline until now: its socket, and where it is.
    resume: Option<Resume>,
}

/// The worker's body for one exchange.
fn run(mut job: Job) {
    let resume = job.resume.take();
    let report = |r: Report| job.reports.send(Msg::Report(job.exchange, r)).is_ok();
    let (mut parked, mut got) = resume.as_ref().map_or((false, 0), |r| (r.parked, r.got));
    let opened = match resume {
        Some(r) => resumed(&job, r),
        None => open(&job),
    };
    let (mut stream, mut address) = match opened {
        Ok(Some(s)) => s,
        Ok(None) => return, // cancelled while dialling
        Err(e) => {
            report(Report::Failed(e));
            return;
        }
    };
    // The first read asks `job.first` bytes; each read that fills its buffer lets the next one
    // ask four times more, within what the session's byte budget allows (Command::Read).
    let mut size = job.first;
    let mut scratch = Vec::new();
    loop {
        if parked {
            // Taken over after the session reported bytes: wait for the command first.
            parked = false;
            {
                let mut slot = lock(&job.slot);
                if slot.cancelled {
                    return;
                }
                slot.held = Some((stream, address));
            }
            match job.commands.recv() {
                Ok(Command::Read(cap)) => {
                    size = next_read_size(size, got, cap);
                    match lock(&job.slot).held.take() {
                        Some(s) => (stream, address) = s,
                        None => return,
                    }
                }
                Err(_) => return,
            }
        }
        let r;
        (r, got) = match stream.read_fresh(size, &mut scratch) {
            Ok(bytes) if bytes.is_empty() => (Report::Eof, 0),
            Ok(bytes) => {
                let n = bytes.len();
                (Report::Bytes(bytes), n)
            }
            // A TLS read that completed no record yet (`tls_read`): read on.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) =>
            {
                continue
            }
            Err(e) => (Report::Failed(io_error(&e)), 0),
        };
        if !matches!(r, Report::Bytes(_)) {
            report(r);
            return;
        }
        // Parked: the socket waits in the slot, where the session may take it for the pool.
        {
            let mut slot = lock(&job.slot);
            if slot.cancelled {
                return;
            }
            slot.held = Some((stream, address));
        }
        if !report(r) {
            return;
        }
        match job.commands.recv() {
            Ok(Command::Read(cap)) => {
                size = next_read_size(size, got, cap);
                match lock(&job.slot).held.take() {
                    Some(s) => (stream, address) = s,
                    None => return, // closed meanwhile
                }
            }
            // The session took the socket for the pool, or closed the exchange.
            Err(_) => return,
        }
    }
}

/// The socket of an exchange the session drove inline, published for closing, with what is
/// left of the request written.
fn resumed(job: &Job, r: Resume) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    let mut stream = r.stream;
    if !publish(&job.slot, stream.tcp())? {
        return Ok(None);
    }
    if r.flush {
        stream
            .write_all(&job.request)
            .and_then(|()| stream.flush())
            .map_err(|e| io_error(&e))?;
    }
    Ok(Some((stream, r.address)))
}

/// A pooled socket (when allowed and still idle) or a newly dialled one, with the request written.
fn open(job: &Job) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    let pooled = if job.fresh {
        None
    } else {
        job.shared.take_idle(&job.target.origin, Stream::is_idle)
    };
    let (mut stream, address) = match pooled {
        Some((address, mut stream)) => {
            // An inline exchange may have left timeouts: a worker's reads wait without one.
            stream.clear_timeouts().map_err(|e| io_error(&e))?;
            if !publish(&job.slot, stream.tcp())? {
                return Ok(None);
            }
            (stream, address)
        }
        None => match dial(job)? {
            Some(s) => s,
            None => return Ok(None),
        },
    };
    stream
        .write_all(&job.request)
        .and_then(|()| stream.flush())
        .map_err(|e| io_error(&e))?;
    Ok(Some((stream, address)))
}

/// Resolves and vets once, then dials the admitted addresses in order within one deadline;
/// refused addresses are never dialled and no name is resolved twice.
fn dial(job: &Job) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    dial_with(&job.shared, &job.target, false, |tcp| {
        publish(&job.slot, tcp)
    })
}

/// [`dial`] of a socket no exchange owns (an HTTP/2 socket, or the first socket of a session
/// that tries HTTP/2): with `h2`, TLS offers ALPN `h2` then `http/1.1`.
pub(crate) fn dial_socket(
    shared: &Arc<Shared<Stream>>,
    target: &Target,
    h2: bool,
) -> Result<(Stream, SocketAddr), TransportError> {
    dial_with(shared, target, h2, |_| Ok(true))?.ok_or_else(|| TransportError {
        kind: mcp_sansio::TransportErrorKind::Connect,
        message: "the dial was cancelled".into(),
    })
}

/// The dial ([`runtime::dial`]); `publish` shows the TCP socket to whoever may cancel it (false:
/// cancelled).
fn dial_with(
    shared: &Arc<Shared<Stream>>,
    target: &Target,
    h2: bool,
    publish: impl FnOnce(&TcpStream) -> Result<bool, TransportError>,
) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    let dialled = block_on(runtime::dial(
        &StdNet,
        shared,
        &target.endpoint,
        h2,
        publish,
    ))?;
    Ok(dialled.map(|(address, s)| match s {
        Dialled::Plain(tcp) => (Stream::plain(tcp), address),
        Dialled::Tls(tls) => (Stream::tls(tls), address),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_sansio::Config;
    use mcp_sansio_net::AddressPolicy;
    use std::net::TcpListener;

    fn transmit(id: u64, bytes: &[u8], fresh_socket: bool) -> Transmit {
        Transmit {
            exchange: ExchangeId(id),
            bytes: bytes.to_vec(),
            request: None,
            fresh_socket,
        }
    }

    fn expect_bytes(workers: &mut Workers, id: u64, want: &[u8]) {
        match workers.recv(Some(Duration::from_secs(10))) {
            Some(Msg::Report(got, Report::Bytes(b))) => {
                assert_eq!(got, ExchangeId(id));
                assert_eq!(b, want);
            }
            other => panic!("expected bytes of exchange {id}, got {:?}", other.is_some()),
        }
    }

    /// The inline exchange moves to a worker when a second one starts, parked where it was: it
    /// reads on when told, and its socket goes back to the pool when it finishes.
    #[test]
    fn an_inline_exchange_moves_to_a_worker_when_another_starts() {
        let (listener, shared, origin, target) = loopback();
        // An idle socket in the pool; the server's end answers from its own thread.
        let mut first = pool_one(&listener, &shared, &origin);
        let server = std::thread::spawn(move || {
            let mut second = answer_one_then_take_two(&mut first, &listener);
            second.write_all(b"B").unwrap();
            first.write_all(b"C").unwrap();
            // Hold both sockets until the client is done with them.
            let mut rest = [0u8; 1];
            let _ = second.read(&mut rest);
            first
        });
        let mut workers = Workers::new(shared.clone(), target, mpsc::channel());

        workers.start(transmit(1, b"one!", false)).unwrap();
        assert!(
            workers.inline.is_some(),
            "a pooled socket, no other exchange: inline"
        );
        assert_eq!(shared.idle_sockets(), 0);
        expect_bytes(&mut workers, 1, b"A");

        workers.start(transmit(2, b"two!", true)).unwrap();
        assert!(workers.inline.is_none(), "moved to a worker");
        assert_eq!(workers.open.len(), 2);
        expect_bytes(&mut workers, 2, b"B");
        workers.read_on(ExchangeId(1));
        expect_bytes(&mut workers, 1, b"C");

        workers.finish(ExchangeId(1), true);
        assert_eq!(
            shared.idle_sockets(),
            1,
            "the moved exchange's socket is pooled"
        );
        workers.abandon(ExchangeId(2));
        let _first = server.join().unwrap();
    }

    /// An inline exchange whose server never answers ends its wait when the time runs out.
    #[test]
    fn an_inline_exchange_waits_no_longer_than_asked() {
        let (listener, shared, origin, target) = loopback();
        let _silent = pool_one(&listener, &shared, &origin);
        let mut workers = Workers::new(shared.clone(), target, mpsc::channel());
        workers.start(transmit(1, b"one!", false)).unwrap();
        assert!(workers.inline.is_some());
        let start = Instant::now();
        assert!(workers.recv(Some(Duration::from_millis(200))).is_none());
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        // Not reusable: the socket is closed, not pooled.
        workers.finish(ExchangeId(1), true);
        assert_eq!(shared.idle_sockets(), 0);
    }

    /// Parks a socket connected to `listener` in the pool of `origin`; returns the server's end.
    fn pool_one(listener: &TcpListener, shared: &Shared<Stream>, origin: &str) -> TcpStream {
        let addr = listener.local_addr().unwrap();
        let pooled = TcpStream::connect(addr).unwrap();
        let (server_end, _) = listener.accept().unwrap();
        shared.park(origin, addr, Stream::plain(pooled));
        server_end
    }

    /// What a server does first when two exchanges share the pooled socket `first` with one of
    /// their own: it answers `one!` on `first` with `A`, then takes the second socket and reads
    /// `two!` from it.
    fn answer_one_then_take_two(first: &mut TcpStream, listener: &TcpListener) -> TcpStream {
        let mut req = [0u8; 4];
        first.read_exact(&mut req).unwrap();
        assert_eq!(&req, b"one!");
        first.write_all(b"A").unwrap();
        let (mut second, _) = listener.accept().unwrap();
        second.read_exact(&mut req).unwrap();
        assert_eq!(&req, b"two!");
        second
    }

    /// A client that may dial loopback, with the target of a listener's address.
    fn loopback() -> (TcpListener, Arc<Shared<Stream>>, String, Arc<Target>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = crate::Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .build();
        let config = Config::new(&format!("http://{addr}/mcp")).unwrap();
        let origin = config.endpoint.origin();
        let target = Arc::new(Target::new(&config.endpoint, &origin));
        (listener, client.shared().clone(), origin, target)
    }

    /// The timeouts of the pooled socket of `origin` (taken and parked again).
    fn pooled_timeouts(shared: &Shared<Stream>, origin: &str) -> Timeouts {
        let (address, stream) = shared.take_idle(origin, |_| true).expect("a pooled socket");
        let timeouts = stream.timeouts;
        shared.park(origin, address, stream);
        timeouts
    }

    /// A bound is kept only while it is no longer than what is left and not much shorter; the
    /// socket carries what the stream records.
    #[test]
    fn a_wait_bound_is_kept_only_while_it_fits() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut s = Stream::plain(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
        let _peer = listener.accept().unwrap();
        let carries = |s: &Stream| {
            let tcp = s.tcp();
            (tcp.read_timeout().unwrap(), tcp.write_timeout().unwrap())
        };
        assert_eq!(carries(&s), (None, None));

        let ten = Duration::from_secs(10);
        s.bound_wait(Some(ten)).unwrap();
        let Timeouts::Set(t) = s.timeouts else {
            panic!("no timeout set: {:?}", s.timeouts);
        };
        assert!(t < ten && fits(t, ten), "{t:?}");
        let (read, write) = carries(&s);
        assert!(read.is_some() && read == write, "{read:?} {write:?}");

        // The next waits, as long give or take a little, keep it.
        for left in [ten, ten - Duration::from_millis(5), ten - ten / 32] {
            s.bound_wait(Some(left)).unwrap();
            assert_eq!(s.timeouts, Timeouts::Set(t), "{left:?}");
        }
        // Shorter than the bound: set again, never longer than what is left.
        let short = t - Duration::from_nanos(1);
        s.bound_wait(Some(short)).unwrap();
        let Timeouts::Set(t2) = s.timeouts else {
            panic!("{:?}", s.timeouts);
        };
        assert!(t2 <= short && fits(t2, short), "{t2:?}");
        // Much longer than the bound: set again (the wait would end far too early).
        s.bound_wait(Some(ten * 2)).unwrap();
        assert!(matches!(s.timeouts, Timeouts::Set(t3) if fits(t3, ten * 2)));
        // No deadline: cleared, on the socket too.
        s.bound_wait(None).unwrap();
        assert_eq!(s.timeouts, Timeouts::Cleared);
        assert_eq!(carries(&s), (None, None));
        // An exact rest is set as asked.
        let rest = Duration::from_millis(7);
        s.set_timeouts(Some(rest)).unwrap();
        assert_eq!(s.timeouts, Timeouts::Set(rest));
        s.clear_timeouts().unwrap();
        assert_eq!(carries(&s), (None, None));
    }

    /// `fits` never lets a bound exceed what is left, for bounds set as `bound_wait` sets them.
    #[test]
    fn a_bound_that_fits_is_never_longer_than_what_is_left() {
        for ms in [1u64, 2, 31, 32, 33, 999, 1_000, 30_000, 86_400_000] {
            let left = Duration::from_millis(ms);
            let set = left - left / 32;
            assert!(fits(set, left), "{left:?}");
            assert!(!fits(left + Duration::from_nanos(1), left), "{left:?}");
            assert!(!fits(left / 2, left), "{left:?}");
            // A little later the same bound still fits, until the rest is shorter than it.
            assert!(fits(set, left - left / 64), "{left:?}");
            assert!(!fits(set, set - Duration::from_nanos(1)), "{left:?}");
        }
    }

    /// A socket an inline exchange parked with its timeouts, then taken by a worker, waits past
    /// the old timeout for a slow answer.
    #[test]
    fn a_worker_waits_past_a_timeout_an_inline_exchange_left() {
        let (listener, shared, origin, target) = loopback();
        let mut first = pool_one(&listener, &shared, &origin);
        let slow = Duration::from_millis(700);
        let server = std::thread::spawn(move || {
            // The second exchange dials a socket of its own and gets no answer.
            let second = answer_one_then_take_two(&mut first, &listener);
            // The third takes the pooled socket from a worker thread: answer it late.
            let mut req = [0u8; 4];
            first.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"thr!");
            std::thread::sleep(slow);
            first.write_all(b"C").unwrap();
            let mut rest = [0u8; 1];
            let _ = first.read(&mut rest);
            second
        });
        let mut workers = Workers::new(shared.clone(), target, mpsc::channel());

        workers.start(transmit(1, b"one!", false)).unwrap();
        assert!(workers.inline.is_some());
        match workers.recv(Some(Duration::from_millis(300))) {
            Some(Msg::Report(ExchangeId(1), Report::Bytes(b))) => assert_eq!(b, b"A"),
            _ => panic!("expected the first answer"),
        }
        workers.finish(ExchangeId(1), true);
        assert_eq!(shared.idle_sockets(), 1);
        let Timeouts::Set(left_over) = pooled_timeouts(&shared, &origin) else {
            panic!("the inline exchange parked its socket with its timeouts");
        };
        assert!(left_over < slow / 2, "{left_over:?}");

        workers.start(transmit(2, b"two!", true)).unwrap();
        workers.start(transmit(3, b"thr!", false)).unwrap();
        assert!(
            workers.inline.is_none(),
            "another exchange is open: a worker"
        );
        let start = Instant::now();
        match workers.recv(Some(Duration::from_secs(10))) {
            Some(Msg::Report(ExchangeId(3), Report::Bytes(b))) => assert_eq!(b, b"C"),
            Some(Msg::Report(id, Report::Failed(e))) => panic!("exchange {id:?} failed: {e:?}"),
            _ => panic!("expected the third answer"),
        }
        assert!(start.elapsed() > left_over, "{:?}", start.elapsed());
        assert_eq!(
            shared.idle_sockets(),
            0,
            "the worker took the pooled socket"
        );
        workers.abandon(ExchangeId(3));
        workers.abandon(ExchangeId(2));
        drop(server.join().unwrap());
    }

    /// The next inline exchange on the same socket keeps the timeouts the previous one left.
    #[test]
    fn warm_inline_exchanges_keep_the_timeouts_they_find() {
        let (listener, shared, origin, target) = loopback();
        let mut server_end = pool_one(&listener, &shared, &origin);
        let server = std::thread::spawn(move || {
            let mut req = [0u8; 4];
            for answer in [b"A", b"B", b"C"] {
                server_end.read_exact(&mut req).unwrap();
                server_end.write_all(answer).unwrap();
            }
            server_end
        });
        let mut workers = Workers::new(shared.clone(), target, mpsc::channel());
        let mut kept = None;
        for (id, answer) in [(1, b"A"), (2, b"B"), (3, b"C")] {
            workers.start(transmit(id, b"req!", false)).unwrap();
            assert!(workers.inline.is_some(), "exchange {id} inline");
            expect_bytes(&mut workers, id, answer);
            workers.finish(ExchangeId(id), true);
            let t = pooled_timeouts(&shared, &origin);
            assert!(matches!(t, Timeouts::Set(_)), "{t:?}");
            // Ten-second waits, a few microseconds apart: the first bound fits them all.
            assert_eq!(*kept.get_or_insert(t), t, "exchange {id}");
        }
        drop(server.join().unwrap());
    }

    /// A pooled socket that received bytes or the end of the stream while idle is not reused;
    /// a quiet one is, still blocking, and its check does not wait for its timeouts.
    #[test]
    fn a_pooled_socket_with_bytes_or_eof_is_not_reused() {
        let (listener, shared, origin, _) = loopback();
        let addr = listener.local_addr().unwrap();
        let park = |timeouts: Option<Duration>| {
            let tcp = TcpStream::connect(addr).unwrap();
            let mut s = Stream::plain(tcp);
            s.set_timeouts(timeouts).unwrap();
            shared.park(&origin, addr, s);
            listener.accept().unwrap().0
        };
        let wait = |peer_end: &TcpStream| {
            // Let the bytes or the FIN arrive.
            std::thread::sleep(Duration::from_millis(50));
            let _ = peer_end;
        };

        let mut talks = park(Some(Duration::from_secs(5)));
        talks.write_all(b"x").unwrap();
        wait(&talks);
        assert!(shared.take_idle(&origin, Stream::is_idle).is_none());
        assert_eq!(shared.idle_sockets(), 0, "dropped, not parked again");

        let closes = park(None);
        closes.shutdown(Shutdown::Write).unwrap();
        wait(&closes);
        assert!(shared.take_idle(&origin, Stream::is_idle).is_none());

        let _quiet = park(Some(Duration::from_secs(5)));
        let start = Instant::now();
        let (_, mut taken) = shared
            .take_idle(&origin, Stream::is_idle)
            .expect("a quiet socket is reused");
        assert!(start.elapsed() < Duration::from_secs(1), "the check waited");
        // Still blocking: a read waits for its timeout rather than failing at once.
        taken
            .set_timeouts(Some(Duration::from_millis(100)))
            .unwrap();
        let start = Instant::now();
        let mut b = [0u8; 1];
        let err = taken.read(&mut b).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{err:?}"
        );
        assert!(
            start.elapsed() >= Duration::from_millis(90),
            "{:?}",
            start.elapsed()
        );
    }
}
