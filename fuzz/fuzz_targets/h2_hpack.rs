//! Fuzzes the HPACK decoder: arbitrary blocks, whole versus split, with small limits.
//!
//! Input layout: 4 configuration bytes (list limit in units of 64 octets, field limit, table size
//! in units of 16 octets, piece size), 3 bytes giving the lengths of the first three blocks (the
//! rest is the fourth), then the blocks. One decoder takes each block whole, another in pieces of
//! the chosen size: they must agree block by block (lists, errors, table size), every list must
//! fit its limits, and a decoded list must round-trip through the encoder.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder, Encoder, ENTRY_OVERHEAD};

fuzz_target!(|data: &[u8]| {
    if data.len() < 7 {
        return;
    }
    let limits = DecodeLimits {
        max_list_bytes: usize::from(data[0]) * 64 + 64,
        max_fields: usize::from(data[1]) % 64 + 1,
    };
    let table = usize::from(data[2]) * 16 + 16;
    let piece = usize::from(data[3]) % 16 + 1;
    let mut rest = &data[7..];
    let mut blocks = Vec::new();
    for &len in &data[4..7] {
        let n = usize::from(len).min(rest.len());
        blocks.push(&rest[..n]);
        rest = &rest[n..];
    }
    blocks.push(rest);

    let mut whole = Decoder::with_table_size(table, limits);
    let mut split = Decoder::with_table_size(table, limits);
    for block in blocks {
        let a = whole.decode_block(block);
        let mut r = Ok(());
        for p in block.chunks(piece) {
            r = split.feed(p);
            if r.is_err() {
                break;
            }
        }
        let b = r.and_then(|()| split.finish());
        assert_eq!(a, b);
        assert_eq!(whole.table_size(), split.table_size());
        assert!(whole.table_size() <= table.min(4096));
        match a {
            Ok(list) => {
                assert!(list.len() <= limits.max_fields);
                let size: usize = list
                    .iter()
                    .map(|h| h.name.len() + h.value.len() + ENTRY_OVERHEAD)
                    .sum();
                assert!(size <= limits.max_list_bytes);
                // Our encoder's block decodes back to the same list.
                let mut enc = Encoder::new();
                let mut out = Vec::new();
                enc.encode(
                    list.iter().map(|h| (h.name.as_slice(), h.value.as_slice())),
                    &mut out,
                );
                let mut fresh = Decoder::new(DecodeLimits {
                    max_list_bytes: 1 << 20,
                    max_fields: 1024,
                });
                let back = fresh.decode_block(&out).expect("our own block decodes");
                let pairs = |l: &[mcp_sansio::internals::h2::hpack::Header]| {
                    l.iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(pairs(&back), pairs(&list));
                assert_eq!(fresh.table_size(), 0);
            }
            Err(e) if e.is_connection_error() => break,
            Err(_) => {}
        }
    }
});
