//! Walks the transition table of the connection's docs (`src/connection/transitions.md`): for
//! every row, drives a connection into the row's state, applies the input, and checks the next
//! state and the output. A row whose state, input or output this test does not know fails it, so
//! the table cannot name what the code does not do. The other direction (the code makes no
//! transition the table lacks): the machine checks every state change it makes against its own
//! table, the `TRANSITIONS` const (a debug assertion), and the documented table is that const,
//! both ways (`the_documented_table_is_the_machine_s`); every scripted session also checks its
//! state changes against the documented rows (`support::table::TableCheck`).

mod support;

use std::collections::BTreeSet;

use mcp_sansio::h2::{H2Error, Reason};
use mcp_sansio::internals::TRANSITIONS;
use mcp_sansio::wire::WireError;
use mcp_sansio::{Config, ConnectionState, Era, EraHint, Event};
use support::table::{base, rows};
use support::*;

fn config(hint: Option<Era>) -> Config {
    let mut c = Config::new("http://127.0.0.1:9/mcp").unwrap();
    c.input_hook = true;
    c.with_era_hint(hint.map(|era| EraHint {
        era,
        version: match era {
            Era::Modern => "2026-07-28".into(),
            Era::Legacy => "2025-11-25".into(),
        },
    }))
}

/// A connection in `state` (with its qualifier), reached by inputs of the table.
fn drive_to(state: &str) -> Harness {
    let (from, inputs): (&str, &[&str]) = match state {
        "Unconnected" => return Harness::new(config(None), Split::Whole),
        "Unconnected (modern hint)" => {
            return Harness::new(config(Some(Era::Modern)), Split::Whole)
        }
        "Unconnected (legacy hint)" => {
            return Harness::new(config(Some(Era::Legacy)), Split::Whole)
        }
        "Initializing (legacy hint, no modern version offered)" => {
            let mut config = config(Some(Era::Legacy));
            config.modern_versions.clear();
            let mut h = Harness::new(config, Split::Whole);
            apply(&mut h, "`connect`");
            assert_eq!(h.conn.state().name(), base(state), "reaching {state}");
            h.take_events();
            return h;
        }
        "Ready (tasks)" => {
            let mut h = Harness::new(config(None).with_tasks(true), Split::Whole);
            apply(&mut h, "`connect`");
            apply(&mut h, "`result`");
            assert_eq!(h.conn.state().name(), base(state), "reaching {state}");
            h.take_events();
            return h;
        }
        "Ready (pins refuse)" => {
            let config = config(None).with_tool_pins(mcp_sansio::PinPolicy::Refuse);
            let mut h = Harness::new(config, Split::Whole);
            apply(&mut h, "`connect`");
            apply(&mut h, "`result`");
            assert_eq!(h.conn.state().name(), base(state), "reaching {state}");
            h.take_events();
            return h;
        }
        // A call of a tool of this connection's listing (without `x-mcp-header` parameters:
        // under `refuse` every listed tool is a known definition).
        "Calling (pins refuse, a known tool)" => (
            "Ready (pins refuse)",
            &["`list_tools`", "`result`", "`call_tool`"],
        ),
        "Relisting (pins refuse, a known tool)" => {
            ("Calling (pins refuse, a known tool)", &["`-32020`"])
        }
        "Calling (tasks)" => ("Ready (tasks)", &["`call_tool`"]),
        "TaskWaiting" => ("Calling (tasks)", &["`CreateTaskResult`"]),
        "TaskPolling" => ("TaskWaiting", &["`timeout`"]),
        "TaskAwaitingInput" => ("TaskPolling", &["`input_required` task"]),
        "TaskPolling (an update)" => ("TaskAwaitingInput", &["`provide_input`"]),
        "TaskCancelling" => ("TaskWaiting", &["`cancel_task`"]),
        "TaskPolling (a `get_task`)" => ("Ready (tasks)", &["`get_task`"]),
        "Discovering" => ("Unconnected", &["`connect`"]),
        "Resuming (a discovery)" => ("Discovering", &["stream ends after an event id"]),
        "Resuming (an initialization)" => ("Initializing", &["stream ends after an event id"]),
        "Resuming (a re-listing)" => ("Relisting (legacy)", &["stream ends after an event id"]),
        "Confirming (no session id)" => ("Initializing", &["`result` without a session id"]),
        "Discovering (re-negotiating a call)" => ("Calling (modern hint)", &["`400`"]),
        "Confirming (re-negotiating a re-listing)" => (
            "Discovering (re-negotiating a re-listing)",
            &["`404`", "`result`"],
        ),
        "Relisting (legacy)" => ("Confirming (re-negotiating a re-listing)", &["`result`"]),
        "Calling (discover unimplemented)" => {
            ("Discovering", &["`404` with `-32601`", "`call_tool`"])
        }
        "Relisting (discover unimplemented)" => ("Calling (discover unimplemented)", &["`-32020`"]),
        "AwaitingInput (legacy)" => ("Calling (legacy)", &["`input_required` with requests"]),
        "Backoff (legacy)" => (
            "Calling (legacy)",
            &["`input_required` without requests, twice"],
        ),
        "Initializing" => ("Discovering", &["`404`"]),
        "Initializing (legacy hint)" => ("Unconnected (legacy hint)", &["`connect`"]),
        "Confirming" => ("Initializing", &["`result`"]),
        "Ready" => ("Discovering", &["`result`"]),
        "Ready (legacy)" => ("Confirming", &["`result`"]),
        "Listing" => ("Ready", &["`list_tools`"]),
        "Listing (legacy)" => ("Ready (legacy)", &["`list_tools`"]),
        "Listing (modern hint)" => ("Unconnected (modern hint)", &["`connect`", "`list_tools`"]),
        "Listing (discover unimplemented)" => {
            ("Discovering", &["`404` with `-32601`", "`list_tools`"])
        }
        "Listing (legacy, in a new session)" => {
            ("Listing (legacy)", &["`404`", "`result`", "`result`"])
        }
        "Confirming (a new session for a call)" => ("Calling (legacy)", &["`404`", "`result`"]),
        "Ready (legacy, no session id)" => (
            "Initializing",
            &["`result` without a session id", "`result`"],
        ),
        "Listing (legacy, no session id)" => ("Ready (legacy, no session id)", &["`list_tools`"]),
        "Listing (re-negotiated after `-32022`)" => {
            ("Listing", &["`-32022` naming a mutual version", "`result`"])
        }
        "Resuming" => ("Listing (legacy)", &["stream ends after an event id"]),
        "Resuming (a call)" => ("Calling (legacy)", &["stream ends after an event id"]),
        "Discovering (re-negotiating a listing)" => ("Listing (modern hint)", &["`400`"]),
        "Confirming (re-negotiating a listing)" => (
            "Discovering (re-negotiating a listing)",
            &["`404`", "`result`"],
        ),
        "Calling" => ("Ready", &["`call_tool`"]),
        "Calling (legacy)" => ("Ready (legacy)", &["`call_tool`"]),
        "Calling (modern hint)" => ("Unconnected (modern hint)", &["`connect`", "`call_tool`"]),
        "Relisting (modern hint)" => ("Calling (modern hint)", &["`-32020`"]),
        "Discovering (re-negotiating a re-listing)" => ("Relisting (modern hint)", &["`400`"]),
        "AwaitingInput" => ("Calling", &["`input_required` with requests"]),
        "Backoff" => ("Calling", &["`input_required` without requests, twice"]),
        "Relisting" => ("Calling", &["`-32020`"]),
        "Closing" => ("Ready (legacy)", &["`close`"]),
        "Closing (a cancellation open)" => ("Calling (legacy)", &["`abandon`", "`close`"]),
        "Closing (the `DELETE` answered)" => (
            "Closing (a cancellation open)",
            &["the `DELETE`'s `result`"],
        ),
        "Dead" => ("Listing", &["`timeout`"]),
        "Dead (legacy)" => ("Listing (legacy)", &["`timeout`"]),
        "Closed" => ("Ready", &["`close`"]),
        other => panic!("the test cannot reach state {other:?}"),
    };
    let mut h = drive_to(from);
    for input in inputs {
        apply(&mut h, input);
    }
    assert_eq!(h.conn.state().name(), base(state), "reaching {state}");
    h.take_events();
    h
}

