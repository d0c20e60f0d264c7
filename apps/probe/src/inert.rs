//! Server-chosen text made inert before it reaches a terminal.
//!
//! Everything `mcp-probe` prints that a server chose — tool names and descriptions, text content,
//! JSON-RPC error messages, OAuth `error` and `error_description`, URLs of an authorization
//! server — could carry terminal control sequences (an `ESC ]` that retitles the window or writes
//! the clipboard, an `ESC [` that clears the screen or moves the cursor over earlier lines, a C1
//! `CSI`) or bidirectional overrides that make a line read differently from the bytes it holds.
//! Before printing, each such character is replaced by a visible escape, `\u{…}`, so the text
//! stays readable and nothing of it is interpreted:
//!
//! - C0 controls (U+0000–U+001F) but the line feed and the tab in multi-line text, DEL (U+007F)
//!   and the C1 controls (U+0080–U+009F);
//! - the bidirectional formatting characters: embeddings and overrides (U+202A–U+202E),
//!   isolates (U+2066–U+2069), and the marks U+200E, U+200F and U+061C.
//!
//! The JSON documents of `--json` stay exact: serde_json already writes C0 controls as
//! `\u00XX`, and [`json`] writes the others the same way, so a reader decodes the very string
//! the server sent while the printed bytes hold no control character.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as itself (line feeds and tabs aside: see [`text`]).
fn dangerous(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| dangerous(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if dangerous(c) && !keep(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Multi-line text (a text content block): line feeds and tabs are kept, every other dangerous
/// character is escaped.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// One line (an error message, a name, a URL): every dangerous character is escaped, line feeds
/// and carriage returns too, so a server cannot start a line that looks like the probe's own.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// A JSON document as one line of text whose strings hold no control or bidirectional
/// character as itself: each is written as a `\uXXXX` escape, which decodes to the same string
/// ([`JsonWriter`]).
pub fn json(value: &serde_json::Value) -> String {
    let mut out = JsonWriter::new(Vec::with_capacity(256));
    // Writing into a `Vec` cannot fail, and serde_json writes valid UTF-8.
    let _ = serde_json::to_writer(&mut out, value);
    String::from_utf8(out.into_inner()).unwrap_or_default()
}

/// Writes serialized JSON to `W` with every dangerous character of its strings written as a
/// `\uXXXX` escape, whatever pieces the serializer writes it in; see [`json`].
pub struct JsonWriter<W> {
    inner: W,
    /// The start of a character whose other bytes have not been written yet.
    partial: Vec<u8>,
}

impl<W: std::io::Write> JsonWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> JsonWriter<W> {
        JsonWriter {
            inner,
            partial: Vec::new(),
        }
    }

    /// The writer inside, once the document is written.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Writes `bytes`, which hold whole characters only.
    ///
    /// A JSON string holds no raw C0 control (serde_json escapes them, and a raw value taken
    /// from a server was checked to be JSON), so a raw line feed, carriage return or tab is
    /// whitespace between tokens: the line feed that ends the document is kept, the others
    /// become spaces, which JSON reads the same. Every other dangerous character is inside a
    /// string and becomes a `\uXXXX` escape.
    fn write_whole(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(bytes);
        let mut clean = 0;
        for (at, c) in text.char_indices() {
            if dangerous(c) && c != '\n' {
                self.inner.write_all(&text.as_bytes()[clean..at])?;
                if c == '\r' || c == '\t' {
                    self.inner.write_all(b" ")?;
                } else {
                    write!(self.inner, "\\u{:04x}", c as u32)?;
                }
                clean = at + c.len_utf8();
            }
        }
        self.inner.write_all(&text.as_bytes()[clean..])
    }
}

impl<W: std::io::Write> std::io::Write for JsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        // First the character cut at the end of the last piece, completed from this one.
        while !self.partial.is_empty() && !rest.is_empty() {
            self.partial.push(rest[0]);
            rest = &rest[1..];
            match std::str::from_utf8(&self.partial) {
                Err(e) if e.error_len().is_none() && self.partial.len() < 4 => continue,
                _ => {
                    let whole = std::mem::take(&mut self.partial);
                    self.write_whole(&whole)?;
                }
            }
        }
        // Then the whole characters of this piece, written from it without a copy; a character
        // cut at its end waits for the next piece.
        let whole = match std::str::from_utf8(rest) {
            Ok(_) => rest.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => rest.len(),
        };
        self.write_whole(&rest[..whole])?;
        self.partial.extend_from_slice(&rest[whole..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            self.write_whole(&rest)?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn control_sequences_and_overrides_are_shown_not_interpreted() {
        let hostile = "ok\x1b]0;owned\x07\x1b[2J\u{9b}31m\u{202e}txt.exe\r\nnext";
        let shown = line(hostile);
        assert!(!shown.chars().any(dangerous), "{shown:?}");
        assert_eq!(
            shown,
            "ok\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{9b}31m\\u{202e}txt.exe\\u{d}\\u{a}next"
        );
        assert_eq!(text("a\tb\nc\x1b"), "a\tb\nc\\u{1b}");
        assert!(matches!(line("plain — text é"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_exact_and_inert() {
        let hostile = "x\x1b[2J\u{85}\u{9b}\u{2067}\u{200f}y";
        let doc = serde_json::json!({"message": hostile, "n": 1});
        let printed = json(&doc);
        assert!(printed.is_ascii(), "{printed}");
        assert!(!printed.chars().any(|c| c.is_control()), "{printed}");
        let back: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn the_json_writer_escapes_characters_cut_between_writes() {
        let doc = serde_json::json!({"m": "a\u{9b}b\u{202e}c\u{e9}\u{1f600}\u{7f}"});
        let whole = json(&doc);
        let bytes = doc.to_string().into_bytes();
        for split in 1..bytes.len() {
            let mut w = JsonWriter::new(Vec::new());
            w.write_all(&bytes[..split]).unwrap();
            w.write_all(&bytes[split..]).unwrap();
            w.flush().unwrap();
            assert_eq!(
                String::from_utf8(w.into_inner()).unwrap(),
                whole,
                "split at {split}"
            );
        }
        // é and 😀 are kept as they are; C1, the override and DEL are escaped.
        assert_eq!(whole, "{\"m\":\"a\\u009bb\\u202ec\u{e9}\u{1f600}\\u007f\"}");
    }

    #[test]
    fn whitespace_between_tokens_stays_json() {
        // A raw value as a server may send it: a carriage return and a tab between tokens.
        let raw = "{\"a\":\r\t[1,\"\\u001b\u{202e}\"]}\n";
        let mut w = JsonWriter::new(Vec::new());
        w.write_all(raw.as_bytes()).unwrap();
        w.flush().unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(out, "{\"a\":  [1,\"\\u001b\\u202e\"]}\n");
        let a: serde_json::Value = serde_json::from_str(raw).unwrap();
        let b: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(a, b);
    }
}
