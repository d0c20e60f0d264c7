//! A scripted HTTP/2 server in virtual time, written with the crate's own frame codec and HPACK
//! encoder and decoder, and a driver for an `H2Socket` and its work items.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use mcp_sansio::h2::H2Error;
use mcp_sansio::internals::h2::client::PREFACE;
use mcp_sansio::internals::h2::frame::{Decoded, Frame, FrameDecoder, Reason};
use mcp_sansio::internals::h2::hpack::{DecodeLimits, Decoder, Encoder};
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Event, Instant};

/// How server bytes are fed to the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// In one piece per server turn.
    Whole,
    /// In pieces of this many bytes.
    Chunks(usize),
}

/// A request the client sent on a stream, decoded back.
#[derive(Clone, Debug, Default)]
pub struct SeenRequest {
    pub stream: u32,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl SeenRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The JSON-RPC method, or the HTTP method of a body-less request.
    pub fn rpc_method(&self) -> String {
        if self.body.is_empty() {
            return self.header(":method").unwrap_or("").to_owned();
        }
        self.json()["method"].as_str().unwrap_or("").to_owned()
    }

    pub fn rpc_id(&self) -> u64 {
        self.json()["id"].as_u64().unwrap_or(0)
    }
}

/// The server: reads what the client wrote, writes frames.
pub struct H2Peer {
    enc: Encoder,
    dec: Decoder,
    reader: FrameDecoder,
    preface_seen: usize,
    open: HashMap<u32, SeenRequest>,
    block: Vec<u8>,
    /// Every frame the client sent, in order.
    pub frames: Vec<Frame>,
    /// Every request completed, in order.
    pub requests: Vec<SeenRequest>,
}

impl Default for H2Peer {
    fn default() -> Self {
        H2Peer {
            enc: Encoder::new(),
            dec: Decoder::new(DecodeLimits::default()),
            reader: FrameDecoder::new(),
            preface_seen: 0,
            open: HashMap::new(),
            block: Vec::new(),
            frames: Vec::new(),
            requests: Vec::new(),
        }
    }
}

impl H2Peer {
    /// Reads client bytes; returns the requests they completed (END_STREAM seen).
    pub fn read(&mut self, bytes: &[u8]) -> Vec<SeenRequest> {
        let mut rest = bytes;
        if self.preface_seen < PREFACE.len() {
            let n = (PREFACE.len() - self.preface_seen).min(rest.len());
            assert_eq!(
                &rest[..n],
                &PREFACE[self.preface_seen..self.preface_seen + n]
            );
            self.preface_seen += n;
            rest = &rest[n..];
        }
        let mut done = Vec::new();
        while !rest.is_empty() {
            let Some(Decoded { frame, .. }) = self.reader.decode(&mut rest).expect("client frame")
            else {
                break;
            };
            self.frames.push(frame.clone());
            match frame {
                Frame::Headers {
                    stream_id,
                    end_stream,
                    end_headers,
                    fragment,
                    ..
                } => {
                    self.block = fragment;
                    self.open.insert(
                        stream_id,
                        SeenRequest {
                            stream: stream_id,
                            ..SeenRequest::default()
                        },
                    );
                    if end_headers {
                        self.end_block(stream_id);
                    }
                    if end_stream {
                        done.extend(self.open.remove(&stream_id));
                    }
                }
                Frame::Continuation {
                    stream_id,
                    end_headers,
                    fragment,
                } => {
                    self.block.extend_from_slice(&fragment);
                    if end_headers {
                        self.end_block(stream_id);
                    }
                }
                Frame::Data {
                    stream_id,
                    end_stream,
                    data,
                    ..
                } => {
                    if let Some(r) = self.open.get_mut(&stream_id) {
                        r.body.extend_from_slice(&data);
                    }
                    if end_stream {
                        done.extend(self.open.remove(&stream_id));
                    }
                }
                Frame::RstStream { stream_id, .. } => {
                    self.open.remove(&stream_id);
                }
                _ => {}
            }
        }
        self.requests.extend(done.iter().cloned());
        done
    }

    fn end_block(&mut self, stream_id: u32) {
        let block = std::mem::take(&mut self.block);
        let fields = self.dec.decode_block(&block).expect("client HPACK");
        if let Some(r) = self.open.get_mut(&stream_id) {
            r.headers = fields
                .into_iter()
                .map(|h| {
                    (
                        String::from_utf8(h.name).unwrap(),
                        String::from_utf8(h.value).unwrap(),
                    )
                })
                .collect();
        }
    }

