//! A soak and load check of mcp-sansio: many work items at once through one shared `Client`,
//! against well-behaved and hostile servers on 127.0.0.1 over HTTP/1.1 and HTTP/2 (TLS and h2c).
//!
//! ```text
//! soak [--items N] [--concurrency C] [--blocking-items M] [--blocking-concurrency T]
//!      [--tolerance-ms MS] [--markdown FILE]
//! ```
//!
//! With `--markdown`, the run also writes the `## Soak` section of `FILE` (`docs/benchmarks.md`,
//! from `scripts/soak.sh --write`): the fixed text of `checks/soak/section.md`, then the figures
//! under `### Figures`, preceded by the `SOAK_RUN_NOTE` environment variable's text if set.
//!
//! The servers run in a child process (`soak serve`, see [`serve`]), so that what is measured
//! is the client's process alone. Then:
//!
//! 1. **tokio**: `N` work items (default 1,000), `C` at a time (default 64), through one
//!    `mcp_sansio_tokio::Client`, round-robin over the kinds of [`kinds::tokio_kinds`]. A work
//!    item is a connect, a listing, a call and a close against a well-behaved server, and the
//!    catalogue's operation against a hostile one.
//! 2. **blocking**: `M` work items (default `N / 5`), on `T` threads (default 16), through one
//!    `mcp_sansio_blocking::Client`, over [`kinds::blocking_kinds`] (HTTP/1.1 in clear text,
//!    which the tokio client, built for h2c, does not speak).
//!
//! It checks, and exits non-zero with every failure listed if one does not hold:
//!
//! - every work item ends with the outcome of its kind: success (with the HTTP version of its
//!   wire) against a well-behaved server; against a hostile one, the catalogue's error kind and
//!   cause ([`h1_verdict`]: [`hostile::verify`], with the one difference TLS makes; the HTTP/2
//!   catalogue's cause for HTTP/2, [`h2_verdict`]);
//! - every work item ends within its deadline (the sum of the budgets of the operations it ran)
//!   plus the tolerance (`--tolerance-ms`, default 1,000 ms), and an operation that fails on a
//!   time budget ends no sooner than the budget's limit and no later than the limit plus the
//!   tolerance;
//! - the process's open file descriptors, once each client is dropped, come back to the count
//!   before it was built (within [`FD_SETTLE`]);
//! - the peak resident memory stays under `rss_start + C × per_item` ([`memory_limit_kib`]).
//!
//! The figures (wall time, items per second, peak RSS, descriptors, outcomes per kind with their
//! slowest item) are printed either way.

use mcp_sansio_test_support::hostile;

use mcp_sansio_test_support::hostile::h2 as h2_catalogue;

use mcp_sansio_test_support::h2_server;

/// The HTTP/2 server peer the HTTP/2 catalogue and the good HTTP/2 server are written with.
use mcp_sansio_test_support::h2server;

mod kinds;
mod measure;
mod serve;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sansio::{Config, Era, EraHint, Error};
use mcp_sansio_net::{AddressPolicy, BuildClient, ClientBuilder};
use rustls::pki_types::CertificateDer;

use hostile::{Cause, Expect, Op, Outcome, Setup};
use kinds::{Behaviour, Kind, Wire};

/// How long the descriptors of a dropped client may take to close (its tasks are aborted, its
/// HTTP/2 sockets say GOAWAY, the server closes its side).
const FD_SETTLE: Duration = Duration::from_secs(10);

/// What one work item may hold at its peak, KiB: the core's bound of docs/guarantees.md for a
/// connection reading a catalog (the largest: [`hostile::CATALOG_FACTOR`] × the response byte
/// budget, plus its fixed 256 KiB), plus the 256 KiB the adapters' memory checks allow an
/// adapter beyond the core (`checks/support/src/hostile/adapter_run.rs`), which covers a socket's TLS and
/// read buffers.
fn per_item_kib() -> u64 {
    (hostile::CATALOG_FACTOR as u64 * kinds::RESPONSE_BYTES + 256 * 1024 + 256 * 1024) / 1024
}

