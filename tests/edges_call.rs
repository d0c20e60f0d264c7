//! Tool results' limits at their edges, through the public API (mutation testing,
//! `docs/mutants.md`): the usable content blocks one result keeps ([`Budget::ContentBlocks`],
//! derived from the byte budget) accepted at the limit and refused one past it, by the one-pass
//! reading and by the serde reading it leaves escaped keys to, whatever is dropped around them.

mod support;

use mcp_sansio::{Budget, Config, ContentBlock, Error, Event, ProtocolError};
use support::*;

/// The byte budget that makes the content-block limit [`LIMIT`]: one block per 256 bytes.
const LIMIT: usize = 20;

fn config() -> Config {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.budgets.response_bytes = LIMIT as u64 * 256;
    assert_eq!(config.budgets.content_blocks(), LIMIT as u64);
    config
}

/// `usable` text blocks `b0`, `b1`, …, a block of unknown type after every third and a
/// malformed one after every fifth (those are counted, not kept, and do not count against the
/// limit), as the `content` member written `key`, then `tail`.
fn result(key: &str, usable: usize, tail: &str) -> (String, usize, usize) {
    let (mut blocks, mut unknown, mut invalid) = (Vec::new(), 0, 0);
    for n in 0..usable {
        blocks.push(format!(r#"{{"type":"text","text":"b{n}"}}"#));
        if n % 3 == 0 {
            blocks.push(r#"{"type":"mystery"}"#.into());
            unknown += 1;
        }
        if n % 5 == 0 {
            blocks.push(r#"{"type":"image","data":"!!","mimeType":"image/png"}"#.into());
            invalid += 1;
        }
    }
    let result = format!(r#"{{"{key}":[{}]{tail}}}"#, blocks.join(","));
    (result, unknown, invalid)
}

fn answered(result: &str, split: Split) -> Event {
    let mut h = modern_with(config(), split);
    h.call("t", "{}");
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), result)),
    );
    h.single_event()
}

/// `content` as the one pass reads it, and written with an escape (`\u0074` is `t`), which the
/// one pass leaves to the serde reading.
const KEYS: [&str; 2] = ["content", r"con\u0074ent"];

#[test]
fn a_result_keeps_as_many_blocks_as_its_budget_one_more_is_refused() {
    for key in KEYS {
        for split in [Split::Whole, Split::Chunks(7)] {
            let (at_limit, unknown, invalid) = result(key, LIMIT, r#","isError":true"#);
            let Event::CallFinished(r) = answered(&at_limit, split) else {
                panic!("{key}: {at_limit}")
            };
            let texts: Vec<ContentBlock> = (0..LIMIT)
                .map(|n| ContentBlock::Text {
                    text: format!("b{n}"),
                })
                .collect();
            assert_eq!(r.content, texts, "{key}");
            assert_eq!((r.dropped_unknown, r.dropped_invalid), (unknown, invalid));
            assert!(r.is_error, "{key}");
            // One usable block more is refused, whatever follows it in the array or the
            // result (a block that is not a JSON string, a bad `resultType`).
            for tail in ["", r#","isError":true"#, r#","resultType":"bogus""#] {
                let (over, _, _) = result(key, LIMIT + 1, tail);
                for over in [
                    over.clone(),
                    over.replacen("]", r#",{"type":"text","text":"\ud800"}]"#, 1),
                ] {
                    match answered(&over, split) {
                        Event::Failed {
                            error: Error::Budget(e),
                            ..
                        } => assert_eq!((e.budget, e.limit), (Budget::ContentBlocks, LIMIT as u64)),
                        e => panic!("{key}: {over}: {e:?}"),
                    }
                }
            }
        }
    }
}

/// `content` that is not an array is refused by the serde reading, with its reason: what was
/// expected (a sequence) is named.
#[test]
fn content_that_is_not_an_array_is_refused_naming_what_was_expected() {
    for result in [
        r#"{"content":"no"}"#,
        r#"{"content":{"type":"text","text":"a"}}"#,
        r#"{"content":7}"#,
    ] {
        match answered(result, Split::Whole) {
            Event::Failed {
                error: Error::InvalidAnswer { reason, .. },
                ..
            } => assert!(reason.contains("expected a sequence"), "{result}: {reason}"),
            e => panic!("{result}: {e:?}"),
        }
    }
}

/// The one pass checks every byte of a result as JSON: a value inside a block that only starts
/// like `null` is not JSON, and the result is refused, not read as a block with a null member
/// or as a malformed block that is dropped.
#[test]
fn a_block_member_that_only_starts_like_null_is_refused_as_not_json() {
    for block in [
        r#"{"type":"text","text":"a","resource":nope}"#,
        r#"{"type":"resource","resource":nul}"#,
        r#"{"type":"text","text":nope}"#,
        r#"{"type":"text","text":"a","name":nil}"#,
    ] {
        let result = format!(r#"{{"content":[{{"type":"text","text":"ok"}},{block}]}}"#);
        for split in [Split::Whole, Split::Chunks(7)] {
            match answered(&result, split) {
                Event::Failed {
                    error: Error::Protocol(ProtocolError::MalformedMessage { reason }),
                    ..
                } => assert!(reason.contains("expected ident"), "{block}: {reason}"),
                e => panic!("{block}: {e:?}"),
            }
        }
    }
}
