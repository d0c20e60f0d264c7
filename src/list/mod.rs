//! `tools/list`: pages, and the catalog they add up to.
use crate::prelude::*;

use alloc::sync::Arc;
use core::fmt;

use bytes::Bytes;

mod cache;
mod pass;
mod wire;

pub use cache::{CacheHint, CacheScope};
pub(crate) use pass::{add_page, Names, PageError};

/// A message's buffer as the pages of a listing keep it: without a copy, but without the spare
/// capacity a buffer grown by doubling may have (more than an eighth is given back), so that a
/// catalog never holds more than its pages' bytes.
pub(crate) fn message_buffer(mut buf: Vec<u8>) -> Bytes {
    if buf.capacity() - buf.len() > buf.len() / 8 {
        buf.shrink_to_fit();
    }
    Bytes::from(buf)
}

/// One usable tool, in the shape a model API takes.
///
/// A listed tool is a few spans into the page it came from: every tool of a page shares that
/// page's buffer, immutable, and holds its own allocation only for what had to be decoded (a
/// name or description with escapes) and for its header parameters.
#[derive(Clone)]
pub struct Tool {
    page: Arc<Bytes>,
    name: Span,
    description: Span,
    schema: Span,
    extra: Option<Box<Extra>>,
}

/// Bytes `start..start + len` of a tool's page.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    /// No such field (or it is kept decoded in [`Extra`]).
    const NONE: Span = Span {
        start: u32::MAX,
        len: 0,
    };
}

/// What a tool holds outside its page.
#[derive(Clone, Debug, Default)]
struct Extra {
    name: Option<Box<str>>,
    description: Option<Box<str>>,
    header_params: Vec<crate::xmcp::HeaderParam>,
}

impl Tool {
    /// A tool built from its parts (for a tool known without listing, such as one recorded
    /// earlier); the caller vouches that `input_schema` is a JSON object and that
    /// `header_params` are its parameters (see [`crate::xmcp::header_params`]).
    pub fn new(
        name: &str,
        description: Option<&str>,
        input_schema: &str,
        header_params: Vec<crate::xmcp::HeaderParam>,
    ) -> Tool {
        let len = u32::try_from(input_schema.len()).unwrap_or(0);
        let schema = input_schema.get(..len as usize).unwrap_or_default();
        Tool {
            page: Arc::new(Bytes::copy_from_slice(schema.as_bytes())),
            name: Span::NONE,
            description: Span::NONE,
            schema: Span { start: 0, len },
            extra: Some(Box::new(Extra {
                name: Some(name.into()),
                description: description.map(Into::into),
                header_params,
            })),
        }
    }

    fn text(&self, span: Span) -> &str {
        let start = span.start as usize;
        self.page
            .get(start..start + span.len as usize)
            .and_then(|b| core::str::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        match self.extra.as_deref().and_then(|e| e.name.as_deref()) {
            Some(name) => name,
            None => self.text(self.name),
        }
    }

    /// Its description, if any.
    pub fn description(&self) -> Option<&str> {
        if let Some(d) = self.extra.as_deref().and_then(|e| e.description.as_deref()) {
            return Some(d);
        }
        (self.description.start != u32::MAX).then(|| self.text(self.description))
    }

    /// The raw JSON of its `inputSchema`, byte for byte as the server sent it.
    pub fn input_schema(&self) -> &str {
        self.text(self.schema)
    }

    /// Its `x-mcp-header` parameters, sent as `Mcp-Param-*` headers on calls.
    pub fn header_params(&self) -> &[crate::xmcp::HeaderParam] {
        self.extra
            .as_deref()
            .map_or(&[], |e| e.header_params.as_slice())
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("description", &self.description())
            .field("input_schema", &self.input_schema())
            .field("header_params", &self.header_params())
            .finish()
    }
}

impl PartialEq for Tool {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.description() == other.description()
            && self.input_schema() == other.input_schema()
    }
}

