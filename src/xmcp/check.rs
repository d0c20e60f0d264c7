//! The schema check of the listing's one pass: walks an `inputSchema` in place, without building
//! it, and finds its `x-mcp-header` parameters by the rules of [`super::header_params`].
//!
//! It settles the usual schema: well-formed, no duplicate keys, nested no deeper than
//! [`MAX_DEPTH`], its annotations valid, in one reading whether it has annotations or not. It
//! gives up (`None`) on anything else, and also on what it leaves to the serde reading: keys,
//! annotation values or the `type`s of annotated-path schemas written with escapes. The serde
//! reading then decides and names the reason. Numbers are never evaluated, so `1e400` is kept as
//! written.

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

/// One open container of [`SchemaCheck::run`]; the innermost one is kept out of
/// [`SchemaCheck::opens`], in a local of the walk.
#[derive(Clone, Copy)]
struct Open {
    /// Where this object's keys start in [`SchemaCheck::keys`]; [`ARRAY`] for an array.
    from: usize,
    /// One bit per key fingerprint seen (a Bloom filter): a key whose bit is clear is new, and
    /// only the others are searched for. All ones once the object's keys moved to the innermost
    /// set of [`SchemaCheck::sets`]. Sixty-four keys with a bit each set all ones too, but they
    /// are in [`SchemaCheck::keys`]: see [`SchemaCheck::spilled`].
    bloom: u64,
    /// Where this container sits (an array: [`Place::Data`] or [`Place::Other`], which its
    /// items share).
    place: Place,
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

/// The open containers of [`SchemaCheck::run`] around the innermost one: room for as many as
/// [`MAX_DEPTH`] allows, so that a full stack is the depth limit.
struct Opens([Open; MAX_DEPTH - 1]);

impl Default for Opens {
    fn default() -> Self {
        Opens(
            [Open {
                from: 0,
                bloom: 0,
                place: Place::Other,
            }; MAX_DEPTH - 1],
        )
    }
}

/// What an open [`Place::Schema`] object has shown so far of an annotation.
#[derive(Clone, Copy, Default)]
struct Note {
    /// Where this object's own parameter goes among [`SchemaCheck::found`]: before those
    /// found below it.
    slot: usize,
    /// Its `type`.
    kind: TypeSeen,
    /// The span of its `x-mcp-header` value's text (a string without escapes).
    name: Option<(usize, usize)>,
    /// The span of the `properties` key it was reached by (none for the root).
    key: (usize, usize),
}

/// What an open [`Place::Schema`] object's `type` member was, as far as its annotation goes.
#[derive(Clone, Copy, Default)]
enum TypeSeen {
    /// No `type` member (yet).
    #[default]
    Absent,
    /// A `type` that is none of the three kinds (another string, or not a string).
    Unusable,
    /// One of the three kinds.
    Kind(ParamKind),
}

/// A [`Note`] per depth (the root's at 0).
struct Notes([Note; MAX_DEPTH]);

impl Default for Notes {
    fn default() -> Self {
        Notes([Note::default(); MAX_DEPTH])
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
pub(crate) fn value_string(b: &[u8], i: usize) -> Option<(usize, bool)> {
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

/// What the member being read is, for [`SchemaCheck::run`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Nothing the check looks at.
    Other,
    /// The root's `type`.
    RootType,
    /// The `type` of a [`Place::Schema`] object below the root.
    Type,
    /// The `x-mcp-header` of a [`Place::Schema`] object.
    Annotation,
}

/// The check, with buffers reused from schema to schema.
#[derive(Default)]
pub(crate) struct SchemaCheck<'a> {
    /// The open containers but the innermost, outermost first.
    opens: Opens,
    /// What the open [`Place::Schema`] objects have shown, by depth.
    notes: Notes,
    /// The keys of the open objects that have more than [`LINEAR_KEYS`], innermost last.
    sets: Vec<BTreeSet<&'a [u8]>>,
    /// The keys of the open objects, innermost last, each with its [`fingerprint`].
    keys: Vec<(u64, &'a [u8])>,
    /// The parameters found so far.
    found: Vec<HeaderParam>,
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

impl<'a> SchemaCheck<'a> {
    /// The parameters of the last schema accepted, in the order of the tree walk.
    pub(crate) fn take_params(&mut self) -> Vec<HeaderParam> {
        let mut found = core::mem::take(&mut self.found);
        if found.len() > 1 && map_is_sorted() {
            found.sort_by(|a, b| a.path.cmp(&b.path));
        }
        found
    }

    /// Checks the schema object starting at `i` in `b`: well-formed, no duplicate keys, no
    /// deeper than [`MAX_DEPTH`], no key written with escapes, the root's `type` noted, and its
    /// `x-mcp-header` parameters found (see [`super::header_params`] for the rules). Gives up
    /// where a rule is broken, and on what the serde reading settles: an annotation value or
    /// the `type` of a schema on the `properties` path written with escapes.
    ///
    /// Where a value sits ([`Place`]) is worked out only for containers: a scalar's place
    /// matters only for the members the key alone picks out (`type`, `x-mcp-header`).
    pub(crate) fn run(&mut self, b: &'a [u8], mut i: usize) -> Option<SchemaFacts> {
        self.keys.clear();
        self.sets.clear();
        self.found.clear();
        if b.get(i) != Some(&b'{') {
            return None;
        }
        let mut root_object = false;
        // The innermost open container; the `outer` others are in `opens`.
        let mut top = Open {
            from: 0,
            bloom: 0,
            place: Place::Schema,
        };
        *self.notes.0.first_mut()? = Note::default();
        let mut outer = 0usize;
        i = ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            return Some(SchemaFacts {
                end: i + 1,
                root_object,
            });
        }
        // What the member whose value starts at `i` is (`Other` in an array), and its key.
        let (mut member, mut key);
        (i, member, key) = self.plain_key(&mut top, outer, b, i)?;
        loop {
            // A value starts at `i` (perhaps after whitespace), nested in `outer + 1` containers.
            match *b.get(i)? {
                b'"' => {
                    let (end, escaped) = value_string(b, i)?;
                    match member {
                        Member::Other => {}
                        Member::RootType => {
                            root_object = b.get(i..end) == Some(b"\"object\"".as_slice());
                        }
                        _ if escaped => return None,
                        Member::Type => {
                            // Compared as bytes: only the string's own bytes, quotes included.
                            self.notes.0.get_mut(outer)?.kind = match b.get(i..end)? {
                                b"\"string\"" => TypeSeen::Kind(ParamKind::String),
                                b"\"integer\"" => TypeSeen::Kind(ParamKind::Integer),
                                b"\"boolean\"" => TypeSeen::Kind(ParamKind::Boolean),
                                _ => TypeSeen::Unusable,
                            };
                        }
                        Member::Annotation => {
                            self.notes.0.get_mut(outer)?.name = Some((i + 1, end - 1))
                        }
                    }
                    i = end;
                }
                open @ (b'{' | b'[') => {
                    self.not_text(member, outer)?;
                    let object = open == b'{';
                    i = ws(b, i + 1);
                    let close = if object { b'}' } else { b']' };
                    if b.get(i) == Some(&close) {
                        i += 1;
                    } else {
                        let place = if top.object() {
                            child_place(top.place, member, key)
                        } else {
                            top.place
                        };
                        let place = match place {
                            Place::Data | Place::Other => place,
                            _ if !object => Place::Other,
                            _ => place,
                        };
                        // No room: its first value would sit deeper than allowed.
                        *self.opens.0.get_mut(outer)? = top;
                        outer += 1;
                        top = Open {
                            from: if object { self.keys.len() } else { ARRAY },
                            bloom: 0,
                            place,
                        };
                        if place == Place::Schema {
                            let start = offset(b, key);
                            *self.notes.0.get_mut(outer)? = Note {
                                slot: self.found.len(),
                                kind: TypeSeen::Absent,
                                name: None,
                                key: (start, start + key.len()),
                            };
                        }
                        member = Member::Other;
                        if object {
                            (i, member, key) = self.plain_key(&mut top, outer, b, i)?;
                        }
                        continue;
                    }
                }
                b' ' | b'\n' | b'\r' | b'\t' => {
                    i = ws(b, i);
                    continue;
                }
                _ => {
                    self.not_text(member, outer)?;
                    i = scalar(b, i, true)?;
                }
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
                            (i, member, key) = self.plain_key(&mut top, outer, b, i)?;
                        }
                        break;
                    }
                    Some(b'}') if top.object() => {
                        self.keys.truncate(top.from);
                        if self.spilled(top) {
                            self.sets.pop();
                        }
                        if top.place == Place::Schema {
                            let note = *self.notes.0.get(outer)?;
                            if let Some(name) = note.name {
                                self.annotation(b, name, note, outer)?;
                            }
                        }
                    }
                    Some(b']') if !top.object() => {}
                    _ => return None,
                }
                i += 1;
                if outer == 0 {
                    return Some(SchemaFacts {
                        end: i,
                        root_object,
                    });
                }
                outer -= 1;
                top = *self.opens.0.get(outer)?;
            }
        }
    }

