//! Authorizing sessions (the blocking adapter's `AuthSession`) whose token expires while they
//! run: the MCP server's 401 refreshes through the token store, one refresh per expiry among 8
//! sessions sharing a grant, no reuse, and every operation succeeds; a token refused before
//! its expiry refreshes through the store too.

mod fleet_support;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_support::{authorization, http, now_ms, vault, RotatingServer, Vault};
use mcp_sansio::Config;
use mcp_sansio_blocking::{AuthSession, Client};
use mcp_sansio_net::auth::tokens::SharedTokens;
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_redis::tokens::RedisTokens;

#[test]
fn sessions_whose_token_expires_refresh_once_per_expiry() {
    const SESSIONS: usize = 8;
    let server = RotatingServer::start(1);
    let base = server.base();
    let (access, refresh) = server.seed();
    let v = vault(&base, &access, &refresh, now_ms() + 1000);
    let http = http();
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();
    let start = Instant::now();
    let threads: Vec<_> = (0..SESSIONS)
        .map(|_| {
            let auth = authorization(&base, http.clone(), Vault(v.0.clone()));
            let (client, base) = (client.clone(), base.clone());
            std::thread::spawn(move || {
                let config = Config::new(&format!("{base}/mcp")).unwrap();
                let mut s = AuthSession::connect(&client, config, auth).unwrap();
                let mut listed = 0;
                while start.elapsed() < Duration::from_millis(3500) {
                    let catalog = s.list_tools().unwrap();
                    assert_eq!(catalog.tools.len(), 1);
                    listed += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                listed
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap() > 20);
    }
    let c = server.counts();
    assert_eq!((c.reuses, c.revocations, c.refused), (0, 0, 0), "{c:?}");
    // Tokens live 1 s (and the server accepts them 1 s longer): a refresh per expiry in 3.5 s.
    assert!((1..=4).contains(&c.refreshes), "{c:?}");
    let at = server.refreshed_at();
    for pair in at.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_millis(900), "{at:?}");
    }
}

/// A token the server stops accepting before the client's clock says it expired (a token
/// revoked early, or a clock skew: here the vault believes it lives an hour, the server takes
/// it for 2 s): the 401 refreshes through the token store too, not through the core's own
/// refresh inside the authorization. Two executors (each its own `AuthHttp` and `RedisTokens`,
/// as two processes would have, sharing one Redis) on one grant spend its refresh token once:
/// no reuse, no revocation, every operation succeeds.
#[test]
fn a_401_to_an_unexpired_token_refreshes_through_the_store_once() {
    const SESSIONS: usize = 2;
    let redis = support::RedisServer::start();
    let server = RotatingServer::start(1);
    let base = server.base();
    let (access, refresh) = server.seed();
    let v = vault(&base, &access, &refresh, now_ms() + 3_600_000);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();
    let start = Instant::now();
    let threads: Vec<_> = (0..SESSIONS)
        .map(|_| {
            let store = RedisTokens::open(&redis.url())
                .unwrap()
                .op_timeout(Duration::from_millis(500));
            let http = http().token_store(SharedTokens::new(Arc::new(store)));
            let auth = authorization(&base, http, Vault(v.0.clone()));
            let (client, base) = (client.clone(), base.clone());
            std::thread::spawn(move || {
                let config = Config::new(&format!("{base}/mcp")).unwrap();
                let mut s = AuthSession::connect(&client, config, auth).unwrap();
                let mut listed = 0;
                while start.elapsed() < Duration::from_millis(3000) {
                    let catalog = s.list_tools().unwrap();
                    assert_eq!(catalog.tools.len(), 1);
                    listed += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                listed
            })
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap() > 20);
    }
    let c = server.counts();
    assert_eq!((c.reuses, c.revocations, c.refused), (0, 0, 0), "{c:?}");
    // The seed is refused after 2 s; its successor lives 1 s by the client's clock too.
    assert!((1..=2).contains(&c.refreshes), "{c:?}");
}
