//! The protocol state of a [`Connection`]: one enum whose variants carry their data, and every
//! transition between them.
//!
//! The rest of the connection reads the state ([`Machine::get`] and the accessors below) and
//! changes the data a state carries (a listing's catalog, a call's rounds, the pending request's
//! counters), but only the methods of this module move it from one variant to another: the
//! field is private to this module. Each method names the transition it makes; together they make
//! the rows of the [transition table](Connection#transitions), which the tests check both ways:
//! `tests/transitions.rs` drives every row, and `tests/support/table.rs` checks that every state
//! change of every scripted session is a pair of states some row names.
//!
//! The request a state waits on is its [`Pending`]: the negotiation steps, a listing's page, a
//! call's round and the `DELETE` of a close each carry one. [`State::AwaitingInput`] and
//! [`State::Backoff`] wait on the embedder or on time and carry none; [`State::Resuming`] keeps
//! the state it interrupted, request included, and returns to it when the `GET` is sent.

use super::*;

use core::fmt;

/// The state of a [`Connection`], as the [transition table](Connection#transitions) names it:
/// what [`Connection::state`] reports. The table says which input leads from each to which.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConnectionState {
    /// Nothing negotiated (a new connection, or one whose negotiation failed).
    Unconnected,
    /// `server/discover` sent.
    Discovering,
    /// `initialize` sent.
    Initializing,
    /// `notifications/initialized` sent.
    Confirming,
    /// Negotiated and idle: an operation may start.
    Ready,
    /// Listing tools.
    Listing,
    /// Listing tools inside a call, after the server said its headers did not match.
    Relisting,
    /// A tool call's round is on the wire.
    Calling,
    /// A tool call waits for the embedder's answer to input requests
    /// ([`Connection::provide_input`]).
    AwaitingInput,
    /// A tool call waits before its next round (load shedding).
    Backoff,
    /// A legacy event stream broke: its `GET` waits for the retry time.
    Resuming,
    /// The `DELETE` that ends a legacy session is sent.
    Closing,
    /// A connection failure ended it: every operation fails with that error; only
    /// [`close`](Connection::close) remains useful.
    Dead,
    /// Closed: nothing more will be sent.
    Closed,
}

impl ConnectionState {
    /// The name the transition table gives the state.
    pub fn name(self) -> &'static str {
        match self {
            ConnectionState::Unconnected => "Unconnected",
            ConnectionState::Discovering => "Discovering",
            ConnectionState::Initializing => "Initializing",
            ConnectionState::Confirming => "Confirming",
            ConnectionState::Ready => "Ready",
            ConnectionState::Listing => "Listing",
            ConnectionState::Relisting => "Relisting",
            ConnectionState::Calling => "Calling",
            ConnectionState::AwaitingInput => "AwaitingInput",
            ConnectionState::Backoff => "Backoff",
            ConnectionState::Resuming => "Resuming",
            ConnectionState::Closing => "Closing",
            ConnectionState::Dead => "Dead",
            ConnectionState::Closed => "Closed",
        }
    }
}

impl fmt::Display for ConnectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a negotiation leads to once connected: the caller's `connect` reports it; a
/// re-negotiation (an era hint proved wrong) restarts the operation it interrupted.
#[derive(Debug)]
pub(super) enum Then {
    /// The caller's [`connect`](Connection::connect): report [`Event::Connected`] and be ready.
    Report,
    /// Restart the listing from its first page, within its deadline.
    List { deadline: Deadline },
    /// Restart the listing a call runs after a header mismatch, within the call's deadline.
    Relist {
        call: Box<CallState>,
        error: crate::error::RpcError,
        deadline: Deadline,
    },
    /// Send the call's round again, within its deadline.
    Call {
        call: Box<CallState>,
        deadline: Deadline,
    },
}

impl Then {
    /// The deadline of the operation a re-negotiation runs for (none for the caller's connect).
    fn deadline(&self) -> Option<Deadline> {
        match self {
            Then::Report => None,
            Then::List { deadline }
            | Then::Relist { deadline, .. }
            | Then::Call { deadline, .. } => Some(*deadline),
        }
    }

    fn operation(&self) -> Operation {
        match self {
            Then::Report => Operation::Connect,
            Then::List { .. } => Operation::ListTools,
            Then::Relist { .. } | Then::Call { .. } => Operation::CallTool,
        }
    }
}

