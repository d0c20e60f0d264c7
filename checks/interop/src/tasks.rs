//! The task scenario (SEP-2663), run against the `fastmcp-tasks` peer through each adapter: it
//! records what the client and the server observed ([`TaskObserved`]) and asserts nothing;
//! `tests/tasks.rs` does.
//!
//! With `Config::tasks` on:
//! 1. `count_task` runs as a task: the call observer gets the handle (its bytes persisted) before
//!    any `tasks/get`, and `call_tool` returns the tool's result after polling;
//! 2. a **new** client and session resume the task from the handle's bytes
//!    (`Session::resume_task`) and get the same result;
//! 3. `ask_task` asks for a name (`input_required`): the observer answers, `tasks/update` carries
//!    it, and the call returns the greeting;
//! 4. `fail_task` raises a JSON-RPC error: the task ends `failed`;
//! 5. `long_task` is followed by a session whose `task_polls` budget is 1 (the call gives up,
//!    the task goes on), then cancelled from a new session (`Session::cancel_task`).
//!
//! With `Config::tasks` off (the extension not declared): `count_task` (mode `optional`) and
//! `required_task` (mode `required`).
//!
//! Between steps the server's own record (its log file, see
//! `checks/interop/servers/fastmcp-tasks/server.py`) is read: which tools ran, which
//! `tools/call` and `tasks/*` requests arrived, and their routing headers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_sansio::task::{TaskHandle, TaskStatus};
use mcp_sansio::{CallResult, Error};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::scenario::{policy, Wire};
use crate::Target;

/// The tools the `fastmcp-tasks` peer lists.
pub const FASTMCP_TASKS_TOOLS: &[&str] = &[
    "echo",
    "count_task",
    "ask_task",
    "fail_task",
    "long_task",
    "required_task",
];

/// The arguments of the `count_task` call: three steps of 0.3 s.
pub const COUNT_ARGS: &str = r#"{"n":3,"delay":0.3}"#;
/// The arguments of the `long_task` call: far longer than the scenario, so that only a cancel
/// ends it.
pub const LONG_ARGS: &str = r#"{"seconds":240}"#;

/// What a task call's observer saw, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskEvent {
    /// `CallObserver::task_handle`: the handle's bytes, and how many `tasks/*` requests the
    /// server had received about this task at that moment (read from its log file; `None` if
    /// it was not read).
    Handle {
        /// `TaskHandle::to_bytes`.
        bytes: Vec<u8>,
        /// The server's count of `tasks/*` requests naming the task, when the handle came.
        server_polls: Option<usize>,
    },
    /// `CallObserver::task_status`.
    Status(TaskStatus, Option<String>),
    /// `CallObserver::input_required`: the `(key, method)` of each request, answered.
    Input(Vec<(String, String)>),
}

/// The call observer of the task scenario.
#[derive(Debug)]
pub struct TaskRecorder {
    /// The server's log file, read when a handle arrives.
    log_at: Option<PathBuf>,
    /// Everything observed, in order.
    pub events: Vec<TaskEvent>,
}

impl TaskRecorder {
    /// A recorder that reads the server's log file `log_at` when a handle arrives (`None`: it
    /// does not).
    pub fn new(log_at: Option<PathBuf>) -> TaskRecorder {
        TaskRecorder {
            log_at,
            events: Vec::new(),
        }
    }

