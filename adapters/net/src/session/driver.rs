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
//! The driver owns the session's [`Connection`] whatever the wire, and hands it every input in
//! one place (the private `hand`). A session that speaks HTTP/2 ([`SessionDriver::join_h2`]) has
//! no socket of its own: its exchanges are streams of the origin's shared connection
//! ([`SharedH2`]), whose socket readers route every input of the session's streams into its
//! inbox and call its waker; the adapter then pumps again (nothing to feed), and still calls
//! [`timeout`](SessionDriver::timeout) at the deadline. Each pass of the pump hands the shared
//! connection the session's requests and ended exchanges and takes its inbox
//! ([`SharedH2::sync`]). Either way the inputs reach the connection from a socket that does not
//! own it ([`Http1Socket`] here, the core's `H2Streams` there), and one pump drains it.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::socket::{Http1Socket, OwnedBytes};
use mcp_sansio::{
    CallResult, Catalog, Completion, Config, Connection, Era, Error, Event, ExchangeId, Input,
    Instant, Operation, ServerInfo, Transmit,
};
use mcp_sansio_transcript::{RecordedOperation, Recorder, Recording};

use crate::metrics::{OpMethod, SessionMetrics};
use crate::session::client::{HintBook, Shared};
use crate::session::h2share::{Member, Outbox, SharedH2, Waker};
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

/// A session's place on the origin's shared HTTP/2 connection, as a work item; leaving it
/// (drop) resets the session's streams; the last session to leave leaves the socket idle for
/// the next one.
struct H2Place {
    conn: Arc<SharedH2>,
    member: Member,
}

impl Drop for H2Place {
    fn drop(&mut self) {
        self.conn.leave(self.member);
    }
}

