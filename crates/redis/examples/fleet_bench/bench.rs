//! The fleet benchmark's driver and worker, shared by the example (`fleet_bench`) and its quick
//! test (`tests/fleet_bench.rs`).
//!
//! The driver starts one `redis-server` and `origins` catalog servers on 127.0.0.1 (the cache
//! tests' server: a 2026-07-28 server that lists two tools with `ttlMs: 60000`, answers
//! `server/discover` with `ttlMs: 3600000`, and counts every request it gets by JSON-RPC method),
//! then runs `processes` worker processes at once, each `items` work items, once per contender
//! and round, the contenders alternating:
//!
//! - **none**: each process's own in-memory catalog cache and era hints (the client's default
//!   store, `catalog_cache(true)`);
//! - **shared**: the same through one `RedisStore` (`shared_store`).
//!
//! A work item: connect, list every tool, call `echo`, close, against an origin drawn by a
//! seeded generator (the same draws for both contenders of a round). Redis is flushed before each
//! run, so every run starts cold. What is counted comes from outside the client: requests at the
//! servers (by method), Redis commands from `INFO commandstats` and Redis round trips from
//! `INFO stats` (`total_reads_processed`: one per read of a client's socket) and Redis's own CPU
//! from `INFO cpu`, each as the difference before and after the run; CPU (user + system) and wall time from each worker
//! process's own `/proc/self/stat` and clock around its work items.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use mcp_sansio::Config;
use mcp_sansio_blocking::Client;
use mcp_sansio_redis::RedisStore;
use mcp_sansio_test_support::adapter_tests::cache::{loopback, CacheServer, Script};

use crate::support::RedisServer;

/// Set (to anything) in a worker process's environment.
pub const WORKER_ENV: &str = "MCP_SANSIO_FLEET_BENCH_WORKER";
/// The tag of the line a worker prints its figures on.
const RESULT_TAG: &str = "FLEET-BENCH-WORKER";
/// The tools the catalog servers list (`CacheServer`).
const TOOLS: [&str; 2] = ["weather", "echo"];

/// The size of a run.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Worker processes run at once.
    pub processes: usize,
    /// Work items per process, one after another.
    pub items: usize,
    /// Origins (catalog servers), each on its own port.
    pub origins: usize,
    /// Rounds; each runs both contenders, in alternating order.
    pub rounds: usize,
    /// The seed of the origins' draws.
    pub seed: u64,
}

/// What a worker process shares its catalogs and era hints through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Contender {
    /// Each process its own in-memory store (the client's default).
    None,
    /// One Redis for the fleet (`RedisStore`).
    Shared,
}

impl Contender {
    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Contender::None => "none (in-process store)",
            Contender::Shared => "shared (RedisStore)",
        }
    }
}

/// One run: one contender, `processes` workers at once.
#[derive(Clone, Debug)]
pub struct Run {
    /// The contender.
    pub contender: Contender,
    /// The round (0-based).
    pub round: usize,
    /// Work items that succeeded.
    pub ok: u64,
    /// Work items that failed.
    pub failed: u64,
    /// Requests the servers got, by JSON-RPC method.
    pub requests: BTreeMap<String, u64>,
    /// Redis commands (`INFO commandstats`), by command, the driver's own left out.
    pub redis_commands: BTreeMap<String, u64>,
    /// Reads of client sockets by Redis (`total_reads_processed`), the driver's own left out.
    pub redis_reads: u64,
    /// Connections Redis accepted (`total_connections_received`).
    pub redis_connections: u64,
    /// Redis's own user + system CPU (`INFO cpu`), seconds.
    pub redis_cpu_s: f64,
    /// User + system CPU of the workers over their work items, seconds.
    pub cpu_s: f64,
    /// The workers' wall time over their work items, summed, seconds.
    pub wall_s: f64,
    /// From the first worker's start to the last one's end, seconds.
    pub fleet_wall_s: f64,
    /// Distinct (process, origin) pairs of the run's draws.
    pub process_origins: u64,
    /// Distinct origins of the run's draws.
    pub origins_touched: u64,
}

impl Run {
    /// Work items run.
    pub fn items(&self) -> u64 {
        self.ok + self.failed
    }

    /// Requests of `method` at the servers.
    pub fn requests_of(&self, method: &str) -> u64 {
        self.requests.get(method).copied().unwrap_or(0)
    }

    /// Every Redis command.
    pub fn commands(&self) -> u64 {
        self.redis_commands.values().sum()
    }
}

/// The origins drawn for `items` work items of a process seeded `seed`.
pub fn plan(seed: u64, items: usize, origins: usize) -> Vec<usize> {
    let mut state = seed;
    (0..items)
        .map(|_| (splitmix64(&mut state) % origins.max(1) as u64) as usize)
        .collect()
}

