// The reference reading of a `tools/list` answer, for the property tests in `tests/list.rs`.
//
// Written from the rules, not from the crate: JSON-RPC 2.0 for the envelope; the MCP schema
// (`/work/shared/reference/spec.md` §3 and §6) for a page, a tool and `x-mcp-header`; and the
// crate's documented choices (`RefusalReason`, `HeaderRefusal`, `xmcp`'s module docs,
// `docs/guarantees.md` "Decided behaviours"):
//
// - a page is an object with a `tools` array, `nextCursor` a string or null, `resultType`
//   `complete` or null (escapes decoded); a member it reads may appear once;
// - an entry is refused, not fatal: not an object, a key that is no text or `name`,
//   `description` or `inputSchema` given twice (not a tool object); no name (absent or null);
//   a name that is no string; a name outside 1–128 of `[A-Za-z0-9_.-]`; a name accepted
//   before; a description neither a string nor null; no schema (absent or null); a schema that
//   is not an object; a schema whose root `type` is not `"object"` written without escapes,
//   once; then the `x-mcp-header` rules;
// - a name that is a string but no Unicode text (a lone surrogate) makes the entry no tool
//   object (it cannot be read); a description that is no text is not a string;
// - a schema is read whole where annotations are checked: duplicate keys, strings that are no
//   text, nesting past serde_json's limit make it invalid JSON; values nested deeper than 64
//   are too deep; numbers of any size are kept, except where the schema is read by serde_json
//   (an escaped key or annotation value, or a `type` written with escapes on an object reached
//   through `properties`, which the in-place check leaves to serde_json), where a number beyond
//   `f64` is the reason;
// - where several rules are broken, the crate may name any of them: the reference gives the
//   set of reasons it may name;
// - the rest of a tool's definition (the schema's `Tool`: `title?: string`, `annotations?:
//   ToolAnnotations`, `outputSchema?` a JSON Schema, `icons?: Icon[]`, `_meta?: object`, and the
//   2025-11-25 `execution?: ToolExecution`) never
//   refuses a usable tool: each member (read once, like the others; `null` is absent) of its
//   schema type is kept verbatim (a title decoded), one of another type is left out with a
//   note; an icon is kept when it is an object whose one `src` is a string of text with the
//   scheme `https` or `data` (any case), else dropped with a note naming why; a tool keeps its
//   first 16 notes.
//
// It parses with its own JSON reader (`json_tree` of the test-support crate) and shares no code with the
// crate: only the public result types.
#![allow(dead_code)]

pub use mcp_sansio_test_support::json_tree;

use json_tree::{Json, Member, Node, Str};
use mcp_sansio::{HeaderParam, ParamKind};

/// One accepted tool: name, description, schema (raw), header parameters sorted by path, and the
/// rest of its definition.
pub type Tool = (String, Option<String>, String, Vec<HeaderParam>, Definition);

/// The rest of a tool's definition: members kept (raw JSON, the title decoded) and the notes of
/// what was left out (in the crate's documented wording).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Definition {
    pub title: Option<String>,
    pub annotations: Option<String>,
    pub output_schema: Option<String>,
    pub icons: Vec<String>,
    pub meta: Option<String>,
    pub execution: Option<String>,
    pub notes: Vec<String>,
}

/// The notes a tool keeps.
const NOTES_KEPT: usize = 16;

/// Why an icon is dropped, or `None` if it is kept.
fn icon_drop(icon: &Node) -> Option<String> {
    let Json::Object(ms) = &icon.value else {
        return Some("not an icon object".into());
    };
    if ms.iter().any(|m| m.key.0.is_none()) {
        return Some("not an icon object".into());
    }
    let srcs: Vec<&Node> = ms
        .iter()
        .filter(|m| m.key.0.as_deref() == Some("src"))
        .map(|m| &m.value)
        .collect();
    let src = match &srcs[..] {
        [] => return Some("src is missing".into()),
        [one] => one,
        _ => return Some("not an icon object".into()),
    };
    let Json::String(Str(Some(src))) = &src.value else {
        return Some("src is not a string".into());
    };
    let Some((scheme, _)) = src.split_once(':') else {
        return Some("src has no scheme (only https: and data: are kept)".into());
    };
    let lower = scheme.to_ascii_lowercase();
    if lower == "https" || lower == "data" {
        return None;
    }
    let cut: String = {
        let mut end = scheme.len().min(32);
        while !scheme.is_char_boundary(end) {
            end -= 1;
        }
        scheme[..end].to_owned()
    };
    Some(format!(
        "src scheme {cut:?} is not allowed (only https: and data: are kept)"
    ))
}

