//! Fuzzes the HTTP/1.1 response decoder with small limits and arbitrary splits.
//!
//! Input layout: 7 configuration bytes (ledger limit, header block cap, header count, chunk line
//! cap, 1xx limit, number of cuts, EOF flag), then one byte per cut (piece length - 1), then the
//! response bytes. The response is decoded whole, in the chosen pieces and one byte at a time;
//! all three must agree, stay within the ledger and the buffer caps, and always make progress.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::http1::{ResponseDecoder, ResponseEvent, ResponseHead, ResponseLimits};
use mcp_sansio::ByteLedger;
use mcp_sansio::Http1Error;

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    head: Option<ResponseHead>,
    body: Vec<u8>,
    end: Option<bool>,
    error: Option<Http1Error>,
    /// Bytes consumed; 0 when there is an error (the failing call reports none).
    consumed: usize,
    ledger_used: u64,
}

fn record(out: &mut Outcome, ev: Option<ResponseEvent<'_>>) {
    match ev {
        Some(ResponseEvent::Head(h)) => {
            assert!(out.head.is_none() && out.end.is_none());
            out.head = Some(h);
        }
        Some(ResponseEvent::Body(b)) => {
            assert!(!b.is_empty());
            assert!(out.head.is_some() && out.end.is_none());
            out.body.extend_from_slice(b);
        }
        Some(ResponseEvent::End { reusable }) => {
            assert!(out.head.is_some() && out.end.is_none());
            out.end = Some(reusable);
        }
        None => {}
    }
}

fn run<'p>(
    pieces: impl Iterator<Item = &'p [u8]>,
    limits: ResponseLimits,
    ledger_limit: u64,
    eof: bool,
) -> Outcome {
    let cap = limits.header_block_bytes.max(limits.chunk_line_bytes);
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
    'feed: {
        for piece in pieces {
            let mut rest = piece;
            // Each call consumes a byte or yields an event, and there are at most two events
            // (head, end) that consume nothing.
            let mut budget = piece.len() + 3;
            while !rest.is_empty() && !dec.is_ended() {
                assert!(budget > 0, "decoder makes no progress");
                budget -= 1;
                match dec.decode(rest, &mut ledger) {
                    Ok(d) => {
                        assert!(d.consumed <= rest.len());
                        assert!(d.consumed > 0 || d.event.is_some());
                        rest = &rest[d.consumed..];
                        out.consumed += d.consumed;
                        record(&mut out, d.event);
                    }
                    Err(e) => {
                        assert_eq!(dec.decode(b"x", &mut ledger), Err(e.clone()));
                        assert_eq!(dec.finish(), Err(e.clone()));
                        out.error = Some(e);
                        break 'feed;
                    }
                }
                assert!(dec.buffered_len() <= cap);
                assert!(ledger.used() <= ledger_limit);
            }
        }
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
        if eof {
            match dec.finish() {
                Ok(ev) => record(&mut out, ev),
                Err(e) => out.error = Some(e),
            }
        }
    }
    assert!(ledger.used() <= ledger_limit);
    if out.end.is_some() {
        assert!(dec.is_ended());
        assert_eq!(dec.decode(b"more", &mut ledger).map(|d| d.consumed), Ok(0));
    }
    out.ledger_used = ledger.used();
    if out.error.is_none() {
        assert_eq!(out.ledger_used, out.consumed as u64);
    } else {
        out.consumed = 0;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((config, rest)) = data.split_first_chunk::<7>() else {
        return;
    };
    let ledger_limit = 1024 + u64::from(config[0]) * 252; // 1 KiB ..= ~64 KiB
    let limits = ResponseLimits {
        header_block_bytes: 16 + usize::from(config[1]) * 4,
        header_count: usize::from(config[2] % 24),
        chunk_line_bytes: 1 + usize::from(config[3] % 64),
        informational_responses: u32::from(config[4] % 4),
    };
    let cuts = usize::from(config[5] % 16).min(rest.len());
    let eof = config[6] & 1 == 1;
    let (lengths, input) = rest.split_at(cuts);

    let mut pieces = Vec::with_capacity(cuts + 1);
    let mut start = 0;
    for &l in lengths {
        let end = (start + usize::from(l) + 1).min(input.len());
        pieces.push(&input[start..end]);
        start = end;
    }
    pieces.push(&input[start..]);

    let whole = run(std::iter::once(input), limits, ledger_limit, eof);
    let split = run(pieces.into_iter(), limits, ledger_limit, eof);
    assert_eq!(split, whole, "split differs from whole");
    let bytes = run(input.chunks(1), limits, ledger_limit, eof);
    assert_eq!(bytes, whole, "one byte at a time differs from whole");
});
