//! The one-pass reading of a `tools/call` result.
//!
//! The result's text is read once, front to back: the members of the result, each content
//! block and its fields are recognised as they come, every string a block keeps is decoded
//! straight into its final `String` (sized exactly from the string's extent, so its bytes are
//! copied once), and everything else is only checked ([`crate::json::skip`], never evaluated:
//! `1e400` is as good as `1`). Unknown and malformed blocks become the same counters as in the
//! serde reading of [`super::parse_call_result`] without being buffered.
//!
//! The pass decides only what it is certain the serde reading decides the same way; anywhere
//! else (a key written with escapes, a block or resource written as an array, a decoded string
//! with a lone surrogate, a known member given twice or of the wrong type at the result's level,
//! `input_required`, input that is not JSON) it answers [`Unsure`] and the caller reads the
//! message the checking way, which gives the result or the reason.
//!
//! Because it checks every byte of the result, it is also what validates a `result` that the
//! envelope reader only delimited (see `jsonrpc::parse_message_for_call`).

use crate::prelude::*;

use serde_json::value::RawValue;

use super::ResourceWire;
use super::{block_of, Answer, AnswerError, Block, BlockWire, Blocks, CallAnswer, CallResult};
use crate::error::truncated;
use crate::json::{self, ws};

/// The pass is not certain: the serde reading decides.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unsure;

type Sure<T> = Result<T, Unsure>;

/// Reads the `tools/call` result `text` (one JSON value, whitespace around it allowed). `Ok` is
/// exactly what the serde reading gives for that result; [`Unsure`] leaves the decision to it.
#[cfg(test)]
pub(crate) fn read(text: &str, max_blocks: usize) -> Sure<Answer> {
    let (answer, end) = read_at(text, ws(text.as_bytes(), 0), max_blocks)?;
    if ws(text.as_bytes(), end) != text.len() {
        return Err(Unsure);
    }
    Ok(answer)
}

/// Reads the `tools/call` result that starts at `at` in `text` (a whole message), checking it
/// as JSON; returns the answer, exactly as the serde reading gives it for that result, and where
/// the result ends; at most `max_blocks` usable blocks are kept (past them, the other blocks
/// are only checked and the answer is [`AnswerError::TooManyBlocks`]). [`Unsure`] leaves the
/// decision to the serde reading.
pub(crate) fn read_at(text: &str, at: usize, max_blocks: usize) -> Sure<(Answer, usize)> {
    let b = text.as_bytes();
    let r = Reader {
        text,
        b,
        max_blocks,
    };
    let mut i = at;
    r.expect(i, b'{')?;
    i = ws(b, i + 1);
    let mut content: Option<Option<Blocks>> = None;
    let mut structured: Option<Option<(usize, usize)>> = None;
    let mut is_error: Option<Option<bool>> = None;
    let mut result_type: Option<Option<&str>> = None;
    let mut seen_input_requests = false;
    let mut seen_request_state = false;
    if b.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            let (key, at) = r.key(i)?;
            let end = match key {
                b"content" => {
                    once(&content)?;
                    let (blocks, end) = r.content(at)?;
                    content = Some(blocks);
                    end
                }
                b"structuredContent" => {
                    once(&structured)?;
                    let end = json::skip(b, at).ok_or(Unsure)?;
                    // `null` is a value, kept like any other (distinct from absent).
                    structured = Some(Some((at, end)));
                    end
                }
                b"isError" => {
                    once(&is_error)?;
                    let (value, end) = match b.get(at) {
                        Some(b't') => (Some(true), r.word(at, b"true")?),
                        Some(b'f') => (Some(false), r.word(at, b"false")?),
                        Some(b'n') => (None, r.word(at, b"null")?),
                        _ => return Err(Unsure),
                    };
                    is_error = Some(value);
                    end
                }
                b"resultType" => {
                    once(&result_type)?;
                    let (value, end) = match b.get(at) {
                        Some(b'n') => (None, r.word(at, b"null")?),
                        Some(b'"') => {
                            let (end, escaped) = json::string(b, at, true).ok_or(Unsure)?;
                            if escaped {
                                // serde borrows it: an escaped one is refused there.
                                return Err(Unsure);
                            }
                            (Some(text.get(at + 1..end - 1).ok_or(Unsure)?), end)
                        }
                        _ => return Err(Unsure),
                    };
                    result_type = Some(value);
                    end
                }
                b"inputRequests" | b"requestState" => {
                    let seen = if key == b"inputRequests" {
                        &mut seen_input_requests
                    } else {
                        &mut seen_request_state
                    };
                    if *seen {
                        return Err(Unsure);
                    }
                    *seen = true;
                    json::skip(b, at).ok_or(Unsure)?
                }
                _ => json::skip(b, at).ok_or(Unsure)?,
            };
            i = ws(b, end);
            match b.get(i) {
                Some(b',') => i = ws(b, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return Err(Unsure),
            }
        }
    }
    let end = i;
    let answer = decide(text, content, structured, is_error, result_type)?;
    Ok((answer, end))
}