    /// An encoded header block.
    pub fn block(&mut self, fields: &[(&str, &str)]) -> Vec<u8> {
        let mut b = Vec::new();
        self.enc.encode(
            fields.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes())),
            &mut b,
        );
        b
    }

    /// A HEADERS frame with `fields`.
    pub fn headers(&mut self, sid: u32, fields: &[(&str, &str)], end_stream: bool) -> Vec<u8> {
        let fragment = self.block(fields);
        frame(Frame::Headers {
            stream_id: sid,
            end_stream,
            end_headers: true,
            priority: None,
            fragment,
            pad_len: None,
        })
    }

    /// A complete response: status, content type, body.
    pub fn response(&mut self, sid: u32, status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
        let status = status.to_string();
        let mut fields = vec![(":status", status.as_str())];
        if !content_type.is_empty() {
            fields.push(("content-type", content_type));
        }
        let mut out = self.headers(sid, &fields, body.is_empty());
        if !body.is_empty() {
            out.extend(data(sid, body, true));
        }
        out
    }

    /// A 200 JSON response.
    pub fn json(&mut self, sid: u32, body: &str) -> Vec<u8> {
        self.response(sid, 200, "application/json", body.as_bytes())
    }

    /// A 200 response of `content_type` that carries the legacy session id `session`, its
    /// `body` in one DATA frame after the HEADERS.
    pub fn with_session(
        &mut self,
        sid: u32,
        content_type: &str,
        session: &str,
        body: &[u8],
    ) -> Vec<u8> {
        let fields = [
            (":status", "200"),
            ("content-type", content_type),
            ("mcp-session-id", session),
        ];
        let mut out = self.headers(sid, &fields, false);
        out.extend(data(sid, body, true));
        out
    }

    /// The answer of the legacy `initialize` request `r`: a JSON result choosing protocol
    /// version 2025-06-18, with no capabilities.
    pub fn legacy_initialize(&mut self, r: &SeenRequest) -> Vec<u8> {
        let body = result(
            r.rpc_id(),
            r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#,
        );
        self.json(r.stream, &body)
    }

    /// The answer of the call `r` by an event stream on its stream: a progress notification for
    /// the call's progress token (1 of 2, event id 1), then the call's result `done` (event id
    /// 2), which ends the stream; in two DATA frames after the HEADERS.
    pub fn progress_then_result(&mut self, r: &SeenRequest, done: &str) -> Vec<u8> {
        let sid = r.stream;
        let token = r.json()["params"]["_meta"]["progressToken"].clone();
        let progress = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1,"total":2}}}}"#
        );
        let mut out = self.headers(
            sid,
            &[(":status", "200"), ("content-type", "text/event-stream")],
            false,
        );
        out.extend(data(
            sid,
            format!("id: 1\ndata: {progress}\n\n").as_bytes(),
            false,
        ));
        let done = result(r.rpc_id(), done);
        out.extend(data(
            sid,
            format!("id: 2\ndata: {done}\n\n").as_bytes(),
            true,
        ));
        out
    }
}

/// One frame, encoded.
pub fn frame(f: Frame) -> Vec<u8> {
    let mut out = Vec::new();
    f.encode(&mut out);
    out
}

/// A DATA frame.
pub fn data(sid: u32, d: &[u8], end_stream: bool) -> Vec<u8> {
    frame(Frame::Data {
        stream_id: sid,
        end_stream,
        data: d.to_vec(),
        pad_len: None,
    })
}

/// The server's SETTINGS (empty) and its acknowledgement of ours.
pub fn hello() -> Vec<u8> {
    let mut out = frame(Frame::Settings {
        ack: false,
        settings: Vec::new(),
    });
    out.extend(frame(Frame::Settings {
        ack: true,
        settings: Vec::new(),
    }));
    out
}

/// RST_STREAM.
pub fn rst(sid: u32, reason: Reason) -> Vec<u8> {
    frame(Frame::RstStream {
        stream_id: sid,
        reason,
    })
}

