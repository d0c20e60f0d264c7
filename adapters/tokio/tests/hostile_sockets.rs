//! The hostile-server catalogue (`checks/support/src/hostile/`) against the tokio adapter over real
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
//!
//! The task scenarios (SEP-2663) have a test of their own (`hostile_task_scenarios_over_sockets`):
//! each whole and written in small pieces, over HTTP/1.1 and again over HTTP/2 with prior
//! knowledge, with the least time a scenario asks for (the poll interval's floor and ceiling)
//! and the most requests it allows checked too.

use mcp_sansio_test_support::hostile;
use mcp_sansio_test_support::hostile::adapter_run;
use mcp_sansio_test_support::hostile::operate;
use mcp_sansio_test_support::hostile_socket_test;

/// Allocations counted, but for the server's threads, while [`adapter_run::measure`] is on.
#[global_allocator]
static ALLOC: adapter_run::Counting = adapter_run::Counting;

use std::time::{Duration, Instant};

use adapter_run::{config_for, input_answer, measure, start, Run};
use hostile::{Op, Outcome, Scenario};
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_tokio::Client;
use operate::Answer;

fn run(s: &Scenario, counted: bool) -> Run {
    let server = start(s);
    // One runtime per scenario, on the worker's thread: the adapter's exchange tasks run there.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // A legacy cancellation may outlive the failed operation by one close_time: the runtime keeps
    // running its tasks that long before the connections still open are counted.
    let linger = s.budgets.close_time + Duration::from_secs(1);
    let body = || {
        rt.block_on(async {
            let r = operate(s, server.port).await;
            let until = Instant::now() + linger;
            while server.live() > 0 && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            r
        })
    };
    let ((outcome, took), peak) = if counted { measure(body) } else { (body(), 0) };
    let left_open = server.live();
    let requests = server.requests();
    drop(rt);
    server.stop(Duration::from_secs(1));
    Run {
        outcome,
        took,
        left_open,
        peak,
        requests,
    }
}

hostile_socket_test!(async [.await]);
