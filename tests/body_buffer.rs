//! A body buffer given to a connection (`give_body_buffer`) collects a JSON body that fits it
//! and comes back (`take_body_buffer`) once a call's answer is handled; the answer, the bytes
//! charged and the events are those of a connection without it, in any split.

mod support;

use mcp_sansio::Event;
use support::*;

/// A call result of one text block of `len` bytes with escapes in it.
fn text_result(len: usize) -> String {
    let text: String = "ab\\\"cd\\n".repeat(len / 8 + 1);
    format!(r#"{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#)
}

/// The body of the call's answer (its `Content-Length`).
fn answer_body(id: u64) -> String {
    result_msg(id, &text_result(40_000))
}

/// Calls on `h` (given `buf` first, if any) and answers with the body of [`answer_body`];
/// returns the completion event, the bytes read and the buffer taken back after.
fn call(h: &mut Harness, buf: Option<Vec<u8>>) -> (String, u64, Vec<u8>) {
    if let Some(buf) = buf {
        h.conn.give_body_buffer(buf);
    }
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &json_response(200, &answer_body(r.rpc_id())));
    let event = h.single_event();
    assert!(matches!(event, Event::CallFinished(_)), "{event:?}");
    (
        format!("{event:?}"),
        h.conn.bytes_read(),
        h.conn.take_body_buffer(),
    )
}

fn body_len() -> usize {
    // Every harness numbers its first call's JSON-RPC id alike.
    let mut h = modern_hinted(Split::Whole);
    h.call("echo", "{}");
    answer_body(h.next().rpc_id()).len()
}

#[test]
fn a_fitting_buffer_collects_the_body_and_comes_back() {
    let len = body_len();
    for split in [Split::Whole, Split::Bytes, Split::Chunks(7)] {
        let (plain, plain_read, taken) = call(&mut modern_hinted(split), None);
        // Without a buffer given, the call's own body buffer comes back, exactly its size.
        assert_eq!(taken.capacity(), len);
        assert!(taken.is_empty());

        for capacity in [len, len + len / 8] {
            let mut given = Vec::with_capacity(capacity);
            given.extend_from_slice(b"stale bytes are cleared");
            let at = given.as_ptr();
            let (event, read, back) = call(&mut modern_hinted(split), Some(given));
            assert_eq!(event, plain, "the same answer with the buffer");
            assert_eq!(read, plain_read, "the same bytes charged");
            assert_eq!(back.as_ptr(), at, "the given buffer collected the body");
            assert_eq!(back.capacity(), capacity);
            assert!(back.is_empty());
        }
    }
}

#[test]
fn a_buffer_that_does_not_fit_is_not_used() {
    let len = body_len();
    // Too small, or so large that the body would leave most of it unused.
    for capacity in [len - 1, len + len / 8 + 1, 4 * len] {
        let given = Vec::with_capacity(capacity);
        let at = given.as_ptr();
        let (plain, plain_read, _) = call(&mut modern_hinted(Split::Whole), None);
        let (event, read, back) = call(&mut modern_hinted(Split::Whole), Some(given));
        assert_eq!(event, plain);
        assert_eq!(read, plain_read);
        // What comes back is the body's own buffer, the given one was dropped.
        assert_ne!(back.as_ptr(), at);
        assert_eq!(back.capacity(), len);
    }
}

#[test]
fn the_buffer_serves_the_next_call_of_the_connection() {
    let mut h = modern_hinted(Split::Chunks(1000));
    let (first, _, back) = call(&mut h, None);
    let at = back.as_ptr();
    let (second, _, again) = call(&mut h, Some(back));
    assert_eq!(
        again.as_ptr(),
        at,
        "the second body filled the first one's buffer"
    );
    // The same answer (the ids differ only in the request; the results are equal).
    assert_eq!(first, second);
}

#[test]
fn a_listed_page_keeps_its_buffer() {
    let page = r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#;
    let mut h = modern_hinted(Split::Bytes);
    h.list();
    let r = h.next();
    let body = result_msg(r.rpc_id(), page);
    let given = Vec::with_capacity(body.len());
    h.conn.give_body_buffer(given);
    h.feed(r.exchange, &json_response(200, &body));
    let Event::ToolsListed(catalog) = h.single_event() else {
        panic!("listed");
    };
    // The page's tools hold the buffer the page was collected in: nothing comes back.
    assert_eq!(h.conn.take_body_buffer().capacity(), 0);
    assert_eq!(catalog.tools[0].name(), "t");
}

