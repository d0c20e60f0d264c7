//! The replay of an HTTP/2 transcript: one work item on a fresh [`H2Socket`] per recorded
//! socket, in virtual time (see `docs/transcripts.md`).

use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{ConfigError, Connection, Instant, Transmit, TransportError};
use serde_json::Value;

use crate::escape::escape;
use crate::h2::{H2Recorder, H2Setup, H2Writes};
use crate::model::{Record, Transcript};
use crate::replay::{timed_entries, Mismatch, Replay, Split};
use crate::summary::event_summary;

/// Replays an HTTP/2 transcript (`setup` is its `config http 2`).
pub(crate) fn replay_h2(
    transcript: &Transcript,
    setup: &H2Setup,
    split: Split,
) -> Result<Replay, ConfigError> {
    let config = transcript.config.to_config()?;
    let recorder = H2Recorder::new(&config, &setup.config, &setup.scheme, Instant::ZERO);
    let mut d = Driver {
        setup: setup.clone(),
        socket: None,
        number: 0,
        work: WorkId(0),
        detached: Some(Connection::new(config)?),
        pending: Vec::new(),
        now: Instant::ZERO,
        fired: None,
        events: Vec::new(),
        recorder,
    };
    for (at, record) in timed_entries(&transcript.entries, split, true) {
        d.advance(at);
        d.apply(record, split);
    }
    d.drain();
    let recording = d.recorder.finish();
    Ok(Replay {
        sends: Vec::new(),
        writes: recording.h2_writes(),
        events: d.events,
        recording,
    })
}

/// The state of one HTTP/2 replay.
struct Driver {
    setup: H2Setup,
    /// The socket in use; earlier ones are dropped, as a driver drops them.
    socket: Option<H2Socket>,
    number: u64,
    work: WorkId,
    /// The work item before the first socket is opened.
    detached: Option<Connection>,
    /// Requests waiting for a fresh socket ([`H2Socket::poll_fresh`]).
    pending: Vec<Transmit>,
    now: Instant,
    /// The instant of the last deadline fired on the way to an entry.
    fired: Option<Instant>,
    events: Vec<Value>,
    recorder: H2Recorder,
}

