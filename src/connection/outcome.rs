//! Outcomes: what a logical request came to, and failure, timeout and close.

use super::*;

impl Connection {
    /// What the request the state waits on came to: classified here (the codec's work: what
    /// the answer says), then handed to the machine's transition function
    /// ([`Machine::step`]), which chooses what follows; the effects are carried out in order.
    pub(super) fn on_outcome(&mut self, now: Instant, outcome: Outcome<'_>) {
        // The request stays with its state (attached to no exchange) until the outcome moves it.
        let Some(p) = self.machine.req() else { return };
        self.answered = Some(Answered {
            id: p.id,
            error: match &outcome {
                Outcome::RpcError { error, .. } => Some(AnswerError::Rpc(error.code)),
                Outcome::Status(status) => Some(AnswerError::HttpStatus(*status)),
                Outcome::Result(_) | Outcome::Accepted => None,
            },
        });
        let answer = match &p.step {
            Step::Discover { .. } => self.classify_discover(outcome),
            Step::Initialize { .. } => self.classify_initialize(outcome),
            Step::Initialized { .. } => match outcome {
                Outcome::Accepted | Outcome::Result(_) => Answer::Accepted,
                Outcome::RpcError { status, error } => Answer::Unusable(error.to_error(status)),
                Outcome::Status(status) => Answer::Unusable(status_error(status)),
            },
            // Whatever the answer, the session ends for the client.
            Step::Delete => Answer::Accepted,
            Step::ListPage { .. } => match outcome {
                Outcome::Result(result) => self.classify_page(result),
                refused => self.classify_refusal(refused),
            },
            Step::Call => match outcome {
                Outcome::Result(result) => self.classify_call(result),
                refused => self.classify_refusal(refused),
            },
            Step::Task(method) => self.classify_task(*method, outcome),
        };
        self.apply(now, answer);
    }

    /// Hands `answer` to the transition function and carries out what it chose.
    pub(super) fn apply(&mut self, now: Instant, answer: Answer) {
        let policy = Policy {
            budgets: &self.config.budgets,
            input_hook: self.config.input_hook,
            legacy_offered: !self.config.legacy_versions.is_empty(),
            refuse_changed_tools: self.config.tool_pins == crate::pin::PinPolicy::Refuse,
        };
        let effects = self.machine.step(now, answer, policy);
        self.carry_out(now, effects);
    }

    /// Classifies an answer to a listing's page or a call's round that is not its result: what
    /// the refusal says for the recoveries, and the error the operation fails with if none is
    /// left.
    fn classify_refusal(&self, outcome: Outcome<'_>) -> Answer {
        let rpc_failure = match outcome {
            Outcome::Result(_) | Outcome::Accepted => Err(Error::HttpStatus { status: 202 }),
            Outcome::Status(status) => Err(status_error(status)),
            Outcome::RpcError { status, error } => {
                Ok((status, error.code, error.to_owned_error(status), error.data))
            }
        };
        // The era assumed may have been wrong (a cached hint, or a modern server that did not
        // implement `server/discover`). A 4xx without a recognised modern body is a legacy
        // server's answer (a legacy server asked without a session says `-32000`, "no valid
        // session id"), and so is a `-32022` refusing the version.
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
        // A header mismatch on a call made without the tool's schema: list once to learn its
        // x-mcp-header parameters, then call once more.
        let header_mismatch = matches!(&rpc_failure, Ok((_, HEADER_MISMATCH, _, _)));
        let not_found = matches!(
            rpc_failure,
            Ok((404, _, _, _)) | Err(Error::HttpStatus { status: 404 })
        );
        let session = self.session_id().is_some();
        let refusal = Refusal {
            wrong_era,
            version_refused: matches!(&rpc_failure, Ok((400..=499, UNSUPPORTED_VERSION, _, _))),
            session_ended: not_found && session,
            header_mismatch: header_mismatch && matches!(self.session, Session::Modern { .. }),
            mismatch_code: header_mismatch,
        };
        let rpc = match &rpc_failure {
            Ok((_, HEADER_MISMATCH, e, _)) => Some(e.clone()),
            Ok(_) | Err(_) => None,
        };
        let error = match rpc_failure {
            Ok((404, _, _, _)) | Err(Error::HttpStatus { status: 404 }) if session => {
                Error::SessionExpired
            }
            Ok((_, MISSING_CAPABILITY, e, data)) => crate::error::missing_capability(data, e),
            Ok((_, _, e, _)) => Error::Rpc(e),
            Err(e) => e,
        };
        Answer::Refused {
            refusal,
            error,
            rpc,
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
        if self.machine.fail(&error) {
            // A connection failure: the standalone stream ends with the connection.
            self.listen_end();
        }
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
    pub(super) fn session_deleted(&mut self) {
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
        Budget::TaskTime => budgets.task_time,
        Budget::TaskCancelTime => budgets.task_cancel_time,
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