/// One session: the connection, its recording and what it negotiated.
pub struct SessionDriver {
    /// The session's connection, whatever the wire.
    conn: Box<Connection>,
    /// Its place on the origin's shared HTTP/2 connection, if it speaks HTTP/2 (HTTP/1.1: one
    /// socket per exchange, through `io`).
    h2: Option<H2Place>,
    /// The last instant the connection was given (inputs carry the instant they were read).
    clock: Instant,
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
    /// The session's metrics (feature `metrics`).
    metrics: SessionMetrics,
    /// The trace context the embedder gave for the operations ([`Config::trace_context`],
    /// [`set_trace_context`](Self::set_trace_context)); without one, each operation's comes
    /// from the current OpenTelemetry context (feature `opentelemetry`), or none is sent.
    trace_context: Option<mcp_sansio::TraceContext>,
    /// The session's handle on the client's catalog cache, if on.
    cache: Option<crate::cache::SessionCache>,
    /// The session's handle on the client's tool pins, if its policy is not off.
    pins: Option<crate::pins::SessionPins>,
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
        config.tool_pins = config.tool_pins.max(shared.pins.policy());
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
        Ok(SessionDriver::with_conn(
            conn, None, origin, shared, recording,
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
        config.tool_pins = config.tool_pins.max(shared.pins.policy());
        let origin = config.endpoint.origin();
        shared
            .hints
            .offer(&crate::cache::hint_key(&config), &mut config);
        dpop_clock(&mut config, conn.zero());
        let session = Connection::new(config)?;
        let Some(member) = conn.join(session.config(), session.bytes_left(), wake) else {
            return Ok(None);
        };
        let zero = conn.zero();
        let place = H2Place { conn, member };
        let mut driver = SessionDriver::with_conn(session, Some(place), origin, shared, None);
        driver.zero = zero;
        Ok(Some(driver))
    }

    fn with_conn<S>(
        conn: Connection,
        h2: Option<H2Place>,
        origin: String,
        shared: &Shared<S>,
        recording: Option<Box<Recording>>,
    ) -> SessionDriver {
        let config = conn.config();
        let hint_key = crate::cache::hint_key(config);
        let cache = shared
            .cache
            .as_ref()
            .map(|c| crate::cache::SessionCache::new(c.clone(), config));
        let pins = crate::pins::SessionPins::new(shared.pins.clone(), config);
        let trace_context = config.trace_context.clone();
        SessionDriver {
            cache,
            pins,
            conn: Box::new(conn),
            h2,
            clock: Instant::ZERO,
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
            trace_context,
            recording,
            trace: SessionTrace::default(),
            metrics: SessionMetrics::default(),
        }
    }

    /// Hands the connection one input, read at `at`: the one place the driver does, whatever
    /// the wire. The connection's clock never goes back (an input read before the connection's
    /// last instant is handed in at that instant). If the input was the answer to a request,
    /// how the server answered is recorded on the request's span (its `error.type`) there and
    /// then, before the requests the answer makes (a retry, a relisting) open theirs.
    fn hand(
        conn: &mut Connection,
        clock: &mut Instant,
        trace: &mut SessionTrace,
        at: Instant,
        input: Input<'_>,
    ) {
        *clock = (*clock).max(at);
        conn.handle(*clock, input);
        if let Some(a) = conn.take_answered() {
            trace.answered(a);
        }
    }

    /// An HTTP/2 session: hands the shared connection `out` (what its connection asks of the
    /// socket) and its connection the inputs of its inbox. Whether there were any. Nothing for
    /// an HTTP/1.1 session, whose inputs come with [`feed`](Self::feed).
    fn sync(&mut self, mut out: Outbox) -> bool {
        let Some(h) = &self.h2 else {
            return false;
        };
        out.bytes_left = self.conn.bytes_left();
        out.bytes_read = self.conn.bytes_read();
        let inbox = h.conn.sync(h.member, out);
        for routed in &inbox {
            let (at, input) = (routed.at(), routed.input());
            Self::hand(&mut self.conn, &mut self.clock, &mut self.trace, at, input);
        }
        !inbox.is_empty()
    }

    /// Starts an operation: records `op` (when recording) and runs `f` on the session's
    /// connection with the instant it is recorded at. An HTTP/2 session's inbox is handed in
    /// first (what was read before the operation started, as a replay reads it), and its
    /// operation recorded by the shared connection, at its instant.
    fn begin(
        &mut self,
        op: impl FnOnce() -> RecordedOperation,
        f: impl FnOnce(&mut Connection, Instant),
    ) {
        self.sync(Outbox::default());
        let now = match &self.h2 {
            Some(h) if h.conn.is_recorded() => {
                let at = h.conn.record_operation(op());
                self.clock = self.clock.max(at);
                self.clock
            }
            _ => {
                let now = self.now();
                self.record_op(now, op);
                now
            }
        };
        f(&mut self.conn, now);
    }

    /// The HTTP version the session's exchanges run on: `"HTTP/2"` or `"HTTP/1.1"`.
    pub fn http_version(&self) -> &'static str {
        match self.h2 {
            None => "HTTP/1.1",
            Some(_) => "HTTP/2",
        }
    }

    /// The notes of the last listing or call under the tool-pin policy `warn` (see
    /// [`crate::pins`]).
    pub fn tool_changes(&self) -> &[mcp_sansio::ToolChange] {
        self.pins.as_ref().map_or(&[], |p| p.changes())
    }

    /// The connection's configuration.
    pub fn config(&self) -> &Config {
        self.conn.config()
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
        self.conn.session_id()
    }

