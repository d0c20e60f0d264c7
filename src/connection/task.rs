//! Tasks (SEP-2663): a `tools/call` answered with a `CreateTaskResult` goes on as a task that
//! the connection follows with `tasks/get`, answers with `tasks/update` and may cancel with
//! `tasks/cancel`; a task persisted as a [`TaskHandle`] is resumed on another connection.
//!
//! The building blocks are `crate::task`; the choices (what follows a report, a wait, an
//! acknowledgement) are the transition function's (`state/step.rs`); this module classifies the
//! answers, builds the requests and carries out the effects.
//!
//! Decisions (see also docs/tasks.md):
//!
//! - **The handle first.** [`Event::TaskCreated`] carries the [`TaskHandle`] as soon as the
//!   `CreateTaskResult` is read, before the first `tasks/get` is sent, so that the embedder can
//!   persist it; [`Event::TaskHandleUpdated`] carries it again after each `tasks/update` (the
//!   answered keys it records).
//! - **Dropping is not cancelling.** [`Connection::abandon`] and [`Connection::close`] stop
//!   following the task and send nothing about it (neither `tasks/cancel` nor
//!   `notifications/cancelled`): the task goes on on the server, and its handle resumes it.
//!   Only [`Connection::cancel_task`] cancels.
//! - **Re-issue.** A `tasks/get`, `tasks/update` or `tasks/cancel` whose stream broke is
//!   re-issued like any modern request (they are safe to repeat); a `tools/call` that declared
//!   the extension and whose stream broke after it may have been processed is not
//!   ([`TaskError::CreationLost`](crate::task::TaskError::CreationLost)).
//! - **Declined input fails the call**, as a declined multi round-trip request does; the task is
//!   not cancelled.

use super::*;

use crate::task::{self, StatusGuard, Task, TaskError, TaskHandle, TaskMethod, TaskStatus};

/// A task the running call follows.
#[derive(Debug)]
pub(super) struct TaskRun {
    /// The task's id, last status and polls.
    pub(super) guard: StatusGuard,
    /// Its input requests' keys.
    pub(super) book: task::InputBook,
    /// What the embedder persists.
    pub(super) handle: TaskHandle,
    /// The task's own time ([`Budget::TaskTime`]).
    pub(super) deadline: Deadline,
    /// The cancellation's time ([`Budget::TaskCancelTime`]), once `tasks/cancel` was sent.
    pub(super) cancel: Option<Deadline>,
    /// When the task was created, on the caller's timeline (the `ttlMs` backstop counts from
    /// it).
    pub(super) created: Instant,
    /// The wait before the next poll: the last `pollIntervalMs`, clamped.
    pub(super) interval: Duration,
    /// The `inputResponses` of the `tasks/update` being sent.
    pub(super) update: Option<Vec<u8>>,
    /// The operation's recoveries (none is made for a task request; kept for the era hint).
    pub(super) rec: Recovery,
    /// One report ends the operation ([`Connection::get_task`]): whatever the status, it is
    /// reported ([`Event::TaskReported`]) and nothing more is sent.
    pub(super) once: bool,
}

impl TaskRun {
    /// The deadline that ends the task first: its own, or its cancellation's.
    pub(super) fn deadline(&self) -> Deadline {
        match self.cancel {
            Some(c) if c.at < self.deadline.at => c,
            Some(_) | None => self.deadline,
        }
    }

    /// The last `ttlMs` if it has elapsed since the task was created at `now`: "the client MAY
    /// consider the task to no longer be usable".
    pub(super) fn expired(&self, now: Instant) -> Option<u64> {
        let ttl = self.handle.ttl_ms()?;
        (self.created + Duration::from_millis(ttl) <= now).then_some(ttl)
    }
}

