//! A session's inbox on a [`SharedH2`](super::SharedH2): the inputs routed to it ([`Routed`]) and
//! what its driver hands the shared connection ([`Outbox`]).

use mcp_sansio::wire::ResponseEvent;
#[cfg(doc)]
use mcp_sansio::{Connection, Event};
use mcp_sansio::{ExchangeId, Input, Instant, Transmit};

#[cfg(doc)]
use super::SharedH2;

/// An input of one of a session's streams, routed to its inbox: its driver hands
/// [`input`](Routed::input) to the session's [`Connection::handle`] at [`at`](Routed::at), the
/// instant it was read.
#[derive(Debug)]
pub struct Routed {
    at: Instant,
    held: Held,
}

/// A routed input, owned.
#[derive(Debug)]
enum Held {
    Input(Input<'static>),
    /// Body bytes: copied out of the socket's buffer, lent again when handed in.
    Body {
        exchange: ExchangeId,
        bytes: Vec<u8>,
        raw: u64,
    },
}

impl Routed {
    pub(super) fn new(at: Instant, input: Input<'_>) -> Routed {
        let held = match input {
            Input::Response { exchange, event } => match event {
                ResponseEvent::Body { bytes, raw, .. } => Held::Body {
                    exchange,
                    bytes: bytes.to_vec(),
                    raw,
                },
                ResponseEvent::Head { head, raw } => Held::Input(Input::Response {
                    exchange,
                    event: ResponseEvent::Head { head, raw },
                }),
                ResponseEvent::End { reusable, raw } => Held::Input(Input::Response {
                    exchange,
                    event: ResponseEvent::End { reusable, raw },
                }),
            },
            Input::ResponseBegun { exchange } => Held::Input(Input::ResponseBegun { exchange }),
            Input::WireError {
                exchange,
                error,
                raw,
            } => Held::Input(Input::WireError {
                exchange,
                error,
                raw,
            }),
            Input::Eof { exchange } => Held::Input(Input::Eof { exchange }),
            Input::TransportError { exchange, error } => {
                Held::Input(Input::TransportError { exchange, error })
            }
        };
        Routed { at, held }
    }

    /// The instant the input was read, on the work items' clock ([`SharedH2::now`]).
    pub fn at(&self) -> Instant {
        self.at
    }

    /// The input, for [`Connection::handle`].
    pub fn input(&self) -> Input<'_> {
        match &self.held {
            Held::Input(input) => input.clone(),
            Held::Body {
                exchange,
                bytes,
                raw,
            } => Input::Response {
                exchange: *exchange,
                event: ResponseEvent::Body {
                    bytes,
                    raw: *raw,
                    owner: None,
                },
            },
        }
    }

    /// The raw bytes the connection charges when it is handed the input.
    pub(super) fn raw(&self) -> u64 {
        match &self.held {
            Held::Body { raw, .. }
            | Held::Input(Input::WireError { raw, .. })
            | Held::Input(Input::Response {
                event: ResponseEvent::Head { raw, .. } | ResponseEvent::End { raw, .. },
                ..
            }) => *raw,
            Held::Input(_) => 0,
        }
    }
}

/// What a session's driver hands the shared connection with [`SharedH2::sync`], taken from the
/// connection it owns since the last call.
#[derive(Debug, Default)]
pub struct Outbox {
    /// The connection's requests ([`Connection::poll_transmit`]), in order.
    pub requests: Vec<Transmit>,
    /// The exchanges the connection ended ([`Event::ExchangeFinished`]: `false`;
    /// [`Event::ExchangeAbandoned`]: `true`, its stream is reset with RST_STREAM(CANCEL)).
    pub ended: Vec<(ExchangeId, bool)>,
    /// What the connection's byte budget has left now ([`Connection::bytes_left`]), every input
    /// taken before handed in.
    pub bytes_left: u64,
    /// Raw bytes the connection read so far ([`Connection::bytes_read`]): for the exchange spans
    /// (feature `tracing`).
    pub bytes_read: u64,
}
