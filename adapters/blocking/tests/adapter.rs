//! The blocking adapter against in-test servers on 127.0.0.1.

mod support;

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_sansio::{Budget, Budgets, Config, Era, Error, ErrorKind};
use mcp_sansio::{TransportError, TransportErrorKind};
use mcp_sansio_blocking::{AddressPolicy, CallObserver, Client, Session, StaticResolver};
use mcp_sansio_test_support::adapter_tests::elicitation::Defaults;
use mcp_sansio_test_support::tls;
use support::{sse_response, Reply, Server};

/// How late past its budget an operation may end: thread wake-up and scheduling on a loaded
/// machine. The budgets below are a few hundred milliseconds; this grace is the documented bound
/// on the adapter's own overshoot.
const GRACE: Duration = Duration::from_millis(1000);

fn loopback_client() -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build()
}

fn config(url: &str) -> Config {
    Config::new(url).expect("a valid URL")
}

fn short_budgets(request: u64, op: u64) -> Budgets {
    let mut b = Budgets::default();
    b.request_time = Duration::from_millis(request);
    b.list_time = Duration::from_millis(op);
    b.call_time = Duration::from_millis(op);
    b.close_time = Duration::from_millis(op);
    b
}

fn transport_kind(e: &Error) -> Option<TransportErrorKind> {
    match e {
        Error::Transport(TransportError { kind, .. }) => Some(*kind),
        _ => None,
    }
}

#[test]
fn client_and_session_cross_threads() {
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    fn send<T: Send>() {}
    send_sync_clone::<Client>();
    send::<Session>();
}

#[test]
fn connects_lists_and_calls_on_one_pooled_socket() {
    let server = Server::start(support::modern);
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).unwrap();
    assert_eq!(session.version(), "2026-07-28");
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.server_info().map(|i| i.name.as_str()), Some("srv"));

    let catalog = session.list_tools().unwrap();
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo", "add"]);

    let result = session.call_tool("echo", br#"{"text":"hi"}"#).unwrap();
    assert!(!result.is_error);
    assert_eq!(result.content.len(), 1);
    session.close().unwrap();

    assert_eq!(
        server.methods(),
        ["server/discover", "tools/list", "tools/call"]
    );
    assert_eq!(
        server.accepted(),
        1,
        "every exchange reused the first socket"
    );
    assert!(server.requests().iter().all(|r| r.conn == 0));
    assert_eq!(client.idle_sockets(), 1);
}

#[test]
fn era_hints_skip_the_probe_only_when_on() {
    let server = Server::start(support::modern);
    let client = loopback_client();
    client.connect(config(&server.url())).unwrap();
    let mut hinted = client.connect(config(&server.url())).unwrap();
    assert_eq!(hinted.version(), "2026-07-28");
    assert_eq!(hinted.list_tools().unwrap().tools.len(), 2);
    assert_eq!(server.methods(), ["server/discover", "tools/list"]);
    let hint = client
        .hint(&config(&server.url()))
        .expect("a hint for the server");
    assert_eq!(
        (hint.era, hint.version.as_str()),
        (Era::Modern, "2026-07-28")
    );

    let server = Server::start(support::modern);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .era_hints(false)
        .build();
    client.connect(config(&server.url())).unwrap();
    client.connect(config(&server.url())).unwrap();
    assert_eq!(server.methods(), ["server/discover", "server/discover"]);
    assert!(client.hint(&config(&server.url())).is_none());
}

#[test]
fn legacy_session_is_ended_with_delete_on_close() {
    let server = Server::start(support::legacy);
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).unwrap();
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(session.version(), "2025-06-18");
    assert_eq!(session.session_id(), Some("sess-1"));
    assert_eq!(session.list_tools().unwrap().tools[0].name(), "old");
    let start = Instant::now();
    session.close().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the DELETE was answered"
    );
    let requests = server.requests();
    let delete = requests.last().unwrap();
    assert_eq!(delete.method, "DELETE");
    assert_eq!(delete.header("mcp-session-id"), Some("sess-1"));
}

