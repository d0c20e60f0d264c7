//! The one pass over a `tools/list` page: validates it and records, per tool, the spans of its
//! name, description and schema in the shared page buffer.

use crate::prelude::*;

use alloc::borrow::Cow;
use alloc::sync::Arc;

use bytes::Bytes;

use super::more::{self, RawFields};
use super::names::Names;
use super::wire::{read_page, NameWire, SchemaHead, ToolWire};
use super::{
    Catalog, Extra, RefusalReason, RefusedTool, Span, Tool, ToolNameRule, MAX_REFUSALS_KEPT,
    MAX_TOOL_NAME,
};

/// A listing's state while one page is added.
struct Listing<'s> {
    catalog: &'s mut Catalog,
    names: &'s mut Names,
    /// Entries seen so far, across pages.
    entries: &'s mut usize,
}

/// Why the fast reading of a page or entry gave up: the serde reading decides.
struct Unsure;

/// Why a page is unusable.
#[derive(Debug)]
pub(crate) enum PageError {
    /// The message is not JSON-RPC as read (its `result` was only delimited, see
    /// `jsonrpc::parse_message_for_page`).
    Malformed(crate::error::ProtocolError),
    /// The result is not a page (why).
    Invalid(String),
}

/// One page being added: the buffer the tools will share and where the `result` sits in it.
/// How far a listing had got before a page, so that a page the one pass gave up on can be read
/// again from there.
#[derive(Clone, Copy)]
struct Marks {
    tools: usize,
    refused: usize,
    refused_beyond: usize,
    entries: usize,
}

struct PageCtx<'a> {
    page: &'a Arc<Bytes>,
    rule: ToolNameRule,
}

/// Adds one `tools/list` result to `catalog`: its entries become tools or refusals, numbered
/// from `entries` on (which counts them across pages); `names` holds the names accepted so far.
/// `buffer`, if given, is the whole message the result was read from: tools then share it
/// without a copy (else the result is copied once). Returns the next cursor, if any; `Err` (the
/// page is unusable, with why) leaves the three as they were before the page. The caller counts
/// the page in `catalog.pages`.
///
/// The usual page is read in one pass that validates it and records, per tool, the spans of its
/// name, description and schema (`xmcp::SchemaCheck` checks each schema on the way). Whatever
/// that pass is not sure to read as the serde reading would (escapes in keys, duplicate members,
/// an entry that is not an object, a schema with `x-mcp-header`, ...) is read again by the serde
/// reading, which decides and gives the reason.
pub(crate) fn add_page(
    catalog: &mut Catalog,
    names: &mut Names,
    entries: &mut usize,
    rule: ToolNameRule,
    buffer: Option<&Bytes>,
    result: crate::jsonrpc::RawJson<'_>,
) -> Result<Option<String>, PageError> {
    let mut hint = super::cache::PageHint::default();
    let (cursor, kept) = Listing {
        catalog,
        names,
        entries,
    }
    .add_page(rule, buffer, result, &mut hint)?;
    hint.merge_into(catalog);
    catalog.kept.0.push(kept);
    Ok(cursor)
}

