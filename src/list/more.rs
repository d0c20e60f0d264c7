//! The rest of a tool's definition (`title`, `annotations`, `outputSchema`, `icons`, `_meta`,
//! `execution`):
//! what both readings of an entry hand over as the spans of the members' values, decided here
//! once so that the two readings agree.

use crate::prelude::*;

use super::{Fields, IconDrop, Span, ToolNote, MAX_NOTES_KEPT};

/// The spans (value start, value end) of the members an entry had, `null` counting as absent.
#[derive(Clone, Copy, Default)]
pub(super) struct RawFields {
    pub(super) title: Option<(usize, usize)>,
    pub(super) annotations: Option<(usize, usize)>,
    pub(super) output_schema: Option<(usize, usize)>,
    pub(super) icons: Option<(usize, usize)>,
    pub(super) meta: Option<(usize, usize)>,
    pub(super) execution: Option<(usize, usize)>,
}

impl RawFields {
    pub(super) fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.annotations.is_none()
            && self.output_schema.is_none()
            && self.icons.is_none()
            && self.meta.is_none()
            && self.execution.is_none()
    }
}

/// What is kept of the rest of a definition.
pub(super) struct More {
    /// The title's span, when it had no escapes (kept in the tool itself).
    pub(super) title_span: Span,
    /// The annotations' span (kept in the tool itself).
    pub(super) annotations: Span,
    pub(super) fields: Fields,
    /// The title, decoded, when it had escapes.
    pub(super) title: Option<String>,
    pub(super) notes: Vec<ToolNote>,
    pub(super) notes_beyond: usize,
}

impl Default for More {
    fn default() -> Self {
        More {
            title_span: Span::NONE,
            annotations: Span::NONE,
            fields: Fields::none(),
            title: None,
            notes: Vec::new(),
            notes_beyond: 0,
        }
    }
}

impl More {
    fn note(&mut self, note: ToolNote) {
        if self.notes.len() < MAX_NOTES_KEPT {
            self.notes.push(note);
        } else {
            self.notes_beyond += 1;
        }
    }
}

fn span(start: usize, end: usize) -> Span {
    Span {
        start: start as u32,
        len: end.saturating_sub(start) as u32,
    }
}

/// Decides what is kept of the members in `raw` (spans of `b`).
pub(super) fn decide(b: &[u8], raw: &RawFields) -> More {
    let mut more = More::default();
    if let Some((s, e)) = raw.title {
        match text(b, s, e) {
            Some(Decoded::Plain(s, e)) => more.title_span = span(s, e),
            Some(Decoded::Owned(t)) => more.title = Some(t),
            None => more.note(ToolNote::FieldIgnored { field: "title" }),
        }
    }
    let object = |s: usize| b.get(s) == Some(&b'{');
    if let Some((s, e)) = raw.annotations {
        if object(s) {
            more.annotations = span(s, e);
        } else {
            more.note(ToolNote::FieldIgnored {
                field: "annotations",
            });
        }
    }
    if let Some((s, e)) = raw.output_schema {
        let v = b.get(s..e).unwrap_or_default();
        if object(s) || v == b"true" || v == b"false" {
            more.fields.output_schema = span(s, e);
        } else {
            more.note(ToolNote::FieldIgnored {
                field: "outputSchema",
            });
        }
    }
    if let Some((s, e)) = raw.icons {
        if b.get(s) == Some(&b'[') {
            let mut kept = Vec::new();
            icons(b, s, e, &mut kept, &mut more);
            more.fields.icons = kept.into_boxed_slice();
        } else {
            more.note(ToolNote::FieldIgnored { field: "icons" });
        }
    }
    if let Some((s, e)) = raw.meta {
        if object(s) {
            more.fields.meta = span(s, e);
        } else {
            more.note(ToolNote::FieldIgnored { field: "_meta" });
        }
    }
    if let Some((s, e)) = raw.execution {
        if object(s) {
            more.fields.execution = span(s, e);
        } else {
            more.note(ToolNote::FieldIgnored { field: "execution" });
        }
    }
    more
}

