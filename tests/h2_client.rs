//! The HTTP/2 client connection, driven by a scripted server in virtual time: the exchange, its
//! accounting, flow control, and every hostile behaviour as a typed error.

use std::time::Duration;

use mcp_sansio::h2::{
    ClientConnection, FrameError, H2Config, H2Error, H2Limit, StreamEvent, StreamId,
};
use mcp_sansio::internals::h2::client::{OpenError, PREFACE};
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason, HEADER_LEN};
use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder, Encoder, HpackError};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Budget, BudgetExceeded};
use mcp_sansio::{Instant, Scheme};
use proptest::prelude::*;

const T0: Instant = Instant::ZERO;

fn request() -> Request {
    Request {
        method: Method::Post,
        authority: "mcp.example.com".into(),
        path: "/mcp".into(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("authorization".into(), "Bearer t0ken".into()),
        ],
        body: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
    }
}

/// The server side of the script: builds frames and reads what the client wrote.
struct Server {
    enc: Encoder,
    reader: FrameDecoder,
    preface_seen: usize,
}

impl Server {
    fn new() -> Self {
        Server {
            enc: Encoder::new(),
            reader: FrameDecoder::new(),
            preface_seen: 0,
        }
    }

    fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.encode(
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut b,
        );
        b
    }

    fn headers(&mut self, sid: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let fragment = self.block(fields);
        enc(Frame::Headers {
            stream_id: sid,
            end_stream,
            end_headers: true,
            priority: None,
            fragment,
            pad_len: None,
        })
    }

    /// Frames the client wrote (the preface is checked and skipped).
    fn read(&mut self, client: &mut ClientConnection) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(bytes) = client.poll_transmit() {
            let mut rest = &bytes[..];
            if self.preface_seen < PREFACE.len() {
                let n = (PREFACE.len() - self.preface_seen).min(rest.len());
                assert_eq!(
                    &rest[..n],
                    &PREFACE[self.preface_seen..self.preface_seen + n]
                );
                self.preface_seen += n;
                rest = &rest[n..];
            }
            while !rest.is_empty() {
                if let Some(Decoded { frame, .. }) = self.reader.decode(&mut rest).unwrap() {
                    frames.push(frame);
                }
            }
        }
        frames
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

