//! The catalog cache, era hints and task handles in Redis: [`RedisStore`].
//!
//! **What is shared.** [`RedisStore`] is an [`mcp_sansio_net::cache::Store`]: given to
//! `ClientBuilder::shared_store`, every executor process's catalog cache and era hints live in
//! one Redis (or Valkey), and a cold work item of a process finds what another listed or
//! negotiated. Task handles ([`TaskHandle`]) are saved by the embedder
//! ([`RedisStore::save_task_handle`], or the [`SaveHandles`] call observer) and loaded by the
//! process that resumes the work item ([`RedisStore::load_task_handle`]).
//!
//! **Keys.** Every key is [`mcp_sansio::store_key`] of (the use, the server's URL, the
//! [`AuthContext`]; for a task handle, the principal, [`AuthContext::principal`], which a
//! refreshed token keeps) under a configurable namespace (default `mcp-sansio:`): nothing of one
//! authorization context is under another's key, and a key holds no credential and no URL.
//!
//! **Values.** Every value is framed ([`crate::frame`]: version, expiry, the digest of the key it
//! was written under, length, check digest) and at most [`Options::max_value_bytes`]. A value
//! read back goes through the frame's reader, then the payload's own (`Catalog::from_pages` with
//! the session's budgets, the era hint's, [`TaskHandle::from_bytes`] and
//! [`TaskHandle::check`]); a value that is poisoned, of a foreign version, truncated, oversized
//! or written under another key is a miss and is deleted, never trusted. An oversized value is
//! never read: `STRLEN` and `GETRANGE 0 max-1` in one round trip bound the reply at the server,
//! and the link's byte bound bounds it at the client (a server that sends more fails the
//! operation). Every value is written with `PX` from the entry's lifetime, so Redis drops what is
//! dead.
//!
//! **Failure is not an outage.** Redis is trusted for integrity, not for liveness. Every
//! operation runs under one total deadline ([`Options::op_timeout`], default 250 ms: dial, TLS,
//! `AUTH`/`SELECT`, the commands and every byte of their replies, not a per-read timeout that a
//! trickling server could stretch) and one byte bound; a store that is down, slow, paused or
//! answering garbage makes the operation a miss (a `put` is dropped), and the store is not asked
//! again before a backoff (from [`Options::backoff_min`], doubling to
//! [`Options::backoff_max`]) during which every operation is a miss at once; then it reconnects.
//! The `redis` crate encodes the commands and parses the replies; the socket under its parser
//! is this crate's ([`crate::conn`]), because the crate's own connections bound each read, not
//! the operation, and not the bytes of a reply.
//!
//! **Blocking.** [`Store`] is a synchronous trait and the session driver calls it from the
//! thread that drives the session: with the tokio adapter, an executor thread. A call blocks it
//! at most [`Options::op_timeout`] (at most twice that for a `get`, which deletes a bad value),
//! and not at all during a backoff; [`Store::await_fill`] blocks at most
//! [`Options::lease_wait`] plus three operation deadlines (a failure ends it at once). Keep both
//! short on a runtime whose threads serve other tasks.
//!
//! **No stampede.** On a listing's miss, [`Store::await_fill`] takes a lease (`SET NX PX GET`,
//! Redis 7, [`Options::lease_hold`]) for the listing's key: the process that gets it looks for
//! the entry once more if its wait is not over (another's listing may have ended since its
//! miss) and lists; the others look for the entry every [`Options::lease_poll`] for at most
//! [`Options::lease_wait`], then list for themselves. The holder's `put` of the listing deletes
//! the lease; a listing that ends with nothing stored (it failed, or the server's `ttlMs` lets
//! nothing be kept: a `remove`) marks the lease released, and the waiters list at once rather
//! than one after another. So N cold executors on one server make one listing while the lease
//! holds. The lease holds a token the holder keeps: a `put` or `remove` frees or releases the
//! lease only if it is still the writer's own (or already released, or, for a release, gone),
//! compared and changed in one Lua script, so a waiter that gave up or a holder whose lease
//! lapsed never frees another process's live lease.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_sansio::task::TaskHandle;
use mcp_sansio::{AuthContext, Config, ErrorKind, StoreUse};
use mcp_sansio_net::cache::Store;
use mcp_sansio_net::CallObserver;
use redis::Value;

