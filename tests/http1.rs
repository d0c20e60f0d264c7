//! Integration tests of the HTTP/1.1 request encoder and response decoder.

use mcp_sansio::http1::{
    encode, encode_into, Framing, ResponseDecoder, ResponseEvent, ResponseHead, ResponseLimits,
};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::ByteLedger;
use mcp_sansio::{Budget, BudgetExceeded, Budgets, Endpoint, Http1Error, RequestError};
use proptest::prelude::*;

const MIB8: u64 = 8 * 1024 * 1024;

/// Everything observable about one decoded response.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Outcome {
    head: Option<ResponseHead>,
    body: Vec<u8>,
    end: Option<bool>,
    error: Option<Http1Error>,
    /// Bytes reported consumed (0 when there is an error).
    consumed: usize,
    ledger_used: u64,
}

struct Run {
    outcome: Outcome,
    max_buffered: usize,
}

/// Feeds `pieces` in order (each piece until it is used up or the response ends), collects a
/// pending `End` with an empty input, then reports EOF if `eof`.
fn drive<'p>(
    pieces: impl IntoIterator<Item = &'p [u8]>,
    limits: ResponseLimits,
    ledger_limit: u64,
    eof: bool,
) -> Run {
    let mut dec = ResponseDecoder::new(limits);
    let mut ledger = ByteLedger::new(ledger_limit);
    let mut out = Outcome {
        head: None,
        body: Vec::new(),
        end: None,
        error: None,
        consumed: 0,
        ledger_used: 0,
    };
    let mut max_buffered = 0;
    let record = |out: &mut Outcome, ev: Option<ResponseEvent<'_>>| match ev {
        Some(ResponseEvent::Head(h)) => {
            assert!(out.head.is_none(), "two heads");
            assert!(out.body.is_empty() && out.end.is_none());
            out.head = Some(h);
        }
        Some(ResponseEvent::Body(b)) => {
            assert!(!b.is_empty(), "empty body event");
            assert!(out.head.is_some() && out.end.is_none());
            out.body.extend_from_slice(b);
        }
        Some(ResponseEvent::End { reusable }) => {
            assert!(out.end.is_none(), "two ends");
            assert!(out.head.is_some());
            out.end = Some(reusable);
        }
        None => {}
    };
    'feed: {
        for piece in pieces {
            let mut rest = piece;
            while !rest.is_empty() && !dec.is_ended() {
                match dec.decode(rest, &mut ledger) {
                    Ok(d) => {
                        assert!(d.consumed <= rest.len());
                        assert!(d.consumed > 0 || d.event.is_some(), "no progress");
                        rest = &rest[d.consumed..];
                        out.consumed += d.consumed;
                        record(&mut out, d.event);
                    }
                    Err(e) => {
                        // Sticky.
                        assert_eq!(dec.decode(b"x", &mut ledger), Err(e.clone()));
                        assert_eq!(dec.finish(), Err(e.clone()));
                        out.error = Some(e);
                        break 'feed;
                    }
                }
                max_buffered = max_buffered.max(dec.buffered_len());
                assert!(ledger.used() <= ledger_limit);
            }
        }
        if !dec.is_ended() {
            match dec.decode(&[], &mut ledger) {
                Ok(d) => {
                    assert_eq!(d.consumed, 0);
                    record(&mut out, d.event);
                }
                Err(e) => {
                    out.error = Some(e);
                    break 'feed;
                }
            }
        }
        if eof {
            match dec.finish() {
                Ok(Some(ev)) => record(&mut out, Some(ev)),
                Ok(None) => {}
                Err(e) => out.error = Some(e),
            }
        }
    }
    if out.end.is_some() {
        assert!(dec.is_ended());
        assert_eq!(dec.decode(b"more", &mut ledger).unwrap().consumed, 0);
        assert_eq!(dec.finish(), Ok(None));
    }
    if let Some(h) = &out.head {
        assert_eq!(dec.head(), Some(h));
        assert_eq!(dec.status(), Some(h.status));
    }
    out.ledger_used = ledger.used();
    if out.error.is_none() {
        assert_eq!(ledger.used(), out.consumed as u64, "ledger != consumed");
    } else {
        // The bytes charged by the failing call are not reported; the ledger has them.
        out.consumed = 0;
    }
    Run {
        outcome: out,
        max_buffered,
    }
}

fn whole(input: &[u8], eof: bool) -> Outcome {
    drive([input], ResponseLimits::default(), MIB8, eof).outcome
}

/// Whole, one byte at a time, and in pieces of 7: all the same; returns the outcome.
fn all_ways(input: &[u8], eof: bool) -> Outcome {
    let a = whole(input, eof);
    let b = drive(input.chunks(1), ResponseLimits::default(), MIB8, eof).outcome;
    let c = drive(input.chunks(7), ResponseLimits::default(), MIB8, eof).outcome;
    assert_eq!(a, b, "one byte at a time differs");
    assert_eq!(a, c, "pieces of 7 differ");
    a
}

fn err(input: &[u8]) -> Http1Error {
    match all_ways(input, true).error {
        Some(e) => e,
        None => panic!("no error for {:?}", String::from_utf8_lossy(input)),
    }
}

fn malformed(e: Http1Error) -> bool {
    matches!(e, Http1Error::Malformed { .. })
}

// ---------------------------------------------------------------------------------------------
// Known vectors

