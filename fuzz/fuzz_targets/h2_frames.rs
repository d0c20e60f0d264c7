//! Fuzzes the HTTP/2 frame decoder and the client connection with arbitrary server bytes.
//!
//! Input layout: 2 configuration bytes (piece size in the low 5 bits and the number of streams,
//! one to eight, in the high 3 bits of the first; allowance in KiB), then the bytes the server
//! sends. Frames: decoded whole, in pieces and one byte at a time, the three must agree; every
//! frame re-encodes to a frame that decodes to itself. Connection: a client with that many open
//! streams (ids 1, 3, 5, …, opened after the server's SETTINGS, which allow eight) is fed
//! the bytes, whole and in pieces (drained only at the end): events, output and errors must
//! agree, the socket ledger and every stream's allowance must hold, and what the client buffers
//! must stay bounded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::internals::h2::client::WINDOW_UPDATE_CREDIT;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, FrameError, HEADER_LEN, MAX_FRAME_SIZE};
use mcp_sansio::h2::{ClientConnection, H2Config, H2Error, StreamEvent};
use mcp_sansio::wire::{Method, Request};
use mcp_sansio::{Instant, Scheme};

fn frames(input: &[u8], piece: usize) -> (Vec<Decoded>, Option<FrameError>) {
    let mut d = FrameDecoder::new();
    let mut out = Vec::new();
    for chunk in input.chunks(piece) {
        let mut rest = chunk;
        while !rest.is_empty() {
            match d.decode(&mut rest) {
                Ok(Some(f)) => {
                    assert!(f.raw_len >= HEADER_LEN && f.raw_len <= HEADER_LEN + MAX_FRAME_SIZE);
                    out.push(f);
                }
                Ok(None) => assert!(d.buffered() <= HEADER_LEN + MAX_FRAME_SIZE),
                Err(e) => return (out, Some(e)),
            }
        }
    }
    (out, None)
}

type Outcome = (Vec<StreamEvent>, Vec<u8>, Option<H2Error>, u64);

fn connection(input: &[u8], piece: usize, streams: usize, allowance: u64) -> Outcome {
    let mut config = H2Config::default();
    config.socket_bytes = 64 * 1024;
    let mut c = ClientConnection::new(Instant::ZERO, config);
    let request = Request {
        method: Method::Post,
        authority: "a.example".into(),
        path: "/mcp".into(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: b"{}".to_vec(),
    };
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut err = None;
    let mut settings = Vec::new();
    Frame::Settings {
        ack: false,
        settings: vec![(3, 8)],
    }
    .encode(&mut settings);
    // Before the server's SETTINGS the client opens one stream; after them, as many as allowed.
    c.handle_bytes(Instant::ZERO, &settings)
        .expect("SETTINGS are accepted");
    let mut opened = Vec::new();
    for _ in 0..streams {
        opened.push(
            c.open_stream(Scheme::Https, &request, allowance)
                .expect("a stream opens"),
        );
    }
    for chunk in input.chunks(piece) {
        // Nothing is drained between pieces: when the caller takes events decides when windows
        // reopen, so both runs keep the same schedule and must then agree exactly.
        if let Err(e) = c.handle_bytes(Instant::ZERO, chunk) {
            err = Some(e);
            break;
        }
    }
    events.extend(std::iter::from_fn(|| c.poll_event()));
    while let Some(b) = c.poll_transmit() {
        out.extend(b);
    }
    // The socket ledger holds: what no stream owns stays within its figure plus the share each
    // completed stream gave back (its refill and one DATA frame of body).
    let completed = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::End { .. }))
        .count() as u64;
    let share = H2Config::default().socket_refill + WINDOW_UPDATE_CREDIT;
    assert!(c.socket_bytes_left() <= 64 * 1024);
    assert!(c.socket_bytes_used() <= 64 * 1024 + completed * share);
    // A stream's frames never exceed its allowance by more than the frame that crossed it.
    for id in &opened {
        let stream_raw: u64 = events
            .iter()
            .filter(|e| e.stream() == *id)
            .map(|e| match e {
                StreamEvent::Informational { raw, .. }
                | StreamEvent::Head { raw, .. }
                | StreamEvent::Data { raw, .. }
                | StreamEvent::End { raw, .. }
                | StreamEvent::Failed { raw, .. } => *raw,
            })
            .sum();
        assert!(stream_raw <= allowance + (HEADER_LEN + MAX_FRAME_SIZE) as u64);
    }
    // Events only for the streams opened.
    assert!(events.iter().all(|e| opened.contains(&e.stream())));
    (events, out, err, c.socket_bytes_used())
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let piece = usize::from(data[0]) % 32 + 1;
    let streams = usize::from(data[0] >> 5) + 1;
    let allowance = u64::from(data[1]) * 1024 + 1;
    let input = &data[2..];

    let whole = frames(input, input.len().max(1));
    assert_eq!(frames(input, piece), whole);
    assert_eq!(frames(input, 1), whole);
    for d in &whole.0 {
        let mut wire = Vec::new();
        d.frame.encode(&mut wire);
        assert_eq!(wire.len(), d.raw_len);
        let (again, e) = frames(&wire, wire.len());
        assert_eq!(e, None);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].frame, d.frame);
    }

    let a = connection(input, input.len().max(1), streams, allowance);
    let b = connection(input, piece, streams, allowance);
    assert_eq!(a, b);
});
