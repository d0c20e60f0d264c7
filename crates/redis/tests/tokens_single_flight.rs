//! One refresh per grant in one process: sessions of one client (threads sharing an
//! `AuthHttp`) whose token expired make one refresh, the others wait and use the winner's
//! tokens; with the process's default store and with Redis. Counted at an authorization server
//! that rotates refresh tokens and revokes the family on reuse (RFC 9700 §4.14.2).

mod fleet_support;
mod support;

use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use fleet_support::{authorization, http, now_ms, vault, work_item, RotatingServer, Vault};
use mcp_sansio::auth::ResourceCredentials;
use mcp_sansio_net::auth::tokens::{
    spent_digest, Lease, MemoryTokens, Spent, TokenEntry, TokenStore, TokenStoreError, Written,
};
use mcp_sansio_net::auth::{AuthHttp, SharedTokens};
use mcp_sansio_redis::tokens::RedisTokens;
use support::RedisServer;

const THREADS: usize = 16;

/// 16 threads with the same expired grant, each one work item, all at once (the token endpoint
/// is slow, so they overlap): the server sees one refresh, no reuse, and every item is accepted.
fn sixteen_threads(http: AuthHttp) -> fleet_support::Counts {
    let server = RotatingServer::start(3600);
    server.slow(300);
    let base = server.base();
    let (access, refresh) = server.seed();
    let vault = vault(&base, &access, &refresh, now_ms() - 1);
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let mut auth = authorization(&base, http.clone(), Vault(vault.0.clone()));
            let (barrier, base) = (barrier.clone(), base.clone());
            std::thread::spawn(move || {
                barrier.wait();
                work_item(&base, &mut auth)
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), Ok(200));
    }
    server.counts()
}

/// "In one process, one refresh per grant as well": the default store of an `AuthHttp`, shared
/// by its clones.
#[test]
fn sixteen_threads_on_one_grant_make_one_refresh_in_process() {
    let counts = sixteen_threads(http());
    assert_eq!(counts.refreshes, 1, "{counts:?}");
    assert_eq!((counts.reuses, counts.revocations), (0, 0), "{counts:?}");
    assert_eq!((counts.auth_failures, counts.accepted), (0, THREADS));
}

/// The same through Redis.
#[test]
fn sixteen_threads_on_one_grant_make_one_refresh_through_redis() {
    let redis = RedisServer::start();
    let store = RedisTokens::open(&redis.url()).unwrap();
    let counts = sixteen_threads(http().token_store(SharedTokens::new(Arc::new(store))));
    assert_eq!(counts.refreshes, 1, "{counts:?}");
    assert_eq!((counts.reuses, counts.revocations), (0, 0), "{counts:?}");
    assert_eq!((counts.auth_failures, counts.accepted), (0, THREADS));
}

/// A store that hides its entries from the first `hide` reads.
#[derive(Debug)]
struct Hiding {
    inner: MemoryTokens,
    hide: Mutex<usize>,
}

impl TokenStore for Hiding {
    fn read(&self, key: &str) -> Result<Option<TokenEntry>, TokenStoreError> {
        let mut hide = self.hide.lock().unwrap();
        if *hide > 0 {
            *hide -= 1;
            return Ok(None);
        }
        self.inner.read(key)
    }
    fn lease(&self, key: &str, ttl: Duration) -> Result<Option<Lease>, TokenStoreError> {
        self.inner.lease(key, ttl)
    }
    fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, TokenStoreError> {
        self.inner.renew(lease, ttl)
    }
    fn write(
        &self,
        lease: &Lease,
        expected: u64,
        credentials: &ResourceCredentials,
        spent: &[Spent],
    ) -> Result<Written, TokenStoreError> {
        self.inner.write(lease, expected, credentials, spent)
    }
    fn release(&self, lease: &Lease) {
        self.inner.release(lease)
    }
}

