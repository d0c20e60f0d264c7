//! The protocol state of a [`Connection`]: one enum whose variants carry their data, and every
//! transition between them.
//!
//! The rest of the connection reads the state ([`Machine::get`] and the accessors below) and
//! changes the data a state carries (a listing's catalog, a call's rounds, the pending request's
//! counters, the recoveries an operation made), but only the methods of this module move it from
//! one variant to another: the field is private to this module. Each method names the
//! transition it makes, matches the state it starts from, and moves through one check against
//! [`TRANSITIONS`], the [transition table](Connection#transitions) as data: a transition the
//! table lacks, or a method called in a state it does not start from, is a bug (a debug
//! assertion; in a release build the connection ends with [`Error::InvalidTransition`], never
//! keeping a wrong state). `tests/transitions.rs` checks the documented table against
//! [`TRANSITIONS`] both ways and drives every row.
//!
//! What follows the server's answer to the request a state waits on is chosen in one place,
//! the transition function [`Machine::step`] (`state/step.rs`): one exhaustive match from the
//! state and the classified answer ([`Answer`]) to the effects ([`Effect`]) the connection
//! carries out.
//!
//! What an operation may still try lives in its states too: its [`Recovery`] (the one
//! re-negotiation, the one new session, the one re-listing, and whether the era it runs in may
//! still prove wrong) is made new when the operation starts and carried through every state it
//! passes, so no allowance outlives its operation. The request a state waits on is its
//! [`Pending`] (with the request's own one-time allowances: the resend on a fresh socket, the
//! retry with a new `DPoP-Nonce`): the negotiation steps, a listing's page, a call's round and the
//! `DELETE` of a close each carry one. [`State::AwaitingInput`] and [`State::Backoff`] wait on
//! the embedder or on time and carry none; [`State::Resuming`] keeps the state it interrupted,
//! request included, and returns to it when the `GET` is sent.

use super::*;

mod queries;
mod recovery;
mod step;
mod table;

pub(super) use self::recovery::{Recover, Recovery, Refusal, Resends};
pub(super) use self::step::{Answer, Effect, Policy};
use self::table::is_transition;
#[cfg_attr(not(feature = "unstable-internals"), allow(unused_imports))]
pub use self::table::{ConnectionState, TRANSITIONS};

/// What a negotiation leads to once connected: the caller's `connect` reports it; a
/// re-negotiation (an era hint proved wrong) restarts the operation it interrupted.
#[derive(Debug)]
pub(super) enum Then {
    /// The caller's [`connect`](Connection::connect): report [`Event::Connected`] and be ready.
    Report,
    /// Restart the listing from its first page, within its deadline.
    List { deadline: Deadline, rec: Recovery },
    /// Restart the listing a call runs after a header mismatch, within the call's deadline.
    Relist {
        call: Box<CallState>,
        error: crate::error::RpcError,
        deadline: Deadline,
        rec: Recovery,
    },
    /// Send the call's round again, within its deadline.
    Call {
        call: Box<CallState>,
        deadline: Deadline,
        rec: Recovery,
    },
}

