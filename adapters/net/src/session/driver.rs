//! The session driver both adapters run: the core's [`Connection`], its recording, the clock, the
//! era hints and the observer, dispatching the I/O through the small [`Io`] trait.
//!
//! An adapter owns only how bytes move on its runtime. Its run loop is always the same:
//!
//! 1. start an operation with [`SessionDriver::start`];
//! 2. [`pump`](SessionDriver::pump): the driver drains the core, hands every request, socket
//!    verdict and read permission to the adapter's [`Io`], and returns the operation's result
//!    once the core reported its one completion event;
//! 3. otherwise wait as [`wait`](SessionDriver::wait) says, for a [`Report`] of a socket (fed
//!    with [`feed`](SessionDriver::feed)) or for the deadline ([`timeout`](SessionDriver::timeout)),
//!    and pump again.
//!
//! A session that speaks HTTP/2 ([`SessionDriver::join_h2`]) has no socket of its own: its
//! exchanges are streams of the origin's shared connection ([`SharedH2`]), whose socket readers
//! hand every input of the session's streams to its connection, put its events in the session's
//! inbox and call its waker; the adapter then pumps again (nothing to feed), and still calls
//! [`timeout`](SessionDriver::timeout) at the deadline. Either way the inputs reach the connection
//! from a socket that does not own it ([`Http1Socket`] here, the core's `H2Streams` there), and
//! one pump drains it.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::socket::{Http1Socket, OwnedBytes};
use mcp_sansio::{
    CallResult, Catalog, Completion, Config, Connection, Era, Error, Event, ExchangeId, Input,
    Instant, Operation, ServerInfo, Transmit,
};
use mcp_sansio_transcript::{RecordedOperation, Recorder, Recording};

use crate::session::client::{HintBook, Shared};
use crate::session::h2share::{Member, SharedH2, Waker};
use crate::session::io::{CallObserver, Io, Report, Start, Wait};
use crate::trace::{OpKind, SessionTrace};

std::thread_local! {
    /// The body buffer last taken back from a session that ran an operation on this thread
    /// ([`Connection::take_body_buffer`]), given to the next operation that starts on it: a
    /// large tool result then fills pages already provided rather than new ones. At most one
    /// buffer per thread, no larger than the largest call answer a session of this thread read
    /// (within its byte budget).
    static BODY_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The session's connection: alone (HTTP/1.1, one socket per exchange) or as a work item of
/// the origin's shared HTTP/2 connection.
enum Core {
    Http1(Box<Connection>),
    Http2(Box<H2Core>),
}

/// A session's place on the origin's shared HTTP/2 connection; leaving it (drop) resets the
/// session's streams; the last session to leave leaves the socket idle for the next one.
struct H2Core {
    conn: Arc<SharedH2>,
    member: Member,
    /// The work item's configuration (the work item itself lives on the socket).
    config: Config,
    /// The legacy session id, as of the last pump.
    session_id: Option<String>,
}

impl Drop for H2Core {
    fn drop(&mut self) {
        self.conn.leave(self.member);
    }
}

/// One session: the connection, its recording and what it negotiated.
pub struct SessionDriver {
    core: Core,
    /// Decodes the responses of an HTTP/1.1 session's exchanges.
    http1: Http1Socket,
    hints: Arc<HintBook>,
    /// Where the session's era hints live ([`crate::cache::hint_key`]).
    hint_key: String,
    origin: String,
    /// The core's time zero on the adapter's clock.
    zero: std::time::Instant,
    running: Option<Operation>,
    outcome: Option<Result<Completion, Error>>,
    /// Exchanges the adapter serves: started, not yet finished or abandoned by the core.
    live: BTreeSet<ExchangeId>,
    /// Exchanges whose bytes were fed: they read on once the outputs are drained.
    fed: BTreeSet<ExchangeId>,
    version: String,
    era: Era,
    server_info: Option<ServerInfo>,
    /// The server's `capabilities` as it sent them (raw JSON), from the last negotiation.
    capabilities: Option<Box<serde_json::value::RawValue>>,
    /// The server's `instructions`, from the last negotiation.
    instructions: Option<String>,
    recording: Option<Box<Recording>>,
    /// The spans of the running operation and its exchanges (feature `tracing`).
    trace: SessionTrace,
    /// The session's handle on the client's catalog cache, if on.
    cache: Option<crate::cache::SessionCache>,
}

impl std::fmt::Debug for SessionDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("origin", &self.origin)
            .field("version", &self.version)
            .field("era", &self.era)
            .field("server_info", &self.server_info)
            .field("open_exchanges", &self.live.len())
            .finish_non_exhaustive()
    }
}

