//! The metrics of sessions, by OpenTelemetry's semantic conventions for MCP (feature `metrics`;
//! without it every type here is empty, every method does nothing, and the crate does not depend
//! on `opentelemetry`).
//!
//! The instruments are made from the **global meter provider**
//! (`opentelemetry::global::meter_provider`), under the instrumentation scope [`SCOPE`], when a
//! session is made: an application that installs no provider records nothing (the global
//! provider is a no-op until one is set), and one that does (`global::set_meter_provider`) gets
//! the sessions made from then on. This is how an OpenTelemetry instrumentation library is meant
//! to find its provider, and it leaves `ClientBuilder` as it is.
//!
//! From the conventions (`docs/gen-ai/mcp.md` of open-telemetry/semantic-conventions):
//!
//! - [`OPERATION_DURATION`] (`mcp.client.operation.duration`, histogram, `s`, the conventions'
//!   bucket boundaries [`BOUNDARIES`]): one value per operation of a session, from its start to
//!   its outcome, with `mcp.method.name` the request the operation exists for (`server/discover`
//!   for a connect that negotiated the 2026-07-28 era, `initialize` for one that negotiated an
//!   older one, `tools/list` for a listing, all its pages together, `tools/call` for a call,
//!   `tasks/result` for the resumption of a task, `tasks/get` for a task's report); a close, which sends no MCP request
//!   (an HTTP `DELETE`), is not one. `error.type` when it failed (the error kind's code, e.g.
//!   `mcp_server_answered_error`; `tool_error` for a call whose result has `isError`),
//!   `gen_ai.tool.name` and `gen_ai.operation.name` (`execute_tool`) for a call,
//!   `mcp.protocol.version` once negotiated, `network.protocol.name` (`http`),
//!   `network.protocol.version` (`1.1`, `2`), `network.transport` (`tcp`), `server.address`,
//!   `server.port`;
//! - [`SESSION_DURATION`] (`mcp.client.session.duration`, histogram, `s`, the same boundaries):
//!   one value per session, from its first operation to its close (or its drop), with
//!   `error.type` when its last operation failed, and the same protocol, network and server
//!   attributes.
//!
//! The counts an operator of hostile servers needs, outside the conventions' `mcp.` namespace:
//!
//! - [`BUDGET_HITS`] (`mcp_sansio.client.budget.hits`, counter, `{hit}`): operations a budget
//!   ended, by `mcp_sansio.budget` (its name, e.g. `response_bytes`) and `mcp.method.name`;
//! - [`ERRORS`] (`mcp_sansio.client.errors`, counter, `{error}`): failed operations by
//!   `error.type` (the error kind's code) and `mcp.method.name`;
//! - [`BYTES_READ`] (`mcp_sansio.client.bytes_read`, counter, `By`): raw bytes the operations
//!   read, by `mcp.method.name`, `server.address` and `server.port`;
//! - [`SESSION_REQUESTS`] (`mcp_sansio.client.session.requests`, histogram, `{request}`): HTTP
//!   requests one session (a work item: connect, the work, close) sent;
//! - [`SOCKET_REUSE`] (`mcp_sansio.client.socket.reuse`, counter, `{socket}`): a socket used
//!   again instead of a new dial, by `mcp_sansio.reuse`: `pooled` (an idle HTTP/1.1 socket taken
//!   from the pool) or `multiplexed` (a session joining its origin's live HTTP/2 connection).
//!
//! Never a token, a URL's path or query, a tool's arguments or result: names, versions, counts,
//! kinds, the server's host and port only.

#[cfg(feature = "metrics")]
use mcp_sansio::Completion;
use mcp_sansio::{Endpoint, Era, Error};

/// The instrumentation scope of every instrument (`mcp-sansio`, with this crate's version).
pub const SCOPE: &str = "mcp-sansio";
/// `mcp.client.operation.duration`: the conventions' histogram of an operation's duration.
pub const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// `mcp.client.session.duration`: the conventions' histogram of a session's duration.
pub const SESSION_DURATION: &str = "mcp.client.session.duration";
/// `mcp_sansio.client.budget.hits`: operations a budget ended.
pub const BUDGET_HITS: &str = "mcp_sansio.client.budget.hits";
/// `mcp_sansio.client.errors`: failed operations.
pub const ERRORS: &str = "mcp_sansio.client.errors";
/// `mcp_sansio.client.bytes_read`: raw bytes read.
pub const BYTES_READ: &str = "mcp_sansio.client.bytes_read";
/// `mcp_sansio.client.session.requests`: HTTP requests per session.
pub const SESSION_REQUESTS: &str = "mcp_sansio.client.session.requests";
/// `mcp_sansio.client.socket.reuse`: sockets used again instead of a new dial.
pub const SOCKET_REUSE: &str = "mcp_sansio.client.socket.reuse";
/// The explicit bucket boundaries the conventions give both duration histograms, in seconds.
pub const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// What an operation is, for its `mcp.method.name`.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) enum OpMethod<'a> {
    Initialize,
    List,
    Call { tool: &'a str },
    TaskResult,
    TaskGet,
    Close,
}

