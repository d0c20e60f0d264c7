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
        self.listen_keep(now, Some(deadline.at));
        let req = self.new_request(now, Step::ListPage { cursor: None }, Some(deadline));
        self.machine.start_list(req, deadline);
        self.send_pending(now, false, None);
    }

    pub(super) fn on_page(&mut self, now: Instant, result: RawJson<'_>) {
        let Some(deadline) = self.machine.deadline() else {
            return;
        };
        let Some(state) = self.machine.list_mut() else {
            return;
        };
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
                self.listed_headers = state
                    .catalog
                    .tools
                    .iter()
                    .filter(|t| !t.header_params().is_empty())
                    .map(|t| (t.name().to_owned(), t.header_params().to_vec()))
                    .collect();
                if matches!(self.machine.get(), State::Relisting { .. }) {
                    return self.resume_call(now, deadline);
                }
                if let Some(list) = self.machine.finish_list() {
                    self.events.push_back(Event::ToolsListed(list.catalog));
                }
            }
            Some(cursor) => {
                if state.catalog.pages >= self.config.budgets.pages {
                    let e = self.config.budgets.exceeded(Budget::Pages);
                    return self.fail_op(Error::Budget(e));
                }
                if !state.seen.insert(cursor.clone()) {
                    let cursor = truncated(&cursor, 64);
                    let e = Error::Protocol(ProtocolError::PaginationLoop { cursor });
                    return self.fail_op(e);
                }
                let step = Step::ListPage {
                    cursor: Some(cursor),
                };
                let req = self.new_request(now, step, Some(deadline));
                self.machine.again(req);
                self.send_pending(now, false, None);
            }
        }
    }

    /// Lists the tools inside the running call's budget, to recover from a header mismatch.
    pub(super) fn relist_for_call(&mut self, now: Instant, error: crate::error::RpcError) {
        let Some(deadline) = self.machine.deadline() else {
            return;
        };
        // The listing runs on the call's deadline (and reports the call's budget).
        let req = self.new_request(now, Step::ListPage { cursor: None }, Some(deadline));
        self.machine.relist(req, error);
        self.send_pending(now, false, None);
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
    /// Entries seen so far, kept or refused.
    pub(super) entries: usize,
}

impl ListState {
    pub(super) fn new() -> Self {
        ListState {
            seen: BTreeSet::new(),
            names: list::Names::default(),
            catalog: Catalog::default(),
            entries: 0,
        }
    }
}