impl Listing<'_> {
    fn add_page(
        &mut self,
        rule: ToolNameRule,
        buffer: Option<&Bytes>,
        result: crate::jsonrpc::RawJson<'_>,
        hint: &mut super::cache::PageHint,
    ) -> Result<(Option<String>, Bytes), PageError> {
        let res = result.get().as_bytes();
        let (page, offset) = match buffer.and_then(|b| Some((b, offset_in(b, res)?))) {
            Some((b, offset)) => (b.clone(), offset),
            None => (Bytes::copy_from_slice(res), 0),
        };
        if u32::try_from(page.len()).is_err() {
            return Err(PageError::Invalid("the page is larger than 4 GiB".into()));
        }
        let page = Arc::new(page);
        let ctx = PageCtx { page: &page, rule };
        let marks = Marks {
            tools: self.catalog.tools.len(),
            refused: self.catalog.refused.len(),
            refused_beyond: self.catalog.refused_beyond,
            entries: *self.entries,
        };
        match self.fast_page(&ctx, offset, offset + res.len(), hint) {
            Ok(cursor) => {
                let kept = page.slice(offset..offset + res.len());
                return Ok((cursor, kept));
            }
            Err(Unsure) => {
                self.rollback(marks);
                *hint = super::cache::PageHint::default();
            }
        }
        // The result may have been only delimited: the whole message is read the checking way
        // first, which gives the reason if it is not JSON-RPC, and the result as it really is.
        let mut result = result;
        match buffer {
            Some(message) => match crate::jsonrpc::parse_message(message) {
                Ok(crate::jsonrpc::Message::Result {
                    result: checked, ..
                }) => result = checked,
                Ok(_) => {
                    let reason = "not a result".to_owned();
                    let e = crate::error::ProtocolError::MalformedMessage { reason };
                    return Err(PageError::Malformed(e));
                }
                Err(e) => return Err(PageError::Malformed(e)),
            },
            None => {
                let end = crate::json::skip(res, 0).map(|e| crate::json::ws(res, e));
                if end != Some(res.len()) {
                    let reason = "the result is not JSON".to_owned();
                    let e = crate::error::ProtocolError::MalformedMessage { reason };
                    return Err(PageError::Malformed(e));
                }
            }
        }
        let res = result.get().as_bytes();
        let page = match buffer.filter(|b| offset_in(b, res).is_some()) {
            Some(b) => b.clone(),
            None => Bytes::copy_from_slice(res),
        };
        let page = Arc::new(page);
        let ctx = PageCtx { page: &page, rule };
        let b: &[u8] = &page;
        // The result as it lies in the page buffer (a copy when there is no message buffer), so
        // that its entries are slices of the buffer the tools share.
        let at = offset_in(b, res).unwrap_or(0);
        let text = b
            .get(at..at + res.len())
            .and_then(|t| core::str::from_utf8(t).ok())
            .unwrap_or_default();
        let read = read_page(text, |entry| {
            if let Some(start) = offset_in(&page, entry.get().as_bytes()) {
                self.entry(&ctx, b, start, start + entry.get().len());
            }
        });
        match read {
            Ok((cursor, page_hint)) => {
                *hint = page_hint;
                Ok((cursor, super::cache::kept_page(&page, text.as_bytes())))
            }
            Err(e) => {
                // Entries read before the error are not the listing's.
                self.rollback(marks);
                Err(PageError::Invalid(e))
            }
        }
    }

    fn rollback(&mut self, marks: Marks) {
        self.names.truncate(&self.catalog.tools, marks.tools);
        self.catalog.tools.truncate(marks.tools);
        self.catalog.refused.truncate(marks.refused);
        self.catalog.refused_beyond = marks.refused_beyond;
        *self.entries = marks.entries;
    }

    /// Reads the page object at `start..end` of the page buffer in one pass.
    fn fast_page(
        &mut self,
        ctx: &PageCtx<'_>,
        start: usize,
        end: usize,
        hint: &mut super::cache::PageHint,
    ) -> Result<Option<String>, Unsure> {
        use crate::json::{skip, string, ws};
        let page = Arc::clone(ctx.page);
        let b = page.get(..end).ok_or(Unsure)?;
        let mut i = ws(b, start);
        if b.get(i) != Some(&b'{') {
            return Err(Unsure);
        }
        i = ws(b, i + 1);
        let (mut tools, mut cursor, mut result_type) = (false, None, false);
        // One schema check for the whole page: its buffers are reused from tool to tool.
        let mut check = crate::xmcp::SchemaCheck::default();
        if b.get(i) == Some(&b'}') {
            return Err(Unsure);
        }
        loop {
            let (key, after) = plain_key(b, i)?;
            i = after;
            match key {
                b"tools" => {
                    if tools || b.get(i) != Some(&b'[') {
                        return Err(Unsure);
                    }
                    tools = true;
                    i = ws(b, i + 1);
                    if b.get(i) == Some(&b']') {
                        i += 1;
                    } else {
                        loop {
                            i = self.fast_entry(ctx, b, i, &mut check)?;
                            i = ws(b, i);
                            match b.get(i) {
                                Some(b',') => i = ws(b, i + 1),
                                Some(b']') => {
                                    i += 1;
                                    break;
                                }
                                _ => return Err(Unsure),
                            }
                        }
                    }
                }
                b"nextCursor" => {
                    if cursor.is_some() {
                        return Err(Unsure);
                    }
                    if b.get(i..i + 4) == Some(b"null") {
                        cursor = Some(None);
                        i += 4;
                    } else if b.get(i) == Some(&b'"') {
                        let (e, escaped) = string(b, i, true).ok_or(Unsure)?;
                        let text = b.get(i..e).ok_or(Unsure)?;
                        let text = if escaped {
                            crate::json::unescape(text)
                        } else {
                            core::str::from_utf8(text.get(1..text.len() - 1).ok_or(Unsure)?)
                                .ok()
                                .map(str::to_owned)
                        };
                        cursor = Some(Some(text.ok_or(Unsure)?));
                        i = e;
                    } else {
                        return Err(Unsure);
                    }
                }
                b"resultType" => {
                    if result_type {
                        return Err(Unsure);
                    }
                    result_type = true;
                    if b.get(i..i + 10) == Some(b"\"complete\"") {
                        i += 10;
                    } else if b.get(i..i + 4) == Some(b"null") {
                        i += 4;
                    } else {
                        return Err(Unsure);
                    }
                }
                b"ttlMs" | b"cacheScope" => {
                    let e = skip(b, i).ok_or(Unsure)?;
                    let value = b.get(i..e).ok_or(Unsure)?;
                    match key {
                        b"ttlMs" => hint.ttl(value),
                        _ => hint.scope(value),
                    }
                    i = e;
                }
                _ => i = skip(b, i).ok_or(Unsure)?,
            }
            i = ws(b, i);
            match b.get(i) {
                Some(b',') => i = ws(b, i + 1),
                Some(b'}') => break,
                _ => return Err(Unsure),
            }
        }
        if !tools || ws(b, i + 1) != end {
            return Err(Unsure);
        }
        Ok(cursor.flatten())
    }

    /// Reads the entry starting at `i`; returns the index after it.
    fn fast_entry<'b>(
        &mut self,
        ctx: &PageCtx<'_>,
        b: &'b [u8],
        i: usize,
        check: &mut crate::xmcp::SchemaCheck<'b>,
    ) -> Result<usize, Unsure> {
        match read_entry(b, i, check) {
            Ok(entry) => {
                let end = entry.end;
                self.decide(ctx, b, entry);
                Ok(end)
            }
            Err(Unsure) => {
                let end = crate::json::skip(b, i).ok_or(Unsure)?;
                self.entry(ctx, b, i, end);
                Ok(end)
            }
        }
    }

    /// Adds the entry at `start..end`: the fast reading if it is sure, else the serde reading.
    fn entry(&mut self, ctx: &PageCtx<'_>, b: &[u8], start: usize, end: usize) {
        let mut check = crate::xmcp::SchemaCheck::default();
        match read_entry(b, start, &mut check) {
            Ok(entry) if entry.end == end => self.decide(ctx, b, entry),
            _ => {
                let text = b
                    .get(start..end)
                    .and_then(|t| core::str::from_utf8(t).ok())
                    .unwrap_or_default();
                self.serde_entry(ctx, b, text);
            }
        }
    }

    fn refuse(&mut self, name: Option<&str>, reason: RefusalReason) {
        if self.catalog.refused.len() < MAX_REFUSALS_KEPT {
            self.catalog.refused.push(RefusedTool {
                index: *self.entries,
                name: name.map(|n| crate::error::truncated(n, MAX_TOOL_NAME * 2)),
                reason,
            });
        } else {
            self.catalog.refused_beyond += 1;
        }
        *self.entries += 1;
    }

    fn accept(&mut self, ctx: &PageCtx<'_>, b: &[u8], tool: ToolParts) {
        let more = if tool.more.is_empty() {
            more::More::default()
        } else {
            more::decide(b, &tool.more)
        };
        // Kept in the tool itself.
        let (title, annotations) = (more.title_span, more.annotations);
        let extra = Extra {
            name: tool.name.owned.map(Into::into),
            description: tool.description.owned.map(Into::into),
            header_params: super::shared_params(tool.header_params),
            fields: more.fields,
            title: more.title.map(Into::into),
            notes: (!more.notes.is_empty()).then(|| {
                Box::new(super::Notes {
                    kept: more.notes,
                    beyond: more.notes_beyond,
                })
            }),
        };
        let has_extra = extra.name.is_some()
            || extra.description.is_some()
            || extra.header_params.is_some()
            || !extra.fields.is_empty()
            || extra.title.is_some()
            || extra.notes.is_some();
        let t = Tool {
            page: Arc::clone(ctx.page),
            name: tool.name.span,
            description: tool.description.span,
            schema: tool.schema,
            title,
            annotations,
            extra: has_extra.then(|| Box::new(extra)),
        };
        let hash = tool.hash.unwrap_or_else(|| self.names.hash(t.name()));
        self.catalog.tools.push(t);
        self.names.insert(&self.catalog.tools, hash);
        *self.entries += 1;
    }

    /// The checks of an entry read in one pass, in the order of the serde reading.
    fn decide(&mut self, ctx: &PageCtx<'_>, b: &[u8], e: Entry) {
        let Some((ns, ne)) = e.name else {
            return self.refuse(None, RefusalReason::NameMissing);
        };
        let name = b
            .get(ns..ne)
            .and_then(|n| core::str::from_utf8(n).ok())
            .unwrap_or_default();
        if !ctx.rule.accepts(name) {
            return self.refuse(Some(name), RefusalReason::NameInvalid(ctx.rule));
        }
        let hash = self.names.hash(name);
        if self.names.contains_hashed(&self.catalog.tools, name, hash) {
            return self.refuse(Some(name), RefusalReason::DuplicateName);
        }
        let description = match e.description {
            Desc::Absent => Text::NONE,
            Desc::Plain(s, e) => Text {
                span: span(s, e),
                owned: None,
            },
            Desc::Escaped(s, e) => match b.get(s..e).and_then(crate::json::unescape) {
                Some(d) => Text {
                    span: Span::NONE,
                    owned: Some(d),
                },
                None => return self.refuse(Some(name), RefusalReason::DescriptionNotString),
            },
            Desc::NotString => return self.refuse(Some(name), RefusalReason::DescriptionNotString),
        };
        let (ss, se, facts, params) = match e.schema {
            Schema::Missing => return self.refuse(Some(name), RefusalReason::SchemaMissing),
            Schema::NotObject => return self.refuse(Some(name), RefusalReason::SchemaNotObject),
            Schema::Object {
                start,
                end,
                facts,
                params,
            } => (start, end, facts, params),
        };
        let header_params = match facts {
            Some(f) if f.root_object => params,
            _ => {
                let schema = b
                    .get(ss..se)
                    .and_then(|s| core::str::from_utf8(s).ok())
                    .unwrap_or_default();
                match schema_params(schema) {
                    Ok(p) => p,
                    Err(reason) => return self.refuse(Some(name), reason),
                }
            }
        };
        let name = Text {
            span: span(ns, ne),
            owned: None,
        };
        self.accept(
            ctx,
            b,
            ToolParts {
                hash: Some(hash),
                name,
                description,
                schema: span(ss, se),
                header_params,
                more: e.more,
            },
        );
    }

    /// The serde reading of one entry (`text` is a slice of the page buffer).
    fn serde_entry(&mut self, ctx: &PageCtx<'_>, b: &[u8], text: &str) {
        // A tool is a JSON object, never read by position from an array.
        if !text.trim_start().starts_with('{') {
            let detail = "not a JSON object".into();
            return self.refuse(None, RefusalReason::NotAToolObject { detail });
        }
        let wire: ToolWire<'_> = match serde_json::from_str(text) {
            Ok(w) => w,
            Err(e) => {
                let detail = crate::error::truncated(&e.to_string(), 200);
                return self.refuse(None, RefusalReason::NotAToolObject { detail });
            }
        };
        let name = match &wire.name {
            Some(NameWire::Text(s)) => s.as_ref(),
            Some(NameWire::NotText) => return self.refuse(None, RefusalReason::NameNotString),
            None => return self.refuse(None, RefusalReason::NameMissing),
        };
        if !ctx.rule.accepts(name) {
            return self.refuse(Some(name), RefusalReason::NameInvalid(ctx.rule));
        }
        if self.names.contains(&self.catalog.tools, name) {
            return self.refuse(Some(name), RefusalReason::DuplicateName);
        }
        let description = match wire.description {
            None => Text::NONE,
            Some(raw) if raw.get() == "null" => Text::NONE,
            Some(raw) => match serde_json::from_str::<Cow<'_, str>>(raw.get()) {
                Ok(Cow::Borrowed(d)) => match offset_in(b, d.as_bytes()) {
                    Some(s) => Text {
                        span: span(s, s + d.len()),
                        owned: None,
                    },
                    None => Text {
                        span: Span::NONE,
                        owned: Some(d.to_owned()),
                    },
                },
                Ok(Cow::Owned(d)) => Text {
                    span: Span::NONE,
                    owned: Some(d),
                },
                Err(_) => return self.refuse(Some(name), RefusalReason::DescriptionNotString),
            },
        };
        let Some(schema) = wire.input_schema else {
            return self.refuse(Some(name), RefusalReason::SchemaMissing);
        };
        if !schema.get().starts_with('{') {
            return self.refuse(Some(name), RefusalReason::SchemaNotObject);
        }
        let header_params = match schema_params(schema.get()) {
            Ok(p) => p,
            Err(reason) => return self.refuse(Some(name), reason),
        };
        let Some(ss) = offset_in(b, schema.get().as_bytes()) else {
            return;
        };
        let name = match (&wire.name, offset_in(b, name.as_bytes())) {
            (Some(NameWire::Text(Cow::Borrowed(_))), Some(s)) => Text {
                span: span(s, s + name.len()),
                owned: None,
            },
            _ => Text {
                span: Span::NONE,
                owned: Some(name.to_owned()),
            },
        };
        let value = |raw: Option<&serde_json::value::RawValue>| {
            let raw = raw.filter(|r| r.get() != "null")?;
            let s = offset_in(b, raw.get().as_bytes())?;
            Some((s, s + raw.get().len()))
        };
        let more = RawFields {
            title: value(wire.title),
            annotations: value(wire.annotations),
            output_schema: value(wire.output_schema),
            icons: value(wire.icons),
            meta: value(wire.meta),
            execution: value(wire.execution),
        };
        self.accept(
            ctx,
            b,
            ToolParts {
                hash: None,
                name,
                description,
                schema: span(ss, ss + schema.get().len()),
                header_params,
                more,
            },
        );
    }
}

