//! The `mcp-probe` binary against embedded loopback servers: exit codes and output shapes.

use std::process::{Command, Output};

use mcp_sansio_demo_server::{DemoServer, Eras, Options};
use serde_json::Value;

fn probe(args: &[&str]) -> Output {
    probe_env(args, None)
}

fn probe_env(args: &[&str], token: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-probe"));
    // RUST_LOG would print the library's spans on stderr, which these tests read.
    c.args(args)
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG")
        .env_remove("TRACEPARENT")
        .env_remove("TRACESTATE")
        .env_remove("BAGGAGE");
    if let Some(t) = token {
        c.env("MCP_BEARER_TOKEN", t);
    }
    c.output().expect("the binary runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("an exit code")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn error_type(o: &Output) -> String {
    json(o)["error"]["type"].as_str().unwrap_or("").to_owned()
}

fn server() -> DemoServer {
    DemoServer::start(Options::default().page_size(3)).unwrap()
}

#[test]
fn list_prints_every_tool_of_every_page() {
    let s = server();
    let o = probe(&["--json", "--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json(&o);
    assert_eq!(doc["protocol_version"], "2026-07-28");
    let names: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, mcp_sansio_demo_server::tools::BUILTIN_TOOLS);
    assert_eq!(doc["tools"][0]["description"], "Returns the given text.");
    assert_eq!(doc["tools"][0]["input_schema"]["required"][0], "text");
    assert_eq!(doc["refused"], serde_json::json!([]));
}

/// The whole tool definition. The schema's `Tool` has "`title?`", "`annotations?`
/// (ToolAnnotations)" whose members "are untrusted hints", "`outputSchema?`", "`_meta?`" and
/// "`icons?` (`Icon[]`: `src`, `mimeType?`, `sizes?: string[]`, `theme?`)": `--json list` prints
/// them per tool under `title`, `annotations`, `output_schema`, `icons` and `meta` when present,
/// icons only with `https:` or `data:` sources (the others absent, with a note); the text output
/// shows the title and the read-only and destructive hints.
#[test]
fn list_prints_the_whole_tool_definition() {
    let s = server();
    let o = probe(&["--json", "--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let doc = json(&o);
    let tool = |name: &str| {
        doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    let echo = tool("echo");
    assert_eq!(echo["title"], "Echo");
    assert_eq!(
        echo["annotations"],
        serde_json::json!({"readOnlyHint": true})
    );
    for absent in ["output_schema", "icons", "meta", "notes"] {
        assert!(echo.get(absent).is_none(), "{absent}: {echo}");
    }
    let add = tool("add");
    assert_eq!(add["output_schema"]["properties"]["sum"]["type"], "number");
    let image = tool("image");
    assert_eq!(
        image["icons"],
        serde_json::json!([{"src":"data:image/png;base64,iVBORw0KGgo=","mimeType":"image/png","sizes":["1x1"]}])
    );
    assert_eq!(
        image["meta"],
        serde_json::json!({"io.example/kind": "media"})
    );
    assert!(image.get("title").is_none() && image.get("annotations").is_none());
    let note = image["notes"][0].as_str().unwrap();
    assert!(
        note.starts_with("icon 1 dropped: src scheme \"http\""),
        "{note}"
    );
    let o = probe(&["--allow-loopback", "list", &s.url()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("  echo \"Echo\" [hints: read-only: yes] — Returns the given text."),
        "{text}"
    );
}

#[test]
fn list_of_a_legacy_server_reports_its_version() {
    let s = DemoServer::start(Options::default().eras(Eras::LegacyOnly)).unwrap();
    let o = probe(&["--json", "--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["protocol_version"], "2025-11-25");
    // The session was ended.
    assert_eq!(s.stats().sessions, 0);
    let o = probe(&["--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("protocol 2025-11-25 (legacy)"), "{text}");
    assert!(text.contains("9 tools in 1 page"), "{text}");
}

#[test]
fn call_prints_content_and_structured_content() {
    let s = server();
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &s.url(),
        "echo",
        r#"{"text":"hi there"}"#,
    ]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        json(&o),
        serde_json::json!({
            "content":[{"type":"text","text":"hi there"}],
            "is_error":false,
            "http_version":"HTTP/1.1"
        })
    );
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &s.url(),
        "add",
        r#"{"a":1.5,"b":2}"#,
    ]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        json(&o)["structured_content"],
        serde_json::json!({"sum":3.5})
    );
}

#[test]
fn every_block_kind_has_its_json_shape() {
    let s = server();
    let call = |tool: &str| {
        let o = probe(&["--json", "--allow-loopback", "call", &s.url(), tool]);
        assert_eq!(code(&o), 0);
        json(&o)["content"].clone()
    };
    let image = call("image");
    assert_eq!(image[0]["type"], "image");
    assert_eq!(image[0]["mime_type"], "image/png");
    assert!(image[0]["data"]
        .as_str()
        .unwrap()
        .starts_with("iVBORw0KGgo"));
    let audio = call("audio");
    assert_eq!(
        (audio[0]["type"].as_str(), audio[0]["mime_type"].as_str()),
        (Some("audio"), Some("audio/wav"))
    );
    assert!(audio[0]["data"].as_str().unwrap().starts_with("UklGR"));
    let resource = call("resource");
    assert_eq!(resource[0]["type"], "resource");
    assert_eq!(resource[0]["uri"], "demo://notes/readme.txt");
    assert_eq!(resource[0]["text"], "Embedded text resource.");
    assert_eq!(resource[1]["mime_type"], "application/octet-stream");
    assert_eq!(resource[1]["data"], "AAECZGVtbyBibG9i/w==");
    let link = call("resource_link");
    assert_eq!(
        link,
        serde_json::json!([{"type":"resource_link","uri":"demo://notes/readme.txt","mime_type":"text/plain","name":"readme.txt"}])
    );
}

#[test]
fn a_tool_error_result_is_a_success() {
    let s = server();
    let o = probe(&["--json", "--allow-loopback", "call", &s.url(), "fail"]);
    assert_eq!(code(&o), 0);
    assert_eq!(json(&o)["is_error"], true);
    let o = probe(&["--allow-loopback", "call", &s.url(), "fail"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("the tool reported an error"));
}

#[test]
fn an_unknown_tool_is_refused_by_the_server() {
    let s = server();
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &s.url(),
        "no_such_tool",
    ]);
    assert_eq!(code(&o), 5);
    assert_eq!(error_type(&o), "mcp_server_answered_error");
    assert!(json(&o)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("Unknown tool"));
    let o = probe(&["--allow-loopback", "call", &s.url(), "no_such_tool"]);
    assert_eq!(code(&o), 5);
    assert!(String::from_utf8_lossy(&o.stderr).contains("mcp_server_answered_error"));
}

#[test]
fn a_missing_or_wrong_token_is_an_authentication_failure() {
    let s = DemoServer::start(Options::default().bearer_token("tok-123")).unwrap();
    let url = s.url();
    let o = probe(&["--json", "--allow-loopback", "list", &url]);
    assert_eq!(code(&o), 4);
    assert_eq!(error_type(&o), "mcp_authentication_failed_error");
    let o = probe_env(&["--json", "--allow-loopback", "list", &url], Some("wrong"));
    assert_eq!(code(&o), 4);
    let o = probe_env(
        &["--json", "--allow-loopback", "list", &url],
        Some("tok-123"),
    );
    assert_eq!(code(&o), 0);
}

#[test]
fn loopback_is_refused_unless_allowed() {
    let s = server();
    let o = probe(&["--json", "list", &s.url()]);
    assert_eq!(code(&o), 3);
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
    assert_eq!(s.stats().connections_accepted, 0, "nothing was sent");
}

#[test]
fn a_closed_port_is_a_connection_failure() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--dial-timeout",
        "2",
        "list",
        &format!("http://127.0.0.1:{port}/mcp"),
    ]);
    assert_eq!(code(&o), 3);
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
}

#[test]
fn budgets_from_the_command_line_are_enforced() {
    let s = server();
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--max-pages",
        "2",
        "list",
        &s.url(),
    ]);
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--max-pages",
        "3",
        "list",
        &s.url(),
    ]);
    assert_eq!(code(&o), 0);
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--max-response-bytes",
        "100000",
        "call",
        &s.url(),
        "big",
    ]);
    assert_eq!(code(&o), 3);
}

