//! The HTTP/2 client connection's limits at their edges: each limit's value accepted, one more
//! refused, through `ClientConnection` driven by a server written here (frames built with the
//! crate's encoder, header blocks by hand where a test needs their exact size).
//!
//! The oracles are the documented figures of `H2Config` and RFC 9113 (a PING answered with a
//! PING ACK of 17 octets, §6.7; a receive window that may reach 0 and not below, §6.9.1),
//! written here as numbers.

use mcp_sansio::h2::{ClientConnection, H2Config, H2Error, H2Limit, StreamEvent};
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Budget, BudgetExceeded, Instant, Scheme};

const T0: Instant = Instant::ZERO;
/// A PING frame (or its ACK): a 9-octet header and 8 octets of data (RFC 9113 §6.7).
const PING_LEN: usize = 17;
/// `:status: 200`, indexed from the static table (RFC 7541 Appendix A, index 8).
const STATUS_200: u8 = 0x88;

fn request() -> Request {
    Request {
        method: Method::Post,
        authority: "mcp.example.com".into(),
        path: "/mcp".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
    }
}

fn enc(f: Frame) -> Vec<u8> {
    let mut out = Vec::new();
    f.encode(&mut out);
    out
}

fn settings(s: &[(u16, u32)]) -> Vec<u8> {
    enc(Frame::Settings {
        ack: false,
        settings: s.to_vec(),
    })
}

fn data(sid: u32, len: usize) -> Vec<u8> {
    enc(Frame::Data {
        stream_id: sid,
        end_stream: false,
        data: vec![b'd'; len],
        pad_len: None,
    })
}

fn ping() -> Vec<u8> {
    enc(Frame::Ping {
        ack: false,
        data: *b"pingpong",
    })
}

/// HEADERS with `:status: 200` and END_HEADERS as given.
fn status_200(sid: u32, end_headers: bool) -> Vec<u8> {
    enc(Frame::Headers {
        stream_id: sid,
        end_stream: false,
        end_headers,
        priority: None,
        fragment: vec![STATUS_200],
        pad_len: None,
    })
}

/// Every frame the client wrote, the preface skipped.
fn written(c: &mut ClientConnection) -> Vec<Frame> {
    let mut bytes = Vec::new();
    while let Some(b) = c.poll_transmit() {
        bytes.extend(b);
    }
    let mut rest = bytes.strip_prefix(PREFACE).unwrap_or(&bytes);
    let mut d = FrameDecoder::new();
    let mut frames = Vec::new();
    while !rest.is_empty() {
        if let Some(Decoded { frame, .. }) = d.decode(&mut rest).unwrap() {
            frames.push(frame);
        }
    }
    frames
}

/// A client whose server sent its SETTINGS (and acknowledged ours); its output so far taken.
fn ready(config: H2Config) -> ClientConnection {
    let mut c = ClientConnection::new(T0, config);
    let mut input = settings(&[(3, 100)]);
    input.extend(enc(Frame::Settings {
        ack: true,
        settings: Vec::new(),
    }));
    c.handle_bytes(T0, &input).unwrap();
    written(&mut c);
    c
}

fn events(c: &mut ClientConnection) -> Vec<StreamEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// `control_output_bytes` bounds the control frames queued and not taken: PING ACKs filling it
/// exactly are queued (and written), one more PING ends the connection on the bound.
#[test]
fn control_output_of_exactly_its_bound_is_queued_one_ping_more_is_refused() {
    for pings in [1, 2, 3] {
        let mut config = H2Config::default();
        config.control_output_bytes = pings * PING_LEN;
        let mut c = ready(config);
        let input: Vec<u8> = (0..pings).flat_map(|_| ping()).collect();
        assert_eq!(c.handle_bytes(T0, &input), Ok(()), "{pings} pings");
        let acks = written(&mut c);
        assert_eq!(acks.len(), pings, "{acks:?}");
        assert!(acks.iter().all(|f| *f
            == Frame::Ping {
                ack: true,
                data: *b"pingpong"
            }));
        // Taking the output frees the allowance: as many again fit.
        assert_eq!(c.handle_bytes(T0, &input), Ok(()), "{pings} pings again");
        written(&mut c);
        let input: Vec<u8> = (0..=pings).flat_map(|_| ping()).collect();
        assert_eq!(
            c.handle_bytes(T0, &input),
            Err(H2Error::Limit {
                limit: H2Limit::ControlOutput,
                max: (pings * PING_LEN) as u64,
            }),
            "{} pings",
            pings + 1
        );
    }
}

