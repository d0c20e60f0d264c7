//! Every server configuration, in the era it is forced to, through both adapters. Each test
//! starts its own server on a free 127.0.0.1 port, runs the scenario through mcp-sansio-tokio
//! and then mcp-sansio-blocking against it, and stops it (also when the test fails).

use std::time::Duration;

use mcp_sansio::Era::{Legacy, Modern};
use mcp_sansio_interop::Peer::{FastMcp, PyMcp, TsV1, TsV2};
use mcp_sansio_interop::Stream::{Json, Sse};
use mcp_sansio_interop::{
    check, run_blocking, run_tokio, run_tokio_h2c, run_tokio_tls, Server, Target,
};

/// The longest a whole scenario may take through the async adapter (the blocking one is bounded
/// by the core's time budgets).
const SCENARIO_TIME: Duration = Duration::from_secs(180);

/// A target whose era is forced: the other era's versions are not offered.
const fn target(
    peer: mcp_sansio_interop::Peer,
    args: &'static [&'static str],
    era: mcp_sansio::Era,
    stream: mcp_sansio_interop::Stream,
    stateful: bool,
) -> Target {
    Target {
        peer,
        args,
        era,
        stream,
        stateful,
        negotiated: false,
        legacy_version: None,
    }
}

/// A legacy target that offers only the older revision `version`.
const fn older(
    peer: mcp_sansio_interop::Peer,
    args: &'static [&'static str],
    version: &'static str,
    stateful: bool,
) -> Target {
    Target {
        legacy_version: Some(version),
        ..target(peer, args, Legacy, Sse, stateful)
    }
}

/// A target offered both eras, where negotiation must find `era`.
const fn negotiated(
    peer: mcp_sansio_interop::Peer,
    args: &'static [&'static str],
    era: mcp_sansio::Era,
    stream: mcp_sansio_interop::Stream,
    stateful: bool,
) -> Target {
    Target {
        negotiated: true,
        ..target(peer, args, era, stream, stateful)
    }
}

macro_rules! interop {
    ($($name:ident => $target:expr;)*) => {
        $(
            #[test]
            fn $name() {
                both_adapters($target);
            }
        )*
    };
}

/// Starts `t`'s server (served by hypercorn: `--h2c` in its arguments), runs the scenario
/// through the tokio adapter speaking HTTP/2 with prior knowledge, checks that HTTP/2 was
/// spoken and what the scenario observed.
fn over_h2c(t: Target) {
    let mut server = t.start();
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let observed = rt
        .block_on(async { tokio::time::timeout(SCENARIO_TIME, run_tokio_h2c(&t, &url)).await })
        .unwrap_or_else(|_| panic!("{}: h2c scenario exceeded {SCENARIO_TIME:?}", t.label()));
    assert!(
        server.is_running(),
        "{}: server exited during the scenario\n{}",
        t.label(),
        server.log_text()
    );
    let log = server.log_text();
    drop(server);
    assert_eq!(observed.http_version, "HTTP/2", "{}\n{log}", t.label());
    if let Err(p) = std::panic::catch_unwind(|| check(&t, &observed)) {
        panic!(
            "{}:\n{}\n--- server log ---\n{log}",
            t.label(),
            panic_text(&*p)
        );
    }
}

/// A new certificate authority and a certificate it issued for 127.0.0.1, written as PEM files
/// under `dir`: (CA certificate, server certificate, server key).
fn test_ca(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "mcp-sansio interop CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let paths = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, leaf.pem()).unwrap();
    std::fs::write(&paths.2, leaf_key.serialize_pem()).unwrap();
    paths
}

