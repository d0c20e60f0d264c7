//! The facts each server is known to answer, asserted against what a scenario observed.

use mcp_sansio::{CallResult, ContentBlock, ResourceContents};
use mcp_sansio::{Era, Error, ErrorKind};
use serde_json::Value;

use crate::scenario::{ObservedCall, Progress, CALLS};
use crate::{Observed, Peer, Stream, Target, PAGE_SIZE};

/// The first bytes of every PNG file.
const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
/// The servers' 1×1 PNG: 70 bytes.
const PNG_LEN: usize = 70;
/// The servers' WAV: a 44-byte header and 8 samples.
const WAV_LEN: usize = 52;
const README_URI: &str = "test://static/readme.txt";
const PIXEL_URI: &str = "test://static/pixel.png";
const FAIL_TEXT: &str = "Something went wrong inside the tool (isError=true)";

/// How `elicit_name` ends in a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElicitExpectation {
    /// One `input_required` round asking `user_name` by `elicitation/create`; the retry with
    /// the answer gives "Hello, Ada!".
    Answered,
    /// A JSON-RPC error with this code: the server cannot ask a client without the elicitation
    /// capability (legacy handshakes declare none) or without a back-channel.
    Rpc(i64),
    /// An `isError` result, for the same reasons.
    IsError,
}

/// How `elicit_name` ends against `target`, or `None` when it is not called there.
pub fn elicit_expectation(target: &Target) -> Option<ElicitExpectation> {
    use ElicitExpectation::*;
    Some(match (target.era, target.peer) {
        (Era::Modern, _) => Answered,
        (Era::Legacy, Peer::TsV1) => Rpc(-32603),
        (Era::Legacy, Peer::TsV2) => IsError,
        // Stateful SSE: the server asks over the call's stream, the client refuses (-32601, it
        // serves no requests) and the server relays that refusal as the call's error. Without
        // a session or a stream there is no back-channel: -32600.
        (Era::Legacy, Peer::PyMcp) if target.stateful && target.stream == Stream::Sse => {
            Rpc(-32601)
        }
        (Era::Legacy, Peer::PyMcp) => Rpc(-32600),
        (Era::Legacy, Peer::FastMcp | Peer::FastMcpTasks) => IsError,
    })
}

