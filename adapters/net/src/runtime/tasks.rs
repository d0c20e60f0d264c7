//! The exchanges and HTTP/2 sockets of an async runtime, written once for every one of them.
//!
//! An async runtime implements [`AsyncNet`] (how its sockets read, write and close, how it spawns
//! a task and how it sleeps); this module does the rest, the same on every runtime:
//!
//! - every [`AsyncNet`] is a [`ClientRuntime`] and a [`SessionRuntime`]: a session's route
//!   (`route::session_driver`), its operations through the one run loop
//!   ([`SessionDriver::run`](crate::SessionDriver::run)) and its close;
//! - [`Tasks`], the session's [`Io`]: one task per exchange, which opens or takes its socket,
//!   writes the request and forwards what it reads, one read at a time, waiting for the session
//!   to feed it to the core before reading again (so no response is buffered ahead of the core's
//!   budgets). While it waits, the task leaves its socket where the session can take it: when
//!   the core declares the response complete and the socket reusable, the session parks the
//!   socket in the client's pool at once ([`Io::finish`]); in every other case the task is
//!   cancelled and the socket closed.
//! - The inline exchange: a session's only live exchange, on an idle pooled socket (the pages of
//!   a listing, the calls of a warm session), needs no task. The session writes the request and
//!   reads inside its own future, under the same rules, and hands the exchange to a task where it
//!   is if another exchange starts meanwhile.
//! - [`AsyncH2`], the sockets of a shared HTTP/2 connection ([`H2Io`]): one task per socket
//!   writes what the connection sends, in order, and feeds it every read; a write that waits on
//!   the server longer than the client's `write_stall` fails the socket. The redial after GOAWAY
//!   is a task of its own.

