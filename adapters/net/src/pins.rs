//! Tool pins kept across work items (see [`mcp_sansio::pin`]): a defence against a server that
//! changes a tool's definition (same name, new description or schema) after it was first seen.
//!
//! - **Policy**: [`ClientBuilder::tool_pins`](crate::ClientBuilder::tool_pins) for every session
//!   of a client, or [`Config::tool_pins`] for one; a session applies the stricter of the two.
//!   Off by default.
//! - **Where**: every pin set is kept in the client's [`Store`] under
//!   [`store_key`](mcp_sansio::store_key) of [`StoreUse::ToolPins`], the server's URL and the
//!   principal ([`AuthContext::principal`]): a pin of one principal never applies under another,
//!   and a refreshed token keeps the pins of its grant (an authorizing session's tokens, before
//!   and after a refresh, are one principal; without a grant the principal is the credential, so
//!   a new token the embedder brings starts a pin set of its own). The store is the client's shared store if it has one
//!   ([`ClientBuilder::shared_store`](crate::ClientBuilder::shared_store): a fleet's executors then
//!   share their pins), else a [`MemoryStore`](crate::cache::MemoryStore) of the client
//!   ([`DEFAULT_MAX_BYTES`]).
//! - **When**: a listing's tools (from the server or from the catalog cache) are checked against
//!   the stored set before the listing is returned, and the tools seen for the first time are
//!   written after (trust on first use). A call is checked before it is sent, when the session
//!   knows the tool's definition: from its own last listing or from the catalog cache. A call
//!   of a tool the session has no definition of is not checked (there is nothing to compare).
//! - **Verdict** ([`PinPolicy::judge`]): under `warn` the operation goes on and the notes are
//!   kept for the embedder ([`Session::tool_changes`](crate::Session::tool_changes)); under
//!   `refuse` a listing fails (changing no pin; a cached listing's entry is removed) and a call
//!   fails before it is sent, with [`Error::ToolChanged`].
//! - **Bounds and checks**: a stored set is at most
//!   [`MAX_PIN_SET_BYTES`](mcp_sansio::pin::MAX_PIN_SET_BYTES) ([`MAX_TOOL_PINS`] pins), framed,
//!   versioned and checksummed; one that does not read back ([`ToolPins::from_bytes`]) is a miss
//!   and is removed (its tools are pinned again on sight). A store that loses a set costs the
//!   same. Two writers of one set merge: each reads the stored set again before writing and keeps
//!   its pins ([`ToolPins::merge`]), so the first pin stored of a tool stays.
//!
//! [`MAX_TOOL_PINS`]: mcp_sansio::pin::MAX_TOOL_PINS

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_sansio::{
    AuthContext, Catalog, Config, Error, Operation, PinPolicy, StoreUse, Tool, ToolChange, ToolPin,
    ToolPins,
};

use crate::cache::Store;

/// How long a pin set is kept by a store that expires its entries (a fleet's Redis store):
/// a year from its last write. A pin set is written only when a new tool is pinned, so a store's
/// default lifetime (minutes, for listings) would let a server wait out its pins and change a
/// tool unnoticed.
pub const PIN_LIFETIME: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// The most writes of one [`PinBook::save`]: its own, and the rewrites after another
/// writer's set replaced it.
pub const SAVE_ATTEMPTS: usize = 3;

/// Default byte cap of a client's own pin store, when it has no shared store: 4 MiB (16 pin sets
/// at their bound, many more of usual size).
pub const DEFAULT_MAX_BYTES: usize = 4 << 20;

/// The pins of a client: where its sessions keep them, and the client's policy.
pub struct PinBook {
    store: Arc<dyn Store>,
    policy: PinPolicy,
}