/// Asserts everything `observed` must show for `target`.
///
/// # Panics
///
/// On the first fact that does not hold, naming the target, the adapter and the fact.
pub fn check(target: &Target, o: &Observed) {
    let who = format!("{} via {}", target.label(), o.adapter);

    // Negotiation.
    assert_eq!(o.era, target.era, "{who}: era");
    assert_eq!(o.version, target.version(), "{who}: negotiated version");
    let info = o
        .server_info
        .as_ref()
        .unwrap_or_else(|| panic!("{who}: no serverInfo"));
    assert_eq!(
        info.name,
        target.peer.server_name(),
        "{who}: serverInfo.name"
    );

    // Every page of the listing.
    let catalog = match &o.catalog {
        Ok(c) => c,
        Err(e) => panic!("{who}: tools/list failed: {e} ({})", e.kind()),
    };
    let mut listed: Vec<String> = catalog.tools.iter().map(|t| t.name().to_owned()).collect();
    let mut expected = target.tool_names();
    let pages = expected.len().div_ceil(PAGE_SIZE);
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected, "{who}: listed tool names");
    assert!(
        catalog.refused.is_empty(),
        "{who}: refused tools {:?}",
        catalog.refused
    );
    assert_eq!(catalog.pages as usize, pages, "{who}: pages of {PAGE_SIZE}");
    let echo = catalog.tools.iter().find(|t| t.name() == "echo").unwrap();
    assert_eq!(
        echo.description(),
        Some("Echo back the given text"),
        "{who}: echo description"
    );
    let schema: Value = serde_json::from_str(echo.input_schema()).unwrap();
    assert_eq!(schema["type"], "object", "{who}: echo input schema");
    assert_eq!(
        schema["properties"]["text"]["type"], "string",
        "{who}: echo input schema"
    );

    // Plain calls.
    for (name, _) in CALLS {
        let r = &o.calls[name];
        check_call(target, &who, name, r);
    }

    // Progress.
    let slow = ok(&who, "slow", &o.slow.result);
    assert!(!slow.is_error, "{who}: slow isError");
    assert_eq!(texts(slow), ["slept 0.9s in 3 steps"], "{who}: slow result");
    let want: Vec<Progress> = (1..=3)
        .map(|i| Progress {
            progress: f64::from(i),
            total: Some(3.0),
            message: Some(format!("step {i}/3")),
        })
        .collect();
    match target.stream {
        Stream::Sse => assert_eq!(o.slow.progress, want, "{who}: slow progress events"),
        // A JSON-mode server usually drops the notifications, but py-mcp's stateful JSON mode
        // has been seen to deliver them too: either none, or exactly the three steps.
        Stream::Json => assert!(
            o.slow.progress.is_empty() || o.slow.progress == want,
            "{who}: unexpected progress on a JSON answer: {:?}",
            o.slow.progress
        ),
    }
    assert!(
        o.slow.input_rounds.is_empty(),
        "{who}: slow asked for input"
    );

    // Input required.
    match (elicit_expectation(target), &o.elicit) {
        (None, None) => {}
        (Some(want), Some(call)) => check_elicit(&who, want, call),
        (want, got) => panic!("{who}: elicit_name expected {want:?}, observed {got:?}"),
    }
    if target.has_two_rounds() {
        let call = o.two_rounds.as_ref().expect("two_rounds observed");
        let r = ok(&who, "two_rounds", &call.result);
        assert!(!r.is_error, "{who}: two_rounds isError");
        assert_eq!(texts(r), ["you picked 7"], "{who}: two_rounds result");
        let rounds: Vec<Vec<(&str, &str)>> = call
            .input_rounds
            .iter()
            .map(|r| r.iter().map(|(k, m)| (k.as_str(), m.as_str())).collect())
            .collect();
        assert_eq!(
            rounds,
            [
                [("confirm", "elicitation/create")],
                [("number", "elicitation/create")]
            ],
            "{who}: two_rounds input rounds"
        );
    } else {
        assert!(o.two_rounds.is_none(), "{who}: two_rounds called");
    }
    if target.has_busy_once() {
        let call = o.busy_once.as_ref().expect("busy_once observed");
        let r = ok(&who, "busy_once", &call.result);
        assert!(!r.is_error, "{who}: busy_once isError");
        assert_eq!(
            texts(r),
            ["served on retry 1 with state busy-1"],
            "{who}: busy_once result (the retry echoes the request state)"
        );
        assert!(
            call.input_rounds.is_empty(),
            "{who}: busy_once asked for input"
        );
    }

    // Close and a second connection with the same client.
    if let Err(e) = &o.close {
        panic!("{who}: close failed: {e} ({})", e.kind());
    }
    let again = match &o.reconnect {
        Ok(r) => r,
        Err(e) => panic!("{who}: second connection failed: {e} ({})", e.kind()),
    };
    assert_eq!(again.era, target.era, "{who}: second connection era");
    assert_eq!(
        again.version,
        target.version(),
        "{who}: second connection version"
    );
    assert_eq!(
        again.tools,
        expected.len(),
        "{who}: second connection tools"
    );
}

fn check_elicit(who: &str, want: ElicitExpectation, call: &ObservedCall) {
    match want {
        ElicitExpectation::Answered => {
            let r = ok(who, "elicit_name", &call.result);
            assert!(!r.is_error, "{who}: elicit_name isError: {:?}", r.content);
            assert_eq!(texts(r), ["Hello, Ada!"], "{who}: elicit_name result");
            let rounds: Vec<Vec<(&str, &str)>> = call
                .input_rounds
                .iter()
                .map(|r| r.iter().map(|(k, m)| (k.as_str(), m.as_str())).collect())
                .collect();
            assert_eq!(
                rounds,
                [[("user_name", "elicitation/create")]],
                "{who}: elicit_name input rounds"
            );
        }
        ElicitExpectation::Rpc(code) => {
            rpc_error(who, "elicit_name", &call.result, code);
            assert!(
                call.input_rounds.is_empty(),
                "{who}: legacy elicit_name asked for input"
            );
        }
        ElicitExpectation::IsError => {
            let r = ok(who, "elicit_name", &call.result);
            assert!(
                r.is_error,
                "{who}: elicit_name should be isError: {:?}",
                r.content
            );
            assert!(
                call.input_rounds.is_empty(),
                "{who}: legacy elicit_name asked for input"
            );
        }
    }
}

