//! The hostile catalogue's HTTP/2 mode (`checks/support/src/hostile/h2.rs`) run against the core in
//! virtual time: a work item connected from a modern era hint runs its operation as a stream of an
//! `H2Socket` whose server misbehaves.
//!
//! For every scenario and every split (whole, then 3-byte pieces) the runner checks: the error
//! kind and its cause (the named budget with its configured limit, the per-socket cap, the
//! protocol error code), that the operation ended within the scenario's virtual time, that it
//! took a bounded number of steps, that the work item read no more than its byte budget, that
//! memory allocated by the client and still held stayed within [`memory_bound`], and that both
//! splits ended the same way. A request to send on a fresh socket (one the server never
//! processed, or a broken stream re-issued where the socket can carry no more) moves its work
//! item to a fresh socket, as an embedder would, within `responses_per_request`.

use mcp_sansio_test_support::h2server;
use mcp_sansio_test_support::hostile::counting;
use mcp_sansio_test_support::hostile::h2 as h2_catalogue;

/// Allocations counted per thread while the runner meters them.
#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

use std::collections::HashSet;
use std::time::Duration;

use counting::meter;
use h2_catalogue::{scenarios, H2Cause, H2Op, H2Scenario};
use h2server::{drive_metered, H2Peer, Split};
use mcp_sansio::h2::H2Config;
use mcp_sansio::mux::H2Socket;
use mcp_sansio::{Budgets, Connection, Error, ErrorKind, Event, Instant};

/// Client memory a scenario may hold at its peak. Allocations the client makes and the server
/// frees (the bytes it writes, events) count as held, so this over-estimates: three times the
/// byte budget (a body buffer, a decoded copy, growth), the per-socket ledger (control output and
/// octets no stream owns are bounded by it), and 256 KiB for fixed structures.
fn memory_bound(b: &Budgets) -> i64 {
    3 * b.response_bytes as i64 + b.h2_socket_bytes as i64 + 256 * 1024
}

/// Inputs fed (pieces, timeouts) after which a scenario counts as not terminating.
const MAX_STEPS: u32 = 2_000_000;

const SPLITS: [Split; 2] = [Split::Whole, Split::Chunks(3)];

#[derive(Debug)]
struct Outcome {
    error: Option<Error>,
    ended: Instant,
    requests: usize,
    bytes_read: u64,
    peak: i64,
    steps: u32,
}

fn run(sc: &H2Scenario, split: Split) -> Outcome {
    let config = sc.config("https://mcp.example.com/mcp");
    let mut now = Instant::ZERO;
    counting::reset();
    meter(true);
    let h2 = H2Config::from_budgets(&sc.budgets);
    let mut socket = H2Socket::new(now, h2.clone(), "https");
    let mut work = socket.add(Connection::new(config).unwrap());
    let c = socket.connection_mut(work).unwrap();
    c.connect(now);
    match sc.op {
        H2Op::List => c.list_tools(now),
        H2Op::Call(n) => {
            let args = format!(r#"{{"x":"{}"}}"#, "a".repeat(n));
            meter(false);
            c.call_tool(now, "t", args.as_bytes());
            meter(true);
        }
    }
    meter(false);
    let mut events = Vec::new();
    let mut requests = 0;
    let mut steps = 0;
    // Every sending after the first may need a fresh socket (one the server refused or sent
    // away from); `responses_per_request` bounds them.
    let sendings = sc.budgets.responses_per_request;
    for attempt in 0..=sendings {
        let mut peer = H2Peer::default();
        let prelude = (sc.prelude)(&mut peer);
        let r = drive_metered(
            &mut socket,
            &mut peer,
            &mut now,
            split,
            prelude,
            sc.within + Duration::from_secs(1),
            sc.respond,
            &meter,
        );
        steps += r.steps;
        requests += peer.requests.len();
        events.extend(r.events.into_iter().map(|(_, e)| e));
        let Some((w, transmit)) = r.fresh.into_iter().next() else {
            break;
        };
        assert!(
            attempt + 1 < sendings,
            "{}: more sockets than responses_per_request",
            sc.name
        );
        meter(true);
        let conn = socket.remove(now, w).unwrap();
        socket = H2Socket::new(now, h2.clone(), "https");
        work = socket.add(conn);
        socket.resend(work, transmit);
        meter(false);
    }
    let bytes_read = socket.connection(work).unwrap().bytes_read();
    let failures: Vec<Error> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::Failed { error, .. } => Some(error),
            _ => None,
        })
        .collect();
    assert!(failures.len() <= 1, "{}: {failures:?}", sc.name);
    Outcome {
        error: failures.into_iter().next(),
        ended: now,
        requests,
        bytes_read,
        peak: counting::peak(),
        steps,
    }
}

#[test]
fn every_hostile_http2_scenario_ends_in_its_typed_error() {
    let all = scenarios();
    let names: HashSet<&str> = all.iter().map(|s| s.name).collect();
    assert_eq!(names.len(), all.len(), "scenario names are unique");
    let mut problems = Vec::new();
    for sc in &all {
        let mut ends = Vec::new();
        for split in SPLITS {
            let o = run(sc, split);
            let tag = format!("{} ({split:?})", sc.name);
            match &o.error {
                None => problems.push(format!("{tag}: did not fail")),
                Some(e) => {
                    if e.kind() != ErrorKind::ConnectionFailed {
                        problems.push(format!("{tag}: kind {} ({e})", e.kind()));
                    }
                    if !sc.expect.matches(e, &sc.budgets) {
                        problems.push(format!("{tag}: expected {:?}, got {e:?}", sc.expect));
                    }
                }
            }
            if o.ended.saturating_since(Instant::ZERO) > sc.within {
                problems.push(format!("{tag}: ended at {:?}", o.ended));
            }
            if o.requests != sc.requests {
                problems.push(format!(
                    "{tag}: the server saw {} requests, not {}",
                    o.requests, sc.requests
                ));
            }
            if o.steps > MAX_STEPS {
                problems.push(format!("{tag}: {} steps", o.steps));
            }
            if o.bytes_read > sc.budgets.response_bytes {
                problems.push(format!("{tag}: read {} bytes", o.bytes_read));
            }
            if o.peak > memory_bound(&sc.budgets) {
                problems.push(format!(
                    "{tag}: peak memory {} over {}",
                    o.peak,
                    memory_bound(&sc.budgets)
                ));
            }
            ends.push((o.error.as_ref().map(|e| e.to_string()), o.ended, o.requests));
        }
        if ends[0] != ends[1] {
            problems.push(format!("{}: splits differ: {ends:?}", sc.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The runner's checks can fail: a scenario given the wrong cause is reported.
#[test]
fn a_wrong_expectation_is_noticed() {
    let mut sc = scenarios()
        .into_iter()
        .find(|s| s.name == "ping_flood")
        .unwrap();
    let o = run(&sc, Split::Whole);
    assert!(o.peak > 0, "the client's memory is measured");
    let e = o.error.expect("fails");
    assert!(sc.expect.matches(&e, &sc.budgets));
    sc.expect = H2Cause::SettingsTimeout;
    assert!(!sc.expect.matches(&e, &sc.budgets));
}
