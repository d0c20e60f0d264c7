//! The 2025-11-25 experimental tasks: a tool listed with `execution.taskSupport: "required"` by a
//! server that declared `tasks.requests.tools.call` is refused before anything is sent
//! (`TaskError::LegacyTaskRequired`, docs/tasks.md). The quotes are from
//! `docs/specification/2025-11-25/basic/utilities/tasks.mdx` ("Tool-Level Negotiation") of the
//! specification repository.

mod support;

use mcp_sansio::task::{declares_legacy_tool_tasks, TaskError};
use mcp_sansio::{Error, Event};
use support::*;

/// A `tools/list` page of the 2025-11-25 shape: `echo` without `execution`, and one tool per
/// `taskSupport` value.
const PAGE: &str = r#"{"tools":[
  {"name":"echo","inputSchema":{"type":"object"}},
  {"name":"forbidden_task","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},
  {"name":"optional_task","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
  {"name":"required_task","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}
]}"#;

/// The capabilities of a 2025-11-25 server that accepts task-augmented `tools/call`.
const TASK_CAPS: &str = r#"{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}"#;

/// A connection that completed a 2025-11-25 handshake with a server of `capabilities`.
fn legacy_with(split: Split, capabilities: &str) -> Harness {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    let init = format!(
        r#"{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"serverInfo":{{"name":"legacy","version":"1"}}}}"#
    );
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "sess-1")],
            &result_msg(r.rpc_id(), &init),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    h.feed(r.exchange, &empty_response(202));
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    h
}

fn listed(split: Split) -> (Harness, mcp_sansio::Catalog) {
    listed_with(split, TASK_CAPS)
}

fn listed_with(split: Split, capabilities: &str) -> (Harness, mcp_sansio::Catalog) {
    let mut h = legacy_with(split, capabilities);
    h.list();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), PAGE)),
    );
    let catalog = match h.single_event() {
        Event::ToolsListed(c) => c,
        other => panic!("{other:?}"),
    };
    (h, catalog)
}

fn refused(h: &mut Harness) -> Error {
    match h.single_event() {
        Event::Failed { error, .. } => error,
        other => panic!("{other:?}"),
    }
}

/// "If a server's capabilities include `tasks.requests.tools.call`, then clients consider the
/// value of `execution.taskSupport` […] If `execution.taskSupport` is `"required"`, clients
/// **MUST** invoke the tool as a task. Servers **MUST** return a `-32601` (Method not found)
/// error if a client does not attempt to do so." This client does not speak that flow, so it
/// refuses the call before sending it, naming the tool; nothing reaches the server.
#[test]
fn a_required_tool_is_refused_before_sending() {
    for split in SPLITS {
        let (mut h, _) = listed(split);
        let sent = h.sent.len();
        h.call("required_task", "{}");
        match refused(&mut h) {
            Error::Task(TaskError::LegacyTaskRequired { tool }) => {
                assert_eq!(tool, "required_task")
            }
            other => panic!("{split:?}: {other:?}"),
        }
        assert_eq!(h.sent.len(), sent, "{split:?}: a request was sent");
        assert!(!h.has_outstanding(), "{split:?}");
    }
}

/// "If `execution.taskSupport` is not present or `"forbidden"`, clients **MUST NOT** attempt to
/// invoke the tool as a task"; "If `execution.taskSupport` is `"optional"`, clients **MAY** invoke
/// the tool as a task or as a normal request": both, and a tool without `execution`, are called
/// as plain tools (no 2025-11-25 `task` parameter).
#[test]
fn optional_and_forbidden_tools_are_called_plainly() {
    for split in SPLITS {
        let (mut h, _) = listed(split);
        for name in ["echo", "forbidden_task", "optional_task"] {
            h.call(name, "{}");
            let r = h.next();
            assert_eq!(r.rpc_method(), "tools/call", "{split:?} {name}");
            let j = r.json();
            assert_eq!(j["params"]["name"], name, "{split:?}");
            assert!(j["params"].get("task").is_none(), "{split:?} {name}: {j}");
            h.answer_call_ok(&r);
        }
    }
}

