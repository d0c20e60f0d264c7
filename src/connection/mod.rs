//! The connection: the state machine that turns operations into HTTP exchanges.
//!
//! A [`Connection`] is driven, never drives. The caller starts an operation
//! ([`connect`](Connection::connect), [`list_tools`](Connection::list_tools),
//! [`call_tool`](Connection::call_tool), [`close`](Connection::close)) or gives the running one up
//! ([`abandon`](Connection::abandon), which cancels its request), then drains
//! [`poll_transmit`](Connection::poll_transmit), [`poll_event`](Connection::poll_event) and
//! [`poll_timeout`](Connection::poll_timeout) until they are empty, and feeds what the network and
//! the clock bring: [`handle`](Connection::handle) for everything of an exchange (an [`Input`])
//! and [`handle_timeout`](Connection::handle_timeout) for the clock. After every input the caller
//! MUST drain the outputs again before waiting.
//!
//! One operation runs at a time. Every HTTP request is an *exchange* with its own
//! [`ExchangeId`]; each exchange runs on its own socket (a fresh one, or an idle pooled one the
//! core said may be reused) and ends with [`Event::ExchangeFinished`] (the socket may go back to
//! the pool if `reusable`) or [`Event::ExchangeAbandoned`] (the caller MUST close that socket; this
//! is also how a modern request is cancelled). An exchange may outlive the operation it served:
//! after an event stream delivered its response, the rest of its HTTP framing is read for a short
//! grace ([`DRAIN_GRACE`], at most [`DRAIN_BYTES`]) so that the socket may be reused; the caller
//! keeps feeding that socket and honouring [`poll_timeout`](Connection::poll_timeout) meanwhile.
//!
//! The machine speaks protocol-neutral HTTP through [`crate::wire`] and holds no codec: each
//! exchange's [`Transmit`] carries a [`wire::Request`](crate::wire::Request), and its response
//! comes back through one input, [`handle`](Connection::handle) with an [`Input`]: the
//! response's [`wire::ResponseEvent`](crate::wire::ResponseEvent)s (head, body bytes, end, each
//! with the raw bytes it cost), the socket's refusal of the response, the end of its stream, a
//! transport failure, or the first bytes of a response not yet whole. The socket types above both
//! the connection and the codecs do the encoding and decoding:
//! [`socket::Http1Socket`](crate::socket::Http1Socket) over HTTP/1.1 (one socket per exchange,
//! decoded against the connection's remaining byte allowance), and
//! [`mux::H2Socket`](crate::mux::H2Socket) over HTTP/2 (every exchange a stream of one shared
//! socket); each documents its run loop.
//!
//! [`Connection`] documents the run loop, the poll contract, the negotiation and the table of
//! every transition. The protocol state is one enum, and every transition is made in one module
//! (`state.rs`), checked against the table as data; the recoveries an operation may still make,
//! and the one-time retries of each request, are data of its states. What follows the server's
//! answer to a request is chosen by the transition function (`state/step.rs`): the codec
//! modules (`outcome.rs`, `negotiation.rs`, `listing.rs`, `calling.rs`) classify the answer into
//! a typed `Answer`, one exhaustive match over (state, answer) chooses the next state and the
//! effects, returned as data, and `effects.rs` carries them out (builds and sends requests,
//! reports events, records the session).
use crate::prelude::*;

use alloc::collections::{BTreeSet, VecDeque};
use core::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::budget::{Budget, BudgetExceeded, ByteLedger};
use crate::call::{self, CallAnswer, CallResult};
use crate::config::{Config, Era, EraHint};
use crate::error::{
    truncated, truncated_bytes, ConfigError, Error, ProtocolError, TransportError,
    TransportErrorKind,
};
use crate::jsonrpc::{id_matches, parse_message, ErrorObject, Message, ObjectWriter, RawJson};
use crate::list::{self, Catalog};
use crate::sse::{SseDecoder, SseItem};
use crate::time::Instant;
use crate::wire::{Method, Request, ResponseEvent, ResponseHead, ResponseState, WireError};

mod calling;
mod completion;
mod effects;
mod exchange;
mod input;
mod listen;
mod listing;
mod negotiation;
mod outcome;
mod request;
mod resumption;
mod state;
mod task;

pub use self::completion::{Completion, EraHints, MAX_ERA_HINTS, MAX_ERA_HINT_TTL};
pub use self::input::{Allowance, Input};
pub use self::state::ConnectionState;
#[cfg(feature = "unstable-internals")]
pub use self::state::TRANSITIONS;
use self::{
    calling::*, exchange::*, listen::*, listing::*, negotiation::*, outcome::*, request::*,
    state::*, task::*,
};

/// Bytes of the server's `capabilities` kept raw in [`Event::Connected`] (larger: not kept).
pub const MAX_CAPABILITIES_BYTES: usize = 16 * 1024;

