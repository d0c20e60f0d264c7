//! HTTP/1.1 under one connection: [`Http1Socket`] encodes a connection's requests as HTTP/1.1
//! and decodes the bytes of each exchange's socket into the wire-neutral
//! [`ResponseEvent`]s the connection takes.
//!
//! Like [`H2Socket`](crate::mux::H2Socket), this layer sits above both the connection's state
//! machine and the HTTP/1.1 codec ([`crate::http1`]), which know nothing of each other.

use crate::prelude::*;

use bytes::Bytes;

use crate::budget::ByteLedger;
use crate::connection::{Connection, ExchangeId, Transmit};
use crate::http1::{self, RequestError, ResponseLimits};
use crate::time::Instant;
use crate::wire::{Request, ResponseDecoder, ResponseEvent};

/// The response reader of one exchange.
#[derive(Debug)]
struct Reader {
    exchange: ExchangeId,
    decoder: ResponseDecoder,
    /// Whether any byte of the response was read.
    read_any: bool,
}

/// The HTTP/1.1 sockets of one [`Connection`]: each exchange runs on a socket of its own (a
/// fresh one, or an idle pooled one the connection said may be reused), and this type reads
/// every one of them.
///
/// Requests go out as HTTP/1.1 bytes ([`encode`](Self::encode)); each socket's bytes, in any
/// split, are decoded by the exchange's own decoder into [`ResponseEvent`]s, each with the raw
/// bytes it cost, handed to [`Connection::handle_response_event`]. The decoder runs against
/// a copy of the connection's byte ledger ([`Connection::response_ledger`]) on which the bytes
/// read but not yet handed in (by every exchange of the connection) are already charged, so the
/// byte budget fails at the exact byte, whatever the split, and a `Content-Length` announcing
/// more than the budget has left fails before any of the body is read. The end of a socket
/// ([`handle_eof`](Self::handle_eof)) ends a close-delimited body or breaks the response;
/// a transport failure goes to [`Connection::handle_transport_error`] directly.
///
/// Bytes the caller gives away ([`handle_owned_bytes`](Self::handle_owned_bytes)) go with
/// each body event as its owner, so that a JSON body arriving whole in them is kept as a slice
/// of them rather than copied.
///
/// ```
/// use mcp_sansio::socket::Http1Socket;
/// use mcp_sansio::{Config, Connection, Event, Instant};
///
/// let body = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#;
/// let answer = format!(
///     "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
///     body.len()
/// );
/// let now = Instant::ZERO;
/// let mut conn = Connection::new(Config::new("http://127.0.0.1:8080/mcp")?)?;
/// let mut socket = Http1Socket::new();
/// conn.connect(now);
/// let t = conn.poll_transmit().expect("the discovery request");
/// let request = Http1Socket::encode(&t)?; // written to the exchange's socket
/// assert!(request.starts_with(b"POST /mcp HTTP/1.1\r\n"));
/// for piece in answer.as_bytes().chunks(3) {
///     socket.handle_bytes(&mut conn, now, t.exchange, piece); // any split, down to one byte
/// }
/// let mut connected = false;
/// while let Some(event) = conn.poll_event() {
///     connected |= matches!(event, Event::Connected { .. });
/// }
/// assert!(connected);
/// # Ok::<(), Box<dyn core::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Http1Socket {
    readers: Vec<Reader>,
}

impl Http1Socket {
    /// Reads nothing yet.
    pub fn new() -> Http1Socket {
        Http1Socket::default()
    }

    /// The HTTP/1.1 bytes of `transmit`'s request, to write to its exchange's socket.
    pub fn encode(transmit: &Transmit) -> Result<Vec<u8>, RequestError> {
        let mut out = Vec::new();
        Self::encode_into(&transmit.request, &mut out)?;
        Ok(out)
    }

    /// Encodes `request` as HTTP/1.1, appending to `out`; nothing is appended on error (a
    /// request from [`Connection::poll_transmit`] was checked and never fails).
    pub fn encode_into(request: &Request, out: &mut Vec<u8>) -> Result<(), RequestError> {
        http1::encode_into(request, out)
    }

    /// Exchanges whose responses are being read (the connection still has them).
    pub fn reading(&self) -> usize {
        self.readers.len()
    }

