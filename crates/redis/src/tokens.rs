//! Tokens in Redis, with one refresh per grant across the fleet ([`RedisTokens`]).
//!
//! [`RedisTokens`] is a [`TokenStore`]: give it to every process's
//! [`AuthHttp`](mcp_sansio_net::auth::AuthHttp) with
//! [`AuthHttp::token_store`](mcp_sansio_net::auth::AuthHttp::token_store), and the sessions of
//! the whole fleet refresh each grant once (the seam's protocol:
//! [`mcp_sansio_net::auth::tokens`]). In Redis, for a token key `K` (the core's
//! [`Authorizer::token_key`](mcp_sansio::auth::Authorizer::token_key): a digest of the server and the grant's
//! authorization context, no secret, no URL):
//!
//! - `P:tokens:{K}`, a hash: `v` the version, `d` the entry's bytes ([`read_token_entry`]),
//!   written only by the compare-and-set script (the lease still held, the version the one read);
//! - `P:lease:{K}`: `fence:holder`, taken with a script that sets it only when absent, with a
//!   time to live ([`SharedTokens::lease_ttl`]); the fencing number comes from `P:fence:{K}`
//!   (`INCR`), so a holder whose lease expired cannot write over its successor's tokens.
//!
//! **What Redis sees.** Unsealed, an entry holds the access and refresh tokens, their expiry and
//! scopes, the issuer and the resource, in JSON: whoever reads Redis (or its backups) can use the
//! tokens. With a [`TokenSeal`] (AES-256-GCM, a key the embedder supplies to every process),
//! Redis sees only the key names (digests), the versions, the leases (a random holder and a
//! number) and ciphertext. Either way no key names a server or a person.
//!
//! **Failure is not an outage.** Every operation runs on the crate's bounded link
//! ([`crate::conn`]) under one total deadline ([`RedisTokens::op_timeout`]: dial, TLS,
//! `AUTH`/`SELECT`, the script and every byte of its reply; a Redis that trickles one byte at a
//! time cannot stretch it) and a byte bound on the reply ([`MAX_ENTRY_BYTES`] plus
//! [`REPLY_SLACK`] for a read, [`REPLY_SLACK`] for the rest; an entry over [`MAX_ENTRY_BYTES`] is
//! refused by the reading script before it is sent, and checked again here). `rediss://` is TLS
//! (rustls; the roots of [`RedisTokens::tls`], by default the webpki roots). A value that does
//! not read back ([`read_token_entry`]) is a miss, and removed. When Redis is down, slow or
//! answers garbage, the store falls back to the process's own [`MemoryTokens`] (one refresh per
//! grant in the process) and leaves Redis aside for a backoff (from [`RedisTokens::retry_after`],
//! doubling with each failure in a row up to [`RedisTokens::backoff_max`]), then reconnects; a
//! refresh written during the outage is kept and written
//! to Redis once it answers again (when what Redis holds is the tokens that refresh spent, or
//! nothing), never lost. While Redis is unreachable the single flight is per process: processes
//! refreshing the same grant during the outage each spend its refresh token.

mod entry;
mod lease;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::auth::ResourceCredentials;
use mcp_sansio_net::auth::tokens::{
    relation, Lease, MemoryTokens, Relation, Spent, TokenEntry, TokenStore, TokenStoreError,
    Written, MAX_LINEAGE,
};
use redis::{Cmd, Value};

use crate::conn::{Backend, Limits, LinkError, Target};

#[cfg(doc)]
use mcp_sansio_net::auth::tokens::SharedTokens;

pub use entry::{
    read_token_entry, write_token_entry, EntryError, TokenSeal, MAX_ENTRY_BYTES, MAX_TEXT,
    MAX_TOKEN_BYTES,
};

/// Default deadline of one Redis operation.
pub const DEFAULT_OP_TIMEOUT: Duration = Duration::from_millis(500);
/// Default first pause before Redis is tried again after it failed (it doubles with each
/// failure in a row).
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_millis(500);
/// Default longest pause before Redis is tried again.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Reply bytes an operation may take beyond an entry (RESP headers, a version, an integer).
pub const REPLY_SLACK: usize = 256;
/// Default time to live of an entry in Redis (renewed on every write).
pub const DEFAULT_ENTRY_TTL: Duration = Duration::from_secs(30 * 24 * 3600);
/// The most refreshes kept for a later write while Redis is unreachable (one per token key).
pub const MAX_PENDING: usize = 4096;

