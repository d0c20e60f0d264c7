//! What a server chooses to say reaches the terminal inert: `mcp-probe` prints no control
//! character, escape sequence or bidirectional override that a server put in an error message, a
//! tool's name or description, or a call's text, in text or in `--json` output; the JSON output
//! still decodes to the very strings the server sent.

mod support;

use serde_json::Value;
use support::{json_response, probe, result_msg, Reply, Req, Server, DISCOVER_OK};

/// Retitles the window, rings the bell, clears the screen, a C1 CSI sequence, a right-to-left
/// override, an isolate, and a carriage return that would write over the start of the line.
const HOSTILE: &str =
    "x\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\u{202e}gpj.exe\u{2066}\rmcp-probe: ok";

/// `HOSTILE` written inside a JSON string.
fn hostile_json() -> String {
    serde_json::to_string(HOSTILE).unwrap()
}

/// Whether `s` holds a character that a terminal would act on or that reorders the line.
fn acts_on_a_terminal(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
    })
}

fn assert_inert(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    if let Some(c) = acts_on_a_terminal(&s) {
        panic!("{what} holds {c:?} as itself: {s:?}");
    }
}

/// A modern server whose every answer carries `HOSTILE`: the tool's name and description, the
/// call's text, and, for the tool `fail`, a JSON-RPC error message.
fn hostile(req: &Req) -> Reply {
    let id = req.id();
    let h = hostile_json();
    let body = match req.rpc_method().as_str() {
        "server/discover" => result_msg(id, DISCOVER_OK),
        "tools/list" => result_msg(
            id,
            &format!(
                r#"{{"tools":[{{"name":"echo","description":{h},"inputSchema":{{"type":"object"}}}}]}}"#
            ),
        ),
        "tools/call" if String::from_utf8_lossy(&req.body).contains("\"fail\"") => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":{h}}}}}"#)
        }
        "tools/call" => result_msg(
            id,
            &format!(r#"{{"content":[{{"type":"text","text":{h}}}],"isError":false}}"#),
        ),
        _ => return Reply::Send(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_vec()),
    };
    Reply::Send(json_response(200, &body))
}

#[test]
fn a_control_sequence_error_message_is_printed_inert() {
    let server = Server::start(hostile);
    let url = server.url();
    let o = probe(&["--allow-loopback", "call", &url, "fail", "{}"]);
    assert_eq!(
        o.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_inert("stderr", &o.stderr);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // Shown, not dropped: each character is written as a visible escape.
    assert!(stderr.contains("\\u{1b}]0;owned\\u{7}"), "{stderr}");
    assert!(stderr.contains("\\u{202e}gpj.exe"), "{stderr}");
    // The server's text cannot start a line of its own.
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("mcp-probe"))
            .count(),
        1,
        "{stderr}"
    );

    let o = probe(&["--json", "--allow-loopback", "call", &url, "fail", "{}"]);
    assert_eq!(o.status.code(), Some(5));
    assert_inert("stdout", &o.stdout);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(HOSTILE),
        "the message decodes to what the server sent: {message:?}"
    );
}

#[test]
fn names_descriptions_and_text_are_printed_inert() {
    let server = Server::start(hostile);
    let url = server.url();
    for args in [
        vec!["--allow-loopback", "list", &url],
        vec!["--allow-loopback", "call", &url, "echo", "{}"],
    ] {
        let o = probe(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_inert("stdout", &o.stdout);
        assert_inert("stderr", &o.stderr);
    }
    let o = probe(&["--allow-loopback", "call", &url, "echo", "{}"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("\\u{9b}31m"));

    for args in [
        vec!["--json", "--allow-loopback", "list", &url],
        vec!["--json", "--allow-loopback", "call", &url, "echo", "{}"],
    ] {
        let o = probe(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_inert("stdout", &o.stdout);
        let doc: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
        let sent = doc["tools"][0]["description"]
            .as_str()
            .or(doc["content"][0]["text"].as_str())
            .unwrap();
        assert_eq!(sent, HOSTILE);
    }
}