#[test]
fn content_length_body() {
    let input =
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhelloNEXT";
    let o = all_ways(input, false);
    let h = o.head.unwrap();
    assert_eq!(h.status, 200);
    assert_eq!(h.reason, "OK");
    assert_eq!(h.framing, Framing::ContentLength(5));
    assert_eq!(h.content_type().as_deref(), Some("application/json"));
    assert_eq!(o.body, b"hello");
    assert_eq!(o.end, Some(true));
    assert_eq!(o.error, None);
    assert_eq!(
        o.consumed,
        input.len() - 4,
        "bytes after End are not consumed"
    );
}

#[test]
fn content_length_body_events_borrow_and_stop_at_length() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef";
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(MIB8);
    let d = dec.decode(input, &mut ledger).unwrap();
    assert!(matches!(d.event, Some(ResponseEvent::Head(_))));
    let rest = &input[d.consumed..];
    let d = dec.decode(rest, &mut ledger).unwrap();
    assert_eq!(d.consumed, 3);
    match d.event {
        Some(ResponseEvent::Body(b)) => assert_eq!(b.as_ptr(), rest.as_ptr()),
        other => panic!("{other:?}"),
    }
    let d = dec.decode(&rest[3..], &mut ledger).unwrap();
    assert_eq!(d.consumed, 0);
    assert_eq!(d.event, Some(ResponseEvent::End { reusable: true }));
    assert!(dec.is_ended());
    assert_eq!(ledger.used(), input.len() as u64 - 3);
}

#[test]
fn zero_content_length_ends_after_head() {
    let input = b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(MIB8);
    let d = dec.decode(input, &mut ledger).unwrap();
    assert_eq!(d.consumed, input.len());
    assert!(matches!(d.event, Some(ResponseEvent::Head(_))));
    assert!(!dec.is_ended());
    let d = dec.decode(&[], &mut ledger).unwrap();
    assert_eq!(d.event, Some(ResponseEvent::End { reusable: true }));
    assert!(dec.is_ended());
}

#[test]
fn chunked_body_with_extensions_and_trailers() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;foo=bar\r\nhello\r\n\
        6 ; q=\"x y\"\r\n world\r\n\
        A\r\n0123456789\r\n\
        0;last=1\r\nX-Trailer: 1\r\nX-Other: two\r\n\r\nNEXT";
    let o = all_ways(input, false);
    assert_eq!(o.head.unwrap().framing, Framing::Chunked);
    assert_eq!(o.body, b"hello world0123456789");
    assert_eq!(o.end, Some(true));
    assert_eq!(o.consumed, input.len() - 4);
}

#[test]
fn chunked_without_trailers_and_case_insensitive_coding() {
    let input = b"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let o = all_ways(input, false);
    assert_eq!(o.body, b"abc");
    assert_eq!(o.end, Some(true));
}

#[test]
fn close_delimited_body_ends_at_eof() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome body";
    let o = all_ways(input, false);
    assert_eq!(o.head.as_ref().unwrap().framing, Framing::CloseDelimited);
    assert_eq!(o.body, b"some body");
    assert_eq!(o.end, None, "no end before EOF");
    let o = all_ways(input, true);
    assert_eq!(o.end, Some(false));
    assert_eq!(o.error, None);
}

#[test]
fn no_content_and_not_modified() {
    let o = all_ways(b"HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n", false);
    assert_eq!(o.head.unwrap().framing, Framing::NoBody);
    assert_eq!(o.end, Some(true));

    let o = all_ways(
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n",
        false,
    );
    assert_eq!(o.head.unwrap().framing, Framing::NoBody);
    assert_eq!(o.end, Some(true));

    // A 204 that announces a body has none, and the connection is not trusted again.
    let input = b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello";
    let o = all_ways(input, false);
    assert_eq!(o.head.unwrap().framing, Framing::NoBody);
    assert_eq!(o.body, b"");
    assert_eq!(o.end, Some(false));
    assert_eq!(o.consumed, input.len() - 5);
}

#[test]
fn informational_responses_are_skipped_and_charged() {
    let input = b"HTTP/1.1 100 Continue\r\n\r\n\
        HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n\
        HTTP/1.1 102 Processing\r\n\r\n\
        HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let o = all_ways(input, false);
    assert_eq!(o.head.unwrap().status, 200);
    assert_eq!(o.body, b"ok");
    assert_eq!(o.end, Some(true));
    assert_eq!(o.ledger_used, input.len() as u64);
}

#[test]
fn switching_protocols_is_an_error() {
    assert_eq!(
        err(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
        Http1Error::SwitchingProtocols
    );
}

#[test]
fn framing_conflicts() {
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Http1Error::ConflictingFraming
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\ncontent-length: 5\r\n\r\n"),
        Http1Error::ConflictingFraming
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
        Http1Error::ConflictingContentLength
    );
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n"),
        Http1Error::ConflictingContentLength
    );
    for same in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nContent-Length: 005\r\n\r\nhello",
    ] {
        let o = all_ways(same, false);
        assert_eq!(o.head.unwrap().framing, Framing::ContentLength(5));
        assert_eq!(o.body, b"hello");
    }
}

