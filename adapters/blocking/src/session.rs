//! A session: the shared session driver, its exchanges moved by worker threads, or streams of
//! the origin's shared HTTP/2 connection.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;

use mcp_sansio::{Completion, Config, Error, TransportError};
use mcp_sansio_net::route::{self, H2Glue};
use mcp_sansio_net::runtime::block_on;
use mcp_sansio_net::{
    CallObserver, NoObserver, SessionDriver, SessionRuntime, Shared, SharedH2, Start, Wait, Waker,
};

use crate::exchange::{dial_socket, Msg, Stream, Target, Workers};
use crate::h2::{BlockingH2, Wire};
use crate::Threads;

/// A connected MCP session. Every method blocks until its operation ends, within the budgets of
/// the configuration.
///
/// Dropping a session closes its sockets without ending a legacy session on the server; call
/// [`Session::close`] for that.
pub type Session = mcp_sansio_net::Session<Threads>;

impl SessionRuntime for Threads {
    type Io = Workers;
    type Op<'a, T: Send + 'a> = Result<T, Error>;

    fn run<'a, T: Send + 'a>(
        session: &'a mut Session,
        op: Start<'a>,
        observer: &'a mut dyn CallObserver,
        then: fn(Completion) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let (driver, io) = session.parts();
        run(driver, io, op, observer).and_then(then)
    }

    fn close(mut session: Session) -> Result<(), Error> {
        let (driver, io) = session.parts();
        let result = run(driver, io, Start::Close, &mut NoObserver).map(|_| ());
        // Ending the recording flushes it and closes the session's transcript; every socket
        // still serving one of its exchanges is closed when the session drops.
        driver.end_recording();
        result
    }
}

/// Connects a session of the client of `shared`.
pub(crate) fn connect(shared: Arc<Shared<Stream>>, config: Config) -> Result<Session, Error> {
    let (tx, mut rx) = mpsc::channel();
    let target = Arc::new(Target::new(&config.endpoint, &config.endpoint.origin()));
    let wake_tx = tx.clone();
    let wake: Waker = Arc::new(move || {
        let _ = wake_tx.send(Msg::H2);
    });
    let mut route = Route {
        shared: &shared,
        target: &target,
        rx: &mut rx,
    };
    let driver = block_on(route::session_driver(&shared, config, wake, &mut route))?;
    let io = Workers::new(shared, target, (tx, rx));
    let mut session = Session::from_parts(driver, io);
    let (driver, io) = session.parts();
    run(driver, io, Start::Connect, &mut NoObserver)?;
    Ok(session)
}

/// Runs `op` to its end: pump the driver, then wait for a worker's report or the core's next
/// deadline, and pump again.
fn run(
    driver: &mut SessionDriver,
    io: &mut Workers,
    op: Start<'_>,
    observer: &mut dyn CallObserver,
) -> Result<Completion, Error> {
    driver.start(op);
    loop {
        if let Some(result) = driver.pump(io, observer) {
            return result;
        }
        let report = match driver.wait() {
            Wait::Until(due) => {
                let left = due.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    None
                } else {
                    io.recv(Some(left))
                }
            }
            Wait::Report => io.recv(None),
            Wait::Nothing => return Err(SessionDriver::stuck()),
        };
        match report {
            Some(Msg::Report(exchange, report)) => driver.feed(exchange, report),
            Some(Msg::H2) => {}
            None => driver.timeout(),
        }
    }
}

/// The blocking side of a new session's HTTP/2 route ([`route::session_driver`]).
struct Route<'a> {
    shared: &'a Arc<Shared<Stream>>,
    target: &'a Arc<Target>,
    rx: &'a mut Receiver<Msg>,
}

impl H2Glue for Route<'_> {
    type Stream = Stream;
    type Socket = Wire;
    type Sockets = BlockingH2;

    fn wait(&mut self) -> impl Future<Output = bool> + Send {
        // The dial of another session ends within the dial timeout.
        let woken = !matches!(
            self.rx.recv_timeout(self.shared.dial_timeout * 2),
            Err(RecvTimeoutError::Disconnected)
        );
        std::future::ready(woken)
    }

    fn dial(
        &mut self,
    ) -> impl Future<Output = Result<(SocketAddr, Stream), TransportError>> + Send {
        std::future::ready(dial_socket(self.shared, self.target, true).map(|(s, a)| (a, s)))
    }

    fn h2_socket(stream: Stream, h2c: bool) -> Result<Wire, Stream> {
        Wire::from_stream(stream, h2c)
    }

    fn sockets(&self) -> BlockingH2 {
        BlockingH2::new(self.shared, self.target.clone())
    }

    fn attach(
        sockets: &BlockingH2,
        conn: Arc<SharedH2>,
        generation: u64,
        socket: Wire,
        before_reading: impl FnOnce(),
    ) -> Result<(), TransportError> {
        sockets.attach(conn, generation, socket, before_reading)
    }
}