    /// Response bytes arrived on `exchange`'s socket, in any split.
    pub fn handle_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
    ) {
        self.decode(conn, now, exchange, bytes, None);
    }

    /// [`handle_bytes`](Self::handle_bytes) for bytes the caller gives away, with the same
    /// events, bytes charged and answers in any split. A JSON body that arrives whole in
    /// `bytes` is kept where it is rather than copied: a listed page's tools then share `bytes`
    /// itself. That holds when `bytes` has no more spare capacity than an eighth of its length,
    /// so that a catalog never holds more than its pages' bytes; otherwise the body is copied as
    /// by `handle_bytes`.
    pub fn handle_owned_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        exchange: ExchangeId,
        bytes: Vec<u8>,
    ) {
        let keep = bytes.capacity() - bytes.len() <= bytes.len() / 8;
        let source = Bytes::from(bytes);
        self.decode(conn, now, exchange, &source, keep.then_some(&source));
    }

    /// The server closed `exchange`'s socket: a close-delimited body ends here; a response that
    /// had not ended breaks ([`Connection::handle_wire_error`], or
    /// [`Connection::handle_eof`] if nothing of it was read).
    pub fn handle_eof(&mut self, conn: &mut Connection, now: Instant, exchange: ExchangeId) {
        self.prune(conn);
        let Some(i) = self.readers.iter().position(|r| r.exchange == exchange) else {
            return conn.handle_eof(now, exchange);
        };
        let mut reader = self.readers.swap_remove(i);
        if !reader.read_any {
            return conn.handle_eof(now, exchange);
        }
        match reader.decoder.finish() {
            Ok(Some(end)) => conn.handle_response_event(now, exchange, end),
            Ok(None) => conn.handle_eof(now, exchange),
            Err(e) => {
                let raw = reader.decoder.pending_raw();
                conn.handle_wire_error(now, exchange, e, raw);
            }
        }
    }

    /// Forgets the readers of exchanges the connection no longer has.
    fn prune(&mut self, conn: &Connection) {
        self.readers.retain(|r| conn.has_exchange(r.exchange));
    }

    /// Decodes `bytes` for `exchange`; `owner`, if any, owns them.
    fn decode(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
        owner: Option<&Bytes>,
    ) {
        self.prune(conn);
        if !conn.has_exchange(exchange) {
            return;
        }
        let i = match self.readers.iter().position(|r| r.exchange == exchange) {
            Some(i) => i,
            None => {
                let limits = ResponseLimits::from_budgets(&conn.config().budgets);
                self.readers.push(Reader {
                    exchange,
                    decoder: ResponseDecoder::new(limits),
                    read_any: false,
                });
                self.readers.len() - 1
            }
        };
        // Bytes the other exchanges read and have not handed in yet are spent too.
        let others: u64 = self
            .readers
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| r.decoder.pending_raw())
            .fold(0, u64::saturating_add);
        let mut reader = self.readers.swap_remove(i);
        if !bytes.is_empty() && !reader.read_any {
            reader.read_any = true;
            conn.response_begun(exchange);
        }
        let mut ledger = conn.response_ledger();
        let pending = reader.decoder.pending_raw().saturating_add(others);
        // Already allowed by an earlier copy: cannot fail.
        let _ = ledger.charge(usize::try_from(pending).unwrap_or(usize::MAX));
        let mut input = bytes;
        // Runs until the decoder makes no progress: with the input used up it may still owe the
        // end of a response whose last body byte just arrived.
        loop {
            let decoded = match reader.decoder.decode(input, &mut ledger) {
                Ok(d) => d,
                Err(e) => {
                    // What this exchange read beyond what the connection was handed.
                    let raw = unhanded(&ledger, conn, others);
                    return conn.handle_wire_error(now, exchange, e, raw);
                }
            };
            if decoded.consumed == 0 && decoded.event.is_none() {
                break;
            }
            input = input.get(decoded.consumed..).unwrap_or_default();
            let Some(event) = decoded.event else {
                continue;
            };
            let event = match event {
                ResponseEvent::Body { bytes, raw, .. } => ResponseEvent::Body { bytes, raw, owner },
                ResponseEvent::End { reusable, raw } => {
                    // Bytes after the end on the same socket: it cannot carry another exchange.
                    let reusable = reusable && input.is_empty();
                    return conn.handle_response_event(
                        now,
                        exchange,
                        ResponseEvent::End { reusable, raw },
                    );
                }
                head => head,
            };
            conn.handle_response_event(now, exchange, event);
            if !conn.has_exchange(exchange) {
                // The connection is done with the exchange (an outcome, a failure, a drain
                // abandoned): the rest of the input is not read.
                return;
            }
        }
        self.readers.push(reader);
    }
}

/// Raw bytes charged to `ledger` (a copy of `conn`'s, with `others` charged first) that `conn`
/// was not handed.
fn unhanded(ledger: &ByteLedger, conn: &Connection, others: u64) -> u64 {
    ledger
        .used()
        .saturating_sub(conn.bytes_read())
        .saturating_sub(others)
}