#[test]
fn invalid_content_lengths() {
    for v in [
        "abc",
        "-1",
        "+1",
        "",
        "1e3",
        "0x10",
        "5,",
        "5 5",
        "18446744073709551616",
    ] {
        let input = format!("HTTP/1.1 200 OK\r\nContent-Length: {v}\r\n\r\n");
        assert_eq!(
            err(input.as_bytes()),
            Http1Error::InvalidContentLength,
            "{v:?}"
        );
    }
}

#[test]
fn unsupported_transfer_encodings() {
    for v in [
        "gzip, chunked",
        "chunked, chunked",
        "identity",
        "gzip",
        "",
        "chunked;q=1",
        "chunked, gzip",
    ] {
        let input = format!("HTTP/1.1 200 OK\r\nTransfer-Encoding: {v}\r\n\r\n");
        assert_eq!(
            err(input.as_bytes()),
            Http1Error::UnsupportedTransferEncoding,
            "{v:?}"
        );
    }
    // Split over two fields it is the same list.
    assert_eq!(
        err(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"),
        Http1Error::UnsupportedTransferEncoding
    );
    // Transfer-Encoding in an HTTP/1.0 response is faulty framing.
    assert_eq!(
        err(b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        Http1Error::UnsupportedTransferEncoding
    );
}

#[test]
fn bad_chunk_sizes() {
    let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for line in ["zz", "", "-1", "0x5", "5x", "10000000000000000", " 5"] {
        let input = format!("{head}{line}\r\n");
        assert_eq!(
            err(input.as_bytes()),
            Http1Error::InvalidChunkSize,
            "{line:?}"
        );
    }
    assert!(malformed(err(format!("{head}5\nhello\r\n").as_bytes())));
    assert!(malformed(err(format!("{head}5;a\x01b\r\n").as_bytes())));
}

#[test]
fn chunk_data_must_end_with_crlf() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX";
    let o = all_ways(input, false);
    assert_eq!(o.body, b"hello", "the chunk is delivered before the error");
    assert!(malformed(o.error.unwrap()));
    for tail in [&b"\n0\r\n\r\n"[..], b"\r\r\n", b"\rX"] {
        let mut input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello".to_vec();
        input.extend_from_slice(tail);
        assert!(malformed(err(&input)), "{tail:?}");
    }
}

#[test]
fn chunk_larger_than_budget_fails_at_its_size_line() {
    let input = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\nabc";
    let o = all_ways(input, false);
    assert_eq!(o.body, b"");
    assert_eq!(
        o.error,
        Some(Http1Error::Budget(BudgetExceeded::new(
            Budget::ResponseBytes,
            MIB8
        )))
    );
}

#[test]
fn connection_close_is_not_reusable() {
    for conn in ["close", "Close", "keep-alive, close", "Upgrade,CLOSE"] {
        let input = format!("HTTP/1.1 200 OK\r\nConnection: {conn}\r\nContent-Length: 2\r\n\r\nok");
        let o = all_ways(input.as_bytes(), false);
        assert_eq!(o.end, Some(false), "{conn:?}");
    }
    let o = all_ways(
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        false,
    );
    assert_eq!(o.end, Some(false));
    let o = all_ways(
        b"HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 0\r\n\r\n",
        false,
    );
    assert_eq!(o.end, Some(true), "`closed` is not `close`");
}

#[test]
fn http10_keep_alive() {
    let o = all_ways(
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok",
        false,
    );
    assert_eq!(o.body, b"ok");
    assert_eq!(o.end, Some(true));

    let o = all_ways(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
    assert_eq!(o.end, Some(false), "HTTP/1.0 closes by default");

    let o = all_ways(b"HTTP/1.0 200 OK\r\n\r\nuntil close", true);
    assert_eq!(o.head.unwrap().framing, Framing::CloseDelimited);
    assert_eq!(o.body, b"until close");
    assert_eq!(o.end, Some(false));
}

#[test]
fn bare_lf_line_endings_in_head() {
    let o = all_ways(b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false);
    assert_eq!(o.body, b"ok");
    assert_eq!(o.end, Some(true));
    let o = all_ways(b"HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\nok", false);
    assert_eq!(o.body, b"ok");
}

#[test]
fn head_details() {
    let input = b"HTTP/1.1 404 Not \xe9t\xe9\r\nX-Raw: a\xffb\r\ncontent-TYPE:  Text/Event-Stream ; charset=utf-8 \r\nX-Empty:\r\nContent-Length: 0\r\n\r\n";
    let h = all_ways(input, false).head.unwrap();
    assert_eq!(h.status, 404);
    assert_eq!(h.reason, "Not \u{fffd}t\u{fffd}");
    assert_eq!(h.header("x-raw"), Some(&b"a\xffb"[..]));
    assert_eq!(h.header_str("X-RAW"), None, "not UTF-8");
    assert_eq!(h.header("x-empty"), Some(&b""[..]));
    assert_eq!(h.header("missing"), None);
    assert_eq!(h.headers[1].0, "content-TYPE", "original case kept");
    assert_eq!(
        h.header_str("Content-Type"),
        Some("Text/Event-Stream ; charset=utf-8")
    );
    assert_eq!(h.content_type().as_deref(), Some("text/event-stream"));

    let h = all_ways(b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false)
        .head
        .unwrap();
    assert_eq!(h.reason, "", "a missing reason phrase is accepted");
}

#[test]
fn versions_and_garbage() {
    assert_eq!(
        err(b"HTTP/2.0 200 OK\r\n\r\n"),
        Http1Error::UnsupportedVersion
    );
    assert_eq!(
        err(b"HTTP/1.2 200 OK\r\n\r\n"),
        Http1Error::UnsupportedVersion
    );
    assert_eq!(err(b"HTTP/2 200\r\n\r\n"), Http1Error::UnsupportedVersion);
    assert!(malformed(err(b"HTTP/1.1 20 OK\r\n\r\n")));
    assert!(malformed(err(b"HTTP/1.1 099 Low\r\n\r\n")));
    assert!(malformed(err(b"HTTP/1.1 600 High\r\n\r\n")));
    assert!(malformed(err(b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n")));
    assert!(malformed(err(b"HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n")));
    assert!(malformed(err(b"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n")));
    assert!(malformed(err(
        b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n"
    )));
    assert!(malformed(err(b"\r\nHTTP/1.1 200 OK\r\n\r\n")));

    // Not HTTP at all: refused at the first byte that cannot start a status line.
    let o = all_ways(b"SSH-2.0-OpenSSH_9.6\r\n", false);
    assert!(malformed(o.error.unwrap()));
    assert_eq!(o.ledger_used, 0);
    let o = all_ways(b"HTTPS/1.1 200 OK\r\n\r\n", false);
    assert!(malformed(o.error.unwrap()));
    assert_eq!(o.ledger_used, 4);
}

#[test]
fn unexpected_eof_names_the_stage() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "before response"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "response head"),
        (b"HTTP/1.1 100 Continue\r\n\r\n", "response head"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "body"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            "chunk size line",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;e",
            "chunk size line",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            "chunk data",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r",
            "chunk data",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
            "trailers",
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n",
            "trailers",
        ),
    ];
    for &(input, stage) in cases {
        let o = all_ways(input, true);
        assert_eq!(
            o.error,
            Some(Http1Error::UnexpectedEof { stage }),
            "{input:?}"
        );
        assert_eq!(o.end, None);
    }
}

#[test]
fn eof_after_complete_body_before_end_was_collected() {
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(MIB8);
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert!(dec.decode(input, &mut ledger).unwrap().event.is_some());
    assert_eq!(
        dec.finish(),
        Ok(Some(ResponseEvent::End { reusable: false }))
    );
    assert!(dec.is_ended());
    assert_eq!(dec.finish(), Ok(None));
}

#[test]
fn errors_are_sticky() {
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    let mut ledger = ByteLedger::new(MIB8);
    assert_eq!(dec.decode(b"HTTP/9", &mut ledger).unwrap().consumed, 6);
    let e = dec.decode(b" 200 OK\r\n\r\n", &mut ledger).unwrap_err();
    assert_eq!(e, Http1Error::UnsupportedVersion);
    assert_eq!(
        dec.decode(b"HTTP/1.1 200 OK\r\n\r\n", &mut ledger),
        Err(e.clone())
    );
    assert_eq!(dec.decode(b"", &mut ledger), Err(e.clone()));
    assert_eq!(dec.finish(), Err(e));
    assert_eq!(dec.buffered_len(), 0);
}

// ---------------------------------------------------------------------------------------------
// Real responses (see tests/data/http1/README.md)

fn fixture(name: &str) -> (Vec<u8>, Vec<u8>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/http1/");
    let wire = std::fs::read(format!("{dir}{name}.http")).unwrap();
    let body = std::fs::read(format!("{dir}{name}.body")).unwrap();
    (wire, body)
}

#[test]
fn real_server_responses() {
    // name, status, framing, content type, reusable
    let table: &[(&str, u16, Framing, Option<&str>, bool)] = &[
        (
            "ts-v1_initialize_json_cl",
            200,
            Framing::ContentLength(291),
            Some("application/json"),
            false,
        ),
        (
            "ts-v1_initialized_202_chunked",
            202,
            Framing::Chunked,
            None,
            false,
        ),
        (
            "py-mcp_discover_json_cl",
            200,
            Framing::ContentLength(430),
            Some("application/json"),
            false,
        ),
        (
            "ts-v2_discover_sse_chunked",
            200,
            Framing::Chunked,
            Some("text/event-stream"),
            true,
        ),
        (
            "fastmcp_initialize_sse_chunked",
            200,
            Framing::Chunked,
            Some("text/event-stream"),
            false,
        ),
    ];
    for &(name, status, framing, content_type, reusable) in table {
        let (wire, body) = fixture(name);
        let o = all_ways(&wire, false);
        assert_eq!(o.error, None, "{name}");
        let h = o.head.unwrap();
        assert_eq!(h.status, status, "{name}");
        assert_eq!(h.framing, framing, "{name}");
        assert_eq!(h.content_type().as_deref(), content_type, "{name}");
        assert_eq!(o.body, body, "{name}");
        assert_eq!(o.end, Some(reusable), "{name}");
        assert_eq!(o.consumed, wire.len(), "{name}");
    }

    // Lowercase names from Node and uvicorn are found case-insensitively.
    let (wire, _) = fixture("ts-v1_initialize_json_cl");
    let h = whole(&wire, false).head.unwrap();
    assert_eq!(h.headers[1].0, "mcp-session-id");
    assert_eq!(
        h.header_str("Mcp-Session-Id"),
        Some("1911c5a9-7c4c-4920-9879-b380be1312b0")
    );
    let (wire, _) = fixture("py-mcp_discover_json_cl");
    let h = whole(&wire, false).head.unwrap();
    assert_eq!(h.header_str("Server"), Some("uvicorn"));
    let (wire, _) = fixture("fastmcp_initialize_sse_chunked");
    let h = whole(&wire, false).head.unwrap();
    assert_eq!(
        h.header_str("MCP-SESSION-ID"),
        Some("906d62eb20b242cd9b291911c49c529f")
    );
}

// ---------------------------------------------------------------------------------------------
// Adversarial servers: exact error, bounded retention, bounded ledger.

fn hostile<'p>(pieces: impl IntoIterator<Item = &'p [u8]>, ledger_limit: u64) -> (Outcome, usize) {
    let run = drive(pieces, ResponseLimits::default(), ledger_limit, false);
    assert!(run.outcome.ledger_used <= ledger_limit);
    (run.outcome, run.max_buffered)
}

fn budget(b: Budget, limit: u64) -> Option<Http1Error> {
    Some(Http1Error::Budget(BudgetExceeded::new(b, limit)))
}

#[test]
fn header_padding_fails_at_the_block_cap() {
    let mut input = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
    input.extend(std::iter::repeat_n(b' ', 200_000));
    input.extend_from_slice(b"x\r\n\r\n");
    for piece in [input.len(), 1000, 1] {
        let (o, max_buffered) = hostile(input.chunks(piece), MIB8);
        assert_eq!(
            o.error,
            budget(Budget::HeaderBlock, 65536),
            "pieces of {piece}"
        );
        assert!(max_buffered <= 65536, "buffered {max_buffered}");
        assert_eq!(o.ledger_used, 65536, "exactly the cap was consumed");
        assert!(o.head.is_none());
    }
}

#[test]
fn header_block_of_exactly_the_cap_is_accepted() {
    let limits = ResponseLimits {
        header_block_bytes: 64,
        ..ResponseLimits::default()
    };
    let mut input = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ".to_vec();
    while input.len() < 64 - 4 {
        input.push(b'a');
    }
    input.extend_from_slice(b"\r\n\r\n");
    assert_eq!(input.len(), 64);
    let o = drive(input.chunks(1), limits, MIB8, false).outcome;
    assert_eq!(o.end, Some(true));
    input.insert(40, b'a');
    let o = drive([&input[..]], limits, MIB8, false).outcome;
    assert_eq!(o.error, budget(Budget::HeaderBlock, 64));
    assert_eq!(o.ledger_used, 64);
}

#[test]
fn endless_chunked_body_hits_the_byte_budget() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunk = b"1\r\nx\r\n".repeat(1000);
    let pieces = std::iter::once(&head[..]).chain(std::iter::repeat_n(&chunk[..], 2000));
    let (o, max_buffered) = hostile(pieces, MIB8);
    assert_eq!(o.error, budget(Budget::ResponseBytes, MIB8));
    assert_eq!(o.ledger_used, MIB8);
    assert!(max_buffered <= 4096);
    // Every body byte delivered was paid for with its 5 bytes of framing (the last one maybe
    // without its CRLF), and the next chunk did not fit.
    let paid = head.len() as u64 + 6 * o.body.len() as u64;
    assert!(paid <= MIB8 + 2);
    assert!(paid + 6 > MIB8);
}

