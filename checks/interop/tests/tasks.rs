//! Tasks (SEP-2663, `io.modelcontextprotocol/tasks`) against a real task-capable server:
//! `fastmcp` 4.1.4 with `fastmcp-tasks` 4.1.4 (`checks/interop/servers/fastmcp-tasks/server.py`),
//! through both adapters, over HTTP/1.1 and over TLS with ALPN `h2` (hypercorn). Each test
//! starts its own server on a free 127.0.0.1 port, runs the task scenario
//! (`mcp_sansio_interop::tasks`) through each adapter, stops the server, and checks what the
//! client and the server observed (the server writes what it saw to a log file).
//!
//! The 2025-11-25 experimental tasks: `ts_v1_legacy_task_support` (the TypeScript SDK v1's
//! `registerToolTask`, `ts-v1 --tasks`) and `fastmcp_tasks_legacy_task_support` (the same peer
//! in the 2025 era): which tools the client refuses before sending, and what the servers
//! received.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_sansio::task::{TaskError, TaskHandle, TaskStatus};
use mcp_sansio::Era::{Legacy, Modern};
use mcp_sansio::{Budget, BudgetExceeded, CallResult, ContentBlock, Error};
use mcp_sansio_interop::tasks::{
    run_legacy, run_tasks, server_log, LegacyObserved, ServerLog, TaskCall, TaskEvent, TaskObserved,
};
use mcp_sansio_interop::Peer::{FastMcpTasks, TsV1};
use mcp_sansio_interop::Stream::Sse;
use mcp_sansio_interop::{Adapter, Server, Target, Wire};

/// The longest the task scenario may take through the async adapter.
const SCENARIO_TIME: Duration = Duration::from_secs(180);

/// The adapters every run goes through, in order.
const ADAPTERS: &[Adapter] = &[Adapter::Tokio, Adapter::Blocking];

/// The `fastmcp-tasks` peer, 2026-07-28 only, with `args`.
const fn modern(args: &'static [&'static str]) -> Target {
    Target {
        peer: FastMcpTasks,
        args,
        era: Modern,
        stream: Sse,
        stateful: true,
        negotiated: false,
        legacy_version: None,
    }
}

fn texts(r: &CallResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn ok<'a>(who: &str, what: &str, call: &'a TaskCall) -> &'a CallResult {
    match &call.result {
        Ok(r) => r,
        Err(e) => panic!("{who}: {what} failed: {e} ({})", e.kind()),
    }
}

/// The id of the first handle the observer got.
fn task_id(who: &str, what: &str, call: &TaskCall) -> String {
    let bytes = call
        .events
        .iter()
        .find_map(|e| match e {
            TaskEvent::Handle { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{who}: {what}: no task handle observed: {:?}", call.events));
    TaskHandle::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("{who}: {what}: handle bytes: {e}"))
        .id()
        .as_str()
        .to_owned()
}

fn statuses(call: &TaskCall) -> Vec<TaskStatus> {
    call.events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Status(s, _) => Some(*s),
            _ => None,
        })
        .collect()
}

fn handles(call: &TaskCall) -> usize {
    call.events
        .iter()
        .filter(|e| matches!(e, TaskEvent::Handle { .. }))
        .count()
}

/// Every `tasks/*` request the server saw in `log` is about task `id` and carries the routing
/// headers: "When `tasks/get`, `tasks/update`, or `tasks/cancel` is sent over the Streamable HTTP
/// transport, the client **MUST** set the `Mcp-Name` header (defined by SEP-2243) to the value of
/// `params.taskId`. […] The `Mcp-Method` header is set to the JSON-RPC method name per SEP-2243."
/// Returns the methods, in order.
fn task_methods(who: &str, what: &str, log: &ServerLog, id: &str) -> Vec<String> {
    for r in &log.task_requests {
        assert_eq!(
            r.task_id.as_deref(),
            Some(id),
            "{who}: {what}: taskId of {r:?}"
        );
        assert_eq!(
            r.mcp_name.as_deref(),
            Some(id),
            "{who}: {what}: Mcp-Name of {r:?}"
        );
        assert_eq!(
            r.mcp_method.as_deref(),
            Some(r.method.as_str()),
            "{who}: {what}: Mcp-Method of {r:?}"
        );
    }
    log.task_requests.iter().map(|r| r.method.clone()).collect()
}

