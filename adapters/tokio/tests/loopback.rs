//! The adapter against in-test servers on 127.0.0.1.

mod support;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use mcp_sansio::ContentBlock;
use mcp_sansio::{Config, Era, Error, ErrorKind};
use mcp_sansio::{TransportError, TransportErrorKind};
use mcp_sansio_net::{AddressPolicy, StaticResolver};
use mcp_sansio_test_support::adapter_tests::elicitation::Defaults;
use mcp_sansio_tokio::{CallObserver, Client, Session};
use support::*;

/// How late past its budget an operation may end: timers, scheduling and the last read on a
/// shared, loaded machine. The budget itself is enforced by the core.
const GRACE: Duration = Duration::from_millis(500);

fn transport_kind(e: &Error) -> Option<TransportErrorKind> {
    match e {
        Error::Transport(TransportError { kind, .. }) => Some(*kind),
        _ => None,
    }
}

#[tokio::test]
async fn connects_lists_and_calls() {
    let server = Server::start(mcp).await;
    let client = loopback_client();
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.version(), "2026-07-28");
    assert_eq!(s.era(), Era::Modern);
    assert_eq!(s.server_info().map(|i| i.name.as_str()), Some("srv"));
    let catalog = s.list_tools().await.unwrap();
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo", "add"]);
    let result = s.call_tool("echo", br#"{"text":"hi"}"#).await.unwrap();
    assert!(!result.is_error);
    assert!(matches!(&result.content[..], [ContentBlock::Text { text, .. }] if text == "hi"));
    s.close().await.unwrap();
    assert_eq!(
        server.methods(),
        ["server/discover", "tools/list", "tools/call"]
    );
    let call = &server.requests()[2];
    assert_eq!(call.path, "/mcp");
    assert_eq!(call.json()["params"]["arguments"]["text"], "hi");
    assert_eq!(
        server.accepted(),
        1,
        "one keep-alive socket serves the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn futures_and_handles_are_send() {
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    fn send<T: Send>(_: &T) {}
    send_sync_clone::<Client>();
    let server = Server::start(mcp).await;
    let client = loopback_client();
    let url = server.url();
    // Operations run on another task: every future is Send.
    let task = tokio::spawn(async move {
        let mut s: Session = client.connect(Config::new(&url).unwrap()).await?;
        send(&s);
        let catalog = s.list_tools().await?;
        s.close().await?;
        Ok::<_, Error>(catalog.tools.len())
    });
    assert_eq!(task.await.unwrap().unwrap(), 2);
    assert_eq!(server.accepted(), 1);
}

#[derive(Default)]
struct Recorder {
    progress: Vec<(f64, Option<f64>, Option<String>)>,
    asked: Vec<String>,
}

impl CallObserver for Recorder {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress
            .push((progress, total, message.map(str::to_owned)));
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.asked.push(requests.get().to_owned());
        Some(br#"{"login":{"action":"accept","content":{"name":"octocat"}}}"#.to_vec())
    }
}

#[tokio::test]
async fn progress_and_input_requests_reach_the_observer() {
    let server = Server::start(|req: &Req| {
        if req.rpc_method() != "tools/call" {
            return mcp(req);
        }
        let body = req.json();
        let id = req.id();
        if body["params"]["inputResponses"].is_object() {
            assert_eq!(body["params"]["requestState"], "blob");
            assert_eq!(body["params"]["inputResponses"]["login"]["content"]["name"], "octocat");
            return Reply::Send(json_response(200, &result_msg(id, CALL_OK)));
        }
        let token = body["params"]["_meta"]["progressToken"].clone();
        let progress = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1,"total":2,"message":"half"}}}}"#
        );
        let ask = r#"{"resultType":"input_required","inputRequests":{"login":{"method":"elicitation/create","params":{"mode":"form","message":"user?","requestedSchema":{"type":"object"}}}},"requestState":"blob"}"#;
        let stream = format!("data: {progress}\n\ndata: {}\n\n", result_msg(id, ask));
        Reply::Send(sse_response(&stream))
    })
    .await;
    let mut config = hinted(&server.url());
    config.input_hook = true;
    config.client_capabilities = r#"{"elicitation":{}}"#.into();
    let mut s = loopback_client().connect(config).await.unwrap();
    let mut rec = Recorder::default();
    let result = s.call_tool_with("ask", b"{}", &mut rec).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(rec.progress, [(1.0, Some(2.0), Some("half".to_owned()))]);
    assert_eq!(rec.asked.len(), 1);
    assert!(
        rec.asked[0].contains("elicitation/create"),
        "{:?}",
        rec.asked
    );
    assert_eq!(server.methods(), ["tools/call", "tools/call"]);
}

