//! Calling: `tools/call`, its input-required rounds, load-shedding retries and the re-list after a header mismatch.

use super::*;

impl Connection {
    /// Calls tool `name` with `arguments`, raw JSON sent verbatim (empty means `{}`; anything but
    /// a JSON object is refused before sending). A tool of this connection's last listing gets
    /// the `Mcp-Param-*` headers of its `x-mcp-header` parameters. In a legacy session whose
    /// server declared `tasks.requests.tools.call`, a tool that listing gave
    /// `execution.taskSupport: "required"` is refused before sending
    /// ([`TaskError::LegacyTaskRequired`](crate::task::TaskError::LegacyTaskRequired)).
    pub fn call_tool(&mut self, now: Instant, name: &str, arguments: &[u8]) {
        let required = self.listed_task_required.iter().any(|n| n == name);
        if let Err(e) = self.check_legacy_task(name, required.then_some("required")) {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e,
            });
        }
        let listed = self.listed_headers.iter().find(|(n, _)| n == name);
        let known = listed.is_some();
        let params = listed.and_then(|(_, p)| p.clone());
        self.start_call(
            now,
            name,
            params.as_deref().unwrap_or_default(),
            arguments,
            known,
        );
    }

    /// Calls `tool`, held from an earlier listing (possibly on another connection), so that its
    /// `x-mcp-header` parameters are sent as `Mcp-Param-*` headers without listing first. A tool
    /// whose `execution.taskSupport` is `"required"` is refused before sending, as
    /// [`call_tool`](Connection::call_tool) refuses it.
    pub fn call_known_tool(&mut self, now: Instant, tool: &crate::list::Tool, arguments: &[u8]) {
        if let Err(e) = self.check_legacy_task(tool.name(), tool.task_support().as_deref()) {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e,
            });
        }
        self.start_call(now, tool.name(), tool.header_params(), arguments, true);
    }

    /// In a legacy session (a 2025-11-25 server and older) whose server declared
    /// `tasks.requests.tools.call`, a tool whose `taskSupport` is `"required"` must be called as a
    /// 2025-11-25 task, a flow this client does not speak (docs/tasks.md):
    /// [`TaskError::LegacyTaskRequired`](crate::task::TaskError::LegacyTaskRequired). Without that
    /// capability `taskSupport` does not count ("If a server's capabilities do not include
    /// `tasks.requests.tools.call`, then clients **MUST NOT** attempt to use task augmentation on
    /// that server's tools, regardless of the `execution.taskSupport` value"): the tool is called
    /// plainly. SEP-2663 has no such member; a modern session calls the tool as any other.
    fn check_legacy_task(&self, name: &str, task_support: Option<&str>) -> Result<(), Error> {
        if !matches!(
            self.session,
            Session::Legacy {
                tool_tasks: true,
                ..
            }
        ) {
            return Ok(());
        }
        crate::task::check_legacy_task_support(name, task_support).map_err(Error::Task)
    }

    /// How many `-32020` (header mismatch) answers this connection has met: a caller holding
    /// tools from an earlier listing learns that its copy is out of date (the server's tools
    /// changed) when this grows during a call.
    pub fn header_mismatches(&self) -> u64 {
        self.header_mismatches
    }

    /// Whether the last tool call (the one running, or the last one started) met a `-32020`
    /// (header mismatch): the tool's `x-mcp-header` parameters it was called with are out of
    /// date, so the catalog they were taken from (this connection's listing, or one held
    /// elsewhere, such as a client's catalog cache) no longer matches the server's tools and
    /// should be dropped. The connection decides it; a cache only carries it out. Cleared when
    /// the next call starts.
    pub fn catalog_stale(&self) -> bool {
        self.catalog_stale
    }

    pub(super) fn start_call(
        &mut self,
        now: Instant,
        name: &str,
        params: &[crate::xmcp::HeaderParam],
        arguments: &[u8],
        known: bool,
    ) {
        self.catalog_stale = false;
        if let Err(e) = self.check_connected() {
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error: e,
            });
        }
        let arguments = match call::check_arguments(arguments) {
            Ok(a) => a.to_vec(),
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.events.push_back(Event::Failed {
                    operation: Operation::CallTool,
                    error,
                });
            }
        };
        let param_headers = match crate::xmcp::header_values(params, &arguments) {
            Ok(h) => h,
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.events.push_back(Event::Failed {
                    operation: Operation::CallTool,
                    error,
                });
            }
        };
        let deadline = Deadline::new(now, &self.config.budgets, Budget::CallTime);
        let call = CallState {
            name: name.to_owned(),
            arguments,
            input_responses: None,
            request_state: None,
            rounds: 0,
            param_headers,
            known,
        };
        self.listen_keep(now, Some(deadline.at));
        let req = self.new_request(now, Step::Call, Some(deadline));
        self.machine.start_call(req, call, deadline);
        self.send_pending(now, false, None);
    }

    /// Classifies a call's result (decoded with its message in one pass, or else read here the
    /// checking way).
    pub(super) fn classify_call(&mut self, result: RawJson<'_>) -> Answer {
        let answer = match self.decoded_call.take() {
            Some(answer) => answer,
            None => call::parse_call_result(result, self.max_content_blocks()),
        };
        match answer {
            Ok(CallAnswer::Complete(r)) => Answer::CallDone(r),
            Ok(CallAnswer::InputRequired { requests, state }) => {
                Answer::InputRequired { requests, state }
            }
            Err(call::AnswerError::Invalid(reason)) => {
                // The call reader refuses a `resultType` it does not know: a `CreateTaskResult`
                // is read here, only then (a plain result costs no second reading).
                match self.classify_task_creation(result) {
                    Some(task) => task,
                    None => Answer::Invalid(invalid_answer("tools/call", reason)),
                }
            }
            Err(call::AnswerError::TooManyBlocks) => {
                let e = self.config.budgets.exceeded(Budget::ContentBlocks);
                Answer::Invalid(Error::Budget(e))
            }
        }
    }

    /// How many usable content blocks a call result may keep ([`Budget::ContentBlocks`]).
    pub(super) fn max_content_blocks(&self) -> usize {
        usize::try_from(self.config.budgets.content_blocks()).unwrap_or(usize::MAX)
    }

    /// The listing after a header mismatch is complete: the called tool's headers from it, or
    /// the error the call fails with (the error it got if the tool is not listed). `None` if
    /// no such listing runs. (Under the tool-pin policy `refuse`, the transition function has
    /// already failed a call made with a known definition of its tool: no listing is read here.)
    pub(super) fn relisted_call(&self) -> Option<Answer> {
        let (catalog, call, error) = self.machine.relisting()?;
        let Some(tool) = catalog.tools.iter().find(|t| t.name() == call.name) else {
            return Some(Answer::Relisted(Err(Error::Rpc(error.clone()))));
        };
        let found = crate::xmcp::header_values(tool.header_params(), &call.arguments)
            .map_err(|reason| Error::Config(ConfigError::InvalidArguments { reason }));
        Some(Answer::Relisted(found))
    }

    /// Sends the call's round once more after its re-listing, on the call's deadline.
    pub(super) fn call_again(&mut self, now: Instant) {
        let Some(deadline) = self.machine.deadline() else {
            return;
        };
        let req = self.new_request(now, Step::Call, Some(deadline));
        self.machine.call_after_relist(req);
        self.send_pending(now, false, None);
    }

    /// Sends the next round of the running call (after load shedding or with input responses).
    pub(super) fn send_call_round(&mut self, now: Instant) {
        let Some(deadline) = self.machine.deadline() else {
            return;
        };
        let Some(call) = self.machine.call_mut() else {
            return;
        };
        call.rounds += 1;
        let req = self.new_request(now, Step::Call, Some(deadline));
        self.machine.next_round(req);
        self.send_pending(now, false, None);
    }

    /// Answers the input requests of the running tool call ([`Event::InputRequired`]):
    /// `responses` is a JSON object mapping each request key to its result, sent as
    /// `inputResponses` in a new request that echoes the server's `requestState`. `None`
    /// declines: the call fails as an answer this client cannot fulfil. For a task's input
    /// requests the answers go in one `tasks/update` (keys not outstanding, or named twice, fail
    /// the call with [`TaskError::NotOutstanding`](crate::task::TaskError::NotOutstanding);
    /// declining does not cancel the task).
    pub fn provide_input(&mut self, now: Instant, responses: Option<&[u8]>) {
        let task = matches!(self.machine.get(), State::TaskAwaitingInput { .. });
        let waiting = task || matches!(self.machine.get(), State::AwaitingInput { .. });
        if !waiting {
            let error = Error::Misuse {
                reason: "no tool call is waiting for input",
            };
            return self.events.push_back(Event::Failed {
                operation: Operation::CallTool,
                error,
            });
        }
        let Some(responses) = responses else {
            let reason = "the embedder declined the server's input requests";
            return self.fail_op(invalid_answer("tools/call", reason.into()));
        };
        if task {
            return self.provide_task_input(now, responses);
        }
        let responses = match call::check_arguments(responses) {
            Ok(r) => r.to_vec(),
            Err(reason) => {
                let error = Error::Config(ConfigError::InvalidArguments { reason });
                return self.fail_op(error);
            }
        };
        if let Some(call) = self.machine.call_mut() {
            call.input_responses = Some(responses);
        }
        self.send_call_round(now);
    }
}