/// `max_continuations` (default 8) CONTINUATION frames complete a header block; a ninth is a
/// connection error naming the limit.
#[test]
fn a_header_block_of_eight_continuations_is_read_a_ninth_is_refused() {
    assert_eq!(H2Config::default().max_continuations, 8);
    for continuations in [8, 9] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        let mut input = status_200(id.0, false);
        for k in 1..=continuations {
            input.extend(enc(Frame::Continuation {
                stream_id: id.0,
                end_headers: k == continuations,
                fragment: Vec::new(),
            }));
        }
        let got = c.handle_bytes(T0, &input);
        if continuations == 8 {
            assert_eq!(got, Ok(()));
            let ev = events(&mut c);
            assert!(
                matches!(&ev[..], [StreamEvent::Head { stream, status: 200, .. }] if *stream == id),
                "{ev:?}"
            );
        } else {
            assert_eq!(
                got,
                Err(H2Error::Limit {
                    limit: H2Limit::ContinuationFrames,
                    max: 8,
                })
            );
        }
    }
}

/// The DATA frame that crosses its stream's allowance still counts against the connection
/// window (RFC 9113 §6.9): a frame that brings the window to exactly 0 is accepted (the stream
/// fails on its allowance, the connection goes on), one that brings it to -1 is a connection
/// FLOW_CONTROL_ERROR. The window is 65,535 octets (the least `connection_window` takes), filled
/// first by a stream whose data the caller does not take.
#[test]
fn data_of_a_stream_failing_on_its_allowance_may_fill_the_connection_window_not_pass_it() {
    const WINDOW: usize = 65_535;
    for over in [0, 1] {
        let mut config = H2Config::default();
        config.connection_window = WINDOW as u32;
        let mut c = ready(config);
        let big = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        let small = c.open_stream(Scheme::Https, &request(), 100).unwrap();
        written(&mut c);
        // The first stream takes all but one frame's worth (+ `over`); nothing is taken.
        let first = WINDOW - 16_384 + over;
        let mut input = status_200(big.0, true);
        let mut left = first;
        while left > 0 {
            let n = left.min(16_384);
            input.extend(data(big.0, n));
            left -= n;
        }
        input.extend(status_200(small.0, true));
        // 16,384 octets, 16,393 raw: past the second stream's 100-octet allowance.
        input.extend(data(small.0, 16_384));
        let got = c.handle_bytes(T0, &input);
        if over == 0 {
            assert_eq!(got, Ok(()));
            assert_eq!(c.error(), None);
            let failed: Vec<StreamEvent> = events(&mut c)
                .into_iter()
                .filter(|e| matches!(e, StreamEvent::Failed { .. }))
                .collect();
            assert!(
                matches!(&failed[..], [StreamEvent::Failed { stream, error: H2Error::Budget(b), .. }]
                    if *stream == small && *b == BudgetExceeded::new(Budget::ResponseBytes, 100)),
                "{failed:?}"
            );
        } else {
            assert_eq!(
                got,
                Err(H2Error::Protocol {
                    reason: Reason::FLOW_CONTROL_ERROR,
                    what: "DATA beyond the connection window",
                })
            );
        }
    }
}

