//! Tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension): the building blocks a
//! connection uses to follow a tool call that outlives the request that started it.
//!
//! A server that negotiated the extension "MAY return `CreateTaskResult` in lieu of
//! `CallToolResult`"; the client then polls `tasks/get` until a terminal status, answers the
//! task's input requests with `tasks/update`, and may cancel it with `tasks/cancel`. Everything
//! here is pure and bounded, and nothing panics:
//!
//! - the [`Task`] a server reports, read under bounds ([`parse_create_result`],
//!   [`parse_get_result`]): the id's length ([`Budget::TaskIdBytes`](crate::Budget)) and
//!   characters, `statusMessage` cut and made inert, `ttlMs` (`null`: unlimited) and
//!   `pollIntervalMs`, the five known statuses (another is [`TaskError::UnknownStatus`]);
//! - [`classify_result`]: whether an answer is a `CreateTaskResult`, and whether it may be one
//!   for the request it answers ([`TaskError::UnsupportedRequest`], [`TaskError::NotDeclared`]);
//! - [`StatusGuard`]: a terminal status never changes, and every poll is about the same task;
//! - [`poll_interval`]: `pollIntervalMs` clamped between a floor and a ceiling of ours;
//! - [`InputBook`]: the task's `inputRequests` keys (outstanding keys only, never a key twice,
//!   deduplicated across polls, bounded rounds);
//! - [`request_body`] and [`mcp_name`]: the `tasks/get`, `tasks/update` and `tasks/cancel`
//!   requests, with the full `_meta` and the `Mcp-Name` routing header;
//! - [`rpc_error`]: `-32602` to a task request is [`TaskError::UnknownTask`], a terminal error;
//! - [`TaskHandle`]: what an embedder persists to resume polling from another process.
//!
//! The keys of a task's input requests are a space of their own: "Key uniqueness for task
//! `inputRequests` is scoped to the lifetime of the task and does not extend to keys from the
//! preceding MRTR phase." A fresh [`InputBook`] starts with each task.
use crate::prelude::*;

use alloc::borrow::Cow;
use core::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::budget::{Budget, Budgets};
use crate::error::{truncated, RpcError};

mod error;
mod handle;
mod input;
mod request;

pub use error::{TaskError, MAX_QUOTED};
pub use handle::{
    HandleError, TaskHandle, HANDLE_VERSION, MAX_HANDLE_BYTES, MAX_HANDLE_URL,
    TOKEN_BOUND_HANDLE_VERSION,
};
pub use input::{InputBook, InputRequest, MAX_INPUT_KEYS, MAX_INPUT_KEY_BYTES};
pub(crate) use request::declares_extension;
pub(crate) use request::write_request_body;
pub use request::{client_capabilities, mcp_name, request_body, routing_headers, TaskMethod};

/// The extension's identifier, the key under `extensions` in the client and server
/// capabilities.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The `resultType` of a `CreateTaskResult`.
pub const RESULT_TYPE_TASK: &str = "task";

/// The methods whose answer may be a `CreateTaskResult`: "The following methods currently
/// support task-augmented execution: `tools/call`". A list, so that later revisions may add
/// more ("implementations SHOULD be designed to accommodate additional request types").
pub const TASK_METHODS: &[&str] = &["tools/call"];

/// Bytes kept of `createdAt` and `lastUpdatedAt` (ISO 8601 timestamps are about 30).
pub const MAX_TIMESTAMP: usize = 64;

/// The wait between two polls when the server names no `pollIntervalMs` (then clamped like any
/// other).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// A task's status: "`working` | `input_required` | `completed` | `cancelled` | `failed`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// "The request is currently being processed."
    Working,
    /// "The server needs input from the client before the task can proceed."
    InputRequired,
    /// "The request completed successfully and results are available in the `result` field."
    Completed,
    /// "The request failed due to a JSON-RPC error during execution."
    Failed,
    /// "The request was cancelled before completion."
    Cancelled,
}