/// What a `tasks/get` report says besides the task, read by the codec.
#[derive(Debug)]
pub(in crate::connection) enum TaskNews {
    /// `working` (nothing to do but wait).
    Working,
    /// `input_required`: the raw `inputRequests` object.
    Input(String),
    /// `completed`: the call's result, read as a `tools/call` result is.
    Done(CallResult),
    /// `failed`: the JSON-RPC error.
    Failed(crate::error::RpcError),
    /// `cancelled`.
    Cancelled,
}

impl Connection {
    /// Sets where this connection's timeline sits on the Unix clock
    /// ([`Config::unix_at_zero`], which it starts with): `now` passed to any input is
    /// `unix_at_zero + now` in Unix time, the clock of a [`TaskHandle`]'s times.
    pub fn set_unix_at_zero(&mut self, unix_at_zero: Duration) {
        self.unix_at_zero = unix_at_zero;
    }

    fn unix_ms(&self, now: Instant) -> u64 {
        let t = self.unix_at_zero.saturating_add(now.as_duration());
        u64::try_from(t.as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether requests of this connection declare the tasks extension: tasks on, in the
    /// 2026-07-28 era.
    pub(super) fn declares_tasks(&self) -> bool {
        self.config.tasks && matches!(self.session, Session::Modern { .. })
    }

    /// The version of the modern session, if one runs.
    fn modern_version(&self) -> Option<&str> {
        match &self.session {
            Session::Modern { version } => Some(version),
            Session::Legacy { .. } | Session::None => None,
        }
    }

    /// Classifies a `tools/call` result that the call reader refused, which may be a
    /// `CreateTaskResult`: `None` when it is not one.
    pub(super) fn classify_task_creation(&self, result: RawJson<'_>) -> Option<Answer> {
        #[derive(Deserialize)]
        struct ResultType<'a> {
            #[serde(rename = "resultType", borrow)]
            result_type: alloc::borrow::Cow<'a, str>,
        }
        // Only an object whose `resultType` is "task" (escapes read) is a task's answer; any
        // other refused result keeps the call reader's reason.
        if !result.get().trim_start().starts_with('{') {
            return None;
        }
        match serde_json::from_str::<ResultType<'_>>(result.get()) {
            Ok(r) if r.result_type == task::RESULT_TYPE_TASK => {}
            Ok(_) | Err(_) => return None,
        }
        let declared = self.declares_tasks();
        match task::classify_result("tools/call", result.get(), declared, &self.config.budgets) {
            Ok(task::ResultShape::NotTask) => None,
            Ok(task::ResultShape::Task(t)) => Some(Answer::TaskCreated(Box::new(t))),
            Err(e) => Some(Answer::Invalid(e.into())),
        }
    }

    /// Classifies the answer to a task request.
    pub(super) fn classify_task(&self, method: TaskMethod, outcome: Outcome<'_>) -> Answer {
        let budgets = &self.config.budgets;
        let result = match outcome {
            Outcome::Result(result) => result,
            Outcome::RpcError { status, error } => {
                let e = error.to_owned_error(status);
                return Answer::Unusable(match e.code {
                    MISSING_CAPABILITY => crate::error::missing_capability(error.data, e),
                    _ => task::rpc_error(e),
                });
            }
            Outcome::Status(status) => return Answer::Unusable(status_error(status)),
            Outcome::Accepted => return Answer::Unusable(Error::HttpStatus { status: 202 }),
        };
        match method {
            TaskMethod::Update | TaskMethod::Cancel => {
                match task::parse_ack(method, result.get()) {
                    Ok(()) => Answer::TaskAck,
                    Err(e) => Answer::Invalid(e.into()),
                }
            }
            TaskMethod::Get => {
                let detailed = match task::parse_get_result(result.get(), budgets) {
                    Ok(d) => d,
                    Err(e) => return Answer::Invalid(e.into()),
                };
                let news = match (detailed.task.status, detailed.payload) {
                    (TaskStatus::Completed, task::TaskPayload::Result(raw)) => {
                        match self.read_task_result(&raw) {
                            Ok(r) => TaskNews::Done(r),
                            Err(e) => return Answer::Invalid(e),
                        }
                    }
                    (TaskStatus::Failed, task::TaskPayload::Error(rpc)) => TaskNews::Failed(rpc),
                    (TaskStatus::InputRequired, task::TaskPayload::InputRequests(raw)) => {
                        TaskNews::Input(raw)
                    }
                    (TaskStatus::Cancelled, _) => TaskNews::Cancelled,
                    // `parse_get_result` gives each status its payload.
                    (
                        TaskStatus::Working
                        | TaskStatus::Completed
                        | TaskStatus::Failed
                        | TaskStatus::InputRequired,
                        _,
                    ) => TaskNews::Working,
                };
                Answer::TaskReport {
                    task: Box::new(detailed.task),
                    news,
                }
            }
        }
    }