/// The answer from the members of a result, as the serde reading decides it.
fn decide(
    text: &str,
    content: Option<Option<Blocks>>,
    structured: Option<Option<(usize, usize)>>,
    is_error: Option<Option<bool>>,
    result_type: Option<Option<&str>>,
) -> Sure<Answer> {
    // Past the limit nothing else counts: the serde reading stops there too.
    if matches!(&content, Some(Some(b)) if b.over) {
        return Ok(Err(AnswerError::TooManyBlocks));
    }
    match result_type.flatten() {
        None | Some("complete") => {}
        Some("input_required") => return Err(Unsure),
        Some(other) => {
            return Ok(Err(format!(
                "unexpected resultType {:?}",
                truncated(other, 64)
            )
            .into()))
        }
    }
    let Some(Blocks {
        content,
        dropped_unknown,
        dropped_invalid,
        total,
        ..
    }) = content.flatten()
    else {
        return Ok(Err("content is missing or not an array".into()));
    };
    if content.is_empty() && total > 0 {
        return Ok(Err(format!(
            "every content block was dropped ({dropped_unknown} of unknown type, {dropped_invalid} malformed)"
        )
        .into()));
    }
    let structured_content = match structured.flatten() {
        None => None,
        Some((at, end)) => {
            let raw = text.get(at..end).ok_or(Unsure)?;
            Some(serde_json::from_str::<Box<RawValue>>(raw).map_err(|_| Unsure)?)
        }
    };
    Ok(Ok(CallAnswer::Complete(CallResult {
        content,
        dropped_unknown,
        dropped_invalid,
        structured_content,
        is_error: is_error.flatten().unwrap_or(false),
    })))
}

/// A member of the result's own level may be given once (serde's derived reading refuses a
/// second one).
fn once<T>(slot: &Option<T>) -> Sure<()> {
    if slot.is_some() {
        Err(Unsure)
    } else {
        Ok(())
    }
}

/// A string member of a block or resource: absent (`None`), `null` (`Some(None)`) or a string.
type Field = Option<Option<String>>;

/// What a string member's value came to.
enum Value {
    Null,
    Str(String),
    /// Not a string nor `null`: the block is malformed.
    Other,
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    /// The most usable blocks a result keeps.
    max_blocks: usize,
}

impl<'a> Reader<'a> {
    fn expect(&self, i: usize, c: u8) -> Sure<()> {
        if self.b.get(i) == Some(&c) {
            Ok(())
        } else {
            Err(Unsure)
        }
    }

    fn word(&self, i: usize, w: &[u8]) -> Sure<usize> {
        if self.b.get(i..i + w.len()) == Some(w) {
            Ok(i + w.len())
        } else {
            Err(Unsure)
        }
    }

    fn is_null(&self, i: usize) -> bool {
        self.b.get(i..i + 4) == Some(b"null")
    }

    /// The key at `i` (a string without escapes) and where its value starts.
    fn key(&self, i: usize) -> Sure<(&'a [u8], usize)> {
        self.expect(i, b'"')?;
        let (end, escaped) = json::string(self.b, i, false).ok_or(Unsure)?;
        if escaped {
            return Err(Unsure);
        }
        let key = self.b.get(i + 1..end - 1).ok_or(Unsure)?;
        let colon = ws(self.b, end);
        self.expect(colon, b':')?;
        Ok((key, ws(self.b, colon + 1)))
    }

    /// `content` at `i`: `null` (`None`) or an array of blocks. Returns where it ends.
    fn content(&self, i: usize) -> Sure<(Option<Blocks>, usize)> {
        if self.is_null(i) {
            return Ok((None, i + 4));
        }
        self.expect(i, b'[')?;
        let mut blocks = Blocks::new();
        let mut i = ws(self.b, i + 1);
        if self.b.get(i) == Some(&b']') {
            return Ok((Some(blocks), i + 1));
        }
        loop {
            let end = if blocks.over {
                // Past the limit: only checked, as serde checks what follows.
                json::skip(self.b, i).ok_or(Unsure)?
            } else {
                let (block, end) = self.block(i)?;
                blocks.add(block, self.max_blocks);
                end
            };
            i = ws(self.b, end);
            match self.b.get(i) {
                Some(b',') => i = ws(self.b, i + 1),
                Some(b']') => return Ok((Some(blocks), i + 1)),
                _ => return Err(Unsure),
            }
        }
    }

