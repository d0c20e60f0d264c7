//! Tool pins: a defence against a tool that changed since it was first seen (a "rug pull": a
//! server keeps a tool's name and gives it a new description or schema between work items).
//!
//! A **pin** ([`ToolPin`]) is a SHA-256 fingerprint of the parts of a tool's definition a model
//! acts on: its name, description, input schema, output schema and annotations (not its title,
//! icons or `_meta`, which are for display and bookkeeping). A **pin set** ([`ToolPins`]) holds
//! the pins of one server for one principal: a client stores it under
//! [`store_key`](crate::store_key) of [`StoreUse::ToolPins`](crate::StoreUse::ToolPins), the
//! resource and the principal ([`AuthContext::principal`](crate::AuthContext::principal): with a
//! grant, the grant, so a refreshed token keeps its pins; without one, the credential), so a pin
//! of one principal never applies under another.
//!
//! - **Trust on first use**: a tool without a pin is pinned when first seen (listed, or called
//!   with a known definition). A pin is never replaced by what a server later lists: a changed
//!   tool stays changed until the embedder forgets the pin set. A tool that disappears keeps its
//!   pin (it may come back changed).
//! - **Policy** ([`PinPolicy`], [`Config::tool_pins`](crate::Config::tool_pins), off by
//!   default): under [`PinPolicy::Warn`] a listing or a call whose tool changed goes on with a
//!   note ([`ToolChange`]); under [`PinPolicy::Refuse`] it fails with
//!   [`Error::ToolChanged`] (a call before it is sent, a listing
//!   changing no pin). [`PinPolicy::judge`] is the one place that decides.
//! - **Bounds**: a set holds at most [`MAX_TOOL_PINS`] pins of 64 bytes each (a digest of the
//!   name and the pin); a set at its bound pins no new tool (it never evicts a pin to make room,
//!   which would let a server wash a pin out by listing many new tools).
//! - **Stored form** ([`ToolPins::to_bytes`]): framed, versioned, bounded and checked again when
//!   read ([`ToolPins::from_bytes`]); a stored set that does not read back is a miss.
//!
//! # The canonical form
//!
//! A pin must not change with how a server writes its JSON, only with what it says. With
//! `F(x)` = the length of `x` as 8 bytes big-endian, then `x`; `D(x)` = SHA-256 of `C(x)`, the
//! canonical form of the JSON value `x`; and `O(x)` = the byte `0` for an absent member, else
//! the byte `1` then `x`:
//!
//! ```text
//! pin = SHA-256( F("mcp-sansio tool pin 1") ‖ F(name) ‖ O(F(description))
//!                ‖ D(inputSchema) ‖ O(D(outputSchema)) ‖ O(D(annotations)) )
//! ```
//!
//! where the name and the description are the decoded strings (UTF-8), and `C` writes a JSON
//! value with no whitespace, the members of every object sorted by their decoded names (byte
//! order; members of one name by their own canonical forms), every string decoded and written
//! again as `serde_json` writes a string (`\"`, `\\`, the short escapes of `\b \f \n \r \t`,
//! `\u00XX` for other control characters, everything else as UTF-8), and numbers, `true`,
//! `false` and `null` byte for byte as the server wrote them (`1` and `1.0` are two values). A
//! string that does not decode (a lone surrogate) is kept as written.
//!
//! So key order, whitespace and escapes do not change a pin; any change of a value does.

use crate::prelude::*;

use sha2::{Digest as _, Sha256};

use crate::connection::Operation;
use crate::error::Error;
use crate::list::Tool;

/// The most pins a [`ToolPins`] holds: 4096 tools (64 bytes each stored).
pub const MAX_TOOL_PINS: usize = 4096;

/// How deep the canonical form follows nested JSON; deeper values are digested as written.
/// (A listing's JSON is already bounded by its reader; this only keeps the walk bounded.)
const MAX_CANONICAL_DEPTH: u32 = 256;

/// The fingerprint of a tool's definition: see the [module](self) docs for what it covers and
/// its canonical form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolPin([u8; 32]);

