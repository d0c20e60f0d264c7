//! One input: everything the network brings for an exchange is an `Input` handed to
//! `Connection::handle`, and both socket types produce inputs for connections they do not own.

use mcp_sansio::h2::H2Config;
use mcp_sansio::mux::{H2Streams, WorkId};
use mcp_sansio::wire::{ResponseEvent, ResponseHead, WireError};
use mcp_sansio::{Config, Connection, Era, EraHint, Error, Event, ExchangeId, Input, Instant};

/// A modern connection from a hint (no request) with a `tools/list` under way, and its request.
fn listing() -> (Connection, mcp_sansio::Transmit) {
    let mut config = Config::new("https://mcp.example.com/mcp").unwrap();
    config.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    let mut conn = Connection::new(config).unwrap();
    conn.connect(Instant::ZERO);
    while conn.poll_event().is_some() {}
    conn.list_tools(Instant::ZERO);
    let t = conn.poll_transmit().expect("the listing's request");
    (conn, t)
}

fn events(conn: &mut Connection) -> Vec<Event> {
    core::iter::from_fn(|| conn.poll_event()).collect()
}

/// A response's body before its head is no codec's refusal, HTTP/1.1's or HTTP/2's: the
/// exchange fails with an error that says the events came out of order and names no wire.
#[test]
fn events_out_of_order_fail_the_exchange_naming_no_wire() {
    let (mut conn, t) = listing();
    let event = ResponseEvent::Body {
        bytes: b"{}",
        raw: 2,
        owner: None,
    };
    conn.handle(
        Instant::ZERO,
        Input::Response {
            exchange: t.exchange,
            event,
        },
    );
    let events = events(&mut conn);
    let failed = events.iter().find_map(|e| match e {
        Event::Failed { error, .. } => Some(error),
        _ => None,
    });
    match failed {
        Some(Error::Wire(WireError::OutOfOrder { what })) => {
            assert!(what.contains("before the response head"), "{what}")
        }
        other => panic!("{other:?} in {events:?}"),
    }
    assert!(!conn.has_exchange(t.exchange));
}

/// Each input names its exchange, and a connection ignores the inputs of exchanges it does not
/// have: nothing is charged, nothing happens.
#[test]
fn inputs_of_an_unknown_exchange_are_ignored() {
    let (mut conn, t) = listing();
    let other = ExchangeId(t.exchange.0 + 100);
    let head = ResponseHead {
        status: 200,
        headers: Vec::new(),
        content_length: Some(0),
        close_delimited: false,
    };
    let input = Input::Response {
        exchange: other,
        event: ResponseEvent::Head { head, raw: 40 },
    };
    assert_eq!(input.exchange(), other);
    conn.handle(Instant::ZERO, input);
    conn.handle(Instant::ZERO, Input::Eof { exchange: other });
    assert_eq!(conn.bytes_read(), 0);
    assert!(events(&mut conn).is_empty());
    assert!(conn.has_exchange(t.exchange));
}

/// A frame (RFC 9113 §4.1): 24-bit length, type, flags, stream id, payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// The HEADERS (END_HEADERS) and DATA (END_STREAM) frames answering a listing on `stream`
/// with one tool named `name`.
fn answer(stream: u32, name: &str) -> Vec<u8> {
    // HPACK (RFC 7541): `:status: 200` is static index 8; `content-type` (index 31) with a
    // literal value.
    let mut block = vec![0x88, 0x5f, 16];
    block.extend_from_slice(b"application/json");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"{name}","inputSchema":{{"type":"object"}}}}]}}}}"#
    );
    let mut wire = frame(0x1, 0x4, stream, &block);
    wire.extend(frame(0x0, 0x1, stream, body.as_bytes()));
    wire
}