/// `header_block_bytes` bounds the raw octets of one header block, HEADERS and CONTINUATION
/// together: a block of exactly the bound is read, one octet more is a connection error naming
/// the budget. The block is `:status: 200` and one literal field (RFC 7541 §6.2.2) whose value
/// sets its size.
#[test]
fn a_header_block_of_exactly_its_bound_is_read_one_octet_more_is_refused() {
    const BOUND: usize = 64;
    for size in [BOUND, BOUND + 1] {
        let mut config = H2Config::default();
        config.header_block_bytes = BOUND;
        let mut c = ready(config);
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        // 0x88, then a literal without indexing, new name: 0x00, 5, "x-pad", len, value.
        let value_len = size - 9;
        let mut block = vec![STATUS_200, 0x00, 5];
        block.extend(b"x-pad");
        block.push(value_len as u8);
        block.extend(vec![b'v'; value_len]);
        assert_eq!(block.len(), size);
        let (head, tail) = block.split_at(size / 2);
        let mut input = enc(Frame::Headers {
            stream_id: id.0,
            end_stream: false,
            end_headers: false,
            priority: None,
            fragment: head.to_vec(),
            pad_len: None,
        });
        input.extend(enc(Frame::Continuation {
            stream_id: id.0,
            end_headers: true,
            fragment: tail.to_vec(),
        }));
        let got = c.handle_bytes(T0, &input);
        if size == BOUND {
            assert_eq!(got, Ok(()));
            let ev = events(&mut c);
            assert!(
                matches!(&ev[..], [StreamEvent::Head { stream, status: 200, headers, .. }]
                    if *stream == id && headers.len() == 1 && headers[0].value.len() == value_len),
                "{ev:?}"
            );
        } else {
            assert_eq!(
                got,
                Err(H2Error::Budget(BudgetExceeded::new(
                    Budget::HeaderBlock,
                    BOUND as u64
                )))
            );
        }
    }
}

/// `informational_responses` (default 16) 1xx responses may come before the final one; a
/// seventeenth fails the stream on the budget, and the connection goes on.
#[test]
fn sixteen_informational_responses_are_read_a_seventeenth_fails_the_stream() {
    assert_eq!(H2Config::default().informational_responses, 16);
    // `:status: 100`: a literal without indexing, the name indexed (static index 8).
    let status_100 = |sid| {
        enc(Frame::Headers {
            stream_id: sid,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment: vec![0x08, 3, b'1', b'0', b'0'],
            pad_len: None,
        })
    };
    for count in [16, 17] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        let mut input: Vec<u8> = (0..count).flat_map(|_| status_100(id.0)).collect();
        input.extend(status_200(id.0, true));
        assert_eq!(c.handle_bytes(T0, &input), Ok(()));
        assert_eq!(c.error(), None);
        let ev = events(&mut c);
        let informational = ev
            .iter()
            .filter(|e| matches!(e, StreamEvent::Informational { status: 100, .. }))
            .count();
        if count == 16 {
            assert_eq!(informational, 16, "{ev:?}");
            assert!(
                matches!(ev.last(), Some(StreamEvent::Head { status: 200, .. })),
                "{ev:?}"
            );
        } else {
            assert_eq!(informational, 16, "{ev:?}");
            assert!(
                matches!(ev.last(), Some(StreamEvent::Failed { stream, error: H2Error::Budget(b), .. })
                    if *stream == id && *b == BudgetExceeded::new(Budget::InformationalResponses, 16)),
                "{ev:?}"
            );
        }
    }
}

/// A stream's receive window (`max_stream_window`, 256 KiB, for an allowance larger than it)
/// may be filled to exactly 0 by data the caller has not taken; one octet more is a stream
/// FLOW_CONTROL_ERROR (RFC 9113 §6.9.1): the stream fails, RST_STREAM is sent, the connection
/// goes on.
#[test]
fn a_stream_window_filled_exactly_is_kept_one_octet_more_fails_the_stream() {
    const WINDOW: usize = 256 * 1024;
    assert_eq!(H2Config::default().max_stream_window as usize, WINDOW);
    for over in [0, 1] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        let mut input = status_200(id.0, true);
        for _ in 0..WINDOW / 16_384 {
            input.extend(data(id.0, 16_384));
        }
        if over == 1 {
            input.extend(data(id.0, 1));
        }
        assert_eq!(c.handle_bytes(T0, &input), Ok(()));
        assert_eq!(c.error(), None);
        let ev = events(&mut c);
        let failed = ev.iter().find(|e| matches!(e, StreamEvent::Failed { .. }));
        if over == 0 {
            assert_eq!(failed, None, "{ev:?}");
            let got: usize = ev
                .iter()
                .map(|e| match e {
                    StreamEvent::Data { data, .. } => data.len(),
                    _ => 0,
                })
                .sum();
            assert_eq!(got, WINDOW);
        } else {
            assert_eq!(
                failed,
                Some(&StreamEvent::Failed {
                    stream: id,
                    error: H2Error::Protocol {
                        reason: Reason::FLOW_CONTROL_ERROR,
                        what: "DATA beyond the stream window",
                    },
                    raw: 10,
                }),
                "{ev:?}"
            );
            assert!(written(&mut c).contains(&Frame::RstStream {
                stream_id: id.0,
                reason: Reason::FLOW_CONTROL_ERROR,
            }));
        }
    }
}

