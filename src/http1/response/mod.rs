//! Incremental HTTP/1.x response decoding with exact raw-byte accounting.
//!
//! [`ResponseDecoder`] turns the bytes of one response, in pieces of any size, into a
//! [`ResponseEvent::Head`], zero or more [`ResponseEvent::Body`] slices borrowed from the input,
//! and one [`ResponseEvent::End`]. Every raw byte it consumes is charged to the connection's
//! [`ByteLedger`]; what it buffers (a partial header block or chunk-size line) is bounded by the
//! [`ResponseLimits`].
//!
//! The result does not depend on how the input is split: an error is reported at the same byte,
//! with the same ledger count, whether the response arrives whole or one byte at a time, and the
//! body bytes delivered before it are the same.
//!
//! What is accepted, deliberately narrowly:
//! - HTTP/1.1 and HTTP/1.0 status lines with a status in `100..=599` (the reason phrase may be
//!   missing); the response must start with `HTTP/` (no leading empty lines), and anything else
//!   fails at its first byte;
//! - header blocks with CRLF or bare LF line ends, parsed by `httparse` (no obsolete line
//!   folding, no space before the colon); chunk-size lines and the line after chunk data must end
//!   with CRLF;
//! - `Transfer-Encoding` only as exactly `chunked`, only in HTTP/1.1; `Content-Length` repeated
//!   only with identical values (`5, 5`);
//! - 1xx responses other than 101 are skipped (and counted), 101 is an error;
//! - 204 and 304 have no body whatever their headers say; if they announce one, the connection
//!   is reported as not reusable.
use crate::prelude::*;

use crate::budget::{Budget, BudgetExceeded, Budgets, ByteLedger};

use super::error::Http1Error;
use super::head::{framing, keep_alive, parse_head};

mod framing;

use self::framing::{body_event, body_take, parse_chunk_line};

/// Limits on what one response may make the decoder buffer or count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseLimits {
    /// Raw bytes of one header block: the status line and headers, a 1xx block, or trailers.
    pub header_block_bytes: usize,
    /// Header fields in one header block.
    pub header_count: usize,
    /// Bytes of one chunk-size line, extensions and CRLF included.
    pub chunk_line_bytes: usize,
    /// 1xx responses accepted (and skipped) before the final response.
    pub informational_responses: u32,
}

impl ResponseLimits {
    /// The report that `budget`, one of the four these limits hold (header block, header count,
    /// chunk line, informational responses), ran out: the one way the decoder names a spent
    /// budget, with the limit it enforced. Any other budget reports its limit as 0.
    pub fn exceeded(&self, budget: Budget) -> BudgetExceeded {
        let limit = match budget {
            Budget::HeaderBlock => as_u64(self.header_block_bytes),
            Budget::HeaderCount => as_u64(self.header_count),
            Budget::ChunkLine => as_u64(self.chunk_line_bytes),
            Budget::InformationalResponses => u64::from(self.informational_responses),
            _ => 0,
        };
        BudgetExceeded::new(budget, limit)
    }

    /// The limits configured in `b`.
    pub fn from_budgets(b: &Budgets) -> Self {
        ResponseLimits {
            header_block_bytes: b.header_block_bytes,
            header_count: b.header_count,
            chunk_line_bytes: b.chunk_line_bytes,
            informational_responses: b.informational_responses,
        }
    }
}

impl Default for ResponseLimits {
    /// The limits of [`Budgets::default`].
    fn default() -> Self {
        ResponseLimits::from_budgets(&Budgets::default())
    }
}

/// How the body of a response is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length` bytes follow the head.
    ContentLength(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// The body runs until the server closes the connection.
    CloseDelimited,
    /// No body: 204 No Content or 304 Not Modified.
    NoBody,
}

/// The status line and headers of the final (non-1xx) response.
///
/// Its `Debug` output redacts secret header values (`Set-Cookie`…,
/// [`redact::header`](crate::auth::redact::header)).
#[derive(Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code, `200..=599`.
    pub status: u16,
    /// The reason phrase, decoded as lossy UTF-8; may be empty.
    pub reason: String,
    /// The header fields in order: names as received (original case), values as raw bytes
    /// (without surrounding whitespace).
    pub headers: Vec<(String, Vec<u8>)>,
    /// How the body is delimited.
    pub framing: Framing,
}

