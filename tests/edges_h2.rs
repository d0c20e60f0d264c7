//! The HTTP/2 codec's HPACK and frame layers at the edges of their limits and decisions, through
//! their internal API (`unstable-internals`): each test here kills a mutant of `src/h2/hpack/` or
//! `src/h2/frame.rs` that the codec's other tests let live (docs/mutants.md, `scripts/mutants.sh
//! h2-hpack h2-frame`).

use mcp_sansio::internals::h2::frame::{
    Frame, FrameDecoder, FrameError, Priority, Reason, MAX_FRAME_SIZE, MAX_SETTINGS_PER_FRAME,
};

// ---- The frame layer (src/h2/frame.rs) ----

/// The nine-octet header of RFC 9113 §4.1: length (24 bits), type, flags, stream id.
fn header(len: usize, ty: u8, flags: u8, sid: u32) -> Vec<u8> {
    let mut h = (len as u32).to_be_bytes()[1..].to_vec();
    h.push(ty);
    h.push(flags);
    h.extend_from_slice(&sid.to_be_bytes());
    h
}

fn frame(ty: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = header(payload.len(), ty, flags, sid);
    f.extend_from_slice(payload);
    f
}

/// Decodes `input` whole and again one octet at a time: both must give the same result, and a
/// decoded frame must have taken all of `input`.
fn decode_one(input: &[u8]) -> Result<Frame, FrameError> {
    let mut whole = FrameDecoder::new();
    let mut rest = input;
    let got = whole.decode(&mut rest);
    let mut split = FrameDecoder::new();
    let mut by_octet = Ok(None);
    for b in input {
        by_octet = split.decode(&mut std::slice::from_ref(b));
        if !matches!(by_octet, Ok(None)) {
            break;
        }
    }
    assert_eq!(got, by_octet, "one-octet split differs");
    let d = got?.expect("a complete frame");
    assert!(rest.is_empty());
    assert_eq!(d.raw_len, input.len());
    Ok(d.frame)
}

#[test]
fn every_error_code_has_its_rfc_name_and_an_unknown_one_is_unknown() {
    // RFC 9113 §7 (and §11.4's registry), written out here.
    let rfc = [
        (0x0, "NO_ERROR"),
        (0x1, "PROTOCOL_ERROR"),
        (0x2, "INTERNAL_ERROR"),
        (0x3, "FLOW_CONTROL_ERROR"),
        (0x4, "SETTINGS_TIMEOUT"),
        (0x5, "STREAM_CLOSED"),
        (0x6, "FRAME_SIZE_ERROR"),
        (0x7, "REFUSED_STREAM"),
        (0x8, "CANCEL"),
        (0x9, "COMPRESSION_ERROR"),
        (0xa, "CONNECT_ERROR"),
        (0xb, "ENHANCE_YOUR_CALM"),
        (0xc, "INADEQUATE_SECURITY"),
        (0xd, "HTTP_1_1_REQUIRED"),
    ];
    for (code, name) in rfc {
        assert_eq!(Reason(code).name(), name);
        assert_eq!(Reason(code).to_string(), format!("{name} (0x{code:x})"));
    }
    for code in [0xe, 0xff, u32::MAX] {
        assert_eq!(Reason(code).name(), "UNKNOWN");
        assert_eq!(Reason(code).to_string(), format!("UNKNOWN (0x{code:x})"));
    }
}

