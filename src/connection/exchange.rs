//! Exchanges: the table of HTTP exchanges and what their response events mean.

use super::*;

use bytes::Bytes;

/// Whether a body of `len` bytes is collected in a spare buffer of `capacity`: it fits, and uses
/// enough of it that the buffer is kept as it is once complete (the test of
/// `list::message_buffer`, which otherwise shrinks it, a copy).
fn fits_spare(capacity: usize, len: usize) -> bool {
    capacity >= len && capacity - len <= len / 8
}

/// `inner` as a slice of `outer`, if it lies within it (it does when the decoder took it from
/// `outer`'s bytes).
fn slice_of(outer: &Bytes, inner: &[u8]) -> Option<Bytes> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    (end <= outer.len()).then(|| outer.slice(start..end))
}

impl Connection {
    /// Gives the connection an empty buffer to collect a JSON response body in: the next body
    /// whose announced `Content-Length` fits its capacity, and fills most of it, is collected
    /// there rather than in a new allocation (whose pages the system must then provide afresh,
    /// a cost that dominates for bodies of megabytes). What `buf` holds is cleared. A buffer
    /// given while another is kept replaces it. The byte budget is charged exactly as without
    /// it.
    pub fn give_body_buffer(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        self.spare = buf;
    }

    /// Takes back an empty buffer for [`give_body_buffer`](Self::give_body_buffer) (of this or
    /// another connection): that of the last JSON body whose message was handled and is held by
    /// nothing else (a tool call's answer; a listed page's tools keep theirs), or the one given
    /// and not used. Empty (no allocation) if there is none.
    pub fn take_body_buffer(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.spare)
    }

    /// The socket read bytes of `exchange`'s response that made no event yet (a head not yet
    /// complete): the server has begun to answer, so a failure from now on is not that of a
    /// stale pooled socket, and the request is not sent again. Only the HTTP/1.1 socket knows
    /// this before the head is whole.
    pub(crate) fn response_begun(&mut self, exchange: ExchangeId) {
        if let Some(ex) = self.exchanges.iter_mut().find(|e| e.id == exchange) {
            ex.heard = Heard::Something;
        }
    }

    /// One event of `exchange`'s response, decoded by the socket it runs on
    /// ([`Input::Response`] of [`Connection::handle`]). Its `raw` cost (every byte the socket read for
    /// it since the previous event: framing, header blocks, 1xx responses, padding) is charged
    /// to this connection's byte budget first. Events of unknown exchanges are ignored; an
    /// event out of order breaks the exchange. A body whose bytes come with their `owner`, and
    /// arrive whole in one event, is kept as a slice of it rather than copied.
    pub(crate) fn handle_response_event(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        event: ResponseEvent<'_>,
    ) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let mut ex = self.exchanges.swap_remove(idx);
        ex.heard = Heard::Something;
        let raw = match &event {
            ResponseEvent::Head { raw, .. }
            | ResponseEvent::Body { raw, .. }
            | ResponseEvent::End { raw, .. } => *raw,
        };
        if self
            .ledger
            .charge(usize::try_from(raw).unwrap_or(usize::MAX))
            .is_err()
        {
            let error = Error::Budget(self.ledger.exceeded());
            return self.exchange_broken(now, ex, error);
        }
        if let Err(e) = ex.decoder.observe(&event) {
            let error = self.wire_error(e);
            return self.exchange_broken(now, ex, error);
        }
        if let Role::Drain { bytes_left } = &mut ex.role {
            match bytes_left.checked_sub(raw) {
                Some(left) => *bytes_left = left,
                None => {
                    return self
                        .events
                        .push_back(Event::ExchangeAbandoned { exchange: ex.id })
                }
            }
        }
        let flow = match event {
            ResponseEvent::Head { head, .. } => self.on_head(now, &mut ex, head),
            ResponseEvent::Body { bytes, owner, .. } => self.on_body(now, &mut ex, bytes, owner),
            ResponseEvent::End { reusable, .. } => return self.on_end(now, ex, reusable),
        };
        if let Flow::Continue = flow {
            self.exchanges.push(ex);
        }
    }

    /// The socket refused `exchange`'s response (a malformed HTTP/1.1 response, a budget; over
    /// HTTP/2 a reset stream or the connection's failure). A `tools/call` or any other request
    /// the error shows the server never processed ([`WireError::never_processed`]:
    /// REFUSED_STREAM, or a GOAWAY below its stream) is sent once more on a fresh socket, with
    /// a new JSON-RPC id; in the 2026-07-28 era a stream the error shows broken
    /// ([`WireError::is_cut_off`] before the head, [`WireError::is_broken_stream`] after a `2xx`
    /// head) is re-issued with a new id. Every sending counts in `responses_per_request`.
    /// `raw` is what the stream was charged since its previous event, charged here too.
    pub(crate) fn handle_wire_error(
        &mut self,
        now: Instant,
        exchange: ExchangeId,
        error: WireError,
        raw: u64,
    ) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let ex = self.exchanges.swap_remove(idx);
        let charged = self
            .ledger
            .charge(usize::try_from(raw).unwrap_or(usize::MAX));
        let error = match charged {
            Err(_) if error.budget().is_none() => Error::Budget(self.ledger.exceeded()),
            _ => self.wire_error(error),
        };
        self.exchange_broken(now, ex, error);
    }

    /// `exchange`'s stream ended (the server closed its socket) before its response did; a
    /// socket that decodes a response whose end the close marks delivers that end as an event
    /// first. Ignored for exchanges no longer open.
    pub(crate) fn handle_eof(&mut self, now: Instant, exchange: ExchangeId) {
        let Some(idx) = self.exchanges.iter().position(|e| e.id == exchange) else {
            return;
        };
        let ex = self.exchanges.swap_remove(idx);
        let stage = if ex.heard == Heard::Something {
            "before the end of the response"
        } else {
            "before the response"
        };
        self.exchange_broken(now, ex, Error::UnexpectedEof { stage })
    }

    /// The error a socket's refusal means for the operation.
    fn wire_error(&self, e: WireError) -> Error {
        if e.is_byte_budget_overrun() {
            // Announced more than the byte budget allows (nothing of it is read), or used up
            // the stream's allowance, which is what the budget had left: this budget's
            // exhaustion, reported with the configured limit.
            return Error::Budget(self.ledger.exceeded());
        }
        Error::Wire(e)
    }

    /// The transport failed for `exchange` (dial refused, TLS, reset…).
    pub(crate) fn handle_transport_error(
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

    pub(super) fn on_head(&mut self, now: Instant, ex: &mut Exchange, head: ResponseHead) -> Flow {
        let status = head.status;
        if let Role::Listen { .. } = ex.role {
            self.listen_head(ex, &head);
            return Flow::Continue;
        }
        if !ex.role.is_main() {
            ex.body = Body::Discard;
            return Flow::Continue;
        }
        if self.config.dpop.is_some() {
            if let Some(nonce) = head
                .header("dpop-nonce")
                .and_then(crate::auth::dpop::usable_nonce)
            {
                self.dpop_nonce = Some(nonce);
            }
        }
        // Session id: legacy sessions must keep the one they were given.
        if let Err(e) = self.check_session_header(&head) {
            self.fail_exchange(ex.id, e);
            return Flow::Stop;
        }
        if status == 401 && self.config.dpop.is_some() {
            if let Some(flow) = self.dpop_nonce_retry(now, ex, &head) {
                return flow;
            }
        }
        if status == 401 || status == 403 {
            let error = match www_authenticate(&head) {
                Ok(challenge) => Error::Authentication { status, challenge },
                Err(e) => Error::Auth(crate::auth::AuthError::Challenge(e)),
            };
            self.fail_exchange(ex.id, error);
            return Flow::Stop;
        }
        if (300..400).contains(&status) {
            let location = head.header("location").map(|v| truncated_bytes(v, 1024));
            self.fail_exchange(ex.id, Error::Redirect { status, location });
            return Flow::Stop;
        }
        let content_type = head.content_type();
        // The decoder refused a length beyond the byte budget before this head.
        let announced = head.content_length.and_then(|n| usize::try_from(n).ok());
        let json = || Body::Json {
            buf: Vec::new(),
            announced,
        };
        let is_json = content_type.as_deref() == Some("application/json");
        let is_sse = content_type.as_deref() == Some("text/event-stream");
        let expects_body = self.machine.req().is_some_and(|p| p.step.expects_body());
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
            } else if is_json && !matches!(ex.role, Role::Resume { .. }) {
                json()
            } else {
                let e = ProtocolError::UnexpectedContentType {
                    status,
                    content_type,
                };
                self.fail_exchange(ex.id, Error::Protocol(e));
                return Flow::Stop;
            }
        } else if is_json {
            json()
        } else {
            Body::Discard
        };
        Flow::Continue
    }

    /// A `401` to a request with a DPoP proof whose challenge asks `use_dpop_nonce` with a
    /// `DPoP-Nonce` (RFC 9449 §9): the request is sent once more with that nonce (already kept
    /// by [`Self::on_head`]) while `ex` reads the rest of its answer in the background. Asked
    /// again for the same request, the request fails ([`AuthError::DpopNonceRepeated`]).
    /// `None` when the answer asks for something else.
    ///
    /// [`AuthError::DpopNonceRepeated`]: crate::auth::AuthError::DpopNonceRepeated
    fn dpop_nonce_retry(
        &mut self,
        now: Instant,
        ex: &mut Exchange,
        head: &ResponseHead,
    ) -> Option<Flow> {
        let challenge = www_authenticate(head).ok()??;
        let challenges = crate::auth::parse_challenges([challenge.as_bytes()]).ok()?;
        let asks = challenges
            .iter()
            .any(|c| c.is_scheme("dpop") && c.param("error") == Some("use_dpop_nonce"));
        if !asks
            || head
                .header("dpop-nonce")
                .and_then(crate::auth::dpop::usable_nonce)
                .is_none()
        {
            return None;
        }
        if !self.machine.spend_nonce_retry() {
            self.fail_exchange(
                ex.id,
                Error::Auth(crate::auth::AuthError::DpopNonceRepeated),
            );
            return Some(Flow::Stop);
        }
        let resume = match &ex.role {
            Role::Resume { from } => Some((from.clone(), ex.retry)),
            _ => None,
        };
        self.detach_exchange(ex.id);
        let flow = if !ex.decoder.end_is_delimited() || ex.decoder.is_ended() {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            Flow::Stop
        } else {
            ex.role = Role::Drain {
                bytes_left: DRAIN_BYTES,
            };
            ex.body = Body::Discard;
            ex.deadline = now + DRAIN_GRACE.min(self.config.budgets.close_time);
            Flow::Continue
        };
        // Sent again with a new id, as every re-send is: no request goes twice under one id.
        self.resend(now, false, resume);
        Some(flow)
    }

    /// Body bytes of `ex`; `source`, if any, owns them (a body event's `owner`).
    pub(super) fn on_body(
        &mut self,
        now: Instant,
        ex: &mut Exchange,
        bytes: &[u8],
        source: Option<&Bytes>,
    ) -> Flow {
        match &mut ex.body {
            Body::Pending | Body::Discard => Flow::Continue,
            Body::Json { buf, announced } => {
                if buf.is_empty() {
                    // The first bytes: where the body is collected.
                    if let Some(n) = *announced {
                        if let Some(whole) = source
                            .filter(|_| n == bytes.len())
                            .and_then(|s| slice_of(s, bytes))
                        {
                            ex.body = Body::Whole(whole);
                            return Flow::Continue;
                        }
                        if fits_spare(self.spare.capacity(), n) {
                            *buf = core::mem::take(&mut self.spare);
                        } else {
                            buf.reserve(n);
                        }
                    }
                }
                buf.extend_from_slice(bytes);
                Flow::Continue
            }
            Body::Whole(whole) => {
                // Not after a body announced whole; collected as any other if it were.
                let mut buf = Vec::with_capacity(whole.len() + bytes.len());
                buf.extend_from_slice(whole);
                buf.extend_from_slice(bytes);
                ex.body = Body::Json {
                    buf,
                    announced: None,
                };
                Flow::Continue
            }
            Body::Sse(_) => self.feed_sse(now, ex, bytes),
        }
    }

    pub(super) fn feed_sse(&mut self, now: Instant, ex: &mut Exchange, mut input: &[u8]) -> Flow {
        while !input.is_empty() {
            let Body::Sse(dec) = &mut ex.body else {
                return Flow::Continue;
            };
            let step = match dec.decode(input) {
                Ok(s) => s,
                Err(e) => {
                    if let Role::Listen { .. } = ex.role {
                        // The standalone stream ends; the operation goes on.
                        self.events
                            .push_back(Event::ExchangeAbandoned { exchange: ex.id });
                        return Flow::Stop;
                    }
                    self.fail_exchange(ex.id, Error::Sse(e));
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
                Some(SseItem::Retry(ms)) => ex.retry = Some(Duration::from_millis(ms)),
                Some(SseItem::Event(event)) => {
                    if let Some(id) = event.id {
                        ex.last_event_id = if id.is_empty() {
                            None
                        } else {
                            Some(truncated(&id, 1024))
                        };
                    }
                    if event.data.is_empty() {
                        continue;
                    }
                    // Kept while the message is handled: a listed page's tools share it.
                    let data = list::message_buffer(event.data);
                    self.message = Some(data.clone());
                    let flow = if let Role::Listen { .. } = ex.role {
                        self.listen_message(now, ex, &data)
                    } else {
                        self.on_stream_message(now, ex, &data)
                    };
                    self.message = None;
                    self.decoded_call = None;
                    if let Flow::Stop = flow {
                        return Flow::Stop;
                    }
                }
            }
        }
        Flow::Continue
    }

    /// One JSON-RPC message answering the pending request: a listing's page is read by the
    /// one-pass page reader, a call's answer by the one-pass call reader (the decoded answer is
    /// kept in `decoded_call` for `on_call_result`), anything else by the general message parser.
    fn parse_answer<'a>(&mut self, body: &'a [u8]) -> Result<Message<'a>, ProtocolError> {
        self.decoded_call = None;
        match self.machine.req() {
            Some(p) if matches!(p.step, Step::ListPage { .. }) => {
                crate::jsonrpc::parse_message_for_page(body, p.id)
            }
            Some(p) if matches!(p.step, Step::Call) => {
                let max_blocks = self.max_content_blocks();
                let (message, decoded) =
                    crate::jsonrpc::parse_message_for_call(body, p.id, max_blocks)?;
                self.decoded_call = decoded;
                Ok(message)
            }
            _ => parse_message(body),
        }
    }

    /// One JSON-RPC message from an event stream.
    pub(super) fn on_stream_message(
        &mut self,
        now: Instant,
        ex: &mut Exchange,
        data: &[u8],
    ) -> Flow {
        let status = ex.decoder.status().unwrap_or(0);
        let msg = match self.parse_answer(data) {
            Ok(m) => m,
            Err(e) => {
                self.fail_exchange(ex.id, Error::Protocol(e));
                return Flow::Stop;
            }
        };
        let Some(p) = self.machine.req_mut() else {
            return Flow::Continue;
        };
        let expected = p.id;
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
            Message::Request { id, method, params } => {
                if matches!(self.session, Session::Legacy { .. })
                    && p.refusals < MAX_REFUSALS_PER_REQUEST
                {
                    p.refusals += 1;
                    self.server_request(now, id, &method, params);
                }
                Flow::Continue
            }
            Message::Result { id, .. } | Message::Error { id: Some(id), .. }
                if !id_matches(id, expected) =>
            {
                let e = wrong_id(expected, id);
                self.fail_exchange(ex.id, e);
                Flow::Stop
            }
            Message::Result { result, .. } => self.complete_main(now, ex, Outcome::Result(result)),
            Message::Error { error, .. } => {
                self.complete_main(now, ex, Outcome::RpcError { status, error })
            }
        }
    }

    /// The response of `ex` ended (framing complete, or a close-delimited body ended).
    pub(super) fn on_end(&mut self, now: Instant, mut ex: Exchange, reusable: bool) {
        if !ex.role.is_main() {
            let event = Event::ExchangeFinished {
                exchange: ex.id,
                reusable,
            };
            // After the outcome's events, whatever split the framing's end came in: the order of
            // events must not depend on how the bytes were cut.
            self.events.push_back(event);
            self.close_when_cancelled();
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
        let body = core::mem::replace(&mut ex.body, Body::Discard);
        // The socket of the `DELETE` that ends a session is never pooled: the server may tie the
        // connection to the session it just ended, and nothing of this connection follows it.
        let ends_session = self
            .machine
            .req()
            .is_some_and(|p| matches!(p.step, Step::Delete));
        self.events.push_back(Event::ExchangeFinished {
            exchange: ex.id,
            reusable: reusable && !ends_session,
        });
        self.detach_exchange(ex.id);
        let buf = match body {
            Body::Json { buf, .. } => list::message_buffer(buf),
            Body::Whole(buf) => buf,
            // The stream ended without the response.
            Body::Sse(_) => return self.stream_incomplete(now, &ex),
            Body::Discard | Body::Pending => {
                let expects_body = self.machine.req().is_some_and(|p| p.step.expects_body());
                let outcome = if (200..300).contains(&status) && !expects_body {
                    Outcome::Accepted
                } else {
                    Outcome::Status(status)
                };
                return self.on_outcome(now, outcome);
            }
        };
        if (200..300).contains(&status) {
            // Kept while the message is handled: a listed page's tools share it.
            self.message = Some(buf.clone());
            self.on_json_response(now, status, &buf);
            self.message = None;
            self.decoded_call = None;
            // Nothing holds a call's body any more: kept for the next one.
            if let Ok(unique) = buf.try_into_mut() {
                self.give_body_buffer(unique.into());
            }
        } else {
            match parse_message(&buf) {
                Ok(Message::Error { error, .. }) => {
                    self.on_outcome(now, Outcome::RpcError { status, error })
                }
                _ => self.on_outcome(now, Outcome::Status(status)),
            }
        }
    }

    pub(super) fn on_json_response(&mut self, now: Instant, status: u16, body: &[u8]) {
        let Some(p) = self.machine.req() else { return };
        let expected = p.id;
        match self.parse_answer(body) {
            Ok(Message::Request { id, .. }) => self.fail_op(wrong_id(expected, id)),
            Ok(Message::Result { id, .. } | Message::Error { id: Some(id), .. })
                if !id_matches(id, expected) =>
            {
                self.fail_op(wrong_id(expected, id))
            }
            Ok(Message::Result { result, .. }) => self.on_outcome(now, Outcome::Result(result)),
            Ok(Message::Error { error, .. }) => {
                self.on_outcome(now, Outcome::RpcError { status, error })
            }
            Ok(Message::Notification { .. }) => {
                let e = ProtocolError::MalformedMessage {
                    reason: "a notification where a response was expected".into(),
                };
                self.fail_op(Error::Protocol(e));
            }
            Err(e) => self.fail_op(Error::Protocol(e)),
        }
    }

    /// The main exchange delivered its outcome before its body ended. The outcome is acted on at
    /// once; the exchange becomes a background one that reads the rest of a framed body for a
    /// short grace ([`DRAIN_GRACE`], [`DRAIN_BYTES`]) and finishes reusable if the framing ends
    /// cleanly, or is abandoned. A close-delimited body can never leave a reusable socket: it is
    /// abandoned at once.
    pub(super) fn complete_main(
        &mut self,
        now: Instant,
        ex: &mut Exchange,
        outcome: Outcome<'_>,
    ) -> Flow {
        self.detach_exchange(ex.id);
        if !ex.decoder.end_is_delimited() || ex.decoder.is_ended() {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            self.on_outcome(now, outcome);
            return Flow::Stop;
        }
        ex.role = Role::Drain {
            bytes_left: DRAIN_BYTES,
        };
        ex.body = Body::Discard;
        ex.deadline = now + DRAIN_GRACE.min(self.config.budgets.close_time);
        self.on_outcome(now, outcome);
        if matches!(self.machine.get(), State::Closed) {
            // Closing dropped every other exchange: this one goes too.
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            return Flow::Stop;
        }
        Flow::Continue
    }

    /// Exchange `id` no longer carries the pending request.
    pub(super) fn detach_exchange(&mut self, id: ExchangeId) {
        if let Some(p) = self.machine.req_mut() {
            if p.exchange == Some(id) {
                p.exchange = None;
            }
        }
    }

    /// The exchange broke (decoder error, EOF mid-response, transport failure).
    ///
    /// What follows, in order:
    /// - a request the server never read (a pooled socket closed before a byte of answer) or
    ///   never processed ([`WireError::never_processed`]: REFUSED_STREAM, a GOAWAY below its
    ///   stream) goes once more on a fresh socket, with a new JSON-RPC id;
    /// - in the 2026-07-28 era a stream cut off before its head, or broken after a `2xx` head,
    ///   loses the request, which is re-issued with a new id ("clients MUST re-issue it as a
    ///   new request with a new request ID"); a legacy event stream broken after a `2xx` head
    ///   is resumed with `Last-Event-ID`;
    /// - anything else, and every budget, fails the operation.
    ///
    /// Every re-send and re-issue counts in `responses_per_request`.
    pub(super) fn exchange_broken(&mut self, now: Instant, ex: Exchange, error: Error) {
        if !ex.role.is_main() {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            self.close_when_cancelled();
            return;
        }
        self.events
            .push_back(Event::ExchangeAbandoned { exchange: ex.id });
        self.detach_exchange(ex.id);
        let budget_error = matches!(error, Error::Budget(_)) || error.budget().is_some();
        // A pooled socket the server closed before answering: send once more on a fresh socket.
        let stale = ex.heard == Heard::NothingOnPooled
            && matches!(
                &error,
                Error::UnexpectedEof { .. }
                    | Error::Transport(TransportError {
                        kind: TransportErrorKind::Io,
                        ..
                    })
            );
        // HTTP/2: the server said it never processed the stream (REFUSED_STREAM, or a GOAWAY
        // below it), so even a tool call may go once more, on a fresh socket.
        let never_processed = ex.decoder.status().is_none()
            && matches!(&error, Error::Wire(e) if e.never_processed());
        if (stale || never_processed) && self.machine.spend_fresh_resend() {
            let resume = match ex.role {
                Role::Resume { from } => Some((from, ex.retry)),
                _ => None,
            };
            return self.resend(now, true, resume);
        }
        let modern = matches!(self.session, Session::Modern { .. });
        let status = ex.decoder.status();
        if !budget_error && status.is_none() && modern && is_cut_off(&error) {
            // The stream was cut before the head: the request may have been processed, and in
            // this era it is lost, so it is re-issued with a new id.
            return self.stream_incomplete(now, &ex);
        }
        let mid_stream = status.is_some_and(|s| (200..300).contains(&s));
        if mid_stream
            && !budget_error
            && match &error {
                Error::Wire(e) => e.is_broken_stream(),
                Error::Transport(_) | Error::UnexpectedEof { .. } => true,
                _ => false,
            }
        {
            let is_sse = matches!(ex.body, Body::Sse(_));
            if is_sse || modern {
                return self.stream_incomplete(now, &ex);
            }
        }
        self.fail_op(error);
    }

    /// Fails the operation because of exchange `id` (already removed from the table).
    pub(super) fn fail_exchange(&mut self, id: ExchangeId, error: Error) {
        self.events
            .push_back(Event::ExchangeAbandoned { exchange: id });
        self.detach_exchange(id);
        self.fail_op(error);
    }

    /// A new exchange for `role`, on a fresh socket if `fresh`; a resumption's stream starts
    /// at the event it resumes from, with the `retry` its predecessor announced.
    pub(super) fn new_exchange(
        &mut self,
        now: Instant,
        role: Role,
        fresh: bool,
        retry: Option<Duration>,
    ) -> ExchangeId {
        self.next_exchange += 1;
        let id = ExchangeId(self.next_exchange);
        let last_event_id = match &role {
            Role::Resume { from } => Some(from.clone()),
            _ => None,
        };
        let deadline = match (&role, self.machine.req()) {
            (Role::Request | Role::Resume { .. }, Some(p)) => p.deadline.at,
            (Role::Request | Role::Resume { .. }, None) => now + self.config.budgets.request_time,
            (Role::Drain { .. } | Role::Background | Role::Listen { .. }, _) => {
                now + self.config.budgets.close_time
            }
        };
        self.exchanges.push(Exchange {
            id,
            role,
            decoder: ResponseState::default(),
            body: Body::Pending,
            deadline,
            heard: if fresh {
                Heard::NothingOnFresh
            } else {
                Heard::NothingOnPooled
            },
            last_event_id,
            retry,
        });
        id
    }
}

