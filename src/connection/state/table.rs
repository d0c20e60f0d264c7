//! The states as the table names them ([`ConnectionState`]) and the table itself as data
//! ([`TRANSITIONS`]).

use core::fmt;

/// The state of a [`Connection`](crate::Connection), as the
/// [transition table](crate::Connection#transitions) names it: what
/// [`Connection::state`](crate::Connection::state) reports. The table says which input leads
/// from each to which.
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
    /// ([`Connection::provide_input`](crate::Connection::provide_input)).
    AwaitingInput,
    /// A tool call waits before its next round (load shedding).
    Backoff,
    /// A task (SEP-2663) the call follows waits for its poll interval.
    TaskWaiting,
    /// A task request (`tasks/get`, or `tasks/update` with the embedder's answers) is sent.
    TaskPolling,
    /// A task waits for the embedder's answer to its input requests
    /// ([`Connection::provide_input`](crate::Connection::provide_input)).
    TaskAwaitingInput,
    /// `tasks/cancel` is sent ([`Connection::cancel_task`](crate::Connection::cancel_task)).
    TaskCancelling,
    /// A legacy event stream broke: its `GET` waits for the retry time.
    Resuming,
    /// The `DELETE` that ends a legacy session is sent.
    Closing,
    /// A connection failure ended it: every operation fails with that error; only
    /// [`close`](crate::Connection::close) remains useful.
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
            ConnectionState::TaskWaiting => "TaskWaiting",
            ConnectionState::TaskPolling => "TaskPolling",
            ConnectionState::TaskAwaitingInput => "TaskAwaitingInput",
            ConnectionState::TaskCancelling => "TaskCancelling",
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

/// Every transition of the [table](crate::Connection#transitions), as pairs of states: the
/// table as data. Every state change the machine makes is checked against it
/// (one not listed is a bug, caught by a debug assertion, and in a
/// release build it ends the connection with
/// [`Error::InvalidTransition`](crate::Error::InvalidTransition) rather than keep a wrong state),
/// and `tests/transitions.rs` checks `transitions.md` against it both ways: every row's pair is
/// here, and every pair here has a row that the test walks. A pair of a state with itself is a
/// row whose input leaves the state as it is (a refused operation, a listing's next page, a
/// call's next round).
pub const TRANSITIONS: &[(ConnectionState, ConnectionState)] = {
    use ConnectionState::*;
    &[
        (Unconnected, Unconnected),
        (Unconnected, Discovering),
        (Unconnected, Initializing),
        (Unconnected, Ready),
        (Unconnected, Closed),
        (Discovering, Discovering),
        (Discovering, Initializing),
        (Discovering, Ready),
        (Discovering, Listing),
        (Discovering, Relisting),
        (Discovering, Calling),
        (Discovering, Resuming),
        (Discovering, Unconnected),
        (Discovering, Dead),
        (Discovering, Closed),
        (Initializing, Initializing),
        (Initializing, Discovering),
        (Initializing, Confirming),
        (Initializing, Resuming),
        (Initializing, Unconnected),
        (Initializing, Dead),
        (Initializing, Closed),
        (Confirming, Ready),
        (Confirming, Listing),
        (Confirming, Relisting),
        (Confirming, Calling),
        (Confirming, Unconnected),
        (Confirming, Dead),
        (Confirming, Closing),
        (Confirming, Closed),
        (Ready, Ready),
        (Ready, Listing),
        (Ready, Calling),
        (Ready, Closing),
        (Ready, Closed),
        (Ready, TaskPolling),
        (Listing, Listing),
        (Listing, Ready),
        (Listing, Discovering),
        (Listing, Initializing),
        (Listing, Resuming),
        (Listing, Dead),
        (Listing, Closing),
        (Listing, Closed),
        (Relisting, Relisting),
        (Relisting, Calling),
        (Relisting, Ready),
        (Relisting, Discovering),
        (Relisting, Initializing),
        (Relisting, Resuming),
        (Relisting, Dead),
        (Relisting, Closing),
        (Relisting, Closed),
        (Calling, Calling),
        (Calling, Ready),
        (Calling, AwaitingInput),
        (Calling, Backoff),
        (Calling, Relisting),
        (Calling, Discovering),
        (Calling, Initializing),
        (Calling, Resuming),
        (Calling, Dead),
        (Calling, Closing),
        (Calling, Closed),
        (Calling, TaskWaiting),
        (AwaitingInput, Calling),
        (AwaitingInput, Ready),
        (AwaitingInput, Dead),
        (AwaitingInput, Closing),
        (AwaitingInput, Closed),
        (Backoff, Calling),
        (Backoff, Ready),
        (Backoff, Dead),
        (Backoff, Closing),
        (Backoff, Closed),
        (TaskWaiting, TaskPolling),
        (TaskWaiting, TaskCancelling),
        (TaskWaiting, Ready),
        (TaskWaiting, Dead),
        (TaskWaiting, Closed),
        (TaskPolling, TaskWaiting),
        (TaskPolling, TaskAwaitingInput),
        (TaskPolling, TaskCancelling),
        (TaskPolling, Ready),
        (TaskPolling, Dead),
        (TaskPolling, Closed),
        (TaskAwaitingInput, TaskPolling),
        (TaskAwaitingInput, TaskCancelling),
        (TaskAwaitingInput, Ready),
        (TaskAwaitingInput, Dead),
        (TaskAwaitingInput, Closed),
        (TaskCancelling, TaskWaiting),
        (TaskCancelling, Ready),
        (TaskCancelling, Dead),
        (TaskCancelling, Closed),
        (Resuming, Discovering),
        (Resuming, Initializing),
        (Resuming, Listing),
        (Resuming, Relisting),
        (Resuming, Calling),
        (Resuming, Closing),
        (Resuming, Unconnected),
        (Resuming, Ready),
        (Resuming, Dead),
        (Resuming, Closed),
        (Closing, Closing),
        (Closing, Closed),
        (Dead, Dead),
        (Dead, Closing),
        (Dead, Closed),
        (Closed, Closed),
    ]
};

/// Whether `from → to` is a transition of the table ([`TRANSITIONS`]).
pub(super) fn is_transition(from: ConnectionState, to: ConnectionState) -> bool {
    TRANSITIONS.iter().any(|&(a, b)| a == from && b == to)
}
