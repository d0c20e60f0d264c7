//! The hostile-server scenario catalogue: each scenario is a server's behaviour per request, the
//! operation the client runs against it and the outcome it must reach.
//!
//! The catalogue is data ([`Scenario`] values built from [`script`] steps): `tests/hostile.rs`
//! runs it against the core in virtual time, and [`socket::serve`] plays the same scripts on
//! real sockets for an adapter runner ([`adapter_run`], with the operation of `operate`). Its
//! HTTP/2 mode is [`h2`], run on sockets by [`h2_sockets`]; [`h2_play`] answers the scripts
//! themselves over HTTP/2 (the task scenarios', on sockets for the adapters and in
//! `tests/hostile_h2.rs` for the core); [`counting`] is the per-thread counting allocator of the
//! in-memory runners.
#![allow(dead_code)]

pub mod adapter_run;

pub mod catalogue;

pub mod counting;

pub mod h2;

pub mod h2_play;

pub mod h2_sockets;

#[cfg(feature = "net")]
pub mod operate;

pub mod script;

pub mod socket;

use std::time::Duration;

use mcp_sansio::internals::{MAX_ERROR_DATA, MAX_ERROR_MESSAGE};
use mcp_sansio::task::TaskError;
use mcp_sansio::wire::WireError;
use mcp_sansio::{Budget, Budgets, Error, ErrorKind, ProtocolError};
use script::{Pieces, Rule, Server};

/// What the client has done before the operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// Nothing: the operation is the connect itself.
    Fresh,
    /// Connected to a modern server from an era hint (no request).
    Modern,
    /// Connected to a legacy server (`initialize` from an era hint, session `sess-1`); the
    /// handshake's rules come first.
    Legacy,
}

/// The operation under test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `connect` (with [`Setup::Fresh`]).
    Connect,
    /// `list_tools`.
    List,
    /// `call_tool("t", args)`.
    Call(&'static str),
    /// `close`.
    Close,
}

/// How a scenario failed, beyond its [`ErrorKind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// This budget, with the configured limit.
    Budget(Budget),
    /// A malformed HTTP/1 response (`Error::Http`, not a budget).
    Http,
    /// A malformed event stream (`Error::Sse`, not a budget).
    Sse,
    /// End of stream before the response (`Error::UnexpectedEof`).
    Eof,
    /// `Error::Redirect`.
    Redirect,
    /// `Error::Authentication` with this status.
    Auth(u16),
    /// `Error::HttpStatus` with this status.
    Status(u16),
    /// `Error::SessionExpired`.
    SessionExpired,
    /// `Error::NoMutualVersion`.
    NoMutualVersion,
    /// `Error::Rpc` with this code.
    Rpc(i64),
    /// `Error::InvalidAnswer`.
    InvalidAnswer,
    /// `ProtocolError::MalformedMessage`.
    Malformed,
    /// `ProtocolError::Batch`.
    Batch,
    /// `ProtocolError::WrongId`.
    WrongId,
    /// `ProtocolError::UnexpectedContentType`.
    ContentType,
    /// `ProtocolError::StreamEnded`.
    StreamEnded,
    /// `ProtocolError::InvalidSession`.
    InvalidSession,
    /// `ProtocolError::PaginationLoop`.
    PaginationLoop,
    /// `Error::Task` (SEP-2663) of this kind.
    Task(TaskCause),
}

