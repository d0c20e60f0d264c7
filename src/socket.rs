//! HTTP/1.1 under one connection: [`Http1Socket`] encodes a connection's requests as HTTP/1.1
//! and decodes the bytes of each exchange's socket into the [`Input`]s the connection takes.
//!
//! Like [`H2Streams`](crate::mux::H2Streams), the socket owns no connection: it is given what
//! it needs of one as data (an [`Allowance`]), and yields inputs that the caller hands to
//! [`Connection::handle`]. The methods that take a `&mut Connection`
//! ([`handle_bytes`](Http1Socket::handle_bytes), [`handle_owned_bytes`](Http1Socket::handle_owned_bytes),
//! [`handle_eof`](Http1Socket::handle_eof)) are a thin layer that does just that.
//!
//! This layer sits above both the connection's state machine and the HTTP/1.1 codec
//! ([`crate::http1`]), which know nothing of each other; the codec's events are made
//! wire-neutral ([`ResponseEvent`]) here.

use crate::prelude::*;

use bytes::Bytes;

use crate::budget::ByteLedger;
use crate::connection::{Allowance, Connection, ExchangeId, Input, Transmit};
use crate::http1::{self, Framing, RequestError, ResponseLimits};
use crate::time::Instant;
use crate::wire::{Request, ResponseEvent, ResponseHead, WireError};

/// The response reader of one exchange.
#[derive(Debug)]
struct Reader {
    exchange: ExchangeId,
    decoder: Http1Decoder,
    /// Whether any byte of the response was read.
    read_any: bool,
}

/// The HTTP/1.1 sockets of one [`Connection`]: each exchange runs on a socket of its own (a
/// fresh one, or an idle pooled one the connection said may be reused), and this type reads
/// every one of them.
///
/// Requests go out as HTTP/1.1 bytes ([`encode`](Self::encode)); each socket's bytes, in any
/// split, are decoded by the exchange's own decoder into [`Input`]s ([`read`](Self::read)):
/// the response's events, each with the raw bytes it cost, and its failure. The decoder runs
/// against the connection's byte ledger as it was when the bytes arrived
/// ([`Connection::allowance`]), on which the bytes read but not yet handed in (by every exchange
/// of the connection) are charged first, so the byte budget fails at the exact byte, whatever
/// the split, and a `Content-Length` announcing more than the budget has left fails before any
/// of the body is read. The end of a socket ([`eof`](Self::eof)) ends a close-delimited body or
/// breaks the response; a transport failure is the caller's own [`Input::TransportError`].
///
/// The caller hands each input to [`Connection::handle`] as it comes, and stops reading once
/// the connection no longer has the exchange ([`Connection::has_exchange`]): the rest of the
/// bytes are not read. It feeds only exchanges the connection has, and [`forget`](Self::forget)s
/// each one the connection finishes or abandons ([`Event::ExchangeFinished`],
/// [`Event::ExchangeAbandoned`]), so that what its reader had read counts no more.
///
/// Bytes the caller gives away ([`OwnedBytes`], [`read_owned`](Self::read_owned)) go with each
/// body event as its owner, so that a JSON body arriving whole in them is kept as a slice of
/// them rather than copied.
///
/// [`Event::ExchangeFinished`]: crate::Event::ExchangeFinished
/// [`Event::ExchangeAbandoned`]: crate::Event::ExchangeAbandoned
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
///     // Any split, down to one byte; the socket owns no connection.
///     for input in socket.read(t.exchange, piece, conn.allowance()) {
///         conn.handle(now, input);
///         if !conn.has_exchange(t.exchange) {
///             break;
///         }
///     }
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

/// Bytes read from a socket that the caller gives away
/// ([`Http1Socket::read_owned`]): a JSON body that arrives whole in them is kept where it is
/// rather than copied (a listed page's tools then share them). That holds when the buffer had no
/// more spare capacity than an eighth of its length, so that a catalog never holds more than its
/// pages' bytes; otherwise the body is copied as by [`Http1Socket::read`].
#[derive(Clone, Debug)]
pub struct OwnedBytes {
    bytes: Bytes,
    keep: bool,
}

impl From<Vec<u8>> for OwnedBytes {
    fn from(bytes: Vec<u8>) -> OwnedBytes {
        let keep = bytes.capacity() - bytes.len() <= bytes.len() / 8;
        OwnedBytes {
            bytes: Bytes::from(bytes),
            keep,
        }
    }
}