#[tokio::test]
async fn declined_input_fails_the_call_as_an_answer() {
    let server = Server::start(|req: &Req| {
        if req.rpc_method() != "tools/call" {
            return mcp(req);
        }
        let ask = r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#;
        Reply::Send(json_response(200, &result_msg(req.id(), ask)))
    })
    .await;
    let mut config = hinted(&server.url());
    config.input_hook = true;
    config.client_capabilities = r#"{"elicitation":{}}"#.into();
    let mut s = loopback_client().connect(config).await.unwrap();
    // The default observer declines.
    let e = s.call_tool("ask", b"{}").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerAnswered, "{e}");
}

#[tokio::test]
async fn the_pool_serves_the_next_work_item_and_the_era_is_remembered() {
    let server = Server::start(mcp).await;
    let client = loopback_client();
    let hinted = Config::new(&server.url()).unwrap();
    assert_eq!(client.hint(&hinted), None);
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    s.close().await.unwrap();
    assert_eq!(client.idle_sockets(), 1);
    assert_eq!(client.hint(&hinted), modern_hint());

    // A second work item on the same client: no probe (the hint), the parked socket.
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.version(), "2026-07-28");
    s.list_tools().await.unwrap();
    s.call_tool("echo", b"{}").await.unwrap();
    s.close().await.unwrap();
    assert_eq!(server.accepted(), 1, "the socket was reused");
    assert_eq!(
        server.methods(),
        ["server/discover", "tools/list", "tools/list", "tools/call"]
    );
    assert!(server.requests().iter().all(|r| r.conn == 0));
}

#[tokio::test]
async fn era_hints_can_be_switched_off() {
    let server = Server::start(mcp).await;
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .era_hints(false)
        .build();
    for _ in 0..2 {
        let s = client
            .connect(Config::new(&server.url()).unwrap())
            .await
            .unwrap();
        s.close().await.unwrap();
    }
    assert_eq!(server.methods(), ["server/discover", "server/discover"]);
}

#[tokio::test]
async fn connection_close_is_not_reused() {
    let server = Server::start(|req: &Req| {
        let id = req.id();
        let body = match req.rpc_method().as_str() {
            "server/discover" => result_msg(id, DISCOVER_OK),
            _ => result_msg(id, &tools_page(&["echo"])),
        };
        Reply::SendClose(json_response_with(200, &[("connection", "close")], &body))
    })
    .await;
    let client = loopback_client();
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    s.close().await.unwrap();
    assert_eq!(client.idle_sockets(), 0);
    assert_eq!(server.accepted(), 2, "each exchange dialled its own socket");
}

fn truncated(req: &Req) -> Reply {
    let full = mcp_bytes(req);
    Reply::SendClose(full[..full.len() - 5].to_vec())
}

#[tokio::test]
async fn an_unfinished_response_leaves_no_socket_to_reuse() {
    // The first connection's answer to the probe stops short and the socket closes.
    let server = Server::start(|req: &Req| match req.conn {
        0 => truncated(req),
        _ => mcp(req),
    })
    .await;
    let client = loopback_client();
    let e = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed, "{e}");
    assert_eq!(client.idle_sockets(), 0);
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
    assert_eq!(server.accepted(), 2);
}

#[tokio::test]
async fn a_pooled_socket_that_breaks_is_replaced_by_a_fresh_one() {
    // The listing goes on the probe's parked socket, whose answer stops short: the core re-sends
    // it, on a socket the adapter must dial anew.
    let server = Server::start(|req: &Req| match (req.conn, req.rpc_method().as_str()) {
        (0, "tools/list") => truncated(req),
        _ => mcp(req),
    })
    .await;
    let client = loopback_client();
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
    let seen: Vec<(usize, String)> = server
        .requests()
        .iter()
        .map(|r| (r.conn, r.rpc_method()))
        .collect();
    assert_eq!(
        seen,
        [
            (0, "server/discover".to_owned()),
            (0, "tools/list".to_owned()),
            (1, "tools/list".to_owned())
        ]
    );
    assert_eq!(server.accepted(), 2);
}