#[test]
fn endless_close_delimited_body_delivers_exactly_the_budget() {
    let head = b"HTTP/1.1 200 OK\r\n\r\n";
    let block = vec![b'z'; 64 * 1024];
    let pieces = std::iter::once(&head[..]).chain(std::iter::repeat_n(&block[..], 200));
    let (o, _) = hostile(pieces, MIB8);
    assert_eq!(o.error, budget(Budget::ResponseBytes, MIB8));
    assert_eq!(o.body.len() as u64, MIB8 - head.len() as u64);
}

#[test]
fn endless_chunk_size_line() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for filler in [&b"0"[..], b"1", b";", b"a"] {
        let mut line = b"1".to_vec();
        line.extend_from_slice(filler);
        let body = filler.repeat(100_000);
        for piece in [usize::MAX, 1] {
            let mut input = head.to_vec();
            input.extend_from_slice(&line);
            input.extend_from_slice(&body);
            let piece = piece.min(input.len());
            let (o, max_buffered) = hostile(input.chunks(piece), MIB8);
            assert_eq!(o.error, budget(Budget::ChunkLine, 4096), "{filler:?}");
            assert!(max_buffered <= 4096);
            assert_eq!(o.ledger_used, (head.len() + 4096) as u64);
        }
    }
}

#[test]
fn endless_trailers() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n";
    let trailers = b"X-T: y\r\n".repeat(20_000);
    let mut input = head.to_vec();
    input.extend_from_slice(&trailers);
    for piece in [input.len(), 333, 1] {
        let (o, max_buffered) = hostile(input.chunks(piece), MIB8);
        assert_eq!(o.body, b"ok");
        assert_eq!(o.error, budget(Budget::HeaderBlock, 65536));
        assert!(max_buffered <= 65536);
        assert_eq!(o.ledger_used, (head.len() + 65536) as u64);
    }
    // A terminated trailer section with too many fields.
    let mut input = head.to_vec();
    input.extend_from_slice(&b"X-T: y\r\n".repeat(129));
    input.extend_from_slice(b"\r\n");
    assert_eq!(err(&input), budget(Budget::HeaderCount, 128).unwrap());
    let mut input = head.to_vec();
    input.extend_from_slice(&b"X-T: y\r\n".repeat(128));
    input.extend_from_slice(b"\r\n");
    assert_eq!(all_ways(&input, false).end, Some(true));
}

