//! The transition function: from the state and the server's answer to the request it waits on
//! (an [`Answer`], classified by the codec) to what follows, as [`Effect`]s that the connection
//! carries out (`connection/effects.rs`). Every choice of what follows an answer is made here,
//! in one exhaustive `match`; a transition that needs no new request (a listing's or a call's
//! end, a backoff, a wait for input, a close whose `DELETE` was answered) is made here too, the
//! others by the effect that builds their request, through the transition methods of
//! `state.rs`.

use super::*;

/// What the server's answer to the pending request says, classified by the codec
/// (`outcome.rs`, `listing.rs`, `calling.rs`): never what follows.
#[derive(Debug)]
pub(in crate::connection) enum Answer {
    /// `server/discover` answered: the newest mutual modern version, if any; whether a legacy
    /// version is mutual; the versions it supports; what the server said of itself.
    Discovered {
        modern: Option<String>,
        legacy: bool,
        supported: Vec<String>,
        server: Announced,
        cache: crate::list::CacheHint,
    },
    /// A `-32022` to `server/discover`: the newest mutual modern version its data names, if
    /// any, and the versions it names.
    VersionRefused {
        mutual: Option<String>,
        supported: Vec<String>,
    },
    /// `server/discover` answered `404` with `-32601`: a modern server that does not implement
    /// it.
    DiscoverUnimplemented,
    /// A negotiation step answered with a recognised modern error (to `initialize`: also a
    /// `404` with `-32601`).
    ModernError(Error),
    /// A negotiation step answered as a server of the other era would: a 4xx without a
    /// recognised modern body (to `server/discover`: also a `200` without a result).
    OtherEra(Error),
    /// `initialize` answered with `version` (`offered`: one of this client's) and what the
    /// server said of itself.
    Initialized {
        version: String,
        offered: bool,
        server: Announced,
    },
    /// A `2xx` with nothing to read: `notifications/initialized` accepted, or the `DELETE`'s
    /// answer (whatever it was: the session ends for the client).
    Accepted,
    /// A listing's page, added to the listing: its next cursor (`None`: the last page) and
    /// whether that cursor was followed already.
    Page {
        next: Option<String>,
        repeated: bool,
    },
    /// The listing a call ran for is complete: the called tool's `Mcp-Param-*` headers from
    /// it, or the error the call fails with (the tool is not listed, its headers cannot be
    /// made).
    Relisted(Result<Vec<(String, String)>, Error>),
    /// The call's result.
    CallDone(CallResult),
    /// An `input_required` result: the server's input requests (`None`: load shedding) and its
    /// `requestState`.
    InputRequired {
        requests: Option<Box<RawValue>>,
        state: Option<Box<RawValue>>,
    },
    /// The server refused a listing's page or a call's round: what the refusal says for the
    /// recoveries, the error the operation fails with if none is left, and the JSON-RPC error
    /// (a header mismatch's, to re-list with).
    Refused {
        refusal: Refusal,
        error: Error,
        rpc: Option<crate::error::RpcError>,
    },
    /// The call's answer is a `CreateTaskResult` (SEP-2663), read under bounds: the task it
    /// created.
    TaskCreated(Box<crate::task::Task>),
    /// A `tasks/get` report: the task and what its status brings.
    TaskReport {
        task: Box<crate::task::Task>,
        news: TaskNews,
    },
    /// `tasks/update` or `tasks/cancel` acknowledged.
    TaskAck,
    /// A result in the era assumed (the era is settled) whose content cannot be used.
    Invalid(Error),
    /// Any other answer that cannot be used.
    Unusable(Error),
}