    /// For a value that is not a string: gives up if `member` wants an annotation's text, and
    /// notes a `type` that is none of the three kinds.
    #[inline(always)]
    fn not_text(&mut self, member: Member, outer: usize) -> Option<()> {
        match member {
            Member::Annotation => None,
            Member::Type => {
                self.notes.0.get_mut(outer)?.kind = TypeSeen::Unusable;
                Some(())
            }
            Member::Other | Member::RootType => Some(()),
        }
    }

    /// Reads the key at `i` of the innermost object, `top` (inside `outer` other containers),
    /// and its colon; returns where its value (or the whitespace before it) starts, what the
    /// member is and the key. An `x-mcp-header` key of an object that is a schema off the
    /// `properties` path gives up.
    #[inline(always)]
    fn plain_key(
        &mut self,
        top: &mut Open,
        outer: usize,
        b: &'a [u8],
        i: usize,
    ) -> Option<(usize, Member, &'a [u8])> {
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
            match (top.place, outer) {
                (Place::Schema, 0) => Member::RootType,
                (Place::Schema, _) => Member::Type,
                _ => Member::Other,
            }
        } else if print == KEYWORD_PRINT && key == KEYWORD.as_bytes() {
            match top.place {
                Place::Schema => Member::Annotation,
                Place::Other => return None,
                // A name or data.
                Place::Properties | Place::Names | Place::Data => Member::Other,
            }
        } else {
            Member::Other
        };
        // Where the value starts, or whitespace before it.
        if b.get(end) == Some(&b':') {
            return Some((end + 1, member, key));
        }
        let i = ws(b, end);
        (b.get(i) == Some(&b':')).then_some((i + 1, member, key))
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

