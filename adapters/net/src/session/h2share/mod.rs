//! One HTTP/2 connection per origin, shared by every session of a client that speaks HTTP/2 to
//! that origin: [`SharedH2`].
//!
//! The core's [`H2Streams`] multiplexes several work items (one [`Connection`] per session) on
//! one socket, each with its own budgets, owning none of them: it yields each stream's inputs
//! with the work item they are for. [`SharedH2`] keeps that socket behind a mutex with
//! everything the sessions need around it, and owns no connection either: each session's
//! driver owns its own. [`SharedH2`] routes each `(WorkId, Input)` into its session's inbox of
//! inputs ([`Routed`]), keeps the socket's generation (a fresh socket replaces one that goes
//! away), and one clock zero for every work item, so that their deadlines stay comparable
//! across sockets.
//!
//! # Who does what
//!
//! The adapter supplies the socket I/O through [`H2Io`]: write bytes to a socket in order, close
//! it, dial a fresh one; and it runs one reader per socket that hands every read to
//! [`SharedH2::feed`]. Whoever holds the lock (a reader with bytes, a session handing over its
//! requests or reaching its deadline) drains the socket: bytes go to [`H2Io::write`], each
//! stream's inputs into its work item's inbox, and the sessions whose inbox got inputs are woken
//! through the [`Waker`] they joined with. A session's driver then hands the connection it owns
//! what its connection asks of the socket and takes its inputs, in one call under the lock
//! ([`SharedH2::sync`]: its requests, the exchanges it ended, what its byte budget has left),
//! and hands the inputs to its connection without the lock. A session never waits on another
//! session's operation except for a stream slot (the core opens at most min(`max_streams`, the
//! server's MAX_CONCURRENT_STREAMS) streams at once, `max_streams` 100 unless
//! [`with_max_streams`](SharedH2::with_max_streams) says otherwise, and queues the rest, first
//! come first served). A request's time budget counts from when its operation made it: the time
//! it waits for a slot is spent from it, and a request still waiting at its deadline leaves the
//! queue without opening a stream. The requests waiting for a fresh socket are kept in their
//! order and found by session and exchange, so that neither queue is scanned per event.
//!
//! # Budgets
//!
//! A stream's allowance is what its work item's byte budget had left when the stream opened
//! ([`H2Streams::allow`]). The connection charges each input when its driver hands it in, so
//! the shared connection counts, per work item, what its driver last reported as left less the
//! raw cost of every input routed to its inbox since: the inputs waiting in an inbox are
//! already spent, and a stream opened meanwhile is allowed no more than the budget will have
//! left once they are handed in.
//!
//! # Fresh sockets
//!
//! When the socket cannot take a request any more (the server sent GOAWAY, the socket failed, or
//! the core asks for a fresh socket for a retry), the request waits here and **one** fresh
//! socket is dialled for all the work items ([`H2Io::dial`], answered with
//! [`SharedH2::dialled`]). Once it is open and the old socket has no stream left (or is closed),
//! every work item moves to it and the waiting requests are sent there. Streams still running on
//! the old socket are not cut short by the move.
//!
//! # Idle, and closing
//!
//! When the last session leaves, a healthy socket stays open, idle, for the next session of the
//! origin to join (like an HTTP/1.1 socket parked in the pool): a client whose sessions come and
//! go keeps one socket and one TLS handshake per origin. An idle connection is reused only while
//! [`reusable`](SharedH2::reusable) says so: not past the pool's idle timeout, not closed or
//! going away (the server's GOAWAY, a failure). Otherwise, and when the client is dropped, it is
//! closed with GOAWAY(NO_ERROR) ([`SharedH2::close`]): the GOAWAY is written, then the socket
//! closed.
//!
//! # Recording
//!
//! A transcript is one work item's view of its sockets, so a client that records gives each
//! session a connection of its own ([`SharedH2::new_recorded`]), never shared and never
//! registered for the origin. The session's [`H2Recording`] lives here, under the lock, and
//! hears every call at the points `mcp_sansio_transcript::h2` documents: the socket opened,
//! every piece of bytes the core wrote and every read fed to it (with the instant it was given),
//! end of stream, failures, dial errors, timeouts, and, from the session's driver, operations
//! ([`SharedH2::record_operation`]) and events ([`SharedH2::record_event`]). Every call under the
//! lock uses one instant, for the input and for the drain after it, as a replay does; each
//! routed input carries the instant it was read, at which the driver hands it in, and the
//! driver hands its inbox in before it starts an operation or handles a deadline, as a replay
//! reads before it. A recorded connection moves its work item to a fresh socket as soon as that
//! socket is open (the streams left on the old socket are reset), as its replay does; the
//! frames written for the connection itself when the session leaves (the resets of its streams,
//! GOAWAY) are not recorded: the recording ends when the session leaves.
//!
//! The two points where bytes cross a socket are [`SharedH2::feed`] (bytes read) and the
//! private `write` (bytes written).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_sansio::h2::{H2Config, Reason};
use mcp_sansio::mux::{H2Streams, WorkId};
#[cfg(doc)]
use mcp_sansio::Connection;
use mcp_sansio::{Budgets, Config, Event, Input, Instant, TransportError};
use mcp_sansio_transcript::{H2Recording, RecordedOperation, TranscriptSink};