use std::collections::HashMap;
use std::future::{pending, poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use async_channel::{Receiver, Sender};
use futures_lite::future::FutureExt as _;
use mcp_sansio::{
    Completion, Config, Endpoint, Error, ExchangeId, Scheme, Transmit, TransportError,
};

use crate::guard::dial::{io_error, tls_error};
use crate::lock::lock;
use crate::runtime::async_run::{AsyncIo, Wake};
use crate::runtime::inbox::{H2Waker, Inbox, TaskSlot};
use crate::runtime::inline::{read_on_inline, take_inline, HoldsInline};
use crate::runtime::inline::{InlineExchange, InlinePhase, InlineStep};
use crate::runtime::{dial_socket, Dialled, Runtime};
use crate::session::client::{Client, ClientRuntime, Session, SessionRuntime, Shared};
use crate::session::io::{next_read_size, read_first, read_size, READ_MIN};
use crate::session::route::{self, H2Glue};
use crate::session::{
    CallObserver, H2Io, Io, NoObserver, Report, SessionDriver, SharedH2, Start, Waker,
};

/// Bytes an HTTP/2 socket reads at a time.
const READ_CHUNK: usize = 16 * 1024;

/// What the shared exchanges and HTTP/2 sockets ask of an async runtime, beyond the dial
/// ([`Runtime`]).
pub trait AsyncNet: Runtime + Default {
    /// A dialled socket, plain or TLS.
    type Stream: Send + 'static;
    /// Where tasks are spawned (the runtime a session was connected on).
    type Spawner: Clone + Send + Sync + 'static;
    /// A spawned task; dropping it cancels the task (and closes the socket it holds).
    type Task: Send + 'static;

    /// The socket of a dial.
    fn stream(dialled: Dialled<Self::Tcp, Self::Tls>) -> Self::Stream;
    /// Whether TLS negotiated `h2` by ALPN (never for a plain socket).
    fn is_h2(stream: &Self::Stream) -> bool;
    /// Whether a pooled socket may serve a new request ([`crate::guard::dial::still_idle`]).
    fn is_idle(stream: &mut Self::Stream) -> bool;
    /// Runs one socket operation ([`IoStep`]) on `stream`. Cancel-safe: a read or write that
    /// did not complete moved no byte.
    fn io<'a>(
        stream: &'a mut Self::Stream,
        step: IoStep<'a>,
    ) -> impl Future<Output = io::Result<usize>> + Send + 'a;
    /// The runtime the caller runs on.
    fn spawner() -> Self::Spawner;
    /// Spawns `future` on `on`.
    fn spawn(on: &Self::Spawner, future: impl Future<Output = ()> + Send + 'static) -> Self::Task;
    /// Lets `task` run to its end on its own.
    fn detach(task: Self::Task);
    /// Ready at `at`.
    fn sleep_until(at: Instant) -> impl Future<Output = ()> + Send;
}

/// One operation on a socket ([`AsyncNet::io`]).
#[derive(Debug)]
pub enum IoStep<'a> {
    /// Read once into the buffer's spare capacity (which the caller reserved): how many bytes
    /// came, `0` at the end of the stream.
    Read(&'a mut Vec<u8>),
    /// Write some of the bytes: how many were written.
    Write(&'a [u8]),
    /// Flush what was written (gives `0`).
    Flush,
    /// Shut the writing side down, TLS with close_notify (gives `0`).
    Shutdown,
}

/// Writes all of `bytes` and flushes.
pub async fn write_all<R: AsyncNet>(stream: &mut R::Stream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match R::io(stream, IoStep::Write(bytes)).await {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    R::io(stream, IoStep::Flush).await.map(drop)
}

/// `future`'s output, or `None` once `limit` passed.
pub async fn within<R: AsyncNet, T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    until::<R, T>(Instant::now() + limit, future).await
}

/// `future`'s output, or `None` once `at` passed.
pub async fn until<R: AsyncNet, T>(at: Instant, future: impl Future<Output = T>) -> Option<T> {
    async { Some(future.await) }
        .or(async {
            R::sleep_until(at).await;
            None
        })
        .await
}

/// The one dial ([`dial_socket`]) on `R`, giving its socket. With `h2`, TLS offers ALPN `h2`
/// first ([`AsyncNet::is_h2`] tells what was chosen).
pub async fn dial<R: AsyncNet>(
    shared: &Arc<Shared<R::Stream>>,
    endpoint: &Endpoint,
    h2: bool,
) -> Result<(SocketAddr, R::Stream), TransportError> {
    let (address, dialled) = dial_socket(&R::default(), shared, endpoint, h2).await?;
    Ok((address, R::stream(dialled)))
}

// ---------------------------------------------------------------------------------------------
// Sessions

/// An operation of an async session: a boxed future (one allocation per operation).
pub type Op<'a, T> = Pin<Box<dyn Future<Output = Result<T, Error>> + Send + 'a>>;

impl<R: AsyncNet> ClientRuntime for R {
    type Socket = R::Stream;
    type Connect<'a> = Op<'a, Session<R>>;

    fn connect(client: &Client<R>, config: Config) -> Op<'_, Session<R>> {
        Box::pin(async move {
            let (driver, io) = connect(client.shared(), config).await?;
            Ok(Session::from_parts(driver, io))
        })
    }
}

impl<R: AsyncNet> SessionRuntime for R {
    type Io = Tasks<R>;
    type Op<'a, T: Send + 'a> = Op<'a, T>;

    fn run<'a, T: Send + 'a>(
        session: &'a mut Session<R>,
        op: Start<'a>,
        observer: &'a mut dyn CallObserver,
        then: fn(Completion) -> Result<T, Error>,
    ) -> Op<'a, T> {
        Box::pin(async move {
            let (driver, io) = session.parts();
            then(driver.run(io, op, observer).await?)
        })
    }

    fn close(mut session: Session<R>) -> Op<'static, ()> {
        Box::pin(async move {
            let (driver, io) = session.parts();
            close(driver, io).await
        })
    }
}

