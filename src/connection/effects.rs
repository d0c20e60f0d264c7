//! Carrying out what the transition function ([`Machine::step`]) chose: the requests it
//! builds and sends, the events it reports, the connection data it records. No choice is made
//! here.

use super::*;

impl Connection {
    /// Carries out `effects`, in order.
    pub(super) fn carry_out(&mut self, now: Instant, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::ConnectModern {
                    version,
                    server,
                    cache,
                    undiscovered,
                } => {
                    self.session = Session::Modern { version };
                    if cache.is_some() {
                        self.discover_cache = cache;
                    }
                    self.connected(now, server);
                    if undiscovered && self.session != Session::None {
                        self.machine.set_hint(Hint::Undiscovered);
                    }
                }
                Effect::Confirm {
                    version,
                    session_id,
                    server,
                } => {
                    let tool_tasks = server
                        .capabilities
                        .as_deref()
                        .is_some_and(|c| crate::task::declares_legacy_tool_tasks(c.get()));
                    self.session = Session::Legacy {
                        version,
                        session_id,
                        tool_tasks,
                    };
                    let req = self.new_request(now, Step::Initialized { server }, None);
                    self.machine.confirm(req);
                    self.send_pending(now, false, None);
                }
                Effect::ConnectLegacy { server } => self.connected(now, server),
                Effect::Rediscover { version } => {
                    let step = Step::Discover {
                        attempt: 1,
                        version,
                    };
                    let req = self.new_request(now, step, None);
                    self.machine.discover(req);
                    self.send_pending(now, false, None);
                }
                Effect::Initialize => self.start_initialize(now, false),
                Effect::Renegotiate { probe } => self.renegotiate(now, probe),
                Effect::NewSession => self.new_session(now),
                Effect::Relist(error) => self.relist_for_call(now, error),
                Effect::NextPage(cursor) => self.next_page(now, cursor),
                Effect::Relisted => {
                    if let Some(answer) = self.relisted_call() {
                        self.apply(now, answer);
                    }
                }
                Effect::CallAgain => self.call_again(now),
                Effect::NextRound => self.send_call_round(now),
                Effect::LearnHeaders(headers) => self.listed_headers = headers,
                Effect::LearnTaskRequired(names) => self.listed_task_required = names,
                Effect::CatalogStale { call } => {
                    self.header_mismatches += 1;
                    if call {
                        self.catalog_stale = true;
                    }
                }
                Effect::Report(event) => self.events.push_back(event),
                Effect::Fail(error) => self.fail_op(error),
                Effect::NoMutual { theirs, all } => {
                    let error = self.no_mutual(&theirs, all);
                    self.fail_op(error);
                }
                Effect::Deleted => self.session_deleted(),
                Effect::TimedOut(error) => self.timed_out(now, error),
                Effect::Resume => self.send_resume(now),
                Effect::StartTask(task) => self.start_task(now, *task),
                Effect::Poll => self.poll_task(now),
            }
        }
    }
}
