//! Listing tools: catalogs from hostile pages.

mod support;

use mcp_sansio::list::RefusalReason;
use mcp_sansio::xmcp::HeaderRefusal;
use mcp_sansio::{Budgets, Config, Event};
use support::*;

/// Lists one page, fed whole, one byte at a time (small pages) and in 7-byte pieces, asserting
/// the same catalog every time.
fn list_one_page(page: &str, budgets: Option<Budgets>) -> mcp_sansio::list::Catalog {
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

fn list_one_page_split(
    page: &str,
    budgets: Option<Budgets>,
    split: Split,
) -> mcp_sansio::list::Catalog {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    if let Some(b) = budgets {
        config = config.with_budgets(b);
    }
    list_with(config, page, split)
}

/// Connects with `config` and lists one page.
fn list_with(config: Config, page: &str, split: Split) -> mcp_sansio::list::Catalog {
    let mut h = Harness::new(config, split);
    h.connect();
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), DISCOVER_OK)),
    );
    h.take_events();
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
    config.tool_names = mcp_sansio::list::ToolNameRule::Lenient;
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
