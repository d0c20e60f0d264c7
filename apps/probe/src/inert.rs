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
/// character as itself: each is written as a `\uXXXX` escape, which decodes to the same string.
pub fn json(value: &serde_json::Value) -> String {
    let written = value.to_string();
    // Outside strings a JSON document is ASCII without controls, so every dangerous character
    // left is inside a string, where `\uXXXX` means the same character.
    if !written.chars().any(dangerous) {
        return written;
    }
    let mut out = String::with_capacity(written.len() + 16);
    for c in written.chars() {
        if dangerous(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
