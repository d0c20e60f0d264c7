//! The hostile-server catalogue (`checks/hostile/`) against the blocking adapter over real
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

#[path = "../../../checks/hostile/mod.rs"]
mod hostile;

#[path = "../../../checks/hostile/adapter_run.rs"]
mod adapter_run;

use std::time::{Duration, Instant};

use adapter_run::{config_for, input_answer, measure, play_catalogue, start, Outcome, Run};
use hostile::{Op, Scenario};
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

#[test]
fn hostile_catalogue_over_sockets() {
    play_catalogue(WORKERS, run);
}
