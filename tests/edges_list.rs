//! The limits of a listing at their edges: each limit accepted, one more refused. Pages are read
//! with `Catalog::from_pages`, the same reader as a page from the wire, without a connection.

use mcp_sansio::{Budget, Budgets, Catalog, Error, RefusalReason, ToolNameRule};

/// A page with `tools` (JSON entries, comma-separated) and the extra `members`.
fn page(tools: &str, members: &str) -> String {
    format!(r#"{{"tools":[{tools}]{members}}}"#)
}

/// A tool entry named `name` with the smallest valid schema.
fn tool(name: &str) -> String {
    format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#)
}

fn read(pages: &[String], rule: ToolNameRule, budgets: &Budgets) -> Result<Catalog, Error> {
    Catalog::from_pages(pages.iter().map(|p| p.as_bytes()), rule, budgets)
}

/// A stored page of exactly `response_bytes` is read; one byte more is the byte budget.
#[test]
fn a_stored_page_of_exactly_the_byte_budget_is_read_one_byte_more_is_not() {
    let exact = page(&tool("a"), "");
    let mut budgets = Budgets::default();
    budgets.response_bytes = exact.len() as u64;
    let c = read(
        core::slice::from_ref(&exact),
        ToolNameRule::Strict,
        &budgets,
    )
    .unwrap();
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.pages, 1);
    // One byte more: a space after the object, still a valid page.
    let over = format!("{exact} ");
    match read(&[over], ToolNameRule::Strict, &budgets) {
        Err(Error::Budget(b)) => {
            assert_eq!(b.budget, Budget::ResponseBytes);
            assert_eq!(b.limit, exact.len() as u64);
        }
        other => panic!("{other:?}"),
    }
}

/// A stored listing of exactly `pages` pages is read; one page more is the page budget.
#[test]
fn a_stored_listing_of_exactly_the_page_budget_is_read_one_page_more_is_not() {
    let chain = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| {
                let next = if i + 1 < n {
                    format!(r#","nextCursor":"c{i}""#)
                } else {
                    String::new()
                };
                page(&tool(&format!("t{i}")), &next)
            })
            .collect()
    };
    let mut budgets = Budgets::default();
    budgets.pages = 3;
    let c = read(&chain(3), ToolNameRule::Strict, &budgets).unwrap();
    assert_eq!(c.pages, 3);
    assert_eq!(c.tools.len(), 3);
    match read(&chain(4), ToolNameRule::Strict, &budgets) {
        Err(Error::Budget(b)) => {
            assert_eq!(b.budget, Budget::Pages);
            assert_eq!(b.limit, 3);
        }
        other => panic!("{other:?}"),
    }
}

/// A tool name of 128 bytes is accepted and one of 129 refused, under either rule; the one
/// refused keeps its whole name.
#[test]
fn a_name_of_128_bytes_is_accepted_129_refused_under_either_rule() {
    for rule in [ToolNameRule::Strict, ToolNameRule::Lenient] {
        let ok = "a".repeat(128);
        let long = "b".repeat(129);
        assert!(rule.accepts(&ok), "{rule:?}");
        assert!(!rule.accepts(&long), "{rule:?}");
        let c = read(
            &[page(&format!("{},{}", tool(&ok), tool(&long)), "")],
            rule,
            &Budgets::default(),
        )
        .unwrap();
        assert_eq!(c.tools.len(), 1, "{rule:?}");
        assert_eq!(c.tools[0].name(), ok);
        assert_eq!(c.refused.len(), 1, "{rule:?}");
        assert_eq!(c.refused[0].index, 1);
        assert_eq!(c.refused[0].name.as_deref(), Some(long.as_str()));
        assert_eq!(c.refused[0].reason, RefusalReason::NameInvalid(rule));
    }
}

/// A refused entry keeps a name of up to 256 bytes whole; a longer one is cut to 256 bytes.
#[test]
fn a_refused_name_is_kept_up_to_256_bytes() {
    let whole = "n".repeat(256);
    let cut = "m".repeat(257);
    let c = read(
        &[page(&format!("{},{}", tool(&whole), tool(&cut)), "")],
        ToolNameRule::Strict,
        &Budgets::default(),
    )
    .unwrap();
    assert!(c.tools.is_empty());
    let names: Vec<Option<&str>> = c.refused.iter().map(|r| r.name.as_deref()).collect();
    assert_eq!(names, [Some(whole.as_str()), Some(&cut[..256])]);
}

/// A stored page that the one pass leaves to the serde reading (an escaped member name, a
/// duplicate member in an entry) is read as from the wire: the same tools and refusals.
#[test]
fn a_stored_page_read_the_serde_way_is_read_as_the_wire_is() {
    for p in [
        format!(r#"{{"t\u006fols":[{},{}]}}"#, tool("a"), tool("b c")),
        format!(
            r#"{{"tools":[{},{{"name":"x","name":"y","inputSchema":{{"type":"object"}}}}]}}"#,
            tool("a")
        ),
    ] {
        let c = read(
            core::slice::from_ref(&p),
            ToolNameRule::Strict,
            &Budgets::default(),
        )
        .unwrap();
        assert_eq!(c.tools.len() + c.refused.len(), 2, "{p}");
        assert_eq!(c.tools[0].name(), "a", "{p}");
        assert_eq!(c.pages, 1);
    }
}