/// The rest of a definition, from an entry's members.
fn definition(input: &str, m: &[(&str, &Node)]) -> Definition {
    let mut d = Definition::default();
    let ignored = |f: &str| format!("{f} ignored: wrong JSON type");
    let mut notes = Vec::new();
    if let Some(t) = get(m, "title") {
        match &t.value {
            Json::String(Str(Some(t))) => d.title = Some(t.clone()),
            _ => notes.push(ignored("title")),
        }
    }
    if let Some(a) = get(m, "annotations") {
        match &a.value {
            Json::Object(_) => d.annotations = Some(a.text(input).to_owned()),
            _ => notes.push(ignored("annotations")),
        }
    }
    if let Some(o) = get(m, "outputSchema") {
        match &o.value {
            Json::Object(_) | Json::Bool(_) => d.output_schema = Some(o.text(input).to_owned()),
            _ => notes.push(ignored("outputSchema")),
        }
    }
    if let Some(i) = get(m, "icons") {
        match &i.value {
            Json::Array(icons) => {
                for (index, icon) in icons.iter().enumerate() {
                    match icon_drop(icon) {
                        None => d.icons.push(icon.text(input).to_owned()),
                        Some(why) => notes.push(format!("icon {index} dropped: {why}")),
                    }
                }
            }
            _ => notes.push(ignored("icons")),
        }
    }
    if let Some(x) = get(m, "_meta") {
        match &x.value {
            Json::Object(_) => d.meta = Some(x.text(input).to_owned()),
            _ => notes.push(ignored("_meta")),
        }
    }
    if let Some(x) = get(m, "execution") {
        match &x.value {
            Json::Object(_) => d.execution = Some(x.text(input).to_owned()),
            _ => notes.push(ignored("execution")),
        }
    }
    notes.truncate(NOTES_KEPT);
    d.notes = notes;
    d
}

/// One refused entry: its index, its name if it had a string name, and every reason the crate
/// may give (normalised by [`reason`]).
pub type Refused = (usize, Option<String>, Vec<String>);

#[derive(Debug, Default)]
pub struct Catalog {
    pub tools: Vec<Tool>,
    pub refused: Vec<Refused>,
    pub pages: u32,
    /// `ttlMs` and whether the scope is public, the most restrictive over the pages read.
    pub cache: Option<(u64, bool)>,
    names: Vec<String>,
}

/// The reason of an unusable page that is not named by the crate's own reasons.
pub const SHAPE: &str = "the page does not have the schema's shape";

/// A crate's page reason, normalised: named reasons as they are, a parser's message as
/// [`SHAPE`].
pub fn page_reason(crate_reason: &str) -> String {
    if crate_reason.starts_with("unexpected resultType ") {
        crate_reason.to_owned()
    } else {
        SHAPE.to_owned()
    }
}

/// A crate's refusal reason, normalised: the parts that quote a parser's message or print a
/// JSON value are left out (the reference has neither).
pub fn reason(crate_reason: &str) -> String {
    const NOT_JSON: &str = "invalid x-mcp-header: inputSchema is not valid JSON";
    if crate_reason.starts_with("not a tool object") {
        return "not a tool object".into();
    }
    if crate_reason.starts_with(NOT_JSON) {
        return NOT_JSON.into();
    }
    // The value is printed in the reason, which a long value cuts before its end.
    if crate_reason.starts_with("invalid x-mcp-header: x-mcp-header value ") {
        return "invalid x-mcp-header: x-mcp-header value is not a string".into();
    }
    if let (Some(at), true) = (
        crate_reason.find(" has type "),
        crate_reason.ends_with(", not string, integer or boolean"),
    ) {
        return format!("{} has another type", &crate_reason[..at]);
    }
    crate_reason.to_owned()
}

