//! Running the catalogue against an adapter over real 127.0.0.1 sockets: scaled time budgets, a
//! socket server per scenario with its threads counted and stopped, the checks of an outcome, and
//! a counting allocator for the memory bound.
//!
//! An adapter's test uses this module next to the catalogue and declares its [`Counting`]
//! allocator (global counting, not the per-thread one of [`super::counting`]) the binary's
//! global allocator: `#[global_allocator] static ALLOC: Counting = Counting;`.
#![allow(dead_code)]

use std::cell::Cell;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mcp_sansio::{Config, Era, EraHint};

use crate::hostile::script::{Pieces, Rule, Server, Step};
use crate::hostile::{memory_bound, verify, Cause, Expect, Input, Outcome, Scenario, Setup};

// ---------------------------------------------------------------------------------------------
// Time

/// Every duration of a scenario (time budgets, the retry cap, the server's waits and trickles) is
/// divided by this, so the ratios between them stay those of the catalogue.
pub const SCALE: u32 = 10;

/// What an operation may take in wall time beyond its scaled budget: scheduling on a loaded
/// machine, socket set-up and the adapter's own work. A deadline-driven failure must still end
/// within it.
pub const GRACE: Duration = Duration::from_millis(500);

fn scale_step(s: &Step) -> Step {
    match s {
        Step::Wait(d) => Step::Wait(*d / SCALE),
        Step::Trickle {
            bytes,
            piece,
            every,
        } => Step::Trickle {
            bytes: bytes.clone(),
            piece: *piece,
            every: *every / SCALE,
        },
        other => other.clone(),
    }
}

/// The scenario with its time budgets (the task budgets' times too: the task's time, the poll
/// interval's floor and ceiling, the cancellation's time), its least time and the server's timing
/// divided by [`SCALE`].
pub fn scaled(s: &Scenario) -> Scenario {
    let mut s = s.clone();
    let b = &mut s.budgets;
    b.request_time /= SCALE;
    b.list_time /= SCALE;
    b.call_time /= SCALE;
    b.close_time /= SCALE;
    b.max_retry_wait /= SCALE;
    b.task_time /= SCALE;
    b.task_poll_floor /= SCALE;
    b.task_poll_ceiling /= SCALE;
    b.task_cancel_time /= SCALE;
    s.at_least /= SCALE;
    s.pieces = s.pieces.map(|p| Pieces {
        bytes: p.bytes,
        every: p.every / SCALE,
    });
    s.rules = s
        .rules
        .iter()
        .map(|r| Rule {
            when: r.when.clone(),
            times: r.times,
            steps: r.steps.iter().map(scale_step).collect(),
        })
        .collect();
    s
}

/// The longest an operation may take ([`Scenario::time_limit`]).
pub fn time_limit(s: &Scenario) -> Duration {
    s.time_limit()
}

// ---------------------------------------------------------------------------------------------
// Configuration

