//! The connection: the state machine that turns operations into HTTP exchanges.
//!
//! A [`Connection`] is driven, never drives. The caller starts an operation
//! ([`connect`](Connection::connect), [`list_tools`](Connection::list_tools),
//! [`call_tool`](Connection::call_tool), [`close`](Connection::close)), then drains
//! [`poll_transmit`](Connection::poll_transmit), [`poll_event`](Connection::poll_event) and
//! [`poll_timeout`](Connection::poll_timeout) until they are empty, and feeds what the network and
//! the clock bring: [`handle_bytes`](Connection::handle_bytes), [`handle_eof`](Connection::handle_eof),
//! [`handle_transport_error`](Connection::handle_transport_error) and
//! [`handle_timeout`](Connection::handle_timeout). After every input the caller MUST drain the
//! outputs again before waiting.
//!
//! One operation runs at a time. Every HTTP request is an *exchange* with its own
//! [`ExchangeId`]; each exchange runs on its own socket (a fresh one, or an idle pooled one the
//! core said may be reused) and ends with [`Event::ExchangeFinished`] (the socket may go back to
//! the pool if `reusable`) or [`Event::ExchangeAbandoned`] (the caller MUST close that socket; this
//! is also how a modern request is cancelled). An exchange may outlive the operation it served:
//! after an event stream delivered its response, the rest of its HTTP framing is read for a short
//! grace ([`DRAIN_GRACE`], at most [`DRAIN_BYTES`]) so that the socket may be reused; the caller
//! keeps feeding that socket and honouring [`poll_timeout`](Connection::poll_timeout) meanwhile.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::budget::{Budget, BudgetExceeded, ByteLedger};
use crate::call::{self, CallAnswer, CallResult};
use crate::config::{Config, Era, EraHint};
use crate::error::{
    truncated, truncated_bytes, ConfigError, Error, ProtocolError, TransportError,
    TransportErrorKind,
};
use crate::http1::{Method, Request, ResponseDecoder, ResponseEvent, ResponseHead, ResponseLimits};
use crate::jsonrpc::{id_matches, parse_message, ErrorObject, Message, ObjectWriter, RawJson};
use crate::list::{self, Catalog};
use crate::sse::{SseDecoder, SseItem};
use crate::time::Instant;

/// The JSON-RPC error codes that only a modern server sends; after one of them the client never
/// falls back to the legacy handshake.
pub const MODERN_ERROR_CODES: [i64; 3] = [-32020, -32021, -32022];
/// `-32020`: a standard or `Mcp-Param-*` header does not match the body.
const HEADER_MISMATCH: i64 = -32020;
/// `-32022`: unsupported protocol version.
const UNSUPPORTED_VERSION: i64 = -32022;
/// Wait before resuming a legacy stream when the server gave no `retry:`.
pub const DEFAULT_RETRY_WAIT: Duration = Duration::from_secs(1);
/// Server-to-client requests refused per logical request; later ones are ignored.
pub const MAX_REFUSALS_PER_REQUEST: u32 = 4;
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

/// Bytes to send for one exchange.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The exchange the bytes belong to; its response is fed back under this id.
    pub exchange: ExchangeId,
    /// The whole HTTP/1.1 request.
    pub bytes: Vec<u8>,
    /// The request MUST go on a newly opened socket, not a pooled one.
    pub fresh_socket: bool,
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
    },
    /// A listing finished.
    ToolsListed(Catalog),
    /// A tool call finished.
    CallFinished(CallResult),
    /// The running tool call needs input only the embedder can give (a multi round-trip
    /// request): answer with [`Connection::provide_input`]. Only when [`Config::input_hook`] is
    /// set; otherwise such a call fails as an answer this client cannot fulfil.
    InputRequired {
        /// The raw `inputRequests` object: request keys to `{method, params}`.
        requests: Box<RawValue>,
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

/// What the connection has negotiated.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Session {
    None,
    Modern {
        version: String,
    },
    Legacy {
        version: String,
        session_id: Option<String>,
    },
}

/// The request a logical request sends.
#[derive(Clone, Debug)]
enum Step {
    Discover { attempt: u8, version: String },
    Initialize,
    Initialized,
    ListPage { cursor: Option<String> },
    Call,
    Delete,
}

/// One logical request: possibly several exchanges (resumptions, re-issues).
#[derive(Debug)]
struct Pending {
    step: Step,
    id: u64,
    progress_token: u64,
    exchange: Option<ExchangeId>,
    responses: u32,
    stalled: u32,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    resume_at: Option<Instant>,
    deadline: Instant,
    deadline_budget: Budget,
    deadline_limit: Duration,
    retried_fresh: bool,
    refusals: u32,
}

#[derive(Debug)]
struct ListState {
    cursor: Option<String>,
    seen: HashSet<String>,
    names: list::Names,
    catalog: Catalog,
    /// A call waiting for this listing (after a header mismatch), with the error it got.
    for_call: Option<Box<(CallState, crate::error::RpcError)>>,
    entries: usize,
}

#[derive(Debug)]
struct CallState {
    name: String,
    arguments: Vec<u8>,
    /// Answers to the server's input requests, raw JSON object, for the next round.
    input_responses: Option<Vec<u8>>,
    /// The server's `requestState`, raw JSON string literal, echoed byte for byte.
    request_state: Option<Box<RawValue>>,
    /// Rounds sent after the first (input_required retries).
    rounds: u32,
    /// Waiting for the embedder to answer input requests.
    awaiting_input: bool,
    /// `Mcp-Param-*` headers from the tool's `x-mcp-header` parameters.
    param_headers: Vec<(String, String)>,
    /// When to re-send after load shedding.
    retry_at: Option<Instant>,
    /// Whether the tools were listed once after a header mismatch.
    relisted: bool,
}

impl ListState {
    fn new(for_call: Option<Box<(CallState, crate::error::RpcError)>>) -> Self {
        ListState {
            cursor: None,
            seen: HashSet::new(),
            names: list::Names::default(),
            catalog: Catalog::default(),
            entries: 0,
            for_call,
        }
    }
}

#[derive(Debug)]
enum Op {
    Idle,
    Connect { then: Option<Box<Op>> },
    List { state: ListState, deadline: Instant },
    Call { state: CallState, deadline: Instant },
    Close,
}

impl Op {
    fn operation(&self) -> Option<Operation> {
        match self {
            Op::Idle => None,
            Op::Connect { then: None } => Some(Operation::Connect),
            Op::Connect { then: Some(op) } => op.operation(),
            Op::List { state, .. } if state.for_call.is_some() => Some(Operation::CallTool),
            Op::List { .. } => Some(Operation::ListTools),
            Op::Call { .. } => Some(Operation::CallTool),
            Op::Close => Some(Operation::Close),
        }
    }
}

#[derive(Debug)]
enum Role {
    Main,
    Background,
}

#[derive(Debug)]
enum Body {
    /// Waiting for the head.
    Pending,
    Json(Vec<u8>),
    Sse(SseDecoder),
    Discard,
}

#[derive(Debug)]
struct Exchange {
    id: ExchangeId,
    role: Role,
    decoder: ResponseDecoder,
    body: Body,
    deadline: Instant,
    received: bool,
    fresh: bool,
    /// The last event id when this exchange started (for detecting resumptions without progress).
    start_event_id: Option<String>,
    is_resume: bool,
    /// Set once the response was delivered and only the end of the framing is awaited.
    drain: Option<Drain>,
}

/// The rest of a response whose message was delivered, read only to keep the socket reusable.
#[derive(Debug)]
struct Drain {
    /// Raw bytes still accepted.
    bytes_left: u64,
}

/// What a logical request came to.
enum Outcome<'a> {
    Result(RawJson<'a>),
    RpcError {
        status: u16,
        error: ErrorObject<'a>,
    },
    /// A status with no usable JSON-RPC body.
    Status(u16),
    /// 2xx for a notification or DELETE.
    Accepted,
}

/// What a processing step decided about the current exchange.
enum Flow {
    Continue,
    /// The exchange's part is over (the exchange was removed or abandoned).
    Stop,
}

/// A sans-IO MCP client connection. See the module docs for the driving contract.
#[derive(Debug)]
pub struct Connection {
    config: Config,
    ledger: ByteLedger,
    limits: ResponseLimits,
    session: Session,
    from_hint: bool,
    renegotiated: bool,
    op: Op,
    pending: Option<Pending>,
    exchanges: Vec<Exchange>,
    transmits: VecDeque<Transmit>,
    events: VecDeque<Event>,
    next_exchange: u64,
    next_id: u64,
    dead: Option<Error>,
    closed: bool,
    gets_sent: u64,
    pending_server_info: Option<ServerInfo>,
    /// The `x-mcp-header` parameters of the tools of the last complete listing that have any,
    /// so that [`call_tool`](Connection::call_tool) sends their `Mcp-Param-*` headers.
    listed_headers: Vec<(String, Vec<crate::xmcp::HeaderParam>)>,
    /// The buffer of the message being handled, if it is one (a listed page's tools share it).
    message: Option<bytes::Bytes>,
}

