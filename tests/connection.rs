//! The connection state machine driven by scripted server bytes on a virtual clock.

mod support;

use std::time::Duration;

use mcp_sansio::internals::{DRAIN_BYTES, DRAIN_GRACE};
use mcp_sansio::Budget;
use mcp_sansio::{Config, Era, EraHint, Error, ErrorKind, Event, Instant, Operation};
use support::*;

fn failed(ev: Event) -> (Operation, Error) {
    match ev {
        Event::Failed { operation, error } => (operation, error),
        other => panic!("expected Failed, got {other:?}"),
    }
}

fn budget_of(e: &Error) -> Budget {
    e.budget()
        .unwrap_or_else(|| panic!("a budget error, got {e:?}"))
        .budget
}

// ---------------------------------------------------------------------------------------------
// Negotiation

#[test]
fn modern_probe_sends_discover_with_meta_and_headers() {
    for split in SPLITS {
        let mut h = Harness::for_url("http://127.0.0.1:9", split);
        h.connect();
        let r = h.next();
        assert_eq!(r.method, "POST");
        assert_eq!(r.target, "/", "a bare origin means /");
        assert_eq!(r.header("host"), Some("127.0.0.1:9"));
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(r.header("Mcp-Method"), Some("server/discover"));
        assert_eq!(r.header("Content-Type"), Some("application/json"));
        assert_eq!(
            r.header("Accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(r.header("Authorization"), None, "anonymous by default");
        let body = r.json();
        assert_eq!(body["method"], "server/discover");
        let meta = &body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            serde_json::json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "mcp-sansio"
        );
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
        match h.single_event() {
            Event::Connected {
                era,
                version,
                server_info,
                from_hint,
                capabilities,
                instructions,
            } => {
                assert_eq!(era, Era::Modern);
                assert_eq!(version, "2026-07-28");
                assert_eq!(server_info.unwrap().name, "srv");
                assert!(!from_hint);
                assert_eq!(capabilities.unwrap().get(), r#"{"tools":{}}"#);
                assert_eq!(instructions, None, "none sent");
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(
            h.finished,
            vec![(r.exchange, true)],
            "the socket may be reused"
        );
        assert_eq!(
            h.conn.era_hint(),
            Some(EraHint {
                era: Era::Modern,
                version: "2026-07-28".into()
            })
        );
        assert_eq!(h.gets(), 0);
    }
}

#[test]
fn discover_with_top_level_server_info_and_sse_body() {
    for split in SPLITS {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
        h.connect();
        let r = h.next();
        let result = r#"{"supportedVersions":["2025-11-25","2026-07-28"],"capabilities":{},"serverInfo":{"name":"beta","version":"0"}}"#;
        let stream = format!(
            "event: message\ndata: {}\n\n",
            result_msg(r.rpc_id(), result)
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        match h.single_event() {
            Event::Connected {
                server_info, era, ..
            } => {
                assert_eq!(era, Era::Modern);
                assert_eq!(server_info.unwrap().name, "beta");
            }
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn unsupported_version_retries_once_with_a_mutual_version() {
    for split in SPLITS {
        let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
        config.modern_versions = vec!["2027-01-01".into(), "2026-07-28".into()];
        let mut h = Harness::new(config, split);
        h.connect();
        let r = h.next();
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2027-01-01"));
        let data = r#"{"supported":["2026-07-28"],"requested":"2027-01-01"}"#;
        h.feed(
            r.exchange,
            &json_response(
                400,
                &error_msg(r.rpc_id(), -32022, "Unsupported", Some(data)),
            ),
        );
        let r = h.next();
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2026-07-28"));
        assert_eq!(
            r.json()["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
        assert!(matches!(
            h.single_event(),
            Event::Connected {
                era: Era::Modern,
                ..
            }
        ));
        assert_eq!(h.sent.len(), 2);
    }
}

#[test]
fn unsupported_version_that_lists_the_offered_version_is_retried_once() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    for round in 0..2 {
        let r = h.next();
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2026-07-28"));
        let data = r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#;
        if round == 0 {
            h.feed(
                r.exchange,
                &json_response(400, &error_msg(r.rpc_id(), -32022, "no", Some(data))),
            );
        } else {
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
            );
        }
    }
    assert!(matches!(
        h.single_event(),
        Event::Connected {
            era: Era::Modern,
            ..
        }
    ));
    assert_eq!(h.sent.len(), 2);

    // Refused twice: the second refusal is final.
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    for _ in 0..2 {
        let r = h.next();
        let data = r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#;
        h.feed(
            r.exchange,
            &json_response(400, &error_msg(r.rpc_id(), -32022, "no", Some(data))),
        );
    }
    let (_, e) = failed(h.single_event());
    assert!(matches!(e, Error::NoMutualVersion { .. }), "{e:?}");
    assert_eq!(h.sent.len(), 2, "at most two probes");
}

#[test]
fn second_unsupported_version_fails_after_two_probes() {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.modern_versions = vec!["2027-01-01".into(), "2026-07-28".into()];
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    let data = r#"{"supported":["2026-07-28"],"requested":"2027-01-01"}"#;
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32022, "no", Some(data))),
    );
    let r = h.next();
    let data = r#"{"supported":["2027-01-01"],"requested":"2026-07-28"}"#;
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32022, "no", Some(data))),
    );
    let (op, e) = failed(h.single_event());
    assert_eq!(op, Operation::Connect);
    assert!(matches!(e, Error::NoMutualVersion { .. }), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
    assert_eq!(h.sent.len(), 2, "at most two probes");
    assert!(!h.has_outstanding());
}

#[test]
fn no_mutual_version_names_both_lists_and_never_falls_back() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    let data = r#"{"supported":["2099-01-01","2025-11-25"],"requested":"2026-07-28"}"#;
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32022, "no", Some(data))),
    );
    let (_, e) = failed(h.single_event());
    match &e {
        Error::NoMutualVersion { ours, theirs } => {
            assert!(ours.contains(&"2026-07-28".to_string()));
            assert_eq!(
                theirs,
                &vec!["2099-01-01".to_string(), "2025-11-25".to_string()]
            );
        }
        e => panic!("{e:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("2099-01-01") && msg.contains("2026-07-28"),
        "{msg}"
    );
    assert_eq!(
        h.sent.len(),
        1,
        "no initialize after a recognised modern error"
    );
}

