//! The transition table of the connection's docs (`src/connection/transitions.md`), parsed, and
//! a checker that every state change a scripted session makes is one of its rows: the other
//! direction of `tests/transitions.rs`, which checks that every row holds.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::OnceLock;

use mcp_sansio::{Connection, ConnectionState};

pub const TABLE: &str = include_str!("../../src/connection/transitions.md");

/// One row of the table.
#[derive(Debug)]
pub struct Row {
    pub state: String,
    pub input: String,
    pub next: String,
    pub output: Vec<String>,
}

/// The rows of the table, in order.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in TABLE.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 4, "a row has four cells: {line}");
        if cells[0] == "state" {
            assert_eq!(cells, ["state", "input", "next state", "output"]);
            in_table = true;
            continue;
        }
        if cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            continue;
        }
        assert!(in_table, "a row outside the table: {line}");
        let output = cells[3]
            .split(',')
            .map(|t| t.trim().trim_matches('`').to_owned())
            .filter(|t| !t.is_empty())
            .collect();
        rows.push(Row {
            state: cells[0].to_owned(),
            input: cells[1].to_owned(),
            next: cells[2].to_owned(),
            output,
        });
    }
    rows
}

/// A state without its qualifier: `Listing (legacy)` is `Listing`.
pub fn base(state: &str) -> &str {
    state.split(" (").next().unwrap_or(state).trim()
}

/// Every (state, next state) pair some row names.
pub fn listed_pairs() -> &'static BTreeSet<(String, String)> {
    static PAIRS: OnceLock<BTreeSet<(String, String)>> = OnceLock::new();
    PAIRS.get_or_init(|| {
        rows()
            .into_iter()
            .map(|r| (base(&r.state).to_owned(), r.next))
            .collect()
    })
}

/// Watches one connection: after every input (and its outputs drained), a change of state must
/// be a pair of states some row of the table names. A state that stays the same is not checked
/// (from outside, a self-transition cannot be told from no transition).
#[derive(Debug)]
pub struct TableCheck {
    last: ConnectionState,
    /// Every change seen, in order.
    pub seen: Vec<(ConnectionState, ConnectionState)>,
}

impl Default for TableCheck {
    fn default() -> Self {
        TableCheck {
            last: ConnectionState::Unconnected,
            seen: Vec::new(),
        }
    }
}

impl TableCheck {
    /// Looks at `conn`'s state after an input; panics on a change the table does not list.
    pub fn observe(&mut self, conn: &Connection) {
        let now = conn.state();
        if now == self.last {
            return;
        }
        let pair = (self.last.name().to_owned(), now.name().to_owned());
        assert!(
            listed_pairs().contains(&pair),
            "the connection went from {} to {}, a transition the table \
             (src/connection/transitions.md) does not list; after {:?}",
            pair.0,
            pair.1,
            self.seen
        );
        self.seen.push((self.last, now));
        self.last = now;
    }
}
