//! The listing as it was read before the one-pass scanner, kept verbatim as the oracle of the
//! property test in `tests/list.rs`: serde_json splits the JSON-RPC envelope, reads the page, each
//! tool, and each schema (streaming scan, then the tree walk for the reasons). Only the plumbing
//! around it is new: the catalog it builds holds plain strings, and the names of the types it
//! shares with the crate come from the crate.
#![allow(dead_code, clippy::all)]

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::OnceLock;

use mcp_sansio::internals::MAX_DEPTH;
use mcp_sansio::ToolNameRule;
use mcp_sansio::{HeaderParam, ParamKind};
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

const KEYWORD: &str = "x-mcp-header";
const MAX_TOOL_NAME: usize = 128;

fn truncated(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// One accepted tool: name, description, schema, header parameters.
#[derive(Clone, Debug)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Box<RawValue>,
    pub header_params: Vec<HeaderParam>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RefusedTool {
    pub index: usize,
    pub name: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub tools: Vec<Tool>,
    pub refused: Vec<RefusedTool>,
    pub pages: u32,
}

// ---- src/jsonrpc.rs (envelope) ----

#[derive(Deserialize)]
struct Wire<'a> {
    jsonrpc: Option<&'a str>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<WireError<'a>>,
}

#[derive(Deserialize)]
struct WireError<'a> {
    code: i64,
    #[serde(borrow, default)]
    message: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

/// The old `parse_message`, reduced to what a listing needs: the raw result, or the error text.
pub fn parse_result(bytes: &[u8]) -> Result<(&RawValue, &RawValue), String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Err("batch".into());
    }
    let wire: Wire<'_> =
        serde_json::from_slice(bytes).map_err(|e| truncated(&e.to_string(), 256))?;
    if wire.jsonrpc != Some("2.0") {
        return Err("missing or wrong \"jsonrpc\" member".into());
    }
    let id = wire.id.filter(|v| v.get().trim() != "null");
    match (wire.method, wire.result, wire.error) {
        (None, Some(result), None) => match id {
            Some(id) => Ok((id, result)),
            None => Err("a result without an id".into()),
        },
        (Some(_), None, None) if id.is_none() => {
            Err("a notification where a response was expected".into())
        }
        (Some(_), None, None) => Err("a request where a response was expected".into()),
        (None, None, Some(_)) => Err("an error response".into()),
        (None, Some(_), Some(_)) => Err("both \"result\" and \"error\"".into()),
        (Some(_), _, _) => Err("both \"method\" and a response member".into()),
        (None, None, None) => Err("neither a request, a notification nor a response".into()),
    }
}

// ---- src/list.rs ----

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
        struct NameVisitor<'a>(std::marker::PhantomData<&'a ()>);
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
        deserializer.deserialize_any(NameVisitor(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct SchemaHead<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<&'a RawValue>,
}

/// One page: its entries, and the cursor of the next page if any.
pub struct Page<'a> {
    pub entries: Vec<&'a RawValue>,
    pub next_cursor: Option<String>,
}

/// Parses a `tools/list` result.
pub fn parse_page(result: &RawValue) -> Result<Page<'_>, String> {
    let wire: PageWire<'_> = serde_json::from_str(result.get()).map_err(|e| e.to_string())?;
    match wire.result_type {
        None | Some("complete") => {}
        Some(other) => return Err(format!("unexpected resultType {:?}", truncated(other, 64))),
    }
    Ok(Page {
        entries: wire.tools,
        next_cursor: wire.next_cursor,
    })
}

