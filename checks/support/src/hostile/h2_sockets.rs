//! Running the HTTP/2 catalogue (`h2.rs`) over real 127.0.0.1 sockets: the scenario's server on
//! every socket it accepts, the flood deadline, and the verdict on an operation's result. An
//! adapter's test uses this module with the scripted peer ([`crate::h2server`]) and the catalogue
//! ([`super::h2`]), and runs each scenario's operation its own way.
//!
//! One difference with virtual time is checked for what it is: an adapter writes the
//! acknowledgements of a SETTINGS or PING flood as fast as it reads the flood, so the queued
//! control output may stay under its cap; such a flood then ends at the operation's deadline
//! (shortened to [`FLOOD_DEADLINE`]), the flood charged to the socket's ledger meanwhile.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_sansio::h2::H2Limit;
use mcp_sansio::{Budget, Config, Error, ErrorKind};

use super::h2::{H2Cause, H2Scenario};
use crate::h2server::H2Peer;

/// The longest wall time a scenario's operation is given (most scenarios end at once; their
/// time is a bound in virtual time).
pub const LONGEST: Duration = Duration::from_secs(20);
/// The request and listing deadline of the control-output flood scenarios.
pub const FLOOD_DEADLINE: Duration = Duration::from_secs(3);
/// Wall time an operation may take beyond its scenario's time.
pub const GRACE: Duration = Duration::from_secs(5);

/// Whether the scenario is a control-output flood.
pub fn is_flood(sc: &H2Scenario) -> bool {
    sc.expect == H2Cause::Limit(H2Limit::ControlOutput)
}

/// The scenario as run over sockets: a flood's deadlines shortened to [`FLOOD_DEADLINE`].
pub fn prepare(mut sc: H2Scenario) -> H2Scenario {
    if is_flood(&sc) {
        sc.budgets.request_time = FLOOD_DEADLINE;
        sc.budgets.list_time = FLOOD_DEADLINE;
    }
    sc
}

/// The wall time the scenario's operation may take.
pub fn limit(sc: &H2Scenario) -> Duration {
    sc.within.min(LONGEST) + GRACE
}

/// The configuration of the scenario's work item, to the server on `port` (h2c, modern hint).
pub fn config(sc: &H2Scenario, port: u16) -> Config {
    sc.config(&format!("http://127.0.0.1:{port}/mcp"))
}

/// Starts the scenario's server on a free port; counts the requests it saw on every socket.
pub fn serve(sc: &H2Scenario) -> (u16, Arc<AtomicUsize>) {
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

/// What went wrong with the scenario's run, if anything: `result` is the operation's result
/// (`Ok(Some(problem))` for a problem found before it, such as the wrong HTTP version), `seen`
/// the requests the server saw.
pub fn judge(
    sc: &H2Scenario,
    result: Result<Option<String>, Error>,
    seen: usize,
) -> Option<String> {
    let tag = sc.name;
    match result {
        Ok(Some(problem)) => Some(format!("{tag}: {problem}")),
        Ok(None) => Some(format!("{tag}: did not fail")),
        Err(e) if e.kind() != ErrorKind::ConnectionFailed => {
            Some(format!("{tag}: kind {} ({e})", e.kind()))
        }
        Err(e)
            if is_flood(sc)
                && e.budget().is_some_and(|x| {
                    matches!(x.budget, Budget::RequestTime | Budget::ListTime)
                }) =>
        {
            None
        }
        Err(e) if !sc.expect.matches(&e, &sc.budgets) => {
            Some(format!("{tag}: expected {:?}, got {e:?}", sc.expect))
        }
        Err(_) if seen != sc.requests => Some(format!(
            "{tag}: the server saw {seen} requests, not {}",
            sc.requests
        )),
        Err(_) => None,
    }
}

/// Runs every scenario of the HTTP/2 catalogue at once, one thread each, through `operate` (an
/// adapter's operation run to its end on the calling thread), and fails with every problem
/// [`judge`] found, or a scenario that did not end within its [`limit`].
pub fn play_all(operate: fn(&H2Scenario, u16) -> Result<Option<String>, Error>) {
    let threads: Vec<_> = super::h2::scenarios()
        .into_iter()
        .map(|sc| std::thread::spawn(move || play(sc, operate)))
        .collect();
    let problems: Vec<String> = threads
        .into_iter()
        .filter_map(|t| t.join().unwrap())
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn play(
    sc: H2Scenario,
    operate: fn(&H2Scenario, u16) -> Result<Option<String>, Error>,
) -> Option<String> {
    let sc = prepare(sc);
    let (port, seen) = serve(&sc);
    let limit = limit(&sc);
    let started = std::time::Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let name = sc.name;
    let worker = sc.clone();
    std::thread::spawn(move || {
        let _ = tx.send(operate(&worker, port));
    });
    let Ok(result) = rx.recv_timeout(limit) else {
        return Some(format!("{name}: did not end within {limit:?}"));
    };
    if started.elapsed() > limit {
        return Some(format!("{name}: took {:?}", started.elapsed()));
    }
    judge(&sc, result, seen.load(Ordering::SeqCst))
}
