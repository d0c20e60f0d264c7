//! The `tracing` test both adapters declare (feature `tracing`): a legacy server behind OAuth
//! ([`crate::auth_server`], [`Mode::Legacy`]) is connected (a 401 authorizes), listed, called (a
//! 403 `insufficient_scope` steps up, connects a new session and retries the call) and closed;
//! then a connect is ended by a budget. A capturing layer ([`Capturing`]) records every span and
//! event; [`check`] checks the span tree, the fields operators read, the authorization steps,
//! and that no token, refresh token, code, PKCE verifier, argument value or endpoint path appears
//! anywhere in what was captured. An adapter's `tests/tracing.rs` brings this module (as
//! `tracing_check`), [`crate::auth_server`] and [`crate::adapter_tests::auth`] into scope and
//! invokes [`crate::tracing_tests!`].
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

#[cfg(doc)]
use crate::auth_server::Mode;
use crate::auth_server::{pairs, AuthServer};

/// A span as captured: its name, its parent's index and its fields (last value wins).
#[derive(Clone, Debug)]
pub struct SpanRec {
    /// The span's name.
    pub name: String,
    /// Its parent's index in [`Capture::spans`].
    pub parent: Option<usize>,
    /// Its fields.
    pub fields: BTreeMap<String, String>,
}

/// An event as captured: the index of the span it belongs to, and its fields (`message`
/// included).
#[derive(Clone, Debug)]
pub struct EventRec {
    /// The index of its span in [`Capture::spans`].
    pub span: Option<usize>,
    /// Its fields.
    pub fields: BTreeMap<String, String>,
}