/// Places the core's timeline, whose zero is `zero` on the adapter's clock, on the wall clock
/// for the `iat` of a DPoP binding's proofs and the times of a task's handle
/// ([`Config::unix_at_zero`]).
fn dpop_clock(config: &mut Config, zero: std::time::Instant) {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    config.unix_at_zero = wall.saturating_sub(zero.elapsed());
    if let Some(binding) = &mut config.dpop {
        binding.unix_at_zero = config.unix_at_zero;
    }
}

impl SessionDriver {
    /// A session of the client `shared` with `config`: the era hint learnt for its URL and
    /// authorization context is offered (when hints are on and `config` has none), and
    /// recording starts when the client records. Nothing is sent before [`start`](Self::start).
    pub fn new<S>(shared: &Shared<S>, mut config: Config) -> Result<SessionDriver, Error> {
        let origin = config.endpoint.origin();
        shared
            .hints
            .offer(&crate::cache::hint_key(&config), &mut config);
        dpop_clock(&mut config, std::time::Instant::now());
        let recording = shared.sink.as_ref().map(|sink| {
            Box::new(Recording::new(
                &config,
                Instant::ZERO,
                sink.clone(),
                shared.next_session(),
            ))
        });
        let conn = Connection::new(config)?;
        Ok(SessionDriver::with_core(
            Core::Http1(Box::new(conn)),
            origin,
            shared,
            recording,
        ))
    }

    /// A session of the client `shared` whose exchanges are streams of the origin's shared
    /// HTTP/2 connection `conn` (from [`Shared::h2_connection`], or just opened and
    /// [registered](Shared::h2_register)); `wake` is called whenever the session has events to
    /// handle (the adapter then pumps). `Ok(None)` if `conn` was shut meanwhile: dial again.
    /// A session of a client that records joins a connection of its own
    /// ([`Shared::h2_recorded`]), which records it as an HTTP/2 transcript.
    pub fn join_h2<S>(
        shared: &Shared<S>,
        mut config: Config,
        conn: Arc<SharedH2>,
        wake: Waker,
    ) -> Result<Option<SessionDriver>, Error> {
        let origin = config.endpoint.origin();
        shared
            .hints
            .offer(&crate::cache::hint_key(&config), &mut config);
        dpop_clock(&mut config, conn.zero());
        let Some(member) = conn.join(config.clone(), wake)? else {
            return Ok(None);
        };
        let zero = conn.zero();
        let core = Core::Http2(Box::new(H2Core {
            conn,
            member,
            config,
            session_id: None,
        }));
        let mut driver = SessionDriver::with_core(core, origin, shared, None);
        driver.zero = zero;
        Ok(Some(driver))
    }

    fn with_core<S>(
        core: Core,
        origin: String,
        shared: &Shared<S>,
        recording: Option<Box<Recording>>,
    ) -> SessionDriver {
        let config = match &core {
            Core::Http1(conn) => conn.config(),
            Core::Http2(h) => &h.config,
        };
        let hint_key = crate::cache::hint_key(config);
        let cache = shared
            .cache
            .as_ref()
            .map(|c| crate::cache::SessionCache::new(c.clone(), config));
        SessionDriver {
            cache,
            core,
            http1: Http1Socket::new(),
            hints: shared.hints.clone(),
            hint_key,
            origin,
            zero: std::time::Instant::now(),
            running: None,
            outcome: None,
            live: BTreeSet::new(),
            fed: BTreeSet::new(),
            version: String::new(),
            era: Era::Modern,
            server_info: None,
            capabilities: None,
            instructions: None,
            recording,
            trace: SessionTrace::default(),
        }
    }