/// Bytes of the server's `instructions` kept in [`Event::Connected`] (the rest is cut).
pub const MAX_INSTRUCTIONS_BYTES: usize = 8 * 1024;

/// The JSON-RPC error codes that only a modern server sends; after one of them the client never
/// falls back to the legacy handshake.
pub const MODERN_ERROR_CODES: [i64; 3] = [-32020, -32021, -32022];

/// Wait before resuming a legacy stream when the server gave no `retry:`.
pub const DEFAULT_RETRY_WAIT: Duration = Duration::from_secs(1);

/// Server-to-client requests refused per logical request; later ones are ignored.
pub const MAX_REFUSALS_PER_REQUEST: u32 = 4;

/// The largest params of a legacy server request handed to the input hook
/// ([`Event::ServerRequest`]); a larger request is refused.
pub const MAX_SERVER_REQUEST_BYTES: usize = 64 * 1024;

/// The largest result an embedder may give to [`Connection::answer_server_request`].
pub const MAX_SERVER_ANSWER_BYTES: usize = 64 * 1024;

/// The methods of a legacy server's own requests that the input hook may answer.
pub const HOOKED_SERVER_REQUESTS: [&str; 3] =
    ["elicitation/create", "sampling/createMessage", "roots/list"];

/// Longest session id accepted.
pub const MAX_SESSION_ID: usize = 1024;

/// After an event stream delivered its response, how long the rest of its HTTP framing (usually
/// the chunked terminator) is awaited so that the socket may be reused; never longer than the
/// close budget. The result is reported at once; only the socket waits.
pub const DRAIN_GRACE: Duration = Duration::from_secs(1);

/// After an event stream delivered its response, how many more raw bytes are read while waiting
/// for the end of its HTTP framing; beyond them the exchange is abandoned.
pub const DRAIN_BYTES: u64 = 4096;

/// Identifies one HTTP exchange (one request and its response, on one socket).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// A request to send for one exchange. Its `Debug` output is its request's, credentials
/// redacted (see [`Request`]).
#[derive(Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The exchange the request belongs to; its response is fed back under this id.
    pub exchange: ExchangeId,
    /// The wire-neutral request, already checked ([`Request::check`]): encoded as HTTP/1.1 by
    /// [`Http1Socket::encode`](crate::socket::Http1Socket::encode), or opened as a stream by
    /// [`H2Socket`](crate::mux::H2Socket).
    pub request: Request,
    /// The request MUST go on a newly opened socket, not a pooled one.
    pub fresh_socket: bool,
    /// Where the connection wrote the value of `params._meta.traceparent` in the body.
    traceparent_at: Option<usize>,
}

impl Transmit {
    /// A request to send for `exchange`, carrying no record of where a `traceparent` is
    /// ([`traceparent_at`](Self::traceparent_at) is `None`): for requests made outside a
    /// [`Connection`] (a test's, a replay's).
    pub fn new(exchange: ExchangeId, request: Request, fresh_socket: bool) -> Transmit {
        Transmit {
            exchange,
            request,
            fresh_socket,
            traceparent_at: None,
        }
    }

    /// Where the connection wrote the trace context's `traceparent` in `request.body`: the
    /// offset of the value of `params._meta.traceparent`, its first character (after the
    /// opening quote), as the body was encoded; `None` when the request carries no trace
    /// context ([`Config::trace_context`](crate::Config::trace_context)) or has no body. It
    /// is that member and never a member of the same name and value elsewhere in the body (a
    /// tool argument's): a caller that rewrites the value in place (the same length, a
    /// tracing span of its own as the parent) rewrites only that one. The body is a public
    /// field: whoever changed it since checks the bytes at the offset before trusting them.
    pub fn traceparent_at(&self) -> Option<usize> {
        self.traceparent_at
    }
}

impl core::fmt::Debug for Transmit {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Transmit")
            .field("exchange", &self.exchange)
            .field("request", &self.request)
            .field("fresh_socket", &self.fresh_socket)
            .finish()
    }
}

/// The operations a connection runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Negotiating the protocol.
    Connect,
    /// Listing tools.
    ListTools,
    /// Calling a tool.
    CallTool,
    /// Closing.
    Close,
}

/// The server's name and version, as it reported them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct ServerInfo {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Version.
    #[serde(default)]
    pub version: String,
}