/// The seed of process `process` in round `round`: the same for both contenders of a round.
fn process_seed(seed: u64, round: usize, process: usize) -> u64 {
    let mut s = seed ^ ((round as u64) << 32) ^ process as u64;
    splitmix64(&mut s)
}

/// SplitMix64 (Steele, Lea and Flood): a small seeded generator, enough to spread work items.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------------
// The worker

/// A worker process: runs its work items and prints its figures on one tagged line. Its
/// parameters come from the environment the driver set.
pub fn worker() {
    let var = |n: &str| std::env::var(n).unwrap_or_else(|_| panic!("{n} is not set"));
    let origins: Vec<Config> = var("FLEET_BENCH_ORIGINS")
        .split(',')
        .map(|u| Config::new(u).expect("an origin URL"))
        .collect();
    let items: usize = var("FLEET_BENCH_ITEMS").parse().expect("FLEET_BENCH_ITEMS");
    let seed: u64 = var("FLEET_BENCH_SEED").parse().expect("FLEET_BENCH_SEED");
    let redis = var("FLEET_BENCH_REDIS");
    let mut builder = Client::builder()
        .policy(loopback())
        .http1_only(true)
        .catalog_cache(true);
    if !redis.is_empty() {
        let store = RedisStore::open(&redis).expect("a store URL");
        builder = builder.shared_store(Arc::new(store));
    }
    let client = builder.build();
    let plan = plan(seed, items, origins.len());
    let (cpu0, t0) = (cpu_ticks(), Instant::now());
    let (mut ok, mut failed) = (0u64, 0u64);
    for &o in &plan {
        match work_item(&client, origins[o].clone()) {
            Ok(()) => ok += 1,
            Err(e) => {
                eprintln!("fleet_bench worker: a work item failed: {e}");
                failed += 1;
            }
        }
    }
    let wall = t0.elapsed();
    let cpu = cpu_ticks().saturating_sub(cpu0);
    println!(
        "\n{RESULT_TAG} ok={ok} failed={failed} cpu_ticks={cpu} wall_ns={}",
        wall.as_nanos()
    );
}

/// One work item: connect, list every tool, call `echo`, close; each step must succeed with
/// what the server serves.
fn work_item(client: &Client, config: Config) -> Result<(), String> {
    let mut session = client
        .connect(config)
        .map_err(|e| format!("connect: {e}"))?;
    let catalog = session.list_tools().map_err(|e| format!("list: {e}"))?;
    let names: Vec<&str> = catalog.tools.iter().map(|t| t.name()).collect();
    if names != TOOLS {
        return Err(format!("listed {names:?}, not {TOOLS:?}"));
    }
    let result = session
        .call_tool("echo", b"{}")
        .map_err(|e| format!("call: {e}"))?;
    if result.is_error {
        return Err("the call answered isError".to_owned());
    }
    session.close().map_err(|e| format!("close: {e}"))
}

/// This process's user + system CPU time so far, in clock ticks (`/proc/self/stat` fields 14
/// and 15, every thread's, those that ended included).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name, which ends at the last ')': field 3 is the first.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields[11].parse().expect("utime");
    let stime: u64 = fields[12].parse().expect("stime");
    utime + stime
}

/// Clock ticks per second (`getconf CLK_TCK`; Linux's `USER_HZ`, 100, if it cannot be asked).
fn ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(100.0)
}

// ---------------------------------------------------------------------------------------------
// The driver

/// Redis's counters at one moment.
#[derive(Clone, Debug, Default)]
struct Snapshot {
    commands: BTreeMap<String, u64>,
    reads: u64,
    connections: u64,
    cpu_s: f64,
}

fn snapshot(con: &mut redis::Connection) -> Snapshot {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .arg("stats")
        .arg("cpu")
        .query(con)
        .expect("INFO commandstats stats cpu");
    let mut s = Snapshot::default();
    for line in info.lines() {
        if let Some(rest) = line.strip_prefix("cmdstat_") {
            let Some((name, stats)) = rest.split_once(':') else {
                continue;
            };
            let calls = stats
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            s.commands.insert(name.to_owned(), calls);
        } else if let Some(v) = line.strip_prefix("total_reads_processed:") {
            s.reads = v.trim().parse().expect("total_reads_processed");
        } else if let Some(v) = line
            .strip_prefix("used_cpu_user:")
            .or_else(|| line.strip_prefix("used_cpu_sys:"))
        {
            s.cpu_s += v
                .trim()
                .parse::<f64>()
                .expect("used_cpu_user, used_cpu_sys");
        } else if let Some(v) = line.strip_prefix("total_connections_received:") {
            s.connections = v.trim().parse().expect("total_connections_received");
        }
    }
    s
}