fn members<'n>(ms: &'n [Member], known: &[&str]) -> Result<Vec<(&'n str, &'n Node)>, ()> {
    let mut out: Vec<(&str, &Node)> = Vec::new();
    for m in ms {
        let key = m.key.0.as_deref().ok_or(())?;
        if known.contains(&key) {
            if out.iter().any(|(k, _)| *k == key) {
                return Err(());
            }
            out.push((key, &m.value));
        }
    }
    Ok(out)
}

fn get<'n>(m: &[(&str, &'n Node)], key: &str) -> Option<&'n Node> {
    m.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .filter(|v| !v.is_null())
}

/// SEP-986 tool names: 1 to 128 of `[A-Za-z0-9_.-]`.
fn strict_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
}

/// RFC 9110 `token`.
fn token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Whether a number is beyond `f64`.
fn huge(n: &Node) -> bool {
    match &n.value {
        Json::Number(t) => t.parse::<f64>().map_or(true, f64::is_infinite),
        Json::Array(items) => items.iter().any(huge),
        Json::Object(ms) => ms.iter().any(|m| huge(&m.value)),
        _ => false,
    }
}

/// Whether some object has a key twice (escapes decoded).
fn duplicate_keys(n: &Node) -> bool {
    match &n.value {
        Json::Array(items) => items.iter().any(duplicate_keys),
        Json::Object(ms) => {
            let keys: Vec<&Str> = ms.iter().map(|m| &m.key).collect();
            keys.iter().enumerate().any(|(i, k)| keys[..i].contains(k))
                || ms.iter().any(|m| duplicate_keys(&m.value))
        }
        _ => false,
    }
}

fn escaped_key(n: &Node) -> bool {
    match &n.value {
        Json::Array(items) => items.iter().any(escaped_key),
        Json::Object(ms) => ms.iter().any(|m| m.key_escaped || escaped_key(&m.value)),
        _ => false,
    }
}

/// The `x-mcp-header` rules over a schema: its parameters, or every reason it may be refused
/// for.
struct Annotations<'s> {
    input: &'s str,
    found: Vec<(HeaderParam, String)>,
    broken: Vec<String>,
    escaped_value: bool,
    /// Below the root, every `type` whose string value is written with escapes: whether its
    /// object is reached from the root only through `properties`.
    escaped_types: Vec<bool>,
}

/// Where a schema value sits, by the JSON Schema keywords around it.
#[derive(Clone)]
enum Spot {
    /// Reached from the root only through `properties` keys (these).
    Path(Vec<String>),
    /// A schema anywhere else.
    Elsewhere,
    /// A map from names to schemas (`properties` off the path, `patternProperties`, `$defs`,
    /// `definitions`, `dependentSchemas`): its keys are names.
    Names,
    /// Instance data (`default`, `const`, `enum`, `examples` and what is in them): no schema,
    /// so no annotation and no rule.
    Data,
}

