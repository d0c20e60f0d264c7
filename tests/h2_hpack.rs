//! HPACK: RFC 7541 Appendix C vectors, encoder round trips, hostile blocks, and split invariance.

use mcp_sansio::internals::h2::hpack::{
    huffman_encode, DecodeLimits, Decoder, Encoder, Header, HpackError, MAX_TABLE_SIZE,
};
use mcp_sansio::{Budget, BudgetExceeded};
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn pairs(list: &[Header]) -> Vec<(String, String)> {
    list.iter()
        .map(|h| {
            (
                String::from_utf8(h.name.clone()).unwrap(),
                String::from_utf8(h.value.clone()).unwrap(),
            )
        })
        .collect()
}

fn owned(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// Decodes `block` whole, and again one octet at a time on a clone of the decoder: both must
/// agree (result and table size); the whole-block decoder is kept.
fn decode_both_ways(d: &mut Decoder, block: &[u8]) -> Result<Vec<Header>, HpackError> {
    let mut split = d.clone();
    let whole = d.decode_block(block);
    let mut r = Ok(());
    for b in block {
        r = split.feed(std::slice::from_ref(b));
        if r.is_err() {
            break;
        }
    }
    let by_byte = r.and_then(|()| split.finish());
    assert_eq!(whole, by_byte, "one-octet split differs");
    if whole.is_ok() {
        assert_eq!(d.table_size(), split.table_size());
    }
    whole
}

#[test]
fn c2_single_representations() {
    let cases = [
        (
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
            ("custom-key", "custom-header"),
            55,
            false,
        ),
        (
            "040c 2f73 616d 706c 652f 7061 7468",
            (":path", "/sample/path"),
            0,
            false,
        ),
        (
            "1008 7061 7373 776f 7264 0673 6563 7265 74",
            ("password", "secret"),
            0,
            true,
        ),
        ("82", (":method", "GET"), 0, false),
    ];
    for (block, field, table, never) in cases {
        let mut d = Decoder::new(DecodeLimits::default());
        let list = decode_both_ways(&mut d, &hex(block)).unwrap();
        assert_eq!(pairs(&list), owned(&[field]), "{block}");
        assert_eq!(list[0].never_indexed, never);
        assert_eq!(d.table_size(), table, "{block}");
    }
}

#[test]
fn c3_c4_requests_with_and_without_huffman() {
    let plain = [
        "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "8286 84be 5808 6e6f 2d63 6163 6865",
        "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
    ];
    let huffman = [
        "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        "8286 84be 5886 a8eb 1064 9cbf",
        "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
    ];
    let want = [
        owned(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ]),
        owned(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ]),
        owned(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]),
    ];
    let sizes = [57, 110, 164];
    for blocks in [plain, huffman] {
        let mut d = Decoder::new(DecodeLimits::default());
        for i in 0..3 {
            let list = decode_both_ways(&mut d, &hex(blocks[i])).unwrap();
            assert_eq!(pairs(&list), want[i], "{}", blocks[i]);
            assert_eq!(d.table_size(), sizes[i], "{}", blocks[i]);
        }
    }
}

#[test]
fn c5_c6_responses_with_eviction() {
    let plain = [
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "4803 3330 37c1 c0bf",
        "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
    ];
    let huffman = [
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        "4883 640e ffc1 c0bf",
        "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    ];
    let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
    let date2 = "Mon, 21 Oct 2013 20:13:22 GMT";
    let url = "https://www.example.com";
    let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
    let want = [
        owned(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", date1),
            ("location", url),
        ]),
        owned(&[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", date1),
            ("location", url),
        ]),
        owned(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", date2),
            ("location", url),
            ("content-encoding", "gzip"),
            ("set-cookie", cookie),
        ]),
    ];
    let sizes = [222, 222, 215];
    for blocks in [plain, huffman] {
        let mut d = Decoder::with_table_size(256, DecodeLimits::default());
        for i in 0..3 {
            let list = decode_both_ways(&mut d, &hex(blocks[i])).unwrap();
            assert_eq!(pairs(&list), want[i], "{}", blocks[i]);
            assert_eq!(d.table_size(), sizes[i], "{}", blocks[i]);
        }
    }
}