impl core::fmt::Debug for ResponseHead {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ResponseHead")
            .field("status", &self.status)
            .field("reason", &self.reason)
            .field(
                "headers",
                &crate::auth::redact::debug_headers(&self.headers),
            )
            .field("framing", &self.framing)
            .finish()
    }
}

impl ResponseHead {
    /// The first value of header `name` (compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        crate::wire::header(&self.headers, name)
    }

    /// The first value of header `name` (compared case-insensitively) if it is valid UTF-8,
    /// trimmed of spaces and tabs.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        crate::wire::header_str(&self.headers, name)
    }

    /// The media type of `Content-Type` without parameters, lowercased: `text/event-stream` for
    /// `Text/Event-Stream; charset=utf-8`. `None` when absent or not of the form `type/subtype`.
    pub fn content_type(&self) -> Option<String> {
        crate::wire::content_type(&self.headers)
    }
}

/// One step of a decoded response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseEvent<'a> {
    /// The head of the final response; exactly once, after any 1xx responses were skipped.
    Head(ResponseHead),
    /// Body bytes borrowed from the input, framing removed; never empty.
    Body(&'a [u8]),
    /// The response is complete; exactly once. `reusable` says whether the connection may carry
    /// another request: the body was framed (not close-delimited) and the server did not ask to
    /// close (HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`).
    End {
        /// Whether the connection may be reused.
        reusable: bool,
    },
}

/// What one call to [`ResponseDecoder::decode`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// Bytes of the input consumed (and charged to the ledger).
    pub consumed: usize,
    /// The event produced, if any.
    pub event: Option<ResponseEvent<'a>>,
}

/// Where the decoder is in the response.
#[derive(Clone, Debug)]
enum State {
    /// Reading a status line and headers (of a 1xx or the final response) into `buf`.
    Head,
    /// A `Content-Length` body with this many bytes left.
    Body { remaining: u64 },
    /// A close-delimited body.
    Close,
    /// Reading a chunk-size line into `buf`.
    ChunkLine,
    /// Inside a chunk, with this many data bytes left.
    ChunkData { remaining: u64 },
    /// After chunk data: expecting CRLF (`seen_cr` once the CR arrived).
    ChunkCrlf { seen_cr: bool },
    /// Reading the trailer section into `buf`.
    Trailers,
    /// The response is complete; `End` is due on the next call.
    Done,
    /// `End` was returned.
    Ended,
    /// An error was returned; it is returned again.
    Failed(Http1Error),
}

/// An incremental decoder of one HTTP/1.x response, as the module docs of `http1::response`
/// describe it. `Debug` shows the partial block it holds by length only (it may hold a
/// `Set-Cookie` line), and the head through [`ResponseHead`]'s redacting `Debug`.
#[derive(Clone)]
pub struct ResponseDecoder {
    limits: ResponseLimits,
    state: State,
    /// The partial header block or chunk-size line.
    buf: Vec<u8>,
    /// Bytes consumed so far (for naming the stage of an early end of stream).
    consumed_total: u64,
    /// 1xx responses skipped so far.
    informational: u32,
    head: Option<ResponseHead>,
    reusable: bool,
}

impl core::fmt::Debug for ResponseDecoder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ResponseDecoder")
            .field("limits", &self.limits)
            .field("state", &self.state)
            .field("buffered", &self.buf.len())
            .field("consumed_total", &self.consumed_total)
            .field("informational", &self.informational)
            .field("head", &self.head)
            .field("reusable", &self.reusable)
            .finish()
    }
}

/// A block the decoder reads into its buffer up to an empty line.
#[derive(Clone, Copy)]
enum BlockKind {
    /// Status line and headers: starts with `HTTP/`, not at a line start.
    Head,
    /// Trailer section: starts at a line start (right after the last chunk's line).
    Trailers,
}

/// Buffers larger than this are released once their block is parsed.
const KEEP_CAPACITY: usize = 8 * 1024;

impl ResponseDecoder {
    /// A decoder for one response under `limits`.
    pub fn new(limits: ResponseLimits) -> Self {
        ResponseDecoder {
            limits,
            state: State::Head,
            buf: Vec::new(),
            consumed_total: 0,
            informational: 0,
            head: None,
            reusable: false,
        }
    }

