//! `Http1Socket`: a connection's requests encoded as HTTP/1.1 (RFC 9112), and each exchange's
//! bytes decoded into response events against the connection's remaining byte allowance, so
//! that the byte budget fails at the exact byte, a draining exchange counts the raw bytes it
//! reads, and a body that arrives whole in bytes given away is kept where it arrived.

mod support;

use mcp_sansio::internals::DRAIN_BYTES;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{Budget, Budgets, Config, Error, Event};
use support::*;

/// The request a modern hinted connection sends for `tools/list`, as the socket encodes it.
fn listing_request() -> (mcp_sansio::Transmit, Vec<u8>) {
    let config = Config::new("http://127.0.0.1:9/mcp?x=1")
        .unwrap()
        .with_era_hint(Some(mcp_sansio::EraHint {
            era: mcp_sansio::Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut conn = mcp_sansio::Connection::new(config).unwrap();
    let now = mcp_sansio::Instant::ZERO;
    conn.connect(now);
    while conn.poll_event().is_some() {}
    conn.list_tools(now);
    let t = conn.poll_transmit().expect("the listing's request");
    let bytes = Http1Socket::encode(&t).unwrap();
    (t, bytes)
}

#[test]
fn the_request_is_encoded_as_http1_with_host_and_content_length() {
    let (t, bytes) = listing_request();
    let r = &t.request;
    // RFC 9112 §3: request-line = method SP request-target SP HTTP-version CRLF.
    let line = format!("{} {} HTTP/1.1\r\n", r.method.as_str(), r.path);
    assert!(
        bytes.starts_with(line.as_bytes()),
        "{}",
        String::from_utf8_lossy(&bytes)
    );
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(n) = parsed.parse(&bytes).unwrap() else {
        panic!("an incomplete request");
    };
    assert_eq!(parsed.method, Some(r.method.as_str()));
    assert_eq!(parsed.path, Some(r.path.as_str()));
    assert_eq!(parsed.version, Some(1));
    let fields: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8(h.value.to_vec()).unwrap(),
            )
        })
        .collect();
    let one = |name: &str| {
        let v: Vec<&String> = fields
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(v.len(), 1, "exactly one {name}: {fields:?}");
        v[0].clone()
    };
    // RFC 9112 §3.2: Host carries the authority; RFC 9110 §8.6: the body's length.
    assert_eq!(one("host"), r.authority);
    assert_eq!(one("content-length"), r.body.len().to_string());
    // Every header of the neutral request, in its order, with its value.
    let mut at = 0;
    for (name, value) in &r.headers {
        let found = fields[at..]
            .iter()
            .position(|(n, v)| n.eq_ignore_ascii_case(name) && v == value)
            .unwrap_or_else(|| panic!("{name}: {value} missing or out of order"));
        at += found + 1;
    }
    assert_eq!(&bytes[n..], &r.body[..], "the body follows the head");
}

/// How the test response delimits its body.
#[derive(Clone, Copy, Debug)]
enum Framing {
    /// `Content-Length`.
    Length,
    /// Neither length nor chunks: the body ends when the server closes the socket.
    Close,
}