/// Which `TaskError` a task scenario fails with (its budgets are [`Cause::Budget`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskCause {
    /// `TaskError::InvalidId`.
    InvalidId,
    /// `TaskError::UnknownStatus` naming this status.
    UnknownStatus(&'static str),
    /// `TaskError::TerminalChanged`.
    TerminalChanged,
    /// `TaskError::OtherTask`.
    OtherTask,
    /// `TaskError::UnsupportedRequest` naming this method.
    UnsupportedRequest(&'static str),
    /// `TaskError::NotDeclared`.
    NotDeclared,
    /// `TaskError::NotOutstanding`.
    NotOutstanding,
    /// `TaskError::Expired` with this `ttlMs`.
    Expired(u64),
}

impl TaskCause {
    /// Whether `e` is the task error this names.
    pub fn matches(self, e: &TaskError) -> bool {
        match (self, e) {
            (TaskCause::InvalidId, TaskError::InvalidId { .. })
            | (TaskCause::TerminalChanged, TaskError::TerminalChanged { .. })
            | (TaskCause::OtherTask, TaskError::OtherTask)
            | (TaskCause::NotDeclared, TaskError::NotDeclared)
            | (TaskCause::NotOutstanding, TaskError::NotOutstanding { .. }) => true,
            (TaskCause::UnknownStatus(want), TaskError::UnknownStatus { status }) => status == want,
            (TaskCause::UnsupportedRequest(want), TaskError::UnsupportedRequest { method }) => {
                method == want
            }
            (TaskCause::Expired(want), TaskError::Expired { ttl_ms }) => *ttl_ms == want,
            _ => false,
        }
    }
}

impl Cause {
    /// Whether `e` is the failure this cause names.
    pub fn matches(self, e: &Error) -> bool {
        use mcp_sansio::SseError;
        match self {
            Cause::Budget(b) => e.budget().is_some_and(|x| x.budget == b),
            Cause::Http => matches!(e, Error::Wire(WireError::Http1(_))) && e.budget().is_none(),
            Cause::Sse => matches!(e, Error::Sse(s) if !matches!(s, SseError::Budget(_))),
            Cause::Eof => matches!(e, Error::UnexpectedEof { .. }),
            Cause::Redirect => matches!(e, Error::Redirect { .. }),
            Cause::Auth(s) => matches!(e, Error::Authentication { status, .. } if *status == s),
            Cause::Status(s) => matches!(e, Error::HttpStatus { status } if *status == s),
            Cause::SessionExpired => matches!(e, Error::SessionExpired),
            Cause::NoMutualVersion => matches!(e, Error::NoMutualVersion { .. }),
            Cause::Rpc(c) => matches!(e, Error::Rpc(r) if r.code == c),
            Cause::InvalidAnswer => matches!(e, Error::InvalidAnswer { .. }),
            Cause::Malformed => {
                matches!(e, Error::Protocol(ProtocolError::MalformedMessage { .. }))
            }
            Cause::Batch => matches!(e, Error::Protocol(ProtocolError::Batch)),
            Cause::WrongId => matches!(e, Error::Protocol(ProtocolError::WrongId { .. })),
            Cause::ContentType => matches!(
                e,
                Error::Protocol(ProtocolError::UnexpectedContentType { .. })
            ),
            Cause::StreamEnded => matches!(e, Error::Protocol(ProtocolError::StreamEnded { .. })),
            Cause::InvalidSession => {
                matches!(e, Error::Protocol(ProtocolError::InvalidSession { .. }))
            }
            Cause::PaginationLoop => {
                matches!(e, Error::Protocol(ProtocolError::PaginationLoop { .. }))
            }
            Cause::Task(t) => matches!(e, Error::Task(task) if t.matches(task)),
        }
    }
}

/// What the operation must end with.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    /// It fails with this kind and cause.
    Fail(ErrorKind, Cause),
    /// Connect succeeds.
    Connected,
    /// Close ends with `Closed` and no failure.
    Closed,
    /// The listing succeeds with this many usable and refused tools.
    Listed {
        /// Usable tools.
        tools: usize,
        /// Refused entries.
        refused: usize,
    },
    /// The call succeeds with this many content blocks and dropped ones (unknown, invalid).
    Called {
        /// Blocks kept.
        blocks: usize,
        /// Blocks of unknown type dropped.
        unknown: usize,
        /// Malformed blocks dropped.
        invalid: usize,
    },
}

/// How the client answers input requests of a multi round-trip call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// No input hook configured.
    NoHook,
    /// The hook answers every request with this JSON object.
    Answer(&'static str),
    /// The hook declines every request it is given, by its key (`{"<key>":{"action":"decline"}}`
    /// for each): the keys may change from one round to the next.
    DeclineEach,
}

impl Input {
    /// Whether the client has an input hook.
    pub fn hooked(&self) -> bool {
        !matches!(self, Input::NoHook)
    }