/// The longest a lease's release waits for Redis to be usable again to write the refresh the
/// lease guarded, when its write failed.
pub const RELEASE_FLUSH_WAIT: Duration = Duration::from_secs(1);

const LOCAL: &str = "local:";

/// A refresh that could not be written to Redis: kept, and written when Redis answers again.
struct Pending {
    credentials: ResourceCredentials,
    spent: Vec<Spent>,
}

/// The token store of a fleet in Redis: see the [module docs](self).
pub struct RedisTokens {
    target: Target,
    tls: Option<Arc<rustls::ClientConfig>>,
    limits: Limits,
    backend: Backend,
    prefix: String,
    entry_ttl: Duration,
    seal: Option<TokenSeal>,
    /// Where the process falls back while Redis fails.
    local: MemoryTokens,
    pending: Mutex<HashMap<String, Pending>>,
}

impl fmt::Debug for RedisTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTokens")
            .field("prefix", &self.prefix)
            .field("target", &self.target)
            .field("limits", &self.limits)
            .field("sealed", &self.seal.is_some())
            .field("pending", &self.pending_writes())
            .finish_non_exhaustive()
    }
}

fn unavailable(e: LinkError) -> TokenStoreError {
    match e {
        LinkError::Deadline(timeout) => TokenStoreError::Timeout {
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        },
        LinkError::Garbage(m) => TokenStoreError::Garbage(format!("redis: {m}")),
        other => TokenStoreError::Unavailable(format!("redis: {other}")),
    }
}

/// `EVAL script` on `keys`; the arguments follow.
fn eval(script: &str, keys: &[&str]) -> Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(script).arg(keys.len());
    for k in keys {
        cmd.arg(*k);
    }
    cmd
}

