//! The hostile-server catalogue (`checks/support/src/hostile/`) run against the core in virtual
//! time.
//!
//! For every scenario and every split (whole, then 3-byte pieces) the runner checks: the error
//! kind and its cause (the named budget with its configured limit), that the operation ended
//! within its time budget in virtual time (a task's time counted from its creation) and took at
//! least the scenario's least time, that the server received no more requests than the scenario
//! allows, that it took a bounded number of steps, that the bytes read stayed within the byte
//! budget, that retained memory stayed within [`memory_bound`], and that both splits ended the
//! same way.

use mcp_sansio_test_support::hostile;
use mcp_sansio_test_support::hostile::counting;

/// Allocations counted per thread while the runner meters them.
#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// Every state change of a scenario is checked against the transition table.
#[path = "support/table.rs"]
mod table;

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use counting::counted;
use hostile::script::{parse_request, render, Server, Step};
use hostile::{memory_bound, verify, Input, Op, Outcome, Scenario, Setup};
use mcp_sansio::socket::Http1Socket;
use mcp_sansio::{Budget, Config, Connection, Era, EraHint, Event, ExchangeId, Instant};

// ---------------------------------------------------------------------------------------------
// The runner

/// Steps (inputs fed, timeouts handled) after which a scenario counts as not terminating.
const MAX_STEPS: u64 = 3_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    Whole,
    Pieces(usize),
}

const SPLITS: [Split; 2] = [Split::Whole, Split::Pieces(3)];

/// An exchange the server is answering.
struct Task {
    exchange: ExchangeId,
    steps: VecDeque<Step>,
    ready_at: Instant,
    /// A trickle's wait before its next piece is done.
    waited: bool,
}

struct Report {
    outcome: Outcome,
    started: Instant,
    ended: Instant,
    steps: u64,
    bytes_read: u64,
    peak: i64,
    /// When each request of the run was sent, in order (virtual time).
    sent: Vec<Instant>,
    /// When the call's task was created, if it became one.
    task_created: Option<Instant>,
    /// Requests the server received.
    requests: u64,
}

struct Driver {
    conn: Connection,
    socket: Http1Socket,
    server: Server,
    now: Instant,
    tasks: Vec<Task>,
    live: HashSet<ExchangeId>,
    split: Split,
    steps: u64,
    input: Input,
    /// Events seen while feeding, not yet looked at.
    pending: Vec<Event>,
    /// When each request was sent.
    sent: Vec<Instant>,
    /// When the call's task was created.
    task_created: Option<Instant>,
    table: table::TableCheck,
}

impl Driver {
    /// Sends requests to the server and returns the events.
    fn drain(&mut self) -> Vec<Event> {
        self.table.observe(&self.conn);
        let mut events = Vec::new();
        while let Some(t) = counted(|| self.conn.poll_transmit()) {
            let bytes = Http1Socket::encode(&t).expect("a checked request encodes");
            let req = parse_request(&bytes).expect("the core sends well-formed requests");
            let steps = self.server.answer(&req);
            self.sent.push(self.now);
            self.live.insert(t.exchange);
            self.tasks.push(Task {
                exchange: t.exchange,
                steps: steps.into(),
                ready_at: self.now,
                waited: false,
            });
            counted(|| drop(t));
        }
        while let Some(e) = counted(|| self.conn.poll_event()) {
            match &e {
                Event::ExchangeFinished { exchange, .. }
                | Event::ExchangeAbandoned { exchange } => {
                    self.live.remove(exchange);
                    counted(|| drop(e));
                }
                Event::InputRequired { requests } => {
                    let now = self.now;
                    match self.input.answer(requests.get()) {
                        Some(a) => {
                            counted(|| self.conn.provide_input(now, Some(&a)));
                            self.table.observe(&self.conn);
                        }
                        None => panic!("input requested without a hook"),
                    }
                    counted(|| drop(e));
                }
                Event::TaskCreated { .. } => {
                    self.task_created.get_or_insert(self.now);
                    counted(|| drop(e));
                }
                _ => events.push(e),
            }
        }
        events
    }

