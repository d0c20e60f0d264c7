//! Listing: `tools/list` pages followed to the end within the page and time budgets.

use super::*;

impl Connection {
    /// Lists every tool, following cursors to the end, within the page and list-time budgets.
    pub fn list_tools(&mut self, now: Instant) {
        if let Err(e) = self.check_connected() {
            return self.events.push_back(Event::Failed {
                operation: Operation::ListTools,
                error: e,
            });
        }
        let deadline = Deadline::new(now, &self.config.budgets, Budget::ListTime);
        let state = ListState::new(None);
        self.op = Op::List { state, deadline };
        self.start_request(now, Step::ListPage { cursor: None }, Some(deadline));
    }

    pub(super) fn on_page(&mut self, now: Instant, result: RawJson<'_>) {
        let Op::List { state, deadline } = &mut self.op else {
            return;
        };
        let deadline = *deadline;
        let name_rule = self.config.tool_names;
        let next_cursor = match list::add_page(
            &mut state.catalog,
            &mut state.names,
            &mut state.entries,
            name_rule,
            self.message.as_ref(),
            result,
        ) {
            Ok(cursor) => cursor,
            Err(list::PageError::Invalid(reason)) => {
                return self.fail_op(invalid_answer("tools/list", reason))
            }
            Err(list::PageError::Malformed(e)) => return self.fail_op(Error::Protocol(e)),
        };
        state.catalog.pages += 1;
        match next_cursor {
            None => {
                let Op::List { state, deadline } = core::mem::replace(&mut self.op, Op::Idle)
                else {
                    return;
                };
                self.listed_headers = state
                    .catalog
                    .tools
                    .iter()
                    .filter(|t| !t.header_params().is_empty())
                    .map(|t| (t.name().to_owned(), t.header_params().to_vec()))
                    .collect();
                match state.for_call {
                    None => self.events.push_back(Event::ToolsListed(state.catalog)),
                    Some(pending) => self.resume_call(now, *pending, &state.catalog, deadline),
                }
            }
            Some(cursor) => {
                if state.catalog.pages >= self.config.budgets.pages {
                    let limit = u64::from(self.config.budgets.pages);
                    return self.fail_op(Error::Budget(BudgetExceeded::new(Budget::Pages, limit)));
                }
                if !state.seen.insert(cursor.clone()) {
                    let cursor = truncated(&cursor, 64);
                    let e = Error::Protocol(ProtocolError::PaginationLoop { cursor });
                    return self.fail_op(e);
                }
                self.start_request(
                    now,
                    Step::ListPage {
                        cursor: Some(cursor),
                    },
                    Some(deadline),
                );
            }
        }
    }

    /// Lists the tools inside the running call's budget, to recover from a header mismatch.
    pub(super) fn relist_for_call(&mut self, now: Instant, error: crate::error::RpcError) {
        let Op::Call {
            mut state,
            deadline,
        } = core::mem::replace(&mut self.op, Op::Idle)
        else {
            return;
        };
        state.relisted = true;
        let list = ListState::new(Some(Box::new((state, error))));
        self.op = Op::List {
            state: list,
            deadline,
        };
        // The listing runs on the call's deadline (and reports the call's budget).
        self.start_request(now, Step::ListPage { cursor: None }, Some(deadline));
    }
}

/// A listing in progress.
#[derive(Debug)]
pub(super) struct ListState {
    /// Cursors already followed (a repeated one is a pagination loop).
    pub(super) seen: BTreeSet<String>,
    /// Tool names seen so far (for duplicates).
    pub(super) names: list::Names,
    /// The catalog so far.
    pub(super) catalog: Catalog,
    /// A call waiting for this listing (after a header mismatch), with the error it got.
    pub(super) for_call: Option<Box<(CallState, crate::error::RpcError)>>,
    /// Entries seen so far, kept or refused.
    pub(super) entries: usize,
}

impl ListState {
    pub(super) fn new(for_call: Option<Box<(CallState, crate::error::RpcError)>>) -> Self {
        ListState {
            seen: BTreeSet::new(),
            names: list::Names::default(),
            catalog: Catalog::default(),
            entries: 0,
            for_call,
        }
    }
}
