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

    /// Classifies a listing's page: adds it to the listing in progress (the caller's or a
    /// call's) and says where it leads, or why it cannot be used.
    pub(super) fn classify_page(&mut self, result: RawJson<'_>) -> Answer {
        let Some(state) = self.machine.list_mut() else {
            return Answer::Unusable(invalid_answer("tools/list", "no listing runs".into()));
        };
        let name_rule = self.config.tool_names;
        let next = match list::add_page(
            &mut state.catalog,
            &mut state.names,
            &mut state.entries,
            name_rule,
            self.message.as_ref(),
            result,
        ) {
            Ok(cursor) => cursor,
            Err(list::PageError::Invalid(reason)) => {
                // A `CreateTaskResult` to `tools/list` "MUST [be interpreted] as an invalid
                // response": typed as such.
                let declared = self.declares_tasks();
                let budgets = &self.config.budgets;
                if let Err(e) =
                    crate::task::classify_result("tools/list", result.get(), declared, budgets)
                {
                    if matches!(e, crate::task::TaskError::UnsupportedRequest { .. }) {
                        return Answer::Invalid(Error::Task(e));
                    }
                }
                return Answer::Invalid(invalid_answer("tools/list", reason));
            }
            Err(list::PageError::Malformed(e)) => return Answer::Invalid(Error::Protocol(e)),
        };
        state.catalog.pages += 1;
        let repeated = next
            .as_ref()
            .is_some_and(|cursor| !state.seen.insert(cursor.clone()));
        Answer::Page { next, repeated }
    }

    /// Sends the listing's next page, from `cursor`.
    pub(super) fn next_page(&mut self, now: Instant, cursor: String) {
        let Some(deadline) = self.machine.deadline() else {
            return;
        };
        let step = Step::ListPage {
            cursor: Some(cursor),
        };
        let req = self.new_request(now, step, Some(deadline));
        self.machine.again(req);
        self.send_pending(now, false, None);
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
