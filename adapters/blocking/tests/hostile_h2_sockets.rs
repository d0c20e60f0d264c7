//! The hostile catalogue's HTTP/2 mode (`checks/support/src/hostile/h2.rs`) over real 127.0.0.1
//! sockets through the blocking adapter, speaking HTTP/2 with prior knowledge, as the tokio
//! adapter's `hostile_h2_sockets` does (the runner is `checks/support/src/hostile/h2_sockets.rs`):
//! each scenario's server plays its prelude and answers on every socket it accepts (a retry opens a
//! new one), and the operation must end in the scenario's typed error, of kind `ConnectionFailed`,
//! within the scenario's time (at most `LONGEST`) plus a grace. All scenarios run at once, one
//! thread each; a control-output flood may end at its shortened deadline instead (see the runner).

use mcp_sansio_test_support::hostile::h2 as h2_catalogue;
use mcp_sansio_test_support::hostile::h2_sockets;

use h2_catalogue::{H2Op, H2Scenario};
use mcp_sansio_blocking::{AddressPolicy, Client};

/// Runs one scenario's operation; `Ok(Some(problem))` for a problem before the operation.
fn operate(sc: &H2Scenario, port: u16) -> Result<Option<String>, mcp_sansio::Error> {
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .h2_prior_knowledge(true)
        .era_hints(false)
        .build();
    let mut session = client.connect(h2_sockets::config(sc, port))?;
    if session.http_version() != "HTTP/2" {
        return Ok(Some(format!("spoke {}", session.http_version())));
    }
    match sc.op {
        H2Op::List => session.list_tools().map(|_| None),
        H2Op::Call(n) => {
            let args = format!(r#"{{"x":"{}"}}"#, "a".repeat(n));
            session.call_tool("t", args.as_bytes()).map(|_| None)
        }
    }
}

/// Runs one scenario; returns what went wrong, if anything.
#[test]
fn hostile_http2_servers_over_sockets_end_in_their_typed_errors() {
    h2_sockets::play_all(operate);
}