impl core::fmt::Debug for ToolPin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("ToolPin").field(&self.short()).finish()
    }
}

impl core::fmt::Display for ToolPin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    crate::context::push_hex(&mut out, bytes);
    out
}

/// A length-prefixed field (`F` of the module docs): the store keys' own.
use crate::context::field;

impl ToolPin {
    /// The pin of `tool`.
    pub fn of(tool: &Tool) -> ToolPin {
        let mut h = Sha256::new();
        field(&mut h, b"mcp-sansio tool pin 1");
        field(&mut h, tool.name().as_bytes());
        match tool.description() {
            None => h.update([0]),
            Some(d) => {
                h.update([1]);
                field(&mut h, d.as_bytes());
            }
        }
        h.update(json_digest(tool.input_schema().as_bytes()));
        for member in [tool.output_schema(), tool.annotations()] {
            match member {
                None => h.update([0]),
                Some(raw) => {
                    h.update([1]);
                    h.update(json_digest(raw.as_bytes()));
                }
            }
        }
        ToolPin(h.finalize().into())
    }

    /// A pin from its 32 bytes (as [`ToolPin::as_bytes`] gave them).
    pub const fn from_bytes(bytes: [u8; 32]) -> ToolPin {
        ToolPin(bytes)
    }

    /// Its 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 12 hex digits, for a note or a log line.
    pub fn short(&self) -> String {
        hex(&self.0[..6])
    }
}

/// `D(raw)`: SHA-256 of the canonical form of the JSON value `raw`; a value the canonical
/// walk cannot follow (not JSON, deeper than it goes) is digested as written, under another tag
/// so that it never equals a canonical form.
fn json_digest(raw: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut out = Vec::new();
    match canonical(raw, &mut out) {
        Some(()) => h.update(&out),
        None => {
            h.update(b"\xffraw");
            h.update(raw);
        }
    }
    h.finalize().into()
}

/// The canonical form (`C` of the module docs) of the one JSON value `raw` (whitespace around it
/// allowed) into `out`; `None` if `raw` is not one JSON value the walk can follow.
fn canonical(raw: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let end = value(raw, crate::json::ws(raw, 0), out, 0)?;
    (crate::json::ws(raw, end) == raw.len()).then_some(())
}

/// Writes the canonical form of the value at `i` (no whitespace before it) to `out`; returns the
/// index after the value.
fn value(b: &[u8], i: usize, out: &mut Vec<u8>, depth: u32) -> Option<usize> {
    if depth > MAX_CANONICAL_DEPTH {
        return None;
    }
    match *b.get(i)? {
        b'{' => object(b, i, out, depth),
        b'[' => {
            out.extend_from_slice(b"[");
            let mut j = crate::json::ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                out.extend_from_slice(b"]");
                return Some(j + 1);
            }
            loop {
                j = value(b, j, out, depth + 1)?;
                j = crate::json::ws(b, j);
                match *b.get(j)? {
                    b',' => {
                        out.extend_from_slice(b",");
                        j = crate::json::ws(b, j + 1);
                    }
                    b']' => {
                        out.extend_from_slice(b"]");
                        return Some(j + 1);
                    }
                    _ => return None,
                }
            }
        }
        b'"' => {
            let (end, _) = crate::json::string(b, i, false)?;
            string(b.get(i..end)?, out);
            Some(end)
        }
        _ => {
            let end = crate::json::scalar(b, i, false)?;
            out.extend_from_slice(b.get(i..end)?);
            Some(end)
        }
    }
}

/// The canonical form of the quoted JSON string `quoted`: decoded and written again, or as
/// written when it does not decode.
fn string(quoted: &[u8], out: &mut Vec<u8>) {
    match crate::json::unescape(quoted).and_then(|s| serde_json::to_string(&s).ok()) {
        Some(s) => out.extend_from_slice(s.as_bytes()),
        None => out.extend_from_slice(quoted),
    }
}