    /// The bytes of the first handle observed.
    pub fn first_handle(&self) -> Option<Vec<u8>> {
        self.events.iter().find_map(|e| match e {
            TaskEvent::Handle { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
    }
}

impl mcp_sansio_tokio::CallObserver for TaskRecorder {
    fn task_handle(&mut self, handle: &TaskHandle) {
        let id = handle.id().as_str().to_owned();
        let server_polls = self.log_at.as_ref().and_then(|path| {
            let log = server_log(path).ok()?;
            Some(
                log.task_requests
                    .iter()
                    .filter(|r| r.task_id.as_deref() == Some(&id))
                    .count(),
            )
        });
        self.events.push(TaskEvent::Handle {
            bytes: handle.to_bytes(),
            server_polls,
        });
    }

    fn task_status(&mut self, status: TaskStatus, message: Option<&str>) {
        self.events
            .push(TaskEvent::Status(status, message.map(str::to_owned)));
    }

    /// Answers every `elicitation/create` with the name Ada (whatever its key: the server mints
    /// the keys of a task's input requests); declines anything else.
    fn input_required(&mut self, requests: &RawValue) -> Option<Vec<u8>> {
        let map: BTreeMap<String, Value> = serde_json::from_str(requests.get()).ok()?;
        let mut round = Vec::new();
        let mut answers = serde_json::Map::new();
        for (key, request) in map {
            let method = request["method"].as_str().unwrap_or_default().to_owned();
            if method != "elicitation/create" {
                return None;
            }
            answers.insert(
                key.clone(),
                json!({"action": "accept", "content": {"name": "Ada"}}),
            );
            round.push((key, method));
        }
        self.events.push(TaskEvent::Input(round));
        serde_json::to_vec(&Value::Object(answers)).ok()
    }
}

/// One `tasks/*` request as the server recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// The JSON-RPC method.
    pub method: String,
    /// `params.taskId`.
    pub task_id: Option<String>,
    /// The `Mcp-Method` header.
    pub mcp_method: Option<String>,
    /// The `Mcp-Name` header (decoded from its Base64 form if so sent).
    pub mcp_name: Option<String>,
}

/// What the server recorded (its `--log-file`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerLog {
    /// Runs of each task tool begun (a task that asks for input begins once per leg).
    pub began: BTreeMap<String, u64>,
    /// Runs of each task tool that returned.
    pub finished: BTreeMap<String, u64>,
    /// Runs of each task tool stopped by a cancellation.
    pub cancelled: BTreeMap<String, u64>,
    /// The tool name of every `tools/call`, in arrival order.
    pub calls: Vec<String>,
    /// Every `tasks/*` request, in arrival order.
    pub task_requests: Vec<TaskRequest>,
}

impl ServerLog {
    /// How many runs of `tool` began.
    pub fn began(&self, tool: &str) -> u64 {
        self.began.get(tool).copied().unwrap_or(0)
    }

    /// How many runs of `tool` returned.
    pub fn finished(&self, tool: &str) -> u64 {
        self.finished.get(tool).copied().unwrap_or(0)
    }

    /// How many runs of `tool` were stopped by a cancellation.
    pub fn cancelled(&self, tool: &str) -> u64 {
        self.cancelled.get(tool).copied().unwrap_or(0)
    }

    /// What was recorded after `earlier` (a log read before): counts subtracted, lists cut.
    pub fn since(&self, earlier: &ServerLog) -> ServerLog {
        let minus = |now: &BTreeMap<String, u64>, then: &BTreeMap<String, u64>| {
            now.iter()
                .map(|(k, v)| (k.clone(), v - then.get(k).copied().unwrap_or(0)))
                .filter(|(_, v)| *v > 0)
                .collect()
        };
        ServerLog {
            began: minus(&self.began, &earlier.began),
            finished: minus(&self.finished, &earlier.finished),
            cancelled: minus(&self.cancelled, &earlier.cancelled),
            calls: self.calls[earlier.calls.len().min(self.calls.len())..].to_vec(),
            task_requests: self.task_requests
                [earlier.task_requests.len().min(self.task_requests.len())..]
                .to_vec(),
        }
    }

