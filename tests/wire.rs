//! The wire-neutral exchange boundary: requests encode as HTTP/1.1 exactly as the HTTP/1.1
//! encoder does, and response events carry the raw bytes they cost, whatever the split.

use mcp_sansio::http1::{self, ResponseLimits};
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::wire::{Method, Request, ResponseDecoder, ResponseEvent, WireError};
use mcp_sansio::ByteLedger;

fn request() -> Request {
    Request {
        method: Method::Post,
        authority: "example.test:8080".into(),
        path: "/mcp?x=1".into(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            ("Mcp-Method".into(), "tools/list".into()),
        ],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
    }
}

#[test]
fn http1_encoding_is_the_http1_encoder_s() {
    let r = request();
    let mut wire = Vec::new();
    Http1Socket::encode_into(&r, &mut wire).unwrap();
    let direct = http1::encode(&r).unwrap();
    assert_eq!(wire, direct);
    assert!(wire.starts_with(b"POST /mcp?x=1 HTTP/1.1\r\nHost: example.test:8080\r\n"));
}

#[test]
fn an_invalid_request_appends_nothing() {
    let mut r = request();
    r.headers.push(("Host".into(), "other".into()));
    let mut out = b"kept".to_vec();
    assert!(Http1Socket::encode_into(&r, &mut out).is_err());
    assert_eq!(out, b"kept");
}

const RESPONSE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: Text/Event-Stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n";

/// What a whole decode produced: the events, reduced to comparable values, and the ledger.
#[derive(Debug, PartialEq)]
struct Run {
    status: Option<u16>,
    content_type: Option<String>,
    body: Vec<u8>,
    raws: (u64, u64, u64),
    reusable: Option<bool>,
    charged: u64,
}

fn decode(input: &[u8], piece: usize) -> Run {
    let mut ledger = ByteLedger::new(1 << 20);
    let mut d = ResponseDecoder::new(ResponseLimits::default());
    let mut run = Run {
        status: None,
        content_type: None,
        body: Vec::new(),
        raws: (0, 0, 0),
        reusable: None,
        charged: 0,
    };
    for chunk in input.chunks(piece) {
        let mut rest = chunk;
        loop {
            let step = d.decode(rest, &mut ledger).unwrap();
            rest = &rest[step.consumed..];
            match step.event {
                Some(ResponseEvent::Head { head, raw }) => {
                    assert!(!head.close_delimited, "a chunked body ends on its own");
                    run.status = Some(head.status);
                    run.content_type = head.content_type();
                    run.raws.0 += raw;
                }
                Some(ResponseEvent::Body { bytes, raw, .. }) => {
                    run.body.extend_from_slice(bytes);
                    run.raws.1 += raw;
                }
                Some(ResponseEvent::End { reusable, raw }) => {
                    run.reusable = Some(reusable);
                    run.raws.2 += raw;
                }
                None if step.consumed == 0 => break,
                None => {}
            }
        }
    }
    assert!(d.is_ended());
    run.charged = ledger.used();
    run
}

#[test]
fn events_carry_every_raw_byte_in_any_split() {
    let whole = decode(RESPONSE, RESPONSE.len());
    assert_eq!(whole.status, Some(200));
    assert_eq!(whole.content_type.as_deref(), Some("text/event-stream"));
    assert_eq!(whole.body, b"hello world");
    assert_eq!(whole.reusable, Some(true));
    let (head, body, end) = whole.raws;
    assert_eq!(
        head + body + end,
        RESPONSE.len() as u64,
        "every byte is in an event"
    );
    assert_eq!(whole.charged, RESPONSE.len() as u64, "and charged once");
    let head_block = RESPONSE
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"\r\n\r\n")
        .nth(1)
        .map(|(i, _)| i + 4)
        .unwrap();
    assert_eq!(
        head, head_block as u64,
        "the head costs the 1xx and its own block"
    );
    for piece in [1, 2, 3, 7] {
        let split = decode(RESPONSE, piece);
        assert_eq!(split.status, whole.status, "piece {piece}");
        assert_eq!(split.body, whole.body, "piece {piece}");
        assert_eq!(split.reusable, whole.reusable, "piece {piece}");
        assert_eq!(split.charged, whole.charged, "piece {piece}");
        let (h, b, e) = split.raws;
        assert_eq!(
            h, head,
            "piece {piece}: the head's cost does not depend on the split"
        );
        assert_eq!(h + b + e, RESPONSE.len() as u64, "piece {piece}");
    }
}