/// The connection configuration of scenario `s` (already [`scaled`]) for a server on `port`.
pub fn config_for(s: &Scenario, port: u16) -> Config {
    let mut c = Config::new(&format!("http://127.0.0.1:{port}/mcp"))
        .expect("a loopback endpoint is a valid configuration")
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

/// How the client answers input requests ([`Input::answer`] gives the answer to each).
pub fn input_answer(s: &Scenario) -> Input {
    s.input.clone()
}

// ---------------------------------------------------------------------------------------------
// Outcomes

// ---------------------------------------------------------------------------------------------
// The socket server

/// A scenario's server on a loopback port: an acceptor thread and one thread per connection,
/// each playing the scenario's shared [`Server`] with [`crate::hostile::socket::serve`].
pub struct Running {
    /// The port on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
    live: Arc<AtomicUsize>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<JoinHandle<Vec<JoinHandle<()>>>>,
    /// Requests the server received (for reports).
    pub server: Arc<Mutex<Server>>,
}

/// Starts serving `s` on 127.0.0.1.
pub fn start(s: &Scenario) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("local address").port();
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let server = Arc::new(Mutex::new(s.server()));
    let http2 = s.over_http2;
    let stop = Arc::new(AtomicBool::new(false));
    let live = Arc::new(AtomicUsize::new(0));
    let streams = Arc::new(Mutex::new(Vec::new()));
    let acceptor = {
        let (server, stop, live, streams) =
            (server.clone(), stop.clone(), live.clone(), streams.clone());
        std::thread::spawn(move || {
            not_counted();
            let mut workers = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).expect("blocking stream");
                        let _ = stream.set_nodelay(true);
                        if let Ok(c) = stream.try_clone() {
                            streams.lock().unwrap_or_else(|e| e.into_inner()).push(c);
                        }
                        live.fetch_add(1, Ordering::SeqCst);
                        let (server, live) = (server.clone(), live.clone());
                        workers.push(std::thread::spawn(move || {
                            not_counted();
                            if http2 {
                                crate::hostile::h2_play::serve(&server, &stream);
                            } else {
                                crate::hostile::socket::serve(&server, &stream);
                            }
                            // The stopper holds a clone of the socket: end it here, as a close
                            // of the only handle would.
                            let _ = stream.shutdown(Shutdown::Both);
                            live.fetch_sub(1, Ordering::SeqCst);
                        }));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
            workers
        })
    };
    Running {
        port,
        stop,
        live,
        streams,
        acceptor: Some(acceptor),
        server,
    }
}

impl Running {
    /// Connections still being served.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Requests the server received so far, over every connection.
    pub fn requests(&self) -> u64 {
        self.server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .requests
    }

    /// Stops the listener and joins every thread. Call it once the client is gone: it returns
    /// how many connections were still open after `linger` (the client left them open), which
    /// are then shut down so that their threads end.
    pub fn stop(mut self, linger: Duration) -> usize {
        let until = std::time::Instant::now() + linger;
        while self.live() > 0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        let left_open = self.live();
        self.stop.store(true, Ordering::SeqCst);
        let workers = self
            .acceptor
            .take()
            .expect("stopped once")
            .join()
            .expect("acceptor thread");
        for s in self
            .streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = s.shutdown(Shutdown::Both);
        }
        for w in workers {
            w.join().expect("connection thread");
        }
        assert_eq!(self.live(), 0, "connection threads ended");
        left_open
    }
}

// ---------------------------------------------------------------------------------------------
// Memory: a counting allocator. Counting is global (an adapter reads on threads or tasks of its
// own) while [`measure`] is on; the server's threads never count.

static MEASURING: AtomicBool = AtomicBool::new(false);
static CURRENT: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

thread_local! {
    static EXCLUDED: Cell<bool> = const { Cell::new(false) };
}

/// Allocations of the calling thread are never counted (the test server's threads).
pub fn not_counted() {
    EXCLUDED.with(|e| e.set(true));
}

fn count(delta: i64) {
    if !MEASURING.load(Ordering::Relaxed) {
        return;
    }
    if EXCLUDED.try_with(|e| e.get()).unwrap_or(true) {
        return;
    }
    let now = CURRENT.fetch_add(delta, Ordering::Relaxed) + delta;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

include!("forward_alloc.rs");

/// Runs `f` with counting on and returns its value and the peak of bytes allocated and not yet
/// freed meanwhile, by every thread but the server's. Only one measure may run at a time, with
/// nothing else running in the process.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, i64) {
    CURRENT.store(0, Ordering::SeqCst);
    PEAK.store(0, Ordering::SeqCst);
    MEASURING.store(true, Ordering::SeqCst);
    let t = f();
    MEASURING.store(false, Ordering::SeqCst);
    (t, PEAK.load(Ordering::SeqCst))
}

/// What an adapter may hold on top of the core: its read buffers (16 KiB per exchange at first,
/// growing to at most a quarter of the byte budget left, so at most 64 KiB at the catalogue's
/// 256 KiB budgets), its runtime's task and timer state, socket addresses and thread handles.
pub const ADAPTER_ALLOWANCE: i64 = 256 * 1024;