#[test]
fn bad_usage_exits_with_2() {
    for args in [
        &[][..],
        &["list"],
        &["frobnicate", "x"],
        &["--nope", "list", "http://127.0.0.1:1/mcp"],
        &["--dial-timeout", "soon", "list", "http://127.0.0.1:1/mcp"],
        &["list", "not a url"],
        &["list", "ftp://127.0.0.1/mcp"],
    ] {
        let o = probe(args);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
    let o = probe(&["--json", "list"]);
    assert_eq!(code(&o), 2);
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
}

#[test]
fn bad_json_arguments_exit_with_2_before_connecting() {
    let s = server();
    for bad in ["{not json", "[1,2]", "42"] {
        let o = probe(&["--json", "--allow-loopback", "call", &s.url(), "echo", bad]);
        assert_eq!(code(&o), 2, "{bad}");
        assert_eq!(error_type(&o), "mcp_connection_failed_error");
    }
    assert_eq!(s.stats().connections_accepted, 0);
}

#[test]
fn progress_is_shown_on_stderr() {
    let s = server();
    let o = probe(&[
        "--allow-loopback",
        "call",
        &s.url(),
        "slow",
        r#"{"steps":3,"delay_ms":10}"#,
    ]);
    assert_eq!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1/3") && err.contains("3/3 step 3 of 3"),
        "{err}"
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "done after 3 steps\n");
    // With --json, stdout holds the document only and stderr stays quiet.
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &s.url(),
        "slow",
        r#"{"steps":2,"delay_ms":1}"#,
    ]);
    assert_eq!(code(&o), 0);
    assert!(o.stderr.is_empty());
    assert_eq!(json(&o)["content"][0]["text"], "done after 2 steps");
}

