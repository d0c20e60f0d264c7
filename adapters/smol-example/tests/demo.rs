//! The smol runtime against the demo server on 127.0.0.1: negotiate, list, call, close.

use mcp_sansio::{Config, ContentBlock, Era, Error, TransportErrorKind};
use mcp_sansio_demo_server::{tools::BUILTIN_TOOLS, DemoServer, Eras, Options};
use mcp_sansio_smol_example::{AddressPolicy, Client};

fn client() -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build()
}

/// Lists (three tools a page, so cursors are followed) and calls through smol, then closes.
fn list_and_call(eras: Eras, expect: Era) {
    let server = DemoServer::start(Options::default().eras(eras).page_size(3)).unwrap();
    let client = client();
    smol::block_on(async {
        let mut session = client
            .connect(Config::new(&server.url()).unwrap())
            .await
            .unwrap();
        assert_eq!(session.era(), expect);

        let catalog = session.list_tools().await.unwrap();
        let names: Vec<&str> = catalog.tools.iter().map(|t| t.name()).collect();
        assert_eq!(names, BUILTIN_TOOLS);
        assert!(catalog.refused.is_empty());

        let echo = session
            .call_tool("echo", br#"{"text":"hi smol"}"#)
            .await
            .unwrap();
        assert!(!echo.is_error);
        assert!(
            matches!(&echo.content[..], [ContentBlock::Text { text, .. }] if text == "hi smol"),
            "{:?}",
            echo.content
        );
        let sum = session
            .call_tool("add", br#"{"a":2,"b":40}"#)
            .await
            .unwrap();
        assert_eq!(sum.structured_content.unwrap().get(), r#"{"sum":42}"#);
        let fail = session.call_tool("fail", b"{}").await.unwrap();
        assert!(fail.is_error);
        // The call's keep-alive socket went back to the pool.
        assert_eq!(client.idle_sockets(), 1);

        session.close().await.unwrap();
    });
    // Keep-alive sockets went back to the pool: the work used fewer sockets than requests.
    let stats = server.stats();
    assert!(
        stats.connections_accepted < stats.requests_served,
        "{} connections for {} requests",
        stats.connections_accepted,
        stats.requests_served
    );
    server.shutdown();
}

#[test]
fn lists_and_calls_a_modern_server() {
    list_and_call(Eras::ModernOnly, Era::Modern);
}

#[test]
fn lists_and_calls_a_legacy_server() {
    list_and_call(Eras::LegacyOnly, Era::Legacy);
}

#[test]
fn refuses_loopback_under_the_strict_policy() {
    let server = DemoServer::start(Options::default()).unwrap();
    let client = Client::new();
    let err = smol::block_on(client.connect(Config::new(&server.url()).unwrap())).unwrap_err();
    let refused =
        matches!(&err, Error::Transport(t) if t.kind == TransportErrorKind::AddressRefused);
    assert!(refused, "{err}");
    assert_eq!(
        server.stats().connections_accepted,
        0,
        "no socket was opened"
    );
    server.shutdown();
}
