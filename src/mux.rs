//! Several connections over one socket: [`H2Socket`] owns one HTTP/2 socket's
//! [`ClientConnection`] and routes each stream to the [`Connection`] whose exchange it carries.
//!
//! This layer sits above both the connection's state machine and the HTTP/2 codec
//! ([`crate::h2`]), which know nothing of each other.

use crate::prelude::*;

use alloc::collections::VecDeque;

use crate::connection::{Connection, Event, ExchangeId, Transmit};
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
    work: usize,
    exchange: ExchangeId,
    /// Raw octets of 1xx responses, charged with the stream's next event.
    carried: u64,
}

/// One HTTP/2 socket shared by several work items ([`Connection`]s), each keeping its own
/// budgets.
///
/// Every exchange a work item starts becomes a stream of this socket's [`ClientConnection`]:
/// the stream's allowance is what the work item's byte budget has left, and every frame of the
/// stream (frame headers, padding, header blocks, DATA) is charged to that work item when its
/// events are delivered ([`Connection::handle_response_event`]). Stream-0 frames and frames
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
    conn: ClientConnection,
    scheme: Scheme,
    items: Vec<Option<Connection>>,
    routes: Vec<Route>,
    /// Requests waiting for a stream slot of this socket.
    waiting: VecDeque<(usize, Transmit)>,
    /// Requests that must go on another socket.
    fresh: VecDeque<(WorkId, Transmit)>,
    events: VecDeque<(WorkId, Event)>,
    /// Whether a stream was ever opened (a fresh socket has none).
    used: bool,
    /// The requests that opened a stream, kept for [`poll_opened`](Self::poll_opened) when
    /// [`report_opened`](Self::report_opened) asked for them (`None`: dropped).
    opened: Option<VecDeque<(WorkId, StreamId, Transmit)>>,
}

/// The socket's HTTP/2 connection and its work items, never a credential: each
/// [`Connection`] and [`Transmit`] redacts its own.
impl core::fmt::Debug for H2Socket {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("H2Socket")
            .field("conn", &self.conn)
            .field("scheme", &self.scheme)
            .field("items", &self.items)
            .field("waiting", &self.waiting)
            .field("fresh", &self.fresh)
            .field("events", &self.events.len())
            .field("used", &self.used)
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

impl H2Socket {
    /// A new socket's HTTP/2 connection at `now` (the preface and our SETTINGS are queued);
    /// `scheme` is `https`, or `http` for HTTP/2 with prior knowledge (compared
    /// case-insensitively; anything else is taken as `https`).
    pub fn new(now: Instant, config: H2Config, scheme: &str) -> H2Socket {
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else {
            Scheme::Https
        };
        H2Socket {
            conn: ClientConnection::new(now, config),
            scheme,
            items: Vec::new(),
            routes: Vec::new(),
            waiting: VecDeque::new(),
            fresh: VecDeque::new(),
            events: VecDeque::new(),
            used: false,
            opened: None,
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
                && !self.fresh.iter().any(|(w, _)| w.0 == i)
                && !self.events.iter().any(|(w, _)| w.0 == i)
                && !self.waiting.iter().any(|(w, _)| *w == i)
                && !self.routes.iter().any(|r| r.work == i)
                && !self.opened.iter().flatten().any(|(w, _, _)| w.0 == i)
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
        self.waiting.retain(|(w, _)| *w != work.0);
        let mut i = 0;
        while i < self.routes.len() {
            if self.routes[i].work == work.0 {
                let r = self.routes.swap_remove(i);
                self.conn.cancel(r.stream);
                let e = H2Error::Closed {
                    what: "the work item left the socket",
                };
                conn.handle_wire_error(now, r.exchange, WireError::Http2(e), r.carried);
            } else {
                i += 1;
            }
        }
        Some(conn)
    }

    /// Hands a request taken from another socket's [`poll_fresh`](Self::poll_fresh) to work
    /// item `work` of this one: it opens a stream as soon as a slot is free.
    pub fn resend(&mut self, work: WorkId, transmit: Transmit) {
        self.waiting.push_back((work.0, transmit));
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

    /// Bytes to write to the socket. Opens the streams the work items asked for first.
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        self.pump(now);
        self.conn.poll_transmit()
    }

    /// A request that must go on another socket: this one is going away or failed, or the
    /// request is a retry that asks for a fresh socket. Move its work item (see the type's docs).
    #[must_use]
    pub fn poll_fresh(&mut self) -> Option<(WorkId, Transmit)> {
        self.fresh.pop_front()
    }

    /// Whether the requests that open a stream are kept for [`poll_opened`](Self::poll_opened)
    /// (off by default: they are dropped once sent). Whoever turns it on must drain
    /// `poll_opened` after every input, as it drains the events.
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
            .chain(self.conn.poll_timeout())
            .min()
    }

    /// Bytes from the socket, in any split. A connection error (returned) fails every stream:
    /// each work item hears of it through its exchange.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) -> Result<(), H2Error> {
        let r = self.conn.handle_bytes(now, bytes);
        self.pump(now);
        r
    }