/// A server may send SETTINGS_ENABLE_PUSH 0 (RFC 9113 §6.5.2: only a server that sends 1 is in
/// error); 1 is a connection PROTOCOL_ERROR.
#[test]
fn a_server_setting_enable_push_to_0_is_accepted_1_refused() {
    let mut c = ClientConnection::new(T0, H2Config::default());
    assert_eq!(c.handle_bytes(T0, &settings(&[(2, 0)])), Ok(()));
    assert_eq!(c.error(), None);
    assert!(c.can_open());
    let mut c = ClientConnection::new(T0, H2Config::default());
    let err = c.handle_bytes(T0, &settings(&[(2, 1)])).unwrap_err();
    assert_eq!(err.reason(), Reason::PROTOCOL_ERROR, "{err:?}");
    assert!(
        matches!(
            err,
            H2Error::Protocol {
                what: "a server may not set ENABLE_PUSH",
                ..
            }
        ),
        "{err:?}"
    );
}

/// SETTINGS_INITIAL_WINDOW_SIZE of 2^31-1 is accepted, 2^31 is a connection FLOW_CONTROL_ERROR
/// (RFC 9113 §6.5.2).
#[test]
fn an_initial_window_of_2_pow_31_minus_1_is_accepted_2_pow_31_refused() {
    let mut c = ClientConnection::new(T0, H2Config::default());
    assert_eq!(c.handle_bytes(T0, &settings(&[(4, (1 << 31) - 1)])), Ok(()));
    assert_eq!(c.error(), None);
    let mut c = ClientConnection::new(T0, H2Config::default());
    assert_eq!(
        c.handle_bytes(T0, &settings(&[(4, 1 << 31)])),
        Err(H2Error::Protocol {
            reason: Reason::FLOW_CONTROL_ERROR,
            what: "INITIAL_WINDOW_SIZE above 2^31-1",
        })
    );
}

/// A new SETTINGS_INITIAL_WINDOW_SIZE moves the send window of an open stream by the difference
/// from the previous one (RFC 9113 §6.9.2): from 5 to 8, three more octets of the body go.
#[test]
fn a_new_initial_window_moves_an_open_streams_send_window_by_the_difference() {
    let body_octets = |frames: &[Frame]| -> usize {
        frames
            .iter()
            .map(|f| match f {
                Frame::Data { data, .. } => data.len(),
                _ => 0,
            })
            .sum()
    };
    let mut c = ClientConnection::new(T0, H2Config::default());
    c.handle_bytes(T0, &settings(&[(3, 100), (4, 5)])).unwrap();
    written(&mut c);
    let mut req = request();
    req.body = vec![b'b'; 100];
    c.open_stream(Scheme::Https, &req, 1 << 20).unwrap();
    assert_eq!(body_octets(&written(&mut c)), 5);
    c.handle_bytes(T0, &settings(&[(4, 8)])).unwrap();
    assert_eq!(body_octets(&written(&mut c)), 3);
    c.handle_bytes(T0, &settings(&[(4, 7)])).unwrap();
    assert_eq!(body_octets(&written(&mut c)), 0, "the window is -1 now");
    c.handle_bytes(
        T0,
        &enc(Frame::WindowUpdate {
            stream_id: 1,
            increment: 2,
        }),
    )
    .unwrap();
    assert_eq!(body_octets(&written(&mut c)), 1);
}

/// A new SETTINGS_INITIAL_WINDOW_SIZE that brings an open stream's send window to exactly
/// 2^31-1 is accepted; to 2^31, a connection FLOW_CONTROL_ERROR (RFC 9113 §6.9.2).
#[test]
fn an_initial_window_change_may_bring_a_send_window_to_2_pow_31_minus_1_not_past() {
    const MAX: u32 = (1 << 31) - 1;
    for over in [0, 1] {
        let mut c = ready(H2Config::default());
        let mut req = request();
        req.body = Vec::new();
        c.open_stream(Scheme::Https, &req, 1 << 20).unwrap();
        written(&mut c);
        // The stream's send window: 65,535 + (MAX - 65,536) = MAX - 1.
        c.handle_bytes(
            T0,
            &enc(Frame::WindowUpdate {
                stream_id: 1,
                increment: MAX - 65_536,
            }),
        )
        .unwrap();
        let got = c.handle_bytes(T0, &settings(&[(4, 65_536 + over)]));
        if over == 0 {
            assert_eq!(got, Ok(()));
            assert_eq!(c.error(), None);
        } else {
            assert_eq!(
                got,
                Err(H2Error::Protocol {
                    reason: Reason::FLOW_CONTROL_ERROR,
                    what: "INITIAL_WINDOW_SIZE overflows a stream window",
                })
            );
        }
    }
}

