//! The requests waiting for a fresh socket ([`Pending`]), in the order they came, each found by
//! its session and exchange in O(log n): ending an exchange or a session's leaving costs what it
//! removes, not a pass over every waiting request.

use std::collections::{BTreeMap, BTreeSet};

use mcp_sansio::{ExchangeId, Transmit};

use super::Member;

/// Requests waiting for a fresh socket, first come first served.
#[derive(Default)]
pub(super) struct Pending {
    /// Each request by its place in the order they came.
    queue: BTreeMap<u64, (Member, Transmit)>,
    /// The places of each session's requests, by exchange.
    keys: BTreeSet<(Member, ExchangeId, u64)>,
    /// The place of the next request.
    next: u64,
    /// Entries added, looked up or removed so far, in all.
    steps: u64,
}

impl Pending {
    /// Whether no request waits.
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Requests waiting now.
    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Entries added, looked up or removed so far: a bounded amount per request, however many
    /// wait.
    pub(super) fn steps(&self) -> u64 {
        self.steps
    }

    /// Puts `t` of session `m` at the back.
    pub(super) fn push(&mut self, m: Member, t: Transmit) {
        let seq = self.next;
        self.next += 1;
        self.steps += 1;
        self.keys.insert((m, t.exchange, seq));
        self.queue.insert(seq, (m, t));
    }

    /// Drops session `m`'s request of `exchange`, if it waits.
    pub(super) fn remove_exchange(&mut self, m: Member, exchange: ExchangeId) {
        let gone: Vec<_> = self
            .keys
            .range((m, exchange, 0)..=(m, exchange, u64::MAX))
            .copied()
            .collect();
        self.remove(gone);
    }

    /// Drops every request of session `m`.
    pub(super) fn remove_member(&mut self, m: Member) {
        let gone: Vec<_> = self
            .keys
            .range((m, ExchangeId(0), 0)..=(m, ExchangeId(u64::MAX), u64::MAX))
            .copied()
            .collect();
        self.remove(gone);
    }

    fn remove(&mut self, gone: Vec<(Member, ExchangeId, u64)>) {
        self.steps += 1;
        for key in gone {
            self.steps += 1;
            self.keys.remove(&key);
            self.queue.remove(&key.2);
        }
    }

    /// Takes every waiting request, in the order they came.
    pub(super) fn take(&mut self) -> Vec<(Member, Transmit)> {
        self.keys.clear();
        let queue = std::mem::take(&mut self.queue);
        self.steps += queue.len() as u64;
        queue.into_values().collect()
    }

    /// Drops every waiting request.
    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.queue.clear();
    }
}
