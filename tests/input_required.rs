//! Multi round-trip tool calls: `input_required` in every shape.

mod support;

use mcp_sansio::Budget;
use mcp_sansio::{Config, Error, ErrorKind, Event};
use support::*;

fn hooked() -> Config {
    let mut c = Config::new("http://127.0.0.1:9/mcp").unwrap();
    c.input_hook = true;
    c.client_capabilities = r#"{"elicitation":{}}"#.into();
    c
}

#[test]
fn load_shedding_retries_at_once_echoing_the_state_byte_for_byte() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("busy", r#"{"q":1}"#);
        let r = h.next();
        let first = r.rpc_id();
        assert!(r.json()["params"].get("requestState").is_none());
        let state = r#""st\u00e9\/x""#; // escapes must survive verbatim
        let answer = format!(r#"{{"resultType":"input_required","requestState":{state}}}"#);
        h.feed(r.exchange, &json_response(200, &result_msg(first, &answer)));
        assert!(h.take_events().is_empty());
        let r = h.next();
        assert_ne!(r.rpc_id(), first, "a new id");
        let body = String::from_utf8(r.body.clone()).unwrap();
        assert!(
            body.contains(&format!(r#""requestState":{state}"#)),
            "{body}"
        );
        assert!(body.contains(r#""arguments":{"q":1}"#), "{body}");
        assert!(r.json()["params"].get("inputResponses").is_none());
        assert_eq!(r.header("Mcp-Name"), Some("busy"));
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
    }
}

#[test]
fn endless_load_shedding_is_bounded() {
    let mut h = modern(Split::Whole);
    h.call("busy", "{}");
    let mut sent_at = Vec::new();
    loop {
        let waiting = h.events.is_empty() && !h.has_outstanding();
        if waiting && !h.advance_to_timeout() || !h.has_outstanding() && !waiting {
            break;
        }
        if !h.has_outstanding() {
            continue;
        }
        let r = h.next();
        sent_at.push(h.now.as_duration().as_millis());
        assert!(sent_at.len() < 100);
        let answer = r#"{"resultType":"input_required","requestState":"again"}"#;
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), answer)),
        );
    }
    let e = match h.single_event() {
        Event::Failed { error, .. } => error,
        e => panic!("{e:?}"),
    };
    assert_eq!(e.budget().unwrap().budget, Budget::ResponsesPerRequest);
    // One request per response allowed: the first retry at once, then 100 ms doubling.
    assert_eq!(sent_at, [0, 0, 100, 300, 700, 1500, 3100, 5100]);
}

#[test]
fn input_requests_without_a_hook_cannot_be_fulfilled() {
    let mut h = modern(Split::Whole);
    h.call("ask", "{}");
    let r = h.next();
    let answer = r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), answer)),
    );
    match h.single_event() {
        Event::Failed { error, .. } => {
            assert_eq!(error.kind(), ErrorKind::ServerAnswered);
            assert!(error.to_string().contains("elicitation/create"), "{error}");
        }
        e => panic!("{e:?}"),
    }
    assert!(!h.has_outstanding());
}

#[test]
fn the_hook_answers_and_the_retry_carries_responses_and_state() {
    for split in SPLITS {
        let mut h = modern_with(hooked(), split);
        h.call("ask", r#"{"a":true}"#);
        let r = h.next();
        assert_eq!(
            r.json()["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            serde_json::json!({"elicitation":{}})
        );
        let requests = r#"{"login":{"method":"elicitation/create","params":{"mode":"form","message":"user?","requestedSchema":{"type":"object"}}}}"#;
        let answer = format!(
            r#"{{"resultType":"input_required","inputRequests":{requests},"requestState":"blob"}}"#
        );
        let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), &answer));
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        match h.single_event() {
            Event::InputRequired { requests: got } => assert_eq!(got.get(), requests),
            e => panic!("{e:?}"),
        }
        assert!(
            !h.has_outstanding(),
            "nothing is sent until the embedder answers"
        );
        let responses = r#"{"login":{"action":"accept","content":{"name":"octocat"}}}"#;
        h.conn.provide_input(h.now, Some(responses.as_bytes()));
        h.drain();
        let r = h.next();
        let body = String::from_utf8(r.body.clone()).unwrap();
        assert!(
            body.contains(&format!(r#""inputResponses":{responses}"#)),
            "{body}"
        );
        assert!(body.contains(r#""requestState":"blob""#), "{body}");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
    }
}

#[test]
fn requests_without_state_retry_without_state() {
    let mut h = modern_with(hooked(), Split::Whole);
    h.call("ask", "{}");
    let r = h.next();
    let answer = r#"{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), answer)),
    );
    assert!(matches!(h.single_event(), Event::InputRequired { .. }));
    h.conn.provide_input(h.now, Some(br#"{"r":{"roots":[]}}"#));
    h.drain();
    let r = h.next();
    assert!(
        r.json()["params"].get("requestState").is_none(),
        "never invented"
    );
    assert_eq!(
        r.json()["params"]["inputResponses"]["r"]["roots"],
        serde_json::json!([])
    );
}

#[test]
fn declining_bad_answers_and_misuse() {
    let mut h = modern_with(hooked(), Split::Whole);
    h.conn.provide_input(h.now, Some(b"{}"));
    h.drain();
    assert!(matches!(
        h.single_event(),
        Event::Failed {
            error: Error::Misuse { .. },
            ..
        }
    ));
    h.call("ask", "{}");
    let r = h.next();
    let answer =
        r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create"}}}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), answer)),
    );
    h.take_events();
    h.conn.provide_input(h.now, None);
    h.drain();
    match h.single_event() {
        Event::Failed { error, .. } => assert_eq!(error.kind(), ErrorKind::ServerAnswered),
        e => panic!("{e:?}"),
    }
}

#[test]
fn waiting_for_input_is_inside_the_call_budget() {
    let mut h = modern_with(hooked(), Split::Whole);
    h.call("ask", "{}");
    let r = h.next();
    let answer =
        r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create"}}}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), answer)),
    );
    h.take_events();
    assert_eq!(
        h.conn.poll_timeout(),
        Some(mcp_sansio::Instant::ZERO + mcp_sansio::Budgets::default().call_time)
    );
    h.advance_to_timeout();
    match h.single_event() {
        Event::Failed { error, .. } => assert_eq!(error.budget().unwrap().budget, Budget::CallTime),
        e => panic!("{e:?}"),
    }
}

#[test]
fn malformed_input_required_shapes() {
    for answer in [
        r#"{"resultType":"input_required"}"#,
        r#"{"resultType":"input_required","inputRequests":{}}"#,
        r#"{"resultType":"input_required","inputRequests":[1]}"#,
        r#"{"resultType":"input_required","requestState":5}"#,
        r#"{"resultType":"task"}"#,
    ] {
        let mut h = modern(Split::Whole);
        h.call("x", "{}");
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), answer)),
        );
        match h.single_event() {
            Event::Failed { error, .. } => {
                assert_eq!(error.kind(), ErrorKind::ServerAnswered, "{answer}")
            }
            e => panic!("{answer}: {e:?}"),
        }
    }
    // An empty request map with a state is load shedding.
    let mut h = modern(Split::Whole);
    h.call("x", "{}");
    let r = h.next();
    let answer = r#"{"resultType":"input_required","inputRequests":{},"requestState":"s"}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), answer)),
    );
    assert!(h.take_events().is_empty());
    assert!(h.next().json()["params"]["requestState"] == "s");
}