/// Opens a session of the client of `shared` on `R` ([`Client::connect`]): its route to HTTP/2
/// or HTTP/1.1, then the negotiation. Gives the session's driver and exchanges.
pub async fn connect<R: AsyncNet>(
    shared: &Arc<Shared<R::Stream>>,
    config: Config,
) -> Result<(SessionDriver, Tasks<R>), Error> {
    // The session's inbox, which its HTTP/2 waker wakes (one pending wake at most).
    let inbox = Arc::new(Inbox::default());
    let waker = H2Waker(inbox.clone());
    let wake: Waker = Arc::new(move || waker.wake());
    let endpoint = Arc::new(config.endpoint.clone());
    let mut glue = Route::<R> {
        shared,
        endpoint: &endpoint,
        inbox: &inbox,
    };
    let mut driver = route::session_driver(shared, config, wake, &mut glue).await?;
    let mut io = Tasks::with_inbox(shared.clone(), endpoint, driver.origin(), inbox);
    driver.run(&mut io, Start::Connect, &mut NoObserver).await?;
    Ok((driver, io))
}

/// Closes a session ([`SessionRuntime::close`]): runs [`Start::Close`], cancels every task still
/// serving one of its exchanges, then ends its recording (which flushes it).
pub async fn close<R: AsyncNet>(
    driver: &mut SessionDriver,
    io: &mut Tasks<R>,
) -> Result<(), Error> {
    let result = driver
        .run(io, Start::Close, &mut NoObserver)
        .await
        .map(|_| ());
    io.abort_all();
    driver.end_recording();
    result
}

/// A new session's side of the HTTP/2 route (`route::session_driver`).
struct Route<'a, R: AsyncNet> {
    shared: &'a Arc<Shared<R::Stream>>,
    endpoint: &'a Arc<Endpoint>,
    inbox: &'a Inbox,
}