impl Connection {
    /// A new connection with `config`; nothing is sent until an operation starts.
    pub fn new(config: Config) -> Result<Connection, ConfigError> {
        config.validate()?;
        Ok(Connection {
            ledger: ByteLedger::new(config.budgets.response_bytes),
            limits: ResponseLimits::from_budgets(&config.budgets),
            config,
            session: Session::None,
            from_hint: false,
            renegotiated: false,
            op: Op::Idle,
            pending: None,
            exchanges: Vec::new(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            next_exchange: 0,
            next_id: 0,
            dead: None,
            closed: false,
            gets_sent: 0,
            pending_server_info: None,
            listed_headers: Vec::new(),
            message: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Raw bytes read so far on this connection.
    pub fn bytes_read(&self) -> u64 {
        self.ledger.used()
    }

    /// The era and version negotiated, as a hint for the next connection to the same origin.
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

    /// Standalone or resumption `GET` requests sent so far (only resumptions ever send one).
    pub fn gets_sent(&self) -> u64 {
        self.gets_sent
    }

    /// Whether an operation is running.
    pub fn is_busy(&self) -> bool {
        !matches!(self.op, Op::Idle)
    }

    // ----------------------------------------------------------------------------------------
    // Operations

    /// Negotiates the protocol (see the crate docs for the probe, the retry and the fallback).
    pub fn connect(&mut self, now: Instant) {
        if let Err(e) = self.check_can_start(Operation::Connect) {
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
        self.op = Op::Connect { then: None };
        match self.config.era_hint.clone() {
            Some(EraHint {
                era: Era::Modern,
                version,
            }) => {
                self.session = Session::Modern {
                    version: version.clone(),
                };
                self.from_hint = true;
                self.op = Op::Idle;
                self.events.push_back(Event::Connected {
                    era: Era::Modern,
                    version,
                    server_info: None,
                    from_hint: true,
                });
            }
            Some(EraHint {
                era: Era::Legacy, ..
            }) => {
                self.from_hint = true;
                self.start_request(now, Step::Initialize, None);
            }
            None => self.start_probe(now),
        }
    }

    /// Lists every tool, following cursors to the end, within the page and list-time budgets.
    pub fn list_tools(&mut self, now: Instant) {
        if let Err(e) = self.check_connected(Operation::ListTools) {
            return self.events.push_back(Event::Failed {
                operation: Operation::ListTools,
                error: e,
            });
        }
        let deadline = now + self.config.budgets.list_time;
        let state = ListState::new(None);
        self.op = Op::List { state, deadline };
        self.start_request(
            now,
            Step::ListPage { cursor: None },
            Some((deadline, Budget::ListTime)),
        );
    }

    /// Calls tool `name` with `arguments`, raw JSON sent verbatim (empty means `{}`; anything but
    /// a JSON object is refused before sending). A tool of this connection's last listing gets
    /// the `Mcp-Param-*` headers of its `x-mcp-header` parameters.
    pub fn call_tool(&mut self, now: Instant, name: &str, arguments: &[u8]) {
        let listed = self.listed_headers.iter().find(|(n, _)| n == name);
        let params = listed.map(|(_, p)| p.clone()).unwrap_or_default();
        self.start_call(now, name, &params, arguments);
    }

    /// Calls `tool`, held from an earlier listing (possibly on another connection), so that its
    /// `x-mcp-header` parameters are sent as `Mcp-Param-*` headers without listing first.
    pub fn call_known_tool(&mut self, now: Instant, tool: &crate::list::Tool, arguments: &[u8]) {
        self.start_call(now, tool.name(), tool.header_params(), arguments);
    }

    fn start_call(
        &mut self,
        now: Instant,
        name: &str,
        params: &[crate::xmcp::HeaderParam],
        arguments: &[u8],
    ) {
        if let Err(e) = self.check_connected(Operation::CallTool) {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e,
            });
        }
        let arguments = match call::check_arguments(arguments) {
            Ok(a) => a.to_vec(),
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.events.push_back(Event::Failed {
                    operation: Operation::CallTool,
                    error,
                });
            }
        };
        let param_headers = match crate::xmcp::header_values(params, &arguments) {
            Ok(h) => h,
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.events.push_back(Event::Failed {
                    operation: Operation::CallTool,
                    error,
                });
            }
        };
        let deadline = now + self.config.budgets.call_time;
        self.op = Op::Call {
            state: CallState {
                name: name.to_owned(),
                arguments,
                input_responses: None,
                request_state: None,
                rounds: 0,
                awaiting_input: false,
                param_headers,
                retry_at: None,
                relisted: false,
            },
            deadline,
        };
        self.start_request(now, Step::Call, Some((deadline, Budget::CallTime)));
    }

    /// Closes the connection. Always safe: twice, after a failure, or before anything was sent.
    /// A running operation fails with [`Error::Closed`]. A legacy session is ended with `DELETE`,
    /// bounded by the close budget; [`Event::Closed`] follows in every case.
    pub fn close(&mut self, now: Instant) {
        if let Some(operation) = self.op.operation() {
            if !matches!(self.op, Op::Close) {
                self.abandon_main();
                self.op = Op::Idle;
                self.events.push_back(Event::Failed {
                    operation,
                    error: Error::Closed,
                });
            } else {
                return; // already closing
            }
        }
        if self.closed {
            self.events.push_back(Event::Closed);
            return;
        }
        let has_session = matches!(
            &self.session,
            Session::Legacy {
                session_id: Some(_),
                ..
            }
        );
        if has_session && self.ledger.remaining() > 0 {
            self.op = Op::Close;
            let deadline = now + self.config.budgets.close_time;
            self.start_request(now, Step::Delete, Some((deadline, Budget::CloseTime)));
        } else {
            self.finish_close();
        }
    }

    fn check_can_start(&self, _operation: Operation) -> Result<(), Error> {
        if self.closed {
            return Err(Error::Misuse {
                reason: "the connection is closed",
            });
        }
        if self.is_busy() {
            return Err(Error::Misuse {
                reason: "another operation is running",
            });
        }
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        Ok(())
    }

    fn check_connected(&self, operation: Operation) -> Result<(), Error> {
        self.check_can_start(operation)?;
        if self.session == Session::None {
            return Err(Error::Misuse {
                reason: "not connected",
            });
        }
        Ok(())
    }

    // ----------------------------------------------------------------------------------------
    // Outputs

    /// The next request to send, if any.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    /// The next event, if any.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
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
        match &self.op {
            Op::List { deadline, .. } => consider(*deadline),
            Op::Call { deadline, state } => {
                consider(*deadline);
                if let Some(t) = state.retry_at {
                    consider(t);
                }
            }
            _ => {}
        }
        if let Some(p) = &self.pending {
            consider(p.deadline);
            if let Some(t) = p.resume_at {
                consider(t);
            }
        }
        next
    }

    // ----------------------------------------------------------------------------------------
    // Inputs

