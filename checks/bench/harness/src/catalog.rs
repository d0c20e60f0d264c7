//! A synthetic but realistic tool catalog: pages of tools whose input schemas look like the ones
//! real servers publish (nested objects, enums, arrays of objects, formats, defaults, long
//! descriptions with escapes), and the results of the `small` and `big` tools.

use serde_json::{json, Value};

/// Pages in the catalog.
pub const PAGES: usize = 100;
/// Target size of one page's `result` object, in bytes.
pub const PAGE_BYTES: usize = 80 * 1024;
/// Size of the `big` tool's text, in bytes.
pub const BIG_TEXT_BYTES: usize = 4 * 1024 * 1024;

const VERBS: [&str; 8] = [
    "create", "update", "delete", "search", "export", "sync", "review", "merge",
];
const NOUNS: [&str; 8] = [
    "issue", "invoice", "record", "message", "ticket", "document", "event", "account",
];

/// One tool in this many carries `x-mcp-header` annotations (SEP-2243).
///
/// The annotation marks a parameter that intermediaries route on (a tenant, workspace or region),
/// so a server that uses it marks the tools acting on a routed resource and leaves the rest
/// (search, export, utilities) plain; a server that does not use it marks none. A quarter is a
/// deliberate share for a gateway-fronted server of the 2026-07-28 era, above what servers publish
/// today, so that the annotated path of the page pass weighs in the figures.
pub const ANNOTATED_EVERY: usize = 4;

/// Whether tool `i` of a page carries `x-mcp-header` annotations: `workspace` always
/// (`Mcp-Param-Workspace`), and every other one also the nested `options.mode` (`Mcp-Param-Mode`).
pub fn annotated(i: usize) -> bool {
    i.is_multiple_of(ANNOTATED_EVERY)
}

/// The input schema of tool `i` (its shape varies with `i`).
fn schema(i: usize) -> Value {
    let noun = NOUNS[i % NOUNS.len()];
    let mut props = serde_json::Map::new();
    props.insert(
        "id".into(),
        json!({"type": "string", "description": format!("The {noun}'s identifier, e.g. \"{noun}-{i}\"."), "pattern": "^[a-z]+-[0-9]+$"}),
    );
    let mut workspace = json!({"type": "string", "format": "uuid", "description": "Workspace that owns the resource.\nDefaults to the caller's primary workspace."});
    if annotated(i) {
        // A routing key a gateway reads from the headers (`Mcp-Param-Workspace`).
        workspace["x-mcp-header"] = json!("Workspace");
    }
    props.insert("workspace".into(), workspace);
    props.insert(
        "limit".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 500, "default": 50, "description": "Maximum number of items to return per page."}),
    );
    props.insert(
        "filters".into(),
        json!({
            "type": "array",
            "description": "Conditions combined with AND.",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "enum": ["status", "owner", "created_at", "updated_at", "priority", "labels"]},
                    "op": {"type": "string", "enum": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "contains"]},
                    "value": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"type": "string"}}]}
                },
                "required": ["field", "op", "value"],
                "additionalProperties": false
            }
        }),
    );
    let mut mode = json!({"type": "string", "enum": ["fast", "safe", "auto"], "default": "auto"});
    if annotated(i) && i.is_multiple_of(2 * ANNOTATED_EVERY) {
        // A second header, nested: reachable through `properties` only, as the rule asks.
        mode["x-mcp-header"] = json!("Mode");
    }
    props.insert(
        "options".into(),
        json!({
            "type": "object",
            "properties": {
                "dry_run": {"type": "boolean", "default": false, "description": "Validate only; change nothing."},
                "notify": {"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 20},
                "mode": mode,
                "timeout_ms": {"type": "integer", "minimum": 100, "maximum": 600000}
            }
        }),
    );
    if i.is_multiple_of(3) {
        props.insert(
            "payload".into(),
            json!({
                "type": "object",
                "description": format!("Fields of the {noun} to write. Unknown fields are rejected."),
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 256},
                    "body": {"type": "string", "description": "Markdown; \u{2264} 64 KiB."},
                    "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
                    "due": {"type": "string", "format": "date-time"},
                    "amount": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01}
                },
                "required": ["title"]
            }),
        );
    }
    json!({
        "type": "object",
        "properties": props,
        "required": ["id"],
        "additionalProperties": false,
        "$schema": "https://json-schema.org/draft/2020-12/schema"
    })
}