#[test]
fn missing_capability_and_header_mismatch_are_modern_failures() {
    for code in [-32021, -32020] {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
        h.connect();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(400, &error_msg(r.rpc_id(), code, "modern says no", None)),
        );
        let (_, e) = failed(h.single_event());
        match &e {
            Error::Rpc(rpc) | Error::MissingClientCapability { rpc, .. } => {
                assert_eq!(rpc.code, code);
                assert_eq!(rpc.status, 400);
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(
            matches!(e, Error::MissingClientCapability { .. }),
            code == -32021
        );
        assert_eq!(h.sent.len(), 1);
    }
}

/// Schema (2026-07-28): `MissingRequiredClientCapabilityError`, code `-32021`, carries
/// `data.requiredCapabilities`, "the capabilities the server requires". The error is typed and
/// names them (bounded: at most 16 names of at most 64 bytes, the raw JSON only up to 1 KiB); the
/// opposite case, a `-32021` without `data`, is the same typed error naming nothing, and another
/// code stays a plain JSON-RPC error.
#[test]
fn missing_client_capability_is_typed_and_names_the_capabilities() {
    let answer = |data: Option<&str>, code: i64| {
        let mut h = modern(Split::Whole);
        h.list();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(
                400,
                &error_msg(r.rpc_id(), code, "Missing capability", data),
            ),
        );
        let (op, e) = failed(h.single_event());
        assert_eq!(op, Operation::ListTools);
        assert_eq!(e.kind(), ErrorKind::ServerAnswered);
        assert!(!h.has_outstanding(), "no retry, no fallback");
        // The connection is still usable: the server answered.
        h.list();
        assert_eq!(h.next().rpc_method(), "tools/list");
        e
    };
    let e = answer(
        Some(r#"{"requiredCapabilities":{"elicitation":{"url":{}},"sampling":{}}}"#),
        -32021,
    );
    let Error::MissingClientCapability { required, raw, rpc } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(required, &["elicitation", "sampling"]);
    assert_eq!(
        raw.as_deref(),
        Some(r#"{"elicitation":{"url":{}},"sampling":{}}"#)
    );
    assert_eq!((rpc.code, rpc.status), (-32021, 400));
    let message = e.to_string();
    assert!(
        message.contains("elicitation, sampling"),
        "the message names them: {message}"
    );

    let e = answer(None, -32021);
    assert!(
        matches!(&e, Error::MissingClientCapability { required, raw: None, .. } if required.is_empty()),
        "{e:?}"
    );

    // Bounded: many long names.
    let many: Vec<String> = (0..200)
        .map(|i| format!(r#""{}{i}":{{}}"#, "x".repeat(100)))
        .collect();
    let data = format!(r#"{{"requiredCapabilities":{{{}}}}}"#, many.join(","));
    let Error::MissingClientCapability { required, raw, .. } = answer(Some(&data), -32021) else {
        panic!("typed")
    };
    assert_eq!(
        required.len(),
        mcp_sansio::limits::MAX_REQUIRED_CAPABILITIES
    );
    assert!(required
        .iter()
        .all(|n| n.len() == mcp_sansio::limits::MAX_CAPABILITY_NAME));
    assert_eq!(raw, None, "too large to keep raw");

    let e = answer(Some(r#"{"requiredCapabilities":{"sampling":{}}}"#), -32602);
    assert!(matches!(e, Error::Rpc(_)), "{e:?}");
}

/// Versioning (2026-07-28): on `-32022` the client "SHOULD pick a mutually supported version
/// from `supported` and retry". After connecting, a `-32022` re-negotiates (from the probe) once
/// per operation and restarts the operation; the opposite case, a second `-32022` in the same
/// operation, fails it instead of looping. The next operation may re-negotiate again.
#[test]
fn unsupported_version_after_connecting_re_negotiates_once_per_operation() {
    let refuse = |h: &mut Harness| {
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/list");
        let data = r#"{"supported":["2026-07-28"],"requested":"2026-07-28"}"#;
        h.feed(
            r.exchange,
            &json_response(
                400,
                &error_msg(r.rpc_id(), -32022, "Unsupported", Some(data)),
            ),
        );
    };
    let discover = |h: &mut Harness| {
        let r = h.next();
        assert_eq!(r.rpc_method(), "server/discover", "re-negotiates");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
    };
    let mut h = modern(Split::Whole);
    h.list();
    refuse(&mut h);
    discover(&mut h);
    refuse(&mut h);
    let events = h.take_events();
    assert!(
        matches!(
            events[0],
            Event::Connected {
                era: Era::Modern,
                ..
            }
        ),
        "{events:?}"
    );
    let Some(Event::Failed {
        error: Error::Rpc(rpc),
        ..
    }) = events.last()
    else {
        panic!("{events:?}")
    };
    assert_eq!(rpc.code, -32022);
    assert!(!h.has_outstanding(), "no second re-negotiation");
    h.list();
    refuse(&mut h);
    discover(&mut h);
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list", "the listing restarts");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
    );
    let events = h.take_events();
    assert!(
        matches!(events.last(), Some(Event::ToolsListed(_))),
        "{events:?}"
    );
}

#[test]
fn legacy_fallback_handshake_and_session_headers() {
    for split in SPLITS {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
        h.connect();
        let r = h.next();
        // ts-v1's answer to a modern probe.
        h.feed(
            r.exchange,
            &json_response(400, r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}"#),
        );
        let r = h.next();
        assert_eq!(r.rpc_method(), "initialize");
        assert_eq!(r.header("MCP-Protocol-Version"), None, "not on initialize");
        assert_eq!(r.header("Mcp-Method"), None);
        let params = &r.json()["params"];
        assert_eq!(params["protocolVersion"], "2025-11-25");
        assert_eq!(params["capabilities"], serde_json::json!({}));
        assert_eq!(params["clientInfo"]["name"], "mcp-sansio");
        let init = result_msg(r.rpc_id(), &initialize_ok("2025-11-25"));
        let stream = format!("event: message\r\ndata: {init}\r\n\r\n");
        h.feed(
            r.exchange,
            &sse_response(&[("mcp-session-id", "abc-123")], &stream, false),
        );
        let r = h.next();
        assert_eq!(r.rpc_method(), "notifications/initialized");
        assert_eq!(r.header("Mcp-Session-Id"), Some("abc-123"));
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2025-11-25"));
        assert!(r.json().get("id").is_none(), "a notification has no id");
        h.feed(r.exchange, &empty_response(202));
        match h.single_event() {
            Event::Connected {
                era,
                version,
                server_info,
                ..
            } => {
                assert_eq!(era, Era::Legacy);
                assert_eq!(version, "2025-11-25");
                assert_eq!(server_info.unwrap().name, "legacy");
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(h.conn.session_id(), Some("abc-123"));
        h.list();
        let r = h.next();
        assert_eq!(r.header("Mcp-Session-Id"), Some("abc-123"));
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2025-11-25"));
        assert_eq!(
            r.header("Mcp-Method"),
            None,
            "legacy requests have no Mcp-Method"
        );
        assert!(r.json()["params"].get("_meta").is_none());
    }
}

/// Discover (2026-07-28): `DiscoverResult` carries `capabilities: ServerCapabilities` (required)
/// and `instructions?: string`. Both are reported with `Connected`: the capabilities as raw JSON
/// bytes (kept only up to `MAX_CAPABILITIES_BYTES`, never cut), the instructions cut to
/// `MAX_INSTRUCTIONS_BYTES` on a character boundary. The opposite cases: a hint, and a server
/// without `server/discover`, report neither; legacy `initialize`'s are reported the same way.
#[test]
fn discover_capabilities_and_instructions_come_with_connected() {
    let connected = |result: &str| {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Chunks(7));
        h.connect();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), result)),
        );
        match h.single_event() {
            Event::Connected {
                capabilities,
                instructions,
                ..
            } => (capabilities.map(|c| c.get().to_owned()), instructions),
            e => panic!("{e:?}"),
        }
    };
    let caps = r#"{"tools":{"listChanged":true},"logging":{}}"#;
    let result = format!(
        r#"{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{caps},"instructions":"Use the echo tool.","ttlMs":0,"cacheScope":"public"}}"#
    );
    assert_eq!(
        connected(&result),
        (Some(caps.to_owned()), Some("Use the echo tool.".to_owned()))
    );
    // Bounded: long instructions are cut on a character boundary; huge capabilities are dropped.
    let long = "é".repeat(mcp_sansio::limits::MAX_INSTRUCTIONS_BYTES);
    let big = format!(
        r#"{{"experimental":{{"x":"{}"}}}}"#,
        "a".repeat(mcp_sansio::limits::MAX_CAPABILITIES_BYTES)
    );
    let result = format!(
        r#"{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{big},"instructions":"{long}","ttlMs":0,"cacheScope":"public"}}"#
    );
    let (caps, instructions) = connected(&result);
    assert_eq!(caps, None, "larger than the cap: not kept");
    let instructions = instructions.unwrap();
    assert_eq!(
        instructions.len(),
        mcp_sansio::limits::MAX_INSTRUCTIONS_BYTES
    );
    assert!(long.starts_with(&instructions));

    // A hint reports neither.
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_era_hint(Some(EraHint {
            era: Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    assert!(matches!(
        h.single_event(),
        Event::Connected {
            capabilities: None,
            instructions: None,
            ..
        }
    ));

    // Legacy `initialize`'s are reported too.
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(400));
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(
            200,
            &result_msg(
                r.rpc_id(),
                r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"l","version":"1"},"instructions":"legacy"}"#,
            ),
        ),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    match h.single_event() {
        Event::Connected {
            era: Era::Legacy,
            capabilities,
            instructions,
            ..
        } => {
            assert_eq!(capabilities.unwrap().get(), r#"{"tools":{}}"#);
            assert_eq!(instructions.as_deref(), Some("legacy"));
        }
        e => panic!("{e:?}"),
    }
}

/// Streamable HTTP (2026-07-28), backward compatibility: the client falls back to `initialize`
/// when "the response body is not a recognized modern JSON-RPC error". A bare 404, 405 or 400,
/// a legacy server's "no valid session id" error, and a `-32601` answered with 200 (as legacy
/// stateless servers answer unknown methods) are not; a 404 *with* `-32601` is (see
/// `a_404_with_method_not_found_to_discover_stays_modern`).
#[test]
fn any_other_4xx_means_legacy() {
    for response in [
        empty_response(404),
        empty_response(405),
        empty_response(400),
        json_response(
            404,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Not Found"}}"#,
        ),
        json_response(
            400,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#,
        ),
        json_response(
            200,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        ),
    ] {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
        h.connect();
        let r = h.next();
        h.feed(r.exchange, &response);
        let r = h.next();
        assert_eq!(
            r.rpc_method(),
            "initialize",
            "fallback after {:?}",
            String::from_utf8_lossy(&response)
        );
    }
}

/// Streamable HTTP (2026-07-28): a server that does not implement a method "MUST respond with
/// 404 Not Found and a JSON-RPC error with code -32601 … The JSON-RPC error body distinguishes
/// this case from a 404 returned by a legacy … server". `server/discover` is optional for clients
/// ("Clients MAY call it"), so the connection stays modern: connected with the version it
/// offered, no server info and nothing discovered, and no `initialize` is sent.
#[test]
fn a_404_with_method_not_found_to_discover_stays_modern() {
    for split in SPLITS {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", split);
        h.connect();
        let r = h.next();
        assert_eq!(r.rpc_method(), "server/discover");
        h.feed(
            r.exchange,
            &json_response(
                404,
                &error_msg(r.rpc_id(), -32601, "Method not found", None),
            ),
        );
        match h.single_event() {
            Event::Connected {
                era,
                version,
                server_info,
                from_hint,
                capabilities,
                instructions,
            } => {
                assert_eq!(era, Era::Modern);
                assert_eq!(version, "2026-07-28", "the version offered");
                assert!(server_info.is_none());
                assert!(
                    capabilities.is_none() && instructions.is_none(),
                    "nothing discovered"
                );
                assert!(!from_hint);
            }
            other => panic!("expected Connected, got {other:?}"),
        }
        assert!(!h.has_outstanding(), "no initialize");
        assert_eq!(h.conn.session_id(), None);
        // Modern requests follow.
        h.list();
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/list");
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2026-07-28"));
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
        );
        assert!(matches!(h.single_event(), Event::ToolsListed(_)));
    }
}

/// The project's reading of versioning (2026-07-28) "re-probe if the cached assumption later
/// fails" for a server that answered `server/discover` with 404 + `-32601`: if the next modern
/// request gets a 4xx that is not a recognised modern error (a legacy server's "no valid session
/// id"), the connection falls back to `initialize` once and restarts the operation; a second
/// such answer fails the operation instead of looping.
#[test]
fn a_modern_assumption_without_discover_falls_back_to_initialize_once() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(
            404,
            &error_msg(r.rpc_id(), -32601, "Method not found", None),
        ),
    );
    assert!(matches!(
        h.single_event(),
        Event::Connected {
            era: Era::Modern,
            ..
        }
    ));
    h.list();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    let no_session = |id| {
        json_response(
            400,
            &error_msg(
                id,
                -32000,
                "Bad Request: No valid session ID provided",
                None,
            ),
        )
    };
    h.feed(r.exchange, &no_session(r.rpc_id()));
    let r = h.next();
    assert_eq!(
        r.rpc_method(),
        "initialize",
        "falls back, not discover again"
    );
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "s-1")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    h.feed(r.exchange, &empty_response(202));
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list", "the listing restarts");
    assert_eq!(r.header("Mcp-Session-Id"), Some("s-1"));
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
    );
    let events = h.take_events();
    assert!(
        matches!(
            events[0],
            Event::Connected {
                era: Era::Legacy,
                ..
            }
        ),
        "{events:?}"
    );
    assert!(matches!(events[1], Event::ToolsListed(_)), "{events:?}");

    // Bounded: after the fallback the era is settled; the same answer now fails the listing.
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(
            404,
            &error_msg(r.rpc_id(), -32601, "Method not found", None),
        ),
    );
    h.take_events();
    h.list();
    let r = h.next();
    // A recognised modern error is the modern server's answer: no fallback.
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let (op, _) = failed(h.single_event());
    assert_eq!(op, Operation::ListTools);
    assert!(!h.has_outstanding(), "a modern error does not fall back");
}

