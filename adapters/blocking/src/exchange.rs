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
//! ([`Resume`]); its socket's timeouts are cleared before it goes to a worker or to the pool.
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
use mcp_sansio_net::dial::{io_error, server_name, still_idle, tls_error, DialDeadline, Peek};
use mcp_sansio_net::driver::{next_read_size, read_first, read_size, READ_MIN};
use mcp_sansio_net::{InlineExchange, InlinePhase, InlineStep, Io, Report, Shared};
use rustls::{ClientConnection, StreamOwned};

/// A socket of an exchange: plain TCP or TLS over TCP.
pub enum Stream {
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

    /// Whether a pooled socket may serve a new request ([`still_idle`]).
    pub(crate) fn is_idle(&mut self) -> bool {
        let mut b = [0u8; 1];
        let (tls, buffered) = match self {
            Stream::Plain(_) => (false, false),
            Stream::Tls(s) => (
                true,
                !matches!(s.conn.reader().read(&mut b), Err(e) if e.kind() == io::ErrorKind::WouldBlock),
            ),
        };
        let tcp = self.tcp();
        if tcp.set_nonblocking(true).is_err() {
            return false;
        }
        let peek = match tcp.peek(&mut b) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Quiet,
            Ok(0) | Err(_) => Peek::Closed,
            Ok(_) => Peek::Bytes,
        };
        tcp.set_nonblocking(false).is_ok() && still_idle(tls, buffered, peek)
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
    pub(crate) origin: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) tls: bool,
}

