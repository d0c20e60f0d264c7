//! Tool results: content blocks, dropped blocks, `is_error`.

mod support;

use mcp_sansio::{ContentBlock, ResourceContents};
use mcp_sansio::{ErrorKind, Event};
use support::*;

fn call_answer(result: &str, split: Split) -> Event {
    let mut h = modern(split);
    h.call("t", "{}");
    let r = h.next();
    h.feed(
        r.exchange,
        &json_response(200, &result_msg(r.rpc_id(), result)),
    );
    h.single_event()
}

#[test]
fn every_content_type_in_server_order() {
    let result = r#"{"content":[
        {"type":"text","text":"{\"temp\":22}"},
        {"type":"image","data":"iVBORw==","mimeType":"image/png"},
        {"type":"audio","data":"UklGRg","mimeType":"audio/wav"},
        {"type":"resource_link","uri":"file:///a.rs","name":"a.rs","mimeType":"text/x-rust"},
        {"type":"resource","resource":{"uri":"file:///b.txt","mimeType":"text/plain","text":"hi"},"annotations":{"audience":["user"]}},
        {"type":"resource","resource":{"uri":"file:///c.bin","blob":"AAEC"}},
        {"type":"tool_use","id":"x"},
        {"type":"mystery"},
        {"type":"image","data":"not base64!","mimeType":"image/png"},
        {"type":"text"}
    ],"structuredContent":{"temp":22},"isError":true}"#;
    for split in SPLITS {
        let Event::CallFinished(r) = call_answer(result, split) else {
            panic!()
        };
        assert_eq!(
            r.content,
            vec![
                ContentBlock::Text {
                    text: "{\"temp\":22}".into()
                },
                ContentBlock::Image {
                    data: vec![0x89, b'P', b'N', b'G'],
                    mime_type: "image/png".into()
                },
                ContentBlock::Audio {
                    data: b"RIFF".to_vec(),
                    mime_type: "audio/wav".into()
                },
                ContentBlock::ResourceLink {
                    uri: "file:///a.rs".into(),
                    name: "a.rs".into(),
                    mime_type: Some("text/x-rust".into())
                },
                ContentBlock::Resource {
                    uri: "file:///b.txt".into(),
                    mime_type: Some("text/plain".into()),
                    contents: ResourceContents::Text("hi".into())
                },
                ContentBlock::Resource {
                    uri: "file:///c.bin".into(),
                    mime_type: None,
                    contents: ResourceContents::Blob(vec![0, 1, 2])
                },
            ]
        );
        assert_eq!((r.dropped_unknown, r.dropped_invalid), (2, 2));
        assert!(r.is_error, "the tool's verdict, not an error");
        assert_eq!(r.structured_content.unwrap().get(), r#"{"temp":22}"#);
    }
}

#[test]
fn all_dropped_is_an_unusable_answer() {
    for result in [
        r#"{"content":[{"type":"tool_result"},{"type":"x"}]}"#,
        r#"{"content":[{"type":"image","data":"%%%","mimeType":"image/png"}]}"#,
        r#"{"content":{"type":"text","text":"not an array"}}"#,
        r#"{"isError":false}"#,
    ] {
        match call_answer(result, Split::Whole) {
            Event::Failed { error, .. } => {
                assert_eq!(error.kind(), ErrorKind::ServerAnswered, "{result}")
            }
            e => panic!("{result}: {e:?}"),
        }
    }
}

#[test]
fn empty_content_and_absent_result_type_are_complete() {
    let Event::CallFinished(r) = call_answer(r#"{"content":[]}"#, Split::Whole) else {
        panic!()
    };
    assert!(r.content.is_empty() && !r.is_error && r.structured_content.is_none());
}

#[test]
fn arguments_with_huge_numbers_arrive_byte_identical() {
    let mut h = modern(Split::Whole);
    let args = r#"{"b":1.0,"a":[1e400]}"#;
    h.call("t", args);
    let r = h.next();
    let body = String::from_utf8(r.body.clone()).unwrap();
    assert!(body.contains(&format!(r#""arguments":{args}"#)), "{body}");
}

#[test]
fn a_hundred_page_listing_completes() {
    let mut h = modern(Split::Whole);
    h.list();
    for page in 1..=100 {
        let r = h.next();
        let next = (page < 100).then(|| format!("p{page}"));
        let name = format!("tool{page}");
        h.feed(
            r.exchange,
            &json_response(
                200,
                &result_msg(r.rpc_id(), &tools_page(&[&name], next.as_deref())),
            ),
        );
    }
    match h.single_event() {
        Event::ToolsListed(c) => {
            assert_eq!(c.pages, 100);
            assert_eq!(c.tools.len(), 100);
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn a_result_with_numbers_beyond_f64_is_kept_byte_for_byte() {
    // In `structuredContent`, in a block's extra members and around the blocks: numbers are
    // delimited, never evaluated, so nothing here is malformed.
    let result = r#"{"content":[{"type":"text","text":"a","annotations":{"priority":1e400}},{"type":"text","text":"b","_meta":{"n":-1E+999}}],"structuredContent":{"n":1e400,"m":[123456789012345678901234567890e300]},"_meta":{"x":1e400}}"#;
    for split in SPLITS {
        let Event::CallFinished(r) = call_answer(result, split) else {
            panic!("{split:?}")
        };
        assert_eq!(r.content.len(), 2, "{split:?}");
        assert_eq!((r.dropped_unknown, r.dropped_invalid), (0, 0));
        assert_eq!(
            r.structured_content.as_deref().map(|s| s.get()),
            Some(r#"{"n":1e400,"m":[123456789012345678901234567890e300]}"#),
            "{split:?}"
        );
    }
}
