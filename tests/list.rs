//! Listing tools: catalogs from hostile pages.

mod support;

use mcp_sansio::HeaderRefusal;
use mcp_sansio::ProtocolError;
use mcp_sansio::RefusalReason;
use mcp_sansio::{Budgets, Config, Event};
use support::*;

/// Lists one page, fed whole, one byte at a time (small pages) and in 7-byte pieces, asserting
/// the same catalog every time.
fn list_one_page(page: &str, budgets: Option<Budgets>) -> mcp_sansio::Catalog {
    let whole = list_one_page_split(page, budgets.clone(), Split::Whole);
    let splits: &[Split] = if page.len() < 64 * 1024 {
        &[Split::Bytes, Split::Chunks(7)]
    } else {
        &[]
    };
    for &split in splits {
        assert_eq!(
            list_one_page_split(page, budgets.clone(), split),
            whole,
            "{split:?}"
        );
    }
    whole
}

fn list_one_page_split(page: &str, budgets: Option<Budgets>, split: Split) -> mcp_sansio::Catalog {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    if let Some(b) = budgets {
        config = config.with_budgets(b);
    }
    list_with(config, page, split)
}

/// Connects with `config` and lists one page.
fn list_with(config: Config, page: &str, split: Split) -> mcp_sansio::Catalog {
    let mut h = modern_with(config, split);
    h.list();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), page)),
    );
    match h.single_event() {
        Event::ToolsListed(c) => c,
        e => panic!("{e:?}"),
    }
}

#[test]
fn every_refusal_reason_is_recorded_not_fatal() {
    let long = "a".repeat(129);
    let page = format!(
        r#"{{"tools":[
        {{"name":"ok","description":"fine","inputSchema":{{"type":"object"}},"title":"T","annotations":{{"readOnlyHint":true}},"icons":[],"_meta":{{}},"extra":1}},
        {{"description":"no name","inputSchema":{{"type":"object"}}}},
        {{"name":"","inputSchema":{{"type":"object"}}}},
        {{"name":"{long}","inputSchema":{{"type":"object"}}}},
        {{"name":"has space","inputSchema":{{"type":"object"}}}},
        {{"name":7,"inputSchema":{{"type":"object"}}}},
        {{"name":"ok","inputSchema":{{"type":"object"}}}},
        {{"name":"noschema"}},
        {{"name":"arrayschema","inputSchema":[]}},
        {{"name":"notobject","inputSchema":{{"type":"string"}}}},
        {{"name":"notype","inputSchema":{{"properties":{{}}}}}},
        {{"name":"baddesc","description":5,"inputSchema":{{"type":"object"}}}},
        "not an object",
        {{"name":"last.one-ok_2","inputSchema":{{"type":"object"}}}}
    ],"ttlMs":1000,"cacheScope":"public"}}"#
    );
    let c = list_one_page(&page, None);
    let names: Vec<&str> = c.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["ok", "last.one-ok_2"]);
    let refused: Vec<(usize, Option<&str>)> = c
        .refused
        .iter()
        .map(|r| (r.index, r.name.as_deref()))
        .collect();
    assert_eq!(
        refused,
        vec![
            (1, None),
            (2, Some("")),
            (3, Some(long.as_str())),
            (4, Some("has space")),
            (5, None),
            (6, Some("ok")),
            (7, Some("noschema")),
            (8, Some("arrayschema")),
            (9, Some("notobject")),
            (10, Some("notype")),
            (11, Some("baddesc")),
            (12, None),
        ]
    );
    assert_eq!(c.refused[5].reason, RefusalReason::DuplicateName);
    assert_eq!(c.refused[6].reason, RefusalReason::SchemaMissing);
    assert_eq!(c.tools[0].description(), Some("fine"));
}

#[test]
fn schemas_are_kept_byte_for_byte() {
    let schema = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"p":{"type":"number","minimum":1.50}},"properties":{"x":{"$ref":"#/$defs/p"}},"unevaluatedProperties":false}"##;
    let page = format!(r#"{{"tools":[{{"name":"t","inputSchema":{schema}}}]}}"#);
    let c = list_one_page(&page, None);
    assert_eq!(c.tools[0].input_schema(), schema);
}