/// The canonical form of the object at `i`: its members sorted by decoded name, then by their
/// canonical values.
fn object(b: &[u8], i: usize, out: &mut Vec<u8>, depth: u32) -> Option<usize> {
    let mut members: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut j = crate::json::ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        out.extend_from_slice(b"{}");
        return Some(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return None;
        }
        let (end, _) = crate::json::string(b, j, false)?;
        let mut name = Vec::new();
        string(b.get(j..end)?, &mut name);
        j = crate::json::ws(b, end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let mut v = Vec::new();
        j = value(b, crate::json::ws(b, j + 1), &mut v, depth + 1)?;
        members.push((name, v));
        j = crate::json::ws(b, j);
        match *b.get(j)? {
            b',' => j = crate::json::ws(b, j + 1),
            b'}' => break,
            _ => return None,
        }
    }
    members.sort_unstable();
    out.extend_from_slice(b"{");
    for (k, (name, v)) in members.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(b",");
        }
        out.extend_from_slice(name);
        out.extend_from_slice(b":");
        out.extend_from_slice(v);
    }
    out.extend_from_slice(b"}");
    Some(j + 1)
}

/// The key of a tool in a pin set: SHA-256 of its name, so that a stored set has entries of one
/// size and holds no server text.
fn name_key(name: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    field(&mut h, b"mcp-sansio tool pin name 1");
    field(&mut h, name.as_bytes());
    h.finalize().into()
}

/// What a pin set says of a tool's pin ([`ToolPins::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinCheck {
    /// The set has no pin for the name.
    Unpinned,
    /// The tool is as pinned.
    Same,
    /// The tool changed since it was pinned.
    Changed {
        /// The pin it had.
        pinned: ToolPin,
    },
}

/// A tool that changed since it was pinned: the note of [`PinPolicy::Warn`], the cause of
/// [`Error::ToolChanged`] under [`PinPolicy::Refuse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChange {
    /// The tool's name (the server's text, within the listing's name rule).
    pub name: String,
    /// Its pin.
    pub pinned: ToolPin,
    /// The pin of the definition seen now.
    pub now: ToolPin,
    /// What saw it: a listing ([`Operation::ListTools`]) or a call ([`Operation::CallTool`]).
    pub operation: Operation,
}

impl core::fmt::Display for ToolChange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "tool {:?} changed since it was pinned (pinned {}, now {})",
            self.name,
            self.pinned.short(),
            self.now.short()
        )
    }
}

/// What a client does with a tool that changed since it was pinned
/// ([`Config::tool_pins`](crate::Config::tool_pins)). Ordered: `Off < Warn < Refuse`, so the stricter of two is their
/// `max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PinPolicy {
    /// No pins are read, kept or checked (the default).
    #[default]
    Off,
    /// Tools are pinned; a changed one is used, with a note ([`ToolChange`]).
    Warn,
    /// Tools are pinned; a listing that shows a changed tool fails, and a call of a changed tool
    /// fails before it is sent, with [`Error::ToolChanged`].
    Refuse,
}

impl PinPolicy {
    /// The policy's stable name: `off`, `warn` or `refuse`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PinPolicy::Off => "off",
            PinPolicy::Warn => "warn",
            PinPolicy::Refuse => "refuse",
        }
    }

    /// The policy named `name` (as [`as_str`](Self::as_str) gives it).
    pub fn from_name(name: &str) -> Option<PinPolicy> {
        match name {
            "off" => Some(PinPolicy::Off),
            "warn" => Some(PinPolicy::Warn),
            "refuse" => Some(PinPolicy::Refuse),
            _ => None,
        }
    }

    /// The verdict on `changes` (what one listing or call found, in server order): the notes to
    /// give under `Warn`, none under `Off`, and under `Refuse` the error naming the first
    /// changed tool (and how many changed), if any did.
    pub fn judge(self, changes: Vec<ToolChange>) -> Result<Vec<ToolChange>, Error> {
        match self {
            PinPolicy::Off => Ok(Vec::new()),
            PinPolicy::Warn => Ok(changes),
            PinPolicy::Refuse => match changes.first() {
                None => Ok(changes),
                Some(first) => Err(Error::ToolChanged {
                    name: first.name.clone(),
                    operation: first.operation,
                    changed: changes.len(),
                }),
            },
        }
    }
}