/// Bytes given away (`handle_owned_bytes`): the same events and bytes charged as `handle_bytes`
/// in every split; a body that arrives whole in them is kept there, not copied.
mod owned {
    use super::*;
    use mcp_sansio::Catalog;

    /// Two pages: the first points to the second with a cursor.
    fn page(cursor: Option<&str>, tool: &str) -> String {
        let next = cursor.map_or(String::new(), |c| format!(r#","nextCursor":"{c}""#));
        format!(
            r#"{{"tools":[{{"name":"{tool}","description":"d\nx","inputSchema":{{"type":"object","properties":{{"a":{{"type":"string"}}}}}}}}]{next}}}"#
        )
    }

    /// Lists two pages on a fresh connection, feeding each response in pieces of `piece` bytes
    /// (each piece a `Vec` of `spare` times its length in capacity), owned or borrowed. Returns
    /// the events, the bytes read, and each response's buffer address range when fed whole.
    fn list(
        owned: bool,
        piece: usize,
        spare: usize,
    ) -> (String, u64, Catalog, Vec<(usize, usize)>) {
        let mut h = modern_hinted(Split::Whole);
        h.list();
        let mut events = Vec::new();
        let mut ranges = Vec::new();
        let mut catalog = None;
        for (n, cursor) in [(0, Some("p2")), (1, None)] {
            let r = h.next();
            let body = result_msg(r.rpc_id(), &page(cursor, &format!("t{n}")));
            let response = json_response(200, &body);
            for chunk in response.chunks(piece.max(1)) {
                if owned {
                    let mut v = Vec::with_capacity(chunk.len() * spare);
                    v.extend_from_slice(chunk);
                    if chunk.len() == response.len() {
                        ranges.push((v.as_ptr() as usize, v.len()));
                    }
                    h.socket
                        .handle_owned_bytes(&mut h.conn, h.now, r.exchange, v);
                } else {
                    h.socket.handle_bytes(&mut h.conn, h.now, r.exchange, chunk);
                }
            }
            h.drain();
            for e in h.take_events() {
                if let Event::ToolsListed(c) = &e {
                    catalog = Some(c.clone());
                }
                events.push(format!("{e:?}"));
            }
        }
        (
            events.join("\n"),
            h.conn.bytes_read(),
            catalog.expect("listed"),
            ranges,
        )
    }

    /// Whether `s` lies inside one of `ranges`.
    fn inside(s: &str, ranges: &[(usize, usize)]) -> bool {
        let p = s.as_ptr() as usize;
        ranges
            .iter()
            .any(|&(start, len)| p >= start && p + s.len() <= start + len)
    }

    #[test]
    fn owned_bytes_give_the_same_events_and_charges_in_every_split() {
        let (events, read, _, _) = list(false, usize::MAX, 1);
        for piece in [usize::MAX, 1, 2, 3, 7, 64] {
            for spare in [1, 4] {
                let (e, r, _, _) = list(true, piece, spare);
                assert_eq!(e, events, "piece {piece}, spare {spare}");
                assert_eq!(r, read, "piece {piece}, spare {spare}");
            }
        }
    }

    #[test]
    fn a_page_that_arrives_whole_is_kept_where_it_arrived() {
        let (_, _, catalog, ranges) = list(true, usize::MAX, 1);
        assert_eq!(ranges.len(), 2);
        assert_eq!(catalog.tools.len(), 2);
        for tool in &catalog.tools {
            assert!(inside(tool.input_schema(), &ranges), "{}", tool.name());
        }
    }

    #[test]
    fn a_buffer_with_much_spare_room_or_a_split_page_is_copied() {
        // Four times its length in capacity: kept, it would hold three times the page.
        let (_, _, catalog, ranges) = list(true, usize::MAX, 4);
        assert_eq!(ranges.len(), 2);
        for tool in &catalog.tools {
            assert!(!inside(tool.input_schema(), &ranges), "{}", tool.name());
        }
        // In pieces: collected in a buffer of its own, as by `handle_bytes`.
        let (_, _, catalog, _) = list(true, 64, 1);
        let (_, _, borrowed, _) = list(false, 64, 1);
        let schemas = |c: &Catalog| {
            c.tools
                .iter()
                .map(|t| t.input_schema().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(schemas(&catalog), schemas(&borrowed));
    }
}