#[test]
fn no_reuse_after_an_unfinished_response() {
    let server = Server::start(|req| {
        if req.rpc_method() == "tools/list" {
            // Announces 100 bytes, sends 10, then holds the socket open.
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"jsonrpc\"";
            return Reply::Send(head.as_bytes().to_vec());
        }
        support::modern(req)
    });
    let client = loopback_client();
    let cfg = config(&server.url()).with_budgets(short_budgets(300, 300));
    let mut session = client.connect(cfg.clone()).unwrap();
    let e = session.list_tools().unwrap_err();
    assert!(e.budget().is_some(), "{e}");
    assert_eq!(
        server.accepted(),
        1,
        "the listing reused the probe's socket"
    );
    drop(session);

    let mut again = client.connect(cfg).unwrap();
    assert_eq!(client.idle_sockets(), 0, "the hinted connect sent nothing");
    let _ = again.list_tools();
    assert_eq!(server.accepted(), 2, "the unfinished socket was not reused");
}

#[test]
fn pooled_socket_closed_by_the_server_is_not_reused() {
    let server = Server::start(|req| match support::modern(req) {
        Reply::Send(b) if req.rpc_method() == "server/discover" => {
            // Claims keep-alive, then closes anyway.
            Reply::SendAndClose(b)
        }
        other => other,
    });
    let client = loopback_client();
    let mut session = client.connect(config(&server.url())).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(session.list_tools().unwrap().tools.len(), 2);
    assert_eq!(server.accepted(), 2);
}

#[test]
fn every_loopback_and_metadata_form_is_refused_before_dialling() {
    let server = Server::start(support::modern);
    let port = server.addr.port();
    let v6 = Server::counting("[::1]:0");
    let v6_port = v6.as_ref().map_or(port, |s| s.addr.port());
    let resolver = StaticResolver::new()
        .with("loopback.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .with("localhost", &[IpAddr::V4(Ipv4Addr::LOCALHOST)])
        .with(
            "metadata.test",
            &[IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254))],
        );
    let client = Client::builder().resolver(resolver).build();
    let urls = [
        format!("http://127.0.0.1:{port}/mcp"),
        // Shorthand spellings of 127.0.0.1, judged by the address they stand for.
        format!("http://2130706433:{port}/mcp"),
        format!("http://0x7f.1:{port}/mcp"),
        format!("http://127.1:{port}/mcp"),
        format!("http://0177.0.0.1:{port}/mcp"),
        format!("http://127.0.0.1.:{port}/mcp"),
        format!("http://localhost.:{port}/mcp"),
        format!("http://[::1]:{v6_port}/mcp"),
        format!("http://[::ffff:127.0.0.1]:{port}/mcp"),
        format!("http://loopback.test:{port}/mcp"),
        format!("http://metadata.test:{port}/mcp"),
    ];
    for url in &urls {
        let e = client.connect(config(url)).unwrap_err();
        assert_eq!(
            transport_kind(&e),
            Some(TransportErrorKind::AddressRefused),
            "{url}: {e}"
        );
        assert_eq!(e.kind(), ErrorKind::ConnectionFailed);
    }
    assert_eq!(server.accepted(), 0, "no connection reached the listener");
    if let Some(v6) = v6 {
        assert_eq!(v6.accepted(), 0);
    }
}

#[test]
fn never_answering_server_ends_within_the_request_budget() {
    let server = Server::start(|_| Reply::Hang);
    let client = loopback_client();
    let cfg = config(&server.url()).with_budgets(short_budgets(400, 400));
    let start = Instant::now();
    let e = client.connect(cfg).unwrap_err();
    let elapsed = start.elapsed();
    assert_eq!(
        e.budget().map(|b| b.budget),
        Some(Budget::RequestTime),
        "{e}"
    );
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(400) + GRACE, "{elapsed:?}");
}

