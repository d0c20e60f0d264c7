//! SEP-2243 header parameters: `x-mcp-header` annotations in a tool's `inputSchema`.
//!
//! A property schema may carry `"x-mcp-header": "Region"`; a call of the tool then sends the
//! argument's value as the header `Mcp-Param-Region`. A server is hostile until checked, so an
//! annotation that breaks any rule makes the whole tool refused: [`header_params`] returns the
//! reason instead of a partial list.
//!
//! Rules enforced by [`header_params`]:
//! - the annotation value is a non-empty RFC 9110 token;
//! - values are unique within the schema, compared case-insensitively;
//! - the annotated property's `type` is exactly `"string"`, `"integer"` or `"boolean"`;
//! - the property is reached from the root only through `properties` keys; an annotation anywhere
//!   else (under `items`, `anyOf`, `$defs`, ...) is refused;
//! - the schema nests no deeper than [`MAX_DEPTH`] and has no duplicate object keys.
//!
//! Only schemas carry annotations. The values of `default`, `const`, `enum` and `examples` are
//! instance data: an `x-mcp-header` key in them is data, never an annotation and never refused.
//! The keys of `properties` (off the path too), `patternProperties`, `$defs`, `definitions` and
//! `dependentSchemas` are names: a definition named `x-mcp-header` is a name.
use crate::prelude::*;

use alloc::borrow::Cow;
use alloc::collections::BTreeSet;
use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

mod check;
mod value;
pub(crate) use check::{value_string, SchemaCheck, SchemaFacts};
pub use value::{encode_header_value, header_values};

/// The annotation keyword.
const KEYWORD: &str = "x-mcp-header";

/// The header name prefix of a header parameter.
const PREFIX: &str = "Mcp-Param-";

/// The deepest JSON nesting accepted in an `inputSchema`; deeper schemas are refused.
pub const MAX_DEPTH: usize = 64;

/// Most `x-mcp-header` parameters one tool may have. Each is a header on every call of the tool
/// (and servers refuse requests with too many headers: this crate reads at most 128 per
/// response by default), and each is kept with the tool: a tool with more is refused
/// ([`HeaderRefusal::TooMany`]).
pub const MAX_HEADER_PARAMS: usize = 64;

/// The largest integer magnitude sent as a header value: 2^53 − 1.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One header parameter of a tool: the JSON path of the property (keys under successive
/// `properties`) and the header name suffix as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderParam {
    /// The property keys from the root, one per `properties` level.
    pub path: Vec<String>,
    /// The header name suffix, as written in the annotation (`Mcp-Param-<name>`).
    pub name: String,
    /// The JSON Schema `type` of the property.
    pub kind: ParamKind,
}

/// The JSON Schema `type` of a header parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `"type": "string"`: sent as-is.
    String,
    /// `"type": "integer"`: sent as a decimal string, within ±(2^53 − 1).
    Integer,
    /// `"type": "boolean"`: sent as `true` or `false`.
    Boolean,
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

/// Whether `b` is an RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `s` is an RFC 9110 `token` (`1*tchar`).
fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// The schema walk: collects annotations and refuses the first broken rule.
struct Walk {
    found: Vec<HeaderParam>,
    seen: BTreeSet<String>,
}

impl Walk {
    /// Walks `node`, which sits at `at` (the root is `At::Schema(&[])`).
    fn node(&mut self, node: &Value, depth: usize, at: At<'_>) -> Result<(), HeaderRefusal> {
        if depth > MAX_DEPTH {
            return Err(HeaderRefusal::TooDeep);
        }
        match node {
            Value::Array(items) => {
                let item_at = if matches!(at, At::Data) {
                    At::Data
                } else {
                    At::Other
                };
                for item in items {
                    self.node(item, depth + 1, item_at)?;
                }
                Ok(())
            }
            Value::Object(map) => self.object(map, depth, at),
            _ => Ok(()),
        }
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        depth: usize,
        at: At<'_>,
    ) -> Result<(), HeaderRefusal> {
        let path = match at {
            At::Schema(path) => Some(path),
            At::Other => None,
            At::Names | At::Data => {
                let child = if matches!(at, At::Data) {
                    At::Data
                } else {
                    At::Other
                };
                for value in map.values() {
                    self.node(value, depth + 1, child)?;
                }
                return Ok(());
            }
        };
        if let Some(annotation) = map.get(KEYWORD) {
            self.annotation(map, annotation, path)?;
        }
        for (key, value) in map {
            match (key.as_str(), path, value) {
                ("properties", Some(path), Value::Object(props)) => {
                    if depth + 1 > MAX_DEPTH {
                        return Err(HeaderRefusal::TooDeep);
                    }
                    for (name, sub) in props {
                        let mut sub_path = path.to_vec();
                        sub_path.push(name.clone());
                        self.node(sub, depth + 2, At::Schema(&sub_path))?;
                    }
                }
                (key, _, _) => {
                    let at = match member_place(key.as_bytes()) {
                        Place::Data => At::Data,
                        Place::Names => At::Names,
                        _ => At::Other,
                    };
                    self.node(value, depth + 1, at)?;
                }
            }
        }
        Ok(())
    }

