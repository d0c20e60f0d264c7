//! The lifecycle of a [`ClientConnection`], one enum.
use super::*;

/// Where a [`ClientConnection`] stands. It only moves forward: `Handshake`, `Open`,
/// `GoingAway`, `Failed`, skipping any but the first.
#[derive(Clone, Debug)]
pub(super) enum Life {
    /// Our preface is queued; the server's own (a SETTINGS frame, RFC 9113 §3.4) has not come:
    /// any other frame is a connection error, and one stream may open.
    Handshake,
    /// The server's SETTINGS came: streams open up to its MAX_CONCURRENT_STREAMS.
    Open,
    /// The server's GOAWAY came (RFC 9113 §6.8): no stream opens, those above its last stream
    /// failed, the others run on.
    GoingAway {
        /// The last stream it may process.
        last_stream_id: u32,
        /// Its error code.
        reason: Reason,
    },
    /// A connection error (GOAWAY sent) or the end of the socket: every stream failed, nothing
    /// more is read or sent, and every input returns the error.
    Failed {
        /// The cause.
        error: H2Error,
        /// Whether the server's SETTINGS had come.
        settled: bool,
        /// The server's GOAWAY, if one had come.
        goaway: Option<(u32, Reason)>,
    },
}

impl Life {
    /// Whether the server's SETTINGS came.
    pub(super) fn settled(&self) -> bool {
        match self {
            Life::Handshake => false,
            Life::Open | Life::GoingAway { .. } => true,
            Life::Failed { settled, .. } => *settled,
        }
    }

    /// The server's GOAWAY: (last stream id, error code).
    pub(super) fn goaway(&self) -> Option<(u32, Reason)> {
        match self {
            Life::Handshake | Life::Open => None,
            Life::GoingAway {
                last_stream_id,
                reason,
            } => Some((*last_stream_id, *reason)),
            Life::Failed { goaway, .. } => *goaway,
        }
    }

    /// The connection error.
    pub(super) fn error(&self) -> Option<&H2Error> {
        match self {
            Life::Failed { error, .. } => Some(error),
            Life::Handshake | Life::Open | Life::GoingAway { .. } => None,
        }
    }

    pub(super) fn failed(&self) -> bool {
        self.error().is_some()
    }

    /// To `Failed`, keeping what came before; the first error stays.
    pub(super) fn fail(&mut self, error: H2Error) {
        if !self.failed() {
            *self = Life::Failed {
                error,
                settled: self.settled(),
                goaway: self.goaway(),
            };
        }
    }
}