fn check_call(target: &Target, who: &str, name: &str, r: &Result<CallResult, Error>) {
    let readme = target.peer.readme_text();
    if name == "protocol_error" && target.protocol_error_is_rpc() {
        return rpc_error(who, name, r, -32602);
    }
    if name == "raise_exception" && target.exception_is_rpc() {
        return rpc_error(who, name, r, -32603);
    }
    let res = ok(who, name, r);
    assert_eq!(
        res.dropped_unknown, 0,
        "{who}: {name}: dropped unknown blocks"
    );
    assert_eq!(
        res.dropped_invalid, 0,
        "{who}: {name}: dropped invalid blocks"
    );
    let failing = matches!(name, "fail_tool" | "protocol_error" | "raise_exception");
    assert_eq!(res.is_error, failing, "{who}: {name}: isError");
    let c = &res.content;
    match name {
        "echo" => assert_eq!(texts(res), ["interop \u{2713} echo"], "{who}: echo"),
        "add" => {
            let sc: Value = serde_json::from_str(
                res.structured_content
                    .as_ref()
                    .unwrap_or_else(|| panic!("{who}: add: no structuredContent"))
                    .get(),
            )
            .unwrap();
            assert_eq!(
                sc["sum"].as_f64(),
                Some(42.0),
                "{who}: add structuredContent {sc}"
            );
            let text = texts(res).join("");
            let tv: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{who}: add text {text:?} is not JSON: {e}"));
            assert_eq!(tv["sum"].as_f64(), Some(42.0), "{who}: add text {text}");
        }
        "get_text" => assert_eq!(texts(res), ["plain text content"], "{who}: get_text"),
        "get_image" => {
            assert_eq!(c.len(), 1, "{who}: get_image blocks");
            assert_png(who, &c[0]);
        }
        "get_audio" => {
            assert_eq!(c.len(), 1, "{who}: get_audio blocks");
            assert_wav(who, &c[0]);
        }
        "get_embedded_resource" => {
            assert_eq!(c.len(), 2, "{who}: get_embedded_resource blocks");
            assert_readme_resource(who, &c[0], readme);
            match &c[1] {
                ContentBlock::Resource {
                    uri,
                    mime_type,
                    contents: ResourceContents::Blob(b),
                } => {
                    assert_eq!(uri, PIXEL_URI, "{who}: blob resource uri");
                    assert_eq!(mime_type.as_deref(), Some("image/png"), "{who}: blob mime");
                    assert!(
                        b.starts_with(PNG_MAGIC) && b.len() == PNG_LEN,
                        "{who}: blob bytes"
                    );
                }
                other => panic!("{who}: second embedded resource is {other:?}"),
            }
        }
        "get_resource_link" => {
            assert_eq!(c.len(), 1, "{who}: get_resource_link blocks");
            assert_link(who, &c[0]);
        }
        "get_mixed" => {
            assert_eq!(c.len(), 5, "{who}: get_mixed blocks: {c:?}");
            assert!(
                matches!(&c[0], ContentBlock::Text { text } if text == "mixed content follows"),
                "{who}: get_mixed text: {:?}",
                c[0]
            );
            assert_png(who, &c[1]);
            assert_wav(who, &c[2]);
            assert_readme_resource(who, &c[3], readme);
            assert_link(who, &c[4]);
        }
        "fail_tool" => assert_eq!(texts(res), [FAIL_TEXT], "{who}: fail_tool"),
        "protocol_error" => {
            let t = texts(res).join("");
            assert!(
                t.contains("protocol_error tool always fails"),
                "{who}: {name}: {t:?}"
            );
        }
        "raise_exception" => {
            // MCPServer hides the exception's message; the others pass it on.
            let want = match target.peer {
                Peer::PyMcp => "Error executing tool raise_exception",
                _ => "raise_exception tool always",
            };
            let t = texts(res).join("");
            assert!(t.contains(want), "{who}: {name}: {t:?}");
        }
        "noop_08" => assert_eq!(texts(res), ["noop_08 ok"], "{who}: noop_08"),
        other => panic!("{who}: no facts for {other}"),
    }
}