/// Adds one entry to the catalog, or records why it was refused.
pub fn add_entry(
    catalog: &mut Catalog,
    names: &mut std::collections::HashSet<String>,
    rule: ToolNameRule,
    index: usize,
    entry: &RawValue,
) {
    let refuse = |catalog: &mut Catalog, name: Option<&str>, reason: String| {
        catalog.refused.push(RefusedTool {
            index,
            name: name.map(|n| truncated(n, MAX_TOOL_NAME * 2)),
            reason,
        });
    };
    let wire: ToolWire<'_> = match serde_json::from_str(entry.get()) {
        Ok(w) => w,
        Err(e) => {
            return refuse(
                catalog,
                None,
                format!("not a tool object: {}", truncated(&e.to_string(), 200)),
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
    let header_params = match scan(schema.get()) {
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
            match header_params(schema.get()) {
                Ok(p) => p,
                Err(reason) => {
                    return refuse(
                        catalog,
                        Some(name),
                        format!("invalid x-mcp-header: {}", truncated(&reason, 200)),
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

/// A whole page the old way: the envelope, the page, every entry.
pub fn list_page(
    body: &[u8],
    catalog: &mut Catalog,
    names: &mut HashSet<String>,
    rule: ToolNameRule,
    entries: &mut usize,
) -> Result<Option<String>, String> {
    let (_, result) = parse_result(body)?;
    let page = parse_page(result)?;
    catalog.pages += 1;
    for entry in page.entries {
        add_entry(catalog, names, rule, *entries, entry);
        *entries += 1;
    }
    Ok(page.next_cursor)
}

// ---- src/xmcp.rs ----

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// A JSON value parsed with duplicate object keys refused.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(v) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// The schema walk: collects annotations and refuses the first broken rule.
struct Walk {
    found: Vec<HeaderParam>,
    seen: HashSet<String>,
}

impl Walk {
    /// Walks `node`; `path` is `Some` while `node` is reached only through `properties` keys
    /// (the root is `Some(&[])`).
    fn node(&mut self, node: &Value, depth: usize, path: Option<&[String]>) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("inputSchema nests deeper than {MAX_DEPTH} levels"));
        }
        match node {
            Value::Array(items) => {
                for item in items {
                    self.node(item, depth + 1, None)?;
                }
                Ok(())
            }
            Value::Object(map) => self.object(map, depth, path),
            _ => Ok(()),
        }
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        depth: usize,
        path: Option<&[String]>,
    ) -> Result<(), String> {
        if let Some(annotation) = map.get(KEYWORD) {
            self.annotation(map, annotation, path)?;
        }
        for (key, value) in map {
            match (key.as_str(), path, value) {
                ("properties", Some(path), Value::Object(props)) => {
                    if depth + 1 > MAX_DEPTH {
                        return Err(format!("inputSchema nests deeper than {MAX_DEPTH} levels"));
                    }
                    for (name, sub) in props {
                        let mut sub_path = path.to_vec();
                        sub_path.push(name.clone());
                        self.node(sub, depth + 2, Some(&sub_path))?;
                    }
                }
                _ => self.node(value, depth + 1, None)?,
            }
        }
        Ok(())
    }

    fn annotation(
        &mut self,
        map: &Map<String, Value>,
        annotation: &Value,
        path: Option<&[String]>,
    ) -> Result<(), String> {
        let name = match annotation {
            Value::String(s) => s,
            other => return Err(format!("{KEYWORD} value {other} is not a string")),
        };
        let path = match path {
            Some(p) if !p.is_empty() => p,
            Some(_) => return Err(format!("{KEYWORD} {name:?} is on the schema root")),
            None => {
                return Err(format!(
                    "{KEYWORD} {name:?} is not reached only through `properties`"
                ))
            }
        };
        let at = path.join(".");
        if name.is_empty() {
            return Err(format!("{KEYWORD} on property {at:?} is empty"));
        }
        if !is_token(name) {
            return Err(format!(
                "{KEYWORD} {name:?} on property {at:?} is not an RFC 9110 token"
            ));
        }
        let kind = match map.get("type") {
            Some(Value::String(t)) if t == "string" => ParamKind::String,
            Some(Value::String(t)) if t == "integer" => ParamKind::Integer,
            Some(Value::String(t)) if t == "boolean" => ParamKind::Boolean,
            Some(t) => {
                return Err(format!(
                    "{KEYWORD} {name:?} on property {at:?} has type {t}, not string, integer or boolean"
                ))
            }
            None => {
                return Err(format!(
                    "{KEYWORD} {name:?} on property {at:?} has no type"
                ))
            }
        };
        if !self.seen.insert(name.to_ascii_lowercase()) {
            return Err(format!(
                "{KEYWORD} {name:?} on property {at:?} duplicates another (case-insensitively)"
            ));
        }
        self.found.push(HeaderParam {
            path: path.to_vec(),
            name: name.clone(),
            kind,
        });
        Ok(())
    }
}

/// Where a value sits in the schema, for the streaming scan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Reached from the root only through `properties` keys: an object here is a schema whose
    /// `x-mcp-header` is an annotation (its path is [`Scan::path`]).
    Schema,
    /// The value of `properties` in a [`Place::Schema`] object: if an object, each of its values
    /// is a [`Place::Schema`] one level down the path.
    Properties,
    /// Anywhere else: an object here must not carry `x-mcp-header`.
    Other,
}

/// What the scan reports about a value besides walking it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Nothing.
    Nothing,
    /// Whether it is the string `string`, `integer` or `boolean` (a `type` value).
    Kind,
    /// Its text if it is a string (an `x-mcp-header` value).
    Text,
    /// Whether it is `"object"` written without escapes (the root `type`, compared raw).
    Object,
}

/// What a value turned out to be, for the [`Want`] asked.
enum Seen {
    /// Not what was asked about (or nothing was asked).
    No,
    /// A `type` string: the parameter kind if it is one.
    Kind(Option<ParamKind>),
    /// An `x-mcp-header` string.
    Text(String),
    /// The root `type` is `"object"`.
    Object,
}

/// Object keys of one map beyond which a hash set replaces the linear duplicate search.
const LINEAR_KEYS: usize = 16;

/// The state of the streaming scan, shared by every level.
struct Scan<'de> {
    found: Vec<HeaderParam>,
    /// Lower-cased annotation values seen so far.
    seen: HashSet<String>,
    /// The `properties` keys from the root to the current [`Place::Schema`] object.
    path: Vec<Cow<'de, str>>,
    /// The keys of the objects being read, innermost last.
    keys: Vec<Cow<'de, str>>,
    /// Whether the root object's `type` is `"object"` written without escapes.
    root_object: bool,
}

/// An object key, borrowed from the input unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// One value of the schema: walked without building it, refused on the first broken rule.
struct Node<'a, 'de> {
    scan: &'a mut Scan<'de>,
    depth: usize,
    place: Place,
    want: Want,
}

/// A refusal of the streaming scan; the reason is found by the tree walk.
fn refuse<E: de::Error>() -> E {
    E::custom("refused")
}

impl<'de> DeserializeSeed<'de> for Node<'_, 'de> {
    type Value = Seen;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Seen, D::Error> {
        if self.depth > MAX_DEPTH {
            return Err(refuse());
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Node<'_, 'de> {
    fn child(&mut self, place: Place, want: Want) -> Node<'_, 'de> {
        Node {
            scan: self.scan,
            depth: self.depth + 1,
            place,
            want,
        }
    }

    fn text(self, v: &str, borrowed: bool) -> Seen {
        match self.want {
            Want::Nothing => Seen::No,
            Want::Kind => Seen::Kind(match v {
                "string" => Some(ParamKind::String),
                "integer" => Some(ParamKind::Integer),
                "boolean" => Some(ParamKind::Boolean),
                _ => None,
            }),
            Want::Text => Seen::Text(v.to_owned()),
            Want::Object if borrowed && v == "object" => Seen::Object,
            Want::Object => Seen::No,
        }
    }

    /// Records `key` of the object whose keys start at `start` and gives it back; refuses a
    /// duplicate.
    fn key<E: de::Error>(
        &mut self,
        start: usize,
        set: &mut Option<HashSet<Cow<'de, str>>>,
        key: Cow<'de, str>,
    ) -> Result<Cow<'de, str>, E> {
        let keys = &mut self.scan.keys;
        if let Some(set) = set {
            if !set.insert(key.clone()) {
                return Err(refuse());
            }
            return Ok(key);
        }
        if keys[start..].contains(&key) {
            return Err(refuse());
        }
        keys.push(key.clone());
        if keys.len() - start > LINEAR_KEYS {
            *set = Some(keys.drain(start..).collect());
        }
        Ok(key)
    }

    /// The annotation `name` of the schema object at [`Scan::path`], whose `type` was `kind`
    /// (`None`: absent; `Some(None)`: not one of the three).
    fn annotation<E: de::Error>(
        &mut self,
        slot: usize,
        name: &str,
        kind: Option<Option<ParamKind>>,
    ) -> Result<(), E> {
        let Some(Some(kind)) = kind else {
            return Err(refuse());
        };
        if self.scan.path.is_empty() || !is_token(name) {
            return Err(refuse());
        }
        let lower = name.to_ascii_lowercase();
        if !self.scan.seen.insert(lower) {
            return Err(refuse());
        }
        let param = HeaderParam {
            path: self
                .scan
                .path
                .iter()
                .map(|k| k.as_ref().to_owned())
                .collect(),
            name: name.to_owned(),
            kind,
        };
        self.scan.found.insert(slot, param);
        Ok(())
    }
}

impl<'de> Visitor<'de> for Node<'_, 'de> {
    type Value = Seen;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Seen, E> {
        Ok(self.text(v, true))
    }

    fn visit_str<E>(self, v: &str) -> Result<Seen, E> {
        Ok(self.text(v, false))
    }

    fn visit_unit<E>(self) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_none<E>(self) -> Result<Seen, E> {
        Ok(Seen::No)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Seen, A::Error> {
        while seq
            .next_element_seed(self.child(Place::Other, Want::Nothing))?
            .is_some()
        {}
        Ok(Seen::No)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Seen, A::Error> {
        let start = self.scan.keys.len();
        let mut set = None;
        // Where this object's own parameter goes: before those found below it.
        let slot = self.scan.found.len();
        let mut name: Option<String> = None;
        let mut kind: Option<Option<ParamKind>> = None;
        while let Some(Key(key)) = map.next_key()? {
            let key = self.key(start, &mut set, key)?;
            match self.place {
                Place::Properties => {
                    self.scan.path.push(key);
                    map.next_value_seed(self.child(Place::Schema, Want::Nothing))?;
                    self.scan.path.pop();
                }
                Place::Other if key == KEYWORD => return Err(refuse()),
                Place::Other => {
                    map.next_value_seed(self.child(Place::Other, Want::Nothing))?;
                }
                Place::Schema => match key.as_ref() {
                    KEYWORD => match map.next_value_seed(self.child(Place::Other, Want::Text))? {
                        Seen::Text(text) => name = Some(text),
                        _ => return Err(refuse()),
                    },
                    "type" => {
                        let root = self.depth == 0;
                        let want = if root { Want::Object } else { Want::Kind };
                        match map.next_value_seed(self.child(Place::Other, want))? {
                            Seen::Kind(k) => kind = Some(k),
                            Seen::Object => self.scan.root_object = true,
                            _ => kind = Some(None),
                        }
                    }
                    "properties" => {
                        map.next_value_seed(self.child(Place::Properties, Want::Nothing))?;
                    }
                    _ => {
                        map.next_value_seed(self.child(Place::Other, Want::Nothing))?;
                    }
                },
            }
        }
        self.scan.keys.truncate(start);
        if let Some(name) = name {
            self.annotation(slot, &name, kind)?;
        }
        Ok(Seen::No)
    }
}

/// Whether `serde_json::Map` iterates in key order (rather than insertion order, with the
/// `preserve_order` feature): the order the tree walk finds parameters in.
fn map_is_sorted() -> bool {
    static SORTED: OnceLock<bool> = OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut map = Map::new();
        map.insert("b".to_owned(), Value::Null);
        map.insert("a".to_owned(), Value::Null);
        map.keys().next().is_some_and(|k| k == "a")
    })
}

/// The streaming form of [`header_params`] for a schema it accepts: the parameters, and whether
/// the root object's `type` is `"object"` written without escapes. `None` if the schema is
/// refused; the tree walk then gives the reason.
fn scan(input_schema: &str) -> Option<(Vec<HeaderParam>, bool)> {
    let mut scan = Scan {
        found: Vec::new(),
        seen: HashSet::new(),
        path: Vec::new(),
        keys: Vec::new(),
        root_object: false,
    };
    let mut de = serde_json::Deserializer::from_str(input_schema);
    let root = Node {
        scan: &mut scan,
        depth: 0,
        place: Place::Schema,
        want: Want::Nothing,
    };
    root.deserialize(&mut de).ok()?;
    de.end().ok()?;
    let Scan {
        mut found,
        root_object,
        ..
    } = scan;
    if found.len() > 1 && map_is_sorted() {
        found.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Some((found, root_object))
}

/// Finds and validates every x-mcp-header annotation of an inputSchema (raw JSON text).
/// Err(reason) if the tool must be refused (reason names the rule and the header/property).
///
/// The schema must be JSON without duplicate object keys, nested no deeper than [`MAX_DEPTH`].
/// A schema without annotations gives an empty list.
pub fn header_params(input_schema: &str) -> Result<Vec<HeaderParam>, String> {
    match scan(input_schema) {
        Some((found, _)) => Ok(found),
        None => walk(input_schema),
    }
}

/// [`header_params`] by building the schema as a tree: the reference the streaming scan agrees
/// with, and the source of the refusal reasons.
fn walk(input_schema: &str) -> Result<Vec<HeaderParam>, String> {
    let Strict(schema) = serde_json::from_str(input_schema)
        .map_err(|e| format!("inputSchema is not valid JSON: {e}"))?;
    let mut walk = Walk {
        found: Vec::new(),
        seen: HashSet::new(),
    };
    walk.node(&schema, 0, Some(&[]))?;
    Ok(walk.found)
}