#[test]
fn debug_shows_a_payload_by_its_length_and_every_other_field() {
    let secret = b"Bearer s3cr3t-t0ken".to_vec();
    let n = secret.len();
    let frames = [
        Frame::Data {
            stream_id: 5,
            end_stream: true,
            data: secret.clone(),
            pad_len: Some(2),
        },
        Frame::Headers {
            stream_id: 7,
            end_stream: false,
            end_headers: true,
            priority: None,
            fragment: secret.clone(),
            pad_len: None,
        },
        Frame::PushPromise {
            stream_id: 9,
            end_headers: true,
            promised_stream_id: 2,
            fragment: secret.clone(),
            pad_len: None,
        },
        Frame::GoAway {
            last_stream_id: 11,
            reason: Reason::ENHANCE_YOUR_CALM,
            debug: secret.clone(),
        },
        Frame::Continuation {
            stream_id: 13,
            end_headers: false,
            fragment: secret.clone(),
        },
        Frame::Unknown {
            kind: 0xfa,
            flags: 0,
            stream_id: 15,
            payload: secret.clone(),
        },
    ];
    let fields = [
        "stream_id: 5",
        "stream_id: 7",
        "promised_stream_id: 2",
        "last_stream_id: 11",
        "stream_id: 13",
        "kind: 250",
    ];
    let names = [
        "Data",
        "Headers",
        "PushPromise",
        "GoAway",
        "Continuation",
        "Unknown",
    ];
    for ((f, name), field) in frames.iter().zip(names).zip(fields) {
        let shown = format!("{f:?}");
        assert!(shown.starts_with(name), "{shown}");
        assert!(shown.contains(field), "{shown}");
        assert!(shown.contains(&format!("<{n} octets>")), "{shown}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
    let ping = format!(
        "{:?}",
        Frame::Ping {
            ack: true,
            data: [1, 2, 3, 4, 5, 6, 7, 8]
        }
    );
    assert_eq!(ping, "Ping { ack: true, data: [1, 2, 3, 4, 5, 6, 7, 8] }");
}

#[test]
fn each_frame_names_its_stream_and_connection_frames_stream_0() {
    let on_stream = [
        Frame::Data {
            stream_id: 3,
            end_stream: false,
            data: Vec::new(),
            pad_len: None,
        },
        Frame::RstStream {
            stream_id: 3,
            reason: Reason::CANCEL,
        },
        Frame::WindowUpdate {
            stream_id: 3,
            increment: 1,
        },
        Frame::Continuation {
            stream_id: 3,
            end_headers: true,
            fragment: Vec::new(),
        },
    ];
    for f in &on_stream {
        assert_eq!(f.stream_id(), 3, "{f:?}");
    }
    let on_connection = [
        Frame::Settings {
            ack: true,
            settings: Vec::new(),
        },
        Frame::Ping {
            ack: false,
            data: [0; 8],
        },
        Frame::GoAway {
            last_stream_id: 3,
            reason: Reason::NO_ERROR,
            debug: Vec::new(),
        },
    ];
    for f in &on_connection {
        assert_eq!(f.stream_id(), 0, "{f:?}");
    }
}

#[test]
fn the_decoder_holds_what_it_was_given_of_an_incomplete_frame_and_nothing_after() {
    let input = frame(0x0, 0, 1, b"abcdef");
    let mut d = FrameDecoder::new();
    for (i, b) in input.iter().enumerate().take(input.len() - 1) {
        assert_eq!(d.decode(&mut std::slice::from_ref(b)), Ok(None));
        assert_eq!(d.buffered(), i + 1);
    }
    let mut last = &input[input.len() - 1..];
    assert!(d.decode(&mut last).unwrap().is_some());
    assert_eq!(d.buffered(), 0);
}

#[test]
fn a_payload_of_16384_octets_is_accepted_16385_refused_from_the_header() {
    let max = vec![0u8; MAX_FRAME_SIZE];
    let Frame::Unknown { payload, .. } = decode_one(&frame(0xfa, 0, 1, &max)).unwrap() else {
        panic!("an unknown type")
    };
    assert_eq!(payload.len(), 16384);
    let mut d = FrameDecoder::new();
    let h = header(16385, 0xfa, 0, 1);
    assert_eq!(
        d.decode(&mut &h[..]),
        Err(FrameError::TooLarge {
            len: 16385,
            max: 16384
        })
    );
}

#[test]
fn padding_up_to_the_whole_payload_after_its_length_octet_is_accepted_one_more_refused() {
    // RFC 9113 §6.1: padding "the length of the frame payload or greater" is an error; the
    // payload holds the Pad Length octet, so N octets of padding after it fit, N + 1 do not.
    for (ty, name, fixed) in [
        (0x0, "DATA", &[][..]),
        (0x1, "HEADERS", &[][..]),
        (0x5, "PUSH_PROMISE", &[0, 0, 0, 2][..]),
    ] {
        for n in [0u8, 1, 7, 255] {
            let mut p = vec![n];
            p.extend_from_slice(fixed);
            p.resize(p.len() + usize::from(n), 0);
            let got = decode_one(&frame(ty, 0x8 | 0x4, 1, &p)).unwrap();
            let (pad, rest) = match got {
                Frame::Data { pad_len, data, .. } => (pad_len, data),
                Frame::Headers {
                    pad_len, fragment, ..
                } => (pad_len, fragment),
                Frame::PushPromise {
                    pad_len, fragment, ..
                } => (pad_len, fragment),
                other => panic!("{other:?}"),
            };
            assert_eq!((pad, rest), (Some(n), Vec::new()), "{name} padding {n}");
        }
    }
    for (ty, name) in [(0x0, "DATA"), (0x1, "HEADERS")] {
        for n in [0u8, 1, 7, 254] {
            // n octets after the Pad Length octet, which claims n + 1.
            let mut p = vec![n + 1];
            p.resize(1 + usize::from(n), 0);
            assert_eq!(
                decode_one(&frame(ty, 0x8 | 0x4, 1, &p)),
                Err(FrameError::BadPadding { frame: name }),
                "{name} padding {} in {n}",
                n + 1
            );
        }
    }
}

#[test]
fn headers_with_priority_of_exactly_five_octets_is_accepted_four_refused() {
    let got = decode_one(&frame(0x1, 0x20 | 0x4, 1, &[0x80, 0, 0, 3, 9])).unwrap();
    assert_eq!(
        got,
        Frame::Headers {
            stream_id: 1,
            end_stream: false,
            end_headers: true,
            priority: Some(Priority {
                exclusive: true,
                dependency: 3,
                weight: 9
            }),
            fragment: Vec::new(),
            pad_len: None,
        }
    );
    assert_eq!(
        decode_one(&frame(0x1, 0x20 | 0x4, 1, &[0x80, 0, 0, 3])),
        Err(FrameError::BadLength {
            frame: "HEADERS",
            len: 4
        })
    );
}

fn settings_payload(count: u16) -> Vec<u8> {
    (0..count)
        .flat_map(|i| {
            let mut s = (0x100 + i).to_be_bytes().to_vec();
            s.extend_from_slice(&u32::from(i).to_be_bytes());
            s
        })
        .collect()
}

#[test]
fn thirty_two_settings_in_a_frame_are_accepted_thirty_three_refused() {
    assert_eq!(MAX_SETTINGS_PER_FRAME, 32);
    let Frame::Settings { ack, settings } =
        decode_one(&frame(0x4, 0, 0, &settings_payload(32))).unwrap()
    else {
        panic!("SETTINGS")
    };
    assert!(!ack);
    assert_eq!(settings.len(), 32);
    assert_eq!(settings[31], (0x100 + 31, 31));
    let e = decode_one(&frame(0x4, 0, 0, &settings_payload(33))).unwrap_err();
    assert_eq!(e, FrameError::TooManySettings { count: 33 });
    assert_eq!(e.reason(), Reason::ENHANCE_YOUR_CALM);
}

#[test]
fn a_push_promise_of_only_its_promised_id_is_accepted_three_octets_refused() {
    assert_eq!(
        decode_one(&frame(0x5, 0x4, 1, &[0, 0, 0, 2])).unwrap(),
        Frame::PushPromise {
            stream_id: 1,
            end_headers: true,
            promised_stream_id: 2,
            fragment: Vec::new(),
            pad_len: None,
        }
    );
    assert_eq!(
        decode_one(&frame(0x5, 0x4, 1, &[0, 0, 2])),
        Err(FrameError::BadLength {
            frame: "PUSH_PROMISE",
            len: 3
        })
    );
}

#[test]
fn a_goaway_of_eight_octets_is_accepted_seven_refused() {
    assert_eq!(
        decode_one(&frame(0x7, 0, 0, &[0, 0, 0, 5, 0, 0, 0, 0xb])).unwrap(),
        Frame::GoAway {
            last_stream_id: 5,
            reason: Reason::ENHANCE_YOUR_CALM,
            debug: Vec::new(),
        }
    );
    assert_eq!(
        decode_one(&frame(0x7, 0, 0, &[0, 0, 0, 5, 0, 0, 0])),
        Err(FrameError::BadLength {
            frame: "GOAWAY",
            len: 7
        })
    );
}

#[test]
fn each_frame_error_carries_the_rfc_code() {
    // RFC 9113 §4.2 (size: FRAME_SIZE_ERROR), §6.1 (padding: PROTOCOL_ERROR), §5.1.1 and each
    // frame's section (stream 0 or not: PROTOCOL_ERROR).
    let cases = [
        (
            FrameError::TooLarge {
                len: 16385,
                max: 16384,
            },
            Reason::FRAME_SIZE_ERROR,
        ),
        (
            FrameError::BadLength {
                frame: "PING",
                len: 7,
            },
            Reason::FRAME_SIZE_ERROR,
        ),
        (
            FrameError::BadPadding { frame: "DATA" },
            Reason::PROTOCOL_ERROR,
        ),
        (
            FrameError::BadStreamId {
                frame: "DATA",
                stream_id: 0,
            },
            Reason::PROTOCOL_ERROR,
        ),
        (
            FrameError::TooManySettings { count: 33 },
            Reason::ENHANCE_YOUR_CALM,
        ),
    ];
    for (e, want) in cases {
        assert_eq!(e.reason(), want, "{e}");
    }
}

#[test]
fn end_headers_is_read_from_its_flag_on_every_header_block_frame() {
    // RFC 9113 §6.2, §6.6, §6.10: END_HEADERS (0x4) ends the block; without it, CONTINUATION
    // follows. Each frame type is decoded with and without the flag, and with every other flag
    // but PADDED and PRIORITY (which change the payload's layout).
    for (flags, want) in [(0x4, true), (0x0, false), (!(0x4 | 0x8 | 0x20), false)] {
        let pp = decode_one(&frame(0x5, flags, 1, &[0, 0, 0, 2, 0x82])).unwrap();
        let Frame::PushPromise { end_headers, .. } = pp else {
            panic!("{pp:?}")
        };
        assert_eq!(end_headers, want, "PUSH_PROMISE flags {flags:#x}");
        let h = decode_one(&frame(0x1, flags, 1, &[0x82])).unwrap();
        let Frame::Headers { end_headers, .. } = h else {
            panic!("{h:?}")
        };
        assert_eq!(end_headers, want, "HEADERS flags {flags:#x}");
        let c = decode_one(&frame(0x9, flags, 1, &[0x82])).unwrap();
        let Frame::Continuation { end_headers, .. } = c else {
            panic!("{c:?}")
        };
        assert_eq!(end_headers, want, "CONTINUATION flags {flags:#x}");
    }
}

// ---- HPACK (src/h2/hpack/) ----

use mcp_sansio::internals::h2::hpack::{huffman_encode, DecodeLimits, Decoder, HpackError};

/// A dynamic table size update (RFC 7541 §6.3: `001` and a 5-bit prefix integer) to `size`.
fn size_update(size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    if size < 31 {
        out.push(0x20 | size as u8);
        return out;
    }
    out.push(0x3f);
    let mut rest = size - 31;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
    out
}

/// A literal field without indexing, with a new name (RFC 7541 §6.2.2), no Huffman; both
/// strings under 127 octets.
fn literal(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = vec![0x00, name.len() as u8];
    out.extend_from_slice(name);
    out.push(value.len() as u8);
    out.extend_from_slice(value);
    out
}

/// A decoded header list as (name, value) pairs.
type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// Decodes `block` whole and one octet at a time on a clone: both give the same result.
fn decode_block(d: &mut Decoder, block: &[u8]) -> Result<Fields, HpackError> {
    let mut split = d.clone();
    let whole = d.decode_block(block);
    let mut r = Ok(());
    for b in block {
        r = split.feed(std::slice::from_ref(b));
        if r.is_err() {
            break;
        }
    }
    assert_eq!(
        whole,
        r.and_then(|()| split.finish()),
        "one-octet split differs"
    );
    whole.map(|l| l.into_iter().map(|h| (h.name, h.value)).collect())
}

#[test]
fn a_table_size_update_to_the_maximum_is_accepted_one_more_refused() {
    assert_eq!(size_update(4096), [0x3f, 0xe1, 0x1f]);
    let mut d = Decoder::new(DecodeLimits::default());
    assert_eq!(decode_block(&mut d, &size_update(4096)), Ok(Vec::new()));
    let mut d = Decoder::new(DecodeLimits::default());
    assert_eq!(
        decode_block(&mut d, &size_update(4097)),
        Err(HpackError::TableSizeUpdate {
            size: 4097,
            max: 4096
        })
    );
    for size in [0, 30, 31, 100] {
        let mut d = Decoder::with_table_size(size, DecodeLimits::default());
        assert_eq!(
            decode_block(&mut d, &size_update(size as u64)),
            Ok(Vec::new())
        );
        let mut d = Decoder::with_table_size(size, DecodeLimits::default());
        assert_eq!(
            decode_block(&mut d, &size_update(size as u64 + 1)),
            Err(HpackError::TableSizeUpdate {
                size: size as u64 + 1,
                max: size as u64
            }),
            "table of {size}"
        );
    }
}

#[test]
fn a_header_list_of_exactly_its_limit_is_accepted_one_octet_more_refused() {
    // RFC 9113 §6.5.2: name + value + 32 per field. 100 octets: one field of 1 + 67 + 32, or
    // `:method: GET` (7 + 3 + 32) and a field of 1 + 25 + 32.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let too_large = Err(HpackError::HeaderListTooLarge { limit: 100 });
    let mut d = Decoder::new(limits);
    let one = decode_block(&mut d, &literal(b"a", &[b'v'; 67])).unwrap();
    assert_eq!(one, [(b"a".to_vec(), vec![b'v'; 67])]);
    let mut d = Decoder::new(limits);
    assert_eq!(decode_block(&mut d, &literal(b"a", &[b'v'; 68])), too_large);

    let two = |value_len: usize| {
        let mut block = vec![0x82]; // static index 2, `:method: GET`
        block.extend_from_slice(&literal(b"a", &vec![b'v'; value_len]));
        decode_block(&mut Decoder::new(limits), &block)
    };
    assert_eq!(
        two(25).unwrap(),
        [
            (b":method".to_vec(), b"GET".to_vec()),
            (b"a".to_vec(), vec![b'v'; 25])
        ]
    );
    assert_eq!(two(26), too_large);
}

#[test]
fn a_string_longer_than_the_list_can_hold_is_skipped_not_kept() {
    // The value announces 1000 octets where the list has room for 100 - 32 - 1: its octets
    // are passed over as they come, none kept, and the list is refused when the block ends.
    // Coded with Huffman, 1000 octets decode to at least 1000 * 8 / 30 = 266 octets: too many
    // as well.
    for huffman in [0x00, 0x80] {
        let limits = DecodeLimits {
            max_list_bytes: 100,
            max_fields: 128,
        };
        let mut block = vec![0x00, 1, b'a', 0x7f | huffman, 0xe9, 0x06]; // value length 127 + 873 = 1000
        block.extend_from_slice(&[b'v'; 1000]);
        let mut d = Decoder::new(limits);
        d.feed(&block[..506]).unwrap();
        let shown = format!("{d:?}");
        assert!(shown.contains("pending_octets: 0,"), "{shown}");
        d.feed(&block[506..]).unwrap();
        assert!(format!("{d:?}").contains("pending_octets: 0,"));
        assert_eq!(
            d.finish(),
            Err(HpackError::HeaderListTooLarge { limit: 100 })
        );
        // The same field of 100 - 32 octets in all fits.
        let mut d = Decoder::new(limits);
        assert_eq!(
            decode_block(&mut d, &literal(b"a", &[b'v'; 67])).map(|l| l.len()),
            Ok(1)
        );
    }
}

#[test]
fn a_huffman_value_decoding_to_exactly_the_room_left_is_accepted_one_octet_more_refused() {
    // Room for 100 - 32 - 1 = 67 value octets after the name `a`; `v` is a 7-bit code, so 67
    // of them take 59 octets coded.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let block = |n: usize| {
        let mut coded = Vec::new();
        huffman_encode(&vec![b'v'; n], &mut coded);
        let mut block = vec![0x00, 1, b'a', 0x80 | coded.len() as u8];
        block.extend_from_slice(&coded);
        block
    };
    assert_eq!(block(67).len(), 4 + 59);
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block(67)),
        Ok(vec![(b"a".to_vec(), vec![b'v'; 67])])
    );
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block(68)),
        Err(HpackError::HeaderListTooLarge { limit: 100 })
    );
}

