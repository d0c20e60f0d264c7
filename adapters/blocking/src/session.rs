//! A session: the shared session driver, its exchanges moved by worker threads.

use std::sync::Arc;

use mcp_sansio::{CallResult, Catalog, Completion, Config, Era, Error, ServerInfo};
use mcp_sansio_net::{CallObserver, NoObserver, SessionDriver, Shared, Start, Wait};

use crate::exchange::{Stream, Workers};

/// A connected MCP session. Every method blocks until its operation ends, within the budgets
/// of the configuration.
///
/// Dropping a session closes its sockets without ending a legacy session on the server; call
/// [`Session::close`] for that.
pub struct Session {
    driver: SessionDriver,
    workers: Workers,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.driver.fmt(f)
    }
}

impl Session {
    pub(crate) fn connect(shared: Arc<Shared<Stream>>, config: Config) -> Result<Session, Error> {
        let driver = SessionDriver::new(&shared, config)?;
        let workers = Workers::new(shared, &driver.config().endpoint, driver.origin());
        let mut session = Session { driver, workers };
        session.run(Start::Connect, &mut NoObserver)?;
        Ok(session)
    }

    /// The negotiated protocol version.
    pub fn version(&self) -> &str {
        self.driver.version()
    }

    /// The negotiated era.
    pub fn era(&self) -> Era {
        self.driver.era()
    }

    /// The server's name and version, if it reported them (not after a modern era hint, which
    /// connects without a request).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.driver.server_info()
    }

    /// The legacy session id, if the server assigned one.
    pub fn session_id(&self) -> Option<&str> {
        self.driver.session_id()
    }

    /// Raw bytes read so far (bounded by the byte budget).
    pub fn bytes_read(&self) -> u64 {
        self.driver.bytes_read()
    }

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
        let start = Start::CallTool {
            name,
            arguments: arguments_json,
        };
        SessionDriver::called(self.run(start, observer)?)
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
            if let Some(result) = self.driver.pump(&mut self.workers, observer) {
                return result;
            }
            let report = match self.driver.wait() {
                Wait::Until(due) => {
                    let left = due.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        None
                    } else {
                        self.workers.recv(Some(left))
                    }
                }
                Wait::Report => self.workers.recv(None),
                Wait::Nothing => return Err(SessionDriver::stuck()),
            };
            match report {
                Some((exchange, report)) => self.driver.feed(exchange, report),
                None => self.driver.timeout(),
            }
        }
    }
}
