//! The `tracing` spans and events of a session (feature `tracing`; without it every type here is
//! empty and every method does nothing, and no `tracing` code is compiled in).
//!
//! Every span and event has the target [`TARGET`]:
//!
//! - one span per operation, named `connect`, `list`, `call` or `close` (level INFO), with
//!   `origin` (`scheme://host:port`, never the path or its query), `http_version`, `era`,
//!   `protocol_version`, `bytes_read` (raw bytes the operation read), `pages` (a listing),
//!   `tools` (tools a listing kept), `tool` (the name a call called), `outcome` (`ok` or the
//!   error kind's code, e.g. `mcp_connection_failed_error`) and `budget` (the budget that ended
//!   it, when one did);
//! - inside it one span per exchange, named `exchange` (level DEBUG), with `exchange`
//!   (its id), `method` (HTTP), `rpc` (the JSON-RPC method it carries; `refusal` or `response`
//!   for the client's answer to a server request), `fresh_socket`, `bytes_read` and `outcome`
//!   (`finished`, `reusable` or `abandoned`); over HTTP/2 the shared connection
//!   ([`SharedH2`](crate::SharedH2)) makes the span of each stream it opens, with
//!   `stream` (its HTTP/2 stream id) instead of `fresh_socket`, `bytes_read` the raw bytes the
//!   session read while the stream was open, and `outcome` `finished` or `abandoned`;
//! - inside it one span per MCP request or notification the client sends, named `mcp` (level
//!   INFO), the client span of OpenTelemetry's semantic conventions for MCP: `otel.name`
//!   (`{mcp.method.name} {target}`, e.g. `tools/call get-weather`), `otel.kind` (`client`),
//!   `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.operation.name`, `jsonrpc.request.id`,
//!   `mcp.protocol.version`, `mcp.session.id`, `network.transport`, `network.protocol.name`,
//!   `network.protocol.version`, `server.address`, `server.port`, and `error.type` with
//!   `otel.status_code` when the server answered it with an error (the JSON-RPC code, else the
//!   HTTP status), or when the operation failed on it without an answer (the budget, the error
//!   kind), `tool_error` for an `isError` result;
//! - one span per authorization or refresh ([`Authorization`](crate::auth::Authorization)),
//!   named `authorize` (level INFO), with `trigger` (`challenge` or `refresh`), `status` (the MCP
//!   server's 401 or 403) and `outcome` (`ok` or `failed`);
//! - events (level INFO) for a retry, a re-negotiation, a resumption of a broken event stream, a
//!   server request refused, a call waiting before its next round, input requests declined, and
//!   each authorization step, inside `authorize` (`auth` names the step: discovery of the
//!   protected resource's or the authorization server's metadata, registration, the user agent,
//!   token exchange or refresh; `auth_origin` the origin the request goes to);
//! - with the feature `opentelemetry`, an event (level DEBUG) inside a request's `mcp` span
//!   when its body does not hold the operation's `traceparent` where the core wrote it, so it
//!   is sent naming the operation's span as the parent (`traceparent left as sent`, with `at`).
//!
//! `docs/tracing.md` of the repository lists them with examples; the tokio adapter's crate docs
//! show a `tracing-subscriber` set-up.
//!
//! Never a token, a secret, an authorization code, a PKCE verifier, a URL's path or query, tool
//! arguments or results, the trace context's state or baggage: names, ids, counts and kinds only.
//!
//! With the feature `opentelemetry`, the `otel` module turns the operation span's OpenTelemetry context
//! into the trace context its requests carry when the embedder gave none, each request's naming
//! its own `mcp` span as the parent.

use mcp_sansio::{Completion, ConnectionState, Endpoint, Era, Error, ExchangeId, Transmit};

/// The target of every span and event of this crate: filter on it (`mcp_sansio=debug`).
pub const TARGET: &str = "mcp_sansio";

/// `scheme://host:port` of `endpoint`, the port always written, never the path or the query.
pub fn origin_field(endpoint: &Endpoint) -> String {
    let host = endpoint.host();
    if host.contains(':') && !host.starts_with('[') {
        format!(
            "{}://[{}]:{}",
            endpoint.scheme().as_str(),
            host,
            endpoint.port()
        )
    } else {
        format!(
            "{}://{}:{}",
            endpoint.scheme().as_str(),
            host,
            endpoint.port()
        )
    }
}

/// What an operation's span starts with.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) enum OpKind<'a> {
    Connect,
    List,
    Call { tool: &'a str },
    Resume,
    Close,
}

