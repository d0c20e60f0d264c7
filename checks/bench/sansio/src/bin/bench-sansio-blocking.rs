//! Contender: this crate through the blocking adapter. `bench-sansio-blocking URL WORK N PAR REPS
//! ERA` (see `bench_sansio::Args`). One `Client` serves every work item; concurrent work items
//! run on `PAR` scoped threads.

use std::time::Instant;

use bench_sansio::{report, text_len, Args};
use mcp_sansio_blocking::Client;
use mcp_sansio_net::AddressPolicy;

fn work_item(client: &Client, args: &Args) -> usize {
    let mut session = client.connect(args.config()).expect("connect");
    let check = match args.work.as_str() {
        "list" => session.list_tools().expect("list").tools.len(),
        tool => text_len(&session.call_tool(tool, Args::ARGUMENTS).expect("call")),
    };
    session.close().expect("close");
    check
}

fn round(client: &Client, args: &Args) -> usize {
    let mut check = 0;
    let mut done = 0;
    while done < args.n {
        let batch = args.par.min(args.n - done);
        if batch == 1 {
            check = work_item(client, args);
        } else {
            check = std::thread::scope(|s| {
                let handles: Vec<_> = (0..batch)
                    .map(|_| s.spawn(|| work_item(client, args)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("thread"))
                    .last()
                    .unwrap_or(0)
            });
        }
        done += batch;
    }
    check
}

fn main() {
    let args = Args::from_env();
    let client = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .era_hints(args.hints())
        .catalog_cache(args.cache())
        .build();
    let mut check = work_item(&client, &args);
    let mut ms = Vec::with_capacity(args.reps);
    for _ in 0..args.reps {
        let start = Instant::now();
        check = round(&client, &args);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    report(&ms, check);
}