impl OwnedBytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }
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

    /// Exchanges whose responses are being read.
    pub fn reading(&self) -> usize {
        self.readers.len()
    }

    /// Response bytes arrived on `exchange`'s socket, in any split: the [`Input`]s they make,
    /// decoded against `allowance` (the connection's, [`Connection::allowance`], taken now).
    /// Hand each to [`Connection::handle`] as it comes; stop once the connection no longer has
    /// the exchange. The inputs not taken are not read.
    pub fn read<'s, 'a>(
        &'s mut self,
        exchange: ExchangeId,
        bytes: &'a [u8],
        allowance: Allowance,
    ) -> Http1Read<'s, 'a> {
        self.start(exchange, bytes, None, allowance)
    }

    /// [`read`](Self::read) for bytes the caller gives away ([`OwnedBytes`]), with the same
    /// inputs, bytes charged and answers in any split; each body event carries `bytes` as its
    /// owner when they may be kept.
    pub fn read_owned<'s, 'a>(
        &'s mut self,
        exchange: ExchangeId,
        bytes: &'a OwnedBytes,
        allowance: Allowance,
    ) -> Http1Read<'s, 'a> {
        let owner = bytes.keep.then_some(&bytes.bytes);
        self.start(exchange, &bytes.bytes, owner, allowance)
    }

    /// The server closed `exchange`'s socket: the input that means. A close-delimited body ends
    /// here ([`Input::Response`] with its end); a response that had not ended breaks
    /// ([`Input::WireError`], or [`Input::Eof`] if nothing of it was read).
    pub fn eof(&mut self, exchange: ExchangeId) -> Input<'static> {
        let Some(i) = self.readers.iter().position(|r| r.exchange == exchange) else {
            return Input::Eof { exchange };
        };
        let mut reader = self.readers.swap_remove(i);
        if !reader.read_any {
            return Input::Eof { exchange };
        }
        match reader.decoder.finish() {
            Ok(Some(event)) => Input::Response { exchange, event },
            Ok(None) => Input::Eof { exchange },
            Err(error) => Input::WireError {
                exchange,
                error,
                raw: reader.decoder.pending_raw(),
            },
        }
    }

    /// Forgets `exchange`'s reader: the connection finished or abandoned the exchange, so what
    /// its reader read counts no more.
    pub fn forget(&mut self, exchange: ExchangeId) {
        self.readers.retain(|r| r.exchange != exchange);
    }

    /// Response bytes arrived on `exchange`'s socket: [`read`](Self::read), each input handed
    /// to `conn` until it no longer has the exchange. Exchanges `conn` no longer has are
    /// forgotten first.
    pub fn handle_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        exchange: ExchangeId,
        bytes: &[u8],
    ) {
        self.prune(conn);
        if conn.has_exchange(exchange) {
            let inputs = self.read(exchange, bytes, conn.allowance());
            hand(inputs, conn, now, exchange);
        }
    }

    /// [`handle_bytes`](Self::handle_bytes) for bytes the caller gives away, with the same
    /// events, bytes charged and answers in any split (see [`OwnedBytes`]).
    pub fn handle_owned_bytes(
        &mut self,
        conn: &mut Connection,
        now: Instant,
        exchange: ExchangeId,
        bytes: Vec<u8>,
    ) {
        self.prune(conn);
        if conn.has_exchange(exchange) {
            let bytes = OwnedBytes::from(bytes);
            let inputs = self.read_owned(exchange, &bytes, conn.allowance());
            hand(inputs, conn, now, exchange);
        }
    }

    /// The server closed `exchange`'s socket: [`eof`](Self::eof), handed to `conn`.
    pub fn handle_eof(&mut self, conn: &mut Connection, now: Instant, exchange: ExchangeId) {
        self.prune(conn);
        let input = self.eof(exchange);
        conn.handle(now, input);
    }

    /// Forgets the readers of exchanges `conn` no longer has.
    fn prune(&mut self, conn: &Connection) {
        self.readers.retain(|r| conn.has_exchange(r.exchange));
    }

    /// A read of `bytes` for `exchange`; `owner`, if any, owns them.
    fn start<'s, 'a>(
        &'s mut self,
        exchange: ExchangeId,
        bytes: &'a [u8],
        owner: Option<&'a Bytes>,
        allowance: Allowance,
    ) -> Http1Read<'s, 'a> {
        let Allowance { mut ledger, limits } = allowance;
        let i = match self.readers.iter().position(|r| r.exchange == exchange) {
            Some(i) => i,
            None => {
                self.readers.push(Reader {
                    exchange,
                    decoder: Http1Decoder::new(limits),
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
        let begun = !bytes.is_empty() && !self.readers[i].read_any;
        if begun {
            self.readers[i].read_any = true;
        }
        let base = ledger.used();
        let pending = self.readers[i].decoder.pending_raw().saturating_add(others);
        // Already allowed by an earlier copy: cannot fail.
        let _ = ledger.charge(usize::try_from(pending).unwrap_or(usize::MAX));
        Http1Read {
            socket: self,
            index: i,
            exchange,
            input: bytes,
            owner,
            ledger,
            base,
            others,
            handed: 0,
            stage: if begun { Stage::Begun } else { Stage::Reading },
        }
    }
}

/// Hands `inputs` to `conn` until it no longer has `exchange`.
fn hand(inputs: Http1Read<'_, '_>, conn: &mut Connection, now: Instant, exchange: ExchangeId) {
    for input in inputs {
        conn.handle(now, input);
        if !conn.has_exchange(exchange) {
            // The connection is done with the exchange (an outcome, a failure, a drain
            // abandoned): the rest of the input is not read.
            break;
        }
    }
}

/// Where an [`Http1Read`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The first bytes of the response: [`Input::ResponseBegun`] comes first.
    Begun,
    /// Decoding.
    Reading,
    /// The response ended or failed, or the input is used up.
    Done,
}

/// The [`Input`]s of one piece of an exchange's bytes ([`Http1Socket::read`]), decoded one at a
/// time as they are taken.
#[derive(Debug)]
pub struct Http1Read<'s, 'a> {
    socket: &'s mut Http1Socket,
    /// The exchange's reader in the socket.
    index: usize,
    exchange: ExchangeId,
    input: &'a [u8],
    owner: Option<&'a Bytes>,
    /// The connection's ledger, charged with what every exchange read and did not hand in.
    ledger: ByteLedger,
    /// What the connection's ledger had charged when the read began.
    base: u64,
    /// What the other exchanges read and did not hand in, charged to `ledger` first.
    others: u64,
    /// Raw bytes of the events yielded so far.
    handed: u64,
    stage: Stage,
}

impl<'a> Iterator for Http1Read<'_, 'a> {
    type Item = Input<'a>;

    fn next(&mut self) -> Option<Input<'a>> {
        let exchange = self.exchange;
        match self.stage {
            Stage::Done => return None,
            Stage::Begun => {
                self.stage = Stage::Reading;
                return Some(Input::ResponseBegun { exchange });
            }
            Stage::Reading => {}
        }
        // Runs until the decoder makes no progress: with the input used up it may still owe the
        // end of a response whose last body byte just arrived.
        loop {
            let reader = &mut self.socket.readers[self.index];
            let decoded = match reader.decoder.decode(self.input, &mut self.ledger) {
                Ok(d) => d,
                Err(error) => {
                    // What this exchange read beyond what the connection was handed.
                    let raw = self
                        .ledger
                        .used()
                        .saturating_sub(self.base)
                        .saturating_sub(self.others)
                        .saturating_sub(self.handed);
                    self.finish();
                    return Some(Input::WireError {
                        exchange,
                        error,
                        raw,
                    });
                }
            };
            if decoded.consumed == 0 && decoded.event.is_none() {
                self.stage = Stage::Done;
                return None;
            }
            self.input = self.input.get(decoded.consumed..).unwrap_or_default();
            let Some(event) = decoded.event else {
                continue;
            };
            let event = match event {
                ResponseEvent::Body { bytes, raw, .. } => ResponseEvent::Body {
                    bytes,
                    raw,
                    owner: self.owner,
                },
                ResponseEvent::End { reusable, raw } => {
                    self.finish();
                    // Bytes after the end on the same socket: it cannot carry another exchange.
                    let reusable = reusable && self.input.is_empty();
                    ResponseEvent::End { reusable, raw }
                }
                head => head,
            };
            let raw = match &event {
                ResponseEvent::Head { raw, .. }
                | ResponseEvent::Body { raw, .. }
                | ResponseEvent::End { raw, .. } => *raw,
            };
            self.handed = self.handed.saturating_add(raw);
            return Some(Input::Response { exchange, event });
        }
    }
}