use crate::conn::{Backend, Limits, LinkError, Target, UrlError};
use crate::frame;

/// The bounds and names of a [`RedisStore`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The prefix of every key (default `mcp-sansio:`): one Redis may serve several fleets.
    pub namespace: String,
    /// The total deadline of one operation (default 250 ms).
    pub op_timeout: Duration,
    /// The most bytes of one stored value, its frame included (default 4 MiB); a larger value is
    /// not written, and one found is deleted unread.
    pub max_value_bytes: usize,
    /// How long a listing's lease holds (default 2 s).
    pub lease_hold: Duration,
    /// How long a cold listing waits for another process's (default 1 s).
    pub lease_wait: Duration,
    /// How often a waiting listing looks for the entry (default 25 ms).
    pub lease_poll: Duration,
    /// The lifetime of an entry written by [`Store::put`], which gives none (default 5 minutes).
    pub default_ttl: Duration,
    /// The first pause after a failure (default 100 ms), doubling with each failure in a row.
    pub backoff_min: Duration,
    /// The longest pause (default 5 s).
    pub backoff_max: Duration,
    /// The TLS configuration of `rediss://` (default: the webpki roots).
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl Default for Options {
    fn default() -> Options {
        let limits = Limits::default();
        Options {
            namespace: "mcp-sansio:".to_owned(),
            op_timeout: limits.op_timeout,
            max_value_bytes: 4 << 20,
            lease_hold: Duration::from_secs(2),
            lease_wait: Duration::from_secs(1),
            lease_poll: Duration::from_millis(25),
            default_ttl: Duration::from_secs(300),
            backoff_min: limits.backoff_min,
            backoff_max: limits.backoff_max,
            tls: None,
        }
    }
}

/// Why a store could not be made or did not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The URL is not one of a Redis store.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The store did not answer as it should.
    #[error(transparent)]
    Unavailable(#[from] LinkError),
}

impl StoreError {
    /// The kind: every store error is [`ErrorKind::ConnectionFailed`] (a bad configuration or
    /// an unreachable store).
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::ConnectionFailed
    }
}

/// A [`Store`] in Redis 7 or Valkey, and the store of task handles (see the [module](self)
/// docs).
#[derive(Debug)]
pub struct RedisStore {
    backend: Backend,
    options: Options,
    leases: AtomicU64,
    /// The token of each lease this store took and has not yet freed (by its `put` or
    /// `remove`), with when it was taken: at most [`MAX_HELD`], none older than
    /// [`Options::lease_hold`] kept when another is taken.
    held: Mutex<HashMap<Vec<u8>, (String, Instant)>>,
}

/// The most lease tokens a store remembers (leases whose listing never ended lapse by
/// themselves).
const MAX_HELD: usize = 1024;

/// Deletes the lease `KEYS[1]` if it is still this process's (`ARGV[1]`, its token) or marked
/// released (`ARGV[2]`): another process's live lease is left alone.
const FREE_LEASE: &str = "local v = redis.call('GET', KEYS[1]) \
if v == ARGV[1] or v == ARGV[2] then return redis.call('DEL', KEYS[1]) end return 0";

/// Marks the lease `KEYS[1]` released (`ARGV[2]`) for `ARGV[3]` ms if there is none, or it is
/// this process's (`ARGV[1]`, its token), or it is already released: another process's live
/// lease is left alone.
const RELEASE_LEASE: &str = "local v = redis.call('GET', KEYS[1]) \
if v == false or v == ARGV[1] or v == ARGV[2] then \
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0";

/// The value of a lease whose holder's listing ended with nothing stored.
const RELEASED: &[u8] = b"released";

/// What taking a listing's lease found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lease {
    /// This process holds it: list.
    Taken,
    /// Another process holds it: wait for its entry.
    Held,
    /// The last holder's listing ended with nothing stored: list (uncoordinated).
    Released,
    /// The store failed: list (uncoordinated).
    Failed,
}