/// Versioning (2026-07-28): clients cache the era per origin, "re-probing if the cached
/// assumption later fails". A connection started from a modern hint whose first request meets
/// a legacy server's 4xx body (`-32000` "No valid session ID") probes again, once, and restarts
/// the operation; the opposite case, a modern error (`-32020`), is the server's answer and fails
/// the operation without a probe.
#[test]
fn a_modern_hint_that_meets_a_legacy_error_body_re_probes_once() {
    let mut h = modern_hinted(Split::Whole);
    h.list();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    h.feed(
        r.exchange,
        &json_response(
            400,
            &error_msg(
                r.rpc_id(),
                -32000,
                "Bad Request: No valid session ID provided",
                None,
            ),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "server/discover", "probes again");
    // The probe finds a legacy server.
    h.feed(r.exchange, &empty_response(400));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &initialize_ok("2025-11-25"))),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    // The same legacy error again: settled now, so the listing fails (no third probe).
    h.feed(
        r.exchange,
        &json_response(
            400,
            &error_msg(
                r.rpc_id(),
                -32000,
                "Bad Request: No valid session ID provided",
                None,
            ),
        ),
    );
    let events = h.take_events();
    assert!(
        matches!(
            events.last(),
            Some(Event::Failed {
                operation: Operation::ListTools,
                ..
            })
        ),
        "{events:?}"
    );
    assert!(!h.has_outstanding());

    let mut h = modern_hinted(Split::Whole);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let (op, _) = failed(h.single_event());
    assert_eq!(op, Operation::ListTools);
    assert!(!h.has_outstanding(), "a modern error does not re-probe");
}

#[test]
fn legacy_counter_offers() {
    for (offer, ok) in [
        ("2025-06-18", true),
        ("2025-03-26", true),
        ("2024-11-05", true),
        ("1999-01-01", false),
        ("2026-07-28", false),
    ] {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
        h.connect();
        let r = h.next();
        h.feed(r.exchange, &empty_response(404));
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &initialize_ok(offer))),
        );
        if ok {
            let r = h.next();
            assert_eq!(r.rpc_method(), "notifications/initialized");
            let expect_header = offer >= "2025-06-18";
            assert_eq!(
                r.header("MCP-Protocol-Version").is_some(),
                expect_header,
                "{offer}"
            );
            h.feed(r.exchange, &empty_response(202));
            assert!(matches!(h.single_event(), Event::Connected { .. }));
        } else {
            let (_, e) = failed(h.single_event());
            assert!(matches!(e, Error::NoMutualVersion { .. }), "{e:?}");
        }
    }
}

#[test]
fn status_classes_during_negotiation() {
    let cases: Vec<(Vec<u8>, ErrorKind, &str)> = vec![
        (
            json_response_with(
                401,
                &[("www-authenticate", "Bearer resource_metadata=\"x\"")],
                "{}",
            ),
            ErrorKind::AuthenticationFailed,
            "401",
        ),
        (empty_response(403), ErrorKind::AuthenticationFailed, "403"),
        (
            b"HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/\r\ncontent-length: 0\r\n\r\n"
                .to_vec(),
            ErrorKind::ConnectionFailed,
            "redirect",
        ),
        (empty_response(500), ErrorKind::ConnectionFailed, "500"),
        (empty_response(503), ErrorKind::ConnectionFailed, "503"),
        (empty_response(407), ErrorKind::ConnectionFailed, "407"),
        (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 2\r\n\r\nhi".to_vec(),
            ErrorKind::ConnectionFailed,
            "html",
        ),
    ];
    for (resp, kind, what) in cases {
        let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
        h.connect();
        let r = h.next();
        h.feed(r.exchange, &resp);
        if what == "407" {
            // 407 is a 4xx: legacy fallback, then the same answer fails the handshake.
            let r = h.next();
            h.feed(r.exchange, &resp);
        }
        let (_, e) = failed(h.single_event());
        assert_eq!(e.kind(), kind, "{what}: {e:?}");
        match what {
            "401" => assert!(
                matches!(&e, Error::Authentication { status: 401, challenge: Some(c) } if c.contains("resource_metadata"))
            ),
            "redirect" => assert!(
                matches!(&e, Error::Redirect { status: 302, location: Some(l) } if l.contains("169.254"))
            ),
            "500" => assert_eq!(e, Error::HttpStatus { status: 500 }),
            _ => {}
        }
        assert!(!h.has_outstanding(), "{what}: nothing left in flight");
    }
}

#[test]
fn bearer_token_on_every_request() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_bearer_token("tok.en");
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    assert_eq!(r.header("Authorization"), Some("Bearer tok.en"));
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.header("Authorization"), Some("Bearer tok.en"));
}

#[test]
fn bearer_token_with_newline_is_refused_before_sending() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_bearer_token("a\nInjected: 1");
    let e = mcp_sansio::Connection::new(config).unwrap_err();
    assert_eq!(e, mcp_sansio::ConfigError::InvalidToken);
}

// ---------------------------------------------------------------------------------------------
// Era hints

#[test]
fn modern_hint_makes_zero_extra_round_trips() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_era_hint(Some(EraHint {
            era: Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    assert!(h.sent.is_empty(), "no request to connect");
    assert!(matches!(
        h.single_event(),
        Event::Connected {
            from_hint: true,
            ..
        }
    ));
    h.call("echo", r#"{"text":"hi"}"#);
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    assert_eq!(r.header("Mcp-Name"), Some("echo"));
    h.answer_call_ok(&r);
    assert_eq!(h.sent.len(), 1, "one request for one call");
}

/// Lists on a modern-hinted connection whose server is legacy: the listing's 400 re-negotiates,
/// the probe gets 404, and `initialize` (returned) is outstanding.
fn list_until_legacy_initialize(h: &mut Harness) -> SentRequest {
    h.list();
    let r = h.next();
    h.feed(r.exchange, &empty_response(400)); // a legacy server: no modern error
    let r = h.next();
    assert_eq!(r.rpc_method(), "server/discover");
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    r
}

#[test]
fn wrong_modern_hint_renegotiates_once() {
    let mut h = modern_hinted(Split::Whole);
    let r = list_until_legacy_initialize(&mut h);
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "s")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list", "the listing restarts");
    assert_eq!(r.header("Mcp-Session-Id"), Some("s"));
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["a"], None))),
    );
    let evs = h.take_events();
    assert!(
        matches!(
            &evs[0],
            Event::Connected {
                era: Era::Legacy,
                from_hint: false,
                ..
            }
        ),
        "{evs:?}"
    );
    assert!(
        matches!(&evs[1], Event::ToolsListed(c) if c.tools.len() == 1),
        "{evs:?}"
    );
}

#[test]
fn legacy_hint_skips_the_probe_and_a_wrong_one_reprobes() {
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_era_hint(Some(EraHint {
            era: Era::Legacy,
            version: "2025-11-25".into(),
        }));
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    // A modern-only server refuses initialize.
    h.feed(
        r.exchange,
        &json_response(
            404,
            &error_msg(r.rpc_id(), -32601, "Method not found", None),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "server/discover");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    assert!(matches!(
        h.single_event(),
        Event::Connected {
            era: Era::Modern,
            ..
        }
    ));
}

// ---------------------------------------------------------------------------------------------
// Requests and responses

#[test]
fn sse_notifications_before_the_result_and_progress() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("slow", "{}");
        let r = h.next();
        let token = r.json()["params"]["_meta"]["progressToken"]
            .as_u64()
            .unwrap();
        let id = r.rpc_id();
        let stream = format!(
            ": keep-alive\n\nevent: message\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":1,\"total\":2,\"message\":\"half\"}}}}\n\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":\"x\"}}}}\n\n\
             data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":999,\"progress\":1}}}}\n\n\
             event: message\ndata: {}\n\n",
            result_msg(id, CALL_OK)
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        let evs = h.take_events();
        assert_eq!(evs.len(), 2, "{evs:?}");
        assert!(
            matches!(&evs[0], Event::Progress { progress, total: Some(t), message: Some(m) } if *progress == 1.0 && *t == 2.0 && m == "half")
        );
        match &evs[1] {
            Event::CallFinished(r) => {
                assert!(!r.is_error);
                assert_eq!(
                    r.content,
                    vec![mcp_sansio::ContentBlock::Text { text: "hi".into() }]
                );
            }
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn result_on_an_open_stream_abandons_the_exchange() {
    let mut h = modern(Split::Whole);
    h.call("x", "");
    let r = h.next();
    assert_eq!(
        r.json()["params"]["arguments"],
        serde_json::json!({}),
        "empty arguments become {{}}"
    );
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    h.feed(r.exchange, &sse_response(&[], &stream, true));
    assert!(
        matches!(h.single_event(), Event::CallFinished(_)),
        "the result is reported at once"
    );
    assert!(!h.conn.is_busy());
    let open_finished = |h: &Harness| h.finished.iter().any(|(x, _)| *x == r.exchange);
    assert!(!open_finished(&h), "an open stream is never reusable");
    // The end of the framing is awaited for the grace only.
    assert_eq!(h.conn.poll_timeout(), Some(h.now + DRAIN_GRACE));
    h.advance(DRAIN_GRACE);
    assert_eq!(
        h.abandoned,
        vec![r.exchange],
        "the open stream's socket is closed"
    );
    assert!(!open_finished(&h));
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn arguments_are_sent_verbatim_and_non_objects_refused() {
    let mut h = modern(Split::Whole);
    let args = r#"{"z":1.50,"a":[1e3,  2],"k":"\u00e9"}"#;
    h.call("t", args);
    let r = h.next();
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert!(body.contains(args), "verbatim: {body}");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
    );
    h.take_events();
    for bad in ["[1,2]", "3", "{", "\"s\"", "{} {}"] {
        h.call("t", bad);
        let (op, e) = failed(h.single_event());
        assert_eq!(op, Operation::CallTool);
        assert!(matches!(e, Error::Config(_)), "{bad}: {e:?}");
    }
    assert_eq!(h.sent.len(), 2, "nothing sent for refused arguments");
}

#[test]
fn wrong_id_and_batch_are_errors() {
    let mut h = modern(Split::Whole);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id() + 100, &tools_page(&[], None))),
    );
    let (_, e) = failed(h.single_event());
    assert!(
        matches!(
            e,
            Error::Protocol(mcp_sansio::ProtocolError::WrongId { .. })
        ),
        "{e:?}"
    );

    let mut h = modern(Split::Whole);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(
            200,
            &format!("[{}]", result_msg(r.rpc_id(), &tools_page(&[], None))),
        ),
    );
    let (_, e) = failed(h.single_event());
    assert!(
        matches!(e, Error::Protocol(mcp_sansio::ProtocolError::Batch)),
        "{e:?}"
    );

    let mut h = modern(Split::Whole);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, r#"{"jsonrpc":"2.0","method":"notifications/message"}"#),
    );
    let (_, e) = failed(h.single_event());
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
}