impl TaskStatus {
    /// The status as the wire writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// The status named `s`, if it is one of the five.
    pub fn parse(s: &str) -> Option<TaskStatus> {
        Some(match s {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// Whether the task is over: `completed`, `failed` and `cancelled` are terminal ("Clients
    /// SHOULD continue polling until the task reaches a terminal status (`completed`, `failed`,
    /// or `cancelled`)").
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

impl core::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task id: non-empty, no control character (C0, DEL, C1), at most
/// [`Budgets::task_id_bytes`] bytes. Any other character is kept: [`mcp_name`] sends an id that
/// is not plain visible ASCII in the Base64 form.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(String);

impl core::fmt::Debug for TaskId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // A server may use ids as bearer secrets ("Servers MAY use task IDs as bearer tokens"):
        // only a prefix is shown.
        let shown = truncated(&self.0, 8);
        write!(f, "TaskId({shown:?}…)")
    }
}

impl TaskId {
    /// `id`, checked: empty or with a control character is [`TaskError::InvalidId`], longer
    /// than `max_bytes` is [`Budget::TaskIdBytes`] exceeded.
    pub fn parse(id: &str, max_bytes: usize) -> Result<TaskId, TaskError> {
        if id.len() > max_bytes {
            return Err(TaskError::Budget(crate::BudgetExceeded::new(
                Budget::TaskIdBytes,
                u64::try_from(max_bytes).unwrap_or(u64::MAX),
            )));
        }
        if id.is_empty() {
            return Err(TaskError::InvalidId { reason: "empty" });
        }
        if id.chars().any(char::is_control) {
            return Err(TaskError::InvalidId {
                reason: "a control character",
            });
        }
        Ok(TaskId(id.to_owned()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A task as the server reported it, read under bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Task {
    /// `taskId`.
    pub id: TaskId,
    /// `status`.
    pub status: TaskStatus,
    /// `statusMessage`, cut to [`Budgets::status_message_bytes`] and made inert ([`inert`]).
    pub status_message: Option<String>,
    /// `createdAt`, cut to [`MAX_TIMESTAMP`] bytes and made inert; empty if absent.
    pub created_at: String,
    /// `lastUpdatedAt`, cut to [`MAX_TIMESTAMP`] bytes and made inert; empty if absent.
    pub last_updated_at: String,
    /// `ttlMs`: "Time-to-live duration from creation in integer milliseconds, null for
    /// unlimited" (absent is read as `null`). "This value MAY change over the lifetime of a
    /// task."
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs`, as sent (clamp it with [`poll_interval`]).
    pub poll_interval_ms: Option<u64>,
}

/// One `tasks/get` report of a task, with what its status brings: what
/// [`Connection::get_task`](crate::Connection::get_task) ends with
/// ([`Event::TaskReported`](crate::Event::TaskReported)) whatever the status, the task's own
/// failure or cancellation included (they are the task's state, not the poll's failure).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TaskReport {
    /// The task as reported: its status, `statusMessage` (cut and made inert), `ttlMs` and
    /// `pollIntervalMs` (as sent).
    pub task: Task,
    /// A `completed` task's `CallToolResult`, read as a call's result is (`isError` stays a tool
    /// error).
    pub result: Option<crate::CallResult>,
    /// A `failed` task's JSON-RPC error.
    pub error: Option<RpcError>,
}

/// What a `tasks/get` answer carries besides the [`Task`], by its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskPayload {
    /// Nothing (`working`, `cancelled`).
    None,
    /// `inputRequests` of an `input_required` task: the raw JSON object, for [`InputBook::poll`].
    InputRequests(String),
    /// `result` of a `completed` task: the raw JSON of a `CallToolResult` (its `isError` stays a
    /// tool error).
    Result(String),
    /// `error` of a `failed` task: the JSON-RPC error (message and data truncated as for
    /// [`Error::Rpc`](crate::Error::Rpc); its status is that of the `tasks/get` answer).
    Error(RpcError),
}

/// A `tasks/get` answer: the task and its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetailedTask {
    /// The task.
    pub task: Task,
    /// The payload its status brings.
    pub payload: TaskPayload,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireTask<'a> {
    #[serde(borrow, default)]
    result_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    task_id: Cow<'a, str>,
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(borrow, default)]
    status_message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    created_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    last_updated_at: Option<Cow<'a, str>>,
    #[serde(default)]
    ttl_ms: Option<u64>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(borrow, default)]
    input_requests: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct WireError<'a> {
    code: i64,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResultType<'a> {
    #[serde(borrow, default)]
    result_type: Option<Cow<'a, str>>,
}

fn malformed(e: &serde_json::Error) -> TaskError {
    TaskError::Malformed {
        reason: truncated(&e.to_string(), 256),
    }
}

/// Whether `c` must not reach a person as itself: control characters and the bidirectional
/// formatting characters (embeddings, overrides, isolates and marks).
fn dangerous(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// `s` cut to at most `max` bytes on a character boundary, each control or bidirectional
/// formatting character replaced by U+FFFD: the text a server chose, safe to show (the
/// replacement counts towards `max`).
pub fn inert(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for c in s.chars() {
        let c = if dangerous(c) { '\u{fffd}' } else { c };
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    out
}

fn read_task(w: &WireTask<'_>, budgets: &Budgets) -> Result<Task, TaskError> {
    let status = TaskStatus::parse(&w.status).ok_or_else(|| TaskError::UnknownStatus {
        status: inert(&w.status, MAX_QUOTED),
    })?;
    Ok(Task {
        id: TaskId::parse(&w.task_id, budgets.task_id_bytes)?,
        status,
        status_message: w
            .status_message
            .as_deref()
            .map(|m| inert(m, budgets.status_message_bytes)),
        created_at: inert(w.created_at.as_deref().unwrap_or(""), MAX_TIMESTAMP),
        last_updated_at: inert(w.last_updated_at.as_deref().unwrap_or(""), MAX_TIMESTAMP),
        ttl_ms: w.ttl_ms,
        poll_interval_ms: w.poll_interval_ms,
    })
}

fn is_object(raw: &RawValue) -> bool {
    raw.get().trim_start().starts_with('{')
}

/// Reads a `CreateTaskResult` (the `result` of a `tools/call` answer whose `resultType` is
/// `"task"`): "`type CreateTaskResult = Result & Task;`". Its `resultType` must be `"task"`;
/// `result`, `error` and `inputRequests` on it are ignored (they belong to `tasks/get`).
pub fn parse_create_result(result: &str, budgets: &Budgets) -> Result<Task, TaskError> {
    let w: WireTask<'_> = serde_json::from_str(result).map_err(|e| malformed(&e))?;
    if w.result_type.as_deref() != Some(RESULT_TYPE_TASK) {
        return Err(TaskError::WrongResultType {
            method: "tools/call",
            result_type: inert(w.result_type.as_deref().unwrap_or(""), MAX_QUOTED),
        });
    }
    read_task(&w, budgets)
}

/// Reads a `tasks/get` answer ("`type GetTaskResult = Result & DetailedTask;`"): its
/// `resultType` must be `"complete"` (or absent, which "a client MUST treat … as
/// `"complete"`"); `completed` must bring a `result` object, `failed` an `error` object and
/// `input_required` an `inputRequests` object ([`TaskError::MissingMember`] otherwise). The
/// payload of another status is ignored.
pub fn parse_get_result(result: &str, budgets: &Budgets) -> Result<DetailedTask, TaskError> {
    let w: WireTask<'_> = serde_json::from_str(result).map_err(|e| malformed(&e))?;
    check_complete("tasks/get", w.result_type.as_deref())?;
    let task = read_task(&w, budgets)?;
    let need = |raw: Option<&RawValue>, member| match raw {
        Some(r) if is_object(r) => Ok(r.get().to_owned()),
        _ => Err(TaskError::MissingMember {
            status: task.status,
            member,
        }),
    };
    let payload = match task.status {
        TaskStatus::Working | TaskStatus::Cancelled => TaskPayload::None,
        TaskStatus::InputRequired => {
            TaskPayload::InputRequests(need(w.input_requests, "inputRequests")?)
        }
        TaskStatus::Completed => TaskPayload::Result(need(w.result, "result")?),
        TaskStatus::Failed => {
            let raw = need(w.error, "error")?;
            let e: WireError<'_> = serde_json::from_str(&raw).map_err(|e| malformed(&e))?;
            TaskPayload::Error(RpcError {
                status: 200,
                code: e.code,
                message: truncated(
                    e.message.as_deref().unwrap_or(""),
                    crate::jsonrpc::MAX_ERROR_MESSAGE,
                ),
                data: e
                    .data
                    .map(|d| truncated(d.get(), crate::jsonrpc::MAX_ERROR_DATA)),
            })
        }
    };
    Ok(DetailedTask { task, payload })
}

/// Reads the acknowledgement of `tasks/update` or `tasks/cancel` ("an empty result" whose
/// `resultType` "MUST be set to `"complete"`"; absent is read as `"complete"`). Other members
/// are ignored.
pub fn parse_ack(method: TaskMethod, result: &str) -> Result<(), TaskError> {
    let w: WireResultType<'_> = serde_json::from_str(result).map_err(|e| malformed(&e))?;
    check_complete(method.as_str(), w.result_type.as_deref())
}

fn check_complete(method: &'static str, result_type: Option<&str>) -> Result<(), TaskError> {
    match result_type {
        None | Some("complete") => Ok(()),
        Some(other) => Err(TaskError::WrongResultType {
            method,
            result_type: inert(other, MAX_QUOTED),
        }),
    }
}

/// What an answer's `result` is, for a request that may be answered with a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultShape {
    /// A `CreateTaskResult`: the task it created.
    Task(Task),
    /// Not a task (`resultType` absent or another value): the request's own result shape, for
    /// the caller to read as it does without tasks.
    NotTask,
}

/// Classifies the `result` of an answer to `method`: a `CreateTaskResult` (`resultType:
/// "task"`) is accepted only in answer to one of the [`TASK_METHODS`] whose request declared the
/// extension (`declared`), and read under `budgets`; to another request it is
/// [`TaskError::UnsupportedRequest`] ("MUST interpret this as an invalid response"), to a
/// request that did not declare the extension [`TaskError::NotDeclared`].
pub fn classify_result(
    method: &str,
    result: &str,
    declared: bool,
    budgets: &Budgets,
) -> Result<ResultShape, TaskError> {
    let w: WireResultType<'_> = serde_json::from_str(result).map_err(|e| malformed(&e))?;
    if w.result_type.as_deref() != Some(RESULT_TYPE_TASK) {
        return Ok(ResultShape::NotTask);
    }
    if !TASK_METHODS.contains(&method) {
        return Err(TaskError::UnsupportedRequest {
            method: inert(method, MAX_QUOTED),
        });
    }
    if !declared {
        return Err(TaskError::NotDeclared);
    }
    parse_create_result(result, budgets).map(ResultShape::Task)
}

/// The typed error of a JSON-RPC error answering a task request: `-32602` ("Invalid or
/// nonexistent `taskId`") is [`TaskError::UnknownTask`], terminal; any other is
/// [`Error::Rpc`](crate::Error::Rpc) (`-32603` included: an internal error of the server).
pub fn rpc_error(rpc: RpcError) -> crate::Error {
    if rpc.code == -32602 {
        crate::Error::Task(TaskError::UnknownTask(rpc))
    } else {
        crate::Error::Rpc(rpc)
    }
}

/// Whether a call of `tool` may be sent to a 2025-11-25 server, given the tool's
/// `execution.taskSupport` from its listing: `"required"` is [`TaskError::LegacyTaskRequired`]
/// (the server would answer `-32601`, as the 2025-11-25 specification makes it: "Servers MUST
/// return a `-32601` (Method not found) error if a client does not attempt to do so");
/// `"optional"`, `"forbidden"` and absent are plain calls.
pub fn check_legacy_task_support(tool: &str, task_support: Option<&str>) -> Result<(), TaskError> {
    if task_support == Some("required") {
        return Err(TaskError::LegacyTaskRequired {
            tool: inert(tool, MAX_QUOTED),
        });
    }
    Ok(())
}

/// Whether a 2025-11-25 server's `capabilities` (the raw JSON of its `initialize` answer)
/// declare task-augmented tool calls, `tasks.requests.tools.call` (present and not `null`):
/// "If a server's capabilities include `tasks.requests.tools.call`, then clients consider the
/// value of `execution.taskSupport`". Anything unreadable declares nothing.
pub fn declares_legacy_tool_tasks(capabilities: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Caps<'a> {
        #[serde(default, borrow)]
        tasks: Option<Level<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Level<'a> {
        #[serde(default, borrow)]
        requests: Option<Requests<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Requests<'a> {
        #[serde(default, borrow)]
        tools: Option<Tools<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Tools<'a> {
        #[serde(default, borrow)]
        call: Option<&'a serde_json::value::RawValue>,
    }
    let Ok(caps) = serde_json::from_str::<Caps<'_>>(capabilities) else {
        return false;
    };
    caps.tasks
        .and_then(|t| t.requests)
        .and_then(|r| r.tools)
        .and_then(|t| t.call)
        .is_some_and(|c| c.get() != "null")
}

/// The wait before the next poll: the server's `pollIntervalMs` ("Clients SHOULD respect the
/// `pollIntervalMs`") held between [`Budgets::task_poll_floor`] and
/// [`Budgets::task_poll_ceiling`]; [`DEFAULT_POLL_INTERVAL`] when it names none. A floor above
/// the ceiling wins.
pub fn poll_interval(poll_interval_ms: Option<u64>, budgets: &Budgets) -> Duration {
    let asked = poll_interval_ms.map_or(DEFAULT_POLL_INTERVAL, Duration::from_millis);
    asked
        .min(budgets.task_poll_ceiling)
        .max(budgets.task_poll_floor)
}

/// The rules across successive reports of one task: every report is about the same task, and a
/// terminal status never changes ("Tasks … terminal status (`completed`, `failed`, or
/// `cancelled`)": once there, a report of another status is [`TaskError::TerminalChanged`]).
/// It also counts polls against [`Budget::TaskPolls`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusGuard {
    id: TaskId,
    last: TaskStatus,
    polls: u32,
}

impl StatusGuard {
    /// A guard for the task a `CreateTaskResult` (or a resumed handle) named, in its first
    /// status.
    pub fn new(task: &Task) -> StatusGuard {
        StatusGuard {
            id: task.id.clone(),
            last: task.status,
            polls: 0,
        }
    }

    /// A guard for a task known by its id only (resumed from a [`TaskHandle`]): its status
    /// counts as `working` until the first report.
    pub fn resumed(id: TaskId) -> StatusGuard {
        StatusGuard {
            id,
            last: TaskStatus::Working,
            polls: 0,
        }
    }

    /// Counts one more `tasks/get` poll: [`Budget::TaskPolls`] exceeded when it would pass the
    /// limit.
    pub fn poll(&mut self, budgets: &Budgets) -> Result<(), TaskError> {
        if self.polls >= budgets.task_polls {
            return Err(TaskError::Budget(budgets.exceeded(Budget::TaskPolls)));
        }
        self.polls += 1;
        Ok(())
    }

    /// Takes one more report of the task: another task's is [`TaskError::OtherTask`], a
    /// change away from a terminal status is [`TaskError::TerminalChanged`] (the same terminal
    /// status again is fine: a poll may be re-issued).
    pub fn observe(&mut self, task: &Task) -> Result<(), TaskError> {
        if task.id != self.id {
            return Err(TaskError::OtherTask);
        }
        if self.last.is_terminal() && task.status != self.last {
            return Err(TaskError::TerminalChanged {
                from: self.last,
                to: task.status,
            });
        }
        self.last = task.status;
        Ok(())
    }

    /// The last status observed.
    pub fn status(&self) -> TaskStatus {
        self.last
    }

    /// The polls counted.
    pub fn polls(&self) -> u32 {
        self.polls
    }

    /// The task's id.
    pub fn id(&self) -> &TaskId {
        &self.id
    }
}
