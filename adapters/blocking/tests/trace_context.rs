//! The trace context round trip at a real server: the demo server records the `_meta`
//! `traceparent`, `tracestate` and `baggage` of every request it receives, and each equals what
//! the client sent through this adapter. MCP 2026-07-28 (SEP-414, `basic/index.mdx`): the
//! `_meta` keys `traceparent`, `tracestate` and `baggage` are reserved for OpenTelemetry
//! propagation, their values following W3C Trace Context and W3C Baggage; OpenTelemetry's MCP
//! conventions: "inject `traceparent` and `tracestate` to the MCP message `params._meta` when
//! creating request or notification".

use mcp_sansio::{Config, TraceContext};
use mcp_sansio_blocking::{AddressPolicy, Client};
use mcp_sansio_demo_server::{DemoServer, Eras, Options};

/// W3C Trace Context's examples (§3.2.2.1, §3.3.1.1); W3C Baggage's.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const STATE: &str = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";
const BAGGAGE: &str = "userId=alice,serverNode=DF%2028,isProduction=false";
const TP2: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

fn client() -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .build()
}

#[test]
fn the_server_sees_the_trace_id_the_client_sent_in_each_era() {
    for eras in [Eras::ModernOnly, Eras::LegacyOnly] {
        let server = DemoServer::start(Options::default().eras(eras)).unwrap();
        let trace = TraceContext::new(TP, Some(STATE), Some(BAGGAGE)).unwrap();
        let config = Config::new(&server.url())
            .unwrap()
            .with_trace_context(Some(trace));
        let client = client();
        let mut session = client.connect(config).unwrap();
        session.list_tools().unwrap();
        session.call_tool("echo", br#"{"text":"hi"}"#).unwrap();
        // The next operation's parent, given by the embedder.
        session.set_trace_context(Some(TraceContext::new(TP2, None, None).unwrap()));
        session.call_tool("echo", br#"{"text":"again"}"#).unwrap();

        let seen = server.trace_contexts();
        let methods: Vec<&str> = seen.iter().map(|t| t.method.as_str()).collect();
        let expected: &[&str] = match eras {
            // The probe the legacy server refuses carried it too.
            Eras::LegacyOnly => &[
                "server/discover",
                "initialize",
                "tools/list",
                "tools/call",
                "tools/call",
            ],
            _ => &["server/discover", "tools/list", "tools/call", "tools/call"],
        };
        assert_eq!(methods, expected, "{seen:?}");
        let (before, after) = seen.split_at(seen.len() - 1);
        for t in before {
            assert_eq!(t.trace_id(), Some(TRACE_ID), "{t:?}");
            assert_eq!(t.traceparent, TP);
            assert_eq!(t.tracestate.as_deref(), Some(STATE));
            assert_eq!(t.baggage.as_deref(), Some(BAGGAGE));
        }
        assert_eq!(after[0].traceparent, TP2, "{seen:?}");
        assert_eq!(after[0].tracestate, None);
        assert_eq!(after[0].baggage, None);
        drop(session);
        server.shutdown();
    }
}
