//! Tests of the `text/event-stream` decoder: known vectors, real server bodies, split
//! independence (proptest) and hostile streams.

use mcp_sansio::internals::{SseDecoder, SseEvent, SseItem};
use mcp_sansio::SseError;
use mcp_sansio::{Budget, BudgetExceeded};
use proptest::prelude::*;

/// A cap large enough that the known vectors never hit it.
const BIG: u64 = 1 << 20;

/// How far past the cap `buffered_len` may go (the decoder promises none; this is the slack the
/// contract allows).
const SLACK: usize = 16;

/// Feeds `pieces` in order, looping on each until it is used up, checking the progress contract.
/// Returns the items and the error that stopped decoding, if one did.
fn feed(decoder: &mut SseDecoder, pieces: &[&[u8]]) -> (Vec<SseItem>, Option<SseError>) {
    let mut items = Vec::new();
    for piece in pieces {
        let mut input = *piece;
        while !input.is_empty() {
            match decoder.decode(input) {
                Ok(step) => {
                    assert!(
                        step.consumed > 0 || step.item.is_some(),
                        "no progress on non-empty input"
                    );
                    assert!(step.consumed <= input.len(), "consumed past the input");
                    input = &input[step.consumed..];
                    items.extend(step.item);
                }
                Err(e) => return (items, Some(e)),
            }
        }
    }
    (items, None)
}

/// Decodes `input` fed whole; panics on an error.
fn decode(input: &[u8]) -> Vec<SseItem> {
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[input]);
    assert_eq!(err, None);
    items
}

/// Decodes `input` fed one byte at a time; panics on an error.
fn decode_bytewise(input: &[u8]) -> Vec<SseItem> {
    let mut d = SseDecoder::new(BIG);
    let pieces: Vec<&[u8]> = input.chunks(1).collect();
    let (items, err) = feed(&mut d, &pieces);
    assert_eq!(err, None);
    items
}

/// Decodes `input` whole and byte by byte, checks both agree, and returns the items.
fn check(input: &[u8]) -> Vec<SseItem> {
    let whole = decode(input);
    assert_eq!(decode_bytewise(input), whole, "byte-at-a-time feed differs");
    whole
}

fn ev(event: Option<&str>, data: &[u8], id: Option<&str>) -> SseItem {
    SseItem::Event(SseEvent {
        event: event.map(str::to_owned),
        data: data.to_vec(),
        id: id.map(str::to_owned),
    })
}

fn data(d: &[u8]) -> SseItem {
    ev(None, d, None)
}

fn budget_error(cap: u64) -> SseError {
    SseError::Budget(BudgetExceeded::new(Budget::SseEvent, cap))
}

// ---------------------------------------------------------------------------------------------
// Known vectors
// ---------------------------------------------------------------------------------------------

#[test]
fn line_ends_lf_crlf_cr() {
    let expected = vec![data(b"a\nb"), data(b"c")];
    assert_eq!(check(b"data: a\ndata: b\n\ndata: c\n\n"), expected);
    assert_eq!(
        check(b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"),
        expected
    );
    assert_eq!(check(b"data: a\rdata: b\r\rdata: c\r\r"), expected);
}

#[test]
fn mixed_line_ends_in_one_stream() {
    // "\r\r\n": CR ends the line, then CRLF is one blank line (not two).
    assert_eq!(
        check(b"data: a\r\ndata: b\ndata: c\r\r\ndata: d\n\r"),
        vec![data(b"a\nb\nc"), data(b"d")]
    );
    // LF then CR: two line ends.
    assert_eq!(
        check(b"data: a\n\rdata: b\n\n"),
        vec![data(b"a"), data(b"b")]
    );
}

#[test]
fn crlf_split_across_pieces_is_one_line_end() {
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[b"data: a\r", b"\ndata: b\r", b"\n", b"\r", b"\n"]);
    assert_eq!(err, None);
    assert_eq!(items, vec![data(b"a\nb")]);
    assert!(!d.has_partial_event());
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    assert_eq!(
        check(b"data: {\"a\":\ndata: 1}\ndata: \n\n"),
        vec![data(b"{\"a\":\n1}\n")]
    );
}

#[test]
fn value_space_handling() {
    // No space after the colon: the value is taken as is.
    assert_eq!(check(b"data:x\n\n"), vec![data(b"x")]);
    // Only one leading space is removed.
    assert_eq!(check(b"data:  x \n\n"), vec![data(b" x ")]);
    // A tab is not a space.
    assert_eq!(check(b"data:\tx\n\n"), vec![data(b"\tx")]);
    // Only the first colon separates name and value.
    assert_eq!(check(b"data: a:b: c\n\n"), vec![data(b"a:b: c")]);
}