use crate::lock::lock;
use crate::session::io::Report;
use crate::trace::{H2Trace, SessionTrace};

/// Wakes a session whose inbox got inputs. It must not block (it is called under the lock).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// The socket I/O an adapter supplies to a [`SharedH2`]. Sockets are numbered by generation;
/// none of these methods may block (they are called under the connection's lock).
pub trait H2Io: Send + Sync {
    /// Writes `bytes` to socket `generation`, after every byte written to it before. Bytes for a
    /// socket that is closed or unknown are dropped.
    fn write(&self, generation: u64, bytes: Vec<u8>);
    /// Closes socket `generation` once the bytes written to it are sent.
    fn close(&self, generation: u64);
    /// Dials a fresh socket that negotiates HTTP/2 the same way (ALPN `h2`, or prior knowledge
    /// for `http`), as socket `generation` of `conn`; reports with [`SharedH2::dialled`] once it
    /// is open (its writes must be accepted from then on) or could not be opened, and feeds what
    /// it reads to [`SharedH2::feed`].
    fn dial(&self, conn: Arc<SharedH2>, generation: u64);
}

/// A session's place on a [`SharedH2`]: stable while the session stays, across sockets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Member(u64);

mod inbox;
mod pending;

pub use self::inbox::{Outbox, Routed};
use self::pending::Pending;

struct Item {
    /// The session's work item on every socket: its member number.
    work: WorkId,
    /// The inputs of its streams, not yet taken by its driver.
    inbox: VecDeque<Routed>,
    /// What its byte budget has left once the inputs in its inbox are handed in: what its
    /// driver last reported, less the raw cost of every input routed since.
    left: u64,
    /// Raw bytes its connection read, as its driver last reported (for the exchange spans).
    read: u64,
    wake: Waker,
    /// The spans of its exchanges (feature `tracing`).
    trace: H2Trace,
}

/// A fresh socket, open, waiting for the old one to drain.
struct Next {
    socket: H2Streams,
    generation: u64,
}

struct State {
    socket: H2Streams,
    generation: u64,
    /// Whether [`H2Io::close`] was called for the current socket.
    closing: bool,
    /// The last generation handed out.
    last_generation: u64,
    next: Option<Next>,
    /// The generation being dialled.
    dialling: Option<u64>,
    /// Requests waiting for a fresh socket.
    pending: Pending,
    items: BTreeMap<Member, Item>,
    /// The sessions whose inbox got inputs since the last drain woke them.
    woken: BTreeSet<Member>,
    last_member: u64,
    life: Life,
    recording: Recording,
}

/// What a recorded connection records (a connection that is not recorded is always `Off`).
enum Recording {
    /// Nothing: not recorded, or its session's recording is over.
    Off,
    /// The sink and session number of the recording, until its session joins.
    Awaiting(Arc<dyn TranscriptSink>, u64),
    /// The session's recording, from its join to its leave (boxed: the state is kept per
    /// connection, and most connections record nothing).
    On(Box<H2Recording>),
}