#[test]
fn continue_flood() {
    let one = b"HTTP/1.1 100 Continue\r\n\r\n";
    let input = one.repeat(10_000);
    for piece in [input.len(), 1] {
        let (o, max_buffered) = hostile(input.chunks(piece), MIB8);
        assert_eq!(o.error, budget(Budget::InformationalResponses, 16));
        assert_eq!(o.ledger_used, 17 * one.len() as u64);
        assert!(max_buffered <= one.len());
    }
    // Exactly the limit is fine.
    let mut input = one.repeat(16);
    input.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(all_ways(&input, false).end, Some(true));
}

#[test]
fn huge_content_length_fails_before_any_body_byte() {
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n";
    let mut input = head.to_vec();
    input.extend_from_slice(&[b'a'; 1000]);
    let (o, _) = hostile([&input[..]], MIB8);
    assert_eq!(
        o.error,
        Some(Http1Error::ContentLengthExceedsBudget {
            length: 10_000_000_000,
            remaining: MIB8 - head.len() as u64,
        })
    );
    assert!(o.body.is_empty());
    assert!(o.head.is_none());
    assert_eq!(o.ledger_used, head.len() as u64);
    // Exactly what is left is fine.
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    let run = drive(
        [&input[..]],
        ResponseLimits::default(),
        input.len() as u64,
        false,
    );
    assert_eq!(run.outcome.end, Some(true));
    let run = drive(
        [&input[..]],
        ResponseLimits::default(),
        input.len() as u64 - 1,
        false,
    );
    assert_eq!(
        run.outcome.error,
        Some(Http1Error::ContentLengthExceedsBudget {
            length: 10,
            remaining: 9
        })
    );
}