fn settings_ack() -> Vec<u8> {
    enc(Frame::Settings {
        ack: true,
        settings: Vec::new(),
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

fn events(c: &mut ClientConnection) -> Vec<StreamEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// A client whose server has sent its SETTINGS (MAX_CONCURRENT_STREAMS 100) and acknowledged
/// ours; the client's output so far is drained.
fn ready(config: H2Config) -> (ClientConnection, Server) {
    let mut c = ClientConnection::new(T0, config);
    let mut s = Server::new();
    let mut input = settings(&[(3, 100)]);
    input.extend(settings_ack());
    c.handle_bytes(T0, &input).unwrap();
    s.read(&mut c);
    (c, s)
}

#[test]
fn the_client_starts_with_preface_settings_and_a_connection_window() {
    let mut c = ClientConnection::new(T0, H2Config::default());
    let mut s = Server::new();
    let frames = s.read(&mut c);
    assert_eq!(s.preface_seen, PREFACE.len());
    assert_eq!(
        frames,
        vec![
            Frame::Settings {
                ack: false,
                settings: vec![(2, 0), (6, 65536)]
            },
            Frame::WindowUpdate {
                stream_id: 0,
                increment: 2 * 1024 * 1024 - 65535
            }
        ]
    );
    assert_eq!(c.poll_timeout(), Some(T0 + Duration::from_secs(10)));
}

#[test]
fn a_request_and_its_response_with_every_octet_accounted() {
    let (mut c, mut s) = ready(H2Config::default());
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    assert_eq!(id, StreamId(1));
    let frames = s.read(&mut c);
    // HEADERS, the stream's window raised to 256 KiB, then the body.
    let Frame::Headers {
        stream_id: 1,
        end_stream: false,
        end_headers: true,
        fragment,
        ..
    } = &frames[0]
    else {
        panic!("{frames:?}")
    };
    let mut d = Decoder::new(DecodeLimits::default());
    let req = d.decode_block(fragment).unwrap();
    let names: Vec<&[u8]> = req.iter().map(|h| h.name.as_slice()).collect();
    assert_eq!(
        names,
        [
            &b":method"[..],
            b":scheme",
            b":authority",
            b":path",
            b"content-type",
            b"authorization"
        ]
    );
    assert_eq!(req[2].value, b"mcp.example.com");
    assert!(req[5].never_indexed);
    assert_eq!(
        frames[1],
        Frame::WindowUpdate {
            stream_id: 1,
            increment: 256 * 1024 - 65535
        }
    );
    assert_eq!(
        frames[2],
        Frame::Data {
            stream_id: 1,
            end_stream: true,
            data: request().body,
            pad_len: None
        }
    );
    let head = s.headers(
        1,
        &[
            (":status", "200"),
            ("content-type", "application/json"),
            ("content-length", "7"),
        ],
        false,
    );
    let body = data(1, b"{\"a\":1}", true);
    let mut input = head.clone();
    input.extend(&body);
    c.handle_bytes(T0, &input).unwrap();
    let ev = events(&mut c);
    assert_eq!(ev.len(), 3, "{ev:?}");
    let StreamEvent::Head {
        status: 200,
        raw,
        headers,
        ..
    } = &ev[0]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(*raw, head.len() as u64);
    assert_eq!(headers[0].name, b"content-type");
    assert_eq!(
        ev[1],
        StreamEvent::Data {
            stream: id,
            data: b"{\"a\":1}".to_vec(),
            raw: body.len() as u64
        }
    );
    assert_eq!(
        ev[2],
        StreamEvent::End {
            stream: id,
            trailers: vec![],
            raw: 0
        }
    );
    assert_eq!(c.open_streams(), 0);
    assert_eq!(
        c.socket_bytes_used(),
        (settings(&[(3, 100)]).len() + HEADER_LEN) as u64
    );
}

/// The same script whole, in 1-octet and in 3-octet pieces gives the same events and output.
#[test]
fn the_exchange_is_split_independent() {
    let script = |piece: usize| {
        let mut c = ClientConnection::new(T0, H2Config::default());
        let mut s = Server::new();
        c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        let mut input = settings(&[(3, 10), (4, 1 << 20)]);
        input.extend(settings_ack());
        input.extend(enc(Frame::Ping {
            ack: false,
            data: *b"pingpong",
        }));
        input.extend(s.headers(1, &[(":status", "103"), ("link", "</x>")], false));
        input.extend(s.headers(
            1,
            &[(":status", "200"), ("content-type", "text/event-stream")],
            false,
        ));
        input.extend(enc(Frame::Data {
            stream_id: 1,
            end_stream: false,
            data: b"data: 1\n\n".to_vec(),
            pad_len: Some(10),
        }));
        input.extend(s.headers(1, &[("x-trailer", "yes")], true));
        let mut out = Vec::new();
        for chunk in input.chunks(piece) {
            c.handle_bytes(T0, chunk).unwrap();
        }
        out.extend(s.read(&mut c));
        (events(&mut c), out, c.socket_bytes_used())
    };
    let whole = script(usize::MAX);
    assert_eq!(whole.0.len(), 4, "{:?}", whole.0);
    assert!(matches!(
        whole.0[0],
        StreamEvent::Informational { status: 103, .. }
    ));
    assert!(
        matches!(&whole.0[3], StreamEvent::End { trailers, .. } if trailers[0].name == b"x-trailer")
    );
    assert!(whole.1.contains(&Frame::Ping {
        ack: true,
        data: *b"pingpong"
    }));
    assert_eq!(script(1), whole);
    assert_eq!(script(3), whole);
}

/// With `max_streams` 8 (ours, set), the server's limit caps it and ours caps a larger one.
#[test]
fn one_stream_until_the_server_settings_then_min_of_8_and_its_limit() {
    let mut eight = H2Config::default();
    eight.max_streams = 8;
    let mut c = ClientConnection::new(T0, eight.clone());
    assert_eq!(c.max_streams(), 1);
    c.open_stream(Scheme::Https, &request(), 1000).unwrap();
    assert_eq!(
        c.open_stream(Scheme::Https, &request(), 1000),
        Err(OpenError::NoSlot { max: 1 })
    );
    c.handle_bytes(T0, &settings(&[(3, 3)])).unwrap();
    assert_eq!(c.max_streams(), 3);
    c.open_stream(Scheme::Https, &request(), 1000).unwrap();
    c.open_stream(Scheme::Https, &request(), 1000).unwrap();
    assert!(!c.can_open());
    let (c2, _) = ready(eight.clone());
    assert_eq!(c2.max_streams(), 8);
    let mut c3 = ClientConnection::new(T0, eight);
    c3.handle_bytes(T0, &settings(&[])).unwrap();
    assert_eq!(
        c3.max_streams(),
        8,
        "no MAX_CONCURRENT_STREAMS: unlimited, so ours"
    );
}

/// By default a socket opens as many streams at once as the server allows
/// (SETTINGS_MAX_CONCURRENT_STREAMS), up to 100 (the least RFC 9113 §6.5.2 recommends a server
/// allow): 100 of a server that allows 150 or sets no limit, 20 of one that allows 20, and the
/// 101st (21st) stream finds no slot.
#[test]
fn by_default_as_many_streams_as_the_server_allows_up_to_100() {
    assert_eq!(H2Config::default().max_streams, 100);
    for (server, want) in [
        (Some(150), 100),
        (None, 100),
        (Some(100), 100),
        (Some(20), 20),
    ] {
        let mut c = ClientConnection::new(T0, H2Config::default());
        let limit: Vec<(u16, u32)> = server.map(|n| (3, n)).into_iter().collect();
        c.handle_bytes(T0, &settings(&limit)).unwrap();
        assert_eq!(c.max_streams(), want, "server {server:?}");
        for k in 0..want {
            assert!(c.can_open(), "stream {k} of {want}");
            c.open_stream(Scheme::Https, &request(), 1000).unwrap();
        }
        assert!(!c.can_open());
        assert_eq!(
            c.open_stream(Scheme::Https, &request(), 1000),
            Err(OpenError::NoSlot { max: want })
        );
    }
}

/// The connection's lifecycle only moves forward, and what it learnt stays:
///
/// - RFC 9113 §6.8: "Once the GOAWAY is sent, the sender will ignore frames sent on streams
///   initiated by the receiver if the stream has an identifier higher than the included last
///   stream identifier" and "Receivers of a GOAWAY frame MUST NOT open additional streams on
///   the connection": a SETTINGS frame after the GOAWAY does not make the connection open again.
/// - The GOAWAY (last stream id, error code) is still reported once the socket ends, beside the
///   connection error; and a connection that failed before the server's SETTINGS still reports
///   one stream allowed (RFC 9113 §5.1.2 leaves the limit unknown until its SETTINGS).
#[test]
fn the_lifecycle_moves_forward_and_keeps_what_it_learnt() {
    let (mut c, _s) = ready(H2Config::default());
    let goaway = enc(Frame::GoAway {
        last_stream_id: 0,
        reason: Reason::NO_ERROR,
        debug: Vec::new(),
    });
    c.handle_bytes(T0, &goaway).unwrap();
    assert!(!c.can_open());
    c.handle_bytes(T0, &settings(&[(3, 50)])).unwrap();
    assert!(!c.can_open(), "a SETTINGS frame after GOAWAY opens nothing");
    assert_eq!(c.goaway(), Some((0, Reason::NO_ERROR)));
    assert_eq!(
        c.max_streams(),
        50,
        "the server's last SETTINGS still count (min of our 100 and its 50)"
    );
    c.handle_eof();
    assert!(matches!(c.error(), Some(H2Error::Closed { .. })));
    assert_eq!(c.goaway(), Some((0, Reason::NO_ERROR)), "kept past the end");
    assert_eq!(
        c.max_streams(),
        50,
        "the server's SETTINGS are kept past the end"
    );

    let mut early = ClientConnection::new(T0, H2Config::default());
    early.handle_eof();
    assert!(matches!(early.error(), Some(H2Error::Closed { .. })));
    assert_eq!(early.goaway(), None);
    assert_eq!(early.max_streams(), 1);
    assert!(!early.can_open());
}

#[test]
fn request_headers_that_cannot_go_on_http2_are_refused() {
    let (mut c, _) = ready(H2Config::default());
    for name in ["connection", "transfer-encoding", ":path", "bad name", ""] {
        let mut r = request();
        r.headers.push((name.into(), "x".into()));
        assert_eq!(
            c.open_stream(Scheme::Https, &r, 1000),
            Err(OpenError::InvalidHeader { name: name.into() }),
            "{name}"
        );
    }
    let mut r = request();
    r.headers.push(("x-a".into(), "a\r\nb".into()));
    assert!(c.open_stream(Scheme::Https, &r, 1000).is_err());
    let mut r = request();
    r.headers.push(("te".into(), "trailers".into()));
    assert!(c.open_stream(Scheme::Https, &r, 1000).is_ok());
    // Field names of the neutral request may have any case; they go out lowercased.
    let mut r = request();
    r.headers
        .push(("Content-Type".into(), "application/json".into()));
    assert!(c.open_stream(Scheme::Https, &r, 1000).is_ok());
}

#[test]
fn settings_must_be_acknowledged_within_10_seconds() {
    let mut c = ClientConnection::new(T0, H2Config::default());
    c.handle_bytes(T0, &settings(&[])).unwrap();
    c.open_stream(Scheme::Https, &request(), 1000).unwrap();
    assert_eq!(c.handle_timeout(Instant::from_millis(9_999)), Ok(()));
    let err = c.handle_timeout(Instant::from_millis(10_000)).unwrap_err();
    assert_eq!(err, H2Error::SettingsTimeout { ms: 10_000 });
    assert_eq!(err.reason(), Reason::SETTINGS_TIMEOUT);
    let ev = events(&mut c);
    assert!(matches!(
        &ev[0],
        StreamEvent::Failed {
            error: H2Error::SettingsTimeout { .. },
            ..
        }
    ));
    let mut s = Server::new();
    let frames = s.read(&mut c);
    assert!(frames.contains(&Frame::GoAway {
        last_stream_id: 0,
        reason: Reason::SETTINGS_TIMEOUT,
        debug: vec![]
    }));
    // Acknowledged: no timer.
    let (c, _) = ready(H2Config::default());
    assert_eq!(c.poll_timeout(), None);
}

/// Connection errors: each input after the server's preface ends in its typed error, a GOAWAY
/// with its code, and the open stream failed with it.
#[test]
fn hostile_connection_behaviour_is_a_typed_error() {
    let mut s = Server::new();
    let big_block = s.block(&[("x-big", &"v".repeat(20000))]);
    let protocol = |what| H2Error::Protocol {
        reason: Reason::PROTOCOL_ERROR,
        what,
    };
    let mut cases: Vec<(&str, Vec<u8>, H2Error)> = vec![
        (
            "PUSH_PROMISE while disabled",
            enc(Frame::PushPromise {
                stream_id: 1,
                end_headers: true,
                promised_stream_id: 2,
                fragment: vec![0x82],
                pad_len: None,
            }),
            protocol("PUSH_PROMISE while push is disabled"),
        ),
        (
            "a frame larger than 16384",
            {
                let mut h = vec![0x00, 0x40, 0x01, 0, 0, 0, 0, 0, 1];
                h.extend(vec![0; 16385]);
                h
            },
            H2Error::Frame(FrameError::TooLarge {
                len: 16385,
                max: 16384,
            }),
        ),
        (
            "WINDOW_UPDATE of 0 on the connection",
            enc(Frame::WindowUpdate {
                stream_id: 0,
                increment: 0,
            }),
            protocol("WINDOW_UPDATE with a zero increment"),
        ),
        (
            "WINDOW_UPDATE overflowing the connection window",
            enc(Frame::WindowUpdate {
                stream_id: 0,
                increment: 0x7fff_ffff,
            }),
            H2Error::Protocol {
                reason: Reason::FLOW_CONTROL_ERROR,
                what: "WINDOW_UPDATE overflows the connection window",
            },
        ),
        (
            "DATA on an idle stream",
            data(3, b"x", false),
            protocol("DATA on an idle stream"),
        ),
        (
            "HEADERS on a server-initiated stream",
            s.headers(2, &[(":status", "200")], true),
            protocol("HEADERS on an idle or server-initiated stream"),
        ),
        (
            "RST_STREAM on an idle stream",
            enc(Frame::RstStream {
                stream_id: 5,
                reason: Reason::CANCEL,
            }),
            protocol("RST_STREAM on an idle stream"),
        ),
        (
            "a CONTINUATION flood",
            {
                let mut v = enc(Frame::Headers {
                    stream_id: 1,
                    end_stream: false,
                    end_headers: false,
                    priority: None,
                    fragment: vec![],
                    pad_len: None,
                });
                for _ in 0..9 {
                    v.extend(enc(Frame::Continuation {
                        stream_id: 1,
                        end_headers: false,
                        fragment: vec![],
                    }));
                }
                v
            },
            H2Error::Limit {
                limit: H2Limit::ContinuationFrames,
                max: 8,
            },
        ),
        (
            "a frame interleaved in a header block",
            {
                let mut v = enc(Frame::Headers {
                    stream_id: 1,
                    end_stream: false,
                    end_headers: false,
                    priority: None,
                    fragment: vec![],
                    pad_len: None,
                });
                v.extend(enc(Frame::Ping {
                    ack: false,
                    data: [0; 8],
                }));
                v
            },
            protocol("a frame interleaved in a header block (CONTINUATION expected)"),
        ),
        (
            "a CONTINUATION without HEADERS",
            enc(Frame::Continuation {
                stream_id: 1,
                end_headers: true,
                fragment: vec![],
            }),
            protocol("CONTINUATION without a header block"),
        ),
        (
            "a header block over 64 KiB",
            {
                let mut v = enc(Frame::Headers {
                    stream_id: 1,
                    end_stream: false,
                    end_headers: false,
                    priority: None,
                    fragment: big_block[..16384].to_vec(),
                    pad_len: None,
                });
                for _ in 0..4 {
                    v.extend(enc(Frame::Continuation {
                        stream_id: 1,
                        end_headers: false,
                        fragment: vec![b'v'; 16384],
                    }));
                }
                v
            },
            H2Error::Budget(BudgetExceeded::new(Budget::HeaderBlock, 65536)),
        ),
        (
            "an HPACK index 0",
            enc(Frame::Headers {
                stream_id: 1,
                end_stream: false,
                end_headers: true,
                priority: None,
                fragment: vec![0x80],
                pad_len: None,
            }),
            H2Error::Hpack(HpackError::InvalidIndex { index: 0 }),
        ),
        (
            "101 empty DATA frames",
            {
                let mut v = s.headers(1, &[(":status", "200")], false);
                for _ in 0..101 {
                    v.extend(data(1, b"", false));
                }
                v
            },
            H2Error::Limit {
                limit: H2Limit::EmptyDataFrames,
                max: 100,
            },
        ),
        (
            "101 PRIORITY frames",
            (0..101)
                .flat_map(|_| {
                    enc(Frame::Priority {
                        stream_id: 1,
                        priority: mcp_sansio::internals::h2::frame::Priority {
                            exclusive: false,
                            dependency: 0,
                            weight: 1,
                        },
                    })
                })
                .collect(),
            H2Error::Limit {
                limit: H2Limit::PriorityFrames,
                max: 100,
            },
        ),
        (
            "101 frames of unknown type",
            (0..101)
                .flat_map(|_| {
                    enc(Frame::Unknown {
                        kind: 0x42,
                        flags: 0,
                        stream_id: 0,
                        payload: vec![1, 2, 3],
                    })
                })
                .collect(),
            H2Error::Limit {
                limit: H2Limit::UnknownFrames,
                max: 100,
            },
        ),
        (
            "ENABLE_PUSH from a server",
            settings(&[(2, 1)]),
            protocol("a server may not set ENABLE_PUSH"),
        ),
        (
            "INITIAL_WINDOW_SIZE above 2^31-1",
            settings(&[(4, 1 << 31)]),
            H2Error::Protocol {
                reason: Reason::FLOW_CONTROL_ERROR,
                what: "INITIAL_WINDOW_SIZE above 2^31-1",
            },
        ),
        (
            "MAX_FRAME_SIZE below 16384",
            settings(&[(5, 100)]),
            protocol("MAX_FRAME_SIZE out of range"),
        ),
        (
            "33 settings in one frame",
            settings(&[(0x99, 0); 33]),
            H2Error::Frame(FrameError::TooManySettings { count: 33 }),
        ),
        (
            "an unsolicited SETTINGS ACK",
            settings_ack(),
            protocol("SETTINGS ACK without SETTINGS to acknowledge"),
        ),
        (
            "a GOAWAY whose last stream id rises",
            {
                let mut v = enc(Frame::GoAway {
                    last_stream_id: 1,
                    reason: Reason::NO_ERROR,
                    debug: vec![],
                });
                v.extend(enc(Frame::GoAway {
                    last_stream_id: 3,
                    reason: Reason::NO_ERROR,
                    debug: vec![],
                }));
                v
            },
            protocol("GOAWAY raised its last stream id"),
        ),
    ];
    // The server's first frame must be SETTINGS.
    let mut c = ClientConnection::new(T0, H2Config::default());
    assert_eq!(
        c.handle_bytes(
            T0,
            &enc(Frame::Ping {
                ack: false,
                data: [0; 8]
            })
        ),
        Err(protocol("the server's first frame is not SETTINGS"))
    );
    for (what, input, want) in cases.drain(..) {
        for piece in [usize::MAX, 1] {
            // Streams 1 (and the stream allowance large enough for every case).
            let (mut c, mut srv) = ready(H2Config::default());
            c.open_stream(Scheme::Https, &request(), 64 << 20).unwrap();
            srv.read(&mut c);
            let mut got = Ok(());
            for chunk in input.chunks(piece.min(input.len()).max(1)) {
                got = c.handle_bytes(T0, chunk);
                srv.read(&mut c);
                if got.is_err() {
                    break;
                }
            }
            assert_eq!(got, Err(want.clone()), "{what}, piece {piece}");
            assert_eq!(c.error(), Some(&want), "{what}");
            let failed = events(&mut c)
                .into_iter()
                .filter(|e| matches!(e, StreamEvent::Failed { error, .. } if *error == want))
                .count();
            assert!(failed <= 1, "{what}");
            // Later input is refused with the same error.
            assert_eq!(c.handle_bytes(T0, &settings(&[])), Err(want.clone()));
        }
    }
}

#[test]
fn a_connection_error_sends_goaway_and_fails_every_stream() {
    let (mut c, mut s) = ready(H2Config::default());
    let a = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    let b = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let err = c
        .handle_bytes(
            T0,
            &enc(Frame::PushPromise {
                stream_id: 1,
                end_headers: true,
                promised_stream_id: 2,
                fragment: vec![],
                pad_len: None,
            }),
        )
        .unwrap_err();
    let failed: Vec<StreamId> = events(&mut c)
        .into_iter()
        .map(|e| match e {
            StreamEvent::Failed { stream, error, .. } => {
                assert_eq!(error, err);
                stream
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(failed, vec![a, b]);
    let frames = s.read(&mut c);
    assert_eq!(
        frames,
        vec![Frame::GoAway {
            last_stream_id: 0,
            reason: Reason::PROTOCOL_ERROR,
            debug: vec![]
        }]
    );
    assert!(!c.can_open());
    assert_eq!(
        c.open_stream(Scheme::Https, &request(), 1),
        Err(OpenError::NotAccepting)
    );
}

#[test]
fn the_socket_ledger_charges_stream_0_frames_and_ends_in_enhance_your_calm() {
    let mut config = H2Config::default();
    config.socket_bytes = 1000;
    let (mut c, mut s) = ready(config);
    let base = c.socket_bytes_used();
    let ping = enc(Frame::Ping {
        ack: false,
        data: [1; 8],
    });
    c.handle_bytes(T0, &ping).unwrap();
    assert_eq!(c.socket_bytes_used(), base + 17);
    assert_eq!(
        s.read(&mut c),
        vec![Frame::Ping {
            ack: true,
            data: [1; 8]
        }]
    );
    c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let mut err = None;
    for _ in 0..100 {
        if let Err(e) = c.handle_bytes(T0, &ping) {
            err = Some(e);
            break;
        }
        s.read(&mut c);
    }
    let want = H2Error::Budget(BudgetExceeded::new(Budget::H2SocketBytes, 1000));
    assert_eq!(err, Some(want.clone()));
    assert_eq!(want.reason(), Reason::ENHANCE_YOUR_CALM);
    assert!(s.read(&mut c).contains(&Frame::GoAway {
        last_stream_id: 0,
        reason: Reason::ENHANCE_YOUR_CALM,
        debug: vec![]
    }));
    assert!(matches!(&events(&mut c)[..], [StreamEvent::Failed { error, .. }] if *error == want));
}

fn ping(n: u64) -> Vec<u8> {
    enc(Frame::Ping {
        ack: false,
        data: n.to_be_bytes(),
    })
}

/// Opens a stream for `request()` (one DATA frame of body) and completes it: HEADERS, then
/// DATA with END_STREAM. Returns the stream and the response's input.
fn one_exchange(c: &mut ClientConnection, s: &mut Server) -> Vec<u8> {
    let StreamId(id) = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(c);
    let mut input = s.headers(id, &[(":status", "200")], false);
    input.extend(data(id, b"{}", true));
    input
}

/// The ledger of octets no stream owns is an allowance: a completed stream gives back
/// `socket_refill` octets plus the WINDOW_UPDATE octets the ledger paid (at most 32 per DATA
/// frame of its request body), never above `socket_bytes`.
#[test]
fn the_socket_ledger_refills_by_its_share_as_streams_complete() {
    let mut config = H2Config::default();
    config.socket_bytes = 1000;
    config.socket_refill = 100;
    let (mut c, mut s) = ready(config);
    // The server's SETTINGS (one setting) and its acknowledgement: 15 + 9 octets.
    assert_eq!(c.socket_bytes_left(), 1000 - 24);
    for i in 0..40 {
        c.handle_bytes(T0, &ping(i)).unwrap();
    }
    s.read(&mut c);
    assert_eq!(c.socket_bytes_left(), 1000 - 24 - 40 * 17);
    // A completed stream whose request went in one DATA frame, with no WINDOW_UPDATE charged to
    // the socket: 100 back.
    let answer = one_exchange(&mut c, &mut s);
    c.handle_bytes(T0, &answer).unwrap();
    assert!(matches!(
        events(&mut c).last(),
        Some(StreamEvent::End { .. })
    ));
    assert_eq!(c.socket_bytes_left(), 1000 - 24 - 40 * 17 + 100);
    // The connection's WINDOW_UPDATE for that frame (13 octets) is charged, and given back by
    // the next completed stream (at most 32 per DATA frame of its body).
    c.handle_bytes(
        T0,
        &enc(Frame::WindowUpdate {
            stream_id: 0,
            increment: 40,
        }),
    )
    .unwrap();
    assert_eq!(c.socket_bytes_left(), 1000 - 24 - 40 * 17 + 100 - 13);
    let answer = one_exchange(&mut c, &mut s);
    c.handle_bytes(T0, &answer).unwrap();
    assert_eq!(c.socket_bytes_left(), 1000 - 24 - 40 * 17 + 200);
    // A stream that fails or is cancelled gives nothing back.
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    c.cancel(id);
    s.read(&mut c);
    assert_eq!(c.socket_bytes_left(), 1000 - 24 - 40 * 17 + 200);
    // Never above its capacity.
    for _ in 0..10 {
        let answer = one_exchange(&mut c, &mut s);
        c.handle_bytes(T0, &answer).unwrap();
    }
    assert_eq!(c.socket_bytes_left(), 1000);
    assert_eq!(c.error(), None);
    // All charged, refills aside.
    assert_eq!(c.socket_bytes_used(), 24 + 40 * 17 + 13);
}

/// A server that never completes a stream cannot live on the refill: PINGs dripped one per
/// second of caller time still end at `socket_bytes`, with the stream open failed.
#[test]
fn a_slow_drip_that_does_no_useful_work_still_ends_at_the_socket_ledger() {
    let mut config = H2Config::default();
    config.socket_bytes = 1000;
    config.socket_refill = 100;
    let (mut c, mut s) = ready(config);
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let mut now = T0;
    let mut dripped = 0;
    let err = loop {
        now = now + Duration::from_secs(1);
        match c.handle_bytes(now, &ping(dripped)) {
            Ok(()) => dripped += 1,
            Err(e) => break e,
        }
        s.read(&mut c);
        assert!(dripped < 1000, "the drip is never ended");
    };
    // (1000 - 24) / 17 PINGs fit; the next one ends the socket.
    assert_eq!(dripped, (1000 - 24) / 17);
    let want = H2Error::Budget(BudgetExceeded::new(Budget::H2SocketBytes, 1000));
    assert_eq!(err, want);
    assert_eq!(
        events(&mut c),
        vec![StreamEvent::Failed {
            stream: id,
            error: want,
            raw: 0
        }]
    );
}

/// A server that answers every request and adds stream-less octets up to the refill lives, and
/// is bounded per unit of useful work: octets no stream owns ≤ `socket_bytes` + each completed
/// stream's share. One PING more per answer than the share ends it, after a number of answers
/// bounded by `socket_bytes` over the excess.
#[test]
fn a_drip_just_under_the_refill_is_bounded_per_completed_stream_and_one_over_it_ends() {
    let mut config = H2Config::default();
    config.socket_bytes = 1000;
    config.socket_refill = 102;
    // Each completed stream gives back 102, and the connection's WINDOW_UPDATE (13 octets) the
    // server sends after each answer is given back by the next one (one DATA frame of body:
    // up to 32). The server adds 6 PINGs (102 octets): exactly the share. With 7 PINGs it is 17
    // octets over.
    let window_back = enc(Frame::WindowUpdate {
        stream_id: 0,
        increment: request().body.len() as u32,
    });
    for (pings, lives) in [(6u64, true), (7, false)] {
        let (mut c, mut s) = ready(config.clone());
        let mut completed = 0u64;
        let mut result = Ok(());
        while completed < 2_000 {
            let mut input = one_exchange(&mut c, &mut s);
            input.extend(&window_back);
            for i in 0..pings {
                input.extend(ping(i));
            }
            result = c.handle_bytes(T0, &input);
            s.read(&mut c);
            if result.is_err() {
                break;
            }
            assert!(matches!(
                events(&mut c).last(),
                Some(StreamEvent::End { .. })
            ));
            completed += 1;
            // Octets no stream owns, WINDOW_UPDATEs aside: within the figure and the shares.
            assert!(c.socket_bytes_used() - completed * 13 <= 1000 + completed * 102);
        }
        if lives {
            assert_eq!(result, Ok(()));
            assert_eq!(completed, 2_000);
        } else {
            assert_eq!(
                result,
                Err(H2Error::Budget(BudgetExceeded::new(
                    Budget::H2SocketBytes,
                    1000
                )))
            );
            // 17 octets over per answer: the 976 octets left after SETTINGS last 57 answers.
            assert!(completed <= 1000 / 17, "{completed}");
            assert!(completed >= (1000 - 24 - 132) / 17, "{completed}");
        }
    }
}

/// A server granting 1-octet stream windows makes the client send its body one octet per DATA
/// frame; the window credit of a completed stream (at most 32 octets per DATA frame) gives back
/// only the WINDOW_UPDATE octets the socket's allowance actually paid, so those frames earn
/// nothing beyond them: the allowance gets `socket_refill` back plus the connection
/// WINDOW_UPDATEs it was charged, not 32 × the body, and a PING drip after it still ends at
/// what is left.
#[test]
fn one_octet_windows_do_not_inflate_the_socket_allowance_and_a_drip_still_ends() {
    let mut config = H2Config::default();
    config.socket_bytes = 1000;
    config.socket_refill = 100;
    let mut c = ClientConnection::new(T0, config);
    let mut s = Server::new();
    // MAX_CONCURRENT_STREAMS 100, INITIAL_WINDOW_SIZE 1: 21 octets, and the ACK: 9.
    let mut input = settings(&[(3, 100), (4, 1)]);
    input.extend(settings_ack());
    c.handle_bytes(T0, &input).unwrap();
    s.read(&mut c);
    // The server spends most of the allowance: 40 PINGs.
    for i in 0..40 {
        c.handle_bytes(T0, &ping(i)).unwrap();
    }
    s.read(&mut c);
    let spent = 1000 - 30 - 40 * 17;
    assert_eq!(c.socket_bytes_left(), spent);
    let mut r = request();
    r.body = vec![b'b'; 200];
    let StreamId(id) = c.open_stream(Scheme::Https, &r, 1 << 20).unwrap();
    // One octet at a time: a stream WINDOW_UPDATE of 1 (the stream's own charge) for each DATA
    // frame, and a connection WINDOW_UPDATE (the socket's) for every tenth.
    let mut frames = 0u64;
    let mut connection_updates = 0u64;
    loop {
        let sent: Vec<usize> = s
            .read(&mut c)
            .into_iter()
            .filter_map(|f| match f {
                Frame::Data { data, .. } => Some(data.len()),
                _ => None,
            })
            .collect();
        assert!(sent.iter().all(|&n| n == 1), "{sent:?}");
        frames += sent.len() as u64;
        if frames == 200 {
            break;
        }
        assert_eq!(sent.len(), 1, "one octet per window");
        let mut grant = enc(Frame::WindowUpdate {
            stream_id: id,
            increment: 1,
        });
        if frames % 10 == 0 {
            grant.extend(enc(Frame::WindowUpdate {
                stream_id: 0,
                increment: 10,
            }));
            connection_updates += 1;
        }
        c.handle_bytes(T0, &grant).unwrap();
    }
    assert_eq!(connection_updates, 19);
    let charged = connection_updates * 13;
    assert_eq!(c.socket_bytes_left(), spent - charged);
    // The answer completes the stream: 100 back, and the 19 connection WINDOW_UPDATEs (247
    // octets), not 32 × 200 (which would fill the allowance).
    let mut answer = s.headers(id, &[(":status", "200")], false);
    answer.extend(data(id, b"{}", true));
    c.handle_bytes(T0, &answer).unwrap();
    assert!(matches!(
        events(&mut c).last(),
        Some(StreamEvent::End { .. })
    ));
    let left = spent + 100;
    assert_eq!(c.socket_bytes_left(), left);
    // A PING drip, one a second, ends at what is left.
    let mut now = T0;
    let mut dripped = 0u64;
    let err = loop {
        now = now + Duration::from_secs(1);
        match c.handle_bytes(now, &ping(dripped)) {
            Ok(()) => dripped += 1,
            Err(e) => break e,
        }
        s.read(&mut c);
        assert!(dripped < 1000, "the drip is never ended");
    };
    assert_eq!(dripped, left / 17);
    assert_eq!(
        err,
        H2Error::Budget(BudgetExceeded::new(Budget::H2SocketBytes, 1000))
    );
}

/// The counts of empty DATA, PRIORITY and unknown-type frames are allowances of 100 that get one
/// frame back per completed stream: a server sending one now and then lives, a flood without
/// completed streams still ends at 101.
#[test]
fn the_frame_counts_refill_by_one_per_completed_stream() {
    type Odd = fn(u32) -> Vec<u8>;
    let kinds: [(H2Limit, Odd); 3] = [
        (H2Limit::EmptyDataFrames, |sid| data(sid, b"", false)),
        (H2Limit::PriorityFrames, |sid| {
            enc(Frame::Priority {
                stream_id: sid,
                priority: mcp_sansio::internals::h2::frame::Priority {
                    exclusive: false,
                    dependency: 0,
                    weight: 16,
                },
            })
        }),
        (H2Limit::UnknownFrames, |_| {
            enc(Frame::Unknown {
                kind: 0x0b,
                flags: 0,
                stream_id: 0,
                payload: vec![],
            })
        }),
    ];
    for (limit, odd) in kinds {
        let (mut c, mut s) = ready(H2Config::default());
        // 100 on one stream, then the stream completes: one back.
        let StreamId(a) = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        s.read(&mut c);
        let mut input = s.headers(a, &[(":status", "200")], false);
        for _ in 0..100 {
            input.extend(odd(a));
        }
        input.extend(data(a, b"{}", true));
        c.handle_bytes(T0, &input).unwrap();
        // One more fits, the next does not.
        let StreamId(b) = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
        s.read(&mut c);
        let head = s.headers(b, &[(":status", "200")], false);
        c.handle_bytes(T0, &head).unwrap();
        c.handle_bytes(T0, &odd(b)).unwrap();
        assert_eq!(
            c.handle_bytes(T0, &odd(b)),
            Err(H2Error::Limit { limit, max: 100 }),
            "{limit}"
        );
        // One per completed stream, for as long as the server behaves.
        let (mut c, mut s) = ready(H2Config::default());
        for _ in 0..1000 {
            let StreamId(id) = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
            s.read(&mut c);
            let mut input = s.headers(id, &[(":status", "200")], false);
            input.extend(odd(id));
            input.extend(data(id, b"{}", true));
            c.handle_bytes(T0, &input).unwrap();
            s.read(&mut c);
        }
        assert_eq!(c.error(), None, "{limit}");
    }
}

#[test]
fn a_ping_flood_the_caller_does_not_drain_hits_the_control_output_bound() {
    let (mut c, _) = ready(H2Config::default());
    let ping = enc(Frame::Ping {
        ack: false,
        data: [1; 8],
    });
    let flood: Vec<u8> = (0..4000).flat_map(|_| ping.clone()).collect();
    assert_eq!(
        c.handle_bytes(T0, &flood),
        Err(H2Error::Limit {
            limit: H2Limit::ControlOutput,
            max: 65536
        })
    );
}

/// Stream errors: the stream fails with its typed error (RST_STREAM sent); the connection goes on.
#[test]
fn hostile_stream_behaviour_fails_only_its_stream() {
    let mut s = Server::new();
    let malformed = |what| H2Error::Malformed { what };
    let many_1xx: Vec<u8> = (0..17)
        .flat_map(|_| s.headers(1, &[(":status", "100")], false))
        .collect();
    let cases: Vec<(&str, Vec<u8>, H2Error)> = vec![
        (
            "101",
            s.headers(1, &[(":status", "101")], false),
            malformed("101 Switching Protocols is not allowed in HTTP/2"),
        ),
        (
            "17 informational responses",
            many_1xx,
            H2Error::Budget(BudgetExceeded::new(Budget::InformationalResponses, 16)),
        ),
        (
            "a 1xx with END_STREAM",
            s.headers(1, &[(":status", "100")], true),
            malformed("a 1xx response with END_STREAM"),
        ),
        (
            "no :status",
            s.headers(1, &[("content-type", "x")], false),
            malformed("no :status"),
        ),
        (
            "an uppercase field name",
            s.headers(1, &[(":status", "200"), ("Content-Type", "x")], false),
            malformed("a field name that is empty, uppercase or not a token"),
        ),
        (
            "a connection-specific field",
            s.headers(1, &[(":status", "200"), ("connection", "close")], false),
            malformed("a connection-specific field"),
        ),
        (
            "transfer-encoding",
            s.headers(
                1,
                &[(":status", "200"), ("transfer-encoding", "chunked")],
                false,
            ),
            malformed("a connection-specific field"),
        ),
        (
            "a request pseudo-header",
            s.headers(1, &[(":status", "200"), (":path", "/")], false),
            malformed("a pseudo-header other than :status in a response head"),
        ),
        (
            "a pseudo-header after a field",
            s.headers(1, &[("x", "y"), (":status", "200")], false),
            malformed("a pseudo-header after a regular field"),
        ),
        (
            "an invalid :status",
            s.headers(1, &[(":status", "2x0")], false),
            malformed("an invalid :status"),
        ),
        (
            "a body shorter than content-length",
            {
                let mut v = s.headers(1, &[(":status", "200"), ("content-length", "10")], false);
                v.extend(data(1, b"12345", true));
                v
            },
            H2Error::ContentLength {
                declared: 10,
                received: 5,
            },
        ),
        (
            "a body longer than content-length",
            {
                let mut v = s.headers(1, &[(":status", "200"), ("content-length", "3")], false);
                v.extend(data(1, b"12345", false));
                v
            },
            H2Error::ContentLength {
                declared: 3,
                received: 5,
            },
        ),
        (
            "conflicting content-length values",
            s.headers(
                1,
                &[
                    (":status", "200"),
                    ("content-length", "3"),
                    ("content-length", "4"),
                ],
                false,
            ),
            malformed("conflicting content-length values"),
        ),
        (
            "DATA before the head",
            data(1, b"x", false),
            malformed("DATA before the response head"),
        ),
        (
            "trailers without END_STREAM",
            {
                let mut v = s.headers(1, &[(":status", "200")], false);
                v.extend(s.headers(1, &[("x-t", "1")], false));
                v
            },
            malformed("trailers without END_STREAM"),
        ),
        (
            "a header list over 65536 octets",
            {
                // An HPACK bomb: one 4000-octet entry in the table, referenced 16 more times:
                // 4 KiB on the wire, 68 KiB decoded.
                let mut block = vec![0x88, 0x40, 0x03];
                block.extend_from_slice(b"x-b");
                block.extend_from_slice(&[0x7f, 0xa1, 0x1e]); // 127 + 3873 = 4000
                block.extend(std::iter::repeat_n(b'v', 4000));
                block.extend(std::iter::repeat_n(0xbe, 16));
                enc(Frame::Headers {
                    stream_id: 1,
                    end_stream: false,
                    end_headers: true,
                    priority: None,
                    fragment: block,
                    pad_len: None,
                })
            },
            H2Error::Hpack(HpackError::HeaderListTooLarge { limit: 65536 }),
        ),
        (
            "RST_STREAM(REFUSED_STREAM)",
            enc(Frame::RstStream {
                stream_id: 1,
                reason: Reason::REFUSED_STREAM,
            }),
            H2Error::Reset {
                reason: Reason::REFUSED_STREAM,
            },
        ),
        (
            "GOAWAY below the stream",
            enc(Frame::GoAway {
                last_stream_id: 0,
                reason: Reason::NO_ERROR,
                debug: vec![],
            }),
            H2Error::GoAway {
                reason: Reason::NO_ERROR,
                last_stream_id: 0,
            },
        ),
        (
            "WINDOW_UPDATE of 0 on the stream",
            enc(Frame::WindowUpdate {
                stream_id: 1,
                increment: 0,
            }),
            H2Error::Protocol {
                reason: Reason::PROTOCOL_ERROR,
                what: "WINDOW_UPDATE with a zero increment",
            },
        ),
        (
            "WINDOW_UPDATE overflowing the stream window",
            enc(Frame::WindowUpdate {
                stream_id: 1,
                increment: 0x7fff_ffff,
            }),
            H2Error::Protocol {
                reason: Reason::FLOW_CONTROL_ERROR,
                what: "WINDOW_UPDATE overflows the stream window",
            },
        ),
        (
            "DATA beyond the stream window",
            {
                let mut v = s.headers(1, &[(":status", "200")], false);
                for _ in 0..17 {
                    v.extend(data(1, &[b'd'; 16384], false));
                }
                v
            },
            H2Error::Protocol {
                reason: Reason::FLOW_CONTROL_ERROR,
                what: "DATA beyond the stream window",
            },
        ),
        (
            "1-octet padded DATA beyond the stream's allowance",
            {
                let mut v = s.headers(1, &[(":status", "200")], false);
                for _ in 0..200 {
                    v.extend(enc(Frame::Data {
                        stream_id: 1,
                        end_stream: false,
                        data: vec![b'x'],
                        pad_len: Some(255),
                    }));
                }
                v
            },
            H2Error::Budget(BudgetExceeded::new(Budget::ResponseBytes, 20_000)),
        ),
    ];
    for (what, input, want) in cases {
        for piece in [usize::MAX, 1] {
            let (mut c, mut srv) = ready(H2Config::default());
            // A 20000-octet allowance for the allowance case, plenty for the others.
            let allowance = if what.contains("allowance") {
                20_000
            } else {
                1 << 20
            };
            let id = c.open_stream(Scheme::Https, &request(), allowance).unwrap();
            srv.read(&mut c);
            for chunk in input.chunks(piece.min(input.len())) {
                c.handle_bytes(T0, chunk)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            let ev = events(&mut c);
            let Some(StreamEvent::Failed { stream, error, raw }) = ev.last() else {
                panic!("{what}: {ev:?}")
            };
            assert_eq!((*stream, error), (id, &want), "{what}, piece {piece}");
            // Every octet of the stream's frames is reported across its events.
            let reported: u64 = ev
                .iter()
                .map(|e| match e {
                    StreamEvent::Informational { raw, .. }
                    | StreamEvent::Head { raw, .. }
                    | StreamEvent::Data { raw, .. }
                    | StreamEvent::End { raw, .. }
                    | StreamEvent::Failed { raw, .. } => *raw,
                })
                .sum();
            assert!(reported > 0 || *raw == 0, "{what}");
            let frames = srv.read(&mut c);
            let reset_sent = frames
                .iter()
                .any(|f| matches!(f, Frame::RstStream { stream_id: 1, .. }));
            let by_server = matches!(want, H2Error::Reset { .. } | H2Error::GoAway { .. });
            assert_eq!(reset_sent, !by_server, "{what}: {frames:?}");
            // The connection goes on (unless the server is going away).
            assert_eq!(c.error(), None, "{what}");
            if !by_server {
                assert!(c.can_open(), "{what}");
                let next = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
                assert_eq!(next, StreamId(3));
            }
        }
    }
}

#[test]
fn data_beyond_the_connection_window_is_a_connection_error() {
    let mut config = H2Config::default();
    config.connection_window = 100_000;
    let (mut c, mut s) = ready(config);
    c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let mut input = s.headers(1, &[(":status", "200")], false);
    for _ in 0..7 {
        input.extend(data(1, &[b'd'; 16384], false));
    }
    assert_eq!(
        c.handle_bytes(T0, &input),
        Err(H2Error::Protocol {
            reason: Reason::FLOW_CONTROL_ERROR,
            what: "DATA beyond the connection window",
        })
    );
}

#[test]
fn a_continuation_flood_is_capped_even_after_the_stream_failed_on_its_allowance() {
    let (mut c, mut s) = ready(H2Config::default());
    let id = c.open_stream(Scheme::Https, &request(), 30).unwrap();
    s.read(&mut c);
    let mut input = enc(Frame::Headers {
        stream_id: 1,
        end_stream: false,
        end_headers: false,
        priority: None,
        fragment: vec![0x88; 40],
        pad_len: None,
    });
    for _ in 0..9 {
        input.extend(enc(Frame::Continuation {
            stream_id: 1,
            end_headers: false,
            fragment: vec![0x88],
        }));
    }
    let want = H2Error::Limit {
        limit: H2Limit::ContinuationFrames,
        max: 8,
    };
    assert_eq!(c.handle_bytes(T0, &input), Err(want));
    // The stream had already failed on its 30-octet allowance, with that budget named.
    assert_eq!(
        events(&mut c),
        vec![StreamEvent::Failed {
            stream: id,
            error: H2Error::Budget(BudgetExceeded::new(Budget::ResponseBytes, 30)),
            raw: 49
        }]
    );
}

#[test]
fn the_config_follows_the_work_item_budgets() {
    let mut b = mcp_sansio::Budgets::default();
    b.h2_socket_bytes = 4321;
    b.header_block_bytes = 1000;
    b.header_count = 7;
    b.informational_responses = 2;
    let c = H2Config::from_budgets(&b);
    assert_eq!(c.socket_bytes, 4321);
    assert_eq!(c.socket_refill, 4321 / 256);
    assert_eq!(H2Config::default().socket_refill, 4096);
    assert_eq!(c.header_block_bytes, 1000);
    assert_eq!(c.header_list.max_fields, 7);
    assert_eq!(c.informational_responses, 2);
    assert_eq!(mcp_sansio::Budgets::default().h2_socket_bytes, 1 << 20);
    assert_eq!(Budget::H2SocketBytes.name(), "h2_socket_bytes");
}

#[test]
fn never_processed_streams_may_be_retried() {
    assert!(H2Error::Reset {
        reason: Reason::REFUSED_STREAM
    }
    .never_processed());
    assert!(!H2Error::Reset {
        reason: Reason::CANCEL
    }
    .never_processed());
    assert!(H2Error::GoAway {
        reason: Reason::NO_ERROR,
        last_stream_id: 0
    }
    .never_processed());
}

#[test]
fn windows_reopen_only_as_the_caller_takes_data() {
    let (mut c, mut s) = ready(H2Config::default());
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let mut input = s.headers(1, &[(":status", "200")], false);
    for _ in 0..10 {
        input.extend(data(1, &[b'd'; 16384], false));
    }
    c.handle_bytes(T0, &input).unwrap();
    // 160 KiB received, nothing taken: no window update.
    assert_eq!(s.read(&mut c), vec![]);
    let ev = events(&mut c);
    assert_eq!(ev.len(), 11);
    // Taken: the stream window (256 KiB) is reopened once half of it is free.
    let frames = s.read(&mut c);
    let stream_update: u32 = frames
        .iter()
        .filter_map(|f| match f {
            Frame::WindowUpdate {
                stream_id: 1,
                increment,
            } => Some(*increment),
            _ => None,
        })
        .sum();
    assert!(stream_update >= 128 * 1024, "{frames:?}");
    // The window the stream is given never exceeds what its allowance has left.
    let _ = id;
}

#[test]
fn a_small_allowance_gets_a_small_window() {
    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 1000).unwrap();
    let frames = s.read(&mut c);
    assert!(
        !frames
            .iter()
            .any(|f| matches!(f, Frame::WindowUpdate { stream_id: 1, .. })),
        "{frames:?}"
    );
}

/// The increments of the WINDOW_UPDATE frames for stream 1 among `frames`.
fn stream_updates(frames: &[Frame]) -> Vec<u32> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::WindowUpdate {
                stream_id: 1,
                increment,
            } => Some(*increment),
            _ => None,
        })
        .collect()
}

/// A stream's receive window is what its allowance has left plus one octet (so that the octet
/// beyond it can arrive), at most 256 KiB, and never below one whole frame of 16,384 octets (so
/// that a server writing whole frames can write the one that crosses the allowance): at the
/// start, the protocol's 65,535 raised to 100,001 for an allowance of 100,000; and once four
/// whole frames (65,536 octets) of a 70,000-octet allowance are taken, the 4,465 octets left of
/// the window are raised to one frame, however little the allowance has left, and raised again
/// after a smaller frame is taken.
#[test]
fn a_stream_window_is_its_allowance_left_and_one_octet_never_below_one_frame() {
    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 100_000).unwrap();
    assert_eq!(stream_updates(&s.read(&mut c)), vec![100_001 - 65_535]);

    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    assert_eq!(stream_updates(&s.read(&mut c)), vec![256 * 1024 - 65_535]);

    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 70_000).unwrap();
    assert_eq!(stream_updates(&s.read(&mut c)), vec![70_001 - 65_535]);
    let mut input = s.headers(1, &[(":status", "200")], false);
    for _ in 0..4 {
        input.extend(data(1, &[b'w'; 16_384], false));
    }
    c.handle_bytes(T0, &input).unwrap();
    assert_eq!(events(&mut c).len(), 5);
    let left = 70_001 - 4 * 16_384;
    assert_eq!(stream_updates(&s.read(&mut c)), vec![16_384 - left]);
    // A frame of 1,000 octets more (within the allowance), taken: what the window has left
    // (15,384) is below one frame again and is raised to it, although more than half is left.
    c.handle_bytes(T0, &data(1, &[b'w'; 1000], false)).unwrap();
    assert!(matches!(events(&mut c)[..], [StreamEvent::Data { .. }]));
    assert_eq!(stream_updates(&s.read(&mut c)), vec![1000]);
}

/// A stream window of one whole frame or more is reopened only once half of it is free: with
/// an allowance of 1 MiB (a window of 256 KiB), fifteen 16,384-octet frames leave one frame of
/// window; taken one by one, they reopen it only when the eighth is taken (then at most 7
/// frames wait for the caller), by the eight frames taken.
#[test]
fn a_window_of_one_frame_or_more_is_reopened_only_once_half_is_free() {
    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    assert_eq!(stream_updates(&s.read(&mut c)), vec![256 * 1024 - 65_535]);
    let mut input = s.headers(1, &[(":status", "200")], false);
    for _ in 0..15 {
        input.extend(data(1, &[b'h'; 16_384], false));
    }
    c.handle_bytes(T0, &input).unwrap();
    assert!(matches!(c.poll_event(), Some(StreamEvent::Head { .. })));
    for taken in 1..=15 {
        assert!(matches!(c.poll_event(), Some(StreamEvent::Data { .. })));
        let updates = stream_updates(&s.read(&mut c));
        if taken == 8 {
            assert_eq!(updates, vec![8 * 16_384]);
        } else {
            assert!(updates.is_empty(), "after {taken} taken: {updates:?}");
        }
    }
}

/// How the scripted server writes DATA within the client's windows.
#[derive(Clone, Copy, Debug)]
enum Writes {
    /// Frames of this many octets, each only once the windows have room for all of it.
    WholeFrames(usize),
    /// Frames of at most this many octets, each as large as the windows allow now.
    WhatFits(usize),
}

/// What became of a stream whose server keeps to the windows.
#[derive(Debug, PartialEq, Eq)]
enum Ending {
    /// The stream failed with this error.
    Failed(H2Error),
    /// The stream ended (END_STREAM).
    Complete,
    /// Nothing moves any more and the server still has octets to write: it waits for a window.
    Waiting { written: usize, window: i64 },
}

/// A stream opened with `allowance`, answered by a server that writes a head and then `body`
/// octets of DATA as `writes` says, within the stream and connection windows the client's
/// frames open (the protocol's 65,535 each, then every WINDOW_UPDATE), taking every event as it
/// comes, at a clock that never moves. Returns the end and the stream window the client opened
/// in all (65,535 and every increment).
fn within_the_windows(allowance: u64, body: usize, writes: Writes) -> (Ending, i64) {
    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), allowance).unwrap();
    // The connection window the client opened at its start (see `ready`).
    let mut conn: i64 = 2 * 1024 * 1024;
    let mut stream: i64 = 65_535;
    let mut granted = stream;
    let mut input = s.headers(1, &[(":status", "200")], false);
    let mut written = 0;
    loop {
        if !input.is_empty() {
            c.handle_bytes(T0, &std::mem::take(&mut input)).unwrap();
        }
        for e in events(&mut c) {
            match e {
                StreamEvent::Failed { error, .. } => return (Ending::Failed(error), granted),
                StreamEvent::End { .. } => return (Ending::Complete, granted),
                _ => {}
            }
        }
        for f in s.read(&mut c) {
            if let Frame::WindowUpdate {
                stream_id,
                increment,
            } = f
            {
                if stream_id == 0 {
                    conn += i64::from(increment);
                } else {
                    stream += i64::from(increment);
                    granted += i64::from(increment);
                }
            }
        }
        let room = stream.min(conn).max(0) as usize;
        let left = body - written;
        let n = match writes {
            Writes::WholeFrames(f) if left.min(f) <= room => left.min(f),
            Writes::WholeFrames(_) => 0,
            Writes::WhatFits(f) => left.min(f).min(room),
        };
        if n == 0 {
            let window = stream;
            return (Ending::Waiting { written, window }, granted);
        }
        written += n;
        stream -= n as i64;
        conn -= n as i64;
        input = data(1, &vec![b'b'; n], written == body);
    }
}

