//! A modern connection whose `tools/list` page and `tools/call` result are arbitrary JSON text
//! (the result the last member of the message or the first, so that the call's one pass is
//! followed by the envelope): catalogs, x-mcp-header validation, content blocks and
//! input_required shapes never panic, and every operation ends with an event. A listing or a call
//! fed whole and fed in pieces (cut where the input says) gives the same outcome, and every catalog keeps its invariants: entries numbered in
//! order, names unique and accepted by the rule, schemas JSON objects kept as sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{Config, Connection, Era, EraHint, Event, Instant};

fn drive(conn: &mut Connection, now: Instant, result: &[u8], piece: usize) -> Vec<Event> {
    let mut events = Vec::new();
    let mut answered = false;
    let mut socket = Http1Socket::new();
    for _ in 0..64 {
        let mut progressed = false;
        while let Some(t) = conn.poll_transmit() {
            progressed = true;
            let id = {
                let body = &t.request.body;
                serde_json::from_slice::<serde_json::Value>(body)
                    .ok()
                    .and_then(|v| v["id"].as_u64())
            };
            let Some(id) = id else { continue };
            let body = if answered {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[],"content":[]}}}}"#)
                    .into_bytes()
            } else {
                // The result last (as most servers write it) or first (then the envelope is
                // read after the result's own pass).
                if result.len() % 2 == 0 {
                    let mut b = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#).into_bytes();
                    b.extend_from_slice(result);
                    b.push(b'}');
                    b
                } else {
                    let mut b = br#"{"result":"#.to_vec();
                    b.extend_from_slice(result);
                    b.extend_from_slice(format!(r#","jsonrpc":"2.0","id":{id}}}"#).as_bytes());
                    b
                }
            };
            answered = true;
            let mut resp = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .into_bytes();
            resp.extend_from_slice(&body);
            for chunk in resp.chunks(piece.max(1)) {
                socket.handle_bytes(conn, now, t.exchange, chunk);
            }
        }
        while let Some(e) = conn.poll_event() {
            progressed = true;
            events.push(e);
        }
        if !progressed {
            break;
        }
    }
    events
}

/// The catalog's invariants.
fn check_catalog(c: &mcp_sansio::Catalog) {
    let mut names = std::collections::HashSet::new();
    for t in &c.tools {
        assert!(mcp_sansio::internals::valid_tool_name(t.name()), "{t:?}");
        assert!(names.insert(t.name().to_owned()), "duplicate {t:?}");
        assert!(
            t.input_schema().starts_with('{') && t.input_schema().ends_with('}'),
            "{t:?}"
        );
    }
    assert!(c.refused.windows(2).all(|w| w[0].index < w[1].index));
    assert!(c.refused.iter().all(|r| !r.reason.to_string().is_empty()));
}

/// The outcome of a listing or a call, comparable across splits.
fn outcome(events: &[Event]) -> Option<String> {
    events.iter().find_map(|e| match e {
        Event::ToolsListed(c) => {
            check_catalog(c);
            Some(format!("{c:?}"))
        }
        Event::CallFinished(r) => Some(format!("{r:?}")),
        Event::InputRequired { requests } => Some(format!("input: {}", requests.get())),
        Event::Failed { error, .. } => Some(format!("failed: {error}")),
        _ => None,
    })
}

fuzz_target!(|data: &[u8]| {
    let hint = EraHint {
        era: Era::Modern,
        version: mcp_sansio::MODERN_VERSION.into(),
    };
    for list in [true, false] {
        let mut config = Config::new("http://127.0.0.1:9/mcp")
            .unwrap()
            .with_era_hint(Some(hint.clone()));
        config.input_hook = data.first().is_some_and(|b| b & 1 == 1);
        let mut conn = Connection::new(config).unwrap();
        let now = Instant::ZERO;
        conn.connect(now);
        let _ = drive(&mut conn, now, data, usize::MAX);
        if list {
            conn.list_tools(now);
        } else {
            conn.call_tool(now, "t", b"{}");
        }
        let events = drive(&mut conn, now, data, usize::MAX);
        {
            // The same listing or call, the response fed in pieces.
            let piece = usize::from(data.last().copied().unwrap_or(1)) % 97 + 1;
            let mut config = Config::new("http://127.0.0.1:9/mcp")
                .unwrap()
                .with_era_hint(Some(hint.clone()));
            config.input_hook = data.first().is_some_and(|b| b & 1 == 1);
            let mut split = Connection::new(config).unwrap();
            split.connect(now);
            let _ = drive(&mut split, now, data, piece);
            if list {
                split.list_tools(now);
            } else {
                split.call_tool(now, "t", b"{}");
            }
            let split_events = drive(&mut split, now, data, piece);
            assert_eq!(outcome(&events), outcome(&split_events));
        }
        let ended = events.iter().any(|e| {
            matches!(
                e,
                Event::ToolsListed(_)
                    | Event::CallFinished(_)
                    | Event::Failed { .. }
                    | Event::InputRequired { .. }
            )
        });
        // Either the operation ended, or it is waiting on time (load-shedding backoff, more pages).
        assert!(
            ended || conn.poll_timeout().is_some() || !conn.is_busy(),
            "{events:?}"
        );
        if let Some(t) = conn.poll_timeout() {
            conn.handle_timeout(t.max(now) + std::time::Duration::from_secs(3600));
            let _ = drive(&mut conn, t, data, usize::MAX);
            assert!(!conn.is_busy(), "ends at its deadline");
        }
    }
});