/// Everything one adapter's run must show.
fn check_tasks(o: &TaskObserved) {
    let who = o.adapter;

    // 1. The task call: the handle before any poll, then the polls' reports, then the result.
    let count = &o.count;
    let r = ok(who, "count_task", count);
    assert!(!r.is_error, "{who}: count_task isError");
    assert_eq!(texts(r), ["counted to 3"], "{who}: count_task result");
    let id = task_id(who, "count_task", count);
    match count.events.first() {
        Some(TaskEvent::Handle { server_polls, .. }) => assert_eq!(
            *server_polls,
            Some(0),
            "{who}: the server had seen tasks/* requests about the task before the observer got its handle"
        ),
        other => panic!("{who}: count_task: the first event is not the handle: {other:?}"),
    }
    assert_eq!(
        handles(count),
        1,
        "{who}: count_task handles: {:?}",
        count.events
    );
    let seen = statuses(count);
    assert_eq!(
        seen.last(),
        Some(&TaskStatus::Completed),
        "{who}: count_task statuses {seen:?}"
    );
    assert!(
        seen[..seen.len() - 1]
            .iter()
            .all(|s| *s == TaskStatus::Working),
        "{who}: count_task statuses {seen:?}"
    );
    assert_eq!(
        count.server.calls,
        ["count_task"],
        "{who}: tools/call the server saw"
    );
    assert_eq!(
        (
            count.server.began("count_task"),
            count.server.finished("count_task")
        ),
        (1, 1),
        "{who}: count_task runs"
    );
    let methods = task_methods(who, "count_task", &count.server, &id);
    // One `tasks/get` per report the observer got: each poll reported, none lost or invented.
    assert_eq!(
        methods,
        vec!["tasks/get"; seen.len()],
        "{who}: count_task polls"
    );

    // 2. Resumed from the persisted bytes in another client and session: the same result, the
    // tool not run again, only `tasks/get` about the same task.
    let resumed = ok(who, "resume_task", &o.resumed);
    assert_eq!(texts(resumed), texts(r), "{who}: the resumed task's result");
    let raw = |c: &CallResult| c.structured_content.as_ref().map(|v| v.get().to_owned());
    assert_eq!(
        raw(resumed),
        raw(r),
        "{who}: the resumed task's structured content"
    );
    assert_eq!(
        resumed.is_error, r.is_error,
        "{who}: the resumed task's isError"
    );
    assert!(
        o.resumed.server.calls.is_empty(),
        "{who}: resume sent tools/call: {:?}",
        o.resumed.server.calls
    );
    assert_eq!(
        o.resumed.server.began("count_task"),
        0,
        "{who}: resume ran the tool again"
    );
    let methods = task_methods(who, "resume_task", &o.resumed.server, &id);
    assert_eq!(methods, ["tasks/get"], "{who}: resume polls");
    assert_eq!(
        statuses(&o.resumed),
        [TaskStatus::Completed],
        "{who}: resume statuses"
    );

    // 3. Input: one request (a server-minted key), answered through the observer with one
    // `tasks/update`; the task's next leg greets the name.
    let ask = ok(who, "ask_task", &o.ask);
    assert_eq!(texts(ask), ["Hello, Ada!"], "{who}: ask_task result");
    let rounds: Vec<&Vec<(String, String)>> = o
        .ask
        .events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Input(round) => Some(round),
            _ => None,
        })
        .collect();
    assert_eq!(rounds.len(), 1, "{who}: ask_task input rounds {rounds:?}");
    assert_eq!(
        rounds[0].len(),
        1,
        "{who}: ask_task input requests {rounds:?}"
    );
    assert_eq!(
        rounds[0][0].1, "elicitation/create",
        "{who}: ask_task request method"
    );
    // The handle at creation, and again after the answers (it records the answered key).
    assert_eq!(
        handles(&o.ask),
        2,
        "{who}: ask_task handles {:?}",
        o.ask.events
    );
    assert!(
        matches!(o.ask.events.first(), Some(TaskEvent::Handle { .. })),
        "{who}: ask_task events {:?}",
        o.ask.events
    );
    let seen = statuses(&o.ask);
    assert!(
        seen.contains(&TaskStatus::InputRequired),
        "{who}: ask_task statuses {seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&TaskStatus::Completed),
        "{who}: ask_task statuses {seen:?}"
    );
    let ask_id = task_id(who, "ask_task", &o.ask);
    let methods = task_methods(who, "ask_task", &o.ask.server, &ask_id);
    assert_eq!(
        methods.iter().filter(|m| *m == "tasks/update").count(),
        1,
        "{who}: ask_task requests {methods:?}"
    );
    assert_eq!(
        o.ask.server.calls,
        ["ask_task"],
        "{who}: ask_task tools/call"
    );
    assert_eq!(
        (
            o.ask.server.began("ask_task"),
            o.ask.server.finished("ask_task")
        ),
        (2, 1),
        "{who}: ask_task legs"
    );

    // 4. A failed task: "`failed`: The request failed due to a JSON-RPC error during execution.
    // The task will include the `error` field with the JSON-RPC error details"; the call fails
    // with that error, as the JSON-RPC error of a plain call would.
    match &o.fail.result {
        Err(Error::Rpc(rpc)) => {
            assert_eq!(rpc.code, -32050, "{who}: fail_task code");
            assert_eq!(
                rpc.message, "fail_task always fails",
                "{who}: fail_task message"
            );
            assert_eq!(
                rpc.data.as_deref(),
                Some(r#"{"hint":"deliberate"}"#),
                "{who}: fail_task data"
            );
        }
        other => panic!("{who}: fail_task: {other:?}"),
    }
    assert_eq!(
        statuses(&o.fail).last(),
        Some(&TaskStatus::Failed),
        "{who}: fail_task statuses"
    );
    assert_eq!(o.fail.server.began("fail_task"), 1, "{who}: fail_task runs");

    // 5a. A call that gives up (task_polls 1) does not cancel: one poll, no tasks/cancel.
    match &o.long.result {
        Err(e) => assert_eq!(
            e.budget(),
            Some(BudgetExceeded::new(Budget::TaskPolls, 1)),
            "{who}: long_task with task_polls 1: {e}"
        ),
        Ok(r) => panic!("{who}: long_task with task_polls 1 returned {r:?}"),
    }
    let long_id = task_id(who, "long_task", &o.long);
    let methods = task_methods(who, "long_task", &o.long.server, &long_id);
    assert_eq!(methods, ["tasks/get"], "{who}: long_task requests");
    assert_eq!(
        o.long.server.cancelled("long_task"),
        0,
        "{who}: long_task stopped by giving up"
    );

    // 5b. Cancelled from another session: `tasks/cancel` once, polled to `cancelled`; the
    // server stopped the tool (its worker saw the cancellation). SEP-2663 lets a server do less
    // ("Cancellation is **cooperative**"); this is what this one does.
    match &o.cancel.result {
        Err(Error::Task(TaskError::Cancelled { .. })) => {}
        other => panic!("{who}: cancel_task: {other:?}"),
    }
    let methods = task_methods(who, "cancel_task", &o.cancel.server, &long_id);
    assert_eq!(
        methods.iter().filter(|m| *m == "tasks/cancel").count(),
        1,
        "{who}: cancel requests {methods:?}"
    );
    assert_eq!(
        methods.first().map(String::as_str),
        Some("tasks/cancel"),
        "{who}: cancel requests {methods:?}"
    );
    assert!(
        methods[1..].iter().all(|m| m == "tasks/get"),
        "{who}: cancel requests {methods:?}"
    );
    assert!(
        o.cancel.server.calls.is_empty(),
        "{who}: cancel sent tools/call"
    );
    assert_eq!(
        o.after_cancel.cancelled("long_task"),
        1,
        "{who}: the server's worker was not cancelled"
    );
    assert_eq!(
        o.after_cancel.finished("long_task"),
        0,
        "{who}: long_task finished"
    );

    // 6. The extension not declared. SEP-2663: "A server **MUST NOT** return `CreateTaskResult`
    // to a client that did not include the extension capability on its request, regardless of
    // prior declarations." (The extension's overview: "otherwise, the server either blocks for
    // a regular result as usual or returns a capability error.") An `optional` task tool runs
    // inline and answers its result:
    let plain = ok(who, "count_task (tasks off)", &o.untasked_count);
    assert_eq!(
        texts(plain),
        ["counted to 1"],
        "{who}: count_task (tasks off)"
    );
    assert!(
        o.untasked_count.events.is_empty(),
        "{who}: task events with tasks off: {:?}",
        o.untasked_count.events
    );
    assert!(
        o.untasked_count.server.task_requests.is_empty(),
        "{who}: tasks/* with tasks off"
    );
    assert_eq!(
        o.untasked_count.server.began("count_task"),
        1,
        "{who}: count_task (tasks off) runs"
    );
    // A `required` one is refused with the capability error, naming the extension, and never
    // runs:
    match &o.untasked_required.result {
        Err(Error::MissingClientCapability { required, raw, rpc }) => {
            assert_eq!(rpc.code, -32021, "{who}: required_task (tasks off) code");
            assert_eq!(
                required,
                &["extensions"],
                "{who}: required_task (tasks off)"
            );
            let raw = raw.as_deref().unwrap_or_default();
            assert!(
                raw.contains("io.modelcontextprotocol/tasks"),
                "{who}: required_task (tasks off): {raw}"
            );
        }
        other => panic!("{who}: required_task (tasks off): {other:?}"),
    }
    assert_eq!(
        o.untasked_required.server.calls,
        ["required_task"],
        "{who}: required_task (tasks off) tools/call"
    );
    assert_eq!(
        o.untasked_required.server.began("required_task"),
        0,
        "{who}: required_task ran with tasks off"
    );
    assert!(
        o.untasked_required.server.task_requests.is_empty(),
        "{who}: tasks/* with tasks off"
    );
}

