//! The caching members of a listing (2026-07-28, SEP-2549) and a catalog rebuilt from the pages
//! it kept, read again as the wire is read.

mod support;

use mcp_sansio::{Budget, Budgets, CacheHint, CacheScope, Catalog, Config, Error, Event};
use support::*;

/// Lists `pages` (results, the last without `nextCursor`), fed one message each.
fn list_pages(pages: &[&str]) -> Catalog {
    let mut h = modern_with(Config::new("http://127.0.0.1:9/mcp").unwrap(), Split::Whole);
    h.list();
    for page in pages {
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), page)),
        );
    }
    match h
        .take_events()
        .into_iter()
        .find(|e| !matches!(e, Event::ExchangeFinished { .. }))
    {
        Some(Event::ToolsListed(c)) => c,
        e => panic!("{e:?}"),
    }
}

const TOOL_A: &str = r#"{"name":"a","inputSchema":{"type":"object"}}"#;
const TOOL_B: &str = r#"{"name":"b","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}"#;

fn page(tools: &str, members: &str) -> String {
    format!(r#"{{"tools":[{tools}]{members}}}"#)
}

/// spec.md §3, caching: "`ListToolsResult` … has required `ttlMs` (integer ≥ 0, in
/// milliseconds) and required `cacheScope` (`"public"|"private"`)"; "`cacheScope` is the same
/// on all pages". A listing reports what its pages declared, the most restrictive of them.
#[test]
fn a_listing_reports_the_most_restrictive_cache_hint_of_its_pages() {
    let one = list_pages(&[&page(TOOL_A, r#","ttlMs":300000,"cacheScope":"public""#)]);
    assert_eq!(
        one.cache,
        CacheHint {
            ttl_ms: 300_000,
            scope: CacheScope::Public
        }
    );
    let p1 = page(
        TOOL_A,
        r#","nextCursor":"c","ttlMs":300000,"cacheScope":"public""#,
    );
    let p2 = page(TOOL_B, r#","ttlMs":1000,"cacheScope":"private""#);
    let two = list_pages(&[&p1, &p2]);
    assert_eq!(two.cache.ttl_ms, 1000);
    assert_eq!(two.cache.scope, CacheScope::Private);
    let p2 = page(TOOL_B, r#","cacheScope":"public","ttlMs":500000"#);
    let two = list_pages(&[&p1, &p2]);
    assert_eq!(
        two.cache,
        CacheHint {
            ttl_ms: 300_000,
            scope: CacheScope::Public
        }
    );
}

/// spec.md §3, caching: "`0` or absent (older servers) → stale immediately"; "negative → treat
/// as 0". No caching: a lifetime of 0.
#[test]
fn an_absent_or_negative_ttl_is_no_caching() {
    for members in [
        r#","cacheScope":"public""#,
        r#","ttlMs":-5,"cacheScope":"public""#,
        r#","ttlMs":0,"cacheScope":"public""#,
        r#","ttlMs":1.5e3,"cacheScope":"public""#,
    ] {
        let c = list_pages(&[&page(TOOL_A, members)]);
        assert_eq!(c.cache.ttl_ms, 0, "{members}");
    }
    // An absent scope is private: the narrowest reading.
    let c = list_pages(&[&page(TOOL_A, r#","ttlMs":5"#)]);
    assert_eq!(c.cache.scope, CacheScope::Private);
}

/// A catalog rebuilt from its kept pages, without a request, is the listed one: its tools,
/// refusals, header parameters and hint.
#[test]
fn a_catalog_rebuilt_from_its_pages_is_the_listed_one() {
    let p1 = page(
        &format!(r#"{TOOL_A},{{"name":"bad name","inputSchema":{{"type":"object"}}}}"#),
        r#","nextCursor":"c","ttlMs":60000,"cacheScope":"public""#,
    );
    let p2 = page(TOOL_B, r#","ttlMs":1000,"cacheScope":"public""#);
    let listed = list_pages(&[&p1, &p2]);
    let pages: Vec<Vec<u8>> = listed.result_pages().map(<[u8]>::to_vec).collect();
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1], p2.as_bytes());
    let rebuilt = Catalog::from_pages(
        pages.iter().map(Vec::as_slice),
        Default::default(),
        &Budgets::default(),
    )
    .unwrap();
    assert_eq!(rebuilt, listed);
    assert_eq!(rebuilt.cache, listed.cache);
    assert_eq!(rebuilt.refused, listed.refused);
    assert_eq!(
        rebuilt.tools[1].header_params(),
        listed.tools[1].header_params()
    );
}

/// Stored bytes bring nothing an answer on the wire could not: they are read by the same reader
/// under the same budgets, and the pages must chain as a listing does.
#[test]
fn stored_pages_are_read_again_as_the_wire_is() {
    let rule = Default::default();
    let budgets = Budgets::default();
    let read = |pages: &[&str], budgets: &Budgets| {
        Catalog::from_pages(pages.iter().map(|p| p.as_bytes()), rule, budgets)
    };
    // A tool the wire would refuse is refused.
    let tampered = page(r#"{"name":"x y","inputSchema":{"type":"object"}}"#, "");
    let c = read(&[&tampered], &budgets).unwrap();
    assert!(c.tools.is_empty());
    assert_eq!(c.refused.len(), 1);
    // Not a page, cut short, not UTF-8, no pages, a chain that does not end or goes on.
    let last = page(TOOL_A, "");
    let first = page(TOOL_A, r#","nextCursor":"c""#);
    for pages in [
        &["{"][..],
        &[&last[..last.len() - 1]],
        &[r#"{"tools":{}}"#],
        &[],
        &[&first],
        &[&last, &last],
        &[&first, &first, &last],
    ] {
        assert!(read(pages, &budgets).is_err(), "{pages:?}");
    }
    assert!(Catalog::from_pages([&b"{\"tools\":[\xff]}"[..]], rule, &budgets).is_err());
    // The page budget and the byte budget of each page.
    let mut small = Budgets::default();
    small.pages = 1;
    let second = page(TOOL_B, "");
    match read(&[&first, &second], &small) {
        Err(Error::Budget(b)) => assert_eq!(b.budget, Budget::Pages),
        other => panic!("{other:?}"),
    }
    let mut tiny = Budgets::default();
    tiny.response_bytes = 10;
    match read(&[&last], &tiny) {
        Err(Error::Budget(b)) => assert_eq!(b.budget, Budget::ResponseBytes),
        other => panic!("{other:?}"),
    }
}

/// The discover answer's caching members (spec.md §3, `DiscoverResult` extends
/// `CacheableResult`: "`resultType`, `ttlMs` and `cacheScope`: all required"; "`0` or absent
/// (older servers) → stale immediately"; "negative → treat as 0"), read as a listing's are and
/// reported by `Connection::discover_cache`. Nested members named alike are not the result's.
/// Whole, byte by byte and in 7-byte pieces.
#[test]
fn discover_reports_its_own_ttl_and_scope() {
    let discover = |members: &str| {
        format!(
            r#"{{"supportedVersions":["2026-07-28"],"capabilities":{{"tools":{{"ttlMs":9}}}},"resultType":"complete"{members}}}"#
        )
    };
    let cases: [(String, CacheHint); 7] = [
        (
            discover(r#","ttlMs":300000,"cacheScope":"public""#),
            CacheHint {
                ttl_ms: 300_000,
                scope: CacheScope::Public,
            },
        ),
        (
            discover(r#","ttlMs":5000,"cacheScope":"private""#),
            CacheHint {
                ttl_ms: 5000,
                scope: CacheScope::Private,
            },
        ),
        (discover(""), CacheHint::default()),
        (discover(r#","ttlMs":-5,"cacheScope":"public""#), public(0)),
        (discover(r#","ttlMs":1.5,"cacheScope":"public""#), public(0)),
        (
            discover(r#","ttlMs":7,"ttlMs":7,"cacheScope":"public","cacheScope":"public""#),
            CacheHint::default(),
        ),
        (
            discover(r#","\u0074tlMs":42,"cacheScope":"\u0070ublic""#),
            public(42),
        ),
    ];
    for (result, want) in &cases {
        for split in [Split::Whole, Split::Bytes, Split::Chunks(7)] {
            let mut h = Harness::new(Config::new("http://127.0.0.1:9/mcp").unwrap(), split);
            h.connect();
            assert_eq!(h.conn.discover_cache(), None, "nothing before the answer");
            let r = h.next();
            h.feed(
                r.exchange,
                &json_response(200, &result_msg(r.rpc_id(), result)),
            );
            assert!(
                matches!(h.single_event(), Event::Connected { .. }),
                "{result}"
            );
            assert_eq!(h.conn.discover_cache(), Some(*want), "{result} {split:?}");
        }
    }
    // Without a discover answer: a modern era hint, and a legacy session.
    assert_eq!(modern_hinted(Split::Whole).conn.discover_cache(), None);
    assert_eq!(
        legacy(Split::Whole, "2025-11-25").conn.discover_cache(),
        None
    );
}

fn public(ttl_ms: u64) -> CacheHint {
    CacheHint {
        ttl_ms,
        scope: CacheScope::Public,
    }
}
