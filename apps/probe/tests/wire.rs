//! The `mcp-probe` binary against small in-test servers on 127.0.0.1 that record what arrives on
//! the wire: argument bytes, deadlines, a private CA, and the messages of its errors.

mod support;

use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{modern, probe, PrivateCa, Reply, Req, Server};

fn code(o: &Output) -> i32 {
    o.status.code().expect("an exit code")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// A scratch directory of this test process, removed by the test that made it.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-probe-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn arguments_reach_the_server_byte_for_byte() {
    let server = Server::start(modern);
    // Numbers beyond f64, a decimal that a number type would shorten, escapes a parser would
    // decode, and spacing a serializer would drop.
    let arguments = r#"{"a":[1e400], "b":1.0,"c":"caf\u00e9","d":-0.000000000000000000001e-400}"#;
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &server.url(),
        "echo",
        arguments,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json(&o)["content"][0]["text"], "ok");
    let calls: Vec<Req> = server
        .requests()
        .into_iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    let body = String::from_utf8(calls[0].body.clone()).unwrap();
    let expected = format!(r#""arguments":{arguments}"#);
    assert!(
        body.contains(&expected),
        "the arguments arrived changed:\n{body}"
    );
}

#[test]
fn arguments_that_are_not_one_object_are_refused_before_connecting() {
    let server = Server::start(modern);
    for bad in [r#"{"a":1"#, "[1e400]", "1e400", r#"{"a":1} {}"#, "nul"] {
        let o = probe(&["--allow-loopback", "call", &server.url(), "echo", bad]);
        assert_eq!(code(&o), 2, "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("arguments"), "{bad}: {}", stderr(&o));
    }
    assert_eq!(server.accepted(), 0, "nothing was sent");
}

#[test]
fn the_request_timeout_ends_a_handshake_that_is_never_answered() {
    let server = Server::start(|_: &Req| Reply::Never);
    let started = Instant::now();
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--request-timeout",
        "2",
        "list",
        &server.url(),
    ]);
    let took = started.elapsed();
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["error"]["type"], "mcp_connection_failed_error");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("request_time_ms (limit 2000)"),
        "{message}"
    );
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert_eq!(server.methods(), ["server/discover"]);
}

/// A modern server whose listing has three pages, each answer 0.4 s late.
fn slow_pages(r: &Req) -> Reply {
    std::thread::sleep(Duration::from_millis(400));
    if r.rpc_method() != "tools/list" {
        return modern(r);
    }
    let cursor = String::from_utf8_lossy(&r.body).into_owned();
    let page = if cursor.contains(r#""cursor":"3""#) {
        r#"{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}"#
    } else if cursor.contains(r#""cursor":"2""#) {
        r#"{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"3"}"#
    } else {
        r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#
    };
    Reply::Send(support::json_response(
        200,
        &support::result_msg(r.id(), page),
    ))
}

#[test]
fn the_request_timeout_bounds_each_exchange_not_the_listing() {
    // Four exchanges of 0.4 s take 1.6 s in all, more than the per-exchange deadline of 1 s,
    // which each of them keeps.
    let server = Server::start(slow_pages);
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--request-timeout",
        "1",
        "list",
        &server.url(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(json(&o)["tools"].as_array().unwrap().len(), 3);
    assert_eq!(server.requests().len(), 4);
    // Below one answer's delay, the first exchange already fails.
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--request-timeout",
        "0.2",
        "list",
        &server.url(),
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let doc = json(&o);
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("request_time_ms (limit 200)"), "{message}");
}

#[test]
fn help_says_which_flag_bounds_what() {
    let o = probe(&["--help"]);
    assert_eq!(code(&o), 0);
    let help = String::from_utf8(o.stdout).unwrap();
    for (flag, says) in [
        ("--dial-timeout <S>", "seconds to open one connection"),
        ("--request-timeout <S>", "seconds for each exchange"),
        ("--list-timeout <S>", "seconds for a whole listing"),
        ("--call-timeout <S>", "seconds for a whole tool call"),
        ("--ca-cert <FILE>", "also trust the pem certificate"),
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(flag))
            .unwrap_or_else(|| panic!("{flag:?} missing from\n{help}"));
        assert!(
            line.to_lowercase().contains(says),
            "{flag:?} does not say {says:?}: {line}"
        );
    }
}

#[test]
fn a_server_behind_a_private_ca_is_listed_with_its_ca_certificate() {
    let ca = PrivateCa::new();
    let server = Server::start_tls(ca.server.clone(), modern);
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let dir = scratch("ca-cert");
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca.ca_pem).unwrap();
    let ca_arg = ca_file.to_str().unwrap();

    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--ca-cert",
        ca_arg,
        "list",
        &url,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["protocol_version"], "2026-07-28");
    assert_eq!(doc["tools"][0]["name"], "echo");
    assert_eq!(server.methods(), ["server/discover", "tools/list"]);
    assert_eq!(server.accepted(), 1);

    // Without it, the certificate is not trusted: the handshake fails and nothing is sent.
    let o = probe(&["--json", "--allow-loopback", "list", &url]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let message = json(&o)["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("TLS failed"), "{message}");
    assert_eq!(server.methods().len(), 2, "nothing more was sent");

    // Another CA's certificate does not help either.
    let other = dir.join("other.pem");
    std::fs::write(&other, PrivateCa::new().ca_pem).unwrap();
    let o = probe(&[
        "--allow-loopback",
        "--ca-cert",
        other.to_str().unwrap(),
        "list",
        &url,
    ]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(server.methods().len(), 2, "nothing more was sent");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_ca_certificate_file_is_a_usage_error_naming_the_file() {
    let server = Server::start(modern);
    let dir = scratch("bad-ca");
    let not_pem = dir.join("not.pem");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let missing = dir.join("missing.pem");
    for (file, says) in [
        (&not_pem, "holds no PEM certificate"),
        (&missing, "cannot read the CA certificate file"),
    ] {
        let path = file.to_str().unwrap();
        let o = probe(&[
            "--json",
            "--allow-loopback",
            "--ca-cert",
            path,
            "list",
            &server.url(),
        ]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        let message = json(&o)["error"]["message"].as_str().unwrap().to_owned();
        assert!(
            message.contains(says) && message.contains(path),
            "{message}"
        );
    }
    assert_eq!(server.accepted(), 0, "nothing was sent");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn error_messages_say_each_thing_once() {
    let o = probe(&["list", "ftp://127.0.0.1/mcp"]);
    assert_eq!(code(&o), 2);
    let first = stderr(&o).lines().next().unwrap_or("").to_owned();
    assert_eq!(
        first,
        r#"mcp-probe: invalid endpoint URL: the scheme is not http or https (given "ftp://127.0.0.1/mcp")"#
    );

    let server = Server::start(modern);
    let o = probe(&["list", &server.url()]);
    assert_eq!(code(&o), 3);
    assert_eq!(
        stderr(&o).trim_end(),
        "mcp-probe: transport: address refused by policy: 127.0.0.1 (loopback) \
         (mcp_connection_failed_error)"
    );
    assert_eq!(server.accepted(), 0);
}