/// What an exchange is for.
#[derive(Debug)]
pub(super) enum Role {
    /// Carries the pending request's response (its first sending, a re-issue or a re-send on a
    /// fresh socket).
    Request,
    /// A legacy `GET` resuming the pending request's stream after event `from`.
    Resume {
        /// The `Last-Event-ID` sent; a stream that ends without a later id made no progress.
        from: String,
    },
    /// The response was delivered; the rest of its framing is read for a short grace, at most
    /// `bytes_left` more raw bytes, so that its socket may be reused.
    Drain {
        /// Raw bytes still accepted.
        bytes_left: u64,
    },
    /// A fire-and-forget request (cancellation, refusal): its answer is read and discarded.
    Background,
    /// The standalone `GET` stream of a legacy session (`listen.rs`), beside the operations:
    /// `handed` server requests of it were handed on or refused so far.
    Listen {
        /// Server requests handed on or refused.
        handed: u32,
    },
}

impl Role {
    /// Whether the exchange carries the pending request's response.
    pub(super) fn is_main(&self) -> bool {
        matches!(self, Role::Request | Role::Resume { .. })
    }
}

/// What is done with a response body.
#[derive(Debug)]
pub(super) enum Body {
    /// Waiting for the head.
    Pending,
    /// A JSON body, collected whole; `announced` is the length the head gave
    /// (`Content-Length`), if any.
    Json {
        buf: Vec<u8>,
        announced: Option<usize>,
    },
    /// A JSON body that arrived whole in one body event with an owner (bytes the caller gave
    /// away, [`Http1Socket::handle_owned_bytes`](crate::socket::Http1Socket::handle_owned_bytes)):
    /// a slice of them, not copied.
    Whole(Bytes),
    /// An event stream, decoded as it comes.
    Sse(SseDecoder),
    /// Read (and charged) but not kept.
    Discard,
}

