//! The hostile catalogue's HTTP/2 mode: one scenario per hostile HTTP/2 behaviour, each a
//! server (what it writes first, what it answers each request with) and the typed error the
//! work item must end with. `tests/hostile_h2.rs` runs them in virtual time through an
//! `H2Socket`, whole and in 3-byte pieces, with memory checked.
//!
//! The limits named are the defaults of `H2Config` and the budgets of [`budgets`]; the issue
//! cites nghttp2, Go's x/net/http2 and the `h2` crate for them.
#![allow(dead_code)]

use std::time::Duration;

use mcp_sansio::h2::{H2Error, H2Limit, HpackError};
use mcp_sansio::internals::h2::frame::{Frame, Priority, Reason};
use mcp_sansio::wire::WireError;
use mcp_sansio::{Budget, Budgets, Config, Era, EraHint, Error};

use crate::h2server::{data, frame, hello, rst, H2Peer, SeenRequest};

/// The operation a scenario runs, on a work item connected from a modern era hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H2Op {
    /// `list_tools`.
    List,
    /// `call_tool("t", {"x": "<n octets>"})`.
    Call(usize),
}

/// How the operation must fail (always [`mcp_sansio::ErrorKind::ConnectionFailed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H2Cause {
    /// This budget, with its configured limit.
    Budget(Budget),
    /// This per-socket cap (`H2Error::Limit`).
    Limit(H2Limit),
    /// A protocol or frame error sent with this code (`H2Error::Protocol` / `H2Error::Frame`).
    Protocol(Reason),
    /// A decoded header list over our advertised MAX_HEADER_LIST_SIZE.
    HeaderList,
    /// A COMPRESSION_ERROR (an HPACK error that breaks the table).
    Compression,
    /// A malformed response head (`H2Error::Malformed`).
    Malformed,
    /// A body longer or shorter than its content-length.
    ContentLength,
    /// The server reset the stream with this code.
    Reset(Reason),
    /// The server's GOAWAY shows it never processed the stream.
    GoAway,
    /// Our SETTINGS went unacknowledged.
    SettingsTimeout,
}

impl H2Cause {
    /// Whether `error` is the cause this names, with its configured limit in `b` for a budget.
    pub fn matches(self, error: &Error, b: &Budgets) -> bool {
        let h2 = match error {
            Error::Wire(WireError::Http2(e)) => Some(e),
            _ => None,
        };
        match self {
            H2Cause::Budget(budget) => error
                .budget()
                .is_some_and(|x| x.budget == budget && x.limit == b.limit(budget)),
            H2Cause::Limit(limit) => {
                matches!(h2, Some(H2Error::Limit { limit: l, .. }) if *l == limit)
            }
            H2Cause::Protocol(reason) => matches!(
                h2,
                Some(e @ (H2Error::Protocol { .. } | H2Error::Frame(_))) if e.reason() == reason
            ),
            H2Cause::HeaderList => matches!(
                h2,
                Some(H2Error::Hpack(HpackError::HeaderListTooLarge { .. }))
            ),
            H2Cause::Compression => matches!(
                h2,
                Some(e @ H2Error::Hpack(_)) if e.reason() == Reason::COMPRESSION_ERROR
            ),
            H2Cause::Malformed => matches!(h2, Some(H2Error::Malformed { .. })),
            H2Cause::ContentLength => matches!(h2, Some(H2Error::ContentLength { .. })),
            H2Cause::Reset(reason) => {
                matches!(h2, Some(H2Error::Reset { reason: r }) if *r == reason)
            }
            H2Cause::GoAway => matches!(h2, Some(H2Error::GoAway { .. })),
            H2Cause::SettingsTimeout => {
                matches!(h2, Some(H2Error::SettingsTimeout { ms: 10_000 }))
            }
        }
    }
}

/// One hostile HTTP/2 server.
#[derive(Clone, Debug)]
pub struct H2Scenario {
    /// Unique name.
    pub name: &'static str,
    /// The operation.
    pub op: H2Op,
    /// The work item's budgets.
    pub budgets: Budgets,
    /// What the server writes on every socket before anything else.
    pub prelude: fn(&mut H2Peer) -> Vec<u8>,
    /// Its answer to each complete request.
    pub respond: fn(&mut H2Peer, &SeenRequest) -> Vec<u8>,
    /// The cause the operation fails with.
    pub expect: H2Cause,
    /// Requests the server must have seen over every socket (a retry is the second).
    pub requests: usize,
    /// Virtual time the run may take at most.
    pub within: Duration,
}

