//! A session: the shared session driver, its exchanges moved by worker threads, or streams of
//! the origin's shared HTTP/2 connection.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;

use mcp_sansio::{
    CallResult, Catalog, Completion, Config, Error, TransportError, TransportErrorKind,
};
use mcp_sansio_net::{
    CallObserver, H2Route, NoObserver, SessionDriver, Shared, SharedH2, Start, Wait, Waker,
};

use crate::exchange::{dial_socket, Msg, Stream, Target, Workers};
use crate::h2::{BlockingH2, Wire};

mcp_sansio_net::declare_session!(
    /// A connected MCP session. Every method blocks until its operation ends, within the
    /// budgets of the configuration.
    ///
    /// Dropping a session closes its sockets without ending a legacy session on the server;
    /// call [`Session::close`] for that.
    Workers
);

impl Session {
    pub(crate) fn connect(shared: Arc<Shared<Stream>>, config: Config) -> Result<Session, Error> {
        let (tx, rx) = mpsc::channel();
        let target = Arc::new(Target::new(&config.endpoint, &config.endpoint.origin()));
        let driver = driver(&shared, config, &target, &tx, &rx)?;
        let io = Workers::new(shared, target, (tx, rx));
        let mut session = Session { driver, io };
        session.run(Start::Connect, &mut NoObserver)?;
        Ok(session)
    }

    mcp_sansio_net::session_accessors!();

    /// Lists every tool, following cursors, within the page and list-time budgets.
    pub fn list_tools(&mut self) -> Result<Catalog, Error> {
        SessionDriver::listed(self.run(Start::ListTools, &mut NoObserver)?)
    }

    /// Calls tool `name` with `arguments_json` (a JSON object, sent verbatim; empty means `{}`).
    pub fn call_tool(&mut self, name: &str, arguments_json: &[u8]) -> Result<CallResult, Error> {
        self.call_tool_with(name, arguments_json, &mut NoObserver)
    }

    /// Calls tool `name`, reporting progress and input requests to `observer`.
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments_json: &[u8],
        observer: &mut dyn CallObserver,
    ) -> Result<CallResult, Error> {
        SessionDriver::called(self.run(Start::call(name, arguments_json), observer)?)
    }

    /// Closes the session: a legacy session is ended with `DELETE` within the close budget. The
    /// session is closed in every case; every socket still serving one of its exchanges is
    /// closed, sockets parked earlier stay in the client's pool.
    pub fn close(mut self) -> Result<(), Error> {
        let result = self.run(Start::Close, &mut NoObserver).map(|_| ());
        // Ending the recording flushes it and closes the session's transcript.
        self.driver.end_recording();
        result
    }

    /// Runs `op` to its end: pump the driver, then wait for a worker's report or the core's next
    /// deadline, and pump again.
    fn run(&mut self, op: Start<'_>, observer: &mut dyn CallObserver) -> Result<Completion, Error> {
        self.driver.start(op);
        loop {
            if let Some(result) = self.driver.pump(&mut self.io, observer) {
                return result;
            }
            let report = match self.driver.wait() {
                Wait::Until(due) => {
                    let left = due.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        None
                    } else {
                        self.io.recv(Some(left))
                    }
                }
                Wait::Report => self.io.recv(None),
                Wait::Nothing => return Err(SessionDriver::stuck()),
            };
            match report {
                Some(Msg::Report(exchange, report)) => self.driver.feed(exchange, report),
                Some(Msg::H2) => {}
                None => self.driver.timeout(),
            }
        }
    }
}