impl Recording {
    /// The recording under way, if any.
    fn on(&mut self) -> Option<&mut H2Recording> {
        match self {
            Recording::On(rec) => Some(rec),
            Recording::Off | Recording::Awaiting(..) => None,
        }
    }
}

/// Whether the connection serves sessions, waits idle for the next one, or is closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// Sessions are on it (or the first is about to join).
    Serving,
    /// No session is on it since this instant of the adapter's clock; the next may join.
    Idle(std::time::Instant),
    /// Closed: no session joins any more.
    Shut,
}

/// The work item of session `member` on every socket: its member number.
fn work_of(member: Member) -> WorkId {
    WorkId(usize::try_from(member.0).unwrap_or(usize::MAX))
}

impl State {
    /// The session whose work item is `work`, if it is still here (a look-up, not a scan).
    fn member(&self, work: WorkId) -> Option<Member> {
        let m = Member(u64::try_from(work.0).ok()?);
        self.items.get(&m).filter(|i| i.work == work).map(|_| m)
    }

    /// Puts `routed` into the inbox of work item `work` (dropped if it left), charging its raw
    /// cost to what the item has left; the allowance of its requests waiting for a stream slot
    /// follows (only this item's: nothing is done per other item or per waiting request).
    fn route(&mut self, work: WorkId, routed: Routed) {
        let Some(m) = self.member(work) else { return };
        if let Some(item) = self.items.get_mut(&m) {
            item.left = item.left.saturating_sub(routed.raw());
            item.inbox.push_back(routed);
            self.woken.insert(m);
            self.socket.allow(work, item.left);
        }
    }
}

/// One HTTP/2 connection (a socket, and its successors) shared by the sessions of a client to
/// one origin. See the module docs.
pub struct SharedH2 {
    scheme: &'static str,
    /// Whether the connection is one session's, recorded ([`SharedH2::new_recorded`]).
    recorded: bool,
    h2: H2Config,
    zero: std::time::Instant,
    io: Arc<dyn H2Io>,
    state: Mutex<State>,
}

impl std::fmt::Debug for SharedH2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = lock(&self.state);
        f.debug_struct("SharedH2")
            .field("scheme", &self.scheme)
            .field("generation", &st.generation)
            .field("members", &st.items.len())
            .field("open_streams", &st.socket.open_streams())
            .finish_non_exhaustive()
    }
}

impl SharedH2 {
    /// A connection whose first socket, generation 0, the adapter has just opened (ALPN `h2`, or
    /// prior knowledge when `scheme` is `http`) and serves through `io`. Every socket of it is
    /// bounded by the socket limits of `budgets` (the per-socket ledger, streams, windows: those
    /// of the first session's configuration); each work item keeps its own budgets. Nothing is
    /// written before a session [`join`](Self::join)s.
    pub fn new(scheme: &'static str, budgets: &Budgets, io: Arc<dyn H2Io>) -> Arc<SharedH2> {
        SharedH2::make(scheme, budgets, None, io, None)
    }

    /// A connection like [`new`](Self::new) whose sockets open at most `max_streams` streams at
    /// once ([`H2Config::max_streams`]; 0 is taken as 1), further capped by each socket's server
    /// (its SETTINGS_MAX_CONCURRENT_STREAMS): the other requests wait for a slot, first come
    /// first served.
    pub fn with_max_streams(
        scheme: &'static str,
        budgets: &Budgets,
        max_streams: u32,
        io: Arc<dyn H2Io>,
    ) -> Arc<SharedH2> {
        SharedH2::make(scheme, budgets, Some(max_streams), io, None)
    }

    /// A connection like [`new`](Self::new) for one session only, recorded as session `session`
    /// of `sink` (an HTTP/2 transcript, `config http 2`): the first session to
    /// [`join`](Self::join) is recorded from its first socket, opened at the connection's clock
    /// zero; no other session may join. Join it before its socket's reader starts, so that the
    /// transcript holds every byte read. See the module docs.
    pub fn new_recorded(
        scheme: &'static str,
        budgets: &Budgets,
        io: Arc<dyn H2Io>,
        sink: Arc<dyn TranscriptSink>,
        session: u64,
    ) -> Arc<SharedH2> {
        SharedH2::make(scheme, budgets, None, io, Some((sink, session)))
    }