/// What the connection reports.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Event {
    /// The protocol is negotiated. With an era hint this comes without any request
    /// (`from_hint`); if the hint then proves wrong, the connection re-negotiates once and reports
    /// `Connected` again with what it found.
    Connected {
        /// The era.
        era: Era,
        /// The negotiated version.
        version: String,
        /// The server's name and version, if it said.
        server_info: Option<ServerInfo>,
        /// Whether this was taken from the era hint without a request.
        from_hint: bool,
        /// The server's `capabilities` (`ServerCapabilities`) from `server/discover`'s answer (or
        /// legacy `initialize`'s), as raw JSON bytes: absent when taken from a hint, when
        /// `server/discover` is not implemented (404 with `-32601`), when the server sent none
        /// or `null`, and when larger than [`MAX_CAPABILITIES_BYTES`] (never cut: cut JSON is not
        /// JSON).
        capabilities: Option<Box<RawValue>>,
        /// The server's `instructions` from the same answer, cut to
        /// [`MAX_INSTRUCTIONS_BYTES`] on a character boundary. Untrusted text from the server.
        instructions: Option<String>,
    },
    /// A listing finished.
    ToolsListed(Catalog),
    /// The running tool call's answer created a task (SEP-2663, with [`Config::tasks`] on): its
    /// handle, reported before the first `tasks/get` is sent, for the embedder to persist
    /// ("Clients SHOULD persist task IDs to durable storage so that polling can resume after a
    /// crash or restart") and to resume from ([`Connection::resume_task`]). The call goes on:
    /// it ends with [`Event::CallFinished`] or [`Event::Failed`] when the task does.
    TaskCreated {
        /// The task's durable handle.
        handle: Box<crate::task::TaskHandle>,
    },
    /// The running task's handle changed: it now records the input-request keys just answered
    /// (a `tasks/update` follows). Persist it again, so that a resumed task never answers a key
    /// twice.
    TaskHandleUpdated {
        /// The task's durable handle.
        handle: Box<crate::task::TaskHandle>,
    },
    /// A `tasks/get` report of the running task: its status and its `statusMessage` (cut and
    /// made inert, but still the server's text).
    TaskStatus {
        /// The status reported.
        status: crate::task::TaskStatus,
        /// The `statusMessage`, if any.
        message: Option<String>,
    },
    /// The one `tasks/get` of [`Connection::get_task`] was answered: the task's report, whatever
    /// its status (a `working` or `input_required` task is not waited for, nor its input
    /// requests presented). It ends the operation ([`Operation::CallTool`]).
    TaskReported(Box<crate::task::TaskReport>),
    /// A tool call finished.
    CallFinished(CallResult),
    /// The running tool call needs input only the embedder can give (a multi round-trip
    /// request, or a task's `input_required` poll): answer with [`Connection::provide_input`].
    /// Only when [`Config::input_hook`] is set; otherwise such a call fails as an answer this
    /// client cannot fulfil. A task's requests come once each (keys already presented or
    /// answered are not presented again).
    InputRequired {
        /// The raw `inputRequests` object: request keys to `{method, params}`.
        requests: Box<RawValue>,
    },
    /// A legacy server's own request (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`) on the stream of the running operation or on the session's standalone
    /// `GET` stream: answer with [`Connection::answer_server_request`] (a result, or `None` to
    /// refuse), POSTed back. Only when [`Config::input_hook`] is set (otherwise such requests are
    /// refused, and no standalone stream is opened), and only for params of at most
    /// [`MAX_SERVER_REQUEST_BYTES`] (larger ones are refused). Counted with the refusals: at most
    /// [`MAX_REFUSALS_PER_REQUEST`] server requests per logical request (and per standalone
    /// stream) are answered or refused, later ones are ignored.
    ///
    /// With the hook on, a legacy session opens its standalone stream (a `GET` with `Accept:
    /// text/event-stream`) once `notifications/initialized` is accepted, beside the operations;
    /// an answer that is not an event stream (such as 405) means the server offers none, which
    /// is no error. The stream's exchange is abandoned when the session ends; one that ended is
    /// opened again when the next operation starts, at most `responses_per_request` times per
    /// session. Each stream lives until the later of its request time and the deadline of the
    /// operation running when it was opened or kept; its bytes count against the byte budget.
    ServerRequest {
        /// The request's raw id, to give back with the answer.
        id: Box<RawValue>,
        /// Its method.
        method: String,
        /// Its raw params, if any.
        params: Option<Box<RawValue>>,
    },
    /// Progress the server reported for the running tool call.
    Progress {
        /// Progress so far.
        progress: f64,
        /// Total, if known.
        total: Option<f64>,
        /// A message, if any (truncated).
        message: Option<String>,
    },
    /// An operation failed.
    Failed {
        /// Which.
        operation: Operation,
        /// Why.
        error: Error,
    },
    /// The connection is closed; nothing more will be sent.
    Closed,
    /// An exchange's response is complete. If `reusable`, its socket may serve another exchange:
    /// the response ended cleanly and no byte beyond it has been fed. Bytes that arrive later are
    /// the caller's to notice: a pool must not reuse a socket that holds unread bytes or is at EOF.
    ExchangeFinished {
        /// The exchange.
        exchange: ExchangeId,
        /// Whether the socket may be reused.
        reusable: bool,
    },
    /// An exchange is abandoned: the caller MUST close its socket and feed nothing more for it.
    ExchangeAbandoned {
        /// The exchange.
        exchange: ExchangeId,
    },
}