#[test]
fn header_count_flood() {
    let mut input = b"HTTP/1.1 200 OK\r\n".to_vec();
    input.extend_from_slice(&b"a: b\r\n".repeat(129));
    input.extend_from_slice(b"\r\n");
    let (o, max_buffered) = hostile(input.chunks(1), MIB8);
    assert_eq!(o.error, budget(Budget::HeaderCount, 128));
    assert!(max_buffered <= input.len());
    // 128 is fine.
    let mut input = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n".to_vec();
    input.extend_from_slice(&b"a: b\r\n".repeat(127));
    input.extend_from_slice(b"\r\n");
    assert_eq!(all_ways(&input, false).end, Some(true));
    // Endless fields hit the block cap first.
    let mut input = b"HTTP/1.1 200 OK\r\n".to_vec();
    input.extend_from_slice(&b"a:\n".repeat(100_000));
    let (o, max_buffered) = hostile([&input[..]], MIB8);
    assert_eq!(o.error, budget(Budget::HeaderBlock, 65536));
    assert!(max_buffered <= 65536);
}

#[test]
fn ledger_smaller_than_the_head() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Long: 0123456789\r\n\r\nok";
    for piece in [input.len(), 1] {
        let (o, max_buffered) = hostile(input.chunks(piece), 20);
        assert_eq!(o.error, budget(Budget::ResponseBytes, 20));
        assert_eq!(o.ledger_used, 20);
        assert!(max_buffered <= 20);
    }
}

#[test]
fn ledger_is_shared_across_responses() {
    let input = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let mut ledger = ByteLedger::new(input.len() as u64 * 2 + 5);
    for _ in 0..2 {
        let mut dec = ResponseDecoder::new(ResponseLimits::default());
        let mut rest = &input[..];
        while !dec.is_ended() {
            let d = dec.decode(rest, &mut ledger).unwrap();
            rest = &rest[d.consumed..];
        }
    }
    assert_eq!(ledger.remaining(), 5);
    let mut dec = ResponseDecoder::new(ResponseLimits::default());
    assert_eq!(
        dec.decode(input, &mut ledger),
        Err(Http1Error::Budget(BudgetExceeded::new(
            Budget::ResponseBytes,
            input.len() as u64 * 2 + 5
        )))
    );
}

#[test]
fn limits_from_budgets() {
    let limits = ResponseLimits::from_budgets(&Budgets::default());
    assert_eq!(limits, ResponseLimits::default());
    assert_eq!(limits.header_block_bytes, 65536);
    assert_eq!(limits.header_count, 128);
    assert_eq!(limits.chunk_line_bytes, 4096);
    assert_eq!(limits.informational_responses, 16);
}

// ---------------------------------------------------------------------------------------------
// Encoder