    /// [`new_recorded`](Self::new_recorded) with the streams of
    /// [`with_max_streams`](Self::with_max_streams) (`None`: the default).
    pub(crate) fn make(
        scheme: &'static str,
        budgets: &Budgets,
        max_streams: Option<u32>,
        io: Arc<dyn H2Io>,
        record_to: Option<(Arc<dyn TranscriptSink>, u64)>,
    ) -> Arc<SharedH2> {
        let mut h2 = H2Config::from_budgets(budgets);
        if let Some(n) = max_streams {
            h2.max_streams = n.max(1);
        }
        Arc::new(SharedH2 {
            scheme,
            recorded: record_to.is_some(),
            zero: std::time::Instant::now(),
            state: Mutex::new(State {
                socket: opening(H2Streams::new(Instant::ZERO, h2.clone(), scheme)),
                generation: 0,
                closing: false,
                last_generation: 0,
                next: None,
                dialling: None,
                pending: Pending::default(),
                items: BTreeMap::new(),
                woken: BTreeSet::new(),
                last_member: 0,
                life: Life::Serving,
                recording: match record_to {
                    Some((sink, session)) => Recording::Awaiting(sink, session),
                    None => Recording::Off,
                },
            }),
            h2,
            io,
        })
    }

    /// The clock zero of every work item of this connection, on the adapter's clock.
    pub fn zero(&self) -> std::time::Instant {
        self.zero
    }

    /// Now on the work items' clock, in whole microseconds.
    pub fn now(&self) -> Instant {
        let micros = u64::try_from(self.zero.elapsed().as_micros()).unwrap_or(u64::MAX);
        Instant::from_duration(Duration::from_micros(micros))
    }

    /// The scheme of its requests: `https`, or `http` with prior knowledge.
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// The generation of the socket serving now (0 for the first).
    pub fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// Whether the connection is one session's, recorded ([`new_recorded`](Self::new_recorded)).
    pub fn is_recorded(&self) -> bool {
        self.recorded
    }

    /// Sessions on the connection now.
    pub fn members(&self) -> usize {
        lock(&self.state).items.len()
    }

    /// Whether the connection was closed ([`close`](Self::close), or it could not stay idle): a
    /// new session dials again.
    pub fn is_shut(&self) -> bool {
        lock(&self.state).life == Life::Shut
    }

    /// Whether a new session may join: the connection is not closed and, when no session is on
    /// it, it has been idle for at most `idle_timeout` and its socket neither failed nor is going
    /// away. An idle connection that may not be reused is closed here (GOAWAY(NO_ERROR)).
    pub fn reusable(self: &Arc<Self>, idle_timeout: Duration) -> bool {
        let mut st = lock(&self.state);
        let since = match st.life {
            Life::Shut => return false,
            Life::Serving => return true,
            Life::Idle(since) => since,
        };
        let healthy = !st.socket.is_closed() && st.socket.client().goaway().is_none();
        if healthy && since.elapsed() <= idle_timeout {
            return true;
        }
        let now = self.now();
        self.shut(&mut st, now);
        false
    }

    /// Whether no session is on the connection and it waits, open, for the next one.
    pub fn is_idle(&self) -> bool {
        let st = lock(&self.state);
        matches!(st.life, Life::Idle(_))
    }

    /// Closes the connection: what is queued is written, then GOAWAY(NO_ERROR), then every
    /// socket is closed. Sessions still on it hear of it as a closed socket.
    pub fn close(self: &Arc<Self>) {
        let mut st = lock(&self.state);
        if st.life != Life::Shut {
            let now = self.now();
            self.shut(&mut st, now);
        }
    }

    /// Streams open on the serving socket now.
    pub fn open_streams(&self) -> usize {
        lock(&self.state).socket.open_streams()
    }

    /// Requests waiting for a stream slot of the serving socket now.
    pub fn waiting_requests(&self) -> usize {
        lock(&self.state).socket.waiting()
    }

