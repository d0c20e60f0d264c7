//! A fleet sharing one grant through Redis, counted at an authorization server that rotates
//! refresh tokens and revokes the whole family when one is spent twice (RFC 9700 §4.14.2): the
//! processes are this test binary run again with `MCP_SANSIO_FLEET_CHILD` set (the test
//! `fleet_child` then runs work items and prints its counts).
//!
//! - 8 processes × 200 work items, tokens expiring every second: 0 revocations, 0 reuses,
//!   0 authentication failures, and one refresh per expiry (every token lived its lifetime
//!   before the next refresh).
//! - The lease holder killed (`SIGKILL`) mid-refresh (a slow token endpoint): another process
//!   takes over once the lease lapses, and nothing is lost.
//! - Redis cut mid-run under 8 threads of one process: the items go on with the process's
//!   single flight, and the refresh made meanwhile is in Redis once it is back.

mod fleet_support;
mod support;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_support::{authorization, http, now_ms, vault, work_item, Proxy, ProxyMode};
use fleet_support::{RotatingServer, Vault};
use mcp_sansio_net::auth::tokens::TokenStore;
use mcp_sansio_net::auth::SharedTokens;
use mcp_sansio_redis::tokens::RedisTokens;
use support::RedisServer;

const CHILD: &str = "MCP_SANSIO_FLEET_CHILD";

/// The store of a process of the fleet.
fn fleet_store(url: &str) -> RedisTokens {
    RedisTokens::open(url)
        .unwrap()
        .op_timeout(Duration::from_millis(500))
        .retry_after(Duration::from_millis(100))
        // A fixed pause: these tests bring Redis back and expect the next operation to reach it.
        .backoff_max(Duration::from_millis(100))
}

/// A process of the fleet: runs `FLEET_ITEMS` work items `FLEET_PAUSE_MS` apart against the
/// server `FLEET_AS`, its vault holding `FLEET_ACCESS`/`FLEET_REFRESH` expiring at
/// `FLEET_EXPIRES`, the tokens shared through `FLEET_REDIS` with a lease of `FLEET_LEASE_MS`;
/// prints `FLEET ok=… refused=… errors=…`. Does nothing outside the fleet.
#[test]
fn fleet_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let var = |n: &str| std::env::var(n).unwrap();
    let num = |n: &str| var(n).parse::<u64>().unwrap();
    let base = var("FLEET_AS");
    let store = fleet_store(&var("FLEET_REDIS"));
    let shared =
        SharedTokens::new(Arc::new(store)).lease_ttl(Duration::from_millis(num("FLEET_LEASE_MS")));
    let v = vault(
        &base,
        &var("FLEET_ACCESS"),
        &var("FLEET_REFRESH"),
        num("FLEET_EXPIRES"),
    );
    let mut auth = authorization(&base, http().token_store(shared), v);
    let (mut ok, mut refused, mut errors) = (0, 0, 0);
    for _ in 0..num("FLEET_ITEMS") {
        match work_item(&base, &mut auth) {
            Ok(200) => ok += 1,
            Ok(_) => refused += 1,
            Err(e) => {
                eprintln!("work item: {e}");
                errors += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(num("FLEET_PAUSE_MS")));
    }
    println!("\nFLEET ok={ok} refused={refused} errors={errors}");
}

struct Child {
    process: std::process::Child,
}