    /// A completed task's `result`, read through the call-result path (`isError` stays a tool
    /// error): anything but a complete `CallToolResult` is an invalid answer.
    fn read_task_result(&self, raw: &str) -> Result<CallResult, Error> {
        let value: &RawValue = serde_json::from_str(raw)
            .map_err(|e| invalid_answer("tasks/get", format!("result: {e}")))?;
        match call::parse_call_result(RawJson::from(value), self.max_content_blocks()) {
            Ok(CallAnswer::Complete(r)) => Ok(r),
            Ok(CallAnswer::InputRequired { .. }) => Err(invalid_answer(
                "tasks/get",
                "a completed task's result is not a CallToolResult".into(),
            )),
            Err(call::AnswerError::Invalid(reason)) => Err(invalid_answer("tasks/get", reason)),
            Err(call::AnswerError::TooManyBlocks) => Err(Error::Budget(
                self.config.budgets.exceeded(Budget::ContentBlocks),
            )),
        }
    }

    /// The body and headers of the task request `method` about the running task.
    pub(super) fn build_task_step(
        &self,
        method: TaskMethod,
        id: u64,
    ) -> Result<(Request, Option<usize>), Error> {
        let (Some(run), Some(version)) = (self.machine.task(), self.modern_version()) else {
            return Err(Error::Misuse {
                reason: "no task is running",
            });
        };
        let (body, traceparent_at) = task::write_request_body(
            &self.config,
            version,
            method,
            id,
            run.guard.id(),
            run.update.as_deref(),
        );
        let mut headers = self.base_headers(None, true);
        headers.extend(task::routing_headers(method, run.guard.id()));
        Ok((self.request(Method::Post, headers, body), traceparent_at))
    }

    /// The call's `CreateTaskResult` was read: the handle is made and reported, and the first
    /// poll waits for the task's poll interval.
    pub(super) fn start_task(&mut self, now: Instant, created: Task) {
        let version = self.modern_version().unwrap_or_default().to_owned();
        let handle = match TaskHandle::new(
            &self.config,
            Era::Modern,
            &version,
            &created,
            self.unix_ms(now),
        ) {
            Ok(h) => h,
            Err(e) => return self.fail_op(Error::Task(TaskError::Handle(e))),
        };
        let budgets = &self.config.budgets;
        let interval = task::poll_interval(created.poll_interval_ms, budgets);
        let run = TaskRun {
            guard: StatusGuard::new(&created),
            book: task::InputBook::new(),
            handle: handle.clone(),
            deadline: Deadline::new(now, budgets, Budget::TaskTime),
            cancel: None,
            created: now,
            interval,
            update: None,
            rec: Recovery::new(Hint::Settled),
            once: false,
        };
        self.events.push_back(Event::TaskCreated {
            handle: Box::new(handle),
        });
        self.machine.start_task(Box::new(run), now + interval);
    }

    /// Sends the next `tasks/get` of the running task, within [`Budget::TaskPolls`].
    pub(super) fn poll_task(&mut self, now: Instant) {
        let budgets = self.config.budgets.clone();
        let Some(run) = self.machine.task_mut() else {
            return;
        };
        if let Err(e) = run.guard.poll(&budgets) {
            return self.fail_op(e.into());
        }
        run.update = None;
        let req = self.new_request(now, Step::Task(TaskMethod::Get), None);
        self.machine.task_request(req);
        self.send_pending(now, false, None);
    }