fn trickling(head: &'static str) -> Server {
    Server::start(move |req| {
        if req.rpc_method() == "tools/list" {
            return Reply::Trickle {
                head: head.as_bytes().to_vec(),
                fill: b' ',
                every: Duration::from_millis(20),
            };
        }
        support::modern(req)
    })
}

#[test]
fn trickling_servers_end_within_the_budgets() {
    let heads = [
        "HTTP/1.1 200 OK\r\nx-slow: ",
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n",
    ];
    for head in heads {
        let server = trickling(head);
        let client = loopback_client();
        let cfg = config(&server.url()).with_budgets(short_budgets(500, 600));
        let mut session = client.connect(cfg).unwrap();
        let start = Instant::now();
        let e = session.list_tools().unwrap_err();
        let elapsed = start.elapsed();
        assert!(e.budget().is_some(), "{e}");
        assert!(elapsed < Duration::from_millis(600) + GRACE, "{elapsed:?}");
    }
}

#[test]
fn redirects_are_not_followed() {
    let target = Server::start(support::modern);
    let location = target.url();
    let server = Server::start(move |_| {
        let h = format!("HTTP/1.1 307 X\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n");
        Reply::Send(h.into_bytes())
    });
    let e = loopback_client()
        .connect(config(&server.url()))
        .unwrap_err();
    assert!(matches!(e, Error::Redirect { status: 307, .. }), "{e}");
    assert_eq!(target.accepted(), 0);
}

#[test]
fn refused_dial_is_a_connect_error() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = loopback_client()
        .connect(config(&format!("http://127.0.0.1:{port}/mcp")))
        .unwrap_err();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Connect), "{e}");
}

#[test]
fn unresolvable_name_is_a_resolve_error() {
    let client = Client::builder()
        .resolver(StaticResolver::new())
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build();
    let e = client
        .connect(config("http://nowhere.test/mcp"))
        .unwrap_err();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Resolve), "{e}");
}

// ---------------------------------------------------------------------------------------------
// TLS

fn tls_client(client_tls: Arc<rustls::ClientConfig>) -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(StaticResolver::new().with("mcp.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]))
        .tls_config(client_tls)
        .build()
}

#[test]
fn tls_with_a_trusted_certificate_works() {
    let (server_tls, client_tls) = tls::pair("mcp.test");
    let server = Server::start_tls(server_tls, support::modern);
    let client = tls_client(client_tls);
    let url = format!("https://mcp.test:{}/mcp", server.addr.port());
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.list_tools().unwrap().tools.len(), 2);
    assert!(!session.call_tool("echo", b"{}").unwrap().is_error);
    session.close().unwrap();
    assert_eq!(server.accepted(), 1, "TLS sockets are pooled too");
}

/// Sessions connecting at once to an `https` origin whose server chooses HTTP/1.1 (here: no
/// ALPN) and closes every connection unanswered, so that no socket is ever parked: one dials for
/// HTTP/2, the others wait on its dial, and once it learns HTTP/1.1 they all take HTTP/1.1 and
/// meet the server's close, rather than dialling for HTTP/2 again one after another until some
/// give up with "the origin's HTTP/2 connection kept closing" (a `Connect` error).
#[test]
fn sessions_waiting_on_a_dial_that_chose_http1_take_http1() {
    let (server_tls, client_tls) = tls::pair("mcp.test");
    let server = Server::start_tls(server_tls, |_| Reply::SendAndClose(Vec::new()));
    let client = tls_client(client_tls);
    let url = format!("https://mcp.test:{}/mcp", server.addr.port());
    let errors: Vec<Error> = std::thread::scope(|s| {
        let sessions: Vec<_> = (0..32)
            .map(|_| s.spawn(|| client.connect(config(&url)).unwrap_err()))
            .collect();
        sessions.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for e in errors {
        assert_eq!(transport_kind(&e), Some(TransportErrorKind::Io), "{e}");
    }
}

#[test]
fn tls_verifies_a_host_with_a_trailing_dot_without_its_dot() {
    let (server_tls, client_tls) = tls::pair("mcp.test");
    let server = Server::start_tls(server_tls, support::modern);
    let client = tls_client(client_tls);
    let url = format!("https://mcp.test.:{}/mcp", server.addr.port());
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.list_tools().unwrap().tools.len(), 2);
}

#[test]
fn the_dial_timeout_covers_the_tls_handshake() {
    // Accepts TCP, never speaks TLS.
    let server = Server::start(|_| Reply::Hang);
    let timeout = Duration::from_millis(300);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .dial_timeout(timeout)
        .build();
    let url = format!("https://127.0.0.1:{}/mcp", server.addr.port());
    let started = Instant::now();
    let e = client.connect(config(&url)).unwrap_err();
    let took = started.elapsed();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Connect), "{e}");
    assert!(e.to_string().contains("dial timed out after 300 ms"), "{e}");
    assert!(
        took >= timeout && took < timeout + Duration::from_millis(700),
        "{took:?}"
    );
    assert_eq!(server.accepted(), 1);
}

