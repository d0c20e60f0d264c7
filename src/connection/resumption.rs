//! Resumption: a legacy stream resumed with `Last-Event-ID`, a modern one re-issued.

use super::*;

impl Connection {
    /// A stream of the main request ended without its response.
    pub(super) fn stream_incomplete(&mut self, now: Instant, ex: &Exchange) {
        let Some(p) = self.machine.req_mut() else {
            return;
        };
        if let Session::Modern { .. } = &self.session {
            // A `tools/call` that declared the tasks extension may have created a task whose
            // id was lost with the stream: a second one would start a second task, so it is
            // not re-issued (SEP-2663; see `connection/task.rs`).
            if matches!(p.step, Step::Call) && self.declares_tasks() {
                return self.fail_op(Error::Task(crate::task::TaskError::CreationLost));
            }
            // A broken modern stream loses the request: re-issue it with a new id.
            return self.reissue(now);
        }
        let Some(last) = ex.last_event_id.clone() else {
            let e = ProtocolError::StreamEnded {
                reason: "the stream carried no event id",
            };
            return self.fail_op(Error::Protocol(e));
        };
        // A resumption that brought no later event id made no progress.
        if matches!(&ex.role, Role::Resume { from } if *from == last) {
            p.stalled += 1;
            if p.stalled > self.config.budgets.stalled_resumptions {
                let e = self.config.budgets.exceeded(Budget::StalledResumptions);
                return self.fail_op(Error::Budget(e));
            }
        } else {
            p.stalled = 0;
        }
        let wait = ex
            .retry
            .unwrap_or(DEFAULT_RETRY_WAIT)
            .min(self.config.budgets.max_retry_wait);
        self.machine.suspend(last, ex.retry, now + wait);
    }

    /// A modern re-issue: same request, new id.
    pub(super) fn reissue(&mut self, now: Instant) {
        self.resend(now, false, None);
    }

    /// Sends the pending request once more, on a fresh socket if `fresh`: a `GET` resumption
    /// if `resume` names where, otherwise the same request under a new JSON-RPC id, so that no
    /// request goes twice with one id and an answer to the old id is not taken for the new
    /// one's. Counted in `responses_per_request` as every sending.
    pub(super) fn resend(
        &mut self,
        now: Instant,
        fresh: bool,
        resume: Option<(String, Option<Duration>)>,
    ) {
        if resume.is_none() {
            let id = self.next_request_id();
            if let Some(p) = self.machine.req_mut() {
                p.id = id;
            }
        }
        self.send_pending(now, fresh, resume);
    }

    /// The wait before resuming is over: `GET` the stream from the last event id.
    pub(super) fn send_resume(&mut self, now: Instant) {
        if let Some(resume) = self.machine.resume() {
            self.send_pending(now, false, Some(resume));
        }
    }
}