fn goaway(last: u32) -> Vec<u8> {
    enc(Frame::GoAway {
        last_stream_id: last,
        reason: Reason::NO_ERROR,
        debug: Vec::new(),
    })
}

/// A server may send GOAWAY again with the same or a lower last stream id (RFC 9113 §6.8:
/// "Endpoints MUST NOT increase the value they send in the last stream identifier"); streams
/// above it fail, those at or below it go on; a raised id is a connection PROTOCOL_ERROR.
#[test]
fn a_goaway_again_may_keep_or_lower_its_last_stream_id_not_raise_it() {
    let mut c = ready(H2Config::default());
    for _ in 0..3 {
        c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    }
    written(&mut c);
    assert_eq!(c.handle_bytes(T0, &goaway(3)), Ok(()));
    assert_eq!(c.handle_bytes(T0, &goaway(3)), Ok(()), "the same id again");
    assert_eq!(c.open_streams(), 2, "streams 1 and 3 go on");
    assert_eq!(c.handle_bytes(T0, &goaway(1)), Ok(()), "a lower id");
    assert_eq!(c.open_streams(), 1);
    let failed: Vec<(u32, u32)> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::Failed {
                stream,
                error: H2Error::GoAway { last_stream_id, .. },
                ..
            } => Some((stream.0, last_stream_id)),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [(5, 3), (3, 1)]);
    assert_eq!(c.goaway(), Some((1, Reason::NO_ERROR)));
    assert_eq!(
        c.handle_bytes(T0, &goaway(3)),
        Err(H2Error::Protocol {
            reason: Reason::PROTOCOL_ERROR,
            what: "GOAWAY raised its last stream id",
        })
    );
}

fn window_update(sid: u32, increment: u32) -> Vec<u8> {
    enc(Frame::WindowUpdate {
        stream_id: sid,
        increment,
    })
}

/// WINDOW_UPDATEs may raise the connection's send window to exactly 2^31-1; one octet more is a
/// connection FLOW_CONTROL_ERROR (RFC 9113 §6.9.1).
#[test]
fn the_connection_send_window_may_reach_2_pow_31_minus_1_not_pass_it() {
    const MAX: u32 = (1 << 31) - 1;
    let mut c = ready(H2Config::default());
    assert_eq!(c.handle_bytes(T0, &window_update(0, MAX - 65_535)), Ok(()));
    assert_eq!(c.error(), None);
    assert_eq!(
        c.handle_bytes(T0, &window_update(0, 1)),
        Err(H2Error::Protocol {
            reason: Reason::FLOW_CONTROL_ERROR,
            what: "WINDOW_UPDATE overflows the connection window",
        })
    );
}

/// WINDOW_UPDATEs may raise a stream's send window to exactly 2^31-1; one octet more fails the
/// stream with FLOW_CONTROL_ERROR (RFC 9113 §6.9.1), the connection goes on.
#[test]
fn a_stream_send_window_may_reach_2_pow_31_minus_1_not_pass_it() {
    const MAX: u32 = (1 << 31) - 1;
    let mut c = ready(H2Config::default());
    let mut req = request();
    req.body = Vec::new();
    let id = c.open_stream(Scheme::Https, &req, 1 << 20).unwrap();
    written(&mut c);
    assert_eq!(
        c.handle_bytes(T0, &window_update(id.0, MAX - 65_535)),
        Ok(())
    );
    assert_eq!(events(&mut c), []);
    assert_eq!(c.open_streams(), 1);
    assert_eq!(c.handle_bytes(T0, &window_update(id.0, 1)), Ok(()));
    assert_eq!(c.error(), None);
    assert_eq!(
        events(&mut c),
        [StreamEvent::Failed {
            stream: id,
            error: H2Error::Protocol {
                reason: Reason::FLOW_CONTROL_ERROR,
                what: "WINDOW_UPDATE overflows the stream window",
            },
            raw: 26,
        }]
    );
}