/// `-32020`: a standard or `Mcp-Param-*` header does not match the body.
pub(super) const HEADER_MISMATCH: i64 = -32020;

/// The running tool call.
#[derive(Debug)]
pub(super) struct CallState {
    pub(super) name: String,
    pub(super) arguments: Vec<u8>,
    /// Answers to the server's input requests, raw JSON object, for the next round.
    pub(super) input_responses: Option<Vec<u8>>,
    /// The server's `requestState`, raw JSON string literal, echoed byte for byte.
    pub(super) request_state: Option<Box<RawValue>>,
    /// Rounds sent after the first (input_required retries).
    pub(super) rounds: u32,
    /// `Mcp-Param-*` headers from the tool's `x-mcp-header` parameters.
    pub(super) param_headers: Vec<(String, String)>,
    /// Whether the call was made with a known definition of its tool (a listing's, or one held
    /// from an earlier listing): its parameters came from that definition.
    pub(super) known: bool,
}

/// The wait before load-shedding retry `round` (none before the first retry, then 100 ms
/// doubling, at most 2 s).
pub(super) fn load_shedding_backoff(round: u32) -> Duration {
    match round {
        0 => Duration::ZERO,
        n => Duration::from_millis(100u64 << (n - 1).min(5)).min(Duration::from_secs(2)),
    }
}

/// The distinct methods an `inputRequests` object asks for, for error messages.
pub(super) fn requested_kinds(requests: &RawValue) -> String {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(default)]
        method: Option<String>,
    }
    let map: alloc::collections::BTreeMap<String, Entry> =
        serde_json::from_str(requests.get()).unwrap_or_default();
    let mut kinds: Vec<String> = map
        .into_values()
        .map(|e| truncated(e.method.as_deref().unwrap_or("an unnamed request"), 64))
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds.truncate(8);
    kinds.join(", ")
}

pub(super) fn progress_event(params: &RawValue, token: u64) -> Option<Event> {
    #[derive(Deserialize)]
    struct Wire<'a> {
        #[serde(rename = "progressToken", borrow)]
        token: &'a RawValue,
        progress: f64,
        #[serde(default)]
        total: Option<f64>,
        #[serde(default)]
        message: Option<String>,
    }
    let w: Wire<'_> = serde_json::from_str(params.get()).ok()?;
    if !id_matches(w.token, token) {
        return None;
    }
    Some(Event::Progress {
        progress: w.progress,
        total: w.total,
        message: w.message.map(|m| truncated(&m, 1024)),
    })
}
