//! Benchmark contender: the rmcp (official Rust SDK) Streamable HTTP client.
//!
//! `bench-rmcp URL WORK N PAR REPS ERA [fresh]` runs one warm-up work item, then `REPS` timed
//! rounds; a round is `N` work items, `PAR` of them at a time. A work item is connect, then `WORK`
//! (`list`: list every page; `small` / `big`: call that tool), then close. `ERA` is `legacy` (the
//! default `initialize` handshake) or `modern` (`server/discover`). By default one pooled
//! `reqwest::Client`, built once per process, is shared by every work item (warm-up included), as
//! this crate's contenders share one `Client`; with `fresh` each work item uses the transport's
//! own default client, as `from_uri` builds it (pooling off), the unpooled setup. Prints one JSON
//! line: `{"ms":[per round],"check":…}` where `check` is the tool count or the result's text length.
//!
//! `bench-rmcp scale URL PAR [sample|nosample [ORIGINS [WORK]]]` is the contender of the scaling
//! rows, mirroring `bench-sansio-scale` (checks/bench/sansio): one pooled `reqwest::Client` (its
//! defaults: no cap on idle sockets per host) runs one warm-up work item per origin, then `PAR`
//! work items started at once, each its own rmcp session over that client: connect
//! (`server/discover`: rmcp keeps no era per origin), `WORK` (`slow`, the default: call `slow`;
//! `list+slow`: list every page, then call `slow`), close. Over HTTP/1.1 each item in flight holds
//! a socket of its own. With `sample` (the default) it samples its `VmRSS` and open descriptors
//! every 50 ms during the round; with `nosample` it does not, so that its CPU is the items' alone.
//! With `ORIGINS` above one, item `k` goes to `o<k mod ORIGINS>.test` on `URL`'s port, which the
//! client resolves to 127.0.0.1 (`ClientBuilder::resolve`). `PAR` 0 runs the warm-up alone.
//! Prints `{"ms": [latency of each item], "check", "tools", "rss_before_kib", "rss_peak_kib",
//! "fds_before", "fds_peak"}`; a failed item fails the process (exit status 1).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt};

#[derive(Clone)]
struct Job {
    url: String,
    work: String,
    modern: bool,
    shared: Option<reqwest::Client>,
}

async fn work_item(job: &Job) -> usize {
    let transport = match &job.shared {
        Some(client) => StreamableHttpClientTransport::with_client(
            client.clone(),
            StreamableHttpClientTransportConfig::with_uri(job.url.clone()),
        ),
        None => StreamableHttpClientTransport::from_uri(job.url.clone()),
    };
    let lifecycle = if job.modern {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    let client = ().serve_with_lifecycle(transport, lifecycle).await.expect("connect");
    let check = match job.work.as_str() {
        "list" => client.peer().list_all_tools().await.expect("list").len(),
        tool => {
            let args = serde_json::json!({"text": "hello"});
            let result = client
                .peer()
                .call_tool(
                    CallToolRequestParams::new(tool.to_owned())
                        .with_arguments(args.as_object().expect("object").clone()),
                )
                .await
                .expect("call");
            result
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .map(|t| t.text.len())
                .sum()
        }
    };
    client.cancel().await.expect("close");
    check
}

async fn round(job: &Job, n: usize, par: usize) -> usize {
    let mut check = 0;
    let mut done = 0;
    while done < n {
        let batch = par.min(n - done);
        let mut tasks = Vec::with_capacity(batch);
        for _ in 0..batch {
            let job = job.clone();
            tasks.push(tokio::spawn(async move { work_item(&job).await }));
        }
        for t in tasks {
            check = t.await.expect("task");
        }
        done += batch;
    }
    check
}

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

/// One work item of the scaling rows: its latency (ms), the text length returned and the tools
/// listed (0 if it did not list), or why it failed.
async fn scale_item(
    client: reqwest::Client,
    url: String,
    list: bool,
    tool: &str,
) -> Result<(f64, usize, usize), String> {
    let start = Instant::now();
    let transport = StreamableHttpClientTransport::with_client(
        client,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let session =
        ().serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|e| format!("connect: {e}"))?;
    let tools = if list {
        session
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("list: {e}"))?
            .len()
    } else {
        0
    };
    let args = serde_json::json!({"text": "hello"});
    let result = session
        .peer()
        .call_tool(
            CallToolRequestParams::new(tool.to_owned())
                .with_arguments(args.as_object().expect("object").clone()),
        )
        .await
        .map_err(|e| format!("call: {e}"))?;
    if result.is_error == Some(true) {
        return Err("call: an error result".into());
    }
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.len())
        .sum();
    session.cancel().await.map_err(|e| format!("close: {e}"))?;
    Ok((start.elapsed().as_secs_f64() * 1e3, text, tools))
}