    /// Raw bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.conn.bytes_read()
    }

    /// Raw bytes the session may still read (its byte budget's remainder).
    pub fn bytes_left(&self) -> u64 {
        self.conn.bytes_left()
    }

    /// The shared HTTP/2 connection the session's exchanges run on, if it speaks HTTP/2.
    pub fn h2_connection(&self) -> Option<&Arc<SharedH2>> {
        self.h2.as_ref().map(|h| &h.conn)
    }

    /// Exchanges the adapter serves now.
    pub fn open_exchanges(&self) -> usize {
        self.live.len()
    }

    /// Now on the core's clock, in whole microseconds (a transcript's resolution, so that a
    /// recording replays at the very instants the core saw); never before the connection's last
    /// instant.
    fn now(&mut self) -> Instant {
        let micros = u64::try_from(self.zero.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.clock = self
            .clock
            .max(Instant::from_duration(Duration::from_micros(micros)));
        self.clock
    }

    fn rec(&mut self) -> Option<&mut Recorder> {
        self.recording.as_deref_mut().map(Recording::recorder)
    }

    fn record_op(&mut self, now: Instant, op: impl FnOnce() -> RecordedOperation) {
        if let Some(r) = self.rec() {
            r.operation(now, op());
        }
    }

    /// Sets the trace context of the operations started from now on (`traceparent`,
    /// `tracestate`, `baggage` in every request's `params._meta`); `None` goes back to the
    /// current OpenTelemetry context (feature `opentelemetry`), or to none.
    pub fn set_trace_context(&mut self, trace: Option<mcp_sansio::TraceContext>) {
        self.trace_context = trace;
    }

    /// Starts `op`; [`pump`](Self::pump) until it returns the result.
    pub fn start(&mut self, op: Start<'_>) {
        self.outcome = None;
        let http_version = self.http_version();
        let bytes_read = self.bytes_read();
        let config = self.conn.config();
        let kind = match op {
            Start::Connect => OpKind::Connect,
            Start::ListTools => OpKind::List,
            Start::CallTool { name, .. } => OpKind::Call { tool: name },
            Start::ResumeTask { .. } | Start::GetTask { .. } => OpKind::Resume,
            Start::Close => OpKind::Close,
        };
        self.trace
            .start(kind, &config.endpoint, http_version, bytes_read);
        let method = match op {
            Start::Connect => OpMethod::Initialize,
            Start::ListTools => OpMethod::List,
            Start::CallTool { name, .. } => OpMethod::Call { tool: name },
            Start::ResumeTask { .. } => OpMethod::TaskResult,
            Start::GetTask { .. } => OpMethod::TaskGet,
            Start::Close => OpMethod::Close,
        };
        self.metrics
            .start(method, &config.endpoint, http_version, bytes_read);
        if let Some(h) = &self.h2 {
            h.conn.trace_parent(h.member, &self.trace);
        }
        let trace_context = self
            .trace_context
            .clone()
            .or_else(|| self.trace.otel_context());
        self.conn.set_trace_context(trace_context);
        let buf = BODY_BUFFER.take();
        if buf.capacity() > 0 {
            self.conn.give_body_buffer(buf);
        }
        if let Some(p) = &mut self.pins {
            p.start();
        }
        let operation = match op {
            Start::Connect => {
                self.begin(|| RecordedOperation::Connect, |c, now| c.connect(now));
                Operation::Connect
            }
            Start::ListTools => {
                // A fresh cached listing: the outcome, with no request.
                if let Some(catalog) = self.cached_listing() {
                    let result =
                        self.pins_settle(Operation::ListTools, Ok(Completion::Listed(catalog)));
                    if result.is_err() {
                        self.cache_settle(Operation::ListTools, &result);
                    }
                    self.outcome = Some(result);
                    self.running = Some(Operation::ListTools);
                    return;
                }
                self.begin(|| RecordedOperation::ListTools, |c, now| c.list_tools(now));
                Operation::ListTools
            }
            Start::CallTool { name, arguments } => {
                // A tool of a fresh cached listing is called with its header parameters.
                let known = self.cached_tool(name);
                // A tool that changed since it was pinned is refused before the call is sent.
                if let Some(p) = &mut self.pins {
                    if let Err(e) = p.call(name, known.as_ref()) {
                        self.outcome = Some(Err(e));
                        self.running = Some(Operation::CallTool);
                        return;
                    }
                }
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
            Start::ResumeTask { handle, cancel } => {
                let bytes = self.recorded_handle(handle);
                self.begin(
                    || RecordedOperation::ResumeTask {
                        handle: bytes.unwrap_or_default(),
                        cancel,
                    },
                    |c, now| {
                        c.resume_task(now, handle);
                        if cancel {
                            // Fails only when the resume failed at once (no task runs): its
                            // own failure is the operation's outcome.
                            let _ = c.cancel_task(now);
                        }
                    },
                );
                Operation::CallTool
            }
            Start::GetTask { handle } => {
                let bytes = self.recorded_handle(handle);
                self.begin(
                    || RecordedOperation::GetTask {
                        handle: bytes.unwrap_or_default(),
                    },
                    |c, now| c.get_task(now, handle),
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

    /// What a recording holds of a resumed task's `handle` (`None` when nothing records): the
    /// handle rebound to the stand-ins a replay presents for the session's credentials and
    /// secret query values, so that the replay's resumption meets the same server and context;
    /// a handle of another server or context (the core refuses it before any request) as it is.
    fn recorded_handle(
        &self,
        handle: &mcp_sansio::task::TaskHandle,
    ) -> Option<mcp_sansio_transcript::HandleBytes> {
        let recorded =
            self.recording.is_some() || self.h2.as_ref().is_some_and(|h| h.conn.is_recorded());
        if !recorded {
            return None;
        }
        Some(
            mcp_sansio_transcript::HandleBytes::for_recording(handle, self.conn.config())
                .unwrap_or_else(|| mcp_sansio_transcript::HandleBytes(handle.to_bytes())),
        )
    }

    /// The cache hook of a listing: a fresh cached listing, if the cache is on and has one.
    fn cached_listing(&self) -> Option<Catalog> {
        let cache = self.cache.as_ref()?;
        cache.listing(self.config())
    }

    /// The cache hook of a call: tool `name` of a fresh cached listing, if any.
    fn cached_tool(&mut self, name: &str) -> Option<mcp_sansio::Tool> {
        self.cache.as_ref()?.tool(self.conn.config(), name)
    }

    /// The pins hook of an ended operation: a listing's tools are checked against the pins (the
    /// verdict may turn it into [`Error::ToolChanged`]) and the new ones pinned.
    fn pins_settle(
        &mut self,
        op: Operation,
        result: Result<Completion, Error>,
    ) -> Result<Completion, Error> {
        match (&mut self.pins, op, result) {
            (Some(pins), Operation::ListTools, Ok(Completion::Listed(catalog))) => {
                pins.listed(&catalog)?;
                Ok(Completion::Listed(catalog))
            }
            (_, _, result) => result,
        }
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
                cache.called(self.conn.catalog_stale());
            }
            _ => {}
        }
    }

    /// Drains the core: every request goes to `io.start` (an HTTP/2 session's onto the shared
    /// connection's streams), every socket verdict to `io.finish`/`io.abandon` (the shared
    /// connection's streams), progress and input requests to `observer`; an HTTP/2 session's
    /// inbox is handed in on every pass; then the exchanges whose bytes were fed read on.
    /// Returns the running operation's result once the core reported its completion.
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
        // One loop whatever the wire: an HTTP/1.1 socket's inputs were handed in by `feed`; an
        // HTTP/2 session's come from its inbox at the start of each pass, as the shared
        // connection takes what the pass before asked of its streams. Each pass then takes the
        // connection's outputs, handles its events, and starts its requests.
        let mut out = Outbox::default();
        loop {
            let mut any = self.sync(std::mem::take(&mut out));
            let (mut queued, events) = self.outputs();
            // Each request's `mcp` span, whatever the wire, before it is recorded or sent: its
            // trace context may name that span (feature `opentelemetry`).
            for t in &mut queued {
                self.trace.request(t);
            }
            for t in &queued {
                if self.recording.is_some() {
                    let now = self.now();
                    if let Some(r) = self.rec() {
                        r.transmit(now, t);
                    }
                }
            }
            any |= !queued.is_empty() || !events.is_empty();
            for event in events {
                if let Some(r) = self.rec() {
                    r.event(&event);
                }
                if let Some(h) = &self.h2 {
                    h.conn.record_event(&event);
                }
                self.on_event(event, io, observer, &mut queued, &mut out.ended);
            }
            for t in queued {
                self.metrics.request();
                if self.h2.is_some() {
                    // A stream of the shared connection, which keeps its spans.
                    out.requests.push(t);
                    continue;
                }
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
        let state = self.conn.state();
        self.trace.state(Some(state));
        let outcome = self.outcome.take();
        if let Some(o) = &outcome {
            self.trace
                .end(o, self.era, &self.version, self.bytes_read());
            self.metrics
                .end(o, self.era, &self.version, self.bytes_read());
            let buf = self.conn.take_body_buffer();
            if buf.capacity() > 0 {
                BODY_BUFFER.set(buf);
            }
            self.running = None;
        }
        outcome
    }

    /// The connection's outputs since the last pass: the requests it asks to start, and its
    /// events.
    fn outputs(&mut self) -> (Vec<Transmit>, Vec<Event>) {
        let mut queued = Vec::new();
        let mut events = Vec::new();
        while let Some(t) = self.conn.poll_transmit() {
            queued.push(t);
        }
        while let Some(event) = self.conn.poll_event() {
            events.push(event);
        }
        (queued, events)
    }

    /// Handles one event of the connection; an exchange it ended is added to `ended` (for the
    /// shared HTTP/2 connection's streams).
    fn on_event(
        &mut self,
        event: Event,
        io: &mut dyn Io,
        observer: &mut dyn CallObserver,
        queued: &mut Vec<Transmit>,
        ended: &mut Vec<(ExchangeId, bool)>,
    ) {
        if let Event::Connected {
            from_hint: false, ..
        } = &event
        {
            let discover = self.conn.discover_cache();
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
                    let result = self.pins_settle(op, result);
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
                if self.h2.is_some() {
                    ended.push((exchange, false));
                }
                self.http1.forget(exchange);
                if self.live.remove(&exchange) {
                    self.trace
                        .exchange_end(exchange, if reusable { "reusable" } else { "finished" });
                    io.finish(exchange, reusable);
                }
            }
            Event::ExchangeAbandoned { exchange } => {
                queued.retain(|t| t.exchange != exchange);
                if self.h2.is_some() {
                    ended.push((exchange, true));
                }
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
        let due = self
            .conn
            .poll_timeout()
            .map(|due| self.zero + due.as_duration());
        match &self.h2 {
            Some(h) => match due.into_iter().chain(h.conn.poll_timeout()).min() {
                Some(due) => Wait::Until(due),
                None if h.conn.can_report(h.member) => Wait::Report,
                None => Wait::Nothing,
            },
            None => match due {
                Some(due) => Wait::Until(due),
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

    /// Feeds what an HTTP/1.1 exchange's socket reported; reports of exchanges the core no
    /// longer serves are ignored (an HTTP/2 session's sockets report to its [`SharedH2`]).
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
                // The bytes of an exchange the connection is done with (its verdict not yet
                // pumped) are not read: its reader would count them against the other exchanges.
                if self.conn.has_exchange(exchange) {
                    let bytes = OwnedBytes::from(bytes);
                    let allowance = self.conn.allowance();
                    for input in self.http1.read_owned(exchange, &bytes, allowance) {
                        Self::hand(&mut self.conn, &mut self.clock, &mut self.trace, now, input);
                        if !self.conn.has_exchange(exchange) {
                            // The rest of the bytes are not read.
                            break;
                        }
                    }
                }
            }
            Report::Eof => {
                if let Some(r) = self.rec() {
                    r.eof(now, exchange);
                }
                let input = self.http1.eof(exchange);
                Self::hand(&mut self.conn, &mut self.clock, &mut self.trace, now, input);
            }
            Report::Failed(e) => {
                if let Some(r) = self.rec() {
                    r.transport_error(now, exchange, &e);
                }
                let input = Input::TransportError { exchange, error: e };
                Self::hand(&mut self.conn, &mut self.clock, &mut self.trace, now, input);
            }
        }
    }

    /// The clock reached what [`wait`](Self::wait) named. An HTTP/2 session's inbox is handed
    /// in first (what was read before the deadline), then the shared connection's sockets and
    /// the session's connection handle the deadline, at one instant.
    pub fn timeout(&mut self) {
        self.sync(Outbox::default());
        let now = match &self.h2 {
            Some(h) => {
                let at = h.conn.handle_timeout();
                self.clock = self.clock.max(at);
                self.clock
            }
            None => {
                let now = self.now();
                if let Some(r) = self.rec() {
                    r.timeout(now);
                }
                now
            }
        };
        self.conn.handle_timeout(now);
    }

    /// Ends the recording: the transcript is flushed and closed.
    pub fn end_recording(&mut self) {
        self.recording = None;
        if let Some(h) = &self.h2 {
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

    /// The result of a task's one poll.
    pub fn reported(c: Completion) -> Result<mcp_sansio::task::TaskReport, Error> {
        match c {
            Completion::TaskReported(r) => Ok(*r),
            _ => Err(mismatch()),
        }
    }
}

fn mismatch() -> Error {
    Error::Misuse {
        reason: "the operation ended with another operation's result",
    }
}
