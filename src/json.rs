//! A small validating JSON scanner over a complete byte slice, for the listing's one pass.
//!
//! It never builds values: it finds where strings, numbers and containers end, checking the
//! grammar of RFC 8259 on the way (strings are skipped with `memchr`). Two levels of strictness
//! mirror what `serde_json` checks when it ignores a value and when it reads one:
//!
//! - [`skip`]: the grammar only (as `serde_json` ignores a value: any nesting depth, `\u` escapes
//!   need four hex digits but may be lone surrogates, numbers are not evaluated);
//! - [`string`] with `strict`: also refuses lone surrogates (as `serde_json` does when it decodes
//!   a string).
//!
//! Numbers are never evaluated, so `1e400` is as good as `1`: a value is kept byte for byte.
//! The input is expected to be valid UTF-8 already (the callers check it once for the whole body);
//! the scanner only looks at ASCII bytes. Every function returns `None` where the input breaks
//! the grammar and never panics.

use crate::prelude::*;

/// Whether `b` is JSON whitespace.
#[inline(always)]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// The index of the first non-whitespace byte at or after `i`.
#[inline(always)]
pub(crate) fn ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).copied().is_some_and(is_ws) {
        i += 1;
    }
    i
}

/// Whether `s` holds a byte below 0x20 (not allowed raw in a JSON string). Written without an
/// early exit so that it vectorizes.
#[inline(always)]
fn has_control(s: &[u8]) -> bool {
    s.iter().fold(0xFF_u8, |m, &c| m.min(c)) < 0x20
}

fn hex4(b: &[u8], i: usize) -> Option<u16> {
    let digits = b.get(i..i + 4)?;
    let mut v: u16 = 0;
    for &d in digits {
        let n = (d as char).to_digit(16)?;
        v = (v << 4) | n as u16;
    }
    Some(v)
}

/// Checks the escape whose letter is at `i` (just after the backslash); returns the index after
/// it. `strict` refuses lone surrogates.
fn escape(b: &[u8], i: usize, strict: bool) -> Option<usize> {
    match *b.get(i)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 1),
        b'u' => {
            let v = hex4(b, i + 1)?;
            if !strict {
                return Some(i + 5);
            }
            match v {
                0xD800..=0xDBFF => {
                    if b.get(i + 5) != Some(&b'\\') || b.get(i + 6) != Some(&b'u') {
                        return None;
                    }
                    let low = hex4(b, i + 7)?;
                    (0xDC00..=0xDFFF).contains(&low).then_some(i + 11)
                }
                0xDC00..=0xDFFF => None,
                _ => Some(i + 5),
            }
        }
        _ => None,
    }
}

/// Bytes of a string looked at a word at a time before `memchr` takes over: most keys and
/// values of a schema are shorter, and for them eight bytes per step cost less than setting up a
/// vector search. Measured on the listed page: 48 counts the fewest (16 to 80 tried).
const SHORT: usize = 48;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A mark on the high bit of the first byte of `w` (little-endian) that is `"`, `\` or below
/// 0x20 (marks after the first may be spurious; the first is exact).
///
/// A byte is `"` or below 0x20 exactly when, with its bit 1 flipped, it is below 0x21 (`"`
/// becomes 0x20 and the bytes below 0x20 stay there), so two tests "below n" cover the three
/// kinds: bytes below 0x21 after the flip, and bytes below 1 after an exclusive or with `\`.
#[inline(always)]
pub(crate) fn specials(w: u64) -> u64 {
    let quote_or_control = (w ^ (ONES * 0x02)).wrapping_sub(ONES * 0x21);
    let backslash = (w ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES);
    // Neither exclusive or touches a high bit: `!w` stands for both.
    (quote_or_control | backslash) & !w & HIGHS
}

/// The index of the first `"`, `\` or control byte at or after `j`, `None` if there is none
/// (a word at a time, then `memchr`): for [`string_from`], and for readers that decode a string
/// as they scan it.
#[inline(always)]
pub(crate) fn next_special(b: &[u8], j: usize) -> Option<usize> {
    let rest = b.get(j..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = j;
    for word in words.by_ref().take(SHORT / 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let m = specials(u64::from_le_bytes(w));
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if at - j < SHORT {
        // Fewer than eight bytes left: one by one.
        return words
            .remainder()
            .iter()
            .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            .map(|p| at + p);
    }
    let tail = b.get(at..)?;
    let k = memchr::memchr2(b'"', b'\\', tail)?;
    let before = tail.get(..k)?;
    if has_control(before) {
        return before.iter().position(|&c| c < 0x20).map(|p| at + p);
    }
    Some(at + k)
}

/// Scans the string whose opening quote is at `i`. Returns the index after the closing quote
/// and whether the string has escapes.
#[inline(always)]
pub(crate) fn string(b: &[u8], i: usize, strict: bool) -> Option<(usize, bool)> {
    string_from(b, i + 1, strict)
}

/// [`string`] for a string whose contents up to `j` are known to hold no `"`, `\` or control
/// byte: scans from `j`.
#[inline(always)]
pub(crate) fn string_from(b: &[u8], mut j: usize, strict: bool) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        let k = next_special(b, j)?;
        match *b.get(k)? {
            b'"' => return Some((k + 1, escaped)),
            b'\\' => {
                escaped = true;
                j = escape(b, k + 1, strict)?;
            }
            _ => return None,
        }
    }
}