    /// The annotation whose text is at `name` of `b`, of the [`Place::Schema`] object being
    /// closed at depth `outer` (whose [`Note`] is `note`); `None` if it breaks a rule.
    #[cold]
    fn annotation(
        &mut self,
        b: &[u8],
        name: (usize, usize),
        note: Note,
        outer: usize,
    ) -> Option<()> {
        let TypeSeen::Kind(kind) = note.kind else {
            return None;
        };
        let name = core::str::from_utf8(b.get(name.0..name.1)?).ok()?;
        // The root has no path.
        if outer == 0 || !is_token(name) {
            return None;
        }
        // Compared case-insensitively with those found so far (at most [`MAX_HEADER_PARAMS`]).
        if self.found.iter().any(|p| p.name.eq_ignore_ascii_case(name)) {
            return None;
        }
        // Past the cap the serde scan gives the reason.
        if self.found.len() >= MAX_HEADER_PARAMS {
            return None;
        }
        // The path: the keys the schema objects below the root were reached by. The object
        // being closed is at `outer`, the others in `opens`.
        let mut path = Vec::new();
        for depth in 1..=outer {
            let place = match self.opens.0.get(depth) {
                Some(open) if depth < outer => open.place,
                _ => Place::Schema,
            };
            if place == Place::Schema {
                let (s, e) = self.notes.0.get(depth)?.key;
                path.push(String::from_utf8_lossy(b.get(s..e)?).into_owned());
            }
        }
        let param = HeaderParam {
            path,
            name: name.to_owned(),
            kind,
        };
        // The slot was taken when the parameter's schema opened, and `found` only grows: a slot
        // past its end is a broken invariant, left to the serde reading rather than dropped.
        if note.slot > self.found.len() {
            return None;
        }
        self.found.insert(note.slot, param);
        Some(())
    }
}

/// Where the value of the member `key` of an object at `place` sits, for a container value.
#[inline(always)]
fn child_place(place: Place, member: Member, key: &[u8]) -> Place {
    match place {
        Place::Properties => Place::Schema,
        Place::Data => Place::Data,
        Place::Names => Place::Other,
        Place::Schema if member != Member::Other => Place::Other,
        Place::Schema if key == b"properties" => Place::Properties,
        Place::Schema | Place::Other => member_place(key),
    }
}

/// Where `part`, a slice of `whole`, starts in it.
fn offset(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

#[cfg(test)]
mod tests;
