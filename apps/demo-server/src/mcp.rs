//! The MCP side: routing a request to the modern or the legacy era and building the answer.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::tools::{self, Outcome};
use crate::{Eras, Options, ResponseMode};

/// The modern protocol revision served.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The legacy revisions served, newest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A request as the HTTP layer hands it over.
pub struct HttpRequest<'a> {
    /// `GET`, `POST`, `DELETE`, …
    pub method: &'a str,
    /// Lower-cased header names and their values.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: &'a [u8],
}

impl HttpRequest<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
pub enum Reply {
    /// A status with no body.
    Empty {
        /// The status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
    },
    /// A JSON body.
    Json {
        /// The status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// A status-200 JSON body sent after a wait.
    Later {
        /// The wait.
        wait: Duration,
        /// The body.
        body: Vec<u8>,
    },
    /// An SSE stream: progress notifications (if any), then the final message.
    Stream {
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// `(progress token, steps, delay)` when progress is reported.
        progress: Option<(Value, u64, Duration)>,
        /// Wait this long before the final message when there is no progress.
        wait: Duration,
        /// The final JSON-RPC message.
        last: Vec<u8>,
    },
}

/// The shared protocol state: options, catalog, legacy sessions.
pub struct Server {
    pub(crate) options: Options,
    catalog: Vec<String>,
    /// The catalog listed to requests that declare the tasks extension: `slow_count` last.
    catalog_tasks: Vec<String>,
    tasks: crate::tasks::Tasks,
    sessions: Mutex<HashMap<String, &'static str>>,
    next_session: std::sync::atomic::AtomicU64,
    resource_metadata: String,
    /// The trace context of the latest requests that carried one, oldest first.
    traces: Mutex<std::collections::VecDeque<ReceivedTrace>>,
}

/// The most trace contexts the server keeps ([`DemoServer::trace_contexts`](crate::DemoServer::trace_contexts)).
pub const MAX_RECORDED_TRACES: usize = 256;

/// The trace context a request carried in `params._meta` (MCP 2026-07-28, SEP-414:
/// `traceparent`, `tracestate`, `baggage`), as received: not checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceivedTrace {
    /// The JSON-RPC method of the request.
    pub method: String,
    /// `_meta.traceparent`.
    pub traceparent: String,
    /// `_meta.tracestate`, if present.
    pub tracestate: Option<String>,
    /// `_meta.baggage`, if present.
    pub baggage: Option<String>,
}

impl ReceivedTrace {
    /// The trace id of a version-00 `traceparent` (`00-<trace id>-<parent id>-<flags>`), if it
    /// has that shape.
    pub fn trace_id(&self) -> Option<&str> {
        let mut parts = self.traceparent.split('-');
        let _version = parts.next()?;
        parts.next().filter(|id| id.len() == 32)
    }
}

fn rpc_error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc":"2.0","id":id,"error":e})
        .to_string()
        .into_bytes()
}

fn json_reply(status: u16, body: Vec<u8>) -> Reply {
    Reply::Json {
        status,
        headers: Vec::new(),
        body,
    }
}

/// Decodes an `Mcp-Name` value: plain, or `=?base64?…?=`.
fn decode_header_value(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_owned()),
    }
}

enum Era {
    Modern,
    Legacy,
}

impl Server {
    pub(crate) fn new(options: Options, port: u16) -> Server {
        let catalog = tools::catalog(&options);
        let mut catalog_tasks = catalog.clone();
        catalog_tasks.push(crate::tasks::tool_entry());
        Server {
            catalog,
            catalog_tasks,
            tasks: crate::tasks::Tasks::default(),
            options,
            sessions: Mutex::new(HashMap::new()),
            next_session: std::sync::atomic::AtomicU64::new(1),
            resource_metadata: format!(
                "http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
            ),
            traces: Mutex::new(std::collections::VecDeque::new()),
        }
    }

    fn modern(&self) -> bool {
        self.options.eras != Eras::LegacyOnly
    }