#[test]
fn tls_with_a_certificate_for_another_name_fails() {
    let (server_tls, client_tls) = tls::pair("other.test");
    let server = Server::start_tls(server_tls, support::modern);
    let client = tls_client(client_tls);
    let url = format!("https://mcp.test:{}/mcp", server.addr.port());
    let e = client.connect(config(&url)).unwrap_err();
    assert_eq!(transport_kind(&e), Some(TransportErrorKind::Tls), "{e}");
    assert!(server.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Observers and background exchanges

#[derive(Default)]
struct Recorder {
    progress: Vec<(f64, Option<f64>, Option<String>)>,
    requests: Vec<String>,
    answer: Option<Vec<u8>>,
}

impl CallObserver for Recorder {
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.progress
            .push((progress, total, message.map(str::to_owned)));
    }

    fn input_required(&mut self, requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.requests.push(requests.get().to_owned());
        self.answer.clone()
    }
}

#[test]
fn progress_of_a_streamed_call_reaches_the_observer() {
    let server = Server::start(|req| {
        if req.rpc_method() != "tools/call" {
            return support::modern(req);
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let token = &body["params"]["_meta"]["progressToken"];
        let progress = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1,"total":2,"message":"half"}}}}"#
        );
        let stream = format!(
            "data: {progress}\n\ndata: {}\n\n",
            support::result_msg(req.rpc_id(), support::CALL_OK)
        );
        Reply::Send(sse_response(&stream))
    });
    let mut session = loopback_client().connect(config(&server.url())).unwrap();
    let mut recorder = Recorder::default();
    let result = session
        .call_tool_with("slow", b"{}", &mut recorder)
        .unwrap();
    assert_eq!(result.content.len(), 1);
    assert_eq!(recorder.progress, [(1.0, Some(2.0), Some("half".into()))]);
    assert_eq!(server.accepted(), 1, "a finished stream is reusable");
}

#[test]
fn input_requests_are_answered_by_the_observer() {
    let server = Server::start(|req| {
        if req.rpc_method() != "tools/call" {
            return support::modern(req);
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let answer = match body["params"].get("inputResponses") {
            None => {
                r#"{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{}}},"requestState":"s"}"#
            }
            Some(_) => support::CALL_OK,
        };
        Reply::Send(support::json_response(
            200,
            &support::result_msg(req.rpc_id(), answer),
        ))
    });
    let mut cfg = config(&server.url());
    cfg.input_hook = true;
    cfg.client_capabilities = r#"{"elicitation":{}}"#.into();
    let mut session = loopback_client().connect(cfg).unwrap();
    let mut recorder = Recorder {
        answer: Some(br#"{"k":{"action":"accept","content":{}}}"#.to_vec()),
        ..Recorder::default()
    };
    let result = session.call_tool_with("ask", b"{}", &mut recorder).unwrap();
    assert!(!result.is_error);
    assert_eq!(recorder.requests.len(), 1);
    assert!(recorder.requests[0].contains("elicitation/create"));
    let calls: Vec<serde_json::Value> = server
        .requests()
        .iter()
        .filter(|r| r.rpc_method() == "tools/call")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[1]["params"]["inputResponses"]["k"]["action"],
        "accept"
    );
    assert_eq!(calls[1]["params"]["requestState"], "s");

    // Declining fails the call as an answer this client cannot use.
    let mut decline = Recorder::default();
    let e = session
        .call_tool_with("ask", b"{}", &mut decline)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ServerAnswered, "{e}");
}

