//! An incremental, bounded decoder for Server-Sent Events (`text/event-stream`).
//!
//! [`SseDecoder`] follows the WHATWG HTML "event stream interpretation" algorithm, adapted for an
//! MCP client that talks to servers it does not trust:
//!
//! - Lines end with LF, CR or CRLF, mixed freely; a CRLF split across two input pieces is one line
//!   end. A single UTF-8 byte order mark at the very start of the stream is dropped.
//! - Lines starting with `:` are comments (keep-alives) and are ignored.
//! - `data`, `event`, `id` and `retry` are understood; other fields are ignored. One leading space
//!   of a value is removed; a line without `:` is a field with an empty value.
//! - A blank line dispatches the event. Unlike a browser, the decoder also surfaces events whose
//!   data is empty (the priming events that resumable servers send with only an `id`), as long as
//!   the block had a `data`, `event` or `id` field.
//! - `retry:` with a value of ASCII digits is reported at once as [`SseItem::Retry`].
//! - Everything the decoder retains for one event (the unfinished line, the data so far, the
//!   `event` and `id` values) is capped by `max_event_bytes`. A line or event that would cross
//!   the cap fails with [`Budget::SseEvent`] as soon as that is known; the rest of it is never
//!   buffered.
//!
//! The decoder is sans-IO: feed it bytes with [`SseDecoder::decode`], which consumes a prefix of
//! its input and returns at most one item per call.
//!
//! ```
//! use mcp_sansio::internals::{SseDecoder, SseItem};
//!
//! let mut decoder = SseDecoder::new(1024);
//! let mut input: &[u8] = b"event: message\r\ndata: {\"id\":1}\r\n\r\n";
//! let mut items = Vec::new();
//! while !input.is_empty() {
//!     let step = decoder.decode(input)?;
//!     input = &input[step.consumed..];
//!     items.extend(step.item);
//! }
//! match &items[..] {
//!     [SseItem::Event(event)] => {
//!         assert_eq!(event.event.as_deref(), Some("message"));
//!         assert_eq!(event.data, b"{\"id\":1}");
//!     }
//!     other => panic!("unexpected items: {other:?}"),
//! }
//! # Ok::<(), mcp_sansio::SseError>(())
//! ```
use crate::prelude::*;

use core::mem;

use crate::budget::{Budget, BudgetExceeded};

/// The UTF-8 byte order mark, dropped once at the start of a stream.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One dispatched server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The value of the block's last `event` field, if it had one (invalid UTF-8 replaced).
    pub event: Option<String>,
    /// The values of the block's `data` fields joined with `\n`, without a trailing newline.
    /// Raw bytes, not validated as UTF-8.
    pub data: Vec<u8>,
    /// The value of the block's last `id` field, if it had one (invalid UTF-8 replaced).
    /// `Some("")` means the server reset the last event id. An `id` value containing NUL is
    /// ignored, as if the field were absent.
    pub id: Option<String>,
}

impl SseEvent {
    #[cfg(any(test, feature = "unstable-internals"))]
    /// Whether the event carries no data, like the id-only priming event a resumable server sends
    /// before its first message.
    pub fn is_priming(&self) -> bool {
        self.data.is_empty()
    }
}

/// What the decoder reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event.
    Event(SseEvent),
    /// A `retry` field: the reconnection time the server asks for, in milliseconds. Reported when
    /// its line completes; values that are not all ASCII digits, or that overflow `u64`, are
    /// ignored.
    Retry(u64),
}

/// The outcome of one [`SseDecoder::decode`] call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseStep {
    /// How many bytes of the input were consumed (the caller drops them before the next call).
    pub consumed: usize,
    /// The item completed by those bytes, if any.
    pub item: Option<SseItem>,
}

/// Why an event stream could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event, or one of its lines, grew past the `max_event_bytes` cap
    /// ([`Budget::SseEvent`]).
    #[error("event stream: {0}")]
    Budget(#[from] BudgetExceeded),
}

/// Where the decoder stands with respect to the optional byte order mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BomState {
    /// At the start of the stream; this many leading bytes have matched the BOM so far.
    Matching(u8),
    /// The BOM was dropped, or the stream did not start with one.
    Done,
}

/// An incremental, bounded `text/event-stream` decoder, as the module docs of `sse` describe it.
#[derive(Clone, Debug)]
pub struct SseDecoder {
    /// The cap on the bytes retained for one event.
    max_event_bytes: u64,
    /// BOM detection at the start of the stream.
    bom: BomState,
    /// The last line ended with CR: an LF that comes next belongs to the same line end.
    pending_cr: bool,
    /// The unfinished line, when it did not end inside one input piece.
    line: Vec<u8>,
    /// The data buffer of the current block: each `data` value followed by `\n`.
    data: Vec<u8>,
    /// The current block's `event` value, raw.
    event: Option<Vec<u8>>,
    /// The current block's `id` value, raw.
    id: Option<Vec<u8>>,
    /// The current block had a `data`, `event` or (accepted) `id` field.
    has_fields: bool,
    /// The sticky error, once one happened.
    error: Option<SseError>,
}