    /// Consumes a prefix of `input` and returns at most one event.
    ///
    /// Every consumed byte is charged to `ledger` (status lines, headers, 1xx blocks, chunk-size
    /// lines and extensions, CRLFs, trailers, body); a charge the ledger refuses fails with
    /// [`Budget::ResponseBytes`]. Bytes of an incomplete header block or chunk-size line are
    /// buffered (bounded by the limits) and count as consumed.
    ///
    /// Progress: while the response has not ended, a non-empty `input` always yields
    /// `consumed > 0` or an event, so callers loop while input remains. An `End` that is due with
    /// no further bytes (after a head without body or with `Content-Length: 0`, or after the last
    /// byte of a `Content-Length` body) is returned by the next call, even with an empty `input`.
    /// After `End`, nothing more is consumed (`consumed == 0`, no event): bytes after the response
    /// are the caller's.
    ///
    /// Errors are sticky: after an error every call returns it again.
    pub fn decode<'a>(
        &mut self,
        input: &'a [u8],
        ledger: &mut ByteLedger,
    ) -> Result<Decoded<'a>, Http1Error> {
        if let State::Failed(e) = &self.state {
            return Err(e.clone());
        }
        let mut consumed = 0usize;
        let result = self.run(input, ledger, &mut consumed);
        self.consumed_total = self
            .consumed_total
            .saturating_add(u64::try_from(consumed).unwrap_or(u64::MAX));
        match result {
            Ok(event) => Ok(Decoded { consumed, event }),
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Reports the end of the stream from the peer.
    ///
    /// Returns `Ok(Some(End { reusable: false }))` when a close-delimited body was in progress
    /// (the one legal end by EOF) or when the response was complete but its `End` not yet
    /// returned, `Ok(None)` when the response had already ended, and
    /// [`Http1Error::UnexpectedEof`] anywhere else.
    pub fn finish(&mut self) -> Result<Option<ResponseEvent<'static>>, Http1Error> {
        let stage = match &self.state {
            State::Failed(e) => return Err(e.clone()),
            State::Ended => return Ok(None),
            State::Close | State::Done => {
                self.state = State::Ended;
                self.reusable = false;
                return Ok(Some(ResponseEvent::End { reusable: false }));
            }
            State::Head if self.consumed_total == 0 => "before response",
            State::Head => "response head",
            State::Body { .. } => "body",
            State::ChunkLine => "chunk size line",
            State::ChunkData { .. } | State::ChunkCrlf { .. } => "chunk data",
            State::Trailers => "trailers",
        };
        Err(self.fail(Http1Error::UnexpectedEof { stage }))
    }

    /// Whether `End` was returned.
    pub fn is_ended(&self) -> bool {
        matches!(self.state, State::Ended)
    }

    /// The head of the final response, once it was returned.
    pub fn head(&self) -> Option<&ResponseHead> {
        self.head.as_ref()
    }

    /// The status of the final response, once its head was returned.
    pub fn status(&self) -> Option<u16> {
        self.head.as_ref().map(|h| h.status)
    }

    /// Bytes currently buffered (a partial header block or chunk-size line); never more than
    /// the larger of `header_block_bytes` and `chunk_line_bytes`.
    pub fn buffered_len(&self) -> usize {
        self.buf.len()
    }

    fn fail(&mut self, e: Http1Error) -> Http1Error {
        self.buf = Vec::new();
        self.state = State::Failed(e.clone());
        e
    }

    /// Runs steps until one yields an event or needs more input; `consumed` counts the bytes
    /// taken from `input` (all charged).
    fn run<'a>(
        &mut self,
        input: &'a [u8],
        ledger: &mut ByteLedger,
        consumed: &mut usize,
    ) -> Result<Option<ResponseEvent<'a>>, Http1Error> {
        loop {
            let rest = input.get(*consumed..).unwrap_or_default();
            let (n, event) = self.step(rest, ledger)?;
            *consumed += n;
            if event.is_some() || n == 0 {
                return Ok(event);
            }
        }
    }

    /// One step: consumes `n` bytes of `rest` (charged) and maybe yields an event. Returns
    /// `n == 0` without event only when `rest` is empty or the response has ended.
    fn step<'a>(
        &mut self,
        rest: &'a [u8],
        ledger: &mut ByteLedger,
    ) -> Result<(usize, Option<ResponseEvent<'a>>), Http1Error> {
        match self.state {
            State::Ended | State::Failed(_) => Ok((0, None)),
            State::Done => {
                self.state = State::Ended;
                Ok((
                    0,
                    Some(ResponseEvent::End {
                        reusable: self.reusable,
                    }),
                ))
            }
            State::Head => {
                let (n, complete) = self.read_block(rest, ledger, BlockKind::Head)?;
                if !complete {
                    return Ok((n, None));
                }
                let event = self.finish_head(ledger)?;
                Ok((n, event))
            }
            State::Trailers => {
                let (n, complete) = self.read_block(rest, ledger, BlockKind::Trailers)?;
                if complete {
                    self.check_trailers()?;
                    self.release_buf();
                    self.state = State::Ended;
                    return Ok((
                        n,
                        Some(ResponseEvent::End {
                            reusable: self.reusable,
                        }),
                    ));
                }
                Ok((n, None))
            }
            State::Body { remaining } => {
                let take = body_take(rest, remaining, ledger)?;
                let left = remaining.saturating_sub(take as u64);
                self.state = if left == 0 {
                    State::Done
                } else {
                    State::Body { remaining: left }
                };
                Ok(body_event(rest, take))
            }
            State::Close => {
                let take = body_take(rest, u64::MAX, ledger)?;
                Ok(body_event(rest, take))
            }
            State::ChunkData { remaining } => {
                let take = body_take(rest, remaining, ledger)?;
                let left = remaining.saturating_sub(take as u64);
                self.state = if left == 0 {
                    State::ChunkCrlf { seen_cr: false }
                } else {
                    State::ChunkData { remaining: left }
                };
                Ok(body_event(rest, take))
            }
            State::ChunkCrlf { mut seen_cr } => {
                let mut n = 0;
                let mut done = false;
                while let Some(&b) = rest.get(n) {
                    match (seen_cr, b) {
                        (false, b'\r') => seen_cr = true,
                        (true, b'\n') => done = true,
                        _ => {
                            return Err(fail_after(
                                ledger,
                                n,
                                Http1Error::Malformed {
                                    what: "chunk data not followed by CRLF",
                                },
                            ))
                        }
                    }
                    n += 1;
                    if done {
                        break;
                    }
                }
                ledger.charge(n)?;
                self.state = if done {
                    State::ChunkLine
                } else {
                    State::ChunkCrlf { seen_cr }
                };
                Ok((n, None))
            }
            State::ChunkLine => {
                let (n, complete) = self.read_chunk_line(rest, ledger)?;
                if complete {
                    let size = parse_chunk_line(&self.buf)?;
                    self.buf.clear();
                    if size == 0 {
                        self.state = State::Trailers;
                    } else if size > ledger.remaining() {
                        return Err(ledger.exceeded().into());
                    } else {
                        self.state = State::ChunkData { remaining: size };
                    }
                }
                Ok((n, None))
            }
        }
    }

    /// Reads a header block up to and including its empty line into `buf`. Returns the bytes
    /// consumed and whether the block is complete. Fails as soon as the block crosses
    /// `header_block_bytes`, without buffering past the cap.
    fn read_block(
        &mut self,
        rest: &[u8],
        ledger: &mut ByteLedger,
        kind: BlockKind,
    ) -> Result<(usize, bool), Http1Error> {
        if rest.is_empty() {
            return Ok((0, false));
        }
        if let BlockKind::Head = kind {
            // Fail fast on something that is not HTTP at all.
            const PREFIX: &[u8] = b"HTTP/";
            let have = self.buf.len();
            for (i, expected) in PREFIX.iter().enumerate().skip(have) {
                let idx = i - have;
                match rest.get(idx) {
                    None => break,
                    Some(b) if b == expected => {}
                    Some(_) => {
                        return Err(fail_after(
                            ledger,
                            idx,
                            Http1Error::Malformed {
                                what: "status line does not start with HTTP/",
                            },
                        ))
                    }
                }
            }
        }
        let cap = self.limits.header_block_bytes;
        let room = cap.saturating_sub(self.buf.len());
        let window = rest.get(..room).unwrap_or(rest);
        let at_line_start = matches!(kind, BlockKind::Trailers);
        let end = memchr::memchr_iter(b'\n', window).find(|&i| {
            let b1 = byte_before(&self.buf, window, i, 1, at_line_start);
            let b2 = byte_before(&self.buf, window, i, 2, at_line_start);
            b1 == Some(b'\n') || (b1 == Some(b'\r') && b2 == Some(b'\n'))
        });
        let exceeded = self.limits.exceeded(Budget::HeaderBlock);
        self.take_line(rest, end, room, exceeded, ledger)
    }

    /// Buffers a line read from `rest`: through its LF at `end` if found (returns `true`), else
    /// all of `rest` if it fits in `room`, else fails with `exceeded` after charging `room`.
    fn take_line(
        &mut self,
        rest: &[u8],
        end: Option<usize>,
        room: usize,
        exceeded: BudgetExceeded,
        ledger: &mut ByteLedger,
    ) -> Result<(usize, bool), Http1Error> {
        match end {
            Some(i) => {
                let n = i + 1;
                self.take_into_buf(rest, n, ledger)?;
                Ok((n, true))
            }
            None if rest.len() > room => Err(fail_after(ledger, room, exceeded.into())),
            None => {
                self.take_into_buf(rest, rest.len(), ledger)?;
                Ok((rest.len(), false))
            }
        }
    }

    /// Charges the first `n` bytes of `rest`, then buffers them.
    fn take_into_buf(
        &mut self,
        rest: &[u8],
        n: usize,
        ledger: &mut ByteLedger,
    ) -> Result<(), Http1Error> {
        ledger.charge(n)?;
        let bytes = rest.get(..n).unwrap_or(rest);
        let needed = self.buf.len().saturating_add(bytes.len());
        if needed > self.buf.capacity() {
            // Grow geometrically, but never past the larger cap, so the allocation stays within
            // the limits too (callers only buffer up to a cap).
            let max = self
                .limits
                .header_block_bytes
                .max(self.limits.chunk_line_bytes);
            let target = self
                .buf
                .capacity()
                .saturating_mul(2)
                .max(256)
                .min(max)
                .max(needed);
            self.buf.reserve_exact(target - self.buf.len());
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    fn release_buf(&mut self) {
        if self.buf.capacity() > KEEP_CAPACITY {
            self.buf = Vec::new();
        } else {
            self.buf.clear();
        }
    }

    /// Parses the complete block in `buf`: skips a 1xx, or sets up the body and yields the head.
    fn finish_head(
        &mut self,
        ledger: &ByteLedger,
    ) -> Result<Option<ResponseEvent<'static>>, Http1Error> {
        let parsed = parse_head(&self.buf, &self.limits)?;
        self.release_buf();
        if parsed.status == 101 {
            return Err(Http1Error::SwitchingProtocols);
        }
        if parsed.status < 200 {
            self.informational = self.informational.saturating_add(1);
            if self.informational > self.limits.informational_responses {
                return Err(self.limits.exceeded(Budget::InformationalResponses).into());
            }
            return Ok(None);
        }
        let (framing, framed_ok) = framing(&parsed)?;
        if let Framing::ContentLength(length) = framing {
            let remaining = ledger.remaining();
            if length > remaining {
                return Err(Http1Error::ContentLengthExceedsBudget { length, remaining });
            }
        }
        self.reusable = framed_ok && framing != Framing::CloseDelimited && keep_alive(&parsed);
        self.state = match framing {
            Framing::NoBody | Framing::ContentLength(0) => State::Done,
            Framing::ContentLength(n) => State::Body { remaining: n },
            Framing::Chunked => State::ChunkLine,
            Framing::CloseDelimited => State::Close,
        };
        let head = ResponseHead {
            status: parsed.status,
            reason: parsed.reason,
            headers: parsed.headers,
            framing,
        };
        self.head = Some(head.clone());
        Ok(Some(ResponseEvent::Head(head)))
    }
}

