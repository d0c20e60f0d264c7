//! Contender of the concurrency scaling rows: `PAR` work items in flight at once on one tokio
//! `Client`.
//!
//! `bench-sansio-scale URL PAR [sample|nosample [ORIGINS [WORK [CA_PEM]]]]`: one `Client` (its
//! defaults, loopback allowed, a pool that may keep `PAR` idle sockets) runs one warm-up work item
//! (it learns the era), then `PAR` work items started at once, each its own `Session`: connect
//! (era hint, no request), `WORK`, close. `WORK` is `slow` (the default: call `slow`, which the
//! server answers after 3 s, so that every item is in flight at the same time), `list+slow` (list
//! every page of the catalog, then call `slow`) or `list+small` (list, then call `small`, which
//! echoes at once). Over HTTP/1.1 each item in flight holds a socket of its own. With `CA_PEM`
//! (an `https` URL) the client trusts that certificate authority and speaks HTTP/2 where the
//! server's ALPN chooses it: every item must run over HTTP/2, all on the origin's one socket,
//! which the core opens at most min(100, the server's SETTINGS_MAX_CONCURRENT_STREAMS) streams
//! of at once (the default of `ClientBuilder::h2_max_streams`), the other items waiting for a
//! stream. While they run, the process samples its resident memory (`VmRSS`) and its open
//! descriptors (`/proc/self/fd`) every 50 ms; it prints the largest of each beside their values
//! before the round, and every item's latency. With `nosample` it does not sample (reading
//! `/proc/self/fd` costs CPU in proportion to the descriptors open), so that the process's CPU is
//! the work items' alone. With `ORIGINS` above one (the default) the items spread over that many
//! origins, `o<i>.test` on `URL`'s port, which the client resolves to 127.0.0.1: item `k` goes to
//! origin `k mod ORIGINS`, and the warm-up runs one item per origin (each learns its era). With
//! `PAR` 0 only the warm-up item runs (the baseline of the client CPU per item). Run it with
//! `ulimit -n` above `PAR`. Every call must return the text the server sends, and every listing
//! the same number of tools; otherwise the process fails.
//!
//! Prints `{"ms": [latency of each item], "check": text length, "tools": tools listed (0 when the
//! items do not list), "rss_before_kib", "rss_peak_kib", "fds_before", "fds_peak",
//! "http_version", "h2_connections"}`.

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_sansio::{text_len, Args};
use mcp_sansio::Config;
use mcp_sansio_net::{AddressPolicy, PoolLimits, StaticResolver};
use mcp_sansio_tokio::{read_ca_certificates, Client};

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

/// What one work item does after it connects.
#[derive(Clone, Copy)]
struct Work {
    /// Whether it lists every page first.
    list: bool,
    /// The tool it calls.
    tool: &'static str,
}

impl Work {
    fn parse(s: &str) -> Option<Work> {
        let (list, tool) = match s.strip_prefix("list+") {
            Some(tool) => (true, tool),
            None => (false, s),
        };
        let tool = ["slow", "small"].into_iter().find(|t| *t == tool)?;
        Some(Work { list, tool })
    }
}

/// What one work item came to.
struct Done {
    /// Its latency in milliseconds.
    ms: f64,
    /// The length of the text returned.
    text: usize,
    /// The tools listed (0 if it did not list).
    tools: usize,
}

/// One work item: connect, `work`, close. With `http2` every exchange must run over HTTP/2.
async fn work_item(client: &Client, url: &str, work: Work, http2: bool) -> Result<Done, String> {
    let start = Instant::now();
    let config = Config::new(url).map_err(|e| format!("config: {e}"))?;
    let mut session = client
        .connect(config)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let tools = if work.list {
        session
            .list_tools()
            .await
            .map_err(|e| format!("list: {e}"))?
            .tools
            .len()
    } else {
        0
    };
    let result = session
        .call_tool(work.tool, Args::ARGUMENTS)
        .await
        .map_err(|e| format!("call: {e}"))?;
    if result.is_error {
        return Err("call: an error result".into());
    }
    if http2 && session.http_version() != "HTTP/2" {
        return Err(format!("the session ran over {}", session.http_version()));
    }
    session.close().await.map_err(|e| format!("close: {e}"))?;
    Ok(Done {
        ms: start.elapsed().as_secs_f64() * 1e3,
        text: text_len(&result),
        tools,
    })
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if !(3..=7).contains(&a.len()) || a.get(3).is_some_and(|m| m != "sample" && m != "nosample") {
        eprintln!("usage: bench-sansio-scale URL PAR [sample|nosample [ORIGINS [WORK [CA_PEM]]]]");
        return ExitCode::from(2);
    }
    let Some(work) = Work::parse(a.get(5).map_or("slow", String::as_str)) else {
        eprintln!("WORK is slow, list+slow or list+small");
        return ExitCode::from(2);
    };
    let roots = match a.get(6).map(|ca| read_ca_certificates(Path::new(ca))) {
        None => None,
        Some(Ok(roots)) => Some(roots),
        Some(Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let http2 = roots.is_some();
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
        let scheme = if http2 { "https" } else { "http" };
        (0..origins)
            .map(|i| format!("{scheme}://o{i}.test:{port}/mcp"))
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
        let mut builder = Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .resolver(resolver)
            .pool_limits(PoolLimits {
                max_idle_per_origin: par.max(1),
                max_idle: par.max(1),
                ..PoolLimits::default()
            });
        if let Some(roots) = roots {
            builder = builder.add_root_certificates(roots);
        }
        let client = builder.build();
        let warm = Work {
            list: work.list,
            tool: "small",
        };
        let (mut check, mut tools) = (0, 0);
        for url in &urls {
            let done = work_item(&client, url, warm, http2).await?;
            (check, tools) = (done.text, done.tools);
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
                tokio::spawn(async move { work_item(&client, &url, work, http2).await })
            })
            .collect();
        let mut ms = Vec::with_capacity(par);
        let mut failure = None;
        for t in tasks {
            match t.await.map_err(|e| format!("task: {e}")).and_then(|r| r) {
                Ok(done) => {
                    ms.push(done.ms);
                    if done.tools != tools {
                        failure = failure.or(Some(format!(
                            "list: {} tools, the warm-up listed {tools}",
                            done.tools
                        )));
                    }
                    check = done.text;
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
            "tools": tools,
            "http_version": if http2 { "HTTP/2" } else { "HTTP/1.1" },
            "h2_connections": client.h2_connections(),
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