/// Requests every server got so far, by method.
fn requests(servers: &[CacheServer]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for s in servers {
        for seen in s.seen() {
            *m.entry(seen.method).or_insert(0) += 1;
        }
    }
    m
}

fn difference(
    after: &BTreeMap<String, u64>,
    before: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, v)| *v > 0)
        .collect()
}

/// Runs every round of both contenders; `worker` makes the command that starts one worker
/// process (its environment is set here). Panics if Redis or a server cannot start, or a worker
/// does not report.
pub fn drive(params: &Params, worker: &dyn Fn() -> Command) -> Vec<Run> {
    let redis = RedisServer::start();
    let servers: Vec<CacheServer> = (0..params.origins)
        .map(|_| CacheServer::start(Script::default()))
        .collect();
    let urls = servers
        .iter()
        .map(CacheServer::url)
        .collect::<Vec<_>>()
        .join(",");
    let mut con = redis::Client::open(redis.url())
        .and_then(|c| c.get_connection())
        .expect("a connection to redis");
    // The driver's own reads between two snapshots (the second INFO's): left out of every run.
    let a = snapshot(&mut con);
    let b = snapshot(&mut con);
    let own_reads = b.reads - a.reads;
    let hz = ticks_per_second();
    let mut runs = Vec::new();
    for round in 0..params.rounds {
        let order = if round % 2 == 0 {
            [Contender::None, Contender::Shared]
        } else {
            [Contender::Shared, Contender::None]
        };
        for contender in order {
            let () = redis::cmd("FLUSHALL").query(&mut con).expect("FLUSHALL");
            let requests_before = requests(&servers);
            let before = snapshot(&mut con);
            let store = match contender {
                Contender::None => String::new(),
                Contender::Shared => redis.url(),
            };
            let start = Instant::now();
            let children: Vec<_> = (0..params.processes)
                .map(|p| {
                    worker()
                        .env(WORKER_ENV, "1")
                        .env("FLEET_BENCH_REDIS", &store)
                        .env("FLEET_BENCH_ORIGINS", &urls)
                        .env("FLEET_BENCH_ITEMS", params.items.to_string())
                        .env(
                            "FLEET_BENCH_SEED",
                            process_seed(params.seed, round, p).to_string(),
                        )
                        .stdin(Stdio::null())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::inherit())
                        .spawn()
                        .expect("start a worker")
                })
                .collect();
            let mut run = Run {
                contender,
                round,
                ok: 0,
                failed: 0,
                requests: BTreeMap::new(),
                redis_commands: BTreeMap::new(),
                redis_reads: 0,
                redis_connections: 0,
                redis_cpu_s: 0.0,
                cpu_s: 0.0,
                wall_s: 0.0,
                fleet_wall_s: 0.0,
                process_origins: 0,
                origins_touched: 0,
            };
            for child in children {
                let out = child.wait_with_output().expect("a worker's output");
                let text = String::from_utf8_lossy(&out.stdout);
                let line = text
                    .lines()
                    .find(|l| l.starts_with(RESULT_TAG))
                    .unwrap_or_else(|| {
                        panic!("a worker reported nothing ({}): {text}", out.status)
                    });
                let field = |name: &str| -> u64 {
                    line.split(' ')
                        .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or_else(|| panic!("no {name} in {line}"))
                };
                run.ok += field("ok");
                run.failed += field("failed");
                run.cpu_s += field("cpu_ticks") as f64 / hz;
                run.wall_s += field("wall_ns") as f64 / 1e9;
            }
            run.fleet_wall_s = start.elapsed().as_secs_f64();
            let after = snapshot(&mut con);
            let mut commands = difference(&after.commands, &before.commands);
            // The driver's own: the INFO of the snapshot (counted once it has run).
            commands.remove("info");
            run.redis_commands = commands;
            run.redis_reads = (after.reads - before.reads).saturating_sub(own_reads);
            run.redis_connections = after.connections - before.connections;
            run.redis_cpu_s = after.cpu_s - before.cpu_s;
            run.requests = difference(&requests(&servers), &requests_before);
            let mut pairs = BTreeSet::new();
            for p in 0..params.processes {
                let seed = process_seed(params.seed, round, p);
                for o in plan(seed, params.items, params.origins) {
                    pairs.insert((p, o));
                }
            }
            run.process_origins = pairs.len() as u64;
            run.origins_touched =
                pairs.iter().map(|&(_, o)| o).collect::<BTreeSet<_>>().len() as u64;
            runs.push(run);
        }
    }
    runs
}

