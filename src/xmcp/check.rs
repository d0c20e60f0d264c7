//! The schema check of the listing's one pass: walks an `inputSchema` in place, without building
//! it, and finds its `x-mcp-header` parameters by the rules of [`super::header_params`].
//!
//! It settles the usual schema: well-formed, no duplicate keys, nested no deeper than
//! [`MAX_DEPTH`], its annotations valid. It gives up (`None`) on anything else, and also on what
//! it leaves to the serde reading: keys, annotation values or property `type`s written with
//! escapes. The serde reading then decides and names the reason. Numbers are never evaluated, so
//! `1e400` is kept as written.

use crate::prelude::*;

use super::LINEAR_KEYS;
use super::{is_token, map_is_sorted, member_place, HeaderParam, ParamKind, Place, KEYWORD};
use super::{MAX_DEPTH, MAX_HEADER_PARAMS};
use crate::json::{scalar, specials, string, string_from, ws};

/// What [`SchemaCheck::run`] learnt about a schema it accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchemaFacts {
    /// The index after the schema.
    pub(crate) end: usize,
    /// Whether the root's `type` is `"object"`, written without escapes.
    pub(crate) root_object: bool,
}

/// What the value of the member being read is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Nothing.
    Nothing,
    /// A property's `type`: which [`ParamKind`], if any.
    Kind,
    /// An `x-mcp-header` value: its text.
    Text,
    /// The root's `type`: whether it is `"object"`.
    RootType,
}

/// One open container of [`SchemaCheck`].
struct Level<'a> {
    object: bool,
    /// Where this container sits.
    place: Place,
    /// Where the value of the member being read sits, and what it is for.
    child: Place,
    want: Want,
    /// Whether the member being read pushed its key onto [`SchemaCheck::path`].
    pushed: bool,
    /// The keys seen so far, if an object.
    keys: KeySet<'a>,
    /// A schema object's annotation (its text) and `type` (`Some(None)`: not one of the three).
    name: Option<&'a str>,
    kind: Option<Option<ParamKind>>,
    /// Where this object's own parameter goes: before those found below it.
    slot: usize,
}

/// The keys of one open object, for finding a duplicate.
struct KeySet<'a> {
    /// Where this object's keys start in [`SchemaCheck::keys`].
    from: usize,
    /// One bit per key fingerprint seen (a Bloom filter): a key whose bit is clear is new, and
    /// only the others are searched for.
    bloom: u64,
    /// The keys, once there are more than [`LINEAR_KEYS`].
    set: Option<BTreeSet<&'a [u8]>>,
}

impl<'a> KeySet<'a> {
    fn new(from: usize) -> Self {
        KeySet {
            from,
            bloom: 0,
            set: None,
        }
    }