    /// One content block at `i`, and where it ends.
    fn block(&self, i: usize) -> Sure<(Block, usize)> {
        match self.b.get(i) {
            Some(b'{') => {}
            // Positional: serde reads an array as the fields in order.
            Some(b'[') | None => return Err(Unsure),
            // Any other value is not a block.
            Some(_) => return Ok((Block::Invalid, json::skip(self.b, i).ok_or(Unsure)?)),
        }
        let (mut ty, mut text, mut data, mut mime_type, mut uri, mut name): (
            Field,
            Field,
            Field,
            Field,
            Field,
            Field,
        ) = (None, None, None, None, None, None);
        let mut resource: Option<Option<ResourceWire>> = None;
        let mut ok = true;
        let end = self.object(i, |key, at| {
            let slot = match key {
                b"type" => &mut ty,
                b"text" => &mut text,
                b"data" => &mut data,
                b"mimeType" => &mut mime_type,
                b"uri" => &mut uri,
                b"name" => &mut name,
                b"resource" => {
                    if !ok || resource.is_some() {
                        ok = false;
                        return json::skip(self.b, at).ok_or(Unsure);
                    }
                    return match self.b.get(at) {
                        Some(b'{') => {
                            let (r, end) = self.resource(at)?;
                            match r {
                                Some(r) => resource = Some(Some(r)),
                                None => ok = false,
                            }
                            Ok(end)
                        }
                        Some(b'[') | None => Err(Unsure),
                        Some(b'n') if self.is_null(at) => {
                            resource = Some(None);
                            Ok(at + 4)
                        }
                        Some(_) => {
                            ok = false;
                            json::skip(self.b, at).ok_or(Unsure)
                        }
                    };
                }
                _ => return json::skip(self.b, at).ok_or(Unsure),
            };
            self.field(slot, &mut ok, at)
        })?;
        // `type` is required and may not be null.
        let ty = match ty {
            Some(Some(t)) if ok => t,
            _ => return Ok((Block::Invalid, end)),
        };
        let wire = BlockWire {
            ty,
            text: text.flatten(),
            data: data.flatten(),
            mime_type: mime_type.flatten(),
            uri: uri.flatten(),
            name: name.flatten(),
            resource: resource.flatten(),
        };
        Ok((block_of(wire), end))
    }

    /// A block's `resource` object at `i`: `None` if malformed. Returns where it ends.
    fn resource(&self, i: usize) -> Sure<(Option<ResourceWire>, usize)> {
        let (mut uri, mut mime_type, mut text, mut blob): (Field, Field, Field, Field) =
            (None, None, None, None);
        let mut ok = true;
        let end = self.object(i, |key, at| {
            let slot = match key {
                b"uri" => &mut uri,
                b"mimeType" => &mut mime_type,
                b"text" => &mut text,
                b"blob" => &mut blob,
                _ => return json::skip(self.b, at).ok_or(Unsure),
            };
            self.field(slot, &mut ok, at)
        })?;
        // `uri` is required and may not be null.
        let uri = match uri {
            Some(Some(u)) if ok => u,
            _ => return Ok((None, end)),
        };
        let r = ResourceWire {
            uri,
            mime_type: mime_type.flatten(),
            text: text.flatten(),
            blob: blob.flatten(),
        };
        Ok((Some(r), end))
    }

    /// Walks the object at `i` (its `{`), calling `member(key, value_start)` for each member,
    /// which returns where the value ends. Returns where the object ends.
    fn object(&self, i: usize, mut member: impl FnMut(&[u8], usize) -> Sure<usize>) -> Sure<usize> {
        let mut i = ws(self.b, i + 1);
        if self.b.get(i) == Some(&b'}') {
            return Ok(i + 1);
        }
        loop {
            let (key, at) = self.key(i)?;
            let end = member(key, at)?;
            i = ws(self.b, end);
            match self.b.get(i) {
                Some(b',') => i = ws(self.b, i + 1),
                Some(b'}') => return Ok(i + 1),
                _ => return Err(Unsure),
            }
        }
    }

