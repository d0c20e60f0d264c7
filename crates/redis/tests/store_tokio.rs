//! The store under the tokio adapter: `Store` is synchronous and the session driver calls it on
//! the executor thread that drives the session. A store that never answers blocks that thread
//! at most one operation deadline at a time (then the backoff answers at once), so the other
//! tasks of a current-thread runtime keep running.

mod store_support;

use std::io::Read;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio_redis::RedisStore;
use mcp_sansio_test_support::adapter_tests::cache::{loopback, CacheServer, Script};
use store_support::{config, options};

/// The deadline of one store operation (the default).
const OP: Duration = Duration::from_millis(250);
/// Scheduling slack on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(400);

/// A fake Redis that reads and never answers; its port.
fn silent_redis() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    port
}

/// Three work items on a current-thread runtime with a store that never answers: each succeeds,
/// and a ticker task on the same thread never waits longer than one store deadline (and
/// scheduling slack) between two ticks.
#[tokio::test(flavor = "current_thread")]
async fn a_silent_store_blocks_the_executor_at_most_one_deadline_at_a_time() {
    let port = silent_redis();
    let store = RedisStore::with_options(&format!("redis://127.0.0.1:{port}/"), options()).unwrap();
    let server = CacheServer::start(Script::default());
    let client = mcp_sansio_tokio::Client::builder()
        .policy(loopback())
        .http1_only(true)
        .catalog_cache(true)
        .shared_store(Arc::new(store))
        .build();
    let stop = Arc::new(AtomicBool::new(false));
    let gap = Arc::new(Mutex::new(Duration::ZERO));
    let ticker = {
        let (stop, gap) = (stop.clone(), gap.clone());
        tokio::spawn(async move {
            let mut last = Instant::now();
            while !stop.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let now = Instant::now();
                let mut g = gap.lock().unwrap();
                *g = (*g).max(now - last);
                last = now;
            }
        })
    };
    for _ in 0..3 {
        let mut s = client.connect(config(&server, "tok")).await.unwrap();
        let c = s.list_tools().await.unwrap();
        assert_eq!(c.tools.len(), 2);
        s.close().await.unwrap();
        // Past the backoff, so that the next item asks the store again.
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    stop.store(true, Ordering::SeqCst);
    ticker.await.unwrap();
    let longest = *gap.lock().unwrap();
    assert!(longest < OP + SLACK, "the executor was blocked {longest:?}");
    assert!(longest >= OP, "the store was asked: {longest:?}");
}