    /// The server closed the socket: every open stream fails.
    pub fn handle_eof(&mut self, now: Instant) {
        self.conn.handle_eof();
        self.pump(now);
    }

    /// Time has reached `now`: the SETTINGS acknowledgement and every work item's deadlines.
    pub fn handle_timeout(&mut self, now: Instant) {
        // A connection failure is delivered to every stream as its event.
        let _ = self.conn.handle_timeout(now);
        for conn in self.items.iter_mut().flatten() {
            conn.handle_timeout(now);
        }
        self.pump(now);
    }

    /// Moves everything that can move: work items' requests onto streams, stream events to
    /// their exchanges, work items' events out, until nothing changes.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut progress = false;
            // Requests of the work items.
            for (w, slot) in self.items.iter_mut().enumerate() {
                let Some(conn) = slot else { continue };
                while let Some(t) = conn.poll_transmit() {
                    progress = true;
                    if t.fresh_socket && self.used {
                        self.fresh.push_back((WorkId(w), t));
                    } else {
                        self.waiting.push_back((w, t));
                    }
                }
            }
            // Streams for them, while slots are free.
            while let Some((w, t)) = self.waiting.pop_front() {
                let Some(conn) = self.items.get_mut(w).and_then(Option::as_mut) else {
                    continue;
                };
                let request = &t.request;
                if self.conn.error().is_some() || self.conn.goaway().is_some() {
                    self.fresh.push_back((WorkId(w), t));
                    progress = true;
                    continue;
                }
                if !self.conn.can_open() {
                    self.waiting.push_front((w, t));
                    break;
                }
                progress = true;
                match self
                    .conn
                    .open_stream(self.scheme, request, conn.bytes_left())
                {
                    Ok(stream) => {
                        self.used = true;
                        self.routes.push(Route {
                            stream,
                            work: w,
                            exchange: t.exchange,
                            carried: 0,
                        });
                        if let Some(opened) = &mut self.opened {
                            opened.push_back((WorkId(w), stream, t));
                        }
                    }
                    Err(OpenError::NoSlot { .. }) => {
                        self.waiting.push_front((w, t));
                        break;
                    }
                    Err(OpenError::NotAccepting) => self.fresh.push_back((WorkId(w), t)),
                    Err(OpenError::InvalidHeader { .. }) => {
                        let e = H2Error::Malformed {
                            what: "a request header cannot be sent over HTTP/2",
                        };
                        conn.handle_wire_error(now, t.exchange, WireError::Http2(e), 0);
                    }
                }
            }
            // Stream events to their exchanges.
            while let Some(ev) = self.conn.poll_event() {
                progress = true;
                self.deliver(now, ev);
            }
            // Work items' events; abandoned exchanges reset their streams.
            for (w, slot) in self.items.iter_mut().enumerate() {
                let Some(conn) = slot else { continue };
                while let Some(event) = conn.poll_event() {
                    progress = true;
                    let exchange = match &event {
                        Event::ExchangeAbandoned { exchange } => Some((*exchange, true)),
                        Event::ExchangeFinished { exchange, .. } => Some((*exchange, false)),
                        _ => None,
                    };
                    if let Some((x, cancel)) = exchange {
                        if let Some(i) = self
                            .routes
                            .iter()
                            .position(|r| r.work == w && r.exchange == x)
                        {
                            let r = self.routes.swap_remove(i);
                            if cancel {
                                self.conn.cancel(r.stream);
                            }
                        }
                        self.waiting
                            .retain(|(ww, t)| !(*ww == w && t.exchange == x));
                    }
                    self.events.push_back((WorkId(w), event));
                }
            }
            if !progress {
                break;
            }
        }
    }

    /// One stream event, translated for the exchange it carries.
    fn deliver(&mut self, now: Instant, ev: StreamEvent) {
        let Some(i) = self.routes.iter().position(|r| r.stream == ev.stream()) else {
            return;
        };
        let (work, exchange) = (self.routes[i].work, self.routes[i].exchange);
        let raw = ev.raw().saturating_add(self.routes[i].carried);
        self.routes[i].carried = 0;
        let Some(conn) = self.items.get_mut(work).and_then(Option::as_mut) else {
            return;
        };
        match ev {
            StreamEvent::Informational { .. } => self.routes[i].carried = raw,
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
                conn.handle_response_event(now, exchange, ResponseEvent::Head { head, raw });
            }
            StreamEvent::Data { data, .. } if data.is_empty() => self.routes[i].carried = raw,
            StreamEvent::Data { data, .. } => {
                let event = ResponseEvent::Body {
                    bytes: &data,
                    raw,
                    owner: None,
                };
                conn.handle_response_event(now, exchange, event);
            }
            StreamEvent::End { .. } => {
                self.routes.swap_remove(i);
                let event = ResponseEvent::End {
                    reusable: true,
                    raw,
                };
                conn.handle_response_event(now, exchange, event);
            }
            StreamEvent::Failed { error, .. } => {
                self.routes.swap_remove(i);
                conn.handle_wire_error(now, exchange, WireError::Http2(error), raw);
            }
        }
    }
}
