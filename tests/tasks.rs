//! The client's duties for tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension),
//! each against a scripted server, whole and split: the connection follows a `tools/call`
//! answered with a `CreateTaskResult` to its end. The quotes are from
//! `seps/2663-tasks-extension.md` of the specification repository.

mod support;

use std::time::Duration;

use mcp_sansio::task::{TaskError, TaskHandle, TaskStatus};
use mcp_sansio::{Budget, Config, ConnectionState, Error, Event, Instant};
use support::tasks::{reply, started_with, tasks_config};
use support::*;

pub const CREATED: &str =
    r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":null,"pollIntervalMs":2000}"#;

fn started(split: Split) -> Harness {
    started_with(tasks_config(), split, CREATED)
}

/// Waits for the next request (the clock moves to each deadline the connection asks for).
fn next_request(h: &mut Harness) -> SentRequest {
    for _ in 0..8 {
        if h.has_outstanding() {
            return h.next();
        }
        assert!(h.advance_to_timeout(), "something waits on time");
    }
    panic!("no request came");
}

fn working(r: &SentRequest) -> String {
    let _ = r;
    r#"{"resultType":"complete","taskId":"t1","status":"working","ttlMs":null,"pollIntervalMs":2000}"#
        .to_owned()
}

fn completed(is_error: bool) -> String {
    format!(
        r#"{{"taskId":"t1","status":"completed","ttlMs":null,"result":{{"content":[{{"type":"text","text":"done"}}],"isError":{is_error}}}}}"#
    )
}

fn failure(h: &mut Harness) -> Error {
    let events = h.take_events();
    events
        .into_iter()
        .find_map(|e| match e {
            Event::Failed { error, .. } => Some(error),
            _ => None,
        })
        .expect("the call failed")
}

/// "Clients MUST include the extension capability in each request's client capabilities":
/// `_meta["io.modelcontextprotocol/clientCapabilities"].extensions["io.modelcontextprotocol/
/// tasks"]`, only with tasks on; and the 2025-11-25 `task` parameter is never sent.
#[test]
fn a_call_declares_the_extension_only_with_tasks_on() {
    for (tasks, declared) in [(true, true), (false, false)] {
        let mut h = modern_with(
            Config::new("http://127.0.0.1:9/mcp")
                .unwrap()
                .with_tasks(tasks),
            Split::Whole,
        );
        h.call("slow", "{}");
        let r = h.next();
        let j = r.json();
        let ext = &j["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"];
        assert_eq!(ext.is_object(), declared, "tasks {tasks}: {j}");
        assert!(
            j["params"].get("task").is_none(),
            "no 2025-11-25 task parameter"
        );
    }
}

/// "Clients SHOULD persist task IDs to durable storage so that polling can resume after a crash
/// or restart": the handle reaches the embedder as soon as the task exists, before the first
/// `tasks/get` is sent.
#[test]
fn the_handle_comes_before_the_first_poll() {
    for split in SPLITS {
        let mut h = started(split);
        let events = h.take_events();
        let handle = events
            .iter()
            .find_map(|e| match e {
                Event::TaskCreated { handle } => Some((**handle).clone()),
                _ => None,
            })
            .expect("TaskCreated");
        assert_eq!(handle.id().as_str(), "t1");
        assert!(!h.has_outstanding(), "no poll before the handle is out");
        assert_eq!(h.conn.state(), ConnectionState::TaskWaiting);
        // The handle survives its bytes (what is persisted).
        assert_eq!(TaskHandle::from_bytes(&handle.to_bytes()).unwrap(), handle);
        let r = next_request(&mut h);
        assert_eq!(r.rpc_method(), "tasks/get");
    }
}