    fn legacy(&self) -> bool {
        self.options.eras != Eras::ModernOnly
    }

    /// The versions served, modern first.
    fn supported(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.modern() {
            v.push(MODERN_VERSION);
        }
        if self.legacy() {
            v.extend(LEGACY_VERSIONS);
        }
        v
    }

    fn server_info(&self) -> Value {
        json!({"name":"mcp-sansio-demo-server","version":env!("CARGO_PKG_VERSION")})
    }

    /// The number of live legacy sessions.
    pub(crate) fn session_count(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// The trace contexts received in requests' `_meta`, oldest first (the latest
    /// [`MAX_RECORDED_TRACES`]).
    pub(crate) fn trace_contexts(&self) -> Vec<ReceivedTrace> {
        self.traces
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keeps the trace context `msg` carries in `params._meta`, if any.
    fn record_trace(&self, msg: &Value) {
        let field = |name: &str| {
            msg.pointer(&format!("/params/_meta/{name}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let Some(traceparent) = field("traceparent") else {
            return;
        };
        let received = ReceivedTrace {
            method: msg["method"].as_str().unwrap_or("").to_owned(),
            traceparent,
            tracestate: field("tracestate"),
            baggage: field("baggage"),
        };
        if let Ok(mut t) = self.traces.lock() {
            if t.len() == MAX_RECORDED_TRACES {
                t.pop_front();
            }
            t.push_back(received);
        }
    }

    /// How many `slow_count` calls asked for a task.
    pub(crate) fn tasks_created(&self) -> u64 {
        self.tasks.created()
    }

    /// Answers one HTTP request.
    pub fn handle(&self, req: &HttpRequest<'_>) -> Reply {
        if let Some(token) = &self.options.bearer_token {
            let expected = format!("Bearer {token}");
            if req.header("authorization") != Some(expected.as_str()) {
                let error = if req.header("authorization").is_some() {
                    ", error=\"invalid_token\""
                } else {
                    ""
                };
                return Reply::Json {
                    status: 401,
                    headers: vec![(
                        "WWW-Authenticate".into(),
                        format!(
                            "Bearer resource_metadata=\"{}\"{error}",
                            self.resource_metadata
                        ),
                    )],
                    body: br#"{"error":"invalid_token","error_description":"a valid bearer token is required"}"#.to_vec(),
                };
            }
        }
        match req.method {
            "POST" => self.post(req),
            "DELETE" if self.legacy() => self.delete(req),
            _ => Reply::Empty {
                status: 405,
                headers: vec![("Allow".into(), "POST".into())],
            },
        }
    }

    fn delete(&self, req: &HttpRequest<'_>) -> Reply {
        let Some(id) = req.header("mcp-session-id") else {
            return json_reply(
                400,
                rpc_error(
                    &Value::Null,
                    -32000,
                    "Bad Request: No valid session ID provided",
                    None,
                ),
            );
        };
        let removed = self
            .sessions
            .lock()
            .map(|mut s| s.remove(id))
            .ok()
            .flatten();
        match removed {
            Some(_) => Reply::Empty {
                status: 200,
                headers: Vec::new(),
            },
            None => json_reply(
                404,
                rpc_error(&Value::Null, -32001, "Session not found", None),
            ),
        }
    }

    fn post(&self, req: &HttpRequest<'_>) -> Reply {
        let msg: Value = match serde_json::from_slice(req.body) {
            Ok(v) => v,
            Err(_) => return json_reply(400, rpc_error(&Value::Null, -32700, "Parse error", None)),
        };
        if !msg.is_object() || msg.get("jsonrpc") != Some(&json!("2.0")) {
            return json_reply(
                400,
                rpc_error(&Value::Null, -32600, "Invalid Request", None),
            );
        }
        self.record_trace(&msg);
        let meta_version = msg
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str);
        let header_version = req.header("mcp-protocol-version");
        let looks_modern =
            meta_version.is_some() || header_version.is_some_and(|v| v >= MODERN_VERSION);
        if looks_modern && self.modern() {
            return self.modern_post(req, &msg, meta_version, header_version);
        }
        if self.legacy() {
            return self.legacy_post(req, &msg);
        }
        // A modern-only server and a request without the modern envelope.
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        match msg.get("method").and_then(Value::as_str) {
            Some("initialize") | Some("ping") => {
                json_reply(404, rpc_error(&id, -32601, "Method not found", None))
            }
            _ => json_reply(
                400,
                rpc_error(
                    &id,
                    -32602,
                    "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion",
                    None,
                ),
            ),
        }
    }

    fn modern_post(
        &self,
        req: &HttpRequest<'_>,
        msg: &Value,
        meta_version: Option<&str>,
        header_version: Option<&str>,
    ) -> Reply {
        let id = msg.get("id").cloned();
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            // Clients post no responses in this revision.
            return json_reply(
                400,
                rpc_error(&Value::Null, -32600, "Invalid Request", None),
            );
        };
        let Some(id) = id else {
            // A notification.
            return Reply::Empty {
                status: 202,
                headers: Vec::new(),
            };
        };
        let bad = |code: i64, message: &str, data: Option<Value>| {
            json_reply(400, rpc_error(&id, code, message, data))
        };
        let Some(meta_version) = meta_version else {
            return bad(
                -32602,
                "Invalid params: missing _meta io.modelcontextprotocol/protocolVersion",
                None,
            );
        };
        if msg
            .pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities")
            .is_none_or(|c| !c.is_object())
        {
            return bad(
                -32602,
                "Invalid params: missing _meta io.modelcontextprotocol/clientCapabilities",
                None,
            );
        }
        match header_version {
            None => {
                return bad(
                    -32020,
                    "Header mismatch: MCP-Protocol-Version is missing",
                    None,
                )
            }
            Some(h) if h != meta_version => {
                return bad(
                    -32020,
                    "Header mismatch: MCP-Protocol-Version differs from _meta",
                    None,
                )
            }
            _ => {}
        }
        if meta_version != MODERN_VERSION {
            return bad(
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": self.supported(), "requested": meta_version})),
            );
        }
        if req.header("mcp-method") != Some(method) {
            return bad(
                -32020,
                "Header mismatch: Mcp-Method differs from the method",
                None,
            );
        }
        match method {
            "server/discover" => {
                let result = json!({
                    "resultType":"complete",
                    "supportedVersions": self.supported(),
                    "capabilities": {"tools": {}},
                    "instructions": "A demo server: echo, add, image, audio, resource, resource_link, fail, slow, big.",
                    // The versions and capabilities never change while it runs: a client may
                    // keep its era hint for an hour.
                    "ttlMs": 3_600_000,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": self.server_info()},
                });
                self.result(&id, result, Era::Modern)
            }
            "tools/list" => self.list(&id, msg, Era::Modern),
            "tools/call" => {
                let name = msg.pointer("/params/name").and_then(Value::as_str);
                let header = req.header("mcp-name").and_then(decode_header_value);
                if name.is_none() || header.as_deref() != name {
                    return bad(
                        -32020,
                        "Header mismatch: Mcp-Name differs from params.name",
                        None,
                    );
                }
                self.call(&id, msg, Era::Modern)
            }
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                if !crate::tasks::declared(msg) {
                    return bad(
                        -32021,
                        "Missing required client capability",
                        Some(
                            json!({"requiredCapabilities":{"extensions":{crate::tasks::EXTENSION_ID:{}}}}),
                        ),
                    );
                }
                let task_id = msg.pointer("/params/taskId").and_then(Value::as_str);
                let header = req.header("mcp-name").and_then(decode_header_value);
                if task_id.is_none() || header.as_deref() != task_id {
                    return bad(
                        -32020,
                        "Header mismatch: Mcp-Name differs from params.taskId",
                        None,
                    );
                }
                match self.tasks.request(method, msg) {
                    Ok(result) => self.result(&id, result, Era::Modern),
                    Err((code, message)) => self.error(&id, code, &message),
                }
            }
            _ => json_reply(404, rpc_error(&id, -32601, "Method not found", None)),
        }
    }

    fn legacy_post(&self, req: &HttpRequest<'_>, msg: &Value) -> Reply {
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id").cloned();
        if method == Some("initialize") {
            let id = id.unwrap_or(Value::Null);
            let offered = msg
                .pointer("/params/protocolVersion")
                .and_then(Value::as_str);
            let version = LEGACY_VERSIONS
                .iter()
                .copied()
                .find(|v| Some(*v) == offered)
                .unwrap_or(LEGACY_VERSIONS[0]);
            let n = self
                .next_session
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let session = format!("demo-session-{n:08x}");
            if let Ok(mut s) = self.sessions.lock() {
                s.insert(session.clone(), version);
            }
            let result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": self.server_info(),
                "instructions": "A demo server: echo, add, image, audio, resource, resource_link, fail, slow, big.",
            });
            let body = json!({"jsonrpc":"2.0","id":id,"result":result}).to_string();
            let headers = vec![("Mcp-Session-Id".to_owned(), session)];
            return self.message(body.into_bytes(), headers, None, Duration::ZERO);
        }
        let rid = id.clone().unwrap_or(Value::Null);
        let Some(session) = req.header("mcp-session-id") else {
            return json_reply(
                400,
                rpc_error(
                    &rid,
                    -32000,
                    "Bad Request: No valid session ID provided",
                    None,
                ),
            );
        };
        let version = self
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.get(session).copied());
        let Some(version) = version else {
            return json_reply(404, rpc_error(&rid, -32001, "Session not found", None));
        };
        if let Some(h) = req.header("mcp-protocol-version") {
            if h != version {
                return json_reply(
                    400,
                    rpc_error(
                        &rid,
                        -32000,
                        "Bad Request: Unsupported protocol version",
                        None,
                    ),
                );
            }
        }
        let (Some(method), Some(id)) = (method, id) else {
            // Notifications and responses.
            return Reply::Empty {
                status: 202,
                headers: Vec::new(),
            };
        };
        match method {
            "tools/list" => self.list(&id, msg, Era::Legacy),
            "tools/call" => self.call(&id, msg, Era::Legacy),
            "ping" => self.result(&id, json!({}), Era::Legacy),
            _ => self.error(&id, -32601, "Method not found"),
        }
    }

    fn list(&self, id: &Value, msg: &Value, era: Era) -> Reply {
        let catalog = match era {
            Era::Modern if crate::tasks::declared(msg) => &self.catalog_tasks,
            _ => &self.catalog,
        };
        let start = match msg.pointer("/params/cursor") {
            None | Some(Value::Null) => 0,
            Some(c) => match c
                .as_str()
                .and_then(|c| c.strip_prefix("page-"))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n > 0 && *n < catalog.len())
            {
                Some(n) => n,
                None => return self.error(id, -32602, "Invalid params: unknown cursor"),
            },
        };
        let size = if self.options.page_size == 0 {
            catalog.len()
        } else {
            self.options.page_size
        };
        let end = (start + size).min(catalog.len());
        // Written directly: the catalog entries are already serialized.
        let page = &catalog[start..end];
        let mut body = String::with_capacity(page.iter().map(|t| t.len() + 1).sum::<usize>() + 256);
        body.push_str(r#"{"jsonrpc":"2.0","id":"#);
        body.push_str(&id.to_string());
        body.push_str(r#","result":{"tools":["#);
        for (i, t) in page.iter().enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(t);
        }
        body.push(']');
        if end < catalog.len() {
            body.push_str(&format!(r#","nextCursor":"page-{end}""#));
        }
        if let Era::Modern = era {
            body.push_str(r#","ttlMs":0,"cacheScope":"public","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":"#);
            body.push_str(&self.server_info().to_string());
            body.push('}');
        }
        body.push_str("}}");
        self.message(body.into_bytes(), Vec::new(), None, Duration::ZERO)
    }

    fn call(&self, id: &Value, msg: &Value, era: Era) -> Reply {
        let Some(name) = msg.pointer("/params/name").and_then(Value::as_str) else {
            return self.error(id, -32602, "Invalid params: name is required");
        };
        let arguments = msg.pointer("/params/arguments").unwrap_or(&Value::Null);
        if !(arguments.is_object() || arguments.is_null()) {
            return self.error(id, -32602, "Invalid params: arguments must be an object");
        }
        if name == crate::tasks::TOOL {
            return self.slow_count(id, msg, arguments, era);
        }
        match tools::call(name, arguments, &self.options) {
            Outcome::Result(r) => self.result(id, r, era),
            Outcome::InvalidParams(m) => self.error(id, -32602, &m),
            Outcome::Slow { steps, delay } => {
                let token = msg.pointer("/params/_meta/progressToken").cloned();
                let last = self.result_message(id, tools::slow_result(steps), &era);
                match token {
                    Some(t) if steps > 0 => Reply::Stream {
                        headers: Vec::new(),
                        progress: Some((t, steps, delay)),
                        wait: Duration::ZERO,
                        last,
                    },
                    _ => self.message(last, Vec::new(), None, delay * steps as u32),
                }
            }
        }
    }

    /// `slow_count`: a task when the request declares the extension on the modern era, the
    /// plain result otherwise.
    fn slow_count(&self, id: &Value, msg: &Value, arguments: &Value, era: Era) -> Reply {
        let to = match crate::tasks::count_to(arguments) {
            Ok(to) => to,
            Err(m) => return self.error(id, -32602, &m),
        };
        let created = match era {
            Era::Modern if crate::tasks::declared(msg) => self.tasks.create(to),
            _ => None,
        };
        match created {
            Some(mut result) => {
                result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": self.server_info()});
                let body = json!({"jsonrpc":"2.0","id":id,"result":result})
                    .to_string()
                    .into_bytes();
                self.message(body, Vec::new(), None, Duration::ZERO)
            }
            None => self.result(id, crate::tasks::count_result(to, true), era),
        }
    }

    fn result_message(&self, id: &Value, mut result: Value, era: &Era) -> Vec<u8> {
        if let Era::Modern = era {
            result["resultType"] = json!("complete");
            let meta = result
                .as_object_mut()
                .map(|o| o.entry("_meta").or_insert_with(|| json!({})));
            if let Some(m) = meta {
                m["io.modelcontextprotocol/serverInfo"] = self.server_info();
            }
        }
        json!({"jsonrpc":"2.0","id":id,"result":result})
            .to_string()
            .into_bytes()
    }

    fn result(&self, id: &Value, result: Value, era: Era) -> Reply {
        let body = self.result_message(id, result, &era);
        self.message(body, Vec::new(), None, Duration::ZERO)
    }

    /// A JSON-RPC error answered with status 200 (a tool-level protocol error).
    fn error(&self, id: &Value, code: i64, message: &str) -> Reply {
        self.message(
            rpc_error(id, code, message, None),
            Vec::new(),
            None,
            Duration::ZERO,
        )
    }

    /// A status-200 message in the configured response mode.
    fn message(
        &self,
        body: Vec<u8>,
        headers: Vec<(String, String)>,
        progress: Option<(Value, u64, Duration)>,
        wait: Duration,
    ) -> Reply {
        match self.options.response_mode {
            ResponseMode::Sse => Reply::Stream {
                headers,
                progress,
                wait,
                last: body,
            },
            ResponseMode::Json if progress.is_some() => Reply::Stream {
                headers,
                progress,
                wait,
                last: body,
            },
            ResponseMode::Json if !wait.is_zero() => Reply::Later { wait, body },
            ResponseMode::Json => Reply::Json {
                status: 200,
                headers,
                body,
            },
        }
    }
}