impl SseDecoder {
    /// A decoder for a new stream.
    ///
    /// `max_event_bytes`: cap on the bytes retained for one event (the partial line buffer +
    /// accumulated data + event/id fields). A single line counts in full against the cap, even a
    /// comment and even when it never needs to be buffered.
    pub fn new(max_event_bytes: u64) -> Self {
        SseDecoder {
            max_event_bytes,
            bom: BomState::Matching(0),
            pending_cr: false,
            line: Vec::new(),
            data: Vec::new(),
            event: None,
            id: None,
            has_fields: false,
            error: None,
        }
    }

    /// Consumes a prefix of `input` and returns at most one item.
    ///
    /// Progress contract: for non-empty input, returns consumed > 0 or an item (callers loop
    /// `while !input.is_empty()`); partial lines are buffered internally. Errors are sticky
    /// (every later call returns the same error).
    pub fn decode(&mut self, input: &[u8]) -> Result<SseStep, SseError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        match self.decode_inner(input) {
            Ok(step) => Ok(step),
            Err(error) => Err(self.fail(error)),
        }
    }

    #[cfg(any(test, feature = "unstable-internals"))]
    /// Bytes currently retained (partial line + pending event).
    pub fn buffered_len(&self) -> usize {
        let bom = match self.bom {
            BomState::Matching(n) => usize::from(n),
            BomState::Done => 0,
        };
        bom.saturating_add(self.line.len())
            .saturating_add(self.pending_len())
    }

    #[cfg(any(test, feature = "unstable-internals"))]
    /// Whether a partially received event (fields seen since the last dispatch, or a partial
    /// line) is pending; at end of stream the WHATWG algorithm discards it (there is no finish()
    /// that dispatches).
    pub fn has_partial_event(&self) -> bool {
        self.has_fields
            || !self.line.is_empty()
            || matches!(self.bom, BomState::Matching(n) if n > 0)
    }

    /// Records `error` as sticky and drops everything buffered.
    fn fail(&mut self, error: SseError) -> SseError {
        self.line = Vec::new();
        self.data = Vec::new();
        self.event = None;
        self.id = None;
        self.has_fields = false;
        self.bom = BomState::Done;
        self.error = Some(error.clone());
        error
    }

    fn decode_inner(&mut self, input: &[u8]) -> Result<SseStep, SseError> {
        let mut pos = self.skip_bom(input);
        loop {
            let Some(rest) = input.get(pos..).filter(|r| !r.is_empty()) else {
                return Ok(SseStep {
                    consumed: input.len(),
                    item: None,
                });
            };
            if mem::take(&mut self.pending_cr) && rest.first() == Some(&b'\n') {
                pos = pos.saturating_add(1);
                continue;
            }
            let Some(end) = memchr::memchr2(b'\n', b'\r', rest) else {
                // The line goes on past this piece: keep it, within the cap.
                self.check_line(self.line.len().saturating_add(rest.len()))?;
                self.line.extend_from_slice(rest);
                return Ok(SseStep {
                    consumed: input.len(),
                    item: None,
                });
            };
            let (body, terminator) = rest.split_at(end);
            self.pending_cr = terminator.first() == Some(&b'\r');
            pos = pos.saturating_add(end).saturating_add(1);
            let item = if self.line.is_empty() {
                // The whole line is in this piece: parse it in place.
                self.check_line(body.len())?;
                self.process_line(body)
            } else {
                self.check_line(self.line.len().saturating_add(body.len()))?;
                let mut line = mem::take(&mut self.line);
                line.extend_from_slice(body);
                let item = self.process_line(&line);
                line.clear();
                self.line = line;
                item
            };
            if item.is_some() {
                return Ok(SseStep {
                    consumed: pos,
                    item,
                });
            }
        }
    }

    /// Drops a leading BOM, however it is split; returns how many bytes of `input` it used.
    fn skip_bom(&mut self, input: &[u8]) -> usize {
        let BomState::Matching(matched) = self.bom else {
            return 0;
        };
        let already = usize::from(matched);
        let expected = BOM.get(already..).unwrap_or_default();
        let common = expected
            .iter()
            .zip(input)
            .take_while(|(a, b)| a == b)
            .count();
        let total = already.saturating_add(common);
        if total == BOM.len() {
            self.bom = BomState::Done;
        } else if common == input.len() {
            // Still a BOM prefix; wait for more bytes. `total` is below 3 here.
            self.bom = BomState::Matching(u8::try_from(total).unwrap_or(0));
        } else {
            // Not a BOM: the bytes matched so far start the first line.
            self.bom = BomState::Done;
            self.line
                .extend_from_slice(BOM.get(..total).unwrap_or_default());
        }
        common
    }

    /// Bytes of the pending event (data buffer and field values).
    fn pending_len(&self) -> usize {
        let field = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
        self.data
            .len()
            .saturating_add(field(&self.event))
            .saturating_add(field(&self.id))
    }

    /// Fails if a line of `line_len` bytes, on top of the pending event, crosses the cap.
    ///
    /// Every field a line adds to the event is shorter than the line itself, so an event whose
    /// lines all pass this check stays within the cap.
    fn check_line(&self, line_len: usize) -> Result<(), SseError> {
        let total = u64::try_from(self.pending_len().saturating_add(line_len)).unwrap_or(u64::MAX);
        if total > self.max_event_bytes {
            return Err(BudgetExceeded::new(Budget::SseEvent, self.max_event_bytes).into());
        }
        Ok(())
    }

    /// Interprets one complete line (without its line end).
    fn process_line(&mut self, line: &[u8]) -> Option<SseItem> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.first() == Some(&b':') {
            return None;
        }
        let (name, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let (name, rest) = line.split_at(colon);
                let value = rest.get(1..).unwrap_or_default();
                (name, value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
                self.has_fields = true;
            }
            b"event" => {
                set_field(&mut self.event, value);
                self.has_fields = true;
            }
            // An id containing NUL is ignored, as if the field were absent.
            b"id" if memchr::memchr(0, value).is_none() => {
                set_field(&mut self.id, value);
                self.has_fields = true;
            }
            b"retry" => return parse_retry(value).map(SseItem::Retry),
            _ => {}
        }
        None
    }

    /// Ends the current block: the event it describes, if any.
    fn dispatch(&mut self) -> Option<SseItem> {
        let mut data = mem::take(&mut self.data);
        let event = self.event.take();
        let id = self.id.take();
        if !mem::take(&mut self.has_fields) {
            return None;
        }
        if data.last() == Some(&b'\n') {
            data.pop();
        }
        Some(SseItem::Event(SseEvent {
            event: event.map(lossy_string),
            data,
            id: id.map(lossy_string),
        }))
    }
}

