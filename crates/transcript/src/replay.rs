//! Replay: a fresh [`Connection`] driven from a transcript on a virtual clock, with no socket.
//!
//! [`replay()`] is the one replay driver. `docs/transcripts.md` describes what it does; in short:
//!
//! 1. the clock starts at [`Instant::ZERO`] and moves to each entry's offset; every deadline the
//!    connection reports ([`Connection::poll_timeout`]) on the way is fired with
//!    [`Connection::handle_timeout`], as an adapter would; a recorded `timeout` entry fires at its
//!    offset;
//! 2. operations are started; response bytes, end of stream and transport errors are fed to their
//!    exchange unless the connection already finished or abandoned it (an adapter stops reading
//!    such a socket); response bytes are fed in the [`Split`] asked for;
//! 3. after every input, all outputs are drained.
//!
//! The replay is itself recorded with a [`Recorder`], the way an adapter records a live run
//! ([`Replay::recording`]), and [`Replay::check`] compares a replay with the transcript it came
//! from: the requests byte for byte (after redaction), then the events.
//!
//! An HTTP/2 session (`config http 2`) is replayed the same way through one work item on a
//! fresh [`H2Socket`](mcp_sansio::mux::H2Socket) per recorded `open`: the work item
//! moves onto each new socket with the requests that waited for it, recorded reads are fed to
//! the socket in use (until it closes) in the [`Split`] asked for, and after every input the
//! socket's outputs are drained (bytes written, requests for a fresh socket, events). A recorded
//! `timeout` that answered the deadline the replay has just fired is not fired twice. The check
//! then compares what the core wrote on each socket, after redaction: the preface, then each
//! stream's frames in order (stream 0 being the connection's), byte for byte; how frames of
//! different streams interleave and how they were grouped into writes is not compared
//! ([`crate::h2`]).

use std::collections::HashSet;

use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{ConfigError, TransportError};
use mcp_sansio::{Connection, Event, ExchangeId, Instant};
use serde_json::Value;

use crate::escape::escape;
use crate::h2replay::{check_writes, replay_h2};
use crate::model::{Entry, Record, Sent, Transcript};
use crate::recorder::Recorder;
use crate::redact::redact_request;
use crate::summary::{event_summary, is_lifecycle};

/// How a replay feeds recorded response bytes to the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Each recorded piece as one `handle_bytes` call, as recorded (the whole recording).
    Recorded,
    /// Each recorded piece cut into pieces of at most this many bytes (`Pieces(1)`: byte by byte;
    /// 0 counts as 1).
    Pieces(usize),
    /// Adjacent recorded pieces of the same exchange merged into one call, at the later offset.
    Merged,
}

impl Split {
    /// One byte per `handle_bytes` call.
    pub const BYTE_BY_BYTE: Split = Split::Pieces(1);

    /// The splits besides [`Split::Recorded`] in which every fixture must give the same outcome:
    /// byte by byte, pieces of 2, 3, 7 and 64 bytes, and adjacent pieces merged.
    pub const OTHERS: [Split; 6] = [
        Split::Pieces(1),
        Split::Pieces(2),
        Split::Pieces(3),
        Split::Pieces(7),
        Split::Pieces(64),
        Split::Merged,
    ];
}

/// What [`replay()`] made a fresh connection do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The requests sent, in order: exchange, `fresh` flag and the redacted bytes (none for an
    /// HTTP/2 session).
    pub sends: Vec<Sent>,
    /// HTTP/2: what the core wrote, in order: the socket and the redacted bytes of each
    /// [`H2Socket::poll_transmit`](mcp_sansio::mux::H2Socket::poll_transmit) (none
    /// for an HTTP/1.1 connection).
    pub writes: Vec<(u64, Vec<u8>)>,
    /// The summaries of every event, lifecycle events included.
    pub events: Vec<Value>,
    /// The replay itself, recorded with a [`Recorder`] the way an adapter records a live run.
    pub recording: Transcript,
}