#[test]
fn a_close_delimited_body_ends_at_eof_and_is_not_delimited() {
    let input = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{}";
    let mut ledger = ByteLedger::new(1 << 20);
    let mut d = ResponseDecoder::new(ResponseLimits::default());
    let mut rest = &input[..];
    let mut raw_total = 0;
    while !rest.is_empty() {
        let step = d.decode(rest, &mut ledger).unwrap();
        rest = &rest[step.consumed..];
        match step.event {
            Some(ResponseEvent::Head { head, raw }) => {
                assert_eq!(head.content_length, None);
                assert!(head.close_delimited);
                raw_total += raw;
            }
            Some(ResponseEvent::Body { raw, .. }) => raw_total += raw,
            other => panic!("{other:?}"),
        }
    }
    match d.finish().unwrap() {
        Some(ResponseEvent::End { reusable, raw }) => {
            assert!(!reusable);
            raw_total += raw;
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(raw_total, input.len() as u64);
    assert_eq!(ledger.used(), input.len() as u64);
}

#[test]
fn codec_errors_are_typed_and_sticky() {
    let mut ledger = ByteLedger::new(1 << 20);
    let mut d = ResponseDecoder::new(ResponseLimits::default());
    let first = d.decode(b"HTTP/2 200 OK\r\n\r\n", &mut ledger).unwrap_err();
    assert!(matches!(first, WireError::Http1(_)), "{first:?}");
    let again = d.decode(b"more", &mut ledger).unwrap_err();
    assert_eq!(first, again);
}

/// Whether a response stream broke is one notion whatever the wire (MCP 2026-07-28, Streamable
/// HTTP: "A broken response stream loses the in-flight request; clients MUST re-issue it as a
/// new request with a new request ID"): the socket ending early over HTTP/1.1, or over HTTP/2 a
/// reset stream (any code), a GOAWAY that leaves the stream out, or the connection's loss. A
/// broken framing is a break once the answer began; a malformed answer and a budget never cut a
/// stream off.
#[test]
fn a_broken_stream_is_one_notion_whatever_the_wire() {
    use mcp_sansio::h2::{H2Error, Reason};
    use mcp_sansio::http1::Http1Error;
    use mcp_sansio::{Budget, Budgets};
    let budget = Budgets::default().exceeded(Budget::ResponseBytes);
    let eof = WireError::Http1(Http1Error::UnexpectedEof { stage: "body" });
    let chunk = WireError::Http1(Http1Error::InvalidChunkSize);
    let reset = WireError::Http2(H2Error::Reset {
        reason: Reason::INTERNAL_ERROR,
    });
    let refused = WireError::Http2(H2Error::Reset {
        reason: Reason::REFUSED_STREAM,
    });
    let goaway = WireError::Http2(H2Error::GoAway {
        reason: Reason::NO_ERROR,
        last_stream_id: 0,
    });
    let lost = WireError::Http2(H2Error::Closed {
        what: "the server closed the socket",
    });
    for cut in [&eof, &reset, &refused, &goaway, &lost] {
        assert!(cut.is_cut_off(), "{cut:?}");
        assert!(cut.is_broken_stream(), "{cut:?}");
    }
    assert!(!chunk.is_cut_off());
    assert!(
        chunk.is_broken_stream(),
        "a broken framing breaks the stream"
    );
    let malformed = WireError::Http2(H2Error::Malformed { what: "x" });
    let protocol = WireError::Http2(H2Error::Protocol {
        reason: Reason::PROTOCOL_ERROR,
        what: "x",
    });
    let h1_budget = WireError::Http1(Http1Error::Budget(budget));
    let h2_budget = WireError::Http2(H2Error::Budget(budget));
    let overrun = WireError::Http1(Http1Error::ContentLengthExceedsBudget {
        length: 10,
        remaining: 1,
    });
    for kept in [&malformed, &protocol, &h1_budget, &h2_budget, &overrun] {
        assert!(!kept.is_broken_stream(), "{kept:?}");
        assert!(!kept.is_cut_off(), "{kept:?}");
    }
}
