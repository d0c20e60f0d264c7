//! Every server configuration, in the era it is forced to, over HTTP/1.1 through both adapters
//! and over HTTP/2 through the adapters of [`H2_ADAPTERS`]. Each test starts its own server on a
//! free 127.0.0.1 port, runs the scenario through each adapter against it, and stops it (also
//! when the test fails).
//!
//! One table ([`interop!`]) lists every configuration once with the names of its two tests: the
//! HTTP/1.1 one and its HTTP/2 counterpart over TLS with ALPN `h2` (`…_over_tls_h2`: a Python
//! server under hypercorn; `…_behind_nghttpx`: a TypeScript server behind nghttpx).

use std::time::Duration;

use mcp_sansio::Era::{Legacy, Modern};
use mcp_sansio_interop::Peer::{FastMcp, FastMcpTasks, PyMcp, TsV1, TsV2};
use mcp_sansio_interop::Stream::{Json, Sse};
use mcp_sansio_interop::{check, Adapter, Observed, Server, Target, Wire};

/// The longest a whole scenario may take through the async adapter (the blocking one is bounded
/// by the core's time budgets).
const SCENARIO_TIME: Duration = Duration::from_secs(180);

/// The adapters every HTTP/1.1 run goes through, in order.
const HTTP1_ADAPTERS: &[Adapter] = &[Adapter::Tokio, Adapter::Blocking];

/// The adapters every HTTP/2 run (TLS with ALPN `h2`, and h2c) goes through, in order.
const H2_ADAPTERS: &[Adapter] = &[Adapter::Tokio, Adapter::Blocking];

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