impl Annotations<'_> {
    fn node(&mut self, node: &Node, depth: usize, spot: Spot) {
        if depth > 64 {
            self.broken
                .push("invalid x-mcp-header: inputSchema nests deeper than 64 levels".into());
            return;
        }
        match &node.value {
            Json::Array(items) => {
                let inner = match spot {
                    Spot::Data => Spot::Data,
                    _ => Spot::Elsewhere,
                };
                items
                    .iter()
                    .for_each(|i| self.node(i, depth + 1, inner.clone()))
            }
            Json::Object(ms) => {
                let path = match &spot {
                    Spot::Path(p) => Some(p.clone()),
                    _ => None,
                };
                for m in ms {
                    let key = m.key.0.clone().unwrap_or_default();
                    // What the crate's in-place check notices whatever the key means here.
                    if key == "type"
                        && depth > 0
                        && matches!(m.value.value, Json::String(_))
                        && m.value.text(self.input).contains('\\')
                    {
                        self.escaped_types.push(path.is_some());
                    }
                    let child = match &spot {
                        Spot::Data => {
                            self.node(&m.value, depth + 1, Spot::Data);
                            continue;
                        }
                        Spot::Names => {
                            self.node(&m.value, depth + 1, Spot::Elsewhere);
                            continue;
                        }
                        Spot::Path(_) | Spot::Elsewhere => match key.as_str() {
                            "default" | "const" | "enum" | "examples" => Spot::Data,
                            "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                                Spot::Names
                            }
                            "properties" if path.is_none() => Spot::Names,
                            _ => Spot::Elsewhere,
                        },
                    };
                    if key == "x-mcp-header" {
                        self.annotation(ms, &m.value, path.as_deref());
                    }
                    match (&path, &m.value.value) {
                        (Some(p), Json::Object(props)) if key == "properties" => {
                            if depth + 1 > 64 {
                                self.node(&m.value, depth + 1, Spot::Elsewhere);
                                continue;
                            }
                            for prop in props {
                                let mut sub = p.clone();
                                sub.push(prop.key.0.clone().unwrap_or_default());
                                self.node(&prop.value, depth + 2, Spot::Path(sub));
                            }
                        }
                        _ => self.node(&m.value, depth + 1, child),
                    }
                }
            }
            _ => {}
        }
    }

    fn annotation(&mut self, object: &[Member], value: &Node, path: Option<&[String]>) {
        let why = |s: String| format!("invalid x-mcp-header: {s}");
        let Json::String(Str(Some(name))) = &value.value else {
            self.broken
                .push(why("x-mcp-header value is not a string".into()));
            return;
        };
        if value.text(self.input).contains('\\') {
            self.escaped_value = true;
        }
        let q = quoted(name);
        let at = match path {
            None => {
                return self.broken.push(why(format!(
                    "x-mcp-header {q} is not reached only through `properties`"
                )))
            }
            Some([]) => {
                return self
                    .broken
                    .push(why(format!("x-mcp-header {q} is on the schema root")))
            }
            Some(p) => p.join("."),
        };
        let qa = quoted(&at);
        if name.is_empty() {
            return self
                .broken
                .push(why(format!("x-mcp-header on property {qa} is empty")));
        }
        if !token(name) {
            return self.broken.push(why(format!(
                "x-mcp-header {q} on property {qa} is not an RFC 9110 token"
            )));
        }
        let ty = object
            .iter()
            .rfind(|m| m.key.0.as_deref() == Some("type"))
            .map(|m| &m.value.value);
        let kind = match ty {
            Some(Json::String(Str(Some(t)))) if t == "string" => ParamKind::String,
            Some(Json::String(Str(Some(t)))) if t == "integer" => ParamKind::Integer,
            Some(Json::String(Str(Some(t)))) if t == "boolean" => ParamKind::Boolean,
            Some(_) => {
                return self.broken.push(why(format!(
                    "x-mcp-header {q} on property {qa} has another type"
                )))
            }
            None => {
                return self.broken.push(why(format!(
                    "x-mcp-header {q} on property {qa} has no type"
                )))
            }
        };
        let param = HeaderParam {
            path: path.unwrap_or_default().to_vec(),
            name: name.clone(),
            kind,
        };
        self.found.push((param, at));
    }
}