/// The error `err` found at byte `n` of the current input: the `n` bytes before it are consumed
/// first, so that a ledger that cannot take them reports itself, exactly as it would if the
/// bytes had arrived separately.
fn fail_after(ledger: &mut ByteLedger, n: usize, err: Http1Error) -> Http1Error {
    match ledger.charge(n) {
        Err(e) => e.into(),
        Ok(()) => err,
    }
}

/// The byte `k` positions before `window[i]` in the stream `buf ++ window`; before the start of
/// the block it is a virtual LF when the block starts at a line start.
fn byte_before(buf: &[u8], window: &[u8], i: usize, k: usize, at_line_start: bool) -> Option<u8> {
    if let Some(j) = i.checked_sub(k) {
        return window.get(j).copied();
    }
    let back = k - i; // 1..=k bytes back from the end of `buf`
    match buf.len().checked_sub(back) {
        Some(j) => buf.get(j).copied(),
        None if at_line_start && back == buf.len() + 1 => Some(b'\n'),
        None => None,
    }
}

pub(super) fn as_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::head::{parse_decimal, trim_ows};
    use super::*;

    #[test]
    fn buffer_allocation_stays_within_the_cap() {
        let mut dec = ResponseDecoder::new(ResponseLimits::default());
        let mut ledger = ByteLedger::new(1 << 30);
        let mut input = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        input.extend(core::iter::repeat_n(b' ', 100_000));
        let mut rest = &input[..];
        let mut result = Ok(());
        while !rest.is_empty() {
            match dec.decode(rest.get(..1000).unwrap_or(rest), &mut ledger) {
                Ok(d) => rest = &rest[d.consumed..],
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
            assert!(dec.buf.capacity() <= 65536, "{}", dec.buf.capacity());
        }
        assert_eq!(
            result,
            Err(BudgetExceeded::new(Budget::HeaderBlock, 65536).into())
        );
    }

    #[test]
    fn chunk_lines() {
        assert_eq!(parse_chunk_line(b"0\r\n"), Ok(0));
        assert_eq!(parse_chunk_line(b"1a\r\n"), Ok(26));
        assert_eq!(parse_chunk_line(b"00FF\r\n"), Ok(255));
        assert_eq!(parse_chunk_line(b"5;name=value;x=\"q\"\r\n"), Ok(5));
        assert_eq!(parse_chunk_line(b"5 ; ext\r\n"), Ok(5));
        assert_eq!(parse_chunk_line(b"5 \r\n"), Ok(5));
        assert_eq!(parse_chunk_line(b"ffffffffffffffff\r\n"), Ok(u64::MAX));
        assert_eq!(
            parse_chunk_line(b"10000000000000000\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert_eq!(parse_chunk_line(b"\r\n"), Err(Http1Error::InvalidChunkSize));
        assert_eq!(
            parse_chunk_line(b"g\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert_eq!(
            parse_chunk_line(b"5g\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert_eq!(
            parse_chunk_line(b"-5\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert_eq!(
            parse_chunk_line(b"0x5\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert_eq!(
            parse_chunk_line(b"5\r;x\r\n"),
            Err(Http1Error::InvalidChunkSize)
        );
        assert!(matches!(
            parse_chunk_line(b"5\n"),
            Err(Http1Error::Malformed { .. })
        ));
        assert!(matches!(
            parse_chunk_line(b"5;a\0b\r\n"),
            Err(Http1Error::Malformed { .. })
        ));
    }

    #[test]
    fn decimal() {
        assert_eq!(parse_decimal(b"0"), Some(0));
        assert_eq!(parse_decimal(b"007"), Some(7));
        assert_eq!(parse_decimal(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal(b"18446744073709551616"), None);
        assert_eq!(parse_decimal(b""), None);
        assert_eq!(parse_decimal(b"+1"), None);
        assert_eq!(parse_decimal(b"1 2"), None);
    }

    #[test]
    fn ows_trim() {
        assert_eq!(trim_ows(b" \t a b \t"), b"a b");
        assert_eq!(trim_ows(b"   "), b"");
        assert_eq!(trim_ows(b""), b"");
    }

    #[test]
    fn byte_before_crosses_into_buffer_and_virtual_line_start() {
        assert_eq!(byte_before(b"ab", b"cd", 1, 1, false), Some(b'c'));
        assert_eq!(byte_before(b"ab", b"cd", 0, 1, false), Some(b'b'));
        assert_eq!(byte_before(b"ab", b"cd", 0, 2, false), Some(b'a'));
        assert_eq!(byte_before(b"ab", b"cd", 0, 3, false), None);
        assert_eq!(byte_before(b"ab", b"cd", 0, 3, true), Some(b'\n'));
        assert_eq!(byte_before(b"", b"\r\n", 1, 2, true), Some(b'\n'));
        assert_eq!(byte_before(b"", b"\r\n", 1, 2, false), None);
    }

    #[test]
    fn content_type_essence() {
        let head = |v: &[u8]| ResponseHead {
            status: 200,
            reason: String::new(),
            headers: vec![("Content-Type".into(), v.to_vec())],
            framing: Framing::NoBody,
        };
        assert_eq!(
            head(b"Text/Event-Stream; charset=utf-8").content_type(),
            Some("text/event-stream".into())
        );
        assert_eq!(
            head(b"application/json").content_type(),
            Some("application/json".into())
        );
        assert_eq!(head(b"json").content_type(), None);
        assert_eq!(head(b"a/b/c").content_type(), None);
        assert_eq!(head(b"\xff/x").content_type(), None);
        assert_eq!(head(b"").content_type(), None);
    }
}