impl Http1Read<'_, '_> {
    /// The response ended or failed: its reader goes.
    fn finish(&mut self) {
        self.socket.readers.swap_remove(self.index);
        self.stage = Stage::Done;
    }
}

/// What one call to [`Http1Decoder::decode`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Decoded<'a> {
    /// Input bytes consumed (and charged to the ledger).
    consumed: usize,
    /// The event completed, if any.
    event: Option<ResponseEvent<'a>>,
}

/// The HTTP/1.1 decoder of one response, as wire-neutral [`ResponseEvent`]s: what
/// [`Http1Socket`] runs for each exchange.
#[derive(Clone, Debug)]
struct Http1Decoder {
    inner: http1::ResponseDecoder,
    /// Raw bytes consumed since the last event.
    since_event: u64,
}

impl Http1Decoder {
    /// A decoder for one HTTP/1.1 response under `limits`.
    fn new(limits: ResponseLimits) -> Self {
        Http1Decoder {
            inner: http1::ResponseDecoder::new(limits),
            since_event: 0,
        }
    }

    /// Consumes a prefix of `input`, charging every consumed byte to `ledger`, and returns at
    /// most one event. The contract is [`http1::ResponseDecoder::decode`]'s: while the response
    /// has not ended, a non-empty `input` yields progress; an `End` due without further bytes is
    /// returned by the next call, even with an empty `input`; after `End` nothing is consumed;
    /// errors are sticky. Body events have no owner.
    fn decode<'a>(
        &mut self,
        input: &'a [u8],
        ledger: &mut ByteLedger,
    ) -> Result<Decoded<'a>, WireError> {
        let decoded = self.inner.decode(input, ledger)?;
        self.since_event = self
            .since_event
            .saturating_add(u64::try_from(decoded.consumed).unwrap_or(u64::MAX));
        let event = decoded.event.map(|e| {
            let raw = core::mem::take(&mut self.since_event);
            match e {
                http1::ResponseEvent::Head(h) => ResponseEvent::Head {
                    head: neutral_head(h),
                    raw,
                },
                http1::ResponseEvent::Body(bytes) => ResponseEvent::Body {
                    bytes,
                    raw,
                    owner: None,
                },
                http1::ResponseEvent::End { reusable } => ResponseEvent::End { reusable, raw },
            }
        });
        Ok(Decoded {
            consumed: decoded.consumed,
            event,
        })
    }

    /// The peer closed the socket: the `End` of a response whose end that is (a close-delimited
    /// body, or an end that was due), `None` if the response had already ended, an error
    /// anywhere else.
    fn finish(&mut self) -> Result<Option<ResponseEvent<'static>>, WireError> {
        Ok(self.inner.finish()?.map(|e| {
            let raw = core::mem::take(&mut self.since_event);
            match e {
                http1::ResponseEvent::End { reusable } => ResponseEvent::End { reusable, raw },
                // `finish` yields nothing else; an end that cannot be reused covers it.
                _ => ResponseEvent::End {
                    reusable: false,
                    raw,
                },
            }
        }))
    }

    /// Raw bytes consumed (and charged to the ledgers given) since the last event returned:
    /// what the next event's `raw` will carry.
    fn pending_raw(&self) -> u64 {
        self.since_event
    }
}