#[tokio::test]
async fn an_abandoned_exchange_closes_its_socket() {
    // The listing on the first connection is never answered: its budget ends it.
    let server = Server::start(|req: &Req| match (req.conn, req.rpc_method().as_str()) {
        (0, "tools/list") => Reply::Never,
        _ => mcp(req),
    })
    .await;
    let client = loopback_client();
    let config = Config::new(&server.url())
        .unwrap()
        .with_budgets(time_budgets(ms(300)));
    let mut s = client.connect(config).await.unwrap();
    let e = s.list_tools().await.unwrap_err();
    assert!(e.budget().is_some(), "{e}");
    assert_eq!(
        server.wait_closed(1).await,
        1,
        "the abandoned socket is closed"
    );
    s.close().await.unwrap();
    assert_eq!(client.idle_sockets(), 0);
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    assert_eq!(server.accepted(), 2);
}

#[tokio::test]
async fn a_silent_server_ends_at_the_budget() {
    let server = Server::start(|_: &Req| Reply::Never).await;
    let budget = ms(400);
    let config = hinted(&server.url()).with_budgets(time_budgets(budget));
    let mut s = loopback_client().connect(config).await.unwrap();
    let start = Instant::now();
    let e = s.list_tools().await.unwrap_err();
    let took = start.elapsed();
    assert!(e.budget().is_some(), "{e}");
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
    assert!(took >= budget, "{took:?}");
    assert!(took < budget + GRACE, "{took:?}");

    // A timed-out connection is done; the call runs on a new one.
    let config = hinted(&server.url()).with_budgets(time_budgets(budget));
    let mut s = loopback_client().connect(config).await.unwrap();
    let start = Instant::now();
    let e = s.call_tool("echo", b"{}").await.unwrap_err();
    let took = start.elapsed();
    assert!(e.budget().is_some(), "{e}");
    assert!(took >= budget && took < budget + GRACE, "{took:?}");
}

#[tokio::test]
async fn a_trickling_server_ends_at_the_budget() {
    // A valid answer, one byte every 100 ms: it would take minutes.
    let server = Server::start(|req: &Req| Reply::Trickle(mcp_bytes(req), ms(100))).await;
    let budget = ms(600);
    let config = Config::new(&server.url())
        .unwrap()
        .with_budgets(time_budgets(budget));
    let start = Instant::now();
    let e = loopback_client().connect(config).await.unwrap_err();
    let took = start.elapsed();
    assert!(e.budget().is_some(), "{e}");
    assert!(took >= budget, "{took:?}");
    assert!(took < budget + GRACE, "{took:?}");

    let config = hinted(&server.url()).with_budgets(time_budgets(budget));
    let mut s = loopback_client().connect(config).await.unwrap();
    let start = Instant::now();
    let e = s.list_tools().await.unwrap_err();
    let took = start.elapsed();
    assert!(e.budget().is_some(), "{e}");
    assert!(took >= budget && took < budget + GRACE, "{took:?}");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let elsewhere = Server::start(mcp).await;
    let target = elsewhere.url();
    let server = Server::start(move |_: &Req| {
        Reply::Send(
            format!("HTTP/1.1 302 Found\r\nlocation: {target}\r\ncontent-length: 0\r\n\r\n")
                .into_bytes(),
        )
    })
    .await;
    let e = loopback_client()
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Redirect { status: 302, .. }), "{e}");
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
    tokio::time::sleep(ms(50)).await;
    assert_eq!(elsewhere.accepted(), 0);
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn a_refused_dial_is_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = loopback_client()
        .connect(Config::new(&url).unwrap())
        .await
        .unwrap_err();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Connect), "{e}");
    assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
}

#[tokio::test]
async fn an_unknown_name_is_a_resolve_error() {
    let client = Client::builder().resolver(StaticResolver::new()).build();
    let e = client
        .connect(Config::new("http://nowhere.test/mcp").unwrap())
        .await
        .unwrap_err();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Resolve), "{e}");
}