/// Scans the number starting at `i`; returns the index after it.
#[inline(always)]
pub(crate) fn number(b: &[u8], mut i: usize) -> Option<usize> {
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while digit(i) {
                i += 1;
            }
        }
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digit(i) {
            return None;
        }
        while digit(i) {
            i += 1;
        }
    }
    Some(i)
}

/// Scans `true`, `false` or `null` at `i`; returns the index after it. The first four bytes
/// are compared as one word.
#[inline(always)]
fn literal(b: &[u8], i: usize) -> Option<usize> {
    const TRUE: u32 = u32::from_le_bytes(*b"true");
    const NULL: u32 = u32::from_le_bytes(*b"null");
    const FALS: u32 = u32::from_le_bytes(*b"fals");
    let four = u32::from_le_bytes(*b.get(i..)?.first_chunk::<4>()?);
    if four == TRUE || four == NULL {
        Some(i + 4)
    } else if four == FALS && b.get(i + 4) == Some(&b'e') {
        Some(i + 5)
    } else {
        None
    }
}

/// Scans a scalar (string, number or literal) at `i`, `strict` as in [`string`]. Returns the
/// index after it.
#[inline(always)]
pub(crate) fn scalar(b: &[u8], i: usize, strict: bool) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string(b, i, strict).map(|(end, _)| end),
        b'-' | b'0'..=b'9' => number(b, i),
        _ => literal(b, i),
    }
}

/// The kinds of the containers a walk is in: a bit per level (1 = object), as deep as the input
/// goes.
struct Levels {
    bits: Vec<u64>,
    depth: usize,
}

impl Levels {
    fn new() -> Self {
        Levels {
            bits: Vec::new(),
            depth: 0,
        }
    }

    fn push(&mut self, object: bool) {
        let (word, bit) = (self.depth / 64, self.depth % 64);
        if word == self.bits.len() {
            self.bits.push(0);
        }
        if let Some(w) = self.bits.get_mut(word) {
            if object {
                *w |= 1 << bit;
            } else {
                *w &= !(1 << bit);
            }
        }
        self.depth += 1;
    }

    /// Leaves the innermost container; whether it was an object.
    fn pop(&mut self) -> bool {
        self.depth -= 1;
        let (word, bit) = (self.depth / 64, self.depth % 64);
        self.bits.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }
}