// ---------------------------------------------------------------------------------------------
// Running many scenarios

/// Runs `f` on every scenario from `workers` threads; returns the results in catalogue order.
pub fn in_parallel<R: Send>(
    scenarios: &[Scenario],
    workers: usize,
    f: impl Fn(&Scenario) -> R + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..scenarios.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(s) = scenarios.get(i) else { return };
                let r = f(s);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every scenario ran"))
        .collect()
}

/// What one scenario came to through an adapter.
pub struct Run {
    /// The outcome of the scenario's operations.
    pub outcome: Outcome,
    /// Wall time of the operations.
    pub took: Duration,
    /// Server connections still open once the client was dropped.
    pub left_open: usize,
    /// Peak bytes allocated by the client's threads (when counted).
    pub peak: i64,
    /// Requests the server received.
    pub requests: u64,
}

/// Outcome, wall time (at most the scaled budget with [`GRACE`], at least the scenario's least
/// time), requests received and connections left open of one run.
fn check(s: &Scenario, r: &Run) -> Result<(), String> {
    verify(s, &r.outcome)?;
    let limit = time_limit(s) + GRACE;
    if r.took > limit {
        return Err(format!("took {:?}, limit {limit:?} with grace", r.took));
    }
    s.check_run(r.took, r.requests)?;
    if r.left_open > 0 {
        return Err(format!(
            "{} connection(s) still open after the client was dropped",
            r.left_open
        ));
    }
    Ok(())
}

/// The scenarios measured for memory besides those failing on a byte or count budget: answers of
/// many small pieces that are read whole.
const MEMORY_SCENARIOS: [&str; 6] = [
    "hundred_thousand_tiny_tools",
    "empty_text_blocks_up_to_the_cap",
    "seventy_thousand_unknown_blocks_read_the_serde_way",
    "sixty_thousand_malformed_blocks",
    "a_block_with_eighty_thousand_meta_keys",
    "a_tool_with_twenty_thousand_header_parameters",
];

/// The scenarios whose memory is measured: every byte or count budget, the largest catalog and
/// the answers of many small pieces ([`MEMORY_SCENARIOS`]).
fn memory_scenario(s: &Scenario) -> bool {
    match s.expect {
        Expect::Fail(_, Cause::Budget(b)) => !b.is_time(),
        _ => MEMORY_SCENARIOS.contains(&s.name),
    }
}

/// The category of the task scenarios, played by [`play_tasks`].
pub const TASKS: &str = "task";

/// Plays the catalogue but its task scenarios ([`play_tasks`]) through an adapter:
/// `run(scenario, counted)` runs one scenario on sockets (counting allocations when `counted`).
/// Every scenario is checked for its outcome, its wall time (scaled budget + [`GRACE`], and at
/// least its least time), the requests the server received and connections left open; the
/// byte-budget scenarios are run once more, one at a time, and checked against the memory bound.
pub fn play_catalogue(workers: usize, run: impl Fn(&Scenario, bool) -> Run + Sync) {
    let all: Vec<Scenario> = crate::hostile::catalogue::all()
        .iter()
        .filter(|s| s.category != TASKS)
        .map(scaled)
        .collect();
    // The checks refuse what is not the expected outcome.
    let wrong_id = all.iter().find(|s| s.name == "wrong_id").expect("wrong_id");
    assert!(verify(wrong_id, &Outcome::Connected).is_err());
    assert!(verify(
        wrong_id,
        &Outcome::Failed(mcp_sansio::Error::SessionExpired)
    )
    .is_err());
    play(&all, workers, 20, run);
}