/// The protocol state, with the data each state needs and no other.
#[derive(Debug)]
pub(super) enum State {
    /// Nothing negotiated.
    Unconnected,
    /// `server/discover` (its first offer or the one retry) is pending.
    Discovering { req: Pending, then: Then },
    /// `initialize` is pending.
    Initializing { req: Pending, then: Then },
    /// `notifications/initialized` is pending; the legacy session is recorded.
    Confirming { req: Pending, then: Then },
    /// Negotiated and idle.
    Ready,
    /// A page of the caller's listing is pending.
    Listing {
        req: Pending,
        list: ListState,
        deadline: Deadline,
    },
    /// A page of the listing a call runs after a header mismatch is pending; the call and the
    /// error it got wait for the listing's end, on the call's deadline.
    Relisting {
        req: Pending,
        list: ListState,
        call: Box<CallState>,
        error: crate::error::RpcError,
        deadline: Deadline,
    },
    /// A round of a tool call is pending.
    Calling {
        req: Pending,
        call: CallState,
        deadline: Deadline,
    },
    /// A tool call waits for the embedder's input responses.
    AwaitingInput { call: CallState, deadline: Deadline },
    /// A tool call waits for `at` to send its next round (load shedding).
    Backoff {
        call: CallState,
        deadline: Deadline,
        at: Instant,
    },
    /// A legacy stream of `interrupted`'s request broke after event `from`: at `at` it is
    /// resumed with a `GET` carrying `Last-Event-ID: from`. `retry` is the stream's last `retry:`
    /// field, for the next break.
    Resuming {
        from: String,
        retry: Option<Duration>,
        at: Instant,
        interrupted: Box<State>,
    },
    /// The `DELETE` of the legacy session is pending.
    Closing { req: Pending },
    /// A connection failure ended it.
    Dead(Error),
    /// Closed.
    Closed,
}

impl State {
    fn name(&self) -> ConnectionState {
        match self {
            State::Unconnected => ConnectionState::Unconnected,
            State::Discovering { .. } => ConnectionState::Discovering,
            State::Initializing { .. } => ConnectionState::Initializing,
            State::Confirming { .. } => ConnectionState::Confirming,
            State::Ready => ConnectionState::Ready,
            State::Listing { .. } => ConnectionState::Listing,
            State::Relisting { .. } => ConnectionState::Relisting,
            State::Calling { .. } => ConnectionState::Calling,
            State::AwaitingInput { .. } => ConnectionState::AwaitingInput,
            State::Backoff { .. } => ConnectionState::Backoff,
            State::Resuming { .. } => ConnectionState::Resuming,
            State::Closing { .. } => ConnectionState::Closing,
            State::Dead(_) => ConnectionState::Dead,
            State::Closed => ConnectionState::Closed,
        }
    }

    fn operation(&self) -> Option<Operation> {
        match self {
            State::Unconnected | State::Ready | State::Dead(_) | State::Closed => None,
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => Some(then.operation()),
            State::Listing { .. } => Some(Operation::ListTools),
            State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. } => Some(Operation::CallTool),
            State::Resuming { interrupted, .. } => interrupted.operation(),
            State::Closing { .. } => Some(Operation::Close),
        }
    }

    fn req(&self) -> Option<&Pending> {
        match self {
            State::Discovering { req, .. }
            | State::Initializing { req, .. }
            | State::Confirming { req, .. }
            | State::Listing { req, .. }
            | State::Relisting { req, .. }
            | State::Calling { req, .. }
            | State::Closing { req } => Some(req),
            State::Resuming { interrupted, .. } => interrupted.req(),
            _ => None,
        }
    }

    fn req_mut(&mut self) -> Option<&mut Pending> {
        match self {
            State::Discovering { req, .. }
            | State::Initializing { req, .. }
            | State::Confirming { req, .. }
            | State::Listing { req, .. }
            | State::Relisting { req, .. }
            | State::Calling { req, .. }
            | State::Closing { req } => Some(req),
            State::Resuming { interrupted, .. } => interrupted.req_mut(),
            _ => None,
        }
    }

    fn deadline(&self) -> Option<Deadline> {
        match self {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => then.deadline(),
            State::Listing { deadline, .. }
            | State::Relisting { deadline, .. }
            | State::Calling { deadline, .. }
            | State::AwaitingInput { deadline, .. }
            | State::Backoff { deadline, .. } => Some(*deadline),
            State::Resuming { interrupted, .. } => interrupted.deadline(),
            _ => None,
        }
    }

    fn is_negotiating(&self) -> bool {
        match self {
            State::Discovering { .. } | State::Initializing { .. } | State::Confirming { .. } => {
                true
            }
            State::Resuming { interrupted, .. } => interrupted.is_negotiating(),
            _ => false,
        }
    }

    /// What a negotiation started now leads to: the negotiation's own if one runs, the operation
    /// it interrupts otherwise.
    fn into_then(self) -> Then {
        match self {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => then,
            State::Listing { deadline, .. } => Then::List { deadline },
            State::Relisting {
                call,
                error,
                deadline,
                ..
            } => Then::Relist {
                call,
                error,
                deadline,
            },
            State::Calling { call, deadline, .. }
            | State::AwaitingInput { call, deadline }
            | State::Backoff { call, deadline, .. } => Then::Call {
                call: Box::new(call),
                deadline,
            },
            State::Resuming { interrupted, .. } => interrupted.into_then(),
            State::Unconnected
            | State::Ready
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => Then::Report,
        }
    }
}

