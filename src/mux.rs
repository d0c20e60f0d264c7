//! Several connections over one socket: [`H2Streams`] holds one HTTP/2 socket's
//! [`ClientConnection`] and routes each stream's events, as [`Input`]s, to the work item and
//! exchange it carries, owning no [`Connection`] (as [`Http1Socket`](crate::socket::Http1Socket)
//! owns none): the caller hands each `(WorkId, Input)` to that work item's
//! [`Connection::handle`], and gives the socket what it needs of each connection as data (its
//! requests, with what its byte budget has left, and the end of its exchanges). [`H2Socket`] is
//! a thin layer over it that owns its work items' connections and does just that.
//!
//! This layer sits above both the connection's state machine and the HTTP/2 codec
//! ([`crate::h2`]), which know nothing of each other.

use crate::prelude::*;

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::connection::{Connection, Event, ExchangeId, Input, Transmit};
use crate::endpoint::Scheme;
use crate::h2::{ClientConnection, H2Config, H2Error, OpenError, StreamEvent, StreamId};
use crate::time::Instant;
use crate::wire::{self, ResponseEvent, ResponseHead, WireError};

/// A work item of an [`H2Socket`]: an index, stable while the item stays (a removed item's
/// index may be given to a later item).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkId(pub usize);

/// A stream and the exchange it carries.
#[derive(Debug)]
struct Route {
    stream: StreamId,
    work: WorkId,
    exchange: ExchangeId,
    /// Raw octets of 1xx responses, charged with the stream's next event.
    carried: u64,
}

/// A request waiting for a stream slot, in the queue of [`H2Streams`]: it is still waiting
/// while its key is in `live` (a request dropped meanwhile stays in the queue, stale, until
/// it reaches the front or the queue is compacted).
#[derive(Debug)]
struct Waiting {
    /// Its place in the order the requests came (unique on the socket).
    seq: u64,
    work: WorkId,
    transmit: Transmit,
}

impl Waiting {
    fn key(&self) -> (WorkId, ExchangeId, u64) {
        (self.work, self.transmit.exchange, self.seq)
    }
}

/// Stale entries the waiting queue may hold before it is compacted (and never more than the
/// requests still waiting): compacting costs one pass over the queue, paid for by the removals
/// that made as many entries stale.
const STALE_SLACK: usize = 64;

