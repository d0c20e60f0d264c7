//! Streams the HTTP/2 client reset are remembered by age (RFC 9113 §5.1, "closed": after sending
//! RST_STREAM an endpoint MUST ignore the frames it receives on the stream for a while), not only
//! the last few: a late frame for the first of 100 cancelled streams keeps the connection, its
//! header block still moves the HPACK table, its DATA still counts against the connection window
//! (RFC 9113 §6.9), and only a reset older than the documented 30 s of caller time, or forgotten
//! past the documented cap of 1024, makes a late frame a connection error again.
//!
//! The oracles are the RFC and the documented figures (30 s, 1024), written here as numbers, and
//! a server model built here: HPACK blocks are written by hand (RFC 7541 §6), the server's view
//! of the connection window is kept by the test.

use std::time::Duration;

use mcp_sansio::h2::{ClientConnection, H2Config, H2Error, StreamEvent, StreamId};
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason};
use mcp_sansio::internals::h2::hpack::Header;
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Instant, Scheme};

const T0: Instant = Instant::ZERO;
/// The grace a reset stream is remembered for, as documented (`RESET_GRACE`).
const GRACE: Duration = Duration::from_secs(30);
/// The most reset streams remembered, as documented (`RESET_MEMORY`).
const CAP: u32 = 1024;

/// `:status: 200`, indexed from the static table (RFC 7541 Appendix A, index 8).
const STATUS_200: u8 = 0x88;
/// The first dynamic-table entry, indexed (RFC 7541 §2.3.3: index 62).
const FIRST_DYNAMIC: u8 = 0x80 | 62;

fn request() -> Request {
    Request {
        method: Method::Get,
        authority: "mcp.example.com".into(),
        path: "/mcp".into(),
        headers: vec![("accept".into(), "application/json".into())],
        body: Vec::new(),
    }
}

fn enc(f: Frame) -> Vec<u8> {
    let mut out = Vec::new();
    f.encode(&mut out);
    out
}

/// A header block `:status: 200` plus `name: value` as a literal with incremental indexing and
/// a new name (RFC 7541 §6.2.1): decoding it inserts `name: value` into the dynamic table.
fn block_indexing(name: &str, value: &str) -> Vec<u8> {
    let mut b = vec![STATUS_200, 0x40, name.len() as u8];
    b.extend(name.as_bytes());
    b.push(value.len() as u8);
    b.extend(value.as_bytes());
    b
}

fn headers(sid: u32, fragment: Vec<u8>, end_stream: bool) -> Vec<u8> {
    enc(Frame::Headers {
        stream_id: sid,
        end_stream,
        end_headers: true,
        priority: None,
        fragment,
        pad_len: None,
    })
}

fn data(sid: u32, d: &[u8], end: bool) -> Vec<u8> {
    enc(Frame::Data {
        stream_id: sid,
        end_stream: end,
        data: d.to_vec(),
        pad_len: None,
    })
}

fn ping() -> Vec<u8> {
    enc(Frame::Ping {
        ack: false,
        data: [7; 8],
    })
}

fn events(c: &mut ClientConnection) -> Vec<StreamEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// The frames the client wrote since the last call (the preface skipped).
fn written(c: &mut ClientConnection) -> Vec<Frame> {
    let mut bytes = Vec::new();
    while let Some(b) = c.poll_transmit() {
        bytes.extend(b);
    }
    let mut rest = bytes.strip_prefix(PREFACE).unwrap_or(&bytes[..]);
    let mut reader = FrameDecoder::new();
    let mut frames = Vec::new();
    while !rest.is_empty() {
        if let Some(Decoded { frame, .. }) = reader.decode(&mut rest).unwrap() {
            frames.push(frame);
        }
    }
    frames
}

/// A client whose server sent its SETTINGS (MAX_CONCURRENT_STREAMS 100) and acknowledged ours.
fn ready(config: H2Config) -> ClientConnection {
    let mut c = ClientConnection::new(T0, config);
    let mut input = enc(Frame::Settings {
        ack: false,
        settings: vec![(3, 100)],
    });
    input.extend(enc(Frame::Settings {
        ack: true,
        settings: Vec::new(),
    }));
    c.handle_bytes(T0, &input).unwrap();
    written(&mut c);
    c
}

/// Opens and cancels `n` streams (ids 1, 3, …), one after the other; each RST_STREAM(CANCEL)
/// is checked.
fn open_and_cancel(c: &mut ClientConnection, n: u32) {
    for k in 0..n {
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        assert_eq!(id, StreamId(2 * k + 1));
        c.cancel(id);
        let frames = written(c);
        assert_eq!(
            frames.last(),
            Some(&Frame::RstStream {
                stream_id: id.0,
                reason: Reason::CANCEL
            })
        );
    }
    assert_eq!(c.open_streams(), 0);
}

fn field(name: &str, value: &str) -> Header {
    Header {
        name: name.as_bytes().to_vec(),
        value: value.as_bytes().to_vec(),
        never_indexed: false,
    }
}