/// Starts `t`'s server over TLS with a certificate made now (ALPN `h2`, `http/1.1`): a Python
/// server under hypercorn, a TypeScript server behind nghttpx; runs the scenario through the tokio adapter trusting the test CA, and checks
/// that ALPN chose HTTP/2 and what the scenario observed.
fn over_tls_h2(t: Target, name: &str) {
    let dir = mcp_sansio_interop::server::install_dir()
        .join("tls")
        .join(format!("{name}-{}", std::process::id()));
    let (ca, cert, key) = test_ca(&dir);
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    // The Python servers serve TLS under hypercorn; nghttpx fronts the TypeScript ones.
    let args: Vec<&str> = match t.peer {
        TsV1 | TsV2 => ["--nghttpx", cert, key]
            .into_iter()
            .chain(t.args.iter().copied())
            .collect(),
        PyMcp | FastMcp => t
            .args
            .iter()
            .copied()
            .chain(["--tls-cert", cert, "--tls-key", key])
            .collect(),
    };
    let mut server = Server::start_tls(t.peer, &args);
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let observed = rt
        .block_on(async { tokio::time::timeout(SCENARIO_TIME, run_tokio_tls(&t, &url, &ca)).await })
        .unwrap_or_else(|_| panic!("{}: TLS scenario exceeded {SCENARIO_TIME:?}", t.label()));
    assert!(
        server.is_running(),
        "{}: server exited during the scenario\n{}",
        t.label(),
        server.log_text()
    );
    let log = server.log_text();
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        observed.http_version,
        "HTTP/2",
        "{} over TLS\n{log}",
        t.label()
    );
    if let Err(p) = std::panic::catch_unwind(|| check(&t, &observed)) {
        panic!(
            "{} over TLS:\n{}\n--- server log ---\n{log}",
            t.label(),
            panic_text(&*p)
        );
    }
}

macro_rules! interop_tls_h2 {
    ($($name:ident => $target:expr;)*) => {
        $(
            #[test]
            fn $name() {
                over_tls_h2($target, stringify!($name));
            }
        )*
    };
}

interop_tls_h2! {
    py_mcp_modern_sse_over_tls_h2 => target(PyMcp, &[], Modern, Sse, true);
    py_mcp_legacy_stateful_over_tls_h2 => target(PyMcp, &[], Legacy, Sse, true);
    fastmcp_modern_sse_over_tls_h2 => target(FastMcp, &[], Modern, Sse, true);
    fastmcp_legacy_stateful_over_tls_h2 => target(FastMcp, &[], Legacy, Sse, true);
    ts_v2_modern_sse_behind_nghttpx => target(TsV2, &["--response", "sse"], Modern, Sse, false);
    ts_v2_legacy_stateful_sse_behind_nghttpx => target(TsV2, &["--legacy", "stateful"], Legacy, Sse, true);
    ts_v1_stateful_sse_behind_nghttpx => target(TsV1, &["--mode", "stateful", "--response", "sse"], Legacy, Sse, true);
    ts_v1_stateless_json_behind_nghttpx => target(TsV1, &["--mode", "stateless", "--response", "json"], Legacy, Json, false);
}

macro_rules! interop_h2c {
    ($($name:ident => $target:expr;)*) => {
        $(
            #[test]
            fn $name() {
                over_h2c($target);
            }
        )*
    };
}

interop_h2c! {
    py_mcp_modern_sse_over_h2c => target(PyMcp, &["--h2c"], Modern, Sse, true);
    py_mcp_legacy_stateful_over_h2c => target(PyMcp, &["--h2c"], Legacy, Sse, true);
    fastmcp_modern_sse_over_h2c => target(FastMcp, &["--h2c"], Modern, Sse, true);
    fastmcp_legacy_stateful_over_h2c => target(FastMcp, &["--h2c"], Legacy, Sse, true);
}