#[test]
fn empty_data_and_field_without_colon() {
    assert_eq!(check(b"data:\n\n"), vec![data(b"")]);
    assert_eq!(check(b"data\n\n"), vec![data(b"")]);
    assert_eq!(check(b"data\ndata\n\n"), vec![data(b"\n")]);
    assert_eq!(check(b"data\ndata: x\n\n"), vec![data(b"\nx")]);
    // "event" without a colon is an event field with an empty value.
    assert_eq!(check(b"event\ndata: x\n\n"), vec![ev(Some(""), b"x", None)]);
    // A field name is matched exactly.
    assert_eq!(check(b"Data: x\n\ndata : y\n\n datum\n\n"), vec![]);
}

#[test]
fn comments_are_ignored() {
    assert_eq!(
        check(b": keep-alive\ndata: a\n:\n: another\ndata: b\n\n: ping\n\n"),
        vec![data(b"a\nb")]
    );
    // A block of comments only dispatches nothing.
    assert_eq!(check(b": x\r\n: y\r\n\r\n"), vec![]);
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[b": keep-alive\n"]);
    assert_eq!((items, err), (vec![], None));
    assert!(!d.has_partial_event());
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(check(b"foo: bar\n\n"), vec![]);
    assert_eq!(check(b"foo: bar\ndata: x\nbaz\n\n"), vec![data(b"x")]);
}

#[test]
fn bom_is_stripped_once() {
    assert_eq!(check(b"\xEF\xBB\xBFdata: x\n\n"), vec![data(b"x")]);
    // The BOM split across pieces.
    for split in 1..=3 {
        let mut d = SseDecoder::new(BIG);
        let input: &[u8] = b"\xEF\xBB\xBFdata: x\n\n";
        let (a, b) = input.split_at(split);
        let (items, err) = feed(&mut d, &[a, b]);
        assert_eq!((items, err), (vec![data(b"x")], None), "split at {split}");
    }
    // A BOM alone, then the stream.
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[b"\xEF", b"\xBB", b"\xBF", b"data: x\n", b"\n"]);
    assert_eq!((items, err), (vec![data(b"x")], None));
}

