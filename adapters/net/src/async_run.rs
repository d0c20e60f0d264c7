//! The run loop of an async adapter, the same on every runtime: pump the driver, launch the
//! requests it queued, and wait for a socket's report or the core's next deadline.
//!
//! An async adapter implements [`AsyncIo`] (its [`Io`] plus the three waits only a runtime can
//! do) and runs each operation with [`SessionDriver::run`]. The order matters and is kept here
//! once: requests start only after the pass's events, and an operation returns only once the
//! sockets it handed back are in the pool, so the next exchange finds them there.

use std::future::Future;
use std::time::Instant;

use mcp_sansio::{Completion, Error, ExchangeId};

use crate::{CallObserver, Io, Report, SessionDriver, Start, Wait};

/// The [`Io`] of an async adapter: what it queued in [`Io::start`] starts in
/// [`launch`](AsyncIo::launch), and reports arrive through [`next`](AsyncIo::next).
pub trait AsyncIo: Io {
    /// Starts the exchanges [`Io::start`] queued (a request that may take a pooled socket first
    /// waits for the sockets being parked).
    fn launch(&mut self) -> impl Future<Output = ()>;
    /// Waits until every socket being parked is in the pool.
    fn settle(&mut self) -> impl Future<Output = ()>;
    /// The next wake-up: a socket's report, or [`Wake::Timeout`] once `until` passed (never,
    /// when `None`).
    /// The next report of a socket, or `None` once `until` passed (never, when `None`).
    fn next(&mut self, until: Option<Instant>) -> impl Future<Output = Wake>;

    /// A wake-up that came while no operation ran (a socket's late report, say), fed before
    /// the next operation starts. None by default.
    fn pending(&mut self) -> Option<Wake> {
        None
    }
}

/// What woke an async adapter's run loop.
#[derive(Debug)]
pub enum Wake {
    /// A socket's report on one exchange.
    Report(ExchangeId, Report),
    /// The shared HTTP/2 connection has events for the session (its waker was called): pump.
    H2,
    /// The deadline passed.
    Timeout,
}

impl SessionDriver {
    /// Feeds one wake-up to the driver.
    pub fn wake(&mut self, wake: Wake) {
        match wake {
            Wake::Report(exchange, report) => self.feed(exchange, report),
            Wake::H2 => {}
            Wake::Timeout => self.timeout(),
        }
    }

    /// Runs `op` to its end on an async adapter: pump, launch, then wait as
    /// [`wait`](SessionDriver::wait) says and pump again; once the operation completed, wait for
    /// the sockets it parks before returning its result.
    pub async fn run<I: AsyncIo>(
        &mut self,
        io: &mut I,
        op: Start<'_>,
        observer: &mut dyn CallObserver,
    ) -> Result<Completion, Error> {
        while let Some(wake) = io.pending() {
            self.wake(wake);
        }
        self.start(op);
        loop {
            let done = self.pump(io, observer);
            io.launch().await;
            if let Some(result) = done {
                io.settle().await;
                return result;
            }
            let until = match self.wait() {
                Wait::Until(t) => Some(t),
                Wait::Report => None,
                Wait::Nothing => return Err(SessionDriver::stuck()),
            };
            let wake = io.next(until).await;
            self.wake(wake);
        }
    }
}