    /// Time has reached `now`: expire what is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        // Background exchanges past their grace are dropped silently.
        let mut i = 0;
        while i < self.exchanges.len() {
            if matches!(self.exchanges[i].role, Role::Background)
                && self.exchanges[i].deadline <= now
            {
                let ex = self.exchanges.swap_remove(i);
                self.events
                    .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            } else {
                i += 1;
            }
        }
        let Some(p) = &self.pending else {
            // Waiting on the embedder (input requests): only the operation's deadline runs.
            // Waiting on a load-shedding backoff: the retry when it is due.
            if let Op::Call { deadline, state } = &self.op {
                if *deadline <= now {
                    let limit = duration_ms(self.config.budgets.call_time);
                    self.fail_op(
                        now,
                        Error::Budget(BudgetExceeded::new(Budget::CallTime, limit)),
                    );
                } else if state.retry_at.is_some_and(|t| t <= now) {
                    self.send_call_round(now);
                }
            }
            return;
        };
        let exchange_deadline = p
            .exchange
            .and_then(|x| self.exchanges.iter().find(|e| e.id == x))
            .map(|e| e.deadline);
        if p.deadline <= now || exchange_deadline.is_some_and(|d| d <= now) {
            let error = if p.deadline <= now {
                BudgetExceeded::new(p.deadline_budget, duration_ms(p.deadline_limit))
            } else {
                BudgetExceeded::new(
                    Budget::RequestTime,
                    duration_ms(self.config.budgets.request_time),
                )
            };
            self.timed_out(now, error);
            return;
        }
        if p.resume_at.is_some_and(|t| t <= now) {
            self.send_resume(now);
        }
    }

    /// Response bytes arrived for `exchange`, in any split.
    pub fn handle_bytes(&mut self, now: Instant, exchange: ExchangeId, bytes: &[u8]) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let mut ex = self.exchanges.swap_remove(idx);
        if !bytes.is_empty() {
            ex.received = true;
        }
        let mut input = bytes;
        // Runs until the decoder makes no progress: with the input used up it may still owe the
        // end of a response whose last body byte just arrived.
        loop {
            let draining = ex.drain.is_some();
            let decoded = match ex.decoder.decode(input, &mut self.ledger) {
                Ok(d) => d,
                Err(crate::http1::Http1Error::ContentLengthExceedsBudget { .. }) => {
                    // Announced more than the byte budget allows: nothing of it is read.
                    return self.exchange_broken(now, ex, Error::Budget(self.ledger.exceeded()));
                }
                Err(e) => return self.exchange_broken(now, ex, Error::Http(e)),
            };
            if decoded.consumed == 0 && decoded.event.is_none() {
                break;
            }
            input = input.get(decoded.consumed..).unwrap_or_default();
            if draining {
                if let Some(d) = &mut ex.drain {
                    let consumed = u64::try_from(decoded.consumed).unwrap_or(u64::MAX);
                    match d.bytes_left.checked_sub(consumed) {
                        Some(left) => d.bytes_left = left,
                        None => {
                            return self
                                .events
                                .push_back(Event::ExchangeAbandoned { exchange: ex.id })
                        }
                    }
                }
            }
            let flow = match decoded.event {
                None => Flow::Continue,
                Some(ResponseEvent::Head(head)) => self.on_head(now, &mut ex, head),
                Some(ResponseEvent::Body(b)) => self.on_body(now, &mut ex, b),
                Some(ResponseEvent::End { reusable }) => {
                    let reusable = reusable && input.is_empty();
                    return self.on_end(now, ex, reusable);
                }
            };
            if let Flow::Stop = flow {
                return;
            }
        }
        self.exchanges.push(ex);
    }

    /// The server closed `exchange`'s socket (end of stream).
    pub fn handle_eof(&mut self, now: Instant, exchange: ExchangeId) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let mut ex = self.exchanges.swap_remove(idx);
        match ex.decoder.finish() {
            Ok(_) => self.on_end(now, ex, false),
            Err(e) => {
                if !ex.received {
                    return self.exchange_broken(
                        now,
                        ex,
                        Error::UnexpectedEof {
                            stage: "before the response",
                        },
                    );
                }
                self.exchange_broken(now, ex, Error::Http(e))
            }
        }
    }

    /// The transport failed for `exchange` (dial refused, TLS, reset…).
    pub fn handle_transport_error(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        error: TransportError,
    ) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let ex = self.exchanges.swap_remove(idx);
        self.exchange_broken(now, ex, Error::Transport(error));
    }

    // ----------------------------------------------------------------------------------------
    // Response processing

    fn on_head(&mut self, now: Instant, ex: &mut Exchange, head: ResponseHead) -> Flow {
        let status = head.status;
        if matches!(ex.role, Role::Background) {
            ex.body = Body::Discard;
            return Flow::Continue;
        }
        // Session id: legacy sessions must keep the one they were given.
        if let Err(e) = self.check_session_header(&head) {
            self.fail_exchange(now, ex.id, e);
            return Flow::Stop;
        }
        if status == 401 || status == 403 {
            let challenge = head
                .header("www-authenticate")
                .map(|v| truncated_bytes(v, 1024));
            self.fail_exchange(now, ex.id, Error::Authentication { status, challenge });
            return Flow::Stop;
        }
        if (300..400).contains(&status) {
            let location = head.header("location").map(|v| truncated_bytes(v, 1024));
            self.fail_exchange(now, ex.id, Error::Redirect { status, location });
            return Flow::Stop;
        }
        let content_type = head.content_type();
        let is_json = content_type.as_deref() == Some("application/json");
        let is_sse = content_type.as_deref() == Some("text/event-stream");
        let expects_body = self
            .pending
            .as_ref()
            .is_some_and(|p| !matches!(p.step, Step::Initialized | Step::Delete));
        ex.body = if (200..300).contains(&status) {
            if !expects_body || status == 202 || status == 204 {
                Body::Discard
            } else if is_sse {
                let cap = self
                    .config
                    .budgets
                    .sse_event_bytes
                    .min(self.ledger.remaining());
                Body::Sse(SseDecoder::new(cap))
            } else if is_json && !ex.is_resume {
                Body::Json(Vec::new())
            } else {
                let e = ProtocolError::UnexpectedContentType {
                    status,
                    content_type,
                };
                self.fail_exchange(now, ex.id, Error::Protocol(e));
                return Flow::Stop;
            }
        } else if is_json {
            Body::Json(Vec::new())
        } else {
            Body::Discard
        };
        if let (Body::Json(buf), crate::http1::Framing::ContentLength(n)) =
            (&mut ex.body, head.framing)
        {
            buf.reserve(usize::try_from(n).unwrap_or(0));
        }
        Flow::Continue
    }

    fn on_body(&mut self, now: Instant, ex: &mut Exchange, bytes: &[u8]) -> Flow {
        match &mut ex.body {
            Body::Pending | Body::Discard => Flow::Continue,
            Body::Json(buf) => {
                buf.extend_from_slice(bytes);
                Flow::Continue
            }
            Body::Sse(_) => self.feed_sse(now, ex, bytes),
        }
    }

    fn feed_sse(&mut self, now: Instant, ex: &mut Exchange, mut input: &[u8]) -> Flow {
        while !input.is_empty() {
            let Body::Sse(dec) = &mut ex.body else {
                return Flow::Continue;
            };
            let step = match dec.decode(input) {
                Ok(s) => s,
                Err(e) => {
                    self.fail_exchange(now, ex.id, Error::Sse(e));
                    return Flow::Stop;
                }
            };
            input = input.get(step.consumed..).unwrap_or_default();
            match step.item {
                None => {
                    if step.consumed == 0 {
                        break;
                    }
                }
                Some(SseItem::Retry(ms)) => {
                    if let Some(p) = &mut self.pending {
                        p.retry = Some(Duration::from_millis(ms));
                    }
                }
                Some(SseItem::Event(event)) => {
                    if let Some(id) = event.id {
                        if let Some(p) = &mut self.pending {
                            p.last_event_id = if id.is_empty() {
                                None
                            } else {
                                Some(truncated(&id, 1024))
                            };
                        }
                    }
                    if event.data.is_empty() {
                        continue;
                    }
                    let data = list::message_buffer(event.data);
                    self.message = Some(data.clone());
                    let flow = self.on_stream_message(now, ex, &data);
                    self.message = None;
                    if let Flow::Stop = flow {
                        return Flow::Stop;
                    }
                }
            }
        }
        Flow::Continue
    }

    /// One JSON-RPC message from an event stream.
    fn on_stream_message(&mut self, now: Instant, ex: &mut Exchange, data: &[u8]) -> Flow {
        let status = ex.decoder.status().unwrap_or(0);
        let parsed = match &self.pending {
            Some(p) if matches!(p.step, Step::ListPage { .. }) => {
                crate::jsonrpc::parse_message_for_page(data, p.id)
            }
            _ => parse_message(data),
        };
        let msg = match parsed {
            Ok(m) => m,
            Err(e) => {
                self.fail_exchange(now, ex.id, Error::Protocol(e));
                return Flow::Stop;
            }
        };
        let Some(p) = &mut self.pending else {
            return Flow::Continue;
        };
        match msg {
            Message::Notification { method, params } => {
                if method == "notifications/progress" {
                    if let Some(event) =
                        params.and_then(|raw| progress_event(raw, p.progress_token))
                    {
                        self.events.push_back(event);
                    }
                }
                Flow::Continue
            }
            Message::Request { id, method } => {
                if matches!(self.session, Session::Legacy { .. })
                    && p.refusals < MAX_REFUSALS_PER_REQUEST
                {
                    p.refusals += 1;
                    self.refuse_server_request(now, id, &method);
                }
                Flow::Continue
            }
            Message::Result { id, .. } | Message::Error { id: Some(id), .. }
                if !id_matches(id, p.id) =>
            {
                let e = wrong_id(p.id, id);
                self.fail_exchange(now, ex.id, e);
                Flow::Stop
            }
            Message::Result { result, .. } => self.complete_main(now, ex, Outcome::Result(result)),
            Message::Error { error, .. } => {
                self.complete_main(now, ex, Outcome::RpcError { status, error })
            }
        }
    }

    /// The response of `ex` ended (framing complete, or a close-delimited body ended).
    fn on_end(&mut self, now: Instant, mut ex: Exchange, reusable: bool) {
        if matches!(ex.role, Role::Background) {
            let event = Event::ExchangeFinished {
                exchange: ex.id,
                reusable,
            };
            // After the outcome's events, whatever split the framing's end came in: the order of
            // events must not depend on how the bytes were cut.
            self.events.push_back(event);
            return;
        }
        let Some(status) = ex.decoder.status() else {
            return self.exchange_broken(
                now,
                ex,
                Error::UnexpectedEof {
                    stage: "before the response head",
                },
            );
        };
        let body = std::mem::replace(&mut ex.body, Body::Discard);
        self.events.push_back(Event::ExchangeFinished {
            exchange: ex.id,
            reusable,
        });
        self.detach_exchange(ex.id);
        match body {
            Body::Json(buf) => {
                if (200..300).contains(&status) {
                    // Kept while the message is handled: a listed page's tools share it.
                    let buf = list::message_buffer(buf);
                    self.message = Some(buf.clone());
                    self.on_json_response(now, status, &buf);
                    self.message = None;
                } else {
                    match parse_message(&buf) {
                        Ok(Message::Error { error, .. }) => {
                            self.on_outcome(now, Outcome::RpcError { status, error })
                        }
                        _ => self.on_outcome(now, Outcome::Status(status)),
                    }
                }
            }
            Body::Sse(dec) => {
                let _ = dec;
                // The stream ended without the response.
                self.stream_incomplete(now, &ex, "the event stream ended before the response");
            }
            Body::Discard | Body::Pending => {
                if (200..300).contains(&status) {
                    let expects_body = self
                        .pending
                        .as_ref()
                        .is_some_and(|p| !matches!(p.step, Step::Initialized | Step::Delete));
                    if expects_body {
                        self.on_outcome(now, Outcome::Status(status));
                    } else {
                        self.on_outcome(now, Outcome::Accepted);
                    }
                } else {
                    self.on_outcome(now, Outcome::Status(status));
                }
            }
        }
    }

    fn on_json_response(&mut self, now: Instant, status: u16, body: &[u8]) {
        let Some(p) = &self.pending else { return };
        let expected = p.id;
        let parsed = if matches!(p.step, Step::ListPage { .. }) {
            crate::jsonrpc::parse_message_for_page(body, expected)
        } else {
            parse_message(body)
        };
        match parsed {
            Ok(Message::Request { id, .. }) => self.fail_op(now, wrong_id(expected, id)),
            Ok(Message::Result { id, .. } | Message::Error { id: Some(id), .. })
                if !id_matches(id, expected) =>
            {
                self.fail_op(now, wrong_id(expected, id))
            }
            Ok(Message::Result { result, .. }) => self.on_outcome(now, Outcome::Result(result)),
            Ok(Message::Error { error, .. }) => {
                self.on_outcome(now, Outcome::RpcError { status, error })
            }
            Ok(Message::Notification { .. }) => {
                let e = ProtocolError::MalformedMessage {
                    reason: "a notification where a response was expected".into(),
                };
                self.fail_op(now, Error::Protocol(e));
            }
            Err(e) => self.fail_op(now, Error::Protocol(e)),
        }
    }

    /// The main exchange delivered its outcome before its body ended. The outcome is acted on at
    /// once; the exchange becomes a background one that reads the rest of a framed body for a
    /// short grace ([`DRAIN_GRACE`], [`DRAIN_BYTES`]) and finishes reusable if the framing ends
    /// cleanly, or is abandoned. A close-delimited body can never leave a reusable socket: it is
    /// abandoned at once.
    fn complete_main(&mut self, now: Instant, ex: &mut Exchange, outcome: Outcome<'_>) -> Flow {
        self.detach_exchange(ex.id);
        let framed = ex
            .decoder
            .head()
            .is_some_and(|h| h.framing != crate::http1::Framing::CloseDelimited);
        if !framed || ex.decoder.is_ended() {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            self.on_outcome(now, outcome);
            return Flow::Stop;
        }
        ex.role = Role::Background;
        ex.body = Body::Discard;
        ex.deadline = now + DRAIN_GRACE.min(self.config.budgets.close_time);
        ex.drain = Some(Drain {
            bytes_left: DRAIN_BYTES,
        });
        self.on_outcome(now, outcome);
        if self.closed {
            // Closing dropped every other exchange: this one goes too.
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            return Flow::Stop;
        }
        Flow::Continue
    }

    fn detach_exchange(&mut self, id: ExchangeId) {
        if let Some(p) = &mut self.pending {
            if p.exchange == Some(id) {
                p.exchange = None;
            }
        }
    }

    /// A stream of the main request ended without its response.
    fn stream_incomplete(&mut self, now: Instant, ex: &Exchange, why: &'static str) {
        let Some(p) = &mut self.pending else { return };
        let _ = why;
        match &self.session {
            Session::Modern { .. } => {
                // A broken modern stream loses the request: re-issue it with a new id.
                let step = p.step.clone();
                self.reissue(now, step);
            }
            _ => {
                let Some(last) = p.last_event_id.clone() else {
                    let e = ProtocolError::StreamEnded {
                        reason: "the stream carried no event id",
                    };
                    return self.fail_op(now, Error::Protocol(e));
                };
                if ex.start_event_id.as_deref() == Some(last.as_str()) {
                    p.stalled += 1;
                    if p.stalled > self.config.budgets.stalled_resumptions {
                        let limit = u64::from(self.config.budgets.stalled_resumptions);
                        return self.fail_op(
                            now,
                            Error::Budget(BudgetExceeded::new(Budget::StalledResumptions, limit)),
                        );
                    }
                } else {
                    p.stalled = 0;
                }
                let wait = p
                    .retry
                    .unwrap_or(DEFAULT_RETRY_WAIT)
                    .min(self.config.budgets.max_retry_wait);
                p.resume_at = Some(now + wait);
            }
        }
    }

    /// The exchange broke (decoder error, EOF mid-response, transport failure).
    fn exchange_broken(&mut self, now: Instant, ex: Exchange, error: Error) {
        if matches!(ex.role, Role::Background) {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            return;
        }
        self.events
            .push_back(Event::ExchangeAbandoned { exchange: ex.id });
        self.detach_exchange(ex.id);
        // A pooled socket the server closed before answering: send once more on a fresh socket.
        let stale = !ex.received
            && !ex.fresh
            && matches!(
                &error,
                Error::UnexpectedEof { .. }
                    | Error::Transport(TransportError {
                        kind: TransportErrorKind::Io,
                        ..
                    })
            );
        if stale {
            if let Some(p) = &mut self.pending {
                if !p.retried_fresh {
                    p.retried_fresh = true;
                    let step = p.step.clone();
                    return self.send_pending(now, step, true, ex.is_resume);
                }
            }
        }
        let budget_error = matches!(error, Error::Budget(_)) || error.budget().is_some();
        let mid_stream = ex.decoder.status().is_some_and(|s| (200..300).contains(&s));
        if mid_stream
            && !budget_error
            && matches!(
                error,
                Error::Http(_) | Error::Transport(_) | Error::UnexpectedEof { .. }
            )
        {
            let is_sse = matches!(ex.body, Body::Sse(_));
            let modern = matches!(self.session, Session::Modern { .. });
            if is_sse || modern {
                return self.stream_incomplete(now, &ex, "the stream broke");
            }
        }
        self.fail_op(now, error);
    }

    /// Fails the operation because of exchange `id` (already removed from the table).
    fn fail_exchange(&mut self, now: Instant, id: ExchangeId, error: Error) {
        self.events
            .push_back(Event::ExchangeAbandoned { exchange: id });
        self.detach_exchange(id);
        self.fail_op(now, error);
    }

    // ----------------------------------------------------------------------------------------
    // Deciding what an outcome means

    fn on_outcome(&mut self, now: Instant, outcome: Outcome<'_>) {
        let Some(p) = self.pending.take() else { return };
        match p.step {
            Step::Discover { attempt, .. } => self.on_discover(now, attempt, outcome),
            Step::Initialize => self.on_initialize(now, outcome),
            Step::Initialized => match outcome {
                Outcome::Accepted | Outcome::Result(_) => self.connected(now, None),
                Outcome::RpcError { status, error } => {
                    self.fail_op(now, Error::Rpc(error.to_owned_error(status)))
                }
                Outcome::Status(status) => self.fail_op(now, status_error(status)),
            },
            Step::Delete => self.finish_close(),
            Step::ListPage { .. } | Step::Call => {
                let rpc_failure = match outcome {
                    Outcome::Result(result) => {
                        self.from_hint = false;
                        return if matches!(p.step, Step::Call) {
                            self.on_call_result(now, result)
                        } else {
                            self.on_page(now, result)
                        };
                    }
                    Outcome::Accepted => Err(Error::HttpStatus { status: 202 }),
                    Outcome::Status(status) => Err(status_error(status)),
                    Outcome::RpcError { status, error } => {
                        Ok((status, error.code, error.to_owned_error(status)))
                    }
                };
                // The hint may have been wrong: re-negotiate once.
                let wrong_era = match &rpc_failure {
                    Err(Error::HttpStatus { status }) => (400..500).contains(status),
                    Ok((status, code, _)) => {
                        (400..500).contains(status) && *code == UNSUPPORTED_VERSION
                    }
                    Err(_) => false,
                };
                if self.from_hint && !self.renegotiated && wrong_era {
                    return self.renegotiate(now);
                }
                // A header mismatch on a call made without the tool's schema: list once to
                // learn its x-mcp-header parameters, then call once more.
                if let Ok((_, HEADER_MISMATCH, rpc)) = &rpc_failure {
                    if let Op::Call { state, .. } = &self.op {
                        if !state.relisted && matches!(self.session, Session::Modern { .. }) {
                            return self.relist_for_call(now, rpc.clone());
                        }
                    }
                }
                let error = match rpc_failure {
                    Ok((404, _, _)) | Err(Error::HttpStatus { status: 404 })
                        if self.session_id().is_some() =>
                    {
                        Error::SessionExpired
                    }
                    Ok((_, _, e)) => Error::Rpc(e),
                    Err(e) => e,
                };
                self.fail_op(now, error);
            }
        }
    }

    fn on_discover(&mut self, now: Instant, attempt: u8, outcome: Outcome<'_>) {
        match outcome {
            Outcome::Result(result) => match parse_discover(result) {
                Ok(d) => {
                    if let Some(v) = self.best_modern(&d.supported) {
                        self.session = Session::Modern { version: v };
                        self.connected(now, d.server_info);
                    } else if d
                        .supported
                        .iter()
                        .any(|v| self.config.legacy_versions.contains(v))
                    {
                        self.start_request(now, Step::Initialize, None);
                    } else {
                        self.fail_op(now, self.no_mutual(&d.supported, true));
                    }
                }
                Err(reason) => self.fail_op(now, invalid_answer("server/discover", reason)),
            },
            Outcome::RpcError { status, error } if MODERN_ERROR_CODES.contains(&error.code) => {
                if error.code != UNSUPPORTED_VERSION {
                    return self.fail_op(now, Error::Rpc(error.to_owned_error(status)));
                }
                // One retry, even with the version just refused when the server lists it as
                // supported (a deployment mid-upgrade answers both ways); never a second.
                let supported = supported_versions(error.data);
                match self.best_modern(&supported) {
                    Some(v) if attempt == 0 => {
                        self.start_request(
                            now,
                            Step::Discover {
                                attempt: 1,
                                version: v,
                            },
                            None,
                        );
                    }
                    _ => self.fail_op(now, self.no_mutual(&supported, false)),
                }
            }
            Outcome::RpcError { status, .. } | Outcome::Status(status)
                if (400..500).contains(&status) || status == 200 =>
            {
                if self.config.legacy_versions.is_empty() {
                    return self.fail_op(now, Error::HttpStatus { status });
                }
                self.start_request(now, Step::Initialize, None);
            }
            Outcome::RpcError { status, .. } | Outcome::Status(status) => {
                self.fail_op(now, Error::HttpStatus { status })
            }
            Outcome::Accepted => self.fail_op(now, Error::HttpStatus { status: 202 }),
        }
    }

    fn on_initialize(&mut self, now: Instant, outcome: Outcome<'_>) {
        match outcome {
            Outcome::Result(result) => match parse_initialize(result) {
                Ok((version, server_info)) => {
                    if !self.config.legacy_versions.contains(&version) {
                        return self.fail_op(now, self.no_mutual(&[version], false));
                    }
                    // The session id was recorded from the head (see `check_session_header`).
                    let session_id = self.session_id().map(str::to_owned);
                    self.session = Session::Legacy {
                        version,
                        session_id,
                    };
                    self.pending_server_info = server_info;
                    self.start_request(now, Step::Initialized, None);
                }
                Err(reason) => self.fail_op(now, invalid_answer("initialize", reason)),
            },
            Outcome::RpcError { status, error } => {
                let modern = MODERN_ERROR_CODES.contains(&error.code)
                    || (status == 404 && error.code == -32601);
                if modern && self.from_hint && !self.renegotiated {
                    return self.renegotiate(now);
                }
                self.fail_op(now, Error::Rpc(error.to_owned_error(status)))
            }
            Outcome::Status(status) => {
                if self.from_hint && !self.renegotiated && (400..500).contains(&status) {
                    return self.renegotiate(now);
                }
                self.fail_op(now, status_error(status))
            }
            Outcome::Accepted => self.fail_op(now, Error::HttpStatus { status: 202 }),
        }
    }

    fn on_page(&mut self, now: Instant, result: RawJson<'_>) {
        let Op::List { state, deadline } = &mut self.op else {
            return;
        };
        let deadline = *deadline;
        let name_rule = self.config.tool_names;
        let budget = if state.for_call.is_some() {
            Budget::CallTime
        } else {
            Budget::ListTime
        };
        let next_cursor = match list::add_page(
            &mut state.catalog,
            &mut state.names,
            &mut state.entries,
            name_rule,
            self.message.as_ref(),
            result,
        ) {
            Ok(cursor) => cursor,
            Err(list::PageError::Invalid(reason)) => {
                return self.fail_op(now, invalid_answer("tools/list", reason))
            }
            Err(list::PageError::Malformed(e)) => return self.fail_op(now, Error::Protocol(e)),
        };
        state.catalog.pages += 1;
        match next_cursor {
            None => {
                let Op::List { state, deadline } = std::mem::replace(&mut self.op, Op::Idle) else {
                    return;
                };
                self.listed_headers = state
                    .catalog
                    .tools
                    .iter()
                    .filter(|t| !t.header_params().is_empty())
                    .map(|t| (t.name().to_owned(), t.header_params().to_vec()))
                    .collect();
                match state.for_call {
                    None => self.events.push_back(Event::ToolsListed(state.catalog)),
                    Some(pending) => self.resume_call(now, *pending, &state.catalog, deadline),
                }
            }
            Some(cursor) => {
                if state.catalog.pages >= self.config.budgets.pages {
                    let limit = u64::from(self.config.budgets.pages);
                    return self.fail_op(
                        now,
                        Error::Budget(BudgetExceeded::new(Budget::Pages, limit)),
                    );
                }
                if !state.seen.insert(cursor.clone()) {
                    let cursor = truncated(&cursor, 64);
                    let e = Error::Protocol(ProtocolError::PaginationLoop { cursor });
                    return self.fail_op(now, e);
                }
                state.cursor = Some(cursor.clone());
                self.start_request(
                    now,
                    Step::ListPage {
                        cursor: Some(cursor),
                    },
                    Some((deadline, budget)),
                );
            }
        }
    }

    fn on_call_result(&mut self, now: Instant, result: RawJson<'_>) {
        let (requests, state) = match call::parse_call_result(result) {
            Ok(CallAnswer::Complete(r)) => {
                self.op = Op::Idle;
                self.events.push_back(Event::CallFinished(r));
                return;
            }
            Ok(CallAnswer::InputRequired { requests, state }) => (requests, state),
            Err(reason) => return self.fail_op(now, invalid_answer("tools/call", reason)),
        };
        let input_hook = self.config.input_hook;
        let limit = self.config.budgets.responses_per_request;
        let Op::Call { state: call, .. } = &mut self.op else {
            return;
        };
        // Every round is a response spent on the one logical call.
        if call.rounds + 1 >= limit {
            let e = BudgetExceeded::new(Budget::ResponsesPerRequest, u64::from(limit));
            return self.fail_op(now, Error::Budget(e));
        }
        call.request_state = state;
        call.input_responses = None;
        match requests {
            // Load shedding: retry echoing the state, the first time at once, then backing off.
            None => {
                let wait = load_shedding_backoff(call.rounds);
                if wait.is_zero() {
                    self.send_call_round(now);
                } else {
                    call.retry_at = Some(now + wait);
                }
            }
            Some(requests) if input_hook => {
                call.awaiting_input = true;
                self.events.push_back(Event::InputRequired { requests });
            }
            Some(requests) => {
                let reason = format!(
                    "input_required asks for {} and no input hook is configured",
                    requested_kinds(&requests)
                );
                self.fail_op(now, invalid_answer("tools/call", reason))
            }
        }
    }

    /// Lists the tools inside the running call's budget, to recover from a header mismatch.
    fn relist_for_call(&mut self, now: Instant, error: crate::error::RpcError) {
        let Op::Call {
            mut state,
            deadline,
        } = std::mem::replace(&mut self.op, Op::Idle)
        else {
            return;
        };
        state.relisted = true;
        let list = ListState::new(Some(Box::new((state, error))));
        self.op = Op::List {
            state: list,
            deadline,
        };
        self.start_request(
            now,
            Step::ListPage { cursor: None },
            Some((deadline, Budget::CallTime)),
        );
    }

    /// The listing after a header mismatch is complete: call once more with the tool's headers.
    fn resume_call(
        &mut self,
        now: Instant,
        pending: (CallState, crate::error::RpcError),
        catalog: &Catalog,
        deadline: Instant,
    ) {
        let (mut call, error) = pending;
        let Some(tool) = catalog.tools.iter().find(|t| t.name() == call.name) else {
            self.op = Op::Call {
                state: call,
                deadline,
            };
            return self.fail_op(now, Error::Rpc(error));
        };
        match crate::xmcp::header_values(tool.header_params(), &call.arguments) {
            Ok(h) => call.param_headers = h,
            Err(reason) => {
                self.op = Op::Call {
                    state: call,
                    deadline,
                };
                let e = Error::Config(ConfigError::InvalidArguments { reason });
                return self.fail_op(now, e);
            }
        }
        self.op = Op::Call {
            state: call,
            deadline,
        };
        self.start_request(now, Step::Call, Some((deadline, Budget::CallTime)));
    }

    fn send_call_round(&mut self, now: Instant) {
        let Op::Call { state, deadline } = &mut self.op else {
            return;
        };
        state.rounds += 1;
        state.retry_at = None;
        let deadline = *deadline;
        self.start_request(now, Step::Call, Some((deadline, Budget::CallTime)));
    }

    /// Answers the input requests of the running tool call ([`Event::InputRequired`]):
    /// `responses` is a JSON object mapping each request key to its result, sent as
    /// `inputResponses` in a new request that echoes the server's `requestState`. `None`
    /// declines: the call fails as an answer this client cannot fulfil.
    pub fn provide_input(&mut self, now: Instant, responses: Option<&[u8]>) {
        let waiting = matches!(&self.op, Op::Call { state, .. } if state.awaiting_input);
        if !waiting {
            let error = Error::Misuse {
                reason: "no tool call is waiting for input",
            };
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error,
            });
        }
        let Some(responses) = responses else {
            let reason = "the embedder declined the server's input requests";
            return self.fail_op(now, invalid_answer("tools/call", reason.into()));
        };
        let responses = match call::check_arguments(responses) {
            Ok(r) => r.to_vec(),
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.fail_op(now, error);
            }
        };
        if let Op::Call { state, .. } = &mut self.op {
            state.awaiting_input = false;
            state.input_responses = Some(responses);
        }
        self.send_call_round(now);
    }

    fn best_modern(&self, supported: &[String]) -> Option<String> {
        self.config
            .modern_versions
            .iter()
            .find(|v| supported.contains(v))
            .cloned()
    }

    fn no_mutual(&self, theirs: &[String], all: bool) -> Error {
        let mut ours = self.config.modern_versions.clone();
        if all
            || theirs
                .iter()
                .all(|v| v.as_str() < crate::config::MODERN_VERSION)
        {
            ours.extend(self.config.legacy_versions.iter().cloned());
        }
        Error::NoMutualVersion {
            ours,
            theirs: theirs.iter().take(16).map(|v| truncated(v, 64)).collect(),
        }
    }

    fn connected(&mut self, now: Instant, server_info: Option<ServerInfo>) {
        let server_info = server_info.or_else(|| self.pending_server_info.take());
        let (era, version) = match &self.session {
            Session::Modern { version } => (Era::Modern, version.clone()),
            Session::Legacy { version, .. } => (Era::Legacy, version.clone()),
            Session::None => return,
        };
        let then = match std::mem::replace(&mut self.op, Op::Idle) {
            Op::Connect { then } => then,
            _ => None,
        };
        self.from_hint = false;
        self.events.push_back(Event::Connected {
            era,
            version,
            server_info,
            from_hint: false,
        });
        if let Some(op) = then {
            self.restart(now, *op);
        }
    }

    /// Re-negotiates once after an era hint proved wrong, then restarts the operation.
    fn renegotiate(&mut self, now: Instant) {
        self.renegotiated = true;
        self.from_hint = false;
        self.session = Session::None;
        let op = std::mem::replace(&mut self.op, Op::Idle);
        let then = match op {
            Op::Connect { then } => then,
            Op::Idle | Op::Close => None,
            other => Some(Box::new(other)),
        };
        self.op = Op::Connect { then };
        self.start_probe(now);
    }

    fn restart(&mut self, now: Instant, op: Op) {
        match op {
            Op::List { deadline, .. } => {
                let state = ListState::new(None);
                self.op = Op::List { state, deadline };
                self.start_request(
                    now,
                    Step::ListPage { cursor: None },
                    Some((deadline, Budget::ListTime)),
                );
            }
            Op::Call { state, deadline } => {
                self.op = Op::Call { state, deadline };
                self.start_request(now, Step::Call, Some((deadline, Budget::CallTime)));
            }
            _ => {}
        }
    }

    fn start_probe(&mut self, now: Instant) {
        match self.config.modern_versions.first().cloned() {
            Some(version) => self.start_request(
                now,
                Step::Discover {
                    attempt: 0,
                    version,
                },
                None,
            ),
            None => self.start_request(now, Step::Initialize, None),
        }
    }

    // ----------------------------------------------------------------------------------------
    // Failure, timeout, close

    fn fail_op(&mut self, _now: Instant, error: Error) {
        self.abandon_main();
        self.pending = None;
        let op = std::mem::replace(&mut self.op, Op::Idle);
        if matches!(op, Op::Close) {
            return self.finish_close();
        }
        let Some(operation) = op.operation() else {
            return;
        };
        if matches!(
            error.kind(),
            crate::error::ErrorKind::ConnectionFailed
                | crate::error::ErrorKind::AuthenticationFailed
        ) && !matches!(error, Error::Misuse { .. } | Error::Config(_))
        {
            self.dead = Some(error.clone());
        }
        if matches!(operation, Operation::Connect) {
            self.session = Session::None;
        }
        self.events.push_back(Event::Failed { operation, error });
    }

    fn timed_out(&mut self, now: Instant, error: BudgetExceeded) {
        let cancel = match (&self.pending, &self.session) {
            (Some(p), Session::Legacy { .. })
                if matches!(p.step, Step::ListPage { .. } | Step::Call) =>
            {
                Some(p.id)
            }
            _ => None,
        };
        self.fail_op(now, Error::Budget(error));
        if let Some(id) = cancel {
            let mut params = Vec::new();
            let mut w = ObjectWriter::new(&mut params);
            w.uint("requestId", id).string("reason", "timeout");
            w.finish();
            let body = notification_body("notifications/cancelled", Some(&params));
            self.send_background(now, Method::Post, body);
        }
    }

    fn abandon_main(&mut self) {
        if let Some(x) = self.pending.as_mut().and_then(|p| p.exchange.take()) {
            if let Some(idx) = self.exchanges.iter().position(|e| e.id == x) {
                self.exchanges.swap_remove(idx);
                self.events
                    .push_back(Event::ExchangeAbandoned { exchange: x });
            }
        }
        self.pending = None;
    }

    fn finish_close(&mut self) {
        self.abandon_main();
        self.op = Op::Idle;
        for ex in std::mem::take(&mut self.exchanges) {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
        }
        self.closed = true;
        self.events.push_back(Event::Closed);
    }

    // ----------------------------------------------------------------------------------------
    // Sending

    /// Starts a new logical request. `aggregate` is the operation's deadline and budget, if any.
    fn start_request(&mut self, now: Instant, step: Step, aggregate: Option<(Instant, Budget)>) {
        let budgets = &self.config.budgets;
        let (deadline, deadline_budget, deadline_limit) = match (&step, aggregate) {
            (Step::Call, Some((d, b))) => (d, b, budgets.call_time),
            (_, Some((d, b))) => {
                let limit = if b == Budget::CloseTime {
                    budgets.close_time
                } else {
                    budgets.list_time
                };
                (d, b, limit)
            }
            (_, None) => (
                now + budgets.request_time,
                Budget::RequestTime,
                budgets.request_time,
            ),
        };
        let id = self.next_request_id();
        self.pending = Some(Pending {
            step: step.clone(),
            id,
            progress_token: id,
            exchange: None,
            responses: 0,
            stalled: 0,
            last_event_id: None,
            retry: None,
            resume_at: None,
            deadline,
            deadline_budget,
            deadline_limit,
            retried_fresh: false,
            refusals: 0,
        });
        self.send_pending(now, step, false, false);
    }

    fn next_request_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A modern re-issue: same request, new id.
    fn reissue(&mut self, now: Instant, step: Step) {
        let id = self.next_request_id();
        if let Some(p) = &mut self.pending {
            p.id = id;
        }
        self.send_pending(now, step, false, false);
    }

    fn send_resume(&mut self, now: Instant) {
        let step = match &mut self.pending {
            Some(p) => {
                p.resume_at = None;
                p.step.clone()
            }
            None => return,
        };
        self.send_pending(now, step, false, true);
    }

    /// Sends (or re-sends) the pending request, as a `GET` resumption if `resume`.
    fn send_pending(&mut self, now: Instant, step: Step, fresh: bool, resume: bool) {
        let Some(p) = &mut self.pending else { return };
        p.responses += 1;
        if p.responses > self.config.budgets.responses_per_request {
            let limit = u64::from(self.config.budgets.responses_per_request);
            return self.fail_op(
                now,
                Error::Budget(BudgetExceeded::new(Budget::ResponsesPerRequest, limit)),
            );
        }
        let (id, token, last_event_id) = (p.id, p.progress_token, p.last_event_id.clone());
        let request = if resume {
            let mut headers = self.base_headers(None, false);
            headers.retain(|(n, _)| n != "Accept" && n != "Content-Type");
            headers.push(("Accept".into(), "text/event-stream".into()));
            if let Some(last) = last_event_id.clone() {
                headers.push(("Last-Event-ID".into(), last));
            }
            self.gets_sent += 1;
            self.request(Method::Get, headers, Vec::new())
        } else {
            match self.build_step(&step, id, token) {
                Ok(r) => r,
                Err(e) => return self.fail_op(now, e),
            }
        };
        let bytes = match request.encode() {
            Ok(b) => b,
            Err(e) => return self.fail_op(now, Error::Request(e)),
        };
        let exchange = self.new_exchange(now, Role::Main, fresh);
        let deadline = match &step {
            Step::Call => None,
            _ => Some(now + self.config.budgets.request_time),
        };
        if let Some(ex) = self.exchanges.iter_mut().find(|e| e.id == exchange) {
            if let Some(d) = deadline {
                ex.deadline = ex.deadline.min(d);
            }
            ex.start_event_id = last_event_id;
            ex.is_resume = resume;
        }
        if let Some(p) = &mut self.pending {
            p.exchange = Some(exchange);
        }
        self.transmits.push_back(Transmit {
            exchange,
            bytes,
            fresh_socket: fresh,
        });
    }

    fn new_exchange(&mut self, now: Instant, role: Role, fresh: bool) -> ExchangeId {
        self.next_exchange += 1;
        let id = ExchangeId(self.next_exchange);
        let deadline = match role {
            Role::Main => self
                .pending
                .as_ref()
                .map_or(now + self.config.budgets.request_time, |p| p.deadline),
            Role::Background => now + self.config.budgets.close_time,
        };
        self.exchanges.push(Exchange {
            id,
            role,
            decoder: ResponseDecoder::new(self.limits),
            body: Body::Pending,
            deadline,
            received: false,
            fresh,
            start_event_id: None,
            is_resume: false,
            drain: None,
        });
        id
    }

    /// Fire-and-forget request whose answer is discarded (legacy cancellation, refusals).
    fn send_background(&mut self, now: Instant, method: Method, body: Vec<u8>) {
        let headers = self.base_headers(None, true);
        let request = self.request(method, headers, body);
        let Ok(bytes) = request.encode() else { return };
        let exchange = self.new_exchange(now, Role::Background, false);
        self.transmits.push_back(Transmit {
            exchange,
            bytes,
            fresh_socket: false,
        });
    }

    fn refuse_server_request(&mut self, now: Instant, id: &RawValue, method: &str) {
        let mut body = Vec::new();
        let mut w = ObjectWriter::new(&mut body);
        w.string("jsonrpc", "2.0").raw("id", id.get().as_bytes());
        if method == "ping" {
            w.raw("result", b"{}");
        } else {
            w.object("error", |e| {
                e.raw("code", b"-32601")
                    .string("message", "this client does not serve requests");
            });
        }
        w.finish();
        self.send_background(now, Method::Post, body);
    }

    fn request(&self, method: Method, headers: Vec<(String, String)>, body: Vec<u8>) -> Request {
        Request {
            method,
            target: self.config.endpoint.target().to_owned(),
            authority: self.config.endpoint.authority().to_owned(),
            headers,
            body,
        }
    }

    /// Headers every request carries: content negotiation, authorization, era headers.
    /// `mcp_method` is the `Mcp-Method` of a modern request.
    fn base_headers(&self, mcp_method: Option<&str>, with_body: bool) -> Vec<(String, String)> {
        let mut h: Vec<(String, String)> = Vec::with_capacity(8);
        if with_body {
            h.push(("Content-Type".into(), "application/json".into()));
        }
        h.push((
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ));
        if !self.config.bearer_token.is_empty() {
            h.push((
                "Authorization".into(),
                format!("Bearer {}", self.config.bearer_token),
            ));
        }
        match &self.session {
            Session::Modern { version } => {
                h.push(("MCP-Protocol-Version".into(), version.clone()));
                if let Some(m) = mcp_method {
                    h.push(("Mcp-Method".into(), m.to_owned()));
                }
            }
            Session::Legacy {
                version,
                session_id,
            } => {
                if version.as_str() >= "2025-06-18" {
                    h.push(("MCP-Protocol-Version".into(), version.clone()));
                }
                if let Some(s) = session_id {
                    h.push(("Mcp-Session-Id".into(), s.clone()));
                }
            }
            Session::None => {}
        }
        h
    }

    fn meta(&self, version: &str, out: &mut ObjectWriter<'_>, progress_token: Option<u64>) {
        let info = &self.config.client_info;
        out.object("_meta", |m| {
            m.string("io.modelcontextprotocol/protocolVersion", version)
                .raw(
                    "io.modelcontextprotocol/clientCapabilities",
                    self.config.client_capabilities.as_bytes(),
                )
                .object("io.modelcontextprotocol/clientInfo", |i| {
                    i.string("name", &info.name)
                        .string("version", &info.version);
                });
            if let Some(t) = progress_token {
                m.uint("progressToken", t);
            }
        });
    }

    fn build_step(&self, step: &Step, id: u64, token: u64) -> Result<Request, Error> {
        let modern_version = match &self.session {
            Session::Modern { version } => Some(version.clone()),
            _ => None,
        };
        let mut body = Vec::with_capacity(256);
        let headers;
        match step {
            Step::Discover { version, .. } => {
                let mut h = self.base_headers(None, true);
                h.push(("MCP-Protocol-Version".into(), version.clone()));
                h.push(("Mcp-Method".into(), "server/discover".into()));
                headers = h;
                let mut w = request_writer(&mut body, id, "server/discover");
                w.object("params", |p| self.meta(version, p, None));
                w.finish();
            }
            Step::Initialize => {
                headers = self.base_headers(None, true);
                let offered = self
                    .config
                    .legacy_versions
                    .first()
                    .map_or("2025-11-25", String::as_str);
                let info = &self.config.client_info;
                let mut w = request_writer(&mut body, id, "initialize");
                w.object("params", |p| {
                    p.string("protocolVersion", offered)
                        .raw("capabilities", b"{}")
                        .object("clientInfo", |i| {
                            i.string("name", &info.name)
                                .string("version", &info.version);
                        });
                });
                w.finish();
            }
            Step::Initialized => {
                headers = self.base_headers(None, true);
                body = notification_body("notifications/initialized", None);
            }
            Step::ListPage { cursor } => {
                headers = self.base_headers(Some("tools/list"), true);
                let mut w = request_writer(&mut body, id, "tools/list");
                w.object("params", |p| {
                    if let Some(c) = cursor {
                        p.string("cursor", c);
                    }
                    if let Some(v) = &modern_version {
                        self.meta(v, p, None);
                    }
                });
                w.finish();
            }
            Step::Call => {
                let Op::Call { state, .. } = &self.op else {
                    return Err(Error::Misuse {
                        reason: "no call is running",
                    });
                };
                let mut h = self.base_headers(Some("tools/call"), true);
                if modern_version.is_some() {
                    h.push((
                        "Mcp-Name".into(),
                        crate::xmcp::encode_header_value(&state.name),
                    ));
                    h.extend(state.param_headers.iter().cloned());
                }
                headers = h;
                let mut w = request_writer(&mut body, id, "tools/call");
                w.object("params", |p| {
                    p.string("name", &state.name)
                        .raw("arguments", &state.arguments);
                    if let Some(r) = &state.input_responses {
                        p.raw("inputResponses", r);
                    }
                    if let Some(s) = &state.request_state {
                        p.raw("requestState", s.get().as_bytes());
                    }
                    match &modern_version {
                        Some(v) => self.meta(v, p, Some(token)),
                        None => {
                            p.object("_meta", |m| {
                                m.uint("progressToken", token);
                            });
                        }
                    }
                });
                w.finish();
            }
            Step::Delete => {
                headers = self.base_headers(None, false);
                return Ok(self.request(Method::Delete, headers, Vec::new()));
            }
        }
        Ok(self.request(Method::Post, headers, body))
    }

    /// Legacy sessions: record the id from `initialize`, then insist it never changes.
    fn check_session_header(&mut self, head: &ResponseHead) -> Result<(), Error> {
        let Some(raw) = head.header("mcp-session-id") else {
            return Ok(());
        };
        let invalid = |reason| Error::Protocol(ProtocolError::InvalidSession { reason });
        match (&mut self.session, self.pending.as_ref().map(|p| &p.step)) {
            (Session::Modern { .. }, _) => Ok(()), // modern servers have no sessions: ignored
            (_, Some(Step::Initialize)) => {
                if raw.is_empty()
                    || raw.len() > MAX_SESSION_ID
                    || !raw.iter().all(|b| (0x21..=0x7e).contains(b))
                {
                    return Err(invalid("not 1 to 1024 visible ASCII characters"));
                }
                let id = String::from_utf8_lossy(raw).into_owned();
                self.session = Session::Legacy {
                    version: String::new(),
                    session_id: Some(id),
                };
                Ok(())
            }
            (Session::Legacy { session_id, .. }, _) => match session_id {
                Some(s) if s.as_bytes() == raw => Ok(()),
                _ => Err(invalid("the session id changed during the connection")),
            },
            _ => Ok(()),
        }
    }
}