#[test]
fn second_bom_is_not_stripped() {
    // The second BOM becomes part of the field name "\u{feff}data", which is unknown.
    assert_eq!(check(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n"), vec![]);
    // A BOM at the start of a later line is not stripped either.
    assert_eq!(
        check(b"data: a\n\n\xEF\xBB\xBFdata: b\n\ndata: c\n\n"),
        vec![data(b"a"), data(b"c")]
    );
    // A BOM inside a value is data.
    assert_eq!(
        check(b"\xEF\xBB\xBFdata: \xEF\xBB\xBFx\n\n"),
        vec![data(b"\xEF\xBB\xBFx")]
    );
}

#[test]
fn partial_bom_that_is_not_a_bom_is_line_content() {
    // "\xEF\xBB" followed by something else: those bytes start the first line.
    assert_eq!(check(b"\xEF\xBBdata: x\n\ndata: y\n\n"), vec![data(b"y")]);
    // A line that is just "\xEF" is a field with an odd name: ignored, but it is a line.
    assert_eq!(check(b"\xEF\ndata: y\n\n"), vec![data(b"y")]);
    // Two of the three bytes as a comment prefix is not a comment: ":" is not first.
    assert_eq!(check(b"\xEF\xBB:data\n\n"), vec![]);
}

#[test]
fn event_field() {
    assert_eq!(
        check(b"event: message\ndata: x\n\n"),
        vec![ev(Some("message"), b"x", None)]
    );
    // The last one wins.
    assert_eq!(
        check(b"event: a\nevent: b\ndata: x\n\n"),
        vec![ev(Some("b"), b"x", None)]
    );
    // The event type does not carry over to the next block.
    assert_eq!(
        check(b"event: a\ndata: x\n\ndata: y\n\n"),
        vec![ev(Some("a"), b"x", None), data(b"y")]
    );
    // An event field alone is surfaced, with empty data.
    assert_eq!(check(b"event: ping\n\n"), vec![ev(Some("ping"), b"", None)]);
    // Invalid UTF-8 in the event type is replaced.
    assert_eq!(
        check(b"event: a\xFFb\ndata: x\n\n"),
        vec![ev(Some("a\u{FFFD}b"), b"x", None)]
    );
}

#[test]
fn id_field() {
    assert_eq!(
        check(b"id: 7\ndata: x\n\n"),
        vec![ev(None, b"x", Some("7"))]
    );
    // The last one wins; the id does not carry over to the next block.
    assert_eq!(
        check(b"id: 1\nid: 2\ndata: x\n\ndata: y\n\n"),
        vec![ev(None, b"x", Some("2")), data(b"y")]
    );
    // `id:` empty resets the last event id: Some("").
    assert_eq!(check(b"id:\ndata: x\n\n"), vec![ev(None, b"x", Some(""))]);
    assert_eq!(check(b"id\n\n"), vec![ev(None, b"", Some(""))]);
}

#[test]
fn id_with_nul_is_ignored() {
    assert_eq!(check(b"id: 1\x002\ndata: x\n\n"), vec![data(b"x")]);
    // It does not override an earlier id.
    assert_eq!(
        check(b"id: 1\nid: 2\x00\ndata: x\n\n"),
        vec![ev(None, b"x", Some("1"))]
    );
    // A block whose only field is such an id is empty.
    assert_eq!(check(b"id: \x00\n\n"), vec![]);
    // NUL in data is fine.
    assert_eq!(check(b"data: a\x00b\n\n"), vec![data(b"a\x00b")]);
}

#[test]
fn retry_field() {
    assert_eq!(check(b"retry: 3000\n"), vec![SseItem::Retry(3000)]);
    assert_eq!(check(b"retry:0\n"), vec![SseItem::Retry(0)]);
    assert_eq!(
        check(b"retry: 18446744073709551615\n"),
        vec![SseItem::Retry(u64::MAX)]
    );
    // Not all digits: ignored.
    assert_eq!(check(b"retry: 3x\n"), vec![]);
    assert_eq!(check(b"retry: -1\n"), vec![]);
    assert_eq!(check(b"retry:  3000\n"), vec![]);
    assert_eq!(check(b"retry: 3000 \n"), vec![]);
    assert_eq!(check(b"retry:\n"), vec![]);
    assert_eq!(check(b"retry\n"), vec![]);
    // Overflowing u64: ignored.
    assert_eq!(check(b"retry: 18446744073709551616\n"), vec![]);
    assert_eq!(check(b"retry: 99999999999999999999999999999999\n"), vec![]);
}

#[test]
fn retry_is_reported_when_its_line_completes() {
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[b"data: x\nretry: 12"]);
    assert_eq!((items, err), (vec![], None));
    let step = d.decode(b"5\ndata: y\n\n").unwrap();
    assert_eq!(step.item, Some(SseItem::Retry(125)));
    assert_eq!(step.consumed, 2);
    let step = d.decode(b"data: y\n\n").unwrap();
    assert_eq!(step.item, Some(data(b"x\ny")));
}

#[test]
fn block_with_only_retry_emits_only_retry() {
    assert_eq!(
        check(b"retry: 1000\n\ndata: x\n\n"),
        vec![SseItem::Retry(1000), data(b"x")]
    );
    assert_eq!(
        check(b"retry: 1\r\n: c\r\nretry: 2\r\n\r\n"),
        vec![SseItem::Retry(1), SseItem::Retry(2)]
    );
}

#[test]
fn priming_event_is_surfaced() {
    let items = check(b"id: 1\ndata:\n\n");
    assert_eq!(items, vec![ev(None, b"", Some("1"))]);
    match &items[0] {
        SseItem::Event(e) => assert!(e.is_priming()),
        other => panic!("not an event: {other:?}"),
    }
    // The ts-v1 shape: id, retry, empty data.
    assert_eq!(
        check(b"id: abc_1\nretry: 1000\ndata: \n\n"),
        vec![SseItem::Retry(1000), ev(None, b"", Some("abc_1"))]
    );
    // An event with data is not priming.
    match &check(b"data: x\n\n")[0] {
        SseItem::Event(e) => assert!(!e.is_priming()),
        other => panic!("not an event: {other:?}"),
    }
}

#[test]
fn extra_blank_lines_dispatch_nothing() {
    assert_eq!(check(b"\n\n\ndata: x\n\n\n\n"), vec![data(b"x")]);
}

#[test]
fn raw_data_bytes_are_kept() {
    assert_eq!(
        check(b"data: \xFF\xFE\x80\n\n"),
        vec![data(b"\xFF\xFE\x80")]
    );
}

#[test]
fn incomplete_event_at_end_is_not_dispatched() {
    let mut d = SseDecoder::new(BIG);
    assert!(!d.has_partial_event());
    let (items, err) = feed(&mut d, &[b"data: a\n\ndata: b\n"]);
    assert_eq!((items, err), (vec![data(b"a")], None));
    assert!(d.has_partial_event());
    assert_eq!(d.buffered_len(), 2); // "b\n"

    // A partial line alone also counts.
    let mut d = SseDecoder::new(BIG);
    let (items, err) = feed(&mut d, &[b"data: a\n\ndat"]);
    assert_eq!((items, err), (vec![data(b"a")], None));
    assert!(d.has_partial_event());
    assert_eq!(d.buffered_len(), 3);

    // After a dispatch nothing is pending.
    let mut d = SseDecoder::new(BIG);
    let (_, err) = feed(&mut d, &[b"data: a\n\n"]);
    assert_eq!(err, None);
    assert!(!d.has_partial_event());
    assert_eq!(d.buffered_len(), 0);
}

#[test]
fn one_item_per_call_and_consumed_points_past_it() {
    let input: &[u8] = b"data: a\n\ndata: b\n\nretry: 5\n: tail";
    let mut d = SseDecoder::new(BIG);
    let s = d.decode(input).unwrap();
    assert_eq!((s.consumed, s.item), (9, Some(data(b"a"))));
    let s = d.decode(&input[9..]).unwrap();
    assert_eq!((s.consumed, s.item), (9, Some(data(b"b"))));
    let s = d.decode(&input[18..]).unwrap();
    assert_eq!((s.consumed, s.item), (9, Some(SseItem::Retry(5))));
    let s = d.decode(&input[27..]).unwrap();
    assert_eq!((s.consumed, s.item), (6, None));
    let s = d.decode(b"").unwrap();
    assert_eq!((s.consumed, s.item), (0, None));
}

// ---------------------------------------------------------------------------------------------
// The cap
// ---------------------------------------------------------------------------------------------

#[test]
fn cap_boundary_is_exact() {
    // A 10-byte line fits a 10-byte cap; 11 bytes do not.
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b"data: 1234\n\n"]),
        (vec![data(b"1234")], None)
    );
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b"data: 12345\n\n"]),
        (vec![], Some(budget_error(10)))
    );
    // The line end does not count.
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b"data: 1234\r\n\r\n"]),
        (vec![data(b"1234")], None)
    );
    // Pending data counts against later lines: "1\n" (2 bytes) + a 9-byte line > 10.
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b"data: 1\ndata: 123\n\n"]),
        (vec![], Some(budget_error(10)))
    );
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b"data: 1\ndata: 12\n\n"]),
        (vec![data(b"1\n12")], None)
    );
    // A comment longer than the cap fails too, even when complete within one piece.
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b": 123456789\n"]),
        (vec![], Some(budget_error(10)))
    );
    // The same line split across pieces fails the same way.
    let mut d = SseDecoder::new(10);
    assert_eq!(
        feed(&mut d, &[b": 1234", b"56789\n"]),
        (vec![], Some(budget_error(10)))
    );
    // The cap is per event: it resets at dispatch.
    let mut d = SseDecoder::new(10);
    let (items, err) = feed(&mut d, &[b"data: 1234\n\ndata: 5678\n\ndata: 9012\n\n"]);
    assert_eq!(err, None);
    assert_eq!(items.len(), 3);
}