impl Replay {
    /// The events without the exchange lifecycle events ([`Transcript::outcome`]'s form).
    pub fn outcome(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|v| !is_lifecycle(v))
            .cloned()
            .collect()
    }

    /// Compares this replay with the transcript it replayed: every request must equal the
    /// recorded one, in order, byte for byte (exchange and `fresh` flag included), then the
    /// events must equal the recorded ones — all of them when the transcript holds lifecycle
    /// events (as every [`Recorder`] transcript does), else its outcome. Describes the first
    /// difference.
    pub fn check(&self, transcript: &Transcript) -> Result<(), Mismatch> {
        check_writes(&transcript.h2_writes(), &self.writes)?;
        let want = transcript.sends();
        for (n, (w, g)) in want.iter().zip(&self.sends).enumerate() {
            if w != g {
                let at = w.2.iter().zip(&g.2).position(|(a, b)| a != b);
                let at = at.unwrap_or(w.2.len().min(g.2.len()));
                let from = at.saturating_sub(60);
                let around = |b: &[u8]| escape(&b[from.min(b.len())..(at + 60).min(b.len())]);
                return Err(Mismatch::Request {
                    number: n + 1,
                    at,
                    recorded: format!("exchange {} fresh {}: ...{}...", w.0, w.1, around(&w.2)),
                    sent: format!("exchange {} fresh {}: ...{}...", g.0, g.1, around(&g.2)),
                });
            }
        }
        if want.len() != self.sends.len() {
            return Err(Mismatch::RequestCount {
                recorded: want.len(),
                sent: self.sends.len(),
                first_extra: self
                    .sends
                    .get(want.len())
                    .map_or(String::from("-"), |s| escape(&s.2)),
            });
        }
        let recorded = transcript.events();
        let (want, got) = if recorded.iter().any(is_lifecycle) {
            (recorded, self.events.clone())
        } else {
            (transcript.outcome(), self.outcome())
        };
        if want != got {
            let pos = want.iter().zip(&got).position(|(a, b)| a != b);
            let pos = pos.unwrap_or(want.len().min(got.len()));
            return Err(Mismatch::Event {
                number: pos + 1,
                recorded: want.get(pos).map_or("-".into(), Value::to_string),
                got: got.get(pos).map_or("-".into(), Value::to_string),
                recorded_count: want.len(),
                got_count: got.len(),
            });
        }
        Ok(())
    }
}

/// The first difference between a replay and its transcript ([`Replay::check`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// A request differs from the recorded one.
    #[error("request {number} differs at byte {at}:\n  recorded: {recorded}\n  sent:     {sent}")]
    Request {
        /// Which request, from 1.
        number: usize,
        /// The offset of the first differing byte.
        at: usize,
        /// The recorded request around that byte (escaped).
        recorded: String,
        /// The replayed request around that byte (escaped).
        sent: String,
    },
    /// More or fewer requests were sent than recorded.
    #[error("{recorded} requests recorded, {sent} sent (first extra: {first_extra})")]
    RequestCount {
        /// How many were recorded.
        recorded: usize,
        /// How many were sent.
        sent: usize,
        /// The first request sent beyond the recorded ones (escaped), or `-`.
        first_extra: String,
    },
    /// HTTP/2: what the core wrote on a socket differs from what was recorded (after
    /// redaction; compared per stream, see [`replay()`]).
    #[error(
        "socket {socket}, {place}, written differs:\n  recorded: {recorded}\n  written:  {written}"
    )]
    Write {
        /// The socket, from 1.
        socket: u64,
        /// Where: the preface, `stream S, frame N`, or an incomplete last frame.
        place: String,
        /// The recorded frame (escaped), or `-`.
        recorded: String,
        /// The replay's frame (escaped), or `-`.
        written: String,
    },
    /// An event differs, or the number of events.
    #[error(
        "outcome differs at event {number}:\n  recorded: {recorded}\n  got:      {got}\n  \
         ({recorded_count} events recorded, {got_count} got)"
    )]
    Event {
        /// Which event, from 1.
        number: usize,
        /// The recorded summary, or `-`.
        recorded: String,
        /// The replayed summary, or `-`.
        got: String,
        /// How many events were recorded.
        recorded_count: usize,
        /// How many the replay gave.
        got_count: usize,
    },
}

/// Replays `transcript` against a fresh [`Connection`] on a virtual clock starting at
/// [`Instant::ZERO`], feeding its response bytes in `split` (see the [module](self) docs).
///
/// Fails only when the transcript's configuration is refused.
pub fn replay(transcript: &Transcript, split: Split) -> Result<Replay, ConfigError> {
    if let Some(setup) = &transcript.config.http2 {
        return replay_h2(transcript, setup, split);
    }
    let config = transcript.config.to_config()?;
    let recorder = Recorder::new(&config, Instant::ZERO);
    let mut d = Driver {
        conn: Connection::new(config)?,
        socket: Http1Socket::new(),
        now: Instant::ZERO,
        ended: HashSet::new(),
        sends: Vec::new(),
        events: Vec::new(),
        recorder,
    };
    for (at, record) in timed_entries(&transcript.entries, split, false) {
        d.advance(at);
        d.apply(record, split);
    }
    d.drain();
    Ok(Replay {
        sends: d.sends,
        writes: Vec::new(),
        events: d.events,
        recording: d.recorder.finish(),
    })
}

/// The state of one replay.
struct Driver {
    conn: Connection,
    /// Decodes each exchange's recorded bytes.
    socket: Http1Socket,
    now: Instant,
    /// Exchanges the connection finished or abandoned: nothing more is fed to them.
    ended: HashSet<u64>,
    sends: Vec<Sent>,
    events: Vec<Value>,
    recorder: Recorder,
}