fn request_writer<'a>(out: &'a mut Vec<u8>, id: u64, method: &str) -> ObjectWriter<'a> {
    let mut w = ObjectWriter::new(out);
    w.string("jsonrpc", "2.0")
        .uint("id", id)
        .string("method", method);
    w
}

fn notification_body(method: &str, params: Option<&[u8]>) -> Vec<u8> {
    let mut body = Vec::new();
    let mut w = ObjectWriter::new(&mut body);
    w.string("jsonrpc", "2.0").string("method", method);
    if let Some(p) = params {
        w.raw("params", p);
    }
    w.finish();
    body
}

/// The wait before load-shedding retry `round` (none before the first retry, then 100 ms
/// doubling, at most 2 s).
pub fn load_shedding_backoff(round: u32) -> Duration {
    match round {
        0 => Duration::ZERO,
        n => Duration::from_millis(100u64 << (n - 1).min(5)).min(Duration::from_secs(2)),
    }
}

/// The distinct methods an `inputRequests` object asks for, for error messages.
fn requested_kinds(requests: &RawValue) -> String {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(default)]
        method: Option<String>,
    }
    let map: std::collections::BTreeMap<String, Entry> =
        serde_json::from_str(requests.get()).unwrap_or_default();
    let mut kinds: Vec<String> = map
        .into_values()
        .map(|e| truncated(e.method.as_deref().unwrap_or("an unnamed request"), 64))
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds.truncate(8);
    kinds.join(", ")
}

