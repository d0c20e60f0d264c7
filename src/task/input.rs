//! The bookkeeping of a task's input requests: which keys were presented, which are
//! outstanding, which were answered.
use crate::prelude::*;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::budget::{Budget, Budgets};
use crate::error::truncated;
use crate::jsonrpc::ObjectWriter;

use super::{TaskError, MAX_QUOTED};

/// Keys one poll's `inputRequests` may hold, and keys one task may present in all (a server
/// that keeps asking new questions is refused past it).
pub const MAX_INPUT_KEYS: usize = 64;

/// Bytes of one `inputRequests` key.
pub const MAX_INPUT_KEY_BYTES: usize = 256;

/// One input request to present to the embedder's hook: its key and the raw JSON of the
/// server-to-client request (`{"method": …, "params": …}`), to be treated "as they would the
/// equivalent standalone server-to-client request".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRequest {
    /// The key, to answer under.
    pub key: String,
    /// The request's raw JSON object.
    pub request: String,
}

/// The keys of one task's `inputRequests`, across its polls (a fresh book per task: the keys of
/// a preceding MRTR phase are another space).
///
/// - [`poll`](Self::poll) returns only the requests not presented before: "Clients SHOULD
///   deduplicate `inputRequests` keys across consecutive polls to avoid presenting the same
///   request to the user or model more than once."
/// - [`respond`](Self::respond) answers outstanding keys only, each at most once: "Each key MUST
///   correspond to a currently-outstanding inputRequest key" and "Clients SHOULD track
///   `inputRequests` keys to avoid responding to requests more than once."
/// - Rounds of `tasks/update` are bounded by [`Budgets::task_update_rounds`], keys by
///   [`MAX_INPUT_KEYS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputBook {
    presented: BTreeSet<String>,
    outstanding: BTreeSet<String>,
    answered: BTreeSet<String>,
    /// Keys answered before a resumption, known by their [`key_digest`] only.
    answered_before: BTreeSet<[u8; 8]>,
    rounds: u32,
}

/// The digest a [`TaskHandle`](super::TaskHandle) keeps of an answered key: the first 8 bytes
/// of its SHA-256.
pub(crate) fn key_digest(key: &str) -> [u8; 8] {
    use sha2::{Digest as _, Sha256};
    let d = Sha256::digest(key.as_bytes());
    let mut out = [0; 8];
    out.copy_from_slice(&d[..8]);
    out
}

/// The members of an `inputRequests` object in order, each value checked to be an object.
struct Requests(Vec<(String, String)>);