    /// What the serving socket's queue of requests waiting for a stream slot has cost so far
    /// ([`H2Streams::queue_steps`]): it grows by a bounded amount per request queued, opened or
    /// dropped and per input routed, however many sessions and requests wait.
    pub fn queue_steps(&self) -> u64 {
        lock(&self.state).socket.queue_steps()
    }

    /// Requests waiting for a fresh socket now: the serving socket can carry them no more (the
    /// server's GOAWAY, a failure, a retry that asks for a fresh socket) and the fresh one is
    /// being dialled or waits for the old one to drain.
    pub fn fresh_requests(&self) -> usize {
        lock(&self.state).pending.len()
    }

    /// What the list of requests waiting for a fresh socket has cost so far: it grows by a
    /// bounded amount per request put on it, dropped from it (its exchange ended, its session
    /// left) or taken off it, however many requests wait.
    pub fn fresh_steps(&self) -> u64 {
        lock(&self.state).pending.steps()
    }

    /// Adds a session whose connection (its driver's, made with `config`) has `bytes_left` of
    /// its byte budget, as a work item; `wake` is called whenever its inbox gets inputs. `None`
    /// if the connection was shut meanwhile, or is recorded and already has its session (dial a
    /// new one). On a recorded connection, the recording of the session starts here, with
    /// `config`.
    pub fn join(self: &Arc<Self>, config: &Config, bytes_left: u64, wake: Waker) -> Option<Member> {
        let mut st = lock(&self.state);
        if st.life == Life::Shut {
            return None;
        }
        st.life = Life::Serving;
        if self.recorded {
            // One session only: a recording already under way stays as it is.
            let (sink, session) = match core::mem::replace(&mut st.recording, Recording::Off) {
                Recording::Awaiting(sink, session) => (sink, session),
                other => {
                    st.recording = other;
                    return None;
                }
            };
            let mut rec =
                H2Recording::new(config, &self.h2, self.scheme, Instant::ZERO, sink, session);
            // The first socket was made at the clock zero.
            rec.recorder().socket_opened(Instant::ZERO);
            st.recording = Recording::On(Box::new(rec));
        }
        st.last_member += 1;
        let member = Member(st.last_member);
        let work = work_of(member);
        st.items.insert(
            member,
            Item {
                work,
                inbox: VecDeque::new(),
                left: bytes_left,
                read: 0,
                wake,
                trace: H2Trace::default(),
            },
        );
        Some(member)
    }

    /// Takes session `member` off the connection: its open streams are reset (CANCEL), its
    /// waiting requests and the inputs in its inbox dropped. When the last session leaves, a
    /// healthy socket stays open, idle (see [`reusable`](Self::reusable)); one that failed, is
    /// going away or is being replaced is closed with GOAWAY(NO_ERROR).
    pub fn leave(self: &Arc<Self>, member: Member) {
        let mut st = lock(&self.state);
        let now = self.now();
        let Some(item) = st.items.remove(&member) else {
            return;
        };
        // The recording ends with the session: what leaving writes is the connection's.
        st.recording = Recording::Off;
        // Its exchanges break as closed; the connection goes with the session.
        let _ = st.socket.remove(item.work);
        st.pending.remove_member(member);
        // A recorded connection serves its one session only: it is closed when that leaves.
        let healthy = !self.recorded
            && !st.socket.is_closed()
            && st.socket.client().goaway().is_none()
            && st.next.is_none()
            && st.dialling.is_none();
        if st.items.is_empty() && !healthy {
            self.shut(&mut st, now);
        } else {
            if st.items.is_empty() {
                st.life = Life::Idle(std::time::Instant::now());
            }
            self.drain(&mut st, now);
        }
    }

    /// Ends the recording of a recorded connection's session (it is flushed and finished);
    /// nothing more is recorded. Does nothing on a connection that is not recorded.
    pub fn end_recording(&self) {
        let rec = core::mem::replace(&mut lock(&self.state).recording, Recording::Off);
        drop(rec);
    }