/// A literal field with incremental indexing (RFC 7541 §6.2.1), a new name, no Huffman.
fn indexed_literal(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = literal(name, value);
    out[0] = 0x40;
    out
}

#[test]
fn an_entry_of_exactly_the_table_size_is_kept_and_a_table_filled_exactly_evicts_nothing() {
    // RFC 7541 §4.1, §4.4: an entry's size is name + value + 32; an entry of the table's size
    // is kept, a larger one empties the table, and eviction happens only past the size.
    let mut d = Decoder::with_table_size(100, DecodeLimits::default());
    decode_block(&mut d, &indexed_literal(b"a", &[b'v'; 67])).unwrap();
    assert_eq!(d.table_size(), 100);
    // Index 62 is the newest dynamic entry.
    assert_eq!(
        decode_block(&mut d, &[0x80 | 62]),
        Ok(vec![(b"a".to_vec(), vec![b'v'; 67])])
    );
    decode_block(&mut d, &indexed_literal(b"a", &[b'v'; 68])).unwrap();
    assert_eq!(d.table_size(), 0);

    // Two entries of 50 fill 100 exactly: both kept; a third evicts the oldest only.
    let mut d = Decoder::with_table_size(100, DecodeLimits::default());
    decode_block(&mut d, &indexed_literal(b"a", &[b'1'; 17])).unwrap();
    decode_block(&mut d, &indexed_literal(b"b", &[b'2'; 17])).unwrap();
    assert_eq!(d.table_size(), 100);
    assert_eq!(
        decode_block(&mut d, &[0x80 | 62, 0x80 | 63]),
        Ok(vec![
            (b"b".to_vec(), vec![b'2'; 17]),
            (b"a".to_vec(), vec![b'1'; 17])
        ])
    );
    decode_block(&mut d, &indexed_literal(b"c", &[b'3'; 17])).unwrap();
    assert_eq!(d.table_size(), 100);
    assert_eq!(
        decode_block(&mut d, &[0x80 | 62, 0x80 | 63]),
        Ok(vec![
            (b"c".to_vec(), vec![b'3'; 17]),
            (b"b".to_vec(), vec![b'2'; 17])
        ])
    );
}