    /// The hook's answer to `requests` (the JSON object of input requests presented), or `None`
    /// without a hook.
    pub fn answer(&self, requests: &str) -> Option<Vec<u8>> {
        match self {
            Input::NoHook => None,
            Input::Answer(a) => Some(a.as_bytes().to_vec()),
            Input::DeclineEach => {
                let keys: serde_json::Map<String, serde_json::Value> =
                    serde_json::from_str(requests).ok()?;
                let answers: serde_json::Map<String, serde_json::Value> = keys
                    .keys()
                    .map(|k| (k.clone(), serde_json::json!({"action": "decline"})))
                    .collect();
                serde_json::to_vec(&answers).ok()
            }
        }
    }
}

/// One hostile server and what the client must make of it.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub name: &'static str,
    /// Category (header, body, chunked, …).
    pub category: &'static str,
    /// What precedes the operation.
    pub setup: Setup,
    /// The operation.
    pub op: Op,
    /// The budgets of the connection.
    pub budgets: Budgets,
    /// The input hook.
    pub input: Input,
    /// The server: rules tried in order for every request.
    pub rules: Vec<Rule>,
    /// The outcome.
    pub expect: Expect,
    /// `Config::tasks`: every 2026-07-28 request declares the tasks extension (SEP-2663).
    pub tasks: bool,
    /// The least time the operation must take (a wait the client must keep, such as the poll
    /// interval's floor); zero for most.
    pub at_least: Duration,
    /// The most requests the server may receive over the scenario, when it bounds them (polls,
    /// a request that must not be sent).
    pub max_requests: Option<u64>,
    /// Whether the server writes its answers in pieces (`None`: as its steps say).
    pub pieces: Option<Pieces>,
    /// Played over HTTP/2 with prior knowledge (h2c): set by the adapters' runs only
    /// (`adapter_run::play_tasks`), whose server then answers with `h2_play`.
    pub over_http2: bool,
    /// The outcome over HTTP/2, where it differs from [`Scenario::expect`].
    pub http2_expect: Option<Expect>,
}

impl Scenario {
    /// The scenario played over HTTP/2 (h2c), expecting its outcome there.
    pub fn on_http2(&self) -> Scenario {
        Scenario {
            over_http2: true,
            expect: self
                .http2_expect
                .clone()
                .unwrap_or_else(|| self.expect.clone()),
            ..self.clone()
        }
    }

    /// The scenario's name, with the protocol when it is played over HTTP/2.
    pub fn label(&self) -> String {
        if self.over_http2 {
            format!("{} over HTTP/2", self.name)
        } else {
            self.name.to_owned()
        }
    }

    /// The scenario's server, fresh.
    pub fn server(&self) -> Server {
        Server::new(self.rules.clone()).in_pieces(self.pieces)
    }

    /// The longest the operation may take: connect makes at most four requests (probe, one
    /// re-probe, `initialize`, `notifications/initialized`) of `request_time` each; a listing, a
    /// call and a close have their aggregate budgets, and a call that becomes a task has
    /// `task_time` more once the task is created.
    pub fn time_limit(&self) -> Duration {
        let b = &self.budgets;
        match self.op {
            Op::Connect => b.request_time * 4,
            Op::List => b.list_time,
            Op::Call(_) if self.tasks => b.call_time + b.task_time,
            Op::Call(_) => b.call_time,
            Op::Close => b.close_time,
        }
    }

    /// Checks what the scenario bounds besides its outcome: the operation took at least
    /// [`Scenario::at_least`] and the server received at most [`Scenario::max_requests`].
    pub fn check_run(&self, took: Duration, requests: u64) -> Result<(), String> {
        if took < self.at_least {
            return Err(format!("took {took:?}, less than {:?}", self.at_least));
        }
        match self.max_requests {
            Some(max) if requests > max => Err(format!(
                "the server received {requests} requests, at most {max}"
            )),
            _ => Ok(()),
        }
    }
}