    fn feed(&mut self, exchange: ExchangeId, bytes: &[u8]) {
        let size = match self.split {
            Split::Whole => bytes.len().max(1),
            Split::Pieces(n) => n,
        };
        for piece in bytes.chunks(size) {
            if !self.live.contains(&exchange) {
                return;
            }
            self.steps += 1;
            let now = self.now;
            counted(|| {
                self.socket
                    .handle_bytes(&mut self.conn, now, exchange, piece)
            });
            // Events that end the exchange must be seen before the next piece.
            let evs = self.drain();
            self.pending.extend(evs);
        }
    }
}

impl Driver {
    fn run_one_step(&mut self) -> bool {
        self.tasks.retain(|t| !t.steps.is_empty());
        let now = self.now;
        let Some(i) = self.tasks.iter().position(|t| t.ready_at <= now) else {
            return false;
        };
        let exchange = self.tasks[i].exchange;
        if !self.live.contains(&exchange) {
            self.tasks.swap_remove(i);
            return true;
        }
        let step = self.tasks[i].steps.pop_front().expect("non-empty");
        match step {
            Step::Send(_) | Step::Respond { .. } | Step::Chunk(_) => {
                let bytes = render(&step).unwrap_or_default();
                self.feed(exchange, &bytes);
            }
            Step::Repeat { bytes, times } => {
                if times > 1 {
                    self.tasks[i].steps.push_front(Step::Repeat {
                        bytes: bytes.clone(),
                        times: times - 1,
                    });
                }
                self.feed(exchange, &bytes);
            }
            Step::Trickle {
                bytes,
                piece,
                every,
            } => {
                let task = &mut self.tasks[i];
                if !task.waited {
                    task.waited = true;
                    task.ready_at = now + every;
                    task.steps.push_front(Step::Trickle {
                        bytes,
                        piece,
                        every,
                    });
                } else {
                    task.waited = false;
                    let piece_len = piece.max(1).min(bytes.len());
                    if piece_len < bytes.len() {
                        task.steps.push_front(Step::Trickle {
                            bytes: bytes[piece_len..].to_vec(),
                            piece,
                            every,
                        });
                    }
                    self.feed(exchange, &bytes[..piece_len]);
                }
            }
            Step::Wait(d) => self.tasks[i].ready_at = now + d,
            Step::Close => {
                self.tasks[i].steps.clear();
                self.steps += 1;
                counted(|| self.socket.handle_eof(&mut self.conn, now, exchange));
                let evs = self.drain();
                self.pending.extend(evs);
            }
            Step::Hang => self.tasks[i].steps.clear(),
        }
        true
    }

