//! A session's inbox: what its exchange tasks report and the wake-ups of its shared HTTP/2
//! connection, behind one lock. One allocation per session, none per report or per wait (a
//! channel of `async-channel` costs several: its events' lists and a listener per wait).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use mcp_sansio::ExchangeId;

use crate::lock::lock;
use crate::session::Report;

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

/// What an exchange task and its session share: the socket the task leaves while it waits for
/// the session's word to read on (so that the session parks a reusable socket itself, at once),
/// and that word. One allocation per task, none per wait.
pub(crate) struct TaskSlot<S>(Mutex<SlotState<S>>);

struct SlotState<S> {
    /// The task's socket while it waits.
    held: Option<(SocketAddr, S)>,
    /// Read on, at most this many bytes ([`read_size`](crate::session::io::read_size) of the
    /// session's byte budget).
    read_on: Option<usize>,
    /// The session ended the exchange: the task ends.
    closed: bool,
    /// The task, while it waits.
    waiter: Option<Waker>,
}

impl<S> Default for TaskSlot<S> {
    fn default() -> Self {
        TaskSlot(Mutex::new(SlotState {
            held: None,
            read_on: None,
            closed: false,
            waiter: None,
        }))
    }
}

impl<S> TaskSlot<S> {
    /// Runs `f` on the state, then wakes the waiting task.
    fn update(&self, f: impl FnOnce(&mut SlotState<S>)) {
        let waiter = {
            let mut state = lock(&self.0);
            f(&mut state);
            state.waiter.take()
        };
        if let Some(waiter) = waiter {
            waiter.wake();
        }
    }

    /// Leaves the task's socket where the session may take it.
    pub(crate) fn hold(&self, socket: (SocketAddr, S)) {
        lock(&self.0).held = Some(socket);
    }

    /// Takes the socket the task left, if it is there.
    pub(crate) fn take(&self) -> Option<(SocketAddr, S)> {
        lock(&self.0).held.take()
    }

    /// Tells the task to read on, at most `cap` bytes.
    pub(crate) fn read_on(&self, cap: usize) {
        self.update(|s| s.read_on = Some(cap));
    }

    /// Ends the exchange: the waiting task ends.
    pub(crate) fn close(&self) {
        self.update(|s| s.closed = true);
    }

    /// Waits for the session's word: `Some(cap)` to read on, `None` once the exchange ended.
    pub(crate) async fn command(&self) -> Option<usize> {
        poll_fn(|cx| {
            let mut state = lock(&self.0);
            if state.closed {
                return Poll::Ready(None);
            }
            if let Some(cap) = state.read_on.take() {
                return Poll::Ready(Some(cap));
            }
            match &state.waiter {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => state.waiter = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
        .await
    }
}