impl H2Scenario {
    /// The configuration of the scenario's work item, to `url`: the scenario's budgets and a
    /// modern era hint, so the work item connects without a request.
    pub fn config(&self, url: &str) -> Config {
        let mut config = Config::new(url).unwrap();
        config.budgets = self.budgets.clone();
        config.era_hint = Some(EraHint {
            era: Era::Modern,
            version: "2026-07-28".into(),
        });
        config
    }
}

/// The budgets of the HTTP/2 catalogue: those of the HTTP/1.1 catalogue.
pub fn budgets() -> Budgets {
    let mut b = Budgets::default();
    b.response_bytes = 1024 * 1024;
    b.header_block_bytes = 8 * 1024;
    b.header_count = 64;
    b.informational_responses = 8;
    b.responses_per_request = 4;
    b
}

fn head_200(p: &mut H2Peer, sid: u32) -> Vec<u8> {
    p.headers(
        sid,
        &[(":status", "200"), ("content-type", "application/json")],
        false,
    )
}

fn repeat(n: usize, f: impl Fn(usize) -> Vec<u8>) -> Vec<u8> {
    (0..n).flat_map(f).collect()
}

/// An HPACK integer with an `n`-bit prefix and the given high `flags`.
fn hpack_int(flags: u8, n: u32, mut v: usize, out: &mut Vec<u8>) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A literal field with incremental indexing and a new name.
fn literal_indexed(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.push(0x40);
    hpack_int(0, 7, name.len(), out);
    out.extend_from_slice(name);
    hpack_int(0, 7, value.len(), out);
    out.extend_from_slice(value);
}

fn headers_frame(sid: u32, fragment: Vec<u8>, end_headers: bool) -> Vec<u8> {
    frame(Frame::Headers {
        stream_id: sid,
        end_stream: false,
        end_headers,
        priority: None,
        fragment,
        pad_len: None,
    })
}

fn none(_: &mut H2Peer) -> Vec<u8> {
    Vec::new()
}

fn silent(_: &mut H2Peer, _: &SeenRequest) -> Vec<u8> {
    Vec::new()
}

