//! The demo server driven by the core state machine over plain sockets.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;

use mcp_sansio::ContentBlock;
use mcp_sansio::{Config, Era, ErrorKind, Event};
use mcp_sansio_demo_server::{DemoServer, Eras, Options, ResponseMode};
use support::Driver;

fn driver(server: &DemoServer) -> Driver {
    Driver::for_url(&server.url(), server.addr())
}

fn connected(event: Event) -> (Era, String, String) {
    match event {
        Event::Connected {
            era,
            version,
            server_info,
            ..
        } => (
            era,
            version,
            server_info.map(|s| s.name).unwrap_or_default(),
        ),
        other => panic!("not connected: {other:?}"),
    }
}

fn texts(event: Event) -> (Vec<String>, bool) {
    match event {
        Event::CallFinished(r) => (
            r.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect(),
            r.is_error,
        ),
        other => panic!("no call result: {other:?}"),
    }
}

#[test]
fn modern_connect_list_every_page_and_call() {
    let server = DemoServer::start(Options::default().page_size(4).filler_tools(10, 600)).unwrap();
    let mut d = driver(&server);
    let (era, version, name) = connected(d.connect());
    assert_eq!(era, Era::Modern);
    assert_eq!(version, "2026-07-28");
    assert_eq!(name, "mcp-sansio-demo-server");
    match d.list() {
        Event::ToolsListed(c) => {
            assert_eq!(c.tools.len(), 19);
            assert_eq!(c.pages, 5);
            assert!(c.refused.is_empty());
            assert_eq!(c.tools[0].name(), "echo");
            assert_eq!(c.tools[18].name(), "filler_00009");
            assert!(c.tools[18].input_schema().len() >= 600);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        texts(d.call("echo", r#"{"text":"héllo"}"#)),
        (vec!["héllo".into()], false)
    );
    match d.call("add", r#"{"a":2,"b":40}"#) {
        Event::CallFinished(r) => {
            assert_eq!(r.structured_content.unwrap().get(), r#"{"sum":42}"#);
            assert!(!r.is_error);
        }
        other => panic!("{other:?}"),
    }
    // discover + 5 pages + 2 calls; the server counts every socket the client opened.
    let stats = server.stats();
    assert_eq!(stats.requests_served, 8);
    assert_eq!(stats.connections_accepted, d.sockets_opened as u64);
    assert!(
        d.sockets_opened < 8,
        "sockets are kept alive: {}",
        d.sockets_opened
    );
    assert_eq!(stats.sessions, 0);
}

#[test]
fn legacy_connect_list_call_and_close() {
    let server = DemoServer::start(Options::default().eras(Eras::LegacyOnly).page_size(5)).unwrap();
    let mut d = driver(&server);
    let (era, version, _) = connected(d.connect());
    assert_eq!((era, version.as_str()), (Era::Legacy, "2025-11-25"));
    assert!(d.conn.session_id().unwrap().starts_with("demo-session-"));
    assert_eq!(server.stats().sessions, 1);
    match d.list() {
        Event::ToolsListed(c) => {
            assert_eq!(c.tools.len(), 9);
            assert_eq!(c.pages, 2);
        }
        other => panic!("{other:?}"),
    }
    assert!(texts(d.call("fail", "{}")).1);
    assert!(matches!(d.close(), Event::Closed));
    assert_eq!(server.stats().sessions, 0);
    // probe (400), initialize, initialized, 2 pages, call, DELETE
    assert_eq!(server.stats().requests_served, 7);
}

#[test]
fn both_eras_serve_a_legacy_only_client() {
    let server = DemoServer::start(Options::default()).unwrap();
    let mut config = Config::new(&server.url()).unwrap();
    config.modern_versions.clear();
    config.legacy_versions = vec!["2025-06-18".into()];
    let mut d = Driver::new(config, server.addr());
    let (era, version, _) = connected(d.connect());
    assert_eq!((era, version.as_str()), (Era::Legacy, "2025-06-18"));
    assert_eq!(
        texts(d.call("echo", r#"{"text":"x"}"#)).0,
        vec!["x".to_owned()]
    );
}

#[test]
fn modern_only_refuses_a_legacy_only_client() {
    let server = DemoServer::start(Options::default().eras(Eras::ModernOnly)).unwrap();
    let mut config = Config::new(&server.url()).unwrap();
    config.modern_versions.clear();
    let mut d = Driver::new(config, server.addr());
    match d.connect() {
        Event::Failed { .. } => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn sse_mode_answers_with_event_streams_and_progress() {
    for (eras, era) in [(Eras::Both, Era::Modern), (Eras::LegacyOnly, Era::Legacy)] {
        let options = Options::default()
            .eras(eras)
            .response_mode(ResponseMode::Sse)
            .page_size(2);
        let server = DemoServer::start(options).unwrap();
        let mut d = driver(&server);
        assert_eq!(connected(d.connect()).0, era);
        assert!(matches!(d.list(), Event::ToolsListed(c) if c.tools.len() == 9 && c.pages == 5));
        let (t, err) = texts(d.call("slow", r#"{"steps":4,"delay_ms":5}"#));
        assert_eq!((t, err), (vec!["done after 4 steps".to_owned()], false));
        assert_eq!(
            d.progress(),
            vec![
                (1.0, Some(4.0)),
                (2.0, Some(4.0)),
                (3.0, Some(4.0)),
                (4.0, Some(4.0))
            ]
        );
        let r = raw_exchange(&server, &format!("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{}", INIT.len(), INIT));
        assert!(
            r.to_ascii_lowercase()
                .contains("content-type: text/event-stream"),
            "{r}"
        );
        assert!(
            r.to_ascii_lowercase()
                .contains("transfer-encoding: chunked"),
            "{r}"
        );
    }
}

#[test]
fn json_mode_upgrades_the_slow_tool_for_legacy_sessions_too() {
    let server = DemoServer::start(Options::default().eras(Eras::LegacyOnly)).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    let (t, _) = texts(d.call("slow", r#"{"steps":2,"delay_ms":1}"#));
    assert_eq!(t, vec!["done after 2 steps".to_owned()]);
    assert_eq!(d.progress().len(), 2);
}

#[test]
fn every_content_block_kind_arrives() {
    let server = DemoServer::start(Options::default().big_text_bytes(100_000)).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    let blocks = |e: Event| match e {
        Event::CallFinished(r) => {
            assert_eq!((r.dropped_invalid, r.dropped_unknown), (0, 0));
            r.content
        }
        other => panic!("{other:?}"),
    };
    match &blocks(d.call("image", "{}"))[..] {
        [ContentBlock::Image { data, mime_type }] => {
            assert_eq!(data.as_slice(), &mcp_sansio_demo_server::tools::PNG_1X1[..]);
            assert_eq!(mime_type, "image/png");
        }
        other => panic!("{other:?}"),
    }
    match &blocks(d.call("audio", "{}"))[..] {
        [ContentBlock::Audio { data, mime_type }] => {
            assert_eq!(*data, mcp_sansio_demo_server::tools::wav_bytes());
            assert_eq!(mime_type, "audio/wav");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(blocks(d.call("resource", "{}")).len(), 2);
    assert!(matches!(
        &blocks(d.call("resource_link", "{}"))[..],
        [ContentBlock::ResourceLink { .. }]
    ));
    let (t, _) = texts(d.call("big", "{}"));
    assert_eq!(t[0].len(), 100_000);
}

#[test]
fn an_unknown_tool_is_a_json_rpc_error() {
    let server = DemoServer::start(Options::default()).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    match d.call("nope", "{}") {
        Event::Failed { error, .. } => {
            assert_eq!(error.kind(), ErrorKind::ServerAnswered);
            assert!(error.to_string().contains("Unknown tool: nope"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_or_wrong_bearer_token_gets_401() {
    let server = DemoServer::start(Options::default().bearer_token("s3cret")).unwrap();
    let mut d = driver(&server);
    match d.connect() {
        Event::Failed { error, .. } => assert_eq!(error.kind(), ErrorKind::AuthenticationFailed),
        other => panic!("{other:?}"),
    }
    let config = Config::new(&server.url())
        .unwrap()
        .with_bearer_token("wrong");
    let mut d = Driver::new(config, server.addr());
    assert!(
        matches!(d.connect(), Event::Failed { error, .. } if error.kind() == ErrorKind::AuthenticationFailed)
    );
    let config = Config::new(&server.url())
        .unwrap()
        .with_bearer_token("s3cret");
    let mut d = Driver::new(config, server.addr());
    assert_eq!(connected(d.connect()).0, Era::Modern);

    let raw = raw_exchange(
        &server,
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    assert!(raw.starts_with("HTTP/1.1 401 "), "{raw}");
    assert!(
        raw.to_ascii_lowercase()
            .contains("www-authenticate: bearer resource_metadata="),
        "{raw}"
    );
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn raw_exchange(server: &DemoServer, request: &str) -> String {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn modern_requests_are_checked_against_their_headers() {
    let server = DemoServer::start(Options::default()).unwrap();
    let body = |v: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{v}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let post = |headers: &str, body: &str| {
        raw_exchange(
            &server,
            &format!("POST /mcp HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()),
        )
    };
    let ok = post(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
        &body("2026-07-28"),
    );
    assert!(
        ok.starts_with("HTTP/1.1 200 ") && ok.contains(r#""resultType":"complete""#),
        "{ok}"
    );
    let r = post(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n",
        &body("2026-07-28"),
    );
    assert!(
        r.starts_with("HTTP/1.1 400 ") && r.contains("-32020"),
        "{r}"
    );
    let r = post("Mcp-Method: tools/list\r\n", &body("2026-07-28"));
    assert!(
        r.starts_with("HTTP/1.1 400 ") && r.contains("-32020"),
        "{r}"
    );
    let r = post(
        "MCP-Protocol-Version: 2099-01-01\r\nMcp-Method: tools/list\r\n",
        &body("2099-01-01"),
    );
    assert!(
        r.starts_with("HTTP/1.1 400 ") && r.contains("-32022"),
        "{r}"
    );
    assert!(
        r.contains(r#""requested":"2099-01-01""#) && r.contains(r#""supported":["2026-07-28","#),
        "{r}"
    );
    let r = raw_exchange(
        &server,
        "GET /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 405 "), "{r}");
}

#[test]
fn many_idle_keep_alive_connections_are_held_and_shutdown_closes_them() {
    let server = DemoServer::start(Options::default()).unwrap();
    let sockets: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.stats().connections_open < 200 {
        assert!(std::time::Instant::now() < deadline, "{:?}", server.stats());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The server still answers while they idle.
    let mut d = driver(&server);
    connected(d.connect());
    assert_eq!(server.stats().connections_accepted, 201);
    server.shutdown();
    let mut s = &sockets[0];
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut b = [0u8; 1];
    assert_eq!(
        s.read(&mut b).unwrap_or(0),
        0,
        "the socket is closed at shutdown"
    );
}

#[test]
fn without_keep_alive_every_answer_closes_its_connection() {
    let server = DemoServer::start(Options::default().keep_alive(false)).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    assert!(matches!(d.list(), Event::ToolsListed(_)));
    assert_eq!(
        texts(d.call("echo", r#"{"text":"a"}"#)).0,
        vec!["a".to_owned()]
    );
    let stats = server.stats();
    assert_eq!(stats.requests_served, 3);
    assert_eq!(stats.connections_accepted, 3);
}

#[test]
fn a_stream_closed_early_counts_as_cancelled() {
    let server = DemoServer::start(Options::default()).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"steps":50,"delay_ms":20},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let req = format!("POST /mcp HTTP/1.1\r\nHost: x\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).unwrap();
    let mut first = [0u8; 512];
    let n = s.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200 "));
    drop(s);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while server.stats().streams_cancelled == 0 {
        assert!(std::time::Instant::now() < deadline, "{:?}", server.stats());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(server.stats().streams_cancelled, 1);
}

#[test]
fn a_large_catalog_arrives_in_pages_of_the_expected_size() {
    let server =
        DemoServer::start(Options::default().page_size(10).filler_tools(200, 8000)).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    match d.list() {
        Event::ToolsListed(c) => {
            assert_eq!(c.tools.len(), 209);
            assert_eq!(c.pages, 21);
            let page: usize = c.tools[10..20].iter().map(|t| t.input_schema().len()).sum();
            assert!((80_000..100_000).contains(&page), "{page}");
        }
        other => panic!("{other:?}"),
    }
    assert!(d.conn.bytes_read() > 1_600_000, "{}", d.conn.bytes_read());
}

/// Sends one request on a fresh connection; returns the status, the session header and the body.
fn post(
    server: &DemoServer,
    method: &str,
    headers: &str,
    body: &str,
) -> (u16, Option<String>, String) {
    let raw = raw_exchange(
        server,
        &format!("{method} /mcp HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()),
    );
    let (head, body) = raw.split_once("\r\n\r\n").expect("a complete response");
    let status = head[9..12].parse().unwrap();
    let session = head.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("mcp-session-id: ")
            .map(|_| l[16..].to_owned())
    });
    (status, session, body.to_owned())
}

#[test]
fn legacy_sessions_negotiate_live_and_end() {
    let server = DemoServer::start(Options::default().eras(Eras::LegacyOnly)).unwrap();
    let init = |v: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
    };
    let (status, session, body) = post(&server, "POST", "", &init("2099-01-01"));
    assert_eq!(status, 200);
    assert!(body.contains(r#""protocolVersion":"2025-11-25""#), "{body}");
    let (_, _, body) = post(&server, "POST", "", &init("2024-11-05"));
    assert!(body.contains(r#""protocolVersion":"2024-11-05""#), "{body}");
    let session = session.expect("a session id");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(post(&server, "POST", "", list).0, 400);
    assert_eq!(
        post(&server, "POST", "Mcp-Session-Id: nope\r\n", list).0,
        404
    );
    let with = format!("Mcp-Session-Id: {session}\r\n");
    let (status, _, body) = post(&server, "POST", &with, list);
    assert_eq!(status, 200);
    assert!(
        body.contains(r#""name":"echo""#) && !body.contains("resultType"),
        "{body}"
    );
    let wrong_version = format!("{with}MCP-Protocol-Version: 2025-06-18\r\n");
    assert_eq!(post(&server, "POST", &wrong_version, list).0, 400);
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(&server, "POST", &with, note).0, 202);
    assert_eq!(server.stats().sessions, 2);
    assert_eq!(post(&server, "DELETE", &with, "").0, 200);
    assert_eq!(post(&server, "POST", &with, list).0, 404);
    assert_eq!(server.stats().sessions, 1);
}

#[test]
fn the_probe_of_each_server_kind_is_answered_like_real_servers() {
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n";
    let legacy = DemoServer::start(Options::default().eras(Eras::LegacyOnly)).unwrap();
    let (status, _, body) = post(&legacy, "POST", headers, discover);
    assert_eq!(status, 400);
    assert!(body.contains("-32000"), "{body}");
    let modern = DemoServer::start(Options::default().eras(Eras::ModernOnly)).unwrap();
    let (status, _, body) = post(&modern, "POST", headers, discover);
    assert_eq!(status, 200);
    assert!(
        body.contains(r#""supportedVersions":["2026-07-28"]"#),
        "{body}"
    );
    let (status, _, body) = post(&modern, "POST", "", INIT);
    assert_eq!(status, 404);
    assert!(body.contains("-32601"), "{body}");
    assert_eq!(post(&modern, "DELETE", "Mcp-Session-Id: x\r\n", "").0, 405);
}

#[test]
fn broken_tools_are_refused_by_the_client() {
    let server =
        DemoServer::start(Options::default().broken_tools(true).filler_tools(1, 100)).unwrap();
    let mut d = driver(&server);
    connected(d.connect());
    match d.list() {
        Event::ToolsListed(c) => {
            assert_eq!(c.tools.len(), 10);
            assert_eq!(c.tools[9].name(), "filler_00000");
            let refused: Vec<(usize, Option<&str>)> = c
                .refused
                .iter()
                .map(|r| (r.index, r.name.as_deref()))
                .collect();
            assert_eq!(
                refused,
                vec![(9, Some("has space")), (10, Some("no_schema"))]
            );
        }
        other => panic!("{other:?}"),
    }
}