/// A literal field without indexing whose name is Huffman-coded (RFC 7541 §5.2) and whose value
/// is `value` as given (its length octet included); both under 127 octets.
fn literal_huffman_name(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut coded = Vec::new();
    huffman_encode(name, &mut coded);
    let mut out = vec![0x00, 0x80 | coded.len() as u8];
    out.extend_from_slice(&coded);
    out.extend_from_slice(value);
    out
}

#[test]
fn a_plain_value_filling_the_room_a_huffman_name_leaves_is_accepted_one_octet_more_refused() {
    // Room for 100 - 32 = 68 octets of name and value. The name `a` is one octet coded, which
    // could decode to no octet at all (8 / 30), so a 68-octet value passes the first estimate;
    // once the name is decoded, 67 octets are left for the value.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let block = |n: usize| {
        let mut value = vec![n as u8];
        value.resize(n + 1, b'v');
        literal_huffman_name(b"a", &value)
    };
    assert_eq!(block(67)[..3], [0x00, 0x81, 0x1f]);
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block(67)),
        Ok(vec![(b"a".to_vec(), vec![b'v'; 67])])
    );
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block(68)),
        Err(HpackError::HeaderListTooLarge { limit: 100 })
    );
}

#[test]
fn a_bad_huffman_value_is_a_compression_error_even_when_its_field_is_dropped() {
    // Room for 40 - 32 = 8 octets. The name, nine `a`s coded in 6 octets, could decode to as
    // little as 1 octet, so the field is read; it decodes to 9 and is dropped. Its value is
    // still checked: a Huffman string `0` padded with three 0 bits (RFC 7541 §5.2: padding is
    // the EOS prefix, all 1s) is refused for the whole connection, where a well-coded value
    // only makes the list too large.
    let limits = DecodeLimits {
        max_list_bytes: 40,
        max_fields: 128,
    };
    let name = [b'a'; 9];
    let bad = literal_huffman_name(&name, &[0x81, 0x00]);
    assert_eq!(bad.len(), 2 + 6 + 2);
    let err = decode_block(&mut Decoder::new(limits), &bad).unwrap_err();
    assert_eq!(err, HpackError::HuffmanPadding);
    assert!(err.is_connection_error());
    // The same value well padded (`0` and 111), and the name the list can hold.
    let good = literal_huffman_name(&name, &[0x81, 0x07]);
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &good),
        Err(HpackError::HeaderListTooLarge { limit: 40 })
    );
    assert_eq!(
        decode_block(
            &mut Decoder::new(limits),
            &literal_huffman_name(&name[..7], &[0x81, 0x07])
        ),
        Ok(vec![(vec![b'a'; 7], b"0".to_vec())])
    );
}

