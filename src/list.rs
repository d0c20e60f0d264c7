//! `tools/list`: pages, and the catalog they add up to.
use crate::prelude::*;

use alloc::borrow::Cow;
use core::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// One usable tool, in the shape a model API takes.
#[derive(Clone, Debug)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// The raw JSON of its `inputSchema`, byte for byte as the server sent it.
    pub input_schema: Box<RawValue>,
    /// Its `x-mcp-header` parameters, sent as `Mcp-Param-*` headers on calls.
    pub header_params: Vec<crate::xmcp::HeaderParam>,
}

impl PartialEq for Tool {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.input_schema.get() == other.input_schema.get()
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
    pub reason: String,
}

/// The result of a whole listing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    /// The usable tools, in server order.
    pub tools: Vec<Tool>,
    /// The entries refused, in server order.
    pub refused: Vec<RefusedTool>,
    /// Pages fetched.
    pub pages: u32,
}

#[derive(Deserialize)]
struct PageWire<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
    #[serde(rename = "resultType", default)]
    result_type: Option<&'a str>,
}

#[derive(Deserialize)]
struct ToolWire<'a> {
    #[serde(default, borrow)]
    name: Option<NameWire<'a>>,
    #[serde(default, borrow)]
    description: Option<&'a RawValue>,
    #[serde(rename = "inputSchema", default, borrow)]
    input_schema: Option<&'a RawValue>,
}

/// A tool's `name`: its text, borrowed unless escaped, or a mark that it is not a string (the value
/// is still read in full, as any JSON value).
enum NameWire<'a> {
    Text(Cow<'a, str>),
    NotText,
}

impl<'de: 'a, 'a> Deserialize<'de> for NameWire<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor<'a>(core::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for NameVisitor<'a> {
            type Value = NameWire<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(NameWire::Text(Cow::Owned(v)))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(NameWire::NotText)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(NameWire::NotText)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(MapAccessDeserializer::new(map))?;
                Ok(NameWire::NotText)
            }
        }
        deserializer.deserialize_any(NameVisitor(core::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<&'a RawValue>,
}

/// One page: its entries, and the cursor of the next page if any.
pub(crate) struct Page<'a> {
    pub(crate) entries: Vec<&'a RawValue>,
    pub(crate) next_cursor: Option<String>,
}

/// Parses a `tools/list` result.
pub(crate) fn parse_page(result: &RawValue) -> Result<Page<'_>, String> {
    let wire: PageWire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    match wire.result_type {
        None | Some("complete") => {}
        Some(other) => {
            return Err(format!(
                "unexpected resultType {:?}",
                crate::error::truncated(other, 64)
            ))
        }
    }
    Ok(Page {
        entries: wire.tools,
        next_cursor: wire.next_cursor,
    })
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
pub(crate) fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Adds one entry to the catalog, or records why it was refused.
pub(crate) fn add_entry(
    catalog: &mut Catalog,
    names: &mut alloc::collections::BTreeSet<String>,
    rule: ToolNameRule,
    index: usize,
    entry: &RawValue,
) {
    let refuse = |catalog: &mut Catalog, name: Option<&str>, reason: String| {
        catalog.refused.push(RefusedTool {
            index,
            name: name.map(|n| crate::error::truncated(n, MAX_TOOL_NAME * 2)),
            reason,
        });
    };
    let wire: ToolWire<'_> = match serde_json::from_str(entry.get()) {
        Ok(w) => w,
        Err(e) => {
            return refuse(
                catalog,
                None,
                format!(
                    "not a tool object: {}",
                    crate::error::truncated(&e.to_string(), 200)
                ),
            )
        }
    };
    let name = match &wire.name {
        Some(NameWire::Text(s)) => s.as_ref(),
        Some(NameWire::NotText) => return refuse(catalog, None, "name is not a string".into()),
        None => return refuse(catalog, None, "name is missing".into()),
    };
    if !rule.accepts(name) {
        let reason = match rule {
            ToolNameRule::Strict => "name is empty, longer than 128 or outside [A-Za-z0-9_.-]",
            ToolNameRule::Lenient => {
                "name is empty, longer than 128 bytes or has control characters"
            }
        };
        return refuse(catalog, Some(name), reason.into());
    }
    if names.contains(name) {
        return refuse(
            catalog,
            Some(name),
            "duplicate name (the first is kept)".into(),
        );
    }
    let description = match wire.description {
        None => None,
        Some(raw) if raw.get() == "null" => None,
        Some(raw) => match serde_json::from_str::<String>(raw.get()) {
            Ok(s) => Some(s),
            Err(_) => return refuse(catalog, Some(name), "description is not a string".into()),
        },
    };
    let Some(schema) = wire.input_schema else {
        return refuse(catalog, Some(name), "inputSchema is missing".into());
    };
    if !schema.get().starts_with('{') {
        return refuse(
            catalog,
            Some(name),
            "inputSchema is not a JSON object".into(),
        );
    }
    // One streaming pass settles the usual case: a well-formed schema whose `type` is `"object"`.
    // Anything else goes through the separate checks, which give the reason.
    let header_params = match crate::xmcp::scan(schema.get()) {
        Some((params, true)) => params,
        _ => {
            match serde_json::from_str::<SchemaHead<'_>>(schema.get()) {
                Ok(SchemaHead { ty: Some(t) }) if t.get() == "\"object\"" => {}
                _ => {
                    return refuse(
                        catalog,
                        Some(name),
                        "inputSchema.type is not \"object\"".into(),
                    )
                }
            }
            match crate::xmcp::header_params(schema.get()) {
                Ok(p) => p,
                Err(reason) => {
                    return refuse(
                        catalog,
                        Some(name),
                        format!(
                            "invalid x-mcp-header: {}",
                            crate::error::truncated(&reason, 200)
                        ),
                    )
                }
            }
        }
    };
    names.insert(name.to_owned());
    catalog.tools.push(Tool {
        name: name.to_owned(),
        description,
        input_schema: schema.to_owned(),
        header_params,
    });
}