/// "Clients SHOULD respect the `pollIntervalMs`"; `tasks/get` carries "`Mcp-Name` … the value of
/// `params.taskId`", `Mcp-Method`, and the full `_meta`.
#[test]
fn polls_wait_the_interval_and_carry_the_routing_headers() {
    for split in SPLITS {
        let mut h = started(split);
        let t0 = h.now;
        // 2000 ms asked: nothing before it.
        h.advance_to(t0 + Duration::from_millis(1999));
        assert!(!h.has_outstanding());
        h.advance_to(t0 + Duration::from_millis(2000));
        let r = h.next();
        assert_eq!(r.rpc_method(), "tasks/get");
        assert_eq!(r.header("mcp-method"), Some("tasks/get"));
        assert_eq!(r.header("mcp-name"), Some("t1"));
        let j = r.json();
        assert_eq!(j["params"]["taskId"], "t1");
        let meta = &j["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"]["extensions"]
                ["io.modelcontextprotocol/tasks"]
                .is_object()
        );
        assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
    }
}

/// "`completed`: The request completed successfully and results are available in the `result`
/// field", a `CallToolResult`: a tool error (`isError`) stays a result, not an error.
#[test]
fn completed_ends_the_call_with_its_result() {
    for split in SPLITS {
        for is_error in [false, true] {
            let mut h = started(split);
            let r = next_request(&mut h);
            reply(&mut h, &r, &working(&r));
            let r = next_request(&mut h);
            reply(&mut h, &r, &completed(is_error));
            let result = h
                .take_events()
                .into_iter()
                .find_map(|e| match e {
                    Event::CallFinished(r) => Some(r),
                    _ => None,
                })
                .expect("CallFinished");
            assert_eq!(result.is_error, is_error);
            assert_eq!(result.content.len(), 1);
            assert_eq!(h.conn.state(), ConnectionState::Ready);
            assert!(!h.has_outstanding(), "no poll after a terminal status");
        }
    }
}

/// "`failed`: The request failed due to a JSON-RPC error during execution"; "`cancelled`"
/// is terminal too; "Invalid or nonexistent `taskId`: `-32602`" ends it.
#[test]
fn failed_cancelled_and_unknown_end_the_call_typed() {
    for split in SPLITS {
        let mut h = started(split);
        let r = next_request(&mut h);
        reply(
            &mut h,
            &r,
            r#"{"taskId":"t1","status":"failed","ttlMs":null,"error":{"code":-32603,"message":"boom"}}"#,
        );
        assert!(matches!(failure(&mut h), Error::Rpc(e) if e.code == -32603));

        let mut h = started(split);
        let r = next_request(&mut h);
        reply(
            &mut h,
            &r,
            r#"{"taskId":"t1","status":"cancelled","statusMessage":"stopped","ttlMs":null}"#,
        );
        assert!(matches!(
            failure(&mut h),
            Error::Task(TaskError::Cancelled { message: Some(m) }) if m == "stopped"
        ));

        let mut h = started(split);
        let r = next_request(&mut h);
        h.feed(
            r.exchange,
            &json_response(200, &error_msg(r.rpc_id(), -32602, "no such task", None)),
        );
        assert!(matches!(
            failure(&mut h),
            Error::Task(TaskError::UnknownTask(e)) if e.code == -32602
        ));
        assert_eq!(h.conn.state(), ConnectionState::Ready);
    }
}

const INPUT: &str = r#"{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{"k":{"method":"elicitation/create","params":{"message":"name?"}}}}"#;