/// The checks of a schema that the one-pass check did not settle: the streaming scan settles a
/// well-formed schema whose `type` is `"object"`; anything else goes through the separate
/// checks, which give the reason.
fn schema_params(schema: &str) -> Result<Vec<crate::xmcp::HeaderParam>, RefusalReason> {
    if let Some((params, true)) = crate::xmcp::scan(schema) {
        return Ok(params);
    }
    match serde_json::from_str::<SchemaHead<'_>>(schema) {
        Ok(SchemaHead { ty: Some(t) }) if t.get() == "\"object\"" => {}
        _ => return Err(RefusalReason::SchemaTypeNotObject),
    }
    crate::xmcp::header_params(schema).map_err(RefusalReason::Header)
}

/// A name or description of a tool being accepted: a span of the page, or decoded.
struct Text {
    span: Span,
    owned: Option<String>,
}

impl Text {
    const NONE: Text = Text {
        span: Span::NONE,
        owned: None,
    };
}

/// A tool being accepted.
struct ToolParts {
    /// The hash of its name in [`Names`], if already computed.
    hash: Option<u32>,
    name: Text,
    description: Text,
    schema: Span,
    header_params: Vec<crate::xmcp::HeaderParam>,
    /// The rest of the definition, as read.
    more: RawFields,
}

