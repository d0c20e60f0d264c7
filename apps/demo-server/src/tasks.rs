//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on the modern era: the
//! `slow_count` tool answers `tools/call` with a `CreateTaskResult` when the request declares the
//! extension, and `tasks/get`, `tasks/update` and `tasks/cancel` drive the task.
//!
//! A task moves on with the client's polls, not with a clock, so that every run is the same:
//!
//! 1. `working` for the first poll (`pollIntervalMs` 100, `ttlMs` 60 000);
//! 2. from the second poll, `input_required` with one elicitation under the key `confirm`, until
//!    a `tasks/update` answers it (once per task: the key is never reused);
//! 3. `working` for one poll after the answer;
//! 4. `completed`: the count `1 2 … to` when the answer accepted, a tool error (`isError: true`)
//!    when it declined.
//!
//! `tasks/cancel` acknowledges and the next poll reports `cancelled` (unless the task was
//! already over). A task id the server does not know is `-32602`; a `tasks/*` request that does
//! not declare the extension is `-32021`; an `Mcp-Name` header that differs from
//! `params.taskId` is `-32020`.
//!
//! The tool is listed only to requests that declare the extension (a client without it would
//! otherwise see a tool it cannot use as designed, and existing catalogs stay as they were);
//! called without the extension, or on the legacy era, it answers at once with the plain
//! result.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

/// The extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// The tool's name.
pub const TOOL: &str = "slow_count";

/// The most tasks kept at once; past it `slow_count` answers with the plain result.
pub const MAX_TASKS: usize = 1024;

/// The largest count.
const MAX_TO: u64 = 100;

/// The key of the task's one input request.
const CONFIRM: &str = "confirm";

/// The `tools/list` entry of `slow_count`.
pub fn tool_entry() -> String {
    json!({"name":TOOL,"title":"Slow count",
        "description":"Counts to `to` as a task (when the client declares the tasks extension), asking once for confirmation.",
        "inputSchema":{"type":"object","properties":{
            "to":{"type":"integer","minimum":1,"maximum":MAX_TO,"default":3}}}})
    .to_string()
}

/// Whether a request's client capabilities declare the extension.
pub fn declared(msg: &Value) -> bool {
    msg.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions")
        .and_then(|e| e.get(EXTENSION_ID))
        .is_some_and(Value::is_object)
}

/// The `to` argument, checked.
pub fn count_to(arguments: &Value) -> Result<u64, String> {
    match arguments.get("to") {
        None | Some(Value::Null) => Ok(3),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_TO).contains(n))
            .ok_or_else(|| format!("Invalid params: to must be an integer from 1 to {MAX_TO}")),
    }
}

/// The finished count as a `CallToolResult`.
pub fn count_result(to: u64, accepted: bool) -> Value {
    if accepted {
        let text = (1..=to)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        json!({"content":[{"type":"text","text":text}],"isError":false})
    } else {
        json!({"content":[{"type":"text","text":"the count was declined"}],"isError":true})
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Working,
    AskedToConfirm,
    Answered { accepted: bool, polls: u32 },
    Completed { accepted: bool },
    Cancelled,
}

struct DemoTask {
    to: u64,
    polls: u32,
    phase: Phase,
}

/// The tasks of a server.
pub struct Tasks {
    tasks: Mutex<HashMap<String, DemoTask>>,
    next: AtomicU64,
    keys: RandomState,
}

/// What a task request gets: a result, or a JSON-RPC error (code, message).
pub type Answer = Result<Value, (i64, String)>;

const CREATED_AT: &str = "2026-07-28T00:00:00Z";

fn task_fields(id: &str, status: &str, message: Option<&str>) -> Value {
    let mut v = json!({"taskId":id,"status":status,"createdAt":CREATED_AT,
        "lastUpdatedAt":CREATED_AT,"ttlMs":60_000,"pollIntervalMs":100});
    if let Some(m) = message {
        v["statusMessage"] = json!(m);
    }
    v
}

fn unknown() -> (i64, String) {
    (-32602, "Failed to retrieve task: Task not found".to_owned())
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            tasks: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
            keys: RandomState::new(),
        }
    }
}