    /// A string member at `at` into `slot`; a repeated member or one that is neither a string
    /// nor `null` clears `ok` (once it is clear, values are only checked). Returns where the value
    /// ends.
    fn field(&self, slot: &mut Field, ok: &mut bool, at: usize) -> Sure<usize> {
        if !*ok || slot.is_some() {
            *ok = false;
            return json::skip(self.b, at).ok_or(Unsure);
        }
        let (value, end) = self.value(at)?;
        match value {
            Value::Null => *slot = Some(None),
            Value::Str(s) => *slot = Some(Some(s)),
            Value::Other => *ok = false,
        }
        Ok(end)
    }

    /// The value at `i` for a string member: decoded if it is a string.
    fn value(&self, i: usize) -> Sure<(Value, usize)> {
        match self.b.get(i) {
            Some(b'"') => {
                // Lone surrogates make serde refuse the block, which it reads as malformed;
                // rare enough to leave to it.
                let (s, end) = decode(self.text, i).ok_or(Unsure)?;
                Ok((Value::Str(s), end))
            }
            Some(b'n') if self.is_null(i) => Ok((Value::Null, i + 4)),
            Some(_) => Ok((Value::Other, json::skip(self.b, i).ok_or(Unsure)?)),
            None => Err(Unsure),
        }
    }
}

/// Four hex digits at `i` of `b`.
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let mut v = 0;
    for &d in b.get(i..i + 4)? {
        v = (v << 4) | (d as char).to_digit(16)?;
    }
    Some(v)
}

/// Where the string whose opening quote is at `i` seems to end: the first quote after it that
/// an even run of backslashes precedes, found with `memchr` and not checked (only a bound for the
/// capacity of the decoded string; [`decode`] checks). Each run of backslashes is counted once,
/// by the quote that follows it: linear.
fn end_bound(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while let Some(p) = b.get(j..).and_then(|rest| memchr::memchr(b'"', rest)) {
        let k = j + p;
        let before = b.get(i + 1..k).unwrap_or_default();
        let run = before.iter().rev().take_while(|&&c| c == b'\\').count();
        if run % 2 == 0 {
            return k;
        }
        j = k + 1;
    }
    b.len()
}

/// How far [`room`] looks for the end of a string.
const LOOK_AHEAD: usize = 4096;

/// Room for the decoded contents of the string whose opening quote is at `i` of `b`, which are
/// never longer than the string as written. A string that ends within [`LOOK_AHEAD`] bytes gets
/// what [`end_bound`] finds there; a longer one gets the rest of the input, so that it is not
/// searched twice (the allocator hands out untouched pages, which cost nothing until written,
/// and [`decode`] gives back what was not used).
fn room(b: &[u8], i: usize) -> usize {
    let near = b.get(..i.saturating_add(1 + LOOK_AHEAD)).unwrap_or(b);
    match end_bound(near, i) {
        end if end < near.len() => end - (i + 1),
        _ => b.len().saturating_sub(i + 1),
    }
}

/// What each one-letter escape stands for, by its letter; 0 where the letter is not one (`u`
/// and anything invalid).
const UNESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Bytes [`decode`] copies and looks at in one step: four words.
const STEP: usize = 32;

/// Bytes of the output [`decode`] zeroes at a time, just ahead of where it writes (so that they
/// are still in the cache when it does).
const CHUNK: usize = 2048;

/// A step without a special byte that crosses a multiple of this many bytes of output hands the
/// rest of its run to `memchr` (found at once, copied at once): a long run is looked at a step
/// at a time for at most this many bytes.
const LONG: usize = 512;