    /// Resumes following the task of `handle` (persisted from [`Event::TaskCreated`] or
    /// [`Event::TaskHandleUpdated`], possibly by another process) on this connection, which must
    /// be connected in the 2026-07-28 era (an era hint made from the handle connects without a
    /// request) with tasks on. The handle must belong to this connection's server and
    /// principal ([`TaskHandle::check`]: with a grant, any token of it, so a refreshed token
    /// resumes it), else the operation fails with
    /// [`TaskError::Handle`]; a handle past its deadline or its `ttlMs` fails with
    /// [`Budget::TaskTime`] or [`TaskError::Expired`]. Then it polls `tasks/get` at once, as a
    /// call would after its `CreateTaskResult`, and ends as that call would (with
    /// [`Event::CallFinished`] or a [`Event::Failed`] of [`Operation::CallTool`]); the keys the
    /// handle records as answered are never answered again.
    pub fn resume_task(&mut self, now: Instant, handle: &TaskHandle) {
        self.resume(now, handle, false);
    }

    /// One `tasks/get` of the task of `handle`, checked and sent as
    /// [`resume_task`](Self::resume_task) does; the operation ([`Operation::CallTool`]) ends
    /// with the first report, whatever the status: [`Event::TaskReported`] carries the task
    /// (its status, `statusMessage`, `ttlMs`, `pollIntervalMs`) and a `completed` task's result
    /// or a `failed` task's error. A `working` or `input_required` task is not waited for, and
    /// its input requests are not presented. A poll that fails (the handle refused, `-32602`,
    /// an unusable answer, a budget) fails the operation as a resume's would.
    pub fn get_task(&mut self, now: Instant, handle: &TaskHandle) {
        self.resume(now, handle, true);
    }

