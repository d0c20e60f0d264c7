//! HTTP/2 frame codec: every frame type round trips, raw sizes, hostile frames, split invariance.

use mcp_sansio::internals::h2::frame::{
    Decoded, Frame, FrameDecoder, FrameError, Priority, Reason, HEADER_LEN, MAX_FRAME_SIZE,
};
use proptest::prelude::*;

fn all_frames() -> Vec<Frame> {
    vec![
        Frame::Data {
            stream_id: 1,
            end_stream: false,
            data: b"hello".to_vec(),
            pad_len: None,
        },
        Frame::Data {
            stream_id: 3,
            end_stream: true,
            data: b"x".to_vec(),
            pad_len: Some(200),
        },
        Frame::Data {
            stream_id: 5,
            end_stream: true,
            data: Vec::new(),
            pad_len: None,
        },
        Frame::Headers {
            stream_id: 1,
            end_stream: true,
            end_headers: false,
            priority: Some(Priority {
                exclusive: true,
                dependency: 7,
                weight: 15,
            }),
            fragment: vec![0x82, 0x86],
            pad_len: Some(3),
        },
        Frame::Headers {
            stream_id: 9,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment: vec![0x88],
            pad_len: None,
        },
        Frame::Priority {
            stream_id: 3,
            priority: Priority {
                exclusive: false,
                dependency: 1,
                weight: 255,
            },
        },
        Frame::RstStream {
            stream_id: 1,
            reason: Reason::CANCEL,
        },
        Frame::Settings {
            ack: false,
            settings: vec![(2, 0), (6, 65536), (0x99, 7)],
        },
        Frame::Settings {
            ack: true,
            settings: Vec::new(),
        },
        Frame::PushPromise {
            stream_id: 1,
            end_headers: true,
            promised_stream_id: 2,
            fragment: vec![0x82],
            pad_len: Some(1),
        },
        Frame::Ping {
            ack: false,
            data: *b"12345678",
        },
        Frame::Ping {
            ack: true,
            data: [0; 8],
        },
        Frame::GoAway {
            last_stream_id: 7,
            reason: Reason::ENHANCE_YOUR_CALM,
            debug: b"calm down".to_vec(),
        },
        Frame::WindowUpdate {
            stream_id: 0,
            increment: 0x7fff_ffff,
        },
        Frame::WindowUpdate {
            stream_id: 3,
            increment: 0,
        },
        Frame::Continuation {
            stream_id: 1,
            end_headers: true,
            fragment: vec![0x84],
        },
        Frame::Unknown {
            kind: 0xfa,
            flags: 0xff,
            stream_id: 0,
            payload: b"whatever".to_vec(),
        },
        Frame::Data {
            stream_id: 1,
            end_stream: false,
            data: vec![7; MAX_FRAME_SIZE],
            pad_len: None,
        },
    ]
}

fn decode_all(input: &[u8], piece: usize) -> Result<Vec<Decoded>, FrameError> {
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    for chunk in input.chunks(piece.max(1)) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if let Some(f) = d.decode(&mut rest)? {
                out.push(f);
            }
        }
    }
    assert_eq!(d.buffered(), 0, "a complete input leaves nothing buffered");
    Ok(out)
}

#[test]
fn every_frame_round_trips_whole_and_one_octet_at_a_time() {
    let frames = all_frames();
    let mut wire = Vec::new();
    let mut sizes = Vec::new();
    for f in &frames {
        let before = wire.len();
        f.encode(&mut wire);
        sizes.push(wire.len() - before);
    }
    for piece in [wire.len(), 1, 2, 3, 7, 9, 10, 4096] {
        let got = decode_all(&wire, piece).unwrap();
        let frames_got: Vec<Frame> = got.iter().map(|d| d.frame.clone()).collect();
        assert_eq!(frames_got, frames, "piece {piece}");
        let raw: Vec<usize> = got.iter().map(|d| d.raw_len).collect();
        assert_eq!(raw, sizes, "raw sizes, piece {piece}");
    }
    // Raw size counts the header, the pad length octet and the padding.
    assert_eq!(sizes[1], HEADER_LEN + 1 + 1 + 200);
}