/// The one place the protocol state changes: [`State`] behind methods that each make one kind
/// of transition.
#[derive(Debug)]
pub(super) struct Machine {
    state: State,
}

impl Machine {
    /// A new connection's state.
    pub(super) fn new() -> Machine {
        Machine {
            state: State::Unconnected,
        }
    }

    /// The state.
    pub(super) fn get(&self) -> &State {
        &self.state
    }

    /// The state's name in the transition table.
    pub(super) fn name(&self) -> ConnectionState {
        self.state.name()
    }

    /// The operation running, if any.
    pub(super) fn operation(&self) -> Option<Operation> {
        self.state.operation()
    }

    /// Whether a negotiation (the caller's or a re-negotiation) runs.
    pub(super) fn is_negotiating(&self) -> bool {
        self.state.is_negotiating()
    }

    /// The request the state waits on (through a resumption's wait).
    pub(super) fn req(&self) -> Option<&Pending> {
        self.state.req()
    }

    /// The request the state waits on, to count its responses, attempts and refusals.
    pub(super) fn req_mut(&mut self) -> Option<&mut Pending> {
        self.state.req_mut()
    }

    /// The running operation's aggregate deadline (a listing's, or a call's, also while a
    /// re-negotiation or a new session runs for it).
    pub(super) fn deadline(&self) -> Option<Deadline> {
        self.state.deadline()
    }

    /// When a load-shedding backoff or a resumption's wait ends.
    pub(super) fn wait_until(&self) -> Option<Instant> {
        match &self.state {
            State::Backoff { at, .. } | State::Resuming { at, .. } => Some(*at),
            _ => None,
        }
    }

    /// The running call, while it is on the wire or between rounds (not while the tools are
    /// re-listed for it).
    pub(super) fn call(&self) -> Option<&CallState> {
        match &self.state {
            State::Calling { call, .. }
            | State::AwaitingInput { call, .. }
            | State::Backoff { call, .. } => Some(call),
            State::Resuming { interrupted, .. } => match &**interrupted {
                State::Calling { call, .. } => Some(call),
                _ => None,
            },
            _ => None,
        }
    }