/// A JSON-RPC result for request `id`.
pub fn result(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

/// What one run saw.
#[derive(Debug, Default)]
pub struct Run {
    /// Every work item's events, in order.
    pub events: Vec<(WorkId, Event)>,
    /// Connection errors `handle_bytes` returned.
    pub socket_errors: Vec<H2Error>,
    /// Requests that had to go on another socket.
    pub fresh: Vec<(WorkId, mcp_sansio::Transmit)>,
    /// The virtual time the run ended at.
    pub ended: Instant,
    /// Steps taken.
    pub steps: u32,
}

impl Run {
    /// A line per event, without exchange ids' values mattering for splits.
    pub fn summary(&self) -> Vec<String> {
        self.events
            .iter()
            .map(|(w, e)| format!("{}:{}", w.0, summarize(e)))
            .collect()
    }
}

/// A stable one-line description of an event.
pub fn summarize(e: &Event) -> String {
    match e {
        Event::Connected { era, version, .. } => format!("Connected {era:?} {version}"),
        Event::ToolsListed(c) => format!(
            "ToolsListed {:?}",
            c.tools
                .iter()
                .map(|t| t.name().to_owned())
                .collect::<Vec<_>>()
        ),
        Event::CallFinished(r) => format!("CallFinished error={}", r.is_error),
        Event::Failed { operation, error } => format!("Failed {operation:?} {error}"),
        Event::ExchangeFinished { exchange, .. } => format!("Finished {}", exchange.0),
        Event::ExchangeAbandoned { exchange } => format!("Abandoned {}", exchange.0),
        other => format!("{other:?}"),
    }
}

/// Drives `socket` against `respond` (the server's answer to each complete request, given the
/// peer to write frames with) until nothing moves and no work item is busy, or until `max_time`
/// of virtual time. `prelude` is what the server writes first (usually [`hello`]).
pub fn drive(
    socket: &mut H2Socket,
    peer: &mut H2Peer,
    now: &mut Instant,
    split: Split,
    prelude: Vec<u8>,
    max_time: Duration,
    respond: impl FnMut(&mut H2Peer, &SeenRequest) -> Vec<u8>,
) -> Run {
    drive_metered(
        socket,
        peer,
        now,
        split,
        prelude,
        max_time,
        respond,
        &|_| {},
    )
}

/// [`drive`], calling `meter(true)` before every call into the client and `meter(false)` after,
/// so that a counting allocator can tell the client's allocations from the server's.
#[allow(clippy::too_many_arguments)]
pub fn drive_metered(
    socket: &mut H2Socket,
    peer: &mut H2Peer,
    now: &mut Instant,
    split: Split,
    prelude: Vec<u8>,
    max_time: Duration,
    mut respond: impl FnMut(&mut H2Peer, &SeenRequest) -> Vec<u8>,
    meter: &dyn Fn(bool),
) -> Run {
    let start = *now;
    let mut run = Run::default();
    let mut out = prelude;
    loop {
        run.steps += 1;
        assert!(run.steps < 3_000_000, "the run does not end");
        let mut moved = false;
        loop {
            meter(true);
            let bytes = socket.poll_transmit(*now);
            meter(false);
            let Some(bytes) = bytes else { break };
            moved = true;
            for req in peer.read(&bytes) {
                out.extend(respond(peer, &req));
            }
        }
        while let Some(f) = socket.poll_fresh() {
            run.fresh.push(f);
        }
        loop {
            meter(true);
            let e = socket.poll_event(*now);
            meter(false);
            let Some(e) = e else { break };
            moved = true;
            run.events.push(e);
        }
        if !out.is_empty() && !socket.is_closed() {
            let bytes = std::mem::take(&mut out);
            let n = match split {
                Split::Whole => bytes.len().max(1),
                Split::Chunks(n) => n,
            };
            for piece in bytes.chunks(n) {
                run.steps += 1;
                meter(true);
                let r = socket.handle_bytes(*now, piece);
                meter(false);
                if let Err(e) = r {
                    run.socket_errors.push(e);
                    break;
                }
            }
            continue;
        }
        out.clear();
        if moved {
            continue;
        }
        if !run.fresh.is_empty() {
            break; // a request waits for another socket: the caller moves its work item
        }
        match socket.poll_timeout() {
            Some(t) if t.saturating_since(start) <= max_time => {
                *now = t.max(*now);
                meter(true);
                socket.handle_timeout(*now);
                meter(false);
            }
            _ => break,
        }
    }
    run.ended = *now;
    run
}