#[test]
fn an_empty_listing_is_a_valid_empty_catalog() {
    let c = list_one_page(r#"{"tools":[]}"#, None);
    assert!(c.tools.is_empty() && c.refused.is_empty());
    assert_eq!(c.pages, 1);
}

#[test]
fn refusals_past_the_first_thousand_are_counted_not_kept() {
    let extra = 5;
    for escaped in [0, 1, 2] {
        // Refused entries, the good tool between them, more refused. An escaped member name sends
        // the page to the serde reading, which must keep and count the same: before the entries
        // (1), or after them (2), once the one pass has read them all and must forget them.
        let mut entries =
            vec![r#"{"name":"bad name"}"#.to_owned(); mcp_sansio::limits::MAX_REFUSALS_KEPT - 1];
        entries.push(r#"{"name":"good","inputSchema":{"type":"object"}}"#.to_owned());
        entries.extend(vec!["{}".to_owned(); 1 + extra]);
        let tools = entries.join(",");
        let page = match escaped {
            0 => format!(r#"{{"tools":[{tools}]}}"#),
            1 => format!(r#"{{"t\u006fols":[{tools}]}}"#),
            _ => format!(r#"{{"tools":[{tools}],"next\u0043ursor":null}}"#),
        };
        let c = list_one_page_split(&page, None, Split::Whole);
        assert_eq!(c.tools.len(), 1, "{escaped}");
        assert_eq!(c.tools[0].name(), "good");
        assert_eq!(
            c.refused.len(),
            mcp_sansio::limits::MAX_REFUSALS_KEPT,
            "{escaped}"
        );
        assert_eq!(c.refused_beyond, extra, "{escaped}");
        assert_eq!(
            c.refused_count(),
            mcp_sansio::limits::MAX_REFUSALS_KEPT + extra
        );
        // The kept ones are the first, with their places in the listing.
        let last = c.refused.last().unwrap();
        assert_eq!(last.index, mcp_sansio::limits::MAX_REFUSALS_KEPT);
        assert_eq!(last.reason, RefusalReason::NameMissing);
        assert_eq!(c.refused[0].name.as_deref(), Some("bad name"));
        assert_eq!(list_one_page_split(&page, None, Split::Chunks(7)), c);
    }
}

#[test]
fn a_hundred_thousand_tiny_tools_within_budget() {
    let tools: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#))
        .collect();
    let page = format!(r#"{{"tools":[{}]}}"#, tools.join(","));
    let mut b = Budgets::default();
    b.response_bytes = 16 * 1024 * 1024;
    let c = list_one_page(&page, Some(b));
    assert_eq!(c.tools.len(), 100_000);
    assert!(c.refused.is_empty());
}

#[test]
fn invalid_x_mcp_header_drops_the_tool() {
    let page = r#"{"tools":[
        {"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
        {"name":"num","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}},
        {"name":"dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}}
    ]}"#;
    let c = list_one_page(page, None);
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.tools[0].header_params().len(), 1);
    let refused: Vec<&str> = c
        .refused
        .iter()
        .map(|r| r.name.as_deref().unwrap())
        .collect();
    assert_eq!(refused, ["num", "dup"]);
    assert!(c
        .refused
        .iter()
        .all(|r| matches!(r.reason, RefusalReason::Header(_))));
}

#[test]
fn known_tools_send_param_headers_without_listing() {
    let page = r#"{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"Count"},"opt":{"type":"boolean","x-mcp-header":"Opt"}}}}]}"#;
    let tool = list_one_page(page, None).tools.remove(0);
    // A fresh connection, with a modern hint: the first request is the call itself.
    let config = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_era_hint(Some(mcp_sansio::EraHint {
            era: mcp_sansio::Era::Modern,
            version: "2026-07-28".into(),
        }));
    let mut h = Harness::new(config, Split::Whole);
    h.connect();
    h.take_events();
    h.conn
        .call_known_tool(h.now, &tool, br#"{"region":"eu-west 1","n":42,"opt":null}"#);
    h.drain();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/call");
    assert_eq!(r.header("Mcp-Name"), Some("geo"));
    assert_eq!(r.header("Mcp-Param-Region"), Some("eu-west 1"));
    assert_eq!(r.header("Mcp-Param-Count"), Some("42"));
    assert_eq!(r.header("Mcp-Param-Opt"), None, "null is omitted");
    // A value of the wrong type is refused before anything is sent.
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
    );
    h.take_events();
    h.conn.call_known_tool(h.now, &tool, br#"{"n":"many"}"#);
    h.drain();
    assert!(matches!(
        h.single_event(),
        Event::Failed {
            error: mcp_sansio::Error::Config(_),
            ..
        }
    ));
    assert_eq!(h.sent.len(), 1);
}

#[test]
fn calls_by_name_send_the_param_headers_of_the_last_listing() {
    let mut h = modern(Split::Whole);
    h.take_events();
    h.list();
    let r = h.next();
    assert_eq!(r.rpc_method(), "tools/list");
    let page = r#"{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},{"name":"plain","inputSchema":{"type":"object"}}]}"#;
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), page)),
    );
    assert!(matches!(h.single_event(), Event::ToolsListed(_)));
    h.call("geo", r#"{"region":"eu"}"#);
    let r = h.next();
    assert_eq!(r.header("Mcp-Param-Region"), Some("eu"));
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
    );
    h.take_events();
    // A tool the listing did not annotate, and one it did not list, get no such header.
    for name in ["plain", "other"] {
        h.call(name, r#"{"region":"eu"}"#);
        let r = h.next();
        assert_eq!(r.header("Mcp-Name"), Some(name));
        assert_eq!(r.header("Mcp-Param-Region"), None);
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), CALL_OK)),
        );
        h.take_events();
    }
}

#[test]
fn non_ascii_tool_names_are_sentinel_encoded() {
    let mut h = modern(Split::Whole);
    h.call("日本", "{}");
    let r = h.next();
    assert_eq!(r.header("Mcp-Name"), Some("=?base64?5pel5pys?="));
}

#[test]
fn header_mismatch_lists_once_and_retries_with_the_tool_headers() {
    for split in SPLITS {
        let mut h = modern(split);
        h.call("geo", r#"{"region":"eu"}"#);
        let r = h.next();
        assert_eq!(
            r.header("Mcp-Param-Region"),
            None,
            "the schema is not known yet"
        );
        h.feed(
            r.exchange,
            &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
        );
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/list");
        let page = r#"{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}"#;
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), page)),
        );
        let r = h.next();
        assert_eq!(r.rpc_method(), "tools/call");
        assert_eq!(r.header("Mcp-Param-Region"), Some("eu"));
        // A second mismatch is final.
        h.feed(
            r.exchange,
            &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
        );
        match h.single_event() {
            Event::Failed {
                operation,
                error: mcp_sansio::Error::Rpc(rpc),
            } => {
                assert_eq!(operation, mcp_sansio::Operation::CallTool);
                assert_eq!(rpc.code, -32020);
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(
            h.sent
                .iter()
                .filter(|r| r.rpc_method() == "tools/list")
                .count(),
            1
        );
    }
}