impl Tasks {
    /// Creates a task counting to `to`: its `CreateTaskResult`, or `None` when [`MAX_TASKS`]
    /// are kept already.
    pub fn create(&self, to: u64) -> Option<Value> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // Unguessable enough for a loopback demo: a keyed hash of the counter.
        let mut h = self.keys.build_hasher();
        h.write_u64(n);
        let id = format!("task-{n:04}-{:016x}", h.finish());
        let mut tasks = self.tasks.lock().ok()?;
        if tasks.len() >= MAX_TASKS {
            return None;
        }
        tasks.insert(
            id.clone(),
            DemoTask {
                to,
                polls: 0,
                phase: Phase::Working,
            },
        );
        let mut v = task_fields(&id, "working", Some("counting"));
        v["resultType"] = json!("task");
        Some(v)
    }

    /// How many `slow_count` calls asked for a task since the start (the task made, or refused
    /// past [`MAX_TASKS`]).
    pub fn created(&self) -> u64 {
        self.next.load(Ordering::Relaxed).saturating_sub(1)
    }

    /// Answers `tasks/get`, `tasks/update` or `tasks/cancel` about `params.taskId`.
    pub fn request(&self, method: &str, msg: &Value) -> Answer {
        let id = msg
            .pointer("/params/taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| (-32602, "Invalid params: taskId is required".to_owned()))?;
        let mut tasks = self
            .tasks
            .lock()
            .map_err(|_| (-32603, "Internal error".to_owned()))?;
        let task = tasks.get_mut(id).ok_or_else(unknown)?;
        match method {
            "tasks/get" => Ok(Self::get(id, task)),
            "tasks/update" => {
                let responses = msg
                    .pointer("/params/inputResponses")
                    .and_then(Value::as_object)
                    .ok_or_else(|| {
                        (
                            -32602,
                            "Invalid params: inputResponses is required".to_owned(),
                        )
                    })?;
                // Responses to keys not outstanding are ignored, as the SEP asks.
                if let (Phase::AskedToConfirm, Some(r)) = (task.phase, responses.get(CONFIRM)) {
                    let accepted = r.get("action").and_then(Value::as_str) == Some("accept");
                    task.phase = Phase::Answered { accepted, polls: 0 };
                }
                Ok(json!({"resultType":"complete"}))
            }
            "tasks/cancel" => {
                if !matches!(task.phase, Phase::Completed { .. }) {
                    task.phase = Phase::Cancelled;
                }
                Ok(json!({"resultType":"complete"}))
            }
            _ => Err((-32601, "Method not found".to_owned())),
        }
    }

    fn get(id: &str, task: &mut DemoTask) -> Value {
        task.polls += 1;
        task.phase = match task.phase {
            Phase::Working if task.polls >= 2 => Phase::AskedToConfirm,
            Phase::Answered { accepted, polls } if polls >= 1 => Phase::Completed { accepted },
            Phase::Answered { accepted, polls } => Phase::Answered {
                accepted,
                polls: polls + 1,
            },
            other => other,
        };
        let mut v = match task.phase {
            Phase::Working | Phase::Answered { .. } => task_fields(id, "working", Some("counting")),
            Phase::AskedToConfirm => {
                let mut v = task_fields(id, "input_required", Some("waiting for confirmation"));
                v["inputRequests"] = json!({CONFIRM: {"method":"elicitation/create","params":{
                    "mode":"form","message":format!("Count to {}?", task.to),
                    "requestedSchema":{"type":"object","properties":{}}}}});
                v
            }
            Phase::Completed { accepted } => {
                let mut v = task_fields(id, "completed", None);
                v["result"] = count_result(task.to, accepted);
                v
            }
            Phase::Cancelled => task_fields(id, "cancelled", Some("cancelled by the client")),
        };
        v["resultType"] = json!("complete");
        v
    }

    /// The number of tasks kept.
    pub fn len(&self) -> usize {
        self.tasks.lock().map(|t| t.len()).unwrap_or(0)
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
