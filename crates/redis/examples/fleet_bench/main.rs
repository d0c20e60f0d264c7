//! The fleet benchmark: a fleet of worker processes sharing catalogs and era hints through one
//! Redis (`RedisStore`), against the same fleet with each process's own in-memory store.
//!
//! ```text
//! cargo run --release -p mcp-sansio-redis --example fleet_bench -- \
//!     [--processes 8] [--items 500] [--origins 20] [--rounds 2] [--seed 1] [--quick]
//! ```
//!
//! `--quick` is 2 processes × 50 work items, one round. The program is its own worker: the
//! driver runs it again with `MCP_SANSIO_FLEET_BENCH_WORKER` set. It needs `redis-server` on
//! the `PATH` (or `MCP_SANSIO_REDIS_SERVER`), prints the figures as Markdown (see
//! `docs/benchmarks.md`, "Fleet"), and exits with 1 if a work item failed. What is measured and
//! how: `bench.rs`.
#![forbid(unsafe_code)]

#[path = "../../tests/support/mod.rs"]
mod support;

mod bench;

use bench::Params;

fn main() {
    if std::env::var_os(bench::WORKER_ENV).is_some() {
        bench::worker();
        return;
    }
    let mut params = Params {
        processes: 8,
        items: 500,
        origins: 20,
        rounds: 2,
        seed: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{name} needs a number")))
        };
        match arg.as_str() {
            "--processes" => params.processes = value("--processes") as usize,
            "--items" => params.items = value("--items") as usize,
            "--origins" => params.origins = value("--origins") as usize,
            "--rounds" => params.rounds = value("--rounds") as usize,
            "--seed" => params.seed = value("--seed"),
            "--quick" => {
                params.processes = 2;
                params.items = 50;
                params.rounds = 1;
            }
            other => usage(&format!("unknown argument {other}")),
        }
    }
    if params.processes == 0 || params.items == 0 || params.origins == 0 || params.rounds == 0 {
        usage("every size must be at least 1");
    }
    let exe = std::env::current_exe().expect("the program's path");
    let runs = bench::drive(&params, &|| std::process::Command::new(&exe));
    print!("{}", bench::report(&params, &runs));
    if runs.iter().any(|r| r.failed > 0) {
        eprintln!("fleet_bench: some work items failed");
        std::process::exit(1);
    }
}

fn usage(why: &str) -> ! {
    eprintln!(
        "fleet_bench: {why}\nusage: fleet_bench [--processes N] [--items N] [--origins N] [--rounds N] [--seed N] [--quick]"
    );
    std::process::exit(2)
}
