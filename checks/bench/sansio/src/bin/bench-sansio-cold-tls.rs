//! Contender of the cold-TLS benchmark: a cold work item over TLS through the tokio adapter, its
//! handshake resumed or full.
//!
//! `bench-sansio-cold-tls URL CA_PEM resumed|full N`: one `Client` trusting the certificate
//! authority in `CA_PEM`, HTTP/1.1 only, that keeps no idle socket (`PoolLimits::max_idle` 0),
//! so that every request dials: TCP connect, TLS handshake, request, close. It runs one warm-up
//! work item (which learns the era and, with `resumed`, the origin's TLS session), then `N` timed
//! work items one after another. A work item is its own `Session`: connect (era hint, so no
//! request), call `small`, close: one dial each.
//!
//! - `resumed`: the client's own configuration ([`ClientBuilder::add_root_certificates`]), which
//!   keeps the origin's TLS session: every timed item's handshake resumes it;
//! - `full`: the same roots in a configuration given whole with resumption off
//!   (`Resumption::disabled`): every timed item makes a full handshake.
//!
//! The runtime is tokio's current-thread one, so that an instruction count of the process
//! (callgrind) is the same from run to run. Every call must echo the text it sent; otherwise the
//! process fails (exit status 1).
//!
//! Prints `{"ms": [milliseconds of each timed work item], "check": text length echoed,
//! "handshake": "resumed"|"full"}`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use bench_sansio::{report_with, text_len, Args};
use mcp_sansio::Config;
use mcp_sansio_net::{client_config_with_extra_roots, AddressPolicy, PoolLimits};
use mcp_sansio_tokio::{read_ca_certificates, Client};

/// The text [`Args::ARGUMENTS`] asks `small` to echo.
const EXPECTED_TEXT: &str = "hello";

/// One cold work item: the length of the text echoed, or why it failed.
async fn work_item(client: &Client, url: &str) -> Result<usize, String> {
    let config = Config::new(url).map_err(|e| format!("config: {e}"))?;
    let mut session = client
        .connect(config)
        .await
        .map_err(|e| format!("connect: {e}"))?;
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
    session.close().await.map_err(|e| format!("close: {e}"))?;
    Ok(check)
}

fn main() -> ExitCode {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: bench-sansio-cold-tls URL CA_PEM resumed|full N");
        return ExitCode::from(2);
    }
    let (url, ca, mode) = (a[1].clone(), a[2].clone(), a[3].clone());
    if mode != "resumed" && mode != "full" {
        eprintln!("the handshake is resumed or full, not {mode:?}");
        return ExitCode::from(2);
    }
    let Ok(n) = a[4].parse::<usize>() else {
        eprintln!("N is a number");
        return ExitCode::from(2);
    };
    let roots = match read_ca_certificates(Path::new(&ca)) {
        Ok(roots) => roots,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let mut builder = Client::builder()
        .policy(AddressPolicy::strict().allow_loopback(true))
        .http1_only(true)
        .pool_limits(PoolLimits {
            max_idle: 0,
            max_idle_per_origin: 0,
            ..PoolLimits::default()
        });
    builder = if mode == "resumed" {
        builder.add_root_certificates(roots)
    } else {
        let mut config = rustls::ClientConfig::clone(&client_config_with_extra_roots(&roots));
        config.resumption = rustls::client::Resumption::disabled();
        builder.tls_config(Arc::new(config))
    };
    let client = builder.build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = rt.block_on(async move {
        let mut check = work_item(&client, &url).await?;
        let mut ms = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            check = work_item(&client, &url).await?;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        Ok::<_, String>((ms, check))
    });
    match outcome {
        Ok((ms, check)) => {
            report_with(&ms, check, &[("handshake", &mode)]);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-sansio-cold-tls ({mode}): {e}");
            ExitCode::from(1)
        }
    }
}