/// The response of the stream opened next, with `fragment` as its head: Head then End.
fn next_exchange(c: &mut ClientConnection, now: Instant, fragment: Vec<u8>) -> Vec<StreamEvent> {
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    written(c);
    let mut input = headers(id.0, fragment, false);
    input.extend(data(id.0, b"{}", true));
    c.handle_bytes(now, &input).unwrap();
    events(c)
}

fn closed(what: &'static str) -> H2Error {
    H2Error::Protocol {
        reason: Reason::STREAM_CLOSED,
        what,
    }
}

#[test]
fn late_headers_and_data_for_the_first_of_100_reset_streams_keep_the_connection() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 100);
    let before = c.socket_bytes_used();
    let mut late = headers(1, vec![STATUS_200], false);
    late.extend(data(1, b"late body", false));
    late.extend(data(1, b"", true));
    assert_eq!(c.handle_bytes(T0, &late), Ok(()));
    assert_eq!(c.error(), None);
    assert_eq!(events(&mut c), vec![]);
    // Ignored, not free: every octet goes to the socket's ledger.
    assert_eq!(c.socket_bytes_used(), before + late.len() as u64);
    // The next request is stream 201 and is answered.
    let evs = next_exchange(&mut c, T0, vec![STATUS_200]);
    assert_eq!(evs.len(), 3, "{evs:?}");
    assert!(matches!(
        &evs[0],
        StreamEvent::Head { stream: StreamId(201), status: 200, headers, .. } if headers.is_empty()
    ));
    assert!(
        matches!(&evs[1], StreamEvent::Data { stream: StreamId(201), data, .. } if data == b"{}")
    );
    assert!(matches!(
        &evs[2],
        StreamEvent::End {
            stream: StreamId(201),
            ..
        }
    ));
    assert_eq!(c.error(), None);
}

#[test]
fn the_late_header_block_of_a_reset_stream_still_moves_the_hpack_table() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 100);
    // The late head of stream 1 inserts `x-late: yes` at dynamic index 62; split across a
    // CONTINUATION so the whole block is seen to go through the decoder.
    let block = block_indexing("x-late", "yes");
    let (first, rest) = block.split_at(3);
    let mut late = enc(Frame::Headers {
        stream_id: 1,
        end_stream: true,
        end_headers: false,
        priority: None,
        fragment: first.to_vec(),
        pad_len: None,
    });
    late.extend(enc(Frame::Continuation {
        stream_id: 1,
        end_headers: true,
        fragment: rest.to_vec(),
    }));
    assert_eq!(c.handle_bytes(T0, &late), Ok(()));
    assert_eq!(events(&mut c), vec![]);
    // The next response refers to that entry by index: it reads as the server meant it.
    let evs = next_exchange(&mut c, T0, vec![STATUS_200, FIRST_DYNAMIC]);
    match &evs[0] {
        StreamEvent::Head {
            stream, headers, ..
        } => {
            assert_eq!(*stream, StreamId(201));
            assert_eq!(headers, &vec![field("x-late", "yes")]);
        }
        other => panic!("expected the head of stream 201, got {other:?}"),
    }
    assert!(matches!(&evs[2], StreamEvent::End { .. }));
    assert_eq!(c.error(), None);
}

#[test]
fn late_data_of_a_reset_stream_counts_against_the_connection_window() {
    // The smallest connection window (65,535), so that half of it is reopened with little data.
    let mut config = H2Config::default();
    config.connection_window = 65_535;
    let mut c = ready(config);
    open_and_cancel(&mut c, 100);
    // The server's view of the connection window (RFC 9113 §6.9): what it may still send.
    let mut window: i64 = 65_535;
    let chunk = vec![b'x'; 16_384];
    let mut late = data(1, &chunk, false);
    late.extend(data(1, &chunk, true));
    window -= 2 * 16_384;
    assert_eq!(c.handle_bytes(T0, &late), Ok(()));
    assert_eq!(events(&mut c), vec![]);
    // Half the window is consumed by the ignored DATA: the client gives it back.
    let updates: Vec<u32> = written(&mut c)
        .into_iter()
        .filter_map(|f| match f {
            Frame::WindowUpdate {
                stream_id: 0,
                increment,
            } => Some(increment),
            _ => None,
        })
        .collect();
    assert_eq!(updates, vec![2 * 16_384]);
    window += i64::from(updates.iter().sum::<u32>());
    // Both sides agree on the window: the server may send all of it on a new stream, and one
    // octet more is beyond it.
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    written(&mut c);
    let mut input = headers(id.0, vec![STATUS_200], false);
    let mut left = window as usize;
    while left > 0 {
        let n = left.min(16_384);
        input.extend(data(id.0, &vec![b'y'; n], false));
        left -= n;
    }
    assert_eq!(c.handle_bytes(T0, &input), Ok(()));
    assert_eq!(
        c.handle_bytes(T0, &data(id.0, b"y", false)),
        Err(H2Error::Protocol {
            reason: Reason::FLOW_CONTROL_ERROR,
            what: "DATA beyond the connection window"
        })
    );
}