/// Answers the oldest outstanding request with `bytes` built from its JSON-RPC id.
fn answer(h: &mut Harness, build: impl FnOnce(&SentRequest) -> Vec<u8>) {
    let mut r = h.next();
    // The standalone stream of a legacy session with the hook on (tests/standalone_get.rs),
    // beside the table's states: this server offers none.
    while r.method == "GET" && r.header("last-event-id").is_none() {
        h.feed(r.exchange, &empty_response(405));
        r = h.next();
    }
    let bytes = build(&r);
    h.feed(r.exchange, &bytes);
}

fn rpc_error(code: i64) -> impl FnOnce(&SentRequest) -> Vec<u8> {
    move |r| json_response(400, &error_msg(r.rpc_id(), code, "refused", None))
}

/// Applies one input of the table.
fn apply(h: &mut Harness, input: &str) {
    match input {
        "`connect`" => h.connect(),
        "`list_tools`" => h.list(),
        "`call_tool`" => h.call("echo", "{}"),
        "`close`" => h.close(),
        "`abandon`" => {
            h.conn.abandon(h.now);
            h.drain();
        }
        "`provide_input`" => {
            h.conn
                .provide_input(h.now, Some(br#"{"k":{"action":"accept"}}"#));
            h.drain();
        }
        "`cancel_task`" => {
            h.conn.cancel_task(h.now).expect("a task runs");
            h.drain();
        }
        "`resume_task`" => {
            let config = h.conn.config().clone();
            let created = r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":null}"#;
            let task = mcp_sansio::task::parse_create_result(created, &config.budgets).unwrap();
            let handle =
                mcp_sansio::task::TaskHandle::new(&config, Era::Modern, "2026-07-28", &task, 0)
                    .unwrap();
            h.conn.resume_task(h.now, &handle);
            h.drain();
        }
        "`get_task`" => {
            let config = h.conn.config().clone();
            let created = r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":null}"#;
            let task = mcp_sansio::task::parse_create_result(created, &config.budgets).unwrap();
            let handle =
                mcp_sansio::task::TaskHandle::new(&config, Era::Modern, "2026-07-28", &task, 0)
                    .unwrap();
            h.conn.get_task(h.now, &handle);
            h.drain();
        }
        "`CreateTaskResult`" => answer(h, |r| {
            let result = r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":null,"pollIntervalMs":1000}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "`working`" => answer(h, |r| {
            let result = r#"{"taskId":"t1","status":"working","ttlMs":null}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "`input_required` task" => answer(h, |r| {
            let result = r#"{"taskId":"t1","status":"input_required","ttlMs":null,"inputRequests":{"k":{"method":"elicitation/create","params":{}}}}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "`completed`" => answer(h, |r| {
            let result = format!(
                r#"{{"taskId":"t1","status":"completed","ttlMs":null,"result":{CALL_OK}}}"#
            );
            json_response(200, &result_msg(r.rpc_id(), &result))
        }),
        "`failed` task" => answer(h, |r| {
            let result = r#"{"taskId":"t1","status":"failed","ttlMs":null,"error":{"code":-32603,"message":"boom"}}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "acknowledgement" => answer(h, |r| {
            json_response(200, &result_msg(r.rpc_id(), r#"{"resultType":"complete"}"#))
        }),
        "`-32602`" => answer(h, |r| {
            json_response(200, &error_msg(r.rpc_id(), -32602, "no such task", None))
        }),
        "`provide_input` declined" => {
            h.conn.provide_input(h.now, None);
            h.drain();
        }
        "`timeout`" => assert!(h.advance_to_timeout(), "something waits on time"),
        "`result`" => answer(h, |r| {
            if r.method == "DELETE" {
                return empty_response(200);
            }
            let result = match r.rpc_method().as_str() {
                "server/discover" => DISCOVER_OK.to_owned(),
                "initialize" => {
                    let body = result_msg(r.rpc_id(), &initialize_ok("2025-11-25"));
                    return json_response_with(200, &[("mcp-session-id", "sess-1")], &body);
                }
                "notifications/initialized" | "notifications/cancelled" => {
                    return empty_response(202)
                }
                "tools/list" => tools_page(&["echo"], None),
                "tools/call" => CALL_OK.to_owned(),
                other => panic!("no result for {other}"),
            };
            json_response(200, &result_msg(r.rpc_id(), &result))
        }),
        "the `DELETE`'s `result`" => {
            let at = h.outstanding.iter().position(|r| r.method == "DELETE");
            let delete = h
                .outstanding
                .remove(at.expect("a DELETE outstanding"))
                .unwrap();
            h.feed(delete.exchange, &empty_response(200));
        }
        "`result` without a session id" => answer(h, |r| {
            json_response(200, &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")))
        }),
        "`result` without the called tool" => answer(h, |r| {
            let page = tools_page(&["other"], None);
            json_response(200, &result_msg(r.rpc_id(), &page))
        }),
        "the operation's deadline passes" => {
            let far = h.now + std::time::Duration::from_secs(24 * 3600);
            h.advance_to(far);
        }
        "`result` with a cursor" => answer(h, |r| {
            let page = tools_page(&["a"], Some("next"));
            json_response(200, &result_msg(r.rpc_id(), &page))
        }),
        "`-32022` naming a mutual version" => answer(h, |r| {
            let data = r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#;
            let body = error_msg(r.rpc_id(), -32022, "Unsupported", Some(data));
            json_response(400, &body)
        }),
        "`-32020`" => answer(h, rpc_error(-32020)),
        "`-32021`" => answer(h, rpc_error(-32021)),
        "`-32600`" => answer(h, rpc_error(-32600)),
        "`-32601`" => answer(h, rpc_error(-32601)),
        "`400`" => answer(h, |_| empty_response(400)),
        "`401`" => answer(h, |_| empty_response(401)),
        "`404`" => answer(h, |_| empty_response(404)),
        "`404` with `-32601`" => answer(h, |r| {
            json_response(
                404,
                &error_msg(r.rpc_id(), -32601, "Method not found", None),
            )
        }),
        "`400` with `-32000`" => answer(h, |r| {
            let body = error_msg(r.rpc_id(), -32000, "Bad Request: No valid session ID", None);
            json_response(400, &body)
        }),
        "`input_required` with requests" => answer(h, |r| {
            let result = r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "`input_required` without requests" => answer(h, |r| {
            let result = r#"{"resultType":"input_required","requestState":"s"}"#;
            json_response(200, &result_msg(r.rpc_id(), result))
        }),
        "`input_required` without requests, twice" => {
            apply(h, "`input_required` without requests");
            apply(h, "`input_required` without requests");
        }
        "stream ends after an event id" => answer(h, |_| {
            sse_response(
                &[("mcp-session-id", "sess-1")],
                "id: ev-1\ndata:\n\n",
                false,
            )
        }),
        "stream refused (HTTP/2 `REFUSED_STREAM`)" => stream_failed(h, Reason::REFUSED_STREAM),
        "stream refused (HTTP/2 `REFUSED_STREAM`), twice" => {
            stream_failed(h, Reason::REFUSED_STREAM);
            stream_failed(h, Reason::REFUSED_STREAM);
        }
        "stream reset (HTTP/2 `INTERNAL_ERROR`)" => stream_failed(h, Reason::INTERNAL_ERROR),
        other => panic!("the test does not know input {other:?}"),
    }
}

/// The oldest outstanding request's stream is reset by the server with `reason` (the wire-neutral
/// input an HTTP/2 socket feeds; the machine does not depend on the wire it came from).
fn stream_failed(h: &mut Harness, reason: Reason) {
    let mut r = h.next();
    // The standalone stream of a legacy session, beside the table's states: none offered.
    while r.method == "GET" && r.header("last-event-id").is_none() {
        h.feed(r.exchange, &empty_response(405));
        r = h.next();
    }
    let error = WireError::Http2(H2Error::Reset { reason });
    h.conn.handle(
        h.now,
        mcp_sansio::Input::WireError {
            exchange: r.exchange,
            error,
            raw: 0,
        },
    );
    h.drain();
}

/// What `h` sent and reported since `sent` requests and `events` events, as the table spells it.
fn output_since(h: &Harness, sent: usize, events: usize) -> Vec<String> {
    let requests = h.sent[sent..].iter().map(|r| match r.method.as_str() {
        "POST" => format!("POST {}", r.rpc_method()),
        "GET" if r.header("last-event-id").is_none() => "GET standalone".to_owned(),
        other => other.to_owned(),
    });
    let reported = h.events[events..]
        .iter()
        .filter(|e| !matches!(e, Event::Progress { .. }))
        .map(|e| {
            let debug = format!("{e:?}");
            debug
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_owned()
        });
    requests.chain(reported).collect()
}

#[test]
fn every_row_of_the_transition_table_holds() {
    let rows = rows();
    assert!(rows.len() >= 40, "the table has its rows: {}", rows.len());
    let mut wrong = Vec::new();
    for row in &rows {
        let mut h = drive_to(&row.state);
        let (sent, events) = (h.sent.len(), h.events.len());
        apply(&mut h, &row.input);
        let next = h.conn.state().name();
        let output = output_since(&h, sent, events);
        if next != row.next || output != row.output {
            wrong.push(format!(
                "{} on {}: {next} {output:?}, the table says {} {:?}",
                row.state, row.input, row.next, row.output
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "rows that do not hold:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_state_the_table_reaches_has_rows_of_its_own() {
    let rows = rows();
    let from: BTreeSet<&str> = rows.iter().map(|r| base(&r.state)).collect();
    for row in &rows {
        assert!(
            from.contains(row.next.as_str()),
            "{} is reached but has no row",
            row.next
        );
    }
    // The table's states are exactly those of the connection.
    let states: BTreeSet<&str> = [
        ConnectionState::Unconnected,
        ConnectionState::Discovering,
        ConnectionState::Initializing,
        ConnectionState::Confirming,
        ConnectionState::Ready,
        ConnectionState::Listing,
        ConnectionState::Relisting,
        ConnectionState::Calling,
        ConnectionState::AwaitingInput,
        ConnectionState::Backoff,
        ConnectionState::TaskWaiting,
        ConnectionState::TaskPolling,
        ConnectionState::TaskAwaitingInput,
        ConnectionState::TaskCancelling,
        ConnectionState::Resuming,
        ConnectionState::Closing,
        ConnectionState::Dead,
        ConnectionState::Closed,
    ]
    .into_iter()
    .map(ConnectionState::name)
    .collect();
    assert_eq!(states.len(), 18);
    assert_eq!(
        from, states,
        "the states with rows are the connection's states"
    );
}

/// The documented table and the machine's (`TRANSITIONS`, against which the connection checks
/// every state change it makes) name the same transitions, both ways: a pair of the machine
/// without a row is a transition the docs hide (and `every_row_of_the_transition_table_holds`
/// walks every row, so each pair is driven), a row without a pair is one the code refuses. This
/// reads only the two tables, whatever the other tests reach.
#[test]
fn the_documented_table_is_the_machine_s() {
    let documented: BTreeSet<(String, String)> = rows()
        .iter()
        .map(|r| (base(&r.state).to_owned(), r.next.clone()))
        .collect();
    let machine: BTreeSet<(String, String)> = TRANSITIONS
        .iter()
        .map(|(from, to)| (from.name().to_owned(), to.name().to_owned()))
        .collect();
    assert_eq!(machine.len(), TRANSITIONS.len(), "no pair listed twice");
    let undocumented: Vec<_> = machine.difference(&documented).collect();
    let refused: Vec<_> = documented.difference(&machine).collect();
    assert!(
        undocumented.is_empty() && refused.is_empty(),
        "transitions without a row: {undocumented:?}; rows the machine does not list: {refused:?}"
    );
}
