//! Listing: `tools/list` pages followed to the end within the page and time budgets.

use super::*;

impl Connection {
    /// Lists every tool, following cursors to the end, within the page and list-time budgets.
    pub fn list_tools(&mut self, now: Instant) {
        if let Err(e) = self.check_connected(Operation::ListTools) {
            return self.events.push_back(Event::Failed {
                operation: Operation::ListTools,
                error: e,
            });
        }
        let deadline = now + self.config.budgets.list_time;
        let state = ListState::new(None);
        self.op = Op::List { state, deadline };
        self.start_request(
            now,
            Step::ListPage { cursor: None },
            Some((deadline, Budget::ListTime)),
        );
    }

    pub(super) fn on_page(&mut self, now: Instant, result: &RawValue) {
        let Op::List { state, deadline } = &mut self.op else {
            return;
        };
        let deadline = *deadline;
        let name_rule = self.config.tool_names;
        let budget = if state.for_call.is_some() {
            Budget::CallTime
        } else {
            Budget::ListTime
        };
        let page = match list::parse_page(result) {
            Ok(page) => page,
            Err(reason) => return self.fail_op(now, invalid_answer("tools/list", reason)),
        };
        state.catalog.pages += 1;
        for entry in page.entries {
            list::add_entry(
                &mut state.catalog,
                &mut state.names,
                name_rule,
                state.entries,
                entry,
            );
            state.entries += 1;
        }
        match page.next_cursor {
            None => {
                let Op::List { state, deadline } = std::mem::replace(&mut self.op, Op::Idle) else {
                    return;
                };
                self.listed_headers = state
                    .catalog
                    .tools
                    .iter()
                    .filter(|t| !t.header_params.is_empty())
                    .map(|t| (t.name.clone(), t.header_params.clone()))
                    .collect();
                match state.for_call {
                    None => self.events.push_back(Event::ToolsListed(state.catalog)),
                    Some(pending) => self.resume_call(now, *pending, &state.catalog, deadline),
                }
            }
            Some(cursor) => {
                if state.catalog.pages >= self.config.budgets.pages {
                    let limit = u64::from(self.config.budgets.pages);
                    return self.fail_op(
                        now,
                        Error::Budget(BudgetExceeded::new(Budget::Pages, limit)),
                    );
                }
                if !state.seen.insert(cursor.clone()) {
                    let cursor = truncated(&cursor, 64);
                    let e = Error::Protocol(ProtocolError::PaginationLoop { cursor });
                    return self.fail_op(now, e);
                }
                state.cursor = Some(cursor.clone());
                self.start_request(
                    now,
                    Step::ListPage {
                        cursor: Some(cursor),
                    },
                    Some((deadline, budget)),
                );
            }
        }
    }

    /// Lists the tools inside the running call's budget, to recover from a header mismatch.
    pub(super) fn relist_for_call(&mut self, now: Instant, error: crate::error::RpcError) {
        let Op::Call {
            mut state,
            deadline,
        } = std::mem::replace(&mut self.op, Op::Idle)
        else {
            return;
        };
        state.relisted = true;
        let list = ListState::new(Some(Box::new((state, error))));
        self.op = Op::List {
            state: list,
            deadline,
        };
        self.start_request(
            now,
            Step::ListPage { cursor: None },
            Some((deadline, Budget::CallTime)),
        );
    }
}

#[derive(Debug)]
pub(super) struct ListState {
    pub(super) cursor: Option<String>,
    pub(super) seen: HashSet<String>,
    pub(super) names: HashSet<String>,
    pub(super) catalog: Catalog,
    /// A call waiting for this listing (after a header mismatch), with the error it got.
    pub(super) for_call: Option<Box<(CallState, crate::error::RpcError)>>,
    pub(super) entries: usize,
}

impl ListState {
    pub(super) fn new(for_call: Option<Box<(CallState, crate::error::RpcError)>>) -> Self {
        ListState {
            cursor: None,
            seen: HashSet::new(),
            names: HashSet::new(),
            catalog: Catalog::default(),
            entries: 0,
            for_call,
        }
    }
}
