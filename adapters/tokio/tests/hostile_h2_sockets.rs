//! The hostile catalogue's HTTP/2 mode (`checks/support/src/hostile/h2.rs`) over real 127.0.0.1
//! sockets through the tokio adapter, speaking HTTP/2 with prior knowledge, as the blocking
//! adapter's `hostile_h2_sockets` does (the runner is `checks/support/src/hostile/h2_sockets.rs`):
//! each scenario's server plays its prelude and answers on every socket it accepts (a retry opens a
//! new one), and the operation must end in the scenario's typed error, of kind `ConnectionFailed`,
//! within the scenario's time (at most `LONGEST`) plus a grace. All scenarios run at once, one task
//! each; a control-output flood may end at its shortened deadline instead (see the runner).

use mcp_sansio_test_support::hostile::h2 as h2_catalogue;
use mcp_sansio_test_support::hostile::h2_sockets;

use std::sync::atomic::Ordering;

use h2_catalogue::{scenarios, H2Op, H2Scenario};
use mcp_sansio_tokio::{AddressPolicy, Client};

/// Runs one scenario's operation; `Ok(Some(problem))` for a problem before the operation.
async fn operate(sc: &H2Scenario, port: u16) -> Result<Option<String>, mcp_sansio::Error> {
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .h2_prior_knowledge(true)
        .era_hints(false)
        .build();
    let mut session = client.connect(h2_sockets::config(sc, port)).await?;
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
}

/// Runs one scenario; returns what went wrong, if anything.
async fn run(sc: H2Scenario) -> Option<String> {
    let sc = h2_sockets::prepare(sc);
    let (port, seen) = h2_sockets::serve(&sc);
    let limit = h2_sockets::limit(&sc);
    let Ok(result) = tokio::time::timeout(limit, operate(&sc, port)).await else {
        return Some(format!("{}: did not end within {limit:?}", sc.name));
    };
    h2_sockets::judge(&sc, result, seen.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_http2_servers_over_sockets_end_in_their_typed_errors() {
    let tasks: Vec<_> = scenarios()
        .into_iter()
        .map(|sc| tokio::spawn(run(sc)))
        .collect();
    let mut problems = Vec::new();
    for t in tasks {
        if let Some(p) = t.await.unwrap() {
            problems.push(p);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
