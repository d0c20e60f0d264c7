//! Requests: logical requests (one step, possibly several exchanges) and how they are built.

use super::*;

impl Connection {
    /// A new logical request of `step`, for the caller to hand to the state it enters.
    /// `aggregate` is the operation's deadline, if it has one; otherwise the request has its own
    /// ([`Budget::RequestTime`]), cut to the running operation's deadline when a negotiation
    /// runs for it (a re-negotiation, a new legacy session): the operation's recoveries count
    /// against its own budget. A listing run inside a call carries the call's deadline, so it
    /// reports the call's budget and limit.
    pub(super) fn new_request(
        &mut self,
        now: Instant,
        step: Step,
        aggregate: Option<Deadline>,
    ) -> Pending {
        let deadline = aggregate.unwrap_or_else(|| {
            let own = Deadline::new(now, &self.config.budgets, Budget::RequestTime);
            match self.machine.deadline() {
                Some(op) if op.at < own.at => op,
                _ => own,
            }
        });
        let id = self.next_request_id();
        Pending {
            step,
            id,
            progress_token: id,
            exchange: None,
            responses: 0,
            stalled: 0,
            deadline,
            allowance: Resends::new(),
            refusals: 0,
        }
    }

    pub(super) fn next_request_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends (or re-sends) the request the state waits on, on a fresh socket if `fresh`; as a
    /// `GET` resumption if `resume` names the last event id (and the stream's `retry:`).
    pub(super) fn send_pending(
        &mut self,
        now: Instant,
        fresh: bool,
        resume: Option<(String, Option<Duration>)>,
    ) {
        let Some(p) = self.machine.req_mut() else {
            return;
        };
        p.responses += 1;
        if p.responses > self.config.budgets.responses_per_request {
            let e = self.config.budgets.exceeded(Budget::ResponsesPerRequest);
            return self.fail_op(Error::Budget(e));
        }
        let Some(p) = self.machine.req() else { return };
        let is_call = matches!(p.step, Step::Call);
        let built = if let Some((from, _)) = &resume {
            let mut headers = self.base_headers(None, false);
            headers.retain(|(n, _)| n != "Accept" && n != "Content-Type");
            headers.push(("Accept".into(), "text/event-stream".into()));
            headers.push(("Last-Event-ID".into(), from.clone()));
            self.gets_sent += 1;
            (self.request(Method::Get, headers, Vec::new()), None)
        } else {
            match self.build_step(&p.step, p.id, p.progress_token) {
                Ok(r) => r,
                Err(e) => return self.fail_op(e),
            }
        };
        let (mut request, traceparent_at) = built;
        if let Err(e) = self.add_dpop(now, &mut request) {
            return self.fail_op(e);
        }
        if let Err(e) = request.check() {
            return self.fail_op(Error::Request(e));
        }
        let (role, retry) = match resume {
            Some((from, retry)) => (Role::Resume { from }, retry),
            None => (Role::Request, None),
        };
        let exchange = self.new_exchange(now, role, fresh, retry);
        // A tool call's only limit is the call budget; every other request also has its own.
        if !is_call {
            let own = now + self.config.budgets.request_time;
            if let Some(ex) = self.exchanges.iter_mut().find(|e| e.id == exchange) {
                ex.deadline = ex.deadline.min(own);
            }
        }
        if let Some(p) = self.machine.req_mut() {
            p.exchange = Some(exchange);
        }
        self.transmits.push_back(Transmit {
            exchange,
            request,
            fresh_socket: fresh,
            traceparent_at,
        });
    }

    /// Fire-and-forget request whose answer is discarded (legacy cancellation, refusals).
    pub(super) fn send_background(
        &mut self,
        now: Instant,
        method: Method,
        body: Vec<u8>,
    ) -> Option<ExchangeId> {
        let headers = self.base_headers(None, true);
        let request = self.request(method, headers, body);
        self.queue_side_request(now, request, Role::Background)
    }

    /// Queues `request`, which no operation waits for (a background request, the standalone
    /// `GET`), as a new exchange of `role` on a pooled socket, with its DPoP proof when the
    /// configuration has a binding. A request that cannot be made (no proof, a field that cannot
    /// be sent) is not sent: `None`.
    pub(super) fn queue_side_request(
        &mut self,
        now: Instant,
        mut request: Request,
        role: Role,
    ) -> Option<ExchangeId> {
        if self.add_dpop(now, &mut request).is_err() || request.check().is_err() {
            return None;
        }
        let exchange = self.new_exchange(now, role, false, None);
        self.transmits
            .push_back(Transmit::new(exchange, request, false));
        Some(exchange)
    }