/// `input_required`: "Clients SHOULD deduplicate `inputRequests` keys across consecutive polls",
/// answer with `tasks/update {taskId, inputResponses}`, and "Each key MUST correspond to a
/// currently-outstanding inputRequest key".
#[test]
fn input_requests_go_through_the_hook_and_tasks_update() {
    for split in SPLITS {
        let mut h = started(split);
        let created = handle_of(&mut h);
        let r = next_request(&mut h);
        reply(&mut h, &r, INPUT);
        let requests = h
            .take_events()
            .into_iter()
            .find_map(|e| match e {
                Event::InputRequired { requests } => Some(requests),
                _ => None,
            })
            .expect("InputRequired");
        let v: serde_json::Value = serde_json::from_str(requests.get()).unwrap();
        assert_eq!(v["k"]["method"], "elicitation/create");
        h.conn
            .provide_input(h.now, Some(br#"{"k":{"action":"accept","content":{}}}"#));
        h.drain();
        let r = h.next();
        assert_eq!(r.rpc_method(), "tasks/update");
        assert_eq!(r.header("mcp-name"), Some("t1"));
        let j = r.json();
        assert_eq!(j["params"]["taskId"], "t1");
        assert_eq!(j["params"]["inputResponses"]["k"]["action"], "accept");
        let updated = h.take_events().into_iter().any(|e| {
            matches!(&e, Event::TaskHandleUpdated { handle } if **handle != created
                && handle.id() == created.id())
        });
        assert!(updated, "the handle records the answered key");
        reply(&mut h, &r, r#"{"resultType":"complete"}"#);
        // The acknowledgement is eventually consistent: the key listed again is not presented
        // again.
        let r = next_request(&mut h);
        assert_eq!(r.rpc_method(), "tasks/get");
        reply(&mut h, &r, INPUT);
        assert!(!h
            .take_events()
            .iter()
            .any(|e| matches!(e, Event::InputRequired { .. })));
        assert_eq!(h.conn.state(), ConnectionState::TaskWaiting);
        let r = next_request(&mut h);
        reply(&mut h, &r, &completed(false));
        assert!(h
            .take_events()
            .iter()
            .any(|e| matches!(e, Event::CallFinished(_))));
    }
}

/// Refusal by default: without the input hook a task's input requests fail the call, as a
/// call's own do.
#[test]
fn input_requests_without_a_hook_fail_the_call() {
    let mut config = tasks_config();
    config.input_hook = false;
    let mut h = started_with(config, Split::Whole, CREATED);
    let r = next_request(&mut h);
    reply(&mut h, &r, INPUT);
    assert!(matches!(
        failure(&mut h),
        Error::InvalidAnswer { reason, .. } if reason.contains("elicitation/create")
    ));
}

/// "Key uniqueness for task `inputRequests` is scoped to the lifetime of the task and does not
/// extend to keys from the preceding MRTR phase": a key answered in an MRTR round before the
/// task is presented again when the task asks it.
#[test]
fn mrtr_keys_before_the_task_are_another_space() {
    let mut h = modern_with(tasks_config(), Split::Whole);
    h.call("slow", "{}");
    let r = h.next();
    reply(
        &mut h,
        &r,
        r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#,
    );
    h.take_events();
    h.conn
        .provide_input(h.now, Some(br#"{"k":{"action":"accept"}}"#));
    h.drain();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    reply(&mut h, &r, CREATED);
    let r = next_request(&mut h);
    reply(&mut h, &r, INPUT);
    assert!(h
        .take_events()
        .iter()
        .any(|e| matches!(e, Event::InputRequired { .. })));
}

/// "`notifications/cancelled` MUST NOT be used for task cancellation"; cancellation is
/// eventually consistent, so the client keeps polling to a terminal status.
#[test]
fn cancel_sends_tasks_cancel_and_polls_to_the_end() {
    for split in SPLITS {
        let mut h = started(split);
        let r = next_request(&mut h);
        // A poll in flight is given up for the cancellation.
        h.conn.cancel_task(h.now).unwrap();
        h.drain();
        assert!(h.abandoned.contains(&r.exchange));
        let c = h.next();
        assert_eq!(c.rpc_method(), "tasks/cancel");
        assert_eq!(c.header("mcp-name"), Some("t1"));
        assert_eq!(c.json()["params"]["taskId"], "t1");
        reply(&mut h, &c, r#"{"resultType":"complete"}"#);
        let r = next_request(&mut h);
        assert_eq!(r.rpc_method(), "tasks/get");
        reply(&mut h, &r, &working(&r));
        let r = next_request(&mut h);
        reply(
            &mut h,
            &r,
            r#"{"taskId":"t1","status":"cancelled","ttlMs":null}"#,
        );
        assert!(matches!(
            failure(&mut h),
            Error::Task(TaskError::Cancelled { .. })
        ));
        assert!(!h
            .sent
            .iter()
            .any(|r| r.rpc_method() == "notifications/cancelled"));
    }
}

/// The cancellation is bounded: no terminal status within `task_cancel_time` fails the call.
#[test]
fn a_cancellation_that_never_ends_runs_out_of_its_budget() {
    let mut config = tasks_config();
    config.budgets.task_cancel_time = Duration::from_secs(5);
    let mut h = started_with(config, Split::Whole, CREATED);
    h.conn.cancel_task(h.now).unwrap();
    h.drain();
    let c = h.next();
    reply(&mut h, &c, r#"{"resultType":"complete"}"#);
    for _ in 0..20 {
        if h.conn.state() == ConnectionState::Dead {
            break;
        }
        match h.has_outstanding() {
            true => {
                let r = h.next();
                reply(&mut h, &r, &working(&r));
            }
            false => assert!(h.advance_to_timeout()),
        }
    }
    assert_eq!(
        failure(&mut h).budget().map(|b| b.budget),
        Some(Budget::TaskCancelTime)
    );
}

/// Dropping a task operation does not cancel it: `abandon` and `close` send nothing about the
/// task (neither `tasks/cancel` nor `notifications/cancelled`); the handle resumes it.
#[test]
fn abandon_and_close_do_not_cancel_the_task() {
    for close in [false, true] {
        let mut h = started(Split::Whole);
        let sent = h.sent.len();
        if close {
            h.close();
        } else {
            h.conn.abandon(h.now);
            h.drain();
        }
        assert!(matches!(failure(&mut h), Error::Abandoned | Error::Closed));
        h.advance(Duration::from_secs(120));
        assert_eq!(h.sent.len(), sent, "nothing sent: {:?}", &h.sent[sent..]);
    }
}

fn handle_of(h: &mut Harness) -> TaskHandle {
    h.take_events()
        .into_iter()
        .find_map(|e| match e {
            Event::TaskCreated { handle } => Some(*handle),
            _ => None,
        })
        .expect("TaskCreated")
}

/// A handle resumes the task on a fresh connection (another session or process): it polls at
/// once and ends the call as the first connection would have.
#[test]
fn a_fresh_connection_resumes_from_the_handle() {
    for split in SPLITS {
        let mut first = started(split);
        let bytes = handle_of(&mut first).to_bytes();
        drop(first);
        let handle = TaskHandle::from_bytes(&bytes).unwrap();
        let mut h = modern_with(tasks_config(), split);
        h.conn.resume_task(h.now, &handle);
        h.drain();
        let r = h.next();
        assert_eq!(r.rpc_method(), "tasks/get");
        assert_eq!(r.json()["params"]["taskId"], "t1");
        reply(&mut h, &r, &completed(false));
        assert!(h
            .take_events()
            .iter()
            .any(|e| matches!(e, Event::CallFinished(_))));
        assert!(
            !h.sent.iter().any(|r| r.rpc_method() == "tools/call"),
            "the tool is not called again"
        );
    }
}

/// "Servers MUST perform authentication and authorization checks on each task-related request":
/// a handle of another authorization context (or server) is refused before anything is sent.
#[test]
fn a_handle_of_another_context_is_refused() {
    let mut first = started(Split::Whole);
    let handle = handle_of(&mut first);
    for config in [
        tasks_config().with_bearer_token("someone-else"),
        Config::new("http://127.0.0.1:9/other")
            .unwrap()
            .with_tasks(true),
    ] {
        let mut h = modern_with(config, Split::Whole);
        let sent = h.sent.len();
        h.conn.resume_task(h.now, &handle);
        h.drain();
        assert!(matches!(failure(&mut h), Error::Task(TaskError::Handle(_))));
        assert_eq!(h.sent.len(), sent);
    }
}

/// A handle's task id meets the resuming connection's `task_id_bytes` as an id the server sends
/// does: a handle is read from the embedder's storage, which may hold an id longer than this
/// connection allows; nothing is sent for it.
#[test]
fn a_handle_whose_id_exceeds_the_budget_is_refused() {
    let mut first = started(Split::Whole);
    let handle = handle_of(&mut first);
    let id_len = handle.id().as_str().len();
    let mut config = tasks_config();
    config.budgets.task_id_bytes = id_len - 1;
    let mut h = modern_with(config, Split::Whole);
    let sent = h.sent.len();
    h.conn.resume_task(h.now, &handle);
    h.drain();
    assert_eq!(
        failure(&mut h).budget().map(|b| b.budget),
        Some(Budget::TaskIdBytes)
    );
    assert_eq!(h.sent.len(), sent);
    // At the budget, the same handle is resumed.
    let mut config = tasks_config();
    config.budgets.task_id_bytes = id_len;
    let mut h = modern_with(config, Split::Whole);
    let sent = h.sent.len();
    h.conn.resume_task(h.now, &handle);
    h.drain();
    assert_eq!(h.sent.len(), sent + 1, "a tasks/get");
}

/// A handle past its task's deadline is not polled: `task_time` counts from creation, across
/// processes (on the Unix clock the connection is given).
#[test]
fn a_handle_past_its_deadline_is_refused() {
    let mut first = started(Split::Whole);
    let handle = handle_of(&mut first);
    let mut h = modern_with(tasks_config(), Split::Whole);
    h.conn
        .set_unix_at_zero(Duration::from_millis(handle.deadline_unix_ms() + 1));
    h.conn.resume_task(h.now, &handle);
    h.drain();
    assert_eq!(
        failure(&mut h).budget().map(|b| b.budget),
        Some(Budget::TaskTime)
    );
}

/// Re-issuing `tasks/get` after a broken stream is safe (a new id); a `tools/call` that declared
/// the extension and whose stream broke after it was sent is not re-sent: it may have created a
/// task, and a second call would start a second one.
#[test]
fn a_broken_poll_is_reissued_and_a_broken_creation_is_not() {
    let mut h = started(Split::Whole);
    let r = next_request(&mut h);
    // The stream breaks after its head: the server may have processed the poll.
    h.feed(
        r.exchange,
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
    );
    h.eof(r.exchange);
    let again = h.next();
    assert_eq!(again.rpc_method(), "tasks/get");
    assert_ne!(again.rpc_id(), r.rpc_id());
    reply(&mut h, &again, &completed(false));
    assert!(h
        .take_events()
        .iter()
        .any(|e| matches!(e, Event::CallFinished(_))));

    let mut h = modern_with(tasks_config(), Split::Whole);
    h.call("slow", "{}");
    let r = h.next();
    h.feed(
        r.exchange,
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
    );
    h.eof(r.exchange);
    assert!(matches!(
        failure(&mut h),
        Error::Task(TaskError::CreationLost)
    ));
    let calls = h
        .sent
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .count();
    assert_eq!(calls, 1, "not re-sent");
}

/// Without tasks on, a broken modern `tools/call` stream is re-issued as before.
#[test]
fn without_tasks_a_broken_call_is_reissued() {
    let mut h = modern(Split::Whole);
    h.call("slow", "{}");
    let r = h.next();
    h.feed(
        r.exchange,
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n",
    );
    h.eof(r.exchange);
    assert_eq!(h.next().rpc_method(), "tools/call");
}

/// The task statuses reach the embedder as they come (for a status line).
#[test]
fn each_report_is_an_event() {
    let mut h = started(Split::Whole);
    let r = next_request(&mut h);
    reply(
        &mut h,
        &r,
        r#"{"taskId":"t1","status":"working","statusMessage":"step\u0007 1","ttlMs":null}"#,
    );
    let status = h.take_events().into_iter().find_map(|e| match e {
        Event::TaskStatus { status, message } => Some((status, message)),
        _ => None,
    });
    assert_eq!(
        status,
        Some((TaskStatus::Working, Some("step\u{fffd} 1".to_owned())))
    );
    let _ = Instant::ZERO;
}

/// "Clients SHOULD deduplicate `inputRequests` keys across consecutive polls to avoid presenting
/// the same request to the user or model more than once": a key presented and not answered is
/// not presented again; only new keys are.
#[test]
fn only_new_keys_are_presented() {
    let ask = |keys: &[&str]| {
        let reqs: Vec<String> = keys
            .iter()
            .map(|k| format!(r#""{k}":{{"method":"elicitation/create","params":{{}}}}"#))
            .collect();
        format!(
            r#"{{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{{{}}}}}"#,
            reqs.join(",")
        )
    };
    let presented = |h: &mut Harness| -> Vec<String> {
        h.take_events()
            .into_iter()
            .filter_map(|e| match e {
                Event::InputRequired { requests } => Some(requests),
                _ => None,
            })
            .flat_map(|r| {
                let v: serde_json::Value = serde_json::from_str(r.get()).unwrap();
                v.as_object().unwrap().keys().cloned().collect::<Vec<_>>()
            })
            .collect()
    };
    for split in SPLITS {
        let mut h = started(split);
        let r = next_request(&mut h);
        reply(&mut h, &r, &ask(&["a", "b"]));
        assert_eq!(presented(&mut h), ["a", "b"]);
        h.conn
            .provide_input(h.now, Some(br#"{"a":{"action":"accept"}}"#));
        h.drain();
        let u = h.next();
        assert_eq!(u.rpc_method(), "tasks/update");
        reply(&mut h, &u, "{}");
        let r = next_request(&mut h);
        reply(&mut h, &r, &ask(&["a", "b"]));
        assert!(presented(&mut h).is_empty());
        let r = next_request(&mut h);
        reply(&mut h, &r, &ask(&["b", "c"]));
        assert_eq!(presented(&mut h), ["c"]);
    }
}

/// A `CreateTaskResult` whose `resultType` is escaped is read as the string it spells.
#[test]
fn an_escaped_result_type_creates_the_task() {
    let created = r#"{"resultType":"t\u0061sk","taskId":"t1","status":"working","ttlMs":null}"#;
    let mut h = started_with(tasks_config(), Split::Whole, created);
    assert_eq!(handle_of(&mut h).id().as_str(), "t1");
}

/// "Internal errors: `-32603`" stays a JSON-RPC error; `-32021` (the extension not declared on a
/// `tasks/*` request) is read as a missing client capability.
#[test]
fn task_request_errors_map_to_their_kinds() {
    let mut h = started(Split::Whole);
    let r = next_request(&mut h);
    h.feed(
        r.exchange,
        &json_response(200, &error_msg(r.rpc_id(), -32603, "internal", None)),
    );
    assert!(matches!(failure(&mut h), Error::Rpc(e) if e.code == -32603));
    let mut h = started(Split::Whole);
    let r = next_request(&mut h);
    h.feed(
        r.exchange,
        &json_response(
            400,
            &error_msg(r.rpc_id(), -32021, "missing capability", None),
        ),
    );
    assert!(matches!(
        failure(&mut h),
        Error::MissingClientCapability { .. }
    ));
}

/// "Clients SHOULD track `inputRequests` keys to avoid responding to requests more than once",
/// across processes too: a task resumed from the handle persisted after a `tasks/update` never
/// presents (nor answers) the keys answered before.
#[test]
fn a_resumed_task_never_answers_a_key_twice() {
    for split in SPLITS {
        let mut first = started(split);
        let r = next_request(&mut first);
        reply(&mut first, &r, INPUT);
        first.take_events();
        first
            .conn
            .provide_input(first.now, Some(br#"{"k":{"action":"accept"}}"#));
        first.drain();
        let handle = first
            .take_events()
            .into_iter()
            .find_map(|e| match e {
                Event::TaskHandleUpdated { handle } => Some(*handle),
                _ => None,
            })
            .expect("the handle after the answers");
        let bytes = handle.to_bytes();
        drop(first);

        let mut h = modern_with(tasks_config(), split);
        h.conn
            .resume_task(h.now, &TaskHandle::from_bytes(&bytes).unwrap());
        h.drain();
        let r = h.next();
        reply(&mut h, &r, INPUT);
        assert!(!h
            .take_events()
            .iter()
            .any(|e| matches!(e, Event::InputRequired { .. })));
        assert_eq!(h.conn.state(), ConnectionState::TaskWaiting);
        assert!(!h.sent.iter().any(|r| r.rpc_method() == "tasks/update"));
    }
}

/// `cancel_task` without a task is a misuse and sends nothing; a second cancel while one runs
/// sends nothing more.
#[test]
fn cancel_task_needs_a_task_and_cancels_once() {
    let mut h = modern_with(tasks_config(), Split::Whole);
    assert!(matches!(
        h.conn.cancel_task(h.now),
        Err(Error::Misuse { .. })
    ));
    h.drain();
    assert!(!h.has_outstanding());
    let mut h = started(Split::Whole);
    h.conn.cancel_task(h.now).unwrap();
    h.conn.cancel_task(h.now).unwrap();
    h.drain();
    let cancels = h
        .sent
        .iter()
        .filter(|r| r.rpc_method() == "tasks/cancel")
        .count();
    assert_eq!(cancels, 1);
}

/// A refused call result that is not a `CreateTaskResult` keeps the call reader's reason (an
/// array, a `resultType` that is not "task").
#[test]
fn other_refused_results_keep_their_reason() {
    for result in [r#"["task"]"#, r#"{"resultType":"tusk"}"#] {
        let mut h = modern_with(tasks_config(), Split::Whole);
        h.call("slow", "{}");
        let r = h.next();
        reply(&mut h, &r, result);
        assert!(
            matches!(failure(&mut h), Error::InvalidAnswer { .. }),
            "{result}"
        );
    }
}

/// `tasks/get` "MUST return the current state of the task": `get_task` sends one `tasks/get`
/// at once and ends with that report whatever the status. A `working` (or `input_required`)
/// task is not waited for: nothing more is sent however long the clock runs, and the connection
/// is ready for another operation; a `completed` task brings its `CallToolResult`, a `failed`
/// one its JSON-RPC error, as data of the report, not as the operation's failure.
#[test]
fn get_task_reports_one_poll_whatever_the_status() {
    let input = r#"{"resultType":"complete","taskId":"t1","status":"input_required","statusMessage":"say\u001b[31m","ttlMs":60000,"pollIntervalMs":500,"inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}}}"#;
    let failed = r#"{"taskId":"t1","status":"failed","ttlMs":null,"error":{"code":-32000,"message":"broke"}}"#;
    let cancelled = r#"{"taskId":"t1","status":"cancelled","ttlMs":null}"#;
    let cases: [(&str, TaskStatus); 5] = [
        (
            r#"{"resultType":"complete","taskId":"t1","status":"working","ttlMs":60000,"pollIntervalMs":2500}"#,
            TaskStatus::Working,
        ),
        (input, TaskStatus::InputRequired),
        (&completed(true), TaskStatus::Completed),
        (failed, TaskStatus::Failed),
        (cancelled, TaskStatus::Cancelled),
    ];
    for split in SPLITS {
        for (answer, status) in &cases {
            let mut first = started(split);
            let handle = handle_of(&mut first);
            let mut h = modern_with(tasks_config(), split);
            h.conn.get_task(h.now, &handle);
            h.drain();
            let r = h.next();
            assert_eq!(r.rpc_method(), "tasks/get");
            assert_eq!(r.json()["params"]["taskId"], "t1");
            reply(&mut h, &r, answer);
            let events = h.take_events();
            let report = events
                .iter()
                .find_map(|e| match e {
                    Event::TaskReported(r) => Some(r.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{status}: {events:?}"));
            assert_eq!(report.task.status, *status);
            assert!(
                !events.iter().any(|e| matches!(
                    e,
                    Event::Failed { .. } | Event::CallFinished(_) | Event::InputRequired { .. }
                )),
                "{status}: {events:?}"
            );
            match status {
                TaskStatus::Working => {
                    assert_eq!(report.task.ttl_ms, Some(60000));
                    assert_eq!(report.task.poll_interval_ms, Some(2500));
                }
                TaskStatus::InputRequired => {
                    let m = report.task.status_message.as_deref().unwrap();
                    assert!(m.starts_with("say") && !m.contains('\u{1b}'), "{m:?}");
                }
                TaskStatus::Completed => {
                    let result = report.result.as_ref().expect("the result");
                    assert!(result.is_error);
                }
                TaskStatus::Failed => {
                    let error = report.error.as_ref().expect("the error");
                    assert_eq!(error.code, -32000);
                }
                TaskStatus::Cancelled => assert!(report.result.is_none()),
            }
            let sent = h.sent.len();
            h.advance(Duration::from_secs(120));
            assert_eq!(h.sent.len(), sent, "{status}: nothing more is sent");
            assert_eq!(h.conn.state(), ConnectionState::Ready);
        }
    }
}

/// A `get_task` with a handle of another authorization context is refused before anything is
/// sent, as a resume is; an unknown task (`-32602`) fails the operation.
#[test]
fn get_task_refuses_another_context_and_fails_on_an_unknown_task() {
    let mut first = started(Split::Whole);
    let handle = handle_of(&mut first);
    let mut h = modern_with(
        tasks_config().with_bearer_token("someone-else"),
        Split::Whole,
    );
    let sent = h.sent.len();
    h.conn.get_task(h.now, &handle);
    h.drain();
    assert!(matches!(failure(&mut h), Error::Task(TaskError::Handle(_))));
    assert_eq!(h.sent.len(), sent);
    let mut h = modern_with(tasks_config(), Split::Whole);
    h.conn.get_task(h.now, &handle);
    h.drain();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &error_msg(r.rpc_id(), -32602, "no such task", None)),
    );
    assert!(matches!(
        failure(&mut h),
        Error::Task(TaskError::UnknownTask(e)) if e.code == -32602
    ));
}

/// `TaskHandle::rebound` (what a recording holds): the same task, times and answered keys,
/// bound to another configuration's server and authorization context; it passes that
/// configuration's check and no longer the original's.
#[test]
fn a_rebound_handle_belongs_to_the_new_context_only() {
    let mut first = started(Split::Whole);
    let handle = handle_of(&mut first);
    let original = tasks_config();
    let stand_in = Config::new("http://127.0.0.1:9/mcp?key=replay-secret")
        .unwrap()
        .with_tasks(true)
        .with_bearer_token("replay-token");
    assert!(handle.check(&original).is_ok());
    assert!(handle.check(&stand_in).is_err());
    let rebound = handle.rebound(&stand_in).unwrap();
    assert!(rebound.check(&stand_in).is_ok());
    assert!(rebound.check(&original).is_err());
    assert_eq!(rebound.id(), handle.id());
    assert_eq!(rebound.created_unix_ms(), handle.created_unix_ms());
    assert_eq!(rebound.deadline_unix_ms(), handle.deadline_unix_ms());
    assert_eq!(rebound.ttl_ms(), handle.ttl_ms());
    assert_eq!(rebound.server(), "http://127.0.0.1:9/mcp?key=replay-secret");
    let bytes = rebound.to_bytes();
    assert_eq!(TaskHandle::from_bytes(&bytes).unwrap(), rebound);
}