/// Reply bytes a command adds to a value (RESP headers, the other replies of a round trip).
const REPLY_SLACK: usize = 256;

fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl RedisStore {
    /// A store at `url` (`redis://[user][:password@]host[:port][/db]`, `rediss://…` for TLS)
    /// with the default [`Options`]. Nothing is dialled yet: a store that is down is a miss
    /// later, not an error now ([`ping`](Self::ping) checks it).
    pub fn open(url: &str) -> Result<RedisStore, StoreError> {
        RedisStore::with_options(url, Options::default())
    }

    /// A store at `url` with `options`.
    pub fn with_options(url: &str, options: Options) -> Result<RedisStore, StoreError> {
        let target = Target::parse(url)?;
        let limits = Limits {
            op_timeout: options.op_timeout,
            backoff_min: options.backoff_min,
            backoff_max: options.backoff_max,
            ..Limits::default()
        };
        Ok(RedisStore {
            backend: Backend::new(target, limits, options.tls.clone()),
            options,
            leases: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
        })
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Asks the store `PING` (under the deadline): whether it answers now.
    pub fn ping(&self) -> Result<(), StoreError> {
        let replies = self.backend.call(&[redis::cmd("PING")], REPLY_SLACK)?;
        match replies.as_slice() {
            [Value::SimpleString(s)] if s == "PONG" => Ok(()),
            _ => Err(LinkError::Garbage("PING was not answered PONG".to_owned()).into()),
        }
    }

    fn name(&self, key: &[u8]) -> Vec<u8> {
        let mut n = self.options.namespace.as_bytes().to_vec();
        n.extend_from_slice(key);
        n
    }

    fn lease_name(&self, key: &[u8]) -> Vec<u8> {
        let mut n = self.options.namespace.as_bytes().to_vec();
        n.extend_from_slice(b"lease:");
        n.extend_from_slice(key);
        n
    }

    /// The payload under `key`, if a value is there and reads back; a value that does not is
    /// deleted. Store failures are misses.
    fn read(&self, key: &[u8]) -> Option<Vec<u8>> {
        let max = self.options.max_value_bytes;
        let name = self.name(key);
        let cmds = [
            redis::cmd("STRLEN").arg(&name).clone(),
            redis::cmd("GETRANGE")
                .arg(&name)
                .arg(0)
                .arg(max.saturating_sub(1))
                .clone(),
        ];
        let replies = self.backend.call(&cmds, max + REPLY_SLACK).ok()?;
        let (len, value) = match replies.as_slice() {
            [Value::Int(len), Value::BulkString(v)] => (*len, v),
            [Value::Int(0), Value::Nil] => return None,
            // Not what STRLEN and GETRANGE answer (a key of another type, a garbage reply).
            _ => {
                self.delete(key);
                return None;
            }
        };
        if len == 0 {
            return None;
        }
        if usize::try_from(len).map_or(true, |l| l > max) {
            self.delete(key);
            return None;
        }
        match frame::decode(key, value, now_ms(), max) {
            Ok(payload) => Some(payload.to_vec()),
            Err(_) => {
                self.delete(key);
                None
            }
        }
    }

    /// Deletes the value under `key` (one that did not read back): the key's lease, if any, is
    /// left to its holder.
    fn delete(&self, key: &[u8]) {
        let cmd = redis::cmd("DEL").arg(self.name(key)).clone();
        let _ = self.backend.call(&[cmd], REPLY_SLACK);
    }

    /// Deletes the value under `key` and marks its lease released for [`Options::lease_hold`]:
    /// a listing that ended with nothing stored (it failed, or its answer may not be kept), or
    /// an entry invalidated. Processes waiting on the lease then list at once instead of one
    /// after another.
    fn release(&self, key: &[u8]) {
        // Only listings are leased.
        if !key.starts_with(b"catalog:") {
            return self.delete(key);
        }
        let cmds = [
            redis::cmd("DEL").arg(self.name(key)).clone(),
            redis::cmd("EVAL")
                .arg(RELEASE_LEASE)
                .arg(1)
                .arg(self.lease_name(key))
                .arg(self.token_of(key))
                .arg(RELEASED)
                .arg(millis(self.options.lease_hold).max(1))
                .clone(),
        ];
        let _ = self.backend.call(&cmds, REPLY_SLACK);
    }

    /// The command that deletes `key`'s lease if it is this store's (`token`) or released.
    fn free_lease(&self, key: &[u8], token: &str) -> redis::Cmd {
        redis::cmd("EVAL")
            .arg(FREE_LEASE)
            .arg(1)
            .arg(self.lease_name(key))
            .arg(token)
            .arg(RELEASED)
            .clone()
    }

    /// The token of the lease this store took for `key`, forgotten now (its listing ended); the
    /// empty string, which no lease holds, if it took none.
    fn token_of(&self, key: &[u8]) -> String {
        lock(&self.held)
            .remove(key)
            .map(|(token, _)| token)
            .unwrap_or_default()
    }

    /// Writes `payload` under `key` for `ttl`, freeing the key's lease. A lifetime of 0 or a
    /// value over the bound deletes the key instead.
    fn write(&self, key: &[u8], payload: &[u8], ttl: Duration) {
        let ttl_ms = millis(ttl);
        let framed = frame::encode(
            key,
            payload,
            now_ms().saturating_add(ttl_ms),
            self.options.max_value_bytes,
        );
        let Some(framed) = framed.filter(|_| ttl_ms > 0) else {
            return self.release(key);
        };
        let cmds = [
            redis::cmd("SET")
                .arg(self.name(key))
                .arg(framed)
                .arg("PX")
                .arg(ttl_ms)
                .clone(),
            self.free_lease(key, &self.token_of(key)),
        ];
        let _ = self.backend.call(&cmds, REPLY_SLACK);
    }

    /// Takes the lease of `key` for [`Options::lease_hold`] (`SET NX GET`, Redis 7): whether
    /// this process lists now or waits for another's listing.
    fn take_lease(&self, key: &[u8]) -> Lease {
        // Random, so that no two processes (pid 1 in every container) nor two stores of one
        // process hold the same token; the count keeps a store's own leases apart should the
        // system's randomness fail.
        let mut nonce = [0u8; 16];
        let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce);
        let hex: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let token = format!(
            "{}:{hex}:{}",
            std::process::id(),
            self.leases.fetch_add(1, Ordering::Relaxed)
        );
        let cmd = redis::cmd("SET")
            .arg(self.lease_name(key))
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(millis(self.options.lease_hold).max(1))
            .arg("GET")
            .clone();
        match self.backend.call(&[cmd], REPLY_SLACK).as_deref() {
            // Set: there was no lease.
            Ok([Value::Nil]) => {
                let now = Instant::now();
                let mut held = lock(&self.held);
                held.retain(|_, (_, at)| now.duration_since(*at) < self.options.lease_hold);
                if held.len() >= MAX_HELD {
                    if let Some(oldest) = held
                        .iter()
                        .min_by_key(|(_, (_, at))| *at)
                        .map(|(k, _)| k.clone())
                    {
                        held.remove(&oldest);
                    }
                }
                held.insert(key.to_vec(), (token, now));
                Lease::Taken
            }
            Ok([Value::BulkString(v)]) if v == RELEASED => Lease::Released,
            Ok([Value::BulkString(_)]) => Lease::Held,
            // A failure, or an answer of a store without `SET NX GET`: no coordination.
            _ => Lease::Failed,
        }
    }

    /// The key of the handle a work item resumes by `name` (the embedder's name of the work
    /// item, or the task id) on `config`'s server for its principal
    /// ([`AuthContext::principal`]: a refreshed token of the same grant finds it).
    pub fn task_handle_key(config: &Config, name: &str) -> String {
        mcp_sansio::store_key(
            StoreUse::task_handle(name),
            &config.endpoint,
            &AuthContext::principal(config),
        )
    }

    /// Saves `handle` under `name` for `config`'s server and principal, until the
    /// task's deadline or the end of its `ttlMs`, whichever comes first (a handle already past
    /// both is deleted). A store failure drops it (a later resume misses).
    pub fn save_task_handle(&self, config: &Config, name: &str, handle: &TaskHandle) {
        let key = RedisStore::task_handle_key(config, name);
        let mut until = handle.deadline_unix_ms();
        if let Some(ttl) = handle.ttl_ms() {
            until = until.min(handle.created_unix_ms().saturating_add(ttl));
        }
        let ttl = Duration::from_millis(until.saturating_sub(now_ms()));
        self.write(key.as_bytes(), &handle.to_bytes(), ttl);
    }

    /// The handle saved under `name` for `config`'s server and principal, if one
    /// reads back ([`TaskHandle::from_bytes`]) and belongs to that server and context
    /// ([`TaskHandle::check`]); one that does not is deleted. Store failures are misses.
    pub fn load_task_handle(&self, config: &Config, name: &str) -> Option<TaskHandle> {
        let key = RedisStore::task_handle_key(config, name);
        let bytes = self.read(key.as_bytes())?;
        match TaskHandle::from_bytes(&bytes) {
            Ok(handle) if handle.check(config).is_ok() => Some(handle),
            _ => {
                self.delete(key.as_bytes());
                None
            }
        }
    }

    /// Removes the handle saved under `name` (the task ended, or its work item gave up).
    pub fn remove_task_handle(&self, config: &Config, name: &str) {
        let key = RedisStore::task_handle_key(config, name);
        self.delete(key.as_bytes());
    }
}