    /// Adds `key`, which starts at `start` of `b`, to this object's keys (`keys` holds those of
    /// every open object); `false` if the object already has it.
    #[inline(always)]
    fn insert(
        &mut self,
        keys: &mut Vec<(u64, &'a [u8])>,
        b: &[u8],
        start: usize,
        key: &'a [u8],
    ) -> bool {
        if let Some(set) = &mut self.set {
            return set.insert(key);
        }
        let print = fingerprint(b, start, key.len());
        let bit = 1u64 << (print.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58);
        if self.bloom & bit != 0
            && keys
                .get(self.from..)
                .unwrap_or_default()
                .iter()
                .any(|&(p, k)| p == print && k == key)
        {
            return false;
        }
        self.bloom |= bit;
        keys.push((print, key));
        if keys.len() - self.from > LINEAR_KEYS {
            self.set = Some(keys.drain(self.from..).map(|(_, k)| k).collect());
        }
        true
    }
}

/// Reads the key whose opening quote is at `i` of `b`, an object's next key: one without escapes
/// that `set` (whose keys `keys` holds) does not have yet, which it then has. Returns the key and
/// the index after its closing quote.
#[inline(always)]
fn new_key<'a>(
    set: &mut KeySet<'a>,
    keys: &mut Vec<(u64, &'a [u8])>,
    b: &'a [u8],
    i: usize,
) -> Option<(&'a [u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = string(b, i, true)?;
    if escaped {
        return None;
    }
    let key = b.get(i + 1..end - 1)?;
    set.insert(keys, b, i + 1, key).then_some((key, end))
}

/// One open container of [`SchemaCheck::plain`]; the innermost one is kept out of
/// [`SchemaCheck::opens`], in a local of the walk. Two words, so that it stays in registers.
#[derive(Clone, Copy)]
struct Open {
    /// Where this object's keys start in [`SchemaCheck::keys`]; [`ARRAY`] for an array.
    from: usize,
    /// One bit per key fingerprint seen (a Bloom filter), as in [`KeySet`]; all ones once the
    /// object's keys moved to the innermost set of [`SchemaCheck::sets`]. Sixty-four keys with
    /// a bit each set all ones too, but they are in [`SchemaCheck::keys`]: see
    /// [`SchemaCheck::spilled`].
    bloom: u64,
}

/// [`Open::from`] of an array.
const ARRAY: usize = usize::MAX;

/// [`Open::bloom`] of an object whose keys are in an ordered set.
const SPILLED: u64 = u64::MAX;

impl Open {
    fn object(self) -> bool {
        self.from != ARRAY
    }
}

/// The open containers of [`SchemaCheck::plain`] around the innermost one: room for as many as
/// [`MAX_DEPTH`] allows, so that a full stack is the depth limit.
struct Opens([Open; MAX_DEPTH - 1]);

impl Default for Opens {
    fn default() -> Self {
        Opens([Open { from: 0, bloom: 0 }; MAX_DEPTH - 1])
    }
}

/// Where the string whose contents start at `j` ends, if its closing quote is among the eight
/// bytes of `w` (read at `j`) with nothing special before it: the quote's offset from `j`, and
/// a mask of the bytes before it. `Err(())` if something else special comes first (an escape
/// or a control byte).
#[inline(always)]
fn quote_in(w: u64) -> Result<Option<(usize, u64)>, ()> {
    let m = specials(w);
    if m == 0 {
        return Ok(None);
    }
    // The first special byte starts at bit `at`.
    let at = m.trailing_zeros() & !7;
    if (w >> at) as u8 != b'"' {
        return Err(());
    }
    Ok(Some(((at / 8) as usize, (1u64 << at) - 1)))
}

/// Reads the key whose opening quote is at `i` of `b`: one without escapes. Returns its
/// [`fingerprint`], the key and the index after its closing quote. Keys shorter than 16 bytes
/// are found and fingerprinted from the words they are read in.
#[inline(always)]
fn read_key(b: &[u8], i: usize) -> Option<(u64, &[u8], usize)> {
    let j = i + 1;
    let rest = b.get(j..)?;
    if let Some(words) = rest.first_chunk::<16>() {
        return key_in_words(b, j, words);
    }
    let (end, escaped) = string(b, i, true)?;
    if escaped {
        return None;
    }
    let key = b.get(j..end - 1)?;
    Some((fingerprint(b, j, key.len()), key, end))
}

/// [`read_key`] for a key whose contents start at `j` of `b` with the sixteen bytes `words`.
#[inline(always)]
fn key_in_words<'a>(b: &'a [u8], j: usize, words: &'a [u8; 16]) -> Option<(u64, &'a [u8], usize)> {
    let (w1, w2) = words.split_at(8);
    let w = u64::from_le_bytes(w1.try_into().ok()?);
    match quote_in(w).ok()? {
        Some((len, below)) => {
            let print = (w & below) ^ ((len as u64) << 56);
            Some((print, w1.get(..len)?, j + len + 1))
        }
        None => match quote_in(u64::from_le_bytes(w2.try_into().ok()?)).ok()? {
            Some((n, _)) => {
                let len = 8 + n;
                let print = w ^ ((len as u64) << 56);
                Some((print, words.get(..len)?, j + len + 1))
            }
            None => {
                let (end, escaped) = string_from(b, j + 16, true)?;
                let key = b.get(j..end - 1)?;
                (!escaped).then_some((w ^ ((key.len() as u64) << 56), key, end))
            }
        },
    }
}