/// The peak resident memory allowed: what the process held before the first client was built,
/// plus `concurrency` work items at their bound each. Idle pooled sockets, HTTP/2 connections
/// and the runtime's own growth are covered by the bound's slack: a work item's real peak is a
/// small fraction of it (the figures print it).
fn memory_limit_kib(rss_start: u64, concurrency: usize) -> u64 {
    rss_start + concurrency as u64 * per_item_kib()
}

struct Args {
    items: usize,
    concurrency: usize,
    blocking_items: usize,
    blocking_concurrency: usize,
    tolerance: Duration,
    markdown: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        items: 1000,
        concurrency: 64,
        blocking_items: usize::MAX,
        blocking_concurrency: 16,
        tolerance: Duration::from_millis(1000),
        markdown: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || -> Result<usize, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--items" => a.items = value()?,
            "--concurrency" => a.concurrency = value()?.max(1),
            "--blocking-items" => a.blocking_items = value()?,
            "--blocking-concurrency" => a.blocking_concurrency = value()?.max(1),
            "--tolerance-ms" => a.tolerance = Duration::from_millis(value()? as u64),
            "--markdown" => {
                a.markdown = Some(it.next().ok_or("--markdown needs a file")?);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.blocking_items == usize::MAX {
        a.blocking_items = a.items / 5;
    }
    Ok(a)
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        serve::main();
        return;
    }
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}\nusage: soak [--items N] [--concurrency C] [--blocking-items M] [--blocking-concurrency T] [--tolerance-ms MS] [--markdown FILE]");
            std::process::exit(2);
        }
    };
    let servers = Servers::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // The blocking client's reactor (smol's, one per process) starts before anything is counted,
    // as the tokio runtime does: its descriptors are the process's, not a client's.
    smol::block_on(smol::Timer::after(Duration::ZERO));
    // The work items' plans are made before anything is measured: the catalogue they come from
    // is large. The peak RSS is counted from after them.
    let tokio_kinds = kinds::tokio_kinds();
    let tokio_plans = plans(&tokio_kinds, &servers);
    let blocking_kinds = kinds::blocking_kinds();
    let blocking_plans = plans(&blocking_kinds, &servers);
    measure::trim_heap();
    measure::reset_peak_rss();
    let fds_start = measure::open_fds();
    let rss_start = measure::rss_kib();
    let mut problems = Vec::new();
    let mut md = String::new();

    println!(
        "soak: {} kinds of server on 127.0.0.1 (a child process), client process RSS {rss_start} KiB, {fds_start} open descriptors",
        kinds::all().len()
    );

    // 1. tokio: one client, h2c for `http` endpoints.
    let client: mcp_sansio_tokio::Client = builder(&servers).h2_prior_knowledge(true).build();
    let started = Instant::now();
    let results = rt.block_on(run_tokio(&client, &tokio_plans, &args));
    let wall = started.elapsed();
    let pooled = client.idle_sockets();
    let h2 = client.h2_connections();
    let open = measure::open_fds();
    drop(client);
    let (fds_after, settled) = measure::settle_fds(fds_start, FD_SETTLE);
    RunReport {
        run: "tokio",
        items: args.items,
        concurrency: args.concurrency.min(args.items),
        wall,
        kinds: &tokio_kinds,
        results: &results,
        tolerance: args.tolerance,
    }
    .report(&mut md, &mut problems);
    let fds = format!(
        "{fds_start} before the client, {open} with it after the run ({pooled} idle pooled sockets, {h2} HTTP/2 connections), {fds_after} {:.0} ms after it was dropped",
        settled.as_secs_f64() * 1e3
    );
    println!("  descriptors: {fds}");
    md.push_str(&format!("Open descriptors: {fds}.\n\n"));
    let tokio_peak = measure::peak_rss_kib();
    println!("  peak RSS so far {tokio_peak} KiB");
    if fds_after != fds_start {
        problems.push(format!(
            "tokio: {fds_after} descriptors open after the client was dropped, {fds_start} before"
        ));
    }

    // 2. blocking: one client, HTTP/1.1 in clear text.
    if args.blocking_items > 0 {
        let client: mcp_sansio_blocking::Client = builder(&servers).build();
        let started = Instant::now();
        let results = run_blocking(&client, &blocking_plans, &args);
        let wall = started.elapsed();
        let open = measure::open_fds();
        drop(client);
        let (fds_after, settled) = measure::settle_fds(fds_start, FD_SETTLE);
        RunReport {
            run: "blocking",
            items: args.blocking_items,
            concurrency: args.blocking_concurrency.min(args.blocking_items),
            wall,
            kinds: &blocking_kinds,
            results: &results,
            tolerance: args.tolerance,
        }
        .report(&mut md, &mut problems);
        let fds = format!(
            "{fds_start} before the client, {open} with it after the run, {fds_after} {:.0} ms after it was dropped",
            settled.as_secs_f64() * 1e3
        );
        println!("  descriptors: {fds}");
        md.push_str(&format!("Open descriptors: {fds}.\n\n"));
        if fds_after != fds_start {
            problems.push(format!(
                "blocking: {fds_after} descriptors open after the client was dropped, {fds_start} before"
            ));
        }
    }
    drop(rt);

    // The kernel's high-water mark is read from counters it syncs lazily: the larger reading.
    let peak = measure::peak_rss_kib().max(tokio_peak);
    // The most work items ever in flight at once, in either run.
    let concurrency = args
        .concurrency
        .min(args.items)
        .max(args.blocking_concurrency.min(args.blocking_items))
        .max(1);
    let limit = memory_limit_kib(rss_start, concurrency);
    let per_item = peak.saturating_sub(rss_start) as f64 / concurrency as f64;
    println!(
        "peak RSS {peak} KiB ({:.1} MiB; {tokio_peak} KiB in the tokio run); limit {limit} KiB = {rss_start} at the start + {concurrency} items at once × {} KiB; {per_item:.0} KiB above the start per item in flight",
        peak as f64 / 1024.0,
        per_item_kib(),
    );
    md.push_str(&format!(
        "Peak RSS of the client process: **{:.1} MiB** ({:.1} MiB by the end of the tokio run), from {:.1} MiB before the first client: {per_item:.0} KiB per work item in flight. Limit checked: {:.1} MiB = the start + {concurrency} items at once × {} KiB.\n",
        peak as f64 / 1024.0,
        tokio_peak as f64 / 1024.0,
        rss_start as f64 / 1024.0,
        limit as f64 / 1024.0,
        per_item_kib(),
    ));
    if peak > limit {
        problems.push(format!("peak RSS {peak} KiB over the limit {limit} KiB"));
    }
    drop(servers);
    if let Some(path) = &args.markdown {
        let verdict = if problems.is_empty() {
            "Every check held.".to_owned()
        } else {
            format!(
                "**{} checks failed**: {}.",
                problems.len(),
                problems.join("; ")
            )
        };
        md.push_str(&format!("\n{verdict}\n"));
        write_section(path, &md);
    }
    if problems.is_empty() {
        println!("soak: every check held");
    } else {
        println!("soak: {} problems", problems.len());
        for p in &problems {
            println!("  {p}");
        }
        std::process::exit(1);
    }
}

