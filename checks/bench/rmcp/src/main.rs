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

use std::time::Instant;

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

fn main() {
    let a: Vec<String> = std::env::args().collect();
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
}