#[test]
fn a_huffman_name_coded_longer_than_the_room_but_decoding_within_it_is_kept() {
    // `{` has a 15-bit code: 40 of them take 75 octets coded and decode to 40. The room is
    // 100 - 32 = 68: the coded length is over it, the decoded name within it.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let name = [b'{'; 40];
    let block = literal_huffman_name(&name, &[0x00]);
    assert_eq!(block.len(), 2 + 75 + 1);
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block),
        Ok(vec![(name.to_vec(), Vec::new())])
    );
    // The same as a value after the name `a`: 75 octets coded where 67 are left.
    let mut coded = Vec::new();
    huffman_encode(&name, &mut coded);
    let mut block = vec![0x00, 1, b'a', 0x80 | coded.len() as u8];
    block.extend_from_slice(&coded);
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block),
        Ok(vec![(b"a".to_vec(), name.to_vec())])
    );
}

#[test]
fn a_plain_name_longer_than_the_room_is_skipped_as_it_comes() {
    // Room for 68 octets; a plain name of 200 (127 + 73) is certainly too long. Coded with
    // Huffman, 200 octets could decode to 53 and would have to be read whole; plain, none of its
    // octets is kept.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let mut name_200 = vec![0x00, 0x7f, 73];
    name_200.extend_from_slice(&[b'n'; 200]);
    name_200.extend_from_slice(&[1, b'v']);
    // The same for a value of 200 after the name `a` (67 octets left), and for a value of 39
    // after a name of 30 (38 left).
    let mut value_200 = vec![0x00, 1, b'a', 0x7f, 73];
    value_200.extend_from_slice(&[b'v'; 200]);
    let mut value_39 = vec![0x00, 30];
    value_39.extend_from_slice(&[b'n'; 30]);
    value_39.push(39);
    value_39.extend_from_slice(&[b'v'; 39]);
    for (block, cut) in [(name_200, 100), (value_200, 100), (value_39, 50)] {
        let mut d = Decoder::new(limits);
        d.feed(&block[..cut]).unwrap();
        let shown = format!("{d:?}");
        assert!(shown.contains("pending_octets: 0,"), "{shown}");
        d.feed(&block[cut..]).unwrap();
        assert_eq!(
            d.finish(),
            Err(HpackError::HeaderListTooLarge { limit: 100 })
        );
    }
}