/// Skips the value starting at `i` (after any whitespace), as `serde_json` ignores one: the
/// grammar only, any depth, lone surrogates allowed. Returns the index after the value.
// Kept out of line: called from many places, for members nobody reads.
#[inline(never)]
pub(crate) fn skip(b: &[u8], i: usize) -> Option<usize> {
    let mut i = ws(b, i);
    match *b.get(i)? {
        b'{' | b'[' => {}
        _ => return scalar(b, i, false),
    }
    // The kinds of the enclosing containers; the innermost one's is `object`.
    let mut outer = Levels::new();
    let mut object = false;
    let mut depth = 0usize;
    // At the top of the loop, `i` is where a value starts (after whitespace).
    loop {
        match *b.get(i)? {
            open @ (b'{' | b'[') => {
                i = ws(b, i + 1);
                let is_object = open == b'{';
                let close = if is_object { b'}' } else { b']' };
                if b.get(i) == Some(&close) {
                    i += 1;
                } else {
                    if depth > 0 {
                        outer.push(object);
                    }
                    object = is_object;
                    depth += 1;
                    if object {
                        i = key(b, i)?;
                    }
                    continue;
                }
            }
            _ => i = scalar(b, i, false)?,
        }
        // After a value: a comma, or the end of containers.
        loop {
            if depth == 0 {
                return Some(i);
            }
            i = ws(b, i);
            match b.get(i) {
                Some(b',') => {
                    i = ws(b, i + 1);
                    if object {
                        i = key(b, i)?;
                    }
                    break;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ => return None,
            }
            i += 1;
            depth -= 1;
            if depth > 0 {
                object = outer.pop();
            }
        }
    }
}

/// Finds where the value starting at `i` ends, without checking its grammar beyond what that
/// takes: brackets are counted outside strings (which are scanned as [`string`] does). A valid
/// value is delimited exactly; an invalid one may be delimited anywhere or not at all (`None`),
/// so what this returns must be checked by a reader before it is trusted (the listing's page
/// pass does, see `jsonrpc::parse_message_for_page`). Scalars are checked by [`skip`].
#[inline(never)]
pub(crate) fn delimit(b: &[u8], i: usize) -> Option<usize> {
    let i = ws(b, i);
    if !matches!(b.get(i)?, b'{' | b'[') {
        return skip(b, i);
    }
    let mut depth = 0usize;
    let mut j = i;
    loop {
        // Only the bytes that open or close a container or a string matter here.
        while let Some(&c) = b.get(j) {
            if matches!(c, b'"' | b'{' | b'}' | b'[' | b']') {
                break;
            }
            j += 1;
        }
        match *b.get(j)? {
            b'"' => j = string(b, j, false)?.0,
            b'{' | b'[' => {
                depth += 1;
                j += 1;
            }
            _ => {
                depth = depth.checked_sub(1)?;
                j += 1;
                if depth == 0 {
                    return Some(j);
                }
            }
        }
    }
}

/// Scans an object key at `i` and its colon; returns where the value starts (after
/// whitespace).
#[inline(always)]
fn key(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let (end, _) = string(b, i, false)?;
    let i = ws(b, end);
    (b.get(i) == Some(&b':')).then(|| ws(b, i + 1))
}

/// Decodes the JSON string whose quotes are at `span` (both included), refusing lone
/// surrogates. `None` if it is not a valid string.
pub(crate) fn unescape(s: &[u8]) -> Option<String> {
    let inner = s.get(1..s.len().checked_sub(1)?)?;
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let k = i + memchr::memchr(b'\\', inner.get(i..)?).unwrap_or(inner.len() - i);
        out.push_str(core::str::from_utf8(inner.get(i..k)?).ok()?);
        if k == inner.len() {
            break;
        }
        let c = match *inner.get(k + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let v = u32::from(hex4(inner, k + 2)?);
                i = k + 6;
                let code = match v {
                    0xD800..=0xDBFF => {
                        if inner.get(i) != Some(&b'\\') || inner.get(i + 1) != Some(&b'u') {
                            return None;
                        }
                        let low = u32::from(hex4(inner, i + 2)?);
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        i += 6;
                        0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => v,
                };
                out.push(char::from_u32(code)?);
                continue;
            }
            _ => return None,
        };
        out.push(c);
        i = k + 2;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skips(s: &str) -> Option<usize> {
        skip(s.as_bytes(), 0)
    }

    #[test]
    fn skips_what_serde_json_ignores() {
        for ok in [
            "0",
            "-0.5e+10",
            "1e400",
            "\"a\\u00e9\\ud800\"",
            "[]",
            "{}",
            "[1,[2,{\"a\":[null,true,false]}],\"x\"]",
            " { \"a\" : 1 , \"b\" : [ ] } ",
        ] {
            let end = skips(ok).unwrap_or_else(|| panic!("{ok}"));
            assert_eq!(ws(ok.as_bytes(), end), ok.len(), "{ok}");
            let mut de = serde_json::Deserializer::from_str(ok);
            assert!(
                serde::de::IgnoredAny::deserialize(&mut de).is_ok() && de.end().is_ok(),
                "{ok}"
            );
        }
        for bad in [
            "",
            "01",
            "1.",
            "-",
            "1e",
            "[1,]",
            "{\"a\"}",
            "{\"a\":1,}",
            "[1 2]",
            "\"\x01\"",
            "\"\\x\"",
            "\"\\u12\"",
            "tru",
            "{1:2}",
            "[",
            "{\"a\":[}",
            "]",
        ] {
            let full = skips(bad).is_some_and(|end| ws(bad.as_bytes(), end) == bad.len());
            assert!(!full, "{bad:?}");
        }
    }

    #[test]
    fn specials_marks_the_first_special_byte_exactly() {
        let special = |c: u8| c == b'"' || c == b'\\' || c < 0x20;
        // Any two bytes at any two places of a word of plain bytes.
        for filler in [b'a', b' ', b'#', 0x7f, 0xa2, 0xff] {
            for p1 in 0..8 {
                for p2 in p1 + 1..8 {
                    for c1 in 0..=255u8 {
                        for c2 in 0..=255u8 {
                            let mut w = [filler; 8];
                            w[p1] = c1;
                            w[p2] = c2;
                            let m = specials(u64::from_le_bytes(w));
                            let first = w.iter().position(|&c| special(c));
                            let got = (m != 0).then(|| (m.trailing_zeros() / 8) as usize);
                            assert_eq!(got, first, "{w:?}");
                            if m != 0 {
                                assert_eq!(m.trailing_zeros() % 8, 7, "{w:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// [`string`], byte by byte.
    fn string_by_bytes(b: &[u8], i: usize, strict: bool) -> Option<(usize, bool)> {
        let mut j = i + 1;
        let mut escaped = false;
        loop {
            match *b.get(j)? {
                b'"' => return Some((j + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    j = escape(b, j + 1, strict)?;
                }
                c if c < 0x20 => return None,
                _ => j += 1,
            }
        }
    }

    #[test]
    fn strings_of_every_length_with_a_special_byte_anywhere() {
        // Past the words read one by one and into the memchr search; the input ends at the
        // string's end or a few bytes after it.
        for len in 0..=130 {
            for at in 0..=len {
                for special in [&b"\\n"[..], b"\x01", b"\x1f", b"\"", b"\\u00e9", b"\\ud800"] {
                    for after in [&b""[..], b"\"", b",\"ab\"", b"\"}}}}}}}}}}"] {
                        let mut t = vec![b'"'];
                        t.extend(core::iter::repeat_n(b'a', at));
                        t.extend_from_slice(special);
                        t.extend(core::iter::repeat_n(b'x', len - at));
                        t.extend_from_slice(after);
                        for strict in [true, false] {
                            assert_eq!(
                                string(&t, 0, strict),
                                string_by_bytes(&t, 0, strict),
                                "{:?} {strict}",
                                String::from_utf8_lossy(&t)
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn literals_are_read_whole_and_only_whole() {
        // Every literal, each cut short, each with one byte changed, alone and followed by more.
        for word in ["true", "false", "null"] {
            for cut in 0..=word.len() {
                for change in 0..=cut {
                    let mut text = word.as_bytes()[..cut].to_vec();
                    if let Some(c) = text.get_mut(change) {
                        *c ^= 0x20;
                    }
                    for tail in ["", "]", "e"] {
                        let mut t = text.clone();
                        t.extend_from_slice(tail.as_bytes());
                        let starts = t.starts_with(word.as_bytes());
                        let got = scalar(&t, 0, true);
                        assert_eq!(got, starts.then_some(word.len()), "{t:?}");
                        let framed = [b"{\"a\":".as_slice(), &t, b"}"].concat();
                        assert_eq!(
                            skip(&framed, 0) == Some(framed.len()),
                            t == word.as_bytes(),
                            "{framed:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn deep_nesting_needs_no_recursion() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(skips(&deep), Some(deep.len()));
        let open = "[{\"a\":".repeat(50_000);
        assert_eq!(skips(&open), None);
    }

    #[test]
    fn strict_strings_refuse_lone_surrogates() {
        let s = |t: &str| string(t.as_bytes(), 0, true).map(|(e, esc)| (e == t.len(), esc));
        assert_eq!(s(r#""\ud83d\ude00""#), Some((true, true)));
        assert_eq!(s(r#""plain""#), Some((true, false)));
        assert_eq!(s(r#""\ud800""#), None);
        assert_eq!(s(r#""\udc00""#), None);
        assert_eq!(s(r#""\ud800\u0041""#), None);
        assert_eq!(
            string(br#""\ud800""#, 0, false).map(|(e, _)| e),
            Some(8),
            "ignored strings keep lone surrogates"
        );
    }

    #[test]
    fn unescapes_like_serde_json() {
        for t in [
            r#""plain""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\ud83d\ude00x""#,
            r#""é""#,
        ] {
            let ours = unescape(t.as_bytes());
            let theirs: String = serde_json::from_str(t).unwrap();
            assert_eq!(ours.as_deref(), Some(theirs.as_str()), "{t}");
        }
        assert_eq!(unescape(br#""\ud800""#), None);
        assert_eq!(unescape(br#""\ud800\u0041""#), None);
    }

    use serde::Deserialize as _;
}