    fn annotation(
        &mut self,
        map: &Map<String, Value>,
        annotation: &Value,
        path: Option<&[String]>,
    ) -> Result<(), HeaderRefusal> {
        let name = match annotation {
            Value::String(s) => s,
            other => {
                return Err(HeaderRefusal::NotAString {
                    value: other.to_string(),
                })
            }
        };
        let path = match path {
            Some(p) if !p.is_empty() => p,
            Some(_) => return Err(HeaderRefusal::OnRoot { name: name.clone() }),
            None => return Err(HeaderRefusal::NotThroughProperties { name: name.clone() }),
        };
        let at = path.join(".");
        if name.is_empty() {
            return Err(HeaderRefusal::Empty { at });
        }
        if !is_token(name) {
            return Err(HeaderRefusal::NotAToken {
                name: name.clone(),
                at,
            });
        }
        let kind = match map.get("type") {
            Some(Value::String(t)) if t == "string" => ParamKind::String,
            Some(Value::String(t)) if t == "integer" => ParamKind::Integer,
            Some(Value::String(t)) if t == "boolean" => ParamKind::Boolean,
            Some(t) => {
                return Err(HeaderRefusal::WrongType {
                    name: name.clone(),
                    at,
                    found: t.to_string(),
                })
            }
            None => {
                return Err(HeaderRefusal::NoType {
                    name: name.clone(),
                    at,
                })
            }
        };
        if !self.seen.insert(name.to_ascii_lowercase()) {
            return Err(HeaderRefusal::Duplicate {
                name: name.clone(),
                at,
            });
        }
        if self.found.len() >= MAX_HEADER_PARAMS {
            return Err(HeaderRefusal::TooMany);
        }
        self.found.push(HeaderParam {
            path: path.to_vec(),
            name: name.clone(),
            kind,
        });
        Ok(())
    }
}

/// Where a value sits in the schema, for the tree walk.
#[derive(Clone, Copy)]
enum At<'p> {
    /// Reached from the root only through `properties` keys, with those keys.
    Schema(&'p [String]),
    /// A map of names to schemas elsewhere (see [`Place::Names`]).
    Names,
    /// Instance data (see [`Place::Data`]).
    Data,
    /// Anywhere else.
    Other,
}