/// Why an entry of a listing was refused. `Display` gives the reason as text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The entry is not an object with at most one `name`, `description` and `inputSchema`.
    NotAToolObject {
        /// The JSON parser's message (truncated).
        detail: String,
    },
    /// The entry has no `name`.
    NameMissing,
    /// Its `name` is not a string.
    NameNotString,
    /// Its `name` breaks the catalog's [`ToolNameRule`].
    NameInvalid(ToolNameRule),
    /// An earlier entry has the same name (the first is kept).
    DuplicateName,
    /// Its `description` is neither a string nor `null`.
    DescriptionNotString,
    /// It has no `inputSchema`.
    SchemaMissing,
    /// Its `inputSchema` is not a JSON object.
    SchemaNotObject,
    /// Its `inputSchema`'s `type` is not `"object"` (written without escapes, once).
    SchemaTypeNotObject,
    /// Its `x-mcp-header` annotations break a rule (see [`HeaderRefusal`](crate::HeaderRefusal)).
    Header(crate::xmcp::HeaderRefusal),
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusalReason::NotAToolObject { detail } => write!(f, "not a tool object: {detail}"),
            RefusalReason::NameMissing => f.write_str("name is missing"),
            RefusalReason::NameNotString => f.write_str("name is not a string"),
            RefusalReason::NameInvalid(ToolNameRule::Strict) => {
                f.write_str("name is empty, longer than 128 or outside [A-Za-z0-9_.-]")
            }
            RefusalReason::NameInvalid(ToolNameRule::Lenient) => {
                f.write_str("name is empty, longer than 128 bytes or has control characters")
            }
            RefusalReason::DuplicateName => f.write_str("duplicate name (the first is kept)"),
            RefusalReason::DescriptionNotString => f.write_str("description is not a string"),
            RefusalReason::SchemaMissing => f.write_str("inputSchema is missing"),
            RefusalReason::SchemaNotObject => f.write_str("inputSchema is not a JSON object"),
            RefusalReason::SchemaTypeNotObject => f.write_str("inputSchema.type is not \"object\""),
            RefusalReason::Header(h) => write!(
                f,
                "invalid x-mcp-header: {}",
                crate::error::truncated(&h.to_string(), 200)
            ),
        }
    }
}

/// An entry of a listing that could not be used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedTool {
    /// Position in the whole listing (across pages), from 0.
    pub index: usize,
    /// The name, if the entry had a string name (truncated).
    pub name: Option<String>,
    /// Why it was refused.
    pub reason: RefusalReason,
}

/// How many refused entries a [`Catalog`] keeps with their name and reason; the others are only
/// counted ([`Catalog::refused_beyond`]). An entry can be refused for as little as the three bytes
/// of `{},`, and a kept refusal costs tens of bytes: without this cap, a page of empty entries
/// would cost about twenty times its size.
pub const MAX_REFUSALS_KEPT: usize = 1024;

/// The result of a whole listing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    /// The usable tools, in server order.
    pub tools: Vec<Tool>,
    /// The entries refused, in server order: the first [`MAX_REFUSALS_KEPT`].
    pub refused: Vec<RefusedTool>,
    /// Entries refused after the first [`MAX_REFUSALS_KEPT`]: counted, not kept.
    pub refused_beyond: usize,
    /// Pages fetched.
    pub pages: u32,
    /// How long and for whom the listing may be reused, as its pages declared it (`ttlMs`,
    /// `cacheScope`; see [`CacheHint`]).
    pub cache: CacheHint,
    /// The `result` of each page, in order ([`Catalog::result_pages`]): slices of the buffers
    /// the tools already share.
    kept: KeptPages,
}

/// The pages a catalog keeps; its `Debug` gives their number and size, not their bytes.
#[derive(Clone, Default, PartialEq)]
struct KeptPages(Vec<Bytes>);

impl fmt::Debug for KeptPages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes: usize = self.0.iter().map(Bytes::len).sum();
        write!(f, "{} pages, {bytes} bytes", self.0.len())
    }
}

impl Catalog {
    /// How many entries were refused in all, kept or not.
    pub fn refused_count(&self) -> usize {
        self.refused.len() + self.refused_beyond
    }
}

/// Which tool names a catalog accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ToolNameRule {
    /// SEP-986: 1–128 characters of `[A-Za-z0-9_.-]` (the default; what model APIs take).
    #[default]
    Strict,
    /// Any non-empty name of at most 128 bytes without control characters (tools with such names
    /// are called with a Base64-encoded `Mcp-Name`).
    Lenient,
}

impl ToolNameRule {
    /// Whether `name` is accepted under this rule.
    pub fn accepts(self, name: &str) -> bool {
        match self {
            ToolNameRule::Strict => valid_tool_name(name),
            ToolNameRule::Lenient => {
                !name.is_empty()
                    && name.len() <= MAX_TOOL_NAME
                    && !name.chars().any(char::is_control)
            }
        }
    }
}

/// Longest tool name accepted.
pub(crate) const MAX_TOOL_NAME: usize = 128;

/// Whether `name` follows the tool-name rule: 1–128 characters of `[A-Za-z0-9_.-]`.
pub fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}