/// Plays the catalogue's task scenarios (SEP-2663, category [`TASKS`]) through an adapter, as
/// [`play_catalogue`] plays the others: each whole and written in pieces, with tasks on, over
/// HTTP/1.1 and again over HTTP/2 with prior knowledge (the server's answers as frames,
/// [`crate::hostile::h2_play`]; the client's `operate` asks for h2c when
/// [`Scenario::over_http2`]).
pub fn play_tasks(workers: usize, run: impl Fn(&Scenario, bool) -> Run + Sync) {
    let mut all: Vec<Scenario> = crate::hostile::catalogue::all()
        .iter()
        .filter(|s| s.category == TASKS)
        .map(scaled)
        .collect();
    assert!(all.len() >= 28, "{} task scenarios", all.len());
    let over_http2: Vec<Scenario> = all.iter().map(Scenario::on_http2).collect();
    all.extend(over_http2);
    // The checks refuse a call that ended sooner than the poll floor allows.
    let flood = all
        .iter()
        .find(|s| s.name == "task_zero_poll_interval_flood")
        .expect("task_zero_poll_interval_flood");
    assert!(flood.check_run(Duration::ZERO, 0).is_err());
    play(&all, workers, 18, run);
}

/// Plays `all` (scaled) through `run`; at least `min_measured` of them are measured for memory.
fn play(
    all: &[Scenario],
    workers: usize,
    min_measured: usize,
    run: impl Fn(&Scenario, bool) -> Run + Sync,
) {
    let report = std::env::var_os("HOSTILE_REPORT").is_some();
    let started = std::time::Instant::now();
    let runs = in_parallel(all, workers, |s| run(s, false));
    let mut failures = Vec::new();
    let mut overrun = Duration::ZERO;
    for (s, r) in all.iter().zip(&runs) {
        overrun = overrun.max(r.took.saturating_sub(time_limit(s)));
        if report {
            eprintln!(
                "{:<50} {:>8.3}s {:?}",
                s.label(),
                r.took.as_secs_f64(),
                r.outcome
            );
        }
        if let Err(e) = check(s, r) {
            failures.push(format!("{}: {e}", s.label()));
        }
    }
    let parallel = started.elapsed();

    let mut measured = 0;
    let mut worst = (0.0f64, "");
    for s in all.iter().filter(|s| memory_scenario(s)) {
        let r = run(s, true);
        measured += 1;
        let bound = memory_bound(&s.budgets, &r.outcome) + ADAPTER_ALLOWANCE;
        let ratio = r.peak as f64 / s.budgets.response_bytes as f64;
        if report {
            eprintln!(
                "memory {:<43} {:>10} bytes {:>5.2}x response_bytes",
                s.label(),
                r.peak,
                ratio
            );
        }
        if ratio > worst.0 {
            worst = (ratio, s.name);
        }
        if r.peak > bound {
            failures.push(format!("{}: peak {} > bound {bound}", s.label(), r.peak));
        }
        if let Err(e) = check(s, &r) {
            failures.push(format!("{} (measured): {e}", s.label()));
        }
    }
    eprintln!(
        "{} scenarios in {:.1}s, longest past a budget {overrun:?}, {measured} measured, worst \
         {:.2}x response_bytes ({})",
        all.len(),
        parallel.as_secs_f64(),
        worst.0,
        worst.1
    );
    assert!(
        measured >= min_measured,
        "{measured} scenarios measured, fewer than {min_measured}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

/// One scenario through `operate` (an adapter's operation run to its end on the calling thread):
/// its outcome, under the counting allocator when `counted`, and the connections left open once
/// a legacy cancellation had time to end.
pub fn run_on_this_thread(
    s: &Scenario,
    counted: bool,
    operate: impl Fn(&Scenario, u16) -> (Outcome, Duration),
) -> Run {
    let server = start(s);
    let ((outcome, took), peak) = if counted {
        measure(|| operate(s, server.port))
    } else {
        (operate(s, server.port), 0)
    };
    // A legacy cancellation may outlive the failed operation by one close_time.
    let requests = server.requests();
    let left_open = server.stop(s.budgets.close_time + Duration::from_secs(1));
    Run {
        outcome,
        took,
        left_open,
        peak,
        requests,
    }
}