/// The entries of a transcript in order, each with the instant it happened at. With
/// [`Split::Merged`], a run of adjacent reads of one exchange (of one socket when `h2`: an
/// HTTP/2 replay merges `H2Read`s, an HTTP/1.1 replay `Recv`s) is one read, at the instant of
/// its last piece.
pub(crate) fn timed_entries(entries: &[Entry], split: Split, h2: bool) -> Vec<(Instant, Record)> {
    let mut out: Vec<(Instant, Record)> = Vec::with_capacity(entries.len());
    for entry in entries {
        let at = Instant::ZERO + entry.at;
        if split == Split::Merged {
            if let Some((last_at, last)) = out.last_mut() {
                let joined = match (last, &entry.record) {
                    (
                        Record::Recv { exchange, bytes },
                        Record::Recv {
                            exchange: e,
                            bytes: b,
                        },
                    ) if !h2 && e == exchange => Some((bytes, b)),
                    (
                        Record::H2Read { socket, bytes },
                        Record::H2Read {
                            socket: s,
                            bytes: b,
                        },
                    ) if h2 && s == socket => Some((bytes, b)),
                    _ => None,
                };
                if let Some((bytes, b)) = joined {
                    bytes.extend_from_slice(b);
                    *last_at = at;
                    continue;
                }
            }
        }
        out.push((at, entry.record.clone()));
    }
    out
}

impl Driver {
    /// Takes every output, until there is none.
    fn drain(&mut self) {
        loop {
            let mut any = false;
            while let Some(t) = self.conn.poll_transmit() {
                self.recorder.transmit(self.now, &t);
                self.sends.push((
                    t.exchange.0,
                    t.fresh_socket,
                    redact_request(&Http1Socket::encode(&t).unwrap_or_default()),
                ));
                any = true;
            }
            while let Some(e) = self.conn.poll_event() {
                self.recorder.event(&e);
                if let Event::ExchangeFinished { exchange, .. }
                | Event::ExchangeAbandoned { exchange } = &e
                {
                    self.ended.insert(exchange.0);
                }
                self.events.push(event_summary(&e));
                any = true;
            }
            if !any {
                return;
            }
        }
    }

    /// Moves the virtual clock to `at`, firing every deadline on the way as an adapter would.
    fn advance(&mut self, at: Instant) {
        for _ in 0..10_000 {
            match self.conn.poll_timeout() {
                Some(d) if d <= at => {
                    self.now = self.now.max(d);
                    self.recorder.timeout(self.now);
                    self.conn.handle_timeout(self.now);
                    self.drain();
                    if self.conn.poll_timeout() == Some(d) {
                        break; // nothing more is due at this instant
                    }
                }
                _ => break,
            }
        }
        self.now = self.now.max(at);
    }

    /// Gives one recorded input to the connection, at the current instant, then drains.
    fn apply(&mut self, record: Record, split: Split) {
        let now = self.now;
        match record {
            Record::Operation(op) => {
                op.apply(&mut self.conn, now);
                self.recorder.operation(now, op);
            }
            Record::Recv { exchange, bytes } => self.feed(exchange, &bytes, split),
            Record::Eof { exchange } => {
                if !self.ended.contains(&exchange) {
                    self.recorder.eof(now, ExchangeId(exchange));
                    self.socket
                        .handle_eof(&mut self.conn, now, ExchangeId(exchange));
                }
            }
            Record::TransportError {
                exchange,
                kind,
                message,
            } => {
                if !self.ended.contains(&exchange) {
                    let error = TransportError { kind, message };
                    self.recorder
                        .transport_error(now, ExchangeId(exchange), &error);
                    self.conn.handle(
                        now,
                        mcp_sansio::Input::TransportError {
                            exchange: ExchangeId(exchange),
                            error,
                        },
                    );
                }
            }
            Record::Timeout => {
                self.recorder.timeout(now);
                self.conn.handle_timeout(now);
            }
            Record::Send { .. } | Record::Socket { .. } | Record::Event(_) => {}
            // HTTP/2 records belong to an HTTP/2 session (`config http 2`), replayed apart.
            Record::H2Open { .. }
            | Record::H2Write { .. }
            | Record::H2Read { .. }
            | Record::H2Eof { .. }
            | Record::H2Failure { .. }
            | Record::H2DialError { .. } => {}
        }
        self.drain();
    }

    /// Feeds recorded response bytes in `split`, stopping when the exchange ends.
    fn feed(&mut self, exchange: u64, bytes: &[u8], split: Split) {
        let size = match split {
            Split::Pieces(n) => n.max(1),
            Split::Recorded | Split::Merged => bytes.len().max(1),
        };
        for piece in bytes.chunks(size) {
            if self.ended.contains(&exchange) {
                return; // the socket was closed or pooled: nothing more is read from it
            }
            self.recorder.bytes(self.now, ExchangeId(exchange), piece);
            self.socket
                .handle_bytes(&mut self.conn, self.now, ExchangeId(exchange), piece);
            self.drain();
        }
    }
}