/// A fresh log file for one test's server.
fn log_file(name: &str) -> PathBuf {
    let dir = mcp_sansio_interop::server::install_dir().join("logs");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let path = dir.join(format!("{name}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Runs the task scenario through [`ADAPTERS`] against `server` over `wire`, stops it, and
/// checks each run (reporting every adapter that fails, with the server's output).
fn run_checked(t: &Target, mut server: Server, log: &Path, wire: Wire<'_>, http_version: &str) {
    let url = server.url();
    let observed: Vec<Result<TaskObserved, String>> = ADAPTERS
        .iter()
        .map(|a| {
            std::panic::catch_unwind(|| run_tasks(*a, t, &url, log, wire, SCENARIO_TIME))
                .map_err(|p| panic_text(&*p))
        })
        .collect();
    assert!(
        server.is_running(),
        "{}: server exited\n{}",
        t.label(),
        server.log_text()
    );
    let output = server.log_text();
    drop(server);
    let failures: Vec<String> = observed
        .iter()
        .filter_map(|o| {
            let o = match o {
                Ok(o) => o,
                Err(failed) => return Some(failed.clone()),
            };
            std::panic::catch_unwind(|| {
                assert_eq!(o.http_version, http_version, "{}: HTTP version", o.adapter);
                check_tasks(o);
            })
            .err()
            .map(|p| panic_text(&*p))
        })
        .collect();
    let _ = std::fs::remove_file(log);
    assert!(
        failures.is_empty(),
        "{}:\n{}\n--- server output ---\n{output}",
        t.label(),
        failures.join("\n")
    );
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a check panicked".to_owned())
}

fn over_http1(name: &str, t: Target) {
    let log = log_file(name);
    let args: Vec<&str> = t
        .args
        .iter()
        .copied()
        .chain(["--log-file", log.to_str().unwrap()])
        .collect();
    let server = Server::start(t.peer, &args);
    run_checked(&t, server, &log, Wire::Plain, "HTTP/1.1");
}

/// A new certificate authority and a certificate it issued for 127.0.0.1, written as PEM files
/// under `dir`: (CA certificate, server certificate, server key).
fn test_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mcp-sansio interop CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, leaf.pem()).unwrap();
    std::fs::write(&paths.2, leaf_key.serialize_pem()).unwrap();
    paths
}

/// Under hypercorn over TLS, ALPN `h2` first: the scenario must run on HTTP/2.
fn over_tls_h2(name: &str, t: Target) {
    let dir = mcp_sansio_interop::server::install_dir()
        .join("tls")
        .join(format!("{name}-{}", std::process::id()));
    let (ca, cert, key) = test_ca(&dir);
    struct RemoveOnDrop<'a>(&'a Path);
    impl Drop for RemoveOnDrop<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    let _cleanup = RemoveOnDrop(&dir);
    let log = log_file(name);
    let args: Vec<&str> = t
        .args
        .iter()
        .copied()
        .chain(["--log-file", log.to_str().unwrap()])
        .chain([
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ])
        .collect();
    let server = Server::start_tls(t.peer, &args);
    run_checked(&t, server, &log, Wire::Tls(&ca), "HTTP/2");
}