/// Replaces `slot` with `value`, reusing its allocation.
fn set_field(slot: &mut Option<Vec<u8>>, value: &[u8]) {
    let buf = slot.get_or_insert_with(Vec::new);
    buf.clear();
    buf.extend_from_slice(value);
}

/// A `retry` value: one or more ASCII digits that fit in `u64`.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        let digit = if b.is_ascii_digit() {
            b - b'0'
        } else {
            return None;
        };
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

/// `bytes` as a string, invalid UTF-8 replaced (without a copy when it is valid).
fn lossy_string(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(decoder: &mut SseDecoder, mut input: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        while !input.is_empty() {
            let step = decoder.decode(input).expect("no error");
            assert!(step.consumed > 0 || step.item.is_some());
            input = input.get(step.consumed..).expect("consumed within input");
            items.extend(step.item);
        }
        items
    }

    #[test]
    fn retry_parsing() {
        assert_eq!(parse_retry(b"0"), Some(0));
        assert_eq!(parse_retry(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_retry(b"18446744073709551616"), None);
        assert_eq!(parse_retry(b""), None);
        assert_eq!(parse_retry(b" 1"), None);
        assert_eq!(parse_retry(b"+1"), None);
    }

    #[test]
    fn crlf_split_is_one_line_end() {
        let mut d = SseDecoder::new(100);
        assert!(decode_all(&mut d, b"data: a\r").is_empty());
        // The LF completes the CRLF; it must not be read as a blank line.
        assert!(decode_all(&mut d, b"\n").is_empty());
        assert!(d.has_partial_event());
        let items = decode_all(&mut d, b"\r\n");
        assert_eq!(items.len(), 1);
    }

    #[test]
    fn partial_bom_then_mismatch_starts_the_line() {
        let mut d = SseDecoder::new(100);
        assert!(decode_all(&mut d, b"\xEF\xBB").is_empty());
        assert_eq!(d.buffered_len(), 2);
        assert!(d.has_partial_event());
        // "\xEF\xBBdata: x" is a field named "\xEF\xBBdata", which is ignored.
        assert!(decode_all(&mut d, b"data: x\n\n").is_empty());
        assert!(!d.has_partial_event());
    }

    #[test]
    fn error_is_sticky_and_frees_buffers() {
        let mut d = SseDecoder::new(8);
        let err = d.decode(b"data: 0123456789").unwrap_err();
        assert_eq!(
            err,
            SseError::Budget(BudgetExceeded::new(Budget::SseEvent, 8))
        );
        assert_eq!(d.buffered_len(), 0);
        assert_eq!(d.decode(b"\n\n").unwrap_err(), err);
        assert_eq!(d.decode(b"").unwrap_err(), err);
    }
}