#[test]
fn literal_fields_filling_the_list_exactly_are_accepted_one_octet_less_refused() {
    let limits = |max_list_bytes| DecodeLimits {
        max_list_bytes,
        max_fields: 128,
    };
    // Two fields of 1 + 1 + 32 octets: 68 in all.
    let mut two = literal(b"a", b"b");
    two.extend_from_slice(&literal(b"c", b"d"));
    assert_eq!(
        decode_block(&mut Decoder::new(limits(68)), &two),
        Ok(vec![
            (b"a".to_vec(), b"b".to_vec()),
            (b"c".to_vec(), b"d".to_vec())
        ])
    );
    assert_eq!(
        decode_block(&mut Decoder::new(limits(67)), &two),
        Err(HpackError::HeaderListTooLarge { limit: 67 })
    );
    // In 100, room for 68 octets of name and value: a name of 30 and a value of 38, or a name
    // of 68 and no value; a value of 39 is too long.
    let (n30, n68) = ([b'n'; 30], [b'n'; 68]);
    for (name, value) in [(&n30[..], &[b'v'; 38][..]), (&n68[..], &[][..])] {
        assert_eq!(
            decode_block(&mut Decoder::new(limits(100)), &literal(name, value)),
            Ok(vec![(name.to_vec(), value.to_vec())])
        );
    }
    assert_eq!(
        decode_block(&mut Decoder::new(limits(100)), &literal(&n30, &[b'v'; 39])),
        Err(HpackError::HeaderListTooLarge { limit: 100 })
    );
}