#[test]
fn cap_zero_allows_only_blank_lines() {
    let mut d = SseDecoder::new(0);
    assert_eq!(feed(&mut d, &[b"\n\r\n\r"]), (vec![], None));
    assert_eq!(feed(&mut d, &[b"d"]), (vec![], Some(budget_error(0))));
}

#[test]
fn errors_are_sticky() {
    let mut d = SseDecoder::new(4);
    let (_, err) = feed(&mut d, &[b"data: long\n"]);
    assert_eq!(err, Some(budget_error(4)));
    for _ in 0..3 {
        assert_eq!(d.decode(b"\n").unwrap_err(), budget_error(4));
        assert_eq!(d.decode(b"").unwrap_err(), budget_error(4));
    }
    assert!(d.buffered_len() <= 4 + SLACK);
    assert_eq!(
        budget_error(4).to_string(),
        "event stream: budget exceeded: sse_event_bytes (limit 4)"
    );
}

// ---------------------------------------------------------------------------------------------
// Real server bodies
// ---------------------------------------------------------------------------------------------

/// The events the transcript recorder parsed out of the same body, as items.
fn recorded_items(events_json: &str) -> Vec<SseItem> {
    let doc: serde_json::Value = serde_json::from_str(events_json).unwrap();
    let mut items = Vec::new();
    for e in doc["events"].as_array().unwrap() {
        if let Some(retry) = e.get("retry") {
            items.push(SseItem::Retry(retry.as_str().unwrap().parse().unwrap()));
        }
        items.push(ev(
            e.get("event").map(|v| v.as_str().unwrap()),
            e["data"].as_str().unwrap().as_bytes(),
            e.get("id").map(|v| v.as_str().unwrap()),
        ));
    }
    items
}