/// Every span and event captured.
#[derive(Default)]
pub struct Capture {
    /// The spans, in the order they were created.
    pub spans: Vec<SpanRec>,
    /// Span id to index in `spans`.
    ids: BTreeMap<u64, usize>,
    /// The events, in order.
    pub events: Vec<EventRec>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// A layer that keeps everything: install it (`tracing_subscriber::registry().with(...)`) as
/// the global subscriber of a test binary.
#[derive(Clone, Default)]
pub struct Capturing(pub Arc<Mutex<Capture>>);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capturing {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut c = self.0.lock().unwrap();
        let parent = ctx
            .span(id)
            .and_then(|s| s.parent())
            .and_then(|p| c.ids.get(&p.id().into_u64()).copied());
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let n = c.spans.len();
        c.spans.push(SpanRec {
            name: attrs.metadata().name().to_owned(),
            parent,
            fields,
        });
        c.ids.insert(id.into_u64(), n);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut c = self.0.lock().unwrap();
        if let Some(&n) = c.ids.get(&id.into_u64()) {
            values.record(&mut Fields(&mut c.spans[n].fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut c = self.0.lock().unwrap();
        let span = ctx
            .event_span(event)
            .and_then(|s| c.ids.get(&s.id().into_u64()).copied());
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        c.events.push(EventRec { span, fields });
    }
}

/// A value no span or event may carry: the call's argument.
pub const ARGUMENT: &str = "argument-value-never-traced-7f3a";

/// Installs a [`Capturing`] layer as the global subscriber and returns it.
pub fn install() -> Capturing {
    let capture = Capturing::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    capture
}

/// Installs a [`Capturing`] layer as the subscriber of the current thread only, until the
/// guard is dropped: for a test that runs the driver on its own thread, beside others.
pub fn install_here() -> (Capturing, tracing::subscriber::DefaultGuard) {
    let capture = Capturing::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    (capture, tracing::subscriber::set_default(subscriber))
}

/// The arguments of the call: a JSON object holding [`ARGUMENT`].
pub fn arguments() -> Vec<u8> {
    format!(r#"{{"note":"{ARGUMENT}"}}"#).into_bytes()
}

/// Checks what `capture` holds after the session of [`crate::tracing_tests!`] against `server`.
pub fn check(capture: &Capturing, server: &AuthServer) {
    let c = capture.0.lock().unwrap();
    let mut dump = String::new();
    for (i, sp) in c.spans.iter().enumerate() {
        writeln!(
            dump,
            "span {i} {} parent={:?} {:?}",
            sp.name, sp.parent, sp.fields
        )
        .unwrap();
    }
    for e in &c.events {
        writeln!(dump, "event span={:?} {:?}", e.span, e.fields).unwrap();
    }
    let field = |i: usize, name: &str| c.spans[i].fields.get(name).map(String::as_str);

    // The roots, in order: every operation of the work item and every authorization.
    let roots: Vec<usize> = (0..c.spans.len())
        .filter(|&i| c.spans[i].parent.is_none())
        .collect();
    let names: Vec<&str> = roots.iter().map(|&i| c.spans[i].name.as_str()).collect();
    assert_eq!(
        names,
        [
            "connect",
            "authorize",
            "connect",
            "list",
            "call",
            "authorize",
            "connect",
            "close",
            "call",
            "close",
            "connect"
        ],
        "{dump}"
    );
    // Every other span is an exchange of an operation.
    for (i, sp) in c.spans.iter().enumerate() {
        if let Some(p) = sp.parent {
            // An exchange, or the MCP client span of a request (OpenTelemetry's conventions).
            assert!(["exchange", "mcp"].contains(&sp.name.as_str()), "{dump}");
            assert!(
                ["connect", "list", "call", "close"].contains(&c.spans[p].name.as_str()),
                "span {i}: {dump}"
            );
        }
    }
    let exchanges = |op: usize| -> Vec<usize> {
        (0..c.spans.len())
            .filter(|&i| c.spans[i].parent == Some(op) && c.spans[i].name == "exchange")
            .collect()
    };
    let rpcs = |op: usize| -> Vec<String> {
        exchanges(op)
            .iter()
            .map(|&x| {
                let f = &c.spans[x].fields;
                f.get("rpc").cloned().unwrap_or_else(|| f["method"].clone())
            })
            .collect()
    };

    // Every operation names the origin (scheme, host, port; no path) and the HTTP version.
    let port = server
        .url()
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let origin = format!("http://127.0.0.1:{port}");
    for &r in &roots {
        if c.spans[r].name != "authorize" {
            assert_eq!(field(r, "origin"), Some(origin.as_str()), "{dump}");
            assert_eq!(field(r, "http_version"), Some("HTTP/1.1"), "{dump}");
        }
    }
    let [connect_401, auth_1, connect, list, call_403, auth_2, reconnect, close_old, call, close, tight] =
        roots[..]
    else {
        unreachable!()
    };
    // The first connect: the 401, before anything was negotiated.
    assert_eq!(
        field(connect_401, "outcome"),
        Some("mcp_authentication_failed_error")
    );
    assert_eq!(field(connect_401, "era"), None, "{dump}");
    assert_eq!(rpcs(connect_401), ["server/discover"]);
    // The connect after authorizing: a legacy negotiation.
    assert_eq!(field(connect, "outcome"), Some("ok"));
    assert_eq!(field(connect, "era"), Some("legacy"));
    assert_eq!(field(connect, "protocol_version"), Some("2025-06-18"));
    assert_eq!(
        rpcs(connect),
        ["server/discover", "initialize", "notifications/initialized"]
    );
    // The listing: one page, one tool, its bytes those of its one exchange.
    assert_eq!(field(list, "outcome"), Some("ok"));
    assert_eq!(field(list, "pages"), Some("1"));
    assert_eq!(field(list, "tools"), Some("1"));
    assert_eq!(field(list, "era"), Some("legacy"));
    assert_eq!(rpcs(list), ["tools/list"]);
    let page = exchanges(list)[0];
    assert_eq!(c.spans[page].fields["method"], "POST");
    assert_eq!(c.spans[page].fields["outcome"], "reusable");
    let page_bytes: u64 = c.spans[page].fields["bytes_read"].parse().unwrap();
    assert!(page_bytes > 0);
    assert_eq!(
        field(list, "bytes_read"),
        Some(page_bytes.to_string().as_str())
    );
    // The call refused 403, the step-up, the new session, the old one ended, the call again.
    assert_eq!(field(call_403, "tool"), Some("echo"));
    assert_eq!(
        field(call_403, "outcome"),
        Some("mcp_authentication_failed_error")
    );
    assert_eq!(rpcs(call_403), ["tools/call"]);
    assert_eq!(field(reconnect, "outcome"), Some("ok"));
    // The stepped-up token is another authorization context: the era hint of the first token
    // is not its own, so it negotiates again.
    assert_eq!(
        rpcs(reconnect),
        ["server/discover", "initialize", "notifications/initialized"]
    );
    assert_eq!(rpcs(close_old), ["DELETE"]);
    assert_eq!(field(call, "tool"), Some("echo"));
    assert_eq!(field(call, "outcome"), Some("ok"));
    assert_eq!(rpcs(call), ["tools/call"]);
    assert_eq!(field(close, "outcome"), Some("ok"));
    assert_eq!(rpcs(close), ["DELETE"]);
    // No budget ended any of them; the budget names itself where one did.
    for &r in &roots[..10] {
        assert_eq!(field(r, "budget"), None, "{dump}");
    }
    assert_eq!(field(tight, "outcome"), Some("mcp_connection_failed_error"));
    assert_eq!(field(tight, "budget"), Some("response_bytes"), "{dump}");

    // The authorizations: each a span with its steps as events, by name only.
    let steps = |span: usize| -> Vec<&str> {
        c.events
            .iter()
            .filter(|e| e.span == Some(span))
            .map(|e| e.fields["auth"].as_str())
            .collect()
    };
    assert_eq!(field(auth_1, "status"), Some("401"));
    assert_eq!(field(auth_1, "outcome"), Some("ok"));
    assert_eq!(
        steps(auth_1),
        [
            "discovery: protected-resource metadata",
            "discovery: authorization-server metadata",
            "registration",
            "user agent",
            "token exchange"
        ],
        "{dump}"
    );
    assert_eq!(field(auth_2, "status"), Some("403"));
    assert_eq!(field(auth_2, "outcome"), Some("ok"));
    assert_eq!(
        steps(auth_2),
        [
            "discovery: protected-resource metadata",
            "discovery: authorization-server metadata",
            "user agent",
            "token exchange"
        ],
        "{dump}"
    );

    // No secret anywhere: not the tokens, the refresh tokens, the code, the PKCE verifiers, the
    // argument's value, nor the path of the endpoint.
    let seen = server.seen();
    let verifiers: Vec<String> = seen
        .iter()
        .filter_map(|s| pairs(&s.body).get("code_verifier").cloned())
        .collect();
    assert_eq!(verifiers.len(), 2, "{seen:?}");
    let mut secrets = vec![
        "tok-1".to_owned(),
        "tok-2".to_owned(),
        "rt-for".to_owned(),
        "the-code".to_owned(),
        "Bearer".to_owned(),
        ARGUMENT.to_owned(),
        "/mcp".to_owned(),
    ];
    secrets.extend(verifiers.into_iter().filter(|v| v.len() >= 32));
    assert_eq!(secrets.len(), 9, "two verifiers of at least 32 characters");
    for secret in &secrets {
        assert!(!dump.contains(secret.as_str()), "{secret} in\n{dump}");
    }
    assert!(dump.contains("echo"), "the capture is not empty");
}

/// Declares the tracing test of an adapter whose `Client` and `AuthSession` are in scope, with
/// `tracing_check` (this module), `auth` ([`crate::adapter_tests::auth`]) and `auth_server`:
/// `#[$test]` is its test attribute, `async` is present when its operations are futures and
/// `[$($wait)*]` is what waits for an operation (`.await`, or nothing).
#[macro_export]
macro_rules! tracing_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        #[$test]
        $($async)? fn the_spans_of_a_session_name_each_operation_and_exchange_and_carry_no_secret() {
            let capture = tracing_check::install();
            let server = auth_server::AuthServer::start(auth_server::Mode::Legacy);
            let client = Client::builder().policy(auth::policy()).build();
            let config = mcp_sansio::Config::new(&server.url()).unwrap();
            let mut s = AuthSession::connect(
                &client,
                config,
                auth::authorization(&server, auth::browser()),
            )$($wait)*
            .unwrap();
            let catalog = s.list_tools()$($wait)*.unwrap();
            assert_eq!(catalog.tools[0].name(), "echo");
            let r = s.call_tool("echo", &tracing_check::arguments())$($wait)*.unwrap();
            assert!(!r.is_error);
            s.close()$($wait)*.unwrap();
            // A session that a budget ends: its 401 is longer than the 40 bytes it may read.
            let mut tight = mcp_sansio::Config::new(&server.url()).unwrap();
            tight.budgets.response_bytes = 40;
            let e = client.connect(tight)$($wait)*.unwrap_err();
            assert_eq!(e.budget().map(|b| b.budget.name()), Some("response_bytes"), "{e}");
            tracing_check::check(&capture, &server);
        }
    };
}

/// A value the URL's query carries, which no span or event may carry.
pub const QUERY_SECRET: &str = "query-secret-never-traced-c41b";

/// The URL of the HTTP/2 session of [`crate::tracing_h2_tests!`] on `port`: h2c, with a query
/// holding [`QUERY_SECRET`].
pub fn h2_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp?key={QUERY_SECRET}")
}

/// Checks what `capture` holds after the HTTP/2 session of [`crate::tracing_h2_tests!`] (a
/// listing and two calls over h2c, from a modern era hint, then a close; the server asks the
/// second call for another round): the second call holds two exchange spans and its `retry`
/// event; the listing and the first call each hold one exchange span with its id, HTTP method, JSON-RPC method, an odd stream id (a
/// client's), its bytes (those of its operation, the only exchange) and `finished`; no argument,
/// query or path appears anywhere.
pub fn check_h2(capture: &Capturing, port: u16) {
    let c = capture.0.lock().unwrap();
    let mut dump = String::new();
    for (i, sp) in c.spans.iter().enumerate() {
        writeln!(
            dump,
            "span {i} {} parent={:?} {:?}",
            sp.name, sp.parent, sp.fields
        )
        .unwrap();
    }
    for e in &c.events {
        writeln!(dump, "event span={:?} {:?}", e.span, e.fields).unwrap();
    }
    let field = |i: usize, name: &str| c.spans[i].fields.get(name).map(String::as_str);
    let roots: Vec<usize> = (0..c.spans.len())
        .filter(|&i| c.spans[i].parent.is_none())
        .collect();
    let names: Vec<&str> = roots.iter().map(|&i| c.spans[i].name.as_str()).collect();
    assert_eq!(
        names,
        ["connect", "list", "call", "call", "close"],
        "{dump}"
    );
    let origin = format!("http://127.0.0.1:{port}");
    for &r in &roots {
        assert_eq!(field(r, "origin"), Some(origin.as_str()), "{dump}");
        assert_eq!(field(r, "http_version"), Some("HTTP/2"), "{dump}");
        assert_eq!(field(r, "outcome"), Some("ok"), "{dump}");
    }
    let exchanges = |op: usize| -> Vec<usize> {
        (0..c.spans.len())
            .filter(|&i| c.spans[i].parent == Some(op) && c.spans[i].name == "exchange")
            .collect()
    };
    let mut ids = Vec::new();
    let mut streams = Vec::new();
    for (op, rpc) in [(roots[1], "tools/list"), (roots[2], "tools/call")] {
        let xs = exchanges(op);
        assert_eq!(xs.len(), 1, "{dump}");
        let x = xs[0];
        assert_eq!(c.spans[x].name, "exchange", "{dump}");
        assert_eq!(field(x, "method"), Some("POST"), "{dump}");
        assert_eq!(field(x, "rpc"), Some(rpc), "{dump}");
        assert_eq!(field(x, "outcome"), Some("finished"), "{dump}");
        let bytes: u64 = field(x, "bytes_read").unwrap().parse().unwrap();
        assert!(bytes > 0, "{dump}");
        assert_eq!(
            field(op, "bytes_read"),
            Some(bytes.to_string().as_str()),
            "{dump}"
        );
        let stream: u32 = field(x, "stream").unwrap().parse().unwrap();
        assert_eq!(stream % 2, 1, "a client's stream: {dump}");
        streams.push(stream);
        ids.push(field(x, "exchange").unwrap().to_owned());
        assert_eq!(field(x, "fresh_socket"), None, "{dump}");
    }
    assert_ne!(ids[0], ids[1], "{dump}");
    assert!(streams[0] < streams[1], "{dump}");
    // The MCP client span of the call, made by the shared connection as it opens the stream
    // (OpenTelemetry's conventions for MCP: `network.protocol.version` "`1.1`; `2`").
    let client_spans: Vec<usize> = (0..c.spans.len())
        .filter(|&i| c.spans[i].parent == Some(roots[2]) && c.spans[i].name == "mcp")
        .collect();
    assert_eq!(client_spans.len(), 1, "{dump}");
    let m = client_spans[0];
    assert_eq!(field(m, "mcp.method.name"), Some("tools/call"), "{dump}");
    assert_eq!(field(m, "network.protocol.version"), Some("2"), "{dump}");
    assert_eq!(
        field(m, "server.port"),
        Some(port.to_string().as_str()),
        "{dump}"
    );
    // The call the server asked for a second round of: two streams, and the second is a retry
    // of the operation, an event of its span as over HTTP/1.1.
    let again = roots[3];
    let xs = exchanges(again);
    assert_eq!(xs.len(), 2, "{dump}");
    assert!(
        xs.iter().all(|&x| field(x, "rpc") == Some("tools/call")),
        "{dump}"
    );
    let events: Vec<&BTreeMap<String, String>> = c
        .events
        .iter()
        .filter(|e| e.span == Some(again))
        .map(|e| &e.fields)
        .collect();
    assert_eq!(events.len(), 1, "{dump}");
    assert_eq!(events[0]["message"], "retry", "{dump}");
    assert_eq!(events[0]["attempt"], "2", "{dump}");
    assert_eq!(
        events[0]["exchange"],
        field(xs[1], "exchange").unwrap(),
        "{dump}"
    );
    for secret in [ARGUMENT, QUERY_SECRET, "/mcp", "key="] {
        assert!(!dump.contains(secret), "{secret} in\n{dump}");
    }
    assert!(dump.contains("echo"), "the capture is not empty");
}

/// Declares the HTTP/2 tracing test of an adapter whose `Client` is in scope, with
/// `tracing_check` (this module) and `h2_server` ([`crate::h2_server`]); its arguments are
/// those of [`crate::tracing_tests!`]. The test runs in a binary of its own (it installs the
/// global subscriber).
#[macro_export]
macro_rules! tracing_h2_tests {
    (#[$test:meta] $($async:ident)? [$($wait:tt)*]) => {
        #[$test]
        $($async)? fn the_exchange_spans_over_http2_name_each_stream_and_carry_no_secret() {
            let capture = tracing_check::install();
            let server = h2_server::Server::start(None);
            let client: Client = Client::builder()
                .policy(
                    mcp_sansio_net::AddressPolicy::strict().allow_loopback(true),
                )
                .h2_prior_knowledge(true)
                .build();
            let url = tracing_check::h2_url(server.port);
            let mut s = client.connect(h2_server::config(&url))$($wait)*.unwrap();
            assert_eq!(s.http_version(), "HTTP/2");
            assert_eq!(s.list_tools()$($wait)*.unwrap().tools.len(), 1);
            let r = s.call_tool("echo", &tracing_check::arguments())$($wait)*.unwrap();
            assert!(!r.is_error);
            let r = s.call_tool("again", &tracing_check::arguments())$($wait)*.unwrap();
            assert!(!r.is_error);
            s.close()$($wait)*.unwrap();
            tracing_check::check_h2(&capture, server.port);
        }
    };
}
