//! The 2025-11-25 experimental tasks: a tool listed with `execution.taskSupport: "required"` is
//! refused before anything is sent (`TaskError::LegacyTaskRequired`, docs/tasks.md). The quotes
//! are from `docs/specification/2025-11-25/basic/utilities/tasks.mdx` and
//! `schema/2025-11-25/schema.ts` of the specification repository.

mod support;

use mcp_sansio::task::TaskError;
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

fn listed(split: Split) -> (Harness, mcp_sansio::Catalog) {
    let mut h = legacy(split, "2025-11-25");
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

/// "`execution.taskSupport`: `"required"`: clients MUST invoke the tool as a task. Servers MUST
/// return a `-32601` (Method not found) error if a client does not attempt to do so." This client
/// does not speak that flow, so it refuses the call before sending it, naming the tool; nothing
/// reaches the server.
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

/// "`"forbidden"` (default): Clients MUST NOT attempt to invoke the tool as a task";
/// "`"optional"`: Clients MAY invoke the tool as a task or as a normal request": both, and a tool
/// without `execution`, are called as plain tools (no 2025-11-25 `task` parameter).
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
    let mut h = legacy(Split::Whole, "2025-11-25");
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