    /// Answers a legacy server's request handed on as [`Event::ServerRequest`]: `result` (a
    /// JSON object of at most [`MAX_SERVER_ANSWER_BYTES`]) is sent as its result, `None` refuses
    /// it. An answer that is not such an object is refused in its place, and the error says why.
    /// Without a legacy session nothing is sent.
    pub fn answer_server_request(
        &mut self,
        now: Instant,
        id: &RawValue,
        result: Option<&[u8]>,
    ) -> Result<(), ConfigError> {
        if !matches!(self.session, Session::Legacy { .. }) {
            return Ok(());
        }
        let Some(result) = result else {
            self.refuse_server_request(now, id, "");
            return Ok(());
        };
        let checked = if result.len() > MAX_SERVER_ANSWER_BYTES {
            Err(format!(
                "the answer is larger than {MAX_SERVER_ANSWER_BYTES} bytes"
            ))
        } else {
            crate::call::check_arguments(result)
        };
        let result = match checked {
            Ok(r) => r,
            Err(reason) => {
                self.refuse_server_request(now, id, "");
                return Err(ConfigError::InvalidArguments { reason });
            }
        };
        let mut body = Vec::new();
        let mut w = ObjectWriter::new(&mut body);
        w.string("jsonrpc", "2.0")
            .raw("id", id.get().as_bytes())
            .raw("result", result);
        w.finish();
        self.send_background(now, Method::Post, body);
        Ok(())
    }

    pub(super) fn refuse_server_request(&mut self, now: Instant, id: &RawValue, method: &str) {
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

    pub(super) fn request(
        &self,
        method: Method,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Request {
        Request {
            method,
            path: self.config.endpoint.target().to_owned(),
            authority: self.config.endpoint.authority().to_owned(),
            headers,
            body,
        }
    }

    /// Adds the `Authorization: DPoP` field and a fresh proof for `request` sent at `now` when
    /// the configuration has a DPoP binding (RFC 9449 §7): `htm` its method, `htu` the
    /// endpoint's URL without query, `ath` of the token, the server's latest nonce. Each proof
    /// has its own `jti`.
    pub(super) fn add_dpop(&mut self, now: Instant, request: &mut Request) -> Result<(), Error> {
        let Some(binding) = &self.config.dpop else {
            return Ok(());
        };
        let url = format!(
            "{}{}",
            self.config.endpoint.origin(),
            self.config.endpoint.target()
        );
        let n = self.dpop_proofs;
        self.dpop_proofs = self.dpop_proofs.wrapping_add(1);
        let fields = binding
            .request_headers(
                request.method.as_str(),
                &url,
                now,
                n,
                self.dpop_nonce.as_deref(),
            )
            .map_err(|e| {
                Error::Auth(crate::auth::AuthError::Assertion {
                    reason: e.to_string(),
                })
            })?;
        request.headers.extend(fields);
        Ok(())
    }

    /// Headers every request carries: content negotiation, authorization, era headers.
    /// `mcp_method` is the `Mcp-Method` of a modern request.
    pub(super) fn base_headers(
        &self,
        mcp_method: Option<&str>,
        with_body: bool,
    ) -> Vec<(String, String)> {
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
                ..
            } => {
                if version.as_str() >= VERSION_HEADER_SINCE {
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

    /// The request of `step` with JSON-RPC id `id` (and progress token `token`, a call's), and
    /// where the value of its `params._meta.traceparent` is in its body, if it has one
    /// ([`Transmit::traceparent_at`]).
    pub(super) fn build_step(
        &self,
        step: &Step,
        id: u64,
        token: u64,
    ) -> Result<(Request, Option<usize>), Error> {
        let modern_version = match &self.session {
            Session::Modern { version } => Some(version.clone()),
            _ => None,
        };
        let mut body = Vec::with_capacity(256);
        let mut traceparent_at = None;
        let headers;
        match step {
            Step::Discover { version, .. } => {
                let mut h = self.base_headers(None, true);
                h.push(("MCP-Protocol-Version".into(), version.clone()));
                h.push(("Mcp-Method".into(), "server/discover".into()));
                headers = h;
                let mut w = request_writer(&mut body, id, "server/discover");
                w.object("params", |p| {
                    traceparent_at =
                        crate::jsonrpc::write_request_meta(&self.config, Some(version), None, p);
                });
                w.finish();
            }
            Step::Initialize { .. } => {
                headers = self.base_headers(None, true);
                let offered = self
                    .config
                    .legacy_versions
                    .first()
                    .map_or(crate::config::LEGACY_VERSIONS[0], String::as_str);
                let info = &self.config.client_info;
                // A legacy session declares no capability: it opens no standalone GET stream, so a
                // server answering in JSON would send its own requests where nobody reads and
                // wait for them until the call's time runs out. Requests a server sends on a
                // request's own stream anyway still reach the input hook.
                let capabilities: &[u8] = b"{}";
                let mut w = request_writer(&mut body, id, "initialize");
                w.object("params", |p| {
                    p.string("protocolVersion", offered)
                        .raw("capabilities", capabilities)
                        .object("clientInfo", |i| {
                            i.string("name", &info.name)
                                .string("version", &info.version);
                        });
                    traceparent_at =
                        crate::jsonrpc::write_request_meta(&self.config, None, None, p);
                });
                w.finish();
            }
            Step::Initialized { .. } => {
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
                    traceparent_at = crate::jsonrpc::write_request_meta(
                        &self.config,
                        modern_version.as_deref(),
                        None,
                        p,
                    );
                });
                w.finish();
            }
            Step::Call => {
                let Some(state) = self.machine.call() else {
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
                    traceparent_at = crate::jsonrpc::write_request_meta(
                        &self.config,
                        modern_version.as_deref(),
                        Some(token),
                        p,
                    );
                });
                w.finish();
            }
            Step::Delete => {
                headers = self.base_headers(None, false);
                return Ok((self.request(Method::Delete, headers, Vec::new()), None));
            }
            Step::Task(method) => return self.build_task_step(*method, id),
        }
        Ok((self.request(Method::Post, headers, body), traceparent_at))
    }
}

/// The first legacy version whose requests carry `MCP-Protocol-Version`.
const VERSION_HEADER_SINCE: &str = "2025-06-18";

/// The request a logical request sends, with what its answer has told so far.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// `server/discover` offering `version`; `attempt` 1 is the one retry after `-32022`.
    Discover { attempt: u8, version: String },
    /// `initialize`; `session_id` is what its answer's head assigned.
    Initialize { session_id: Option<String> },
    /// `notifications/initialized`, carrying what `initialize`'s answer said of the server.
    Initialized { server: Announced },
    /// One `tools/list` page.
    ListPage { cursor: Option<String> },
    /// `tools/call` (of the running call).
    Call,
    /// `DELETE` of the legacy session.
    Delete,
    /// `tasks/get`, `tasks/update` or `tasks/cancel` about the running task (SEP-2663).
    Task(crate::task::TaskMethod),
}