/// What the connection's configuration says for the choices (the machine holds no
/// configuration of its own).
#[derive(Clone, Copy, Debug)]
pub(in crate::connection) struct Policy<'a> {
    pub(in crate::connection) budgets: &'a crate::budget::Budgets,
    /// [`Config::input_hook`].
    pub(in crate::connection) input_hook: bool,
    /// Whether the configuration offers a legacy version.
    pub(in crate::connection) legacy_offered: bool,
    /// Whether a changed tool is refused ([`PinPolicy::Refuse`](crate::pin::PinPolicy::Refuse)
    /// of [`Config::tool_pins`]): a call made with a known definition of its tool fails with
    /// [`Error::ToolChanged`] when its re-listing ends, instead of being sent again; and a
    /// listing's every tool is known to later calls, not only those with `x-mcp-header`
    /// parameters.
    pub(in crate::connection) refuse_changed_tools: bool,
}

/// What follows an answer, for the connection to carry out, in order.
#[derive(Debug)]
pub(in crate::connection) enum Effect {
    /// Connected in the modern era with `version`: record the session (and what the
    /// `server/discover` answer said of its caching), report it, restart the operation a
    /// re-negotiation interrupted; `undiscovered` if `server/discover` was not implemented
    /// (the era may still prove wrong, once).
    ConnectModern {
        version: String,
        server: Announced,
        cache: Option<crate::list::CacheHint>,
        undiscovered: bool,
    },
    /// The legacy session `initialize` established (its id from the answer's head): record it
    /// and send `notifications/initialized`.
    Confirm {
        version: String,
        session_id: Option<String>,
        server: Announced,
    },
    /// `notifications/initialized` accepted: connected, as `initialize` announced the server.
    ConnectLegacy { server: Announced },
    /// Send `server/discover` once more, offering `version` (the one retry).
    Rediscover { version: String },
    /// Send `initialize` (after the probe).
    Initialize,
    /// The era or the version proved wrong: negotiate again (from the probe, or straight to
    /// `initialize` if `probe` is false: the probe already found no `server/discover`), then
    /// restart the operation.
    Renegotiate { probe: bool },
    /// The server ended the legacy session: start a new one, then restart the operation.
    NewSession,
    /// List the tools for the running call, which got the header mismatch `error`.
    Relist(crate::error::RpcError),
    /// Send the listing's next page, from `cursor`.
    NextPage(String),
    /// The listing that ran for a call is complete: find the called tool in it
    /// ([`Answer::Relisted`] follows).
    Relisted,
    /// Send the call's round again after its re-listing.
    CallAgain,
    /// Send the call's next round.
    NextRound,
    /// The tools of a complete listing: the headers of later calls.
    LearnHeaders(Vec<(String, Option<alloc::sync::Arc<[crate::xmcp::HeaderParam]>>)>),
    /// Keep the names of the listed tools whose `execution.taskSupport` is `"required"`.
    LearnTaskRequired(Vec<String>),
    /// A `-32020`: the catalog the request took its tool's headers from is stale (`call`: met
    /// by a tool call, which reports it).
    CatalogStale { call: bool },
    /// Report `event`.
    Report(Event),
    /// The running operation fails with the error.
    Fail(Error),
    /// The negotiation fails: no version of the server's (`theirs`) is one of this client's
    /// (`all`: say every version offered, not only the modern ones).
    NoMutual { theirs: Vec<String>, all: bool },
    /// The `DELETE` was answered: Closed, unless a background cancellation is still open.
    Deleted,
    /// The request's time ran out (its own, its exchange's, or its operation's): the operation
    /// fails with the budget, and a legacy listing's page or call's round is cancelled.
    TimedOut(BudgetExceeded),
    /// A resumption's wait is over: send its `GET`.
    Resume,
    /// The call created a task: make its handle, report it, and wait for the first poll.
    StartTask(Box<crate::task::Task>),
    /// Send the task's next `tasks/get`.
    Poll,
}

/// The effects of one answer: at most three.
pub(in crate::connection) type Effects = alloc::vec::Vec<Effect>;