fn events(items: &[SseItem]) -> Vec<&SseEvent> {
    items
        .iter()
        .filter_map(|i| match i {
            SseItem::Event(e) => Some(e),
            SseItem::Retry(_) => None,
        })
        .collect()
}

fn json(e: &SseEvent) -> serde_json::Value {
    serde_json::from_slice(&e.data).expect("event data is JSON")
}

/// Decodes a fixture whole, byte by byte and in odd-sized pieces, and against the recorder's own
/// parse of it.
fn check_fixture(body: &[u8], events_json: &str) -> Vec<SseItem> {
    let items = check(body);
    for size in [2, 3, 7, 64, 100] {
        let pieces: Vec<&[u8]> = body.chunks(size).collect();
        let mut d = SseDecoder::new(BIG);
        assert_eq!(
            feed(&mut d, &pieces),
            (items.clone(), None),
            "pieces of {size}"
        );
        assert!(!d.has_partial_event());
    }
    assert_eq!(items, recorded_items(events_json));
    items
}

#[test]
fn py_mcp_crlf_progress_then_result() {
    let body = include_bytes!("data/sse/py-mcp-slow-crlf.sse");
    assert!(body.windows(2).any(|w| w == b"\r\n"), "fixture uses CRLF");
    let items = check_fixture(body, include_str!("data/sse/py-mcp-slow-crlf.events.json"));
    let evs = events(&items);
    assert_eq!(evs.len(), 4);
    for (n, e) in evs.iter().enumerate() {
        assert_eq!(e.event.as_deref(), Some("message"));
        assert_eq!(e.id, None);
        assert!(!e.data.contains(&b'\r'));
        let v = json(e);
        assert_eq!(v["jsonrpc"], "2.0");
        if n < 3 {
            assert_eq!(v["method"], "notifications/progress");
            assert_eq!(v["params"]["progress"], n + 1);
            assert_eq!(v["params"]["progressToken"], "prog-1");
        }
    }
    let last = json(evs[3]);
    assert_eq!(last["id"], 20);
    assert_eq!(last["result"]["isError"], false);
    assert_eq!(
        last["result"]["content"][0]["text"],
        "slept 1.5s in 3 steps"
    );
}

#[test]
fn py_mcp_crlf_initialize() {
    let body = include_bytes!("data/sse/py-mcp-initialize-crlf.sse");
    let items = check_fixture(
        body,
        include_str!("data/sse/py-mcp-initialize-crlf.events.json"),
    );
    let evs = events(&items);
    assert_eq!(evs.len(), 1);
    let v = json(evs[0]);
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(v["result"]["serverInfo"]["name"], "peer-py-mcp");
}

#[test]
fn ts_v1_lf_priming_retry_ids() {
    let body = include_bytes!("data/sse/ts-v1-resumable-slow-lf.sse");
    assert!(!body.contains(&b'\r'), "fixture uses LF");
    let items = check_fixture(
        body,
        include_str!("data/sse/ts-v1-resumable-slow-lf.events.json"),
    );
    // Retry first (its line precedes the priming event's blank line), then the priming event.
    assert_eq!(items[0], SseItem::Retry(1000));
    let evs = events(&items);
    assert_eq!(evs.len(), 8);
    let priming = evs[0];
    assert!(priming.is_priming());
    assert_eq!(priming.event, None);
    assert_eq!(
        priming.id.as_deref(),
        Some("3da651f0-efc0-47da-9c73-d184c8271235_1796203852042_rn95ef65")
    );
    for e in &evs[1..] {
        assert!(!e.is_priming());
        assert_eq!(e.event.as_deref(), Some("message"));
        assert!(e
            .id
            .as_deref()
            .unwrap()
            .starts_with("3da651f0-efc0-47da-9c73-d184c8271235_"));
    }
    let methods: Vec<_> = evs[1..7]
        .iter()
        .map(|e| json(e)["method"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message"
        ]
    );
    let last = json(evs[7]);
    assert_eq!(last["id"], 20);
    assert_eq!(
        last["result"]["content"][0]["text"],
        "slept 1.5s in 3 steps"
    );
}

