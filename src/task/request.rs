//! The requests of a task: `tasks/get`, `tasks/update` and `tasks/cancel`, their routing headers,
//! and the client capabilities that declare the extension.
use crate::prelude::*;

use alloc::borrow::Cow;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::config::{Config, Era};
use crate::jsonrpc::ObjectWriter;

use super::{TaskId, EXTENSION_ID};

/// A request about a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskMethod {
    /// `tasks/get`: the task's status, and its result, error or input requests.
    Get,
    /// `tasks/update`: answers to the task's input requests.
    Update,
    /// `tasks/cancel`: "signal its intent to cancel an in-progress task" (never
    /// `notifications/cancelled`, which "MUST NOT be used for task cancellation").
    Cancel,
}

impl TaskMethod {
    /// The JSON-RPC method, also the `Mcp-Method` header's value.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskMethod::Get => "tasks/get",
            TaskMethod::Update => "tasks/update",
            TaskMethod::Cancel => "tasks/cancel",
        }
    }
}

/// The `Mcp-Name` header's value for a request about `id`: "the client MUST set the `Mcp-Name`
/// header (defined by SEP-2243) to the value of `params.taskId`", in SEP-2243's encoding (the
/// one tool names use): as-is when it is plain visible ASCII, else `=?base64?…?=`.
pub fn mcp_name(id: &TaskId) -> String {
    crate::xmcp::encode_header_value(id.as_str())
}

/// The routing headers of a request about `id`: `Mcp-Method` and `Mcp-Name` ("The `Mcp-Method`
/// header is set to the JSON-RPC method name"). The connection adds its usual headers.
pub fn routing_headers(method: TaskMethod, id: &TaskId) -> Vec<(String, String)> {
    vec![
        ("Mcp-Method".to_owned(), method.as_str().to_owned()),
        ("Mcp-Name".to_owned(), mcp_name(id)),
    ]
}

/// The JSON-RPC body of `method` about `id` with request id `rpc_id`, in the 2026-07-28 era at
/// `version`: `params` holds `taskId`, for `tasks/update` `inputResponses` (the raw JSON object
/// [`InputBook::respond`](super::InputBook::respond) built; `{}` if `None`), and the full `_meta`
/// every modern request carries (protocol version, [`client_capabilities`], client info).
pub fn request_body(
    config: &Config,
    version: &str,
    method: TaskMethod,
    rpc_id: u64,
    id: &TaskId,
    input_responses: Option<&[u8]>,
) -> Vec<u8> {
    write_request_body(config, version, method, rpc_id, id, input_responses).0
}

/// [`request_body`], with where the value of its `params._meta.traceparent` is in it, if it
/// has one ([`Transmit::traceparent_at`](crate::Transmit::traceparent_at)).
pub(crate) fn write_request_body(
    config: &Config,
    version: &str,
    method: TaskMethod,
    rpc_id: u64,
    id: &TaskId,
    input_responses: Option<&[u8]>,
) -> (Vec<u8>, Option<usize>) {
    let mut body = Vec::with_capacity(256);
    let mut traceparent_at = None;
    let mut w = ObjectWriter::new(&mut body);
    w.string("jsonrpc", "2.0")
        .uint("id", rpc_id)
        .string("method", method.as_str());
    w.object("params", |p| {
        p.string("taskId", id.as_str());
        if method == TaskMethod::Update {
            p.raw("inputResponses", input_responses.unwrap_or(b"{}"));
        }
        traceparent_at = crate::jsonrpc::write_request_meta(config, Some(version), None, p);
    });
    w.finish();
    (body, traceparent_at)
}

/// The members of a JSON object in order, duplicates kept (a map would hide one of them).
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = a.next_key::<Cow<'de, str>>()? {
                    let v = a.next_value::<&'de RawValue>()?;
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

fn members(json: &str) -> Option<Vec<(Cow<'_, str>, &RawValue)>> {
    serde_json::from_str::<Members<'_>>(json).ok().map(|m| m.0)
}

/// Whether the raw client capabilities `caps` declare the tasks extension: an `extensions`
/// member (any of them, if repeated) that is an object with an `io.modelcontextprotocol/tasks`
/// member (escapes decoded).
pub(crate) fn declares_extension(caps: &str) -> bool {
    members(caps).is_some_and(|m| {
        m.iter()
            .filter(|(k, _)| k == "extensions")
            .filter_map(|(_, v)| members(v.get()))
            .any(|ext| ext.iter().any(|(k, _)| k == EXTENSION_ID))
    })
}

/// The client capabilities a request of `era` declares under `config`: its raw
/// [`Config::client_capabilities`], with `extensions["io.modelcontextprotocol/tasks"]: {}` added
/// when [`Config::tasks`] is on and the era is the 2026-07-28 one ("This extension is not
/// defined under the `2025-11-25` protocol version"). The other members are kept in their order;
/// an `extensions` member that is not an object is replaced, a repeated one dropped.
pub fn client_capabilities(config: &Config, era: Era) -> Cow<'_, str> {
    let raw = config.client_capabilities.as_str();
    if !config.tasks || era != Era::Modern || declares_extension(raw) {
        return Cow::Borrowed(raw);
    }
    let Some(caps) = members(raw) else {
        return Cow::Borrowed(raw);
    };
    let mut out = Vec::with_capacity(raw.len() + 48);
    let mut w = ObjectWriter::new(&mut out);
    let mut extended = false;
    for (k, v) in &caps {
        if k != "extensions" {
            w.raw(k, v.get().as_bytes());
            continue;
        }
        // The first `extensions` member gains the extension (one that is not an object is
        // replaced); a repeated one is dropped, so that no reader sees another.
        if !extended {
            extended = true;
            let ext = members(v.get()).unwrap_or_default();
            w.object("extensions", |e| {
                for (ek, ev) in &ext {
                    e.raw(ek, ev.get().as_bytes());
                }
                e.raw(EXTENSION_ID, b"{}");
            });
        }
    }
    if !extended {
        w.object("extensions", |e| {
            e.raw(EXTENSION_ID, b"{}");
        });
    }
    w.finish();
    // The writer only joins JSON the capabilities already held.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| raw.to_owned()))
}