fn ok<'a>(who: &str, name: &str, r: &'a Result<CallResult, Error>) -> &'a CallResult {
    match r {
        Ok(c) => c,
        Err(e) => panic!("{who}: {name} failed: {e} ({})", e.kind()),
    }
}

fn rpc_error(who: &str, name: &str, r: &Result<CallResult, Error>, code: i64) {
    match r {
        Err(Error::Rpc(e)) => {
            assert_eq!(e.code, code, "{who}: {name}: JSON-RPC error code ({e})");
            assert_eq!(
                Error::Rpc(e.clone()).kind(),
                ErrorKind::ServerAnswered,
                "{who}: {name}: error kind"
            );
        }
        Err(e) => panic!(
            "{who}: {name}: expected JSON-RPC error {code}, got {e} ({})",
            e.kind()
        ),
        Ok(c) => panic!("{who}: {name}: expected JSON-RPC error {code}, got a result {c:?}"),
    }
}

/// The text of every text block, in order; panics on another block type.
fn texts(r: &CallResult) -> Vec<&str> {
    r.content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.as_str(),
            other => panic!("expected only text blocks, got {other:?}"),
        })
        .collect()
}

fn assert_png(who: &str, b: &ContentBlock) {
    match b {
        ContentBlock::Image { data, mime_type } => {
            assert_eq!(mime_type, "image/png", "{who}: image mime type");
            assert!(data.starts_with(PNG_MAGIC), "{who}: image is not a PNG");
            assert_eq!(data.len(), PNG_LEN, "{who}: image length");
        }
        other => panic!("{who}: expected an image block, got {other:?}"),
    }
}

fn assert_wav(who: &str, b: &ContentBlock) {
    match b {
        ContentBlock::Audio { data, mime_type } => {
            assert_eq!(mime_type, "audio/wav", "{who}: audio mime type");
            assert!(
                data.starts_with(b"RIFF") && data.get(8..12) == Some(b"WAVE"),
                "{who}: audio is not a WAV"
            );
            assert_eq!(data.len(), WAV_LEN, "{who}: audio length");
            assert_eq!(
                &data[44..],
                [128, 160, 192, 160, 128, 96, 64, 96],
                "{who}: samples"
            );
        }
        other => panic!("{who}: expected an audio block, got {other:?}"),
    }
}

fn assert_readme_resource(who: &str, b: &ContentBlock, text: &str) {
    match b {
        ContentBlock::Resource {
            uri,
            mime_type,
            contents: ResourceContents::Text(t),
        } => {
            assert_eq!(uri, README_URI, "{who}: embedded resource uri");
            assert_eq!(
                mime_type.as_deref(),
                Some("text/plain"),
                "{who}: resource mime"
            );
            assert_eq!(t, text, "{who}: embedded resource text");
        }
        other => panic!("{who}: expected the embedded readme, got {other:?}"),
    }
}

fn assert_link(who: &str, b: &ContentBlock) {
    match b {
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
        } => {
            assert_eq!(uri, README_URI, "{who}: resource link uri");
            assert_eq!(name, "readme", "{who}: resource link name");
            assert_eq!(mime_type.as_deref(), Some("text/plain"), "{who}: link mime");
        }
        other => panic!("{who}: expected a resource link, got {other:?}"),
    }
}
