//! Contender of the HTTP/2 vs HTTP/1.1 benchmark: this crate through the tokio adapter, over TLS.
//!
//! `bench-sansio-h2 URL CA_PEM PROTOCOL N REPS`: one `Client` that trusts the certificate
//! authority in `CA_PEM` (HTTP/2 where the server's ALPN chooses it when `PROTOCOL` is `h2`,
//! `http1_only` when it is `http1`) runs one warm-up work item, then `REPS` timed rounds of `N`
//! work items started at once. A work item is its own `Session`: connect (era hint, learnt on the
//! warm-up item), call `small`, close. Every session must run over the HTTP version asked for
//! and every call must echo the text it sent; otherwise the process fails (exit status 1).
//!
//! Prints `{"ms": [per-round milliseconds], "check": text length echoed, "http_version": "..."}`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use bench_sansio::{report_with, text_len, Args};
use mcp_sansio::Config;
use mcp_sansio_net::AddressPolicy;
use mcp_sansio_tokio::{read_ca_certificates, Client};

/// What one work item came to: the length of the text echoed, or why it failed.
async fn work_item(client: &Client, url: &str, expected: &'static str) -> Result<usize, String> {
    let config = Config::new(url).map_err(|e| format!("config: {e}"))?;
    let mut session = client
        .connect(config)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    if session.http_version() != expected {
        return Err(format!(
            "the session runs over {}, not {expected}",
            session.http_version()
        ));
    }
    let result = session
        .call_tool("small", Args::ARGUMENTS)
        .await
        .map_err(|e| format!("call: {e}"))?;
    let check = text_len(&result);
    if result.is_error || check != EXPECTED_TEXT.len() {
        return Err(format!(
            "call: unexpected result (error {}, {check} bytes of text)",
            result.is_error
        ));
    }
    if session.http_version() != expected {
        return Err(format!(
            "the call ran over {}, not {expected}",
            session.http_version()
        ));
    }
    session.close().await.map_err(|e| format!("close: {e}"))?;
    Ok(check)
}

/// The text [`Args::ARGUMENTS`] asks `small` to echo.
const EXPECTED_TEXT: &str = "hello";

/// `n` work items started at once; the first failure, if any.
async fn round(
    client: &Client,
    url: &str,
    expected: &'static str,
    n: usize,
) -> Result<usize, String> {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (client, url) = (client.clone(), url.to_owned());
            tokio::spawn(async move { work_item(&client, &url, expected).await })
        })
        .collect();
    let mut check = Ok(0);
    for t in tasks {
        let r = t.await.map_err(|e| format!("task: {e}")).and_then(|r| r);
        if check.is_ok() {
            check = r;
        }
    }
    check
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("usage: bench-sansio-h2 URL CA_PEM h2|http1 N REPS");
        return ExitCode::from(2);
    }
    let (url, ca, protocol) = (a[1].clone(), a[2].clone(), a[3].as_str());
    let (http1, expected) = match protocol {
        "h2" => (false, "HTTP/2"),
        "http1" => (true, "HTTP/1.1"),
        other => {
            eprintln!("PROTOCOL is h2 or http1, not {other:?}");
            return ExitCode::from(2);
        }
    };
    let (Ok(n), Ok(reps)) = (a[4].parse::<usize>(), a[5].parse::<usize>()) else {
        eprintln!("N and REPS are numbers");
        return ExitCode::from(2);
    };
    let roots = match read_ca_certificates(Path::new(&ca)) {
        Ok(roots) => roots,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = rt.block_on(async move {
        let client = Client::builder()
            .policy(AddressPolicy::strict().allow_loopback(true))
            .add_root_certificates(roots)
            .http1_only(http1)
            .build();
        let mut check = work_item(&client, &url, expected).await?;
        let mut ms = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            check = round(&client, &url, expected, n.max(1)).await?;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok::<_, String>((ms, check))
    });
    match outcome {
        Ok((ms, check)) => {
            report_with(&ms, check, &[("http_version", expected)]);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-sansio-h2 ({expected}): {e}");
            ExitCode::from(1)
        }
    }
}