    fn resume(&mut self, now: Instant, handle: &TaskHandle, once: bool) {
        if let Err(e) = self.check_resumable(now, handle) {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e,
            });
        }
        let now_unix = self.unix_ms(now);
        let budgets = &self.config.budgets;
        let left = Duration::from_millis(handle.deadline_unix_ms().saturating_sub(now_unix));
        let age = Duration::from_millis(now_unix.saturating_sub(handle.created_unix_ms()));
        let created = Instant::from_duration(now.as_duration().saturating_sub(age));
        let mut run = TaskRun {
            guard: StatusGuard::resumed(handle.id().clone()),
            book: task::InputBook::resumed(handle),
            handle: handle.clone(),
            deadline: Deadline {
                at: now + left,
                budget: Budget::TaskTime,
            },
            cancel: None,
            created,
            interval: task::poll_interval(None, budgets),
            update: None,
            rec: Recovery::new(Hint::Settled),
            once,
        };
        if let Err(e) = run.guard.poll(budgets) {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e.into(),
            });
        }
        let mut req = self.new_request(now, Step::Task(TaskMethod::Get), None);
        if run.deadline.at < req.deadline.at {
            req.deadline = run.deadline;
        }
        self.machine.resume_task(Box::new(run), req);
        self.send_pending(now, false, None);
    }

    fn check_resumable(&self, now: Instant, handle: &TaskHandle) -> Result<(), Error> {
        self.check_connected()?;
        if !self.declares_tasks() || handle.era() != Era::Modern {
            return Err(Error::Misuse {
                reason: "resuming a task needs tasks on and a 2026-07-28 connection",
            });
        }
        handle.check(&self.config).map_err(TaskError::Handle)?;
        // A handle comes from the embedder's storage: its id meets this connection's budget as
        // an id the server sends does.
        task::TaskId::parse(handle.id().as_str(), self.config.budgets.task_id_bytes)?;
        handle.check_time(self.unix_ms(now), &self.config)?;
        Ok(())
    }

    /// Cancels the running task: `tasks/cancel` is sent (never `notifications/cancelled`,
    /// which "MUST NOT be used for task cancellation"), a `tasks/get` or `tasks/update` in
    /// flight is given up, and polling goes on until a terminal status within
    /// [`Budgets::task_cancel_time`](crate::Budgets::task_cancel_time) (the acknowledgement is
    /// eventually consistent). The call then ends as the task does: `cancelled` fails it with
    /// [`TaskError::Cancelled`], a result that won the race finishes it. Without a task running
    /// it is [`Error::Misuse`]; a second cancel while one runs does nothing.
    pub fn cancel_task(&mut self, now: Instant) -> Result<(), Error> {
        let budgets = self.config.budgets.clone();
        let Some(run) = self.machine.task_mut() else {
            return Err(Error::Misuse {
                reason: "no task is running",
            });
        };
        if run.cancel.is_some() {
            return Ok(());
        }
        run.cancel = Some(Deadline::new(now, &budgets, Budget::TaskCancelTime));
        run.update = None;
        self.abandon_main();
        let req = self.new_request(now, Step::Task(TaskMethod::Cancel), None);
        self.machine.cancel_task(req);
        self.send_pending(now, false, None);
        Ok(())
    }

    /// The embedder's answers to the task's input requests (`responses`: a JSON object of key
    /// to result), sent as one `tasks/update`; the keys must be outstanding
    /// ([`TaskError::NotOutstanding`] otherwise: the call fails and nothing is sent).
    pub(super) fn provide_task_input(&mut self, now: Instant, responses: &[u8]) {
        let budgets = self.config.budgets.clone();
        let pairs = match input_pairs(responses) {
            Ok(p) => p,
            Err(reason) => {
                return self.fail_op(Error::Config(ConfigError::InvalidArguments { reason }))
            }
        };
        let Some(run) = self.machine.task_mut() else {
            return;
        };
        let borrowed: Vec<(&str, &str)> =
            pairs.iter().map(|(k, v)| (k.as_str(), v.get())).collect();
        let update = match run.book.respond(&borrowed, &budgets) {
            Ok(u) => u,
            Err(e) => return self.fail_op(e.into()),
        };
        run.update = Some(update);
        run.handle.record_answers(&run.book);
        let handle = Box::new(run.handle.clone());
        self.events.push_back(Event::TaskHandleUpdated { handle });
        let req = self.new_request(now, Step::Task(TaskMethod::Update), None);
        self.machine.task_request(req);
        self.send_pending(now, false, None);
    }
}

/// The members of the embedder's `inputResponses` object, in order, a key given twice kept
/// twice (so that [`task::InputBook::respond`] refuses it).
fn input_pairs(responses: &[u8]) -> Result<Vec<(String, Box<RawValue>)>, String> {
    use serde::de::{Deserializer, MapAccess, Visitor};
    struct Pairs(Vec<(String, Box<RawValue>)>);
    impl<'de> Deserialize<'de> for Pairs {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Pairs;
                fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str("an object of input responses")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Pairs, A::Error> {
                    let mut out = Vec::new();
                    while let Some(k) = a.next_key::<String>()? {
                        out.push((k, a.next_value::<Box<RawValue>>()?));
                    }
                    Ok(Pairs(out))
                }
            }
            d.deserialize_map(V)
        }
    }
    let text = core::str::from_utf8(responses).map_err(|_| "input responses are not UTF-8")?;
    serde_json::from_str::<Pairs>(text)
        .map(|p| p.0)
        .map_err(|e| format!("input responses: {e}"))
}

/// The object of the input requests `fresh` (key to request), for [`Event::InputRequired`].
pub(super) fn requests_object(fresh: &[task::InputRequest]) -> Option<Box<RawValue>> {
    let mut out = Vec::new();
    let mut w = ObjectWriter::new(&mut out);
    for r in fresh {
        w.raw(&r.key, r.request.as_bytes());
    }
    w.finish();
    let text = String::from_utf8(out).ok()?;
    RawValue::from_string(text).ok()
}