/// What an exchange's socket has brought so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Heard {
    /// Nothing, on a pooled socket: if it ends now, the server closed the idle socket before
    /// reading the request, which may go once more on a fresh one.
    NothingOnPooled,
    /// Nothing, on a socket opened for this exchange.
    NothingOnFresh,
    /// Response bytes (or, over HTTP/2, events).
    Something,
}

#[derive(Debug)]
pub(super) struct Exchange {
    pub(super) id: ExchangeId,
    pub(super) role: Role,
    /// What the response has shown so far (status, end), from its events.
    pub(super) decoder: ResponseState,
    pub(super) body: Body,
    pub(super) deadline: Instant,
    pub(super) heard: Heard,
    /// The last event id its event stream carried (a resumption's starts at the one it
    /// resumes from): where a `GET` resumes it if it breaks.
    pub(super) last_event_id: Option<String>,
    /// The stream's last `retry:` field (or its predecessor's): the wait before resuming it.
    pub(super) retry: Option<Duration>,
}

/// What a processing step decided about the current exchange.
pub(super) enum Flow {
    Continue,
    /// The exchange's part is over (the exchange was removed or abandoned).
    Stop,
}

/// Every `WWW-Authenticate` field of `head`, in order, joined with `", "` (one list, as RFC 9110
/// §5.3 combines field lines), never cut: the Bearer challenge is found by the authorization
/// wherever it is. Past [`MAX_CHALLENGE_BYTES`](crate::auth::MAX_CHALLENGE_BYTES) together, the
/// answer is refused ([`ChallengeError::TooLong`](crate::auth::ChallengeError::TooLong)).
fn www_authenticate(head: &ResponseHead) -> Result<Option<String>, crate::auth::ChallengeError> {
    let limit = crate::auth::MAX_CHALLENGE_BYTES;
    let mut joined: Option<Vec<u8>> = None;
    for (name, value) in &head.headers {
        if !name.eq_ignore_ascii_case("www-authenticate") {
            continue;
        }
        let out = joined.get_or_insert_with(Vec::new);
        if !out.is_empty() {
            out.extend_from_slice(b", ");
        }
        if out.len().saturating_add(value.len()) > limit {
            return Err(crate::auth::ChallengeError::TooLong { limit });
        }
        out.extend_from_slice(value);
    }
    Ok(joined.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Whether `error` means the exchange's stream was cut off before its response was complete
/// (the socket or stream ended, was reset or lost after the request went out), as opposed to a
/// malformed answer, a budget, or a request that never left (a failed dial or handshake).
fn is_cut_off(error: &Error) -> bool {
    match error {
        Error::Wire(e) => e.is_cut_off(),
        Error::UnexpectedEof { .. } => true,
        Error::Transport(t) => t.kind == TransportErrorKind::Io,
        _ => false,
    }
}
