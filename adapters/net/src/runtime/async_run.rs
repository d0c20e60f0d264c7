//! The run loop of an async adapter, the same on every runtime: pump the driver, launch the
//! requests it queued, and wait for a socket's report or the core's next deadline.
//!
//! An async adapter implements [`AsyncIo`] (its [`Io`] plus the three waits only a runtime can
//! do) and runs each operation with [`SessionDriver::run`]. The order matters and is kept here
//! once: requests start only after the pass's events, and an operation returns only once the
//! sockets it handed back are in the pool, so the next exchange finds them there.
//!
//! An operation's future dropped before it ended (a caller's timeout, a cancelled task) cancels
//! the operation's request: its drop guard calls [`SessionDriver::abandon`] and then
//! [`AsyncIo::launch_now`], so the HTTP/1.1 socket is closed rather than pooled, the HTTP/2
//! stream is reset with RST_STREAM(CANCEL), and a legacy session's `notifications/cancelled`
//! starts at once, best effort, in a task of its own.

use std::future::Future;
use std::time::Instant;

use mcp_sansio::{Completion, Error, ExchangeId};

use crate::session::{CallObserver, Io, Report, SessionDriver, Start, Wait};

/// The [`Io`] of an async adapter: what it queued in [`Io::start`] starts in
/// [`launch`](AsyncIo::launch), and reports arrive through [`next`](AsyncIo::next).
pub trait AsyncIo: Io {
    /// Starts the exchanges [`Io::start`] queued (a request that may take a pooled socket first
    /// waits for the sockets being parked).
    fn launch(&mut self) -> impl Future<Output = ()>;
    /// Starts the exchanges [`Io::start`] queued without waiting for anything, none of them in
    /// the caller's own future: what the drop guard of an abandoned operation does with the
    /// requests that cancel it. By default nothing (they then start at the next
    /// [`launch`](AsyncIo::launch)).
    fn launch_now(&mut self) {}
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
    ///
    /// Dropping the future before it gives the result abandons the operation
    /// ([`SessionDriver::abandon`]): its request is cancelled and the session stays usable.
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
        let mut run = Running {
            driver: self,
            io,
            observer,
            ended: false,
        };
        loop {
            let done = run.driver.pump(run.io, run.observer);
            run.io.launch().await;
            if let Some(result) = done {
                run.ended = true;
                run.io.settle().await;
                return result;
            }
            let until = match run.driver.wait() {
                Wait::Until(t) => Some(t),
                Wait::Report => None,
                // An operation that cannot end is abandoned (by the guard) as it fails.
                Wait::Nothing => return Err(SessionDriver::stuck()),
            };
            let wake = run.io.next(until).await;
            run.driver.wake(wake);
        }
    }
}

/// An operation running on an async adapter; dropped before it ended (its future dropped), it
/// abandons the operation and starts the requests that cancel it.
struct Running<'a, I: AsyncIo> {
    driver: &'a mut SessionDriver,
    io: &'a mut I,
    observer: &'a mut dyn CallObserver,
    /// The operation completed: nothing to abandon.
    ended: bool,
}

impl<I: AsyncIo> Drop for Running<'_, I> {
    fn drop(&mut self) {
        // Not while a panic unwinds: the driver may be mid-pump, and a second panic aborts.
        if !self.ended && !std::thread::panicking() {
            self.driver.abandon(self.io, self.observer);
            self.io.launch_now();
        }
    }
}