/// `bench-rmcp scale …` (see the module docs).
fn scale(a: &[String]) -> std::process::ExitCode {
    use std::process::ExitCode;
    if !(4..=7).contains(&a.len()) || a.get(4).is_some_and(|m| m != "sample" && m != "nosample") {
        eprintln!("usage: bench-rmcp scale URL PAR [sample|nosample [ORIGINS [WORK]]]");
        return ExitCode::from(2);
    }
    let url = a[2].clone();
    let (Ok(par), Ok(origins)) = (
        a[3].parse::<usize>(),
        a.get(5).map_or(Ok(1), |o| o.parse::<usize>()),
    ) else {
        eprintln!("PAR and ORIGINS are numbers");
        return ExitCode::from(2);
    };
    let sample = a.get(4).is_none_or(|m| m == "sample");
    let (list, tool) = match a.get(6).map_or("slow", String::as_str) {
        "slow" => (false, "slow"),
        "list+slow" => (true, "slow"),
        other => {
            eprintln!("WORK is slow or list+slow, not {other:?}");
            return ExitCode::from(2);
        }
    };
    let port: u16 = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or(80);
    let urls: Vec<String> = if origins <= 1 {
        vec![url.clone()]
    } else {
        (0..origins)
            .map(|i| format!("http://o{i}.test:{port}/mcp"))
            .collect()
    };
    let mut builder = reqwest::Client::builder();
    for i in 0..origins {
        builder = builder.resolve(
            &format!("o{i}.test"),
            std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        );
    }
    let client = match builder.build() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("reqwest client: {e}");
            return ExitCode::from(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = rt.block_on(async move {
        let (mut check, mut tools) = (0, 0);
        for url in &urls {
            (_, check, tools) = scale_item(client.clone(), url.clone(), list, "small").await?;
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
                tokio::spawn(async move { scale_item(client, url, list, tool).await })
            })
            .collect();
        let mut ms = Vec::with_capacity(par);
        let mut failure = None;
        for t in tasks {
            match t.await.map_err(|e| format!("task: {e}")).and_then(|r| r) {
                Ok((m, c, n)) => {
                    ms.push(m);
                    check = c;
                    if n != tools {
                        failure = failure
                            .or(Some(format!("list: {n} tools, the warm-up listed {tools}")));
                    }
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
            "tools": tools,
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
            eprintln!("bench-rmcp scale: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> std::process::ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if a.get(1).map(String::as_str) == Some("scale") {
        return scale(&a);
    }
    let url = a[1].clone();
    let work = a[2].clone();
    let n: usize = a[3].parse().expect("N");
    let par: usize = a[4].parse().expect("PAR");
    let reps: usize = a[5].parse().expect("REPS");
    let modern = a.get(6).map(String::as_str) == Some("modern");
    let fresh = a.get(7).map(String::as_str) == Some("fresh");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let shared = (!fresh).then(reqwest::Client::new);
        let job = Job {
            url,
            work,
            modern,
            shared,
        };
        let mut check = round(&job, 1, 1).await;
        let mut ms = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            check = round(&job, n, par).await;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        println!("{}", serde_json::json!({"ms": ms, "check": check}));
    });
    std::process::ExitCode::SUCCESS
}