#[test]
fn rpc_error_with_400_is_per_request() {
    let mut h = modern(Split::Whole);
    h.call("nope", "{}");
    let r = h.next();
    let big = "d".repeat(100_000);
    let data = format!("\"{big}\"");
    h.feed(
        r.exchange,
        &json_response(
            400,
            &error_msg(r.rpc_id(), -32602, "Unknown tool: nope", Some(&data)),
        ),
    );
    let (_, e) = failed(h.single_event());
    assert_eq!(e.kind(), ErrorKind::ServerAnswered);
    match &e {
        Error::Rpc(rpc) => {
            assert_eq!(rpc.code, -32602);
            assert_eq!(rpc.message, "Unknown tool: nope");
            assert!(rpc.data.as_ref().unwrap().len() <= mcp_sansio::internals::MAX_ERROR_DATA);
        }
        e => panic!("{e:?}"),
    }
    // The connection is still usable.
    h.call("echo", "{}");
    let r = h.next();
    h.answer_call_ok(&r);
}

#[test]
fn list_follows_cursors_including_empty_string() {
    for split in SPLITS {
        let mut h = modern(split);
        h.list();
        let r = h.next();
        assert!(r.json()["params"].get("cursor").is_none());
        h.feed(
            r.exchange,
            &json_response(
                200,
                &result_msg(r.rpc_id(), &tools_page(&["a", "b"], Some(""))),
            ),
        );
        let r = h.next();
        assert_eq!(r.json()["params"]["cursor"], "");
        h.feed(
            r.exchange,
            &json_response(
                200,
                &result_msg(r.rpc_id(), &tools_page(&["c"], Some("n2"))),
            ),
        );
        let r = h.next();
        assert_eq!(r.json()["params"]["cursor"], "n2");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&[], None))),
        );
        match h.single_event() {
            Event::ToolsListed(c) => {
                let names: Vec<_> = c.tools.iter().map(|t| t.name()).collect();
                assert_eq!(names, ["a", "b", "c"]);
                assert_eq!(c.pages, 3);
            }
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn repeated_cursor_and_page_budget_fail() {
    let mut h = modern(Split::Whole);
    h.list();
    for (i, c) in ["A", "B", "A"].iter().enumerate() {
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&[], Some(c)))),
        );
        if i < 2 {
            assert!(h.take_events().is_empty());
        }
    }
    let (_, e) = failed(h.single_event());
    assert!(
        matches!(e, Error::Protocol(mcp_sansio::ProtocolError::PaginationLoop { ref cursor }) if cursor == "A"),
        "{e}"
    );
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);

    let mut h = modern(Split::Whole);
    h.list();
    let mut n = 0;
    while h.has_outstanding() {
        let r = h.next();
        n += 1;
        let c = format!("c{n}");
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&[], Some(&c)))),
        );
    }
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::Pages);
    assert_eq!(n, 100, "exactly the page budget was fetched");
}

// ---------------------------------------------------------------------------------------------
// Resumption and re-issue

fn open_legacy_stream(h: &mut Harness, stream: &str) -> (u64, mcp_sansio::ExchangeId) {
    h.list();
    let r = h.next();
    let id = r.rpc_id();
    h.feed(
        r.exchange,
        &sse_response(&[("mcp-session-id", "sess-1")], stream, false),
    );
    (id, r.exchange)
}

#[test]
fn legacy_resumption_with_last_event_id() {
    for split in SPLITS {
        let mut h = legacy(split, "2025-11-25");
        let (id, _) = open_legacy_stream(&mut h, "id: ev-1\nretry: 2500\ndata:\n\n");
        assert!(h.take_events().is_empty());
        assert!(!h.has_outstanding());
        assert_eq!(
            h.conn.poll_timeout(),
            Some(h.now + Duration::from_millis(2500)),
            "waits the server's retry"
        );
        h.advance(Duration::from_millis(2499));
        assert!(!h.has_outstanding(), "not before retry");
        h.advance(Duration::from_millis(1));
        let r = h.next();
        assert_eq!(r.method, "GET");
        assert_eq!(r.header("Last-Event-ID"), Some("ev-1"));
        assert_eq!(r.header("Accept"), Some("text/event-stream"));
        assert_eq!(r.header("Mcp-Session-Id"), Some("sess-1"));
        assert!(r.body.is_empty());
        let stream = format!(
            "id: ev-2\ndata: {}\n\n",
            result_msg(id, &tools_page(&["t"], None))
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        assert!(matches!(h.single_event(), Event::ToolsListed(_)));
        assert_eq!(h.gets(), 1);
    }
}

#[test]
fn advancing_ids_hit_the_total_response_cap() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    open_legacy_stream(&mut h, "id: 0\ndata:\n\n");
    let mut n = 0;
    loop {
        if !h.has_outstanding() && !h.advance_to_timeout() {
            break;
        }
        if !h.has_outstanding() {
            break;
        }
        let r = h.next();
        n += 1;
        assert!(n < 50, "bounded");
        h.feed(
            r.exchange,
            &sse_response(&[], &format!("id: {n}\ndata:\n\n"), false),
        );
    }
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::ResponsesPerRequest);
    assert_eq!(
        n + 1,
        mcp_sansio::Budgets::default().responses_per_request as usize
    );
}

#[test]
fn stalled_resumptions_fail() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    open_legacy_stream(&mut h, "id: same\ndata:\n\n");
    let mut n = 0;
    while h.advance_to_timeout() && h.has_outstanding() {
        let r = h.next();
        n += 1;
        h.feed(r.exchange, &sse_response(&[], ": nothing new\n\n", false));
    }
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::StalledResumptions);
    assert_eq!(
        n as u32,
        mcp_sansio::Budgets::default().stalled_resumptions + 1
    );
}

#[test]
fn stream_without_ids_cannot_be_resumed() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    open_legacy_stream(
        &mut h,
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n",
    );
    let (_, e) = failed(h.single_event());
    assert!(
        matches!(
            e,
            Error::Protocol(mcp_sansio::ProtocolError::StreamEnded { .. })
        ),
        "{e:?}"
    );
    assert_eq!(h.gets(), 0);
}

#[test]
fn huge_retry_is_clamped() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    open_legacy_stream(&mut h, "id: 1\nretry: 999999999999\ndata:\n\n");
    let max = mcp_sansio::Budgets::default().max_retry_wait;
    assert_eq!(h.conn.poll_timeout(), Some(h.now + max));
}

#[test]
fn modern_broken_stream_is_reissued_with_a_new_id() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("slow", "{}");
        let r = h.next();
        let first = r.rpc_id();
        // The stream breaks mid-way: chunked framing never completes.
        h.feed(r.exchange, &sse_response(&[], ": working\n\n", true));
        h.eof(r.exchange);
        let r = h.next();
        assert_eq!(r.method, "POST");
        assert_ne!(r.rpc_id(), first, "a new id");
        assert_eq!(r.json()["params"]["name"], "slow");
        h.answer_call_ok(&r);
        assert_eq!(h.gets(), 0, "modern never sends GET");
    }
}

#[test]
fn modern_reissues_are_bounded() {
    let mut h = modern(Split::Whole);
    h.call("slow", "{}");
    let mut n = 0;
    while h.has_outstanding() {
        let r = h.next();
        n += 1;
        h.feed(r.exchange, &sse_response(&[], ": x\n\n", false));
    }
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::ResponsesPerRequest);
    assert_eq!(n, mcp_sansio::Budgets::default().responses_per_request);
}

/// MCP 2026-07-28, Streamable HTTP (changelog item 9, SEP-2575): "A broken response stream
/// loses the in-flight request; clients MUST re-issue it as a new request with a new request
/// ID." A pooled socket closed before a byte of answer goes once more on a fresh socket, under a
/// new id; closed again there, the request is re-issued (new id each time) until
/// `responses_per_request` sendings, and then fails with that budget.
#[test]
fn stale_pooled_socket_is_retried_once_on_a_fresh_socket() {
    let mut h = modern(Split::Whole);
    h.list();
    let r = h.next();
    assert!(!r.fresh);
    let mut ids = vec![r.rpc_id()];
    h.eof(r.exchange);
    let r = h.next();
    assert!(r.fresh, "the retry asks for a fresh socket");
    ids.push(r.rpc_id());
    h.eof(r.exchange);
    while h.has_outstanding() {
        let r = h.next();
        assert!(!r.fresh, "one fresh socket per request");
        assert_eq!(r.rpc_method(), "tools/list");
        ids.push(r.rpc_id());
        h.eof(r.exchange);
    }
    let limit = mcp_sansio::Budgets::default().responses_per_request;
    assert_eq!(ids.len(), limit as usize, "every sending counted");
    let unique: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "never one id twice: {ids:?}");
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::ResponsesPerRequest);
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
}

/// A legacy session has no re-issue rule: its stale pooled socket is retried once on a fresh
/// socket (under a new id, never the same twice), and a second failure fails the operation.
#[test]
fn legacy_stale_pooled_socket_is_retried_once_with_a_new_id() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.call("echo", "{}");
    let r = h.next();
    assert!(!r.fresh);
    let first = r.rpc_id();
    h.eof(r.exchange);
    let r = h.next();
    assert!(r.fresh, "the retry asks for a fresh socket");
    assert_eq!(r.rpc_method(), "tools/call");
    assert_ne!(r.rpc_id(), first, "a re-sent call carries a new id");
    h.eof(r.exchange);
    assert!(!h.has_outstanding(), "no third sending");
    let (op, e) = failed(h.single_event());
    assert_eq!(op, Operation::CallTool);
    assert!(matches!(e, Error::UnexpectedEof { .. }), "{e:?}");
}