#[tokio::test]
async fn the_strict_policy_refuses_loopback_in_every_spelling_before_dialling() {
    let server = Server::start(mcp).await;
    let port = server.port();
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let metadata: IpAddr = "169.254.169.254".parse().unwrap();
    let client = Client::builder()
        .resolver(
            StaticResolver::new()
                .with("localhost", &[loopback])
                .with("metadata.test", &[metadata]),
        )
        .build();
    // Spellings the guard refuses after resolution or literal parsing.
    let guarded = [
        "127.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "localhost.",
        "localhost",
        "metadata.test",
        "169.254.169.254",
        // Shorthand spellings of 127.0.0.1, judged by the address they stand for.
        "2130706433",
        "0x7f.1",
        "127.1",
        "0177.0.0.1",
        "127.0.0.1.",
    ];
    for host in guarded {
        let url = format!("http://{host}:{port}/mcp");
        let config = Config::new(&url).unwrap_or_else(|e| panic!("{host}: {e}"));
        let e = client.connect(config).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionFailed, "{host}: {e}");
        assert_eq!(
            transport_kind(&e),
            Some(TransportErrorKind::AddressRefused),
            "{host}: {e}"
        );
    }
    tokio::time::sleep(ms(50)).await;
    assert_eq!(server.accepted(), 0, "no connection was attempted");
    // The same listener is reachable when loopback is allowed.
    loopback_client()
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn a_legacy_session_is_negotiated_used_and_deleted() {
    let server = Server::start(legacy).await;
    let client = loopback_client();
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.era(), Era::Legacy);
    assert_eq!(s.version(), "2025-11-25");
    assert_eq!(s.server_info().map(|i| i.name.as_str()), Some("legacy"));
    assert_eq!(s.list_tools().await.unwrap().tools[0].name(), "old");
    s.close().await.unwrap();
    assert_eq!(
        server.methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "DELETE"
        ]
    );
    let requests = server.requests();
    for r in &requests[2..] {
        assert!(
            r.head
                .to_ascii_lowercase()
                .contains("mcp-session-id: sess-1"),
            "{}",
            r.head
        );
    }

    // The next work item skips the probe: the client remembers the origin is legacy.
    let s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.era(), Era::Legacy);
    s.close().await.unwrap();
    assert_eq!(
        server.methods()[5..],
        ["initialize", "notifications/initialized", "DELETE"]
    );
}

#[tokio::test]
async fn the_dial_timeout_covers_the_tls_handshake() {
    // Accepts TCP, never speaks TLS.
    let server = Server::start(|_: &Req| Reply::Never).await;
    let timeout = ms(300);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .dial_timeout(timeout)
        .build();
    let url = format!("https://127.0.0.1:{}/mcp", server.port());
    let config = Config::new(&url)
        .unwrap()
        .with_budgets(time_budgets(Duration::from_secs(30)));
    let start = Instant::now();
    let e = client.connect(config).await.unwrap_err();
    let took = start.elapsed();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Connect), "{e}");
    assert!(took >= timeout && took < timeout + GRACE, "{took:?}");
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn dropping_a_session_mid_operation_closes_its_sockets() {
    let server = Server::start(|_: &Req| Reply::Never).await;
    let mut s = loopback_client()
        .connect(hinted(&server.url()))
        .await
        .unwrap();
    let cut = tokio::time::timeout(ms(200), s.list_tools()).await;
    assert!(cut.is_err(), "the listing is still waiting");
    assert_eq!(server.accepted(), 1);
    assert_eq!(server.closed(), 0);
    drop(s);
    assert_eq!(server.wait_closed(1).await, 1);
}

#[tokio::test]
async fn an_endless_body_is_cut_at_the_byte_budget() {
    let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n".to_vec();
    let server = Server::start(move |_: &Req| Reply::Flood(head.clone())).await;
    let mut budgets = time_budgets(Duration::from_secs(30));
    budgets.response_bytes = 256 * 1024;
    budgets.sse_event_bytes = 1024 * 1024;
    let config = hinted(&server.url()).with_budgets(budgets);
    let mut s = loopback_client().connect(config).await.unwrap();
    let e = s.list_tools().await.unwrap_err();
    let exceeded = e.budget().unwrap_or_else(|| panic!("{e}"));
    assert_eq!(exceeded.budget, mcp_sansio::Budget::ResponseBytes, "{e}");
    assert_eq!(
        server.wait_closed(1).await,
        1,
        "the flooding socket is closed"
    );
}

/// A cancelled operation (its future dropped by a timeout) is abandoned: its socket is closed at
/// once, which is how a 2026-07-28 request is cancelled ("closing the SSE response stream is the
/// cancel signal, and the server MUST treat a disconnect as cancellation",
/// `basic/patterns/cancellation.mdx`), and the session stays usable: the next operation runs.
#[tokio::test]
async fn a_cancelled_operation_closes_its_socket_and_the_next_one_runs() {
    let server = Server::start(|_: &Req| Reply::Never).await;
    let mut s = loopback_client()
        .connect(hinted(&server.url()))
        .await
        .unwrap();
    assert!(tokio::time::timeout(ms(200), s.list_tools()).await.is_err());
    assert_eq!(
        server.wait_closed(1).await,
        1,
        "the listing's socket is closed"
    );
    assert!(tokio::time::timeout(ms(200), s.call_tool("echo", b"{}"))
        .await
        .is_err());
    assert_eq!(server.methods(), ["tools/list", "tools/call"]);
    assert_eq!(
        server.wait_closed(2).await,
        2,
        "the call's socket is closed"
    );
    s.close().await.unwrap();
}

