//! HTTP/2 through the smol example, against the in-test HTTP/2 server on 127.0.0.1: h2c with
//! prior knowledge and TLS negotiating `h2` by ALPN, several sessions of one client on one socket.

use std::sync::atomic::Ordering;
#[allow(unused_imports)]
use std::{sync::Arc, time::Duration};

use h2::recording;
#[allow(unused_imports)]
use h2_server::{config, is_goaway, Behaviour};
#[allow(unused_imports)]
use mcp_sansio::internals::h2::frame::{Frame, Reason};
use mcp_sansio_smol_example::Client;
use mcp_sansio_test_support::adapter_tests::h2::{self, h2_server};
use mcp_sansio_test_support::h2_tests;

mod block;

use block::Block;

impl Block for smol::Timer {
    type Output = std::time::Instant;
    fn block(self) -> Self::Output {
        smol::block_on(self)
    }
}

// The HTTP/2 tests the tokio and blocking adapters declare, each operation run to its end on the
// test's thread, sessions side by side on threads of their own.
h2_tests!(
    #[test] #[test] [.block()]
    spawn: std::thread::spawn, [move ||], joined: [.join()],
    sleep: smol::Timer::after
);

/// Opens three sessions to `url` side by side, lists and calls through each, and checks the
/// server heard every request as HTTP/2 on streams of one accepted socket.
async fn three_sessions_on_one_socket(client: &Client, url: &str, server: &h2_server::Server) {
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let session = client.connect(h2_server::config(url)).await.unwrap();
        assert_eq!(session.http_version(), "HTTP/2");
        sessions.push(session);
    }
    for session in &mut sessions {
        let catalog = session.list_tools().await.unwrap();
        assert_eq!(catalog.tools.len(), 1);
        assert_eq!(catalog.tools[0].name(), "echo");
        let called = session.call_tool("echo", b"{}").await.unwrap();
        assert!(!called.is_error);
        assert_eq!(called.content.len(), 1);
    }
    for session in sessions {
        session.close().await.unwrap();
    }
    assert_eq!(server.methods(), ["tools/list", "tools/call"].repeat(3));
    assert_eq!(server.accepted.load(Ordering::SeqCst), 1, "one socket");
    let requests = server.requests.lock().unwrap();
    let mut streams: Vec<u32> = requests.iter().map(|r| r.stream).collect();
    streams.sort_unstable();
    streams.dedup();
    assert_eq!(streams.len(), 6, "one stream per request: {streams:?}");
}

#[test]
fn h2c_with_prior_knowledge_shares_one_socket() {
    let server = h2_server::Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client: Client = h2::loopback().h2_prior_knowledge(true).build();
    smol::block_on(three_sessions_on_one_socket(&client, &url, &server));
    let scheme = server.requests.lock().unwrap()[0]
        .header(":scheme")
        .map(str::to_owned);
    assert_eq!(scheme.as_deref(), Some("http"));
}

#[test]
fn tls_negotiates_h2_by_alpn_and_shares_one_socket() {
    let (server, client, url) = h2::tls_setup::<Client>(h2_server::Behaviour::default());
    smol::block_on(three_sessions_on_one_socket(&client, &url, &server));
    let scheme = server.requests.lock().unwrap()[0]
        .header(":scheme")
        .map(str::to_owned);
    assert_eq!(scheme.as_deref(), Some("https"));
}

#[test]
fn without_prior_knowledge_an_http_endpoint_speaks_http1() {
    let server = h2_server::Server::start(None);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let client: Client = h2::loopback().build();
    let session = smol::block_on(client.connect(h2_server::config(&url))).unwrap();
    assert_eq!(session.http_version(), "HTTP/1.1");
}
