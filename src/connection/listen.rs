//! The standalone `GET` stream of a legacy session: where a server sends the requests that belong
//! to no request of the client (2025-11-25 transports, "Listening for Messages from the Server").
//!
//! Opened only with [`Config::input_hook`] on, in the legacy era, once the session is confirmed
//! (`notifications/initialized` accepted), as an exchange of its own beside the operations. An
//! answer that is not an event stream (405 among others) means the server offers none: no error,
//! and no second `GET` in this session. The server's requests on it go to the same hook as those
//! on a request's own stream, and the answers are POSTed back. Bounded like a logical request:
//! its bytes count against the connection's byte budget, at most [`MAX_REFUSALS_PER_REQUEST`]
//! server requests per stream are handed on or refused, at most `responses_per_request` `GET`s
//! per session, and each stream lives until the later of its own request time and the deadline
//! of the operation running when it was opened or kept. A stream that ended is opened again when
//! the next operation starts (within that count); it is abandoned when the session ends (close, a
//! connection failure, a new session).

use super::*;

/// The standalone stream's bookkeeping for the current legacy session.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Listen {
    /// `GET`s sent for it in this session.
    opened: u32,
    /// The server answered without an event stream: it offers none.
    refused: bool,
}

impl Connection {
    /// Whether this session listens on a standalone stream at all.
    fn listens(&self) -> bool {
        self.config.input_hook && matches!(self.session, Session::Legacy { .. })
    }

    /// The open standalone stream's exchange, if any.
    fn listen_exchange(&mut self) -> Option<&mut Exchange> {
        self.exchanges
            .iter_mut()
            .find(|e| matches!(e.role, Role::Listen { .. }))
    }

    /// Opens the standalone stream if the session listens, none is open, the server did not
    /// refuse one and the session's `GET`s are not used up; an open one lives at least until
    /// `until` (the deadline of the operation starting now).
    pub(super) fn listen_keep(&mut self, now: Instant, until: Option<Instant>) {
        if !self.listens() {
            return;
        }
        let own = now + self.config.budgets.request_time;
        let until = until.map_or(own, |u| u.max(own));
        if let Some(ex) = self.listen_exchange() {
            ex.deadline = ex.deadline.max(until);
            return;
        }
        if self.listen.refused
            || self.listen.opened >= self.config.budgets.responses_per_request
            || self.ledger.remaining() == 0
        {
            return;
        }
        let mut headers = self.base_headers(None, false);
        headers.retain(|(n, _)| n != "Accept");
        headers.push(("Accept".into(), "text/event-stream".into()));
        let request = self.request(Method::Get, headers, Vec::new());
        let Some(exchange) = self.queue_side_request(now, request, Role::Listen { handed: 0 })
        else {
            return;
        };
        self.listen.opened += 1;
        self.gets_sent += 1;
        if let Some(ex) = self.exchanges.iter_mut().find(|e| e.id == exchange) {
            ex.deadline = until;
        }
    }

    /// Ends the standalone stream (its exchange is abandoned) and forgets the session's count:
    /// the session ends or another replaces it.
    pub(super) fn listen_end(&mut self) {
        if let Some(idx) = self
            .exchanges
            .iter()
            .position(|e| matches!(e.role, Role::Listen { .. }))
        {
            let ex = self.exchanges.swap_remove(idx);
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
        }
        self.listen = Listen::default();
    }

    /// The head of the standalone stream's answer: an event stream is read; anything else
    /// (405, another status, another type) means the server offers none, and its body is read
    /// and dropped.
    pub(super) fn listen_head(&mut self, ex: &mut Exchange, head: &ResponseHead) {
        let is_sse = head.content_type().as_deref() == Some("text/event-stream");
        ex.body = if (200..300).contains(&head.status) && is_sse {
            let cap = self
                .config
                .budgets
                .sse_event_bytes
                .min(self.ledger.remaining());
            Body::Sse(SseDecoder::new(cap))
        } else {
            self.listen.refused = true;
            Body::Discard
        };
    }

    /// One message of the standalone stream: a server request goes to the hook (or is refused),
    /// within the stream's cap; notifications and stray responses are dropped; a malformed
    /// message ends the stream (not the operation).
    pub(super) fn listen_message(&mut self, now: Instant, ex: &mut Exchange, data: &[u8]) -> Flow {
        let Ok(msg) = parse_message(data) else {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
            return Flow::Stop;
        };
        if let Message::Request { id, method, params } = msg {
            if let Role::Listen { handed } = &mut ex.role {
                if *handed < MAX_REFUSALS_PER_REQUEST {
                    *handed += 1;
                    self.server_request(now, id, &method, params);
                }
            }
        }
        Flow::Continue
    }

    /// A legacy server's request within its cap: handed to the input hook as
    /// [`Event::ServerRequest`] when it is on, names a hooked method and its params fit;
    /// refused otherwise.
    pub(super) fn server_request(
        &mut self,
        now: Instant,
        id: &RawValue,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let hooked = self.config.input_hook
            && HOOKED_SERVER_REQUESTS.contains(&method)
            && params.is_none_or(|p| p.get().len() <= MAX_SERVER_REQUEST_BYTES);
        if hooked {
            self.events.push_back(Event::ServerRequest {
                id: id.to_owned(),
                method: method.to_owned(),
                params: params.map(RawValue::to_owned),
            });
        } else {
            self.refuse_server_request(now, id, method);
        }
    }
}