/// Two connections' listings as the streams of one socket that owns neither: every input comes
/// out with the work item it is for, whatever order the server answers in, even though both
/// connections numbered their exchange alike; and each work item is charged exactly the frames
/// of its own stream (RFC 9113 §5.1.1: the client's streams are 1, 3, … in the order opened).
#[test]
fn the_h2_streams_route_each_input_to_the_work_item_they_do_not_own() {
    let now = Instant::ZERO;
    let (mut a, ta) = listing();
    let (mut b, tb) = listing();
    assert_eq!(ta.exchange, tb.exchange, "each connection numbers its own");
    let mut streams = H2Streams::new(now, H2Config::default(), "https");
    let (wa, wb) = (WorkId(7), WorkId(2));
    streams.send(wa, ta, a.bytes_left());
    streams.send(wb, tb, b.bytes_left());
    while streams.poll_transmit().is_some() {}
    // The server's SETTINGS and the acknowledgement of ours: then both streams are open.
    let mut settings = frame(0x4, 0, 0, &[]);
    settings.extend(frame(0x4, 0x1, 0, &[]));
    streams.handle_bytes(now, &settings).unwrap();
    while streams.poll_transmit().is_some() {}
    assert_eq!(streams.open_streams(), 2);
    let (for_a, for_b) = (answer(1, "alpha"), answer(3, "beta"));
    let mut wire = for_b.clone();
    wire.extend(&for_a);
    for piece in wire.chunks(5) {
        streams.handle_bytes(now, piece).unwrap();
        while let Some((work, input)) = streams.poll_input() {
            match work {
                w if w == wa => a.handle(now, input),
                w if w == wb => b.handle(now, input),
                other => panic!("an input for {other:?}"),
            }
        }
    }
    for (conn, name, stream_bytes) in [(&mut a, "alpha", &for_a), (&mut b, "beta", &for_b)] {
        assert_eq!(conn.bytes_read(), stream_bytes.len() as u64, "{name}");
        let listed = events(conn).into_iter().find_map(|e| match e {
            Event::ToolsListed(c) => Some(c),
            _ => None,
        });
        let catalog = listed.unwrap_or_else(|| panic!("{name} listed nothing"));
        let names: Vec<&str> = catalog.tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, [name]);
    }
}

/// What a socket needs of a connection is passed as data: a stream's allowance is what its
/// work item's byte budget had left when the stream opened (the last `allow`), not when the
/// request was handed over, so a request that waited for a slot meanwhile gets no more than its
/// work item still has. Here the second stream waits (one stream until the server's SETTINGS),
/// its work item is down to 20 bytes, and the stream's first frame (9 octets of frame header,
/// RFC 9113 §4.1, and a header block of 19) is beyond them: the stream fails on its budget.
#[test]
fn a_waiting_stream_opens_with_what_its_work_item_has_left_then() {
    let now = Instant::ZERO;
    let (a, ta) = listing();
    let (_, tb) = listing();
    let mut streams = H2Streams::new(now, H2Config::default(), "https");
    let (wa, wb) = (WorkId(0), WorkId(1));
    streams.send(wa, ta, a.bytes_left());
    streams.send(wb, tb, 1 << 20);
    while streams.poll_transmit().is_some() {}
    assert_eq!(
        streams.open_streams(),
        1,
        "the second request waits for a slot"
    );
    streams.allow(wb, 20);
    let mut settings = frame(0x4, 0, 0, &[]);
    settings.extend(frame(0x4, 0x1, 0, &[]));
    streams.handle_bytes(now, &settings).unwrap();
    while streams.poll_transmit().is_some() {}
    assert_eq!(streams.open_streams(), 2);
    let _ = streams.handle_bytes(now, &answer(3, "beta"));
    let mut for_b = Vec::new();
    while let Some((work, input)) = streams.poll_input() {
        assert_eq!(work, wb, "{input:?}");
        for_b.push(match input {
            Input::WireError { error, .. } => Some(error),
            _ => None,
        });
    }
    assert!(
        for_b
            .iter()
            .any(|e| e.as_ref().is_some_and(WireError::is_byte_budget_overrun)),
        "{for_b:?}"
    );
}

