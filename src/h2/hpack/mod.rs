//! HPACK (RFC 7541): a bounded, incremental decoder and a non-compressing encoder.
//!
//! # What is bounded, and how
//!
//! - The dynamic table is at most [`MAX_TABLE_SIZE`] (4096) octets, the default of
//!   `SETTINGS_HEADER_TABLE_SIZE`, which this client never raises; a size update beyond it is
//!   [`HpackError::TableSizeUpdate`], and a size update after the first field of a block is
//!   [`HpackError::LateTableSizeUpdate`].
//! - Integers are at most 5 octets ([`HpackError::IntegerOverflow`]).
//! - Every string length is checked before a byte is copied: against what the decoded header list
//!   may still hold ([`DecodeLimits::max_list_bytes`], counted as RFC 9113 §6.5.2 counts: name +
//!   value + 32 per field) and, for Huffman strings, while decoding, symbol by symbol.
//! - Fields are counted before they are copied ([`DecodeLimits::max_fields`]).
//! - A representation cut by a fragment boundary is kept until the next fragment completes it;
//!   what is kept is bounded by the same string checks, so feeding a block one byte at a time
//!   costs what feeding it whole costs, and gives the same result.
//!
//! A header list over its limits does not desynchronise the table: the decoder goes on reading
//! the block (updating the table, copying nothing for the list) and reports the overflow when the
//! block ends, so only the stream it belongs to fails. Every other error is a
//! `COMPRESSION_ERROR` for the whole connection ([`HpackError::is_connection_error`]).
//!
//! The [`Encoder`] never indexes and never Huffman-codes (no compression oracle across the work
//! items that share a connection), sends `authorization` and `dpop` as never-indexed, and starts its first
//! block with a dynamic table size update to 0.
use crate::prelude::*;

mod huffman;
mod tables;

#[cfg(feature = "unstable-internals")]
pub use huffman::{encode as huffman_encode, encoded_len as huffman_encoded_len};

use crate::budget::{Budget, BudgetExceeded};
use alloc::collections::VecDeque;
use tables::STATIC_TABLE;

/// The largest dynamic table this decoder accepts, in octets.
pub const MAX_TABLE_SIZE: usize = 4096;
/// The longest integer representation accepted, in octets (prefix octet included).
pub const MAX_INTEGER_OCTETS: usize = 5;
/// The per-entry overhead of RFC 7541 §4.1 and RFC 9113 §6.5.2.
pub const ENTRY_OVERHEAD: usize = 32;

/// Why a header block could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HpackError {
    /// An integer took more than 5 (`MAX_INTEGER_OCTETS`) octets.
    #[error("HPACK integer longer than {MAX_INTEGER_OCTETS} octets")]
    IntegerOverflow,
    /// An index names no entry of the static or dynamic table (or is 0).
    #[error("HPACK index {index} names no table entry")]
    InvalidIndex {
        /// The index received.
        index: u64,
    },
    /// A dynamic table size update beyond the maximum.
    #[error("HPACK table size update to {size} exceeds the maximum {max}")]
    TableSizeUpdate {
        /// The size asked for.
        size: u64,
        /// The maximum allowed.
        max: u64,
    },
    /// A dynamic table size update after a field representation.
    #[error("HPACK table size update after the first field of a block")]
    LateTableSizeUpdate,
    /// A Huffman string holds the EOS symbol.
    #[error("HPACK Huffman string holds EOS")]
    HuffmanEos,
    /// A Huffman string ends with padding that is not an EOS prefix shorter than one octet.
    #[error("HPACK Huffman string has invalid padding")]
    HuffmanPadding,
    /// A string is longer than the limit that applies to it.
    #[error("HPACK string longer than {limit} octets")]
    StringTooLong {
        /// The limit, in octets.
        limit: u64,
    },
    /// The block ended inside a representation.
    #[error("HPACK block ends inside a representation")]
    Truncated,
    /// The decoded header list is larger than allowed (name + value + 32 per field).
    #[error("decoded header list exceeds {limit} octets (max_header_list_size)")]
    HeaderListTooLarge {
        /// The limit, in octets.
        limit: u64,
    },
    /// Too many fields in one header list ([`Budget::HeaderCount`]).
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
}