impl Then {
    /// The deadline of the operation a re-negotiation runs for (none for the caller's connect).
    fn deadline(&self) -> Option<Deadline> {
        match self {
            Then::Report => None,
            Then::List { deadline, .. }
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
    /// `initialize` is pending; `hinted` if a legacy era hint skipped the probe (a modern answer
    /// then re-negotiates, once).
    Initializing {
        req: Pending,
        then: Then,
        hinted: bool,
    },
    /// `notifications/initialized` is pending; the legacy session is recorded.
    Confirming { req: Pending, then: Then },
    /// Negotiated and idle; `hint` says whether the era may still prove wrong.
    Ready { hint: Hint },
    /// A page of the caller's listing is pending.
    Listing {
        req: Pending,
        list: ListState,
        deadline: Deadline,
        rec: Recovery,
    },
    /// A page of the listing a call runs after a header mismatch is pending; the call and the
    /// error it got wait for the listing's end, on the call's deadline.
    Relisting {
        req: Pending,
        list: ListState,
        call: Box<CallState>,
        error: crate::error::RpcError,
        deadline: Deadline,
        rec: Recovery,
    },
    /// A round of a tool call is pending.
    Calling {
        req: Pending,
        call: CallState,
        deadline: Deadline,
        rec: Recovery,
    },
    /// A tool call waits for the embedder's input responses.
    AwaitingInput {
        call: CallState,
        deadline: Deadline,
        rec: Recovery,
    },
    /// A tool call waits for `at` to send its next round (load shedding).
    Backoff {
        call: CallState,
        deadline: Deadline,
        at: Instant,
        rec: Recovery,
    },
    /// A task the call follows waits for `at` to send its next `tasks/get`.
    TaskWaiting { task: Box<TaskRun>, at: Instant },
    /// A request about the task (`tasks/get`, or `tasks/update` with the embedder's answers)
    /// is pending.
    TaskPolling { req: Pending, task: Box<TaskRun> },
    /// The task's input requests wait for the embedder's answers.
    TaskAwaitingInput { task: Box<TaskRun> },
    /// `tasks/cancel` is pending.
    TaskCancelling { req: Pending, task: Box<TaskRun> },
    /// A legacy stream of `interrupted`'s request broke after event `from`: at `at` it is
    /// resumed with a `GET` carrying `Last-Event-ID: from`. `retry` is the stream's last `retry:`
    /// field, for the next break.
    Resuming {
        from: String,
        retry: Option<Duration>,
        at: Instant,
        interrupted: Box<State>,
    },
    /// The `DELETE` of the legacy session is pending, or (`answered`) was answered while a
    /// background `notifications/cancelled` was still queued or in flight: Closed waits for
    /// that exchange's end (its answer, its failure or its grace), within the close deadline.
    Closing { req: Pending, answered: bool },
    /// A connection failure ended it.
    Dead(Error),
    /// Closed.
    Closed,
}

/// The one place the protocol state changes: [`State`] behind methods that each make one kind
/// of transition.
#[derive(Debug)]
pub(super) struct Machine {
    state: State,
    /// The operation an invalid transition failed and its error, until reported.
    fault: Option<(Operation, Error)>,
}

impl Machine {
    /// A new connection's state.
    pub(super) fn new() -> Machine {
        Machine {
            state: State::Unconnected,
            fault: None,
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
            State::Backoff { at, .. }
            | State::Resuming { at, .. }
            | State::TaskWaiting { at, .. } => Some(*at),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// The running call, while it is on the wire or between rounds (not while the tools are
    /// re-listed for it).
    pub(super) fn call(&self) -> Option<&CallState> {
        self.state.call()
    }

    /// The running call, to record the server's answer in it.
    pub(super) fn call_mut(&mut self) -> Option<&mut CallState> {
        match &mut self.state {
            State::Calling { call, .. }
            | State::AwaitingInput { call, .. }
            | State::Backoff { call, .. } => Some(call),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// The listing in progress (the caller's or a call's), to add a page to it.
    pub(super) fn list_mut(&mut self) -> Option<&mut ListState> {
        match &mut self.state {
            State::Listing { list, .. } | State::Relisting { list, .. } => Some(list),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// The call a re-listing runs for, with the catalog listed so far and the error the call got.
    pub(super) fn relisting(&self) -> Option<(&Catalog, &CallState, &crate::error::RpcError)> {
        match &self.state {
            State::Relisting {
                list, call, error, ..
            } => Some((&list.catalog, call, error)),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// Sets what the state says of the era: idle, or in the running operation.
    pub(super) fn set_hint(&mut self, hint: Hint) {
        match &mut self.state {
            State::Ready { hint: h } => *h = hint,
            state => {
                if let Some(rec) = state.rec_mut() {
                    rec.hint = hint;
                }
            }
        }
    }

    // --- Transitions ---------------------------------------------------------------------------

    /// Takes the state out to build the next one from its data (the placeholder never stays:
    /// every caller sets a state through [`Machine::set`] or [`Machine::invalid`]).
    fn take(&mut self) -> State {
        core::mem::replace(&mut self.state, State::Closed)
    }

    /// Moves from a state named `from` (already taken out) to `next`, a transition of the
    /// table; any other is [`Machine::invalid`].
    fn set(&mut self, from: ConnectionState, next: State) {
        let to = next.name();
        if is_transition(from, to) {
            self.state = next;
        } else {
            self.broken(from, None, to);
        }
    }

    /// `from` cannot make the transition to `to`: a bug of the connection. A debug build stops
    /// here; a release build ends the connection ([`State::Dead`] with
    /// [`Error::InvalidTransition`]) and reports the running operation failed with it, rather
    /// than keep a wrong state.
    fn invalid(&mut self, from: State, to: ConnectionState) {
        let operation = from.operation();
        self.broken(from.name(), operation, to);
    }

    fn broken(&mut self, from: ConnectionState, operation: Option<Operation>, to: ConnectionState) {
        debug_assert!(false, "invalid transition {from} → {to}");
        self.end_invalid(from, operation, to);
    }

    /// What a release build does on an invalid transition: the connection ends with the error
    /// and the operation that was running fails with it.
    fn end_invalid(
        &mut self,
        from: ConnectionState,
        operation: Option<Operation>,
        to: ConnectionState,
    ) {
        let error = Error::InvalidTransition { from, to };
        self.fault = operation.map(|operation| (operation, error.clone()));
        self.state = State::Dead(error);
    }

    /// The operation an invalid transition failed, with its error, to report once.
    pub(super) fn take_fault(&mut self) -> Option<(Operation, Error)> {
        self.fault.take()
    }

    /// Unconnected → Ready: a modern era hint connects without a request.
    pub(super) fn connect_from_hint(&mut self) {
        match self.take() {
            State::Unconnected => self.set(
                ConnectionState::Unconnected,
                State::Ready {
                    hint: Hint::Unproven,
                },
            ),
            other => self.invalid(other, ConnectionState::Ready),
        }
    }

    /// → Discovering: `req` (a `server/discover`) is sent, by the caller's `connect`, as the one
    /// retry, or to re-negotiate the operation running.
    pub(super) fn discover(&mut self, req: Pending) {
        let from = self.take();
        let name = from.name();
        let then = from.into_then();
        self.set(name, State::Discovering { req, then });
    }

    /// → Initializing: `req` (an `initialize`) is sent, with a legacy hint (`hinted`), after the
    /// probe, or to re-negotiate the operation running.
    pub(super) fn initialize(&mut self, req: Pending, hinted: bool) {
        let from = self.take();
        let name = from.name();
        let then = from.into_then();
        self.set(name, State::Initializing { req, then, hinted });
    }

    /// Initializing → Confirming: `req` (`notifications/initialized`) is sent.
    pub(super) fn confirm(&mut self, req: Pending) {
        match self.take() {
            State::Initializing { then, .. } => {
                self.set(
                    ConnectionState::Initializing,
                    State::Confirming { req, then },
                );
            }
            other => self.invalid(other, ConnectionState::Confirming),
        }
    }

    /// The first request of the operation a negotiation restarts once connected (its step and
    /// deadline), or `None` for the caller's `connect` (and when no negotiation runs).
    pub(super) fn restart_step(&self) -> Option<(Step, Deadline)> {
        match &self.state {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => match then {
                Then::Report => None,
                Then::List { deadline, .. } | Then::Relist { deadline, .. } => {
                    Some((Step::ListPage { cursor: None }, *deadline))
                }
                Then::Call { deadline, .. } => Some((Step::Call, *deadline)),
            },
            State::Unconnected
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// A negotiation → Ready, or → the operation it interrupted, restarted with `req` (its
    /// first page, or its round again: the request [`Machine::restart_step`] names). The era is
    /// settled: a request proved it.
    pub(super) fn connected(&mut self, req: Option<Pending>) {
        let from = self.take();
        let (name, operation) = (from.name(), from.operation());
        let then = match from {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => then,
            other => return self.invalid(other, ConnectionState::Ready),
        };
        let settled = |rec: Recovery| Recovery {
            hint: Hint::Settled,
            ..rec
        };
        let next = match (then, req) {
            (Then::Report, None) => State::Ready {
                hint: Hint::Settled,
            },
            (Then::List { deadline, rec }, Some(req)) => State::Listing {
                req,
                list: ListState::new(),
                deadline,
                rec: settled(rec),
            },
            (
                Then::Relist {
                    call,
                    error,
                    deadline,
                    rec,
                },
                Some(req),
            ) => State::Relisting {
                req,
                list: ListState::new(),
                call,
                error,
                deadline,
                rec: settled(rec),
            },
            (
                Then::Call {
                    call,
                    deadline,
                    rec,
                },
                Some(req),
            ) => State::Calling {
                req,
                call: *call,
                deadline,
                rec: settled(rec),
            },
            // A request for a connect, or none for an operation to restart.
            (Then::Report, Some(_))
            | (Then::List { .. } | Then::Relist { .. } | Then::Call { .. }, None) => {
                return self.broken(name, operation, ConnectionState::Ready)
            }
        };
        self.set(name, next);
    }

    /// Ready → Listing: the caller's listing sends its first page `req`, with every recovery
    /// still allowed.
    pub(super) fn start_list(&mut self, req: Pending, deadline: Deadline) {
        match self.take() {
            State::Ready { hint } => self.set(
                ConnectionState::Ready,
                State::Listing {
                    req,
                    list: ListState::new(),
                    deadline,
                    rec: Recovery::new(hint),
                },
            ),
            other => self.invalid(other, ConnectionState::Listing),
        }
    }

    /// Ready → Calling: the caller's call sends its first round `req`, with every recovery
    /// still allowed.
    pub(super) fn start_call(&mut self, req: Pending, call: CallState, deadline: Deadline) {
        match self.take() {
            State::Ready { hint } => self.set(
                ConnectionState::Ready,
                State::Calling {
                    req,
                    call,
                    deadline,
                    rec: Recovery::new(hint),
                },
            ),
            other => self.invalid(other, ConnectionState::Calling),
        }
    }

    /// The same state with its next request `req`: a listing's next page.
    pub(super) fn again(&mut self, next: Pending) {
        match &mut self.state {
            State::Listing { req, .. } | State::Relisting { req, .. } => *req = next,
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => {
                let from = self.take();
                let name = from.name();
                self.invalid(from, name);
            }
        }
    }

    /// Calling → Relisting: the call got a header mismatch (`error`); the listing's first page
    /// `req` is sent, on the call's deadline.
    pub(super) fn relist(&mut self, req: Pending, error: crate::error::RpcError) {
        match self.take() {
            State::Calling {
                call,
                deadline,
                mut rec,
                ..
            } => {
                rec.relisted = true;
                self.set(
                    ConnectionState::Calling,
                    State::Relisting {
                        req,
                        list: ListState::new(),
                        call: Box::new(call),
                        error,
                        deadline,
                        rec,
                    },
                );
            }
            other => self.invalid(other, ConnectionState::Relisting),
        }
    }

    /// Relisting → Calling: the listing is complete; the call's round `req` is sent again.
    pub(super) fn call_after_relist(&mut self, req: Pending) {
        match self.take() {
            State::Relisting {
                call,
                deadline,
                rec,
                ..
            } => self.set(
                ConnectionState::Relisting,
                State::Calling {
                    req,
                    call: *call,
                    deadline,
                    rec,
                },
            ),
            other => self.invalid(other, ConnectionState::Calling),
        }
    }

    /// Calling, AwaitingInput or Backoff → Calling: the call's next round `req` is sent.
    pub(super) fn next_round(&mut self, req: Pending) {
        let from = self.take();
        let name = from.name();
        match from {
            State::Calling {
                call,
                deadline,
                rec,
                ..
            }
            | State::AwaitingInput {
                call,
                deadline,
                rec,
            }
            | State::Backoff {
                call,
                deadline,
                rec,
                ..
            } => self.set(
                name,
                State::Calling {
                    req,
                    call,
                    deadline,
                    rec,
                },
            ),
            other => self.invalid(other, ConnectionState::Calling),
        }
    }

    /// Calling → AwaitingInput: the server asked for input only the embedder can give.
    pub(super) fn await_input(&mut self) {
        match self.take() {
            State::Calling {
                call,
                deadline,
                rec,
                ..
            } => self.set(
                ConnectionState::Calling,
                State::AwaitingInput {
                    call,
                    deadline,
                    rec,
                },
            ),
            other => self.invalid(other, ConnectionState::AwaitingInput),
        }
    }

    /// Calling → Backoff: load shedding; the next round waits for `at`.
    pub(super) fn back_off(&mut self, at: Instant) {
        match self.take() {
            State::Calling {
                call,
                deadline,
                rec,
                ..
            } => self.set(
                ConnectionState::Calling,
                State::Backoff {
                    call,
                    deadline,
                    at,
                    rec,
                },
            ),
            other => self.invalid(other, ConnectionState::Backoff),
        }
    }

    /// The task the running call follows, if any.
    pub(super) fn task(&self) -> Option<&TaskRun> {
        match &self.state {
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => Some(task),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// The task the running call follows, to record what its reports and the embedder say.
    pub(super) fn task_mut(&mut self) -> Option<&mut TaskRun> {
        match &mut self.state {
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => Some(task),
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::Resuming { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// Calling → TaskWaiting: the call's answer created `task`; its first poll waits for `at`.
    pub(super) fn start_task(&mut self, task: Box<TaskRun>, at: Instant) {
        match self.take() {
            State::Calling { rec, .. } => {
                let mut task = task;
                task.rec = Recovery {
                    hint: Hint::Settled,
                    ..rec
                };
                self.set(ConnectionState::Calling, State::TaskWaiting { task, at })
            }
            other => self.invalid(other, ConnectionState::TaskWaiting),
        }
    }

    /// Ready → TaskPolling: a task resumed from its handle; its first `tasks/get` `req` is sent.
    pub(super) fn resume_task(&mut self, task: Box<TaskRun>, req: Pending) {
        match self.take() {
            State::Ready { hint } => {
                let mut task = task;
                task.rec = Recovery::new(hint);
                self.set(ConnectionState::Ready, State::TaskPolling { req, task })
            }
            other => self.invalid(other, ConnectionState::TaskPolling),
        }
    }

    /// TaskWaiting or TaskAwaitingInput → TaskPolling: `req` (a `tasks/get`, or a `tasks/update`
    /// with the embedder's answers) is sent.
    pub(super) fn task_request(&mut self, req: Pending) {
        let from = self.take();
        let name = from.name();
        match from {
            State::TaskWaiting { task, .. } | State::TaskAwaitingInput { task } => {
                self.set(name, State::TaskPolling { req, task })
            }
            other => self.invalid(other, ConnectionState::TaskPolling),
        }
    }

    /// A task state → TaskCancelling: `tasks/cancel` `req` is sent (a request in flight was
    /// given up).
    pub(super) fn cancel_task(&mut self, req: Pending) {
        let from = self.take();
        let name = from.name();
        match from {
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => {
                self.set(name, State::TaskCancelling { req, task })
            }
            other => self.invalid(other, ConnectionState::TaskCancelling),
        }
    }

    /// TaskPolling or TaskCancelling → TaskWaiting: the next poll waits for `at`.
    pub(super) fn task_wait(&mut self, at: Instant) {
        let from = self.take();
        let name = from.name();
        match from {
            State::TaskPolling { task, .. } | State::TaskCancelling { task, .. } => {
                self.set(name, State::TaskWaiting { task, at })
            }
            other => self.invalid(other, ConnectionState::TaskWaiting),
        }
    }

    /// TaskPolling → TaskAwaitingInput: the task asks for input only the embedder can give.
    pub(super) fn task_await_input(&mut self) {
        match self.take() {
            State::TaskPolling { task, .. } => self.set(
                ConnectionState::TaskPolling,
                State::TaskAwaitingInput { task },
            ),
            other => self.invalid(other, ConnectionState::TaskAwaitingInput),
        }
    }

    /// TaskPolling → Ready: the task completed; the call succeeded.
    pub(super) fn finish_task(&mut self) {
        match self.take() {
            State::TaskPolling { task, .. } => self.set(
                ConnectionState::TaskPolling,
                State::Ready {
                    hint: task.rec.hint,
                },
            ),
            other => self.invalid(other, ConnectionState::Ready),
        }
    }

    /// Listing → Ready: the listing succeeded; returns it.
    pub(super) fn finish_list(&mut self) -> Option<ListState> {
        match self.take() {
            State::Listing { list, rec, .. } => {
                self.set(ConnectionState::Listing, State::Ready { hint: rec.hint });
                Some(list)
            }
            other => {
                self.invalid(other, ConnectionState::Ready);
                None
            }
        }
    }

    /// Calling → Ready: the call succeeded.
    pub(super) fn finish_call(&mut self) {
        match self.take() {
            State::Calling { rec, .. } => {
                self.set(ConnectionState::Calling, State::Ready { hint: rec.hint })
            }
            other => self.invalid(other, ConnectionState::Ready),
        }
    }

    /// A state waiting on a request → Resuming: its legacy stream broke after event `from`;
    /// the `GET` waits for `at`.
    pub(super) fn suspend(&mut self, from: String, retry: Option<Duration>, at: Instant) {
        let interrupted = self.take();
        let name = interrupted.name();
        if interrupted.req().is_none() {
            return self.invalid(interrupted, ConnectionState::Resuming);
        }
        self.set(
            name,
            State::Resuming {
                from,
                retry,
                at,
                interrupted: Box::new(interrupted),
            },
        );
    }

    /// Resuming → the state it interrupted: the `GET` is sent. Returns the last event id and
    /// the stream's `retry:`.
    pub(super) fn resume(&mut self) -> Option<(String, Option<Duration>)> {
        match self.take() {
            State::Resuming {
                from,
                retry,
                interrupted,
                ..
            } => {
                self.set(ConnectionState::Resuming, *interrupted);
                Some((from, retry))
            }
            other => {
                let name = other.name();
                self.invalid(other, name);
                None
            }
        }
    }

    /// A running operation → Dead, Unconnected (a failed negotiation) or Ready: it failed with
    /// `error`. A connection failure (an error of kind `ConnectionFailed` or
    /// `AuthenticationFailed`, other than a misuse, a configuration error or an abandonment)
    /// ends the connection: Dead, with that error. Returns whether it did.
    pub(super) fn fail(&mut self, error: &Error) -> bool {
        let dead = matches!(
            error.kind(),
            crate::error::ErrorKind::ConnectionFailed
                | crate::error::ErrorKind::AuthenticationFailed
        ) && !matches!(
            error,
            Error::Misuse { .. } | Error::Config(_) | Error::Abandoned
        );
        let from = self.take();
        let next = match dead {
            true => State::Dead(error.clone()),
            false if from.is_negotiating() => State::Unconnected,
            false => State::Ready { hint: from.hint() },
        };
        if from.operation().is_none() {
            self.invalid(from, next.name());
            return dead;
        }
        self.set(from.name(), next);
        dead
    }

    /// Ready, Dead or an interrupted operation → Closing: the `DELETE` `req` is sent.
    pub(super) fn closing(&mut self, req: Pending) {
        let from = self.take();
        self.set(
            from.name(),
            State::Closing {
                req,
                answered: false,
            },
        );
    }

    /// Closing → Closing: the `DELETE` was answered, and Closed waits for the background
    /// cancellations still open ([`Machine::is_deleted`]).
    pub(super) fn deleted(&mut self) {
        match &mut self.state {
            State::Closing { answered, .. } => *answered = true,
            State::Unconnected
            | State::Discovering { .. }
            | State::Initializing { .. }
            | State::Confirming { .. }
            | State::Ready { .. }
            | State::Listing { .. }
            | State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Resuming { .. }
            | State::Dead(_)
            | State::Closed => {
                let from = self.take();
                self.invalid(from, ConnectionState::Closing);
            }
        }
    }

    /// Whether the state is Closing with its `DELETE` answered (waiting for the background
    /// cancellations to end).
    pub(super) fn is_deleted(&self) -> bool {
        matches!(self.state, State::Closing { answered: true, .. })
    }

    /// Any state → Closed.
    pub(super) fn closed(&mut self) {
        let from = self.take();
        self.set(from.name(), State::Closed);
    }
}

#[cfg(test)]
mod tests;