/// The HTTP/1.1 socket charges what every exchange read and did not hand in yet, so that the
/// byte budget holds across exchanges at the exact byte; an exchange the connection is done
/// with is forgotten, and what its reader had read counts no more. Exchange 1 has read a
/// partial head (17 bytes); exchange 2's whole response is `len` bytes, under a ledger of
/// `len + 16`: together one byte too many, alone within it.
#[test]
fn an_exchange_forgotten_no_longer_counts_against_the_others() {
    use mcp_sansio::http1::ResponseLimits;
    use mcp_sansio::socket::Http1Socket;
    use mcp_sansio::{Allowance, ByteLedger};
    let (one, two) = (ExchangeId(1), ExchangeId(2));
    let partial = b"HTTP/1.1 200 OK\r\n";
    assert_eq!(partial.len(), 17);
    let response = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
    let allowance = || Allowance {
        ledger: ByteLedger::new(response.len() as u64 + 16),
        limits: ResponseLimits::default(),
    };
    let ended = |inputs: Vec<Input<'_>>| {
        inputs.iter().any(|i| {
            matches!(
                i,
                Input::Response {
                    event: ResponseEvent::End { .. },
                    ..
                }
            )
        })
    };
    let over_budget = |inputs: &[Input<'_>]| {
        inputs.iter().any(|i| match i {
            Input::WireError { error, .. } => {
                error.budget().is_some() || error.is_byte_budget_overrun()
            }
            _ => false,
        })
    };
    // Both exchanges' bytes: one too many.
    let mut socket = Http1Socket::new();
    let _: Vec<Input<'_>> = socket.read(one, partial, allowance()).collect();
    let inputs: Vec<Input<'_>> = socket.read(two, response, allowance()).collect();
    assert!(over_budget(&inputs), "{inputs:?}");
    // Exchange 1 forgotten: exchange 2 alone fits.
    let mut socket = Http1Socket::new();
    let _: Vec<Input<'_>> = socket.read(one, partial, allowance()).collect();
    assert_eq!(socket.reading(), 1);
    socket.forget(one);
    assert_eq!(socket.reading(), 0);
    let inputs: Vec<Input<'_>> = socket.read(two, response, allowance()).collect();
    assert!(!over_budget(&inputs), "{inputs:?}");
    assert!(ended(inputs));
}

/// The requests waiting for a stream slot of one socket open first come first served, however
/// many of them their work items dropped meanwhile (a dropped request leaves the queue: the next
/// one takes its turn), at a bounded cost per request: `queue_steps` grows by at most a constant
/// per request queued, dropped or opened, whatever the queue's length. Until the server's
/// SETTINGS arrive one stream opens at a time; here none arrive, and each opened stream is
/// cancelled to free its slot for the next request.
#[test]
fn waiting_requests_open_in_order_after_most_were_dropped_at_a_bounded_cost() {
    const ITEMS: usize = 300;
    let now = Instant::ZERO;
    let mut streams = H2Streams::new(now, H2Config::default(), "https");
    streams.report_opened(true);
    for i in 0..ITEMS {
        let (conn, t) = listing();
        streams.send(WorkId(i), t, conn.bytes_left());
    }
    while streams.poll_transmit().is_some() {}
    assert_eq!(streams.open_streams(), 1);
    assert_eq!(streams.waiting(), ITEMS - 1);
    // Every request but one in three is dropped while it waits (each connection numbers its
    // own exchanges: they all carry the same exchange id, on different work items).
    let exchange = ExchangeId(listing().1.exchange.0);
    for i in (1..ITEMS).filter(|i| i % 3 != 0) {
        streams.ended(WorkId(i), exchange, true);
    }
    assert_eq!(streams.waiting(), ITEMS / 3 - 1);
    let mut order = Vec::new();
    while let Some((work, _, t)) = streams.poll_opened() {
        order.push(work.0);
        streams.ended(work, t.exchange, true);
        while streams.poll_transmit().is_some() {}
    }
    let expected: Vec<usize> = (0..ITEMS).filter(|i| i % 3 == 0).collect();
    assert_eq!(order, expected);
    assert_eq!(streams.waiting(), 0);
    assert!(
        streams.queue_steps() <= 16 * ITEMS as u64,
        "{} queue steps for {ITEMS} requests",
        streams.queue_steps()
    );
}