impl<'de> serde::Deserialize<'de> for Requests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Requests;
            fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str("an object of input requests")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Requests, A::Error> {
                use serde::de::Error as _;
                let mut out: Vec<(String, String)> = Vec::new();
                while let Some(k) = a.next_key::<alloc::borrow::Cow<'de, str>>()? {
                    if out.len() >= MAX_INPUT_KEYS {
                        return Err(A::Error::custom("too many keys"));
                    }
                    if k.len() > MAX_INPUT_KEY_BYTES {
                        a.next_value::<IgnoredAny>()?;
                        return Err(A::Error::custom("a key too long"));
                    }
                    let v = a.next_value::<&'de RawValue>()?;
                    if !v.get().trim_start().starts_with('{') {
                        return Err(A::Error::custom("a request that is not an object"));
                    }
                    if out.iter().any(|(seen, _)| *seen == *k) {
                        return Err(A::Error::custom("a key twice"));
                    }
                    out.push((k.into_owned(), v.get().to_owned()));
                }
                Ok(Requests(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl InputBook {
    /// An empty book, for a new task.
    pub fn new() -> InputBook {
        InputBook::default()
    }

    /// The book of a task resumed from `handle`: the keys answered before (as
    /// [`TaskHandle::record_answers`](super::TaskHandle::record_answers) kept them) are never
    /// presented nor answered again, and count towards [`MAX_INPUT_KEYS`].
    pub fn resumed(handle: &super::TaskHandle) -> InputBook {
        InputBook {
            answered_before: handle.answered().iter().copied().collect(),
            ..InputBook::default()
        }
    }

    fn was_answered(&self, key: &str) -> bool {
        self.answered.contains(key)
            || (!self.answered_before.is_empty() && self.answered_before.contains(&key_digest(key)))
    }

    /// The digests of every key answered, before a resumption too, for a
    /// [`TaskHandle`](super::TaskHandle) to keep.
    pub(crate) fn answered_digests(&self) -> BTreeSet<[u8; 8]> {
        let mut all = self.answered_before.clone();
        all.extend(self.answered.iter().map(|k| key_digest(k)));
        all
    }

    /// Takes the `inputRequests` object of an `input_required` poll: its keys become the
    /// outstanding ones (but those already answered: the acknowledgement of `tasks/update` is
    /// eventually consistent, so a later poll may still list them), and the requests never
    /// presented before are returned, in the server's order. A poll with more than
    /// [`MAX_INPUT_KEYS`] keys, a key longer than [`MAX_INPUT_KEY_BYTES`], a key twice, or a
    /// request that is not an object is [`TaskError::InputRequests`], as is a task whose keys
    /// would pass [`MAX_INPUT_KEYS`] in all.
    pub fn poll(&mut self, input_requests: &str) -> Result<Vec<InputRequest>, TaskError> {
        let requests = serde_json::from_str::<Requests>(input_requests)
            .map_err(|e| TaskError::InputRequests {
                reason: reason_of(&e),
            })?
            .0;
        let fresh: Vec<&(String, String)> = requests
            .iter()
            .filter(|(k, _)| !self.presented.contains(k) && !self.was_answered(k))
            .collect();
        if self.presented.len() + self.answered_before.len() + fresh.len() > MAX_INPUT_KEYS {
            return Err(TaskError::InputRequests {
                reason: "more input requests than a task may make",
            });
        }
        self.outstanding = requests
            .iter()
            .filter(|(k, _)| !self.was_answered(k))
            .map(|(k, _)| k.clone())
            .collect();
        let fresh: Vec<InputRequest> = fresh
            .into_iter()
            .map(|(key, request)| InputRequest {
                key: key.clone(),
                request: request.clone(),
            })
            .collect();
        for r in &fresh {
            self.presented.insert(r.key.clone());
        }
        Ok(fresh)
    }

    /// Records the answers `responses` (key, raw JSON of the response) as one `tasks/update`
    /// round and returns its `inputResponses` object. Every key must be outstanding and named
    /// once ([`TaskError::NotOutstanding`] otherwise, and nothing is recorded); a response that
    /// is not JSON is [`TaskError::InputRequests`]; one round more than
    /// [`Budgets::task_update_rounds`] is [`Budget::TaskUpdateRounds`] exceeded.
    pub fn respond(
        &mut self,
        responses: &[(&str, &str)],
        budgets: &Budgets,
    ) -> Result<Vec<u8>, TaskError> {
        if self.rounds >= budgets.task_update_rounds {
            return Err(TaskError::Budget(
                budgets.exceeded(Budget::TaskUpdateRounds),
            ));
        }
        for (i, (key, response)) in responses.iter().enumerate() {
            let twice = responses[..i].iter().any(|(k, _)| k == key);
            if twice || !self.outstanding.contains(*key) {
                return Err(TaskError::NotOutstanding {
                    key: truncated(key, MAX_QUOTED),
                });
            }
            if serde_json::from_str::<&RawValue>(response).is_err() {
                return Err(TaskError::InputRequests {
                    reason: "a response that is not JSON",
                });
            }
        }
        let mut out = Vec::new();
        let mut w = ObjectWriter::new(&mut out);
        for (key, response) in responses {
            w.raw(key, response.trim().as_bytes());
            self.outstanding.remove(*key);
            self.answered.insert((*key).to_owned());
        }
        w.finish();
        self.rounds += 1;
        Ok(out)
    }

    /// The keys outstanding after the last poll and the answers since, in key order.
    pub fn outstanding(&self) -> impl Iterator<Item = &str> {
        self.outstanding.iter().map(String::as_str)
    }

    /// The `tasks/update` rounds recorded.
    pub fn rounds(&self) -> u32 {
        self.rounds
    }
}

fn reason_of(e: &serde_json::Error) -> &'static str {
    let text = e.to_string();
    for reason in [
        "too many keys",
        "a key too long",
        "a request that is not an object",
        "a key twice",
    ] {
        if text.starts_with(reason) {
            return reason;
        }
    }
    "not a JSON object"
}