#[test]
fn encodes_post_exactly() {
    let req = Request {
        method: Method::Post,
        path: "/mcp?x=1".into(),
        authority: "example.com:8080".into(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
            ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
    };
    let expected = b"POST /mcp?x=1 HTTP/1.1\r\n\
        Host: example.com:8080\r\n\
        Content-Type: application/json\r\n\
        Accept: application/json, text/event-stream\r\n\
        MCP-Protocol-Version: 2026-07-28\r\n\
        Content-Length: 40\r\n\
        \r\n\
        {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    assert_eq!(encode(&req).unwrap(), expected);
    let mut out = b"previous".to_vec();
    encode_into(&req, &mut out).unwrap();
    assert_eq!(&out[..8], b"previous");
    assert_eq!(&out[8..], expected);
}

#[test]
fn endpoint_without_path_encodes_slash() {
    let ep = Endpoint::parse("http://127.0.0.1:18953").unwrap();
    let req = Request {
        method: Method::Get,
        path: ep.target().to_owned(),
        authority: ep.authority().to_owned(),
        headers: vec![("Accept".into(), "text/event-stream".into())],
        body: vec![],
    };
    assert_eq!(
        encode(&req).unwrap(),
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1:18953\r\nAccept: text/event-stream\r\n\r\n"
    );
    let ep = Endpoint::parse("https://[::1]/mcp#x").unwrap();
    assert_eq!((ep.authority(), ep.target()), ("[::1]", "/mcp"));
}

#[test]
fn bearer_token_with_newline_is_refused_without_leaking() {
    let token = "Bearer s3cr3t-t0k3n\r\nX-Injected: yes";
    let req = Request {
        method: Method::Post,
        path: "/mcp".into(),
        authority: "h".into(),
        headers: vec![("Authorization".into(), token.into())],
        body: b"{}".to_vec(),
    };
    let mut out = Vec::new();
    let e = encode_into(&req, &mut out).unwrap_err();
    assert_eq!(
        e,
        RequestError::InvalidHeaderValue {
            name: "Authorization".into()
        }
    );
    assert!(out.is_empty());
    let msg = e.to_string();
    assert!(msg.contains("Authorization"));
    assert!(!msg.contains("s3cr3t"), "{msg}");
    assert!(!format!("{e:?}").contains("s3cr3t"));
}

#[test]
fn reserved_header_is_refused() {
    for name in ["Host", "content-length", "Transfer-Encoding"] {
        let req = Request {
            method: Method::Post,
            path: "/".into(),
            authority: "h".into(),
            headers: vec![(name.into(), "1".into())],
            body: vec![],
        };
        assert_eq!(
            encode(&req),
            Err(RequestError::ReservedHeader { name: name.into() })
        );
    }
    assert_eq!(Method::Delete.as_str(), "DELETE");
}

// ---------------------------------------------------------------------------------------------
// Property: any split gives the same result as the whole, which is the expected one.

#[derive(Clone, Debug)]
enum Kind {
    Length,
    Chunked {
        sizes: Vec<usize>,
        exts: Vec<String>,
        trailers: Vec<(String, String)>,
    },
    Close,
}

#[derive(Clone, Debug)]
struct Generated {
    wire: Vec<u8>,
    /// Length of the response within `wire` (the rest is the next response's bytes).
    len: usize,
    status: u16,
    body: Vec<u8>,
    reusable: bool,
    close_delimited: bool,
    headers: Vec<(String, Vec<u8>)>,
}

fn header_name() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9_-]{0,12}".prop_filter("reserved", |n| {
        !["content-length", "transfer-encoding", "connection"]
            .iter()
            .any(|r| n.eq_ignore_ascii_case(r))
    })
}

fn header_value() -> impl Strategy<Value = String> {
    "([!-~]([ -~]{0,20}[!-~])?)?"
}

#[allow(clippy::too_many_arguments)]
fn build(
    infos: Vec<(u16, Vec<(String, String)>)>,
    minor: u8,
    status: u16,
    headers: Vec<(String, String)>,
    connection: Option<String>,
    body: Vec<u8>,
    kind: Kind,
    bare_lf: bool,
    next: Vec<u8>,
) -> Generated {
    let nl: &[u8] = if bare_lf { b"\n" } else { b"\r\n" };
    let mut wire = Vec::new();
    for (code, hs) in &infos {
        wire.extend_from_slice(format!("HTTP/1.1 {code} Info").as_bytes());
        wire.extend_from_slice(nl);
        for (n, v) in hs {
            wire.extend_from_slice(format!("{n}: {v}").as_bytes());
            wire.extend_from_slice(nl);
        }
        wire.extend_from_slice(nl);
    }
    let no_body = status == 204 || status == 304;
    let kind = match kind {
        Kind::Chunked { .. } if minor == 0 => Kind::Length,
        k => k,
    };
    let body = if no_body { Vec::new() } else { body };
    wire.extend_from_slice(format!("HTTP/1.{minor} {status} Some Reason").as_bytes());
    wire.extend_from_slice(nl);
    let mut all_headers: Vec<(String, Vec<u8>)> = Vec::new();
    let mut push = |wire: &mut Vec<u8>, n: &str, v: &str| {
        wire.extend_from_slice(format!("{n}: {v}").as_bytes());
        wire.extend_from_slice(nl);
        all_headers.push((n.to_owned(), v.as_bytes().to_vec()));
    };
    for (n, v) in &headers {
        push(&mut wire, n, v);
    }
    if let Some(c) = &connection {
        push(&mut wire, "Connection", c);
    }
    if !no_body {
        match &kind {
            Kind::Length => push(&mut wire, "Content-Length", &body.len().to_string()),
            Kind::Chunked { .. } => push(&mut wire, "Transfer-Encoding", "chunked"),
            Kind::Close => {}
        }
    }
    wire.extend_from_slice(nl);
    let close_delimited = !no_body && matches!(kind, Kind::Close);
    if !no_body {
        match &kind {
            Kind::Length | Kind::Close => wire.extend_from_slice(&body),
            Kind::Chunked {
                sizes,
                exts,
                trailers,
            } => {
                let mut i = 0;
                let mut k = 0;
                while i < body.len() {
                    let n = sizes
                        .get(k % sizes.len().max(1))
                        .copied()
                        .unwrap_or(7)
                        .min(body.len() - i);
                    let ext = exts.get(k).map(String::as_str).unwrap_or("");
                    wire.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                    wire.extend_from_slice(&body[i..i + n]);
                    wire.extend_from_slice(b"\r\n");
                    i += n;
                    k += 1;
                }
                let ext = exts.last().map(String::as_str).unwrap_or("");
                wire.extend_from_slice(format!("0{ext}\r\n").as_bytes());
                for (n, v) in trailers {
                    wire.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
                }
                wire.extend_from_slice(b"\r\n");
            }
        }
    }
    let len = wire.len();
    if !close_delimited {
        wire.extend_from_slice(&next);
    }
    let keep = match connection.as_deref() {
        Some(c) if c.eq_ignore_ascii_case("close") => false,
        Some(c) if c.eq_ignore_ascii_case("keep-alive") => true,
        _ => minor == 1,
    };
    Generated {
        wire,
        len,
        status,
        body,
        reusable: keep && !close_delimited,
        close_delimited,
        headers: all_headers,
    }
}