/// The header parameters of a schema (an object), or every reason it may be refused for.
pub fn header_params(input: &str, schema: &Node) -> Result<Vec<HeaderParam>, Vec<String>> {
    let mut a = Annotations {
        input,
        found: Vec::new(),
        broken: Vec::new(),
        escaped_value: false,
        escaped_types: Vec::new(),
    };
    a.node(schema, 0, Spot::Path(Vec::new()));
    // Case-insensitively equal names: either may be the one named.
    let found = std::mem::take(&mut a.found);
    for (p, at) in &found {
        let lower = p.name.to_ascii_lowercase();
        if found
            .iter()
            .filter(|(o, _)| o.name.to_ascii_lowercase() == lower)
            .count()
            > 1
        {
            a.broken.push(format!(
                "invalid x-mcp-header: x-mcp-header {} on property {} duplicates another (case-insensitively)",
                quoted(&p.name),
                quoted(at)
            ));
        }
    }
    if found.len() > 64 {
        a.broken.push(
            "invalid x-mcp-header: inputSchema has more than 64 x-mcp-header parameters".into(),
        );
    }
    let not_json = || "invalid x-mcp-header: inputSchema is not valid JSON".to_owned();
    // What makes the schema no JSON to serde_json, which reads it where the rules are broken
    // or the schema has escapes.
    if duplicate_keys(schema) || schema.has_lone_surrogate() || schema.depth() > 127 {
        a.broken.push(not_json());
    }
    // The crate's in-place check also leaves to serde_json a `type` below the root written with
    // escapes (its module docs) on an object reached through `properties`, where an
    // `x-mcp-header` parameter's kind is judged, annotated or not.
    let escaped_type = a.escaped_types.iter().any(|&on_path| on_path);
    let read_by_serde =
        !a.broken.is_empty() || escaped_key(schema) || a.escaped_value || escaped_type;
    if huge(schema) && read_by_serde {
        a.broken.push(not_json());
    }
    if !a.broken.is_empty() {
        return Err(a.broken);
    }
    let mut params: Vec<HeaderParam> = found.into_iter().map(|(p, _)| p).collect();
    params.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(params)
}

/// The header parameters of a schema given as text (the schema alone).
pub fn header_params_of(schema: &str) -> Result<Vec<HeaderParam>, Vec<String>> {
    match json_tree::parse(schema) {
        Ok(node) => header_params(schema, &node),
        Err(_) => Err(vec![
            "invalid x-mcp-header: inputSchema is not valid JSON".into()
        ]),
    }
}

impl Catalog {
    fn refuse(&mut self, index: usize, name: Option<&str>, reasons: Vec<String>) {
        self.refused.push((index, name.map(str::to_owned), reasons));
    }

    /// One entry of a page.
    fn entry(&mut self, index: usize, input: &str, entry: &Node) {
        let one = |s: &str| vec![s.to_owned()];
        let Json::Object(ms) = &entry.value else {
            return self.refuse(index, None, one("not a tool object"));
        };
        let known = [
            "name",
            "description",
            "inputSchema",
            "title",
            "annotations",
            "outputSchema",
            "icons",
            "_meta",
            "execution",
        ];
        let Ok(m) = members(ms, &known) else {
            return self.refuse(index, None, one("not a tool object"));
        };
        let name = match get(&m, "name").map(|n| &n.value) {
            None => return self.refuse(index, None, one("name is missing")),
            Some(Json::String(Str(Some(n)))) => n.clone(),
            Some(Json::String(Str(None))) => {
                return self.refuse(index, None, one("not a tool object"))
            }
            Some(_) => return self.refuse(index, None, one("name is not a string")),
        };
        let n = Some(name.as_str());
        if !strict_name(&name) {
            let why = "name is empty, longer than 128 or outside [A-Za-z0-9_.-]";
            return self.refuse(index, n, one(why));
        }
        if self.names.contains(&name) {
            return self.refuse(index, n, one("duplicate name (the first is kept)"));
        }
        let description = match get(&m, "description").map(|d| &d.value) {
            None => None,
            Some(Json::String(Str(Some(d)))) => Some(d.clone()),
            Some(_) => return self.refuse(index, n, one("description is not a string")),
        };
        let Some(schema) = get(&m, "inputSchema") else {
            return self.refuse(index, n, one("inputSchema is missing"));
        };
        let Json::Object(sms) = &schema.value else {
            return self.refuse(index, n, one("inputSchema is not a JSON object"));
        };
        let types: Vec<&Member> = sms
            .iter()
            .filter(|m| m.key.0.as_deref() == Some("type"))
            .collect();
        let type_object = matches!(&types[..], [t] if t.value.text(input) == "\"object\"")
            && sms.iter().all(|m| m.key.0.is_some());
        if !type_object {
            return self.refuse(index, n, one("inputSchema.type is not \"object\""));
        }
        match header_params(input, schema) {
            Ok(params) => {
                self.names.push(name.clone());
                let more = definition(input, &m);
                self.tools.push((
                    name,
                    description,
                    schema.text(input).to_owned(),
                    params,
                    more,
                ));
            }
            Err(reasons) => self.refuse(index, n, reasons),
        }
    }
}