#[test]
fn fastmcp_tasks_modern_sse() {
    over_http1("fastmcp_tasks_modern_sse", modern(&[]));
}

#[test]
fn fastmcp_tasks_modern_sse_over_tls_h2() {
    over_tls_h2("fastmcp_tasks_modern_sse_over_tls_h2", modern(&[]));
}

#[test]
fn fastmcp_tasks_modern_stateless_json() {
    over_http1(
        "fastmcp_tasks_modern_stateless_json",
        Target {
            stream: mcp_sansio_interop::Stream::Json,
            stateful: false,
            ..modern(&["--stateless", "--json"])
        },
    );
}

/// The legacy (2025-11-25) facts of one adapter's run: the listing gives each tool's
/// `taskSupport` as the server wrote it, the `required` tool is refused before it is sent, the
/// others are called as plain tools (their results `want`).
fn check_legacy(o: &LegacyObserved, support: &[(&str, Option<&str>)], want: &[(&str, &str)]) {
    let who = o.adapter;
    assert_eq!(o.version, "2025-11-25", "{who}: version");
    let catalog = match &o.catalog {
        Ok(c) => c,
        Err(e) => panic!("{who}: tools/list: {e}"),
    };
    for (name, ts) in support {
        let tool = catalog
            .tools
            .iter()
            .find(|t| t.name() == *name)
            .unwrap_or_else(|| panic!("{who}: {name} not listed"));
        assert_eq!(
            tool.task_support().as_deref(),
            *ts,
            "{who}: {name} taskSupport"
        );
    }
    // 2025-11-25: "`"required"`: clients MUST invoke the tool as a task. Servers MUST return a
    // `-32601` (Method not found) error if a client does not attempt to do so." This client
    // does not speak that flow (docs/tasks.md): it refuses the call before sending it.
    let (name, required) = &o.calls[0];
    match required {
        Err(Error::Task(TaskError::LegacyTaskRequired { tool })) => {
            assert_eq!(tool, name, "{who}: the refused tool")
        }
        other => panic!("{who}: {name}: {other:?}"),
    }
    for ((name, r), (want_name, want_text)) in o.calls[1..].iter().zip(want) {
        assert_eq!(name, want_name, "{who}: call order");
        match r {
            Ok(r) => {
                assert!(!r.is_error, "{who}: {name} isError: {r:?}");
                assert_eq!(texts(r), [*want_text], "{who}: {name}");
            }
            Err(e) => panic!("{who}: {name}: {e} ({})", e.kind()),
        }
    }
    assert_eq!(o.calls.len(), want.len() + 1, "{who}: calls");
}

