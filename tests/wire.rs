//! The wire-neutral exchange boundary: requests encode as HTTP/1.1 exactly as the HTTP/1.1
//! encoder does, and response events carry the raw bytes they cost, whatever the split.

use mcp_sansio::http1;
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::wire::{Method, Request, WireError};

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
    let out_of_order = WireError::OutOfOrder {
        what: "a second response head",
    };
    for kept in [
        &malformed,
        &protocol,
        &h1_budget,
        &h2_budget,
        &overrun,
        &out_of_order,
    ] {
        assert!(!kept.is_broken_stream(), "{kept:?}");
        assert!(!kept.is_cut_off(), "{kept:?}");
    }
}