/// The fixed text of the `## Soak` section: what runs and what is checked.
const SECTION: &str = include_str!("../section.md");

/// Writes the `## Soak` section of the Markdown file at `path` ([`SECTION`], then `figures`
/// under `### Figures`), in place of the one there (up to the next `## ` heading), or at the end.
fn write_section(path: &str, figures: &str) {
    let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let (before, after) = match doc.find("\n## Soak\n") {
        Some(i) => {
            let end = doc[i + 1..]
                .find("\n## ")
                .map_or(doc.len(), |j| i + 1 + j + 1);
            (&doc[..i + 1], &doc[end..])
        }
        None => (doc.as_str(), ""),
    };
    let mut out = String::from(before);
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    out.push_str(SECTION);
    out.push_str("### Figures\n\n");
    out.push_str(&std::env::var("SOAK_RUN_NOTE").map_or(String::new(), |n| format!("{n}\n\n")));
    out.push_str(figures);
    if !after.is_empty() {
        out.push('\n');
        out.push_str(after);
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("write {path}: {e}"));
}

// ---------------------------------------------------------------------------------------------
// The server process

/// The child process serving every kind, with the ports it printed.
struct Servers {
    child: Child,
    ports: BTreeMap<String, u16>,
    cert: CertificateDer<'static>,
}

