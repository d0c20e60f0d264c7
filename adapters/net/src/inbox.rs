//! A session's inbox: what its exchange tasks report and the wake-ups of its shared HTTP/2
//! connection, behind one lock. One allocation per session, none per report or per wait (a
//! channel of `async-channel` costs several: its events' lists and a listener per wait).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use mcp_sansio::ExchangeId;

use crate::client::lock;
use crate::Report;

/// What the exchanges of one session and its HTTP/2 connection tell it. Only the session waits
/// on it (one waiter), any number of tasks send.
#[derive(Default)]
pub(crate) struct Inbox(Mutex<State>);

#[derive(Default)]
struct State {
    /// Reports not yet taken, in the order they came.
    reports: VecDeque<(ExchangeId, Report)>,
    /// The HTTP/2 connection woke the session: one pending wake at most, like a permit.
    h2: bool,
    /// Every HTTP/2 waker of the session is gone: no wake can come any more.
    h2_gone: bool,
    /// The session is gone: reports are refused.
    closed: bool,
    /// The session's task, while it waits.
    waiter: Option<Waker>,
}

impl Inbox {
    /// Runs `f` on the state, then wakes the waiting session.
    fn update(&self, f: impl FnOnce(&mut State)) {
        let waiter = {
            let mut state = lock(&self.0);
            f(&mut state);
            state.waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    /// Hands `report` on `exchange` to the session; false once the session is gone.
    pub(crate) fn send(&self, exchange: ExchangeId, report: Report) -> bool {
        let mut sent = false;
        self.update(|s| {
            if !s.closed {
                s.reports.push_back((exchange, report));
                sent = true;
            }
        });
        sent
    }

    /// The session's HTTP/2 connection has events for it.
    pub(crate) fn wake_h2(&self) {
        self.update(|s| s.h2 = true);
    }

    /// The session is gone: later reports are refused (their tasks end).
    pub(crate) fn close(&self) {
        let mut state = lock(&self.0);
        state.closed = true;
        state.reports.clear();
    }

    /// Registers the session's task to be woken (one waiter: the session).
    fn wait(state: &mut State, cx: &Context<'_>) {
        match &state.waiter {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.waiter = Some(cx.waker().clone()),
        }
    }

    /// The next report.
    pub(crate) fn poll_report(&self, cx: &Context<'_>) -> Poll<(ExchangeId, Report)> {
        let mut state = lock(&self.0);
        match state.reports.pop_front() {
            Some(got) => Poll::Ready(got),
            None => {
                Inbox::wait(&mut state, cx);
                Poll::Pending
            }
        }
    }

    /// The next wake of the HTTP/2 connection: true, or false once no wake can come any more.
    pub(crate) fn poll_h2(&self, cx: &Context<'_>) -> Poll<bool> {
        let mut state = lock(&self.0);
        if std::mem::take(&mut state.h2) {
            Poll::Ready(true)
        } else if state.h2_gone {
            Poll::Ready(false)
        } else {
            Inbox::wait(&mut state, cx);
            Poll::Pending
        }
    }

    /// Waits for the next wake of the HTTP/2 connection: true, or false once no wake can come.
    pub(crate) async fn h2(&self) -> bool {
        poll_fn(|cx| self.poll_h2(cx)).await
    }
}

/// The session's HTTP/2 waker: wakes the inbox; once every clone of the waker is dropped, the
/// inbox knows no wake can come any more.
pub(crate) struct H2Waker(pub(crate) Arc<Inbox>);

impl H2Waker {
    /// Wakes the session.
    pub(crate) fn wake(&self) {
        self.0.wake_h2();
    }
}

impl Drop for H2Waker {
    fn drop(&mut self) {
        self.0.update(|s| s.h2_gone = true);
    }
}
