//! What a [`State`] says of itself: its name in the table, the operation it runs, the request it
//! waits on, its deadline, its recoveries, and what a negotiation started from it leads to.

use super::*;

impl State {
    pub(super) fn name(&self) -> ConnectionState {
        match self {
            State::Unconnected => ConnectionState::Unconnected,
            State::Discovering { .. } => ConnectionState::Discovering,
            State::Initializing { .. } => ConnectionState::Initializing,
            State::Confirming { .. } => ConnectionState::Confirming,
            State::Ready { .. } => ConnectionState::Ready,
            State::Listing { .. } => ConnectionState::Listing,
            State::Relisting { .. } => ConnectionState::Relisting,
            State::Calling { .. } => ConnectionState::Calling,
            State::AwaitingInput { .. } => ConnectionState::AwaitingInput,
            State::Backoff { .. } => ConnectionState::Backoff,
            State::TaskWaiting { .. } => ConnectionState::TaskWaiting,
            State::TaskPolling { .. } => ConnectionState::TaskPolling,
            State::TaskAwaitingInput { .. } => ConnectionState::TaskAwaitingInput,
            State::TaskCancelling { .. } => ConnectionState::TaskCancelling,
            State::Resuming { .. } => ConnectionState::Resuming,
            State::Closing { .. } => ConnectionState::Closing,
            State::Dead(_) => ConnectionState::Dead,
            State::Closed => ConnectionState::Closed,
        }
    }

    pub(super) fn operation(&self) -> Option<Operation> {
        match self {
            State::Unconnected | State::Ready { .. } | State::Dead(_) | State::Closed => None,
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => Some(then.operation()),
            State::Listing { .. } => Some(Operation::ListTools),
            State::Relisting { .. }
            | State::Calling { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. } => Some(Operation::CallTool),
            State::Resuming { interrupted, .. } => interrupted.operation(),
            State::Closing { .. } => Some(Operation::Close),
        }
    }

    pub(super) fn req(&self) -> Option<&Pending> {
        match self {
            State::Discovering { req, .. }
            | State::Initializing { req, .. }
            | State::Confirming { req, .. }
            | State::Listing { req, .. }
            | State::Relisting { req, .. }
            | State::Calling { req, .. }
            | State::TaskPolling { req, .. }
            | State::TaskCancelling { req, .. }
            | State::Closing { req, .. } => Some(req),
            State::Resuming { interrupted, .. } => interrupted.req(),
            State::Unconnected
            | State::Ready { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskAwaitingInput { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    pub(super) fn req_mut(&mut self) -> Option<&mut Pending> {
        match self {
            State::Discovering { req, .. }
            | State::Initializing { req, .. }
            | State::Confirming { req, .. }
            | State::Listing { req, .. }
            | State::Relisting { req, .. }
            | State::Calling { req, .. }
            | State::TaskPolling { req, .. }
            | State::TaskCancelling { req, .. }
            | State::Closing { req, .. } => Some(req),
            State::Resuming { interrupted, .. } => interrupted.req_mut(),
            State::Unconnected
            | State::Ready { .. }
            | State::AwaitingInput { .. }
            | State::Backoff { .. }
            | State::TaskWaiting { .. }
            | State::TaskAwaitingInput { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    pub(super) fn deadline(&self) -> Option<Deadline> {
        match self {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => then.deadline(),
            State::Listing { deadline, .. }
            | State::Relisting { deadline, .. }
            | State::Calling { deadline, .. }
            | State::AwaitingInput { deadline, .. }
            | State::Backoff { deadline, .. } => Some(*deadline),
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => Some(task.deadline()),
            State::Resuming { interrupted, .. } => interrupted.deadline(),
            State::Unconnected
            | State::Ready { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    pub(super) fn is_negotiating(&self) -> bool {
        match self {
            State::Discovering { .. } | State::Initializing { .. } | State::Confirming { .. } => {
                true
            }
            State::Resuming { interrupted, .. } => interrupted.is_negotiating(),
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
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => false,
        }
    }

    /// The running call, while it is on the wire or between rounds (through a resumption's
    /// wait; not while the tools are re-listed for it).
    pub(super) fn call(&self) -> Option<&CallState> {
        match self {
            State::Calling { call, .. }
            | State::AwaitingInput { call, .. }
            | State::Backoff { call, .. } => Some(call),
            State::Resuming { interrupted, .. } => interrupted.call(),
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
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// The running operation's recoveries (through a resumption's wait and a re-negotiation).
    pub(super) fn rec_mut(&mut self) -> Option<&mut Recovery> {
        match self {
            State::Listing { rec, .. }
            | State::Relisting { rec, .. }
            | State::Calling { rec, .. }
            | State::AwaitingInput { rec, .. }
            | State::Backoff { rec, .. } => Some(rec),
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => Some(&mut task.rec),
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => match then {
                Then::Report => None,
                Then::List { rec, .. } | Then::Relist { rec, .. } | Then::Call { rec, .. } => {
                    Some(rec)
                }
            },
            State::Resuming { interrupted, .. } => interrupted.rec_mut(),
            State::Unconnected
            | State::Ready { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => None,
        }
    }

    /// Whether the era assumed may still prove wrong: idle or in an operation, the hint it
    /// carries; while `initialize` runs, whether a legacy hint skipped the probe.
    pub(super) fn hint(&self) -> Hint {
        match self {
            State::Ready { hint } => *hint,
            State::Initializing { hinted: true, .. } => Hint::Unproven,
            // A negotiation runs for itself, or re-negotiates: nothing left to prove.
            State::Discovering { .. } | State::Initializing { .. } | State::Confirming { .. } => {
                Hint::Settled
            }
            State::Resuming { interrupted, .. } => interrupted.hint(),
            State::Listing { rec, .. }
            | State::Relisting { rec, .. }
            | State::Calling { rec, .. }
            | State::AwaitingInput { rec, .. }
            | State::Backoff { rec, .. } => rec.hint,
            State::TaskWaiting { task, .. }
            | State::TaskPolling { task, .. }
            | State::TaskAwaitingInput { task }
            | State::TaskCancelling { task, .. } => task.rec.hint,
            State::Unconnected | State::Closing { .. } | State::Dead(_) | State::Closed => {
                Hint::Settled
            }
        }
    }

    /// What a negotiation started now leads to: the negotiation's own if one runs, the operation
    /// it interrupts otherwise.
    pub(super) fn into_then(self) -> Then {
        match self {
            State::Discovering { then, .. }
            | State::Initializing { then, .. }
            | State::Confirming { then, .. } => then,
            State::Listing { deadline, rec, .. } => Then::List { deadline, rec },
            State::Relisting {
                call,
                error,
                deadline,
                rec,
                ..
            } => Then::Relist {
                call,
                error,
                deadline,
                rec,
            },
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
            } => Then::Call {
                call: Box::new(call),
                deadline,
                rec,
            },
            State::Resuming { interrupted, .. } => interrupted.into_then(),
            // A task's requests make no recovery: no negotiation starts from them.
            State::Unconnected
            | State::Ready { .. }
            | State::TaskWaiting { .. }
            | State::TaskPolling { .. }
            | State::TaskAwaitingInput { .. }
            | State::TaskCancelling { .. }
            | State::Closing { .. }
            | State::Dead(_)
            | State::Closed => Then::Report,
        }
    }
}