impl Driver {
    fn conn(&mut self) -> Option<&mut Connection> {
        match &mut self.socket {
            Some(s) => s.connection_mut(self.work),
            None => self.detached.as_mut(),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match &self.socket {
            Some(s) => s.poll_timeout(),
            None => self.detached.as_ref().and_then(Connection::poll_timeout),
        }
    }

    fn handle_timeout(&mut self) {
        let now = self.now;
        self.recorder.timeout(now);
        match &mut self.socket {
            Some(s) => s.handle_timeout(now),
            None => {
                if let Some(c) = &mut self.detached {
                    c.handle_timeout(now);
                }
            }
        }
    }

    /// Takes every output, until there is none: bytes to write, requests for a fresh socket,
    /// events (in that order, as a driver's pump does).
    fn drain(&mut self) {
        let now = self.now;
        loop {
            let mut any = false;
            if let Some(s) = &mut self.socket {
                while let Some(bytes) = s.poll_transmit(now) {
                    any = true;
                    self.recorder.wrote(now, &bytes);
                }
                while let Some((_, t)) = s.poll_fresh() {
                    any = true;
                    self.pending.push(t);
                }
                while let Some((_, e)) = s.poll_event(now) {
                    any = true;
                    self.recorder.event(&e);
                    self.events.push(event_summary(&e));
                }
            } else if let Some(c) = &mut self.detached {
                // Requests wait for the socket; only events can come out before it.
                while let Some(e) = c.poll_event() {
                    any = true;
                    self.recorder.event(&e);
                    self.events.push(event_summary(&e));
                }
            }
            if !any {
                return;
            }
        }
    }

    /// Moves the virtual clock to `at`, firing every deadline on the way.
    fn advance(&mut self, at: Instant) {
        for _ in 0..10_000 {
            match self.poll_timeout() {
                Some(d) if d <= at => {
                    self.now = self.now.max(d);
                    self.fired = Some(self.now);
                    self.handle_timeout();
                    self.drain();
                    if self.poll_timeout() == Some(d) {
                        break; // nothing more is due at this instant
                    }
                }
                _ => break,
            }
        }
        self.now = self.now.max(at);
    }

    /// Whether recorded input for socket `n` still reaches the core: it is the socket in use
    /// and it is still open (a driver stops reading a closed socket).
    fn reading(&self, n: u64) -> bool {
        n == self.number && self.socket.as_ref().is_some_and(|s| !s.is_closed())
    }

    fn apply(&mut self, record: Record, split: Split) {
        let now = self.now;
        match record {
            Record::Operation(op) => {
                if let Some(c) = self.conn() {
                    op.apply(c, now);
                }
                self.recorder.operation(now, op);
            }
            Record::H2Open { .. } => self.open(),
            Record::H2Read { socket, bytes } => {
                let size = match split {
                    Split::Pieces(n) => n.max(1),
                    Split::Recorded | Split::Merged => bytes.len().max(1),
                };
                for piece in bytes.chunks(size) {
                    if !self.reading(socket) {
                        break;
                    }
                    self.recorder.read(now, piece);
                    if let Some(s) = &mut self.socket {
                        // A connection error reaches the work item through its exchanges.
                        let _ = s.handle_bytes(now, piece);
                    }
                    self.drain();
                }
            }
            Record::H2Eof { socket } => {
                if self.reading(socket) {
                    self.recorder.eof(now);
                    if let Some(s) = &mut self.socket {
                        s.handle_eof(now);
                    }
                }
            }
            Record::H2Failure {
                socket,
                kind,
                message,
            } => {
                if self.reading(socket) {
                    self.recorder
                        .failure(now, &TransportError { kind, message });
                    if let Some(s) = &mut self.socket {
                        s.handle_eof(now);
                    }
                }
            }
            Record::H2DialError { kind, message } => {
                let error = TransportError { kind, message };
                self.recorder.dial_error(now, &error);
                let pending = std::mem::take(&mut self.pending);
                if let Some(c) = self.conn() {
                    for t in pending {
                        c.handle(
                            now,
                            mcp_sansio::Input::TransportError {
                                exchange: t.exchange,
                                error: error.clone(),
                            },
                        );
                    }
                }
            }
            // The recorded call answered a deadline the replay has just fired at this instant.
            Record::Timeout if self.fired == Some(now) => {}
            Record::Timeout => self.handle_timeout(),
            // HTTP/1.1 records have no place in an HTTP/2 session; outputs are not inputs.
            Record::Send { .. }
            | Record::Socket { .. }
            | Record::Recv { .. }
            | Record::Eof { .. }
            | Record::TransportError { .. }
            | Record::H2Write { .. }
            | Record::Event(_) => {}
        }
        self.drain();
    }

    /// A fresh socket: the work item moves onto it and the requests waiting for it are handed
    /// over, as a driver does once it has dialled.
    fn open(&mut self) {
        let now = self.now;
        let mut fresh = H2Socket::new(now, self.setup.config.clone(), &self.setup.scheme);
        let conn = match self.socket.take() {
            Some(mut old) => old.remove(now, self.work),
            None => self.detached.take(),
        };
        if let Some(conn) = conn {
            self.work = fresh.add(conn);
        }
        for t in std::mem::take(&mut self.pending) {
            fresh.resend(self.work, t);
        }
        self.socket = Some(fresh);
        self.number += 1;
        self.recorder.socket_opened(now);
    }
}

/// Compares what a replay wrote with what was recorded, socket by socket: the preface, then
/// every stream's frames in order (stream 0 being the connection's), byte for byte after
/// redaction. How frames of different streams interleave, and how they were grouped into
/// writes, is not compared.
pub(crate) fn check_writes(
    recorded: &[(u64, Vec<u8>)],
    written: &[(u64, Vec<u8>)],
) -> Result<(), Mismatch> {
    let per_socket = |w: &[(u64, Vec<u8>)]| {
        let mut sockets: std::collections::BTreeMap<u64, Vec<u8>> = Default::default();
        for (n, b) in w {
            sockets.entry(*n).or_default().extend_from_slice(b);
        }
        sockets
    };
    let (want, got) = (per_socket(recorded), per_socket(written));
    let mismatch = |socket: u64, place: String, r: &[u8], g: &[u8]| Mismatch::Write {
        socket,
        place,
        recorded: short(r),
        written: short(g),
    };
    for socket in want.keys().chain(got.keys()) {
        let empty = Vec::new();
        let w = H2Writes::split(want.get(socket).unwrap_or(&empty));
        let g = H2Writes::split(got.get(socket).unwrap_or(&empty));
        if w.preface != g.preface {
            return Err(mismatch(
                *socket,
                "the preface".into(),
                &w.preface,
                &g.preface,
            ));
        }
        for stream in w.streams.keys().chain(g.streams.keys()) {
            let none = Vec::new();
            let wf = w.streams.get(stream).unwrap_or(&none);
            let gf = g.streams.get(stream).unwrap_or(&none);
            for i in 0..wf.len().max(gf.len()) {
                let (a, b) = (wf.get(i), gf.get(i));
                if a != b {
                    return Err(mismatch(
                        *socket,
                        format!("stream {stream}, frame {}", i + 1),
                        a.map_or(&[][..], Vec::as_slice),
                        b.map_or(&[][..], Vec::as_slice),
                    ));
                }
            }
        }
        if w.trailing != g.trailing {
            return Err(mismatch(
                *socket,
                "an incomplete last frame".into(),
                &w.trailing,
                &g.trailing,
            ));
        }
    }
    Ok(())
}

/// A frame for an error message: escaped, at most 200 octets, `-` when absent.
fn short(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    let mut s = escape(&b[..b.len().min(200)]);
    if b.len() > 200 {
        s.push_str("...");
    }
    s
}