/// The streams of one HTTP/2 socket, routed to work items it does not own: the non-owning
/// core of [`H2Socket`] (see its docs for the budgets, the retries and the fresh sockets).
///
/// Each work item is a [`WorkId`] the caller chooses (and keeps while anything of the item is
/// here, [`holds`](Self::holds)). The caller hands the socket each request of a work item with
/// what the item's byte budget has left ([`send`](Self::send); [`allow`](Self::allow) updates it
/// for the requests still waiting for a stream slot): a stream's allowance is what its work
/// item had left when the stream opened. Out come the bytes to write
/// ([`poll_transmit`](Self::poll_transmit)), the requests that must go on another socket
/// ([`poll_fresh`](Self::poll_fresh)) and the inputs of every stream
/// ([`poll_input`](Self::poll_input)): each `(WorkId, Input)` goes to that work item's
/// [`Connection::handle`], which charges every frame of the stream to that item. The caller
/// tells the socket of every exchange the connection finished or abandoned
/// ([`ended`](Self::ended): an abandoned stream is reset with RST_STREAM(CANCEL)).
pub struct H2Streams {
    conn: ClientConnection,
    scheme: Scheme,
    routes: Vec<Route>,
    /// Requests waiting for a stream slot of this socket, first come first served. Every
    /// operation on it costs O(log n) amortised, whatever the queue's length: no scan of the
    /// queue per event (see [`queue_steps`](Self::queue_steps)).
    waiting: VecDeque<Waiting>,
    /// The keys of the requests in `waiting` that still wait: `(work item, exchange, seq)`.
    live: BTreeSet<(WorkId, ExchangeId, u64)>,
    /// Entries of `waiting` no longer in `live`.
    stale: usize,
    /// The order number of the next request queued.
    next_seq: u64,
    /// What each work item with waiting requests last said its byte budget has left: the
    /// allowance of the streams they open.
    allowance: BTreeMap<WorkId, u64>,
    /// Entries of the waiting queue and allowance updates handled so far.
    steps: u64,
    /// Requests that must go on another socket.
    fresh: VecDeque<(WorkId, Transmit)>,
    /// Inputs made outside the streams' events (a request that cannot be sent over HTTP/2).
    inputs: VecDeque<(WorkId, Input<'static>)>,
    /// The data of the last body input handed out, lent to it.
    data: Vec<u8>,
    /// Whether a stream was ever opened (a fresh socket has none).
    used: bool,
    /// The requests that opened a stream, kept for [`poll_opened`](Self::poll_opened) when
    /// [`report_opened`](Self::report_opened) asked for them (`None`: dropped).
    opened: Option<VecDeque<(WorkId, StreamId, Transmit)>>,
}

/// The socket's HTTP/2 connection and the requests it holds, never a credential: each
/// [`Transmit`] redacts its own.
impl core::fmt::Debug for H2Streams {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("H2Streams")
            .field("conn", &self.conn)
            .field("scheme", &self.scheme)
            .field("routes", &self.routes)
            .field("waiting", &self.waiting)
            .field("fresh", &self.fresh)
            .field("inputs", &self.inputs.len())
            .field("used", &self.used)
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

impl H2Streams {
    /// A new socket's HTTP/2 connection at `now` (the preface and our SETTINGS are queued);
    /// `scheme` is `https`, or `http` for HTTP/2 with prior knowledge (compared
    /// case-insensitively; anything else is taken as `https`).
    pub fn new(now: Instant, config: H2Config, scheme: &str) -> H2Streams {
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else {
            Scheme::Https
        };
        H2Streams {
            conn: ClientConnection::new(now, config),
            scheme,
            routes: Vec::new(),
            waiting: VecDeque::new(),
            live: BTreeSet::new(),
            stale: 0,
            next_seq: 0,
            allowance: BTreeMap::new(),
            steps: 0,
            fresh: VecDeque::new(),
            inputs: VecDeque::new(),
            data: Vec::new(),
            used: false,
            opened: None,
        }
    }

    /// Whether anything of work item `work` is still here: a stream, a request waiting for a
    /// slot or for another socket, an input not yet taken, an opened stream not yet reported.
    /// Its id may be given to another work item once nothing is.
    pub fn holds(&self, work: WorkId) -> bool {
        self.fresh.iter().any(|(w, _)| *w == work)
            || self.live_of(work).next().is_some()
            || self.routes.iter().any(|r| r.work == work)
            || self.inputs.iter().any(|(w, _)| *w == work)
            || self.opened.iter().flatten().any(|(w, _, _)| *w == work)
    }

    /// A request of work item `work`, whose byte budget has `bytes_left`
    /// ([`Connection::bytes_left`]): it opens a stream as soon as a slot is free, or, if it asks
    /// for a fresh socket and this one already carried a stream, comes out of
    /// [`poll_fresh`](Self::poll_fresh).
    pub fn send(&mut self, work: WorkId, transmit: Transmit, bytes_left: u64) {
        if transmit.fresh_socket && self.used {
            self.fresh.push_back((work, transmit));
        } else {
            self.queue(work, transmit, bytes_left);
        }
    }

    /// Puts a request at the back of the waiting queue; `bytes_left` is its work item's
    /// allowance from now on.
    fn queue(&mut self, work: WorkId, transmit: Transmit, bytes_left: u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.steps += 1;
        let entry = Waiting {
            seq,
            work,
            transmit,
        };
        self.live.insert(entry.key());
        self.allowance.insert(work, bytes_left);
        self.waiting.push_back(entry);
    }

