//! Contender of the concurrency scaling rows: `PAR` work items in flight at once on one tokio
//! `Client`.
//!
//! `bench-sansio-scale URL PAR [sample|nosample [ORIGINS]]`: one `Client` (its defaults, loopback allowed, a pool that may
//! keep `PAR` idle sockets) runs one warm-up work item (it learns the era), then `PAR` work items
//! started at once, each its own `Session`: connect (era hint, no request), call `slow` (the
//! server answers after 3 s, so that every item is in flight at the same time), close. Over
//! HTTP/1.1 each item in flight holds a socket of its own. While they run, the process samples its
//! resident memory (`VmRSS`) and its open descriptors (`/proc/self/fd`) every 50 ms; it prints the
//! largest of each beside their values before the round, and every item's latency. With
//! `nosample` it does not sample (reading `/proc/self/fd` costs CPU in proportion to the
//! descriptors open), so that the process's CPU is the work items' alone. With `ORIGINS` above
//! one (the default) the items spread over that many origins, `o<i>.test` on `URL`'s port, which
//! the client resolves to 127.0.0.1: item `k` goes to origin `k mod ORIGINS`, and the warm-up
//! runs one item per origin (each learns its era). With `PAR` 0 only the warm-up item runs (the
//! baseline of the client CPU per item). Run it with `ulimit -n` above `PAR`. Every call must return the text the server sends; otherwise the process fails.
//!
//! Prints `{"ms": [latency of each item], "check": text length, "rss_before_kib",
//! "rss_peak_kib", "fds_before", "fds_peak"}`.

use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_sansio::{text_len, Args};
use mcp_sansio::Config;
use mcp_sansio_net::{AddressPolicy, PoolLimits, StaticResolver};
use mcp_sansio_tokio::Client;

/// Resident set size of this process, in KiB, from /proc/self/status.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Open file descriptors of this process.
fn fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64)
}

/// One work item: its latency in milliseconds and the length of the text returned.
async fn work_item(client: &Client, url: &str, tool: &str) -> Result<(f64, usize), String> {
    let start = Instant::now();
    let config = Config::new(url).map_err(|e| format!("config: {e}"))?;
    let mut session = client
        .connect(config)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let result = session
        .call_tool(tool, Args::ARGUMENTS)
        .await
        .map_err(|e| format!("call: {e}"))?;
    if result.is_error {
        return Err("call: an error result".into());
    }
    session.close().await.map_err(|e| format!("close: {e}"))?;
    Ok((start.elapsed().as_secs_f64() * 1e3, text_len(&result)))
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if !(3..=5).contains(&a.len()) || a.get(3).is_some_and(|m| m != "sample" && m != "nosample") {
        eprintln!("usage: bench-sansio-scale URL PAR [sample|nosample [ORIGINS]]");
        return ExitCode::from(2);
    }
    let url = a[1].clone();
    let sample = a.get(3).is_none_or(|m| m == "sample");
    let Ok(origins) = a.get(4).map_or(Ok(1), |o| o.parse::<usize>()) else {
        eprintln!("ORIGINS is a number");
        return ExitCode::from(2);
    };
    let urls: Vec<String> = if origins <= 1 {
        vec![url.clone()]
    } else {
        let port = url
            .rsplit(':')
            .next()
            .and_then(|p| p.split('/').next())
            .unwrap_or("80");
        (0..origins)
            .map(|i| format!("http://o{i}.test:{port}/mcp"))
            .collect()
    };
    let mut resolver = StaticResolver::new();
    for i in 0..origins {
        resolver = resolver.with(&format!("o{i}.test"), &[Ipv4Addr::LOCALHOST.into()]);
    }
    let Ok(par) = a[2].parse::<usize>() else {
        eprintln!("PAR is a number");
        return ExitCode::from(2);
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = rt.block_on(async move {
        let client = Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .resolver(resolver)
            .pool_limits(PoolLimits {
                max_idle_per_origin: par.max(1),
                max_idle: par.max(1),
                ..PoolLimits::default()
            })
            .build();
        let mut check = 0;
        for url in &urls {
            check = work_item(&client, url, "small").await?.1;
        }
        let (rss_before, fds_before) = (rss_kib(), fds());
        let running = Arc::new(AtomicBool::new(true));
        let sampler = {
            let running = running.clone();
            tokio::spawn(async move {
                let (mut rss, mut fd) = (rss_kib(), fds());
                while sample && running.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    rss = rss.max(rss_kib());
                    fd = fd.max(fds());
                }
                (rss, fd)
            })
        };
        let tasks: Vec<_> = (0..par)
            .map(|k| {
                let (client, url) = (client.clone(), urls[k % urls.len()].clone());
                tokio::spawn(async move { work_item(&client, &url, "slow").await })
            })
            .collect();
        let mut ms = Vec::with_capacity(par);
        let mut failure = None;
        for t in tasks {
            match t.await.map_err(|e| format!("task: {e}")).and_then(|r| r) {
                Ok((m, c)) => {
                    ms.push(m);
                    check = c;
                }
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        running.store(false, Ordering::Relaxed);
        let (rss_peak, fds_peak) = sampler.await.map_err(|e| format!("sampler: {e}"))?;
        if let Some(e) = failure {
            return Err(e);
        }
        Ok::<_, String>(serde_json::json!({
            "ms": ms,
            "check": check,
            "rss_before_kib": rss_before,
            "rss_peak_kib": rss_peak,
            "fds_before": fds_before,
            "fds_peak": fds_peak,
        }))
    });
    match outcome {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-sansio-scale: {e}");
            ExitCode::from(1)
        }
    }
}