    /// The running call, to record the server's answer in it.
    pub(super) fn call_mut(&mut self) -> Option<&mut CallState> {
        match &mut self.state {
            State::Calling { call, .. }
            | State::AwaitingInput { call, .. }
            | State::Backoff { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The listing in progress (the caller's or a call's), to add a page to it.
    pub(super) fn list_mut(&mut self) -> Option<&mut ListState> {
        match &mut self.state {
            State::Listing { list, .. } | State::Relisting { list, .. } => Some(list),
            _ => None,
        }
    }

    /// The call a re-listing runs for, with the catalog listed so far and the error the call got.
    pub(super) fn relisting(
        &mut self,
    ) -> Option<(&Catalog, &mut CallState, &crate::error::RpcError)> {
        match &mut self.state {
            State::Relisting {
                list, call, error, ..
            } => Some((&list.catalog, call, error)),
            _ => None,
        }
    }

    // --- Transitions ---------------------------------------------------------------------------

    fn replace(&mut self, next: State) -> State {
        core::mem::replace(&mut self.state, next)
    }

    /// Unconnected → Ready: a modern era hint connects without a request.
    pub(super) fn connect_from_hint(&mut self) {
        if matches!(self.state, State::Unconnected) {
            self.state = State::Ready;
        }
    }

    /// → Discovering: `req` (a `server/discover`) is sent, by the caller's `connect`, as the one
    /// retry, or to re-negotiate the operation running.
    pub(super) fn discover(&mut self, req: Pending) {
        let then = self.replace(State::Closed).into_then();
        self.state = State::Discovering { req, then };
    }

    /// → Initializing: `req` (an `initialize`) is sent, with a legacy hint, after the probe, or
    /// to re-negotiate the operation running.
    pub(super) fn initialize(&mut self, req: Pending) {
        let then = self.replace(State::Closed).into_then();
        self.state = State::Initializing { req, then };
    }

    /// Initializing → Confirming: `req` (`notifications/initialized`) is sent.
    pub(super) fn confirm(&mut self, req: Pending) {
        let then = self.replace(State::Closed).into_then();
        self.state = State::Confirming { req, then };
    }

    /// A negotiation → Ready. Returns what it leads to ([`Then::Report`] if none ran).
    pub(super) fn connected(&mut self) -> Then {
        if !self.state.is_negotiating() {
            return Then::Report;
        }
        self.replace(State::Ready).into_then()
    }

    /// Ready → Listing: the caller's listing sends its first page `req`.
    pub(super) fn start_list(&mut self, req: Pending, deadline: Deadline) {
        self.state = State::Listing {
            req,
            list: ListState::new(),
            deadline,
        };
    }

    /// Ready → Calling: the caller's call sends its first round `req`.
    pub(super) fn start_call(&mut self, req: Pending, call: CallState, deadline: Deadline) {
        self.state = State::Calling {
            req,
            call,
            deadline,
        };
    }

    /// Ready → the operation a re-negotiation interrupted, restarted with `req` (its first page,
    /// or its round again).
    pub(super) fn restart(&mut self, then: Then, req: Pending) {
        self.state = match then {
            Then::Report => State::Ready,
            Then::List { deadline } => State::Listing {
                req,
                list: ListState::new(),
                deadline,
            },
            Then::Relist {
                call,
                error,
                deadline,
            } => State::Relisting {
                req,
                list: ListState::new(),
                call,
                error,
                deadline,
            },
            Then::Call { call, deadline } => State::Calling {
                req,
                call: *call,
                deadline,
            },
        };
    }

    /// The same state with its next request `req`: a listing's next page.
    pub(super) fn again(&mut self, next: Pending) {
        if let Some(req) = self.state.req_mut() {
            *req = next;
        }
    }

    /// Calling → Relisting: the call got a header mismatch (`error`); the listing's first page
    /// `req` is sent, on the call's deadline.
    pub(super) fn relist(&mut self, req: Pending, error: crate::error::RpcError) {
        match self.replace(State::Closed) {
            State::Calling {
                mut call, deadline, ..
            } => {
                call.relisted = true;
                self.state = State::Relisting {
                    req,
                    list: ListState::new(),
                    call: Box::new(call),
                    error,
                    deadline,
                };
            }
            other => self.state = other,
        }
    }

    /// Relisting → Calling: the listing is complete; the call's round `req` is sent again.
    pub(super) fn call_after_relist(&mut self, req: Pending) {
        match self.replace(State::Closed) {
            State::Relisting { call, deadline, .. } => {
                self.state = State::Calling {
                    req,
                    call: *call,
                    deadline,
                };
            }
            other => self.state = other,
        }
    }

    /// Calling, AwaitingInput or Backoff → Calling: the call's next round `req` is sent.
    pub(super) fn next_round(&mut self, req: Pending) {
        match self.replace(State::Closed) {
            State::Calling { call, deadline, .. }
            | State::AwaitingInput { call, deadline }
            | State::Backoff { call, deadline, .. } => {
                self.state = State::Calling {
                    req,
                    call,
                    deadline,
                };
            }
            other => self.state = other,
        }
    }

    /// Calling → AwaitingInput: the server asked for input only the embedder can give.
    pub(super) fn await_input(&mut self) {
        match self.replace(State::Closed) {
            State::Calling { call, deadline, .. } => {
                self.state = State::AwaitingInput { call, deadline };
            }
            other => self.state = other,
        }
    }

    /// Calling → Backoff: load shedding; the next round waits for `at`.
    pub(super) fn back_off(&mut self, at: Instant) {
        match self.replace(State::Closed) {
            State::Calling { call, deadline, .. } => {
                self.state = State::Backoff { call, deadline, at };
            }
            other => self.state = other,
        }
    }

    /// Listing or Calling → Ready: the operation succeeded. Returns the listing if it was one.
    pub(super) fn finish(&mut self) -> Option<ListState> {
        match self.replace(State::Ready) {
            State::Listing { list, .. } => Some(list),
            State::Calling { .. } => None,
            other => {
                self.state = other;
                None
            }
        }
    }

    /// A listing's, a call's or a negotiation's request → Resuming: its legacy stream broke
    /// after event `from`; the `GET` waits for `at`.
    pub(super) fn suspend(&mut self, from: String, retry: Option<Duration>, at: Instant) {
        let interrupted = self.replace(State::Closed);
        self.state = State::Resuming {
            from,
            retry,
            at,
            interrupted: Box::new(interrupted),
        };
    }

    /// Resuming → the state it interrupted: the `GET` is sent. Returns the last event id and
    /// the stream's `retry:`.
    pub(super) fn resume(&mut self) -> Option<(String, Option<Duration>)> {
        match self.replace(State::Closed) {
            State::Resuming {
                from,
                retry,
                interrupted,
                ..
            } => {
                self.state = *interrupted;
                Some((from, retry))
            }
            other => {
                self.state = other;
                None
            }
        }
    }

    /// A running operation → Dead (`dead`, a connection failure), Unconnected (a failed
    /// negotiation) or Ready: it failed.
    pub(super) fn fail(&mut self, dead: Option<Error>) {
        let negotiating = self.state.is_negotiating();
        self.state = match dead {
            Some(error) => State::Dead(error),
            None if negotiating => State::Unconnected,
            None => State::Ready,
        };
    }

    /// Ready, Dead or an interrupted operation → Closing: the `DELETE` `req` is sent.
    pub(super) fn closing(&mut self, req: Pending) {
        self.state = State::Closing { req };
    }

    /// Any state → Closed.
    pub(super) fn closed(&mut self) {
        self.state = State::Closed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(step: Step) -> Pending {
        let budgets = crate::budget::Budgets::default();
        Pending {
            step,
            id: 1,
            progress_token: 1,
            exchange: None,
            responses: 0,
            stalled: 0,
            deadline: Deadline::new(Instant::ZERO, &budgets, Budget::ListTime),
            retried_fresh: false,
            nonce_retried: false,
            refusals: 0,
        }
    }

    fn deadline() -> Deadline {
        Deadline::new(
            Instant::ZERO,
            &crate::budget::Budgets::default(),
            Budget::ListTime,
        )
    }

    #[test]
    fn a_resumption_returns_to_the_state_it_interrupted() {
        let mut m = Machine::new();
        m.connect_from_hint();
        assert_eq!(m.name(), ConnectionState::Ready);
        m.start_list(req(Step::ListPage { cursor: None }), deadline());
        m.suspend("ev-1".into(), None, Instant::ZERO);
        assert_eq!(m.name(), ConnectionState::Resuming);
        assert_eq!(m.operation(), Some(Operation::ListTools));
        assert!(m.req().is_some(), "the interrupted request is kept");
        assert_eq!(m.resume(), Some(("ev-1".into(), None)));
        assert_eq!(m.name(), ConnectionState::Listing);
        assert_eq!(m.resume(), None, "only a resumption resumes");
        assert_eq!(m.name(), ConnectionState::Listing);
    }

    #[test]
    fn a_re_negotiation_carries_the_operation_it_interrupted() {
        let mut m = Machine::new();
        m.connect_from_hint();
        m.start_list(req(Step::ListPage { cursor: None }), deadline());
        m.discover(req(Step::Discover {
            attempt: 0,
            version: "v".into(),
        }));
        assert_eq!(m.name(), ConnectionState::Discovering);
        assert_eq!(m.operation(), Some(Operation::ListTools));
        m.initialize(req(Step::initialize()));
        assert_eq!(m.operation(), Some(Operation::ListTools));
        assert!(matches!(m.connected(), Then::List { .. }));
        assert_eq!(m.name(), ConnectionState::Ready);
        // A failed negotiation leaves nothing negotiated; a failed operation leaves it ready.
        m.discover(req(Step::Discover {
            attempt: 0,
            version: "v".into(),
        }));
        m.fail(None);
        assert_eq!(m.name(), ConnectionState::Unconnected);
        m.connect_from_hint();
        m.start_list(req(Step::ListPage { cursor: None }), deadline());
        m.fail(None);
        assert_eq!(m.name(), ConnectionState::Ready);
        m.start_list(req(Step::ListPage { cursor: None }), deadline());
        m.fail(Some(Error::Closed));
        assert_eq!(m.name(), ConnectionState::Dead);
        assert_eq!(m.operation(), None);
    }
}