/// Scans the string whose opening quote is at `i` of `b` as [`string`] does (strict), one
/// shorter than 16 bytes from the two words it is read in.
#[inline(always)]
fn value_string(b: &[u8], i: usize) -> Option<(usize, bool)> {
    if let Some(words) = b.get(i + 1..).and_then(<[u8]>::first_chunk::<16>) {
        let (w1, w2) = words.split_at(8);
        match quote_in(u64::from_le_bytes(w1.try_into().ok()?)) {
            Ok(Some((len, _))) => return Some((i + len + 2, false)),
            Ok(None) => match quote_in(u64::from_le_bytes(w2.try_into().ok()?)) {
                Ok(Some((len, _))) => return Some((i + len + 10, false)),
                Ok(None) => return string_from(b, i + 17, true),
                Err(()) => return string_from(b, i + 9, true),
            },
            Err(()) => {}
        }
    }
    string(b, i, true)
}

/// The [`fingerprint`] of `key`, at most eight bytes long.
const fn short_print(key: &[u8]) -> u64 {
    let mut v = 0u64;
    let mut n = 0;
    while n < key.len() && n < 8 {
        v |= (key[n] as u64) << (8 * n);
        n += 1;
    }
    v ^ ((key.len() as u64) << 56)
}

/// The fingerprint of `type`.
const TYPE_PRINT: u64 = short_print(b"type");
/// The fingerprint of [`KEYWORD`].
const KEYWORD_PRINT: u64 = {
    let k = KEYWORD.as_bytes();
    let mut v = 0u64;
    let mut n = 0;
    while n < 8 {
        v |= (k[n] as u64) << (8 * n);
        n += 1;
    }
    v ^ ((k.len() as u64) << 56)
};

/// What the member being read is, for [`SchemaCheck::plain`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Anything but a `type`.
    Other,
    /// The root's `type`.
    RootType,
    /// A `type` below the root.
    Type,
    /// An `x-mcp-header`: the plain reading stops there.
    Annotation,
}

/// What [`SchemaCheck::plain`] found.
enum Plain {
    /// The schema, accepted.
    Facts(SchemaFacts),
    /// An `x-mcp-header` key: the schema needs the full walk.
    Annotated,
}

/// The check, with buffers reused from schema to schema.
#[derive(Default)]
pub(crate) struct SchemaCheck<'a> {
    levels: Vec<Level<'a>>,
    /// The open containers of [`Self::plain`] but the innermost, outermost first.
    opens: Opens,
    /// The keys of the objects of [`Self::plain`] that have more than [`LINEAR_KEYS`],
    /// innermost last.
    sets: Vec<BTreeSet<&'a [u8]>>,
    /// The keys of the open objects, innermost last, each with its [`fingerprint`].
    keys: Vec<(u64, &'a [u8])>,
    /// The `properties` keys from the root to the schema object being read.
    path: Vec<&'a [u8]>,
    /// The parameters found so far, and their lower-cased names.
    found: Vec<HeaderParam>,
    seen: BTreeSet<String>,
}

/// A key's length and first bytes in one word: keys that differ there differ. `b` is the whole
/// input and the key starts at `start` (reading past the key, when the input allows, is cheaper
/// than copying it byte by byte; the bytes past it are masked off).
#[inline(always)]
fn fingerprint(b: &[u8], start: usize, len: usize) -> u64 {
    let head = match b.get(start..start + 8) {
        Some(word) => {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            u64::from_le_bytes(w)
        }
        None => b
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take(8)
            .enumerate()
            .fold(0, |v, (n, &c)| v | (u64::from(c) << (8 * n))),
    };
    let mask = if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * len)) - 1
    };
    (head & mask) ^ ((len as u64) << 56)
}

/// The text between the quotes of the string at `start..end` of `b`.
fn inner(b: &[u8], start: usize, end: usize) -> Option<&str> {
    core::str::from_utf8(b.get(start + 1..end.checked_sub(1)?)?).ok()
}

impl<'a> SchemaCheck<'a> {
    /// The parameters of the last schema accepted, in the order of the tree walk.
    pub(crate) fn take_params(&mut self) -> Vec<HeaderParam> {
        let mut found = core::mem::take(&mut self.found);
        if found.len() > 1 && map_is_sorted() {
            found.sort_by(|a, b| a.path.cmp(&b.path));
        }
        found
    }