/// HEADERS of `:status: 200` and one literal field `name: value` (RFC 7541 §6.2.2).
fn head_with(sid: u32, name: &[u8], value: &[u8], end_stream: bool) -> Vec<u8> {
    let mut block = vec![STATUS_200, 0x00, name.len() as u8];
    block.extend(name);
    block.push(value.len() as u8);
    block.extend(value);
    enc(Frame::Headers {
        stream_id: sid,
        end_stream,
        end_headers: true,
        priority: None,
        fragment: block,
        pad_len: None,
    })
}

/// A content-length of 19 digits (the most read) is taken, one of 20 digits is a malformed
/// response (the stream fails, the connection goes on), even when its value is small.
#[test]
fn a_content_length_of_19_digits_is_read_20_digits_refused() {
    for (value, ok) in [
        (&b"1000000000000000000"[..], true),
        (b"0000000000000000001", true),
        (b"00000000000000000001", false),
        (b"18446744073709551615", false),
    ] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        c.handle_bytes(T0, &head_with(id.0, b"content-length", value, false))
            .unwrap();
        assert_eq!(c.error(), None);
        let ev = events(&mut c);
        if ok {
            assert!(
                matches!(&ev[..], [StreamEvent::Head { status: 200, .. }]),
                "{ev:?}"
            );
        } else {
            assert!(
                matches!(&ev[..], [StreamEvent::Failed { stream, error: H2Error::Malformed { what: "invalid content-length" }, .. }] if *stream == id),
                "{ev:?}"
            );
        }
    }
}

/// A body of exactly its content-length ends the response; one octet more fails the stream
/// (RFC 9113 §8.1.1).
#[test]
fn a_body_of_exactly_its_content_length_ends_one_octet_more_fails() {
    for extra in [0, 1] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        let mut input = head_with(id.0, b"content-length", b"10", false);
        input.extend(data(id.0, 6));
        input.extend(enc(Frame::Data {
            stream_id: id.0,
            end_stream: true,
            data: vec![b'd'; 4 + extra],
            pad_len: None,
        }));
        c.handle_bytes(T0, &input).unwrap();
        let ev = events(&mut c);
        if extra == 0 {
            assert!(
                matches!(ev.last(), Some(StreamEvent::End { stream, .. }) if *stream == id),
                "{ev:?}"
            );
        } else {
            assert!(
                matches!(
                    ev.last(),
                    Some(StreamEvent::Failed {
                        error: H2Error::ContentLength {
                            declared: 10,
                            received: 11
                        },
                        ..
                    })
                ),
                "{ev:?}"
            );
        }
    }
}

/// `:authority` and `:path` take visible ASCII only: `!` (0x21) and `~` (0x7e), the ends of the
/// range, are sent; empty, a space (0x20), a control octet or DEL (0x7f) is refused before the
/// stream opens, naming the pseudo-header.
#[test]
fn an_authority_or_path_of_visible_ascii_is_sent_a_space_control_or_del_refused() {
    use mcp_sansio::internals::h2::client::OpenError;
    let mut c = ready(H2Config::default());
    for good in ["/!", "/~", "/a!~"] {
        let mut r = request();
        r.path = good.into();
        assert!(c.open_stream(Scheme::Https, &r, 1000).is_ok(), "{good:?}");
        let mut r = request();
        r.authority = good.trim_start_matches('/').into();
        assert!(c.open_stream(Scheme::Https, &r, 1000).is_ok(), "{good:?}");
    }
    for bad in ["", "/a b", "/a\u{1f}", "/a\u{7f}", "/a\t"] {
        let mut r = request();
        r.path = bad.into();
        assert_eq!(
            c.open_stream(Scheme::Https, &r, 1000),
            Err(OpenError::InvalidHeader {
                name: ":path".into()
            }),
            "{bad:?}"
        );
        let mut r = request();
        r.authority = bad.trim_start_matches('/').into();
        assert_eq!(
            c.open_stream(Scheme::Https, &r, 1000),
            Err(OpenError::InvalidHeader {
                name: ":authority".into()
            }),
            "{bad:?}"
        );
    }
}