#[test]
fn past_the_field_limit_a_fields_value_is_skipped_as_it_comes() {
    // One field allowed. The second, `:path` (static name 4) with a value of 1000 octets
    // (127 + 873), cannot enter the list: its value is passed over, none of it kept, and the
    // list is refused at the end of the block as a stream error.
    let limits = DecodeLimits {
        max_list_bytes: 65536,
        max_fields: 1,
    };
    let mut block = literal(b"a", b"b");
    block.extend_from_slice(&[0x04, 0x7f, 0xe9, 0x06]);
    block.extend_from_slice(&[b'/'; 1000]);
    let mut d = Decoder::new(limits);
    d.feed(&block[..500]).unwrap();
    let shown = format!("{d:?}");
    assert!(shown.contains("pending_octets: 0,"), "{shown}");
    d.feed(&block[500..]).unwrap();
    let err = d.finish().unwrap_err();
    assert!(matches!(err, HpackError::Budget(_)), "{err:?}");
    assert!(!err.is_connection_error());
    // The first field alone is the list.
    assert_eq!(
        decode_block(&mut Decoder::new(limits), &block[..5]),
        Ok(vec![(b"a".to_vec(), b"b".to_vec())])
    );
}

#[test]
fn a_length_of_exactly_its_prefix_maximum_is_encoded_with_a_second_octet() {
    // RFC 7541 §5.1: a value of 2^N - 1 fills the prefix and is followed by a 0 octet. A string
    // of 127 octets has a 7-bit prefix full.
    use mcp_sansio::internals::h2::hpack::Encoder;
    let value = [b'v'; 127];
    let mut out = Vec::new();
    Encoder::new().encode([(&b"x-a"[..], &value[..])], &mut out);
    // A table size update to 0, a literal without indexing with a new name, its name, then the
    // value's length.
    assert_eq!(out[..8], [0x20, 0x00, 3, b'x', b'-', b'a', 0x7f, 0x00]);
    assert_eq!(out.len(), 8 + 127);
    assert_eq!(
        decode_block(&mut Decoder::new(DecodeLimits::default()), &out),
        Ok(vec![(b"x-a".to_vec(), value.to_vec())])
    );
}