#[test]
fn ts_v2_lf_progress_then_result() {
    let body = include_bytes!("data/sse/ts-v2-slow-lf.sse");
    assert!(!body.contains(&b'\r'), "fixture uses LF");
    let items = check_fixture(body, include_str!("data/sse/ts-v2-slow-lf.events.json"));
    let evs = events(&items);
    assert_eq!(evs.len(), 4);
    let last = json(evs[3]);
    assert_eq!(last["id"], 19);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["content"][0]["text"],
        "slept 1.5s in 3 steps"
    );
}

#[test]
fn real_body_with_crlf_converted_to_cr_and_bom_prefixed() {
    // The same events whatever the line ends, with a BOM in front.
    let body = include_bytes!("data/sse/py-mcp-slow-crlf.sse");
    let expected = check(body);
    let lf: Vec<u8> = String::from_utf8(body.to_vec())
        .unwrap()
        .replace("\r\n", "\n")
        .into_bytes();
    let cr: Vec<u8> = lf
        .iter()
        .map(|&b| if b == b'\n' { b'\r' } else { b })
        .collect();
    let mut bom_cr = b"\xEF\xBB\xBF".to_vec();
    bom_cr.extend_from_slice(&cr);
    assert_eq!(check(&lf), expected);
    assert_eq!(check(&cr), expected);
    assert_eq!(check(&bom_cr), expected);
}

// ---------------------------------------------------------------------------------------------
// Hostile streams
// ---------------------------------------------------------------------------------------------

/// Feeds `next_piece()` pieces (of at most `piece` bytes) until the decoder fails, checking
/// `buffered_len` after every call. Returns the error, the bytes fed and the items surfaced.
fn feed_until_error(
    cap: u64,
    limit: usize,
    mut next_piece: impl FnMut(usize) -> Vec<u8>,
) -> (Option<SseError>, usize, usize) {
    let mut d = SseDecoder::new(cap);
    let mut fed = 0usize;
    let mut items = 0usize;
    while fed < limit {
        let piece = next_piece(fed);
        fed += piece.len();
        let mut input = &piece[..];
        while !input.is_empty() {
            match d.decode(input) {
                Ok(step) => {
                    assert!(step.consumed > 0 || step.item.is_some());
                    input = &input[step.consumed..];
                    items += usize::from(step.item.is_some());
                    assert!(d.buffered_len() <= cap as usize + SLACK);
                }
                Err(e) => {
                    assert!(d.buffered_len() <= cap as usize + SLACK);
                    return (Some(e), fed, items);
                }
            }
        }
    }
    (None, fed, items)
}

const MIB: usize = 1 << 20;
const PIECE: usize = 4096;

#[test]
fn endless_line_fails_at_the_cap() {
    let cap = MIB as u64;
    let (err, fed, items) = feed_until_error(cap, 10 * MIB, |_| vec![b'a'; PIECE]);
    assert_eq!(err, Some(budget_error(cap)));
    assert_eq!(items, 0);
    // It failed on the piece that crossed the cap, not later.
    assert!(fed > MIB && fed <= MIB + PIECE, "failed after {fed} bytes");
}

#[test]
fn endless_data_line_fails_at_the_cap() {
    let cap = MIB as u64;
    let (err, fed, _) = feed_until_error(cap, 10 * MIB, |fed| {
        if fed == 0 {
            b"data: ".to_vec()
        } else {
            vec![b'x'; PIECE]
        }
    });
    assert_eq!(err, Some(budget_error(cap)));
    assert!(fed > MIB && fed <= MIB + PIECE, "failed after {fed} bytes");
}

#[test]
fn endless_data_lines_in_one_event_fail_at_the_cap() {
    let cap = MIB as u64;
    let mut line = b"data: ".to_vec();
    line.extend(std::iter::repeat_n(b'y', 1017));
    line.push(b'\n'); // 1 KiB per line
    let (err, fed, items) = feed_until_error(cap, 10 * MIB, |_| line.clone());
    assert_eq!(err, Some(budget_error(cap)));
    assert_eq!(items, 0);
    // Each 1024-byte line adds 1018 bytes of data ("y" * 1017 and "\n"): the decoder fails on
    // the first line that would take the event past the cap.
    let lines_that_fit = (MIB - 1023) / 1018 + 1;
    assert_eq!(fed, (lines_that_fit + 1) * 1024, "failed after {fed} bytes");
}

