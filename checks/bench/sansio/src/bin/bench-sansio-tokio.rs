//! Contender: this crate through the tokio adapter. `bench-sansio-tokio URL WORK N PAR REPS ERA
//! [fresh]` (see `bench_sansio::Args`). One `Client` (pool and era-hint cache) serves every work
//! item, or with `fresh` each work item builds its own; each work item is its own `Session`:
//! connect, list or call, close.

use std::time::Instant;

use bench_sansio::{report, text_len, Args};
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_tokio::Client;

fn new_client(args: &Args) -> Client {
    Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .era_hints(args.hints())
        .catalog_cache(args.cache())
        .build()
}

async fn work_item(client: &Client, args: &Args) -> usize {
    // Unpooled: a `Client` of the work item's own, dropped with it.
    let own = args.fresh.then(|| new_client(args));
    let client = own.as_ref().unwrap_or(client);
    let mut session = client.connect(args.config()).await.expect("connect");
    let check = match args.work.as_str() {
        "list" => session.list_tools().await.expect("list").tools.len(),
        tool => text_len(
            &session
                .call_tool(tool, Args::ARGUMENTS)
                .await
                .expect("call"),
        ),
    };
    session.close().await.expect("close");
    check
}

async fn round(client: &Client, args: &Args) -> usize {
    let mut check = 0;
    let mut done = 0;
    while done < args.n {
        let batch = args.par.min(args.n - done);
        if batch == 1 {
            check = work_item(client, args).await;
        } else {
            let tasks: Vec<_> = (0..batch)
                .map(|_| {
                    let (client, args) = (client.clone(), args.clone());
                    tokio::spawn(async move { work_item(&client, &args).await })
                })
                .collect();
            for t in tasks {
                check = t.await.expect("task");
            }
        }
        done += batch;
    }
    check
}

fn main() {
    let args = Args::from_env();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let client = new_client(&args);
        let mut check = work_item(&client, &args).await;
        let mut ms = Vec::with_capacity(args.reps);
        for _ in 0..args.reps {
            let start = Instant::now();
            check = round(&client, &args).await;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        report(&ms, check);
    });
}