/// Starts a process of the fleet.
fn spawn(
    server: &RotatingServer,
    redis_url: &str,
    tokens: &(String, String),
    expires: u64,
    items: u64,
    lease_ms: u64,
) -> Child {
    let process = Command::new(std::env::current_exe().unwrap())
        .args(["fleet_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("FLEET_AS", server.base())
        .env("FLEET_REDIS", redis_url)
        .env("FLEET_ACCESS", &tokens.0)
        .env("FLEET_REFRESH", &tokens.1)
        .env("FLEET_EXPIRES", expires.to_string())
        .env("FLEET_ITEMS", items.to_string())
        .env("FLEET_PAUSE_MS", "10")
        .env("FLEET_LEASE_MS", lease_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    Child { process }
}

/// Waits for a process and reads its counts: (ok, refused, errors).
fn counts(child: Child) -> (u64, u64, u64) {
    let out = child.process.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text
        .find("FLEET ok=")
        .unwrap_or_else(|| panic!("no counts from a process: {text}"));
    let line = text[at..].lines().next().unwrap_or("");
    let get = |name: &str| -> u64 {
        line.split(' ')
            .find_map(|p| p.strip_prefix(&format!("{name}=")))
            .unwrap()
            .parse()
            .unwrap()
    };
    (get("ok"), get("refused"), get("errors"))
}

/// Every refresh came at least a lifetime (less the clocks' slack) after the one before: one
/// refresh per expiry, none for a token another process had just refreshed.
fn one_refresh_per_expiry(server: &RotatingServer, lifetime: Duration, run: Duration) {
    let at = server.refreshed_at();
    for pair in at.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= lifetime - Duration::from_millis(100),
            "two refreshes {gap:?} apart, tokens live {lifetime:?}"
        );
    }
    let most = run.as_millis() / lifetime.as_millis() + 1;
    assert!(
        (1..=most).contains(&(at.len() as u128)),
        "{} refreshes in {run:?}",
        at.len()
    );
}

/// "0 revocations, 0 authentication failures, refreshes equal to expiries": 8 processes × 200
/// work items on one grant whose tokens expire every second.
#[test]
fn eight_processes_on_one_grant_refresh_once_per_expiry() {
    const PROCESSES: u64 = 8;
    const ITEMS: u64 = 200;
    let redis = RedisServer::start();
    let server = RotatingServer::start(1);
    let tokens = server.seed();
    let start = Instant::now();
    let children: Vec<Child> = (0..PROCESSES)
        .map(|_| spawn(&server, &redis.url(), &tokens, now_ms() + 1000, ITEMS, 2000))
        .collect();
    let (mut ok, mut refused, mut errors) = (0, 0, 0);
    for c in children {
        let (o, r, e) = counts(c);
        (ok, refused, errors) = (ok + o, refused + r, errors + e);
    }
    let run = start.elapsed();
    let c = server.counts();
    assert_eq!((c.revocations, c.reuses, c.refused), (0, 0, 0), "{c:?}");
    assert_eq!(c.auth_failures, 0, "{c:?}");
    assert_eq!((ok, refused, errors), (PROCESSES * ITEMS, 0, 0));
    one_refresh_per_expiry(&server, Duration::from_secs(1), run);
    assert!(c.refreshes >= 2, "{c:?} in {run:?}");
}

/// The lease holder is killed (`SIGKILL`) while its refresh is at the (slow) token endpoint,
/// which then commits nothing: another process waits out the lease, takes it over and
/// refreshes; no revocation, nothing lost.
#[test]
fn a_lease_holder_killed_mid_refresh_is_taken_over() {
    let redis = RedisServer::start();
    let server = RotatingServer::start(3600);
    server.slow(5_000);
    let tokens = server.seed();
    let expired = now_ms() - 1;
    let mut holder = spawn(&server, &redis.url(), &tokens, expired, 1, 600);
    let end = Instant::now() + Duration::from_secs(20);
    while server.token_requests() == 0 {
        assert!(
            Instant::now() < end,
            "the holder never reached the token endpoint"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    holder.process.kill().unwrap();
    let _ = holder.process.wait();
    // The lease outlives its holder until it lapses.
    let probe = fleet_store(&redis.url());
    let key = fleet_support::key(&server.base());
    assert_eq!(
        probe.lease(&key, Duration::from_secs(1)).unwrap(),
        None,
        "the dead holder's lease is still there"
    );
    server.slow(0);
    let taking = Instant::now();
    let taker = spawn(&server, &redis.url(), &tokens, expired, 1, 600);
    assert_eq!(counts(taker), (1, 0, 0));
    // Within the lease's lifetime and a process's start, not the authorization's deadline.
    assert!(
        taking.elapsed() < Duration::from_secs(10),
        "{:?}",
        taking.elapsed()
    );
    let c = server.counts();
    assert_eq!(c.abandoned, 1, "{c:?}");
    assert_eq!((c.refreshes, c.revocations, c.reuses), (1, 0, 0), "{c:?}");
    let stored = probe.read(&key).unwrap().expect("the new tokens in Redis");
    assert_ne!(stored.credentials.tokens.refresh_token, Some(tokens.1));
}

/// Redis cut for a second and a half mid-run under 8 threads: the work items go on (the
/// process's single flight: no reuse, no failure) and refresh during the outage; once Redis is
/// back, the next operation on the key writes the refresh kept meanwhile there.
#[test]
fn redis_cut_mid_run_the_process_goes_on_and_redis_gets_its_refresh() {
    const THREADS: usize = 8;
    let redis = RedisServer::start();
    let proxy = Proxy::start(redis.port());
    let server = RotatingServer::start(1);
    let base = server.base();
    let (access, refresh) = server.seed();
    let store = Arc::new(fleet_store(&proxy.url()));
    let shared = SharedTokens::new(store.clone()).lease_ttl(Duration::from_secs(2));
    let http = http().token_store(shared);
    let v = vault(&base, &access, &refresh, now_ms() + 1000);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let mut auth = authorization(&base, http.clone(), Vault(v.0.clone()));
            let (base, stop) = (base.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut results = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    results.push(work_item(&base, &mut auth));
                    std::thread::sleep(Duration::from_millis(10));
                }
                (results, auth.bearer().map(str::to_owned))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    proxy.set(ProxyMode::Down);
    let refreshes_before = server.counts().refreshes;
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let mut last = Vec::new();
    for t in threads {
        let (results, bearer) = t.join().unwrap();
        assert!(results.len() > 100, "{} items", results.len());
        assert!(results.iter().all(|r| *r == Ok(200)), "{results:?}");
        last.push(bearer);
    }
    let refreshes_during = server.counts().refreshes - refreshes_before;
    let run = start.elapsed();
    let c = server.counts();
    assert_eq!(
        (c.revocations, c.reuses, c.auth_failures),
        (0, 0, 0),
        "{c:?}"
    );
    assert!(refreshes_during >= 1, "no refresh while Redis was cut");
    one_refresh_per_expiry(&server, Duration::from_secs(1), run);
    assert!(store.pending_writes() >= 1);
    // Redis is back: the next operation on the key writes what was kept, the tokens the
    // threads ended with.
    proxy.set(ProxyMode::Up);
    std::thread::sleep(Duration::from_millis(150));
    let key = fleet_support::key(&base);
    let _ = store.read(&key);
    assert_eq!(store.pending_writes(), 0);
    let direct = fleet_store(&redis.url()).read(&key).unwrap().unwrap();
    assert!(last
        .iter()
        .all(|b| b.as_deref() == Some(direct.credentials.tokens.access_token.as_str())));
}