#[test]
fn endless_comment_line_fails_at_the_cap() {
    let cap = MIB as u64;
    let (err, fed, _) = feed_until_error(cap, 10 * MIB, |fed| {
        if fed == 0 {
            b": keep-alive".to_vec()
        } else {
            vec![b'.'; PIECE]
        }
    });
    assert_eq!(err, Some(budget_error(cap)));
    assert!(fed > MIB && fed <= MIB + PIECE, "failed after {fed} bytes");
}

#[test]
fn huge_event_and_id_fields_fail_at_the_cap() {
    for prefix in [&b"event: "[..], b"id: ", b"retry: ", b"unknown: "] {
        let cap = 64 * 1024;
        let (err, fed, _) = feed_until_error(cap, 4 * MIB, |fed| {
            if fed == 0 {
                prefix.to_vec()
            } else {
                vec![b'7'; PIECE]
            }
        });
        assert_eq!(err, Some(budget_error(cap)), "{prefix:?}");
        assert!(fed <= cap as usize + PIECE, "{prefix:?} failed after {fed}");
    }
}

#[test]
fn endless_line_fed_one_byte_at_a_time_is_linear_and_bounded() {
    // Quadratic rescanning would make this slow; the cap must still hold.
    let cap = 256 * 1024;
    let (err, fed, _) = feed_until_error(cap, MIB, |_| vec![b'z']);
    assert_eq!(err, Some(budget_error(cap)));
    assert_eq!(fed, cap as usize + 1);
}

#[test]
fn many_tiny_events_stay_small() {
    let cap = 64;
    let mut d = SseDecoder::new(cap);
    let mut stream = Vec::new();
    for n in 0..100_000u32 {
        stream.extend_from_slice(format!("id: {n}\ndata: {n}\n\n").as_bytes());
    }
    let mut count = 0u32;
    for piece in stream.chunks(PIECE) {
        let mut input = piece;
        while !input.is_empty() {
            let step = d.decode(input).expect("tiny events fit");
            assert!(step.consumed > 0 || step.item.is_some());
            input = &input[step.consumed..];
            if let Some(item) = step.item {
                let expected = count.to_string();
                assert_eq!(
                    item,
                    ev(None, expected.as_bytes(), Some(&expected)),
                    "event {count}"
                );
                count += 1;
            }
            assert!(d.buffered_len() <= cap as usize + SLACK);
        }
    }
    assert_eq!(count, 100_000);
    assert!(!d.has_partial_event());
    assert_eq!(d.buffered_len(), 0);
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/// A naive, whole-input reading of the rules, written independently of the decoder.
fn model(input: &[u8]) -> Vec<SseItem> {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'\r' => {
                lines.push(std::mem::take(&mut cur));
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => lines.push(std::mem::take(&mut cur)),
            b => cur.push(b),
        }
        i += 1;
    }
    let mut items = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut event: Option<Vec<u8>> = None;
    let mut id: Option<Vec<u8>> = None;
    let mut any = false;
    for line in lines {
        if line.is_empty() {
            if any {
                if data.last() == Some(&b'\n') {
                    data.pop();
                }
                items.push(SseItem::Event(SseEvent {
                    event: event
                        .take()
                        .map(|v| String::from_utf8_lossy(&v).into_owned()),
                    data: std::mem::take(&mut data),
                    id: id.take().map(|v| String::from_utf8_lossy(&v).into_owned()),
                }));
            }
            data.clear();
            event = None;
            id = None;
            any = false;
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (name, mut value) = match line.iter().position(|&b| b == b':') {
            Some(c) => (line[..c].to_vec(), line[c + 1..].to_vec()),
            None => (line.clone(), Vec::new()),
        };
        if value.first() == Some(&b' ') {
            value.remove(0);
        }
        match &name[..] {
            b"data" => {
                data.extend_from_slice(&value);
                data.push(b'\n');
                any = true;
            }
            b"event" => {
                event = Some(value);
                any = true;
            }
            b"id" if !value.contains(&0) => {
                id = Some(value);
                any = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(&value).unwrap().parse::<u64>() {
                    items.push(SseItem::Retry(ms));
                }
            }
            _ => {}
        }
    }
    items
}

/// Bytes of a value: anything but CR and LF, biased towards the interesting ones.
fn value_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => any::<u8>().prop_filter("no line ends", |b| *b != b'\r' && *b != b'\n'),
            1 => Just(b' '),
            1 => Just(b':'),
            1 => Just(0u8),
            1 => Just(0xEF),
        ],
        0..12,
    )
}

