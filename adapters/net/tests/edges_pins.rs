//! The tool pins' book at its edges, through the public API (`mcp_sansio_net::pins`): the byte
//! cap of a client's own pin store, the policy a book is made with, what `forget` removes, and
//! what the book's `Debug` shows. The oracle is the `pins` module's documentation, quoted at each
//! test.

use std::sync::Arc;

use mcp_sansio::{Catalog, Config, PinPolicy, ToolPin, ToolPins};
use mcp_sansio_net::cache::{MemoryStore, Store};
use mcp_sansio_net::pins::{PinBook, DEFAULT_MAX_BYTES};

/// "Default byte cap of a client's own pin store, when it has no shared store: 4 MiB": a store of
/// [`DEFAULT_MAX_BYTES`] keeps an entry (key and value) of 4 MiB, not one byte more.
#[test]
fn a_clients_own_pin_store_holds_four_mebibytes() {
    let store = MemoryStore::new(DEFAULT_MAX_BYTES);
    store.put(b"k1", vec![0; (4 << 20) - 1]);
    assert_eq!(store.get(b"k1"), None, "4 MiB + 1 byte");
    store.put(b"k2", vec![0; (4 << 20) - 2]);
    assert_eq!(store.bytes(), 4 << 20);
    assert!(store.get(b"k2").is_some(), "4 MiB");
}

/// A book keeps the policy it was made with ("the client's policy"), and shows it in `Debug`.
#[test]
fn a_book_keeps_and_shows_its_policy() {
    for policy in [PinPolicy::Off, PinPolicy::Warn, PinPolicy::Refuse] {
        let book = PinBook::new(Arc::new(MemoryStore::new(1 << 16)), policy);
        assert_eq!(book.policy(), policy);
        let shown = format!("{book:?}");
        assert!(shown.contains(&format!("policy: {policy:?}")), "{shown}");
    }
}

/// "Forgets the pins of `config`'s server and authorization context": a saved set reads back
/// until `forget`, then is gone; another server's set stays.
#[test]
fn forget_removes_the_pins_of_its_server_only() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new(1 << 16));
    let book = PinBook::new(store.clone(), PinPolicy::Refuse);
    let a = Config::new("https://mcp.example.com/a").unwrap();
    let b = Config::new("https://mcp.example.com/b").unwrap();
    let page = br#"{"tools":[{"name":"weather","inputSchema":{"type":"object"}}]}"#;
    let catalog = Catalog::from_pages([&page[..]], a.tool_names, &a.budgets).unwrap();
    let mut pins = ToolPins::new();
    assert!(pins.pin("weather", ToolPin::of(&catalog.tools[0])));
    for config in [&a, &b] {
        book.save(&PinBook::key(config), &pins);
        assert_eq!(book.load(&PinBook::key(config)).len(), 1);
    }
    book.forget(&a);
    assert!(book.load(&PinBook::key(&a)).is_empty());
    assert!(store.get(&PinBook::key(&a)).is_none());
    assert_eq!(book.load(&PinBook::key(&b)).len(), 1);
}