    /// The keys of work item `work`'s waiting requests.
    fn live_of(&self, work: WorkId) -> impl Iterator<Item = &(WorkId, ExchangeId, u64)> {
        self.live
            .range((work, ExchangeId(0), 0)..=(work, ExchangeId(u64::MAX), u64::MAX))
    }

    /// Drops the waiting requests whose keys `gone` holds (taken off `live`): their entries in
    /// the queue turn stale. Work items left with no waiting request lose their allowance.
    fn unqueue(&mut self, gone: Vec<(WorkId, ExchangeId, u64)>) {
        for key in gone {
            self.steps += 1;
            if self.live.remove(&key) {
                self.stale += 1;
            }
            if self.live_of(key.0).next().is_none() {
                self.allowance.remove(&key.0);
            }
        }
        // Compacted once the stale entries outnumber the live ones: each pass over the queue
        // follows at least as many removals.
        if self.stale > STALE_SLACK && self.stale > self.live.len() {
            self.steps += self.waiting.len() as u64;
            let live = &self.live;
            self.waiting.retain(|e| live.contains(&e.key()));
            self.stale = 0;
        }
    }

    /// Takes the first request of the queue that still waits (stale entries are dropped on
    /// the way), with its work item's allowance, off `live`.
    fn pop_waiting(&mut self) -> Option<(Waiting, u64)> {
        while let Some(entry) = self.waiting.pop_front() {
            self.steps += 1;
            if !self.live.remove(&entry.key()) {
                self.stale = self.stale.saturating_sub(1);
                continue;
            }
            let left = self.allowance.get(&entry.work).copied().unwrap_or(0);
            if self.live_of(entry.work).next().is_none() {
                self.allowance.remove(&entry.work);
            }
            return Some((entry, left));
        }
        None
    }

    /// Puts back at the front of the queue a request [`pop_waiting`](Self::pop_waiting) took.
    fn unpop_waiting(&mut self, entry: Waiting, left: u64) {
        self.live.insert(entry.key());
        self.allowance.entry(entry.work).or_insert(left);
        self.waiting.push_front(entry);
    }

    /// Entries of the waiting queue examined and allowance updates handled so far, in all: a
    /// measure of what the queue costs, which grows by a bounded amount per request queued,
    /// opened, updated or dropped, however many requests wait (for tests and benchmarks).
    pub fn queue_steps(&self) -> u64 {
        self.steps
    }

    /// Requests waiting for a stream slot now.
    pub fn waiting(&self) -> usize {
        self.live.len()
    }

    /// Hands a request taken from another socket's [`poll_fresh`](Self::poll_fresh) to work
    /// item `work` of this one: it opens a stream as soon as a slot is free.
    pub fn resend(&mut self, work: WorkId, transmit: Transmit, bytes_left: u64) {
        self.queue(work, transmit, bytes_left);
    }

    /// Work item `work`'s byte budget now has `bytes_left`: the allowance of the streams its
    /// waiting requests open (each request [`send`](Self::send) queues sets it too: a work
    /// item's waiting requests share the last value told).
    pub fn allow(&mut self, work: WorkId, bytes_left: u64) {
        self.steps += 1;
        if let Some(left) = self.allowance.get_mut(&work) {
            *left = bytes_left;
        }
    }

    /// Work item `work`'s connection finished `exchange` ([`Event::ExchangeFinished`]) or
    /// abandoned it (`abandoned`, [`Event::ExchangeAbandoned`]: its stream, if open, is reset
    /// with RST_STREAM(CANCEL)); its request, if still waiting, is dropped.
    pub fn ended(&mut self, work: WorkId, exchange: ExchangeId, abandoned: bool) {
        if let Some(i) = self
            .routes
            .iter()
            .position(|r| r.work == work && r.exchange == exchange)
        {
            let r = self.routes.swap_remove(i);
            if abandoned {
                self.conn.cancel(r.stream);
            }
        }
        let gone: Vec<_> = self
            .live
            .range((work, exchange, 0)..=(work, exchange, u64::MAX))
            .copied()
            .collect();
        self.unqueue(gone);
    }