fn lease_value(lease: &Lease) -> String {
    format!("{}:{}", lease.fence(), lease.holder())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisTokens {
    /// A store on the Redis at `url` (`redis://[user][:password@]host[:port][/db]`, `rediss://…`
    /// for TLS, or the `valkey://`/`valkeys://` spellings), keys under prefix `mcp-sansio`.
    /// Nothing is connected yet: the first operation connects.
    pub fn open(url: &str) -> Result<RedisTokens, TokenStoreError> {
        let target = Target::parse(url)
            .map_err(|e| TokenStoreError::Unavailable(format!("redis URL: {e}")))?;
        let limits = Limits {
            op_timeout: DEFAULT_OP_TIMEOUT,
            backoff_min: DEFAULT_RETRY_AFTER,
            backoff_max: DEFAULT_BACKOFF_MAX,
            ..Limits::default()
        };
        Ok(RedisTokens {
            backend: Backend::new(target.clone(), limits.clone(), None),
            target,
            tls: None,
            limits,
            prefix: "mcp-sansio".to_owned(),
            entry_ttl: DEFAULT_ENTRY_TTL,
            seal: None,
            local: MemoryTokens::new(),
            pending: Mutex::new(HashMap::new()),
        })
    }

    /// The link again with the current bounds and TLS configuration (builders only: nothing is
    /// connected yet).
    fn relink(mut self) -> RedisTokens {
        self.backend = Backend::new(self.target.clone(), self.limits.clone(), self.tls.clone());
        self
    }

    /// Sets the prefix of every key (default `mcp-sansio`).
    #[must_use]
    pub fn prefix(mut self, prefix: &str) -> RedisTokens {
        prefix.clone_into(&mut self.prefix);
        self
    }

    /// Sets the total deadline of one operation: dial, TLS, `AUTH`/`SELECT`, the script and
    /// every byte of its reply (default [`DEFAULT_OP_TIMEOUT`]).
    #[must_use]
    pub fn op_timeout(mut self, d: Duration) -> RedisTokens {
        self.limits.op_timeout = d.max(Duration::from_millis(1));
        self.relink()
    }

    /// Sets how long Redis is left aside after a failure (default [`DEFAULT_RETRY_AFTER`]); the
    /// pause doubles with each failure in a row, up to [`RedisTokens::backoff_max`] (raised to
    /// `d` if lower).
    #[must_use]
    pub fn retry_after(mut self, d: Duration) -> RedisTokens {
        self.limits.backoff_min = d;
        self.limits.backoff_max = self.limits.backoff_max.max(d);
        self.relink()
    }

    /// Sets the longest pause before Redis is tried again (default [`DEFAULT_BACKOFF_MAX`]; not
    /// below [`RedisTokens::retry_after`]).
    #[must_use]
    pub fn backoff_max(mut self, d: Duration) -> RedisTokens {
        self.limits.backoff_max = d.max(self.limits.backoff_min);
        self.relink()
    }

    /// Sets the TLS configuration of a `rediss://` store (default: the webpki roots, no ALPN).
    #[must_use]
    pub fn tls(mut self, config: Arc<rustls::ClientConfig>) -> RedisTokens {
        self.tls = Some(config);
        self.relink()
    }

    /// Sets the time to live of an entry (renewed on every write).
    #[must_use]
    pub fn entry_ttl(mut self, d: Duration) -> RedisTokens {
        self.entry_ttl = d;
        self
    }

    /// Seals every entry with `seal` (AES-256-GCM): Redis then sees no token.
    #[must_use]
    pub fn seal(mut self, seal: TokenSeal) -> RedisTokens {
        self.seal = Some(seal);
        self
    }

    /// How many refreshes wait to be written to Redis.
    pub fn pending_writes(&self) -> usize {
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    fn entry_key(&self, key: &str) -> String {
        format!("{}:tokens:{{{key}}}", self.prefix)
    }

    fn lease_key(&self, key: &str) -> String {
        format!("{}:lease:{{{key}}}", self.prefix)
    }

    fn fence_key(&self, key: &str) -> String {
        format!("{}:fence:{{{key}}}", self.prefix)
    }

    /// Whether Redis is tried (it is not in a backoff after a failure).
    fn usable(&self) -> bool {
        !self.backend.backing_off()
    }

    /// Sends `cmd` on the bounded link (one total deadline, at most `max_reply` bytes of
    /// reply); a failure leaves Redis aside for a backoff. A server's error reply is garbage.
    fn call(&self, cmd: Cmd, max_reply: usize) -> Result<Value, TokenStoreError> {
        let mut replies = self.backend.call(&[cmd], max_reply).map_err(unavailable)?;
        match replies.pop() {
            Some(Value::ServerError(e)) => {
                Err(TokenStoreError::Garbage(format!("redis: {}", e.code())))
            }
            Some(v) if replies.is_empty() => Ok(v),
            _ => Err(TokenStoreError::Garbage("not one reply".into())),
        }
    }

    /// Sends `cmd`, whose answer is an integer.
    fn call_int(&self, cmd: Cmd) -> Result<i64, TokenStoreError> {
        match self.call(cmd, REPLY_SLACK)? {
            Value::Int(i) => Ok(i),
            _ => Err(TokenStoreError::Garbage("not an integer".into())),
        }
    }

    /// Reads the entry under `key` from Redis: a damaged one is removed and read as none.
    fn read_redis(&self, key: &str) -> Result<Option<TokenEntry>, TokenStoreError> {
        let entry_key = self.entry_key(key);
        let reply = self.call(
            eval(lease::READ, &[&entry_key])
                .arg(MAX_ENTRY_BYTES)
                .clone(),
            MAX_ENTRY_BYTES + REPLY_SLACK,
        )?;
        let items = match reply {
            Value::Array(items) => items,
            _ => return Err(TokenStoreError::Garbage("not a list".into())),
        };
        let (version, bytes) = match items.as_slice() {
            [] => return Ok(None),
            [Value::BulkString(v), Value::BulkString(d)] => (v.clone(), d.clone()),
            [Value::BulkString(_), Value::Nil] | [Value::Nil, _] | [_] => {
                self.remove(&entry_key, b"");
                return Ok(None);
            }
            _ => return Err(TokenStoreError::Garbage("not the entry".into())),
        };
        let read = read_token_entry(key, &bytes, self.seal.as_ref());
        let version = std::str::from_utf8(&version)
            .ok()
            .and_then(|v| v.parse::<u64>().ok());
        match read {
            Ok(entry) if Some(entry.version) == version => Ok(Some(entry)),
            _ => {
                self.remove(&entry_key, &bytes);
                Ok(None)
            }
        }
    }

    /// Removes a damaged entry if it is still `bytes` (best effort).
    fn remove(&self, entry_key: &str, bytes: &[u8]) {
        let _ = self.call_int(
            eval(lease::REMOVE, &[entry_key])
                .arg(bytes)
                .arg(MAX_ENTRY_BYTES)
                .clone(),
        );
    }

    /// Writes `entry` as version `expected + 1` under `key` if the entry there is `expected`
    /// (and `lease`, when given, still held).
    fn write_redis(
        &self,
        key: &str,
        lease: Option<&Lease>,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[Spent],
    ) -> Result<Written, TokenStoreError> {
        let version = expected.saturating_add(1);
        let entry = TokenEntry {
            version,
            credentials: credentials.clone(),
            spent: spent.iter().take(MAX_LINEAGE).copied().collect(),
        };
        let bytes = write_token_entry(key, &entry, self.seal.as_ref())
            .ok_or_else(|| TokenStoreError::Garbage("the tokens do not fit an entry".into()))?;
        let lease_value = lease.map(lease_value).unwrap_or_default();
        let (lease_key, entry_key) = (self.lease_key(key), self.entry_key(key));
        let got = self.call_int(
            eval(lease::WRITE, &[&lease_key, &entry_key])
                .arg(&lease_value)
                .arg(expected.to_string())
                .arg(version.to_string())
                .arg(&bytes)
                .arg(millis(self.entry_ttl))
                .clone(),
        )?;
        match u64::try_from(got) {
            Ok(v) if v == version => Ok(Written::Stored { version }),
            Ok(_) => Err(TokenStoreError::Garbage("the write's answer".into())),
            Err(_) => Ok(Written::Conflict),
        }
    }

    /// Writes the refreshes kept during an outage, where Redis holds the tokens they spent (or
    /// nothing); a refresh Redis already holds a successor of, or an unrelated entry, is
    /// dropped. How many were written.
    pub fn flush_pending(&self) -> usize {
        let keys: Vec<String> = {
            let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.keys().cloned().collect()
        };
        let mut written = 0;
        for key in keys {
            match self.flush_one(&key) {
                Ok(true) => written += 1,
                Ok(false) => {}
                Err(_) => break,
            }
        }
        written
    }

    /// Writes the refresh kept for `key`, if any: `Ok(true)` when written.
    fn flush_one(&self, key: &str) -> Result<bool, TokenStoreError> {
        let (credentials, spent) = {
            let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            match pending.get(key) {
                Some(p) => (p.credentials.clone(), p.spent.clone()),
                None => return Ok(false),
            }
        };
        let current = self.read_redis(key)?;
        let ours = TokenEntry {
            version: 0,
            credentials: credentials.clone(),
            spent: spent.clone(),
        };
        let expected = match &current {
            None => Some(0),
            Some(theirs) => {
                // Ours follows theirs: their refresh token is one ours spent.
                let follows = relation(&theirs.credentials, &ours) == Relation::Successor;
                follows.then_some(theirs.version)
            }
        };
        let written = match expected {
            Some(v) => matches!(
                self.write_redis(key, None, v, &credentials, &spent)?,
                Written::Stored { .. }
            ),
            None => false,
        };
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        // Keep a newer refresh kept meanwhile.
        if pending
            .get(key)
            .is_some_and(|p| p.credentials == credentials)
        {
            pending.remove(key);
        }
        Ok(written)
    }

    /// Keeps a refresh for a later write.
    fn keep(&self, key: &str, credentials: &ResourceCredentials, spent: &[Spent]) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.len() >= MAX_PENDING && !pending.contains_key(key) {
            return;
        }
        pending.insert(
            key.to_owned(),
            Pending {
                credentials: credentials.clone(),
                spent: spent.to_vec(),
            },
        );
    }

    /// The local store's lease behind a lease this store gave while Redis failed.
    fn local_lease(lease: &Lease) -> Option<Lease> {
        let holder = lease.holder().strip_prefix(LOCAL)?;
        Some(Lease::new(lease.key(), lease.fence(), holder))
    }
}

impl TokenStore for RedisTokens {
    fn read(&self, key: &str) -> Result<Option<TokenEntry>, TokenStoreError> {
        if self.usable() {
            let _ = self.flush_one(key);
            match self.read_redis(key) {
                Ok(entry) => return Ok(entry),
                Err(TokenStoreError::Garbage(_)) => {}
                Err(_) => {}
            }
        }
        self.local.read(key)
    }

    fn lease(&self, key: &str, ttl: Duration) -> Result<Option<Lease>, TokenStoreError> {
        let holder = mcp_sansio_net::auth::tokens::random_holder();
        let (lease_key, fence_key) = (self.lease_key(key), self.fence_key(key));
        let taken = self.call_int(
            eval(lease::LEASE, &[&lease_key, &fence_key])
                .arg(&holder)
                .arg(millis(ttl))
                .clone(),
        );
        match taken {
            Ok(0) => Ok(None),
            Ok(fence) => match u64::try_from(fence) {
                Ok(fence) => Ok(Some(Lease::new(key, fence, holder))),
                Err(_) => Err(TokenStoreError::Garbage("a negative fence".into())),
            },
            Err(_) => Ok(self
                .local
                .lease(key, ttl)?
                .map(|l| Lease::new(l.key(), l.fence(), format!("{LOCAL}{}", l.holder())))),
        }
    }

    fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, TokenStoreError> {
        if let Some(local) = Self::local_lease(lease) {
            return self.local.renew(&local, ttl);
        }
        let (lease_key, value) = (self.lease_key(lease.key()), lease_value(lease));
        let renewed = self.call_int(
            eval(lease::RENEW, &[&lease_key])
                .arg(&value)
                .arg(millis(ttl))
                .clone(),
        )?;
        Ok(renewed == 1)
    }

    fn write(
        &self,
        lease: &Lease,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[Spent],
    ) -> Result<Written, TokenStoreError> {
        let key = lease.key();
        if let Some(local) = Self::local_lease(lease) {
            // Taken while Redis failed: the process's own single flight; Redis gets it later.
            let version = self.local.read(key)?.map_or(0, |e| e.version);
            let written = self.local.write(&local, version, credentials, spent)?;
            if matches!(written, Written::Stored { .. }) {
                self.keep(key, credentials, spent);
            }
            return Ok(written);
        }
        match self.write_redis(key, Some(lease), expected, credentials, spent) {
            Ok(w) => Ok(w),
            Err(e) => {
                // Never lost: kept here, for this process now and for Redis later (the session
                // keeps its tokens in any case).
                let version = self.local.read(key)?.map_or(0, |e| e.version);
                let _ = self.local.put(
                    key,
                    TokenEntry {
                        version: version + 1,
                        credentials: credentials.clone(),
                        spent: spent.iter().take(MAX_LINEAGE).copied().collect(),
                    },
                );
                // Kept for Redis unless it can never be written (it does not fit an entry).
                let entry = TokenEntry {
                    version: 1,
                    credentials: credentials.clone(),
                    spent: spent.iter().take(MAX_LINEAGE).copied().collect(),
                };
                if write_token_entry(key, &entry, self.seal.as_ref()).is_some() {
                    self.keep(key, credentials, spent);
                }
                Err(e)
            }
        }
    }

    fn release(&self, lease: &Lease) {
        if let Some(local) = Self::local_lease(lease) {
            return self.local.release(&local);
        }
        // The refresh this lease guarded could not be written (a blip: Redis answered the lease
        // but not the write): written before the lease goes, waiting out the backoff the
        // failure started (at most `RELEASE_FLUSH_WAIT`), so that the next holder reads it and
        // not the refresh token it spent.
        let kept = {
            let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.contains_key(lease.key())
        };
        if kept {
            let end = Instant::now() + RELEASE_FLUSH_WAIT;
            while !self.usable() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = self.flush_one(lease.key());
        }
        let (lease_key, value) = (self.lease_key(lease.key()), lease_value(lease));
        let _ = self.call_int(eval(lease::RELEASE, &[&lease_key]).arg(&value).clone());
    }

    fn wait(&self, key: &str, max: Duration) {
        if self.usable() {
            std::thread::sleep(max);
        } else {
            self.local.wait(key, max);
        }
    }
}
