//! Fuzzes the `text/event-stream` decoder: no panics, bounded memory, progress, the same items
//! (and error) whatever way the input is split, and agreement with a naive whole-input model.
//!
//! Input layout: two bytes choose the cap (16..=4096), one byte the number of split points (0..16),
//! two bytes per split point; the rest is the stream.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::internals::{SseDecoder, SseEvent, SseItem};
use mcp_sansio::SseError;

/// How far past the cap `buffered_len` may go.
const SLACK: usize = 16;

/// What feeding a stream produced.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<SseItem>,
    error: Option<SseError>,
    buffered_len: usize,
    partial: bool,
}

fn run(cap: u64, pieces: &[&[u8]]) -> Outcome {
    let limit = usize::try_from(cap)
        .unwrap_or(usize::MAX)
        .saturating_add(SLACK);
    let mut d = SseDecoder::new(cap);
    let mut items = Vec::new();
    for piece in pieces {
        let mut input = *piece;
        // Every call consumes a byte or yields an item, and every item takes at least one byte.
        let mut calls_left = input.len().saturating_mul(2).saturating_add(1);
        while !input.is_empty() {
            assert!(calls_left > 0, "no progress");
            calls_left -= 1;
            match d.decode(input) {
                Ok(step) => {
                    assert!(step.consumed > 0 || step.item.is_some(), "no progress");
                    assert!(step.consumed <= input.len(), "consumed past the input");
                    input = &input[step.consumed..];
                    if let Some(SseItem::Event(e)) = &step.item {
                        assert!(e.data.len() as u64 <= cap, "event data over the cap");
                    }
                    items.extend(step.item);
                    assert!(d.buffered_len() <= limit, "buffered past the cap");
                }
                Err(error) => {
                    assert!(d.buffered_len() <= limit, "buffered past the cap");
                    // Sticky.
                    assert_eq!(d.decode(b"\n\n").as_ref(), Err(&error));
                    assert_eq!(d.decode(b"").as_ref(), Err(&error));
                    return Outcome {
                        items,
                        error: Some(error),
                        buffered_len: d.buffered_len(),
                        partial: d.has_partial_event(),
                    };
                }
            }
        }
    }
    Outcome {
        items,
        error: None,
        buffered_len: d.buffered_len(),
        partial: d.has_partial_event(),
    }
}

/// A naive, whole-input reading of the event stream rules, without a cap.
fn model(input: &[u8]) -> Vec<SseItem> {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut items = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let mut event: Option<Vec<u8>> = None;
    let mut id: Option<Vec<u8>> = None;
    let mut any = false;
    let mut rest = input;
    // Only complete lines count; an unterminated tail is dropped.
    while let Some(end) = rest.iter().position(|&b| b == b'\r' || b == b'\n') {
        let line = &rest[..end];
        let skip = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[end + skip..];
        if line.is_empty() {
            if any {
                if data.last() == Some(&b'\n') {
                    data.pop();
                }
                let text = |v: Vec<u8>| String::from_utf8_lossy(&v).into_owned();
                items.push(SseItem::Event(SseEvent {
                    event: event.take().map(text),
                    data: std::mem::take(&mut data),
                    id: id.take().map(text),
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
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
                any = true;
            }
            b"event" => {
                event = Some(value.to_vec());
                any = true;
            }
            b"id" if !value.contains(&0) => {
                id = Some(value.to_vec());
                any = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("x").parse::<u64>() {
                    items.push(SseItem::Retry(ms));
                }
            }
            _ => {}
        }
    }
    items
}

fuzz_target!(|input: &[u8]| {
    let [c0, c1, n, rest @ ..] = input else {
        return;
    };
    let cap = 16 + u64::from(u16::from_le_bytes([*c0, *c1])) % 4081;
    let n = usize::from(*n % 16);
    let (point_bytes, body) = rest.split_at(rest.len().min(n * 2));
    let mut cuts: Vec<usize> = point_bytes
        .chunks(2)
        .map(|c| {
            let v = usize::from(c[0]) | usize::from(c.get(1).copied().unwrap_or(0)) << 8;
            v % (body.len() + 1)
        })
        .collect();
    cuts.sort_unstable();
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for c in cuts {
        pieces.push(&body[start..c]);
        start = c;
    }
    pieces.push(&body[start..]);

    let whole = run(cap, &[body]);
    // The cap only ever cuts the stream short: the items are the model's, or a prefix of them.
    let expected = model(body);
    match whole.error {
        None => assert_eq!(whole.items, expected, "differs from the model"),
        Some(_) => assert!(expected.starts_with(&whole.items), "differs from the model"),
    }
    assert_eq!(run(cap, &pieces), whole, "split feed differs");
    if body.len() <= 2048 {
        let ones: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(cap, &ones), whole, "byte-at-a-time feed differs");
    }
});
