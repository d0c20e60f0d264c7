//! Outcomes: what a logical request came to, and failure, timeout and close.

use super::*;

impl Connection {
    pub(super) fn on_outcome(&mut self, now: Instant, outcome: Outcome<'_>) {
        // The request stays with its state (attached to no exchange) until the outcome moves it.
        let Some(p) = self.machine.req() else { return };
        match &p.step {
            Step::Discover { attempt, version } => {
                let (attempt, version) = (*attempt, version.clone());
                self.on_discover(now, attempt, version, outcome)
            }
            Step::Initialize { session_id } => {
                let session_id = session_id.clone();
                self.on_initialize(now, session_id, outcome)
            }
            Step::Initialized { server } => match outcome {
                Outcome::Accepted | Outcome::Result(_) => {
                    let server = server.clone();
                    self.connected(now, server)
                }
                Outcome::RpcError { status, error } => self.fail_op(error.to_error(status)),
                Outcome::Status(status) => self.fail_op(status_error(status)),
            },
            Step::Delete => self.session_deleted(),
            Step::ListPage { .. } | Step::Call => {
                let is_call = matches!(p.step, Step::Call);
                let rpc_failure = match outcome {
                    Outcome::Result(result) => {
                        // An answer in the era the connection assumed: the hint, if any, was right.
                        self.machine.set_hint(Hint::Settled);
                        return if is_call {
                            self.on_call_result(now, result)
                        } else {
                            self.on_page(now, result)
                        };
                    }
                    Outcome::Accepted => Err(Error::HttpStatus { status: 202 }),
                    Outcome::Status(status) => Err(status_error(status)),
                    Outcome::RpcError { status, error } => {
                        Ok((status, error.code, error.to_owned_error(status), error.data))
                    }
                };
                // The era assumed may have been wrong (a cached hint, or a modern server that
                // did not implement `server/discover`): re-negotiate once. A 4xx without a
                // recognised modern body is a legacy server's answer (a legacy server asked
                // without a session says `-32000`, "no valid session id"), and so is a
                // `-32022` refusing the version.
                let wrong_era = match &rpc_failure {
                    Err(Error::HttpStatus { status }) => (400..500).contains(status),
                    Ok((status, code, _, _)) => {
                        (400..500).contains(status)
                            && *code != MISSING_CAPABILITY
                            && *code != HEADER_MISMATCH
                            && !(*status == 404 && *code == METHOD_NOT_FOUND)
                    }
                    Err(_) => false,
                };
                // A header mismatch on a call made without the tool's schema: list once to
                // learn its x-mcp-header parameters, then call once more.
                let header_mismatch = matches!(&rpc_failure, Ok((_, HEADER_MISMATCH, _, _)));
                let not_found = matches!(
                    rpc_failure,
                    Ok((404, _, _, _)) | Err(Error::HttpStatus { status: 404 })
                );
                let refusal = Refusal {
                    wrong_era,
                    version_refused: matches!(
                        &rpc_failure,
                        Ok((400..=499, UNSUPPORTED_VERSION, _, _))
                    ),
                    session_ended: not_found && self.session_id().is_some(),
                    header_mismatch: header_mismatch
                        && matches!(self.session, Session::Modern { .. }),
                    mismatch_code: header_mismatch,
                };
                let recover = self.machine.recover(refusal);
                if refusal.catalog_stale(recover) {
                    self.header_mismatches += 1;
                    if self.machine.operation() == Some(Operation::CallTool) {
                        self.catalog_stale = true;
                    }
                }
                match recover {
                    Recover::Renegotiate => return self.renegotiate(now),
                    Recover::NewSession => return self.new_session(now),
                    Recover::Relist => {
                        if let Ok((_, _, rpc, _)) = &rpc_failure {
                            return self.relist_for_call(now, rpc.clone());
                        }
                    }
                    Recover::Fail => {}
                }
                let error = match rpc_failure {
                    Ok((404, _, _, _)) | Err(Error::HttpStatus { status: 404 })
                        if self.session_id().is_some() =>
                    {
                        Error::SessionExpired
                    }
                    Ok((_, MISSING_CAPABILITY, e, data)) => {
                        crate::error::missing_capability(data, e)
                    }
                    Ok((_, _, e, _)) => Error::Rpc(e),
                    Err(e) => e,
                };
                self.fail_op(error);
            }
        }
    }