/// A response for another request than the one sent.
fn wrong_id(expected: u64, got: &RawValue) -> Error {
    Error::Protocol(ProtocolError::WrongId {
        expected,
        got: truncated(got.get(), 64),
    })
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn status_error(status: u16) -> Error {
    Error::HttpStatus { status }
}

fn invalid_answer(method: &str, reason: String) -> Error {
    Error::InvalidAnswer {
        method: method.to_owned(),
        reason: truncated(&reason, 512),
    }
}

struct Discovered {
    supported: Vec<String>,
    server_info: Option<ServerInfo>,
}

fn parse_discover(result: RawJson<'_>) -> Result<Discovered, String> {
    #[derive(Deserialize)]
    struct Wire<'a> {
        #[serde(rename = "supportedVersions")]
        supported: Vec<String>,
        #[serde(rename = "serverInfo", default)]
        server_info: Option<ServerInfo>,
        #[serde(rename = "resultType", default, borrow)]
        result_type: Option<&'a str>,
        #[serde(rename = "_meta", default)]
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "io.modelcontextprotocol/serverInfo", default)]
        server_info: Option<ServerInfo>,
    }
    let w: Wire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    if !matches!(w.result_type, None | Some("complete")) {
        return Err("unexpected resultType".into());
    }
    let server_info = w.meta.and_then(|m| m.server_info).or(w.server_info);
    Ok(Discovered {
        supported: w.supported,
        server_info,
    })
}

