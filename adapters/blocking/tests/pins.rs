//! Tool pins across work items on the blocking adapter (the session driver is the one every
//! adapter runs): a server changes a tool between two work items (the `x-mcp-header` name in
//! `weather`'s input schema), and the second work item gets a note under `warn`, a refusal under
//! `refuse` (its call never sent), nothing under `off`.

use std::sync::Arc;

use mcp_sansio::{Error, ErrorKind, Operation, PinPolicy};
use mcp_sansio_blocking::Client;
use mcp_sansio_net::cache::Store;
use mcp_sansio_test_support::adapter_tests::cache::{loopback, CacheServer, Script, TestStore};

fn client(policy: PinPolicy, store: Option<Arc<TestStore>>) -> Client {
    let b = Client::builder()
        .policy(loopback())
        .http1_only(true)
        .tool_pins(policy);
    match store {
        Some(s) => b.shared_store(s).build(),
        None => b.build(),
    }
}

fn config(server: &CacheServer, token: &str) -> mcp_sansio::Config {
    mcp_sansio::Config::new(&server.url())
        .unwrap()
        .with_bearer_token(token)
}

/// One work item: connect, list, call `weather`, close; the notes after the listing and after
/// the call.
fn work_item(client: &Client, config: mcp_sansio::Config) -> Vec<Vec<(String, Operation)>> {
    let mut s = client.connect(config).unwrap();
    s.list_tools().unwrap();
    let notes = |s: &mcp_sansio_blocking::Session| {
        s.tool_changes()
            .iter()
            .map(|c| (c.name.clone(), c.operation))
            .collect::<Vec<_>>()
    };
    let listed = notes(&s);
    s.call_tool("weather", br#"{"region":"eu"}"#).unwrap();
    let called = notes(&s);
    s.close().unwrap();
    vec![listed, called]
}

fn change_weather(server: &CacheServer) {
    server.script(|s| s.header = "Area");
}

/// `warn`: the second work item lists and calls the changed tool, each with a note naming it;
/// the first had none. The pin is not replaced: a third work item gets the notes again.
#[test]
fn warn_notes_a_tool_changed_between_work_items() {
    let server = CacheServer::start(Script::default());
    let client = client(PinPolicy::Warn, None);
    let none: Vec<Vec<(String, Operation)>> = vec![vec![], vec![]];
    assert_eq!(work_item(&client, config(&server, "t")), none);
    change_weather(&server);
    let noted = vec![
        vec![("weather".to_owned(), Operation::ListTools)],
        vec![("weather".to_owned(), Operation::CallTool)],
    ];
    assert_eq!(work_item(&client, config(&server, "t")), noted);
    assert_eq!(server.count("tools/call"), 2, "warn calls anyway");
    assert_eq!(work_item(&client, config(&server, "t")), noted);
}

/// `refuse`: the second work item's listing fails naming the tool (kind "server answered"),
/// and its call of the tool fails before it is sent: the server sees no `tools/call`. An
/// unchanged tool is still called. Forgetting the pins accepts the new definition.
#[test]
fn refuse_fails_the_listing_and_the_call_is_never_sent() {
    let server = CacheServer::start(Script::default());
    let client = client(PinPolicy::Refuse, None);
    work_item(&client, config(&server, "t"));
    assert_eq!(server.count("tools/call"), 1);
    change_weather(&server);

    let mut s = client.connect(config(&server, "t")).unwrap();
    let e = s.list_tools().unwrap_err();
    assert_eq!(
        e,
        Error::ToolChanged {
            name: "weather".into(),
            operation: Operation::ListTools,
            changed: 1
        }
    );
    assert_eq!(e.kind(), ErrorKind::ServerAnswered);
    let e = s.call_tool("weather", br#"{"region":"eu"}"#).unwrap_err();
    assert!(
        matches!(&e, Error::ToolChanged { name, operation: Operation::CallTool, .. } if name == "weather"),
        "{e:?}"
    );
    assert_eq!(
        server.count("tools/call"),
        1,
        "the refused call was not sent"
    );
    s.call_tool("echo", b"{}").unwrap();
    assert_eq!(server.count("tools/call"), 2);
    s.close().unwrap();

    client.forget_tool_pins(&config(&server, "t"));
    work_item(&client, config(&server, "t"));
    assert_eq!(server.count("tools/call"), 3);
}

/// `off` (the default): no note, no refusal, and nothing is stored.
#[test]
fn off_keeps_no_pins_and_says_nothing() {
    let server = CacheServer::start(Script::default());
    let store = TestStore::new(1 << 20);
    let client = client(PinPolicy::Off, Some(store.clone()));
    work_item(&client, config(&server, "t"));
    change_weather(&server);
    assert_eq!(
        work_item(&client, config(&server, "t")),
        vec![vec![], vec![]]
    );
    let pins = store
        .keys
        .lock()
        .unwrap()
        .iter()
        .filter(|k| k.starts_with(b"pins:"))
        .count();
    assert_eq!(pins, 0);
}

/// A pin of one authorization context never applies under another: another token lists the
/// changed tool as first seen (pinned, no refusal), while the context that pinned it is refused.
#[test]
fn contexts_are_isolated() {
    let server = CacheServer::start(Script::default());
    let client = client(PinPolicy::Refuse, None);
    work_item(&client, config(&server, "tenant-a"));
    change_weather(&server);
    assert_eq!(
        work_item(&client, config(&server, "tenant-b")),
        vec![vec![], vec![]]
    );
    let mut s = client.connect(config(&server, "tenant-a")).unwrap();
    assert!(matches!(s.list_tools(), Err(Error::ToolChanged { .. })));
}

/// Two clients over one shared store (two executors of a fleet) share their pins: what one
/// pinned, the other refuses when it changed. A poisoned stored pin set is a miss: removed, and
/// the tools are pinned again as now defined.
#[test]
fn a_shared_store_shares_pins_and_a_poisoned_set_is_a_miss() {
    let server = CacheServer::start(Script::default());
    let store = TestStore::new(1 << 20);
    let first = client(PinPolicy::Refuse, Some(store.clone()));
    let second = client(PinPolicy::Refuse, Some(store.clone()));
    work_item(&first, config(&server, "t"));
    change_weather(&server);
    let mut s = second.connect(config(&server, "t")).unwrap();
    assert!(matches!(s.list_tools(), Err(Error::ToolChanged { .. })));
    drop(s);

    let is_pins = |k: &[u8]| k.starts_with(b"pins:");
    store.tamper_all(is_pins, |mut v| {
        let at = v.len() / 2;
        v[at] ^= 0x40;
        v
    });
    let removed = *store.removed.lock().unwrap();
    assert_eq!(
        work_item(&second, config(&server, "t")),
        vec![vec![], vec![]]
    );
    assert!(
        *store.removed.lock().unwrap() > removed,
        "the poisoned set was removed"
    );
    let key = mcp_sansio_net::pins::PinBook::key(&config(&server, "t"));
    let stored = store.get(&key).expect("pinned again");
    assert_eq!(mcp_sansio::ToolPins::from_bytes(&stored).unwrap().len(), 2);
}

/// A tool that changes within a work item, after the listing: the call made with the listed
/// definition meets `-32020` (header mismatch). Under `refuse` the call is not sent again with
/// the new definition (one `tools/call` seen, the call fails naming the tool); under `warn` it
/// re-lists and is sent again, as without pins.
#[test]
fn refuse_does_not_resend_a_call_after_a_header_mismatch() {
    for (policy, calls) in [
        (PinPolicy::Refuse, 1),
        (PinPolicy::Warn, 2),
        (PinPolicy::Off, 2),
    ] {
        let server = CacheServer::start(Script::default());
        let client = client(policy, None);
        let mut s = client.connect(config(&server, "t")).unwrap();
        s.list_tools().unwrap();
        change_weather(&server);
        let r = s.call_tool("weather", br#"{"region":"eu"}"#);
        assert_eq!(server.count("tools/call"), calls, "{policy:?}");
        match policy {
            PinPolicy::Refuse => assert!(
                matches!(&r, Err(Error::ToolChanged { name, operation: Operation::CallTool, .. }) if name == "weather"),
                "{r:?}"
            ),
            _ => assert!(r.is_ok(), "{policy:?}: {r:?}"),
        }
    }
}

/// A listing served from the catalog cache is checked as one from the wire: another client of
/// the fleet (pins off) re-lists the changed tool into the shared cache; the pinning client's
/// next listing comes from that cache and is refused, and the cached entry removed.
#[test]
fn a_cached_listing_is_checked_too() {
    let server = CacheServer::start(Script::default());
    let store = TestStore::new(1 << 20);
    let build = |policy| {
        Client::builder()
            .policy(loopback())
            .http1_only(true)
            .catalog_cache(true)
            .shared_store(store.clone())
            .tool_pins(policy)
            .build()
    };
    let pinning = build(PinPolicy::Refuse);
    let other = build(PinPolicy::Off);
    let mut s = pinning.connect(config(&server, "t")).unwrap();
    s.list_tools().unwrap();
    s.close().unwrap();
    change_weather(&server);
    // The other client calls with the cached (old) definition: -32020, its re-listing removes
    // the entry; its next listing caches the changed tool.
    let mut s = other.connect(config(&server, "t")).unwrap();
    s.call_tool("weather", br#"{"region":"eu"}"#).unwrap();
    s.list_tools().unwrap();
    s.close().unwrap();
    assert_eq!(store.listings(), 1);
    let lists = server.count("tools/list");
    let mut s = pinning.connect(config(&server, "t")).unwrap();
    let e = s.list_tools().unwrap_err();
    assert!(
        matches!(&e, Error::ToolChanged { name, .. } if name == "weather"),
        "{e:?}"
    );
    assert_eq!(server.count("tools/list"), lists, "served from the cache");
    assert_eq!(store.listings(), 0, "the refused cached listing is removed");
}
