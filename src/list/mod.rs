//! `tools/list`: pages, and the catalog they add up to.
use crate::prelude::*;

use alloc::sync::Arc;
use core::fmt;

use bytes::Bytes;

mod cache;
mod more;
mod names;
mod pass;
mod wire;

pub(crate) use cache::PageHint;
pub use cache::{CacheHint, CacheScope};
pub(crate) use names::Names;
pub(crate) use pass::{add_page, PageError};

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
    /// Its `title` and `annotations`, which most tools have: here rather than in [`Extra`], so
    /// that a tool with nothing else outside its page has no allocation of its own.
    title: Span,
    annotations: Span,
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

/// `params` as a tool keeps them: `None` when there are none.
fn shared_params(params: Vec<crate::xmcp::HeaderParam>) -> Option<Arc<[crate::xmcp::HeaderParam]>> {
    (!params.is_empty()).then(|| params.into())
}

/// What a tool holds outside its page.
#[derive(Clone, Debug)]
struct Extra {
    name: Option<Box<str>>,
    description: Option<Box<str>>,
    /// Its `x-mcp-header` parameters (`None`: none), shared with the connection that listed it.
    header_params: Option<Arc<[crate::xmcp::HeaderParam]>>,
    /// The rest of the definition: spans of the page ([`Span::NONE`]: absent; the title and
    /// annotations are in the [`Tool`] itself, not here).
    fields: Fields,
    /// The title, decoded, when it had escapes.
    title: Option<Box<str>>,
    /// What was left out of the definition, and why (rare: boxed apart).
    notes: Option<Box<Notes>>,
}

impl Default for Extra {
    fn default() -> Self {
        Extra {
            name: None,
            description: None,
            header_params: None,
            fields: Fields::none(),
            title: None,
            notes: None,
        }
    }
}

/// The members of the rest of a definition, as spans of the page.
#[derive(Clone, Debug)]
struct Fields {
    output_schema: Span,
    meta: Span,
    /// `execution` (2025-11-25: `taskSupport`).
    execution: Span,
    /// The icons kept, in order.
    icons: Box<[Span]>,
}

impl Fields {
    fn none() -> Fields {
        Fields {
            output_schema: Span::NONE,
            meta: Span::NONE,
            execution: Span::NONE,
            icons: Box::default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.output_schema.start == u32::MAX
            && self.meta.start == u32::MAX
            && self.execution.start == u32::MAX
            && self.icons.is_empty()
    }
}

/// The notes of a tool.
#[derive(Clone, Debug, Default)]
struct Notes {
    kept: Vec<ToolNote>,
    /// Notes beyond [`MAX_NOTES_KEPT`]: counted, not kept.
    beyond: usize,
}

/// How many [`ToolNote`]s a tool keeps; later ones are only counted ([`Tool::notes_beyond`]),
/// so that a definition of many tiny dropped icons costs no more than its bytes.
pub const MAX_NOTES_KEPT: usize = 16;

/// Something of a tool's definition that was left out, and why. The tool itself is usable: these
/// members are optional, and a client shows or ignores them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNote {
    /// A member had the wrong JSON type and was left out: `title` not a string of text,
    /// `annotations`, `_meta` or `execution` not an object, `outputSchema` not a JSON Schema (an
    /// object or a boolean), `icons` not an array.
    FieldIgnored {
        /// The member's name as the schema spells it.
        field: &'static str,
    },
    /// An icon was dropped.
    IconDropped {
        /// Its position in `icons`, from 0.
        index: usize,
        /// Why.
        reason: IconDrop,
    },
}

impl fmt::Display for ToolNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolNote::FieldIgnored { field } => write!(f, "{field} ignored: wrong JSON type"),
            ToolNote::IconDropped { index, reason } => write!(f, "icon {index} dropped: {reason}"),
        }
    }
}

/// Why an icon was dropped. Only `https:` and `data:` sources are kept: an `http:` source would
/// be fetched in the clear, and `file:`, `javascript:` or any other scheme has no place in an
/// icon a server hands to a client.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IconDrop {
    /// The icon is not an object with at most one `src` (or a key is not text).
    NotAnObject,
    /// It has no `src`.
    SrcMissing,
    /// Its `src` is not a string of text.
    SrcNotString,
    /// Its `src` has a scheme other than `https` and `data` (the scheme, cut at 32 bytes; empty
    /// when the source has none).
    SchemeNotAllowed {
        /// The scheme.
        scheme: String,
    },
}

