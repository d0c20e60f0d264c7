//! Memory per idle connection: `idle-conns URL COUNT` opens `COUNT` sessions at once through one
//! tokio `Client` (each connects and calls the `slow` tool, which answers after 3 s, so all are in
//! flight together and each has its own socket),
//! keeps every session alive and every socket idle in the pool, then prints the process's resident
//! memory before and after as JSON. Run it with `ulimit -n` above `COUNT`.

use std::time::{Duration, Instant};

use bench_sansio::{text_len, Args};
use mcp_sansio_net::{AddressPolicy, PoolLimits};
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

/// The bench server's count of open connections (`GET /stats` next to the endpoint).
fn server_open(url: &str) -> Option<u64> {
    use std::io::{Read, Write};
    let addr = url.trim_start_matches("http://").split('/').next()?;
    let mut sock = std::net::TcpStream::connect(addr).ok()?;
    sock.write_all(b"GET /stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    sock.read_to_string(&mut text).ok()?;
    let body = &text[text.find("\r\n\r\n")? + 4..];
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v["open"].as_u64()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let url = a[1].clone();
    let count: usize = a[2].parse().expect("COUNT");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let client = Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .pool_limits(PoolLimits {
                idle_timeout: Duration::from_secs(600),
                max_idle_per_origin: count,
                max_idle: count,
            })
            .build();
        let config = mcp_sansio::Config::new(&url).expect("endpoint");
        // Warm up: runtime, era hint for the origin, first allocations.
        let mut s = client.connect(config.clone()).await.expect("connect");
        s.call_tool("small", Args::ARGUMENTS).await.expect("call");
        s.close().await.expect("close");
        let before = rss_kib();
        let start = Instant::now();
        let tasks: Vec<_> = (0..count)
            .map(|_| {
                let (client, config) = (client.clone(), config.clone());
                tokio::spawn(async move {
                    let mut s = client.connect(config).await.expect("connect");
                    let r = s.call_tool("slow", Args::ARGUMENTS).await.expect("call");
                    (s, text_len(&r))
                })
            })
            .collect();
        let mut sessions = Vec::with_capacity(count);
        for t in tasks {
            let (s, n) = t.await.expect("task");
            assert_eq!(n, 4);
            sessions.push(s);
        }
        let opened_ms = start.elapsed().as_millis();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = rss_kib();
        let idle = client.idle_sockets();
        let server_open = server_open(&url);
        println!(
            "{}",
            serde_json::json!({
                "count": sessions.len(),
                "rss_before_kib": before,
                "rss_after_kib": after,
                "bytes_per_connection": (after.saturating_sub(before) * 1024) as f64 / count as f64,
                "open_ms": opened_ms,
                "idle_sockets": idle,
                "server_open": server_open,
            })
        );
        drop(sessions);
    });
}