/// The answer to the id a stale socket's request carried is not taken as the re-sent one's:
/// only the new id completes the call.
#[test]
fn an_answer_to_the_old_id_is_not_the_resent_requests() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("echo", "{}");
        let r = h.next();
        let old = r.rpc_id();
        h.eof(r.exchange);
        let r = h.next();
        assert_ne!(r.rpc_id(), old);
        h.feed(r.exchange, &json_response(200, &result_msg(old, CALL_OK)));
        let (_, e) = failed(h.single_event());
        assert!(
            matches!(
                e,
                Error::Protocol(mcp_sansio::ProtocolError::WrongId { .. })
            ),
            "{split:?}: {e:?}"
        );
    }
}

/// A pooled socket that fails after the server began to answer (part of a head, no event yet)
/// is not a stale socket: the server may have run the request. In a legacy session it is not
/// sent again (the operation fails with the transport's error); in the 2026-07-28 era the
/// broken stream loses the request, which is re-issued on a pooled socket with a new id
/// (MCP 2026-07-28, Streamable HTTP: "A broken response stream loses the in-flight request;
/// clients MUST re-issue it as a new request with a new request ID."). Without a byte of
/// answer, the same failure sends the request once more on a fresh socket. In every split of
/// the partial head.
#[test]
fn a_pooled_socket_failing_after_part_of_a_head_is_not_retried() {
    use mcp_sansio::{TransportError, TransportErrorKind};
    let io = || TransportError {
        kind: TransportErrorKind::Io,
        message: "connection reset".into(),
    };
    for split in [Split::Whole, Split::Bytes] {
        let mut h = legacy(split, "2025-11-25");
        h.call("echo", "{}");
        let r = h.next();
        assert!(!r.fresh);
        h.feed(r.exchange, b"HTTP/1.1 200 OK\r\ncontent-");
        h.conn.handle(
            h.now,
            mcp_sansio::Input::TransportError {
                exchange: r.exchange,
                error: io(),
            },
        );
        h.drain();
        assert!(!h.has_outstanding(), "{split:?}: no second request");
        let (op, e) = failed(h.single_event());
        assert_eq!(op, Operation::CallTool);
        assert!(matches!(e, Error::Transport(_)), "{split:?}: {e:?}");

        let mut h = modern(split);
        h.call("echo", "{}");
        let r = h.next();
        let first = r.rpc_id();
        h.feed(r.exchange, b"HTTP/1.1 200 OK\r\ncontent-");
        h.conn.handle(
            h.now,
            mcp_sansio::Input::TransportError {
                exchange: r.exchange,
                error: io(),
            },
        );
        h.drain();
        let again = h.next();
        assert!(
            !again.fresh,
            "{split:?}: a re-issue, not a stale socket's retry"
        );
        assert_eq!(again.rpc_method(), "tools/call");
        assert_ne!(again.rpc_id(), first, "{split:?}: a new id");
        h.feed(
            again.exchange,
            &json_response(200, &result_msg(again.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));

        let mut h = modern(split);
        h.call("echo", "{}");
        let r = h.next();
        h.conn.handle(
            h.now,
            mcp_sansio::Input::TransportError {
                exchange: r.exchange,
                error: io(),
            },
        );
        h.drain();
        let again = h.next();
        assert!(again.fresh, "{split:?}: nothing heard, so a fresh socket");
    }
}

/// The server closes the socket inside the head (HTTP/1.1, the decoder's end of stream in the
/// head), in every split: MCP 2026-07-28, Streamable HTTP: "A broken response stream loses the
/// in-flight request; clients MUST re-issue it as a new request with a new request ID." The
/// call is re-issued with a new id; in a legacy session, where the server may have run it and
/// `Last-Event-ID` resumption needs an event id, it fails.
#[test]
fn a_socket_closed_inside_the_head_reissues_a_modern_call() {
    let partial = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-enc";
    for split in SPLITS {
        let mut h = modern(split);
        h.call("slow", "{}");
        let r = h.next();
        let first = r.rpc_id();
        h.feed(r.exchange, partial);
        h.eof(r.exchange);
        let again = h.next();
        assert_eq!(again.rpc_method(), "tools/call", "{split:?}");
        assert_eq!(again.json()["params"]["name"], "slow");
        assert_ne!(again.rpc_id(), first, "{split:?}: a new id");
        h.feed(
            again.exchange,
            &json_response(200, &result_msg(again.rpc_id(), CALL_OK)),
        );
        assert!(matches!(h.single_event(), Event::CallFinished(_)));

        let mut h = legacy(split, "2025-11-25");
        h.call("slow", "{}");
        let r = h.next();
        h.feed(r.exchange, partial);
        h.eof(r.exchange);
        assert!(!h.has_outstanding(), "{split:?}: not sent again");
        let (_, e) = failed(h.single_event());
        assert!(matches!(e, Error::Wire(_)), "{split:?}: {e:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Deadlines

#[test]
fn discover_never_answered_fails_at_the_request_deadline() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    assert_eq!(h.conn.poll_timeout(), Some(Instant::from_millis(30_000)));
    h.advance(Duration::from_millis(29_999));
    assert!(h.take_events().is_empty());
    h.advance(Duration::from_millis(1));
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::RequestTime);
    assert!(h.abandoned.contains(&r.exchange));
    assert_eq!(h.conn.poll_timeout(), None, "nothing left to wait for");
}

#[test]
fn deadline_mid_header_and_mid_body() {
    for partial in [&b"HTTP/1.1 200 OK\r\ncontent-"[..], &b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\""[..]] {
        let mut h = modern(Split::Whole);
        h.list();
        let r = h.next();
        h.feed(r.exchange, partial);
        assert!(h.advance_to_timeout());
        let (op, e) = failed(h.single_event());
        assert_eq!(op, Operation::ListTools);
        assert_eq!(budget_of(&e), Budget::RequestTime);
        assert_eq!(h.now, Instant::from_millis(30_000));
    }
}

#[test]
fn list_deadline_is_aggregate() {
    let mut h = modern(Split::Whole);
    h.list();
    let mut pages = 0;
    loop {
        let r = h.next();
        h.advance(Duration::from_secs(25)); // each page just under the per-request deadline
        h.feed(
            r.exchange,
            &json_response(
                200,
                &result_msg(r.rpc_id(), &tools_page(&[], Some(&format!("p{pages}")))),
            ),
        );
        pages += 1;
        if !h.events.is_empty() || pages > 10 {
            break;
        }
        if h.conn.poll_timeout().unwrap() <= h.now + Duration::from_secs(25) {
            h.advance_to_timeout();
            break;
        }
    }
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::ListTime);
    assert_eq!(h.now, Instant::from_millis(120_000));
}

#[test]
fn a_call_is_not_capped_at_thirty_seconds() {
    let mut h = modern(Split::Whole);
    h.call("slow", "{}");
    let r = h.next();
    assert_eq!(
        h.conn.poll_timeout(),
        Some(h.now + Duration::from_secs(120))
    );
    h.advance(Duration::from_secs(90));
    assert!(h.take_events().is_empty());
    h.answer_call_ok(&r);
}

#[test]
fn call_deadline_in_legacy_sends_a_bounded_cancellation() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.call("slow", "{}");
    let r = h.next();
    let id = r.rpc_id();
    h.advance_to_timeout();
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::CallTime);
    assert!(h.abandoned.contains(&r.exchange));
    let c = h.next();
    assert_eq!(c.rpc_method(), "notifications/cancelled");
    assert_eq!(c.json()["params"]["requestId"], id);
    assert_eq!(c.header("Mcp-Session-Id"), Some("sess-1"));
    // Its grace is bounded: never answered, it is abandoned at the close budget.
    let grace = mcp_sansio::Budgets::default().close_time;
    assert_eq!(h.conn.poll_timeout(), Some(h.now + grace));
    h.advance_to_timeout();
    assert!(h.abandoned.contains(&c.exchange));
    assert_eq!(h.conn.poll_timeout(), None);
}

#[test]
fn initialize_is_never_cancelled() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let _init = h.next();
    h.advance_to_timeout();
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::RequestTime);
    assert!(!h.has_outstanding(), "no cancellation for initialize");
}

#[test]
fn modern_deadline_abandons_without_notification() {
    let mut h = modern(Split::Whole);
    h.call("slow", "{}");
    let r = h.next();
    h.advance_to_timeout();
    let (_, e) = failed(h.single_event());
    assert_eq!(budget_of(&e), Budget::CallTime);
    assert_eq!(h.abandoned, vec![r.exchange]);
    assert!(!h.has_outstanding());
}

// ---------------------------------------------------------------------------------------------
// Close

#[test]
fn legacy_close_sends_delete_and_accepts_405() {
    for status in [200, 204, 404, 405, 500] {
        let mut h = legacy(Split::Whole, "2025-11-25");
        h.close();
        let r = h.next();
        assert_eq!(r.method, "DELETE");
        assert_eq!(r.header("Mcp-Session-Id"), Some("sess-1"));
        h.feed(r.exchange, &empty_response(status));
        assert!(matches!(h.single_event(), Event::Closed), "{status}");
    }
}

#[test]
fn close_is_bounded_and_always_safe() {
    // An unanswered DELETE ends at the close budget.
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.close();
    let _ = h.next();
    h.advance_to_timeout();
    assert_eq!(
        h.now,
        Instant::ZERO + mcp_sansio::Budgets::default().close_time
    );
    assert!(matches!(h.single_event(), Event::Closed));
    // Twice.
    h.close();
    assert!(matches!(h.single_event(), Event::Closed));
    // Before anything was sent.
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.close();
    assert!(matches!(h.single_event(), Event::Closed));
    assert!(h.sent.is_empty());
    // Modern: nothing to close.
    let mut h = modern(Split::Whole);
    h.close();
    assert!(matches!(h.single_event(), Event::Closed));
    assert_eq!(h.sent.len(), 1);
    // During an operation: the operation fails, then the connection closes.
    let mut h = modern(Split::Whole);
    h.call("slow", "{}");
    h.close();
    let evs = h.take_events();
    assert!(
        matches!(
            &evs[0],
            Event::Failed {
                error: Error::Closed,
                ..
            }
        ),
        "{evs:?}"
    );
    assert!(matches!(&evs[1], Event::Closed));
    // After close, operations are refused.
    h.list();
    let (_, e) = failed(h.single_event());
    assert!(matches!(e, Error::Misuse { .. }));
}

