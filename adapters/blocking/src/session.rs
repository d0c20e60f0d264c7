//! A session: one [`Connection`] driven over `std::net` sockets.

use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use mcp_sansio::{CallResult, Catalog, ServerInfo};
use mcp_sansio::{Config, Connection, Era, Error, Event, ExchangeId, Instant, Operation, Transmit};
use mcp_sansio::{TransportError, TransportErrorKind};
use mcp_sansio_transcript::{RecordedOperation, Recorder, Recording};

use crate::client::{lock, Inner};
use crate::exchange::{self, Command, Job, Released, Report, Slot, Target};
use crate::CallObserver;

/// An exchange whose worker is running.
struct Open {
    commands: Sender<Command>,
    worker: JoinHandle<Released>,
    slot: Arc<Mutex<Slot>>,
    /// The worker sent bytes and waits for a command (it is not inside `read`).
    parked: bool,
}

impl Open {
    /// Closes the socket; the worker ends on its own.
    fn close(self) {
        exchange::cancel(&self.slot);
        drop(self.commands);
    }
}

/// What an operation ended with.
enum Outcome {
    Connected,
    Listed(Catalog),
    Called(CallResult),
    Closed,
}

/// An observer that declines input requests and ignores progress.
struct Silent;
impl CallObserver for Silent {}

/// A connected MCP session. Every method blocks until its operation ends, within the budgets
/// of the configuration.
///
/// Dropping a session closes its sockets without ending a legacy session on the server; call
/// [`Session::close`] for that.
pub struct Session {
    inner: Arc<Inner>,
    target: Arc<Target>,
    conn: Connection,
    /// The core's time zero.
    zero: std::time::Instant,
    reports_tx: Sender<(ExchangeId, Report)>,
    reports: Receiver<(ExchangeId, Report)>,
    open: HashMap<ExchangeId, Open>,
    /// Exchanges whose bytes were fed: they read again once the core's events are drained.
    to_read: BTreeSet<ExchangeId>,
    version: String,
    era: Era,
    server_info: Option<ServerInfo>,
    /// The transcript being recorded, when the client records.
    recording: Option<Box<Recording>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("origin", &self.target.origin)
            .field("version", &self.version)
            .field("era", &self.era)
            .field("open_exchanges", &self.open.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn connect(
        inner: Arc<Inner>,
        origin: String,
        config: Config,
    ) -> Result<Session, Error> {
        let target = Arc::new(Target {
            origin,
            host: config.endpoint.host().to_owned(),
            port: config.endpoint.port(),
            tls: config.endpoint.scheme() == mcp_sansio::Scheme::Https,
        });
        let recording = inner.sink.as_ref().map(|sink| {
            let n = inner
                .sessions
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::new(Recording::new(&config, Instant::ZERO, sink.clone(), n + 1))
        });
        let conn = Connection::new(config)?;
        let (reports_tx, reports) = mpsc::channel();
        let mut session = Session {
            inner,
            target,
            conn,
            zero: std::time::Instant::now(),
            reports_tx,
            reports,
            open: HashMap::new(),
            to_read: BTreeSet::new(),
            version: String::new(),
            era: Era::Modern,
            server_info: None,
            recording,
        };
        let now = session.now();
        session.record_op(now, || RecordedOperation::Connect);
        session.conn.connect(now);
        match session.drive(Operation::Connect, &mut Silent)? {
            Outcome::Connected => Ok(session),
            _ => Err(unexpected()),
        }
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The negotiated era.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The server's name and version, if it reported them (not after a modern era hint, which
    /// connects without a request).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server_info.as_ref()
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<&str> {
        self.conn.session_id()
    }

    /// Raw bytes read so far (bounded by the byte budget).
    pub fn bytes_read(&self) -> u64 {
        self.conn.bytes_read()
    }

    /// Lists every tool, following cursors, within the page and list-time budgets.
    pub fn list_tools(&mut self) -> Result<Catalog, Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::ListTools);
        self.conn.list_tools(now);
        match self.drive(Operation::ListTools, &mut Silent)? {
            Outcome::Listed(c) => Ok(c),
            _ => Err(unexpected()),
        }
    }

    /// Calls tool `name` with `arguments_json` (a JSON object, sent verbatim; empty means `{}`).
    pub fn call_tool(&mut self, name: &str, arguments_json: &[u8]) -> Result<CallResult, Error> {
        self.call_tool_with(name, arguments_json, &mut Silent)
    }