fn generated() -> impl Strategy<Value = Generated> {
    let info = (
        prop_oneof![Just(100u16), Just(102), Just(103), Just(199)],
        prop::collection::vec((header_name(), header_value()), 0..3),
    );
    let kind = prop_oneof![
        Just(Kind::Length),
        Just(Kind::Close),
        (
            prop::collection::vec(1usize..70, 1..6),
            prop::collection::vec(
                prop_oneof![
                    Just(String::new()),
                    "(;[a-z]{1,5}(=[a-z0-9]{0,5})?){1,2}",
                    Just(" ; q=\"a b\"".to_owned()),
                ],
                0..8
            ),
            prop::collection::vec((header_name(), header_value()), 0..3),
        )
            .prop_map(|(sizes, exts, trailers)| Kind::Chunked {
                sizes,
                exts,
                trailers
            }),
    ];
    (
        prop::collection::vec(info, 0..4),
        0u8..=1,
        prop_oneof![
            Just(200u16),
            Just(201),
            Just(202),
            Just(204),
            Just(304),
            Just(400),
            Just(404),
            Just(500)
        ],
        prop::collection::vec((header_name(), header_value()), 0..6),
        prop::option::of(prop_oneof![
            Just("close".to_owned()),
            Just("keep-alive".to_owned()),
            Just("Keep-Alive".to_owned()),
            Just("upgrade".to_owned()),
        ]),
        prop::collection::vec(any::<u8>(), 0..300),
        kind,
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..20),
    )
        .prop_map(
            |(infos, minor, status, headers, connection, body, kind, bare_lf, next)| {
                build(
                    infos, minor, status, headers, connection, body, kind, bare_lf, next,
                )
            },
        )
}

fn split_at<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
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
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_split_gives_the_expected_response(
        g in generated(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let limits = ResponseLimits::default();
        let eof = g.close_delimited;
        let whole = drive([&g.wire[..]], limits, MIB8, eof).outcome;
        prop_assert_eq!(&whole.error, &None);
        let head = whole.head.clone().unwrap();
        prop_assert_eq!(head.status, g.status);
        prop_assert_eq!(&head.headers, &g.headers);
        prop_assert_eq!(&whole.body, &g.body);
        prop_assert_eq!(whole.end, Some(g.reusable));
        prop_assert_eq!(whole.consumed, g.len);
        prop_assert_eq!(whole.ledger_used, g.len as u64);

        let split = drive(split_at(&g.wire, &cuts), limits, MIB8, eof).outcome;
        prop_assert_eq!(&split, &whole);
        let bytes = drive(g.wire.chunks(1), limits, MIB8, eof).outcome;
        prop_assert_eq!(&bytes, &whole);
    }

    #[test]
    fn mutated_responses_decode_the_same_in_any_split(
        g in generated(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        ledger_limit in 16u64..2048,
        block in 8usize..512,
        count in 0usize..8,
        line in 1usize..24,
        infos in 0u32..3,
    ) {
        let mut wire = g.wire.clone();
        for (at, byte, op) in edits {
            let at = at % (wire.len() + 1);
            match op {
                0 if at < wire.len() => wire[at] = byte,
                1 => wire.insert(at, byte),
                _ if at < wire.len() => { wire.remove(at); }
                _ => {}
            }
        }
        let limits = ResponseLimits {
            header_block_bytes: block,
            header_count: count,
            chunk_line_bytes: line,
            informational_responses: infos,
        };
        for eof in [false, true] {
            let whole = drive([&wire[..]], limits, ledger_limit, eof);
            prop_assert!(whole.max_buffered <= block.max(line));
            let split = drive(split_at(&wire, &cuts), limits, ledger_limit, eof);
            prop_assert_eq!(&split.outcome, &whole.outcome);
            prop_assert!(split.max_buffered <= block.max(line));
            let bytes = drive(wire.chunks(1), limits, ledger_limit, eof);
            prop_assert_eq!(&bytes.outcome, &whole.outcome);
        }
    }
}