/// A modern hinted connection with a byte budget of `limit` that lists; the page's response
/// (fed in `split`, framed by `framing`), the events and the bytes charged.
fn list_under(limit: u64, split: Split, framing: Framing) -> (Vec<u8>, Vec<Event>, u64) {
    let mut budgets = Budgets::default();
    budgets.response_bytes = limit;
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_budgets(budgets)
        .with_era_hint(Some(mcp_sansio::EraHint {
            era: mcp_sansio::Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut h = Harness::new(config, split);
    h.connect();
    h.take_events();
    h.list();
    let r = h.next();
    let body = result_msg(r.rpc_id(), &tools_page(&["a", "b"], None));
    match framing {
        Framing::Length => {
            let response = json_response(200, &body);
            h.feed(r.exchange, &response);
            (response, h.take_events(), h.conn.bytes_read())
        }
        Framing::Close => {
            let response =
                format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{body}")
                    .into_bytes();
            h.respond_and_close(r.exchange, &response);
            (response, h.take_events(), h.conn.bytes_read())
        }
    }
}

#[test]
fn the_byte_budget_fails_at_the_exact_byte_in_every_split() {
    for framing in [Framing::Length, Framing::Close] {
        let (response, _, _) = list_under(1 << 20, Split::Whole, framing);
        let len = response.len() as u64;
        let mut failed_at = None;
        for split in SPLITS {
            let at = format!("{framing:?} {split:?}");
            // Exactly the response's bytes: listed, every byte charged.
            let (_, events, read) = list_under(len, split, framing);
            assert!(
                matches!(events.as_slice(), [Event::ToolsListed(_)]),
                "{at}: {events:?}"
            );
            assert_eq!(read, len, "{at}");
            // One byte less: the budget, with its configured limit.
            let (_, events, read) = list_under(len - 1, split, framing);
            let [Event::Failed { error, .. }] = events.as_slice() else {
                panic!("{at}: {events:?}");
            };
            let b = error.budget().expect("a budget error");
            assert_eq!(
                (b.budget, b.limit),
                (Budget::ResponseBytes, len - 1),
                "{at}"
            );
            match framing {
                // Refused when announced: nothing of the body is read, in any split.
                Framing::Length => assert_eq!(*failed_at.get_or_insert(read), read, "{at}"),
                // Read up to the last byte the budget allows, and no further.
                Framing::Close => assert_eq!(read, len - 1, "{at}"),
            }
        }
    }
}

#[test]
fn a_content_length_beyond_the_budget_fails_before_the_body() {
    for split in SPLITS {
        let mut budgets = Budgets::default();
        budgets.response_bytes = 1000;
        let config = Config::new("http://127.0.0.1:9/mcp")
            .unwrap()
            .with_budgets(budgets)
            .with_era_hint(Some(mcp_sansio::EraHint {
                era: mcp_sansio::Era::Modern,
                version: "2026-07-28".into(),
            }));
        let mut h = Harness::new(config, split);
        h.connect();
        h.take_events();
        h.call("echo", "{}");
        let r = h.next();
        // Only the head: it announces more than the budget has left.
        let head =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 990\r\n\r\n";
        h.feed(r.exchange, head);
        let events = h.take_events();
        let [Event::Failed { error, .. }] = events.as_slice() else {
            panic!("{split:?}: {events:?}");
        };
        assert!(
            matches!(error, Error::Budget(b) if b.budget == Budget::ResponseBytes && b.limit == 1000),
            "{split:?}: {error:?}"
        );
        assert_eq!(h.abandoned, vec![r.exchange]);
        assert_eq!(h.socket.reading(), 0, "the exchange's reader is gone");
    }
}

/// A modern call answered on an event stream whose framing goes on after the result with
/// `tail_len` raw bytes (a chunk of comments, then the last chunk), fed in `split`. The CRLF
/// that closes the result's chunk is read after the result too: `tail_len + 2` raw bytes in
/// all.
fn drain_tail(tail_len: usize, split: Split) -> Harness {
    let mut h = modern(split);
    h.finished.clear();
    h.abandoned.clear();
    h.call("x", "{}");
    let r = h.next();
    let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), CALL_OK));
    h.feed(r.exchange, &sse_response(&[], &stream, true));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    // The tail: "<hex>\r\n: xxx…\n\n\r\n0\r\n\r\n", of exactly `tail_len` bytes.
    let tail = (1..tail_len)
        .map(|n| {
            let filler = format!(": {}\n\n", "x".repeat(n));
            format!("{:x}\r\n{filler}\r\n0\r\n\r\n", filler.len())
        })
        .find(|t| t.len() == tail_len)
        .expect("a tail of that length");
    h.feed(r.exchange, tail.as_bytes());
    h
}

#[test]
fn a_draining_exchange_reads_at_most_drain_bytes_raw() {
    let limit = usize::try_from(DRAIN_BYTES).unwrap();
    for split in SPLITS {
        // The framing ends within the drain's bytes: the socket is reusable.
        let h = drain_tail(limit - 2, split);
        assert_eq!(h.finished.len(), 1, "{split:?}");
        assert!(h.finished[0].1, "{split:?}: reusable");
        assert!(h.abandoned.is_empty(), "{split:?}");
        // One raw byte more: abandoned.
        let h = drain_tail(limit - 1, split);
        assert!(h.finished.is_empty(), "{split:?}");
        assert_eq!(h.abandoned.len(), 1, "{split:?}");
        assert_eq!(h.socket.reading(), 0, "{split:?}");
    }
}

#[test]
fn a_body_given_away_whole_is_kept_where_it_arrived_and_a_borrowed_one_is_copied() {
    for owned in [true, false] {
        let mut h = modern_hinted(Split::Whole);
        h.list();
        let r = h.next();
        let response = json_response(200, &result_msg(r.rpc_id(), &tools_page(&["a"], None)));
        let range = if owned {
            let v = response.clone();
            let range = (v.as_ptr() as usize, v.len());
            h.socket
                .handle_owned_bytes(&mut h.conn, h.now, r.exchange, v);
            range
        } else {
            h.socket
                .handle_bytes(&mut h.conn, h.now, r.exchange, &response);
            (response.as_ptr() as usize, response.len())
        };
        h.drain();
        let events = h.take_events();
        let [Event::ToolsListed(catalog)] = events.as_slice() else {
            panic!("{events:?}");
        };
        let schema = catalog.tools[0].input_schema();
        let p = schema.as_ptr() as usize;
        let inside = p >= range.0 && p + schema.len() <= range.0 + range.1;
        assert_eq!(
            inside, owned,
            "owned {owned}: kept in place only when given away"
        );
    }
}
