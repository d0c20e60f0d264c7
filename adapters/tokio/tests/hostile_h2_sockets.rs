//! The hostile catalogue's HTTP/2 mode (`checks/hostile/h2.rs`) over real 127.0.0.1 sockets
//! through the tokio adapter, speaking HTTP/2 with prior knowledge: each scenario's server plays
//! its prelude and answers on every socket it accepts (a retry opens a new one), and the
//! operation must end in the scenario's typed error, of kind `ConnectionFailed`, within the
//! scenario's time (at most [`LONGEST`]) plus a grace. All scenarios run at once.
//!
//! One difference with virtual time is checked for what it is: the adapter writes the
//! acknowledgements of a SETTINGS or PING flood as fast as it reads the flood, so the queued
//! control output may stay under its cap; such a flood then ends at the operation's deadline
//! (shortened here to [`FLOOD_DEADLINE`]), the flood charged to the socket's ledger meanwhile.

#[path = "../../../tests/support/h2server.rs"]
mod h2server;

#[path = "../../../checks/hostile/h2.rs"]
mod h2_catalogue;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use h2_catalogue::{scenarios, H2Cause, H2Op, H2Scenario};
use h2server::H2Peer;
use mcp_sansio::internals::h2::{H2Error, H2Limit, HpackError, Reason};
use mcp_sansio::{Budget, Budgets, Config, Era, EraHint, Error, ErrorKind};
use mcp_sansio_tokio::{AddressPolicy, Client};

/// The longest wall time a scenario's operation is given (most scenarios end at once; their
/// time is a bound in virtual time).
const LONGEST: Duration = Duration::from_secs(20);
/// The request and listing deadline of the control-output flood scenarios.
const FLOOD_DEADLINE: Duration = Duration::from_secs(3);

/// Wall time an operation may take beyond its scenario's time.
const GRACE: Duration = Duration::from_secs(5);

/// Starts the scenario's server on a free port; counts the requests it saw on every socket.
fn serve(sc: &H2Scenario) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let (prelude, respond, count) = (sc.prelude, sc.respond, seen.clone());
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(mut tcp) = tcp else { return };
            let count = count.clone();
            std::thread::spawn(move || {
                let mut peer = H2Peer::default();
                if tcp.write_all(&prelude(&mut peer)).is_err() {
                    return;
                }
                let mut buf = vec![0u8; 16 * 1024];
                loop {
                    let n = match tcp.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        peer.read(&buf[..n])
                    }));
                    let Ok(done) = read else { return };
                    for req in done {
                        count.fetch_add(1, Ordering::SeqCst);
                        if tcp.write_all(&respond(&mut peer, &req)).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    (port, seen)
}

/// Whether `error` is the cause `expect` names, with the configured limit of a budget.
fn matches_cause(error: &Error, expect: H2Cause, b: &Budgets) -> bool {
    let h2 = match error {
        Error::H2(e) => Some(e),
        _ => None,
    };
    match expect {
        H2Cause::Budget(budget) => error
            .budget()
            .is_some_and(|x| x.budget == budget && x.limit == b.limit(budget)),
        H2Cause::Limit(limit) => {
            matches!(h2, Some(H2Error::Limit { limit: l, .. }) if *l == limit)
        }
        H2Cause::Protocol(reason) => matches!(
            h2,
            Some(e @ (H2Error::Protocol { .. } | H2Error::Frame(_))) if e.reason() == reason
        ),
        H2Cause::HeaderList => matches!(
            h2,
            Some(H2Error::Hpack(HpackError::HeaderListTooLarge { .. }))
        ),
        H2Cause::Compression => matches!(
            h2,
            Some(e @ H2Error::Hpack(_)) if e.reason() == Reason::COMPRESSION_ERROR
        ),
        H2Cause::Malformed => matches!(h2, Some(H2Error::Malformed { .. })),
        H2Cause::ContentLength => matches!(h2, Some(H2Error::ContentLength { .. })),
        H2Cause::Reset(reason) => matches!(h2, Some(H2Error::Reset { reason: r }) if *r == reason),
        H2Cause::GoAway => matches!(h2, Some(H2Error::GoAway { .. })),
        H2Cause::SettingsTimeout => matches!(h2, Some(H2Error::SettingsTimeout { ms: 10_000 })),
    }
}

/// Runs one scenario; returns what went wrong, if anything.
async fn run(mut sc: H2Scenario) -> Option<String> {
    let flood = sc.expect == H2Cause::Limit(H2Limit::ControlOutput);
    if flood {
        sc.budgets.request_time = FLOOD_DEADLINE;
        sc.budgets.list_time = FLOOD_DEADLINE;
    }
    let (port, seen) = serve(&sc);
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .h2_prior_knowledge(true)
        .era_hints(false)
        .build();
    let mut config = Config::new(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    config.budgets = sc.budgets.clone();
    config.era_hint = Some(EraHint {
        era: Era::Modern,
        version: "2026-07-28".into(),
    });
    let op = async {
        let mut session = client.connect(config).await?;
        if session.http_version() != "HTTP/2" {
            return Ok(Some(format!("spoke {}", session.http_version())));
        }
        match sc.op {
            H2Op::List => session.list_tools().await.map(|_| None),
            H2Op::Call(n) => {
                let args = format!(r#"{{"x":"{}"}}"#, "a".repeat(n));
                session.call_tool("t", args.as_bytes()).await.map(|_| None)
            }
        }
    };
    let tag = sc.name;
    let limit = sc.within.min(LONGEST) + GRACE;
    let result = match tokio::time::timeout(limit, op).await {
        Err(_) => return Some(format!("{tag}: did not end within {limit:?}")),
        Ok(r) => r,
    };
    match result {
        Ok(Some(problem)) => Some(format!("{tag}: {problem}")),
        Ok(None) => Some(format!("{tag}: did not fail")),
        Err(e) if e.kind() != ErrorKind::ConnectionFailed => {
            Some(format!("{tag}: kind {} ({e})", e.kind()))
        }
        Err(e)
            if flood
                && e.budget().is_some_and(|x| {
                    matches!(x.budget, Budget::RequestTime | Budget::ListTime)
                }) =>
        {
            None
        }
        Err(e) if !matches_cause(&e, sc.expect, &sc.budgets) => {
            Some(format!("{tag}: expected {:?}, got {e:?}", sc.expect))
        }
        Err(_) if seen.load(Ordering::SeqCst) != sc.requests => Some(format!(
            "{tag}: the server saw {} requests, not {}",
            seen.load(Ordering::SeqCst),
            sc.requests
        )),
        Err(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_http2_servers_over_sockets_end_in_their_typed_errors() {
    let all = scenarios();
    let tasks: Vec<_> = all.into_iter().map(|sc| tokio::spawn(run(sc))).collect();
    let mut problems = Vec::new();
    for t in tasks {
        if let Some(p) = t.await.unwrap() {
            problems.push(p);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