    /// Takes work item `work` off this socket: its open streams are reset (CANCEL) and its
    /// requests still waiting for a slot are dropped. Returns the inputs its connection must
    /// be handed: each exchange on those streams breaks as closed (in the 2026-07-28 era the
    /// request is re-issued with a new id, to send on the socket the work item goes to next).
    pub fn remove(&mut self, work: WorkId) -> Vec<Input<'static>> {
        let gone: Vec<_> = self.live_of(work).copied().collect();
        self.unqueue(gone);
        let mut inputs = Vec::new();
        let mut i = 0;
        while i < self.routes.len() {
            if self.routes[i].work == work {
                let r = self.routes.swap_remove(i);
                self.conn.cancel(r.stream);
                let e = H2Error::Closed {
                    what: "the work item left the socket",
                };
                inputs.push(Input::WireError {
                    exchange: r.exchange,
                    error: WireError::Http2(e),
                    raw: r.carried,
                });
            } else {
                i += 1;
            }
        }
        inputs
    }

    /// The socket's HTTP/2 connection.
    pub fn client(&self) -> &ClientConnection {
        &self.conn
    }

    /// Whether the socket is done: its connection failed or the server closed it. Close it.
    pub fn is_closed(&self) -> bool {
        self.conn.error().is_some()
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.conn.open_streams()
    }

    /// Opens streams for the waiting requests while slots are free; a request that cannot go
    /// on this socket any more goes to [`poll_fresh`](Self::poll_fresh). Whether any request
    /// moved.
    pub fn open(&mut self) -> bool {
        let mut progress = false;
        if self.live.is_empty() {
            return false;
        }
        // Only the front of the queue is looked at: nothing opens while no slot is free.
        if self.conn.error().is_none() && self.conn.goaway().is_none() && !self.conn.can_open() {
            return false;
        }
        while let Some((entry, left)) = self.pop_waiting() {
            if self.conn.error().is_some() || self.conn.goaway().is_some() {
                self.fresh.push_back((entry.work, entry.transmit));
                progress = true;
                continue;
            }
            if !self.conn.can_open() {
                self.unpop_waiting(entry, left);
                break;
            }
            progress = true;
            match self
                .conn
                .open_stream(self.scheme, &entry.transmit.request, left)
            {
                Ok(stream) => {
                    self.used = true;
                    self.routes.push(Route {
                        stream,
                        work: entry.work,
                        exchange: entry.transmit.exchange,
                        carried: 0,
                    });
                    if let Some(opened) = &mut self.opened {
                        opened.push_back((entry.work, stream, entry.transmit));
                    }
                }
                Err(OpenError::NoSlot { .. }) => {
                    self.unpop_waiting(entry, left);
                    break;
                }
                Err(OpenError::NotAccepting) => self.fresh.push_back((entry.work, entry.transmit)),
                Err(OpenError::InvalidHeader { .. }) => {
                    let e = H2Error::Malformed {
                        what: "a request header cannot be sent over HTTP/2",
                    };
                    self.inputs.push_back((
                        entry.work,
                        Input::WireError {
                            exchange: entry.transmit.exchange,
                            error: WireError::Http2(e),
                            raw: 0,
                        },
                    ));
                }
            }
        }
        progress
    }

    /// Bytes to write to the socket. Opens the streams the waiting requests asked for first.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.open();
        self.conn.poll_transmit()
    }

    /// A request that must go on another socket: this one is going away or failed, or the
    /// request is a retry that asks for a fresh socket. Move its work item.
    #[must_use]
    pub fn poll_fresh(&mut self) -> Option<(WorkId, Transmit)> {
        self.fresh.pop_front()
    }

    /// Whether the requests that open a stream are kept for [`poll_opened`](Self::poll_opened)
    /// (off by default: they are dropped once sent). Whoever turns it on must drain
    /// `poll_opened` after every input, as it drains the inputs.
    pub fn report_opened(&mut self, on: bool) {
        self.opened = on.then(VecDeque::new);
    }

