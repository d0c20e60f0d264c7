//! Task handles in a real `redis-server`: saved by the call observer of one process, loaded by
//! the process that resumes the work item, kept per server and authorization context.

mod store_support;
mod support;

use mcp_sansio::ContentBlock;
use mcp_sansio_blocking::{AddressPolicy, Client};
use mcp_sansio_demo_server::{DemoServer, Options};
use mcp_sansio_net::cache::Store;
use mcp_sansio_redis::{RedisStore, SaveHandles};
use mcp_sansio_test_support::adapter_tests::tasks::{config, Persist};
use store_support::{get_raw, pttl, store};
use support::RedisServer;

fn loopback_client() -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build()
}

/// Starts `slow_count` in a first process whose work item then fails (it declines the task's
/// input request), saving the handle under `name` through [`SaveHandles`].
fn start_task(server: &DemoServer, store: &RedisStore, name: &str) {
    let client = loopback_client();
    let cfg = config(&server.url());
    let mut session = client.connect(cfg.clone()).unwrap();
    let mut observer = SaveHandles::new(store, &cfg, name, Persist::default());
    let failed = session.call_tool_with("slow_count", br#"{"to":4}"#, &mut observer);
    assert!(
        failed.is_err(),
        "a declined input ends the call: {failed:?}"
    );
    assert!(
        observer.inner.bytes.is_some(),
        "the observer got the handle"
    );
}

/// "Clients SHOULD persist task IDs to durable storage so that polling can resume after a crash
/// or restart": a second process loads the handle its retried work item names from Redis and
/// resumes the task to its result; the tool ran once. The handle expires in Redis, and removing
/// it leaves nothing.
#[test]
fn a_second_process_resumes_the_task_from_the_saved_handle() {
    let redis = RedisServer::start();
    let server = DemoServer::start(Options::default()).unwrap();
    start_task(&server, &store(&redis.url()), "work-item-7");

    let second = store(&redis.url());
    let cfg = config(&server.url());
    let handle = second
        .load_task_handle(&cfg, "work-item-7")
        .expect("the saved handle");
    let key = RedisStore::task_handle_key(&cfg, "work-item-7");
    assert!(
        pttl(&redis.url(), key.as_bytes()) > 0,
        "it expires in Redis"
    );
    let client = loopback_client();
    let mut session = client.connect(cfg.clone()).unwrap();
    let mut persist = Persist {
        accept: Some(true),
        ..Persist::default()
    };
    let result = session.resume_task_with(&handle, &mut persist).unwrap();
    assert!(
        matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "1 2 3 4"),
        "{:?}",
        result.content
    );
    assert_eq!(server.tasks_created(), 1, "the tool ran once");
    session.close().unwrap();
    second.remove_task_handle(&cfg, "work-item-7");
    assert_eq!(second.load_task_handle(&cfg, "work-item-7"), None);
    assert_eq!(get_raw(&redis.url(), key.as_bytes()), None);
    server.shutdown();
}

/// "Servers MUST perform authentication and authorization checks on each task-related request";
/// a client does not present one context's task under another's credential. Another context
/// (a bearer token) finds nothing under the same name; a handle of another server or context
/// placed under a context's key (a whole frame, a whole handle) is refused by
/// `TaskHandle::check` and deleted; bytes that are no handle are deleted.
#[test]
fn a_handle_is_found_only_in_its_server_and_context() {
    let redis = RedisServer::start();
    let server = DemoServer::start(Options::default()).unwrap();
    let s = store(&redis.url());
    start_task(&server, &s, "item");
    let cfg = config(&server.url());
    let other = cfg.clone().with_bearer_token("another-tenant");
    assert_eq!(s.load_task_handle(&other, "item"), None);
    let handle = s.load_task_handle(&cfg, "item").expect("still there");

    // The first context's handle, framed whole under the other context's key.
    let other_key = RedisStore::task_handle_key(&other, "item");
    s.put_for(
        other_key.as_bytes(),
        handle.to_bytes(),
        std::time::Duration::from_secs(60),
    );
    assert!(
        s.get(other_key.as_bytes()).is_some(),
        "the frame reads back"
    );
    assert_eq!(
        s.load_task_handle(&other, "item"),
        None,
        "the handle does not"
    );
    assert_eq!(get_raw(&redis.url(), other_key.as_bytes()), None, "deleted");

    // Bytes that are no handle.
    let key = RedisStore::task_handle_key(&cfg, "item");
    s.put_for(
        key.as_bytes(),
        b"MCPTASK\0\x01garbage".to_vec(),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(s.load_task_handle(&cfg, "item"), None);
    assert_eq!(get_raw(&redis.url(), key.as_bytes()), None, "deleted");
    server.shutdown();
}