impl Step {
    /// `initialize`, before any answer.
    pub(super) fn initialize() -> Step {
        Step::Initialize { session_id: None }
    }

    /// Whether a 2xx answer must carry a JSON-RPC message (not for a notification or `DELETE`).
    pub(super) fn expects_body(&self) -> bool {
        !matches!(self, Step::Initialized { .. } | Step::Delete)
    }
}

/// One logical request: possibly several exchanges (resumptions, re-issues, one re-send on a
/// fresh socket).
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) step: Step,
    pub(super) id: u64,
    pub(super) progress_token: u64,
    /// The exchange carrying its response now; `None` between the end (or break) of one and the
    /// next, while an outcome is decided or a resumption waits.
    pub(super) exchange: Option<ExchangeId>,
    pub(super) responses: u32,
    pub(super) stalled: u32,
    pub(super) deadline: Deadline,
    /// What the request may still try once (the resend on a fresh socket, the retry with a new
    /// `DPoP-Nonce`): made new with the request, spent only through the machine
    /// ([`Machine::spend_fresh_resend`], [`Machine::spend_nonce_retry`]).
    pub(super) allowance: Resends,
    pub(super) refusals: u32,
}

pub(super) fn request_writer<'a>(out: &'a mut Vec<u8>, id: u64, method: &str) -> ObjectWriter<'a> {
    let mut w = ObjectWriter::new(out);
    w.string("jsonrpc", "2.0")
        .uint("id", id)
        .string("method", method);
    w
}

pub(super) fn notification_body(method: &str, params: Option<&[u8]>) -> Vec<u8> {
    let mut body = Vec::new();
    let mut w = ObjectWriter::new(&mut body);
    w.string("jsonrpc", "2.0").string("method", method);
    if let Some(p) = params {
        w.raw("params", p);
    }
    w.finish();
    body
}