#[test]
fn a_timed_out_legacy_call_is_cancelled_in_the_background() {
    let server = Server::start(|req| match req.rpc_method().as_str() {
        "tools/call" => Reply::Hang,
        _ => support::legacy(req),
    });
    let cfg = config(&server.url()).with_budgets(short_budgets(2000, 300));
    let mut session = loopback_client().connect(cfg).unwrap();
    let e = session.call_tool("slow", b"{}").unwrap_err();
    assert_eq!(e.budget().map(|b| b.budget), Some(Budget::CallTime), "{e}");
    session.close().unwrap();
    // The cancellation and the DELETE travel on sockets of their own, so the server may see
    // them in either order, and may finish reading the cancellation a moment after `close`
    // returns on a loaded machine: wait for both, a few seconds at most.
    let waited = std::time::Instant::now();
    while server.methods().len()
        < 3 + server
            .methods()
            .iter()
            .position(|m| m == "tools/call")
            .unwrap_or(0)
        && waited.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut methods = server.methods();
    let tail = methods.split_off(methods.len() - 3);
    assert_eq!(tail[0], "tools/call");
    let mut rest = tail[1..].to_vec();
    rest.sort();
    assert_eq!(rest, ["DELETE", "notifications/cancelled"]);
}

#[test]
fn admitted_addresses_are_dialled_in_order_and_refused_ones_never() {
    let server = Server::start(support::modern);
    let resolver = StaticResolver::new().with(
        "multi.test",
        &[
            IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), // nothing listens there: refused dial
            IpAddr::V4(Ipv4Addr::LOCALHOST),
        ],
    );
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(resolver)
        .dial_timeout(Duration::from_secs(2))
        .build();
    let url = format!("http://multi.test:{}/mcp", server.addr.port());
    let session = client.connect(config(&url)).unwrap();
    assert_eq!(session.version(), "2026-07-28");
    assert_eq!(server.accepted(), 1);
    assert_eq!(
        server.requests()[0].header("host"),
        Some(format!("multi.test:{}", server.addr.port()).as_str())
    );
}

#[test]
fn a_flooding_server_is_cut_at_the_byte_budget() {
    let server = Server::start(|req| {
        if req.rpc_method() == "tools/list" {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
            return Reply::Flood {
                head: head.as_bytes().to_vec(),
                fill: b':',
            };
        }
        support::modern(req)
    });
    let mut budgets = Budgets::default();
    budgets.response_bytes = 1024 * 1024;
    let cfg = config(&server.url()).with_budgets(budgets);
    let mut session = loopback_client().connect(cfg).unwrap();
    let e = session.list_tools().unwrap_err();
    assert_eq!(
        e.budget().map(|b| b.budget),
        Some(Budget::ResponseBytes),
        "{e}"
    );
    assert!(session.bytes_read() <= 1024 * 1024);
}

/// A modern server whose listing has three pages (cursors "2" and "3").
fn paged(req: &support::Req) -> Reply {
    if req.rpc_method() != "tools/list" {
        return support::modern(req);
    }
    let v: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
    let page = match v["params"]["cursor"].as_str() {
        None => r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#,
        Some("2") => r#"{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"3"}"#,
        _ => r#"{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}"#,
    };
    Reply::Send(support::json_response(
        200,
        &support::result_msg(req.rpc_id(), page),
    ))
}