/// A tool held from that listing and called on another connection is refused the same way.
#[test]
fn a_known_required_tool_is_refused_too() {
    let (_, catalog) = listed(Split::Whole);
    let required = catalog
        .tools
        .iter()
        .find(|t| t.name() == "required_task")
        .unwrap();
    assert_eq!(required.task_support().as_deref(), Some("required"));
    assert_eq!(required.execution(), Some(r#"{"taskSupport":"required"}"#));
    let mut h = legacy_with(Split::Whole, TASK_CAPS);
    let sent = h.sent.len();
    h.conn.call_known_tool(h.now, required, b"{}");
    h.drain();
    assert!(matches!(
        refused(&mut h),
        Error::Task(TaskError::LegacyTaskRequired { .. })
    ));
    assert_eq!(h.sent.len(), sent);
    let optional = catalog
        .tools
        .iter()
        .find(|t| t.name() == "optional_task")
        .unwrap();
    h.conn.call_known_tool(h.now, optional, b"{}");
    h.drain();
    assert_eq!(h.next().rpc_method(), "tools/call");
}

/// SEP-2663 "removes" the experimental version from the core protocol: a 2026-07-28 session
/// calls a tool whatever `execution` its listing says (the server decides per request whether
/// to create a task).
#[test]
fn a_modern_session_calls_a_required_tool() {
    let mut h = modern(Split::Whole);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(
            200,
            &result_msg(
                r.rpc_id(),
                &PAGE.replace(r#"{"tools":["#, r#"{"resultType":"complete","tools":["#),
            ),
        ),
    );
    assert!(matches!(h.single_event(), Event::ToolsListed(_)));
    h.call("required_task", "{}");
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
}

/// An `execution` that is not an object is left out with a note, as other optional members are.
#[test]
fn an_execution_of_another_type_is_ignored() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.list();
    let r = h.next();
    let page =
        r#"{"tools":[{"name":"odd","inputSchema":{"type":"object"},"execution":"required"}]}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), page)),
    );
    let catalog = match h.single_event() {
        Event::ToolsListed(c) => c,
        other => panic!("{other:?}"),
    };
    let odd = &catalog.tools[0];
    assert_eq!(odd.execution(), None);
    assert_eq!(odd.task_support(), None);
    assert_eq!(
        odd.notes(),
        [mcp_sansio::ToolNote::FieldIgnored { field: "execution" }]
    );
    h.call("odd", "{}");
    assert_eq!(h.next().rpc_method(), "tools/call");
}

/// "If a server's capabilities do not include `tasks.requests.tools.call`, then clients **MUST
/// NOT** attempt to use task augmentation on that server's tools, regardless of the
/// `execution.taskSupport` value": without the capability, even a `required` tool is called as
/// a normal request (as a plain call, what the server answers is its own).
#[test]
fn without_the_capability_task_support_does_not_count() {
    for caps in [
        r#"{"tools":{}}"#,
        r#"{"tools":{},"tasks":{}}"#,
        r#"{"tools":{},"tasks":{"requests":{"tools":{"call":null}}}}"#,
        r#"{"tools":{},"tasks":{"requests":{"sampling":{"createMessage":{}}}}}"#,
    ] {
        let (mut h, catalog) = listed_with(Split::Whole, caps);
        h.call("required_task", "{}");
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/call", "{caps}");
        assert!(r.json()["params"].get("task").is_none(), "{caps}");
        h.answer_call_ok(&r);
        let required = catalog
            .tools
            .iter()
            .find(|t| t.name() == "required_task")
            .unwrap();
        h.conn.call_known_tool(h.now, required, b"{}");
        h.drain();
        assert_eq!(h.next().rpc_method(), "tools/call", "{caps}");
    }
}

/// The capability read from a server's `capabilities`: present and not `null`; anything else, or
/// unreadable JSON, declares nothing.
#[test]
fn the_tool_tasks_capability_is_read_exactly() {
    assert!(declares_legacy_tool_tasks(TASK_CAPS));
    assert!(declares_legacy_tool_tasks(
        r#"{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{"x":1}}}}}"#
    ));
    for no in [
        "{}",
        r#"{"tasks":null}"#,
        r#"{"tasks":{"requests":{"tools":{}}}}"#,
        r#"{"tasks":{"requests":{"tools":{"call":null}}}}"#,
        r#"{"tasks":{"requests":{"tools":{"list":{}}}}}"#,
        r#"{"tasks":5}"#,
        "not json",
    ] {
        assert!(!declares_legacy_tool_tasks(no), "{no}");
    }
}