    /// The next request that opened a stream, with its work item and its stream, in the
    /// order they opened (only while [`report_opened`](Self::report_opened) is on): what an
    /// observer needs to follow each exchange over the socket.
    #[must_use]
    pub fn poll_opened(&mut self) -> Option<(WorkId, StreamId, Transmit)> {
        self.opened.as_mut()?.pop_front()
    }

    /// The next input of a stream, with the work item whose connection must be handed it
    /// ([`Connection::handle`]): every frame of the stream is charged to that work item in
    /// the `raw` of its inputs (1xx heads and empty DATA frames with the next one).
    #[must_use]
    pub fn poll_input(&mut self) -> Option<(WorkId, Input<'_>)> {
        if let Some(routed) = self.inputs.pop_front() {
            return Some(routed);
        }
        loop {
            let ev = self.conn.poll_event()?;
            let Some(i) = self.routes.iter().position(|r| r.stream == ev.stream()) else {
                continue;
            };
            let (work, exchange) = (self.routes[i].work, self.routes[i].exchange);
            let raw = ev.raw().saturating_add(self.routes[i].carried);
            self.routes[i].carried = 0;
            let event = match ev {
                StreamEvent::Informational { .. } => {
                    self.routes[i].carried = raw;
                    continue;
                }
                StreamEvent::Head {
                    status, headers, ..
                } => {
                    let headers: Vec<(String, Vec<u8>)> = headers
                        .into_iter()
                        .map(|h| (String::from_utf8_lossy(&h.name).into_owned(), h.value))
                        .collect();
                    let content_length = wire::header_str(&headers, "content-length")
                        .and_then(|v| v.parse::<u64>().ok());
                    let head = ResponseHead {
                        status,
                        headers,
                        content_length,
                        close_delimited: false,
                    };
                    ResponseEvent::Head { head, raw }
                }
                StreamEvent::Data { data, .. } if data.is_empty() => {
                    self.routes[i].carried = raw;
                    continue;
                }
                StreamEvent::Data { data, .. } => {
                    self.data = data;
                    ResponseEvent::Body {
                        bytes: &self.data,
                        raw,
                        owner: None,
                    }
                }
                StreamEvent::End { .. } => {
                    self.routes.swap_remove(i);
                    ResponseEvent::End {
                        reusable: true,
                        raw,
                    }
                }
                StreamEvent::Failed { error, .. } => {
                    self.routes.swap_remove(i);
                    let input = Input::WireError {
                        exchange,
                        error: WireError::Http2(error),
                        raw,
                    };
                    return Some((work, input));
                }
            };
            return Some((work, Input::Response { exchange, event }));
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called for the socket itself
    /// (the SETTINGS acknowledgement); the work items' deadlines are their connections'.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.conn.poll_timeout()
    }

    /// Bytes from the socket, in any split. A connection error (returned) fails every stream:
    /// each work item hears of it through its exchange's input.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<(), H2Error> {
        self.conn.handle_bytes(now, bytes)
    }

    /// The server closed the socket: every open stream fails.
    pub fn handle_eof(&mut self) {
        self.conn.handle_eof();
    }

    /// Time has reached `now`: the SETTINGS acknowledgement.
    pub fn handle_timeout(&mut self, now: Instant) {
        // A connection failure is delivered to every stream as its input.
        let _ = self.conn.handle_timeout(now);
    }
}