/// TypeScript SDK v1 1.32.2, the only SDK serving the 2025-11-25 experimental tasks
/// (`registerToolTask`, `--tasks`): the `required` tool is refused before sending (the server's
/// own record of `tools/call` names lacks it), `optional` and `forbidden` ones are called
/// plainly (the SDK runs the `optional` one as a task of its own and answers its result).
#[test]
fn ts_v1_legacy_task_support() {
    let t = Target {
        peer: TsV1,
        args: &["--tasks"],
        era: Legacy,
        stream: Sse,
        stateful: true,
        negotiated: false,
        legacy_version: None,
    };
    let mut server = t.start();
    let url = server.url();
    const CALLS: &[&str] = &["required_task", "optional_task", "forbidden_task"];
    let mut failures = Vec::new();
    for a in ADAPTERS {
        let run = std::panic::catch_unwind(|| {
            let o = run_legacy(*a, &t, &url, CALLS, true, SCENARIO_TIME);
            check_legacy(
                &o,
                &[
                    ("required_task", Some("required")),
                    ("optional_task", Some("optional")),
                    ("forbidden_task", Some("forbidden")),
                ],
                &[
                    ("optional_task", "optional ran"),
                    ("forbidden_task", "forbidden ran"),
                ],
            );
            assert_eq!(
                o.call_log,
                Some(Ok(vec![
                    "optional_task".to_owned(),
                    "forbidden_task".to_owned(),
                    "call_log".to_owned()
                ])),
                "{}: the tools/call the server received",
                o.adapter
            );
        });
        if let Err(p) = run {
            failures.push(panic_text(&*p));
        }
    }
    assert!(server.is_running(), "server exited\n{}", server.log_text());
    let output = server.log_text();
    drop(server);
    assert!(
        failures.is_empty(),
        "{}:\n{}\n--- server output ---\n{output}",
        t.label(),
        failures.join("\n")
    );
}