#[test]
fn session_id_change_is_an_error() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "other")],
            &result_msg(r.rpc_id(), &tools_page(&[], None)),
        ),
    );
    let (_, e) = failed(h.single_event());
    assert!(
        matches!(
            e,
            Error::Protocol(mcp_sansio::ProtocolError::InvalidSession { .. })
        ),
        "{e:?}"
    );
}

/// Answers a legacy `initialize` with session id `id` and its `notifications/initialized`.
fn new_legacy_session(h: &mut Harness, id: &str) {
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize", "a new session");
    assert_eq!(
        r.header("Mcp-Session-Id"),
        None,
        "initialize carries no session id"
    );
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", id)],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "notifications/initialized");
    assert_eq!(r.header("Mcp-Session-Id"), Some(id));
    h.feed(r.exchange, &empty_response(202));
}

/// Streamable HTTP (2025-11-25), session management: "When a client receives HTTP 404 in
/// response to a request containing an `Mcp-Session-Id`, it MUST start a new session by sending
/// a new `InitializeRequest` without a session ID attached." The operation restarts in the new
/// session, once: a second expiry in the same operation fails it with `SessionExpired`.
#[test]
fn legacy_404_starts_a_new_session_once_per_operation() {
    for (op, expiries) in [("list", 1), ("call", 1), ("list", 2), ("call", 2)] {
        let mut h = legacy(Split::Whole, "2025-11-25");
        match op {
            "list" => h.list(),
            _ => h.call("echo", "{}"),
        }
        let r = h.next();
        assert_eq!(r.header("Mcp-Session-Id"), Some("sess-1"));
        h.feed(r.exchange, &empty_response(404));
        new_legacy_session(&mut h, "sess-2");
        let r = h.next();
        assert_eq!(
            r.rpc_method(),
            if op == "list" {
                "tools/list"
            } else {
                "tools/call"
            },
            "the operation restarts"
        );
        assert_eq!(r.header("Mcp-Session-Id"), Some("sess-2"));
        if expiries == 1 {
            let result = if op == "list" {
                tools_page(&["echo"], None)
            } else {
                CALL_OK.to_owned()
            };
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), &result)),
            );
            let events = h.take_events();
            assert!(
                matches!(
                    events[0],
                    Event::Connected {
                        era: Era::Legacy,
                        ..
                    }
                ),
                "{events:?}"
            );
            assert!(
                matches!(events[1], Event::ToolsListed(_) | Event::CallFinished(_)),
                "{events:?}"
            );
            assert_eq!(h.conn.session_id(), Some("sess-2"));
            // The next operation may start a new session again: the bound is per operation.
            h.list();
            let r = h.next();
            h.feed(r.exchange, &empty_response(404));
            new_legacy_session(&mut h, "sess-3");
            assert_eq!(h.next().header("Mcp-Session-Id"), Some("sess-3"));
        } else {
            h.feed(r.exchange, &empty_response(404));
            let events = h.take_events();
            let Some(Event::Failed { error, .. }) = events.last() else {
                panic!("{events:?}")
            };
            assert_eq!(*error, Error::SessionExpired);
            assert!(!h.has_outstanding(), "no third session");
        }
    }
}

/// The new session a legacy operation starts after its session expired counts against the
/// operation's own budget: an `initialize` that never answers ends the listing at its
/// `list_time` deadline (shorter here than `request_time`), reporting `list_time`.
#[test]
fn a_new_session_runs_within_the_operations_deadline() {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.budgets.list_time = Duration::from_secs(10);
    config.budgets.request_time = Duration::from_secs(30);
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(400));
    new_legacy_session(&mut h, "sess-1");
    h.take_events();
    let started = h.now;
    h.list();
    let r = h.next();
    h.advance(Duration::from_secs(4));
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    // Never answered.
    assert!(h.advance_to_timeout());
    assert_eq!(h.now, started + Duration::from_secs(10));
    let (operation, error) = failed(h.single_event());
    assert_eq!(operation, Operation::ListTools);
    assert_eq!(budget_of(&error), Budget::ListTime);
}

/// The opposite case: only a 404 to a request *carrying* `Mcp-Session-Id` is a session expiry.
/// A legacy server that assigned no session answers 404 for another reason: the operation fails
/// with that status and no new session is started.
#[test]
fn a_404_without_a_session_id_is_not_a_session_expiry() {
    let mut h = Harness::for_url("http://127.0.0.1:9/mcp", Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(400));
    let r = h.next();
    assert_eq!(r.rpc_method(), "initialize");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &initialize_ok("2025-11-25"))),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    h.take_events();
    assert_eq!(h.conn.session_id(), None);
    h.list();
    let r = h.next();
    assert_eq!(r.header("Mcp-Session-Id"), None);
    h.feed(r.exchange, &empty_response(404));
    let (_, e) = failed(h.single_event());
    assert_eq!(e, Error::HttpStatus { status: 404 });
    assert!(!h.has_outstanding(), "no new session");
}

#[test]
fn server_requests_on_a_legacy_stream_are_refused_without_blocking() {
    let mut h = legacy(Split::Whole, "2025-11-25");
    h.call("ask", "{}");
    let r = h.next();
    let id = r.rpc_id();
    let stream = format!(
        "id: 1\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"elicitation/create\",\"params\":{{}}}}\n\n\
         id: 2\ndata: {}\n\n",
        result_msg(id, CALL_OK)
    );
    h.feed(
        r.exchange,
        &sse_response(&[("mcp-session-id", "sess-1")], &stream, false),
    );
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    let refusal = h.next();
    let body = refusal.json();
    assert_eq!(body["id"], "srv-1");
    assert_eq!(body["error"]["code"], -32601);
}

/// The refusals the connection sent since the last look: (server request id, JSON-RPC answer).
fn refusals_sent(h: &mut Harness) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    while h.has_outstanding() {
        let r = h.next();
        assert_eq!(r.method, "POST", "only refusals are sent after the result");
        let body = r.json();
        assert!(
            body.get("method").is_none(),
            "a response, not a request: {body}"
        );
        out.push((body["id"].as_str().unwrap_or_default().to_owned(), body));
        h.feed(r.exchange, &empty_response(202));
    }
    out
}

/// A legacy call's event stream carrying `n` server requests, then the call's result.
fn stream_with_server_requests(call_id: u64, n: usize) -> String {
    const METHODS: [&str; 4] = [
        "sampling/createMessage",
        "ping",
        "elicitation/create",
        "roots/list",
    ];
    let mut stream = String::new();
    for i in 1..=n {
        let method = METHODS[(i - 1) % METHODS.len()];
        stream.push_str(&format!(
            "id: {i}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"srv-{i}\",\"method\":\"{method}\",\"params\":{{}}}}\n\n"
        ));
    }
    stream.push_str(&format!(
        "id: {}\ndata: {}\n\n",
        n + 1,
        result_msg(call_id, CALL_OK)
    ));
    stream
}

#[test]
fn server_requests_are_refused_up_to_four_per_logical_request_and_later_ones_ignored() {
    // MAX_REFUSALS_PER_REQUEST (4): a legacy server that sends many requests in one answer gets
    // four refusals (a `ping` answered with an empty result), the rest are ignored; the count is
    // per logical request, so the next call of the same session gets four again.
    for split in SPLITS {
        let mut h = legacy(split, "2025-11-25");
        for (call, sent_by_server) in [(1, 4), (2, 9), (3, 5), (4, 1)] {
            h.call("ask", "{}");
            let r = h.next();
            let stream = stream_with_server_requests(r.rpc_id(), sent_by_server);
            let head = if call == 1 {
                vec![("mcp-session-id", "sess-1")]
            } else {
                vec![]
            };
            h.feed(r.exchange, &sse_response(&head, &stream, false));
            assert!(
                matches!(h.single_event(), Event::CallFinished(_)),
                "call {call} ({split:?})"
            );
            let refused = refusals_sent(&mut h);
            let ids: Vec<&str> = refused.iter().map(|(id, _)| id.as_str()).collect();
            let want: Vec<String> = (1..=sent_by_server.min(4))
                .map(|i| format!("srv-{i}"))
                .collect();
            assert_eq!(
                ids, want,
                "call {call} ({split:?}): the first four, in order"
            );
            for (id, body) in &refused {
                if id == "srv-2" {
                    assert_eq!(body["result"], serde_json::json!({}), "{id}: ping answered");
                } else {
                    assert_eq!(body["error"]["code"], -32601, "{id}: refused");
                }
            }
            assert!(
                !h.has_outstanding(),
                "call {call} ({split:?}): nothing more sent"
            );
        }
    }
}