fn line() -> impl Strategy<Value = Vec<u8>> {
    let field = |name: &'static [u8]| {
        (value_bytes(), any::<bool>()).prop_map(move |(v, space)| {
            let mut l = name.to_vec();
            l.push(b':');
            if space {
                l.push(b' ');
            }
            l.extend(v);
            l
        })
    };
    prop_oneof![
        4 => field(b"data"),
        2 => field(b"event"),
        2 => field(b"id"),
        1 => field(b"retry"),
        2 => prop_oneof![
            Just(b"retry: 1000".to_vec()),
            Just(b"retry:0".to_vec()),
            Just(b"retry: 99999999999999999999".to_vec()),
        ],
        1 => field(b""), // a comment
        1 => field(b"foo"),
        1 => prop_oneof![Just(b"data".to_vec()), Just(b"id".to_vec()), Just(b"event".to_vec())],
        4 => Just(Vec::new()), // blank line: dispatch
    ]
}

fn line_end() -> impl Strategy<Value = &'static [u8]> {
    prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\r"[..])]
}

/// A stream: an optional BOM (or part of one), lines with random line ends, an optional
/// unterminated tail.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![
            3 => Just(Vec::new()),
            2 => Just(b"\xEF\xBB\xBF".to_vec()),
            1 => Just(b"\xEF\xBB".to_vec()),
            1 => Just(b"\xEF\xBB\xBF\xEF\xBB\xBF".to_vec()),
        ],
        prop::collection::vec((line(), line_end()), 0..40),
        prop::option::of(line()),
    )
        .prop_map(|(bom, lines, tail)| {
            let mut s = bom;
            for (l, end) in lines {
                s.extend(l);
                s.extend_from_slice(end);
            }
            if let Some(t) = tail {
                s.extend(t);
            }
            s
        })
}

/// Splits `input` at the given points (taken modulo its length, sorted).
fn split_at_points<'a>(input: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = points
        .iter()
        .map(|p| {
            if input.is_empty() {
                0
            } else {
                p % (input.len() + 1)
            }
        })
        .collect();
    cuts.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for c in cuts {
        pieces.push(&input[start..c]);
        start = c;
    }
    pieces.push(&input[start..]);
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_split_gives_the_same_items(
        input in stream(),
        points in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut whole = SseDecoder::new(BIG);
        let (expected, err) = feed(&mut whole, &[&input]);
        prop_assert_eq!(err, None);
        prop_assert_eq!(&expected, &model(&input));

        let mut split = SseDecoder::new(BIG);
        let pieces = split_at_points(&input, &points);
        prop_assert_eq!(feed(&mut split, &pieces), (expected.clone(), None));
        prop_assert_eq!(split.buffered_len(), whole.buffered_len());
        prop_assert_eq!(split.has_partial_event(), whole.has_partial_event());

        let mut bytewise = SseDecoder::new(BIG);
        let ones: Vec<&[u8]> = input.chunks(1).collect();
        prop_assert_eq!(feed(&mut bytewise, &ones), (expected, None));
        prop_assert_eq!(bytewise.buffered_len(), whole.buffered_len());
    }

    #[test]
    fn any_split_gives_the_same_items_and_error_under_a_small_cap(
        input in stream(),
        points in prop::collection::vec(any::<usize>(), 0..12),
        cap in 0u64..40,
    ) {
        let mut whole = SseDecoder::new(cap);
        let expected = feed(&mut whole, &[&input]);
        prop_assert!(whole.buffered_len() <= cap as usize + SLACK);

        let mut split = SseDecoder::new(cap);
        let pieces = split_at_points(&input, &points);
        prop_assert_eq!(feed(&mut split, &pieces), expected.clone());
        prop_assert!(split.buffered_len() <= cap as usize + SLACK);

        let mut bytewise = SseDecoder::new(cap);
        let ones: Vec<&[u8]> = input.chunks(1).collect();
        prop_assert_eq!(feed(&mut bytewise, &ones), expected.clone());

        for item in &expected.0 {
            if let SseItem::Event(e) = item {
                prop_assert!(e.data.len() as u64 <= cap);
            }
        }
        // Without the cap, the items are a superset: the cap only ever cuts the stream short.
        let (unbounded, _) = feed(&mut SseDecoder::new(BIG), &[&input]);
        prop_assert!(unbounded.starts_with(&expected.0));
        if expected.1.is_none() {
            prop_assert_eq!(unbounded, expected.0);
        }
    }
}