impl<R: AsyncNet> H2Glue for Route<'_, R> {
    type Stream = R::Stream;
    type Socket = R::Stream;
    type Sockets = AsyncH2<R>;

    async fn wait(&mut self) -> bool {
        self.inbox.h2().await
    }

    async fn dial(&mut self) -> Result<(SocketAddr, R::Stream), TransportError> {
        dial::<R>(self.shared, self.endpoint, true).await
    }

    fn h2_socket(stream: R::Stream, h2c: bool) -> Result<R::Stream, R::Stream> {
        if h2c || R::is_h2(&stream) {
            Ok(stream)
        } else {
            Err(stream)
        }
    }

    fn sockets(&self) -> AsyncH2<R> {
        AsyncH2(Arc::new(H2Sockets {
            shared: Arc::downgrade(self.shared),
            endpoint: (**self.endpoint).clone(),
            spawner: R::spawner(),
            writers: Mutex::new(HashMap::new()),
        }))
    }

    fn attach(
        sockets: &AsyncH2<R>,
        conn: Arc<SharedH2>,
        generation: u64,
        socket: R::Stream,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError> {
        before_reading();
        sockets.serve(conn, generation, socket, false);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Exchanges

/// An exchange's task, seen from the session.
struct Task<R: AsyncNet> {
    /// The task's socket while it waits after a [`Report::Bytes`], and the word to read on.
    slot: Arc<TaskSlot<R::Stream>>,
    _task: R::Task,
    /// Bytes reported so far.
    read: usize,
}

/// The exchanges of one session, one task each (the [`Io`] of an async session).
#[doc(hidden)]
pub struct Tasks<R: AsyncNet> {
    shared: Arc<Shared<R::Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    spawner: R::Spawner,
    tasks: HashMap<ExchangeId, Task<R>>,
    /// Requests of the last pump, started by [`AsyncIo::launch`].
    queued: Vec<(Transmit, Vec<u8>)>,
    /// The reports of the tasks and the wakes of the shared HTTP/2 connection.
    inbox: Arc<Inbox>,
    /// The largest read the next word to read on allows ([`Io::read_allowance`]).
    read_cap: usize,
    /// Bytes the last exchange whose socket was parked read: the next exchange's first read
    /// asks that much ([`read_first`]).
    expect: usize,
    /// The exchange the session drives in its own future, if any.
    inline: Option<Inline<R::Stream>>,
}

/// The exchange the session drives in its own future ([`AsyncIo::next`]): started on an idle
/// pooled socket while no other exchange of the session was open, it costs no task and no
/// hand-off per read. If another exchange starts, it moves to a task where it is.
struct Inline<S> {
    state: InlineExchange,
    stream: S,
    address: SocketAddr,
}

impl<S> HoldsInline for Inline<S> {
    fn state(&self) -> &InlineExchange {
        &self.state
    }
    fn state_mut(&mut self) -> &mut InlineExchange {
        &mut self.state
    }
}

/// One write, flush or read of the inline exchange; `Some` once there is something to report.
/// Cancel-safe: a write or read that did not complete moved no byte.
async fn step<R: AsyncNet>(inline: &mut Inline<R::Stream>) -> io::Result<Option<Report>> {
    match inline.state.next() {
        InlineStep::Write(bytes) => {
            let n = R::io(&mut inline.stream, IoStep::Write(bytes)).await?;
            inline.state.wrote(n)?;
            Ok(None)
        }
        InlineStep::Flush => {
            R::io(&mut inline.stream, IoStep::Flush).await?;
            inline.state.flushed();
            Ok(None)
        }
        InlineStep::Read(size) => {
            let mut buf: Vec<u8> = Vec::with_capacity(size);
            let n = R::io(&mut inline.stream, IoStep::Read(&mut buf)).await?;
            Ok(Some(if inline.state.read(n) {
                Report::Eof
            } else {
                Report::Bytes(buf)
            }))
        }
    }
}

/// The inline exchange's next report; never, without one that may move bytes.
async fn drive<R: AsyncNet>(inline: Option<&mut Inline<R::Stream>>) -> (ExchangeId, Report) {
    let Some(inline) = inline else {
        return pending().await;
    };
    loop {
        match step::<R>(inline).await {
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
type Resume<S> = crate::runtime::inline::Resume<S>;

impl<R: AsyncNet> Tasks<R> {
    /// The exchanges of a session of the client of `shared` to `endpoint` (`origin` its pool
    /// key), not on a shared HTTP/2 connection.
    pub fn new(shared: Arc<Shared<R::Stream>>, endpoint: &Endpoint, origin: &str) -> Self {
        let inbox = Arc::new(Inbox::default());
        drop(H2Waker(inbox.clone()));
        Tasks::with_inbox(shared, Arc::new(endpoint.clone()), origin, inbox)
    }

    /// The exchanges of a session whose reports and HTTP/2 wakes come to `inbox`.
    fn with_inbox(
        shared: Arc<Shared<R::Stream>>,
        endpoint: Arc<Endpoint>,
        origin: &str,
        inbox: Arc<Inbox>,
    ) -> Self {
        Tasks {
            shared,
            origin: origin.to_owned(),
            endpoint,
            spawner: R::spawner(),
            tasks: HashMap::new(),
            queued: Vec::new(),
            inbox,
            read_cap: READ_MIN,
            expect: 0,
            inline: None,
        }
    }

    /// Whether an exchange runs inline (in the session's own future).
    pub fn has_inline(&self) -> bool {
        self.inline.is_some()
    }

    /// How many exchanges run in tasks.
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// Starts a task for an exchange (`resume`: one the session drove inline until now).
    fn spawn(
        &mut self,
        exchange: ExchangeId,
        request: Vec<u8>,
        fresh: bool,
        first: usize,
        resume: Option<Resume<R::Stream>>,
    ) {
        let slot = Arc::new(TaskSlot::default());
        let job = Job::<R> {
            shared: self.shared.clone(),
            origin: self.origin.clone(),
            endpoint: self.endpoint.clone(),
            exchange,
            request,
            fresh,
            out: self.inbox.clone(),
            slot: slot.clone(),
            first,
            resume,
        };
        let task = R::spawn(&self.spawner, job.run());
        let task = Task {
            slot,
            _task: task,
            read: 0,
        };
        self.tasks.insert(exchange, task);
    }

    /// Hands the inline exchange to a task, where it is: request partly written, reading, or
    /// waiting for [`Io::read_on`]. One whose end was reported is dropped (its socket closes).
    fn demote(&mut self, inline: Inline<R::Stream>) {
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

    /// Cancels every exchange, closing its socket.
    pub fn abort_all(&mut self) {
        self.inline = None;
        self.tasks.clear();
    }
}

impl<R: AsyncNet> Drop for Task<R> {
    /// The exchange ended: a task waiting for the word to read on ends.
    fn drop(&mut self) {
        self.slot.close();
    }
}

impl<R: AsyncNet> Drop for Tasks<R> {
    /// The session is gone: its tasks' reports are refused from now on (they end).
    fn drop(&mut self) {
        self.inbox.close();
    }
}

impl<R: AsyncNet> Io for Tasks<R> {
    fn start(&mut self, transmit: Transmit, request: Vec<u8>) -> Result<(), TransportError> {
        self.queued.push((transmit, request));
        Ok(())
    }

    fn read_on(&mut self, exchange: ExchangeId) {
        if read_on_inline(&mut self.inline, exchange, self.read_cap) {
            return;
        }
        if let Some(task) = self.tasks.get(&exchange) {
            task.slot.read_on(self.read_cap);
        }
    }

    fn finish(&mut self, exchange: ExchangeId, reusable: bool) {
        self.queued.retain(|(t, _)| t.exchange != exchange);
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
        // that is still reading or writing has it, and is cancelled with it (the socket closes).
        let held = if reusable { task.slot.take() } else { None };
        let read = task.read;
        drop(task);
        if let Some((address, stream)) = held {
            self.shared.park(&self.origin, address, stream);
            self.expect = read;
        }
    }

    fn abandon(&mut self, exchange: ExchangeId) {
        self.queued.retain(|(t, _)| t.exchange != exchange);
        take_inline(&mut self.inline, exchange);
        self.tasks.remove(&exchange);
    }

    fn read_allowance(&mut self, bytes_left: u64) {
        self.read_cap = read_size(bytes_left);
    }
}

impl<R: AsyncNet> AsyncIo for Tasks<R> {
    /// Starts the queued exchanges (every socket handed back is already in the pool: the
    /// session parks it in [`Io::finish`]).
    async fn launch(&mut self) {
        for (t, request) in std::mem::take(&mut self.queued) {
            if let Some(inline) = self.inline.take() {
                // Another exchange starts: the inline one moves to a task.
                self.demote(inline);
            } else if !t.fresh_socket && self.tasks.is_empty() {
                let pooled = self.shared.take_idle(&self.origin, R::is_idle);
                if let Some((address, stream)) = pooled {
                    let size = read_first(self.expect, self.read_cap);
                    self.inline = Some(Inline {
                        state: InlineExchange::new(t.exchange, request, size),
                        stream,
                        address,
                    });
                    continue;
                }
            }
            let first = read_first(self.expect, self.read_cap);
            self.spawn(t.exchange, request, t.fresh_socket, first, None);
        }
    }

    /// Every queued exchange starts in a task (the inline exchange, if any, moves to one): no
    /// future of the session drives them.
    fn launch_now(&mut self) {
        for (t, request) in std::mem::take(&mut self.queued) {
            if let Some(inline) = self.inline.take() {
                self.demote(inline);
            }
            let first = read_first(self.expect, self.read_cap);
            self.spawn(t.exchange, request, t.fresh_socket, first, None);
        }
    }

    /// Nothing to wait for: [`Io::finish`] parks a reusable socket in the pool itself.
    async fn settle(&mut self) {}

    /// The next wake-up: the deadline, events of the shared HTTP/2 connection, the inline
    /// exchange's report or a task's (the first of them when several are due).
    async fn next(&mut self, until: Option<Instant>) -> Wake {
        let inline = self
            .inline
            .as_mut()
            .filter(|i| i.state.phase() == InlinePhase::Go);
        let timer = async {
            match until {
                Some(t) => R::sleep_until(t).await,
                None => pending::<()>().await,
            }
            Wake::Timeout
        };
        let inbox = &*self.inbox;
        let h2 = async {
            match inbox.h2().await {
                true => Wake::H2,
                false => pending().await,
            }
        };
        let inline = async {
            let (id, report) = drive::<R>(inline).await;
            Wake::Report(id, report)
        };
        let tasks = &mut self.tasks;
        let report = async {
            let (id, report) = poll_fn(|cx| inbox.poll_report(cx)).await;
            if let (Report::Bytes(b), Some(task)) = (&report, tasks.get_mut(&id)) {
                task.read = task.read.saturating_add(b.len());
            }
            Wake::Report(id, report)
        };
        // A deadline already passed comes first, as ever; otherwise the exchanges are polled
        // before the timer, so that an answer already there costs no timer on the runtime.
        if until.is_some_and(|t| Instant::now() >= t) {
            return Wake::Timeout;
        }
        inline.or(report).or(h2).or(timer).await
    }
}

struct Job<R: AsyncNet> {
    shared: Arc<Shared<R::Stream>>,
    origin: String,
    endpoint: Arc<Endpoint>,
    exchange: ExchangeId,
    request: Vec<u8>,
    fresh: bool,
    out: Arc<Inbox>,
    slot: Arc<TaskSlot<R::Stream>>,
    /// The first read's size ([`read_first`]).
    first: usize,
    /// The exchange was driven inline until now: its socket, and where it is.
    resume: Option<Resume<R::Stream>>,
}

impl<R: AsyncNet> Job<R> {
    async fn run(mut self) {
        let id = self.exchange;
        let fail = |out: &Inbox, e| {
            out.send(id, Report::Failed(e));
        };
        let (mut address, mut stream, mut parked, mut got) = match self.resume.take() {
            Some(r) => {
                let mut stream = r.stream;
                if r.flush {
                    if let Err(e) = write_all::<R>(&mut stream, &self.request).await {
                        return fail(&self.out, io_error(&e));
                    }
                }
                (r.address, stream, r.parked, r.got)
            }
            None => {
                let pooled = if self.fresh {
                    None
                } else {
                    self.shared.take_idle(&self.origin, R::is_idle)
                };
                let (address, mut stream) = match pooled {
                    Some(s) => s,
                    None => match dial::<R>(&self.shared, &self.endpoint, false).await {
                        Ok(s) => s,
                        Err(e) => return fail(&self.out, e),
                    },
                };
                if let Err(e) = write_all::<R>(&mut stream, &self.request).await {
                    return fail(&self.out, io_error(&e));
                }
                (address, stream, false, 0)
            }
        };
        // The first read asks `first` bytes; each read that fills its buffer lets the next one
        // ask four times more, within what the session's byte budget allows (its word to read on).
        // Each read fills a new buffer's spare capacity, and that buffer is the report: what was
        // read is not copied again before the core has it. The session sends a command only
        // after a report, and ends the task by dropping its sender or cancelling it.
        let mut size = self.first;
        loop {
            // A task that takes over a parked inline exchange waits for a command first.
            let report = if parked {
                parked = false;
                None
            } else {
                let mut buf: Vec<u8> = Vec::with_capacity(size);
                let report;
                (report, got) = match R::io(&mut stream, IoStep::Read(&mut buf)).await {
                    Ok(0) => (Report::Eof, 0),
                    Ok(n) => (Report::Bytes(buf), n),
                    Err(e) => (Report::Failed(io_error(&e)), 0),
                };
                if !matches!(report, Report::Bytes(_)) {
                    self.out.send(id, report);
                    return;
                }
                Some(report)
            };
            // Waiting: the socket stays in `held`, where the session may park it.
            self.slot.hold((address, stream));
            if let Some(report) = report {
                if !self.out.send(id, report) {
                    return;
                }
            }
            match self.slot.command().await {
                Some(cap) => {
                    size = next_read_size(size, got, cap);
                    match self.slot.take() {
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
pub struct AsyncH2<R: AsyncNet>(Arc<H2Sockets<R>>);

impl<R: AsyncNet> Clone for AsyncH2<R> {
    fn clone(&self) -> Self {
        AsyncH2(self.0.clone())
    }
}

struct H2Sockets<R: AsyncNet> {
    /// The client (weak: the client holds its connections, which hold this).
    shared: Weak<Shared<R::Stream>>,
    endpoint: Endpoint,
    spawner: R::Spawner,
    /// The writer of each open socket, by generation; dropping it closes the socket once the
    /// bytes queued before are written.
    writers: Mutex<HashMap<u64, Sender<Vec<u8>>>>,
}

impl<R: AsyncNet> AsyncH2<R> {
    /// Serves `stream` as socket `generation` of `conn` from a task of its own; with `dialled`,
    /// `conn` is told once the writer is registered and before anything is read, so nothing the
    /// socket carries is lost.
    fn serve(&self, conn: Arc<SharedH2>, generation: u64, stream: R::Stream, dialled: bool) {
        let (tx, rx) = async_channel::unbounded();
        lock(&self.0.writers).insert(generation, tx);
        if dialled {
            conn.dialled(generation, Ok(()));
        }
        let stall = self
            .0
            .shared
            .upgrade()
            .map_or(crate::session::DEFAULT_WRITE_STALL, |s| s.write_stall);
        let task = h2_socket::<R>(stream, rx, conn, generation, stall);
        R::detach(R::spawn(&self.0.spawner, task));
    }
}

impl<R: AsyncNet> H2Io for AsyncH2<R> {
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
        let task = R::spawn(&self.0.spawner, async move {
            let Some(shared) = me.0.shared.upgrade() else {
                let e = io_error(&io::Error::other("the client is gone"));
                return conn.dialled(generation, Err(e));
            };
            let endpoint = &me.0.endpoint;
            match dial::<R>(&shared, endpoint, true).await {
                Ok((_, s)) if endpoint.scheme() == Scheme::Http || R::is_h2(&s) => {
                    drop(shared);
                    me.serve(conn, generation, s, true);
                }
                Ok(_) => {
                    let e = tls_error("the server no longer negotiates HTTP/2");
                    conn.dialled(generation, Err(e));
                }
                Err(e) => conn.dialled(generation, Err(e)),
            }
        });
        R::detach(task);
    }
}

/// What an HTTP/2 socket's task woke up for.
enum H2Step {
    /// Bytes to write (`None`: the socket is to close).
    Write(Option<Vec<u8>>),
    /// A read ended.
    Read(io::Result<usize>),
}

/// The task of HTTP/2 socket `generation`: writes what the connection sends, in order, and
/// feeds every read to the connection, until either side closes. While a write waits for the
/// server, nothing is read; a write that has not finished within `stall` (the client's
/// `write_stall`, 30 s by default) fails the socket, so a server that stops reading cannot hold
/// the task forever.
async fn h2_socket<R: AsyncNet>(
    mut stream: R::Stream,
    writes: Receiver<Vec<u8>>,
    conn: Arc<SharedH2>,
    generation: u64,
    stall: Duration,
) {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    loop {
        buf.clear();
        let write = async { H2Step::Write(writes.recv().await.ok()) };
        let step = write
            .or(async { H2Step::Read(R::io(&mut stream, IoStep::Read(&mut buf)).await) })
            .await;
        let report = match step {
            H2Step::Write(Some(bytes)) => {
                match within::<R, _>(stall, write_all::<R>(&mut stream, &bytes)).await {
                    Some(Ok(())) => continue,
                    Some(Err(e)) => Report::Failed(io_error(&e)),
                    None => Report::Failed(io_error(&io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the server stopped reading",
                    ))),
                }
            }
            H2Step::Write(None) => return drop(R::io(&mut stream, IoStep::Shutdown).await),
            H2Step::Read(Ok(0)) => Report::Eof,
            H2Step::Read(Ok(n)) => Report::Bytes(buf[..n].to_vec()),
            H2Step::Read(Err(e)) => Report::Failed(io_error(&e)),
        };
        let more = matches!(report, Report::Bytes(_));
        conn.feed(generation, report);
        if !more {
            return;
        }
    }
}