/// How a socket was used again ([`SOCKET_REUSE`]).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) enum Reuse {
    /// An idle HTTP/1.1 socket from the pool.
    Pooled,
    /// The origin's live HTTP/2 connection, joined.
    Multiplexed,
}

/// The metrics of one session: its instruments and what its running operation started with.
#[derive(Default)]
pub(crate) struct SessionMetrics {
    #[cfg(feature = "metrics")]
    on: Option<on::State>,
}

#[cfg(not(feature = "metrics"))]
#[allow(clippy::unused_self)]
impl SessionMetrics {
    #[inline]
    pub(crate) fn start(&mut self, _: OpMethod<'_>, _: &Endpoint, _: &'static str, _: u64) {}
    #[inline]
    pub(crate) fn request(&mut self) {}
    #[inline]
    pub(crate) fn end(
        &mut self,
        _: &Result<mcp_sansio::Completion, Error>,
        _: Era,
        _: &str,
        _: u64,
    ) {
    }
}

/// A socket was used again instead of a new dial.
#[cfg(not(feature = "metrics"))]
#[inline]
pub(crate) fn socket_reused(_: Reuse) {}

#[cfg(feature = "metrics")]
pub(crate) use on::socket_reused;

#[cfg(feature = "metrics")]
mod on {
    use std::time::Instant;

    use opentelemetry::metrics::{Counter, Histogram, Meter};
    use opentelemetry::{InstrumentationScope, KeyValue};

    use super::*;

    fn meter() -> Meter {
        opentelemetry::global::meter_with_scope(
            InstrumentationScope::builder(SCOPE)
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        )
    }

    /// The instruments, made from the global meter provider of the moment.
    struct Instruments {
        operation: Histogram<f64>,
        session: Histogram<f64>,
        budget: Counter<u64>,
        errors: Counter<u64>,
        bytes: Counter<u64>,
        requests: Histogram<u64>,
    }

    impl Instruments {
        fn new() -> Instruments {
            let m = meter();
            Instruments {
                operation: m
                    .f64_histogram(OPERATION_DURATION)
                    .with_unit("s")
                    .with_description(
                        "The duration of the MCP request or notification as observed on the \
                         sender from the time it was sent until the response or ack is received.",
                    )
                    .with_boundaries(BOUNDARIES.to_vec())
                    .build(),
                session: m
                    .f64_histogram(SESSION_DURATION)
                    .with_unit("s")
                    .with_description(
                        "The duration of the MCP session as observed on the MCP client.",
                    )
                    .with_boundaries(BOUNDARIES.to_vec())
                    .build(),
                budget: m
                    .u64_counter(BUDGET_HITS)
                    .with_unit("{hit}")
                    .with_description("Operations a budget ended, by budget.")
                    .build(),
                errors: m
                    .u64_counter(ERRORS)
                    .with_unit("{error}")
                    .with_description("Failed operations, by error kind.")
                    .build(),
                bytes: m
                    .u64_counter(BYTES_READ)
                    .with_unit("By")
                    .with_description("Raw bytes the operations read.")
                    .build(),
                requests: m
                    .u64_histogram(SESSION_REQUESTS)
                    .with_unit("{request}")
                    .with_description("HTTP requests one session sent.")
                    .with_boundaries(vec![1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0])
                    .build(),
            }
        }
    }

    /// A session's instruments and counts.
    pub(super) struct State {
        inst: Instruments,
        /// The session's first operation started then.
        session_start: Instant,
        /// The network and server attributes of every value.
        common: Vec<KeyValue>,
        /// The running operation: its method, tool and start.
        op: Option<(&'static str, Option<String>, Instant, u64)>,
        version: String,
        requests: u64,
        /// The error kind's code of the last operation, if it failed.
        last_error: Option<&'static str>,
        /// Whether the session's duration was recorded (its close ended).
        done: bool,
    }