/// The pins of one server in one authorization context: see the [module](self) docs.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ToolPins {
    /// Name key → pin.
    pins: BTreeMap<[u8; 32], ToolPin>,
}

impl core::fmt::Debug for ToolPins {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ToolPins")
            .field("len", &self.pins.len())
            .finish()
    }
}

/// Why stored bytes are not a pin set ([`ToolPins::from_bytes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PinSetError {
    /// It does not start with the pin-set magic and version 1.
    #[error("not a pin set of version 1")]
    NotAPinSet,
    /// It counts more than [`MAX_TOOL_PINS`] pins.
    #[error("more than {MAX_TOOL_PINS} pins")]
    TooMany,
    /// Its length is not what its count says.
    #[error("the length does not match the count")]
    Length,
    /// Its entries are not in strictly increasing order of their name keys.
    #[error("entries out of order or repeated")]
    Order,
    /// Its checksum does not match its bytes.
    #[error("checksum mismatch")]
    Checksum,
}

/// What starts a stored pin set: a magic and the version, 1.
const MAGIC: &[u8; 8] = b"mcppins\x01";

/// The bytes of one stored entry: the name key, then the pin.
const ENTRY: usize = 64;

/// The longest stored pin set: the magic, the count, [`MAX_TOOL_PINS`] entries, the checksum.
pub const MAX_PIN_SET_BYTES: usize = MAGIC.len() + 4 + MAX_TOOL_PINS * ENTRY + 32;

impl ToolPins {
    /// An empty set.
    pub fn new() -> ToolPins {
        ToolPins::default()
    }

    /// How many pins it holds.
    pub fn len(&self) -> usize {
        self.pins.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty()
    }

    /// The pin of tool `name`, if any.
    pub fn get(&self, name: &str) -> Option<ToolPin> {
        self.pins.get(&name_key(name)).copied()
    }

    /// What the set says of tool `name` with pin `now`.
    pub fn check(&self, name: &str, now: ToolPin) -> PinCheck {
        match self.get(name) {
            None => PinCheck::Unpinned,
            Some(p) if p == now => PinCheck::Same,
            Some(pinned) => PinCheck::Changed { pinned },
        }
    }

    /// Pins tool `name` at `pin` if it has no pin and the set has room ([`MAX_TOOL_PINS`]); an
    /// existing pin is never replaced. Whether it was added.
    pub fn pin(&mut self, name: &str, pin: ToolPin) -> bool {
        if self.pins.len() >= MAX_TOOL_PINS {
            return false;
        }
        match self.pins.entry(name_key(name)) {
            alloc::collections::btree_map::Entry::Occupied(_) => false,
            alloc::collections::btree_map::Entry::Vacant(v) => {
                v.insert(pin);
                true
            }
        }
    }

    /// Forgets the pin of tool `name` (the embedder accepts its new definition: the next
    /// sight pins it again). Whether there was one.
    pub fn forget(&mut self, name: &str) -> bool {
        self.pins.remove(&name_key(name)).is_some()
    }

