//! The connection's one pin rule: under the tool-pin policy `refuse`, a call made with a known
//! definition of its tool (this connection's listing, annotated or not) that meets `-32020` is
//! not sent again
//! with the re-listed definition. 2026-07-28 (SEP-2243): `-32020` (HeaderMismatch) means a
//! `Mcp-Param-*` header did not match what the server expects, i.e. the server's `x-mcp-header`
//! parameters of the tool, part of its input schema, are no longer the ones the call was made
//! with: the tool changed. Fed whole and one byte at a time.

mod support;

use mcp_sansio::{Config, Error, Event, Operation, PinPolicy};
use support::*;

/// The tool `echo` with an `x-mcp-header` parameter named `header`.
fn page(header: &str) -> String {
    format!(
        r#"{{"tools":[{{"name":"echo","inputSchema":{{"type":"object","properties":{{"r":{{"type":"string","x-mcp-header":"{header}"}}}}}}}}]}}"#
    )
}

/// The tool `echo` with no `x-mcp-header` parameter.
const PLAIN: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"r":{"type":"string"}}}}]}"#;

/// Lists, then calls `echo` (known from the listing) and answers `-32020`, then the re-listing
/// with a changed tool; returns the events after the mismatch and the methods sent after it.
fn mismatch(policy: PinPolicy, split: Split) -> (Vec<Event>, Vec<String>) {
    mismatch_from(&page("Region"), policy, split)
}

/// As [`mismatch`], the first listing being `first`.
fn mismatch_from(first: &str, policy: PinPolicy, split: Split) -> (Vec<Event>, Vec<String>) {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_tool_pins(policy);
    let mut h = modern_with(config, split);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), first)),
    );
    assert!(matches!(h.single_event(), Event::ToolsListed(_)));
    h.call("echo", r#"{"r":"eu"}"#);
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &page("Area"))),
    );
    let mut sent = Vec::new();
    while h.has_outstanding() {
        let r = h.next();
        sent.push(r.rpc_method().to_owned());
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
    }
    (h.take_events(), sent)
}

#[test]
fn refuse_fails_the_call_instead_of_sending_it_again() {
    for split in [Split::Whole, Split::Bytes] {
        let (events, sent) = mismatch(PinPolicy::Refuse, split);
        assert!(
            sent.is_empty(),
            "nothing sent after the re-listing: {sent:?}"
        );
        match &events[..] {
            [Event::Failed {
                operation: Operation::CallTool,
                error:
                    Error::ToolChanged {
                        name,
                        operation: Operation::CallTool,
                        changed: 1,
                    },
            }] => assert_eq!(name, "echo"),
            other => panic!("{other:?}"),
        }
    }
}

/// A listed tool without `x-mcp-header` parameters is a known definition too: the call sent no
/// `Mcp-Param-*` header because that definition had none, so `-32020` says the server's tool now
/// has one (2026-07-28, SEP-2243: a server rejects a call whose headers do not match its
/// `x-mcp-header` parameters): it changed, and `refuse` does not send it again.
#[test]
fn refuse_fails_a_listed_tool_that_had_no_header_parameters() {
    for split in [Split::Whole, Split::Bytes] {
        let (events, sent) = mismatch_from(PLAIN, PinPolicy::Refuse, split);
        assert!(
            sent.is_empty(),
            "nothing sent after the re-listing: {sent:?}"
        );
        match &events[..] {
            [Event::Failed {
                operation: Operation::CallTool,
                error:
                    Error::ToolChanged {
                        name, changed: 1, ..
                    },
            }] => assert_eq!(name, "echo"),
            other => panic!("{other:?}"),
        }
        for policy in [PinPolicy::Warn, PinPolicy::Off] {
            let (events, sent) = mismatch_from(PLAIN, policy, split);
            assert_eq!(sent, ["tools/call"], "{policy:?}");
            assert!(matches!(events[..], [Event::CallFinished(_)]), "{events:?}");
        }
    }
}

#[test]
fn warn_and_off_send_the_call_again() {
    for policy in [PinPolicy::Warn, PinPolicy::Off] {
        for split in [Split::Whole, Split::Bytes] {
            let (events, sent) = mismatch(policy, split);
            assert_eq!(sent, ["tools/call"], "{policy:?}");
            assert!(matches!(events[..], [Event::CallFinished(_)]), "{events:?}");
        }
    }
}

/// A call by name of a tool this connection never listed has no known definition: under
/// `refuse` it still recovers from `-32020` by re-listing (there was no definition to change).
#[test]
fn a_call_without_a_known_definition_recovers_under_refuse() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_tool_pins(PinPolicy::Refuse);
    let mut h = modern_with(config, Split::Whole);
    h.call("echo", r#"{"r":"eu"}"#);
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &page("Area"))),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
    );
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
}