/// The catalogue.
pub fn scenarios() -> Vec<H2Scenario> {
    let b = budgets();
    let two_min = Duration::from_secs(120);
    let s = |name, op, respond: fn(&mut H2Peer, &SeenRequest) -> Vec<u8>, expect, requests| {
        H2Scenario {
            name,
            op,
            budgets: b.clone(),
            prelude: |_| hello(),
            respond,
            expect,
            requests,
            within: two_min,
        }
    };
    let mut v = vec![
        // CONTINUATION flood (CVE-2024-27316 family): a header block that never ends.
        s(
            "continuation_flood",
            H2Op::List,
            |p, r| {
                let block = p.block(&[(":status", "200")]);
                let mut out = headers_frame(r.stream, block, false);
                out.extend(repeat(50, |_| {
                    frame(Frame::Continuation {
                        stream_id: r.stream,
                        end_headers: false,
                        fragment: Vec::new(),
                    })
                }));
                out
            },
            H2Cause::Limit(H2Limit::ContinuationFrames),
            1,
        ),
        s(
            "continuation_block_bytes",
            H2Op::List,
            |_, r| {
                let mut out = headers_frame(r.stream, vec![0x88], false);
                out.extend(repeat(4, |_| {
                    frame(Frame::Continuation {
                        stream_id: r.stream,
                        end_headers: false,
                        fragment: vec![0x88; 16_000],
                    })
                }));
                out
            },
            H2Cause::Budget(Budget::HeaderBlock),
            1,
        ),
        s(
            "continuation_interleaved",
            H2Op::List,
            |p, r| {
                let block = p.block(&[(":status", "200")]);
                let mut out = headers_frame(r.stream, block, false);
                out.extend(frame(Frame::Ping {
                    ack: false,
                    data: [0; 8],
                }));
                out
            },
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        // HPACK bomb: one 4000-octet entry, referenced 30 times (120 KB decoded from 4 KB).
        s(
            "hpack_bomb",
            H2Op::List,
            |_, r| {
                let mut block = vec![0x88];
                literal_indexed(b"x-bomb", &[b'a'; 4000], &mut block);
                block.extend(std::iter::repeat_n(0xbe, 30)); // indexed, dynamic entry 62
                headers_frame(r.stream, block, true)
            },
            H2Cause::HeaderList,
            1,
        ),
        s(
            "hpack_table_size_above_4096",
            H2Op::List,
            |_, r| {
                let mut block = Vec::new();
                hpack_int(0x20, 5, 65_536, &mut block);
                block.push(0x88);
                headers_frame(r.stream, block, true)
            },
            H2Cause::Compression,
            1,
        ),
        s(
            "hpack_field_count",
            H2Op::List,
            |_, r| {
                let mut block = vec![0x88];
                block.extend(std::iter::repeat_n(0x9f, 200)); // `content-type:` (static 31)
                headers_frame(r.stream, block, true)
            },
            H2Cause::Budget(Budget::HeaderCount),
            1,
        ),
        // SETTINGS and PING floods: each owes an acknowledgement; the queue is capped.
        s(
            "settings_flood",
            H2Op::List,
            |_, _| {
                repeat(10_000, |_| {
                    frame(Frame::Settings {
                        ack: false,
                        settings: Vec::new(),
                    })
                })
            },
            H2Cause::Limit(H2Limit::ControlOutput),
            1,
        ),
        s(
            "settings_too_many_in_one_frame",
            H2Op::List,
            |_, _| {
                frame(Frame::Settings {
                    ack: false,
                    settings: (0..40).map(|i| (0x100 + i, 1)).collect(),
                })
            },
            H2Cause::Protocol(Reason::ENHANCE_YOUR_CALM),
            1,
        ),
        s(
            "ping_flood",
            H2Op::List,
            |_, _| {
                repeat(5_000, |i| {
                    frame(Frame::Ping {
                        ack: false,
                        data: (i as u64).to_be_bytes(),
                    })
                })
            },
            H2Cause::Limit(H2Limit::ControlOutput),
            1,
        ),
        // WINDOW_UPDATE abuse.
        s(
            "window_update_overflow",
            H2Op::List,
            |_, _| {
                frame(Frame::WindowUpdate {
                    stream_id: 0,
                    increment: 0x7fff_ffff,
                })
            },
            H2Cause::Protocol(Reason::FLOW_CONTROL_ERROR),
            1,
        ),
        s(
            "window_update_zero",
            H2Op::List,
            |_, _| {
                frame(Frame::WindowUpdate {
                    stream_id: 0,
                    increment: 0,
                })
            },
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        // 1-byte DATA frames with 200 octets of padding: every octet charged.
        s(
            "empty_data_flood",
            H2Op::List,
            |p, r| {
                let mut out = head_200(p, r.stream);
                out.extend(repeat(200, |_| data(r.stream, b"", false)));
                out
            },
            H2Cause::Limit(H2Limit::EmptyDataFrames),
            1,
        ),
        s(
            "priority_flood",
            H2Op::List,
            |_, r| {
                let sid = r.stream;
                repeat(200, |_| {
                    frame(Frame::Priority {
                        stream_id: sid,
                        priority: Priority {
                            exclusive: false,
                            dependency: 0,
                            weight: 16,
                        },
                    })
                })
            },
            H2Cause::Limit(H2Limit::PriorityFrames),
            1,
        ),
        s(
            "unknown_frame_flood",
            H2Op::List,
            |_, _| {
                repeat(200, |_| {
                    frame(Frame::Unknown {
                        kind: 0x20,
                        flags: 0,
                        stream_id: 0,
                        payload: vec![0; 8],
                    })
                })
            },
            H2Cause::Limit(H2Limit::UnknownFrames),
            1,
        ),
        // RST_STREAM(REFUSED_STREAM): retried once on a fresh socket under a new id; refused
        // again there, the broken stream is re-issued (2026-07-28) with a new id each time,
        // until `responses_per_request` sendings.
        s(
            "refused_stream_every_time",
            H2Op::Call(2),
            |_, r| rst(r.stream, Reason::REFUSED_STREAM),
            H2Cause::Budget(Budget::ResponsesPerRequest),
            4,
        ),
        // Every stream reset before its head: a broken stream, re-issued (2026-07-28) with a
        // new id each time, until `responses_per_request` sendings.
        s(
            "reset_internal_error",
            H2Op::Call(2),
            |_, r| rst(r.stream, Reason::INTERNAL_ERROR),
            H2Cause::Budget(Budget::ResponsesPerRequest),
            4,
        ),
        // Every answer begun (a head and an event-stream comment), then its stream reset: a
        // broken stream, re-issued (2026-07-28) with a new id each time, until
        // `responses_per_request` sendings.
        s(
            "reset_mid_answer",
            H2Op::Call(2),
            |p, r| {
                let fields = [(":status", "200"), ("content-type", "text/event-stream")];
                let mut out = p.headers(r.stream, &fields, false);
                out.extend(data(r.stream, b": working\n\n", false));
                out.extend(rst(r.stream, Reason::INTERNAL_ERROR));
                out
            },
            H2Cause::Budget(Budget::ResponsesPerRequest),
            4,
        ),
        // GOAWAY loops: every socket goes away below the stream; retried on a fresh socket,
        // then re-issued (each on a fresh socket, since the old one goes away), until
        // `responses_per_request` sendings.
        s(
            "goaway_loop",
            H2Op::Call(2),
            |_, _| {
                frame(Frame::GoAway {
                    last_stream_id: 0,
                    reason: Reason::NO_ERROR,
                    debug: Vec::new(),
                })
            },
            H2Cause::Budget(Budget::ResponsesPerRequest),
            4,
        ),
        s(
            "goaway_rising_last_stream_id",
            H2Op::List,
            |_, r| {
                let g = |last| {
                    frame(Frame::GoAway {
                        last_stream_id: last,
                        reason: Reason::NO_ERROR,
                        debug: Vec::new(),
                    })
                };
                let mut out = g(r.stream);
                out.extend(g(r.stream + 2));
                out
            },
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        s(
            "push_promise_while_disabled",
            H2Op::List,
            |p, r| {
                let fragment = p.block(&[(":method", "GET"), (":path", "/x")]);
                frame(Frame::PushPromise {
                    stream_id: r.stream,
                    end_headers: true,
                    promised_stream_id: 2,
                    fragment,
                    pad_len: None,
                })
            },
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        s(
            "frame_larger_than_16384",
            H2Op::List,
            |p, r| {
                let mut out = head_200(p, r.stream);
                out.extend(data(r.stream, &[b' '; 20_000], false));
                out
            },
            H2Cause::Protocol(Reason::FRAME_SIZE_ERROR),
            1,
        ),
        s(
            "headers_on_an_even_stream",
            H2Op::List,
            |p, _| p.headers(2, &[(":status", "200")], false),
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        s(
            "data_on_stream_zero",
            H2Op::List,
            |_, _| data(0, b"x", false),
            H2Cause::Protocol(Reason::PROTOCOL_ERROR),
            1,
        ),
        s(
            "informational_flood",
            H2Op::List,
            |_, r| repeat(20, |_| p_headers_100(r.stream)),
            H2Cause::Budget(Budget::InformationalResponses),
            1,
        ),
        s(
            "switching_protocols",
            H2Op::List,
            |p, r| p.headers(r.stream, &[(":status", "101")], false),
            H2Cause::Malformed,
            1,
        ),
        s(
            "content_length_mismatch",
            H2Op::List,
            |p, r| {
                let mut out = p.headers(
                    r.stream,
                    &[
                        (":status", "200"),
                        ("content-type", "application/json"),
                        ("content-length", "100"),
                    ],
                    false,
                );
                out.extend(data(r.stream, b"{}", true));
                out
            },
            H2Cause::ContentLength,
            1,
        ),
        s(
            "uppercase_header_name",
            H2Op::List,
            |p, r| {
                p.headers(
                    r.stream,
                    &[(":status", "200"), ("Content-Type", "application/json")],
                    false,
                )
            },
            H2Cause::Malformed,
            1,
        ),
        s(
            "connection_specific_header",
            H2Op::List,
            |p, r| {
                p.headers(
                    r.stream,
                    &[(":status", "200"), ("connection", "keep-alive")],
                    false,
                )
            },
            H2Cause::Malformed,
            1,
        ),
    ];
    // 1-byte DATA frames with 200 octets of padding: every octet charged.
    let mut padded = s(
        "one_byte_data_with_padding",
        H2Op::List,
        |p, r| {
            let mut out = head_200(p, r.stream);
            out.extend(repeat(1000, |_| {
                frame(Frame::Data {
                    stream_id: r.stream,
                    end_stream: false,
                    data: vec![b' '],
                    pad_len: Some(200),
                })
            }));
            out
        },
        H2Cause::Budget(Budget::ResponseBytes),
        1,
    );
    padded.budgets.response_bytes = 64 * 1024;
    v.push(padded);
    // A flood of PINGs over a small per-socket ledger.
    let mut ledger = s(
        "ping_flood_over_the_socket_ledger",
        H2Op::List,
        |_, _| {
            repeat(300, |_| {
                frame(Frame::Ping {
                    ack: false,
                    data: [1; 8],
                })
            })
        },
        H2Cause::Budget(Budget::H2SocketBytes),
        1,
    );
    ledger.budgets.h2_socket_bytes = 4096;
    v.push(ledger);
    // A drip that lives on useful work: every listing page is answered (a completed stream gives
    // the socket's ledger back 1/256 of it, 16 octets; its window credit gives back nothing, no
    // WINDOW_UPDATE was charged), but each answer carries 20 PINGs (340 octets) before its end.
    // The ledger drains by 324 octets a page and ends the socket long before the listing's page
    // budget.
    let mut drip = s(
        "ping_drip_with_every_page",
        H2Op::List,
        |p, r| {
            let id = r.rpc_id();
            let page = format!(
                r#"{{"tools":[{{"name":"t{id}","inputSchema":{{"type":"object"}}}}],"nextCursor":"c{id}"}}"#
            );
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{page}}}"#);
            let mut out = head_200(p, r.stream);
            out.extend(repeat(20, |i| {
                frame(Frame::Ping {
                    ack: false,
                    data: (i as u64).to_be_bytes(),
                })
            }));
            out.extend(data(r.stream, body.as_bytes(), true));
            out
        },
        H2Cause::Budget(Budget::H2SocketBytes),
        13,
    );
    drip.budgets.h2_socket_bytes = 4096;
    v.push(drip);
    // A header list over our advertised 65536 octets, in a block the block budget allows.
    let mut list = s(
        "header_list_over_our_size",
        H2Op::List,
        |p, r| {
            let value = "v".repeat(1000);
            let names: Vec<String> = (0..70).map(|i| format!("x-pad-{i}")).collect();
            let mut fields = vec![(":status", "200")];
            fields.extend(names.iter().map(|n| (n.as_str(), value.as_str())));
            let block = p.block(&fields);
            let mut chunks = block.chunks(16_000).peekable();
            let first = chunks.next().unwrap().to_vec();
            let mut out = headers_frame(r.stream, first, chunks.peek().is_none());
            while let Some(c) = chunks.next() {
                out.extend(frame(Frame::Continuation {
                    stream_id: r.stream,
                    end_headers: chunks.peek().is_none(),
                    fragment: c.to_vec(),
                }));
            }
            out
        },
        H2Cause::HeaderList,
        1,
    );
    list.budgets.header_block_bytes = 256 * 1024;
    list.budgets.header_count = 128;
    v.push(list);
    // Our request body stalls on a window the server never reopens: ends at the call budget.
    let mut stall = s(
        "zero_window_stalls_the_request_body",
        H2Op::Call(100_000),
        silent,
        H2Cause::Budget(Budget::CallTime),
        0,
    );
    stall.budgets.call_time = Duration::from_secs(20);
    stall.within = Duration::from_secs(20);
    v.push(stall);
    // Our SETTINGS are never acknowledged: the connection fails after 10 s.
    v.push(H2Scenario {
        name: "settings_not_acknowledged",
        op: H2Op::List,
        budgets: b.clone(),
        prelude: |_| {
            frame(Frame::Settings {
                ack: false,
                settings: Vec::new(),
            })
        },
        respond: silent,
        expect: H2Cause::SettingsTimeout,
        requests: 1,
        within: Duration::from_secs(10),
    });
    v.push(H2Scenario {
        name: "nothing_at_all",
        op: H2Op::List,
        budgets: b,
        prelude: none,
        respond: silent,
        expect: H2Cause::SettingsTimeout,
        requests: 1,
        within: Duration::from_secs(10),
    });
    v
}

fn p_headers_100(sid: u32) -> Vec<u8> {
    let mut p = H2Peer::default();
    p.headers(sid, &[(":status", "100")], false)
}