impl Servers {
    fn start() -> Servers {
        let exe = std::env::current_exe().expect("the soak binary's path");
        let mut child = Command::new(exe)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server process");
        let stdout = child.stdout.take().expect("its standard output");
        let mut ports = BTreeMap::new();
        let mut cert = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.expect("read the server process");
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["port", label, port] => {
                    ports.insert((*label).to_owned(), port.parse().expect("a port"));
                }
                ["cert", hex] => {
                    let der: Vec<u8> = (0..hex.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                        .collect();
                    cert = Some(CertificateDer::from(der));
                }
                ["ready"] => break,
                _ => panic!("unexpected line from the server process: {line}"),
            }
        }
        Servers {
            child,
            ports,
            cert: cert.expect("the server process printed its certificate"),
        }
    }

    fn url(&self, kind: &Kind) -> String {
        let port = self.ports[&kind.label()];
        let scheme = if kind.wire.tls() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{port}/mcp")
    }
}

impl Drop for Servers {
    /// Closes the server process's standard input (it exits), and kills it if it has not
    /// within 5 s.
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of either adapter admitting loopback addresses (refused by default) and trusting
/// the servers' certificate besides the webpki roots.
fn builder<C: BuildClient>(servers: &Servers) -> ClientBuilder<C> {
    ClientBuilder::<C>::new()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .add_root_certificates([servers.cert.clone()])
}

// ---------------------------------------------------------------------------------------------
// Work items

/// What a work item does, and what it must come to.
#[derive(Clone)]
enum Plan {
    /// Connect, list, call `echo`, close: each must succeed.
    Good {
        config: Config,
        wire: Wire,
        /// A tool the listing must hold.
        tool: &'static str,
        /// The arguments of the `echo` call.
        args: &'static str,
    },
    /// The HTTP/1.1 catalogue's scenario, on this wire.
    H1(hostile::Scenario, Wire, Config),
    /// The HTTP/2 catalogue's scenario (connect from a modern hint, then its operation).
    H2(h2_catalogue::H2Scenario, Config),
}

/// The plan of a work item of each of `kinds`, in order (built once: the catalogue is large).
fn plans(kinds: &[Kind], servers: &Servers) -> Vec<Plan> {
    let h1 = kinds::h1_scenarios();
    kinds
        .iter()
        .map(|kind| plan(kind, &servers.url(kind), &h1))
        .collect()
}

fn plan(kind: &Kind, url: &str, h1: &[hostile::Scenario]) -> Plan {
    match kind.behaviour {
        Behaviour::Demo | Behaviour::DemoLegacy => Plan::Good {
            config: Config::new(url)
                .expect("a valid endpoint")
                .with_budgets(kinds::good_budgets()),
            wire: kind.wire,
            tool: "echo",
            args: r#"{"text":"soak"}"#,
        },
        Behaviour::H2Good => {
            let mut config = h2_server::config(url);
            config.budgets = kinds::good_budgets();
            Plan::Good {
                config,
                wire: kind.wire,
                tool: "echo",
                args: "{}",
            }
        }
        Behaviour::H1Hostile(name) => {
            let s = h1
                .iter()
                .find(|s| s.name == name)
                .expect("a chosen scenario")
                .clone();
            let mut config = Config::new(url)
                .expect("a valid endpoint")
                .with_budgets(s.budgets.clone());
            if s.setup == Setup::Modern {
                config.era_hint = Some(EraHint {
                    era: Era::Modern,
                    version: mcp_sansio::MODERN_VERSION.into(),
                });
            }
            Plan::H1(s, kind.wire, config)
        }
        Behaviour::H2Hostile(name) => {
            let sc = kinds::h2_scenario(name);
            let config = sc.config(url);
            Plan::H2(sc, config)
        }
    }
}

impl Plan {
    /// The item's deadline: the budgets of the operations it runs, added up.
    fn deadline(&self) -> Duration {
        match self {
            Plan::Good { config, .. } => {
                let b = &config.budgets;
                kinds::connect_limit(b) + b.list_time + b.call_time + b.close_time
            }
            Plan::H1(s, _, _) => {
                let b = &s.budgets;
                kinds::connect_limit(b)
                    + match s.op {
                        Op::Connect => Duration::ZERO,
                        Op::List => b.list_time,
                        Op::Call(_) => b.call_time,
                        Op::Close => b.close_time,
                    }
            }
            Plan::H2(sc, _) => {
                let b = &sc.budgets;
                kinds::connect_limit(b)
                    + match sc.op {
                        h2_catalogue::H2Op::List => b.list_time,
                        h2_catalogue::H2Op::Call(_) => b.call_time,
                    }
            }
        }
    }
}

/// How one work item ended.
struct ItemResult {
    kind: usize,
    took: Duration,
    deadline: Duration,
    /// `ok`, or the error's kind and cause.
    outcome: String,
    /// The limit of the time budget its operation failed on, and the time the operation took.
    timed: Option<(Duration, Duration)>,
    /// What was wrong with it, if anything.
    problem: Option<String>,
}

/// A short name of an error: its kind and its cause (the budget it exceeded, or its variant).
fn describe(e: &Error) -> String {
    let cause = match e.budget() {
        Some(b) => format!("budget {:?}", b.budget),
        None => {
            let debug = format!("{e:?}");
            // The variant and its first field, without free text.
            let cut = debug
                .find([',', '"'])
                .map_or(debug.as_str(), |i| &debug[..i]);
            // A field name left open at the cut (`Http(Malformed { what:`) goes too.
            let cut = cut.trim_end();
            let cut = match cut.rsplit_once(" { ") {
                Some((head, field)) if field.ends_with(':') => head,
                _ => cut,
            };
            cut.trim_end_matches([' ', '{', '(']).to_owned()
        }
    };
    format!("{}: {cause}", e.kind())
}

/// The verdict on a hostile HTTP/1.1 item: the catalogue's ([`hostile::verify`]), with one
/// difference over TLS. A server that closes the connection where the catalogue expects the
/// client to report the end of the stream (`Cause::Eof`) closes it without TLS's `close_notify`
/// over TLS: that is a truncation, which rustls reports as an error, so the right ending is then
/// the transport's I/O error (`TransportErrorKind::Io`), of the same kind (`ConnectionFailed`).
fn h1_verdict(s: &hostile::Scenario, wire: Wire, outcome: &Outcome) -> Option<String> {
    let truncated = |e: &Error| {
        matches!(
            e,
            Error::Transport(mcp_sansio::TransportError {
                kind: mcp_sansio::TransportErrorKind::Io,
                ..
            })
        )
    };
    match (&s.expect, outcome) {
        (Expect::Fail(kind, Cause::Eof), Outcome::Failed(e))
            if wire.tls() && e.kind() == *kind && truncated(e) =>
        {
            None
        }
        _ => hostile::verify(s, outcome).err(),
    }
}

/// The verdict on a hostile HTTP/2 item's error: of kind `ConnectionFailed`, with the HTTP/2
/// catalogue's cause (with the configured limit for a budget). The catalogue's cause is what one
/// work item alone on its socket gets; here every item of the kind shares the origin's one
/// HTTP/2 socket, and must still end in it.
fn h2_verdict(sc: &h2_catalogue::H2Scenario, e: &Error) -> Option<String> {
    if e.kind() != kinds::H2_KIND {
        return Some(format!(
            "kind {} instead of {}: {e:?}",
            e.kind(),
            kinds::H2_KIND
        ));
    }
    if sc.expect.matches(e, &sc.budgets) {
        return None;
    }
    Some(format!("expected {:?}, got {e:?}", sc.expect))
}

/// How a work item ended, before its deadline is checked.
struct Ended {
    /// `ok`, or the error's kind and cause.
    outcome: String,
    /// What was wrong with the outcome, if anything.
    problem: Option<String>,
    /// For an operation that failed on a time budget: the budget's limit and the time the
    /// operation took.
    timed: Option<(Duration, Duration)>,
}

impl Ended {
    fn new(outcome: impl Into<String>, problem: Option<String>) -> Ended {
        Ended {
            outcome: outcome.into(),
            problem,
            timed: None,
        }
    }