/// "On `invalid_grant`, re-read before declaring the grant dead": another client refreshed the
/// grant and stored its successor after this session last read; the session's own refresh is
/// refused (its refresh token was spent), it reads again, takes the successor and its token is
/// accepted.
#[test]
fn a_refused_refresh_reads_the_store_again_and_takes_the_successor() {
    let server = RotatingServer::start(3600);
    server.lenient();
    let base = server.base();
    let (access, refresh) = server.seed();
    let vault = vault(&base, &access, &refresh, now_ms() - 1);
    let key = fleet_support::key(&base);
    // Elsewhere: the grant refreshed and its successor stored.
    let (a2, r2) = server.refresh_elsewhere(&refresh).unwrap();
    let mine = vault.0.lock().unwrap().resources[&key].clone();
    let mut successor = mine.clone();
    successor.tokens.access_token = a2.clone();
    successor.tokens.refresh_token = Some(r2);
    successor.tokens.expires_at_ms = Some(now_ms() + 3_600_000);
    let inner = MemoryTokens::new();
    assert!(inner.put(
        &key,
        TokenEntry {
            version: 1,
            credentials: successor,
            spent: vec![spent_digest(&refresh)],
        },
    ));
    // This session does not see it before refreshing (both reads hidden).
    let store = Hiding {
        inner,
        hide: Mutex::new(2),
    };
    let http = http().token_store(SharedTokens::new(Arc::new(store)));
    let mut auth = authorization(&base, http, vault);
    assert_eq!(work_item(&base, &mut auth), Ok(200));
    assert_eq!(auth.bearer(), Some(a2.as_str()));
    let counts = server.counts();
    assert_eq!((counts.refreshes, counts.reuses), (1, 1), "{counts:?}");
}

/// An entry of another lineage under the same token key (another person's tokens from the same
/// client configuration, say) is never taken: the session refreshes its own tokens, and sends
/// only its own family's.
#[test]
fn an_entry_of_another_lineage_is_never_taken() {
    let server = RotatingServer::start(3600);
    let base = server.base();
    let (mine_access, mine_refresh) = server.seed();
    let (theirs_access, theirs_refresh) = server.seed();
    let key = fleet_support::key(&base);
    let v = vault(&base, &mine_access, &mine_refresh, now_ms() - 1);
    let mut theirs = v.0.lock().unwrap().resources[&key].clone();
    theirs.tokens.access_token = theirs_access.clone();
    theirs.tokens.refresh_token = Some(theirs_refresh.clone());
    theirs.tokens.expires_at_ms = Some(now_ms() + 3_600_000);
    let store = MemoryTokens::new();
    assert!(store.put(
        &key,
        TokenEntry {
            version: 4,
            credentials: theirs,
            spent: vec![spent_digest("rt-of-someone-else")],
        },
    ));
    let http = http().token_store(SharedTokens::new(Arc::new(store)));
    let mut auth = authorization(&base, http, v);
    assert_eq!(work_item(&base, &mut auth), Ok(200));
    let bearer = auth.bearer().unwrap().to_owned();
    assert_ne!(bearer, theirs_access);
    let family = |t: &str| t.split('-').nth(1).map(str::to_owned);
    assert_eq!(family(&bearer), family(&mine_access));
    let c = server.counts();
    assert_eq!((c.refreshes, c.reuses, c.revocations), (1, 0, 0), "{c:?}");
}

/// A store that fails every operation.
#[derive(Debug)]
struct Broken;

impl TokenStore for Broken {
    fn read(&self, _: &str) -> Result<Option<TokenEntry>, TokenStoreError> {
        Err(TokenStoreError::Unavailable("broken".into()))
    }
    fn lease(&self, _: &str, _: Duration) -> Result<Option<Lease>, TokenStoreError> {
        Err(TokenStoreError::Unavailable("broken".into()))
    }
    fn renew(&self, _: &Lease, _: Duration) -> Result<bool, TokenStoreError> {
        Err(TokenStoreError::Unavailable("broken".into()))
    }
    fn write(
        &self,
        _: &Lease,
        _: u64,
        _: &ResourceCredentials,
        _: &[Spent],
    ) -> Result<Written, TokenStoreError> {
        Err(TokenStoreError::Unavailable("broken".into()))
    }
    fn release(&self, _: &Lease) {}
}

/// A store that fails is a coordination lost, not an outage: the session refreshes on its own,
/// and the hook's vault gets the new tokens.
#[test]
fn a_failing_store_leaves_the_refresh_to_the_session() {
    let server = RotatingServer::start(3600);
    let base = server.base();
    let (access, refresh) = server.seed();
    let v = vault(&base, &access, &refresh, now_ms() - 1);
    let saved = v.0.clone();
    let http = http().token_store(SharedTokens::new(Arc::new(Broken)));
    let mut auth = authorization(&base, http, v);
    assert_eq!(work_item(&base, &mut auth), Ok(200));
    let key = fleet_support::key(&base);
    let in_vault = saved.lock().unwrap().resources[&key]
        .tokens
        .access_token
        .clone();
    assert_eq!(Some(in_vault.as_str()), auth.bearer());
    assert_ne!(in_vault, access);
    assert_eq!(server.counts().refreshes, 1);
}