fn parse_initialize(result: RawJson<'_>) -> Result<(String, Option<ServerInfo>), String> {
    #[derive(Deserialize)]
    struct Wire {
        #[serde(rename = "protocolVersion")]
        protocol_version: String,
        #[serde(rename = "serverInfo", default)]
        server_info: Option<ServerInfo>,
    }
    let w: Wire = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    Ok((w.protocol_version, w.server_info))
}

/// Versions kept from a -32022 error's `data.supported`.
const MAX_SUPPORTED_VERSIONS: usize = 64;

/// The versions named in a -32022 error's `data.supported`: the first
/// [`MAX_SUPPORTED_VERSIONS`] strings, each truncated to 64 bytes. The rest of the list is
/// skipped without being materialised, so an enormous list costs no memory beyond its raw bytes.
fn supported_versions(data: Option<&RawValue>) -> Vec<String> {
    use serde::de::{IgnoredAny, SeqAccess, Visitor};

    /// One entry: a string (truncated), or anything else, skipped.
    struct Entry(Option<String>);
    impl<'de> Deserialize<'de> for Entry {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Entry;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Entry, E> {
                    Ok(Entry(Some(truncated(s, 64))))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_unit<E>(self) -> Result<Entry, E> {
                    Ok(Entry(None))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Entry, A::Error> {
                    while a.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Entry, A::Error> {
                    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Entry(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    /// The list: the first strings kept, the rest skipped.
    struct Versions(Vec<String>);
    impl<'de> Deserialize<'de> for Versions {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Versions;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("a list of versions")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Versions, A::Error> {
                    let mut out = Vec::new();
                    while out.len() < MAX_SUPPORTED_VERSIONS {
                        match a.next_element::<Entry>()? {
                            Some(Entry(Some(v))) => out.push(v),
                            Some(Entry(None)) => {}
                            None => return Ok(Versions(out)),
                        }
                    }
                    while a.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Versions(out))
                }
            }
            d.deserialize_seq(V)
        }
    }

    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        supported: Option<Versions>,
    }
    let Some(data) = data else { return Vec::new() };
    let Ok(d) = serde_json::from_str::<Data>(data.get()) else {
        return Vec::new();
    };
    d.supported.map(|v| v.0).unwrap_or_default()
}

fn progress_event(params: &RawValue, token: u64) -> Option<Event> {
    #[derive(Deserialize)]
    struct Wire<'a> {
        #[serde(rename = "progressToken", borrow)]
        token: &'a RawValue,
        progress: f64,
        #[serde(default)]
        total: Option<f64>,
        #[serde(default)]
        message: Option<String>,
    }
    let w: Wire<'_> = serde_json::from_str(params.get()).ok()?;
    if !id_matches(w.token, token) {
        return None;
    }
    Some(Event::Progress {
        progress: w.progress,
        total: w.total,
        message: w.message.map(|m| truncated(&m, 1024)),
    })
}