/// A response larger than the stream's allowance, from a server that keeps to the windows
/// (writing whole frames, or as much as fits), always ends on the allowance
/// (`response_bytes`, with the allowance as its limit), never waiting for a window; and the
/// windows the client opens let through at most the allowance and one whole frame (16,384
/// octets) of DATA, or the protocol's initial 65,535 for a smaller allowance. Allowances below
/// one frame, below the initial window, below and above the largest stream window (256 KiB).
#[test]
fn a_too_large_response_within_the_windows_always_ends_on_the_allowance() {
    for allowance in [
        1000u64,
        20_000,
        70_000,
        100_000,
        300_000,
        1 << 20,
        3_000_000,
    ] {
        for writes in [
            Writes::WholeFrames(16_384),
            Writes::WholeFrames(4096),
            Writes::WholeFrames(1000),
            Writes::WhatFits(16_384),
            Writes::WhatFits(1000),
        ] {
            let body = 2 * allowance as usize + 100_000;
            let (end, granted) = within_the_windows(allowance, body, writes);
            let case = format!("allowance {allowance}, {writes:?}");
            assert_eq!(
                end,
                Ending::Failed(H2Error::Budget(BudgetExceeded::new(
                    Budget::ResponseBytes,
                    allowance
                ))),
                "{case}"
            );
            let bound = (allowance as i64 + 16_384).max(65_535);
            assert!(granted <= bound, "{case}: {granted} > {bound}");
        }
    }
}

