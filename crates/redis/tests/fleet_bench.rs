//! The fleet benchmark's quick variant (`examples/fleet_bench`): 2 worker processes × 50 work
//! items against 20 origins, one round of each store, with its counts checked against what
//! the store's contract says they must be. The worker processes are this test binary run again
//! with `MCP_SANSIO_FLEET_BENCH_WORKER` set (the test `fleet_bench_worker` then runs them).

mod support;

#[path = "../examples/fleet_bench/bench.rs"]
mod bench;

use bench::{Contender, Params, Run};

/// A worker process of the fleet; does nothing outside it.
#[test]
fn fleet_bench_worker() {
    if std::env::var_os(bench::WORKER_ENV).is_some() {
        bench::worker();
    }
}

fn quick() -> Vec<Run> {
    let params = Params {
        processes: 2,
        items: 50,
        origins: 20,
        rounds: 1,
        seed: 7,
    };
    let exe = std::env::current_exe().unwrap();
    let runs = bench::drive(&params, &|| {
        let mut c = std::process::Command::new(&exe);
        c.args([
            "fleet_bench_worker",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ]);
        c
    });
    println!("{}", bench::report(&params, &runs));
    runs
}

/// spec.md §3 (SEP-2549): "a result is fresh while `now < t_received + ttlMs`", and the era a
/// negotiation found is offered to the next connection of the same server; docs/fleet.md: with
/// a shared store, "when N executors go cold on one server at once, one lists".
///
/// The benchmark's two stores measured side by side, 2 processes × 50 work items over 20
/// origins whose listings are fresh for 60 s (longer than the run):
///
/// - every work item succeeded, and made exactly one `tools/call` (counted at the servers);
/// - with each process's own store, Redis sees no command at all, and each process lists each
///   origin it drew exactly once: as many `tools/list` as distinct (process, origin) pairs;
/// - with the shared store, every work item reads Redis (at least one round trip each, counted
///   by Redis itself), and the fleet lists and negotiates less than with its own stores: a
///   listing one process made serves the others.
#[test]
fn the_quick_fleet_shares_listings_through_redis_and_counts_hold() {
    let runs = quick();
    let get = |c: Contender| runs.iter().find(|r| r.contender == c).unwrap();
    let (none, shared) = (get(Contender::None), get(Contender::Shared));
    for r in [none, shared] {
        assert_eq!(
            (r.ok, r.failed),
            (100, 0),
            "{:?}: every work item succeeds",
            r.contender
        );
        assert_eq!(
            r.requests_of("tools/call"),
            100,
            "{:?}: one call per work item",
            r.contender
        );
    }
    assert_eq!(
        none.commands(),
        0,
        "no store, no Redis: {:?}",
        none.redis_commands
    );
    assert_eq!(
        none.redis_connections, 0,
        "no store, no connection to Redis"
    );
    assert_eq!(
        none.requests_of("tools/list"),
        none.process_origins,
        "each process lists each origin it drew once, then reads its own store"
    );
    assert!(
        shared.redis_reads >= shared.items(),
        "every shared work item reads Redis: {} round trips for {} items",
        shared.redis_reads,
        shared.items()
    );
    assert!(
        shared.requests_of("tools/list") < none.requests_of("tools/list"),
        "the fleet lists less through Redis: {} against {}",
        shared.requests_of("tools/list"),
        none.requests_of("tools/list")
    );
    assert!(
        shared.requests_of("tools/list") >= shared.origins_touched,
        "each origin drawn is listed at least once (the run starts cold)"
    );
    assert!(
        shared.requests_of("server/discover") <= none.requests_of("server/discover"),
        "the era hints are shared too: {} against {}",
        shared.requests_of("server/discover"),
        none.requests_of("server/discover")
    );
}