/// One HTTP/2 socket shared by several work items ([`Connection`]s) that it owns, each keeping
/// its own budgets: a thin layer over [`H2Streams`], which owns none.
///
/// Every exchange a work item starts becomes a stream of this socket's [`ClientConnection`]:
/// the stream's allowance is what the work item's byte budget has left, and every frame of the
/// stream (frame headers, padding, header blocks, DATA) is charged to that work item when its
/// events are handed in ([`Connection::handle`]). Stream-0 frames and frames
/// for streams already reset are charged to the socket's own ledger
/// ([`Budget::H2SocketBytes`](crate::Budget::H2SocketBytes)). An exchange the work item
/// abandons (a cancellation, a failure) is reset with RST_STREAM(CANCEL) and the socket stays
/// open; a legacy era still sends its `notifications/cancelled` as a request of its own.
///
/// A request the server never processed (REFUSED_STREAM, or above a GOAWAY's last stream) is
/// sent once more by its work item on a fresh socket, with a new JSON-RPC id; a broken stream of
/// the 2026-07-28 era (reset, or its connection lost) is re-issued with a new id, on this socket
/// if it can still carry it. Such a request, and every request that
/// cannot go on this socket any more (it is going away or failed), comes out of
/// [`poll_fresh`](Self::poll_fresh); move the work item with [`remove`](Self::remove) and
/// [`add`](Self::add) to a new socket and hand the request over with
/// [`resend`](Self::resend).
///
/// # The run loop
///
/// Add work items, start their operations through [`connection_mut`](Self::connection_mut),
/// then drain the outputs: [`poll_transmit`](Self::poll_transmit) (bytes to write, the preface
/// and SETTINGS first), [`poll_fresh`](Self::poll_fresh) and [`poll_event`](Self::poll_event)
/// (each work item's events); then read [`poll_timeout`](Self::poll_timeout) and feed what the
/// socket and the clock bring: [`handle_bytes`](Self::handle_bytes),
/// [`handle_eof`](Self::handle_eof), [`handle_timeout`](Self::handle_timeout). Drain again
/// after every input and after every operation started. Events of the exchanges
/// ([`Event::ExchangeFinished`], [`Event::ExchangeAbandoned`]) concern streams, which this type
/// already handled: the socket stays open until [`is_closed`](Self::is_closed) says otherwise.
///
/// Here a scripted server accepts any SETTINGS and answers the one stream a modern
/// `tools/list` opens:
///
/// ```
/// use mcp_sansio::h2::H2Config;
/// use mcp_sansio::mux::H2Socket;
/// use mcp_sansio::{Config, Connection, Era, EraHint, Event, Instant};
///
/// let mut config = Config::new("https://mcp.example.com/mcp")?;
/// config.era_hint = Some(EraHint { era: Era::Modern, version: "2026-07-28".into() });
/// let now = Instant::ZERO;
/// let mut socket = H2Socket::new(now, H2Config::default(), "https");
/// let work = socket.add(Connection::new(config)?);
/// let conn = socket.connection_mut(work).unwrap();
/// conn.connect(now);
/// conn.list_tools(now);
///
/// // The server: its SETTINGS and the acknowledgement of ours, then the answer on stream 1,
/// // the client's first stream (RFC 9113 §5.1.1), which the listing opened.
/// while socket.poll_transmit(now).is_some() {}
/// assert_eq!(socket.open_streams(), 1);
/// // A frame (RFC 9113 §4.1): 24-bit length, type, flags, stream id, payload.
/// fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
///     let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
///     f.extend([kind, flags]);
///     f.extend(stream.to_be_bytes());
///     f.extend_from_slice(payload);
///     f
/// }
/// // HPACK (RFC 7541): `:status: 200` is static index 8; `content-type` (index 31) with a
/// // literal value.
/// let mut block = vec![0x88, 0x5f, 16];
/// block.extend_from_slice(b"application/json");
/// let body = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;
/// let mut wire = frame(0x4, 0, 0, &[]); // SETTINGS
/// wire.extend(frame(0x4, 0x1, 0, &[])); // SETTINGS, ACK
/// wire.extend(frame(0x1, 0x4, 1, &block)); // HEADERS, END_HEADERS
/// wire.extend(frame(0x0, 0x1, 1, body)); // DATA, END_STREAM
/// for piece in wire.chunks(3) {
///     socket.handle_bytes(now, piece)?; // any split, down to one byte
/// }
///
/// let mut tools = None;
/// while let Some((w, event)) = socket.poll_event(now) {
///     assert_eq!(w, work);
///     if let Event::ToolsListed(catalog) = event {
///         tools = Some(catalog.tools.len());
///     }
/// }
/// assert_eq!(tools, Some(1));
/// assert!(!socket.is_closed()); // the socket serves the next exchange
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
pub struct H2Socket {
    streams: H2Streams,
    items: Vec<Option<Connection>>,
    events: VecDeque<(WorkId, Event)>,
}