/// An aggregate deadline and the budget it enforces.
#[derive(Clone, Copy, Debug)]
struct Deadline {
    /// When it expires.
    at: Instant,
    /// The budget reported when it does.
    budget: Budget,
}

impl Deadline {
    /// `budget`'s deadline, counted from `now`.
    fn new(now: Instant, budgets: &crate::budget::Budgets, budget: Budget) -> Deadline {
        Deadline {
            at: now + aggregate_limit(budgets, budget),
            budget,
        }
    }

    /// The error reported when it expires.
    fn exceeded(&self, budgets: &crate::budget::Budgets) -> BudgetExceeded {
        budgets.exceeded(self.budget)
    }
}

/// A sans-IO MCP client connection: one state machine per unit of work (connect, list or call,
/// close), driven by its caller.
///
/// # The run loop
///
/// Start an operation, then drain the outputs until they are empty, then feed what the network
/// and the clock bring; after every input, drain again. An adapter does exactly this with real
/// sockets; here a canned modern server answers instead.
///
/// ```
/// use mcp_sansio::socket::Http1Socket;
/// use mcp_sansio::{Config, Connection, Event, Instant};
///
/// // A server that answers `server/discover` like a 2026-07-28 server.
/// fn server(request: &[u8]) -> Vec<u8> {
///     let body = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
///     format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
///         .into_bytes()
/// }
///
/// let mut conn = Connection::new(Config::new("http://127.0.0.1:8080/mcp")?)?;
/// let mut socket = Http1Socket::new(); // decodes each exchange's HTTP/1.1 bytes
/// let mut now = Instant::ZERO; // an adapter reads its monotonic clock here
/// conn.connect(now);
/// let mut connected = None;
/// loop {
///     // 1. Requests to send, each on the socket its `Transmit` asks for.
///     let mut fed = false;
///     while let Some(t) = conn.poll_transmit() {
///         let request = Http1Socket::encode(&t)?;
///         for piece in server(&request).chunks(3) {
///             socket.handle_bytes(&mut conn, now, t.exchange, piece); // any split, down to one byte
///         }
///         fed = true;
///     }
///     // 2. Events: results, failures, and what to do with each socket.
///     while let Some(event) = conn.poll_event() {
///         match event {
///             Event::Connected { version, .. } => connected = Some(version),
///             Event::Failed { error, .. } => panic!("{error} ({})", error.kind()),
///             Event::ExchangeFinished { reusable, .. } => { /* pool the socket if `reusable`, else close it */ }
///             Event::ExchangeAbandoned { .. } => { /* close the socket */ }
///             _ => {}
///         }
///     }
///     // 3. Nothing left to do now: wait for bytes or for the deadline.
///     if !fed {
///         match conn.poll_timeout() {
///             Some(deadline) if connected.is_none() => {
///                 now = deadline.max(now); // time never goes backwards
///                 conn.handle_timeout(now);
///             }
///             _ => break,
///         }
///     }
/// }
/// assert_eq!(connected.as_deref(), Some("2026-07-28"));
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
///
/// # The poll contract
///
/// - **Inputs** are the operations ([`connect`](Self::connect), [`list_tools`](Self::list_tools),
///   [`call_tool`](Self::call_tool), [`call_known_tool`](Self::call_known_tool),
///   [`provide_input`](Self::provide_input), [`resume_task`](Self::resume_task),
///   [`cancel_task`](Self::cancel_task), [`close`](Self::close), [`abandon`](Self::abandon))
///   and what the world brings
///   ([`handle`](Self::handle) with an [`Input`], and [`handle_timeout`](Self::handle_timeout)). Each takes `now`; `now` never goes backwards
///   from one call to the next (pass the same value again rather than an earlier one).
/// - **After every input, drain the outputs in this order**: [`poll_transmit`](Self::poll_transmit)
///   until `None`, then [`poll_event`](Self::poll_event) until `None`, then read
///   [`poll_timeout`](Self::poll_timeout). Draining never changes the state; an input may add
///   outputs of every kind, so drain again after each one.
/// - **Time**: when the clock reaches [`poll_timeout`](Self::poll_timeout), call
///   [`handle_timeout`](Self::handle_timeout). Calling it early is harmless; calling it late only
///   delays what was due. `None` means nothing waits on time.
///
/// What each output obliges the caller to do:
///
/// | output | the caller must |
/// |---|---|
/// | [`Transmit`] | send `bytes` on a socket for `exchange`: a new one if `fresh_socket`, otherwise a new one or an idle pooled one; feed everything read from it under that id |
/// | [`Event::ExchangeFinished`] | stop feeding that socket; pool it if `reusable` (and it holds no unread byte), otherwise close it |
/// | [`Event::ExchangeAbandoned`] | close that socket at once and feed nothing more for it (this is also how a modern request is cancelled) |
/// | [`Event::Connected`], [`Event::ToolsListed`], [`Event::CallFinished`], [`Event::Failed`] | nothing: the operation is over and another may start (keep feeding sockets still draining); a `Connected` after a re-negotiation comes mid-operation, which goes on |
/// | [`Event::InputRequired`] | answer with [`provide_input`](Self::provide_input) (or `None` to decline) before the call's deadline |
/// | [`Event::Progress`] | nothing |
/// | [`Event::TaskCreated`], [`Event::TaskHandleUpdated`] | persist the task's handle if the call should survive this process ([`resume_task`](Self::resume_task) continues it); the call goes on |
/// | [`Event::TaskStatus`] | nothing (a status line may show it) |
/// | [`Event::Closed`] | nothing more will be sent; drop the connection once its sockets are closed |
///
/// One operation runs at a time; starting another while one runs fails with
/// [`Error::Misuse`]. A caller that no longer wants the running operation's result (its future
/// was dropped, say) gives it up with [`abandon`](Self::abandon): the request is cancelled as its
/// era says and the next operation may start. A connection failure (a budget, a transport or HTTP failure, a malformed
/// stream, an authentication refusal) is sticky: every later operation fails with the same
/// error, and only [`close`](Self::close) remains useful.
///
/// # Negotiation
///
/// [`connect`](Self::connect) settles the protocol era:
///
/// 1. **Probe**: `server/discover` with the newest of [`Config::modern_versions`], carrying
///    `params._meta` and `MCP-Protocol-Version`. A result naming a mutual modern version connects
///    modern (no session). A result naming only legacy versions goes to `initialize`.
/// 2. **One retry**: a `-32022` (unsupported version) error whose `data.supported` names a
///    mutual version is retried once with it, never twice. `-32021` and `-32020` are modern
///    failures: they fail the connect and never fall back.
/// 3. **Discover unimplemented**: a 404 carrying JSON-RPC `-32601` is a modern server that does
///    not implement `server/discover` (clients need not call it): the connection is connected in
///    the modern era with the version it offered, no server info and nothing discovered. If the
///    next request then gets a 4xx without a recognised modern error (`-32020`, `-32021`, or 404
///    with `-32601`), the server was legacy after all: the connection falls back to `initialize`
///    once and restarts the operation.
/// 4. **Legacy fallback**: any other 4xx (or a 200 without a usable result) means a legacy
///    server: `initialize` offering the first of [`Config::legacy_versions`], then
///    `notifications/initialized`; the `Mcp-Session-Id` of `initialize`'s answer is kept and must
///    never change. A 404 to a request carrying it means the server ended the session: the
///    operation starts a new one (`initialize` again, [`Event::Connected`] again) and restarts
///    in it within its own deadline, once; a second 404 fails it with [`Error::SessionExpired`].
///    A 404 to a request without a session id is only a status.
/// 5. **Era hint**: with [`Config::era_hint`] a modern hint connects at once, without a request
///    ([`Event::Connected`] with `from_hint`), and a legacy hint skips the probe. If the first
///    request then shows the hint was wrong (a 4xx without a recognised modern error, such as a
///    legacy server's `-32000` "no valid session id", or `-32022`), the connection re-negotiates
///    once from the probe, reports [`Event::Connected`] again, and restarts the operation within
///    its own budget. A negotiation that fails leaves the connection unconnected.
///
/// Every state change is listed in the [transition table](#transitions) below;
/// [`state`](Self::state) names the state the connection is in.
///
#[doc = include_str!("transitions.md")]
pub struct Connection {
    config: Config,
    ledger: ByteLedger,
    /// The protocol state: every transition is made by [`Machine`] (`state.rs`).
    machine: Machine,
    session: Session,
    /// The buffer of the message being handled, if it is one (a listed page's tools share it).
    message: Option<bytes::Bytes>,
    /// The answer to the pending `tools/call`, decoded with its message in one pass, while that
    /// message is handled (taken by `on_call_result`).
    decoded_call: Option<crate::call::Answer>,
    /// An empty buffer for the next JSON body that fits it ([`Connection::give_body_buffer`]).
    spare: Vec<u8>,
    exchanges: Vec<Exchange>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    next_exchange: u64,
    next_id: u64,
    gets_sent: u64,
    /// The `x-mcp-header` parameters of the tools of the last complete listing that have any,
    /// so that [`call_tool`](Connection::call_tool) sends their `Mcp-Param-*` headers.
    listed_headers: Vec<(String, Option<alloc::sync::Arc<[crate::xmcp::HeaderParam]>>)>,
    /// The tools of the last complete listing whose `execution.taskSupport` is `"required"`
    /// (2025-11-25), which [`call_tool`](Connection::call_tool) refuses in a legacy session whose
    /// server declared task-augmented tool calls.
    listed_task_required: Vec<String>,
    /// `-32020` answers met so far ([`Connection::header_mismatches`]).
    header_mismatches: u64,
    /// Whether the last tool call met a `-32020` ([`Connection::catalog_stale`]).
    catalog_stale: bool,
    /// The background `notifications/cancelled` exchanges sent (those still open are waited
    /// for by a close whose `DELETE` was answered first; the rest are forgotten as new ones
    /// are sent).
    cancellations: Vec<ExchangeId>,
    /// The legacy session's standalone `GET` stream (`listen.rs`).
    listen: Listen,
    /// What the `server/discover` answer the connection is connected by said of its caching.
    discover_cache: Option<crate::list::CacheHint>,
    /// The server's latest usable `DPoP-Nonce` (RFC 9449 §9), put in every later proof.
    dpop_nonce: Option<String>,
    /// DPoP proofs made so far (each `jti` is derived from the binding's seed and this count).
    dpop_proofs: u64,
    /// Where the timeline's zero sits on the Unix clock ([`Connection::set_unix_at_zero`]).
    unix_at_zero: Duration,
    /// How the server answered the last request whose answer was handled
    /// ([`Connection::take_answered`]).
    answered: Option<Answered>,
}