/// The span of the running operation and of its open exchanges.
#[derive(Default)]
pub(crate) struct SessionTrace {
    #[cfg(feature = "tracing")]
    on: on::State,
}

/// The running operation's span, entered while it is held.
pub(crate) struct Entered {
    #[cfg(feature = "tracing")]
    _entered: Option<tracing::span::EnteredSpan>,
}

/// The span of an authorization (or a refresh) and the events of its steps.
#[derive(Default)]
pub(crate) struct AuthTrace {
    #[cfg(feature = "tracing")]
    span: Option<tracing::Span>,
}

#[cfg(not(feature = "tracing"))]
#[allow(clippy::unused_self)]
impl AuthTrace {
    #[inline]
    pub(crate) fn begin(&mut self, _: &'static str, _: Option<u16>) {}
    #[inline]
    pub(crate) fn step(&self, _: &'static str, _: Option<&Endpoint>) {}
    #[inline]
    pub(crate) fn end(&mut self, _: bool) {}
}

#[cfg(feature = "tracing")]
impl AuthTrace {
    /// An authorization starts: `trigger` is `challenge` (with the MCP server's `status`) or
    /// `refresh`.
    pub(crate) fn begin(&mut self, trigger: &'static str, status: Option<u16>) {
        self.span = Some(tracing::info_span!(
            target: TARGET,
            "authorize",
            trigger,
            status,
            outcome = tracing::field::Empty,
        ));
    }

    /// A step: its name and, for a request, the origin it goes to.
    pub(crate) fn step(&self, step: &'static str, to: Option<&Endpoint>) {
        let parent = self.span.as_ref().and_then(Span::id);
        match to {
            Some(e) => tracing::info!(
                target: TARGET,
                parent: parent,
                auth = step,
                auth_origin = %origin_field(e),
                "authorization step"
            ),
            None => {
                tracing::info!(target: TARGET, parent: parent, auth = step, "authorization step")
            }
        }
    }

    /// The authorization ended: a token is held (`ok`) or not.
    pub(crate) fn end(&mut self, ok: bool) {
        if let Some(span) = self.span.take() {
            span.record("outcome", if ok { "ok" } else { "failed" });
        }
    }
}

/// The exchange spans of one session on a shared HTTP/2 connection: made when a request opens
/// a stream, ended by the exchange's event, children of the operation span the driver handed
/// over ([`parent`](Self::parent)), wherever the connection is drained.
#[derive(Default)]
pub(crate) struct H2Trace {
    #[cfg(feature = "tracing")]
    parent: Option<Span>,
    /// Open exchanges: their span and the session's bytes read when the stream opened.
    #[cfg(feature = "tracing")]
    exchanges: std::collections::BTreeMap<ExchangeId, (Span, u64)>,
    /// The JSON-RPC methods the current operation sent over the connection, and how often.
    #[cfg(feature = "tracing")]
    sent: std::collections::BTreeMap<String, u32>,
}

#[cfg(not(feature = "tracing"))]
#[allow(clippy::unused_self)]
impl H2Trace {
    #[inline]
    pub(crate) fn parent(&mut self, _: &SessionTrace) {}
    #[inline]
    pub(crate) fn opened(&mut self, _: &Transmit, _: u32, _: u64) {}
    #[inline]
    pub(crate) fn end(&mut self, _: ExchangeId, _: &'static str, _: u64) {}
}

#[cfg(feature = "tracing")]
impl H2Trace {
    /// The operation `trace` runs now is the parent of the exchanges opened from here on.
    pub(crate) fn parent(&mut self, trace: &SessionTrace) {
        self.parent.clone_from(&trace.on.op);
        self.sent.clear();
    }

    /// Request `t` opened stream `stream`; the session had read `bytes_read` raw bytes.
    pub(crate) fn opened(&mut self, t: &Transmit, stream: u32, bytes_read: u64) {
        let Some(op) = &self.parent else { return };
        if op.is_disabled() {
            return;
        }
        let (method, rpc) = on::classify(t);
        on::request_events(
            op,
            t,
            &method,
            rpc.as_deref(),
            &mut self.sent,
            "the stream was refused or the connection went away before answering",
        );
        let span = tracing::debug_span!(
            target: TARGET,
            parent: op,
            "exchange",
            exchange = t.exchange.0,
            method = %method,
            rpc = rpc.as_deref(),
            stream,
            bytes_read = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        self.exchanges.insert(t.exchange, (span, bytes_read));
    }

    /// Exchange `exchange` ended with `outcome`; the session has read `bytes_read` raw bytes.
    pub(crate) fn end(&mut self, exchange: ExchangeId, outcome: &'static str, bytes_read: u64) {
        if let Some((span, at_open)) = self.exchanges.remove(&exchange) {
            span.record("bytes_read", bytes_read.saturating_sub(at_open));
            span.record("outcome", outcome);
        }
    }
}

#[cfg(not(feature = "opentelemetry"))]
#[allow(clippy::unused_self)]
impl SessionTrace {
    /// The running operation's OpenTelemetry context (feature `opentelemetry`): none here.
    #[inline]
    pub(crate) fn otel_context(&mut self) -> Option<mcp_sansio::TraceContext> {
        None
    }
}

#[cfg(feature = "opentelemetry")]
impl SessionTrace {
    /// The running operation's span as an OpenTelemetry context (through
    /// `tracing-opentelemetry`: its parent is the current span, or the current OpenTelemetry
    /// context), as W3C values: the trace context of the operation's requests, each of which
    /// [`request`](Self::request) then makes name its own `mcp` span as the parent. `None`
    /// when the span has no valid span context (no OpenTelemetry layer) or a value would not be
    /// valid.
    pub(crate) fn otel_context(&mut self) -> Option<mcp_sansio::TraceContext> {
        let span = self.on.op.as_ref()?;
        let cx = otel::context_of(span)?;
        self.on.otel_traceparent = Some(cx.traceparent().to_owned());
        Some(cx)
    }
}

#[cfg(not(feature = "tracing"))]
#[allow(clippy::unused_self)]
impl SessionTrace {
    #[inline]
    pub(crate) fn start(&mut self, _: OpKind<'_>, _: &Endpoint, _: &'static str, _: u64) {}
    #[inline]
    pub(crate) fn enter(&self) -> Entered {
        Entered {}
    }
    #[inline]
    pub(crate) fn transmit(&mut self, _: &Transmit) {}
    #[inline]
    pub(crate) fn request(&mut self, _: &mut Transmit) {}
    #[inline]
    pub(crate) fn answered(&mut self, _: mcp_sansio::Answered) {}
    #[inline]
    pub(crate) fn bytes(&mut self, _: ExchangeId, _: usize) {}
    #[inline]
    pub(crate) fn exchange_end(&mut self, _: ExchangeId, _: &'static str) {}
    #[inline]
    pub(crate) fn state(&mut self, _: Option<ConnectionState>) {}
    #[inline]
    pub(crate) fn declined(&self) {}
    #[inline]
    pub(crate) fn end(&mut self, _: &Result<Completion, Error>, _: Era, _: &str, _: u64) {}
}

#[cfg(feature = "tracing")]
use tracing::Span;

#[cfg(feature = "tracing")]
mod on {
    use std::collections::BTreeMap;

    use tracing::field::Empty;

    use super::*;

    /// The spans and what they count.
    #[derive(Default)]
    pub(super) struct State {
        pub(super) op: Option<Span>,
        /// Raw bytes read when the operation started.
        bytes_at_start: u64,
        /// Open exchanges: their span and the bytes read on them.
        exchanges: BTreeMap<ExchangeId, (Span, u64)>,
        /// The JSON-RPC methods sent during the operation, and how often.
        sent: BTreeMap<String, u32>,
        /// The connection's state as of the last pump.
        last: Option<ConnectionState>,
        /// The MCP client spans (OpenTelemetry's conventions) of the operation.
        rpc: RpcSpans,
        /// The `traceparent` the operation's requests are written with when it is the
        /// operation span's OpenTelemetry context (feature `opentelemetry`), not the embedder's.
        #[cfg(feature = "opentelemetry")]
        pub(super) otel_traceparent: Option<String>,
    }

    /// The client span of each MCP request or notification an operation sends, by
    /// OpenTelemetry's semantic conventions for MCP (`docs/gen-ai/mcp.md`, "Client"): named
    /// `{mcp.method.name} {target}` (`otel.name`), kind `client` (`otel.kind`), child of the
    /// operation's span. A request sent again with the same JSON-RPC id (a retry on a fresh
    /// socket, a resumption) stays in its span; the next request of the operation ends it, as
    /// does the operation's end, which records `error.type` on the last one when it failed.
    /// Made by the session driver whatever the wire, before the request is recorded or sent.
    #[derive(Default)]
    pub(crate) struct RpcSpans {
        /// `server.address`, `server.port`, `network.protocol.version` of the operation.
        server: Option<(String, u16, &'static str)>,
        /// The open span: the JSON-RPC id it carries (`None`: a notification) and the span.
        current: Option<Current>,
    }

    /// The open request span.
    struct Current {
        /// The JSON-RPC id of its request (`None`: a notification).
        id: Option<u64>,
        span: Span,
        /// How its request was answered: not yet (`None`), with a result (`Some(false)`), with
        /// an error, recorded as its `error.type` (`Some(true)`).
        failed: Option<bool>,
        /// Its own `traceparent` (feature `opentelemetry`): what its request names as the
        /// parent, in place of the operation span's.
        #[cfg(feature = "opentelemetry")]
        traceparent: Option<String>,
    }

    impl RpcSpans {
        pub(super) fn start(&mut self, endpoint: &Endpoint, http_version: &'static str) {
            let version = if http_version == "HTTP/2" { "2" } else { "1.1" };
            self.server = Some((endpoint.host().to_owned(), endpoint.port(), version));
            self.current = None;
        }

        /// `t` is sent as part of the operation `op`: a JSON-RPC request or notification of
        /// the client opens its span (or stays in the open one, the same request sent again).
        /// The span it is in, if any.
        fn request(&mut self, op: &Span, t: &Transmit) -> Option<&mut Current> {
            let rpc = RpcRequest::of(t)?;
            let same = matches!(&self.current, Some(c) if rpc.id.is_some() && c.id == rpc.id);
            if same {
                return self.current.as_mut();
            }
            let (address, port, version) = match &self.server {
                Some((a, p, v)) => (a.as_str(), *p, *v),
                None => ("", 0, "1.1"),
            };
            let name = match &rpc.tool {
                Some(tool) => format!("{} {tool}", rpc.method),
                None => rpc.method.clone(),
            };
            let span = tracing::info_span!(
                target: TARGET,
                parent: op,
                "mcp",
                otel.name = %name,
                otel.kind = "client",
                otel.status_code = Empty,
                mcp.method.name = %rpc.method,
                gen_ai.tool.name = rpc.tool.as_deref(),
                gen_ai.operation.name = rpc.tool.as_ref().map(|_| "execute_tool"),
                jsonrpc.request.id = rpc.id.map(|id| id.to_string()),
                mcp.protocol.version = rpc.protocol_version.as_deref(),
                mcp.session.id = rpc.session_id.as_deref(),
                network.transport = "tcp",
                network.protocol.name = "http",
                network.protocol.version = version,
                server.address = address,
                server.port = port,
                error.type = Empty,
            );
            self.current = Some(Current {
                id: rpc.id,
                failed: None,
                #[cfg(feature = "opentelemetry")]
                traceparent: super::otel::traceparent_of(&span),
                span,
            });
            self.current.as_mut()
        }

        /// The server answered the request `a.id`: an error is the `error.type` of its span
        /// (the JSON-RPC code, or the HTTP status), whatever the operation does next.
        pub(super) fn answered(&mut self, a: mcp_sansio::Answered) {
            let Some(c) = &mut self.current else { return };
            if c.id != Some(a.id) {
                return;
            }
            let Some(error) = a.error else {
                c.failed = Some(false);
                return;
            };
            let t = match error {
                mcp_sansio::AnswerError::Rpc(code) => code.to_string(),
                mcp_sansio::AnswerError::HttpStatus(status) => status.to_string(),
                _ => "_OTHER".to_owned(),
            };
            c.span.record("error.type", t.as_str());
            c.span.record("otel.status_code", "ERROR");
            c.failed = Some(true);
        }

        /// The operation ended with `outcome`: its last request's span records `error.type`
        /// (and the span status) when the operation failed on it (unless its answer's error
        /// is recorded already, or its answer was a result and the operation failed after it:
        /// a tool pin's verdict) or, a tool call, answered `isError`.
        pub(super) fn end(&mut self, outcome: &Result<Completion, Error>) {
            let Some(Current { span, failed, .. }) = self.current.take() else {
                return;
            };
            let error_type: Option<String> = match outcome {
                Ok(Completion::Called(r)) if r.is_error => Some("tool_error".to_owned()),
                Ok(_) => None,
                Err(_) if failed == Some(true) => None,
                Err(Error::ToolChanged { .. }) if failed == Some(false) => None,
                Err(Error::Rpc(rpc)) => Some(rpc.code.to_string()),
                Err(e) => Some(match e.budget() {
                    Some(b) => b.budget.name().to_owned(),
                    None => e.kind().code().to_owned(),
                }),
            };
            if let Some(t) = error_type {
                span.record("error.type", t.as_str());
                span.record("otel.status_code", "ERROR");
            }
        }
    }

    /// What a client's JSON-RPC request or notification says of itself: no argument, no result.
    struct RpcRequest {
        method: String,
        id: Option<u64>,
        tool: Option<String>,
        protocol_version: Option<String>,
        session_id: Option<String>,
    }

    impl RpcRequest {
        fn of(t: &Transmit) -> Option<RpcRequest> {
            if t.request.body.is_empty() {
                return None;
            }
            let m: serde_json::Value = serde_json::from_slice(&t.request.body).ok()?;
            let method = m.get("method")?.as_str()?.to_owned();
            let params = m.get("params");
            let param = |key: &str| {
                params
                    .and_then(|p| p.get(key))
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned)
            };
            let header = |name: &str| {
                t.request
                    .headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone())
            };
            let tool = if method == "tools/call" {
                param("name")
            } else {
                None
            };
            let protocol_version =
                header("MCP-Protocol-Version").or_else(|| param("protocolVersion"));
            Some(RpcRequest {
                id: m.get("id").and_then(serde_json::Value::as_u64),
                method,
                tool,
                protocol_version,
                session_id: header("Mcp-Session-Id"),
            })
        }
    }

    /// The HTTP method and the JSON-RPC method (or `response`) of a request.
    pub(super) fn classify(t: &Transmit) -> (String, Option<String>) {
        let method = t.request.method.as_str().to_owned();
        let body: &[u8] = &t.request.body;
        if body.is_empty() {
            return (method, None);
        }
        let members: BTreeMap<&str, &serde_json::value::RawValue> =
            match serde_json::from_slice(body) {
                Ok(m) => m,
                Err(_) => return (method, None),
            };
        let rpc = match members.get("method") {
            Some(m) => serde_json::from_str::<String>(m.get()).ok(),
            None if members.contains_key("error") => Some("refusal".to_owned()),
            None => Some("response".to_owned()),
        };
        (method, rpc)
    }

    /// The events a request makes inside its operation `op`: a retry (`sent` counts the
    /// JSON-RPC methods the operation sent), a retry on a fresh socket, the resumption of an
    /// event stream, the refusal of a server's request. The same over HTTP/1.1 and HTTP/2.
    pub(super) fn request_events(
        op: &Span,
        t: &Transmit,
        method: &str,
        rpc: Option<&str>,
        sent: &mut BTreeMap<String, u32>,
        fresh_reason: &'static str,
    ) {
        let id = t.exchange.0;
        if t.fresh_socket {
            tracing::info!(
                target: TARGET,
                parent: op,
                exchange = id,
                reason = fresh_reason,
                "retry on a fresh socket"
            );
        }
        match rpc {
            _ if method == "GET" => tracing::info!(
                target: TARGET,
                parent: op,
                exchange = id,
                "resumption of the event stream"
            ),
            Some("refusal") => tracing::info!(
                target: TARGET,
                parent: op,
                exchange = id,
                "server request refused"
            ),
            Some(m @ ("tools/call" | "initialize" | "server/discover")) if !t.fresh_socket => {
                let n = sent.entry(m.to_owned()).or_insert(0);
                *n += 1;
                if *n > 1 {
                    tracing::info!(
                        target: TARGET,
                        parent: op,
                        exchange = id,
                        rpc = m,
                        attempt = *n,
                        "retry"
                    );
                }
            }
            _ => {}
        }
    }

    impl SessionTrace {
        pub(crate) fn start(
            &mut self,
            op: OpKind<'_>,
            endpoint: &Endpoint,
            http_version: &'static str,
            bytes_read: u64,
        ) {
            let st = &mut self.on;
            st.exchanges.clear();
            st.sent.clear();
            st.bytes_at_start = bytes_read;
            #[cfg(feature = "opentelemetry")]
            {
                st.otel_traceparent = None;
            }
            st.rpc.start(endpoint, http_version);
            macro_rules! op_span {
                ($name:literal, $tool:expr) => {
                    tracing::info_span!(
                        target: TARGET,
                        $name,
                        origin = %origin_field(endpoint),
                        http_version,
                        era = Empty,
                        protocol_version = Empty,
                        tool = $tool,
                        pages = Empty,
                        tools = Empty,
                        bytes_read = Empty,
                        outcome = Empty,
                        budget = Empty,
                    )
                };
            }
            let span = match op {
                OpKind::Connect => op_span!("connect", Empty),
                OpKind::List => op_span!("list", Empty),
                OpKind::Call { tool } => op_span!("call", tool),
                OpKind::Resume => op_span!("resume", Empty),
                OpKind::Close => op_span!("close", Empty),
            };
            st.op = Some(span);
        }

        pub(crate) fn enter(&self) -> Entered {
            Entered {
                _entered: self.on.op.as_ref().map(|s| s.clone().entered()),
            }
        }

        pub(crate) fn transmit(&mut self, t: &Transmit) {
            let st = &mut self.on;
            let Some(op) = &st.op else { return };
            if op.is_disabled() {
                // Nobody listens: not even the request is looked at.
                return;
            }
            let (method, rpc) = classify(t);
            let id = t.exchange.0;
            let span = tracing::debug_span!(
                target: TARGET,
                parent: op,
                "exchange",
                exchange = id,
                method = %method,
                rpc = rpc.as_deref(),
                fresh_socket = t.fresh_socket,
                bytes_read = Empty,
                outcome = Empty,
            );
            request_events(
                op,
                t,
                &method,
                rpc.as_deref(),
                &mut st.sent,
                "pooled socket closed before answering",
            );
            st.exchanges.insert(t.exchange, (span, 0));
        }

        /// The client is about to send `t` (any wire, before it is recorded): a JSON-RPC
        /// request or notification opens its `mcp` span (or stays in the open one). With the
        /// feature `opentelemetry`, when the operation's requests carry the operation span's
        /// OpenTelemetry context (the embedder gave none), the `traceparent` of `t`'s
        /// `params._meta` is rewritten to name the request's own `mcp` span as the parent
        /// (same length: the body's size is unchanged), so that the server's span is a child of
        /// the client span of that request, as the conventions' context propagation has it. It
        /// is rewritten where the core wrote it ([`Transmit::traceparent_at`]), never in a tool
        /// argument of the same name and value; if the operation's value is not there, the body
        /// is sent as written and a DEBUG event says so.
        pub(crate) fn request(&mut self, t: &mut Transmit) {
            let st = &mut self.on;
            let Some(op) = &st.op else { return };
            if op.is_disabled() {
                return;
            }
            let Some(_current) = st.rpc.request(op, t) else {
                return;
            };
            #[cfg(feature = "opentelemetry")]
            if let (Some(sent), Some(own), Some(at)) = (
                &st.otel_traceparent,
                &_current.traceparent,
                t.traceparent_at(),
            ) {
                if !otel::rewrite_traceparent(&mut t.request.body, at, sent, own) {
                    tracing::debug!(
                        target: TARGET,
                        parent: &_current.span,
                        at,
                        "traceparent left as sent"
                    );
                }
            }
        }

        pub(crate) fn bytes(&mut self, exchange: ExchangeId, n: usize) {
            if let Some((_, read)) = self.on.exchanges.get_mut(&exchange) {
                *read += n as u64;
            }
        }

        pub(crate) fn exchange_end(&mut self, exchange: ExchangeId, outcome: &'static str) {
            if let Some((span, read)) = self.on.exchanges.remove(&exchange) {
                span.record("bytes_read", read);
                span.record("outcome", outcome);
            }
        }

        pub(crate) fn state(&mut self, now: Option<ConnectionState>) {
            let st = &mut self.on;
            let Some(now) = now else { return };
            let before = st.last.replace(now);
            if before == Some(now) {
                return;
            }
            let Some(op) = &st.op else { return };
            let from = before.map_or("", ConnectionState::name);
            match now {
                ConnectionState::Discovering | ConnectionState::Initializing
                    if !matches!(
                        before,
                        None | Some(
                            ConnectionState::Unconnected
                                | ConnectionState::Discovering
                                | ConnectionState::Initializing
                        )
                    ) =>
                {
                    tracing::info!(target: TARGET, parent: op, from, "re-negotiation");
                }
                ConnectionState::Backoff => {
                    tracing::info!(target: TARGET, parent: op, "backoff before the next round");
                }
                ConnectionState::Relisting => {
                    tracing::info!(target: TARGET, parent: op, "relisting: the tool's headers did not match");
                }
                _ => {}
            }
        }

        /// The server answered one of the client's requests ([`Connection::take_answered`]).
        ///
        /// [`Connection::take_answered`]: mcp_sansio::Connection::take_answered
        pub(crate) fn answered(&mut self, a: mcp_sansio::Answered) {
            self.on.rpc.answered(a);
        }

        pub(crate) fn declined(&self) {
            if let Some(op) = &self.on.op {
                tracing::info!(target: TARGET, parent: op, "input requests declined");
            }
        }

        pub(crate) fn end(
            &mut self,
            outcome: &Result<Completion, Error>,
            era: Era,
            version: &str,
            bytes_read: u64,
        ) {
            let st = &mut self.on;
            let Some(op) = st.op.take() else { return };
            st.rpc.end(outcome);
            for (_, (span, read)) in std::mem::take(&mut st.exchanges) {
                span.record("bytes_read", read);
            }
            if !version.is_empty() {
                op.record("era", era.as_str());
                op.record("protocol_version", version);
            }
            op.record("bytes_read", bytes_read.saturating_sub(st.bytes_at_start));
            match outcome {
                Ok(c) => {
                    op.record("outcome", "ok");
                    if let Completion::Listed(catalog) = c {
                        op.record("pages", catalog.pages);
                        op.record("tools", catalog.tools.len());
                    }
                }
                Err(e) => {
                    op.record("outcome", e.kind().code());
                    if let Some(b) = e.budget() {
                        op.record("budget", b.budget.name());
                    }
                }
            }
        }
    }
}

/// The current OpenTelemetry context as W3C values (feature `opentelemetry`).
#[cfg(feature = "opentelemetry")]
pub mod otel {
    use opentelemetry::baggage::BaggageExt as _;
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// The trace context of `cx`: `traceparent` version 00 of its span context, its
    /// `tracestate`, and its baggage (values percent-encoded, W3C Baggage §3.3.1.4). `None`
    /// when the span context is not valid; a baggage or trace state that would not be valid is
    /// left out (never sent), the `traceparent` kept.
    pub fn from_context(cx: &opentelemetry::Context) -> Option<mcp_sansio::TraceContext> {
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return None;
        }
        let traceparent = traceparent(sc);
        let state = sc.trace_state().header();
        let baggage: Vec<String> = cx
            .baggage()
            .iter()
            .map(|(k, (v, _))| format!("{}={}", k.as_str(), encode(v.as_str())))
            .collect();
        let baggage = baggage.join(",");
        let state =
            Some(state.as_str()).filter(|s| mcp_sansio::trace_context::check_tracestate(s).is_ok());
        let baggage =
            Some(baggage.as_str()).filter(|b| mcp_sansio::trace_context::check_baggage(b).is_ok());
        mcp_sansio::TraceContext::new(&traceparent, state, baggage).ok()
    }

    /// The trace context of the tracing span `span` under its OpenTelemetry layer.
    pub(crate) fn context_of(span: &tracing::Span) -> Option<mcp_sansio::TraceContext> {
        from_context(&span.context())
    }

    /// The version-00 `traceparent` naming the tracing span `span` (under its OpenTelemetry
    /// layer) as the parent; `None` when it has no valid span context.
    pub(crate) fn traceparent_of(span: &tracing::Span) -> Option<String> {
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| traceparent(&sc))
    }

    fn traceparent(sc: &opentelemetry::trace::SpanContext) -> String {
        format!(
            "00-{}-{}-{:02x}",
            sc.trace_id(),
            sc.span_id(),
            sc.trace_flags().to_u8()
        )
    }

    /// Writes `own` over the JSON string value that starts at `at` in the request `body` (where
    /// the core wrote `params._meta.traceparent`, [`Transmit::traceparent_at`]) when that value
    /// is exactly `sent`, quotes included, and `own` has its length (both version-00
    /// `traceparent`s, 55 characters: the body keeps its size). Nothing else in the body is
    /// looked at or changed, a tool argument of the same name and value included. Whether it
    /// was written: `false` leaves the body as it was.
    ///
    /// [`Transmit::traceparent_at`]: mcp_sansio::Transmit::traceparent_at
    pub(crate) fn rewrite_traceparent(body: &mut [u8], at: usize, sent: &str, own: &str) -> bool {
        if sent.len() != own.len() {
            return false;
        }
        let Some(end) = at.checked_add(sent.len()) else {
            return false;
        };
        let quoted = at.checked_sub(1).and_then(|open| body.get(open..=end));
        if !matches!(quoted, Some([b'"', value @ .., b'"']) if *value == *sent.as_bytes()) {
            return false;
        }
        body[at..end].copy_from_slice(own.as_bytes());
        true
    }

    /// Percent-encodes what is not a baggage octet (W3C Baggage: "Any characters outside of
    /// the baggage-octet range of characters MUST be percent-encoded"), and `%` itself.
    fn encode(v: &str) -> String {
        let mut out = String::with_capacity(v.len());
        for b in v.bytes() {
            if matches!(b, 0x21 | 0x23..=0x24 | 0x26..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e)
            {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        use super::rewrite_traceparent;

        const SENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        const OWN: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01";

        /// Where `body` holds `"_meta":{"traceparent":"`, the offset just after it: where the
        /// core writes the value in these bodies (found here by construction).
        fn meta_value_at(body: &str) -> usize {
            let key = r#""_meta":{"traceparent":""#;
            body.find(key).expect("the body has _meta's traceparent") + key.len()
        }

        /// The value at the offset changes, to the request span's, in place, and nothing else:
        /// arguments holding the same characters under the same name, another name, or
        /// without a key stay.
        #[test]
        fn only_the_member_at_the_offset_is_rewritten() {
            let body = format!(
                r#"{{"params":{{"arguments":{{"x":"{SENT}","traceparent ":"{SENT}","traceparent":"{SENT}"}},"_meta":{{"traceparent":"{SENT}","tracestate":"a=b"}}}}}}"#
            );
            let mut bytes = body.clone().into_bytes();
            assert!(rewrite_traceparent(
                &mut bytes,
                meta_value_at(&body),
                SENT,
                OWN
            ));
            let meta = format!(r#""_meta":{{"traceparent":"{SENT}""#);
            let expected = body.replace(&meta, &format!(r#""_meta":{{"traceparent":"{OWN}""#));
            assert_ne!(expected, body);
            assert_eq!(String::from_utf8(bytes).unwrap(), expected);
        }

        /// Not the value sent at the offset (another value, the offset a byte off either way, a
        /// longer string starting with it, past the end), or a value of another length: the
        /// body is left as it was, and the rewrite says so.
        #[test]
        fn nothing_changes_unless_the_offset_holds_the_value_sent() {
            let body = format!(r#"{{"_meta":{{"traceparent":"{SENT}"}},"x":"{SENT}1"}}"#);
            let at = meta_value_at(&body);
            let longer = body.rfind(SENT).unwrap();
            let cases = [
                (at, OWN, SENT),
                (at, SENT, "00-short"),
                (at, "00-short", OWN),
                (at - 1, SENT, OWN),
                (at + 1, SENT, OWN),
                (longer, SENT, OWN),
                (0, SENT, OWN),
                (body.len(), SENT, OWN),
                (usize::MAX, SENT, OWN),
            ];
            for (at, sent, own) in cases {
                let mut b = body.clone().into_bytes();
                assert!(
                    !rewrite_traceparent(&mut b, at, sent, own),
                    "{at} {sent} -> {own}"
                );
                assert_eq!(b, body.as_bytes(), "{at} {sent} -> {own}");
            }
            let mut empty = Vec::new();
            assert!(!rewrite_traceparent(&mut empty, 0, SENT, OWN));
            assert!(empty.is_empty());
        }

        /// The offset the core reports for a tool call whose arguments hold `traceparent`
        /// members of the same value (one inside an argument's own `_meta`): only
        /// `params._meta.traceparent` changes, by serde's reading of the body before and after.
        #[test]
        fn the_connections_offset_rewrites_meta_and_no_argument() {
            use mcp_sansio::{Config, Connection, Instant, TraceContext};
            use serde_json::Value;

            let trace = TraceContext::new(SENT, Some("a=b"), None).unwrap();
            let config = Config::new("http://127.0.0.1:9/mcp")
                .unwrap()
                .with_trace_context(Some(trace));
            let mut conn = Connection::new(config).unwrap();
            let now = Instant::ZERO;
            conn.connect(now);
            let discover = conn.poll_transmit().expect("server/discover");
            let id = serde_json::from_slice::<Value>(&discover.request.body).unwrap()["id"].clone();
            let answer = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{}}}},"ttlMs":0}}}}"#
            );
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                answer.len()
            );
            mcp_sansio::socket::Http1Socket::new().handle_bytes(
                &mut conn,
                now,
                discover.exchange,
                response.as_bytes(),
            );
            let args =
                format!(r#"{{"traceparent":"{SENT}","x":{{"_meta":{{"traceparent":"{SENT}"}}}}}}"#);
            conn.call_tool(now, "echo", args.as_bytes());
            let mut call = conn.poll_transmit().expect("tools/call");
            let sent: Value = serde_json::from_slice(&call.request.body).unwrap();
            assert_eq!(sent["method"], "tools/call");
            let at = call
                .traceparent_at()
                .expect("the call carries a traceparent");
            assert!(rewrite_traceparent(&mut call.request.body, at, SENT, OWN));
            let mut expected = sent.clone();
            expected["params"]["_meta"]["traceparent"] = OWN.into();
            let rewritten: Value = serde_json::from_slice(&call.request.body).unwrap();
            assert_eq!(rewritten, expected);
            assert_eq!(rewritten["params"]["arguments"]["traceparent"], SENT);
            assert_eq!(
                rewritten["params"]["arguments"]["x"]["_meta"]["traceparent"],
                SENT
            );
        }
    }
}