impl Store for RedisStore {
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.read(key)
    }

    fn put(&self, key: &[u8], value: Vec<u8>) {
        self.write(key, &value, self.options.default_ttl);
    }

    fn put_for(&self, key: &[u8], value: Vec<u8>, ttl: Duration) {
        self.write(key, &value, ttl);
    }

    fn remove(&self, key: &[u8]) {
        self.release(key);
    }

    fn await_fill(&self, key: &[u8]) -> Option<Vec<u8>> {
        let end = Instant::now() + self.options.lease_wait;
        loop {
            match self.take_lease(key) {
                // Another's listing may have ended between this process's miss and the lease
                // it then took: look once more before listing.
                // Past the wait, list at once (the bound of the wait).
                Lease::Taken => {
                    if Instant::now() >= end {
                        return None;
                    }
                    let entry = self.read(key)?;
                    let cmd = self.free_lease(key, &self.token_of(key));
                    let _ = self.backend.call(&[cmd], REPLY_SLACK);
                    return Some(entry);
                }
                // Released without an entry, or the store failed: list now, uncoordinated.
                Lease::Released | Lease::Failed => return None,
                // Another holds it: wait for its entry.
                Lease::Held => {}
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            std::thread::sleep(self.options.lease_poll.min(left));
            if let Some(entry) = self.read(key) {
                return Some(entry);
            }
        }
    }
}