/// The allowance's edges through the windows: a response whose frames take exactly the
/// allowance ends, and one octet more fails on it, the server writing whole 16,384-octet frames
/// within the windows (the frames' octets known in advance: the head, then 9 octets of header
/// per DATA frame).
#[test]
fn a_response_of_exactly_the_allowance_ends_and_one_octet_more_fails_on_it() {
    let head = Server::new().headers(1, &[(":status", "200")], false).len() as u64;
    for body in [40_000usize, 300_000, 1_000_000] {
        let octets = head + body as u64 + 9 * body.div_ceil(16_384) as u64;
        let (end, _) = within_the_windows(octets, body, Writes::WholeFrames(16_384));
        assert_eq!(end, Ending::Complete, "{body}");
        let (end, _) = within_the_windows(octets - 1, body, Writes::WholeFrames(16_384));
        assert_eq!(
            end,
            Ending::Failed(H2Error::Budget(BudgetExceeded::new(
                Budget::ResponseBytes,
                octets - 1
            ))),
            "{body}"
        );
    }
}

#[test]
fn the_request_body_waits_for_the_send_window() {
    let mut c = ClientConnection::new(T0, H2Config::default());
    let mut s = Server::new();
    // The server opens no stream window at all.
    let mut input = settings(&[(4, 0)]);
    input.extend(settings_ack());
    c.handle_bytes(T0, &input).unwrap();
    s.read(&mut c);
    let mut r = request();
    r.body = vec![b'b'; 40_000];
    c.open_stream(Scheme::Https, &r, 1 << 20).unwrap();
    let frames = s.read(&mut c);
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::Data { .. })),
        "{frames:?}"
    );
    // A stream window of 30000: 30000 octets go, in frames of at most 16384.
    c.handle_bytes(
        T0,
        &enc(Frame::WindowUpdate {
            stream_id: 1,
            increment: 30_000,
        }),
    )
    .unwrap();
    let sent: Vec<usize> = s
        .read(&mut c)
        .into_iter()
        .filter_map(|f| match f {
            Frame::Data {
                data,
                end_stream: false,
                ..
            } => Some(data.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sent, vec![16384, 30_000 - 16384]);
    // The rest waits for the stream window, and then the connection window (65535) limits it.
    c.handle_bytes(
        T0,
        &enc(Frame::WindowUpdate {
            stream_id: 1,
            increment: 100_000,
        }),
    )
    .unwrap();
    let frames = s.read(&mut c);
    let total: usize = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Data { data, .. } => Some(data.len()),
            _ => None,
        })
        .sum();
    assert_eq!(total, 10_000);
    assert!(matches!(
        frames.last(),
        Some(Frame::Data {
            end_stream: true,
            ..
        })
    ));
}