/// Tool `i` as listed.
fn tool(page: usize, i: usize) -> Value {
    let verb = VERBS[i % VERBS.len()];
    let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
    json!({
        "name": format!("{verb}_{noun}_{page}_{i}"),
        "title": format!("{verb} {noun} ({page}/{i})"),
        "description": format!(
            "Use this tool to {verb} a {noun} in the connected workspace. It validates the input, \
             applies the change atomically and returns the resulting {noun} as JSON. Rate limited \
             to 10 calls per second; errors are returned as results with isError set."
        ),
        "inputSchema": schema(i),
        "annotations": {"readOnlyHint": verb == "search" || verb == "export", "idempotentHint": i.is_multiple_of(2), "openWorldHint": false}
    })
}

/// The `result` object of page `page` (0-based), serialized. `modern` adds `resultType`, `ttlMs`
/// and `cacheScope`.
/// Every page but the last names the next one's cursor, `p<n>`.
pub fn page_result(page: usize, modern: bool) -> String {
    page_result_cached(page, modern, 0)
}

/// [`page_result`] whose modern pages declare `ttlMs: ttl_ms` (0 in the usual runs; the cached
/// list-all row gives a lifetime, with `cacheScope: private`).
pub fn page_result_cached(page: usize, modern: bool, ttl_ms: u64) -> String {
    page_result_of(page, PAGES, modern, ttl_ms)
}

/// [`page_result_cached`] of a catalog of `pages` pages: its last page, `pages - 1`, names no
/// next cursor (the scaling rows list catalogs of 1, 10 and 100 pages).
pub fn page_result_of(page: usize, pages: usize, modern: bool, ttl_ms: u64) -> String {
    let mut tools = Vec::new();
    let mut len = 0;
    let mut i = 0;
    while len < PAGE_BYTES - 1200 {
        let t = tool(page, i);
        len += serde_json::to_string(&t).expect("serialize").len() + 1;
        tools.push(t);
        i += 1;
    }
    let mut result = json!({"tools": tools});
    if page + 1 < pages {
        result["nextCursor"] = json!(format!("p{}", page + 1));
    }
    if modern {
        // Cacheable results of 2026-07-28 carry their freshness.
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(ttl_ms);
        result["cacheScope"] = json!("private");
    }
    serde_json::to_string(&result).expect("serialize")
}

/// Tools in the tiny catalog ([`tiny_page_result`]).
pub const TINY_TOOLS: usize = 3;

/// The `result` of the one page of the tiny catalog (`bench-server --tiny-catalog`, and the
/// listing of `bench-tls-server`): the [`TINY_TOOLS`] tools the servers answer, `small`, `big`
/// and `slow`, each with a one-parameter schema, and no next cursor; the scaling rows' work items
/// list it before they call, so that an item lists as well as calls without 8 MB of catalog per
/// item. `modern` adds `resultType`, `ttlMs` (0) and `cacheScope`, as [`page_result_of`] does.
pub fn tiny_page_result(modern: bool) -> String {
    let tools: Vec<Value> = [
        ("small", "Echoes `text`."),
        ("big", "Returns about 4 MiB of log text."),
        ("slow", "Answers after 3 s."),
    ]
    .iter()
    .map(|(name, description)| {
        json!({
            "name": name,
            "description": description,
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Any text."}},
                "additionalProperties": false
            }
        })
    })
    .collect();
    let mut result = json!({"tools": tools});
    if modern {
        result["resultType"] = json!("complete");
        result["ttlMs"] = json!(0);
        result["cacheScope"] = json!("private");
    }
    serde_json::to_string(&result).expect("serialize")
}

/// Tools on page `page`.
pub fn tools_on_page(page: usize) -> usize {
    let v: Value = serde_json::from_str(&page_result(page, false)).expect("parse");
    v["tools"].as_array().map_or(0, Vec::len)
}

/// The `result` of a `tools/call` returning `text`, serialized.
pub fn call_result(text: &str, modern: bool) -> String {
    let mut r = json!({"content": [{"type": "text", "text": text}], "isError": false});
    if modern {
        r["resultType"] = json!("complete");
    }
    serde_json::to_string(&r).expect("serialize")
}

/// The `big` tool's text: log-like lines, `BIG_TEXT_BYTES` long, with quotes and tabs to escape.
pub fn big_text() -> String {
    let mut s = String::with_capacity(BIG_TEXT_BYTES + 128);
    let mut n = 0u64;
    while s.len() < BIG_TEXT_BYTES {
        use std::fmt::Write;
        let _ = writeln!(
            s,
            "2026-12-02T16:{:02}:{:02}Z\tINFO\tworker-{} processed \"job-{n}\" in {} ms",
            (n / 60) % 60,
            n % 60,
            n % 16,
            n % 997
        );
        n += 1;
    }
    s.truncate(BIG_TEXT_BYTES);
    s
}