/// The budgets of the catalogue: defaults, with byte budgets small enough to exhaust quickly.
pub fn test_budgets() -> Budgets {
    let mut b = Budgets::default();
    b.response_bytes = 1024 * 1024;
    b.header_block_bytes = 8 * 1024;
    b.header_count = 64;
    b.chunk_line_bytes = 1024;
    b.informational_responses = 8;
    b.sse_event_bytes = 64 * 1024;
    b.pages = 20;
    b.responses_per_request = 4;
    b
}

/// How an operation ended, in the catalogue's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It failed with this error.
    Failed(Error),
    /// The setup before the operation failed (a scenario with a setup must connect).
    SetupFailed(Error),
    /// Connect succeeded.
    Connected,
    /// Close succeeded.
    Closed,
    /// A listing.
    Listed {
        /// Usable tools.
        tools: usize,
        /// Refused entries.
        refused: usize,
    },
    /// A call.
    Called {
        /// Blocks kept.
        blocks: usize,
        /// Unknown blocks dropped.
        unknown: usize,
        /// Invalid blocks dropped.
        invalid: usize,
    },
}

/// Checks `outcome` against what scenario `s` expects (with the budgets it ran with): the kind and
/// cause of a failure, error texts truncated, the budget named with its configured limit, the
/// tools or blocks of a success.
pub fn verify(s: &Scenario, outcome: &Outcome) -> Result<(), String> {
    match (&s.expect, outcome) {
        (_, Outcome::SetupFailed(e)) => Err(format!("setup failed: {e:?}")),
        (Expect::Fail(kind, cause), Outcome::Failed(e)) => {
            if e.kind() != *kind {
                return Err(format!("kind {} instead of {kind}: {e:?}", e.kind()));
            }
            if !cause.matches(e) {
                return Err(format!("cause {cause:?} expected, got {e:?}"));
            }
            if let Error::Rpc(rpc) = e {
                let data = rpc.data.as_ref().map_or(0, String::len);
                if rpc.message.len() > MAX_ERROR_MESSAGE || data > MAX_ERROR_DATA {
                    return Err("error texts are not truncated".into());
                }
            }
            if let Error::InvalidAnswer { reason, .. } = e {
                if reason.len() > 512 {
                    return Err(format!("reason of {} bytes", reason.len()));
                }
            }
            if let Some(b) = e.budget() {
                let limit = s.budgets.limit(b.budget);
                if b.limit != limit {
                    return Err(format!("{b} names limit {} not {limit}", b.limit));
                }
            }
            Ok(())
        }
        (Expect::Connected, Outcome::Connected) | (Expect::Closed, Outcome::Closed) => Ok(()),
        (
            Expect::Listed { tools, refused },
            Outcome::Listed {
                tools: t,
                refused: f,
            },
        ) if tools == t && refused == f => Ok(()),
        (
            Expect::Called {
                blocks,
                unknown,
                invalid,
            },
            Outcome::Called {
                blocks: b,
                unknown: u,
                invalid: i,
            },
        ) if blocks == b && unknown == u && invalid == i => Ok(()),
        (want, got) => Err(format!("expected {want:?}, got {got:?}")),
    }
}

/// What a connection may hold at its peak while it reads a hostile answer (docs/guarantees.md).
///
/// A message is buffered whole before it is parsed (a JSON body, or one SSE event), at most the
/// byte budget, in a `Vec` that grows by doubling: up to 2x the budget. Parsing borrows from that
/// buffer and keeps only bounded pieces (versions, cursors, messages, all truncated) — except a
/// catalog, see [`CATALOG_FACTOR`]. On top, a fixed 256 KiB covers the connection itself, its
/// queues, the decoders' line buffers and the request it is sending.
pub fn memory_bound(b: &Budgets, outcome: &Outcome) -> i64 {
    let factor = match outcome {
        Outcome::Listed { .. } => CATALOG_FACTOR,
        _ => 3,
    };
    factor * b.response_bytes as i64 + 256 * 1024
}

/// A catalog is retained: its tools are spans into the page buffers, kept whole, plus 40 bytes a
/// tool and allocations for what had to be decoded and for header parameters; the smallest
/// accepted tool is about 45 raw bytes (`hundred_thousand_tiny_tools` measures about 2.5x the
/// bytes it read). 6x leaves room for `Vec` growth and header parameters.
pub const CATALOG_FACTOR: i64 = 6;