#[test]
fn byte_budget_covers_every_exchange() {
    let mut budgets = mcp_sansio::Budgets::default();
    budgets.response_bytes = 600;
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_budgets(budgets);
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    h.take_events();
    let used = h.conn.bytes_read();
    assert!(used > 0);
    h.list();
    let r = h.next();
    let names: Vec<String> = (0..40).map(|i| format!("tool{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&names, None))),
    );
    let (_, e) = failed(h.single_event());
    let b = e.budget().unwrap();
    assert_eq!((b.budget, b.limit), (Budget::ResponseBytes, 600));
    assert!(h.conn.bytes_read() <= 600);
}

/// Every scripted flow gives the same events whatever the split.
#[test]
fn outcomes_do_not_depend_on_splitting() {
    fn script(split: Split) -> Vec<String> {
        let mut h = legacy(split, "2025-06-18");
        let (id, _) = open_legacy_stream(&mut h, "id: a\r\ndata:\r\n\r\n: c\r\n\r\n");
        h.advance_to_timeout();
        let r = h.next();
        let s = format!(
            "id: b\rdata: {}\r\r",
            result_msg(id, &tools_page(&["x", "y"], Some("c1")))
        );
        h.feed(r.exchange, &sse_response(&[], &s, false));
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["z"], None))),
        );
        h.close();
        let r = h.next();
        h.feed(r.exchange, &empty_response(405));
        let mut out: Vec<String> = h.take_events().iter().map(|e| format!("{e:?}")).collect();
        out.push(format!("{:?} {:?}", h.abandoned, h.finished));
        out.push(format!("{}", h.conn.bytes_read()));
        out
    }
    let whole = script(Split::Whole);
    assert!(whole.iter().any(|e| e.contains("ToolsListed")), "{whole:?}");
    for split in [
        Split::Bytes,
        Split::Chunks(2),
        Split::Chunks(5),
        Split::Chunks(64),
    ] {
        assert_eq!(script(split), whole, "{split:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Sockets after an event-stream response

/// Forgets the sockets of the negotiation.
fn clean(mut h: Harness) -> Harness {
    h.finished.clear();
    h.abandoned.clear();
    h
}

/// A three-page listing whose pages all come as event streams.
fn list_three_sse_pages(h: &mut Harness) -> Vec<mcp_sansio::ExchangeId> {
    h.list();
    let mut exchanges = Vec::new();
    for (n, next) in [(0, Some("c1")), (1, Some("c2")), (2, None)] {
        let r = h.next();
        exchanges.push(r.exchange);
        let name = format!("t{n}");
        let stream = format!(
            "event: message\ndata: {}\n\n",
            result_msg(r.rpc_id(), &tools_page(&[&name], next))
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
    }
    exchanges
}

#[test]
fn sse_pages_ending_in_the_same_input_leave_reusable_sockets() {
    for split in SPLITS {
        let mut h = clean(modern(split));
        let before = h.finished.len();
        let exchanges = list_three_sse_pages(&mut h);
        match h.single_event() {
            Event::ToolsListed(c) => assert_eq!(c.tools.len(), 3),
            e => panic!("{e:?}"),
        }
        let want: Vec<_> = exchanges.iter().map(|x| (*x, true)).collect();
        assert_eq!(h.finished[before..], want[..], "{split:?}");
        assert!(h.abandoned.is_empty(), "{split:?}: {:?}", h.abandoned);
        assert_eq!(h.conn.poll_timeout(), None, "{split:?}: nothing is left");
    }
}

#[test]
fn sse_socket_is_finished_after_its_outcome_whatever_the_split() {
    // The page's socket is reported free right after the events of its outcome, in the same
    // order whether the terminator came with the message or one byte at a time.
    for whole in [true, false] {
        let mut h = clean(modern(Split::Whole));
        h.conn.list_tools(h.now);
        let t = h.conn.poll_transmit().expect("a page request");
        let r = parse_request(&t);
        let stream = format!(
            "data: {}\n\n",
            result_msg(r.rpc_id(), &tools_page(&["a"], None))
        );
        let response = sse_response(&[], &stream, false);
        let mut events = Vec::new();
        if whole {
            h.socket
                .handle_bytes(&mut h.conn, h.now, t.exchange, &response);
        }
        for b in response.iter().filter(|_| !whole) {
            h.socket
                .handle_bytes(&mut h.conn, h.now, t.exchange, std::slice::from_ref(b));
            while let Some(e) = h.conn.poll_event() {
                events.push(e);
            }
        }
        while let Some(e) = h.conn.poll_event() {
            events.push(e);
        }
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(&events[0], Event::ToolsListed(c) if c.tools.len() == 1));
        assert!(
            matches!(events[1], Event::ExchangeFinished { exchange, reusable: true } if exchange == t.exchange),
            "{events:?}"
        );
    }
}

#[test]
fn sse_terminator_in_a_later_input_within_the_grace_is_reusable() {
    for split in SPLITS {
        let mut h = clean(modern(split));
        h.call("x", "{}");
        let r = h.next();
        let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
        h.feed(r.exchange, &sse_response(&[], &stream, true));
        assert!(
            matches!(h.single_event(), Event::CallFinished(_)),
            "{split:?}: the result does not wait for the end of the stream"
        );
        assert!(!h.conn.is_busy());
        assert!(h.finished.is_empty() && h.abandoned.is_empty());
        h.advance(DRAIN_GRACE - Duration::from_millis(1));
        assert!(h.abandoned.is_empty(), "{split:?}: still within the grace");
        h.feed(r.exchange, b"0\r\n\r\n");
        assert_eq!(h.finished, vec![(r.exchange, true)], "{split:?}");
        assert!(h.abandoned.is_empty());
        assert!(
            h.take_events().is_empty(),
            "{split:?}: nothing more to report"
        );
        assert_eq!(h.conn.poll_timeout(), None);
    }
}

#[test]
fn sse_terminator_after_the_grace_is_not_read() {
    let mut h = clean(modern(Split::Whole));
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    h.feed(r.exchange, &sse_response(&[], &stream, true));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert!(h.advance_to_timeout());
    assert_eq!(h.abandoned, vec![r.exchange]);
    h.feed(r.exchange, b"0\r\n\r\n");
    assert!(
        h.finished.is_empty(),
        "an abandoned exchange stays abandoned"
    );
}

#[test]
fn sse_grace_never_exceeds_the_close_budget() {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.budgets.close_time = Duration::from_millis(200);
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    let mut h = clean(h);
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    h.feed(r.exchange, &sse_response(&[], &stream, true));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert_eq!(
        h.conn.poll_timeout(),
        Some(h.now + Duration::from_millis(200))
    );
    h.advance(Duration::from_millis(200));
    assert_eq!(h.abandoned, vec![r.exchange]);
}

#[test]
fn sse_bytes_after_the_result_are_bounded() {
    for split in SPLITS {
        let mut h = clean(modern(split));
        h.call("x", "{}");
        let r = h.next();
        let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
        h.feed(r.exchange, &sse_response(&[], &stream, true));
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        // More stream than the drain reads, then the terminator.
        let filler = format!(
            ": {}\n\n",
            "x".repeat(usize::try_from(DRAIN_BYTES).unwrap())
        );
        let more = format!("{:x}\r\n{filler}\r\n0\r\n\r\n", filler.len());
        h.feed(r.exchange, more.as_bytes());
        assert_eq!(h.abandoned, vec![r.exchange], "{split:?}");
        assert!(h.finished.is_empty(), "{split:?}");
        assert!(h.take_events().is_empty());
        assert_eq!(h.conn.poll_timeout(), None);
    }
}

#[test]
fn sse_small_tail_after_the_result_is_read_to_the_end() {
    // Comments or other messages after the result are skipped; the socket stays reusable.
    for split in SPLITS {
        let mut h = clean(modern(split));
        h.call("x", "{}");
        let r = h.next();
        let stream = format!(
            "data: {}\n\n: bye\n\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{}}}}\n\n",
            result_msg(r.rpc_id(), CALL_OK)
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        assert_eq!(h.finished, vec![(r.exchange, true)], "{split:?}");
        assert!(h.abandoned.is_empty());
    }
}

#[test]
fn sse_bytes_beyond_the_response_make_it_not_reusable() {
    let mut h = clean(modern(Split::Whole));
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    let mut bytes = sse_response(&[], &stream, false);
    bytes.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    h.feed(r.exchange, &bytes);
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert_eq!(h.finished, vec![(r.exchange, false)]);
    assert!(h.abandoned.is_empty());
}

#[test]
fn close_delimited_sse_is_abandoned_after_its_result() {
    for split in SPLITS {
        let mut h = clean(modern(split));
        h.call("x", "{}");
        let r = h.next();
        let bytes = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {}\n\n",
            result_msg(r.rpc_id(), CALL_OK)
        );
        h.feed(r.exchange, bytes.as_bytes());
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        assert_eq!(h.abandoned, vec![r.exchange], "{split:?}: never reusable");
        assert_eq!(h.conn.poll_timeout(), None);
    }
}

#[test]
fn sse_result_is_reported_at_the_byte_that_completes_it() {
    let mut h = clean(modern(Split::Whole));
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    let bytes = sse_response(&[], &stream, false);
    let event_end = {
        let text = String::from_utf8(bytes.clone()).unwrap();
        text.find("}}\n\n").unwrap() + 4
    };
    let mut result_at = None;
    let mut finished_at = None;
    for (i, b) in bytes.iter().enumerate() {
        h.socket
            .handle_bytes(&mut h.conn, h.now, r.exchange, std::slice::from_ref(b));
        while let Some(e) = h.conn.poll_event() {
            match e {
                Event::CallFinished(_) => result_at = Some(i + 1),
                Event::ExchangeFinished { exchange, reusable } => {
                    assert_eq!(exchange, r.exchange);
                    assert!(reusable);
                    finished_at = Some(i + 1);
                }
                e => panic!("{e:?}"),
            }
        }
    }
    assert_eq!(result_at, Some(event_end), "the last byte of the event");
    assert_eq!(
        finished_at,
        Some(bytes.len()),
        "the last byte of the framing"
    );
}

#[test]
fn legacy_stream_closed_after_its_result_is_fine() {
    for split in SPLITS {
        let mut h = clean(legacy(split, "2025-11-25"));
        h.call("x", "{}");
        let r = h.next();
        let stream = format!("id: 1\ndata: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
        h.feed(r.exchange, &sse_response(&[], &stream, true));
        assert!(matches!(h.single_event(), Event::CallFinished(_)));
        h.eof(r.exchange);
        assert_eq!(h.abandoned, vec![r.exchange], "{split:?}");
        assert!(
            h.take_events().is_empty(),
            "{split:?}: no failure, no resumption"
        );
        assert_eq!(h.gets(), 0);
        assert_eq!(h.conn.poll_timeout(), None);
    }
}

#[test]
fn next_operation_runs_while_a_stream_drains() {
    let mut h = clean(modern(Split::Whole));
    h.call("x", "{}");
    let r1 = h.next();
    let stream = format!("data: {}\n\n", result_msg(r1.rpc_id(), CALL_OK));
    h.feed(r1.exchange, &sse_response(&[], &stream, true));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    h.call("y", "{}");
    let r2 = h.next();
    assert_ne!(r1.exchange, r2.exchange);
    h.feed(r1.exchange, b"0\r\n\r\n");
    assert_eq!(h.finished, vec![(r1.exchange, true)]);
    assert!(h.conn.is_busy(), "the second call still runs");
    h.feed(
        r2.exchange,
        &json_response(200, &result_msg(r2.rpc_id(), CALL_OK)),
    );
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert_eq!(h.finished, vec![(r1.exchange, true), (r2.exchange, true)]);
}

#[test]
fn close_drops_a_draining_stream() {
    let mut h = clean(modern(Split::Whole));
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    h.feed(r.exchange, &sse_response(&[], &stream, true));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    h.close();
    assert_eq!(h.abandoned, vec![r.exchange]);
    assert!(matches!(h.single_event(), Event::Closed));
    assert_eq!(h.conn.poll_timeout(), None);
}

// ---------------------------------------------------------------------------------------------
// Regressions: state that was only readable by combining flags

#[test]
fn failed_renegotiation_inside_a_listing_leaves_no_half_initialised_session() {
    for split in SPLITS {
        let mut h = modern_hinted(split);
        let r = list_until_legacy_initialize(&mut h);
        // `initialize` fails with a JSON-RPC error, but the head carries a session id.
        h.feed(
            r.exchange,
            &json_response_with(
                400,
                &[("mcp-session-id", "half")],
                &error_msg(r.rpc_id(), -32600, "Invalid request", None),
            ),
        );
        let (operation, error) = failed(h.single_event());
        assert_eq!(operation, Operation::ListTools);
        assert!(
            matches!(error, Error::Rpc(ref e) if e.code == -32600),
            "{error:?}"
        );
        assert_eq!(h.conn.era_hint(), None, "nothing was negotiated");
        assert_eq!(h.conn.session_id(), None, "no session was established");
        // A new listing is refused: the connection is not connected.
        h.list();
        let (operation, error) = failed(h.single_event());
        assert_eq!(operation, Operation::ListTools);
        assert!(matches!(error, Error::Misuse { .. }), "{error:?}");
        assert!(!h.has_outstanding(), "nothing was sent");
    }
}

#[test]
fn relisting_inside_a_call_reports_the_call_budget_and_its_limit() {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.budgets.call_time = Duration::from_secs(10);
    config.budgets.list_time = Duration::from_secs(100);
    config.budgets.request_time = Duration::from_secs(30);
    let mut h = modern_with(config, Split::Whole);
    h.call("echo", r#"{"text":"hi"}"#);
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list", "the tools are listed once");
    // The listing never answers: the call's deadline ends it.
    assert!(h.advance_to_timeout());
    assert_eq!(h.now, Instant::ZERO + Duration::from_secs(10));
    let (operation, error) = failed(h.single_event());
    assert_eq!(operation, Operation::CallTool);
    let exceeded = error.budget().expect("a budget error");
    assert_eq!(exceeded.budget, Budget::CallTime);
    assert_eq!(exceeded.limit, 10_000, "call_time's limit, not list_time's");
}

#[test]
fn a_relisting_restarted_by_a_re_negotiation_still_serves_its_call() {
    let mut h = modern_hinted(Split::Whole);
    h.call("echo", r#"{"text":"hi"}"#);
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    // The listing's answer shows the hint was wrong: re-negotiate, then list again for the call.
    h.feed(r.exchange, &empty_response(400));
    let r = h.next();
    assert_eq!(r.rpc_method(), "server/discover");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list", "the listing restarts");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None))),
    );
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call", "the call is sent once more");
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
    );
    let evs = h.take_events();
    assert!(matches!(evs[0], Event::Connected { .. }), "{evs:?}");
    assert!(matches!(evs[1], Event::CallFinished(_)), "{evs:?}");
    assert_eq!(evs.len(), 2, "no listing is reported: {evs:?}");
}

/// A legacy session connected with the input hook on.
fn legacy_hooked(split: Split) -> Harness {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.input_hook = true;
    let mut h = Harness::new(config, split);
    h.connect();
    let r = h.next();
    h.feed(r.exchange, &empty_response(404));
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response_with(
            200,
            &[("mcp-session-id", "sess-1")],
            &result_msg(r.rpc_id(), &initialize_ok("2025-11-25")),
        ),
    );
    let r = h.next();
    h.feed(r.exchange, &empty_response(202));
    assert!(matches!(h.single_event(), Event::Connected { .. }));
    // The standalone stream (tests/standalone_get.rs): this server offers none.
    let get = h.next();
    assert_eq!(get.method, "GET");
    h.feed(get.exchange, &empty_response(405));
    h
}

/// A legacy call's event stream: `requests` (method, params) from the server, then the result.
fn stream_of(call_id: u64, requests: &[(&str, &str)]) -> String {
    let mut stream = String::new();
    for (i, (method, params)) in requests.iter().enumerate() {
        stream.push_str(&format!(
            "id: {i}\ndata: {{\"jsonrpc\":\"2.0\",\"id\":\"srv-{}\",\"method\":\"{method}\",\"params\":{params}}}\n\n",
            i + 1
        ));
    }
    stream.push_str(&format!("data: {}\n\n", result_msg(call_id, CALL_OK)));
    stream
}

/// The 2025-11-25 transport: "The server MAY send JSON-RPC requests and notifications before
/// sending the JSON-RPC response. These messages SHOULD relate to the originating client
/// request." With the input hook on, a legacy server's `elicitation/create`,
/// `sampling/createMessage` and `roots/list` are handed to the embedder, whose answer is sent as
/// the request's result ("The receiver MUST respond with either a result or an error"); `None`
/// refuses, as without the hook; `ping` is still answered by the client itself.
#[test]
fn legacy_server_requests_go_to_the_input_hook_and_its_answers_are_sent() {
    let params = r#"{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}"#;
    for split in SPLITS {
        let mut h = legacy_hooked(split);
        h.call("ask", "{}");
        let r = h.next();
        let stream = stream_of(
            r.rpc_id(),
            &[
                ("elicitation/create", params),
                ("ping", "{}"),
                ("roots/list", "{}"),
            ],
        );
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        let events: Vec<Event> = h
            .take_events()
            .into_iter()
            .filter(|e| !matches!(e, Event::ExchangeFinished { .. }))
            .collect();
        let asked: Vec<(String, String, Option<String>)> = events
            .iter()
            .filter_map(|e| match e {
                Event::ServerRequest { id, method, params } => Some((
                    id.get().to_owned(),
                    method.clone(),
                    params.as_ref().map(|p| p.get().to_owned()),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            asked,
            [
                (
                    "\"srv-1\"".to_owned(),
                    "elicitation/create".to_owned(),
                    Some(params.to_owned())
                ),
                (
                    "\"srv-3\"".to_owned(),
                    "roots/list".to_owned(),
                    Some("{}".into())
                ),
            ],
            "{split:?}"
        );
        assert!(
            matches!(events.last(), Some(Event::CallFinished(_))),
            "{split:?}"
        );
        // The ping was answered by the client.
        let sent = refusals_sent(&mut h);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, "srv-2");
        let id = serde_json::value::RawValue::from_string("\"srv-1\"".into()).unwrap();
        let answer = br#"{"action":"accept","content":{"name":"Ada"}}"#;
        h.conn
            .answer_server_request(h.now, &id, Some(answer))
            .unwrap();
        let id3 = serde_json::value::RawValue::from_string("\"srv-3\"".into()).unwrap();
        h.conn.answer_server_request(h.now, &id3, None).unwrap();
        h.drain();
        let sent = refusals_sent(&mut h);
        assert_eq!(sent[0].0, "srv-1");
        assert_eq!(
            sent[0].1["result"],
            serde_json::json!({"action":"accept","content":{"name":"Ada"}})
        );
        assert_eq!(sent[1].0, "srv-3");
        assert_eq!(sent[1].1["error"]["code"], -32601);
    }
}

/// Hostile: a legacy server that sends many elicitation requests in one answer. At most
/// `MAX_REFUSALS_PER_REQUEST` server requests per logical request reach the hook (answered or
/// refused); the rest are ignored.
#[test]
fn many_elicitation_requests_reach_the_hook_up_to_the_cap() {
    for split in SPLITS {
        let mut h = legacy_hooked(split);
        h.call("ask", "{}");
        let r = h.next();
        let requests = vec![
            (
                "elicitation/create",
                r#"{"message":"m","requestedSchema":{}}"#
            );
            50
        ];
        h.feed(
            r.exchange,
            &sse_response(&[], &stream_of(r.rpc_id(), &requests), false),
        );
        let asked = h
            .take_events()
            .iter()
            .filter(|e| matches!(e, Event::ServerRequest { .. }))
            .count();
        assert_eq!(
            asked,
            mcp_sansio::limits::MAX_REFUSALS_PER_REQUEST as usize,
            "{split:?}"
        );
        assert!(refusals_sent(&mut h).is_empty());
    }
}

/// Hostile: a huge elicitation request (params beyond `MAX_SERVER_REQUEST_BYTES`) is refused,
/// not handed on; an answer beyond `MAX_SERVER_ANSWER_BYTES` is refused in its place and the
/// embedder is told why.
#[test]
fn a_huge_elicitation_request_is_refused_and_a_huge_answer_too() {
    let big = format!(
        r#"{{"message":"{}","requestedSchema":{{}}}}"#,
        "x".repeat(mcp_sansio::limits::MAX_SERVER_REQUEST_BYTES)
    );
    let mut h = legacy_hooked(Split::Whole);
    h.call("ask", "{}");
    let r = h.next();
    let stream = stream_of(
        r.rpc_id(),
        &[("elicitation/create", &big), ("elicitation/create", "{}")],
    );
    h.feed(r.exchange, &sse_response(&[], &stream, false));
    let asked: Vec<String> = h
        .take_events()
        .iter()
        .filter_map(|e| match e {
            Event::ServerRequest { id, .. } => Some(id.get().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["\"srv-2\""]);
    let sent = refusals_sent(&mut h);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, "srv-1");
    assert_eq!(sent[0].1["error"]["code"], -32601);
    let id = serde_json::value::RawValue::from_string("\"srv-2\"".into()).unwrap();
    let huge = format!(
        r#"{{"action":"accept","content":{{"t":"{}"}}}}"#,
        "y".repeat(mcp_sansio::limits::MAX_SERVER_ANSWER_BYTES)
    );
    let e = h
        .conn
        .answer_server_request(h.now, &id, Some(huge.as_bytes()))
        .unwrap_err();
    assert!(e.to_string().contains("larger than"), "{e}");
    h.drain();
    let sent = refusals_sent(&mut h);
    assert_eq!(sent[0].0, "srv-2");
    assert_eq!(sent[0].1["error"]["code"], -32601);
}