#[tokio::test]
async fn vetted_addresses_are_dialled_in_order_until_one_connects() {
    let server = Server::start(mcp).await;
    let ips: Vec<IpAddr> = ["169.254.169.254", "127.0.0.2", "127.0.0.1"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    // The metadata address is refused by the policy; nothing listens on 127.0.0.2.
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(StaticResolver::new().with("multi.test", &ips))
        .build();
    let url = format!("http://multi.test:{}/mcp", server.port());
    let mut s = client.connect(Config::new(&url).unwrap()).await.unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
    assert_eq!(server.accepted(), 1);
    let host = &server.requests()[0].head;
    assert!(
        host.contains(&format!("multi.test:{}", server.port())),
        "{host}"
    );
}

#[tokio::test]
async fn an_empty_pool_keeps_no_socket() {
    let server = Server::start(mcp).await;
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .pool_limits(mcp_sansio_net::PoolLimits {
            max_idle: 0,
            ..Default::default()
        })
        .build();
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    assert_eq!(client.idle_sockets(), 0);
    assert_eq!(server.accepted(), 2, "the listing dialled again");
}

#[tokio::test]
async fn a_parked_socket_the_server_closed_is_not_used() {
    // A keep-alive answer, then the server closes the idle connection.
    let server = Server::start(|req: &Req| match req.conn {
        0 => Reply::SendClose(mcp_bytes(req)),
        _ => mcp(req),
    })
    .await;
    let client = loopback_client();
    let s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.close().await.unwrap();
    assert_eq!(client.idle_sockets(), 1);
    assert_eq!(server.wait_closed(1).await, 1);
    tokio::time::sleep(ms(20)).await;
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.list_tools().await.unwrap();
    let seen: Vec<(usize, String)> = server
        .requests()
        .iter()
        .map(|r| (r.conn, r.rpc_method()))
        .collect();
    assert_eq!(
        seen,
        [
            (0, "server/discover".to_owned()),
            (1, "tools/list".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_parked_socket_with_unasked_bytes_is_not_used() {
    // After its answer the first connection sends bytes nobody asked for.
    let server = Server::start(|req: &Req| match req.conn {
        0 => Reply::SendThen(mcp_bytes(req), ms(20), empty_response(200)),
        _ => mcp(req),
    })
    .await;
    let client = loopback_client();
    let s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    s.close().await.unwrap();
    assert_eq!(client.idle_sockets(), 1);
    tokio::time::sleep(ms(100)).await;
    let mut s = client
        .connect(Config::new(&server.url()).unwrap())
        .await
        .unwrap();
    assert_eq!(s.list_tools().await.unwrap().tools.len(), 2);
    assert_eq!(server.accepted(), 2);
    assert_eq!(server.requests()[1].conn, 1);
}

/// A modern server whose listing has three pages (cursors "2" and "3").
fn paged(req: &Req) -> Reply {
    if req.rpc_method() != "tools/list" {
        return mcp(req);
    }
    let page = match req.json()["params"]["cursor"].as_str() {
        None => r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#,
        Some("2") => r#"{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"3"}"#,
        _ => r#"{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}"#,
    };
    Reply::Send(json_response(200, &result_msg(req.id(), page)))
}

#[tokio::test]
async fn a_cold_listing_of_several_pages_keeps_one_socket() {
    for flavour in ["current_thread", "multi_thread"] {
        let server = Server::start(paged).await;
        let url = server.url();
        let run = async move {
            let client = loopback_client();
            let mut s = client.connect(Config::new(&url).unwrap()).await.unwrap();
            let names: Vec<String> = s
                .list_tools()
                .await
                .unwrap()
                .tools
                .into_iter()
                .map(|t| t.name().to_owned())
                .collect();
            s.close().await.unwrap();
            names
        };
        let names = if flavour == "multi_thread" {
            tokio::spawn(run).await.unwrap()
        } else {
            run.await
        };
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(
            server.methods(),
            ["server/discover", "tools/list", "tools/list", "tools/list"]
        );
        assert_eq!(
            server.accepted(),
            1,
            "{flavour}: every page reused the first socket"
        );
    }
}

/// The 2025-11-25 transport: "The server MAY send JSON-RPC requests and notifications before
/// sending the JSON-RPC response", and the client answers each ("The receiver MUST respond with
/// either a result or an error"). With the input hook, the observer's answer to a legacy
/// server's `elicitation/create` is POSTed as its result; `initialize` still declares no
/// capability (this server answers the standalone `GET` without a stream).
#[tokio::test]
async fn a_legacy_server_request_is_answered_through_the_observer() {
    let server = Server::start(|req: &Req| {
        if req.rpc_method() != "tools/call" {
            return legacy(req);
        }
        let ask = r#"{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}}"#;
        let stream = format!("data: {ask}\n\ndata: {}\n\n", result_msg(req.id(), CALL_OK));
        Reply::Send(sse_response(&stream))
    })
    .await;
    let mut config = Config::new(&server.url()).unwrap();
    config.input_hook = true;
    config.client_capabilities = r#"{"elicitation":{"form":{}}}"#.into();
    let mut s = loopback_client().connect(config).await.unwrap();
    let result = s.call_tool_with("ask", b"{}", &mut Defaults).await.unwrap();
    assert!(!result.is_error);
    s.close().await.unwrap();
    let requests = server.requests();
    let init = requests
        .iter()
        .find(|r| r.rpc_method() == "initialize")
        .unwrap();
    assert_eq!(init.json()["params"]["capabilities"], serde_json::json!({}));
    let answer = requests
        .iter()
        .map(|r| r.json())
        .find(|b| b["id"] == "srv-1")
        .expect("the answer was sent");
    assert_eq!(
        answer["result"],
        serde_json::json!({"action":"accept","content":{"name":"Ada"}})
    );
}

/// An event stream left open (chunked, no terminator) carrying `stream`.
fn open_sse(stream: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{stream}\r\n",
        stream.len()
    )
    .into_bytes()
}

/// 2025-11-25 transports, "Listening for Messages from the Server": "The client MAY issue an
/// HTTP GET to the MCP endpoint. This can be used to open an SSE stream, allowing the server to
/// communicate to the client, without the client first sending data via HTTP POST." With the
/// input hook, a legacy session opens that stream on a socket of its own beside the call's; the
/// `elicitation/create` the server sends there (as the TypeScript SDK does for a request made
/// inside a tool) reaches the observer while the call runs, and the answer is POSTed back. The
/// stream is closed with the session.
#[tokio::test]
async fn the_standalone_get_stream_brings_a_server_request_to_the_observer() {
    const ASK: &str = r#"{"jsonrpc":"2.0","id":"g-1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}}"#;
    let server = Server::start(|req: &Req| {
        if req.method == "GET" {
            return Reply::Send(open_sse(&format!("id: g0\ndata:\n\nid: g1\ndata: {ASK}\n\n")));
        }
        if req.rpc_method() != "tools/call" {
            return legacy(req);
        }
        // The call's answer comes once the server had time to hear the elicitation's answer.
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
        let event = format!("data: {}\n\n", result_msg(req.id(), CALL_OK));
        let rest = format!("{:x}\r\n{event}\r\n0\r\n\r\n", event.len());
        Reply::SendThen(head.as_bytes().to_vec(), ms(300), rest.into_bytes())
    })
    .await;
    let mut config = Config::new(&server.url()).unwrap();
    config.input_hook = true;
    let mut s = loopback_client().connect(config).await.unwrap();
    let result = s.call_tool_with("ask", b"{}", &mut Defaults).await.unwrap();
    assert!(!result.is_error);
    s.close().await.unwrap();
    let requests = server.requests();
    let get = requests.iter().find(|r| r.method == "GET").expect("a GET");
    let head = get.head.to_ascii_lowercase();
    assert!(head.contains("accept: text/event-stream"), "{head}");
    assert!(head.contains("mcp-session-id: sess-1"), "{head}");
    assert_eq!(requests.iter().filter(|r| r.method == "GET").count(), 1);
    let call = requests
        .iter()
        .find(|r| r.rpc_method() == "tools/call")
        .unwrap();
    assert_ne!(get.conn, call.conn, "the stream has a socket of its own");
    let answer = requests
        .iter()
        .map(|r| r.json())
        .find(|b| b["id"] == "g-1")
        .expect("the answer was POSTed");
    assert_eq!(
        answer["result"],
        serde_json::json!({"action":"accept","content":{"name":"Ada"}})
    );
}