    /// Checks a call's or a listing's `tools` (`operation` saw them): pins the tools it has no
    /// pin for (within its bound), and returns those that changed, in order. Nothing changes
    /// an existing pin.
    pub fn observe<'t>(
        &mut self,
        tools: impl IntoIterator<Item = &'t Tool>,
        operation: Operation,
    ) -> Vec<ToolChange> {
        let mut changes = Vec::new();
        for tool in tools {
            let now = ToolPin::of(tool);
            match self.check(tool.name(), now) {
                PinCheck::Unpinned => {
                    self.pin(tool.name(), now);
                }
                PinCheck::Same => {}
                PinCheck::Changed { pinned } => changes.push(ToolChange {
                    name: tool.name().to_owned(),
                    pinned,
                    now,
                    operation,
                }),
            }
        }
        changes
    }

    /// Adds the pins of `other` this set has no pin for (within its bound): what a writer does
    /// with a stored set it read back before writing its own, so that of two writers' pins of
    /// one tool the first stored stays (`self` is the stored one).
    pub fn merge(&mut self, other: &ToolPins) {
        for (k, p) in &other.pins {
            if self.pins.len() >= MAX_TOOL_PINS {
                return;
            }
            self.pins.entry(*k).or_insert(*p);
        }
    }

    /// The stored form: the magic `mcppins` and the version byte 1, the count (4 bytes
    /// big-endian), the entries in increasing order of their name keys (32 bytes of the name's
    /// digest, 32 of the pin), then SHA-256 of everything before. At most
    /// [`MAX_PIN_SET_BYTES`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAGIC.len() + 4 + self.pins.len() * ENTRY + 32);
        out.extend_from_slice(MAGIC);
        // At most MAX_TOOL_PINS entries: fits.
        out.extend_from_slice(&u32::try_from(self.pins.len()).unwrap_or(0).to_be_bytes());
        for (k, p) in &self.pins {
            out.extend_from_slice(k);
            out.extend_from_slice(&p.0);
        }
        let sum: [u8; 32] = Sha256::digest(&out).into();
        out.extend_from_slice(&sum);
        out
    }

    /// Reads a stored set back, checking everything [`to_bytes`](Self::to_bytes) writes: the
    /// magic and version, the count within [`MAX_TOOL_PINS`], the exact length, the order of
    /// the entries (strictly increasing: none repeated), the checksum. Bytes that read back
    /// are exactly what `to_bytes` of the set writes.
    pub fn from_bytes(bytes: &[u8]) -> Result<ToolPins, PinSetError> {
        let rest = bytes.strip_prefix(MAGIC).ok_or(PinSetError::NotAPinSet)?;
        let (count, rest) = rest
            .split_first_chunk::<4>()
            .ok_or(PinSetError::NotAPinSet)?;
        let count = u32::from_be_bytes(*count) as usize;
        if count > MAX_TOOL_PINS {
            return Err(PinSetError::TooMany);
        }
        if rest.len() != count * ENTRY + 32 {
            return Err(PinSetError::Length);
        }
        let (entries, sum) = rest.split_at(count * ENTRY);
        let body = bytes.get(..bytes.len() - 32).ok_or(PinSetError::Length)?;
        if Sha256::digest(body).as_slice() != sum {
            return Err(PinSetError::Checksum);
        }
        let mut pins = BTreeMap::new();
        let mut last: Option<[u8; 32]> = None;
        for entry in entries.chunks_exact(ENTRY) {
            let (k, p) = entry.split_at(32);
            let k: [u8; 32] = k.try_into().map_err(|_| PinSetError::Length)?;
            let p: [u8; 32] = p.try_into().map_err(|_| PinSetError::Length)?;
            if last.is_some_and(|l| l >= k) {
                return Err(PinSetError::Order);
            }
            last = Some(k);
            pins.insert(k, ToolPin(p));
        }
        Ok(ToolPins { pins })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(raw: &str) -> Option<String> {
        let mut out = Vec::new();
        canonical(raw.as_bytes(), &mut out)?;
        String::from_utf8(out).ok()
    }

    #[test]
    fn canonical_form_sorts_keys_and_drops_whitespace() {
        assert_eq!(
            canon(r#" { "b" : [1, 2.0 , {"z":null,"a":true}], "a": "x\u0041\/" } "#).as_deref(),
            Some(r#"{"a":"xA/","b":[1,2.0,{"a":true,"z":null}]}"#)
        );
        assert_eq!(
            canon(r#"{"\u0062":1,"a":2}"#).as_deref(),
            Some(r#"{"a":2,"b":1}"#)
        );
        assert_eq!(canon(r#""\ud800""#).as_deref(), Some(r#""\ud800""#));
        assert_eq!(canon("{} x"), None);
        assert_eq!(canon("[1,]"), None);
    }

    #[test]
    fn too_deep_values_are_digested_as_written() {
        let deep = "[".repeat(300) + &"]".repeat(300);
        assert_eq!(canon(&deep), None);
        assert_ne!(json_digest(deep.as_bytes()), [0; 32]);
    }
}