#[test]
fn a_cold_listing_of_several_pages_keeps_one_socket() {
    for _ in 0..5 {
        let server = Server::start(paged);
        let client = loopback_client();
        let mut session = client.connect(config(&server.url())).unwrap();
        let names: Vec<String> = session
            .list_tools()
            .unwrap()
            .tools
            .into_iter()
            .map(|t| t.name().to_owned())
            .collect();
        session.close().unwrap();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(
            server.methods(),
            ["server/discover", "tools/list", "tools/list", "tools/list"]
        );
        assert_eq!(server.accepted(), 1, "every page reused the first socket");
    }
}

#[test]
fn added_root_certificates_are_trusted_besides_the_webpki_roots() {
    let (der, server_tls) = tls::self_signed("mcp.test");
    let server = Server::start_tls(server_tls, support::modern);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .resolver(StaticResolver::new().with("mcp.test", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]))
        .add_root_certificates([der])
        .build();
    let url = format!("https://mcp.test:{}/mcp", server.addr.port());
    let mut session = client.connect(config(&url)).unwrap();
    assert_eq!(session.list_tools().unwrap().tools.len(), 2);
    session.close().unwrap();
    assert_eq!(server.methods(), ["server/discover", "tools/list"]);
}

/// 2025-11-25 transports, "Listening for Messages from the Server": "The client MAY issue an
/// HTTP GET to the MCP endpoint. This can be used to open an SSE stream, allowing the server to
/// communicate to the client, without the client first sending data via HTTP POST." With the
/// input hook, a legacy session opens that stream on a socket of its own beside the call's; the
/// `elicitation/create` the server sends there reaches the observer while the call runs, and the
/// answer is POSTed back. This server answers the call only once it heard that answer (within
/// 5 s), as a server waiting on its elicitation does.
#[test]
fn the_standalone_get_stream_brings_a_server_request_to_the_observer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    const ASK: &str = r#"{"jsonrpc":"2.0","id":"g-1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}}}"#;
    let answered = Arc::new(AtomicBool::new(false));
    let heard = answered.clone();
    let server = Server::start(move |req| {
        if req.method == "GET" {
            let stream = format!("id: g1\ndata: {ASK}\n\n");
            return Reply::Send(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{stream}\r\n",
                    stream.len()
                )
                .into_bytes(),
            );
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
        if body["id"] == "g-1" {
            heard.store(true, Ordering::SeqCst);
            return Reply::Send(support::empty_response(202));
        }
        if req.rpc_method() != "tools/call" {
            return support::legacy(req);
        }
        let until = Instant::now() + Duration::from_secs(5);
        while !heard.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        Reply::Send(support::json_response(
            200,
            &support::result_msg(req.rpc_id(), support::CALL_OK),
        ))
    });
    let mut cfg = config(&server.url());
    cfg.input_hook = true;
    cfg.era_hint = None;
    let mut session = loopback_client().connect(cfg).unwrap();
    let mut defaults = Defaults;
    let started = Instant::now();
    let result = session.call_tool_with("ask", b"{}", &mut defaults).unwrap();
    assert!(!result.is_error);
    assert!(answered.load(Ordering::SeqCst), "the answer was POSTed");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "answered while the call ran"
    );
    session.close().unwrap();
    let requests = server.requests();
    let gets: Vec<_> = requests.iter().filter(|r| r.method == "GET").collect();
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    assert!(gets[0].header("mcp-session-id").is_some());
    let call = requests
        .iter()
        .find(|r| r.rpc_method() == "tools/call")
        .unwrap();
    assert_ne!(
        gets[0].conn, call.conn,
        "the stream has a socket of its own"
    );
    let answer: serde_json::Value = requests
        .iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .find(|b| b["id"] == "g-1")
        .unwrap();
    assert_eq!(
        answer["result"],
        serde_json::json!({"action":"accept","content":{"name":"Ada"}})
    );
}
