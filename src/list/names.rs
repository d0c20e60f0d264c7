//! The names a listing has accepted so far, to find a duplicate name in bounded time.
//!
//! A table of buckets (a power of two many, at least as many as tools) chains the tools whose
//! name hashes to each bucket, newest first. The hash is a multiply-and-fold over the name's
//! 8-byte words, keyed per listing (with `std`, from [`std::collections::hash_map::RandomState`],
//! which the operating system seeds; without it, a fixed key).
//!
//! The worst case does not rest on the key: a bucket holds at most [`MAX_CHAIN`] tools, and the
//! name of a tool that comes to a full bucket is kept in an ordered set instead. A server that
//! finds names colliding in every bucket (under a fixed key, or by learning the key) makes each
//! later name cost a search of at most [`MAX_CHAIN`] tools plus a search of that set, a
//! logarithm: never a walk of all the names so far.

use crate::prelude::*;

use super::Tool;

/// The most tools a bucket chains; later ones with the same bucket go to [`Names::spilled`].
pub(crate) const MAX_CHAIN: usize = 8;

/// The end of a chain.
const NO_TOOL: u32 = u32::MAX;

/// In [`Names::tools`], a tool whose name is in [`Names::spilled`].
const SPILLED: u32 = u32::MAX - 1;

/// The fewest buckets of a table that has any.
const MIN_BUCKETS: usize = 64;

/// An odd constant with its bits well mixed (the fractional part of the golden ratio).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct Names {
    /// Per bucket, the newest tool whose name falls in it ([`NO_TOOL`]: none).
    heads: Vec<u32>,
    /// Per tool of the catalog: its name's hash, and the previous tool of its bucket
    /// ([`NO_TOOL`]: none; [`SPILLED`]: its name is in [`Names::spilled`]).
    tools: Vec<(u32, u32)>,
    /// The names of the tools that came to a full bucket.
    spilled: BTreeSet<Box<str>>,
    /// The key of the hash.
    key: u64,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            heads: Vec::new(),
            tools: Vec::new(),
            spilled: BTreeSet::new(),
            key: listing_key(),
        }
    }
}

/// A key for one listing's hash.
#[cfg(feature = "std")]
fn listing_key() -> u64 {
    use core::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u64)
}

/// A key for one listing's hash (without `std`, a fixed one: [`MAX_CHAIN`] still bounds the
/// search).
#[cfg(not(feature = "std"))]
fn listing_key() -> u64 {
    MIX
}

/// The high and low halves of `a × b`, folded together.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl Names {
    /// A table keyed with `key` (for tests that need a known one).
    #[cfg(test)]
    fn with_key(key: u64) -> Names {
        Names {
            key,
            ..Names::default()
        }
    }

    /// The hash of `name`.
    #[inline]
    pub(crate) fn hash(&self, name: &str) -> u32 {
        let b = name.as_bytes();
        let mut h = self.key ^ (b.len() as u64).wrapping_mul(MIX);
        let mut words = b.chunks_exact(8);
        for w in &mut words {
            let w: [u8; 8] = w.try_into().unwrap_or_default();
            h = fold(h ^ u64::from_le_bytes(w), MIX);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            if let Some(head) = w.get_mut(..rest.len()) {
                head.copy_from_slice(rest);
            }
            h = fold(h ^ u64::from_le_bytes(w), MIX);
        }
        h = fold(h, self.key | 1);
        (h ^ (h >> 32)) as u32
    }

    /// The bucket of hash `h` (the table has buckets).
    #[inline(always)]
    fn bucket(&self, h: u32) -> usize {
        (h as usize) & self.heads.len().wrapping_sub(1)
    }

    /// Whether a tool of `tools` (the catalog's, which this table follows) is named `name`.
    pub(crate) fn contains(&self, tools: &[Tool], name: &str) -> bool {
        self.contains_hashed(tools, name, self.hash(name))
    }

    /// [`Names::contains`] for a name whose hash is `hash`.
    #[inline]
    pub(crate) fn contains_hashed(&self, tools: &[Tool], name: &str, hash: u32) -> bool {
        if !self.heads.is_empty() {
            let mut at = self
                .heads
                .get(self.bucket(hash))
                .copied()
                .unwrap_or(NO_TOOL);
            while let Some(&(h, prev)) = self.tools.get(at as usize) {
                if h == hash && tools.get(at as usize).is_some_and(|t| t.name() == name) {
                    return true;
                }
                at = prev;
            }
        }
        !self.spilled.is_empty() && self.spilled.contains(name)
    }

    /// Records the next tool of `tools` (the catalog's, which has it already), whose name's
    /// hash is `hash`.
    pub(crate) fn insert(&mut self, tools: &[Tool], hash: u32) {
        if self.tools.len() >= self.heads.len() {
            self.grow();
        }
        let bucket = self.bucket(hash);
        let head = self.heads.get(bucket).copied().unwrap_or(NO_TOOL);
        let mut chain = 0;
        let mut at = head;
        while let Some(&(_, prev)) = self.tools.get(at as usize) {
            chain += 1;
            at = prev;
        }
        let index = u32::try_from(self.tools.len()).unwrap_or(NO_TOOL);
        if chain >= MAX_CHAIN || index >= SPILLED {
            let name = tools.get(self.tools.len()).map_or("", Tool::name);
            self.spilled.insert(name.into());
            self.tools.push((hash, SPILLED));
        } else {
            self.tools.push((hash, head));
            if let Some(slot) = self.heads.get_mut(bucket) {
                *slot = index;
            }
        }
    }

    /// Doubles the buckets (or makes the first ones) and chains the tools again, oldest first
    /// so that each chain stays newest first. A chain splits in two: none grows.
    fn grow(&mut self) {
        let n = (self.heads.len() * 2).max(MIN_BUCKETS);
        self.heads.clear();
        self.heads.resize(n, NO_TOOL);
        for index in 0..self.tools.len() {
            let Some(&(h, prev)) = self.tools.get(index) else {
                break;
            };
            if prev == SPILLED {
                continue;
            }
            let bucket = self.bucket(h);
            if let Some(slot) = self.heads.get_mut(bucket) {
                let head = core::mem::replace(slot, index as u32);
                if let Some(t) = self.tools.get_mut(index) {
                    t.1 = head;
                }
            }
        }
    }

    /// Forgets the tools from `len` on (before they are removed from `tools`, the catalog's).
    pub(crate) fn truncate(&mut self, tools: &[Tool], len: usize) {
        while self.tools.len() > len {
            let Some((h, prev)) = self.tools.pop() else {
                break;
            };
            if prev == SPILLED {
                if let Some(tool) = tools.get(self.tools.len()) {
                    self.spilled.remove(tool.name());
                }
            } else {
                // The newest tool of its bucket: chains are undone newest first.
                let bucket = self.bucket(h);
                if let Some(slot) = self.heads.get_mut(bucket) {
                    *slot = prev;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