/// A JSON string's text: a span of the page without escapes, or decoded.
enum Decoded {
    Plain(usize, usize),
    Owned(String),
}

/// The string value at `s..e`, if it is a string of Unicode text.
fn text(b: &[u8], s: usize, e: usize) -> Option<Decoded> {
    if b.get(s) != Some(&b'"') {
        return None;
    }
    let (end, escaped) = crate::json::string(b, s, false)?;
    if end != e {
        return None;
    }
    if escaped {
        crate::json::unescape(b.get(s..e)?).map(Decoded::Owned)
    } else {
        core::str::from_utf8(b.get(s + 1..e - 1)?).ok()?;
        Some(Decoded::Plain(s + 1, e - 1))
    }
}

/// The icons of the array at `s..e`: each kept (a span) or dropped with a note.
fn icons(b: &[u8], s: usize, e: usize, kept: &mut Vec<Span>, more: &mut More) {
    use crate::json::{skip, ws};
    let mut i = ws(b, s + 1);
    let mut index = 0usize;
    if b.get(i) == Some(&b']') {
        return;
    }
    while i < e {
        let Some(end) = skip(b, i) else { return };
        match icon(b, i, end) {
            Ok(()) => kept.push(span(i, end)),
            Err(reason) => more.note(ToolNote::IconDropped { index, reason }),
        }
        index += 1;
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            _ => return,
        }
    }
}

/// Longest scheme quoted in an [`IconDrop::SchemeNotAllowed`].
const MAX_SCHEME: usize = 32;

/// Whether the icon at `s..e` is kept: an object whose one `src` member is a string of text
/// with the scheme `https` or `data`.
fn icon(b: &[u8], s: usize, e: usize) -> Result<(), IconDrop> {
    use crate::json::{skip, string, ws};
    if b.get(s) != Some(&b'{') {
        return Err(IconDrop::NotAnObject);
    }
    let mut src = None;
    let mut i = ws(b, s + 1);
    if b.get(i) != Some(&b'}') {
        while i < e {
            let (kend, escaped) = string(b, i, false).ok_or(IconDrop::NotAnObject)?;
            let key = b.get(i..kend).ok_or(IconDrop::NotAnObject)?;
            let is_src = if escaped {
                crate::json::unescape(key).ok_or(IconDrop::NotAnObject)? == "src"
            } else {
                core::str::from_utf8(key).map_err(|_| IconDrop::NotAnObject)? == "\"src\""
            };
            let v = ws(b, ws(b, kend) + 1);
            let vend = skip(b, v).ok_or(IconDrop::NotAnObject)?;
            if is_src {
                if src.is_some() {
                    return Err(IconDrop::NotAnObject);
                }
                src = Some((v, vend));
            }
            i = ws(b, vend);
            match b.get(i) {
                Some(b',') => i = ws(b, i + 1),
                _ => break,
            }
        }
    }
    let (vs, ve) = src.ok_or(IconDrop::SrcMissing)?;
    let src = match text(b, vs, ve) {
        Some(Decoded::Plain(s, e)) => {
            String::from(core::str::from_utf8(b.get(s..e).unwrap_or_default()).unwrap_or_default())
        }
        Some(Decoded::Owned(t)) => t,
        None => return Err(IconDrop::SrcNotString),
    };
    let scheme = src.split_once(':').map(|(s, _)| s);
    match scheme {
        Some(s) if s.eq_ignore_ascii_case("https") || s.eq_ignore_ascii_case("data") => Ok(()),
        Some(s) => Err(IconDrop::SchemeNotAllowed {
            scheme: crate::error::truncated(s, MAX_SCHEME),
        }),
        None => Err(IconDrop::SchemeNotAllowed {
            scheme: String::new(),
        }),
    }
}