#[test]
fn cancel_resets_the_stream_and_its_late_frames_go_to_the_socket_ledger() {
    let (mut c, mut s) = ready(H2Config::default());
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    c.cancel(id);
    assert_eq!(
        s.read(&mut c),
        vec![Frame::RstStream {
            stream_id: 1,
            reason: Reason::CANCEL
        }]
    );
    let before = c.socket_bytes_used();
    let mut late = s.headers(1, &[(":status", "200")], false);
    late.extend(data(1, b"late", true));
    c.handle_bytes(T0, &late).unwrap();
    assert_eq!(c.socket_bytes_used(), before + late.len() as u64);
    assert_eq!(events(&mut c), vec![]);
    assert!(c.can_open());
    assert_eq!(c.error(), None);
}

#[test]
fn data_on_a_stream_that_ended_is_a_connection_error() {
    let (mut c, mut s) = ready(H2Config::default());
    c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    let mut input = s.headers(1, &[(":status", "200")], true);
    input.extend(data(1, b"x", false));
    assert_eq!(
        c.handle_bytes(T0, &input),
        Err(H2Error::Protocol {
            reason: Reason::STREAM_CLOSED,
            what: "DATA on a closed stream"
        })
    );
}

#[test]
fn eof_fails_open_streams() {
    let (mut c, mut s) = ready(H2Config::default());
    let id = c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
    s.read(&mut c);
    c.handle_bytes(T0, &[0, 0]).unwrap();
    c.handle_eof();
    assert_eq!(
        events(&mut c),
        vec![StreamEvent::Failed {
            stream: id,
            error: H2Error::Closed {
                what: "the socket ended inside a frame"
            },
            raw: 0
        }]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_split_of_a_response_gives_the_same_events(
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
        body in prop::collection::vec(any::<u8>(), 0..3000),
        pad in prop::option::of(any::<u8>()),
    ) {
        let mut s = Server::new();
        let mut input = settings(&[(3, 8)]);
        input.extend(settings_ack());
        let cl = body.len().to_string();
        input.extend(s.headers(1, &[(":status", "200"), ("content-length", &cl)], false));
        for (i, chunk) in body.chunks(1000).enumerate() {
            input.extend(enc(Frame::Data { stream_id: 1, end_stream: false, data: chunk.to_vec(), pad_len: pad.filter(|_| i % 2 == 0) }));
        }
        input.extend(data(1, b"", true));
        let run = |points: &[usize]| {
            let mut c = ClientConnection::new(T0, H2Config::default());
            c.open_stream(Scheme::Https, &request(), 1 << 20).unwrap();
            let mut prev = 0;
            let mut evs = Vec::new();
            let mut out = Vec::new();
            for &p in points.iter().chain([&input.len()]) {
                c.handle_bytes(T0, &input[prev..p]).unwrap();
                prev = p;
                evs.extend(events(&mut c));
                while let Some(b) = c.poll_transmit() { out.extend(b); }
            }
            (evs, out)
        };
        let whole = run(&[]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        points.sort();
        let split = run(&points);
        // Data events may be cut differently only by frame, never by the split: compare all.
        prop_assert_eq!(&whole.0, &split.0);
        prop_assert_eq!(&whole.1, &split.1);
        let got: Vec<u8> = whole.0.iter().filter_map(|e| match e { StreamEvent::Data { data, .. } => Some(data.clone()), _ => None }).flatten().collect();
        prop_assert_eq!(got, body);
        let raw: u64 = whole.0.iter().map(|e| match e {
            StreamEvent::Informational { raw, .. } | StreamEvent::Head { raw, .. } | StreamEvent::Data { raw, .. }
            | StreamEvent::End { raw, .. } | StreamEvent::Failed { raw, .. } => *raw,
        }).sum();
        let stream_octets = input.len() - settings(&[(3, 8)]).len() - settings_ack().len();
        prop_assert_eq!(raw, stream_octets as u64);
    }
}