impl std::fmt::Debug for PinBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinBook")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl PinBook {
    /// Pins kept in `store`, `policy` for every session (a session's [`Config::tool_pins`] may
    /// be stricter).
    pub fn new(store: Arc<dyn Store>, policy: PinPolicy) -> PinBook {
        PinBook { store, policy }
    }

    /// The client's policy.
    pub fn policy(&self) -> PinPolicy {
        self.policy
    }

    /// The key of the pin set of `config`'s server (its URL, path and query included) and
    /// principal ([`AuthContext::principal`]).
    pub fn key(config: &Config) -> Vec<u8> {
        mcp_sansio::store_key(
            StoreUse::ToolPins,
            &config.endpoint,
            &AuthContext::principal(config),
        )
        .into_bytes()
    }

    /// The pin set under `key`: empty if there is none or if the stored bytes do not read back
    /// (those are removed).
    pub fn load(&self, key: &[u8]) -> ToolPins {
        let Some(bytes) = self.store.get(key) else {
            return ToolPins::new();
        };
        match ToolPins::from_bytes(&bytes) {
            Ok(pins) => pins,
            Err(_) => {
                self.store.remove(key);
                ToolPins::new()
            }
        }
    }

    /// Writes `pins` under `key`, merged into what is stored there now (whose pins stay), then
    /// reads the set back: a writer that wrote in between (the store has no compare-and-set)
    /// may have replaced it with a set without some of `pins`, which are merged in and written
    /// again, at most [`SAVE_ATTEMPTS`] writes in all.
    pub fn save(&self, key: &[u8], pins: &ToolPins) {
        if pins.is_empty() {
            return;
        }
        for _ in 0..SAVE_ATTEMPTS {
            let mut stored = self.load(key);
            let before = stored.len();
            stored.merge(pins);
            if before > 0 && stored.len() == before {
                // Every pin of `pins` is there (or the set is full).
                return;
            }
            self.store.put_for(key, stored.to_bytes(), PIN_LIFETIME);
        }
    }

    /// Forgets the pins of `config`'s server and principal: the embedder accepts
    /// the tools as they are now, and the next sight of each pins it again.
    pub fn forget(&self, config: &Config) {
        self.store.remove(&Self::key(config));
    }
}

/// A session's handle on its client's pins.
#[derive(Debug)]
pub struct SessionPins {
    book: Arc<PinBook>,
    key: Vec<u8>,
    policy: PinPolicy,
    /// The pins of the definitions of the session's last listing (what a call by name is
    /// checked with): at most the listing's tools.
    listed: BTreeMap<String, ToolPin>,
    /// The notes of the last operation.
    changes: Vec<ToolChange>,
}

impl SessionPins {
    /// The handle of a session with `config` (whose policy is the effective one), if its policy
    /// is not off.
    pub fn new(book: Arc<PinBook>, config: &Config) -> Option<SessionPins> {
        (config.tool_pins != PinPolicy::Off).then(|| SessionPins {
            key: PinBook::key(config),
            policy: config.tool_pins,
            book,
            listed: BTreeMap::new(),
            changes: Vec::new(),
        })
    }

    /// The notes of the last operation (under `warn`: each tool that changed since it was
    /// pinned).
    pub fn changes(&self) -> &[ToolChange] {
        &self.changes
    }

    /// An operation starts: the notes of the last are cleared.
    pub fn start(&mut self) {
        self.changes.clear();
    }

    /// A listing's `catalog` is about to be returned: its tools are checked against the stored
    /// pins; the new ones are pinned (unless the listing is refused).
    pub fn listed(&mut self, catalog: &Catalog) -> Result<(), Error> {
        self.listed = catalog
            .tools
            .iter()
            .map(|t| (t.name().to_owned(), ToolPin::of(t)))
            .collect();
        let mut pins = self.book.load(&self.key);
        let before = pins.len();
        let changes = pins.observe(&catalog.tools, Operation::ListTools);
        self.changes = self.policy.judge(changes)?;
        if pins.len() != before {
            self.book.save(&self.key, &pins);
        }
        Ok(())
    }