    /// The ending of an operation that took `took` and failed with `e` (judged `problem`).
    fn failed(e: &Error, problem: Option<String>, took: Duration) -> Ended {
        use mcp_sansio::Budget::{CallTime, CloseTime, ListTime, RequestTime};
        let timed = e
            .budget()
            .filter(|b| matches!(b.budget, RequestTime | ListTime | CallTime | CloseTime))
            .map(|b| (Duration::from_millis(b.limit), took));
        Ended {
            outcome: describe(e),
            problem,
            timed,
        }
    }
}

/// Declares `$name(client, plan) -> Ended`, the body of a work item, for a client whose
/// operations are waited with `$($wait)*` (`.await`, or nothing).
macro_rules! work_item {
    ($name:ident, $client:ty, $($async:ident)? [$($wait:tt)*]) => {
        $($async)? fn $name(client: &$client, plan: Plan) -> Ended {
            match plan {
                Plan::Good { config, wire, tool, args } => {
                    let mut session = match client.connect(config)$($wait)* {
                        Ok(s) => s,
                        Err(e) => return Ended::new(describe(&e), Some(format!("connect: {e}"))),
                    };
                    if session.http_version() != wire.http_version() {
                        let spoke = format!("spoke {}", session.http_version());
                        return Ended::new("wrong HTTP version", Some(spoke));
                    }
                    match session.list_tools()$($wait)* {
                        Ok(c) if c.tools.iter().any(|t| t.name() == tool) => {}
                        Ok(_) => return Ended::new("listing", Some(format!("no tool {tool}"))),
                        Err(e) => return Ended::new(describe(&e), Some(format!("list: {e}"))),
                    }
                    match session.call_tool(tool, args.as_bytes())$($wait)* {
                        Ok(r) if !r.is_error && !r.content.is_empty() => {}
                        Ok(r) => return Ended::new("call", Some(format!("call result {r:?}"))),
                        Err(e) => return Ended::new(describe(&e), Some(format!("call: {e}"))),
                    }
                    match session.close()$($wait)* {
                        Ok(()) => Ended::new("ok", None),
                        Err(e) => Ended::new(describe(&e), Some(format!("close: {e}"))),
                    }
                }
                Plan::H1(s, wire, config) => {
                    let started = Instant::now();
                    let connected = client.connect(config)$($wait)*;
                    let connect_took = started.elapsed();
                    let started = Instant::now();
                    let (outcome, took) = match (&s.op, connected) {
                        (Op::Connect, Ok(_)) => (Outcome::Connected, connect_took),
                        (Op::Connect, Err(e)) => (Outcome::Failed(e), connect_took),
                        (_, Err(e)) => (Outcome::SetupFailed(e), connect_took),
                        (Op::List, Ok(mut session)) => {
                            let outcome = match session.list_tools()$($wait)* {
                                Ok(c) => Outcome::Listed {
                                    tools: c.tools.len(),
                                    refused: c.refused_count(),
                                },
                                Err(e) => Outcome::Failed(e),
                            };
                            (outcome, started.elapsed())
                        }
                        (Op::Call(args), Ok(mut session)) => {
                            let outcome = match session.call_tool("t", args.as_bytes())$($wait)* {
                                Ok(r) => Outcome::Called {
                                    blocks: r.content.len(),
                                    unknown: r.dropped_unknown,
                                    invalid: r.dropped_invalid,
                                },
                                Err(e) => Outcome::Failed(e),
                            };
                            (outcome, started.elapsed())
                        }
                        (Op::Close, Ok(session)) => {
                            let outcome = match session.close()$($wait)* {
                                Ok(()) => Outcome::Closed,
                                Err(e) => Outcome::Failed(e),
                            };
                            (outcome, started.elapsed())
                        }
                    };
                    let problem = h1_verdict(&s, wire, &outcome);
                    match &outcome {
                        Outcome::Failed(e) | Outcome::SetupFailed(e) => {
                            Ended::failed(e, problem, took)
                        }
                        other => Ended::new(format!("{other:?}"), problem),
                    }
                }
                Plan::H2(sc, config) => {
                    let mut session = match client.connect(config)$($wait)* {
                        Ok(s) => s,
                        Err(e) => return Ended::new(describe(&e), Some(format!("connect: {e}"))),
                    };
                    if session.http_version() != "HTTP/2" {
                        let spoke = format!("spoke {}", session.http_version());
                        return Ended::new("wrong HTTP version", Some(spoke));
                    }
                    let started = Instant::now();
                    let result = match sc.op {
                        h2_catalogue::H2Op::List => session.list_tools()$($wait)*.map(|_| ()),
                        h2_catalogue::H2Op::Call(n) => {
                            let args = format!(r#"{{"x":"{}"}}"#, "a".repeat(n));
                            session.call_tool("t", args.as_bytes())$($wait)*.map(|_| ())
                        }
                    };
                    let took = started.elapsed();
                    match result {
                        Ok(()) => Ended::new("ok", Some("did not fail".into())),
                        Err(e) => Ended::failed(&e, h2_verdict(&sc, &e), took),
                    }
                }
            }
        }
    };
}

work_item!(tokio_item, mcp_sansio_tokio::Client, async[.await]);
work_item!(blocking_item, mcp_sansio_blocking::Client, []);

/// Judges how one item ended, in `took` against its `deadline`: the item must end within its
/// deadline plus `tolerance`, and an operation that failed on a time budget must have ended no
/// sooner than the budget's limit and no later than the limit plus `tolerance`.
fn finish(
    kind: usize,
    deadline: Duration,
    took: Duration,
    ended: Ended,
    tolerance: Duration,
) -> ItemResult {
    let problem = if let Some(p) = ended.problem {
        Some(p)
    } else if took > deadline + tolerance {
        Some(format!(
            "took {took:?}, over its deadline {deadline:?} + {tolerance:?}"
        ))
    } else {
        match ended.timed {
            Some((limit, op)) if op < limit => Some(format!(
                "failed on a {limit:?} budget after {op:?}, before its deadline"
            )),
            Some((limit, op)) if op > limit + tolerance => Some(format!(
                "failed on a {limit:?} budget after {op:?}, over it + {tolerance:?}"
            )),
            _ => None,
        }
    };
    ItemResult {
        kind,
        took,
        deadline,
        outcome: ended.outcome,
        timed: ended.timed,
        problem,
    }
}

/// Runs `args.items` work items, `args.concurrency` at a time, one task each, through `client`:
/// item `i` follows `plans[i % plans.len()]`.
async fn run_tokio(
    client: &mcp_sansio_tokio::Client,
    plans: &[Plan],
    args: &Args,
) -> Vec<ItemResult> {
    let next = Arc::new(AtomicUsize::new(0));
    let results = Arc::new(Mutex::new(Vec::new()));
    let plans: Arc<Vec<Plan>> = Arc::new(plans.to_vec());
    let mut workers = Vec::new();
    for _ in 0..args.concurrency.min(args.items) {
        let (client, next, results) = (client.clone(), next.clone(), results.clone());
        let (plans, items, tolerance) = (plans.clone(), args.items, args.tolerance);
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= items {
                    return;
                }
                let k = i % plans.len();
                let plan = plans[k].clone();
                let deadline = plan.deadline();
                let started = Instant::now();
                let ended = tokio_item(&client, plan).await;
                let r = finish(k, deadline, started.elapsed(), ended, tolerance);
                results.lock().unwrap().push(r);
            }
        }));
    }
    for w in workers {
        w.await.expect("a work item panicked");
    }
    let mut guard = results.lock().unwrap();
    std::mem::take(&mut *guard)
}