impl Target {
    pub(crate) fn new(endpoint: &Endpoint, origin: &str) -> Target {
        Target {
            origin: origin.to_owned(),
            host: endpoint.host().to_owned(),
            port: endpoint.port(),
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
pub(crate) struct Workers {
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
    /// The inline exchanges' read buffer, kept from one to the next (at most the largest read
    /// allowed, [`read_size`]).
    read_buf: Vec<u8>,
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
            read_buf: Vec::new(),
            read_cap: READ_MIN,
            expect: 0,
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
    /// `None` once `timeout` passed (never, when `None`). The socket's timeouts are what is left
    /// of `timeout`, so the session ends its wait at the core's deadline as it does on the
    /// channel.
    fn drive_inline(&mut self, timeout: Option<Duration>) -> Option<Msg> {
        let due = timeout.map(|t| Instant::now() + t);
        let inline = self.inline.as_mut()?;
        // The timeouts are set again only after one ran out (a socket timeout may end a little
        // before `due`).
        let mut set = false;
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
                if let Err(e) = inline.set_timeouts(left) {
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

    fn demote_to_worker(&mut self, inline: Inline) -> Result<(), TransportError> {
        inline.set_timeouts(None).map_err(|e| io_error(&e))?;
        let Some(over) = inline.state.hand_over() else {
            return Ok(());
        };
        let resume = Resume {
            stream: inline.stream,
            address: inline.address,
            parked: over.parked,
            got: over.got,
            flush: over.flush,
        };
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
    buf: Vec<u8>,
}

impl Inline {
    fn set_timeouts(&self, left: Option<Duration>) -> io::Result<()> {
        let tcp = self.stream.tcp();
        tcp.set_read_timeout(left)?;
        tcp.set_write_timeout(left)
    }

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
                if self.buf.len() < size {
                    self.buf.resize(size, 0);
                }
                let n = self.stream.read(&mut self.buf[..size])?;
                Ok(Some(if self.state.read(n) {
                    Report::Eof
                } else {
                    Report::Bytes(self.buf[..n].to_vec())
                }))
            }
        }
    }
}

/// Where a worker takes over an exchange the session drove inline.
struct Resume {
    stream: Stream,
    address: SocketAddr,
    /// Bytes were reported: wait for a command before reading.
    parked: bool,
    /// What the last read got.
    got: usize,
    /// Write what is left of the request (possibly nothing) and flush first.
    flush: bool,
}

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
                    buf: core::mem::take(&mut self.read_buf),
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
        if let Some(inline) = self
            .inline
            .as_mut()
            .filter(|i| i.state.exchange() == exchange)
        {
            inline.state.read_on(self.read_cap);
            return;
        }
        if let Some(open) = self.open.get_mut(&exchange) {
            if open.parked && open.commands.send(Command::Read(self.read_cap)).is_ok() {
                open.parked = false;
            }
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        if self
            .inline
            .as_ref()
            .is_some_and(|i| i.state.exchange() == exchange)
        {
            let Some(mut inline) = self.inline.take() else {
                return;
            };
            self.read_buf = core::mem::take(&mut inline.buf);
            // Pooled sockets carry no timeouts (a worker's reads wait without one).
            if reusable
                && inline.state.phase() == InlinePhase::Parked
                && inline.set_timeouts(None).is_ok()
            {
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
        if self
            .inline
            .as_ref()
            .is_some_and(|i| i.state.exchange() == exchange)
        {
            self.inline = None;
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
    let mut buf = vec![0u8; size];
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
                    if buf.len() < size {
                        buf.resize(size, 0);
                    }
                    match lock(&job.slot).held.take() {
                        Some(s) => (stream, address) = s,
                        None => return,
                    }
                }
                Err(_) => return,
            }
        }
        let r;
        (r, got) = match stream.read(&mut buf[..size]) {
            Ok(0) => (Report::Eof, 0),
            Ok(n) => (Report::Bytes(buf[..n].to_vec()), n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
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
                if buf.len() < size {
                    buf.resize(size, 0);
                }
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
        Some((address, stream)) => {
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
    shared: &Shared<Stream>,
    target: &Target,
    h2: bool,
) -> Result<(Stream, SocketAddr), TransportError> {
    dial_with(shared, target, h2, |_| Ok(true))?.ok_or_else(|| TransportError {
        kind: mcp_sansio::TransportErrorKind::Connect,
        message: "the dial was cancelled".into(),
    })
}

/// The dial; `publish` shows the TCP socket to whoever may cancel it (false: cancelled).
fn dial_with(
    shared: &Shared<Stream>,
    target: &Target,
    h2: bool,
    publish: impl FnOnce(&TcpStream) -> Result<bool, TransportError>,
) -> Result<Option<(Stream, SocketAddr)>, TransportError> {
    let addresses = shared.vetted(&target.host, target.port)?;
    let deadline = DialDeadline::new(Instant::now(), shared.dial_timeout);
    let mut failures = Vec::new();
    let mut connected = None;
    for (i, &address) in addresses.iter().enumerate() {
        let Some(share) = deadline.share(Instant::now(), addresses.len() - i) else {
            break;
        };
        match TcpStream::connect_timeout(&address, share) {
            Ok(s) => {
                connected = Some((s, address));
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                failures.push(format!("{address}: timed out"));
            }
            Err(e) => failures.push(format!("{address}: {e}")),
        }
    }
    let Some((tcp, address)) = connected else {
        return Err(deadline.failed(Instant::now(), &failures));
    };
    if !publish(&tcp)? {
        return Ok(None);
    }
    let _ = tcp.set_nodelay(true);
    if !target.tls {
        return Ok(Some((Stream::Plain(tcp), address)));
    }
    let config = if h2 { &shared.tls_h2 } else { &shared.tls };
    let tls = handshake(config, &target.host, tcp, &deadline)?;
    Ok(Some((Stream::Tls(Box::new(tls)), address)))
}

/// The TLS handshake within what is left of the dial deadline.
fn handshake(
    config: &Arc<rustls::ClientConfig>,
    host: &str,
    mut tcp: TcpStream,
    deadline: &DialDeadline,
) -> Result<StreamOwned<ClientConnection, TcpStream>, TransportError> {
    let name = server_name(host)?;
    let mut conn =
        ClientConnection::new(config.clone(), name).map_err(|e| tls_error(e.to_string()))?;
    while conn.is_handshaking() {
        let left = deadline
            .left(Instant::now())
            .ok_or_else(|| deadline.expired())?;
        tcp.set_read_timeout(Some(left)).map_err(|e| io_error(&e))?;
        tcp.set_write_timeout(Some(left))
            .map_err(|e| io_error(&e))?;
        if let Err(e) = conn.complete_io(&mut tcp) {
            return Err(match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => deadline.expired(),
                _ => tls_error(e.to_string()),
            });
        }
    }
    tcp.set_read_timeout(None).map_err(|e| io_error(&e))?;
    tcp.set_write_timeout(None).map_err(|e| io_error(&e))?;
    Ok(StreamOwned::new(conn, tcp))
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
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = crate::Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .build();
        let shared = client.shared.clone();
        let config = Config::new(&format!("http://{addr}/mcp")).unwrap();
        let origin = config.endpoint.origin();
        let target = Arc::new(Target::new(&config.endpoint, &origin));
        // An idle socket in the pool; the server's end answers from its own thread.
        let pooled = TcpStream::connect(addr).unwrap();
        let (mut first, _) = listener.accept().unwrap();
        shared.park(&origin, addr, Stream::Plain(pooled));
        let server = std::thread::spawn(move || {
            let mut req = [0u8; 4];
            first.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"one!");
            first.write_all(b"A").unwrap();
            // The second exchange dials a socket of its own.
            let (mut second, _) = listener.accept().unwrap();
            second.read_exact(&mut req).unwrap();
            assert_eq!(&req, b"two!");
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
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client = crate::Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .build();
        let shared = client.shared.clone();
        let config = Config::new(&format!("http://{addr}/mcp")).unwrap();
        let origin = config.endpoint.origin();
        let target = Arc::new(Target::new(&config.endpoint, &origin));
        let pooled = TcpStream::connect(addr).unwrap();
        let (_silent, _) = listener.accept().unwrap();
        shared.park(&origin, addr, Stream::Plain(pooled));
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
}