fn header(len: u32, ty: u8, flags: u8, sid: u32) -> Vec<u8> {
    let mut h = len.to_be_bytes()[1..].to_vec();
    h.push(ty);
    h.push(flags);
    h.extend_from_slice(&sid.to_be_bytes());
    h
}

fn frame(ty: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = header(payload.len() as u32, ty, flags, sid);
    f.extend_from_slice(payload);
    f
}

#[test]
fn hostile_frames_are_typed_errors() {
    let many_settings: Vec<u8> = (0..33u16)
        .flat_map(|i| {
            let mut s = i.to_be_bytes().to_vec();
            s.extend_from_slice(&0u32.to_be_bytes());
            s
        })
        .collect();
    let cases: Vec<(&str, Vec<u8>, FrameError)> = vec![
        (
            "a frame larger than 16384, refused from its header",
            header(16385, 0, 0, 1),
            FrameError::TooLarge {
                len: 16385,
                max: 16384,
            },
        ),
        (
            "the largest length",
            header(0xff_ffff, 0, 0, 1),
            FrameError::TooLarge {
                len: 0xff_ffff,
                max: 16384,
            },
        ),
        (
            "DATA on stream 0",
            frame(0, 0, 0, b"x"),
            FrameError::BadStreamId {
                frame: "DATA",
                stream_id: 0,
            },
        ),
        (
            "padding longer than the payload",
            frame(0, 0x8, 1, &[5, 1, 2]),
            FrameError::BadPadding { frame: "DATA" },
        ),
        (
            "PADDED with no pad length octet",
            frame(0, 0x8, 1, &[]),
            FrameError::BadLength {
                frame: "DATA",
                len: 0,
            },
        ),
        (
            "HEADERS with PRIORITY but 4 octets",
            frame(1, 0x20, 1, &[0, 0, 0, 0]),
            FrameError::BadLength {
                frame: "HEADERS",
                len: 4,
            },
        ),
        (
            "HEADERS on stream 0",
            frame(1, 4, 0, &[0x88]),
            FrameError::BadStreamId {
                frame: "HEADERS",
                stream_id: 0,
            },
        ),
        (
            "PRIORITY of 4 octets",
            frame(2, 0, 1, &[0; 4]),
            FrameError::BadLength {
                frame: "PRIORITY",
                len: 4,
            },
        ),
        (
            "RST_STREAM of 5 octets",
            frame(3, 0, 1, &[0; 5]),
            FrameError::BadLength {
                frame: "RST_STREAM",
                len: 5,
            },
        ),
        (
            "RST_STREAM on stream 0",
            frame(3, 0, 0, &[0; 4]),
            FrameError::BadStreamId {
                frame: "RST_STREAM",
                stream_id: 0,
            },
        ),
        (
            "SETTINGS of 7 octets",
            frame(4, 0, 0, &[0; 7]),
            FrameError::BadLength {
                frame: "SETTINGS",
                len: 7,
            },
        ),
        (
            "SETTINGS ACK with a payload",
            frame(4, 1, 0, &[0; 6]),
            FrameError::BadLength {
                frame: "SETTINGS",
                len: 6,
            },
        ),
        (
            "SETTINGS on a stream",
            frame(4, 0, 1, &[]),
            FrameError::BadStreamId {
                frame: "SETTINGS",
                stream_id: 1,
            },
        ),
        (
            "33 settings in one frame",
            frame(4, 0, 0, &many_settings),
            FrameError::TooManySettings { count: 33 },
        ),
        (
            "PING of 7 octets",
            frame(6, 0, 0, &[0; 7]),
            FrameError::BadLength {
                frame: "PING",
                len: 7,
            },
        ),
        (
            "PING on a stream",
            frame(6, 0, 1, &[0; 8]),
            FrameError::BadStreamId {
                frame: "PING",
                stream_id: 1,
            },
        ),
        (
            "GOAWAY of 7 octets",
            frame(7, 0, 0, &[0; 7]),
            FrameError::BadLength {
                frame: "GOAWAY",
                len: 7,
            },
        ),
        (
            "WINDOW_UPDATE of 3 octets",
            frame(8, 0, 0, &[0; 3]),
            FrameError::BadLength {
                frame: "WINDOW_UPDATE",
                len: 3,
            },
        ),
        (
            "PUSH_PROMISE without a promised id",
            frame(5, 4, 1, &[0; 3]),
            FrameError::BadLength {
                frame: "PUSH_PROMISE",
                len: 3,
            },
        ),
        (
            "CONTINUATION on stream 0",
            frame(9, 4, 0, &[]),
            FrameError::BadStreamId {
                frame: "CONTINUATION",
                stream_id: 0,
            },
        ),
    ];
    for (what, input, want) in cases {
        for piece in [input.len(), 1] {
            assert_eq!(decode_all_err(&input, piece), want, "{what}, piece {piece}");
        }
    }
    assert_eq!(
        FrameError::TooManySettings { count: 33 }.reason(),
        Reason::ENHANCE_YOUR_CALM
    );
    assert_eq!(
        FrameError::TooLarge { len: 1, max: 0 }.reason(),
        Reason::FRAME_SIZE_ERROR
    );
}