    /// A call of tool `name` is about to be sent; `known` is its definition from the catalog
    /// cache, if any (else the session's last listing's is used). Checked against the stored
    /// pins, or pinned if it has none; nothing happens when no definition is known.
    pub fn call(&mut self, name: &str, known: Option<&Tool>) -> Result<(), Error> {
        let now = match known {
            Some(tool) => ToolPin::of(tool),
            None => match self.listed.get(name) {
                Some(p) => *p,
                None => return Ok(()),
            },
        };
        let mut pins = self.book.load(&self.key);
        match pins.check(name, now) {
            mcp_sansio::pin::PinCheck::Same => Ok(()),
            mcp_sansio::pin::PinCheck::Unpinned => {
                if pins.pin(name, now) {
                    self.book.save(&self.key, &pins);
                }
                Ok(())
            }
            mcp_sansio::pin::PinCheck::Changed { pinned } => {
                let change = ToolChange {
                    name: name.to_owned(),
                    pinned,
                    now,
                    operation: Operation::CallTool,
                };
                self.changes = self.policy.judge(vec![change])?;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::MemoryStore;

    fn catalog(page: &str) -> Catalog {
        Catalog::from_pages(
            [page.as_bytes()],
            mcp_sansio::ToolNameRule::Strict,
            &mcp_sansio::Budgets::default(),
        )
        .unwrap()
    }

    const V1: &str =
        r#"{"tools":[{"name":"a","description":"one","inputSchema":{"type":"object"}}]}"#;
    const V2: &str =
        r#"{"tools":[{"name":"a","description":"two","inputSchema":{"type":"object"}}]}"#;

    fn session(store: &Arc<MemoryStore>, config: &Config) -> SessionPins {
        let book = Arc::new(PinBook::new(store.clone(), PinPolicy::Off));
        SessionPins::new(book, config).unwrap()
    }

    /// A store that keeps the lifetime each entry was written with.
    struct Lifetimes {
        inner: MemoryStore,
        ttls: std::sync::Mutex<Vec<std::time::Duration>>,
    }

    impl Store for Lifetimes {
        fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
            self.inner.get(key)
        }
        fn put(&self, key: &[u8], value: Vec<u8>) {
            self.inner.put(key, value);
        }
        fn put_for(&self, key: &[u8], value: Vec<u8>, ttl: std::time::Duration) {
            self.ttls.lock().unwrap().push(ttl);
            self.inner.put(key, value);
        }
        fn remove(&self, key: &[u8]) {
            self.inner.remove(key);
        }
    }

    /// Another writer's set stored between this writer's read and write (the store has no
    /// compare-and-set) replaces it; the writer reads the set back and writes its missing pins
    /// again: no pin is lost, and of one tool's two pins the one stored stays.
    #[test]
    fn a_pin_lost_to_a_concurrent_writer_is_written_again() {
        /// Stores the other writer's set right after the first write it sees.
        struct Racing {
            inner: MemoryStore,
            other: std::sync::Mutex<Option<Vec<u8>>>,
        }
        impl Store for Racing {
            fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
                self.inner.get(key)
            }
            fn put(&self, key: &[u8], value: Vec<u8>) {
                self.inner.put(key, value);
                if let Some(other) = self.other.lock().unwrap().take() {
                    self.inner.put(key, other);
                }
            }
            fn remove(&self, key: &[u8]) {
                self.inner.remove(key);
            }
        }
        const AB: &str = r#"{"tools":[{"name":"a","description":"one","inputSchema":{"type":"object"}},{"name":"b","description":"bee","inputSchema":{"type":"object"}}]}"#;
        let mut mine = ToolPins::new();
        let _ = mine.observe(&catalog(AB).tools, Operation::ListTools);
        let mut theirs = ToolPins::new();
        let _ = theirs.observe(&catalog(V2).tools, Operation::ListTools);
        let store = Arc::new(Racing {
            inner: MemoryStore::new(1 << 20),
            other: std::sync::Mutex::new(Some(theirs.to_bytes())),
        });
        let book = PinBook::new(store.clone(), PinPolicy::Warn);
        book.save(b"pins:k", &mine);
        let stored = book.load(b"pins:k");
        assert_eq!(stored.len(), 2, "a and b");
        assert_eq!(
            stored.get("a"),
            theirs.get("a"),
            "the stored pin of a stays"
        );
        assert_eq!(stored.get("b"), mine.get("b"), "b is not lost");
    }

    /// A pin set reaches the store with a lifetime of its own (a year), not the store's default
    /// for entries without one (a fleet store's default is minutes: a server could wait its pins
    /// out and change a tool unnoticed).
    #[test]
    fn a_pin_set_is_written_with_its_own_long_lifetime() {
        let store = Arc::new(Lifetimes {
            inner: MemoryStore::new(1 << 20),
            ttls: std::sync::Mutex::new(Vec::new()),
        });
        let config = Config::new("https://mcp.example.com/t")
            .unwrap()
            .with_tool_pins(PinPolicy::Warn);
        let book = Arc::new(PinBook::new(store.clone(), PinPolicy::Off));
        SessionPins::new(book, &config)
            .unwrap()
            .listed(&catalog(V1))
            .unwrap();
        let ttls = store.ttls.lock().unwrap().clone();
        assert_eq!(ttls.len(), 1, "{ttls:?}");
        assert!(
            ttls[0] >= std::time::Duration::from_secs(364 * 24 * 3600),
            "{ttls:?}"
        );
    }

    /// Pins live per authorization context: a changed tool is noted under the context that
    /// pinned it, and first seen (pinned, no note) under another.
    #[test]
    fn a_pin_of_one_context_never_applies_under_another() {
        let store = Arc::new(MemoryStore::new(1 << 20));
        let a = Config::new("https://mcp.example.com/t")
            .unwrap()
            .with_bearer_token("token-a")
            .with_tool_pins(PinPolicy::Warn);
        let b = a.clone().with_bearer_token("token-b");
        session(&store, &a).listed(&catalog(V1)).unwrap();
        let mut under_b = session(&store, &b);
        under_b.listed(&catalog(V2)).unwrap();
        assert!(under_b.changes().is_empty(), "{:?}", under_b.changes());
        let mut under_a = session(&store, &a);
        under_a.listed(&catalog(V2)).unwrap();
        assert_eq!(under_a.changes().len(), 1);
        assert_eq!(store.len(), 2, "one pin set per context");
    }

    /// Pins belong to the principal: a listing under token B of grant G sees the pins made
    /// under token A of G (a refreshed token: the changed tool is noted, the set is one), and
    /// another grant, or the same token without a grant, starts a set of its own.
    #[test]
    fn a_refreshed_token_of_the_grant_sees_its_pins() {
        let store = Arc::new(MemoryStore::new(1 << 20));
        let grant = |client: &str| {
            Some(mcp_sansio::GrantIdentity {
                kind: mcp_sansio::GrantKind::ClientCredentials,
                issuer: "https://as.example".into(),
                client_id: client.into(),
            })
        };
        let base = Config::new("https://mcp.example.com/t")
            .unwrap()
            .with_tool_pins(PinPolicy::Warn);
        let a = base
            .clone()
            .with_bearer_token("token-a")
            .with_grant(grant("g"));
        let b = base
            .clone()
            .with_bearer_token("token-b")
            .with_grant(grant("g"));
        session(&store, &a).listed(&catalog(V1)).unwrap();
        let mut under_b = session(&store, &b);
        under_b.listed(&catalog(V2)).unwrap();
        assert_eq!(
            under_b.changes().len(),
            1,
            "the pin made under token A applies"
        );
        assert_eq!(store.len(), 1, "one pin set for the grant");
        let other_grant = base
            .clone()
            .with_bearer_token("token-b")
            .with_grant(grant("h"));
        let mut under_h = session(&store, &other_grant);
        under_h.listed(&catalog(V2)).unwrap();
        assert!(under_h.changes().is_empty(), "{:?}", under_h.changes());
        let no_grant = base.with_bearer_token("token-a");
        let mut bare = session(&store, &no_grant);
        bare.listed(&catalog(V2)).unwrap();
        assert!(bare.changes().is_empty(), "{:?}", bare.changes());
        assert_eq!(store.len(), 3);
    }

    /// A stored set that does not read back is a miss, removed: the tools are pinned again.
    #[test]
    fn a_poisoned_stored_set_is_a_miss_and_removed() {
        let store = Arc::new(MemoryStore::new(1 << 20));
        let config = Config::new("https://mcp.example.com/t")
            .unwrap()
            .with_tool_pins(PinPolicy::Refuse);
        let key = PinBook::key(&config);
        session(&store, &config).listed(&catalog(V1)).unwrap();
        let mut bytes = store.get(&key).unwrap();
        assert!(session(&store, &config).listed(&catalog(V2)).is_err());
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        store.put(&key, bytes.clone());
        let book = PinBook::new(store.clone(), PinPolicy::Off);
        assert!(book.load(&key).is_empty());
        assert_eq!(store.get(&key), None, "removed");
        store.put(&key, bytes);
        session(&store, &config).listed(&catalog(V2)).unwrap();
        assert_eq!(
            ToolPins::from_bytes(&store.get(&key).unwrap())
                .unwrap()
                .len(),
            1
        );
    }

    /// Under refuse a listing with a changed tool fails and changes no pin; a call of the
    /// changed tool (its definition from that listing) fails before it is sent; under warn both
    /// go on with a note; a tool with no known definition is not checked.
    #[test]
    fn refuse_fails_listing_and_call_warn_notes_them() {
        let store = Arc::new(MemoryStore::new(1 << 20));
        let config = Config::new("https://mcp.example.com/t").unwrap();
        let refuse = config.clone().with_tool_pins(PinPolicy::Refuse);
        let warn = config.clone().with_tool_pins(PinPolicy::Warn);
        let mut first = session(&store, &refuse);
        first.listed(&catalog(V1)).unwrap();
        first.call("a", None).unwrap();

        let mut s = session(&store, &refuse);
        let e = s.listed(&catalog(V2)).unwrap_err();
        assert!(
            matches!(&e, Error::ToolChanged { name, operation: Operation::ListTools, changed: 1 } if name == "a"),
            "{e:?}"
        );
        let e = s.call("a", None).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::ToolChanged {
                    operation: Operation::CallTool,
                    ..
                }
            ),
            "{e:?}"
        );
        s.call("unknown", None).unwrap();

        let mut w = session(&store, &warn);
        w.listed(&catalog(V2)).unwrap();
        assert_eq!(w.changes().len(), 1);
        w.start();
        w.call("a", None).unwrap();
        assert_eq!(w.changes()[0].operation, Operation::CallTool);
        w.start();
        let v1 = catalog(V1);
        w.call("a", v1.tools.first()).unwrap();
        assert!(
            w.changes().is_empty(),
            "the cached definition is the pinned one"
        );
    }
}