/// How the server answered one of the client's requests: its JSON-RPC id and the error the
/// answer carried, if any ([`Connection::take_answered`]). For an observer that reports each
/// request on its own (the `error.type` of OpenTelemetry's client span of a request), whatever
/// the operation then does with the answer (retry, relist, re-negotiate, fail).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answered {
    /// The JSON-RPC id of the request.
    pub id: u64,
    /// The error of the answer; `None` for a result (or a notification accepted).
    pub error: Option<AnswerError>,
}

/// The error one answer carried ([`Answered::error`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerError {
    /// A JSON-RPC error object with this code, whatever the HTTP status.
    Rpc(i64),
    /// An HTTP status without a usable JSON-RPC body.
    HttpStatus(u16),
}

/// The state and what is queued, never a credential: the configuration's own `Debug` redacts
/// its token, the requests queued theirs (see [`Request`]), and the exchanges (request bodies,
/// responses in flight) are counted, not shown.
impl core::fmt::Debug for Connection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Connection")
            .field("config", &self.config)
            .field("machine", &self.machine)
            .field("session", &self.session)
            .field("exchanges", &self.exchanges.len())
            .field("transmits", &self.transmits)
            .field("events", &self.events.len())
            .field("next_id", &self.next_id)
            .field("gets_sent", &self.gets_sent)
            .field("header_mismatches", &self.header_mismatches)
            .field("dpop_proofs", &self.dpop_proofs)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A new connection with `config`; nothing is sent until an operation starts.
    ///
    /// Its exchanges run on whatever socket type the caller drives: an
    /// [`Http1Socket`](crate::socket::Http1Socket) per connection over HTTP/1.1, or an
    /// [`H2Socket`](crate::mux::H2Socket) shared by several connections over HTTP/2.
    pub fn new(config: Config) -> Result<Connection, ConfigError> {
        config.validate()?;
        Ok(Connection {
            ledger: ByteLedger::new(config.budgets.response_bytes),
            unix_at_zero: config.unix_at_zero,
            config,
            machine: Machine::new(),
            session: Session::None,
            message: None,
            decoded_call: None,
            spare: Vec::new(),
            exchanges: Vec::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            next_exchange: 0,
            next_id: 0,
            gets_sent: 0,
            listed_headers: Vec::new(),
            listed_task_required: Vec::new(),
            header_mismatches: 0,
            catalog_stale: false,
            answered: None,
            cancellations: Vec::new(),
            listen: Listen::default(),
            discover_cache: None,
            dpop_nonce: None,
            dpop_proofs: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Sets the trace context of the requests sent from now on ([`Config::trace_context`]):
    /// the parent the embedder gives an operation, `None` to send none. A request already sent
    /// keeps the one it carried; a resend of it (a retry, a re-issue) carries the new one.
    pub fn set_trace_context(&mut self, trace: Option<crate::TraceContext>) {
        self.config.trace_context = trace;
    }

    /// How the server answered the last of the client's requests whose answer was handled
    /// since the last call, taken: only the latest is kept (a caller that wants each takes it
    /// after each [`handle`](Self::handle); a request is answered at most once, and the next
    /// one is sent only after [`poll_transmit`](Self::poll_transmit)).
    pub fn take_answered(&mut self) -> Option<Answered> {
        self.answered.take()
    }

    /// Raw bytes read so far on this connection.
    pub fn bytes_read(&self) -> u64 {
        self.ledger.used()
    }

    /// Raw bytes this connection may still read (its byte budget's remainder): the allowance of
    /// an HTTP/2 stream opened for it.
    pub fn bytes_left(&self) -> u64 {
        self.ledger.remaining()
    }

    /// A copy of this connection's byte ledger (its configured limit and the bytes charged so
    /// far): what a socket decodes against, so that the budget fails at the exact byte and
    /// names the configured limit. Charging the copy changes nothing here; the connection
    /// charges each event's `raw` when it is handed in.
    pub fn response_ledger(&self) -> ByteLedger {
        self.ledger.clone()
    }

    /// Whether `exchange` is one of the connection's open exchanges (its response is still
    /// wanted).
    pub fn has_exchange(&self, exchange: ExchangeId) -> bool {
        self.exchanges.iter().any(|e| e.id == exchange)
    }

    /// The era and version negotiated, as a hint for the next connection to the same server in
    /// the same authorization context ([`EraHints`](crate::EraHints)).
    pub fn era_hint(&self) -> Option<EraHint> {
        match &self.session {
            Session::None => None,
            Session::Modern { version } => Some(EraHint {
                era: Era::Modern,
                version: version.clone(),
            }),
            Session::Legacy { version, .. } => Some(EraHint {
                era: Era::Legacy,
                version: version.clone(),
            }),
        }
    }

    /// What the `server/discover` answer the connection is connected by declared of its own
    /// caching (2026-07-28, SEP-2549: `ttlMs` and `cacheScope`, required on `DiscoverResult`),
    /// read as a listing's are ([`CacheHint`](crate::CacheHint): absent, negative or anything
    /// but digits is 0, i.e. stale at once; `private` unless exactly `"public"`; a member given
    /// twice is its most restrictive value). `None` without such an answer: connected from an
    /// era hint, in the legacy era, or when `server/discover` was answered 404 with `-32601`.
    pub fn discover_cache(&self) -> Option<crate::CacheHint> {
        self.discover_cache
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<&str> {
        match &self.session {
            Session::Legacy {
                session_id: Some(s),
                ..
            } => Some(s),
            _ => None,
        }
    }

    /// Standalone or resumption `GET` requests sent so far (a standalone stream is opened only
    /// by a legacy session with [`Config::input_hook`] on; see [`Event::ServerRequest`]).
    pub fn gets_sent(&self) -> u64 {
        self.gets_sent
    }

    /// Whether an operation is running.
    pub fn is_busy(&self) -> bool {
        self.machine.operation().is_some()
    }

    /// The state of the connection, as the [transition table](Connection#transitions) names it.
    /// An observation only (the machine is driven by the operations and inputs, never by
    /// setting it): for logs, diagnostics and tests of the table.
    pub fn state(&self) -> ConnectionState {
        self.machine.name()
    }

    /// Negotiates the protocol: the probe, the one retry, the legacy fallback and the era hint are
    /// described under [Negotiation](Connection#negotiation).
    pub fn connect(&mut self, now: Instant) {
        if let Err(e) = self.check_can_start() {
            return self.events.push_back(Event::Failed {
                operation: Operation::Connect,
                error: e,
            });
        }
        if self.session != Session::None {
            let error = Error::Misuse {
                reason: "already connected",
            };
            return self.events.push_back(Event::Failed {
                operation: Operation::Connect,
                error,
            });
        }
        match self.config.era_hint.clone() {
            Some(EraHint {
                era: Era::Modern,
                version,
            }) => {
                self.session = Session::Modern {
                    version: version.clone(),
                };
                self.machine.connect_from_hint();
                self.events.push_back(Event::Connected {
                    era: Era::Modern,
                    version,
                    server_info: None,
                    from_hint: true,
                    capabilities: None,
                    instructions: None,
                });
            }
            Some(EraHint {
                era: Era::Legacy, ..
            }) => {
                self.start_initialize(now, true);
            }
            None => self.start_probe(now),
        }
    }

    /// Closes the connection. Always safe: twice, after a failure, or before anything was sent.
    /// A running operation fails with [`Error::Closed`] and its exchange is abandoned (the
    /// cancellation of 2026-07-28). A legacy session is ended with `DELETE`, bounded by the close
    /// budget, after a `notifications/cancelled` for a listing's page or a call's round that was
    /// running (best effort, as [`abandon`](Self::abandon) sends it); [`Event::Closed`] follows
    /// in every case.
    ///
    /// A legacy `notifications/cancelled` still queued or in flight when the `DELETE` is
    /// answered (this close's own, or one an earlier timeout or [`abandon`](Self::abandon)
    /// sent) is not dropped: the connection stays Closing until that exchange ends (its
    /// answer, its failure, or the end of its grace, the close budget from when it was sent),
    /// and the close deadline bounds the wait; [`Event::Closed`] follows. The `DELETE` is not
    /// held back: the two travel side by side, and the server may see them in either order.
    pub fn close(&mut self, now: Instant) {
        if matches!(self.machine.get(), State::Closing { .. }) {
            return; // already closing
        }
        // A running operation's request is cancelled as an abandoned one is: its exchange
        // abandoned, and in a legacy session `notifications/cancelled` sent before the `DELETE`
        // (a session without an id, or out of bytes, closes at once and sends nothing more).
        let cancel = self.cancellable();
        if let Some(operation) = self.machine.operation() {
            self.abandon_main();
            self.events.push_back(Event::Failed {
                operation,
                error: Error::Closed,
            });
        }
        if matches!(self.machine.get(), State::Closed) {
            self.events.push_back(Event::Closed);
            return;
        }
        // The standalone stream ends with the session, before its `DELETE`.
        self.listen_end();
        let has_session = matches!(
            &self.session,
            Session::Legacy {
                session_id: Some(_),
                ..
            }
        );
        if has_session && self.ledger.remaining() > 0 {
            if let Some(id) = cancel {
                self.send_cancelled(now, id, "closed");
            }
            let deadline = Deadline::new(now, &self.config.budgets, Budget::CloseTime);
            let req = self.new_request(now, Step::Delete, Some(deadline));
            self.machine.closing(req);
            self.send_pending(now, false, None);
        } else {
            self.finish_close();
        }
    }

    /// The caller abandoned the running operation (an adapter calls this when the operation's
    /// future is dropped): it fails with [`Error::Abandoned`] and its request is cancelled as
    /// each era says. Its exchange is abandoned ([`Event::ExchangeAbandoned`]): the caller closes
    /// that HTTP/1.1 socket rather than pooling it, and an HTTP/2 socket resets the stream with
    /// RST_STREAM(CANCEL); closing the response stream is the cancellation of 2026-07-28. In a
    /// legacy session, where a disconnect is not a cancellation, a listing's page or a call's
    /// round is also cancelled with one `notifications/cancelled` naming its request id
    /// (best effort: a background request, its answer discarded, dropped after the close
    /// budget; `initialize` is never cancelled). A negotiation abandoned leaves the connection
    /// unconnected, any other operation leaves it ready; an abandoned close ends at once
    /// ([`Event::Closed`]). Without a running operation nothing happens.
    pub fn abandon(&mut self, now: Instant) {
        match self.machine.get() {
            State::Closing { .. } => return self.finish_close(),
            _ if !self.is_busy() => return,
            _ => {}
        }
        let cancel = self.cancellable();
        self.fail_op(Error::Abandoned);
        if let Some(id) = cancel {
            self.send_cancelled(now, id, "abandoned");
        }
    }

    fn check_can_start(&self) -> Result<(), Error> {
        match self.machine.get() {
            State::Closed => Err(Error::Misuse {
                reason: "the connection is closed",
            }),
            State::Dead(e) => Err(e.clone()),
            _ if self.is_busy() => Err(Error::Misuse {
                reason: "another operation is running",
            }),
            _ => Ok(()),
        }
    }

    fn check_connected(&self) -> Result<(), Error> {
        self.check_can_start()?;
        if matches!(self.machine.get(), State::Unconnected) {
            return Err(Error::Misuse {
                reason: "not connected",
            });
        }
        Ok(())
    }

    /// The next request to send, if any.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some((operation, error)) = self.machine.take_fault() {
            // An invalid transition (a bug) ended the connection: reported before the rest.
            self.events.push_front(Event::Failed { operation, error });
        }
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Connection::handle_timeout) must next be called, if anything is
    /// waiting on time.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for ex in &self.exchanges {
            consider(ex.deadline);
        }
        if let Some(deadline) = self.machine.deadline() {
            consider(deadline.at);
        }
        if let Some(p) = self.machine.req() {
            consider(p.deadline.at);
        }
        if let Some(t) = self.machine.wait_until() {
            consider(t);
        }
        next
    }

    /// Time has reached `now`: expire what is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        // Draining and background exchanges past their grace are dropped silently.
        let mut i = 0;
        while i < self.exchanges.len() {
            if !self.exchanges[i].role.is_main() && self.exchanges[i].deadline <= now {
                let ex = self.exchanges.swap_remove(i);
                self.events
                    .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            } else {
                i += 1;
            }
        }
        if self.close_when_cancelled() {
            return;
        }
        // What is due is the machine's choice (`Machine::on_time`).
        let exchange_deadline = self
            .machine
            .req()
            .and_then(|p| p.exchange)
            .and_then(|x| self.exchanges.iter().find(|e| e.id == x))
            .map(|e| e.deadline);
        let due = self
            .machine
            .on_time(now, exchange_deadline, &self.config.budgets);
        if let Some(effect) = due {
            self.carry_out(now, vec![effect]);
        }
    }
}
