//! The hostile-server catalogue (`tests/hostile/`) against the blocking adapter over real
//! 127.0.0.1 sockets.
//!
//! Every scenario runs with its time budgets and its server's timing divided by
//! [`adapter_run::SCALE`]; the checks are those of the in-memory runner where they make sense in
//! wall time: the error kind and cause (with the budget's configured limit), the outcome of a
//! successful operation, the operation ending within its scaled budget plus
//! [`adapter_run::GRACE`], no connection left open once the client is dropped, and every server
//! thread joined. The scenarios that fail on a byte or count budget, and the largest catalog,
//! run once more one at a time under a counting allocator: the peak must stay within the core's
//! bound of docs/guarantees.md plus [`adapter_run::ADAPTER_ALLOWANCE`].

#[path = "../../../tests/hostile/mod.rs"]
mod hostile;

#[path = "../../../tests/hostile/adapter_run.rs"]
mod adapter_run;

use std::time::{Duration, Instant};

use adapter_run::{
    config_for, core_memory_bound, in_parallel, input_answer, is_byte_budget, measure, scaled,
    start, time_limit, verify, Outcome, ADAPTER_ALLOWANCE, GRACE,
};
use hostile::{Cause, Expect, Op, Scenario};
use mcp_sansio_blocking::{AddressPolicy, CallObserver, Client};

/// Parallel scenarios: most of them wait on a deadline, few use the CPU.
const WORKERS: usize = 12;

/// Answers input requests as the scenario says.
struct Answer(Option<Vec<u8>>);

impl CallObserver for Answer {
    fn input_required(&mut self, _requests: &serde_json::value::RawValue) -> Option<Vec<u8>> {
        self.0.clone()
    }
}

struct Run {
    outcome: Outcome,
    took: Duration,
    left_open: usize,
    peak: i64,
}

/// The operation of `s` through the adapter's public API, with the time it took.
fn operate(s: &Scenario, port: u16) -> (Outcome, Duration) {
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .era_hints(false)
        .build();
    let config = config_for(s, port);
    let started = Instant::now();
    let connected = client.connect(config);
    if s.op == Op::Connect {
        let took = started.elapsed();
        return match connected {
            Ok(session) => {
                drop(session);
                (Outcome::Connected, took)
            }
            Err(e) => (Outcome::Failed(e), took),
        };
    }
    let mut session = match connected {
        Ok(session) => session,
        Err(e) => return (Outcome::SetupFailed(e), started.elapsed()),
    };
    let started = Instant::now();
    let outcome = match s.op {
        Op::List => match session.list_tools() {
            Ok(c) => Outcome::Listed {
                tools: c.tools.len(),
                refused: c.refused.len(),
            },
            Err(e) => Outcome::Failed(e),
        },
        Op::Call(args) => {
            let mut answer = Answer(input_answer(s));
            match session.call_tool_with("t", args.as_bytes(), &mut answer) {
                Ok(r) => Outcome::Called {
                    blocks: r.content.len(),
                    unknown: r.dropped_unknown,
                    invalid: r.dropped_invalid,
                },
                Err(e) => Outcome::Failed(e),
            }
        }
        Op::Close => {
            let closed = session.close();
            let took = started.elapsed();
            return match closed {
                Ok(()) => (Outcome::Closed, took),
                Err(e) => (Outcome::Failed(e), took),
            };
        }
        Op::Connect => unreachable!(),
    };
    let took = started.elapsed();
    drop(session);
    drop(client);
    (outcome, took)
}

fn run(s: &Scenario, counted: bool) -> Run {
    let server = start(s);
    let ((outcome, took), peak) = if counted {
        measure(|| operate(s, server.port))
    } else {
        (operate(s, server.port), 0)
    };
    // A legacy cancellation may outlive the failed operation by one close_time.
    let left_open = server.stop(s.budgets.close_time + Duration::from_secs(1));
    Run {
        outcome,
        took,
        left_open,
        peak,
    }
}

fn check(s: &Scenario, r: &Run) -> Result<(), String> {
    verify(s, &r.outcome)?;
    let limit = time_limit(&s.op, &s.budgets) + GRACE;
    if r.took > limit {
        return Err(format!("took {:?}, limit {limit:?} with grace", r.took));
    }
    if r.left_open > 0 {
        return Err(format!(
            "{} connection(s) still open after the client was dropped",
            r.left_open
        ));
    }
    Ok(())
}

/// The scenarios whose memory is measured: every byte or count budget, and the largest catalog.
fn memory_scenario(s: &Scenario) -> bool {
    match s.expect {
        Expect::Fail(_, Cause::Budget(b)) => is_byte_budget(b),
        _ => s.name == "hundred_thousand_tiny_tools",
    }
}

#[test]
fn hostile_catalogue_over_sockets() {
    let all: Vec<Scenario> = hostile::catalogue::all().iter().map(scaled).collect();
    let report = std::env::var_os("HOSTILE_REPORT").is_some();
    // The checks refuse what is not the expected outcome.
    let wrong_id = all.iter().find(|s| s.name == "wrong_id").expect("wrong_id");
    assert!(verify(wrong_id, &Outcome::Connected).is_err());
    assert!(verify(
        wrong_id,
        &Outcome::Failed(mcp_sansio::Error::SessionExpired)
    )
    .is_err());
    let started = Instant::now();
    let runs = in_parallel(&all, WORKERS, |s| run(s, false));
    let mut failures = Vec::new();
    let mut overrun = Duration::ZERO;
    for (s, r) in all.iter().zip(&runs) {
        overrun = overrun.max(r.took.saturating_sub(time_limit(&s.op, &s.budgets)));
        if report {
            eprintln!(
                "{:<50} {:>8.3}s {:?}",
                s.name,
                r.took.as_secs_f64(),
                r.outcome
            );
        }
        if let Err(e) = check(s, r) {
            failures.push(format!("{}: {e}", s.name));
        }
    }
    let parallel = started.elapsed();

    let mut measured = 0;
    let mut worst = (0.0f64, "");
    for s in all.iter().filter(|s| memory_scenario(s)) {
        let r = run(s, true);
        measured += 1;
        let listed = matches!(r.outcome, Outcome::Listed { .. });
        let bound = core_memory_bound(&s.budgets, listed) + ADAPTER_ALLOWANCE;
        let ratio = r.peak as f64 / s.budgets.response_bytes as f64;
        if report {
            eprintln!(
                "memory {:<43} {:>10} bytes {:>5.2}x response_bytes",
                s.name, r.peak, ratio
            );
        }
        if ratio > worst.0 {
            worst = (ratio, s.name);
        }
        if r.peak > bound {
            failures.push(format!("{}: peak {} > bound {bound}", s.name, r.peak));
        }
        if let Err(e) = check(s, &r) {
            failures.push(format!("{} (measured): {e}", s.name));
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
    assert!(measured >= 20, "{measured} scenarios measured");
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