#[test]
fn a_frame_on_a_stream_reset_longer_ago_than_30_s_is_a_connection_error() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 2);
    // The connection is given T0 after the resets: they are dated T0.
    c.handle_bytes(T0, &ping()).unwrap();
    // 30 s after: still within the grace.
    let at_grace = T0 + GRACE;
    assert_eq!(
        c.handle_bytes(at_grace, &headers(1, vec![STATUS_200], true)),
        Ok(())
    );
    assert_eq!(c.error(), None);
    // One millisecond later, a late frame is an error, as for any closed stream.
    let past = at_grace + Duration::from_millis(1);
    let err = closed("DATA on a closed stream");
    assert_eq!(
        c.handle_bytes(past, &data(3, b"late", true)),
        Err(err.clone())
    );
    assert_eq!(c.error(), Some(&err));
}

#[test]
fn handle_timeout_dates_the_resets_too() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 1);
    // The first instant after the reset comes by `handle_timeout`: the reset is dated by it.
    let t = T0 + Duration::from_secs(10);
    c.handle_timeout(t).unwrap();
    assert_eq!(
        c.handle_bytes(
            t + GRACE + Duration::from_millis(1),
            &headers(1, vec![STATUS_200], true)
        ),
        Err(closed("HEADERS on a closed stream"))
    );
}

#[test]
fn a_reset_is_dated_by_the_next_instant_the_connection_is_given() {
    // `cancel` takes no time: the reset counts from the first instant given after it, so a
    // stream is never forgotten sooner than 30 s after its reset.
    let mut c = ready(H2Config::default());
    c.handle_bytes(T0, &ping()).unwrap();
    open_and_cancel(&mut c, 1);
    let later = T0 + Duration::from_secs(60);
    assert_eq!(c.handle_bytes(later, &ping()), Ok(()));
    assert_eq!(
        c.handle_bytes(later + GRACE, &data(1, b"late", true)),
        Ok(())
    );
    assert_eq!(
        c.handle_bytes(
            later + GRACE + Duration::from_millis(1),
            &data(1, b"late", true)
        ),
        Err(closed("DATA on a closed stream"))
    );
}

#[test]
fn a_frame_on_a_stream_never_opened_is_still_an_error() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 100);
    // 201 is the next id: never opened (idle, RFC 9113 §5.1).
    assert_eq!(
        c.handle_bytes(T0, &headers(201, vec![STATUS_200], true)),
        Err(H2Error::Protocol {
            reason: Reason::PROTOCOL_ERROR,
            what: "HEADERS on an idle or server-initiated stream"
        })
    );
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, 100);
    assert_eq!(
        c.handle_bytes(T0, &data(203, b"x", true)),
        Err(H2Error::Protocol {
            reason: Reason::PROTOCOL_ERROR,
            what: "DATA on an idle stream"
        })
    );
}

#[test]
fn past_1024_resets_the_oldest_is_forgotten() {
    let mut c = ready(H2Config::default());
    open_and_cancel(&mut c, CAP + 1);
    // Streams 3 … 2049 (the last 1024) are remembered; stream 3 is the oldest of them.
    assert_eq!(
        c.handle_bytes(T0, &headers(3, vec![STATUS_200], true)),
        Ok(())
    );
    assert_eq!(
        c.handle_bytes(T0, &data(2 * CAP + 1, b"late", true)),
        Ok(())
    );
    // Stream 1 was forgotten at the cap, well within its grace.
    assert_eq!(
        c.handle_bytes(T0, &headers(1, vec![STATUS_200], true)),
        Err(closed("HEADERS on a closed stream"))
    );
}

/// The scenario of the HPACK test, with late frames for a reset stream among them, fed whole
/// and one octet at a time: the same events, the same output.
#[test]
fn late_frames_of_a_reset_stream_are_split_independent() {
    let run = |piece: usize| {
        let mut c = ready(H2Config::default());
        open_and_cancel(&mut c, 100);
        let mut input = headers(1, block_indexing("x-late", "yes"), false);
        input.extend(data(1, &[b'z'; 300], true));
        input.extend(ping());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        let mut out = Vec::new();
        while let Some(b) = c.poll_transmit() {
            out.extend(b);
        }
        input.extend(headers(id.0, vec![STATUS_200, FIRST_DYNAMIC], false));
        input.extend(data(id.0, b"{}", true));
        let mut evs = Vec::new();
        for p in input.chunks(piece) {
            c.handle_bytes(T0, p).unwrap();
            evs.extend(events(&mut c));
            while let Some(b) = c.poll_transmit() {
                out.extend(b);
            }
        }
        (evs, out)
    };
    let whole = run(usize::MAX);
    assert_eq!(whole, run(1));
    assert!(matches!(
        &whole.0[0],
        StreamEvent::Head { stream: StreamId(201), headers, .. } if headers == &vec![field("x-late", "yes")]
    ));
}
