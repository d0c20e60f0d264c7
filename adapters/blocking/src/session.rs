//! A session: the shared session driver, its exchanges moved by worker threads.

use std::sync::Arc;

use mcp_sansio::{CallResult, Catalog, Completion, Config, Error};
use mcp_sansio_net::{CallObserver, NoObserver, SessionDriver, Shared, Start, Wait};

use crate::exchange::{Stream, Workers};

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
        let driver = SessionDriver::new(&shared, config)?;
        let io = Workers::new(shared, &driver.config().endpoint, driver.origin());
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
                Some((exchange, report)) => self.driver.feed(exchange, report),
                None => self.driver.timeout(),
            }
        }
    }
}