/// 2026-07-28 (SEP-2243): a `-32020` means a standard or `Mcp-Param-*` header did not match the
/// body, i.e. the headers the client took from the tool's `x-mcp-header` schema are out of date.
/// The connection says so for the call ([`Connection::catalog_stale`]), whether the call then
/// succeeds after its re-listing or fails; a call that met none (the opposite case), and the
/// next call after a stale one, say nothing.
#[test]
fn a_call_that_meets_a_header_mismatch_says_its_catalog_is_stale() {
    let mismatch = |r: &SentRequest| {
        json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None))
    };
    let page =
        |r: &SentRequest| json_response(200, &result_msg(r.rpc_id(), &tools_page(&["echo"], None)));
    let ok = |r: &SentRequest| json_response(200, &result_msg(r.rpc_id(), CALL_OK));
    let mut h = modern(Split::Whole);
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &ok(&r));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert!(!h.conn.catalog_stale(), "a call without a mismatch");

    // Mismatch, re-listing, the call again: it succeeds, and the catalog it used was stale.
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &mismatch(&r));
    let r = h.next();
    h.feed(r.exchange, &page(&r));
    let r = h.next();
    h.feed(r.exchange, &ok(&r));
    assert!(matches!(h.single_event(), Event::CallFinished(_)));
    assert!(h.conn.catalog_stale());

    // The next call starts afresh.
    h.call("echo", "{}");
    assert!(!h.conn.catalog_stale());
    let r = h.next();
    h.feed(r.exchange, &ok(&r));
    h.take_events();
    assert!(!h.conn.catalog_stale());

    // A call whose mismatch is final (after its one re-listing) is stale too.
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &mismatch(&r));
    let r = h.next();
    h.feed(r.exchange, &page(&r));
    let r = h.next();
    h.feed(r.exchange, &mismatch(&r));
    assert!(matches!(h.single_event(), Event::Failed { .. }));
    assert!(h.conn.catalog_stale());

    // A listing's `-32020` is not a call's.
    h.call("echo", "{}");
    let r = h.next();
    h.feed(r.exchange, &ok(&r));
    h.take_events();
    h.list();
    let r = h.next();
    h.feed(r.exchange, &mismatch(&r));
    h.take_events();
    assert!(!h.conn.catalog_stale());
}

#[test]
fn header_mismatch_for_an_unlisted_tool_fails_with_the_mismatch() {
    let mut h = modern(Split::Whole);
    h.call("ghost", "{}");
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(400, &error_msg(r.rpc_id(), -32020, "Header mismatch", None)),
    );
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), &tools_page(&["other"], None))),
    );
    match h.single_event() {
        Event::Failed {
            error: mcp_sansio::Error::Rpc(rpc),
            ..
        } => assert_eq!(rpc.code, -32020),
        e => panic!("{e:?}"),
    }
}

#[test]
fn the_name_rule_is_configurable() {
    let page = r#"{"tools":[{"name":"has space","inputSchema":{"type":"object"}},{"name":"ctl\u0001","inputSchema":{"type":"object"}}]}"#;
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.tool_names = mcp_sansio::ToolNameRule::Lenient;
    let c = list_with(config, page, Split::Bytes);
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.tools[0].name(), "has space");
    assert_eq!(c.refused.len(), 1);
    // Under the default rule, both are refused.
    let c = list_one_page(page, None);
    assert!(c.tools.is_empty());
    assert_eq!(c.refused.len(), 2);
}

#[test]
fn escapes_and_hostile_values_in_names_and_schemas() {
    let page = r#"{"tools":[
        {"name":"n\u0061me","inputSchema":{"type":"object"}},
        {"name":{"a":[1,{"b":null}]},"inputSchema":{"type":"object"}},
        {"name":["x"],"inputSchema":{"type":"object"}},
        {"name":null,"inputSchema":{"type":"object"}},
        {"name":"big","inputSchema":{"type":"object","default":1e400}},
        {"name":"escaped","inputSchema":{"type":"obj\u0065ct"}},
        {"name":"twice","inputSchema":{"type":"object","type":"object"}},
        {"name":"dupkey","inputSchema":{"type":"object","properties":{"a":{},"a":{}}}},
        {"name":"deep","inputSchema":{"type":"object","items":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}},
        {"name":"hdr","inputSchema":{"properties":{"b":{"x-mcp-header":"B","type":"string"},"a":{"type":"integer","x-mcp-header":"A"}},"typ\u0065":"object"}},
        {"name":"bad.hdr","inputSchema":{"type":"object","items":{"x-mcp-header":"A","type":"string"}}},
        {"name":"wide","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}}
    ]}"#;
    let c = list_one_page(page, None);
    let names: Vec<&str> = c.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["name", "big", "hdr"]);
    // A number beyond f64 is kept byte for byte, not refused as malformed.
    assert_eq!(
        c.tools[1].input_schema(),
        r#"{"type":"object","default":1e400}"#
    );
    let hdr = c.tools[2].header_params();
    let got: Vec<(&[String], &str)> = hdr.iter().map(|p| (&p.path[..], p.name.as_str())).collect();
    assert_eq!(
        got,
        [(&["a".to_owned()][..], "A"), (&["b".to_owned()][..], "B")]
    );
    let refused: Vec<(usize, Option<&str>, String)> = c
        .refused
        .iter()
        .map(|r| (r.index, r.name.as_deref(), r.reason.to_string()))
        .collect();
    let not_object = "inputSchema.type is not \"object\"";
    let expected: Vec<(usize, Option<&str>, &str)> = vec![
        (1, None, "name is not a string"),
        (2, None, "name is not a string"),
        (3, None, "name is missing"),
        (5, Some("escaped"), not_object),
        (6, Some("twice"), not_object),
        (7, Some("dupkey"), "invalid x-mcp-header: inputSchema is not valid JSON: duplicate key \"a\" at line 1 column 45"),
        (8, Some("deep"), "invalid x-mcp-header: inputSchema nests deeper than 64 levels"),
        (10, Some("bad.hdr"), "invalid x-mcp-header: x-mcp-header \"A\" is not reached only through `properties`"),
        (11, Some("wide"), "invalid x-mcp-header: x-mcp-header \"a\" on property \"b\" duplicates another (case-insensitively)"),
    ];
    let expected: Vec<(usize, Option<&str>, String)> = expected
        .into_iter()
        .map(|(i, n, r)| (i, n, r.to_owned()))
        .collect();
    assert_eq!(refused, expected);
    let kinds: Vec<&RefusalReason> = c.refused.iter().map(|r| &r.reason).collect();
    assert!(matches!(
        kinds[..],
        [
            RefusalReason::NameNotString,
            RefusalReason::NameNotString,
            RefusalReason::NameMissing,
            RefusalReason::SchemaTypeNotObject,
            RefusalReason::SchemaTypeNotObject,
            RefusalReason::Header(HeaderRefusal::InvalidJson { .. }),
            RefusalReason::Header(HeaderRefusal::TooDeep),
            RefusalReason::Header(HeaderRefusal::NotThroughProperties { .. }),
            RefusalReason::Header(HeaderRefusal::Duplicate { .. }),
        ]
    ));
}