/// Runs `args.blocking_items` work items on `args.blocking_concurrency` threads through
/// `client`: item `i` follows `plans[i % plans.len()]`.
fn run_blocking(
    client: &mcp_sansio_blocking::Client,
    plans: &[Plan],
    args: &Args,
) -> Vec<ItemResult> {
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.blocking_concurrency.min(args.blocking_items) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= args.blocking_items {
                    return;
                }
                let k = i % plans.len();
                let plan = plans[k].clone();
                let deadline = plan.deadline();
                let started = Instant::now();
                let ended = blocking_item(client, plan);
                let r = finish(k, deadline, started.elapsed(), ended, args.tolerance);
                results.lock().unwrap().push(r);
            });
        }
    });
    results.into_inner().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Figures

/// One run's figures, printed and written as Markdown.
struct RunReport<'a> {
    run: &'a str,
    items: usize,
    concurrency: usize,
    wall: Duration,
    kinds: &'a [Kind],
    results: &'a [ItemResult],
    tolerance: Duration,
}

impl RunReport<'_> {
    /// Prints the figures, adds them to `md` as Markdown and every failed check to `problems`.
    fn report(&self, md: &mut String, problems: &mut Vec<String>) {
        let (run, results, kinds) = (self.run, self.results, self.kinds);
        let rate = results.len() as f64 / self.wall.as_secs_f64();
        println!(
            "{run}: {} items ({} asked), {} at once, {} kinds, wall {:.2} s ({rate:.0} items/s); tolerance {} ms",
            results.len(),
            self.items,
            self.concurrency,
            kinds.len(),
            self.wall.as_secs_f64(),
            self.tolerance.as_millis()
        );
        if results.len() != self.items {
            problems.push(format!(
                "{run}: {} items ended of {}",
                results.len(),
                self.items
            ));
        }
        println!(
            "  {:<40} {:>5}  {:>9} {:>9}  outcomes",
            "kind", "items", "slowest", "deadline"
        );
        let mut table = String::from(
            "| server / wire | items | outcomes | slowest item | its deadline |\n|---|---|---|---|---|\n",
        );
        for (k, kind) in kinds.iter().enumerate() {
            let mine: Vec<&ItemResult> = results.iter().filter(|r| r.kind == k).collect();
            if mine.is_empty() {
                continue;
            }
            let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &mine {
                *outcomes.entry(r.outcome.as_str()).or_default() += 1;
            }
            let slowest = mine.iter().map(|r| r.took).max().unwrap_or_default();
            let deadline = mine[0].deadline;
            let text: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n}× {o}")).collect();
            println!(
                "  {:<40} {:>5}  {:>7.0}ms {:>7.0}ms  {}",
                kind.label(),
                mine.len(),
                slowest.as_secs_f64() * 1e3,
                deadline.as_secs_f64() * 1e3,
                text.join(", ")
            );
            let cells: Vec<String> = outcomes
                .iter()
                .map(|(o, n)| format!("{n} × `{o}`"))
                .collect();
            table.push_str(&format!(
                "| `{}` | {} | {} | {:.0} ms | {} s |\n",
                kind.label(),
                mine.len(),
                cells.join("; "),
                slowest.as_secs_f64() * 1e3,
                deadline.as_secs()
            ));
            for r in mine.iter().filter(|r| r.problem.is_some()) {
                problems.push(format!(
                    "{run}: {} (after {:?}): {}",
                    kind.label(),
                    r.took,
                    r.problem.as_deref().unwrap_or_default()
                ));
            }
        }
        let good = results.iter().filter(|r| kinds[r.kind].good()).count();
        let overrun = results
            .iter()
            .map(|r| r.took.saturating_sub(r.deadline))
            .max()
            .unwrap_or_default();
        let timed: Vec<(Duration, Duration)> = results.iter().filter_map(|r| r.timed).collect();
        let late = timed
            .iter()
            .map(|(limit, took)| took.saturating_sub(*limit))
            .max()
            .unwrap_or_default();
        let early = timed
            .iter()
            .map(|(limit, took)| limit.saturating_sub(*took))
            .max()
            .unwrap_or_default();
        let hostile = results.len() - good;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "  {good} items against well-behaved servers, {hostile} against hostile ones; largest overrun of an item's deadline {:.0} ms",
            ms(overrun)
        );
        println!(
            "  {} operations failed on a time budget: the latest ended {:.0} ms after the budget's limit, the earliest {:.0} ms before it",
            timed.len(),
            ms(late),
            ms(early)
        );
        md.push_str(&format!(
            "**{run}**: {} work items ({good} against well-behaved servers, {hostile} against hostile ones), {} at once, in {:.2} s ({rate:.0} items/s). Largest overrun of an item's deadline: {:.0} ms (tolerance {} ms). {} operations failed on a time budget; each ended between the budget's limit and {:.0} ms after it (earliest: {:.0} ms before the limit).\n\n{table}\n",
            results.len(),
            self.concurrency,
            self.wall.as_secs_f64(),
            ms(overrun),
            self.tolerance.as_millis(),
            timed.len(),
            ms(late),
            ms(early),
        ));
    }
}