    /// Runs `f` on the session's connection (on the shared HTTP/2 connection, under its lock).
    fn on_conn(&mut self, f: impl FnOnce(&mut Connection)) {
        match &mut self.core {
            Core::Http1(c) => f(c),
            Core::Http2(h) => {
                let _ = h.conn.with(h.member, f);
            }
        }
    }

    /// Starts an operation: records `op` (when recording) and runs `f` on the session's
    /// connection with the instant it is recorded at. An HTTP/2 session's connection records and
    /// runs it under its lock, at its own instant.
    fn begin(
        &mut self,
        op: impl FnOnce() -> RecordedOperation,
        f: impl FnOnce(&mut Connection, Instant),
    ) {
        let now = self.now();
        match &mut self.core {
            Core::Http1(_) => {
                self.record_op(now, op);
                if let Core::Http1(c) = &mut self.core {
                    f(c, now);
                }
            }
            Core::Http2(h) => {
                let op = h.conn.is_recorded().then(op);
                let _ = h.conn.start(h.member, op, f);
            }
        }
    }

    /// The HTTP version the session's exchanges run on: `"HTTP/2"` or `"HTTP/1.1"`.
    pub fn http_version(&self) -> &'static str {
        match self.core {
            Core::Http1(_) => "HTTP/1.1",
            Core::Http2(_) => "HTTP/2",
        }
    }

    /// The connection's configuration.
    pub fn config(&self) -> &Config {
        match &self.core {
            Core::Http1(c) => c.config(),
            Core::Http2(h) => &h.config,
        }
    }

    /// The normalised origin: the pool's key.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The negotiated era.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The server's name and version, if it reported them (a modern era hint connects without a
    /// request, so without them).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server_info.as_ref()
    }

    /// The server's `capabilities` as raw JSON, as the core kept them
    /// ([`Event::Connected`]'s): absent after a modern era hint (which connects without a
    /// request), when the server sent none, or when they were too large to keep.
    pub fn capabilities(&self) -> Option<&serde_json::value::RawValue> {
        self.capabilities.as_deref()
    }

    /// The server's `instructions` (untrusted text, cut by the core to its bound), under the same
    /// conditions as [`capabilities`](Self::capabilities).
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<&str> {
        match &self.core {
            Core::Http1(c) => c.session_id(),
            Core::Http2(h) => h.session_id.as_deref(),
        }
    }

    /// Raw bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        match &self.core {
            Core::Http1(c) => c.bytes_read(),
            Core::Http2(h) => h.conn.read(h.member, Connection::bytes_read).unwrap_or(0),
        }
    }

    /// Raw bytes the session may still read (its byte budget's remainder).
    pub fn bytes_left(&self) -> u64 {
        match &self.core {
            Core::Http1(c) => c.bytes_left(),
            Core::Http2(h) => h.conn.read(h.member, Connection::bytes_left).unwrap_or(0),
        }
    }

    /// The shared HTTP/2 connection the session's exchanges run on, if it speaks HTTP/2.
    pub fn h2_connection(&self) -> Option<&Arc<SharedH2>> {
        match &self.core {
            Core::Http1(_) => None,
            Core::Http2(h) => Some(&h.conn),
        }
    }

    /// Exchanges the adapter serves now.
    pub fn open_exchanges(&self) -> usize {
        self.live.len()
    }

    /// Now on the core's clock, in whole microseconds (a transcript's resolution, so that a
    /// recording replays at the very instants the core saw).
    fn now(&self) -> Instant {
        let micros = u64::try_from(self.zero.elapsed().as_micros()).unwrap_or(u64::MAX);
        Instant::from_duration(Duration::from_micros(micros))
    }

    fn rec(&mut self) -> Option<&mut Recorder> {
        self.recording.as_deref_mut().map(Recording::recorder)
    }

    fn record_op(&mut self, now: Instant, op: impl FnOnce() -> RecordedOperation) {
        if let Some(r) = self.rec() {
            r.operation(now, op());
        }
    }

    /// Starts `op`; [`pump`](Self::pump) until it returns the result.
    pub fn start(&mut self, op: Start<'_>) {
        self.outcome = None;
        let http_version = self.http_version();
        let bytes_read = self.bytes_read();
        let config = match &self.core {
            Core::Http1(c) => c.config(),
            Core::Http2(h) => &h.config,
        };
        let kind = match op {
            Start::Connect => OpKind::Connect,
            Start::ListTools => OpKind::List,
            Start::CallTool { name, .. } => OpKind::Call { tool: name },
            Start::Close => OpKind::Close,
        };
        self.trace
            .start(kind, &config.endpoint, http_version, bytes_read);
        if let Core::Http2(h) = &self.core {
            h.conn.trace_parent(h.member, &self.trace);
        }
        if let Core::Http1(c) = &mut self.core {
            let buf = BODY_BUFFER.take();
            if buf.capacity() > 0 {
                c.give_body_buffer(buf);
            }
        }
        let operation = match op {
            Start::Connect => {
                self.begin(|| RecordedOperation::Connect, |c, now| c.connect(now));
                Operation::Connect
            }
            Start::ListTools => {
                // A fresh cached listing: the outcome, with no request.
                if let Some(catalog) = self.cached_listing() {
                    self.outcome = Some(Ok(Completion::Listed(catalog)));
                    self.running = Some(Operation::ListTools);
                    return;
                }
                self.begin(|| RecordedOperation::ListTools, |c, now| c.list_tools(now));
                Operation::ListTools
            }
            Start::CallTool { name, arguments } => {
                // A tool of a fresh cached listing is called with its header parameters.
                let known = self.cached_tool(name);
                self.begin(
                    || RecordedOperation::CallTool {
                        name: name.to_owned(),
                        arguments: arguments.to_vec(),
                    },
                    |c, now| match &known {
                        Some(tool) => c.call_known_tool(now, tool, arguments),
                        None => c.call_tool(now, name, arguments),
                    },
                );
                Operation::CallTool
            }
            Start::Close => {
                self.begin(|| RecordedOperation::Close, |c, now| c.close(now));
                Operation::Close
            }
        };
        self.running = Some(operation);
    }

    /// The session's connection, read (on the shared HTTP/2 connection, under its lock).
    fn read_conn<R>(&self, f: impl FnOnce(&Connection) -> R) -> Option<R> {
        match &self.core {
            Core::Http1(c) => Some(f(c)),
            Core::Http2(h) => h.conn.read(h.member, f),
        }
    }

    /// The cache hook of a listing: a fresh cached listing, if the cache is on and has one.
    fn cached_listing(&self) -> Option<Catalog> {
        let cache = self.cache.as_ref()?;
        cache.listing(self.config())
    }

    /// The cache hook of a call: tool `name` of a fresh cached listing, if any.
    fn cached_tool(&mut self, name: &str) -> Option<mcp_sansio::Tool> {
        let config = match &self.core {
            Core::Http1(c) => c.config(),
            Core::Http2(h) => &h.config,
        };
        self.cache.as_ref()?.tool(config, name)
    }

    /// The cache hook of an ended operation: a listing is stored (or its entry removed if it
    /// failed); a call the connection found its catalog stale for removes the entry.
    fn cache_settle(&self, op: Operation, result: &Result<Completion, Error>) {
        let Some(cache) = &self.cache else {
            return;
        };
        match (op, result) {
            (Operation::ListTools, Ok(Completion::Listed(catalog))) => cache.listed(Ok(catalog)),
            (Operation::ListTools, _) => cache.listed(Err(())),
            (Operation::CallTool, _) => {
                if let Some(stale) = self.read_conn(Connection::catalog_stale) {
                    cache.called(stale);
                }
            }
            _ => {}
        }
    }

    /// Drains the core: every request goes to `io.start`, every socket verdict to
    /// `io.finish`/`io.abandon`, progress and input requests to `observer`; then the exchanges
    /// whose bytes were fed read on. Returns the running operation's result once the core
    /// reported its completion.
    ///
    /// The requests of a pass start after its events: a socket that an event of the same pass
    /// hands back (the previous page's, say) is parked before the next exchange looks for one, so
    /// one work item keeps one socket when the server keeps it alive.
    pub fn pump(
        &mut self,
        io: &mut dyn Io,
        observer: &mut dyn CallObserver,
    ) -> Option<Result<Completion, Error>> {
        let _entered = self.trace.enter();
        // One loop whatever the wire: the inputs were handed in as they came (an HTTP/1.1
        // socket's by `feed`, the shared HTTP/2 connection's under its lock); each pass takes the
        // connection's outputs, handles its events, and starts its requests (an HTTP/2 session's
        // went onto the shared connection's streams already).
        loop {
            let (mut queued, events) = self.outputs();
            for t in &queued {
                if self.recording.is_some() {
                    let now = self.now();
                    if let Some(r) = self.rec() {
                        r.transmit(now, t);
                    }
                }
            }
            let mut any = !queued.is_empty() || !events.is_empty();
            for event in events {
                if let Some(r) = self.rec() {
                    r.event(&event);
                }
                self.on_event(event, io, observer, &mut queued);
            }
            for t in queued {
                let id = t.exchange;
                self.trace.transmit(&t);
                self.live.insert(id);
                // Checked by the core: encoding it cannot fail.
                let request = Http1Socket::encode(&t).unwrap_or_default();
                if let Err(e) = io.start(t, request) {
                    self.feed(id, Report::Failed(e));
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
        if let Some(r) = &mut self.recording {
            r.flush();
        }
        let mut fed = std::mem::take(&mut self.fed);
        fed.retain(|id| self.live.contains(id));
        if !fed.is_empty() {
            io.read_allowance(self.bytes_left());
        }
        for id in fed {
            io.read_on(id);
        }
        if let Core::Http2(h) = &mut self.core {
            h.session_id = h
                .conn
                .read(h.member, |c| c.session_id().map(str::to_owned))
                .flatten();
        }
        let state = self.read_conn(Connection::state);
        self.trace.state(state);
        let outcome = self.outcome.take();
        if let Some(o) = &outcome {
            self.trace
                .end(o, self.era, &self.version, self.bytes_read());
            if let Core::Http1(c) = &mut self.core {
                let buf = c.take_body_buffer();
                if buf.capacity() > 0 {
                    BODY_BUFFER.set(buf);
                }
            }
            self.running = None;
        }
        outcome
    }

    /// The connection's outputs since the last pass: the requests an HTTP/1.1 session's
    /// connection asks to start, and its events (an HTTP/2 session's, from its inbox).
    fn outputs(&mut self) -> (Vec<Transmit>, Vec<Event>) {
        match &mut self.core {
            Core::Http1(conn) => {
                let mut queued = Vec::new();
                let mut events = Vec::new();
                while let Some(t) = conn.poll_transmit() {
                    queued.push(t);
                }
                while let Some(event) = conn.poll_event() {
                    events.push(event);
                }
                (queued, events)
            }
            Core::Http2(h) => (Vec::new(), h.conn.take_events(h.member)),
        }
    }

    fn on_event(
        &mut self,
        event: Event,
        io: &mut dyn Io,
        observer: &mut dyn CallObserver,
        queued: &mut Vec<Transmit>,
    ) {
        if let Event::Connected {
            from_hint: false, ..
        } = &event
        {
            let discover = match &self.core {
                Core::Http1(c) => c.discover_cache(),
                Core::Http2(h) => h.conn.read(h.member, Connection::discover_cache).flatten(),
            };
            self.hints.learn(&self.hint_key, &event, discover);
        }
        if let Event::Connected {
            era,
            version,
            server_info,
            from_hint,
            capabilities,
            instructions,
        } = &event
        {
            self.era = *era;
            self.version.clone_from(version);
            // A hint carries no server info, capabilities or instructions: keep what an earlier
            // negotiation learnt.
            if !from_hint {
                self.server_info.clone_from(server_info);
                self.capabilities.clone_from(capabilities);
                self.instructions.clone_from(instructions);
            } else if server_info.is_some() {
                self.server_info.clone_from(server_info);
            }
        }
        let event = match self.running {
            Some(op) => match event.completion(op) {
                Ok(result) => {
                    self.cache_settle(op, &result);
                    self.outcome.get_or_insert(result);
                    return;
                }
                Err(event) => event,
            },
            None => event,
        };
        match event {
            Event::Progress {
                progress,
                total,
                message,
            } => observer.progress(progress, total, message.as_deref()),
            Event::TaskCreated { handle } | Event::TaskHandleUpdated { handle } => {
                observer.task_handle(&handle)
            }
            Event::TaskStatus { status, message } => {
                observer.task_status(status, message.as_deref())
            }
            Event::InputRequired { requests } => {
                let answer = observer.input_required(&requests);
                if answer.is_none() {
                    self.trace.declined();
                }
                let recorded = answer.clone();
                self.begin(
                    || RecordedOperation::ProvideInput(recorded),
                    |c, now| c.provide_input(now, answer.as_deref()),
                );
            }
            Event::ServerRequest { id, method, params } => {
                let answer = observer.server_request(&method, params.as_deref());
                if answer.is_none() {
                    self.trace.declined();
                }
                let recorded = answer.clone();
                let raw_id = id.get().to_owned();
                self.begin(
                    || RecordedOperation::AnswerServerRequest {
                        id: raw_id,
                        result: recorded,
                    },
                    |c, now| {
                        // An answer that is no JSON object is refused in its place.
                        let _ = c.answer_server_request(now, &id, answer.as_deref());
                    },
                );
            }
            Event::ExchangeFinished { exchange, reusable } => {
                queued.retain(|t| t.exchange != exchange);
                self.http1.forget(exchange);
                if self.live.remove(&exchange) {
                    self.trace
                        .exchange_end(exchange, if reusable { "reusable" } else { "finished" });
                    io.finish(exchange, reusable);
                }
            }
            Event::ExchangeAbandoned { exchange } => {
                queued.retain(|t| t.exchange != exchange);
                self.http1.forget(exchange);
                if self.live.remove(&exchange) {
                    self.trace.exchange_end(exchange, "abandoned");
                    io.abandon(exchange);
                }
            }
            _ => {}
        }
    }

    /// The embedder gave the running operation up (an async adapter calls this when the
    /// operation's future is dropped before it ended): the core cancels its request
    /// ([`Connection::abandon`]: it fails with [`Error::Abandoned`]) and the driver pumps once,
    /// so that `io` closes the HTTP/1.1 socket of its exchange ([`Io::abandon`], never pooled),
    /// the shared HTTP/2 connection resets its stream with RST_STREAM(CANCEL), and a legacy
    /// session's `notifications/cancelled` is handed to `io` to start ([`Io::start`]). The
    /// operation is over: the next one may start. Nothing happens without a running operation.
    pub fn abandon(&mut self, io: &mut dyn Io, observer: &mut dyn CallObserver) {
        if self.running.is_none() {
            return;
        }
        self.begin(|| RecordedOperation::Abandon, |c, now| c.abandon(now));
        let _ = self.pump(io, observer);
        self.running = None;
        self.outcome = None;
    }

    /// What to wait for before pumping again.
    pub fn wait(&self) -> Wait {
        match &self.core {
            Core::Http2(h) => match h.conn.poll_timeout() {
                Some(due) => Wait::Until(due),
                None if h.conn.can_report(h.member) => Wait::Report,
                None => Wait::Nothing,
            },
            Core::Http1(c) => match c.poll_timeout() {
                Some(due) => Wait::Until(self.zero + due.as_duration()),
                None if self.live.is_empty() => Wait::Nothing,
                None => Wait::Report,
            },
        }
    }

    /// The error of an operation that waits for nothing ([`Wait::Nothing`]).
    pub fn stuck() -> Error {
        Error::Misuse {
            reason: "the operation waits for nothing",
        }
    }

    /// Feeds what a socket reported; reports of exchanges the core no longer serves are ignored.
    pub fn feed(&mut self, exchange: ExchangeId, report: Report) {
        if !self.live.contains(&exchange) {
            return;
        }
        let now = self.now();
        match report {
            Report::Bytes(bytes) => {
                if let Some(r) = self.rec() {
                    r.bytes(now, exchange, &bytes);
                }
                self.trace.bytes(exchange, bytes.len());
                self.fed.insert(exchange);
                // An HTTP/2 session's bytes go to its shared socket, never here. The bytes of an
                // exchange the connection is done with (its verdict not yet pumped) are not read:
                // its reader would count them against the other exchanges.
                match &mut self.core {
                    Core::Http1(c) if c.has_exchange(exchange) => {
                        let bytes = OwnedBytes::from(bytes);
                        for input in self.http1.read_owned(exchange, &bytes, c.allowance()) {
                            c.handle(now, input);
                            if !c.has_exchange(exchange) {
                                // The rest of the bytes are not read.
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            Report::Eof => {
                if let Some(r) = self.rec() {
                    r.eof(now, exchange);
                }
                let input = match &self.core {
                    Core::Http1(_) => self.http1.eof(exchange),
                    Core::Http2(_) => Input::Eof { exchange },
                };
                self.on_conn(|c| c.handle(now, input));
            }
            Report::Failed(e) => {
                if let Some(r) = self.rec() {
                    r.transport_error(now, exchange, &e);
                }
                self.on_conn(|c| c.handle(now, Input::TransportError { exchange, error: e }));
            }
        }
    }

    /// The clock reached what [`wait`](Self::wait) named.
    pub fn timeout(&mut self) {
        let now = self.now();
        if let Some(r) = self.rec() {
            r.timeout(now);
        }
        match &mut self.core {
            Core::Http1(c) => c.handle_timeout(now),
            Core::Http2(h) => h.conn.handle_timeout(),
        }
    }

    /// Ends the recording: the transcript is flushed and closed.
    pub fn end_recording(&mut self) {
        self.recording = None;
        if let Core::Http2(h) = &self.core {
            h.conn.end_recording();
        }
    }
}

/// Helpers turning a completion into the value each public operation returns.
impl SessionDriver {
    /// The result of a connect.
    pub fn connected(c: Completion) -> Result<(), Error> {
        match c {
            Completion::Connected => Ok(()),
            _ => Err(mismatch()),
        }
    }

    /// The result of a listing.
    pub fn listed(c: Completion) -> Result<Catalog, Error> {
        match c {
            Completion::Listed(c) => Ok(c),
            _ => Err(mismatch()),
        }
    }

    /// The result of a call.
    pub fn called(c: Completion) -> Result<CallResult, Error> {
        match c {
            Completion::Called(r) => Ok(r),
            _ => Err(mismatch()),
        }
    }
}

fn mismatch() -> Error {
    Error::Misuse {
        reason: "the operation ended with another operation's result",
    }
}