/// The span `start..end` (the page is at most 4 GiB: checked by [`Listing::add_page`]).
fn span(start: usize, end: usize) -> Span {
    Span {
        start: start as u32,
        len: end.saturating_sub(start) as u32,
    }
}

/// Where `part` starts in `whole`, if it is a slice of it.
fn offset_in(whole: &[u8], part: &[u8]) -> Option<usize> {
    let w = whole.as_ptr() as usize;
    let p = part.as_ptr() as usize;
    let offset = p.checked_sub(w)?;
    (offset + part.len() <= whole.len()).then_some(offset)
}

/// An object key without escapes at `i` and its colon: the key's bytes and where the value
/// starts.
fn plain_key(b: &[u8], i: usize) -> Result<(&[u8], usize), Unsure> {
    if b.get(i) != Some(&b'"') {
        return Err(Unsure);
    }
    // Most keys are shorter than 16 bytes: found from the two words they are read in.
    let (end, escaped) = crate::xmcp::value_string(b, i).ok_or(Unsure)?;
    if escaped {
        return Err(Unsure);
    }
    let key = b.get(i + 1..end - 1).ok_or(Unsure)?;
    let i = crate::json::ws(b, end);
    if b.get(i) != Some(&b':') {
        return Err(Unsure);
    }
    Ok((key, crate::json::ws(b, i + 1)))
}