/// What reading one message gave.
pub enum Read {
    /// The page, read into the catalog: its cursor.
    Page(Option<String>),
    Malformed,
    WrongId,
    /// The page is unusable (normalised reason).
    Invalid(String),
}

/// Reads one message answering the listing request `expected` into `catalog`; `entries`
/// counts entries across pages.
pub fn list_page(body: &str, expected: u64, catalog: &mut Catalog, entries: &mut usize) -> Read {
    if body.trim_start().starts_with('[') {
        return Read::Malformed;
    }
    let Ok(root) = json_tree::parse(body) else {
        return Read::Malformed;
    };
    let Json::Object(ms) = &root.value else {
        return Read::Malformed;
    };
    let known = ["jsonrpc", "id", "method", "params", "result", "error"];
    let Ok(m) = members(ms, &known) else {
        return Read::Malformed;
    };
    match m
        .iter()
        .find(|(k, _)| *k == "jsonrpc")
        .map(|(_, v)| &v.value)
    {
        Some(Json::String(Str(Some(v)))) if v == "2.0" => {}
        _ => return Read::Malformed,
    }
    let (Some(id), Some(result), None, None) = (
        get(&m, "id"),
        get(&m, "result"),
        get(&m, "method"),
        get(&m, "error"),
    ) else {
        return Read::Malformed;
    };
    if !matches!(&id.value, Json::Number(n) if n.parse::<u64>() == Ok(expected)) {
        return Read::WrongId;
    }
    let invalid = || Read::Invalid(SHAPE.into());
    let Json::Object(pms) = &result.value else {
        return invalid();
    };
    let Ok(pm) = members(pms, &["tools", "nextCursor", "resultType"]) else {
        return invalid();
    };
    let Some(Json::Array(tools)) = pm
        .iter()
        .find(|(k, _)| *k == "tools")
        .map(|(_, v)| &v.value)
    else {
        return invalid();
    };
    let cursor = match get(&pm, "nextCursor").map(|c| &c.value) {
        None => None,
        Some(Json::String(Str(Some(c)))) => Some(c.clone()),
        Some(_) => return invalid(),
    };
    match get(&pm, "resultType").map(|t| &t.value) {
        None => {}
        Some(Json::String(Str(Some(t)))) if t == "complete" => {}
        Some(Json::String(Str(Some(t)))) => {
            return Read::Invalid(format!(
                "unexpected resultType {:?}",
                t.chars().take(64).collect::<String>()
            ))
        }
        Some(_) => return invalid(),
    }
    // Caching (spec.md §3, SEP-2549): `ttlMs` an integer >= 0 in milliseconds, absent or
    // negative meaning 0; `cacheScope` "public" or "private". The crate's documented choices:
    // anything but a plain non-negative integer is 0, anything but "public" is private, and a
    // member given twice is void. Several pages: the least lifetime; private if any page is.
    let named = |key: &str| -> Vec<&Node> {
        pms.iter()
            .filter(|m| m.key.0.as_deref() == Some(key))
            .map(|m| &m.value)
            .collect()
    };
    let ttl = match named("ttlMs").as_slice() {
        [one] => match &one.value {
            Json::Number(n) if n.bytes().all(|b| b.is_ascii_digit()) => n.parse().unwrap_or(0),
            _ => 0,
        },
        _ => 0,
    };
    let public = matches!(
        named("cacheScope").as_slice(),
        [one] if matches!(&one.value, Json::String(Str(Some(s))) if s == "public")
    );
    catalog.cache = Some(match catalog.cache {
        None => (ttl, public),
        Some((t, p)) => (t.min(ttl), p && public),
    });
    catalog.pages += 1;
    for entry in tools {
        catalog.entry(*entries, body, entry);
        *entries += 1;
    }
    Read::Page(cursor)
}