#[test]
fn verbose_prints_the_spans_of_the_work_item_on_stderr_and_no_secret() {
    let s = DemoServer::start(Options::default().bearer_token("tok-verbose-123")).unwrap();
    let url = s.url();
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    let secret_text = "argument-text-never-printed-93c1";
    let arguments = format!(r#"{{"text":"{secret_text}"}}"#);
    let o = probe_env(
        &["-v", "--allow-loopback", "call", &url, "echo", &arguments],
        Some("tok-verbose-123"),
    );
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // The result is printed on stdout as without -v.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{secret_text}\n")
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // One line per span as it closes: the connect, the call (with its tool and outcome), their
    // exchanges, the close.
    for needle in [
        "connect{",
        "call{",
        "close{",
        "exchange{",
        &format!("origin=http://127.0.0.1:{port}"),
        "tool=\"echo\"",
        "rpc=\"tools/call\"",
        "outcome=\"ok\"",
        "protocol_version=\"2026-07-28\"",
        "http_version=\"HTTP/1.1\"",
    ] {
        assert!(err.contains(needle), "{needle} not in\n{err}");
    }
    assert!(!err.contains(secret_text), "{err}");
    assert!(!err.contains("tok-verbose-123"), "{err}");
    // RUST_LOG chooses instead: an unrelated target prints nothing.
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-probe"));
    let o = c
        .args(["-v", "--allow-loopback", "call", &url, "echo", &arguments])
        .env("MCP_BEARER_TOKEN", "tok-verbose-123")
        .env("RUST_LOG", "some_other_crate=trace")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn help_and_version_exit_with_0() {
    let o = probe(&["--help"]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("mcp-probe [OPTIONS] list <URL>") && text.contains("MCP_BEARER_TOKEN"));
    let o = probe(&["--version"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("mcp-probe "));
}

#[test]
fn demo_runs_offline_and_exits_with_0() {
    let o = probe(&["demo"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("era modern, version 2026-07-28"), "{out}");
    assert!(out.contains("era legacy, version 2025-11-25"), "{out}");
    assert!(out.contains("5/5 step 5 of 5"), "{out}");
    assert!(out.contains("requests on"), "{out}");
    // A call that becomes a task (SEP-2663): its status lines, then the tool's result.
    assert!(out.contains("call slow_count"), "{out}");
    assert!(
        out.contains("task input_required: waiting for confirmation"),
        "{out}"
    );
    assert!(out.contains("task completed"), "{out}");
    assert!(out.contains("every step succeeded"), "{out}");
}

#[test]
fn a_token_unfit_for_a_header_is_a_configuration_error() {
    let s = server();
    let o = probe_env(
        &["--json", "--allow-loopback", "list", &s.url()],
        Some("a\nb"),
    );
    assert_eq!(code(&o), 2);
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
    assert_eq!(s.stats().connections_accepted, 0);
}

#[test]
fn the_call_timeout_ends_a_slow_call() {
    let s = server();
    let started = std::time::Instant::now();
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "--call-timeout",
        "0.3",
        "call",
        &s.url(),
        "slow",
        r#"{"steps":100,"delay_ms":50}"#,
    ]);
    assert_eq!(code(&o), 3);
    assert_eq!(error_type(&o), "mcp_connection_failed_error");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn refused_entries_are_listed_with_their_reason() {
    let s = DemoServer::start(Options::default().broken_tools(true)).unwrap();
    let o = probe(&["--json", "--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0);
    let doc = json(&o);
    assert_eq!(doc["tools"].as_array().unwrap().len(), 9);
    let refused = doc["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 2);
    assert_eq!(
        (refused[0]["index"].as_u64(), refused[0]["name"].as_str()),
        (Some(9), Some("has space"))
    );
    assert_eq!(
        (refused[1]["index"].as_u64(), refused[1]["name"].as_str()),
        (Some(10), Some("no_schema"))
    );
    assert!(refused
        .iter()
        .all(|r| !r["reason"].as_str().unwrap().is_empty()));
    let o = probe(&["--allow-loopback", "list", &s.url()]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("2 entries refused") && text.contains("#9 has space"),
        "{text}"
    );
}

#[test]
fn record_writes_a_transcript_that_replays_against_the_core() {
    use mcp_sansio_transcript::{replay, Split, Transcript};
    let s =
        DemoServer::start(Options::default().page_size(4).bearer_token("s3cret-token")).unwrap();
    let dir = std::env::temp_dir().join(format!("mcp-probe-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("echo.transcript");
    let file_arg = file.to_str().unwrap();
    let args = [
        "--json",
        "--allow-loopback",
        "--record",
        file_arg,
        "call",
        &s.url(),
        "echo",
        r#"{"text":"recorded"}"#,
    ];
    let o = probe_env(&args, Some("s3cret-token"));
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["content"][0]["text"], "recorded");

    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("s3cret-token"), "the token is redacted");
    assert!(text.contains("<redacted>"));
    let transcript = Transcript::parse(&text).unwrap();
    let outcome = transcript.outcome();
    assert!(
        outcome.iter().any(|e| e.to_string().contains("recorded")),
        "{outcome:?}"
    );
    // The recorded session replays against the core with the same requests and outcome, whole
    // and one byte at a time.
    for split in [Split::Recorded, Split::BYTE_BY_BYTE] {
        let r = replay(&transcript, split).unwrap();
        assert_eq!(r.sends, transcript.sends(), "{split:?}");
        assert_eq!(r.outcome(), outcome, "{split:?}");
        r.check(&transcript).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn record_to_an_unwritable_path_is_a_usage_error() {
    let s = server();
    let o = probe(&[
        "--allow-loopback",
        "--record",
        "/nonexistent-dir/t.transcript",
        "list",
        &s.url(),
    ]);
    assert_eq!(code(&o), 2);
    assert_eq!(s.stats().connections_accepted, 0, "nothing was sent");
}

/// `--record FILE` never writes through a symbolic link: a link planted at FILE is refused with
/// an error naming it, before anything is sent, and the file it points to is left as it was.
#[cfg(unix)]
#[test]
fn record_refuses_a_symlink_at_file_and_leaves_its_target_untouched() {
    let s = server();
    let dir = std::env::temp_dir().join(format!("mcp-probe-record-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("precious");
    std::fs::write(&target, "do not overwrite").unwrap();
    let file = dir.join("t.transcript");
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let o = probe(&[
        "--allow-loopback",
        "--record",
        file.to_str().unwrap(),
        "list",
        &s.url(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "do not overwrite"
    );
    assert!(std::fs::symlink_metadata(&file)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(s.stats().connections_accepted, 0, "nothing was sent");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The transcript holds tool arguments and results: `--record` leaves it readable and writable
/// by its owner only (0600), also when a file with wider permissions was there before.
#[cfg(unix)]
#[test]
fn record_writes_its_file_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let s = server();
    let dir = std::env::temp_dir().join(format!("mcp-probe-record-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = dir.join("fresh.transcript");
    let old = dir.join("old.transcript");
    std::fs::write(&old, "an older transcript").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    for file in [&fresh, &old] {
        let args = [
            "--allow-loopback",
            "--record",
            file.to_str().unwrap(),
            "call",
            &s.url(),
            "echo",
            r#"{"text":"private"}"#,
        ];
        let o = probe(&args);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains("private"), "{text}");
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{}: {mode:o}", file.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cold_list_uses_one_tcp_connection() {
    // Four pages of three tools: server/discover and four tools/list requests, all on the
    // socket the discovery opened, in a fresh process (no pool, no era hint).
    let s = DemoServer::start(Options::default().page_size(3).filler_tools(3, 64)).unwrap();
    let o = probe(&["--json", "--allow-loopback", "list", &s.url()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["tools"].as_array().unwrap().len(), 12);
    let stats = s.stats();
    assert_eq!(stats.requests_served, 5);
    assert_eq!(stats.connections_accepted, 1, "one work item, one socket");
    // A call (discover, tools/call) keeps one socket too.
    let o = probe(&[
        "--json",
        "--allow-loopback",
        "call",
        &s.url(),
        "echo",
        r#"{"text":"x"}"#,
    ]);
    assert_eq!(code(&o), 0);
    let stats = s.stats();
    assert_eq!(stats.requests_served, 7);
    assert_eq!(stats.connections_accepted, 2);
    s.shutdown();
}

/// OpenTelemetry's environment carrier (`context/env-carriers.md`): "the following translated
/// standard environment variable names SHOULD be used: … `TRACEPARENT` … `TRACESTATE` …
/// `BAGGAGE`"; "Child processes SHOULD extract context from environment variables at
/// startup". The demo server sees the trace id of `TRACEPARENT` in every request's `_meta`; a
/// malformed `TRACEPARENT` is ignored with a warning (the run succeeds, nothing is sent) and
/// its value is not printed.
#[test]
fn the_trace_context_of_the_environment_reaches_the_server() {
    let s = server();
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args([
            "--allow-loopback",
            "call",
            &s.url(),
            "echo",
            r#"{"text":"hi"}"#,
        ])
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG")
        .env("TRACEPARENT", tp)
        .env("TRACESTATE", "rojo=00f067aa0ba902b7")
        .env("BAGGAGE", "job=nightly-42")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let seen = s.trace_contexts();
    let methods: Vec<&str> = seen.iter().map(|t| t.method.as_str()).collect();
    assert_eq!(methods, ["server/discover", "tools/call"], "{seen:?}");
    for t in &seen {
        assert_eq!(t.trace_id(), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
        assert_eq!(t.tracestate.as_deref(), Some("rojo=00f067aa0ba902b7"));
        assert_eq!(t.baggage.as_deref(), Some("job=nightly-42"));
    }

    let bad = DemoServer::start(Options::default()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-probe"))
        .args(["--allow-loopback", "list", &bad.url()])
        .env_remove("MCP_BEARER_TOKEN")
        .env_remove("RUST_LOG")
        .env("TRACEPARENT", "00-NOT-A-TRACE-ID-01")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 0, "{err}");
    assert!(err.contains("TRACEPARENT ignored"), "{err}");
    assert!(!err.contains("NOT-A-TRACE-ID"), "{err}");
    assert!(bad.trace_contexts().is_empty());
}