fn decode_all_err(input: &[u8], piece: usize) -> FrameError {
    let mut d = FrameDecoder::new();
    for chunk in input.chunks(piece) {
        let mut rest = chunk;
        while !rest.is_empty() {
            match d.decode(&mut rest) {
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }
    panic!("no error for {input:?}");
}

#[test]
fn an_oversized_frame_is_refused_before_its_payload_arrives() {
    let mut d = FrameDecoder::new();
    let h = header(20000, 0, 0, 1);
    let mut rest = &h[..];
    assert!(d.decode(&mut rest).is_err());
    assert!(d.buffered() <= HEADER_LEN);
}

#[test]
fn reserved_bit_of_stream_ids_is_ignored() {
    let input = frame(8, 0, 0x8000_0003, &[0x80, 0, 0, 1]);
    let got = decode_all(&input, 1).unwrap();
    assert_eq!(
        got[0].frame,
        Frame::WindowUpdate {
            stream_id: 3,
            increment: 1
        }
    );
}

proptest! {
    #[test]
    fn any_split_gives_the_same_frames(
        input in prop::collection::vec(any::<u8>(), 0..600),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let whole = run(&input, &[]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
        points.sort();
        prop_assert_eq!(whole, run(&input, &points));
    }

    #[test]
    fn encoded_frames_split_anywhere_decode_back(
        picks in prop::collection::vec(0usize..18, 1..6),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let all = all_frames();
        let frames: Vec<Frame> = picks.iter().map(|&i| all[i].clone()).collect();
        let mut wire = Vec::new();
        for f in &frames { f.encode(&mut wire); }
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(wire.len() + 1)).collect();
        points.sort();
        let (got, err) = run(&wire, &points);
        prop_assert_eq!(err, None);
        prop_assert_eq!(got.into_iter().map(|d| d.frame).collect::<Vec<_>>(), frames);
    }
}

/// Decodes `input` cut at `points`: the frames up to the first error, and the error.
fn run(input: &[u8], points: &[usize]) -> (Vec<Decoded>, Option<FrameError>) {
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    let mut prev = 0;
    for &p in points.iter().chain([&input.len()]) {
        let mut rest = &input[prev..p];
        prev = p;
        while !rest.is_empty() {
            match d.decode(&mut rest) {
                Ok(Some(f)) => out.push(f),
                Ok(None) => {}
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}