    /// Checks the schema object starting at `i` in `b`.
    ///
    /// Most schemas carry no annotation: they are read by [`Self::plain`], which keeps no path
    /// and looks at no `type` but the root's. A schema with an `x-mcp-header` key anywhere is
    /// read again from its start by [`Self::walk`], which finds the parameters.
    pub(crate) fn run(&mut self, b: &'a [u8], i: usize) -> Option<SchemaFacts> {
        match self.plain(b, i)? {
            Plain::Facts(facts) => {
                self.found.clear();
                Some(facts)
            }
            Plain::Annotated => self.walk(b, i),
        }
    }

    /// Checks the schema object starting at `i` in `b` as [`Self::walk`] does, as long as it has
    /// no `x-mcp-header` key: well-formed, no duplicate keys, no deeper than [`MAX_DEPTH`], no
    /// key written with escapes, the root's `type` noted. A `type` below the root whose value is
    /// a string with escapes gives up, as the walk may.
    fn plain(&mut self, b: &'a [u8], mut i: usize) -> Option<Plain> {
        self.keys.clear();
        self.sets.clear();
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let mut root_object = false;
        // The innermost open container; the `outer` others are in `opens`.
        let mut top = Open { from: 0, bloom: 0 };
        let mut outer = 0usize;
        i = ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            return Some(Plain::Facts(SchemaFacts {
                end: i + 1,
                root_object,
            }));
        }
        // What the member whose value starts at `i` is (`Other` in an array).
        let mut member;
        (i, member) = self.plain_key(&mut top, outer, b, i)?;
        if member == Member::Annotation {
            return Some(Plain::Annotated);
        }
        loop {
            // A value starts at `i` (perhaps after whitespace), nested in `outer + 1` containers.
            match *b.get(i)? {
                b'"' => {
                    let (end, escaped) = value_string(b, i)?;
                    if escaped {
                        if member == Member::Type {
                            return None;
                        }
                    } else if member == Member::RootType {
                        root_object = b.get(i..end) == Some(b"\"object\"".as_slice());
                    }
                    i = end;
                }
                open @ (b'{' | b'[') => {
                    let object = open == b'{';
                    i = ws(b, i + 1);
                    let close = if object { b'}' } else { b']' };
                    if b.get(i) == Some(&close) {
                        i += 1;
                    } else {
                        // No room: its first value would sit deeper than allowed.
                        *self.opens.0.get_mut(outer)? = top;
                        outer += 1;
                        top = Open {
                            from: if object { self.keys.len() } else { ARRAY },
                            bloom: 0,
                        };
                        member = Member::Other;
                        if object {
                            (i, member) = self.plain_key(&mut top, outer, b, i)?;
                            if member == Member::Annotation {
                                return Some(Plain::Annotated);
                            }
                        }
                        continue;
                    }
                }
                b' ' | b'\n' | b'\r' | b'\t' => {
                    i = ws(b, i);
                    continue;
                }
                _ => i = scalar(b, i, true)?,
            }
            // After a value: a comma, or the end of containers.
            loop {
                match b.get(i) {
                    Some(b' ' | b'\n' | b'\r' | b'\t') => {
                        i = ws(b, i);
                        continue;
                    }
                    Some(b',') => {
                        i += 1;
                        member = Member::Other;
                        if top.object() {
                            (i, member) = self.plain_key(&mut top, outer, b, i)?;
                            if member == Member::Annotation {
                                return Some(Plain::Annotated);
                            }
                        }
                        break;
                    }
                    Some(b'}') if top.object() => {
                        self.keys.truncate(top.from);
                        if self.spilled(top) {
                            self.sets.pop();
                        }
                    }
                    Some(b']') if !top.object() => {}
                    _ => return None,
                }
                i += 1;
                if outer == 0 {
                    return Some(Plain::Facts(SchemaFacts {
                        end: i,
                        root_object,
                    }));
                }
                outer -= 1;
                top = *self.opens.0.get(outer)?;
            }
        }
    }

    /// [`Self::key`] for [`Self::plain`]: reads the key at `i` of the innermost object, `top`
    /// (inside `outer` other containers), and its colon; returns where its value (or the whitespace before it) starts and what the
    /// member is. An `x-mcp-header`
    /// key stops the plain reading there ([`Member::Annotation`], its colon not read).
    #[inline(always)]
    fn plain_key(
        &mut self,
        top: &mut Open,
        outer: usize,
        b: &'a [u8],
        i: usize,
    ) -> Option<(usize, Member)> {
        // The opening quote and the key's first sixteen bytes in one read, or whitespace first.
        let (print, key, end) = match b.get(i..).and_then(<[u8]>::first_chunk::<17>) {
            Some(chunk) if chunk[0] == b'"' => {
                let (_, words) = chunk.split_first_chunk::<1>()?;
                key_in_words(b, i + 1, words.first_chunk::<16>()?)?
            }
            _ => {
                let i = ws(b, i);
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                read_key(b, i)?
            }
        };
        let bit = 1u64 << (print.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58);
        if top.bloom & bit == 0 {
            top.bloom |= bit;
            self.keys.push((print, key));
        } else if !self.add_colliding(top, print, key) {
            return None;
        }
        let member = if print == TYPE_PRINT {
            if outer == 0 {
                Member::RootType
            } else {
                Member::Type
            }
        } else if print == KEYWORD_PRINT && key == KEYWORD.as_bytes() {
            return Some((end, Member::Annotation));
        } else {
            Member::Other
        };
        // Where the value starts, or whitespace before it.
        if b.get(end) == Some(&b':') {
            return Some((end + 1, member));
        }
        let i = ws(b, end);
        (b.get(i) == Some(&b':')).then_some((i + 1, member))
    }

    /// Whether the keys of `top`, an object, are in the innermost set of [`Self::sets`]: its
    /// Bloom bits are all ones, and its keys are not in [`Self::keys`] (where they are when
    /// sixty-four keys set a bit each).
    fn spilled(&self, top: Open) -> bool {
        top.bloom == SPILLED && self.keys.len() == top.from
    }

    /// Adds `key` (its [`fingerprint`] `print`) to the keys of `top`, an object whose Bloom bits
    /// have the key's bit already; `false` if it has the key. The keys move to an ordered set
    /// once more than [`LINEAR_KEYS`] would be searched (with 64 bits, by the 65th key).
    #[inline(always)]
    fn add_colliding(&mut self, top: &mut Open, print: u64, key: &'a [u8]) -> bool {
        if self.spilled(*top) {
            return self.sets.last_mut().is_some_and(|set| set.insert(key));
        }
        let mine = self.keys.get(top.from..).unwrap_or_default();
        if mine.len() > LINEAR_KEYS {
            let mut set: BTreeSet<&'a [u8]> = self.keys.drain(top.from..).map(|(_, k)| k).collect();
            let fresh = set.insert(key);
            self.sets.push(set);
            top.bloom = SPILLED;
            return fresh;
        }
        if mine.iter().any(|&(p, k)| p == print && k == key) {
            return false;
        }
        self.keys.push((print, key));
        true
    }

    /// Checks the schema object starting at `i` in `b`, finding its parameters.
    fn walk(&mut self, b: &'a [u8], mut i: usize) -> Option<SchemaFacts> {
        self.levels.clear();
        self.keys.clear();
        self.path.clear();
        self.found.clear();
        self.seen.clear();
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let mut facts = SchemaFacts {
            end: 0,
            root_object: false,
        };
        loop {
            // A value starts at `i`, nested in `levels.len()` containers.
            if self.levels.len() > MAX_DEPTH {
                return None;
            }
            let (place, want) = match self.levels.last() {
                Some(l) => (l.child, l.want),
                None => (Place::Schema, Want::Nothing),
            };
            match *b.get(i)? {
                open @ (b'{' | b'[') => {
                    match want {
                        Want::Text => return None,
                        Want::Kind => self.levels.last_mut()?.kind = Some(None),
                        Want::Nothing | Want::RootType => {}
                    }
                    let object = open == b'{';
                    i = ws(b, i + 1);
                    let close = if object { b'}' } else { b']' };
                    if b.get(i) == Some(&close) {
                        i += 1;
                    } else {
                        self.levels.push(Level {
                            object,
                            place: if object || place == Place::Data {
                                place
                            } else {
                                Place::Other
                            },
                            child: if place == Place::Data {
                                Place::Data
                            } else {
                                Place::Other
                            },
                            want: Want::Nothing,
                            pushed: false,
                            keys: KeySet::new(self.keys.len()),
                            name: None,
                            kind: None,
                            slot: self.found.len(),
                        });
                        if object {
                            i = self.key(b, i)?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    let (end, escaped) = string(b, i, true)?;
                    match want {
                        Want::Nothing => {}
                        Want::RootType => {
                            facts.root_object = b.get(i..end) == Some(b"\"object\"".as_slice());
                        }
                        _ if escaped => return None,
                        Want::Text => self.levels.last_mut()?.name = Some(inner(b, i, end)?),
                        Want::Kind => {
                            // Compared as bytes: only the string's own bytes, quotes included.
                            self.levels.last_mut()?.kind = Some(match b.get(i..end)? {
                                b"\"string\"" => Some(ParamKind::String),
                                b"\"integer\"" => Some(ParamKind::Integer),
                                b"\"boolean\"" => Some(ParamKind::Boolean),
                                _ => None,
                            });
                        }
                    }
                    i = end;
                }
                _ => {
                    match want {
                        Want::Text => return None,
                        Want::Kind => self.levels.last_mut()?.kind = Some(None),
                        Want::Nothing | Want::RootType => {}
                    }
                    i = scalar(b, i, true)?;
                }
            }
            // After a value: the end of its member, a comma, or the end of containers.
            loop {
                let Some(top) = self.levels.last_mut() else {
                    facts.end = i;
                    return Some(facts);
                };
                if top.pushed {
                    top.pushed = false;
                    self.path.pop();
                }
                let object = top.object;
                i = ws(b, i);
                match b.get(i) {
                    Some(b',') => {
                        i = ws(b, i + 1);
                        if object {
                            i = self.key(b, i)?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        let level = self.levels.pop()?;
                        self.keys.truncate(level.keys.from);
                        if let Some(name) = level.name {
                            self.annotation(name, level.kind, level.slot)?;
                        }
                        i += 1;
                    }
                    Some(b']') if !object => {
                        self.levels.pop();
                        i += 1;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// The annotation `name` of the schema object being closed (at [`Self::path`]), whose
    /// `type` was `kind`; `None` if it breaks a rule.
    fn annotation(
        &mut self,
        name: &str,
        kind: Option<Option<ParamKind>>,
        slot: usize,
    ) -> Option<()> {
        let Some(Some(kind)) = kind else {
            return None;
        };
        if self.path.is_empty() || !is_token(name) {
            return None;
        }
        if !self.seen.insert(name.to_ascii_lowercase()) {
            return None;
        }
        // Past the cap the serde scan gives the reason.
        if self.found.len() >= MAX_HEADER_PARAMS {
            return None;
        }
        let param = HeaderParam {
            path: self
                .path
                .iter()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect(),
            name: name.to_owned(),
            kind,
        };
        if slot <= self.found.len() {
            self.found.insert(slot, param);
        }
        Some(())
    }

    /// Reads the key at `i` of the innermost object and its colon; returns where its value
    /// starts.
    #[inline(always)]
    fn key(&mut self, b: &'a [u8], i: usize) -> Option<usize> {
        let root = self.levels.len() == 1;
        let level = self.levels.last_mut()?;
        let (key, end) = new_key(&mut level.keys, &mut self.keys, b, i)?;
        (level.child, level.want) = match level.place {
            Place::Properties => {
                self.path.push(key);
                level.pushed = true;
                (Place::Schema, Want::Nothing)
            }
            Place::Data => (Place::Data, Want::Nothing),
            Place::Names => (Place::Other, Want::Nothing),
            Place::Other if key == KEYWORD.as_bytes() => return None,
            Place::Other => (member_place(key), Want::Nothing),
            Place::Schema => match key {
                b"x-mcp-header" => (Place::Other, Want::Text),
                b"type" if root => (Place::Other, Want::RootType),
                b"type" => (Place::Other, Want::Kind),
                b"properties" => (Place::Properties, Want::Nothing),
                _ => (member_place(key), Want::Nothing),
            },
        };
        let i = ws(b, end);
        (b.get(i) == Some(&b':')).then(|| ws(b, i + 1))
    }
}

#[cfg(test)]
mod tests;