/// Runs the scenario through each of `adapters` against the started `server` over `wire`, stops
/// the server, and checks each observation: the HTTP version `http_version`, then every fact of
/// [`check`] (reporting every adapter that fails, not only the first, with the server's log).
fn run_checked(
    t: &Target,
    mut server: Server,
    adapters: &[Adapter],
    wire: Wire<'_>,
    http_version: &str,
) {
    assert!(!adapters.is_empty(), "{}: no adapter to run", t.label());
    let url = server.url();
    // A run that panics (no session, a timeout) is reported with the server's log too.
    let observed: Vec<Result<Observed, String>> = adapters
        .iter()
        .map(|a| {
            std::panic::catch_unwind(|| a.run(t, &url, wire, SCENARIO_TIME))
                .map_err(|p| panic_text(&*p))
        })
        .collect();
    assert!(
        server.is_running(),
        "{}: server exited during the scenario\n{}",
        t.label(),
        server.log_text()
    );
    let log = server.log_text();
    drop(server);
    let failures: Vec<String> = observed
        .iter()
        .filter_map(|o| {
            let o = match o {
                Ok(o) => o,
                Err(failed) => return Some(failed.clone()),
            };
            std::panic::catch_unwind(|| {
                assert_eq!(
                    o.http_version,
                    http_version,
                    "{} via {}: HTTP version",
                    t.label(),
                    o.adapter
                );
                check(t, o);
            })
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

/// Starts `t`'s server in clear text and runs the scenario through [`HTTP1_ADAPTERS`] over
/// HTTP/1.1.
fn over_http1(t: Target) {
    run_checked(&t, t.start(), HTTP1_ADAPTERS, Wire::Plain, "HTTP/1.1");
}

/// Starts `t`'s server (served by hypercorn: `--h2c` in its arguments) and runs the scenario
/// through [`H2_ADAPTERS`] speaking HTTP/2 with prior knowledge.
fn over_h2c(t: Target) {
    run_checked(&t, t.start(), H2_ADAPTERS, Wire::H2c, "HTTP/2");
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
/// server under hypercorn (a test named `…_over_tls_h2`), a TypeScript server behind nghttpx
/// (`…_behind_nghttpx`); runs the scenario through [`H2_ADAPTERS`] trusting the test CA, and
/// checks that ALPN chose HTTP/2 and what the scenario observed.
fn over_tls_h2(t: Target, name: &str) {
    let suffix = match t.peer {
        TsV1 | TsV2 => "_behind_nghttpx",
        PyMcp | FastMcp | FastMcpTasks => "_over_tls_h2",
    };
    assert!(
        name.ends_with(suffix),
        "{name}: the HTTP/2 test of {} must end in {suffix}",
        t.label()
    );
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
        PyMcp | FastMcp | FastMcpTasks => t
            .args
            .iter()
            .copied()
            .chain(["--tls-cert", cert, "--tls-key", key])
            .collect(),
    };
    let server = Server::start_tls(t.peer, &args);
    // The directory goes also when the run fails.
    struct RemoveOnDrop<'a>(&'a std::path::Path);
    impl Drop for RemoveOnDrop<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    let _cleanup = RemoveOnDrop(&dir);
    run_checked(&t, server, H2_ADAPTERS, Wire::Tls(&ca), "HTTP/2");
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a check panicked".to_owned())
}

/// The table of configurations: `http1_test, http2_test => target;` makes two tests of one
/// target, the first over HTTP/1.1 through [`HTTP1_ADAPTERS`] ([`over_http1`]), the second over
/// TLS with ALPN `h2` through [`H2_ADAPTERS`] ([`over_tls_h2`]).
macro_rules! interop {
    ($($http1:ident, $http2:ident => $target:expr;)*) => {
        $(
            #[test]
            fn $http1() {
                over_http1($target);
            }

            #[test]
            fn $http2() {
                over_tls_h2($target, stringify!($http2));
            }
        )*
    };
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

// h2c (HTTP/2 with prior knowledge in clear text) under hypercorn, besides TLS.
interop_h2c! {
    py_mcp_modern_sse_over_h2c => target(PyMcp, &["--h2c"], Modern, Sse, true);
    py_mcp_legacy_stateful_over_h2c => target(PyMcp, &["--h2c"], Legacy, Sse, true);
    fastmcp_modern_sse_over_h2c => target(FastMcp, &["--h2c"], Modern, Sse, true);
    fastmcp_legacy_stateful_over_h2c => target(FastMcp, &["--h2c"], Legacy, Sse, true);
}

interop! {
    // TypeScript SDK v2: 2026-07-28 in each response mode, and the 2025 fallbacks.
    ts_v2_modern_auto, ts_v2_modern_auto_behind_nghttpx => target(TsV2, &["--response", "auto"], Modern, Sse, false);
    ts_v2_modern_sse, ts_v2_modern_sse_behind_nghttpx => target(TsV2, &["--response", "sse"], Modern, Sse, false);
    ts_v2_modern_json, ts_v2_modern_json_behind_nghttpx => target(TsV2, &["--response", "json"], Modern, Json, false);
    ts_v2_legacy_stateless, ts_v2_legacy_stateless_behind_nghttpx => target(TsV2, &["--legacy", "stateless"], Legacy, Sse, false);
    ts_v2_legacy_stateful_sse, ts_v2_legacy_stateful_sse_behind_nghttpx => target(TsV2, &["--legacy", "stateful"], Legacy, Sse, true);
    ts_v2_legacy_stateful_json, ts_v2_legacy_stateful_json_behind_nghttpx => target(TsV2, &["--legacy", "stateful", "--legacy-response", "json"], Legacy, Json, true);
    ts_v2_modern_only, ts_v2_modern_only_behind_nghttpx => target(TsV2, &["--legacy", "reject"], Modern, Sse, false);
    // TypeScript SDK v1: 2025 only, stateful and stateless, and resumable SSE (event ids and
    // `retry:` on every stream).
    ts_v1_stateful_sse, ts_v1_stateful_sse_behind_nghttpx => target(TsV1, &["--mode", "stateful", "--response", "sse"], Legacy, Sse, true);
    ts_v1_stateful_json, ts_v1_stateful_json_behind_nghttpx => target(TsV1, &["--mode", "stateful", "--response", "json"], Legacy, Json, true);
    ts_v1_stateless_sse, ts_v1_stateless_sse_behind_nghttpx => target(TsV1, &["--mode", "stateless", "--response", "sse"], Legacy, Sse, false);
    ts_v1_stateless_json, ts_v1_stateless_json_behind_nghttpx => target(TsV1, &["--mode", "stateless", "--response", "json"], Legacy, Json, false);
    ts_v1_stateful_sse_resumable, ts_v1_stateful_sse_resumable_behind_nghttpx => target(TsV1, &["--mode", "stateful", "--event-store", "--retry-ms", "500"], Legacy, Sse, true);
    // Python mcp: both eras, SSE and JSON, stateful and stateless.
    py_mcp_modern_sse, py_mcp_modern_sse_over_tls_h2 => target(PyMcp, &[], Modern, Sse, true);
    py_mcp_modern_json, py_mcp_modern_json_over_tls_h2 => target(PyMcp, &["--json"], Modern, Json, true);
    py_mcp_modern_stateless_sse, py_mcp_modern_stateless_sse_over_tls_h2 => target(PyMcp, &["--stateless"], Modern, Sse, false);
    py_mcp_modern_stateless_json, py_mcp_modern_stateless_json_over_tls_h2 => target(PyMcp, &["--stateless", "--json"], Modern, Json, false);
    py_mcp_legacy_sse, py_mcp_legacy_sse_over_tls_h2 => target(PyMcp, &[], Legacy, Sse, true);
    py_mcp_legacy_json, py_mcp_legacy_json_over_tls_h2 => target(PyMcp, &["--json"], Legacy, Json, true);
    py_mcp_legacy_stateless_sse, py_mcp_legacy_stateless_sse_over_tls_h2 => target(PyMcp, &["--stateless"], Legacy, Sse, false);
    py_mcp_legacy_stateless_json, py_mcp_legacy_stateless_json_over_tls_h2 => target(PyMcp, &["--stateless", "--json"], Legacy, Json, false);
    // fastmcp: the same matrix.
    fastmcp_modern_sse, fastmcp_modern_sse_over_tls_h2 => target(FastMcp, &[], Modern, Sse, true);
    fastmcp_modern_json, fastmcp_modern_json_over_tls_h2 => target(FastMcp, &["--json"], Modern, Json, true);
    fastmcp_modern_stateless_sse, fastmcp_modern_stateless_sse_over_tls_h2 => target(FastMcp, &["--stateless"], Modern, Sse, false);
    fastmcp_modern_stateless_json, fastmcp_modern_stateless_json_over_tls_h2 => target(FastMcp, &["--stateless", "--json"], Modern, Json, false);
    fastmcp_legacy_sse, fastmcp_legacy_sse_over_tls_h2 => target(FastMcp, &[], Legacy, Sse, true);
    fastmcp_legacy_json, fastmcp_legacy_json_over_tls_h2 => target(FastMcp, &["--json"], Legacy, Json, true);
    fastmcp_legacy_stateless_sse, fastmcp_legacy_stateless_sse_over_tls_h2 => target(FastMcp, &["--stateless"], Legacy, Sse, false);
    fastmcp_legacy_stateless_json, fastmcp_legacy_stateless_json_over_tls_h2 => target(FastMcp, &["--stateless", "--json"], Legacy, Json, false);
    // Older 2025 revisions, offered alone.
    ts_v1_2025_03_26, ts_v1_2025_03_26_behind_nghttpx => older(TsV1, &["--mode", "stateful"], "2025-03-26", true);
    ts_v2_2025_06_18, ts_v2_2025_06_18_behind_nghttpx => older(TsV2, &["--legacy", "stateful"], "2025-06-18", true);
    py_mcp_2024_11_05, py_mcp_2024_11_05_over_tls_h2 => older(PyMcp, &[], "2024-11-05", true);
    // Both eras offered: negotiation finds the newest era each server speaks.
    negotiate_ts_v1, negotiate_ts_v1_behind_nghttpx => negotiated(TsV1, &["--mode", "stateful"], Legacy, Sse, true);
    negotiate_ts_v2, negotiate_ts_v2_behind_nghttpx => negotiated(TsV2, &["--legacy", "stateful"], Modern, Sse, true);
    negotiate_ts_v2_modern_only, negotiate_ts_v2_modern_only_behind_nghttpx => negotiated(TsV2, &["--legacy", "reject"], Modern, Sse, false);
    negotiate_py_mcp, negotiate_py_mcp_over_tls_h2 => negotiated(PyMcp, &[], Modern, Sse, true);
    negotiate_fastmcp, negotiate_fastmcp_over_tls_h2 => negotiated(FastMcp, &["--json"], Modern, Json, true);
}