/// The socket's HTTP/2 connection and its work items, never a credential: each
/// [`Connection`] and [`Transmit`] redacts its own.
impl core::fmt::Debug for H2Socket {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("H2Socket")
            .field("streams", &self.streams)
            .field("items", &self.items)
            .field("events", &self.events.len())
            .finish_non_exhaustive()
    }
}

impl H2Socket {
    /// A new socket's HTTP/2 connection at `now` (the preface and our SETTINGS are queued);
    /// `scheme` is `https`, or `http` for HTTP/2 with prior knowledge (compared
    /// case-insensitively; anything else is taken as `https`).
    pub fn new(now: Instant, config: H2Config, scheme: &str) -> H2Socket {
        H2Socket {
            streams: H2Streams::new(now, config, scheme),
            items: Vec::new(),
            events: VecDeque::new(),
        }
    }

    /// Adds a work item. Its exchanges become streams of this socket.
    ///
    /// The slot of a work item that was [`remove`](Self::remove)d is used again once nothing
    /// of it is left to hand out (no event or request of it waiting in this socket), so a socket
    /// that serves sessions coming and going holds as many slots as it ever had work items at
    /// once (see [`work_slots`](Self::work_slots)).
    pub fn add(&mut self, connection: Connection) -> WorkId {
        let free = (0..self.items.len()).find(|&i| {
            self.items[i].is_none()
                && !self.events.iter().any(|(w, _)| w.0 == i)
                && !self.streams.holds(WorkId(i))
        });
        match free {
            Some(i) => {
                self.items[i] = Some(connection);
                WorkId(i)
            }
            None => {
                self.items.push(Some(connection));
                WorkId(self.items.len() - 1)
            }
        }
    }

    /// Work item slots held: those of the items here and of removed items whose slot is not
    /// yet free again.
    pub fn work_slots(&self) -> usize {
        self.items.len()
    }

    /// The work item `work`, if it is here.
    pub fn connection(&self, work: WorkId) -> Option<&Connection> {
        self.items.get(work.0).and_then(Option::as_ref)
    }

    /// The work item `work`, to start operations on, if it is here.
    pub fn connection_mut(&mut self, work: WorkId) -> Option<&mut Connection> {
        self.items.get_mut(work.0).and_then(Option::as_mut)
    }

    /// Takes work item `work` off this socket: its open streams are reset (CANCEL) and its
    /// exchanges on them break as closed (in the 2026-07-28 era the request is re-issued with
    /// a new id, sent by the socket the work item is added to next); requests of it still
    /// waiting for a slot are dropped.
    pub fn remove(&mut self, now: Instant, work: WorkId) -> Option<Connection> {
        let mut conn = self.items.get_mut(work.0)?.take()?;
        for input in self.streams.remove(work) {
            conn.handle(now, input);
        }
        Some(conn)
    }

    /// Hands a request taken from another socket's [`poll_fresh`](Self::poll_fresh) to work
    /// item `work` of this one: it opens a stream as soon as a slot is free.
    pub fn resend(&mut self, work: WorkId, transmit: Transmit) {
        let left = self.connection(work).map_or(0, Connection::bytes_left);
        self.streams.resend(work, transmit, left);
    }

    /// The socket's streams, which route to the work items owned here.
    pub fn streams(&self) -> &H2Streams {
        &self.streams
    }

    /// The socket's HTTP/2 connection.
    pub fn client(&self) -> &ClientConnection {
        self.streams.client()
    }

