//! Authorizing sessions (the blocking adapter's `AuthSession`) whose token expires while they
//! run: the MCP server's 401 refreshes through the token store, one refresh per expiry among 8
//! sessions sharing a grant, no reuse, and every operation succeeds.

mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{authorization, http, now_ms, vault, RotatingServer, Vault};
use mcp_sansio::Config;
use mcp_sansio_blocking::{AuthSession, Client};
use mcp_sansio_net::AddressPolicy;

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