    /// Writes what is queued and GOAWAY(NO_ERROR), then closes every socket.
    fn shut(&self, st: &mut State, now: Instant) {
        st.life = Life::Shut;
        st.pending.clear();
        let generation = st.generation;
        let _ = pump(st, now);
        while let Some(bytes) = st.socket.poll_transmit() {
            self.write(generation, bytes);
        }
        if !st.socket.is_closed() && !st.closing {
            self.write(generation, mcp_sansio::h2::goaway(0, Reason::NO_ERROR));
        }
        if !st.closing {
            st.closing = true;
            self.io.close(generation);
        }
        if let Some(next) = st.next.take() {
            self.io.close(next.generation);
        }
        if let Some(g) = st.dialling.take() {
            self.io.close(g);
        }
    }

    /// What session `member`'s connection asks of the socket since the last call (`out`: its
    /// requests, the exchanges it ended, what its byte budget has left), handed over; then the
    /// connection drains, and the inputs in the session's inbox are taken: its driver hands each
    /// to the connection ([`Connection::handle`]) at the instant it was read. Nothing for a
    /// session that left.
    pub fn sync(self: &Arc<Self>, member: Member, out: Outbox) -> Vec<Routed> {
        let mut st = lock(&self.state);
        let now = self.now();
        let st = &mut *st;
        let Some(item) = st.items.get_mut(&member) else {
            return Vec::new();
        };
        // The inputs still in the inbox are not in what the connection reports as left.
        let queued: u64 = item.inbox.iter().map(Routed::raw).sum();
        item.left = out.bytes_left.saturating_sub(queued);
        item.read = out.bytes_read;
        let (work, left) = (item.work, item.left);
        for t in out.requests {
            st.socket.send(work, t, left);
        }
        for (exchange, abandoned) in out.ended {
            st.socket.ended(work, exchange, abandoned);
            st.pending.remove_exchange(member, exchange);
            let outcome = if abandoned { "abandoned" } else { "finished" };
            item.trace.end(exchange, outcome, out.bytes_read);
        }
        st.socket.allow(work, left);
        self.drain(st, now);
        st.items
            .get_mut(&member)
            .map(|i| i.inbox.drain(..).collect())
            .unwrap_or_default()
    }

    /// Records that session `member`'s driver starts operation `op` (on a recorded connection;
    /// nothing otherwise). Returns the instant it is recorded at: the driver starts the
    /// operation then.
    pub fn record_operation(&self, op: RecordedOperation) -> Instant {
        let mut st = lock(&self.state);
        let now = self.now();
        if let Some(rec) = st.recording.on() {
            rec.recorder().operation(now, op);
            rec.flush();
        }
        now
    }

    /// Records an event of the recorded session's connection (nothing on a connection that is
    /// not recorded).
    pub fn record_event(&self, event: &Event) {
        if !self.recorded {
            return;
        }
        let mut st = lock(&self.state);
        if let Some(rec) = st.recording.on() {
            rec.recorder().event(event);
            rec.flush();
        }
    }