    fn method(op: OpMethod<'_>) -> &'static str {
        match op {
            OpMethod::Initialize => "initialize",
            OpMethod::List => "tools/list",
            OpMethod::Call { .. } => "tools/call",
            OpMethod::TaskResult => "tasks/result",
            OpMethod::TaskGet => "tasks/get",
            OpMethod::Close => "",
        }
    }

    impl SessionMetrics {
        pub(crate) fn start(
            &mut self,
            op: OpMethod<'_>,
            endpoint: &Endpoint,
            http_version: &'static str,
            bytes_read: u64,
        ) {
            let now = Instant::now();
            let st = self.on.get_or_insert_with(|| State {
                inst: Instruments::new(),
                session_start: now,
                common: Vec::new(),
                op: None,
                version: String::new(),
                requests: 0,
                last_error: None,
                done: false,
            });
            let host = endpoint.host();
            st.common = vec![
                KeyValue::new("network.protocol.name", "http"),
                KeyValue::new(
                    "network.protocol.version",
                    http_version.strip_prefix("HTTP/").unwrap_or(http_version),
                ),
                KeyValue::new("network.transport", "tcp"),
                KeyValue::new(
                    "server.address",
                    host.trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned(),
                ),
                KeyValue::new("server.port", i64::from(endpoint.port())),
            ];
            let tool = match op {
                OpMethod::Call { tool } => Some(tool.to_owned()),
                _ => None,
            };
            st.op = Some((method(op), tool, now, bytes_read));
        }

        pub(crate) fn request(&mut self) {
            if let Some(st) = &mut self.on {
                st.requests += 1;
            }
        }

        pub(crate) fn end(
            &mut self,
            outcome: &Result<Completion, Error>,
            era: Era,
            version: &str,
            bytes_read: u64,
        ) {
            let Some(st) = &mut self.on else { return };
            let Some((mut method, tool, started, bytes_at_start)) = st.op.take() else {
                return;
            };
            if method == "initialize" && era == Era::Modern {
                method = "server/discover";
            }
            if !version.is_empty() && st.version != version {
                version.clone_into(&mut st.version);
            }
            let error = match outcome {
                Ok(Completion::Called(r)) if r.is_error => Some("tool_error"),
                Ok(_) => None,
                Err(e) => Some(e.kind().code()),
            };
            st.last_error = outcome.as_ref().err().map(|e| e.kind().code());
            let mut attrs = st.common.clone();
            if !st.version.is_empty() {
                attrs.push(KeyValue::new("mcp.protocol.version", st.version.clone()));
            }
            if !method.is_empty() {
                let mut op = attrs.clone();
                op.push(KeyValue::new("mcp.method.name", method));
                if let Some(tool) = tool {
                    op.push(KeyValue::new("gen_ai.tool.name", tool));
                    op.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                }
                if let Some(e) = error {
                    op.push(KeyValue::new("error.type", e));
                }
                st.inst
                    .operation
                    .record(started.elapsed().as_secs_f64(), &op);
            }
            let name = if method.is_empty() { "close" } else { method };
            st.inst.bytes.add(
                bytes_read.saturating_sub(bytes_at_start),
                &[
                    KeyValue::new("mcp.method.name", name),
                    attrs[3].clone(),
                    attrs[4].clone(),
                ],
            );
            if let Err(e) = outcome {
                st.inst.errors.add(
                    1,
                    &[
                        KeyValue::new("error.type", e.kind().code()),
                        KeyValue::new("mcp.method.name", name),
                    ],
                );
                if let Some(b) = e.budget() {
                    st.inst.budget.add(
                        1,
                        &[
                            KeyValue::new("mcp_sansio.budget", b.budget.name()),
                            KeyValue::new("mcp.method.name", name),
                        ],
                    );
                }
            }
            if method.is_empty() {
                st.session_ended();
            }
        }
    }

    impl State {
        /// Records the session's duration and requests, once.
        fn session_ended(&mut self) {
            if self.done {
                return;
            }
            self.done = true;
            let mut attrs = self.common.clone();
            if !self.version.is_empty() {
                attrs.push(KeyValue::new("mcp.protocol.version", self.version.clone()));
            }
            if let Some(e) = self.last_error {
                attrs.push(KeyValue::new("error.type", e));
            }
            self.inst
                .session
                .record(self.session_start.elapsed().as_secs_f64(), &attrs);
            self.inst.requests.record(self.requests, &self.common[3..]);
        }
    }

    impl Drop for SessionMetrics {
        fn drop(&mut self) {
            if let Some(st) = &mut self.on {
                st.session_ended();
            }
        }
    }

    /// A socket was used again instead of a new dial.
    pub(crate) fn socket_reused(how: Reuse) {
        let how = match how {
            Reuse::Pooled => "pooled",
            Reuse::Multiplexed => "multiplexed",
        };
        meter()
            .u64_counter(SOCKET_REUSE)
            .with_unit("{socket}")
            .with_description("Sockets used again instead of a new dial.")
            .build()
            .add(1, &[KeyValue::new("mcp_sansio.reuse", how)]);
    }
}