/// The wire-neutral view of an HTTP/1.x head: its fields are moved, not copied.
fn neutral_head(h: http1::ResponseHead) -> ResponseHead {
    let content_length = match h.framing {
        Framing::ContentLength(n) => Some(n),
        Framing::NoBody => Some(0),
        Framing::Chunked | Framing::CloseDelimited => None,
    };
    ResponseHead {
        status: h.status,
        headers: h.headers,
        content_length,
        close_delimited: h.framing == Framing::CloseDelimited,
    }
}

/// The HTTP/1.1 decoder's wire-neutral events: every raw byte in an event, whatever the split.
#[cfg(test)]
mod tests {
    use super::*;

    const RESPONSE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: Text/Event-Stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n";

    /// What a whole decode produced: the events, reduced to comparable values, and the ledger.
    #[derive(Debug, PartialEq)]
    struct Run {
        status: Option<u16>,
        content_type: Option<String>,
        body: Vec<u8>,
        raws: (u64, u64, u64),
        reusable: Option<bool>,
        charged: u64,
    }

    fn decode(input: &[u8], piece: usize) -> Run {
        let mut ledger = ByteLedger::new(1 << 20);
        let mut d = Http1Decoder::new(ResponseLimits::default());
        let mut run = Run {
            status: None,
            content_type: None,
            body: Vec::new(),
            raws: (0, 0, 0),
            reusable: None,
            charged: 0,
        };
        for chunk in input.chunks(piece) {
            let mut rest = chunk;
            loop {
                let step = d.decode(rest, &mut ledger).unwrap();
                rest = &rest[step.consumed..];
                match step.event {
                    Some(ResponseEvent::Head { head, raw }) => {
                        assert!(!head.close_delimited, "a chunked body ends on its own");
                        run.status = Some(head.status);
                        run.content_type = head.content_type();
                        run.raws.0 += raw;
                    }
                    Some(ResponseEvent::Body { bytes, raw, .. }) => {
                        run.body.extend_from_slice(bytes);
                        run.raws.1 += raw;
                    }
                    Some(ResponseEvent::End { reusable, raw }) => {
                        run.reusable = Some(reusable);
                        run.raws.2 += raw;
                    }
                    None if step.consumed == 0 => break,
                    None => {}
                }
            }
        }
        assert!(d.inner.is_ended());
        run.charged = ledger.used();
        run
    }