    /// Ends the running operation with `error`: its exchange is abandoned, a failed negotiation
    /// leaves no session, and a connection failure makes the connection [`State::Dead`].
    pub(super) fn fail_op(&mut self, error: Error) {
        self.abandon_main();
        if matches!(self.machine.get(), State::Closing { .. }) {
            return self.finish_close();
        }
        let Some(operation) = self.machine.operation() else {
            return;
        };
        if self.machine.is_negotiating() {
            // A negotiation that failed (for itself or for the operation it runs for) leaves no
            // session behind, not even the id recorded from `initialize`'s head.
            self.session = Session::None;
        }
        let dead = matches!(
            error.kind(),
            crate::error::ErrorKind::ConnectionFailed
                | crate::error::ErrorKind::AuthenticationFailed
        ) && !matches!(
            error,
            Error::Misuse { .. } | Error::Config(_) | Error::Abandoned
        );
        if dead {
            self.listen_end();
        }
        self.machine.fail(dead.then(|| error.clone()));
        self.events.push_back(Event::Failed { operation, error });
    }

    pub(super) fn timed_out(&mut self, now: Instant, error: BudgetExceeded) {
        let cancel = self.cancellable();
        self.fail_op(Error::Budget(error));
        if let Some(id) = cancel {
            self.send_cancelled(now, id, "timeout");
        }
    }

    /// The JSON-RPC id a legacy `notifications/cancelled` names for the running operation's
    /// request, if there is one to cancel: a listing's page or a call's round in a legacy
    /// session (never `initialize`, which the client must not cancel, nor the `DELETE`).
    pub(super) fn cancellable(&self) -> Option<u64> {
        match (self.machine.req(), &self.session) {
            (Some(p), Session::Legacy { .. })
                if matches!(p.step, Step::ListPage { .. } | Step::Call) =>
            {
                Some(p.id)
            }
            _ => None,
        }
    }

    /// Queues the legacy `notifications/cancelled` of request `id` as a background exchange:
    /// one request, its answer discarded, dropped at the end of its grace (the close budget).
    /// A close whose `DELETE` is answered while it is still open waits for its end (see
    /// [`Connection::close`]).
    pub(super) fn send_cancelled(&mut self, now: Instant, id: u64, reason: &str) {
        let mut params = Vec::new();
        let mut w = ObjectWriter::new(&mut params);
        w.uint("requestId", id).string("reason", reason);
        w.finish();
        let body = notification_body("notifications/cancelled", Some(&params));
        self.forget_ended_cancellations();
        if let Some(x) = self.send_background(now, Method::Post, body) {
            self.cancellations.push(x);
        }
    }

    /// Forgets the cancellations whose exchanges have ended.
    fn forget_ended_cancellations(&mut self) {
        let exchanges = &self.exchanges;
        self.cancellations
            .retain(|x| exchanges.iter().any(|e| e.id == *x));
    }

    /// The `DELETE` that ends the legacy session was answered: Closed, unless a background
    /// cancellation is still queued or in flight; then the close waits for its end (its answer,
    /// its failure, or its grace), within the close deadline, so that reaching Closed never
    /// drops a cancellation the server has not been sent.
    fn session_deleted(&mut self) {
        self.forget_ended_cancellations();
        if self.cancellations.is_empty() {
            return self.finish_close();
        }
        self.machine.deleted();
    }

    /// A side exchange ended (or expired): a close waiting for the last cancellation after its
    /// `DELETE` was answered ends now. Returns whether it did.
    pub(super) fn close_when_cancelled(&mut self) -> bool {
        if !self.machine.is_deleted() {
            return false;
        }
        self.forget_ended_cancellations();
        if !self.cancellations.is_empty() {
            return false;
        }
        self.finish_close();
        true
    }

    pub(super) fn abandon_main(&mut self) {
        if let Some(x) = self.machine.req_mut().and_then(|p| p.exchange.take()) {
            if let Some(idx) = self.exchanges.iter().position(|e| e.id == x) {
                self.exchanges.swap_remove(idx);
                self.events
                    .push_back(Event::ExchangeAbandoned { exchange: x });
            }
        }
    }

    pub(super) fn finish_close(&mut self) {
        self.abandon_main();
        for ex in core::mem::take(&mut self.exchanges) {
            self.events
                .push_back(Event::ExchangeAbandoned { exchange: ex.id });
        }
        self.machine.closed();
        self.events.push_back(Event::Closed);
    }
}

/// What a logical request came to.
pub(super) enum Outcome<'a> {
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

/// A response for another request than the one sent.
pub(super) fn wrong_id(expected: u64, got: &RawValue) -> Error {
    Error::Protocol(ProtocolError::WrongId {
        expected,
        got: truncated(got.get(), 64),
    })
}

/// The configured limit of an aggregate time budget.
pub(super) fn aggregate_limit(budgets: &crate::budget::Budgets, budget: Budget) -> Duration {
    match budget {
        Budget::CallTime => budgets.call_time,
        Budget::ListTime => budgets.list_time,
        Budget::CloseTime => budgets.close_time,
        _ => budgets.request_time,
    }
}

pub(super) fn status_error(status: u16) -> Error {
    Error::HttpStatus { status }
}

pub(super) fn invalid_answer(method: &str, reason: String) -> Error {
    Error::InvalidAnswer {
        method: method.to_owned(),
        reason: truncated(&reason, 512),
    }
}