    /// The operation `trace` runs (feature `tracing`) is the parent of the exchange spans of
    /// session `member` from now on.
    pub(crate) fn trace_parent(&self, member: Member, trace: &SessionTrace) {
        if let Some(item) = lock(&self.state).items.get_mut(&member) {
            item.trace.parent(trace);
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next (a socket's SETTINGS
    /// acknowledgement), on the adapter's clock; each work item's deadlines are its connection's.
    pub fn poll_timeout(&self) -> Option<std::time::Instant> {
        let st = lock(&self.state);
        let next = st.next.as_ref().and_then(|n| n.socket.poll_timeout());
        [st.socket.poll_timeout(), next]
            .into_iter()
            .flatten()
            .min()
            .map(|due| self.zero + due.as_duration())
    }

    /// Whether session `member` may still hear something: inputs wait in its inbox, or a
    /// socket is open or being dialled.
    pub fn can_report(&self, member: Member) -> bool {
        let st = lock(&self.state);
        st.items.get(&member).is_some_and(|i| !i.inbox.is_empty())
            || !st.socket.is_closed()
            || st.dialling.is_some()
            || st.next.is_some()
    }

    /// A session's clock reached its deadline or [`poll_timeout`](Self::poll_timeout): the
    /// sockets' deadlines are handled (and the timeout recorded, on a recorded connection).
    /// Returns the instant they were handled at: the session's driver hands its connection the
    /// timeout then ([`Connection::handle_timeout`]).
    pub fn handle_timeout(self: &Arc<Self>) -> Instant {
        let mut st = lock(&self.state);
        let now = self.now();
        if let Some(rec) = st.recording.on() {
            rec.recorder().timeout(now);
        }
        st.socket.handle_timeout(now);
        if let Some(next) = &mut st.next {
            next.socket.handle_timeout(now);
        }
        self.drain(&mut st, now);
        now
    }

    /// What the reader of socket `generation` read. Reports of a socket already replaced are
    /// ignored. One of the two points where bytes cross an HTTP/2 socket (the other writes).
    pub fn feed(self: &Arc<Self>, generation: u64, report: Report) {
        let mut st = lock(&self.state);
        let now = self.now();
        let st = &mut *st;
        // Only the serving socket is recorded (a recorded connection has no other).
        let (socket, rec) = if st.generation == generation {
            (&mut st.socket, st.recording.on())
        } else {
            match &mut st.next {
                Some(n) if n.generation == generation => (&mut n.socket, None),
                _ => return,
            }
        };
        let rec = rec.map(H2Recording::recorder);
        match report {
            // A connection error fails every stream: each work item hears of it through its
            // exchanges, and its next request asks for a fresh socket.
            Report::Bytes(bytes) => {
                if let Some(rec) = rec {
                    rec.read(now, &bytes);
                }
                let _ = socket.handle_bytes(now, &bytes);
            }
            Report::Eof => {
                if let Some(rec) = rec {
                    rec.eof(now);
                }
                socket.handle_eof();
            }
            Report::Failed(e) => {
                if let Some(rec) = rec {
                    rec.failure(now, &e);
                }
                socket.handle_eof();
            }
        }
        self.drain(st, now);
    }

    /// The fresh socket `generation` asked for with [`H2Io::dial`] is open (`Ok`), or could not
    /// be opened: the requests waiting for it then fail with the error.
    pub fn dialled(self: &Arc<Self>, generation: u64, result: Result<(), TransportError>) {
        let mut st = lock(&self.state);
        let now = self.now();
        if st.dialling != Some(generation) {
            self.io.close(generation);
            return;
        }
        st.dialling = None;
        match result {
            Ok(()) => {
                st.next = Some(Next {
                    socket: opening(H2Streams::new(now, self.h2.clone(), self.scheme)),
                    generation,
                });
                if self.recorded {
                    // A recorded session moves at once, as its replay does.
                    self.switch(&mut st, now);
                    if let Some(rec) = st.recording.on() {
                        rec.recorder().socket_opened(now);
                    }
                }
            }
            Err(e) => {
                if let Some(rec) = st.recording.on() {
                    rec.recorder().dial_error(now, &e);
                }
                fail_pending(&mut st, now, &e);
            }
        }
        self.drain(&mut st, now);
    }

    /// Bytes for socket `generation`: the one point where bytes are written to an HTTP/2
    /// socket (the other, [`feed`](Self::feed), reads).
    fn write(&self, generation: u64, bytes: Vec<u8>) {
        self.io.write(generation, bytes);
    }

    /// Moves everything that can move: socket bytes out, requests for a fresh socket into the
    /// waiting list, inputs into inboxes, work items to a fresh socket; then wakes the sessions
    /// whose inbox got inputs.
    /// Everything happens at `now`, the instant of the input that came before (as a replay
    /// drains). A recorded connection records what the core wrote, then writes the text
    /// recorded to its sink.
    fn drain(self: &Arc<Self>, st: &mut State, now: Instant) {
        loop {
            // The waiting requests onto streams, the streams' inputs into the inboxes, until
            // nothing moves.
            let mut any = pump(st, now);
            let generation = st.generation;
            while let Some(bytes) = st.socket.poll_transmit() {
                any = true;
                // Bytes dropped on a closing socket were written by the core all the same.
                if let Some(rec) = st.recording.on() {
                    rec.recorder().wrote(now, &bytes);
                }
                if !st.closing {
                    self.write(generation, bytes);
                }
            }
            if st.socket.is_closed() && !st.closing {
                st.closing = true;
                self.io.close(generation);
            }
            while let Some((work, stream, t)) = st.socket.poll_opened() {
                let Some(m) = st.member(work) else { continue };
                if let Some(item) = st.items.get_mut(&m) {
                    item.trace.opened(&t, stream.0, item.read);
                }
            }
            while let Some((work, t)) = st.socket.poll_fresh() {
                any = true;
                if let Some(m) = st.member(work) {
                    st.pending.push(m, t);
                }
            }
            any |= pump(st, now);
            if let Some(next) = &mut st.next {
                while let Some(bytes) = next.socket.poll_transmit() {
                    self.write(next.generation, bytes);
                }
                if next.socket.is_closed() {
                    // The fresh socket failed before any work item moved to it.
                    let g = next.generation;
                    st.next = None;
                    self.io.close(g);
                    let e = TransportError {
                        kind: mcp_sansio::TransportErrorKind::Io,
                        message: "the fresh HTTP/2 socket closed before its first request".into(),
                    };
                    fail_pending(st, now, &e);
                    any = true;
                }
            }
            if st.next.is_some() && (st.socket.is_closed() || st.socket.open_streams() == 0) {
                self.switch(st, now);
                any = true;
            }
            if !st.pending.is_empty()
                && st.dialling.is_none()
                && st.next.is_none()
                && st.life != Life::Shut
            {
                st.last_generation += 1;
                let g = st.last_generation;
                st.dialling = Some(g);
                self.io.dial(self.clone(), g);
            }
            if !any {
                break;
            }
        }
        if let Some(rec) = st.recording.on() {
            rec.flush();
        }
        for m in std::mem::take(&mut st.woken) {
            if let Some(item) = st.items.get(&m) {
                (item.wake)();
            }
        }
    }

    /// Moves every work item to the fresh socket and sends the waiting requests there; the old
    /// socket is closed.
    fn switch(&self, st: &mut State, now: Instant) {
        let Some(next) = st.next.take() else { return };
        let mut old = std::mem::replace(&mut st.socket, next.socket);
        let old_generation = std::mem::replace(&mut st.generation, next.generation);
        let old_closing = std::mem::replace(&mut st.closing, false);
        let works: Vec<WorkId> = st.items.values().map(|i| i.work).collect();
        for work in works {
            for input in old.remove(work) {
                st.route(work, Routed::new(now, input));
            }
        }
        for (m, t) in st.pending.take() {
            if let Some(item) = st.items.get(&m) {
                st.socket.resend(item.work, t, item.left);
            }
        }
        if !old_closing {
            while let Some(bytes) = old.poll_transmit() {
                self.write(old_generation, bytes);
            }
            self.io.close(old_generation);
        }
    }
}

/// `socket`, reporting the requests that open its streams when their spans are made (feature
/// `tracing`).
fn opening(mut socket: H2Streams) -> H2Streams {
    socket.report_opened(cfg!(feature = "tracing"));
    socket
}

/// Fails every request waiting for a fresh socket with `e`: the failure goes to its session's
/// inbox.
fn fail_pending(st: &mut State, now: Instant, e: &TransportError) {
    for (m, t) in st.pending.take() {
        let Some(work) = st.items.get(&m).map(|i| i.work) else {
            continue;
        };
        let input = Input::TransportError {
            exchange: t.exchange,
            error: e.clone(),
        };
        st.route(work, Routed::new(now, input));
    }
}

/// Moves everything that can move between the serving socket's streams and the sessions'
/// inboxes: every waiting request onto a stream (with what its work item has left), every
/// stream input into its work item's inbox (its raw cost taken off what the item has left, and
/// the allowance of its waiting requests updated, [`State::route`]); until nothing moves.
/// Whether anything did. Its cost follows what moved, not how many sessions or requests wait.
fn pump(st: &mut State, now: Instant) -> bool {
    let mut any = false;
    loop {
        let mut progress = st.socket.open();
        while let Some((work, input)) = st.socket.poll_input() {
            let input = Routed::new(now, input);
            st.route(work, input);
            progress = true;
        }
        any |= progress;
        if !progress {
            return any;
        }
    }
}