/// A tool's `description`, as the one pass read it.
#[derive(Clone, Copy)]
enum Desc {
    Absent,
    /// A string without escapes: the span of its text.
    Plain(usize, usize),
    /// A string with escapes: the span of the string with its quotes.
    Escaped(usize, usize),
    NotString,
}

/// A tool's `inputSchema`, as the one pass read it.
enum Schema {
    Missing,
    NotObject,
    Object {
        start: usize,
        end: usize,
        /// `None`: the one-pass check could not settle it.
        facts: Option<crate::xmcp::SchemaFacts>,
        /// Its header parameters, if the check settled it.
        params: Vec<crate::xmcp::HeaderParam>,
    },
}

/// An entry read in one pass.
struct Entry {
    end: usize,
    /// The span of a name without escapes.
    name: Option<(usize, usize)>,
    description: Desc,
    schema: Schema,
    /// The rest of the definition.
    more: RawFields,
}

/// Reads the entry at `i` in one pass, if it is an object whose keys have no escapes, with at
/// most one `name` (a string without escapes), `description` and `inputSchema`.
fn read_entry<'b>(
    b: &'b [u8],
    i: usize,
    check: &mut crate::xmcp::SchemaCheck<'b>,
) -> Result<Entry, Unsure> {
    use crate::json::{skip, string, ws};
    if b.get(i) != Some(&b'{') {
        return Err(Unsure);
    }
    let mut e = Entry {
        end: 0,
        name: None,
        description: Desc::Absent,
        schema: Schema::Missing,
        more: RawFields::default(),
    };
    let mut seen = 0u8;
    let (mut has_desc, mut has_schema) = (false, false);
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        e.end = i + 1;
        return Ok(e);
    }
    loop {
        let (key, at) = plain_key(b, i)?;
        i = match key {
            b"name" => {
                if e.name.is_some() || b.get(at) != Some(&b'"') {
                    return Err(Unsure);
                }
                let (end, escaped) = crate::xmcp::value_string(b, at).ok_or(Unsure)?;
                if escaped {
                    return Err(Unsure);
                }
                e.name = Some((at + 1, end - 1));
                end
            }
            b"description" => {
                if has_desc {
                    return Err(Unsure);
                }
                has_desc = true;
                match b.get(at) {
                    Some(b'"') => match string(b, at, false) {
                        Some((end, false)) => {
                            e.description = Desc::Plain(at + 1, end - 1);
                            end
                        }
                        Some((end, true)) => {
                            e.description = Desc::Escaped(at, end);
                            end
                        }
                        None => return Err(Unsure),
                    },
                    Some(b'n') if b.get(at..at + 4) == Some(b"null") => at + 4,
                    _ => {
                        e.description = Desc::NotString;
                        skip(b, at).ok_or(Unsure)?
                    }
                }
            }
            b"inputSchema" => {
                if has_schema {
                    return Err(Unsure);
                }
                has_schema = true;
                if b.get(at) == Some(&b'{') {
                    let facts = check.run(b, at);
                    let (end, params) = match facts {
                        Some(f) => (f.end, check.take_params()),
                        None => (skip(b, at).ok_or(Unsure)?, Vec::new()),
                    };
                    e.schema = Schema::Object {
                        start: at,
                        end,
                        facts,
                        params,
                    };
                    end
                } else if b.get(at..at + 4) == Some(b"null") {
                    // As serde reads an `Option`: `null` is absent.
                    e.schema = Schema::Missing;
                    at + 4
                } else {
                    e.schema = Schema::NotObject;
                    skip(b, at).ok_or(Unsure)?
                }
            }
            b"title" | b"annotations" | b"outputSchema" | b"icons" | b"_meta" | b"execution" => {
                let (bit, slot) = match key {
                    b"title" => (1, &mut e.more.title),
                    b"annotations" => (2, &mut e.more.annotations),
                    b"outputSchema" => (4, &mut e.more.output_schema),
                    b"icons" => (8, &mut e.more.icons),
                    b"execution" => (32, &mut e.more.execution),
                    _ => (16, &mut e.more.meta),
                };
                if seen & bit != 0 {
                    return Err(Unsure);
                }
                seen |= bit;
                let end = skip(b, at).ok_or(Unsure)?;
                // As serde reads an `Option`: `null` is absent.
                if b.get(at..end) != Some(b"null") {
                    *slot = Some((at, end));
                }
                end
            }
            _ => skip(b, at).ok_or(Unsure)?,
        };
        i = ws(b, i);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => {
                e.end = i + 1;
                return Ok(e);
            }
            _ => return Err(Unsure),
        }
    }
}