#[test]
fn a_table_size_update_evicts_down_to_the_new_size() {
    // Two entries of 1 + 1 + 32 octets; an update to 34 keeps the newest only, one to 0 empties
    // the table, and an entry then finds no room.
    let mut d = Decoder::new(DecodeLimits::default());
    let mut two = indexed_literal(b"a", b"1");
    two.extend_from_slice(&indexed_literal(b"b", b"2"));
    decode_block(&mut d, &two).unwrap();
    assert_eq!(d.table_size(), 68);
    let mut block = size_update(34);
    block.push(0x80 | 62);
    assert_eq!(
        decode_block(&mut d, &block),
        Ok(vec![(b"b".to_vec(), b"2".to_vec())])
    );
    assert_eq!(d.table_size(), 34);
    assert_eq!(
        decode_block(&mut d, &[0x80 | 63]),
        Err(HpackError::InvalidIndex { index: 63 })
    );
    let mut d2 = d.clone();
    assert_eq!(decode_block(&mut d2, &size_update(0)), Ok(Vec::new()));
    assert_eq!(d2.table_size(), 0);
    let mut block = size_update(0);
    block.extend_from_slice(&indexed_literal(b"c", b"3"));
    assert_eq!(decode_block(&mut d, &block).map(|l| l.len()), Ok(1));
    assert_eq!(d.table_size(), 0);
}

#[test]
fn an_indexed_field_too_long_to_read_empties_the_table() {
    // RFC 7541 §4.4: an entry larger than the table empties it. With a table of 100 and a list
    // of 100, a value of 200 is passed over unread, and the table is emptied as if it had been
    // inserted.
    let limits = DecodeLimits {
        max_list_bytes: 100,
        max_fields: 128,
    };
    let mut d = Decoder::with_table_size(100, limits);
    decode_block(&mut d, &indexed_literal(b"a", b"1")).unwrap();
    assert_eq!(d.table_size(), 34);
    let mut block = vec![0x40, 1, b'b', 0x7f, 73];
    block.extend_from_slice(&[b'v'; 200]);
    assert_eq!(
        decode_block(&mut d, &block),
        Err(HpackError::HeaderListTooLarge { limit: 100 })
    );
    assert_eq!(d.table_size(), 0);
    assert_eq!(
        decode_block(&mut d, &[0x80 | 62]),
        Err(HpackError::InvalidIndex { index: 62 })
    );
}