impl fmt::Display for IconDrop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IconDrop::NotAnObject => f.write_str("not an icon object"),
            IconDrop::SrcMissing => f.write_str("src is missing"),
            IconDrop::SrcNotString => f.write_str("src is not a string"),
            IconDrop::SchemeNotAllowed { scheme } if scheme.is_empty() => {
                f.write_str("src has no scheme (only https: and data: are kept)")
            }
            IconDrop::SchemeNotAllowed { scheme } => {
                write!(
                    f,
                    "src scheme {scheme:?} is not allowed (only https: and data: are kept)"
                )
            }
        }
    }
}

/// An icon of a tool: the icon object as the server sent it, with its members read on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Icon<'a> {
    raw: &'a str,
}

impl<'a> Icon<'a> {
    /// The icon object's raw JSON, byte for byte.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// The icon's member `key`, each read on its own (a member of another type reads as
    /// absent and leaves the others readable).
    fn member(&self, key: &str) -> Option<serde_json::Value> {
        let mut map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(self.raw).ok()?;
        map.remove(key)
    }

    fn text(&self, key: &str) -> Option<String> {
        match self.member(key)? {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Its `src`: an `https:` or `data:` URI (icons with other sources are not kept).
    pub fn src(&self) -> String {
        self.text("src").unwrap_or_default()
    }

    /// Its `mimeType`, if a string.
    pub fn mime_type(&self) -> Option<String> {
        self.text("mimeType")
    }

    /// Its `sizes` (`"48x48"`, `"any"`, ...): the strings of the array, if it is one.
    pub fn sizes(&self) -> Vec<String> {
        match self.member("sizes") {
            Some(serde_json::Value::Array(items)) => items
                .into_iter()
                .filter_map(|i| match i {
                    serde_json::Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Its `theme` (`"light"` or `"dark"`), if a string.
    pub fn theme(&self) -> Option<String> {
        self.text("theme")
    }
}

/// A tool's `annotations` read as the schema's `ToolAnnotations`: hints the server gives about
/// the tool, which a client must not trust for a decision of its own (a member of another type
/// reads as absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// `title`: a name for display.
    pub title: Option<String>,
    /// `readOnlyHint`: the tool does not modify its environment (schema default: false).
    pub read_only: Option<bool>,
    /// `destructiveHint`: its updates may be destructive (schema default: true).
    pub destructive: Option<bool>,
    /// `idempotentHint`: calling it again with the same arguments has no further effect (schema
    /// default: false).
    pub idempotent: Option<bool>,
    /// `openWorldHint`: it reaches an open world of external entities (schema default: true).
    pub open_world: Option<bool>,
}

impl ToolHints {
    fn read(raw: &str) -> ToolHints {
        let Ok(map) = serde_json::from_str::<BTreeMap<String, serde_json::Value>>(raw) else {
            return ToolHints::default();
        };
        let flag = |k: &str| map.get(k).and_then(serde_json::Value::as_bool);
        ToolHints {
            title: map.get("title").and_then(|t| t.as_str()).map(Into::into),
            read_only: flag("readOnlyHint"),
            destructive: flag("destructiveHint"),
            idempotent: flag("idempotentHint"),
            open_world: flag("openWorldHint"),
        }
    }
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
            title: Span::NONE,
            annotations: Span::NONE,
            extra: Some(Box::new(Extra {
                name: Some(name.into()),
                description: description.map(Into::into),
                header_params: shared_params(header_params),
                ..Extra::default()
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

    fn field(&self, pick: impl Fn(&Fields) -> Span) -> Option<&str> {
        self.span_text(pick(&self.extra.as_deref()?.fields))
    }

    /// The text of `span`, if it is one ([`Span::NONE`]: none).
    fn span_text(&self, span: Span) -> Option<&str> {
        (span.start != u32::MAX).then(|| self.text(span))
    }

    /// Its `title`, a name for display, if it had one of text.
    pub fn title(&self) -> Option<&str> {
        if let Some(t) = self.extra.as_deref().and_then(|e| e.title.as_deref()) {
            return Some(t);
        }
        self.span_text(self.title)
    }

    /// The raw JSON of its `annotations` object, byte for byte: untrusted hints (see
    /// [`Tool::hints`]).
    pub fn annotations(&self) -> Option<&str> {
        self.span_text(self.annotations)
    }

    /// Its `annotations` read as hints (all absent without annotations). Untrusted: a server may
    /// say anything of its tools.
    pub fn hints(&self) -> ToolHints {
        self.annotations().map(ToolHints::read).unwrap_or_default()
    }

    /// The raw JSON of its `outputSchema` (an object or a boolean), byte for byte: no `$ref` is
    /// resolved.
    pub fn output_schema(&self) -> Option<&str> {
        self.field(|f| f.output_schema)
    }

    /// The raw JSON of its `_meta` object, byte for byte.
    pub fn meta(&self) -> Option<&str> {
        self.field(|f| f.meta)
    }

    /// The raw JSON of its `execution` object, byte for byte (2025-11-25: "Execution-related
    /// properties for this tool", `taskSupport`; SEP-2663 has no such member).
    pub fn execution(&self) -> Option<&str> {
        self.field(|f| f.execution)
    }

    /// Its `execution.taskSupport` when a string (2025-11-25: `"forbidden"`, `"optional"` or
    /// `"required"`; "If not present, defaults to `"forbidden"`"): the server's word, as
    /// [`task::check_legacy_task_support`](crate::task::check_legacy_task_support) reads it.
    pub fn task_support(&self) -> Option<String> {
        #[derive(serde::Deserialize)]
        struct Execution {
            #[serde(rename = "taskSupport", default)]
            task_support: Option<serde_json::Value>,
        }
        let e: Execution = serde_json::from_str(self.execution()?).ok()?;
        match e.task_support? {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Its icons with an `https:` or `data:` source, in order (the others are dropped, each with
    /// a [`ToolNote`]).
    pub fn icons(&self) -> impl Iterator<Item = Icon<'_>> + '_ {
        let icons = self
            .extra
            .as_deref()
            .map_or(&[][..], |e| &e.fields.icons[..]);
        icons.iter().map(|&span| Icon {
            raw: self.text(span),
        })
    }

    /// What was left out of its definition, and why: the first [`MAX_NOTES_KEPT`].
    pub fn notes(&self) -> &[ToolNote] {
        match self.extra.as_deref().and_then(|e| e.notes.as_deref()) {
            Some(n) => &n.kept,
            None => &[],
        }
    }

    /// Notes beyond the first [`MAX_NOTES_KEPT`]: counted, not kept.
    pub fn notes_beyond(&self) -> usize {
        self.extra
            .as_deref()
            .and_then(|e| e.notes.as_deref())
            .map_or(0, |n| n.beyond)
    }

    /// Its `x-mcp-header` parameters, sent as `Mcp-Param-*` headers on calls.
    pub fn header_params(&self) -> &[crate::xmcp::HeaderParam] {
        self.extra
            .as_deref()
            .and_then(|e| e.header_params.as_deref())
            .unwrap_or_default()
    }

    /// Its `x-mcp-header` parameters as shared (`None`: none): what the connection that listed
    /// it keeps for its calls, without a copy.
    pub(crate) fn shared_header_params(&self) -> Option<&Arc<[crate::xmcp::HeaderParam]>> {
        self.extra.as_deref().and_then(|e| e.header_params.as_ref())
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .field("description", &self.description())
            .field("input_schema", &self.input_schema())
            .field("header_params", &self.header_params())
            .field("title", &self.title())
            .field("annotations", &self.annotations())
            .field("output_schema", &self.output_schema())
            .field("icons", &self.icons().map(|i| i.raw).collect::<Vec<_>>())
            .field("meta", &self.meta())
            .field("notes", &self.notes())
            .finish()
    }
}

impl PartialEq for Tool {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.description() == other.description()
            && self.input_schema() == other.input_schema()
            && self.title() == other.title()
            && self.annotations() == other.annotations()
            && self.output_schema() == other.output_schema()
            && self.icons().eq(other.icons())
            && self.meta() == other.meta()
            && self.notes() == other.notes()
            && self.notes_beyond() == other.notes_beyond()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The capacity a buffer of `len` bytes in an allocation of `cap` keeps once it is a page's:
    /// read back from the `Bytes` (a unique handle gives its allocation back whole).
    fn kept_capacity(len: usize, cap: usize) -> usize {
        let mut buf = Vec::with_capacity(cap);
        buf.resize(len, b'x');
        assert_eq!(buf.capacity(), cap);
        let kept = message_buffer(buf);
        assert_eq!(&kept[..], &vec![b'x'; len][..]);
        Vec::from(kept).capacity()
    }

    #[test]
    fn a_buffer_keeps_up_to_an_eighth_spare_and_gives_back_more() {
        // 800 bytes: up to 100 spare is kept, 101 is given back.
        assert_eq!(kept_capacity(800, 800), 800);
        assert_eq!(kept_capacity(800, 899), 899);
        assert_eq!(kept_capacity(800, 900), 900);
        assert_eq!(kept_capacity(800, 901), 800);
        assert_eq!(kept_capacity(800, 1600), 800);
    }
}