/// A stream is ours when its id is odd and below the next id to open (RFC 9113 §5.1.1): with
/// streams 1 and 3 opened, a RST_STREAM or WINDOW_UPDATE on 3 is taken, on 5 (the next id, idle)
/// or on 2 (even: the server's) it is a connection PROTOCOL_ERROR.
#[test]
fn frames_on_the_last_stream_opened_are_taken_on_the_next_id_refused() {
    let idle = |what| H2Error::Protocol {
        reason: Reason::PROTOCOL_ERROR,
        what,
    };
    let rst = |sid| {
        enc(Frame::RstStream {
            stream_id: sid,
            reason: Reason::CANCEL,
        })
    };
    let open = || {
        let mut c = ready(H2Config::default());
        c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        c
    };
    let mut c = open();
    assert_eq!(c.handle_bytes(T0, &window_update(3, 1)), Ok(()));
    assert_eq!(c.handle_bytes(T0, &rst(3)), Ok(()));
    assert_eq!(c.open_streams(), 1);
    for sid in [5, 2] {
        let mut c = open();
        assert_eq!(
            c.handle_bytes(T0, &window_update(sid, 1)),
            Err(idle("WINDOW_UPDATE on an idle stream")),
            "{sid}"
        );
        let mut c = open();
        assert_eq!(
            c.handle_bytes(T0, &rst(sid)),
            Err(idle("RST_STREAM on an idle stream")),
            "{sid}"
        );
    }
}

/// A content-length repeated with the same value is one content-length (RFC 9110 §8.6); two
/// different values are a malformed response (the stream fails).
#[test]
fn a_content_length_repeated_with_its_value_is_taken_another_value_refused() {
    for (second, ok) in [(&b"10"[..], true), (b"11", false)] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        // `content-length` is static index 28: a literal without indexing, the name indexed.
        let mut block = vec![STATUS_200, 0x0f, 28 - 15, 2];
        block.extend(b"10");
        block.extend([0x0f, 28 - 15, second.len() as u8]);
        block.extend(second);
        let input = enc(Frame::Headers {
            stream_id: id.0,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment: block,
            pad_len: None,
        });
        c.handle_bytes(T0, &input).unwrap();
        let ev = events(&mut c);
        if ok {
            assert!(
                matches!(&ev[..], [StreamEvent::Head { status: 200, headers, .. }] if headers.len() == 2),
                "{ev:?}"
            );
        } else {
            assert!(
                matches!(
                    &ev[..],
                    [StreamEvent::Failed {
                        error: H2Error::Malformed {
                            what: "conflicting content-length values"
                        },
                        ..
                    }]
                ),
                "{ev:?}"
            );
        }
    }
}

/// A 204 has no content whatever its content-length (RFC 9110 §6.4.1, §8.6): an empty DATA
/// frame with END_STREAM ends it, one octet of DATA fails the stream.
#[test]
fn a_204_with_a_content_length_ends_on_empty_data_one_octet_fails_it() {
    for len in [0, 1] {
        let mut c = ready(H2Config::default());
        let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        written(&mut c);
        // `:status: 204` is static index 9.
        let mut block = vec![0x89, 0x0f, 28 - 15, 1];
        block.extend(b"5");
        let mut input = enc(Frame::Headers {
            stream_id: id.0,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment: block,
            pad_len: None,
        });
        input.extend(enc(Frame::Data {
            stream_id: id.0,
            end_stream: true,
            data: vec![b'd'; len],
            pad_len: None,
        }));
        c.handle_bytes(T0, &input).unwrap();
        let ev = events(&mut c);
        assert!(
            matches!(ev.first(), Some(StreamEvent::Head { status: 204, .. })),
            "{ev:?}"
        );
        if len == 0 {
            assert!(
                matches!(ev.last(), Some(StreamEvent::End { stream, .. }) if *stream == id),
                "{ev:?}"
            );
        } else {
            assert!(
                matches!(
                    ev.last(),
                    Some(StreamEvent::Failed {
                        error: H2Error::ContentLength {
                            declared: 5,
                            received: 1
                        },
                        ..
                    })
                ),
                "{ev:?}"
            );
        }
    }
}
