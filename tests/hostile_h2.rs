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
//!
//! The HTTP/1.1 catalogue's task scenarios (SEP-2663) also run here over HTTP/2
//! ([`tasks_over_http2`]): their scripts answered as frames, within the client's windows.

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

// ---------------------------------------------------------------------------------------------
// The HTTP/1.1 catalogue's task scenarios (SEP-2663) over HTTP/2, in virtual time

/// The catalogue's `task` scenarios, their scripts answered as HTTP/2 frames
/// (`hostile::h2_play::answer`) within the client's flow-control windows, through an `H2Socket`,
/// whole and in 3-byte pieces. Checked as `tests/hostile.rs` checks them over HTTP/1.1: the
/// outcome (the scenario's outcome over HTTP/2 where it states one), the time bound, a failure on
/// `task_time` exactly at its deadline, the least time, the requests the server received, the
/// bytes read, the memory peak (with the socket's ledger, as above) and both splits alike.
mod tasks_over_http2 {
    use super::*;

    use std::collections::VecDeque;

    use mcp_sansio::{Budget, Era, EraHint};
    use mcp_sansio_test_support::hostile::h2_play::{self, H2Answer, Then, Windows, FRAME_HEADER};
    use mcp_sansio_test_support::hostile::{self, verify, Op, Outcome, Scenario};

    /// An answer being written: its head sent or not, its next DATA piece, when it may go on.
    struct Sending {
        answer: H2Answer,
        head_sent: bool,
        next: usize,
        ready_at: Instant,
    }

    struct Report {
        outcome: Outcome,
        started: Instant,
        ended: Instant,
        created: Option<Instant>,
        requests: u64,
        bytes_read: u64,
        peak: i64,
        steps: u32,
    }

    fn outcome_of(op: &Op, e: &Event) -> Option<Outcome> {
        match e {
            Event::Failed { error, .. } => Some(Outcome::Failed(error.clone())),
            Event::ToolsListed(c) if *op == Op::List => Some(Outcome::Listed {
                tools: c.tools.len(),
                refused: c.refused_count(),
            }),
            Event::CallFinished(r) => Some(Outcome::Called {
                blocks: r.content.len(),
                unknown: r.dropped_unknown,
                invalid: r.dropped_invalid,
            }),
            _ => None,
        }
    }