fn encode(enc: &mut Encoder, list: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    enc.encode(
        list.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        &mut out,
    );
    out
}

#[test]
fn encoder_round_trips_and_never_indexes() {
    let list = [
        (":method", "POST"),
        (":scheme", "https"),
        (":authority", "mcp.example.com"),
        (":path", "/mcp"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("authorization", "Bearer secret-token"),
        ("dpop", "eyJ0eXAiOiJkcG9wK2p3dCJ9.e30.c2ln"),
        ("mcp-protocol-version", "2025-06-18"),
        ("x-empty", ""),
    ];
    let mut enc = Encoder::new();
    let first = encode(&mut enc, &list);
    // The first block starts with a dynamic table size update to 0.
    assert_eq!(first[0], 0x20);
    let second = encode(&mut enc, &list);
    assert_ne!(
        second[0], 0x20,
        "only the first block carries the size update"
    );
    let mut d = Decoder::new(DecodeLimits::default());
    for block in [&first, &second] {
        let got = decode_both_ways(&mut d, block).unwrap();
        assert_eq!(pairs(&got), owned(&list));
        // Nothing entered the table.
        assert_eq!(d.table_size(), 0);
        // The credential and the DPoP proof bound to it are never-indexed literals.
        let secret = |h: &&mcp_sansio::internals::h2::hpack::Header| {
            h.name == b"authorization" || h.name == b"dpop"
        };
        assert_eq!(got.iter().filter(secret).count(), 2);
        assert!(got.iter().filter(secret).all(|h| h.never_indexed));
        assert!(got.iter().filter(|h| !secret(h)).all(|h| !h.never_indexed));
    }
    // No Huffman: every value appears verbatim in the block.
    for (_, v) in &list[2..] {
        assert!(
            first.windows(v.len().max(1)).any(|w| w == v.as_bytes()) || v.is_empty(),
            "{v}"
        );
    }
    // The static table is used for exact matches (":method: POST" is index 3).
    assert_eq!(first[1], 0x83);
}

#[test]
fn encoder_handles_long_values() {
    let long = "v".repeat(5000);
    let mut enc = Encoder::new();
    let block = encode(&mut enc, &[("x-long", &long)]);
    let mut d = Decoder::new(DecodeLimits::default());
    let got = d.decode_block(&block).unwrap();
    assert_eq!(got[0].value.len(), 5000);
}

/// Hostile or broken blocks, each with the typed error it must end in.
#[test]
fn hostile_blocks_are_typed_errors() {
    let many_fields: Vec<u8> = std::iter::repeat_n(0x82u8, 129).collect();
    let big_value = {
        // Literal without indexing, new name "x", value of 70000 octets: refused from its length.
        let mut b = vec![0x00, 0x01, b'x', 0x7f];
        let mut n = 70000u64 - 127;
        while n >= 0x80 {
            b.push((n as u8 & 0x7f) | 0x80);
            n >>= 7;
        }
        b.push(n as u8);
        b.extend(std::iter::repeat_n(b'v', 70000));
        b
    };
    let cases: Vec<(&str, Vec<u8>, HpackError)> = vec![
        ("index 0", vec![0x80], HpackError::InvalidIndex { index: 0 }),
        (
            "index past the tables",
            vec![0xbe],
            HpackError::InvalidIndex { index: 62 },
        ),
        (
            "literal name index past the tables",
            vec![0x0f, 0x30, 0x01, b'a'],
            HpackError::InvalidIndex { index: 63 },
        ),
        (
            "size update above 4096",
            hex("3fe21f"),
            HpackError::TableSizeUpdate {
                size: 4097,
                max: MAX_TABLE_SIZE as u64,
            },
        ),
        (
            "size update after a field",
            hex("82 20"),
            HpackError::LateTableSizeUpdate,
        ),
        (
            "six-octet integer",
            vec![0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            HpackError::IntegerOverflow,
        ),
        ("truncated string", hex("400a6375"), HpackError::Truncated),
        ("truncated integer", vec![0xff, 0x80], HpackError::Truncated),
        ("truncated literal", vec![0x41], HpackError::Truncated),
        (
            "Huffman EOS",
            vec![0x00, 0x01, b'a', 0x84, 0xff, 0xff, 0xff, 0xff],
            HpackError::HuffmanEos,
        ),
        (
            "Huffman zero padding",
            vec![0x00, 0x01, b'a', 0x81, 0x18],
            HpackError::HuffmanPadding,
        ),
        (
            "Huffman padding of a whole octet",
            vec![0x00, 0x01, b'a', 0x82, 0x1f, 0xff],
            HpackError::HuffmanPadding,
        ),
        (
            "129 fields",
            many_fields,
            HpackError::Budget(BudgetExceeded::new(Budget::HeaderCount, 128)),
        ),
        (
            "a value longer than the list",
            big_value,
            HpackError::HeaderListTooLarge { limit: 65536 },
        ),
    ];
    for (what, block, want) in cases {
        let mut d = Decoder::new(DecodeLimits::default());
        let got = decode_both_ways(&mut d, &block);
        // The oversized value is refused from its length: a truncated block still names the
        // list overflow only once the block ends, and its octets are never copied.
        assert_eq!(got, Err(want), "{what}");
    }
}

#[test]
fn a_list_over_its_limit_keeps_the_table_in_step() {
    // Block 1 indexes a 3000-octet value while the list limit is 1000: the list overflows (a
    // stream error), but the entry still enters the table, so block 2's reference to it works.
    let limits = DecodeLimits {
        max_list_bytes: 1000,
        max_fields: 128,
    };
    let value = "y".repeat(3000);
    let mut block = vec![0x40, 0x01, b'z', 0x7f];
    let mut n = 3000u64 - 127;
    while n >= 0x80 {
        block.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    block.push(n as u8);
    block.extend_from_slice(value.as_bytes());
    let mut d = Decoder::new(limits);
    let err = decode_both_ways(&mut d, &block).unwrap_err();
    assert_eq!(err, HpackError::HeaderListTooLarge { limit: 1000 });
    assert!(!err.is_connection_error());
    assert_eq!(d.table_size(), 3000 + 1 + 32);
    // Next block: index 62 (the entry) overflows again; index 2 alone is fine.
    assert_eq!(
        d.decode_block(&[0xbe]),
        Err(HpackError::HeaderListTooLarge { limit: 1000 })
    );
    assert_eq!(
        pairs(&d.decode_block(&[0x82]).unwrap()),
        owned(&[(":method", "GET")])
    );
}

#[test]
fn an_entry_larger_than_the_table_empties_it() {
    let mut d = Decoder::new(DecodeLimits::default());
    d.decode_block(&hex(
        "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
    ))
    .unwrap();
    assert_eq!(d.table_size(), 55);
    let mut block = vec![0x40, 0x01, b'z', 0x7f];
    let mut n = 5000u64 - 127;
    while n >= 0x80 {
        block.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    block.push(n as u8);
    block.extend(std::iter::repeat_n(b'q', 5000));
    assert_eq!(d.decode_block(&block).unwrap()[0].value.len(), 5000);
    assert_eq!(d.table_size(), 0);
    assert_eq!(
        d.decode_block(&[0xbe]),
        Err(HpackError::InvalidIndex { index: 62 })
    );
}

#[test]
fn a_huffman_bomb_is_bounded_while_decoding() {
    // 40000 octets of Huffman '0' (5 bits each) decode to 64000 octets: more than the 1000 left.
    let plain = vec![b'0'; 64000];
    let mut coded = Vec::new();
    huffman_encode(&plain, &mut coded);
    let mut block = vec![0x00, 0x01, b'x', 0xff];
    let mut n = coded.len() as u64 - 127;
    while n >= 0x80 {
        block.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    block.push(n as u8);
    block.extend_from_slice(&coded);
    let limits = DecodeLimits {
        max_list_bytes: 1000,
        max_fields: 128,
    };
    let mut d = Decoder::new(limits);
    assert_eq!(
        d.decode_block(&block),
        Err(HpackError::HeaderListTooLarge { limit: 1000 })
    );
}

fn arb_field() -> impl Strategy<Value = (String, String)> {
    (
        prop::sample::select(vec![
            ":status",
            "content-type",
            "date",
            "x-custom",
            "set-cookie",
            "mcp-session-id",
        ]),
        "[ -~]{0,40}",
    )
        .prop_map(|(n, v)| (n.to_string(), v))
}

/// A block with every representation: indexed, literal with/without/never indexing, Huffman or
/// not, size updates at the start.
fn build_block(fields: &[(String, String)], kinds: &[u8], update: Option<u16>) -> Vec<u8> {
    let mut b = Vec::new();
    if let Some(u) = update {
        let u = u64::from(u) % 4097;
        if u < 31 {
            b.push(0x20 | u as u8);
        } else {
            b.push(0x3f);
            let mut n = u - 31;
            while n >= 0x80 {
                b.push((n as u8 & 0x7f) | 0x80);
                n >>= 7;
            }
            b.push(n as u8);
        }
    }
    let put_str = |b: &mut Vec<u8>, s: &[u8], huff: bool| {
        let data = if huff {
            let mut c = Vec::new();
            huffman_encode(s, &mut c);
            c
        } else {
            s.to_vec()
        };
        let flag = if huff { 0x80 } else { 0 };
        if data.len() < 127 {
            b.push(flag | data.len() as u8);
        } else {
            b.push(flag | 0x7f);
            let mut n = data.len() as u64 - 127;
            while n >= 0x80 {
                b.push((n as u8 & 0x7f) | 0x80);
                n >>= 7;
            }
            b.push(n as u8);
        }
        b.extend_from_slice(&data);
    };
    for (i, (n, v)) in fields.iter().enumerate() {
        let k = kinds.get(i).copied().unwrap_or(0);
        match k % 4 {
            0 => b.push(0x40),
            1 => b.push(0x00),
            2 => b.push(0x10),
            _ => {
                b.push(0x82);
                continue;
            }
        }
        put_str(&mut b, n.as_bytes(), k & 4 != 0);
        put_str(&mut b, v.as_bytes(), k & 8 != 0);
    }
    b
}

proptest! {
    #[test]
    fn any_split_gives_the_same_result(
        blocks in prop::collection::vec(
            (prop::collection::vec(arb_field(), 0..12), prop::collection::vec(any::<u8>(), 12), prop::option::of(any::<u16>())),
            1..4),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut whole = Decoder::new(DecodeLimits::default());
        let mut split = Decoder::new(DecodeLimits::default());
        for (fields, kinds, update) in &blocks {
            let block = build_block(fields, kinds, *update);
            let a = whole.decode_block(&block);
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(block.len() + 1)).collect();
            points.sort();
            let mut prev = 0;
            let mut r = Ok(());
            for p in points.into_iter().chain([block.len()]) {
                r = split.feed(&block[prev..p]);
                prev = p;
                if r.is_err() { break; }
            }
            let b = r.and_then(|()| split.finish());
            prop_assert_eq!(&a, &b);
            if let Ok(list) = a {
                let want: Vec<(String, String)> = fields.iter().enumerate().map(|(i, f)| {
                    if kinds[i] % 4 == 3 { (":method".to_string(), "GET".to_string()) } else { f.clone() }
                }).collect();
                prop_assert_eq!(pairs(&list), want);
            } else {
                break;
            }
        }
    }

    #[test]
    fn arbitrary_octets_never_panic_and_split_agrees(block in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut d = Decoder::new(DecodeLimits::default());
        let _ = decode_both_ways(&mut d, &block);
    }
}