// ---------------------------------------------------------------------------------------------
// The crate's reading (its one pass, and the serde reading it leaves hard entries to) against
// a reference written from the specification (tests/list/oracle.rs).

// The reference lives in this test's own folder, which a crate root does not search for `mod`.
#[path = "list/oracle.rs"]
mod oracle;

/// What a listing of one or two pages came to: the catalog as plain values, or the failure.
#[derive(Debug, PartialEq)]
enum Listed {
    Catalog {
        /// Name, description, schema, header parameters (sorted by path).
        tools: Vec<oracle::Tool>,
        /// Index, name, reasons (the crate's one, normalised; the reference's possible ones).
        refused: Vec<oracle::Refused>,
        pages: u32,
        /// `ttlMs` and whether the scope is public (the most restrictive over the pages).
        cache: (u64, bool),
    },
    /// The message was not JSON-RPC as read.
    Malformed,
    /// The page was unusable (its reason, normalised).
    Invalid(String),
    /// The response answered another request.
    WrongId,
}

/// Whether the crate's listing `now` is one the reference `want` allows: the same tools, the
/// same entries refused, each for one of the reasons the reference gives.
fn agree(now: &Listed, want: &Listed) -> bool {
    match (now, want) {
        (
            Listed::Catalog {
                tools,
                refused,
                pages,
                cache,
            },
            Listed::Catalog {
                tools: t,
                refused: r,
                pages: p,
                cache: c,
            },
        ) => {
            tools == t
                && pages == p
                && cache == c
                && refused.len() == r.len()
                && refused.iter().zip(r).all(|(now, want)| {
                    now.0 == want.0 && now.1 == want.1 && want.2.contains(&now.2[0])
                })
        }
        _ => now == want,
    }
}

/// The second page, sent when the first has a cursor.
const SECOND: &str =
    r#"{"tools":[{"name":"t0","inputSchema":{"type":"object"}},{"name":"z","inputSchema":{}}]}"#;

/// `{"jsonrpc":"2.0","id":ID,"result":...}` as generated, with the request's id put in.
fn with_id(body: &str, id: u64) -> String {
    body.replace("\"ID\"", &id.to_string())
}

/// The crate's reading, through a `Connection`, the body fed in `split`.
fn listed_now(body: &str, split: Split) -> Listed {
    let mut h = Harness::new(Config::new("http://127.0.0.1:9/mcp").unwrap(), split);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    h.take_events();
    h.list();
    let r = h.next();
    h.feed(r.exchange, &json_response(200, &with_id(body, r.rpc_id())));
    let mut events = h.take_events();
    if events.is_empty() && h.has_outstanding() {
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), SECOND)),
        );
        events = h.take_events();
    }
    let event = events
        .into_iter()
        .find(|e| !matches!(e, Event::ExchangeFinished { .. }))
        .expect("an outcome");
    match event {
        Event::ToolsListed(c) => Listed::Catalog {
            tools: c
                .tools
                .iter()
                .map(|t| {
                    let mut params = t.header_params().to_vec();
                    params.sort_by(|a, b| a.path.cmp(&b.path));
                    (
                        t.name().to_owned(),
                        t.description().map(str::to_owned),
                        t.input_schema().to_owned(),
                        params,
                        oracle::Definition {
                            title: t.title().map(str::to_owned),
                            annotations: t.annotations().map(str::to_owned),
                            output_schema: t.output_schema().map(str::to_owned),
                            icons: t.icons().map(|i| i.raw().to_owned()).collect(),
                            meta: t.meta().map(str::to_owned),
                            execution: t.execution().map(str::to_owned),
                            notes: t.notes().iter().map(ToString::to_string).collect(),
                        },
                    )
                })
                .collect(),
            refused: c
                .refused
                .iter()
                .map(|r| {
                    (
                        r.index,
                        r.name.clone(),
                        vec![oracle::reason(&r.reason.to_string())],
                    )
                })
                .collect(),
            pages: c.pages,
            cache: (
                c.cache.ttl_ms,
                c.cache.scope == mcp_sansio::CacheScope::Public,
            ),
        },
        Event::Failed {
            error: mcp_sansio::Error::Protocol(ProtocolError::MalformedMessage { .. }),
            ..
        } => Listed::Malformed,
        Event::Failed {
            error: mcp_sansio::Error::InvalidAnswer { reason, .. },
            ..
        } => Listed::Invalid(oracle::page_reason(&reason)),
        Event::Failed {
            error: mcp_sansio::Error::Protocol(ProtocolError::WrongId { .. }),
            ..
        } => Listed::WrongId,
        other => panic!("unexpected {other:?}"),
    }
}

/// The reference reading of the same body.
fn listed_before(body: &str) -> Listed {
    let mut catalog = oracle::Catalog::default();
    let mut entries = 0;
    let mut read = oracle::list_page(&with_id(body, 1), 1, &mut catalog, &mut entries);
    if let oracle::Read::Page(Some(_)) = read {
        read = oracle::list_page(&result_msg(2, SECOND), 2, &mut catalog, &mut entries);
    }
    match read {
        oracle::Read::Page(_) => Listed::Catalog {
            tools: catalog.tools,
            refused: catalog.refused,
            pages: catalog.pages,
            cache: catalog.cache.unwrap_or_default(),
        },
        oracle::Read::Malformed => Listed::Malformed,
        oracle::Read::WrongId => Listed::WrongId,
        oracle::Read::Invalid(reason) => Listed::Invalid(reason),
    }
}