    #[test]
    fn events_carry_every_raw_byte_in_any_split() {
        let whole = decode(RESPONSE, RESPONSE.len());
        assert_eq!(whole.status, Some(200));
        assert_eq!(whole.content_type.as_deref(), Some("text/event-stream"));
        assert_eq!(whole.body, b"hello world");
        assert_eq!(whole.reusable, Some(true));
        let (head, body, end) = whole.raws;
        assert_eq!(
            head + body + end,
            RESPONSE.len() as u64,
            "every byte is in an event"
        );
        assert_eq!(whole.charged, RESPONSE.len() as u64, "and charged once");
        let head_block = RESPONSE
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == b"\r\n\r\n")
            .nth(1)
            .map(|(i, _)| i + 4)
            .unwrap();
        assert_eq!(
            head, head_block as u64,
            "the head costs the 1xx and its own block"
        );
        for piece in [1, 2, 3, 7] {
            let split = decode(RESPONSE, piece);
            assert_eq!(split.status, whole.status, "piece {piece}");
            assert_eq!(split.body, whole.body, "piece {piece}");
            assert_eq!(split.reusable, whole.reusable, "piece {piece}");
            assert_eq!(split.charged, whole.charged, "piece {piece}");
            let (h, b, e) = split.raws;
            assert_eq!(
                h, head,
                "piece {piece}: the head's cost does not depend on the split"
            );
            assert_eq!(h + b + e, RESPONSE.len() as u64, "piece {piece}");
        }
    }

    #[test]
    fn a_close_delimited_body_ends_at_eof_and_is_not_delimited() {
        let input = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{}";
        let mut ledger = ByteLedger::new(1 << 20);
        let mut d = Http1Decoder::new(ResponseLimits::default());
        let mut rest = &input[..];
        let mut raw_total = 0;
        while !rest.is_empty() {
            let step = d.decode(rest, &mut ledger).unwrap();
            rest = &rest[step.consumed..];
            match step.event {
                Some(ResponseEvent::Head { head, raw }) => {
                    assert_eq!(head.content_length, None);
                    assert!(head.close_delimited);
                    raw_total += raw;
                }
                Some(ResponseEvent::Body { raw, .. }) => raw_total += raw,
                other => panic!("{other:?}"),
            }
        }
        match d.finish().unwrap() {
            Some(ResponseEvent::End { reusable, raw }) => {
                assert!(!reusable);
                raw_total += raw;
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(raw_total, input.len() as u64);
        assert_eq!(ledger.used(), input.len() as u64);
    }

    #[test]
    fn codec_errors_are_typed_and_sticky() {
        let mut ledger = ByteLedger::new(1 << 20);
        let mut d = Http1Decoder::new(ResponseLimits::default());
        let first = d.decode(b"HTTP/2 200 OK\r\n\r\n", &mut ledger).unwrap_err();
        assert!(matches!(first, WireError::Http1(_)), "{first:?}");
        let again = d.decode(b"more", &mut ledger).unwrap_err();
        assert_eq!(first, again);
    }
}