/// The driver of a session of a client that records: an HTTP/2 socket of its own, recorded
/// ([`Shared::h2_recorded`]), or HTTP/1.1 if the server chooses it. The session joins before the
/// socket's reader starts, so that its transcript holds every byte read.
fn recorded_driver(
    shared: &Arc<Shared<Stream>>,
    config: Config,
    target: &Arc<Target>,
    scheme: &'static str,
    wake: Waker,
) -> Result<SessionDriver, Error> {
    let (stream, address) = dial_socket(shared, target, true)?;
    let wire = match Wire::from_stream(stream, scheme == "http") {
        Ok(wire) => wire,
        Err(stream) => {
            // The server chose HTTP/1.1: the socket serves the first exchange.
            shared.park(&target.origin, address, stream);
            return SessionDriver::new(shared, config);
        }
    };
    let io = BlockingH2::new(shared, target.clone());
    let Some(conn) = shared.h2_recorded(scheme, &config.budgets, Arc::new(io.clone())) else {
        return SessionDriver::new(shared, config);
    };
    let mut joined = None;
    io.attach(conn.clone(), 0, wire, || {
        joined = Some(SessionDriver::join_h2(shared, config, conn, wake));
    })?;
    match joined {
        Some(Ok(Some(driver))) => Ok(driver),
        Some(Err(e)) => Err(e),
        Some(Ok(None)) | None => Err(Error::Transport(TransportError {
            kind: TransportErrorKind::Connect,
            message: "the recorded HTTP/2 connection closed before the session joined it".into(),
        })),
    }
}

/// The session's driver: a work item of the origin's shared HTTP/2 connection (joined, or dialled
/// and registered when there is none and the server negotiates HTTP/2), or an HTTP/1.1 session
/// ([`Shared::h2_scheme`] decides whether to try HTTP/2). The session is woken on `tx`.
fn driver(
    shared: &Arc<Shared<Stream>>,
    config: Config,
    target: &Arc<Target>,
    tx: &Sender<Msg>,
    rx: &Receiver<Msg>,
) -> Result<SessionDriver, Error> {
    let origin = target.origin.clone();
    let Some(scheme) = shared.h2_scheme(&config.endpoint, &origin) else {
        return SessionDriver::new(shared, config);
    };
    let wake_tx = tx.clone();
    let wake: Waker = Arc::new(move || {
        let _ = wake_tx.send(Msg::H2);
    });
    if shared.records() {
        return recorded_driver(shared, config, target, scheme, wake);
    }
    // A connection shut between the look-up and the join is looked up again (a few times).
    for _ in 0..4 {
        let lead = match shared.h2_route(&origin, wake.clone()) {
            H2Route::Join(conn) => {
                match SessionDriver::join_h2(shared, config.clone(), conn, wake.clone())? {
                    Some(driver) => return Ok(driver),
                    None => continue,
                }
            }
            H2Route::Wait => {
                // The dial of another session ends within the dial timeout.
                match rx.recv_timeout(shared.dial_timeout * 2) {
                    Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => break,
                }
                if shared.h2_scheme(&config.endpoint, &origin).is_none() {
                    // The origin chose HTTP/1.1 meanwhile.
                    return SessionDriver::new(shared, config);
                }
                continue;
            }
            H2Route::Dial(lead) => lead,
        };
        let (stream, address) = dial_socket(shared, target, true)?;
        let wire = match Wire::from_stream(stream, scheme == "http") {
            Ok(wire) => wire,
            Err(stream) => {
                // The server chose HTTP/1.1: the socket serves the first exchange, and the
                // sessions waiting on this dial speak HTTP/1.1 too.
                shared.park(&origin, address, stream);
                shared.chose_http1(&origin);
                drop(lead);
                return SessionDriver::new(shared, config);
            }
        };
        let io = BlockingH2::new(shared, target.clone());
        let fresh = SharedH2::new(scheme, &config.budgets, Arc::new(io.clone()));
        io.attach(fresh.clone(), 0, wire, || {})?;
        let conn = shared.h2_register(&origin, fresh.clone());
        drop(lead);
        if !Arc::ptr_eq(&conn, &fresh) {
            io.close_socket(0);
        }
        if let Some(driver) = SessionDriver::join_h2(shared, config.clone(), conn, wake.clone())? {
            return Ok(driver);
        }
    }
    Err(Error::Transport(TransportError {
        kind: TransportErrorKind::Connect,
        message: "the origin's HTTP/2 connection kept closing before the session joined it".into(),
    }))
}