/// Where the value of the member `key` of a schema object that is not on the `properties` path
/// sits: instance data, a map of names, or another schema ([`Place::Other`]). On the path, the
/// caller handles `properties`, `type` and the annotation first.
///
/// Keywords whose value is instance data, a value the schema describes rather than a schema (an
/// `x-mcp-header` key inside them is data, not an annotation): `default`, `const`, `enum`,
/// `examples`. Keywords whose value maps names to schemas (their keys are names, not keywords):
/// `properties`, `patternProperties`, `$defs`, `definitions`, `dependentSchemas`. The key's
/// length picks the keyword it may be, compared as a word (the listing's schema check calls this
/// for every container it opens).
#[inline]
fn member_place(key: &[u8]) -> Place {
    let data = match key.len() {
        4 => key == b"enum",
        5 => key == b"const",
        7 => key == b"default",
        8 => key == b"examples",
        _ => false,
    };
    let names = match key.len() {
        5 => key == b"$defs",
        10 => key == b"properties",
        11 => key == b"definitions",
        16 => key == b"dependentSchemas",
        17 => key == b"patternProperties",
        _ => false,
    };
    if data {
        Place::Data
    } else if names {
        Place::Names
    } else {
        Place::Other
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
    /// Anywhere else: an object here is a schema that must not carry `x-mcp-header`.
    Other,
    /// The value of a keyword that maps names to schemas (`properties` off the path,
    /// `patternProperties`, `$defs`, `definitions`, `dependentSchemas`): its keys are names
    /// (`x-mcp-header` among them is a name), its values [`Place::Other`] schemas.
    Names,
    /// Instance data: the value of `default`, `const`, `enum` or `examples`, and everything in
    /// it. Its keys are data: an `x-mcp-header` key here is neither an annotation nor refused.
    Data,
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

/// Object keys of one map beyond which an ordered set replaces the linear duplicate search.
const LINEAR_KEYS: usize = 16;

/// The state of the streaming scan, shared by every level.
struct Scan<'de> {
    found: Vec<HeaderParam>,
    /// Lower-cased annotation values seen so far.
    seen: BTreeSet<String>,
    /// The `properties` keys from the root to the current [`Place::Schema`] object.
    path: Vec<Cow<'de, str>>,
    /// The keys of the objects being read, innermost last.
    keys: Vec<Cow<'de, str>>,
    /// Whether the root object's `type` is `"object"` written without escapes.
    root_object: bool,
    /// Whether a parameter beyond [`MAX_HEADER_PARAMS`] was found (the scan stops there).
    too_many: bool,
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
        set: &mut Option<BTreeSet<Cow<'de, str>>>,
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
        if self.scan.found.len() >= MAX_HEADER_PARAMS {
            self.scan.too_many = true;
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
        let item = if self.place == Place::Data {
            Place::Data
        } else {
            Place::Other
        };
        while seq
            .next_element_seed(self.child(item, Want::Nothing))?
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
                Place::Data => {
                    map.next_value_seed(self.child(Place::Data, Want::Nothing))?;
                }
                Place::Names => {
                    map.next_value_seed(self.child(Place::Other, Want::Nothing))?;
                }
                Place::Other if key == KEYWORD => return Err(refuse()),
                Place::Other => {
                    let place = member_place(key.as_bytes());
                    map.next_value_seed(self.child(place, Want::Nothing))?;
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
                    other => {
                        let place = member_place(other.as_bytes());
                        map.next_value_seed(self.child(place, Want::Nothing))?;
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
    // 0: not probed yet, 1: sorted, 2: insertion order. The probe gives every caller the same
    // answer, so two callers racing on the first call only probe twice (plain loads and stores:
    // no `std`, and no compare-and-swap that some targets lack).
    static SORTED: AtomicU8 = AtomicU8::new(0);
    match SORTED.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let mut map = Map::new();
            map.insert("b".to_owned(), Value::Null);
            map.insert("a".to_owned(), Value::Null);
            let sorted = map.keys().next().is_some_and(|k| k == "a");
            SORTED.store(if sorted { 1 } else { 2 }, Ordering::Relaxed);
            sorted
        }
    }
}

/// The streaming form of [`header_params`] for a schema it accepts: the parameters, and whether
/// the root object's `type` is `"object"` written without escapes. `None` if the schema is
/// refused; the tree walk then gives the reason.
pub(crate) fn scan(input_schema: &str) -> Option<(Vec<HeaderParam>, bool)> {
    scan_or_refuse(input_schema).ok()
}

/// [`scan`], and the refusal it settles on its own when it refuses: a schema with more than
/// [`MAX_HEADER_PARAMS`] parameters, found without building the schema (`Err(None)`: the tree
/// walk gives the reason).
fn scan_or_refuse(input_schema: &str) -> Result<(Vec<HeaderParam>, bool), Option<HeaderRefusal>> {
    let mut scan = Scan {
        found: Vec::new(),
        seen: BTreeSet::new(),
        path: Vec::new(),
        keys: Vec::new(),
        root_object: false,
        too_many: false,
    };
    let mut de = serde_json::Deserializer::from_str(input_schema);
    let root = Node {
        scan: &mut scan,
        depth: 0,
        place: Place::Schema,
        want: Want::Nothing,
    };
    let read = root.deserialize(&mut de).and_then(|_| de.end());
    if scan.too_many {
        return Err(Some(HeaderRefusal::TooMany));
    }
    read.map_err(|_| None)?;
    let Scan {
        mut found,
        root_object,
        ..
    } = scan;
    if found.len() > 1 && map_is_sorted() {
        found.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Ok((found, root_object))
}

/// Finds and validates every x-mcp-header annotation of an inputSchema (raw JSON text).
/// `Err` if the tool must be refused (the reason names the rule and the header/property).
///
/// The schema must be JSON without duplicate object keys, nested no deeper than [`MAX_DEPTH`].
/// A schema without annotations gives an empty list. The schema is first read by the check of
/// the listing's one pass (`SchemaCheck`), which keeps numbers of any size (`1e400`) as they
/// are; what it does not settle (escaped keys or annotation values, a rule broken) is read by
/// serde_json, which decides and names the reason.
pub fn header_params(input_schema: &str) -> Result<Vec<HeaderParam>, HeaderRefusal> {
    let bytes = input_schema.as_bytes();
    let start = crate::json::ws(bytes, 0);
    if bytes.get(start) == Some(&b'{') {
        let mut check = SchemaCheck::default();
        if let Some(facts) = check.run(bytes, start) {
            if crate::json::ws(bytes, facts.end) == bytes.len() {
                return Ok(check.take_params());
            }
        }
    }
    match scan_or_refuse(input_schema) {
        Ok((found, _)) => Ok(found),
        Err(Some(refusal)) => Err(refusal),
        Err(None) => walk(input_schema),
    }
}

/// [`header_params`] by building the schema as a tree: the source of the refusal reasons where
/// the streaming scan refuses.
fn walk(input_schema: &str) -> Result<Vec<HeaderParam>, HeaderRefusal> {
    let Strict(schema) =
        serde_json::from_str(input_schema).map_err(|e| HeaderRefusal::InvalidJson {
            detail: e.to_string(),
        })?;
    let mut walk = Walk {
        found: Vec::new(),
        seen: BTreeSet::new(),
    };
    walk.node(&schema, 0, At::Schema(&[]))?;
    Ok(walk.found)
}

/// Why the `x-mcp-header` annotations of a schema make its tool refused. `Display` gives the
/// reason as text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderRefusal {
    /// The schema is not JSON as this check reads it (for example a duplicate key).
    InvalidJson {
        /// The JSON parser's message.
        detail: String,
    },
    /// The schema nests deeper than [`MAX_DEPTH`].
    TooDeep,
    /// An annotation's value is not a string.
    NotAString {
        /// The value, as compact JSON.
        value: String,
    },
    /// An annotation sits on the schema root.
    OnRoot {
        /// The annotation's value.
        name: String,
    },
    /// An annotation sits where the root does not reach only through `properties` keys.
    NotThroughProperties {
        /// The annotation's value.
        name: String,
    },
    /// An annotation is the empty string.
    Empty {
        /// The property path, keys joined with `.`.
        at: String,
    },
    /// An annotation is not an RFC 9110 token.
    NotAToken {
        /// The annotation's value.
        name: String,
        /// The property path, keys joined with `.`.
        at: String,
    },
    /// The annotated property's `type` is not `string`, `integer` or `boolean`.
    WrongType {
        /// The annotation's value.
        name: String,
        /// The property path, keys joined with `.`.
        at: String,
        /// The `type` found, as compact JSON.
        found: String,
    },
    /// The annotated property has no `type`.
    NoType {
        /// The annotation's value.
        name: String,
        /// The property path, keys joined with `.`.
        at: String,
    },
    /// Two annotations have the same value, compared case-insensitively.
    Duplicate {
        /// The second annotation's value.
        name: String,
        /// The property path of the second, keys joined with `.`.
        at: String,
    },
    /// The schema has more than [`MAX_HEADER_PARAMS`] parameters.
    TooMany,
}

impl fmt::Display for HeaderRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderRefusal::InvalidJson { detail } => {
                write!(f, "inputSchema is not valid JSON: {detail}")
            }
            HeaderRefusal::TooDeep => write!(f, "inputSchema nests deeper than {MAX_DEPTH} levels"),
            HeaderRefusal::NotAString { value } => write!(f, "{KEYWORD} value {value} is not a string"),
            HeaderRefusal::OnRoot { name } => write!(f, "{KEYWORD} {name:?} is on the schema root"),
            HeaderRefusal::NotThroughProperties { name } => write!(
                f,
                "{KEYWORD} {name:?} is not reached only through `properties`"
            ),
            HeaderRefusal::Empty { at } => write!(f, "{KEYWORD} on property {at:?} is empty"),
            HeaderRefusal::NotAToken { name, at } => write!(
                f,
                "{KEYWORD} {name:?} on property {at:?} is not an RFC 9110 token"
            ),
            HeaderRefusal::WrongType { name, at, found } => write!(
                f,
                "{KEYWORD} {name:?} on property {at:?} has type {found}, not string, integer or boolean"
            ),
            HeaderRefusal::NoType { name, at } => {
                write!(f, "{KEYWORD} {name:?} on property {at:?} has no type")
            }
            HeaderRefusal::Duplicate { name, at } => write!(
                f,
                "{KEYWORD} {name:?} on property {at:?} duplicates another (case-insensitively)"
            ),
            HeaderRefusal::TooMany => write!(
                f,
                "inputSchema has more than {MAX_HEADER_PARAMS} {KEYWORD} parameters"
            ),
        }
    }
}

impl core::error::Error for HeaderRefusal {}