/// `fastmcp-tasks` in the 2025 era lists the 2025-11-25 `execution.taskSupport` of its task
/// tools but declares no `tasks` capability and serves none of that flow. 2025-11-25: "If a
/// server's capabilities do not include `tasks.requests.tools.call`, then clients **MUST NOT**
/// attempt to use task augmentation on that server's tools, regardless of the
/// `execution.taskSupport` value": the client calls even the `required` tool plainly, and the
/// server answers it with the SEP-2663 capability error (`-32021` naming the extension, not the
/// `-32601` of 2025-11-25) without running it; the `optional` one runs inline.
#[test]
fn fastmcp_tasks_legacy_task_support() {
    let t = Target {
        peer: FastMcpTasks,
        args: &[],
        era: Legacy,
        stream: Sse,
        stateful: true,
        negotiated: false,
        legacy_version: None,
    };
    let log = log_file("fastmcp_tasks_legacy_task_support");
    let mut server = Server::start(t.peer, &["--log-file", log.to_str().unwrap()]);
    let url = server.url();
    const CALLS: &[&str] = &["required_task", "count_task"];
    let mut failures = Vec::new();
    for a in ADAPTERS {
        let run = std::panic::catch_unwind(|| {
            let before = server_log(&log).unwrap();
            let o = run_legacy(*a, &t, &url, CALLS, false, SCENARIO_TIME);
            let seen = server_log(&log).unwrap().since(&before);
            let who = o.adapter;
            assert_eq!(o.version, "2025-11-25", "{who}: version");
            let catalog = o
                .catalog
                .as_ref()
                .unwrap_or_else(|e| panic!("{who}: tools/list: {e}"));
            for (name, ts) in [
                ("required_task", Some("required")),
                ("count_task", Some("optional")),
                ("echo", None),
            ] {
                let tool = catalog
                    .tools
                    .iter()
                    .find(|t| t.name() == name)
                    .unwrap_or_else(|| panic!("{who}: {name} not listed"));
                assert_eq!(
                    tool.task_support().as_deref(),
                    ts,
                    "{who}: {name} taskSupport"
                );
            }
            match &o.calls[0].1 {
                Err(Error::MissingClientCapability { required, rpc, .. }) => {
                    assert_eq!(rpc.code, -32021, "{who}: required_task code");
                    assert_eq!(required, &["extensions"], "{who}: required_task");
                }
                other => panic!("{who}: required_task: {other:?}"),
            }
            match &o.calls[1].1 {
                Ok(r) => assert_eq!(texts(r), ["counted to 3"], "{who}: count_task"),
                Err(e) => panic!("{who}: count_task: {e}"),
            }
            assert_eq!(
                seen.calls,
                ["required_task", "count_task"],
                "{who}: the tools/call the server received"
            );
            assert_eq!(seen.began("required_task"), 0, "{who}: required_task ran");
            assert!(
                seen.task_requests.is_empty(),
                "{}: tasks/* in the 2025 era",
                o.adapter
            );
        });
        if let Err(p) = run {
            failures.push(panic_text(&*p));
        }
    }
    assert!(server.is_running(), "server exited\n{}", server.log_text());
    let output = server.log_text();
    drop(server);
    let _ = std::fs::remove_file(&log);
    assert!(
        failures.is_empty(),
        "{}:\n{}\n--- server output ---\n{output}",
        t.label(),
        failures.join("\n")
    );
}