    /// Calls tool `name`, reporting progress and input requests to `observer`.
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::CallTool {
            name: name.to_owned(),
            arguments: arguments_json.to_vec(),
        });
        self.conn.call_tool(now, name, arguments_json);
        match self.drive(Operation::CallTool, observer)? {
            Outcome::Called(r) => Ok(r),
            _ => Err(unexpected()),
        }
    }

    /// Closes the session: a legacy session is ended with `DELETE` within the close budget. The
    /// session is closed in every case; an error says the `DELETE` failed.
    pub fn close(mut self) -> Result<(), Error> {
        let now = self.now();
        self.record_op(now, || RecordedOperation::Close);
        self.conn.close(now);
        let result = self.drive(Operation::Close, &mut Silent).map(|_| ());
        // Dropping the recording flushes it and ends the session's transcript.
        self.recording = None;
        result
    }

    /// Now on the core's clock, in whole microseconds (a transcript's resolution, so that a
    /// recording replays at the very instants the core saw).
    fn now(&self) -> Instant {
        let micros = u64::try_from(self.zero.elapsed().as_micros()).unwrap_or(u64::MAX);
        Instant::from_duration(std::time::Duration::from_micros(micros))
    }

    /// Records an operation (built only when recording).
    fn record_op(&mut self, now: Instant, op: impl FnOnce() -> RecordedOperation) {
        if let Some(r) = &mut self.recording {
            r.recorder().operation(now, op());
        }
    }

    /// The recorder, when recording.
    fn rec(&mut self) -> Option<&mut Recorder> {
        self.recording.as_deref_mut().map(Recording::recorder)
    }

    /// Runs the core until `operation` ends: drain outputs, then wait for a worker's report or
    /// the core's next deadline, feed it, and drain again.
    fn drive(
        &mut self,
        operation: Operation,
        observer: &mut dyn CallObserver,
    ) -> Result<Outcome, Error> {
        let mut outcome = None;
        let mut failure = None;
        loop {
            self.drain(operation, observer, &mut outcome, &mut failure);
            if let Some(r) = &mut self.recording {
                r.flush();
            }
            for id in std::mem::take(&mut self.to_read) {
                if let Some(open) = self.open.get_mut(&id) {
                    if open.commands.send(Command::Read).is_ok() {
                        open.parked = false;
                    }
                }
            }
            match (outcome.take(), failure.take()) {
                // Closing always ends with `Closed`; a failed `DELETE` is still reported.
                (Some(Outcome::Closed), Some(e)) => return Err(e),
                (Some(o), _) => return Ok(o),
                (None, Some(e)) => return Err(e),
                (None, None) => {}
            }
            let now = self.now();
            let report = match self.conn.poll_timeout() {
                Some(due) if due <= now => {
                    if let Some(r) = self.rec() {
                        r.timeout(now);
                    }
                    self.conn.handle_timeout(now);
                    continue;
                }
                Some(due) => match self.reports.recv_timeout(due.saturating_since(now)) {
                    Ok(r) => r,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return Err(unexpected()),
                },
                None if self.open.is_empty() => return Err(unexpected()),
                None => match self.reports.recv() {
                    Ok(r) => r,
                    Err(_) => return Err(unexpected()),
                },
            };
            self.feed(report);
        }
    }

    /// Drains transmits and events until both are empty.
    fn drain(
        &mut self,
        operation: Operation,
        observer: &mut dyn CallObserver,
        outcome: &mut Option<Outcome>,
        failure: &mut Option<Error>,
    ) {
        loop {
            let mut any = false;
            // The transmits of a pass start after its events: a socket that an event of the same
            // pass hands back (the previous page's, say) is in the pool before the next exchange
            // looks for one, so one work item keeps one socket when the server keeps it alive.
            let mut queued = Vec::new();
            while let Some(t) = self.conn.poll_transmit() {
                any = true;
                if self.recording.is_some() {
                    let now = self.now();
                    if let Some(r) = self.rec() {
                        r.transmit(now, &t);
                    }
                }
                queued.push(t);
            }
            while let Some(event) = self.conn.poll_event() {
                any = true;
                if let Some(r) = self.rec() {
                    r.event(&event);
                }
                match event {
                    Event::Connected {
                        era,
                        version,
                        server_info,
                        from_hint,
                    } => {
                        self.era = era;
                        self.version = version;
                        if server_info.is_some() || !from_hint {
                            self.server_info = server_info;
                        }
                        if !from_hint {
                            if let Some(hint) = self.conn.era_hint() {
                                self.inner.learn(&self.target.origin, hint);
                            }
                        }
                        if operation == Operation::Connect {
                            *outcome = Some(Outcome::Connected);
                        }
                    }
                    Event::ToolsListed(c) if operation == Operation::ListTools => {
                        *outcome = Some(Outcome::Listed(c));
                    }
                    Event::CallFinished(r) if operation == Operation::CallTool => {
                        *outcome = Some(Outcome::Called(r));
                    }
                    Event::Closed if operation == Operation::Close => {
                        *outcome = Some(Outcome::Closed);
                    }
                    Event::InputRequired { requests } => {
                        let answer = observer.input_required(&requests);
                        let now = self.now();
                        self.record_op(now, || RecordedOperation::ProvideInput(answer.clone()));
                        self.conn.provide_input(now, answer.as_deref());
                    }
                    Event::Progress {
                        progress,
                        total,
                        message,
                    } => observer.progress(progress, total, message.as_deref()),
                    // One operation runs at a time: a failure is the running one's, even when
                    // it names another step (a re-negotiation inside a listing).
                    Event::Failed { error, .. } => {
                        failure.get_or_insert(error);
                    }
                    Event::ExchangeFinished { exchange, reusable } => {
                        queued.retain(|t: &Transmit| t.exchange != exchange);
                        self.finished(exchange, reusable);
                    }
                    Event::ExchangeAbandoned { exchange } => {
                        queued.retain(|t: &Transmit| t.exchange != exchange);
                        if let Some(open) = self.open.remove(&exchange) {
                            open.close();
                        }
                    }
                    _ => {}
                }
            }
            for t in queued {
                self.start(t);
            }
            if !any {
                return;
            }
        }
    }

    /// Starts a worker for the exchange of `t`.
    fn start(&mut self, t: Transmit) {
        let slot = Arc::new(Mutex::new(Slot::default()));
        let (commands, commands_rx) = mpsc::channel();
        let job = Job {
            inner: self.inner.clone(),
            target: self.target.clone(),
            exchange: t.exchange,
            request: t.bytes,
            fresh: t.fresh_socket,
            slot: slot.clone(),
            reports: self.reports_tx.clone(),
            commands: commands_rx,
        };
        let spawned = std::thread::Builder::new()
            .name("mcp-exchange".into())
            .spawn(move || exchange::run(job));
        match spawned {
            Ok(worker) => {
                self.open.insert(
                    t.exchange,
                    Open {
                        commands,
                        worker,
                        slot,
                        parked: false,
                    },
                );
            }
            Err(e) => {
                let now = self.now();
                let error = TransportError {
                    kind: TransportErrorKind::Io,
                    message: format!("cannot start the exchange thread: {e}"),
                };
                if let Some(r) = self.rec() {
                    r.transport_error(now, t.exchange, &error);
                }
                self.conn.handle_transport_error(now, t.exchange, error);
            }
        }
    }

    /// Feeds a worker's report to the core.
    fn feed(&mut self, (id, report): (ExchangeId, Report)) {
        let now = self.now();
        match report {
            Report::Bytes(bytes) => {
                if let Some(open) = self.open.get_mut(&id) {
                    open.parked = true;
                    self.to_read.insert(id);
                }
                if let Some(r) = self.rec() {
                    r.bytes(now, id, &bytes);
                }
                self.conn.handle_bytes(now, id, &bytes);
            }
            Report::Eof => {
                if let Some(r) = self.rec() {
                    r.eof(now, id);
                }
                self.conn.handle_eof(now, id);
            }
            Report::Failed(e) => {
                if let Some(r) = self.rec() {
                    r.transport_error(now, id, &e);
                }
                self.conn.handle_transport_error(now, id, e);
            }
        }
    }

    /// The core finished an exchange: pool its socket if reusable, else close it.
    fn finished(&mut self, id: ExchangeId, reusable: bool) {
        let Some(open) = self.open.remove(&id) else {
            return;
        };
        if !(reusable && open.parked) {
            return open.close();
        }
        // The worker is parked on its command channel: releasing it returns the socket.
        if open.commands.send(Command::Release).is_ok() {
            if let Ok(Some((stream, address))) = open.worker.join() {
                lock(&self.inner.pool).put(
                    &self.target.origin,
                    address,
                    stream,
                    std::time::Instant::now(),
                );
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        for (_, open) in self.open.drain() {
            open.close();
        }
    }
}

fn unexpected() -> Error {
    Error::Misuse {
        reason: "the operation ended without a result",
    }
}