    /// Whether the socket is done: its connection failed or the server closed it. Close it.
    pub fn is_closed(&self) -> bool {
        self.streams.is_closed()
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.open_streams()
    }

    /// Bytes to write to the socket. Opens the streams the work items asked for first.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.pump(now);
        self.streams.poll_transmit()
    }

    /// A request that must go on another socket: this one is going away or failed, or the
    /// request is a retry that asks for a fresh socket. Move its work item (see the type's docs).
    #[must_use]
    pub fn poll_fresh(&mut self) -> Option<(WorkId, Transmit)> {
        self.streams.poll_fresh()
    }

    /// Whether the requests that open a stream are kept for [`poll_opened`](Self::poll_opened)
    /// (off by default: they are dropped once sent). Whoever turns it on must drain
    /// `poll_opened` after every input, as it drains the events.
    pub fn report_opened(&mut self, on: bool) {
        self.streams.report_opened(on);
    }

    /// The next request that opened a stream, with its work item and its stream, in the
    /// order they opened (only while [`report_opened`](Self::report_opened) is on): what an
    /// observer needs to follow each exchange over the socket.
    #[must_use]
    pub fn poll_opened(&mut self) -> Option<(WorkId, StreamId, Transmit)> {
        self.streams.poll_opened()
    }

    /// The next event of a work item.
    #[must_use]
    pub fn poll_event(&mut self, now: Instant) -> Option<(WorkId, Event)> {
        self.pump(now);
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Self::handle_timeout) must next be called, if anything waits on
    /// time (the SETTINGS acknowledgement, any work item's deadlines).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.items
            .iter()
            .flatten()
            .filter_map(Connection::poll_timeout)
            .chain(self.streams.poll_timeout())
            .min()
    }

    /// Bytes from the socket, in any split. A connection error (returned) fails every stream:
    /// each work item hears of it through its exchange.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<(), H2Error> {
        let r = self.streams.handle_bytes(now, bytes);
        self.pump(now);
        r
    }

    /// The server closed the socket: every open stream fails.
    pub fn handle_eof(&mut self, now: Instant) {
        self.streams.handle_eof();
        self.pump(now);
    }

    /// Time has reached `now`: the SETTINGS acknowledgement and every work item's deadlines.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.streams.handle_timeout(now);
        for conn in self.items.iter_mut().flatten() {
            conn.handle_timeout(now);
        }
        self.pump(now);
    }

    /// Moves everything that can move: work items' requests onto streams, stream inputs to
    /// their work items, work items' events out, until nothing changes.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut progress = false;
            // Requests of the work items, with what each has left as its streams open.
            for (w, slot) in self.items.iter_mut().enumerate() {
                let Some(conn) = slot else { continue };
                while let Some(t) = conn.poll_transmit() {
                    progress = true;
                    self.streams.send(WorkId(w), t, conn.bytes_left());
                }
                self.streams.allow(WorkId(w), conn.bytes_left());
            }
            // Streams for them, while slots are free.
            progress |= self.streams.open();
            // Stream inputs to their work items.
            while let Some((w, input)) = self.streams.poll_input() {
                progress = true;
                if let Some(conn) = self.items.get_mut(w.0).and_then(Option::as_mut) {
                    conn.handle(now, input);
                }
            }
            // Work items' events; abandoned exchanges reset their streams.
            for (w, slot) in self.items.iter_mut().enumerate() {
                let Some(conn) = slot else { continue };
                while let Some(event) = conn.poll_event() {
                    progress = true;
                    match &event {
                        Event::ExchangeAbandoned { exchange } => {
                            self.streams.ended(WorkId(w), *exchange, true)
                        }
                        Event::ExchangeFinished { exchange, .. } => {
                            self.streams.ended(WorkId(w), *exchange, false)
                        }
                        _ => {}
                    }
                    self.events.push_back((WorkId(w), event));
                }
            }
            if !progress {
                break;
            }
        }
    }
}