mod generated {
    use proptest::prelude::*;

    /// Keys that matter to a schema, with escaped spellings of some and near misses.
    const KEYS: &[&str] = &[
        r#""properties""#,
        r#""type""#,
        r#""x-mcp-header""#,
        r#""x-mcp-h\u0065ader""#,
        r#""items""#,
        r#""a""#,
        r#""\u0061""#,
        r#""b""#,
        r#""B""#,
        r#""default""#,
        r#""enum""#,
        r#""$defs""#,
    ];

    /// Leaves of a schema: `type` names, header names good and bad, other scalars.
    const LEAVES: &[&str] = &[
        r#""string""#,
        r#""integer""#,
        r#""object""#,
        r#""obj\u0065ct""#,
        r#""Region""#,
        r#""region""#,
        r#""Re gion""#,
        r#""""#,
        r#""\ud800""#,
        r#""esc\n\"aped\"""#,
        "1",
        "-3.5e-7",
        "true",
        "null",
        "[]",
        "{}",
    ];

    /// A schema value; `HUGE` stands for a number that `huge` fills in.
    fn value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            8 => prop::sample::select(LEAVES).prop_map(str::to_owned),
            1 => Just("HUGE".to_owned()),
        ];
        leaf.prop_recursive(5, 40, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(KEYS), inner.clone()), 0..5).prop_map(
                    |entries| {
                        let body: Vec<String> =
                            entries.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                        format!("{{{}}}", body.join(","))
                    }
                ),
                // A property map, some properties annotated.
                prop::collection::vec(
                    prop_oneof![
                        inner,
                        (prop::sample::select(&["H", "h"][..]), 0u32..6).prop_map(|(p, h)| {
                            format!(r#"{{"type":"string","x-mcp-header":"{p}{h}"}}"#)
                        }),
                    ],
                    0..4
                )
                .prop_map(|subs| {
                    let body: Vec<String> = subs
                        .iter()
                        .enumerate()
                        .map(|(i, v)| format!(r#""p{i}":{v}"#))
                        .collect();
                    format!(r#"{{"type":"object","properties":{{{}}}}}"#, body.join(","))
                }),
            ]
        })
    }

    /// An `inputSchema`: usually an object with `"type":"object"`, sometimes anything, sometimes
    /// nested past the depth limit.
    pub(super) fn schema() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => value().prop_map(|v| format!(r#"{{"type":"object","v":{v}}}"#)),
            2 => value(),
            1 => (value(), 60usize..140).prop_map(|(v, n)| {
                format!(r#"{{"type":"object","d":{}{v}{}}}"#, "[".repeat(n), "]".repeat(n))
            }),
        ]
    }

    /// Members of the rest of a tool's definition, one to three of them: of their schema types
    /// or not, escaped, null, repeated; icons with allowed and other sources.
    fn definition() -> impl Strategy<Value = String> {
        let icon = prop::sample::select(
            &[
                r#"{"src":"https://x.example/i.png","mimeType":"image/png","sizes":["48x48"]}"#,
                r#"{"src":"data:image/png;base64,AAAA","theme":"dark"}"#,
                r#"{"src":"HTTPS://X.example/a.svg"}"#,
                r#"{"src":"http://x.example/i.png"}"#,
                r#"{"src":"javascript:alert(1)"}"#,
                r#"{"src":"file:///etc/passwd"}"#,
                r#"{"src":"no-scheme"}"#,
                r#"{"src":"dat\u0061:x"}"#,
                r#"{"s\u0072c":"https://e.example/"}"#,
                r#"{"src":"https://a/","src":"https://b/"}"#,
                r#"{"src":5}"#,
                r#"{"src":"\ud800:x"}"#,
                r#"{"mimeType":"image/png"}"#,
                r#"{"\udc00":1,"src":"https://a/"}"#,
                r#""https://not.an.object/""#,
                "null",
            ][..],
        );
        let icons = prop::collection::vec(icon, 0..5)
            .prop_map(|icons| format!(r#""icons":[{}]"#, icons.join(",")));
        let member = prop_oneof![
            1 => Just(r#""title":"Weather""#.to_owned()),
            1 => Just(r#""title":"W\u00e9ather \"now\"""#.to_owned()),
            1 => Just(r#""title":"\ud800""#.to_owned()),
            1 => Just(r#""title":7"#.to_owned()),
            1 => Just(r#""title":null"#.to_owned()),
            1 => Just(r#""t\u0069tle":"escaped key""#.to_owned()),
            1 => Just(r#""annotations":{"readOnlyHint":true,"destructiveHint":false,"title":"A"}"#.to_owned()),
            1 => Just(r#""annotations":[true]"#.to_owned()),
            1 => Just(r#""annotations":null"#.to_owned()),
            1 => Just(r##""outputSchema":{"type":"object","properties":{"r":{"$ref":"#/$defs/x"}}}"##.to_owned()),
            1 => Just(r#""outputSchema":true"#.to_owned()),
            1 => Just(r#""outputSchema":"object""#.to_owned()),
            3 => icons,
            1 => Just(r#""icons":{"src":"https://a/"}"#.to_owned()),
            1 => Just(r#""_meta":{"k":[1,2,{"n":null}]}"#.to_owned()),
            1 => Just(r#""_meta":1"#.to_owned()),
            1 => Just(r#""_m\u0065ta":{}"#.to_owned()),
            1 => Just(r#""execution":{"taskSupport":"required"}"#.to_owned()),
            1 => Just(r#""execution":"optional""#.to_owned()),
            1 => Just(r#""execution":null"#.to_owned()),
        ];
        prop::collection::vec(member, 1..4).prop_map(|ms| ms.join(","))
    }

    /// One entry of `tools`: members in any order, some missing, repeated or hostile; or not
    /// an object at all. `unique` gives every named entry its own name.
    fn entry(unique: bool) -> impl Strategy<Value = String> {
        let name = prop_oneof![
            6 => (0u32..4).prop_map(|i| format!(r#""name":"t{i}""#)),
            1 => Just(r#""name":"n\u0061me""#.to_owned()),
            1 => Just(r#""name":7"#.to_owned()),
            1 => Just(r#""name":["x",{"y":null}]"#.to_owned()),
            1 => Just(r#""name":"has space""#.to_owned()),
            1 => Just(String::new()),
        ];
        let description = prop_oneof![
            3 => Just(String::new()),
            2 => Just(r#""description":"plain""#.to_owned()),
            1 => Just(r#""description":"line\nbreak \"quoted\" \u00e9""#.to_owned()),
            1 => Just(r#""description":null"#.to_owned()),
            1 => Just(r#""description":5"#.to_owned()),
            1 => Just(r#""description":"\ud800""#.to_owned()),
        ];
        let extra = prop_oneof![
            3 => Just(String::new()),
            1 => Just(r#""title":"T""#.to_owned()),
            1 => Just(r#""annotations":{"readOnlyHint":true,"x":[1,{"\ud800":"\udc00"}]}"#.to_owned()),
            4 => definition(),
            1 => Just(r#""n\u0061me":"again""#.to_owned()),
            1 => Just(r#""name":"t1""#.to_owned()),
            1 => Just(r#""inputSchema":{"type":"object"}"#.to_owned()),
            1 => Just(r#""\udc00x":1"#.to_owned()),
            1 => Just(r#""name":"\ud800""#.to_owned()),
        ];
        let member_schema = prop_oneof![
            8 => schema().prop_map(|s| format!(r#""inputSchema":{s}"#)),
            1 => Just(String::new()),
            1 => Just(r#""inputSchema":"s""#.to_owned()),
        ];
        let object = (
            name,
            description,
            member_schema,
            extra,
            any::<u8>(),
            0u32..1000,
        )
            .prop_map(move |(n, d, s, x, order, id)| {
                let n = if unique && !n.is_empty() {
                    format!(r#""name":"u{id}""#)
                } else {
                    n
                };
                let mut members: Vec<String> =
                    [n, d, s, x].into_iter().filter(|m| !m.is_empty()).collect();
                let len = members.len().max(1);
                members.rotate_left(usize::from(order) % len);
                if order & 0x80 != 0 {
                    members.reverse();
                }
                format!(
                    "{{{}}}",
                    members.join(if order & 0x40 != 0 { " ,\n " } else { "," })
                )
            });
        prop_oneof![
            12 => object,
            1 => prop::sample::select(
                &["17", "\"str\"", "null", "[]", r#"["pos",null,{"type":"object"}]"#][..]
            )
            .prop_map(str::to_owned),
        ]
    }

    /// A whole JSON-RPC body answering a listing: page members in any order, the envelope
    /// with hostile extras, and sometimes broken by one edit.
    pub(super) fn body(unique: bool) -> impl Strategy<Value = String> {
        let page_extra = prop_oneof![
            3 => Just(String::new()),
            1 => Just(r#""nextCursor":null"#.to_owned()),
            1 => Just(r#""nextCursor":"c""#.to_owned()),
            1 => Just(r#""nextCursor":"c\u0032""#.to_owned()),
            1 => Just(r#""resultType":"complete""#.to_owned()),
            1 => Just(r#""resultType":"other""#.to_owned()),
            1 => Just(r#""ttlMs":1000,"_meta":{"deep":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}"#.to_owned()),
            1 => Just(r#""tools":[]"#.to_owned()),
            1 => Just(r#""t\u006fols":[]"#.to_owned()),
            1 => Just(r#""resultType":"compl\u0065te""#.to_owned()),
            1 => Just(r#""\ud800":1"#.to_owned()),
            1 => Just(r#""ttlMs":300000,"cacheScope":"public""#.to_owned()),
            1 => Just(r#""cacheScope":"pub\u006cic","t\u0074lMs":7"#.to_owned()),
            1 => Just(r#""ttlMs":-5,"cacheScope":"private""#.to_owned()),
            1 => Just(r#""ttlMs":1.5,"cacheScope":"Public""#.to_owned()),
            1 => Just(r#""ttlMs":1e3,"cacheScope":null"#.to_owned()),
            1 => Just(r#""ttlMs":5,"ttlMs":6,"cacheScope":"public","cacheScope":"public""#.to_owned()),
            1 => Just(r#""ttlMs":"9","cacheScope":["public"]"#.to_owned()),
            1 => Just(r#""ttlMs":99999999999999999999999"#.to_owned()),
        ];
        let envelope = prop_oneof![
            4 => Just(("{\"jsonrpc\":\"2.0\",\"id\":\"ID\",\"result\":", "}")),
            1 => Just(("{\"result\":", ",\"id\":\"ID\",\"jsonrpc\":\"2.0\"}")),
            1 => Just(("{ \"j\\u0073onrpc\" : \"2.0\" , \"id\" : \"ID\" , \"result\" : ", " , \"x\":[1e400,\"\\ud800\"] }\n")),
            1 => Just(("{\"jsonrpc\":\"2.0\",\"id\":\"ID\",\"result\":", ",\"id\":\"ID\"}")),
        ];
        let breakage = prop_oneof![
            12 => Just(None),
            1 => (any::<prop::sample::Index>(), prop::sample::select(&["", "{", "\"", ",", "\u{1}", "]", "\\", "0"][..]))
                .prop_map(Some),
        ];
        (
            prop::collection::vec(entry(unique), 0..8),
            page_extra,
            any::<bool>(),
            envelope,
            breakage,
        )
            .prop_map(|(entries, extra, extra_first, (open, close), breakage)| {
                let tools = format!(r#""tools":[{}]"#, entries.join(","));
                let members = match (extra.is_empty(), extra_first) {
                    (true, _) => tools,
                    (false, true) => format!("{extra},{tools}"),
                    (false, false) => format!("{tools},{extra}"),
                };
                let mut body = format!("{open}{{{members}}}{close}");
                if let Some((at, text)) = breakage {
                    let mut cut = at.index(body.len());
                    while !body.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    body.replace_range(cut..(cut + 1).min(body.len()), text);
                }
                body
            })
    }
}

/// Fills in the numbers of a generated body: `1e300` for both readings (within `f64`).
fn in_range(body: &str) -> String {
    body.replace("HUGE", "1e300")
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1500))]

    /// A schema alone: the crate finds the parameters the `x-mcp-header` rules give, or
    /// refuses it for a rule it breaks.
    #[test]
    fn the_crate_finds_header_params_as_the_reference(schema in generated::schema()) {
        let schema = in_range(&schema);
        let now = mcp_sansio::header_params(&schema).map(|mut p| {
            p.sort_by(|a, b| a.path.cmp(&b.path));
            p
        });
        match (now, oracle::header_params_of(&schema)) {
            (Ok(now), Ok(want)) => proptest::prop_assert_eq!(now, want, "{}", schema),
            (Err(e), Err(reasons)) => {
                let now = oracle::reason(&format!("invalid x-mcp-header: {e}"));
                proptest::prop_assert!(reasons.contains(&now), "{} not in {:?}: {}", now, reasons, schema);
            }
            (now, want) => proptest::prop_assert!(false, "{:?} but {:?}: {}", now, want, schema),
        }
    }

    /// Without numbers beyond `f64`, the crate lists every page as the reference does: the same
    /// tools, schemas and parameters, the same entries refused for a reason the rules give, the
    /// same page errors; whole and in 3-byte pieces.
    #[test]
    fn the_crate_reads_pages_as_the_reference(body in generated::body(false)) {
        let body = in_range(&body);
        let now = listed_now(&body, Split::Whole);
        let want = listed_before(&body);
        proptest::prop_assert!(agree(&now, &want), "{:?}\nbut the reference gives\n{:?}\n{}", now, want, body);
        if body.len() < 2048 {
            proptest::prop_assert_eq!(&listed_now(&body, Split::Chunks(3)), &now, "split {}", body);
        }
    }

    /// With numbers beyond `f64` (every name its own): kept byte for byte, except in a schema
    /// that serde_json reads (escaped keys or annotation values, or refused anyway), where the
    /// number may be the reason.
    #[test]
    fn the_crate_keeps_numbers_beyond_f64_as_the_reference(body in generated::body(true)) {
        let huge = body.replace("HUGE", "1e400");
        let now = listed_now(&huge, Split::Whole);
        let want = listed_before(&huge);
        proptest::prop_assert!(agree(&now, &want), "{:?}\nbut the reference gives\n{:?}\n{}", now, want, huge);
    }
}

#[test]
fn a_page_in_an_event_stream_lists_as_in_a_json_body() {
    let page = r#"{"tools":[{"name":"a","description":"line\nbreak","inputSchema":{"type":"object","maximum":1e400}},{"name":"b","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}},{"name":"a","inputSchema":{"type":"object"}}]}"#;
    let json = list_one_page(page, None);
    for split in [Split::Whole, Split::Bytes, Split::Chunks(5)] {
        let mut h = Harness::new(Config::new("http://127.0.0.1:9/mcp").unwrap(), split);
        h.connect();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
        );
        h.take_events();
        h.list();
        let r = h.next();
        let stream = format!("data: {}\n\n", result_msg(r.rpc_id(), page));
        h.feed(r.exchange, &sse_response(&[], &stream, false));
        let listed = h
            .take_events()
            .into_iter()
            .find_map(|e| match e {
                Event::ToolsListed(c) => Some(c),
                _ => None,
            })
            .expect("listed");
        assert_eq!(listed, json, "{split:?}");
        assert_eq!(listed.tools[0].description(), Some("line\nbreak"));
        assert_eq!(listed.tools[1].header_params().len(), 1);
        assert_eq!(listed.refused[0].reason, RefusalReason::DuplicateName);
    }
}

#[test]
fn entries_written_as_arrays_are_not_tool_objects() {
    // A tool is a JSON object (MCP schema); serde's derived reading would take
    // `["pos",null,{"type":"object"}]` as the tool `pos`.
    let page = r#"{"tools":[["pos",null,{"type":"object"}],[],{"name":"a","inputSchema":{"type":"object"}}]}"#;
    let c = list_one_page(page, None);
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.refused.len(), 2);
    for r in &c.refused {
        assert!(
            matches!(r.reason, RefusalReason::NotAToolObject { .. }) && r.name.is_none(),
            "{r:?}"
        );
    }
}

#[test]
fn pages_written_as_arrays_are_unusable_and_an_escaped_result_type_is_read() {
    let listed = |page: &str| {
        let mut h = modern(Split::Whole);
        h.list();
        let r = h.next();
        h.feed(
            r.exchange,
            &json_response(200, &result_msg(r.rpc_id(), page)),
        );
        h.single_event()
    };
    let tool = r#"{"name":"a","inputSchema":{"type":"object"}}"#;
    let e = listed(&format!(r#"[[{tool}],null,"complete"]"#));
    assert!(
        matches!(
            &e,
            Event::Failed {
                error: mcp_sansio::Error::InvalidAnswer { .. },
                ..
            }
        ),
        "{e:?}"
    );
    // `"compl\u0065te"` is the JSON string `complete`.
    let e = listed(&format!(
        r#"{{"tools":[{tool}],"resultType":"compl\u0065te"}}"#
    ));
    assert!(
        matches!(&e, Event::ToolsListed(c) if c.tools.len() == 1),
        "{e:?}"
    );
}

/// The whole tool definition. The schema's `Tool` has, beside `name`, `description` and
/// `inputSchema`: "`title?`", "`annotations?` (ToolAnnotations)" whose members "are untrusted
/// hints", "`outputSchema?`" ("any JSON Schema (not limited to objects)" in 2026-07-28),
/// "`_meta?`" and "`icons?` (`Icon[]`: `src`, `mimeType?`, `sizes?: string[]`, `theme?:
/// "light"|"dark"`)". Each is kept verbatim (the output schema's `$ref` unresolved), icons only
/// with an `https:` or `data:` source, each other one dropped with a note saying why; a member
/// of another type is left out with a note and the tool stays usable. Fed whole, byte by byte
/// and in 7-byte pieces.
#[test]
fn the_whole_tool_definition_is_kept_and_icons_only_with_https_or_data_sources() {
    let page = r##"{"tools":[
      {"name":"weather","title":"Weather \u2600","inputSchema":{"type":"object"},
       "annotations":{"title":"W","readOnlyHint":true,"destructiveHint":false,"x":[1]},
       "outputSchema":{"type":"object","properties":{"t":{"$ref":"#/$defs/temp"}},"$defs":{"temp":{"type":"number"}}},
       "icons":[{"src":"https://e.example/w.png","mimeType":"image/png","sizes":["48x48","any"],"theme":"dark"},
                {"src":"http://e.example/w.png"},{"src":"javascript:alert(1)"},{"src":"data:image/svg+xml;base64,PHN2Zz4="},
                {"mimeType":"image/png"},"https://e.example/"],
       "_meta":{"io.example/k":{"v":[1,2]}}},
      {"name":"plain","inputSchema":{"type":"object"},"title":5,"annotations":[],"outputSchema":"x","icons":{},"_meta":null}
    ]}"##;
    let c = list_one_page(page, None);
    assert_eq!(c.refused, vec![]);
    let w = &c.tools[0];
    assert_eq!(w.title(), Some("Weather \u{2600}"));
    assert_eq!(
        w.annotations(),
        Some(r#"{"title":"W","readOnlyHint":true,"destructiveHint":false,"x":[1]}"#)
    );
    let hints = w.hints();
    assert_eq!(
        (
            hints.title.as_deref(),
            hints.read_only,
            hints.destructive,
            hints.idempotent
        ),
        (Some("W"), Some(true), Some(false), None)
    );
    assert_eq!(
        w.output_schema(),
        Some(
            r##"{"type":"object","properties":{"t":{"$ref":"#/$defs/temp"}},"$defs":{"temp":{"type":"number"}}}"##
        )
    );
    assert_eq!(w.meta(), Some(r#"{"io.example/k":{"v":[1,2]}}"#));
    let icons: Vec<_> = w.icons().collect();
    assert_eq!(icons.len(), 2);
    assert_eq!(icons[0].src(), "https://e.example/w.png");
    assert_eq!(icons[0].mime_type().as_deref(), Some("image/png"));
    assert_eq!(icons[0].sizes(), ["48x48", "any"]);
    assert_eq!(icons[0].theme().as_deref(), Some("dark"));
    assert_eq!(
        icons[1].raw(),
        r#"{"src":"data:image/svg+xml;base64,PHN2Zz4="}"#
    );
    use mcp_sansio::{IconDrop, ToolNote};
    let scheme = |s: &str| IconDrop::SchemeNotAllowed { scheme: s.into() };
    assert_eq!(
        w.notes(),
        [
            ToolNote::IconDropped {
                index: 1,
                reason: scheme("http")
            },
            ToolNote::IconDropped {
                index: 2,
                reason: scheme("javascript")
            },
            ToolNote::IconDropped {
                index: 4,
                reason: IconDrop::SrcMissing
            },
            ToolNote::IconDropped {
                index: 5,
                reason: IconDrop::NotAnObject
            },
        ]
    );
    let p = &c.tools[1];
    assert_eq!(
        (
            p.title(),
            p.annotations(),
            p.output_schema(),
            p.meta(),
            p.icons().count()
        ),
        (None, None, None, None, 0)
    );
    let ignored: Vec<String> = p.notes().iter().map(ToString::to_string).collect();
    assert_eq!(
        ignored,
        [
            "title ignored: wrong JSON type",
            "annotations ignored: wrong JSON type",
            "outputSchema ignored: wrong JSON type",
            "icons ignored: wrong JSON type",
        ]
    );
}

/// A definition of many tiny dropped icons keeps its first `MAX_NOTES_KEPT` notes and counts
/// the others, so that a note never costs more than the bytes it stands for.
#[test]
fn notes_past_the_cap_are_counted_not_kept() {
    let icons = vec![r#"{"src":"ftp:x"}"#; 1000].join(",");
    let page = format!(
        r#"{{"tools":[{{"name":"a","inputSchema":{{"type":"object"}},"icons":[{icons},{{"src":"https://a/"}}]}}]}}"#
    );
    let c = list_one_page(&page, None);
    let t = &c.tools[0];
    assert_eq!(t.notes().len(), mcp_sansio::limits::MAX_NOTES_KEPT);
    assert_eq!(t.notes_beyond(), 1000 - mcp_sansio::limits::MAX_NOTES_KEPT);
    assert_eq!(t.icons().count(), 1);
}

/// An icon's members are read each on its own: the schema's `Icon` has "`src`, `mimeType?`,
/// `sizes?: string[]`, `theme?`", and a member of another type reads as absent without hiding
/// the others.
#[test]
fn an_icon_member_of_another_type_hides_no_other() {
    let page = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"},
        "icons":[{"src":"https://e.example/a.png","sizes":"48x48","theme":1,"mimeType":"image/png"}]}]}"#;
    let c = list_one_page(page, None);
    let icon = c.tools[0].icons().next().unwrap();
    assert_eq!(icon.src(), "https://e.example/a.png");
    assert_eq!(icon.mime_type().as_deref(), Some("image/png"));
    assert_eq!((icon.sizes(), icon.theme()), (Vec::<String>::new(), None));
}
