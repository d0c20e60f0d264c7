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

/// Schema (2026-07-28): `CallToolResult.structuredContent?` is "an optional JSON value" of any
/// type, and `null` is a JSON value: a result carrying `"structuredContent": null` keeps it
/// (`Some("null")`), distinct from a result without the member (`None`), on every split.
#[test]
fn structured_content_null_is_a_value_distinct_from_absent() {
    for split in SPLITS {
        for (result, expected) in [
            (r#"{"content":[],"structuredContent":null}"#, Some("null")),
            (
                r#"{"content":[],"structuredContent" : null }"#,
                Some("null"),
            ),
            (r#"{"content":[],"structuredContent":0}"#, Some("0")),
            (r#"{"content":[],"structuredContent":"s"}"#, Some(r#""s""#)),
            (r#"{"content":[]}"#, None),
        ] {
            let Event::CallFinished(r) = call_answer(result, split) else {
                panic!("{result}")
            };
            assert_eq!(
                r.structured_content.as_deref().map(|v| v.get()),
                expected,
                "{result}"
            );
        }
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

#[test]
fn a_big_escaped_text_arrives_whole_in_every_split_and_framing() {
    // Escapes every few dozen bytes, multi-byte characters and surrogate pairs, as JSON and as
    // an event stream, whole and byte by byte.
    let line = "2026-12-02T16:00:00Z\tINFO\t\"job\" é \u{1F600} ok\\n\n";
    let text: String = line.repeat(2000);
    let result = serde_json::json!({"content": [{"type": "text", "text": text}], "isError": false})
        .to_string();
    for split in SPLITS {
        let Event::CallFinished(r) = call_answer(&result, split) else {
            panic!("{split:?}")
        };
        assert_eq!(r.content, vec![ContentBlock::Text { text: text.clone() }]);
        let mut h = modern(split);
        h.call("t", "{}");
        let req = h.next();
        let stream = format!(
            "event: message\ndata: {}\n\n",
            result_msg(req.rpc_id(), &result)
        );
        h.feed(req.exchange, &sse_response(&[], &stream, false));
        let finished = h
            .take_events()
            .into_iter()
            .find_map(|e| match e {
                Event::CallFinished(r) => Some(r),
                _ => None,
            })
            .unwrap_or_else(|| panic!("SSE {split:?}"));
        assert_eq!(
            finished.content,
            vec![ContentBlock::Text { text: text.clone() }]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The crate's reading (its one pass, and the serde reading it leaves hard inputs to) against
// a reference written from the specification (tests/call/oracle.rs).

// The reference lives in this test's own folder, which a crate root does not search for `mod`.
#[path = "call/oracle.rs"]
mod oracle;

use mcp_sansio::{Config, Error, ProtocolError};
use oracle::Answer;

/// The one-pass reading, through a `Connection` (with an input hook), of `body` answering the
/// call (`"ID"` in it is the request's id), fed in `split` as JSON or as one SSE event.
fn answered_now(body: &str, split: Split, sse: bool) -> Answer {
    let mut config = Config::new("http://127.0.0.1:9/mcp").unwrap();
    config.input_hook = true;
    config.client_capabilities = r#"{"elicitation":{}}"#.into();
    let mut h = modern_with(config, split);
    h.call("t", "{}");
    let r = h.next();
    let body = body.replace("\"ID\"", &r.rpc_id().to_string());
    let response = if sse {
        sse_response(&[], &format!("data: {body}\n\n"), false)
    } else {
        json_response(200, &body)
    };
    h.feed(r.exchange, &response);
    let event = h.take_events().into_iter().find(|e| {
        !matches!(
            e,
            Event::ExchangeFinished { .. } | Event::ExchangeAbandoned { .. }
        )
    });
    match event {
        None if h.has_outstanding() => Answer::Shed,
        None => panic!("no outcome: {body}"),
        Some(Event::CallFinished(r)) => Answer::Complete {
            content: r.content,
            dropped: (r.dropped_unknown, r.dropped_invalid),
            structured: r.structured_content.map(|s| s.get().to_owned()),
            is_error: r.is_error,
        },
        Some(Event::InputRequired { requests }) => Answer::InputRequired(requests.get().to_owned()),
        Some(Event::Failed { error, .. }) => match error {
            Error::InvalidAnswer { reason, .. } => Answer::Invalid(oracle::reason(&reason)),
            Error::Protocol(ProtocolError::MalformedMessage { .. }) => Answer::Malformed,
            Error::Protocol(ProtocolError::Batch) => Answer::Batch,
            Error::Protocol(ProtocolError::WrongId { .. }) => Answer::WrongId,
            Error::Rpc(e) => Answer::Rpc(e.code),
            other => panic!("unexpected {other:?}: {body}"),
        },
        Some(other) => panic!("unexpected {other:?}: {body}"),
    }
}

/// The reference reading of the same body.
fn answered_before(body: &str) -> Answer {
    oracle::read(body.replace("\"ID\"", "7").as_bytes(), 7)
}

mod generated {
    use proptest::prelude::*;

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        proptest::sample::select(items).prop_map(str::to_owned)
    }

    /// String values: plain, escaped, non-ASCII, lone surrogates; rarely not JSON at all.
    fn string() -> impl Strategy<Value = String> {
        prop_oneof![
            12 => pick(&[
                r#""ok""#,
                r#""""#,
                r#""a\"b\\c\/d\b\f\n\r\t""#,
                r#""\u00e9\ud83d\ude00x""#,
                r#""é ü 😀""#,
                r#""lone \ud800""#,
                r#""low \udc00 first""#,
                r#""aGk=""#,
                r#""!!""#,
                r#""image/png""#,
            ]),
            1 => pick(&["\"raw \u{1} control\"", r#""bad \x escape""#]),
        ]
    }

    /// Any value, including ones that are no string.
    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => string(),
            1 => pick(&["null", "7", "-0.5e3", "1e400", "true", "{}", "[]", r#"{"a":[1e400,{"b":null}]}"#]),
            1 => (1usize..200).prop_map(|d| format!("{}1{}", "[".repeat(d), "]".repeat(d))),
        ]
    }

    /// A key, sometimes escaped or a near miss.
    fn block_key() -> impl Strategy<Value = String> {
        pick(&[
            r#""type""#,
            r#""type""#,
            r#""text""#,
            r#""text""#,
            r#""data""#,
            r#""mimeType""#,
            r#""uri""#,
            r#""name""#,
            r#""resource""#,
            r#""annotations""#,
            r#""_meta""#,
            r#""t\u0079pe""#,
            r#""Type""#,
            r#""\udc00""#,
        ])
    }

    fn block_type() -> impl Strategy<Value = String> {
        pick(&[
            r#""text""#,
            r#""image""#,
            r#""audio""#,
            r#""resource""#,
            r#""resource_link""#,
            r#""tool_use""#,
            r#""mystery""#,
            r#""te\u0078t""#,
            r#""\ud800""#,
            "null",
            "7",
        ])
    }

    fn resource() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => proptest::collection::vec(
                (pick(&[r#""uri""#, r#""uri""#, r#""text""#, r#""blob""#, r#""mimeType""#, r#""x""#, r#""ur\u0069""#]), value()),
                0..5,
            )
            .prop_map(|members| {
                let m: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", m.join(","))
            }),
            1 => pick(&["null", r#""u""#, r#"["u",null,"t"]"#, "1e400"]),
        ]
    }

    /// One content block: mostly an object of plausible members, sometimes anything else.
    fn block() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            3 => (Just(r#""type""#.to_owned()), block_type()),
            4 => (block_key(), value()),
            1 => (Just(r#""resource""#.to_owned()), resource()),
        ];
        let good = (
            pick(&[
                r#"{"type":"text","text":S}"#,
                r#"{"text":S,"type":"text","annotations":{"priority":1e400}}"#,
                r#"{"type":"image","data":"aGk=","mimeType":S}"#,
                r#"{"type":"audio","mimeType":"audio/wav","data":S}"#,
                r#"{"type":"resource_link","uri":S,"name":"n"}"#,
                r#"{"type":"resource","resource":{"uri":"u","text":S}}"#,
                r#"{"type":"resource","resource":{"blob":"aGk=","uri":S,"mimeType":null}}"#,
            ]),
            string(),
        )
            .prop_map(|(block, s)| block.replace('S', &s));
        prop_oneof![
            6 => good,
            6 => proptest::collection::vec(member, 0..6).prop_map(|members| {
                let m: Vec<String> = members.iter().map(|(k, v)| format!("{k} : {v}")).collect();
                format!("{{ {} }}", m.join(" ,"))
            }),
            1 => value(),
            1 => pick(&[r#"["text","positional"]"#]),
        ]
    }

    fn result_member() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => pick(&[r#""content":null"#, r#""content":"no""#, r#""content":{}"#]),
            1 => value().prop_map(|v| format!(r#""structuredContent":{v}"#)),
            1 => pick(&[r#""isError":true"#, r#""isError":false"#, r#""isError":null"#, r#""isError":"yes""#]),
            1 => pick(&[
                r#""resultType":"complete""#, r#""resultType":"input_required""#,
                r#""resultType":"other""#, r#""resultType":null"#, r#""resultType":"compl\u0065te""#,
                r#""resultType":7"#, r#""resultType":"input_requir\u0065d""#, r#""resultType":"\ud800""#,
            ]),
            1 => pick(&[r#""inputRequests":{"a":{"method":"elicitation/create"}}"#, r#""inputRequests":{}"#, r#""inputRequests":"x""#, r#""inputRequests":null"#]),
            1 => pick(&[r#""requestState":"s\u00e9""#, r#""requestState":7"#]),
            1 => pick(&[
                r#""resultType":"input_required","requestState":"s""#,
                r#""resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create"}}"#,
            ]),
            1 => value().prop_map(|v| format!(r#""_meta":{v}"#)),
            1 => pick(&[r#""c\u006fntent":[]"#, r#""\ud800x":1"#, r#""isError":1e400"#, r#""structuredContent":{"a":1,"a":2}"#]),
        ]
    }

    /// A whole message answering the call (`"ID"` stands for its id), sometimes broken.
    pub fn body() -> impl Strategy<Value = String> {
        let content = proptest::collection::vec(block(), 0..5)
            .prop_map(|b| format!(r#""content":[{}]"#, b.join(",")));
        let result = (
            proptest::option::weighted(0.85, content),
            proptest::collection::vec(result_member(), 0..4),
            any::<proptest::sample::Index>(),
        )
            .prop_map(|(content, mut members, at)| {
                if let Some(c) = content {
                    let at = at.index(members.len() + 1);
                    members.insert(at, c);
                }
                format!("{{{}}}", members.join(","))
            });
        let envelope = prop_oneof![
            6 => pick(&[
                r#"{"jsonrpc":"2.0","id":"ID","result":R}"#,
                " {\n \"jsonrpc\" : \"2.0\" , \"id\" : \"ID\" , \"result\" : R \n} \n",
                r#"{"result":R,"jsonrpc":"2.0","id":"ID"}"#,
                r#"{"jsonrpc":"2.0","id":"ID","result":R,"extra":[1e400,"\ud800"]}"#,
            ]),
            1 => pick(&[
                r#"{"jsonrpc":"2.0","id":"ID","result":[[{"type":"text","text":"a"}]]}"#,
                r#"{"jsonrpc":"2.0","id":"ID","result":[[{"type":"text","text":"a"}],null,false]}"#,
            ]),
            1 => pick(&[
                r#"{"jsonrpc":"2.0","id":"ID","result":R,"method":"x"}"#,
                r#"{"jsonrpc":"2.0","id":"ID","result":R,"result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"ID","result":R} x"#,
                r#"{"jsonrpc":"2.0","id":"ID","result":R}}"#,
                r#"{"jsonrpc":"2.0","id":999,"result":R}"#,
                r#"{"jsonrpc":"2.0","result":R}"#,
                r#"{"jsonrpc":"1.0","id":"ID","result":R}"#,
                r#"{"j\u0073onrpc":"2.0","id":"ID","result":R}"#,
                r#"[{"jsonrpc":"2.0","id":"ID","result":R}]"#,
                r#"{"jsonrpc":"2.0","id":"ID","error":{"code":-32000,"message":"no"},"x":R}"#,
            ]),
        ];
        let breakage = proptest::option::weighted(
            0.1,
            (
                any::<proptest::sample::Index>(),
                pick(&["", "\"", "}", "]", ",", "\\", "1e400", "\u{0}"]),
            ),
        );
        (envelope, result, breakage).prop_map(|(envelope, result, breakage)| {
            let mut body = envelope.replace('R', &result);
            if let Some((at, text)) = breakage {
                let mut cut = at.index(body.len());
                while !body.is_char_boundary(cut) {
                    cut -= 1;
                }
                let end = (cut + 1).min(body.len());
                let end = (end..=body.len())
                    .find(|e| body.is_char_boundary(*e))
                    .unwrap_or(body.len());
                body.replace_range(cut..end, &text);
            }
            body
        })
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The crate reads every answer as the reference written from the specification does: the
    /// same blocks, counters, structured content and named reasons (an answer the schema's shape
    /// refuses is refused, whatever the parser's message), as JSON and as an SSE event, whole and
    /// cut in small pieces; and the same again with the result's keys escaped, which its one pass
    /// leaves to the serde reading.
    #[test]
    fn the_crate_reads_call_answers_as_the_reference(body in generated::body()) {
        let before = answered_before(&body);
        let now = answered_now(&body, Split::Whole, false);
        proptest::prop_assert_eq!(&now, &before, "{}", body);
        let on_stream = body.replace("\"ID\"", "7");
        if !body.contains('\n') && !oracle::from_server(on_stream.as_bytes()) {
            proptest::prop_assert_eq!(&answered_now(&body, Split::Chunks(3), true), &before, "SSE {}", body);
        }
        if let Some(escaped) = oracle::with_escaped_result_keys(&body) {
            let before = answered_before(&escaped);
            proptest::prop_assert_eq!(&answered_now(&escaped, Split::Whole, false), &before, "{}", escaped);
        }
    }
}
