//! The hostile-server catalogue (`checks/support/src/hostile/`) against the smol example over real
//! 127.0.0.1 sockets, each operation run to its end on the test's thread.
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

mod block;

use mcp_sansio_test_support::hostile;
use mcp_sansio_test_support::hostile::adapter_run;
use mcp_sansio_test_support::hostile::operate;
use mcp_sansio_test_support::hostile_socket_test;

/// Allocations counted, but for the server's threads, while [`adapter_run::measure`] is on.
#[global_allocator]
static ALLOC: adapter_run::Counting = adapter_run::Counting;

use std::time::{Duration, Instant};

use adapter_run::{config_for, input_answer, Run};
use block::Block as _;
use hostile::{Op, Outcome, Scenario};
use mcp_sansio_smol_example::{AddressPolicy, Client};
use operate::Answer;

fn run(s: &Scenario, counted: bool) -> Run {
    adapter_run::run_on_this_thread(s, counted, operate)
}

hostile_socket_test!([.block()]);