/// A [`CallObserver`] that saves each task handle the call reports under `name`
/// ([`RedisStore::save_task_handle`]) and hands everything to `inner`.
pub struct SaveHandles<'a, O> {
    store: &'a RedisStore,
    config: &'a Config,
    name: &'a str,
    /// The observer everything is handed to.
    pub inner: O,
}

impl<'a, O: CallObserver> SaveHandles<'a, O> {
    /// Saves the handles of a call on a session with `config` under `name` in `store`.
    pub fn new(store: &'a RedisStore, config: &'a Config, name: &'a str, inner: O) -> Self {
        SaveHandles {
            store,
            config,
            name,
            inner,
        }
    }
}

impl<O: CallObserver> CallObserver for SaveHandles<'_, O> {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.inner.progress(progress, total, message);
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.inner.input_required(requests)
    }

    fn task_handle(&mut self, handle: &TaskHandle) {
        self.store.save_task_handle(self.config, self.name, handle);
        self.inner.task_handle(handle);
    }

    fn task_status(&mut self, status: mcp_sansio::task::TaskStatus, message: Option<&str>) {
        self.inner.task_status(status, message);
    }

    fn server_request(
        &mut self,
        method: &str,
        params: Option<&serde_json::value::RawValue>,
    ) -> Option<Vec<u8>> {
        self.inner.server_request(method, params)
    }
}