    fn run(s: &Scenario, split: Split) -> Report {
        let mut config = mcp_sansio::Config::new("https://mcp.example.com/mcp")
            .unwrap()
            .with_budgets(s.budgets.clone())
            .with_tasks(s.tasks);
        config.era_hint = Some(EraHint {
            era: Era::Modern,
            version: "2026-07-28".into(),
        });
        if s.input.hooked() {
            config.input_hook = true;
            config.client_capabilities = r#"{"elicitation":{}}"#.into();
        }
        let mut now = Instant::ZERO;
        counting::reset();
        meter(true);
        let mut socket = H2Socket::new(now, H2Config::from_budgets(&s.budgets), "https");
        let work = socket.add(Connection::new(config).unwrap());
        let c = socket.connection_mut(work).unwrap();
        c.connect(now);
        match s.op {
            Op::Call(args) => c.call_tool(now, "t", args.as_bytes()),
            Op::List => c.list_tools(now),
            Op::Connect | Op::Close => panic!("{}: a task scenario calls or lists", s.name),
        }
        meter(false);
        let started = now;
        let mut server = s.server();
        let mut peer = H2Peer::default();
        let mut windows = Windows::default();
        let mut out = h2server::hello();
        let mut sending: VecDeque<Sending> = VecDeque::new();
        let mut created = None;
        let mut steps = 0u32;
        let outcome = loop {
            steps += 1;
            assert!(
                steps < MAX_STEPS,
                "{}: no end after {MAX_STEPS} steps",
                s.name
            );
            let mut moved = false;
            loop {
                meter(true);
                let bytes = socket.poll_transmit(now);
                meter(false);
                let Some(bytes) = bytes else { break };
                moved = true;
                for req in peer.read(&bytes) {
                    let answer = h2_play::answer(&mut server, &mut peer, &req);
                    let ready_at = now + answer.wait;
                    sending.push_back(Sending {
                        answer,
                        head_sent: false,
                        next: 0,
                        ready_at,
                    });
                }
                windows.observe(&peer.frames);
            }
            assert!(socket.poll_fresh().is_none(), "{}: a fresh socket", s.name);
            let mut found = None;
            loop {
                meter(true);
                let e = socket.poll_event(now);
                meter(false);
                let Some((_, e)) = e else { break };
                moved = true;
                match &e {
                    Event::InputRequired { requests } => {
                        let answer = s.input.answer(requests.get()).expect("a hook");
                        meter(true);
                        let c = socket.connection_mut(work).unwrap();
                        c.provide_input(now, Some(&answer));
                        meter(false);
                    }
                    Event::TaskCreated { .. } => {
                        created.get_or_insert(now);
                    }
                    _ => {
                        if found.is_none() {
                            found = outcome_of(&s.op, &e);
                        }
                    }
                }
                meter(true);
                drop(e);
                meter(false);
            }
            if let Some(o) = found {
                break o;
            }
            // The server writes what is ready and what the windows let through.
            let mut close = false;
            for w in sending.iter_mut().filter(|w| w.ready_at <= now) {
                if !w.head_sent {
                    w.head_sent = true;
                    out.extend_from_slice(&w.answer.head);
                    if !w.answer.every.is_zero() {
                        w.ready_at = now + w.answer.every;
                        continue;
                    }
                }
                while let Some(data) = w.answer.data_frame(w.next) {
                    let need = data.len() - FRAME_HEADER;
                    if windows.room(w.answer.sid) < need as i64 {
                        break;
                    }
                    windows.take(w.answer.sid, need);
                    out.extend(data);
                    w.next += 1;
                    if !w.answer.every.is_zero() {
                        w.ready_at = now + w.answer.every;
                        break;
                    }
                }
            }
            sending.retain(|w| {
                let done = w.head_sent && w.answer.data_frame(w.next).is_none();
                close |= done && w.answer.then == Then::Close;
                !done
            });
            if !out.is_empty() && !socket.is_closed() {
                let bytes = std::mem::take(&mut out);
                let n = match split {
                    Split::Whole => bytes.len().max(1),
                    Split::Chunks(n) => n,
                };
                for piece in bytes.chunks(n) {
                    steps += 1;
                    meter(true);
                    let r = socket.handle_bytes(now, piece);
                    meter(false);
                    if r.is_err() {
                        break;
                    }
                }
                continue;
            }
            out.clear();
            if close {
                meter(true);
                socket.handle_eof(now);
                meter(false);
                continue;
            }
            if moved {
                continue;
            }
            // Nothing moves: the clock goes to the next deadline or the next piece that may go
            // (one waiting on the windows waits for the client).
            let piece_at = sending
                .iter()
                .filter(|w| w.ready_at > now)
                .map(|w| w.ready_at)
                .min();
            let Some(t) = [socket.poll_timeout(), piece_at]
                .into_iter()
                .flatten()
                .min()
            else {
                panic!("{}: stuck at {now:?}", s.name);
            };
            now = t.max(now);
            meter(true);
            socket.handle_timeout(now);
            meter(false);
        };
        let bytes_read = socket.connection(work).map_or(0, |c| c.bytes_read());
        meter(true);
        drop(socket);
        meter(false);
        Report {
            outcome,
            started,
            ended: now,
            created,
            requests: server.requests,
            bytes_read,
            peak: counting::peak(),
            steps,
        }
    }

    fn check(s: &Scenario, r: &Report) -> Result<(), String> {
        verify(s, &r.outcome)?;
        let took = r.ended.saturating_since(r.started);
        if took > s.time_limit() {
            return Err(format!("took {took:?}, limit {:?}", s.time_limit()));
        }
        if let Outcome::Failed(e) = &r.outcome {
            if e.budget().is_some_and(|b| b.budget == Budget::TaskTime) {
                let deadline = r.created.map(|c| c + s.budgets.task_time);
                if deadline != Some(r.ended) {
                    return Err(format!(
                        "failed on task_time at {:?}, its deadline is {deadline:?}",
                        r.ended
                    ));
                }
            }
        }
        s.check_run(took, r.requests)?;
        if r.bytes_read > s.budgets.response_bytes {
            return Err(format!("read {} bytes", r.bytes_read));
        }
        let bound =
            hostile::memory_bound(&s.budgets, &r.outcome) + s.budgets.h2_socket_bytes as i64;
        if r.peak > bound {
            return Err(format!("peak memory {} over {bound}", r.peak));
        }
        if r.steps > MAX_STEPS {
            return Err(format!("{} steps", r.steps));
        }
        Ok(())
    }

    #[test]
    fn task_scenarios_over_http2_end_as_over_http1() {
        let all: Vec<Scenario> = hostile::catalogue::all()
            .into_iter()
            .filter(|s| s.category == "task")
            .map(|s| s.on_http2())
            .collect();
        assert!(all.len() >= 28, "{} task scenarios", all.len());
        let mut problems = Vec::new();
        for s in &all {
            let mut ends = Vec::new();
            for split in SPLITS {
                let r = run(s, split);
                if let Err(e) = check(s, &r) {
                    problems.push(format!("{} ({split:?}): {e}", s.label()));
                }
                ends.push((format!("{:?}", r.outcome), r.ended, r.requests));
            }
            if ends[0] != ends[1] {
                problems.push(format!("{}: splits differ: {ends:?}", s.label()));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