// ---------------------------------------------------------------------------------------------
// The report

/// The runs of `contender`.
fn of(runs: &[Run], contender: Contender) -> Vec<&Run> {
    runs.iter().filter(|r| r.contender == contender).collect()
}

/// The sum of `f` over `runs` per work item.
fn per_item(runs: &[&Run], f: impl Fn(&Run) -> f64) -> f64 {
    let items: u64 = runs.iter().map(|r| r.items()).sum();
    runs.iter().map(|r| f(r)).sum::<f64>() / items.max(1) as f64
}

fn spread(runs: &[&Run], f: impl Fn(&Run) -> f64) -> String {
    let v: Vec<f64> = runs
        .iter()
        .map(|r| f(r) / r.items().max(1) as f64)
        .collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{} to {}", us(lo), us(hi))
}

fn us(s: f64) -> String {
    format!("{:.0} µs", s * 1e6)
}

/// The figures as Markdown: the per-item table, the time added, and each run's figures.
pub fn report(params: &Params, runs: &[Run]) -> String {
    let mut w = String::new();
    let _ = writeln!(
        w,
        "{} processes × {} work items, {} origins, {} round(s), seed {}.\n",
        params.processes, params.items, params.origins, params.rounds, params.seed
    );
    let _ = writeln!(
        w,
        "| store | items | `server/discover` / item | `tools/list` / item | `tools/call` / item | requests / item | Redis commands / item | Redis round trips / item | CPU / item | wall / item | Redis CPU / item |"
    );
    let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in [Contender::None, Contender::Shared] {
        let rs = of(runs, c);
        if rs.is_empty() {
            continue;
        }
        let items: u64 = rs.iter().map(|r| r.items()).sum();
        let m = |name: &'static str| per_item(&rs, move |r| r.requests_of(name) as f64);
        let _ = writeln!(
            w,
            "| {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.3} | {:.3} | {} | {} | {} |",
            c.name(),
            items,
            m("server/discover"),
            m("tools/list"),
            m("tools/call"),
            per_item(&rs, |r| r.requests.values().sum::<u64>() as f64),
            per_item(&rs, |r| r.commands() as f64),
            per_item(&rs, |r| r.redis_reads as f64),
            us(per_item(&rs, |r| r.cpu_s)),
            us(per_item(&rs, |r| r.wall_s)),
            us(per_item(&rs, |r| r.redis_cpu_s)),
        );
    }
    let (none, shared) = (of(runs, Contender::None), of(runs, Contender::Shared));
    if !none.is_empty() && !shared.is_empty() {
        let cpu = per_item(&shared, |r| r.cpu_s) - per_item(&none, |r| r.cpu_s);
        let wall = per_item(&shared, |r| r.wall_s) - per_item(&none, |r| r.wall_s);
        let _ = writeln!(
            w,
            "\nTime added per item (shared − none): CPU {cpu_us:+.0} µs, wall {wall_us:+.0} µs.",
            cpu_us = cpu * 1e6,
            wall_us = wall * 1e6
        );
        let _ = writeln!(
            w,
            "Spread over the runs, per item: CPU none {}, shared {}; wall none {}, shared {}.",
            spread(&none, |r| r.cpu_s),
            spread(&shared, |r| r.cpu_s),
            spread(&none, |r| r.wall_s),
            spread(&shared, |r| r.wall_s),
        );
        let mut by: BTreeMap<&str, u64> = BTreeMap::new();
        for r in &shared {
            for (k, v) in &r.redis_commands {
                *by.entry(k.as_str()).or_insert(0) += v;
            }
        }
        let items: u64 = shared.iter().map(|r| r.items()).sum();
        let list = by
            .iter()
            .map(|(k, v)| {
                format!(
                    "`{}` {:.3}",
                    k.to_uppercase(),
                    *v as f64 / items.max(1) as f64
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(w, "Redis commands per item with the shared store: {list}.");
    }
    let _ = writeln!(
        w,
        "\n| round | store | items ok | failed | discover | list | call | Redis cmds | Redis reads | Redis conns | CPU / item | wall / item | fleet wall | (process, origin) pairs | origins touched |"
    );
    let _ = writeln!(
        w,
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in runs {
        let n = r.items().max(1) as f64;
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} s | {} | {} |",
            r.round,
            r.contender.name(),
            r.ok,
            r.failed,
            r.requests_of("server/discover"),
            r.requests_of("tools/list"),
            r.requests_of("tools/call"),
            r.commands(),
            r.redis_reads,
            r.redis_connections,
            us(r.cpu_s / n),
            us(r.wall_s / n),
            r.fleet_wall_s,
            r.process_origins,
            r.origins_touched,
        );
    }
    w
}