/// Starts `t`'s server, runs the scenario through the tokio adapter and then through the
/// blocking one, stops the server, and checks both observations (reporting every adapter that
/// fails, not only the first).
fn both_adapters(t: Target) {
    let mut server = t.start();
    let url = server.url();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let via_tokio = rt
        .block_on(async { tokio::time::timeout(SCENARIO_TIME, run_tokio(&t, &url)).await })
        .unwrap_or_else(|_| panic!("{}: tokio scenario exceeded {SCENARIO_TIME:?}", t.label()));
    let via_blocking = run_blocking(&t, &url);
    assert!(
        server.is_running(),
        "{}: server exited during the scenario\n{}",
        t.label(),
        server.log_text()
    );
    let log = server.log_text();
    drop(server);
    let failures: Vec<String> = [via_tokio, via_blocking]
        .iter()
        .filter_map(|o| {
            std::panic::catch_unwind(|| check(&t, o))
                .err()
                .map(|p| panic_text(&*p))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{}:\n{}\n--- server log ---\n{log}",
        t.label(),
        failures.join("\n")
    );
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a check panicked".to_owned())
}

interop! {
    // TypeScript SDK v2: 2026-07-28 in each response mode, and the 2025 fallbacks.
    ts_v2_modern_auto => target(TsV2, &["--response", "auto"], Modern, Sse, false);
    ts_v2_modern_sse => target(TsV2, &["--response", "sse"], Modern, Sse, false);
    ts_v2_modern_json => target(TsV2, &["--response", "json"], Modern, Json, false);
    ts_v2_legacy_stateless => target(TsV2, &["--legacy", "stateless"], Legacy, Sse, false);
    ts_v2_legacy_stateful_sse => target(TsV2, &["--legacy", "stateful"], Legacy, Sse, true);
    ts_v2_legacy_stateful_json => target(TsV2, &["--legacy", "stateful", "--legacy-response", "json"], Legacy, Json, true);
    ts_v2_modern_only => target(TsV2, &["--legacy", "reject"], Modern, Sse, false);
    // TypeScript SDK v1: 2025 only, stateful and stateless, and resumable SSE (event ids and
    // `retry:` on every stream).
    ts_v1_stateful_sse => target(TsV1, &["--mode", "stateful", "--response", "sse"], Legacy, Sse, true);
    ts_v1_stateful_json => target(TsV1, &["--mode", "stateful", "--response", "json"], Legacy, Json, true);
    ts_v1_stateless_sse => target(TsV1, &["--mode", "stateless", "--response", "sse"], Legacy, Sse, false);
    ts_v1_stateless_json => target(TsV1, &["--mode", "stateless", "--response", "json"], Legacy, Json, false);
    ts_v1_stateful_sse_resumable => target(TsV1, &["--mode", "stateful", "--event-store", "--retry-ms", "500"], Legacy, Sse, true);
    // Python mcp: both eras, SSE and JSON, stateful and stateless.
    py_mcp_modern_sse => target(PyMcp, &[], Modern, Sse, true);
    py_mcp_modern_json => target(PyMcp, &["--json"], Modern, Json, true);
    py_mcp_modern_stateless_sse => target(PyMcp, &["--stateless"], Modern, Sse, false);
    py_mcp_modern_stateless_json => target(PyMcp, &["--stateless", "--json"], Modern, Json, false);
    py_mcp_legacy_sse => target(PyMcp, &[], Legacy, Sse, true);
    py_mcp_legacy_json => target(PyMcp, &["--json"], Legacy, Json, true);
    py_mcp_legacy_stateless_sse => target(PyMcp, &["--stateless"], Legacy, Sse, false);
    py_mcp_legacy_stateless_json => target(PyMcp, &["--stateless", "--json"], Legacy, Json, false);
    // fastmcp: the same matrix.
    fastmcp_modern_sse => target(FastMcp, &[], Modern, Sse, true);
    fastmcp_modern_json => target(FastMcp, &["--json"], Modern, Json, true);
    fastmcp_modern_stateless_sse => target(FastMcp, &["--stateless"], Modern, Sse, false);
    fastmcp_modern_stateless_json => target(FastMcp, &["--stateless", "--json"], Modern, Json, false);
    fastmcp_legacy_sse => target(FastMcp, &[], Legacy, Sse, true);
    fastmcp_legacy_json => target(FastMcp, &["--json"], Legacy, Json, true);
    fastmcp_legacy_stateless_sse => target(FastMcp, &["--stateless"], Legacy, Sse, false);
    fastmcp_legacy_stateless_json => target(FastMcp, &["--stateless", "--json"], Legacy, Json, false);
    // Older 2025 revisions, offered alone.
    ts_v1_2025_03_26 => older(TsV1, &["--mode", "stateful"], "2025-03-26", true);
    ts_v2_2025_06_18 => older(TsV2, &["--legacy", "stateful"], "2025-06-18", true);
    py_mcp_2024_11_05 => older(PyMcp, &[], "2024-11-05", true);
    // Both eras offered: negotiation finds the newest era each server speaks.
    negotiate_ts_v1 => negotiated(TsV1, &["--mode", "stateful"], Legacy, Sse, true);
    negotiate_ts_v2 => negotiated(TsV2, &["--legacy", "stateful"], Modern, Sse, true);
    negotiate_ts_v2_modern_only => negotiated(TsV2, &["--legacy", "reject"], Modern, Sse, false);
    negotiate_py_mcp => negotiated(PyMcp, &[], Modern, Sse, true);
    negotiate_fastmcp => negotiated(FastMcp, &["--json"], Modern, Json, true);
}