    /// Runs until `done` maps an event to an outcome.
    fn run_until(&mut self, done: impl Fn(&Event) -> Option<Outcome>) -> Outcome {
        loop {
            let evs = self.drain();
            self.pending.extend(evs);
            let pending = std::mem::take(&mut self.pending);
            let mut found = None;
            for e in pending {
                if found.is_none() {
                    found = done(&e);
                }
                counted(|| drop(e));
            }
            if let Some(o) = found {
                return o;
            }
            self.steps += 1;
            assert!(self.steps <= MAX_STEPS, "no end after {MAX_STEPS} steps");
            if self.run_one_step() {
                continue;
            }
            let now = self.now;
            let next_task = self
                .tasks
                .iter()
                .filter(|t| self.live.contains(&t.exchange))
                .map(|t| t.ready_at)
                .min();
            let next = [next_task, self.conn.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(t) = next else {
                panic!("stuck: nothing to feed and no timeout at {now:?}");
            };
            self.now = t.max(now);
            let now = self.now;
            counted(|| self.conn.handle_timeout(now));
        }
    }
}

fn outcome_of(op: &Op, e: &Event) -> Option<Outcome> {
    let ours = match op {
        Op::Connect => mcp_sansio::Operation::Connect,
        Op::List => mcp_sansio::Operation::ListTools,
        Op::Call(_) => mcp_sansio::Operation::CallTool,
        Op::Close => mcp_sansio::Operation::Close,
    };
    match e {
        Event::Failed { operation, error } if *operation == ours => {
            Some(Outcome::Failed(error.clone()))
        }
        Event::Failed { operation, error } => panic!("{operation:?} failed: {error:?}"),
        Event::Connected { .. } if *op == Op::Connect => Some(Outcome::Connected),
        Event::Closed => Some(Outcome::Closed),
        Event::ToolsListed(c) => Some(Outcome::Listed {
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

fn config_for(s: &Scenario) -> Config {
    let mut c = Config::new("http://127.0.0.1:9/mcp")
        .unwrap()
        .with_budgets(s.budgets.clone());
    c.era_hint = match s.setup {
        Setup::Fresh => None,
        Setup::Modern => Some(EraHint {
            era: Era::Modern,
            version: mcp_sansio::MODERN_VERSION.into(),
        }),
        Setup::Legacy => Some(EraHint {
            era: Era::Legacy,
            version: mcp_sansio::LEGACY_VERSIONS[0].into(),
        }),
    };
    if s.input.hooked() {
        c.input_hook = true;
        c.client_capabilities = r#"{"elicitation":{}}"#.into();
    }
    c.with_tasks(s.tasks)
}

fn run(s: &Scenario, split: Split) -> Report {
    let config = config_for(s);
    let server = s.server();
    counting::reset();
    let conn = counted(|| Connection::new(config).expect("valid config"));
    let mut d = Driver {
        conn,
        socket: Http1Socket::new(),
        server,
        now: Instant::ZERO,
        tasks: Vec::new(),
        live: HashSet::new(),
        split,
        steps: 0,
        input: s.input.clone(),
        pending: Vec::new(),
        sent: Vec::new(),
        task_created: None,
        table: table::TableCheck::default(),
    };
    counted(|| d.conn.connect(Instant::ZERO));
    let connected = d.run_until(|e| match e {
        Event::Connected { .. } => Some(Outcome::Connected),
        Event::Failed { error, .. } => Some(Outcome::Failed(error.clone())),
        _ => None,
    });
    // A connect starts at zero; another operation once the setup connected.
    let started = if s.op == Op::Connect {
        Instant::ZERO
    } else {
        d.now
    };
    let outcome = if s.op == Op::Connect {
        connected
    } else {
        assert_eq!(connected, Outcome::Connected, "{}: setup", s.name);
        match s.op {
            Op::List => counted(|| d.conn.list_tools(started)),
            Op::Call(args) => counted(|| d.conn.call_tool(started, "t", args.as_bytes())),
            Op::Close => counted(|| d.conn.close(started)),
            Op::Connect => unreachable!(),
        }
        d.run_until(|e| outcome_of(&s.op, e))
    };
    let report = Report {
        started,
        ended: d.now,
        steps: d.steps,
        bytes_read: d.conn.bytes_read(),
        peak: 0,
        outcome,
        sent: std::mem::take(&mut d.sent),
        task_created: d.task_created,
        requests: d.server.requests,
    };
    counted(|| drop(d));
    Report {
        peak: counting::peak(),
        ..report
    }
}

/// Checks when an operation ended against its deadlines, in virtual time, with no tolerance: it
/// never ends after `started + time_limit` ([`Scenario::time_limit`]), and one that fails on a
/// time budget ends exactly at the deadline of that budget: `started + limit` for the aggregate
/// budgets of a listing, a call or a close (`ListTime`, `CallTime`, `CloseTime`), `created +
/// task_time` for a task's (`TaskTime`), and `sent + request_time` for one of the requests of
/// the run for `RequestTime` (each handshake, page or close exchange has its own).
fn check_deadline(s: &Scenario, r: &Report) -> Result<(), String> {
    let took = r.ended.saturating_since(r.started);
    let limit = s.time_limit();
    if took > limit {
        return Err(format!("took {took:?} of virtual time, limit {limit:?}"));
    }
    let Outcome::Failed(error) = &r.outcome else {
        return Ok(());
    };
    let Some(exceeded) = error.budget() else {
        return Ok(());
    };
    let b = &s.budgets;
    let at = |d: Duration| r.started + d;
    match exceeded.budget {
        Budget::ListTime => exact(r.ended, at(b.list_time), "list_time"),
        Budget::CallTime => exact(r.ended, at(b.call_time), "call_time"),
        Budget::CloseTime => exact(r.ended, at(b.close_time), "close_time"),
        Budget::TaskTime => match r.task_created {
            Some(created) => exact(r.ended, created + b.task_time, "task_time"),
            None => Err("failed on task_time without a task".into()),
        },
        Budget::RequestTime => {
            if r.sent
                .iter()
                .any(|&t| t >= r.started && t + b.request_time == r.ended)
            {
                Ok(())
            } else {
                Err(format!(
                    "failed on request_time at {:?}, not at the deadline of any request sent \
                     during the operation (sent at {:?}, request_time {:?})",
                    r.ended, r.sent, b.request_time
                ))
            }
        }
        _ => Ok(()),
    }
}

fn exact(ended: Instant, deadline: Instant, budget: &str) -> Result<(), String> {
    if ended == deadline {
        Ok(())
    } else {
        Err(format!(
            "failed on {budget} at {ended:?}, its deadline is {deadline:?} (tolerance 0)"
        ))
    }
}

/// Runs one scenario in every split and checks everything; returns a failure description.
fn check(s: &Scenario) -> Result<(), String> {
    let mut first: Option<(Outcome, Instant)> = None;
    for split in SPLITS {
        let r = run(s, split);
        let at = format!("{} ({split:?})", s.name);
        verify(s, &r.outcome).map_err(|e| format!("{at}: {e}"))?;
        check_deadline(s, &r).map_err(|e| format!("{at}: {e}"))?;
        let took = r.ended.saturating_since(r.started);
        s.check_run(took, r.requests)
            .map_err(|e| format!("{at}: {e}"))?;
        if r.bytes_read > s.budgets.response_bytes {
            return Err(format!(
                "{at}: read {} bytes, budget {}",
                r.bytes_read, s.budgets.response_bytes
            ));
        }
        if r.steps > MAX_STEPS {
            return Err(format!("{at}: {} steps", r.steps));
        }
        let bound = memory_bound(&s.budgets, &r.outcome);
        if r.peak > bound {
            return Err(format!("{at}: peak memory {} > bound {bound}", r.peak));
        }
        if std::env::var_os("HOSTILE_REPORT").is_some() {
            eprintln!(
                "{:<50} {:>7?} {:>9} steps {:>9} bytes {:>9} peak {:>8.1?}s {:>4} requests",
                s.name,
                split,
                r.steps,
                r.bytes_read,
                r.peak,
                took.as_secs_f64(),
                r.requests
            );
        }
        match &first {
            None => first = Some((r.outcome.clone(), r.ended)),
            Some((o, t)) => {
                if *o != r.outcome || *t != r.ended {
                    return Err(format!(
                        "{at}: splits differ: {o:?} at {t:?} vs {:?} at {:?}",
                        r.outcome, r.ended
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_category(category: &str) {
    let all = hostile::catalogue::all();
    let scenarios: Vec<&Scenario> = all.iter().filter(|s| s.category == category).collect();
    assert!(!scenarios.is_empty(), "no scenario in {category}");
    let failures: Vec<String> = scenarios.iter().filter_map(|s| check(s).err()).collect();
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn catalogue_is_large_and_names_are_unique() {
    let all = hostile::catalogue::all();
    assert!(all.len() >= 60, "{} scenarios", all.len());
    let names: HashSet<&str> = all.iter().map(|s| s.name).collect();
    assert_eq!(names.len(), all.len(), "duplicate scenario names");
    for s in &all {
        assert!(!s.rules.is_empty(), "{}: no rules", s.name);
        assert_eq!(s.op == Op::Connect, s.setup == Setup::Fresh, "{}", s.name);
    }
}

macro_rules! category {
    ($($test:ident => $cat:literal,)*) => {
        $(#[test] fn $test() { check_category($cat) })*

        #[test]
        fn every_category_has_a_test() {
            let known = [$($cat),*];
            for s in hostile::catalogue::all() {
                assert!(known.contains(&s.category), "{}: category {} has no test", s.name, s.category);
            }
        }
    };
}

category! {
    header_abuse => "header",
    body_abuse => "body",
    chunked_abuse => "chunked",
    informational_abuse => "1xx",
    slow_servers => "slow",
    sse_abuse => "sse",
    json_abuse => "json",
    pagination_abuse => "pagination",
    catalog_abuse => "catalog",
    content_abuse => "content",
    input_required_abuse => "input_required",
    negotiation_abuse => "negotiation",
    status_abuse => "status",
    closing => "close",
    task_abuse => "task",
}

// ---------------------------------------------------------------------------------------------
// The socket server: the same scripts on real 127.0.0.1 sockets, played to the core by a minimal
// blocking loop (one socket per exchange, no pool, no clock), for scenarios that need no time.

mod on_sockets {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    /// Serves `s` on a loopback port; returns the port and a stopper that joins every thread.
    fn start(s: &Scenario) -> (u16, impl FnOnce()) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let server = Arc::new(Mutex::new(Server::new(s.rules.clone())));
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let acceptor = std::thread::spawn(move || {
            let mut workers = Vec::new();
            while !stop2.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let server = server.clone();
                        workers.push(std::thread::spawn(move || {
                            hostile::socket::serve(&server, stream)
                        }));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            for w in workers {
                let _ = w.join();
            }
        });
        let stopper = move || {
            stop.store(true, Ordering::SeqCst);
            acceptor.join().unwrap();
        };
        (port, stopper)
    }

    /// Runs the scenario's operation over sockets and returns how it ended.
    fn run_on_sockets(s: &Scenario) -> Outcome {
        let (port, stop) = start(s);
        let mut config = config_for(s);
        config.endpoint =
            mcp_sansio::Endpoint::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let mut conn = Connection::new(config).unwrap();
        let mut socket = Http1Socket::new();
        let now = Instant::ZERO;
        conn.connect(now);
        let mut started_op = s.op == Op::Connect;
        let outcome = 'run: loop {
            let mut transmits = Vec::new();
            while let Some(t) = conn.poll_transmit() {
                transmits.push(t);
            }
            while let Some(e) = conn.poll_event() {
                if let Event::Connected { .. } = e {
                    if !started_op {
                        started_op = true;
                        match s.op {
                            Op::List => conn.list_tools(now),
                            Op::Call(a) => conn.call_tool(now, "t", a.as_bytes()),
                            Op::Close => conn.close(now),
                            Op::Connect => {}
                        }
                        continue 'run;
                    }
                }
                if let Some(o) = outcome_of(&s.op, &e) {
                    break 'run o;
                }
            }
            let Some(t) = transmits.pop() else {
                panic!("{}: nothing to send and no outcome", s.name);
            };
            assert!(transmits.is_empty(), "one exchange at a time");
            let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            stream.write_all(&Http1Socket::encode(&t).unwrap()).unwrap();
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        socket.handle_eof(&mut conn, now, t.exchange);
                        break;
                    }
                    Ok(n) => socket.handle_bytes(&mut conn, now, t.exchange, &buf[..n]),
                }
                // The exchange ended (finished or abandoned) once the core stops waiting on it.
                if !conn.is_busy() || conn.poll_timeout().is_none() {
                    break;
                }
                let mut evs = Vec::new();
                let mut ended = false;
                while let Some(e) = conn.poll_event() {
                    if matches!(&e, Event::ExchangeFinished { exchange, .. } | Event::ExchangeAbandoned { exchange } if *exchange == t.exchange)
                    {
                        ended = true;
                    }
                    evs.push(e);
                }
                for e in evs {
                    if let Some(o) = outcome_of(&s.op, &e) {
                        drop(stream);
                        stop();
                        return o;
                    }
                    if let Event::Connected { .. } = e {
                        if !started_op {
                            started_op = true;
                            match s.op {
                                Op::List => conn.list_tools(now),
                                Op::Call(a) => conn.call_tool(now, "t", a.as_bytes()),
                                Op::Close => conn.close(now),
                                Op::Connect => {}
                            }
                        }
                    }
                }
                if ended {
                    break;
                }
            }
            drop(stream);
        };
        stop();
        outcome
    }

    #[test]
    fn the_socket_server_plays_the_catalogue() {
        let names = [
            "header_count_flood",
            "endless_close_delimited_body",
            "endless_chunk_extension",
            "continue_flood",
            "wrong_id",
            "batch_answer",
            "every_refusal_reason",
            "endless_unique_cursors",
            "cursor_cycle_a_b_a",
            "unknown_types_only",
            "unauthorized_on_discover",
            "accept_and_close",
        ];
        let all = hostile::catalogue::all();
        for name in names {
            let s = all.iter().find(|s| s.name == name).expect(name);
            let on_sockets = run_on_sockets(s);
            let in_memory = run(s, Split::Whole).outcome;
            assert_eq!(
                format!("{on_sockets:?}"),
                format!("{in_memory:?}"),
                "{name}: sockets and memory differ"
            );
        }
    }
}