impl HpackError {
    /// Whether the error breaks the connection's HPACK state (a `COMPRESSION_ERROR`), rather than
    /// only the stream whose header list overflowed its limits.
    pub fn is_connection_error(&self) -> bool {
        !matches!(
            self,
            HpackError::HeaderListTooLarge { .. } | HpackError::Budget(_)
        )
    }
}

/// One decoded header field.
///
/// Its `Debug` output shows name and value as lossy UTF-8, a secret value redacted by its name
/// (`Set-Cookie`, `Authorization`…, [`redact::header`](crate::auth::redact::header)).
#[derive(Clone, PartialEq, Eq)]
pub struct Header {
    /// The name, as received (lowercase is checked by the layer above).
    pub name: Vec<u8>,
    /// The value.
    pub value: Vec<u8>,
    /// Whether the sender marked it never-indexed.
    pub never_indexed: bool,
}

impl core::fmt::Debug for Header {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let name = String::from_utf8_lossy(&self.name);
        let value = crate::auth::redact::header(&name, &self.value);
        f.debug_struct("Header")
            .field("name", &name)
            .field("value", &String::from_utf8_lossy(&value))
            .field("never_indexed", &self.never_indexed)
            .finish()
    }
}

/// Limits on one decoded header list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// Octets of the list, counted as name + value + 32 per field. Default 65536 (the
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` this client advertises).
    pub max_list_bytes: usize,
    /// Fields in the list. Default 128.
    pub max_fields: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_list_bytes: 65536,
            max_fields: 128,
        }
    }
}

/// The dynamic table (RFC 7541 §2.3.2), newest entry first.
#[derive(Clone, Default)]
struct DynamicTable {
    entries: VecDeque<(Vec<u8>, Vec<u8>)>,
    size: usize,
    max_size: usize,
}

impl DynamicTable {
    fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.entries
            .get(i)
            .map(|(n, v)| (n.as_slice(), v.as_slice()))
    }

    fn evict_to(&mut self, max: usize) {
        while self.size > max {
            match self.entries.pop_back() {
                Some((n, v)) => self.size -= n.len() + v.len() + ENTRY_OVERHEAD,
                None => {
                    self.size = 0;
                    break;
                }
            }
        }
    }

    fn set_max(&mut self, max: usize) {
        self.max_size = max;
        self.evict_to(max);
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.size = 0;
    }

    /// Inserts an entry, or empties the table if it cannot hold it (RFC 7541 §4.4).
    fn insert(&mut self, name: Vec<u8>, value: Vec<u8>) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max_size {
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict_to(self.max_size - size);
        self.entries.push_front((name, value));
        self.size += size;
    }
}

/// Reads an HPACK integer with an `n`-bit prefix from `buf`: `Ok(None)` if `buf` ends first.
fn read_int(buf: &[u8], n: u8) -> Result<Option<(u64, usize)>, HpackError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    let mask = (1u16 << n) as u64 - 1;
    let mut value = u64::from(first) & mask;
    if value < mask {
        return Ok(Some((value, 1)));
    }
    let mut shift = 0u32;
    for i in 1..MAX_INTEGER_OCTETS {
        let Some(&b) = buf.get(i) else {
            return Ok(None);
        };
        value += u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    Err(HpackError::IntegerOverflow)
}

/// A string literal located in the buffer: where its octets are, and whether they are Huffman.
struct Str {
    start: usize,
    len: usize,
    huffman: bool,
}

/// Locates the string literal at `buf[pos..]`: `Ok(None)` if it is incomplete.
fn locate_str(buf: &[u8], pos: usize) -> Result<Option<(Str, usize)>, HpackError> {
    let Some(&first) = buf.get(pos) else {
        return Ok(None);
    };
    let Some((len, n)) = read_int(&buf[pos..], 7)? else {
        return Ok(None);
    };
    let start = pos + n;
    let len = usize::try_from(len).map_err(|_| HpackError::IntegerOverflow)?;
    if buf.len() - start < len {
        return Ok(None);
    }
    Ok(Some((
        Str {
            start,
            len,
            huffman: first & 0x80 != 0,
        },
        start + len,
    )))
}

/// Copies (decoding Huffman) the string `s`; `None` if it decodes to more than `limit` octets.
fn copy_str(buf: &[u8], s: &Str, limit: usize) -> Result<Option<Vec<u8>>, HpackError> {
    let raw = &buf[s.start..s.start + s.len];
    if s.huffman {
        // Each symbol takes at least 5 bits: a string longer than 8/5 of its octets is impossible,
        // so the buffer is sized before decoding, and the limit is checked symbol by symbol.
        let mut out = Vec::with_capacity((s.len * 8 / 5).min(limit));
        match huffman::decode(raw, &mut out, limit) {
            Ok(()) => Ok(Some(out)),
            Err(HpackError::StringTooLong { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    } else if raw.len() > limit {
        Ok(None)
    } else {
        Ok(Some(raw.to_vec()))
    }
}

/// Checks a Huffman string's coding without keeping it.
fn check_huffman(buf: &[u8], s: &Str) -> Result<(), HpackError> {
    if s.huffman {
        let raw = &buf[s.start..s.start + s.len];
        // Validity is all that matters; the output is at most 8/5 of the octets, which the caller
        // has already bounded (the raw block is capped before it is decoded).
        let mut sink = Vec::with_capacity(s.len * 8 / 5);
        huffman::decode(raw, &mut sink, usize::MAX)?;
    }
    Ok(())
}

/// An incremental HPACK decoder: one per connection, fed each header block in order.
/// `Debug` shows its dynamic table, pending octets and decoded list by size only: they hold
/// the server's header fields, `Set-Cookie` among them.
#[derive(Clone)]
pub struct Decoder {
    table: DynamicTable,
    limits: DecodeLimits,
    pending: Vec<u8>,
    list: Vec<Header>,
    list_bytes: usize,
    fields_seen: bool,
    overflow: Option<HpackError>,
    max_update: usize,
    skip: Skip,
}

impl core::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Decoder")
            .field("table_entries", &self.table.entries.len())
            .field("table_size", &self.table.size)
            .field("table_max_size", &self.table.max_size)
            .field("limits", &self.limits)
            .field("pending_octets", &self.pending.len())
            .field("fields", &self.list.len())
            .field("list_bytes", &self.list_bytes)
            .field("overflow", &self.overflow)
            .field("max_update", &self.max_update)
            .finish_non_exhaustive()
    }
}

/// Octets of a too-large literal still to be skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    None,
    /// `remaining` octets of a string; then the value string, if `then_value`.
    Bytes {
        remaining: usize,
        then_value: bool,
    },
    /// The value string's length, to skip that string too.
    ValueHeader,
}

impl Decoder {
    /// A decoder with a 4096-octet table and these limits on every header list.
    pub fn new(limits: DecodeLimits) -> Self {
        Decoder {
            table: DynamicTable {
                max_size: MAX_TABLE_SIZE,
                ..DynamicTable::default()
            },
            limits,
            pending: Vec::new(),
            list: Vec::new(),
            list_bytes: 0,
            fields_seen: false,
            overflow: None,
            max_update: MAX_TABLE_SIZE,
            skip: Skip::None,
        }
    }

    /// A decoder whose table holds at most `size` octets (clamped to [`MAX_TABLE_SIZE`]), as if
    /// `SETTINGS_HEADER_TABLE_SIZE` were `size`; size updates beyond it are refused.
    pub fn with_table_size(size: usize, limits: DecodeLimits) -> Self {
        let mut d = Decoder::new(limits);
        d.max_update = size.min(MAX_TABLE_SIZE);
        d.table.max_size = d.max_update;
        d
    }

    /// The dynamic table's current size in octets (entries + 32 each).
    pub fn table_size(&self) -> usize {
        self.table.size
    }

    /// Feeds the next fragment of the current header block.
    pub fn feed(&mut self, fragment: &[u8]) -> Result<(), HpackError> {
        if self.pending.is_empty() {
            let used = self.run(fragment)?;
            self.pending.extend_from_slice(&fragment[used..]);
        } else {
            let mut buf = core::mem::take(&mut self.pending);
            buf.extend_from_slice(fragment);
            let used = self.run(&buf)?;
            buf.drain(..used);
            self.pending = buf;
        }
        Ok(())
    }

    /// Ends the current block: its header list, or why it cannot be used. After an error that
    /// [`HpackError::is_connection_error`] the decoder must not be used again.
    pub fn finish(&mut self) -> Result<Vec<Header>, HpackError> {
        let truncated = !self.pending.is_empty() || self.skip != Skip::None;
        self.pending.clear();
        self.skip = Skip::None;
        self.fields_seen = false;
        self.list_bytes = 0;
        let list = core::mem::take(&mut self.list);
        if truncated {
            return Err(HpackError::Truncated);
        }
        match self.overflow.take() {
            Some(e) => Err(e),
            None => Ok(list),
        }
    }

    /// Decodes one whole header block.
    pub fn decode_block(&mut self, block: &[u8]) -> Result<Vec<Header>, HpackError> {
        self.feed(block)?;
        self.finish()
    }

    /// Decodes every complete representation of `buf`; returns the octets consumed.
    fn run(&mut self, buf: &[u8]) -> Result<usize, HpackError> {
        let mut pos = 0;
        while pos < buf.len() {
            let step = if self.skip == Skip::None {
                self.one(buf, pos)?
            } else {
                self.skip_some(buf, pos)?
            };
            match step {
                Some(next) => pos = next,
                None => break,
            }
        }
        Ok(pos)
    }

    /// Room left in the list for one more field's octets, or `None` if it is full.
    fn room(&self) -> Option<usize> {
        if self.overflow.is_some() {
            return None;
        }
        self.limits
            .max_list_bytes
            .checked_sub(self.list_bytes + ENTRY_OVERHEAD)
    }

    fn overflow_bytes(&mut self) {
        if self.overflow.is_none() {
            self.overflow = Some(HpackError::HeaderListTooLarge {
                limit: self.limits.max_list_bytes as u64,
            });
        }
        self.list.clear();
    }

    /// Counts one more field before it is copied; false if the list overflowed.
    fn admit_field(&mut self) -> bool {
        if self.overflow.is_some() {
            return false;
        }
        if self.list.len() >= self.limits.max_fields {
            self.overflow = Some(HpackError::Budget(BudgetExceeded::new(
                Budget::HeaderCount,
                self.limits.max_fields as u64,
            )));
            self.list.clear();
            return false;
        }
        true
    }

    fn lookup(&self, index: u64) -> Result<(&[u8], &[u8]), HpackError> {
        let bad = HpackError::InvalidIndex { index };
        let i = usize::try_from(index).map_err(|_| bad.clone())?;
        if i == 0 {
            return Err(bad);
        }
        if i <= STATIC_TABLE.len() {
            return Ok(STATIC_TABLE[i - 1]);
        }
        self.table.get(i - STATIC_TABLE.len() - 1).ok_or(bad)
    }

    /// Decodes the representation at `buf[pos..]`: the position after it, or `None` if it is
    /// incomplete (nothing has changed then).
    fn one(&mut self, buf: &[u8], pos: usize) -> Result<Option<usize>, HpackError> {
        let first = buf[pos];
        if first & 0x80 != 0 {
            // Indexed field.
            let Some((index, n)) = read_int(&buf[pos..], 7)? else {
                return Ok(None);
            };
            let (name, value) = self.lookup(index)?;
            let size = name.len() + value.len();
            let field = (self.room().is_some_and(|r| size <= r)).then(|| Header {
                name: name.to_vec(),
                value: value.to_vec(),
                never_indexed: false,
            });
            self.fields_seen = true;
            if self.admit_field() {
                match field {
                    Some(f) => {
                        self.list_bytes += size + ENTRY_OVERHEAD;
                        self.list.push(f);
                    }
                    None => self.overflow_bytes(),
                }
            }
            return Ok(Some(pos + n));
        }
        if first & 0xe0 == 0x20 {
            // Dynamic table size update.
            let Some((size, n)) = read_int(&buf[pos..], 5)? else {
                return Ok(None);
            };
            if self.fields_seen {
                return Err(HpackError::LateTableSizeUpdate);
            }
            if size > self.max_update as u64 {
                return Err(HpackError::TableSizeUpdate {
                    size,
                    max: self.max_update as u64,
                });
            }
            self.table.set_max(size as usize);
            return Ok(Some(pos + n));
        }
        // Literal field: with incremental indexing (01), never indexed (0001), without (0000).
        let (prefix, index_it, never) = if first & 0xc0 == 0x40 {
            (6, true, false)
        } else {
            (4, false, first & 0x10 != 0)
        };
        let Some((name_index, n)) = read_int(&buf[pos..], prefix)? else {
            return Ok(None);
        };
        let mut at = pos + n;
        // The most either string may decode to and still be of use: to the list, or to the
        // table (an entry larger than the table empties it and is not kept). Nothing changes
        // before the representation is complete, or certainly too large.
        let admissible = self.overflow.is_none() && self.list.len() < self.limits.max_fields;
        let room = if admissible { self.room() } else { None };
        let table_room = MAX_TABLE_SIZE.min(self.table.max_size);
        let useful = match (room, index_it) {
            (Some(r), true) => r.max(table_room),
            (Some(r), false) => r,
            (None, true) => table_room,
            (None, false) => 0,
        };
        let (name_str, name_min) = if name_index == 0 {
            let Some(&b) = buf.get(at) else {
                return Ok(None);
            };
            let Some((len, n)) = read_int(&buf[at..], 7)? else {
                return Ok(None);
            };
            let len = usize::try_from(len).map_err(|_| HpackError::IntegerOverflow)?;
            let huffman = b & 0x80 != 0;
            if too_big(len, huffman, useful) {
                self.skip_rest(index_it, len, true);
                return Ok(Some(at + n));
            }
            let Some((s, next)) = locate_str(buf, at)? else {
                return Ok(None);
            };
            at = next;
            (Some(s), min_decoded(len, huffman))
        } else {
            // Validate the index now, so an error does not wait for the value's octets.
            (None, self.lookup(name_index)?.0.len())
        };
        let Some(&b) = buf.get(at) else {
            return Ok(None);
        };
        let Some((vlen, n)) = read_int(&buf[at..], 7)? else {
            return Ok(None);
        };
        let vlen = usize::try_from(vlen).map_err(|_| HpackError::IntegerOverflow)?;
        if name_min > useful || too_big(vlen, b & 0x80 != 0, useful - name_min) {
            self.skip_rest(index_it, vlen, false);
            return Ok(Some(at + n));
        }
        let Some((value_str, end)) = locate_str(buf, at)? else {
            return Ok(None);
        };
        // The representation is complete: from here on, state may change.
        self.fields_seen = true;
        let admitted = self.admit_field();
        let name = match &name_str {
            Some(s) => copy_str(buf, s, useful)?,
            None => Some(self.lookup(name_index)?.0.to_vec()),
        };
        let value = match &name {
            Some(nm) if nm.len() <= useful => copy_str(buf, &value_str, useful - nm.len())?,
            _ => {
                check_huffman(buf, &value_str)?;
                None
            }
        };
        let field = match (name, value) {
            (Some(n), Some(v)) => Some((n, v)),
            _ => None,
        };
        let fits_list = |f: &(Vec<u8>, Vec<u8>)| room.is_some_and(|r| f.0.len() + f.1.len() <= r);
        match field {
            Some(f) => {
                if admitted {
                    if fits_list(&f) {
                        self.list_bytes += f.0.len() + f.1.len() + ENTRY_OVERHEAD;
                        self.list.push(Header {
                            name: f.0.clone(),
                            value: f.1.clone(),
                            never_indexed: never,
                        });
                    } else {
                        self.overflow_bytes();
                    }
                }
                if index_it {
                    self.table.insert(f.0, f.1);
                }
            }
            None => {
                if admitted {
                    self.overflow_bytes();
                }
                if index_it {
                    self.table.clear();
                }
            }
        }
        Ok(Some(end))
    }

    /// A literal whose string of `len` octets is certainly too large to be of use: the field
    /// overflows the list, an indexed entry would empty the table (RFC 7541 §4.4), and the
    /// string's octets (and the value's, after a name) are skipped without being kept.
    fn skip_rest(&mut self, index_it: bool, len: usize, then_value: bool) {
        self.fields_seen = true;
        if self.admit_field() {
            self.overflow_bytes();
        }
        if index_it {
            self.table.clear();
        }
        self.skip = Skip::Bytes {
            remaining: len,
            then_value,
        };
    }

    /// Advances a skip over `buf[pos..]`: the position after what was skipped, or `None` if more
    /// input is needed.
    fn skip_some(&mut self, buf: &[u8], pos: usize) -> Result<Option<usize>, HpackError> {
        match self.skip {
            Skip::None => Ok(Some(pos)),
            Skip::Bytes {
                remaining,
                then_value,
            } => {
                let n = remaining.min(buf.len() - pos);
                let left = remaining - n;
                self.skip = if left > 0 {
                    Skip::Bytes {
                        remaining: left,
                        then_value,
                    }
                } else if then_value {
                    Skip::ValueHeader
                } else {
                    Skip::None
                };
                Ok(Some(pos + n))
            }
            Skip::ValueHeader => {
                let Some((len, n)) = read_int(&buf[pos..], 7)? else {
                    return Ok(None);
                };
                let len = usize::try_from(len).map_err(|_| HpackError::IntegerOverflow)?;
                self.skip = Skip::Bytes {
                    remaining: len,
                    then_value: false,
                };
                Ok(Some(pos + n))
            }
        }
    }
}

/// Whether a string of `len` octets certainly decodes to more than `limit` octets (a Huffman
/// symbol takes at most 30 bits).
fn too_big(len: usize, huffman: bool, limit: usize) -> bool {
    min_decoded(len, huffman) > limit
}

/// The fewest octets a string of `len` octets can decode to.
fn min_decoded(len: usize, huffman: bool) -> usize {
    if huffman {
        len.saturating_mul(8) / 30
    } else {
        len
    }
}

/// The HPACK encoder of this client: literal fields without indexing, no Huffman.
#[derive(Clone, Debug, Default)]
pub struct Encoder {
    started: bool,
}

/// Writes an integer with an `n`-bit prefix, `flags` in the prefix octet's high bits.
fn write_int(out: &mut Vec<u8>, flags: u8, n: u8, mut value: u64) {
    let mask = (1u16 << n) as u64 - 1;
    if value < mask {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    value -= mask;
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    write_int(out, 0, 7, s.len() as u64);
    out.extend_from_slice(s);
}

impl Encoder {
    /// A new encoder; its first block starts with a table size update to 0.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Encodes one header list as a block onto `out`. Names must already be lowercase.
    ///
    /// A field equal to a static table entry is sent as that index; any other is a literal
    /// without indexing (with the static name index when there is one), except `authorization`
    /// and `dpop`, which are never-indexed. Nothing enters the peer's dynamic table.
    pub fn encode<'a, I>(&mut self, fields: I, out: &mut Vec<u8>)
    where
        I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
    {
        if !self.started {
            self.started = true;
            write_int(out, 0x20, 5, 0);
        }
        for (name, value) in fields {
            let exact = STATIC_TABLE
                .iter()
                .position(|&(n, v)| n == name && v == value);
            // A DPoP proof is bound to the token (RFC 9449): as sensitive as the token.
            let sensitive = name == b"authorization" || name == b"dpop";
            if let (Some(i), false) = (exact, sensitive) {
                write_int(out, 0x80, 7, i as u64 + 1);
                continue;
            }
            let flags = if sensitive { 0x10 } else { 0x00 };
            match STATIC_TABLE.iter().position(|&(n, _)| n == name) {
                Some(i) => write_int(out, flags, 4, i as u64 + 1),
                None => {
                    write_int(out, flags, 4, 0);
                    write_str(out, name);
                }
            }
            write_str(out, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_rfc7541_c1() {
        let mut out = Vec::new();
        write_int(&mut out, 0, 5, 10);
        assert_eq!(out, [0x0a]);
        out.clear();
        write_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
        assert_eq!(read_int(&out, 5).unwrap(), Some((1337, 3)));
        assert_eq!(read_int(&out[..2], 5).unwrap(), None);
        assert_eq!(
            read_int(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0x01], 5),
            Err(HpackError::IntegerOverflow)
        );
        assert_eq!(
            read_int(&[0x1f, 0xff, 0xff, 0xff, 0x7f], 5).unwrap(),
            Some((31 + 0x0fff_ffff, 5))
        );
    }
}
