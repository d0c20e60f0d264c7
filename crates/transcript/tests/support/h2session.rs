//! Records HTTP/2 sessions of the core against the scripted HTTP/2 peer of the test-support crate
//! (`checks/support/src/h2server.rs`) in virtual time, the way a driver records a live
//! one: one work item on an `H2Socket`, moved to a fresh socket when the core asks for one, every
//! call reported to an `H2Recorder`, every output drained after every input.
#![allow(dead_code)]

use std::time::Duration;

use mcp_sansio::h2::H2Config;
use mcp_sansio::mux::{H2Socket, WorkId};
use mcp_sansio::{Config, Connection, Event, Instant, Transmit, TransportError};
use mcp_sansio_transcript::{H2Recorder, RecordedOperation, Transcript};

use crate::h2server::{hello, H2Peer, SeenRequest};

/// How the scripted server answers a complete request: given its peer (to write frames with),
/// the request and the number of the socket it came on (from 1).
pub type Respond = Box<dyn FnMut(&mut H2Peer, &SeenRequest, u64) -> Vec<u8>>;

/// One recorded session.
pub struct Session {
    socket: H2Socket,
    work: WorkId,
    peer: H2Peer,
    /// Server bytes not yet delivered.
    out: Vec<u8>,
    pending: Vec<Transmit>,
    respond: Respond,
    /// The recorder, as a driver holds it.
    pub rec: H2Recorder,
    /// The virtual clock.
    pub now: Instant,
    /// Every event drained, in order.
    pub events: Vec<Event>,
    /// Whether the next fresh socket cannot be opened (the error it fails with).
    pub dial_fails: Option<TransportError>,
    /// The server's latency: every server turn arrives this long after the request.
    pub latency: Duration,
    /// The largest read: a server turn longer than this arrives in several reads.
    pub read_size: usize,
    sockets: u64,
}

impl Session {
    /// A session of `config` on a first socket (`https`, limits from the budgets), whose server
    /// answers with `respond`.
    pub fn new(config: Config, comment: &str, respond: Respond) -> Session {
        let now = Instant::ZERO;
        let h2 = H2Config::from_budgets(&config.budgets);
        let mut rec = H2Recorder::new(&config, &h2, "https", now);
        rec.comment(comment);
        let conn = Connection::new(config).expect("a valid config");
        let mut socket = H2Socket::new(now, h2, "https");
        let work = socket.add(conn);
        rec.socket_opened(now);
        let mut s = Session {
            socket,
            work,
            peer: H2Peer::default(),
            out: hello(),
            pending: Vec::new(),
            respond,
            rec,
            now,
            events: Vec::new(),
            dial_fails: None,
            latency: Duration::from_millis(3),
            read_size: 400,
            sockets: 1,
        };
        s.drain(); // the preface and SETTINGS, as a replay drains after every input
        s
    }

    /// Starts an operation (recorded), then runs until nothing moves.
    pub fn op(&mut self, op: RecordedOperation) {
        self.start(op);
        self.run();
    }

    /// Starts an operation (recorded) without running the session further.
    pub fn start(&mut self, op: RecordedOperation) {
        let now = self.now;
        self.rec.operation(now, op.clone());
        op.apply(
            self.socket
                .connection_mut(self.work)
                .expect("the work item"),
            now,
        );
        self.drain();
    }

    /// The socket is lost now: the server closed it (`None`) or it failed (`Some`).
    pub fn lose_socket(&mut self, error: Option<TransportError>) {
        let now = self.now;
        match &error {
            Some(e) => self.rec.failure(now, e),
            None => self.rec.eof(now),
        }
        self.socket.handle_eof(now);
        self.out.clear();
        self.drain();
    }

    /// Ends the recording.
    pub fn finish(self) -> Transcript {
        self.rec.finish()
    }

    fn drain(&mut self) {
        let now = self.now;
        loop {
            let mut any = false;
            while let Some(bytes) = self.socket.poll_transmit(now) {
                any = true;
                self.rec.wrote(now, &bytes);
                for req in self.peer.read(&bytes) {
                    let reply = (self.respond)(&mut self.peer, &req, self.sockets);
                    self.out.extend(reply);
                }
            }
            while let Some((_, t)) = self.socket.poll_fresh() {
                any = true;
                self.pending.push(t);
            }
            while let Some((_, e)) = self.socket.poll_event(now) {
                any = true;
                self.rec.event(&e);
                self.events.push(e);
            }
            if !any {
                return;
            }
        }
    }

    /// Moves the clock to `at`, firing every deadline on the way.
    fn advance(&mut self, at: Instant) {
        while let Some(due) = self.socket.poll_timeout() {
            if due > at {
                break;
            }
            self.now = self.now.max(due);
            self.rec.timeout(self.now);
            self.socket.handle_timeout(self.now);
            self.drain();
            if self.socket.poll_timeout() == Some(due) {
                break;
            }
        }
        self.now = self.now.max(at);
    }

    /// Runs until nothing moves: server turns, fresh sockets, deadlines (at most 10 minutes).
    pub fn run(&mut self) {
        self.run_until(self.now + Duration::from_secs(600), false);
    }

    /// Runs until nothing moves, firing no deadline after `limit`, then moves the clock to
    /// `limit`.
    pub fn run_to(&mut self, limit: Instant) {
        self.run_until(limit, true);
    }

    fn run_until(&mut self, limit: Instant, settle: bool) {
        for _ in 0..100_000 {
            if !self.pending.is_empty() {
                // Dial a fresh socket, then move the work item onto it.
                self.advance(self.now + Duration::from_millis(1));
                if let Some(e) = self.dial_fails.take() {
                    self.rec.dial_error(self.now, &e);
                    let conn = self
                        .socket
                        .connection_mut(self.work)
                        .expect("the work item");
                    for t in std::mem::take(&mut self.pending) {
                        conn.handle(
                            self.now,
                            mcp_sansio::Input::TransportError {
                                exchange: t.exchange,
                                error: e.clone(),
                            },
                        );
                    }
                    self.drain();
                    continue;
                }
                let h2 = H2Config::from_budgets(
                    &self
                        .socket
                        .connection(self.work)
                        .expect("the work item")
                        .config()
                        .budgets,
                );
                let mut fresh = H2Socket::new(self.now, h2, "https");
                let conn = self
                    .socket
                    .remove(self.now, self.work)
                    .expect("the work item");
                self.work = fresh.add(conn);
                for t in std::mem::take(&mut self.pending) {
                    fresh.resend(self.work, t);
                }
                self.socket = fresh;
                self.sockets += 1;
                self.rec.socket_opened(self.now);
                self.peer = H2Peer::default();
                self.out = hello();
                self.drain();
                continue;
            }
            if !self.out.is_empty() && !self.socket.is_closed() {
                self.advance(self.now + self.latency);
                if self.socket.is_closed() {
                    continue;
                }
                let bytes = std::mem::take(&mut self.out);
                for piece in bytes.chunks(self.read_size) {
                    if self.socket.is_closed() {
                        break;
                    }
                    self.rec.read(self.now, piece);
                    let _ = self.socket.handle_bytes(self.now, piece);
                    self.drain();
                }
                continue;
            }
            self.out.clear();
            match self.socket.poll_timeout() {
                Some(due) if due <= limit => self.advance(due),
                _ => {
                    if settle {
                        self.advance(limit);
                    }
                    return;
                }
            }
        }
        panic!("the session does not end");
    }
}
