//! The connection's one input from the network: [`Input`], taken by [`Connection::handle`].

use super::*;

/// What the network brought for one exchange, whatever the wire: the one input of
/// [`Connection::handle`]. The socket types produce them
/// ([`Http1Socket`](crate::socket::Http1Socket) from each exchange's bytes,
/// [`H2Socket`](crate::mux::H2Socket) from the frames of each stream), and a caller with its own
/// transport makes the ones it knows of ([`TransportError`](Input::TransportError),
/// [`Eof`](Input::Eof)). Each names its exchange; inputs of exchanges the connection no longer
/// has are ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// The socket read bytes of the exchange's response that make no event yet (a head not yet
    /// complete): the server has begun to answer, so a failure from now on is not that of a
    /// stale pooled socket, and the request is not sent again. Only the HTTP/1.1 socket knows
    /// this before the head is whole.
    ResponseBegun {
        /// The exchange.
        exchange: ExchangeId,
    },
    /// One event of the exchange's response (a head, body bytes, the end), with the raw bytes it
    /// cost: every byte the socket read for it since the previous event (framing, header
    /// blocks, 1xx responses, padding), charged to the connection's byte budget first. An event
    /// out of order breaks the exchange. A body whose bytes come with their `owner`, and arrive
    /// whole in one event, is kept as a slice of it rather than copied.
    Response {
        /// The exchange.
        exchange: ExchangeId,
        /// The event.
        event: ResponseEvent<'a>,
    },
    /// The socket refused the exchange's response (a malformed response, a budget; over HTTP/2
    /// a reset stream or the connection's failure); `raw` is what the stream was charged since
    /// its previous event, charged here too. A request the error shows the server never
    /// processed ([`WireError::never_processed`]) is sent once more on a fresh socket with a new
    /// JSON-RPC id; in the 2026-07-28 era a stream the error shows broken
    /// ([`WireError::is_cut_off`] before the head, [`WireError::is_broken_stream`] after a `2xx`
    /// head) is re-issued with a new id. Every sending counts in `responses_per_request`.
    WireError {
        /// The exchange.
        exchange: ExchangeId,
        /// Why the response was refused.
        error: WireError,
        /// Raw bytes read for the exchange since its previous event.
        raw: u64,
    },
    /// The exchange's stream ended (the server closed its socket) before its response did; a
    /// socket that decodes a response whose end the close marks delivers that end as a
    /// [`Response`](Input::Response) instead.
    Eof {
        /// The exchange.
        exchange: ExchangeId,
    },
    /// The transport failed for the exchange (dial refused, TLS, reset…).
    TransportError {
        /// The exchange.
        exchange: ExchangeId,
        /// What failed.
        error: TransportError,
    },
}

impl Input<'_> {
    /// The exchange the input concerns.
    pub fn exchange(&self) -> ExchangeId {
        match self {
            Input::ResponseBegun { exchange }
            | Input::Response { exchange, .. }
            | Input::WireError { exchange, .. }
            | Input::Eof { exchange }
            | Input::TransportError { exchange, .. } => *exchange,
        }
    }
}

impl Connection {
    /// Takes what the network brought for one exchange (see [`Input`]): the connection's one
    /// input besides the clock ([`handle_timeout`](Self::handle_timeout)). Inputs of exchanges
    /// the connection no longer has are ignored. Drain the outputs afterwards.
    pub fn handle(&mut self, now: Instant, input: Input<'_>) {
        match input {
            Input::ResponseBegun { exchange } => self.response_begun(exchange),
            Input::Response { exchange, event } => self.handle_response_event(now, exchange, event),
            Input::WireError {
                exchange,
                error,
                raw,
            } => self.handle_wire_error(now, exchange, error, raw),
            Input::Eof { exchange } => self.handle_eof(now, exchange),
            Input::TransportError { exchange, error } => {
                self.handle_transport_error(now, exchange, error)
            }
        }
    }
}

/// What a socket needs from a connection to read its exchanges' responses without owning it
/// ([`Connection::allowance`]): a copy of its byte ledger (the configured limit and the bytes
/// charged so far), against which the socket decodes so that the byte budget fails at the
/// exact byte whatever the split, and the HTTP/1.1 response limits of its budgets. Charging the
/// copy changes nothing in the connection, which charges each input's raw cost when it is
/// handed in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowance {
    /// A copy of the connection's byte ledger.
    pub ledger: ByteLedger,
    /// The limits of one HTTP/1.1 response (header block, header count, chunk lines, 1xx
    /// responses), from the connection's budgets.
    pub limits: crate::http1::ResponseLimits,
}

impl Allowance {
    /// Raw bytes the connection may still read: the allowance of an HTTP/2 stream opened for
    /// it.
    pub fn bytes_left(&self) -> u64 {
        self.ledger.remaining()
    }
}

impl Connection {
    /// What a socket needs to read this connection's responses (see [`Allowance`]), taken now:
    /// give it with each read ([`Http1Socket::read`](crate::socket::Http1Socket::read),
    /// [`H2Streams::send`](crate::mux::H2Streams::send)).
    pub fn allowance(&self) -> Allowance {
        Allowance {
            ledger: self.ledger.clone(),
            limits: crate::http1::ResponseLimits::from_budgets(&self.config.budgets),
        }
    }
}