impl Machine {
    /// The transition function: what `answer`, the server's answer at `now` to the request
    /// the state waits on, leads to. Transitions that need no request are made here; the
    /// effects returned carry out the rest, in order.
    pub(in crate::connection) fn step(
        &mut self,
        now: Instant,
        answer: Answer,
        policy: Policy<'_>,
    ) -> Effects {
        let mut out = Effects::with_capacity(2);
        // A result in the era assumed: the hint, if any, was right.
        let settles = matches!(
            answer,
            Answer::Page { .. }
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::TaskCreated(_)
                | Answer::Invalid(_)
        ) && matches!(
            self.state,
            State::Listing { .. } | State::Relisting { .. } | State::Calling { .. }
        );
        if settles {
            if let Some(rec) = self.state.rec_mut() {
                rec.hint = Hint::Settled;
            }
        }
        let hint = self.state.hint();
        let operation = self.state.operation();
        match (&mut self.state, answer) {
            // --- server/discover ---------------------------------------------------------------
            (
                State::Discovering { .. },
                Answer::Discovered {
                    modern,
                    legacy,
                    supported,
                    server,
                    cache,
                },
            ) => out.push(match modern {
                Some(version) => Effect::ConnectModern {
                    version,
                    server,
                    cache: Some(cache),
                    undiscovered: false,
                },
                None if legacy => Effect::Initialize,
                None => Effect::NoMutual {
                    theirs: supported,
                    all: true,
                },
            }),
            // One retry, even with the version just refused when the server lists it as
            // supported (a deployment mid-upgrade answers both ways); never a second.
            (State::Discovering { req, .. }, Answer::VersionRefused { mutual, supported }) => {
                let first = matches!(req.step, Step::Discover { attempt: 0, .. });
                out.push(match mutual {
                    Some(version) if first => Effect::Rediscover { version },
                    Some(_) | None => Effect::NoMutual {
                        theirs: supported,
                        all: false,
                    },
                })
            }
            // A modern server that does not implement `server/discover` (clients need not call
            // it): connected in the modern era with the version offered and nothing discovered;
            // if the next request shows a legacy server after all, the connection falls back
            // to `initialize` once.
            (State::Discovering { req, .. }, Answer::DiscoverUnimplemented) => {
                let version = match &req.step {
                    Step::Discover { version, .. } => version.clone(),
                    Step::Initialize { .. }
                    | Step::Initialized { .. }
                    | Step::ListPage { .. }
                    | Step::Call
                    | Step::Task(_)
                    | Step::Delete => String::new(),
                };
                out.push(Effect::ConnectModern {
                    version,
                    server: Announced::default(),
                    cache: None,
                    undiscovered: policy.legacy_offered,
                })
            }
            (State::Discovering { .. }, Answer::OtherEra(error)) => {
                out.push(match policy.legacy_offered {
                    true => Effect::Initialize,
                    false => Effect::Fail(error),
                })
            }
            (
                State::Discovering { .. },
                Answer::ModernError(error) | Answer::Unusable(error) | Answer::Invalid(error),
            ) => out.push(Effect::Fail(error)),
            // --- initialize ----------------------------------------------------------------------
            (
                State::Initializing { req, .. },
                Answer::Initialized {
                    version,
                    offered,
                    server,
                },
            ) => out.push(match offered {
                true => Effect::Confirm {
                    version,
                    session_id: match &mut req.step {
                        Step::Initialize { session_id } => session_id.take(),
                        Step::Discover { .. }
                        | Step::Initialized { .. }
                        | Step::ListPage { .. }
                        | Step::Call
                        | Step::Task(_)
                        | Step::Delete => None,
                    },
                    server,
                },
                false => Effect::NoMutual {
                    theirs: vec![version],
                    all: false,
                },
            }),
            // A legacy era hint that a modern answer proves wrong: negotiate again, once.
            (State::Initializing { .. }, Answer::ModernError(error) | Answer::OtherEra(error)) => {
                if hint == Hint::Unproven {
                    self.set_hint(Hint::Settled);
                    out.push(Effect::Renegotiate { probe: true });
                } else {
                    out.push(Effect::Fail(error));
                }
            }
            (State::Initializing { .. }, Answer::Unusable(error) | Answer::Invalid(error)) => {
                out.push(Effect::Fail(error))
            }
            // --- notifications/initialized ---------------------------------------------------------
            (State::Confirming { req, .. }, Answer::Accepted) => {
                let server = match &mut req.step {
                    Step::Initialized { server } => core::mem::take(server),
                    Step::Discover { .. }
                    | Step::Initialize { .. }
                    | Step::ListPage { .. }
                    | Step::Call
                    | Step::Task(_)
                    | Step::Delete => Announced::default(),
                };
                out.push(Effect::ConnectLegacy { server })
            }
            (State::Confirming { .. }, Answer::Unusable(error) | Answer::Invalid(error)) => {
                out.push(Effect::Fail(error))
            }
            // --- a listing's page ------------------------------------------------------------------
            (State::Listing { list, .. }, Answer::Page { next: None, .. }) => {
                let every = policy.refuse_changed_tools;
                out.push(Effect::LearnHeaders(header_tools(&list.catalog, every)));
                out.push(Effect::LearnTaskRequired(task_required_tools(&list.catalog)));
                if let Some(list) = self.finish_list() {
                    out.push(Effect::Report(Event::ToolsListed(list.catalog)));
                }
            }
            (State::Relisting { list, call, .. }, Answer::Page { next: None, .. }) => {
                let every = policy.refuse_changed_tools;
                out.push(Effect::LearnHeaders(header_tools(&list.catalog, every)));
                out.push(Effect::LearnTaskRequired(task_required_tools(&list.catalog)));
                // Under the pin policy `refuse`, a call made with a known definition of its tool
                // is not sent again: the mismatch says the server's definition is no longer that
                // one (its `x-mcp-header` parameters, part of its input schema, changed).
                out.push(if call.known && every {
                    Effect::Fail(Error::ToolChanged {
                        name: call.name.clone(),
                        operation: Operation::CallTool,
                        changed: 1,
                    })
                } else {
                    Effect::Relisted
                });
            }
            (
                State::Listing { list, .. } | State::Relisting { list, .. },
                Answer::Page {
                    next: Some(cursor),
                    repeated,
                },
            ) => out.push(if list.catalog.pages >= policy.budgets.pages {
                Effect::Fail(Error::Budget(policy.budgets.exceeded(Budget::Pages)))
            } else if repeated {
                let cursor = truncated(&cursor, 64);
                Effect::Fail(Error::Protocol(ProtocolError::PaginationLoop { cursor }))
            } else {
                Effect::NextPage(cursor)
            }),
            // --- the end of a call's re-listing -----------------------------------------------
            (State::Relisting { call, .. }, Answer::Relisted(found)) => match found {
                Ok(headers) => {
                    call.param_headers = headers;
                    out.push(Effect::CallAgain);
                }
                Err(error) => out.push(Effect::Fail(error)),
            },
            // --- a call's round --------------------------------------------------------------------
            (State::Calling { .. }, Answer::CallDone(result)) => {
                self.finish_call();
                out.push(Effect::Report(Event::CallFinished(result)));
            }
            (State::Calling { call, .. }, Answer::InputRequired { requests, state }) => {
                // Every round is a response spent on the one logical call.
                if call.rounds + 1 >= policy.budgets.responses_per_request {
                    let e = policy.budgets.exceeded(Budget::ResponsesPerRequest);
                    out.push(Effect::Fail(Error::Budget(e)));
                    return out;
                }
                call.request_state = state;
                call.input_responses = None;
                match requests {
                    // Load shedding: retry echoing the state, the first time at once, then
                    // backing off.
                    None => {
                        let wait = load_shedding_backoff(call.rounds);
                        if wait.is_zero() {
                            out.push(Effect::NextRound);
                        } else {
                            self.back_off(now + wait);
                        }
                    }
                    Some(requests) if policy.input_hook => {
                        self.await_input();
                        out.push(Effect::Report(Event::InputRequired { requests }));
                    }
                    Some(requests) => {
                        let reason = format!(
                            "input_required asks for {} and no input hook is configured",
                            requested_kinds(&requests)
                        );
                        out.push(Effect::Fail(invalid_answer("tools/call", reason)))
                    }
                }
            }
            // --- a page or a round refused: the recoveries --------------------------------------
            (
                State::Listing { .. } | State::Relisting { .. } | State::Calling { .. },
                Answer::Refused {
                    refusal,
                    error,
                    rpc,
                },
            ) => {
                let recover = self.recover(refusal);
                if refusal.catalog_stale(recover) {
                    let call = operation == Some(Operation::CallTool);
                    out.push(Effect::CatalogStale { call });
                }
                out.push(match (recover, rpc) {
                    (Recover::Renegotiate, Some(_) | None) => {
                        self.set_hint(Hint::Settled);
                        Effect::Renegotiate {
                            probe: hint != Hint::Undiscovered,
                        }
                    }
                    (Recover::NewSession, Some(_) | None) => Effect::NewSession,
                    (Recover::Relist, Some(rpc)) => Effect::Relist(rpc),
                    (Recover::Relist, None) | (Recover::Fail, Some(_) | None) => {
                        Effect::Fail(error)
                    }
                });
            }
            (
                State::Listing { .. } | State::Relisting { .. } | State::Calling { .. },
                Answer::Invalid(error) | Answer::Unusable(error),
            ) => out.push(Effect::Fail(error)),
            // --- a task (SEP-2663) --------------------------------------------------------------------
            (State::Calling { .. }, Answer::TaskCreated(task)) => out.push(Effect::StartTask(task)),
            (State::TaskPolling { task: run, .. }, Answer::TaskReport { task, news }) => {
                if let Err(e) = run.guard.observe(&task) {
                    out.push(Effect::Fail(e.into()));
                    return out;
                }
                run.handle.set_ttl_ms(task.ttl_ms);
                run.interval = crate::task::poll_interval(task.poll_interval_ms, policy.budgets);
                out.push(Effect::Report(Event::TaskStatus {
                    status: task.status,
                    message: task.status_message.clone(),
                }));
                // `get_task`: the report is the outcome, whatever the status.
                if run.once {
                    let (result, error) = match news {
                        TaskNews::Done(result) => (Some(result), None),
                        TaskNews::Failed(rpc) => (None, Some(rpc)),
                        TaskNews::Working | TaskNews::Input(_) | TaskNews::Cancelled => {
                            (None, None)
                        }
                    };
                    self.finish_task();
                    let report = crate::task::TaskReport {
                        task: *task,
                        result,
                        error,
                    };
                    out.push(Effect::Report(Event::TaskReported(Box::new(report))));
                    return out;
                }
                let expired = run.expired(now);
                let cancelling = run.cancel.is_some();
                let at = now + run.interval;
                match news {
                    TaskNews::Done(result) => {
                        self.finish_task();
                        out.push(Effect::Report(Event::CallFinished(result)));
                    }
                    TaskNews::Failed(rpc) => out.push(Effect::Fail(Error::Rpc(rpc))),
                    TaskNews::Cancelled => out.push(Effect::Fail(Error::Task(
                        crate::task::TaskError::Cancelled {
                            message: task.status_message,
                        },
                    ))),
                    // `ttlMs` as a backstop: a task past it is no longer usable.
                    TaskNews::Working | TaskNews::Input(_) if expired.is_some() => {
                        let ttl_ms = expired.unwrap_or_default();
                        out.push(Effect::Fail(Error::Task(
                            crate::task::TaskError::Expired { ttl_ms },
                        )))
                    }
                    TaskNews::Working => self.task_wait(at),
                    TaskNews::Input(raw) => match run.book.poll(&raw) {
                        Err(e) => out.push(Effect::Fail(e.into())),
                        // Nothing new to present (or a cancellation runs): poll again.
                        Ok(fresh) if fresh.is_empty() || cancelling => self.task_wait(at),
                        Ok(fresh) if policy.input_hook => match requests_object(&fresh) {
                            Some(requests) => {
                                self.task_await_input();
                                out.push(Effect::Report(Event::InputRequired { requests }));
                            }
                            None => out.push(Effect::Fail(invalid_answer(
                                "tasks/get",
                                "unusable input requests".into(),
                            ))),
                        },
                        Ok(fresh) => {
                            let mut kinds: Vec<&str> =
                                fresh.iter().map(|r| input_method(&r.request)).collect();
                            kinds.sort_unstable();
                            kinds.dedup();
                            let reason = format!(
                                "input_required asks for {} and no input hook is configured",
                                kinds.join(", ")
                            );
                            out.push(Effect::Fail(invalid_answer("tasks/get", reason)))
                        }
                    },
                }
            }
            (
                State::TaskPolling { task: run, .. } | State::TaskCancelling { task: run, .. },
                Answer::TaskAck,
            ) => {
                let at = now + run.interval;
                self.task_wait(at);
            }
            (
                State::TaskPolling { .. } | State::TaskCancelling { .. },
                Answer::Invalid(error) | Answer::Unusable(error),
            ) => out.push(Effect::Fail(error)),
            // --- the DELETE ---------------------------------------------------------------------------
            (State::Closing { .. }, Answer::Accepted) => out.push(Effect::Deleted),
            // --- anything else is a bug: no such answer reaches that state ------------------------
            // States that wait on no request get no answer at all.
            (
                State::Unconnected
                | State::Ready { .. }
                | State::AwaitingInput { .. }
                | State::Backoff { .. }
                | State::TaskWaiting { .. }
                | State::TaskAwaitingInput { .. }
                | State::Resuming { .. }
                | State::Dead(_)
                | State::Closed,
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::Invalid(_)
                | Answer::Unusable(_)
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            // Each request's answers are classified for its own kind of request.
            | (
                State::Discovering { .. },
                Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Initializing { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::Accepted
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Confirming { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Listing { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Relisting { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Calling { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::Closing { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::Invalid(_)
                | Answer::Unusable(_)
                | Answer::TaskCreated(_)
                | Answer::TaskReport { .. }
                | Answer::TaskAck,
            )
            | (
                State::TaskPolling { .. } | State::TaskCancelling { .. },
                Answer::Discovered { .. }
                | Answer::VersionRefused { .. }
                | Answer::DiscoverUnimplemented
                | Answer::ModernError(_)
                | Answer::OtherEra(_)
                | Answer::Initialized { .. }
                | Answer::Accepted
                | Answer::Page { .. }
                | Answer::Relisted(_)
                | Answer::CallDone(_)
                | Answer::InputRequired { .. }
                | Answer::Refused { .. }
                | Answer::TaskCreated(_),
            )
            | (State::TaskCancelling { .. }, Answer::TaskReport { .. }) => {
                // A bug of the connection: a debug build stops; a release build ends the
                // connection with the typed error rather than guess what follows.
                let name = self.state.name();
                self.broken(name, operation, name);
            }
        }
        out
    }
}

impl Machine {
    /// The clock reached `now`: what is due in the state, if anything. `exchange_deadline` is
    /// that of the exchange carrying the pending request's answer, if one does.
    pub(in crate::connection) fn on_time(
        &mut self,
        now: Instant,
        exchange_deadline: Option<Instant>,
        budgets: &crate::budget::Budgets,
    ) -> Option<Effect> {
        match &self.state {
            // Waiting on nothing the clock ends.
            State::Unconnected | State::Ready { .. } | State::Dead(_) | State::Closed => None,
            // Waiting on the embedder (input requests): only the operation's deadline runs.
            // Waiting on a load-shedding backoff: the retry when it is due.
            State::AwaitingInput { deadline, .. } | State::Backoff { deadline, .. }
                if deadline.at <= now =>
            {
                Some(Effect::Fail(Error::Budget(deadline.exceeded(budgets))))
            }
            State::Backoff { at, .. } if *at <= now => Some(Effect::NextRound),
            State::AwaitingInput { .. } | State::Backoff { .. } => None,
            // A task between polls, or waiting on the embedder: its own time (or its
            // cancellation's) runs; the next poll when it is due.
            State::TaskWaiting { task, .. } | State::TaskAwaitingInput { task }
                if task.deadline().at <= now =>
            {
                Some(Effect::Fail(Error::Budget(
                    task.deadline().exceeded(budgets),
                )))
            }
            State::TaskWaiting { at, .. } if *at <= now => Some(Effect::Poll),
            State::TaskWaiting { .. } | State::TaskAwaitingInput { .. } => None,
            // Waiting on a request: its own deadline (within the operation's), or its exchange's.
            State::Discovering { req, .. }
            | State::Initializing { req, .. }
            | State::Confirming { req, .. }
            | State::Listing { req, .. }
            | State::Relisting { req, .. }
            | State::Calling { req, .. }
            | State::TaskPolling { req, .. }
            | State::TaskCancelling { req, .. }
            | State::Closing { req, .. } => timed_out(req, now, exchange_deadline, budgets),
            // A resumption waits for its `GET`, on the interrupted request's deadline.
            State::Resuming {
                at, interrupted, ..
            } => match interrupted.req() {
                Some(req) => timed_out(req, now, exchange_deadline, budgets)
                    .or_else(|| (*at <= now).then_some(Effect::Resume)),
                None => (*at <= now).then_some(Effect::Resume),
            },
        }
    }
}

/// Whether `req` ran out of time at `now` (its own deadline, or its exchange's), with the
/// budget it reports.
fn timed_out(
    req: &Pending,
    now: Instant,
    exchange_deadline: Option<Instant>,
    budgets: &crate::budget::Budgets,
) -> Option<Effect> {
    if req.deadline.at <= now {
        return Some(Effect::TimedOut(req.deadline.exceeded(budgets)));
    }
    exchange_deadline
        .filter(|d| *d <= now)
        .map(|_| Effect::TimedOut(budgets.exceeded(Budget::RequestTime)))
}

/// The method an input request names, for error messages.
fn input_method(request: &str) -> &'static str {
    #[derive(Deserialize)]
    struct Entry<'a> {
        #[serde(borrow, default)]
        method: Option<alloc::borrow::Cow<'a, str>>,
    }
    let method = serde_json::from_str::<Entry<'_>>(request)
        .ok()
        .and_then(|e| e.method);
    match method.as_deref() {
        Some("elicitation/create") => "elicitation/create",
        Some("sampling/createMessage") => "sampling/createMessage",
        Some("roots/list") => "roots/list",
        Some(_) => "another request",
        None => "an unnamed request",
    }
}

/// The tools of `catalog` a 2025-11-25 server says must be called as tasks
/// (`execution.taskSupport: "required"`).
fn task_required_tools(catalog: &Catalog) -> Vec<String> {
    catalog
        .tools
        .iter()
        .filter(|t| {
            crate::task::check_legacy_task_support(t.name(), t.task_support().as_deref()).is_err()
        })
        .map(|t| t.name().to_owned())
        .collect()
}

/// The tools of `catalog` with `x-mcp-header` parameters (`every`: all its tools), by name; the
/// parameters are shared with the catalog's tools, not copied.
fn header_tools(
    catalog: &Catalog,
    every: bool,
) -> Vec<(String, Option<alloc::sync::Arc<[crate::xmcp::HeaderParam]>>)> {
    catalog
        .tools
        .iter()
        .filter_map(|t| {
            let params = t.shared_header_params();
            (every || params.is_some()).then(|| (t.name().to_owned(), params.cloned()))
        })
        .collect()
}