    /// The `tasks/*` requests about task `id`.
    pub fn requests_for(&self, id: &str) -> Vec<&TaskRequest> {
        self.task_requests
            .iter()
            .filter(|r| r.task_id.as_deref() == Some(id))
            .collect()
    }
}

/// Reads the server's log file (`--log-file`), which it rewrites whole on every change.
///
/// # Errors
///
/// When the file cannot be read or is not the log.
pub fn server_log(path: &Path) -> Result<ServerLog, String> {
    let body = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&body).map_err(|e| format!("log: {e}: {body:?}"))?;
    let counts = |k: &str| -> BTreeMap<String, u64> {
        v[k].as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text_of = |v: &Value| v.as_str().map(str::to_owned);
    Ok(ServerLog {
        began: counts("began"),
        finished: counts("finished"),
        cancelled: counts("cancelled"),
        calls: v["calls"]
            .as_array()
            .map(|a| a.iter().filter_map(text_of).collect())
            .unwrap_or_default(),
        task_requests: v["task_requests"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| TaskRequest {
                        method: r["method"].as_str().unwrap_or_default().to_owned(),
                        task_id: text_of(&r["task_id"]),
                        mcp_method: text_of(&r["mcp_method"]),
                        mcp_name: text_of(&r["mcp_name"]),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// One observed task call: its outcome and its observer's events.
#[derive(Debug)]
pub struct TaskCall {
    /// The outcome.
    pub result: Result<CallResult, Error>,
    /// The observer's events, in order.
    pub events: Vec<TaskEvent>,
    /// What the server recorded during the call (and anything after it in the same step).
    pub server: ServerLog,
}

/// Everything the task scenario observed through one adapter.
#[derive(Debug)]
pub struct TaskObserved {
    /// `tokio` or `blocking`, and the wire.
    pub adapter: &'static str,
    /// The HTTP version of the first session.
    pub http_version: &'static str,
    /// Step 1: `count_task` called with tasks on.
    pub count: TaskCall,
    /// Step 2: the same task resumed from its handle's bytes in a new client and session.
    pub resumed: TaskCall,
    /// Step 3: `ask_task`, its input request answered.
    pub ask: TaskCall,
    /// Step 4: `fail_task`.
    pub fail: TaskCall,
    /// Step 5a: `long_task` in a session with `task_polls` 1: the call gives up.
    pub long: TaskCall,
    /// Step 5b: `Session::cancel_task` of that task from a new session (no observer: no
    /// events).
    pub cancel: TaskCall,
    /// The server's log a moment after the cancel (the worker's end is recorded asynchronously).
    pub after_cancel: ServerLog,
    /// With tasks off: `count_task` (mode `optional`).
    pub untasked_count: TaskCall,
    /// With tasks off: `required_task` (mode `required`).
    pub untasked_required: TaskCall,
}

/// A log read that fails the scenario when the server cannot be read.
fn read_log(path: &Path) -> ServerLog {
    server_log(path).unwrap_or_else(|e| panic!("the server's log: {e}"))
}

/// The task scenario, once for both adapters (as `scenario!`): `$new_client` makes a client of
/// the adapter, `$($wait)*` is `.await` or nothing.
macro_rules! task_scenario {
    ($adapter:expr, $target:expr, $url:expr, $log:expr, $new_client:expr, $($wait:tt)*) => {{
        let target: &Target = $target;
        let url: &str = $url;
        let addr: &Path = $log;
        let who = format!("{} via {}", target.label(), $adapter);
        let tasks_on = || target.config(url).with_tasks(true);
        let client = $new_client;
        let mut session = client
            .connect(tasks_on())
            $($wait)*
            .unwrap_or_else(|e| panic!("{who}: connect failed: {e} ({})", e.kind()));
        let http_version = session.http_version();

        // 1. A task call to its end.
        let before = read_log(addr);
        let mut rec = TaskRecorder::new(Some(addr.to_path_buf()));
        let result = session.call_tool_with("count_task", COUNT_ARGS.as_bytes(), &mut rec) $($wait)*;
        let count = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };
        let handle_bytes = count.events.iter().find_map(|e| match e {
            TaskEvent::Handle { bytes, .. } => Some(bytes.clone()),
            _ => None,
        });

        // 2. Resumed from the persisted bytes by another client.
        let before = read_log(addr);
        let resumed = match handle_bytes {
            Some(bytes) => {
                let other = $new_client;
                let mut again = other
                    .connect(tasks_on())
                    $($wait)*
                    .unwrap_or_else(|e| panic!("{who}: second connect failed: {e}"));
                let handle = TaskHandle::from_bytes(&bytes)
                    .unwrap_or_else(|e| panic!("{who}: the persisted handle: {e}"));
                let mut rec = TaskRecorder::new(None);
                let result = again.resume_task_with(&handle, &mut rec) $($wait)*;
                let _ = again.close() $($wait)*;
                TaskCall { result, events: rec.events, server: read_log(addr).since(&before) }
            }
            None => panic!("{who}: count_task gave no handle: {:?}", count.result),
        };

        // 3. A task that asks for input.
        let before = read_log(addr);
        let mut rec = TaskRecorder::new(None);
        let result = session.call_tool_with("ask_task", b"{}", &mut rec) $($wait)*;
        let ask = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };

        // 4. A task that fails.
        let before = read_log(addr);
        let mut rec = TaskRecorder::new(None);
        let result = session.call_tool_with("fail_task", b"{}", &mut rec) $($wait)*;
        let fail = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };
        let _ = session.close() $($wait)*;

        // 5. A task left running by a call that gave up, then cancelled from another session.
        let before = read_log(addr);
        let mut short = tasks_on();
        short.budgets.task_polls = 1;
        let mut brief = client
            .connect(short)
            $($wait)*
            .unwrap_or_else(|e| panic!("{who}: connect (task_polls 1) failed: {e}"));
        let mut rec = TaskRecorder::new(None);
        let result = brief.call_tool_with("long_task", LONG_ARGS.as_bytes(), &mut rec) $($wait)*;
        let _ = brief.close() $($wait)*;
        let long = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };
        let before = read_log(addr);
        let cancel = match long.events.iter().find_map(|e| match e {
            TaskEvent::Handle { bytes, .. } => Some(bytes.clone()),
            _ => None,
        }) {
            Some(bytes) => {
                let other = $new_client;
                let mut again = other
                    .connect(tasks_on())
                    $($wait)*
                    .unwrap_or_else(|e| panic!("{who}: third connect failed: {e}"));
                let handle = TaskHandle::from_bytes(&bytes)
                    .unwrap_or_else(|e| panic!("{who}: the persisted handle: {e}"));
                // `cancel_task` takes no observer: its events stay empty.
                let result = again.cancel_task(&handle) $($wait)*;
                let _ = again.close() $($wait)*;
                TaskCall { result, events: Vec::new(), server: read_log(addr).since(&before) }
            }
            None => panic!("{who}: long_task gave no handle: {:?}", long.result),
        };
        // The worker records its cancellation when the backend stops it: give it a moment.
        let mut after_cancel = read_log(addr).since(&before);
        for _ in 0..40 {
            if after_cancel.cancelled("long_task") > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            after_cancel = read_log(addr).since(&before);
        }

        // 6. The extension not declared.
        let mut plain = client
            .connect(target.config(url))
            $($wait)*
            .unwrap_or_else(|e| panic!("{who}: connect (tasks off) failed: {e}"));
        let before = read_log(addr);
        let mut rec = TaskRecorder::new(None);
        let result = plain.call_tool_with("count_task", br#"{"n":1,"delay":0.1}"#, &mut rec) $($wait)*;
        let untasked_count = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };
        let before = read_log(addr);
        let mut rec = TaskRecorder::new(None);
        let result = plain.call_tool_with("required_task", b"{}", &mut rec) $($wait)*;
        let untasked_required = TaskCall { result, events: rec.events, server: read_log(addr).since(&before) };
        let _ = plain.close() $($wait)*;

        TaskObserved {
            adapter: $adapter,
            http_version,
            count,
            resumed,
            ask,
            fail,
            long,
            cancel,
            after_cancel,
            untasked_count,
            untasked_required,
        }
    }};
}

/// A client of `C` for `wire`, with the tests' address policy.
fn client_for<C: mcp_sansio_net::BuildClient>(wire: Wire<'_>) -> C {
    let b = mcp_sansio_net::ClientBuilder::<C>::new().policy(policy());
    match wire {
        Wire::Plain => b.build(),
        Wire::H2c => b.h2_prior_knowledge(true).build(),
        Wire::Tls(ca_file) => {
            let roots = mcp_sansio_net::read_ca_certificates(ca_file)
                .unwrap_or_else(|e| panic!("the test CA {}: {e}", ca_file.display()));
            b.add_root_certificates(roots).build()
        }
    }
}

/// Runs the task scenario against `url` through `mcp-sansio-tokio` over `wire`; the server
/// writes its log to `log`.
pub async fn run_tokio_tasks(
    target: &Target,
    url: &str,
    log: &Path,
    wire: Wire<'_>,
) -> TaskObserved {
    task_scenario!(
        crate::Adapter::Tokio.label(wire),
        target,
        url,
        log,
        client_for::<mcp_sansio_tokio::Client>(wire),
        .await
    )
}

/// Runs the task scenario against `url` through `mcp-sansio-blocking` over `wire`; the server
/// writes its log to `log`.
pub fn run_blocking_tasks(target: &Target, url: &str, log: &Path, wire: Wire<'_>) -> TaskObserved {
    task_scenario!(
        crate::Adapter::Blocking.label(wire),
        target,
        url,
        log,
        client_for::<mcp_sansio_blocking::Client>(wire),
    )
}

/// Runs the task scenario through `adapter`; the tokio run is bounded by `limit`.
///
/// # Panics
///
/// When the tokio run takes longer than `limit`, or a session cannot be opened.
pub fn run_tasks(
    adapter: crate::Adapter,
    target: &Target,
    url: &str,
    log: &Path,
    wire: Wire<'_>,
    limit: Duration,
) -> TaskObserved {
    match adapter {
        crate::Adapter::Tokio => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(async {
                tokio::time::timeout(limit, run_tokio_tasks(target, url, log, wire)).await
            })
            .unwrap_or_else(|_| {
                panic!(
                    "{} via tokio: task scenario exceeded {limit:?}",
                    target.label()
                )
            })
        }
        crate::Adapter::Blocking => run_blocking_tasks(target, url, log, wire),
    }
}

/// What a legacy (2025-11-25) session observed of a server's task tools.
#[derive(Debug)]
pub struct LegacyObserved {
    /// `tokio` or `blocking`, and the wire.
    pub adapter: &'static str,
    /// The negotiated version.
    pub version: String,
    /// The listing.
    pub catalog: Result<mcp_sansio::Catalog, Error>,
    /// Each tool called, in order, with its outcome.
    pub calls: Vec<(&'static str, Result<CallResult, Error>)>,
    /// The `tools/call` names the server received during the calls, from its `call_log` tool
    /// (called before and after them), where it has one.
    pub call_log: Option<Result<Vec<String>, String>>,
}

/// The names a `call_log` result lists.
fn call_log_names(r: &Result<CallResult, Error>) -> Result<Vec<String>, String> {
    let r = r.as_ref().map_err(|e| format!("call_log: {e}"))?;
    let text = r
        .content
        .iter()
        .find_map(|c| match c {
            mcp_sansio::ContentBlock::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .ok_or("call_log: no text")?;
    serde_json::from_str(&text).map_err(|e| format!("call_log: {e}: {text}"))
}

/// The legacy scenario: connect in the 2025 era, list, call each of `calls` (no arguments),
/// reading the server's `call_log` before and after when `call_log` is set.
macro_rules! legacy_scenario {
    ($adapter:expr, $target:expr, $url:expr, $calls:expr, $call_log:expr, $client:expr, $($wait:tt)*) => {{
        let target: &Target = $target;
        let who = format!("{} via {}", target.label(), $adapter);
        let client = $client;
        let mut session = client
            .connect(target.config($url))
            $($wait)*
            .unwrap_or_else(|e| panic!("{who}: connect failed: {e} ({})", e.kind()));
        let version = session.version().to_owned();
        let catalog = session.list_tools() $($wait)*;
        let before = if $call_log {
            Some(call_log_names(&(session.call_tool("call_log", b"{}") $($wait)*)))
        } else {
            None
        };
        let mut calls = Vec::new();
        for name in $calls {
            let r = session.call_tool(name, b"{}") $($wait)*;
            calls.push((*name, r));
        }
        let call_log = match before {
            Some(before) => {
                let after = call_log_names(&(session.call_tool("call_log", b"{}") $($wait)*));
                Some(before.and_then(|b| after.map(|a| a[b.len().min(a.len())..].to_vec())))
            }
            None => None,
        };
        let _ = session.close() $($wait)*;
        LegacyObserved { adapter: $adapter, version, catalog, calls, call_log }
    }};
}

/// Runs the legacy scenario through `adapter` over HTTP/1.1: `calls` in order, the server's
/// `call_log` read around them when `call_log` is set.
///
/// # Panics
///
/// When the tokio run takes longer than `limit`, or the session cannot be opened.
pub fn run_legacy(
    adapter: crate::Adapter,
    target: &Target,
    url: &str,
    calls: &'static [&'static str],
    call_log: bool,
    limit: Duration,
) -> LegacyObserved {
    let wire = Wire::Plain;
    match adapter {
        crate::Adapter::Tokio => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(async {
                tokio::time::timeout(limit, async {
                    legacy_scenario!(
                        crate::Adapter::Tokio.label(wire),
                        target,
                        url,
                        calls,
                        call_log,
                        client_for::<mcp_sansio_tokio::Client>(wire),
                        .await
                    )
                })
                .await
            })
            .unwrap_or_else(|_| {
                panic!(
                    "{} via tokio: legacy scenario exceeded {limit:?}",
                    target.label()
                )
            })
        }
        crate::Adapter::Blocking => legacy_scenario!(
            crate::Adapter::Blocking.label(wire),
            target,
            url,
            calls,
            call_log,
            client_for::<mcp_sansio_blocking::Client>(wire),
        ),
    }
}