/// The index of the first `"`, `\` or control byte of `src`, [`STEP`] if there is none. A word
/// at a time: most runs between escapes end in the first or second word.
#[inline(always)]
fn first_special(src: &[u8; STEP]) -> usize {
    let mut at = 0;
    for word in src.chunks_exact(8) {
        let Some(word) = word.first_chunk::<8>() else {
            break;
        };
        let m = json::specials(u64::from_le_bytes(*word));
        if m != 0 {
            return at + (m.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    STEP
}

/// Why [`steps`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// At a special byte that is not a one-letter escape: the closing quote, a `\u` escape, or
    /// a byte that is not allowed.
    Special,
    /// Less than a step of output left.
    Room,
    /// Less than a step of input left.
    Tail,
    /// In a long run of plain bytes.
    Long,
}

/// Decodes the string contents at `j` of `b` into `out` at `o`, a step at a time, for as long as
/// plain bytes and one-letter escapes follow and a whole step fits in both: where it stopped in
/// each, and why. Each step copies [`STEP`] bytes whole and keeps those before the first special
/// one (`o` moves past them only): bytes past `o` are scratch.
#[inline(always)]
fn steps(b: &[u8], out: &mut [u8], mut j: usize, mut o: usize) -> (usize, usize, Stop) {
    loop {
        let Some(src) = b.get(j..).and_then(|r| r.first_chunk::<STEP>()) else {
            return (j, o, Stop::Tail);
        };
        let Some(dst) = out.get_mut(o..).and_then(|d| d.first_chunk_mut::<STEP>()) else {
            return (j, o, Stop::Room);
        };
        *dst = *src;
        let n = first_special(src);
        if n == STEP {
            (j, o) = (j + STEP, o + STEP);
            if o % LONG < STEP {
                return (j, o, Stop::Long);
            }
            continue;
        }
        (j, o) = (j + n, o + n);
        if let Some(&[b'\\', letter]) = src.get(n..n + 2) {
            let c = UNESCAPE[usize::from(letter)];
            if c != 0 {
                if let Some(slot) = out.get_mut(o) {
                    *slot = c;
                    (j, o) = (j + 2, o + 1);
                    continue;
                }
            }
        }
        return (j, o, Stop::Special);
    }
}

/// `out` with at least its first `n` bytes initialised: zeroed past its length, at least a
/// [`CHUNK`] more, within its capacity. `None` if `n` is past the capacity (which holds any valid
/// string: the string is not).
#[cold]
#[inline(never)]
fn zeroed(mut out: Vec<u8>, n: usize) -> Option<Vec<u8>> {
    if n > out.capacity() {
        return None;
    }
    let len = n.max(out.len() + CHUNK).min(out.capacity());
    out.resize(len, 0);
    Some(out)
}

/// The escape whose backslash is at `k` of `b`: where it ends and the character it stands for
/// (`None` if it is not a valid escape, or is a lone surrogate).
#[inline(never)]
fn escape(b: &[u8], k: usize) -> Option<(usize, char)> {
    let letter = *b.get(k + 1)?;
    let c = UNESCAPE[usize::from(letter)];
    if c != 0 {
        return Some((k + 2, char::from(c)));
    }
    if letter != b'u' {
        return None;
    }
    let v = hex4(b, k + 2)?;
    let mut end = k + 6;
    let code = match v {
        0xD800..=0xDBFF => {
            if b.get(end..end + 2) != Some(b"\\u") {
                return None;
            }
            let low = hex4(b, end + 2)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            end += 6;
            0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
        }
        0xDC00..=0xDFFF => return None,
        _ => v,
    };
    Some((end, char::from_u32(code)?))
}

/// Room for a string of at most this many bytes as written is a buffer on the stack, and its
/// `String` is allocated once, exactly (a heap buffer with a step of room would be shrunk, which
/// costs more than the copy).
const TINY: usize = 32;

/// As [`TINY`], with a larger buffer on the stack (a string as long as this given its step of
/// room would be shrunk too).
const SMALL: usize = 256;

/// Where [`decode_into`] writes: a heap buffer that grows (zeroed as it goes), or a fixed one on
/// the stack.
trait Out {
    /// What is written so far and the room after it (all of it initialised).
    fn bytes(&mut self) -> &mut [u8];
    /// At least the first `n` bytes initialised; `None` if there cannot be.
    fn room(&mut self, n: usize) -> Option<()>;
    /// `run` written at `o`, with room for four more bytes after it (an escape's character).
    fn run_at(&mut self, o: usize, run: &[u8]) -> Option<()>;
}

impl Out for Vec<u8> {
    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        self
    }

    #[inline(always)]
    fn room(&mut self, n: usize) -> Option<()> {
        *self = zeroed(core::mem::take(self), n)?;
        Some(())
    }

    #[inline(always)]
    fn run_at(&mut self, o: usize, run: &[u8]) -> Option<()> {
        if self.len() < o + run.len() + 4 {
            // Copied rather than zeroed and then written; what follows is zeroed as it comes.
            self.truncate(o);
            self.extend_from_slice(run);
            self.room(o + run.len() + 4)
        } else {
            self.get_mut(o..o + run.len())?.copy_from_slice(run);
            Some(())
        }
    }
}

impl<const N: usize> Out for [u8; N] {
    #[inline(always)]
    fn bytes(&mut self) -> &mut [u8] {
        self
    }

    #[inline(always)]
    fn room(&mut self, n: usize) -> Option<()> {
        (n <= N).then_some(())
    }

    #[inline(always)]
    fn run_at(&mut self, o: usize, run: &[u8]) -> Option<()> {
        self.get_mut(o..o + run.len() + 4)?
            .get_mut(..run.len())?
            .copy_from_slice(run);
        Some(())
    }
}

/// Decodes the JSON string whose opening quote is at `i` of `text`, checking it as serde_json
/// does when it decodes one (no raw control bytes, valid escapes, no lone surrogates): `None`
/// where it is not such a string. Returns the string and the index after its closing quote.
///
/// The decoded text is written once, into a buffer sized beforehand ([`room`], plus a step):
/// on the stack for a short string (then copied once into its exact `String`), else on the heap,
/// zeroed a [`CHUNK`] at a time just ahead of the writes, which becomes the `String` (a buffer
/// sized from the rest of the input is shrunk with `shrink_to_fit`, which the system allocators
/// shrink in place). Either is checked as UTF-8 once, as `forbid(unsafe_code)` wants.
fn decode(text: &str, i: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let room = room(b, i);
    if room <= TINY {
        return decode_on_stack::<{ TINY + STEP }>(b, i);
    }
    if room <= SMALL {
        return decode_on_stack::<{ SMALL + STEP }>(b, i);
    }
    decode_on_heap(b, i, room)
}

/// [`decode`] into a buffer on the heap with room for `room` bytes and a step.
#[inline(never)]
fn decode_on_heap(b: &[u8], i: usize, room: usize) -> Option<(String, usize)> {
    let mut out: Vec<u8> = Vec::with_capacity(room + STEP);
    out.resize(out.capacity().min(CHUNK), 0);
    let (o, end) = decode_into(b, i, &mut out)?;
    out.truncate(o);
    if out.capacity() - o > o / 8 + 8 {
        out.shrink_to_fit();
    }
    let s = String::from_utf8(out).ok()?;
    Some((s, end))
}

/// [`decode`] into a buffer of `N` bytes on the stack (room for the string and a step).
#[inline(never)]
fn decode_on_stack<const N: usize>(b: &[u8], i: usize) -> Option<(String, usize)> {
    let mut out = [0u8; N];
    let (o, end) = decode_into(b, i, &mut out)?;
    let s = String::from_utf8(out.get(..o)?.to_vec()).ok()?;
    Some((s, end))
}

/// The work of [`decode`], into `out`: how many bytes it wrote, and the index after the string's
/// closing quote. [`steps`] does the common work a [`STEP`] at a time: it copies the step whole,
/// finds the first special byte in it a word at a time and decodes a one-letter escape in place;
/// the rest (the closing quote, `\u` escapes, refusals, the last bytes of the input, long runs
/// found with `memchr`, more room) is done here.
#[inline(always)]
fn decode_into(b: &[u8], i: usize, out: &mut impl Out) -> Option<(usize, usize)> {
    let (mut j, mut o) = (i + 1, 0);
    loop {
        let stop;
        (j, o, stop) = steps(b, out.bytes(), j, o);
        let k = match stop {
            Stop::Special => j,
            Stop::Room => {
                out.room(o + STEP)?;
                continue;
            }
            Stop::Long | Stop::Tail => json::next_special(b, j)?,
        };
        // The plain bytes up to the special one at `k` (none after `Special`).
        let plain = b.get(j..k)?;
        out.run_at(o, plain)?;
        (j, o) = (k, o + plain.len());
        match *b.get(j)? {
            b'"' => return Some((o, j + 1)),
            b'\\' => {}
            _ => return None,
        }
        let (end, c) = escape(b, j)?;
        let mut utf8 = [0u8; 4];
        let c = c.encode_utf8(&mut utf8).as_bytes();
        out.bytes().get_mut(o..o + c.len())?.copy_from_slice(c);
        (j, o) = (end, o + c.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether [`decode`] reads the string that starts `doc` as serde_json does: the same
    /// string, ending at the same place (serde_json's reading of the first value of a stream
    /// stops right after a string), or refused by both.
    fn agrees_with_serde_json(doc: &str) -> Result<(), String> {
        let mut values = serde_json::Deserializer::from_str(doc).into_iter::<String>();
        let theirs = match values.next() {
            Some(Ok(s)) => Some((s, values.byte_offset())),
            _ => None,
        };
        let ours = decode(doc, 0);
        if ours == theirs {
            Ok(())
        } else {
            Err(format!("{doc:?}: ours {ours:?}, serde_json {theirs:?}"))
        }
    }

    /// Every kind of escape, a multi-byte character on either side, and bytes a string may not
    /// hold raw, at every place of the first steps (each of a step's four words, and either
    /// side of every step boundary), either side of the sizes decoded on the stack, where long
    /// runs are taken whole, and past the first zeroed chunk; the input ending right after the
    /// string or a little later (so that the last steps of the input are read byte by byte from
    /// anywhere).
    #[test]
    fn decodes_any_escape_at_any_place_of_a_step_as_serde_json() {
        let specials = [
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\t",
            "\\u00e9",
            "\\u20AC",
            "\\ud83d\\ude00",
            "\\u0000",
            "\\u001f",
            "\\n\\t\\\"",
            "é",
            "😀",
            // Refused.
            "\u{1}",
            "\u{1f}",
            "\u{0}",
            "\\x",
            "\\u12",
            "\\ud800",
            "\\udc00",
            "\\ud800\\u0041",
            "\\U0041",
        ];
        let places = (0..=72)
            .chain(240..=270)
            .chain(500..=530)
            .chain(2030..=2060);
        // With `at`, these end the input at every place of a step after the string.
        let tails = ["", ",1]", &" ".repeat(31), &" ".repeat(33)];
        let mut failures = Vec::new();
        for at in places {
            for filler in ["a", "é"] {
                let before: String = filler.repeat(at / filler.len());
                for special in specials {
                    for after in ["", "😀 and more after it", "xyz\\n"] {
                        let t = format!("\"{before}{special}{after}\"");
                        for tail in tails {
                            if let Err(e) = agrees_with_serde_json(&format!("{t}{tail}")) {
                                failures.push(e);
                            }
                        }
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures, first: {:?}",
            failures.len(),
            failures.first()
        );
    }

    use proptest::prelude::Strategy as _;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Strings made of plain runs (some long), multi-byte characters, every valid escape and
        /// invalid ones (raw control bytes, unknown letters, short or lone `\u` escapes, a raw
        /// backslash anywhere), followed by more input or not: decoded and refused as serde_json
        /// does.
        #[test]
        fn decodes_generated_strings_as_serde_json(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => "[a-zA-Z0-9 .,:;{}()\\[\\]#@~!?'`^&*+=|<>%$-]{0,40}",
                    1 => "[a-z]{500,700}",
                    2 => proptest::sample::select(vec!["é", "€", "😀", "ߦ", "\u{7f}", "\u{ffff}"]).prop_map(String::from),
                    3 => proptest::sample::select(vec![
                        "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t", "\\u00e9", "\\u20ac",
                        "\\uFFFF", "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\u0000",
                    ]).prop_map(String::from),
                    1 => proptest::sample::select(vec![
                        "\u{1}", "\u{1f}", "\u{0}", "\\x", "\\u12", "\\u12g4", "\\ud800", "\\udfff", "\\ud800\\u0041",
                        "\\ud800\\n", "\\", "\\\\\\",
                    ]).prop_map(String::from),
                ],
                0..40,
            ),
            tail in proptest::sample::select(vec!["", "}", ",1]", " , \"next\": \"x\\n\"}"]),
            pad in 0usize..40,
        ) {
            let t = format!("\"{}\"", pieces.concat());
            let checked = agrees_with_serde_json(&format!("{t}{}{tail}", " ".repeat(pad)));
            proptest::prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
        }
    }

    #[test]
    fn decodes_strings_as_serde_json() {
        for t in [
            r#""plain""#,
            r#""""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\ud83d\ude00x""#,
            r#""é \"q\" 😀""#,
            r#""\\""#,
            r#""ends with escape\n""#,
        ] {
            let doc = format!("{t} ,");
            let theirs: String = serde_json::from_str(t).unwrap();
            assert_eq!(decode(&doc, 0), Some((theirs, t.len())), "{t}");
        }
        for bad in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "\"raw \u{1}\"",
            r#""unterminated"#,
            r#""ends in \"#,
        ] {
            assert_eq!(decode(bad, 0), None, "{bad:?}");
            assert!(serde_json::from_str::<String>(bad).is_err(), "{bad:?}");
        }
    }

    /// `zeroed` initialises up to the capacity itself and refuses one byte more. [`decode`]
    /// never asks for exactly the capacity (a string whose decoded bytes fill its room is all
    /// plain bytes, which a long run or the buffer's full length carries to the closing quote
    /// without asking for room), so only a direct case holds this edge.
    #[test]
    fn zeroed_initialises_up_to_the_capacity_and_refuses_one_byte_more() {
        for asked in [STEP, CHUNK + STEP, 3 * CHUNK + 1] {
            let cap = Vec::<u8>::with_capacity(asked).capacity();
            let v = zeroed(Vec::with_capacity(cap), cap).expect("the capacity itself fits");
            assert_eq!((v.len(), v.capacity()), (cap, cap), "{cap}");
            assert!(v.iter().all(|&b| b == 0), "{cap}");
            assert_eq!(zeroed(Vec::with_capacity(cap), cap + 1), None, "{cap}");
            // Short of the capacity: a chunk past its length, within the capacity.
            let v = zeroed(Vec::with_capacity(cap), 1).expect("one byte fits");
            assert_eq!(v.len(), CHUNK.min(cap), "{cap}");
        }
    }

    #[test]
    fn the_capacity_bound_covers_the_decoded_string() {
        let t = r#""a\"b\\" rest"#;
        assert_eq!(end_bound(t.as_bytes(), 0), 7);
        let (s, end) = decode(t, 0).unwrap();
        assert_eq!((s.as_str(), end), ("a\"b\\", 8));
        assert!(s.capacity() >= s.len());
        // Malformed input gives some bound, never a panic.
        assert_eq!(end_bound(b"\"\\", 0), 2);
    }

    #[test]
    fn long_strings_are_sized_from_the_rest_and_give_back_what_they_do_not_use() {
        let tail = format!(", \"{}\"", "y".repeat(64 * 1024));
        for len in [
            1,
            LOOK_AHEAD - 3,
            LOOK_AHEAD - 2,
            LOOK_AHEAD - 1,
            LOOK_AHEAD,
            LOOK_AHEAD + 1,
            3 * LOOK_AHEAD + 5,
        ] {
            // Escaped quotes, backslashes and newlines throughout, so that the look-ahead ends
            // anywhere in an escape.
            let written: String = (0..len)
                .map(|n| match n % 7 {
                    0 => "\\\"",
                    3 => "\\n",
                    5 => "\\\\",
                    _ => "x",
                })
                .collect();
            let t = format!("\"{written}\"");
            let doc = format!("{t}{tail}");
            let theirs: String = serde_json::from_str(&t).unwrap();
            let (s, end) = decode(&doc, 0).unwrap();
            assert_eq!((s.as_str(), end), (theirs.as_str(), t.len()), "{len}");
            assert!(
                s.capacity() <= s.len() + s.len() / 8 + 8,
                "{len}: {} for {}",
                s.capacity(),
                s.len()
            );
            // The closing quote, at `t.len() - 1`, is found only within the look-ahead.
            let expected = if t.len() - 1 < 1 + LOOK_AHEAD {
                t.len() - 2
            } else {
                doc.len() - 1
            };
            assert_eq!(room(doc.as_bytes(), 0), expected, "{len}");
        }
        // The look-ahead's edge: a closing quote `LOOK_AHEAD` bytes after the opening one is
        // found, one byte further is not.
        for (written, expected) in [
            (LOOK_AHEAD - 1, LOOK_AHEAD - 1),
            (LOOK_AHEAD, LOOK_AHEAD + 1 + tail.len()),
        ] {
            let doc = format!("\"{}\"{tail}", "x".repeat(written));
            assert_eq!(room(doc.as_bytes(), 0), expected, "{written}");
        }
        // A string left open never gets more than the rest of the input.
        assert_eq!(room(b"\"abc", 0), 3);
        assert_eq!(decode("\"abc", 0), None);
    }

    /// A string decoded on the heap and sized within the look-ahead gives back what its escapes
    /// saved: a few bytes decoded from `\u` escapes written past [`SMALL`], and a long string
    /// whose escapes save less than its room's step and an eighth.
    #[test]
    fn heap_strings_sized_within_the_look_ahead_give_back_what_escapes_saved() {
        for (piece, count) in [("\\u0041", 43), ("\\u0041", 400), ("x\\n", 700)] {
            let t = format!("\"{}\"", piece.repeat(count));
            assert!(
                t.len() - 2 > SMALL && t.len() < LOOK_AHEAD,
                "{piece} {count}"
            );
            let theirs: String = serde_json::from_str(&t).unwrap();
            let (s, end) = decode(&format!("{t} ,"), 0).unwrap();
            assert_eq!(
                (s.as_str(), end),
                (theirs.as_str(), t.len()),
                "{piece} {count}"
            );
            assert!(
                s.capacity() <= s.len() + s.len() / 8 + 8,
                "{piece} {count}: {} for {}",
                s.capacity(),
                s.len()
            );
        }
    }
}
