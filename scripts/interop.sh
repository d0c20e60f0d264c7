#!/usr/bin/env bash
# Live interop tests: install the MCP servers (npm registry and PyPI only), then run the
# interop test crate, which starts every server configuration on a free 127.0.0.1 port, drives
# the scenario through mcp-sansio-tokio and mcp-sansio-blocking over HTTP/1.1, then starts it
# again over TLS with ALPN h2 (under hypercorn, or behind nghttpx) and drives it over HTTP/2, and
# stops the server by PID. The task tests (tests/tasks.rs) run the task-capable peer
# (fastmcp-tasks) and the TS SDK v1's 2025-11-25 task tools the same way; the trace context tests
# (tests/trace_context.rs) call the trace_meta tool of py-mcp and fastmcp over HTTP/1.1 and h2c.
#
#   scripts/interop.sh                    # everything
#   scripts/interop.sh ts_v2              # only tests whose name contains ts_v2 (cargo test filter)
#
# Environment:
#   MCP_INTEROP_DIR      install folder (default ${TMPDIR:-/tmp}/mcp-sansio-interop)
#   INTEROP_JOBS         tests run at once (default 4)
#   CARGO_TARGET_DIR     shared with the root workspace by default, to reuse its build
# Needs Rust, Node 20 with npm, and Python 3.11 with venv. A server that cannot be installed or
# started fails the run; nothing is skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export MCP_INTEROP_DIR="${MCP_INTEROP_DIR:-${TMPDIR:-/tmp}/mcp-sansio-interop}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
jobs="${INTEROP_JOBS:-4}"

start=$(date +%s)
echo "== installing the interop servers into $MCP_INTEROP_DIR"
bash "$ROOT/checks/interop/install.sh"

echo "== building and running the interop tests"
cd "$ROOT/checks/interop"
status=0
cargo test --manifest-path "$ROOT/checks/interop/Cargo.toml" --test live --test tasks --test trace_context -- \
  --test-threads "$jobs" "$@" || status=$?

# Every test stops its own server; this only reports a server that outlived its test.
if command -v pgrep >/dev/null; then
  left=$(pgrep -f "$MCP_INTEROP_DIR/ts-v[12]/server\.mjs --port|$ROOT/checks/interop/servers/(py-mcp|fastmcp|fastmcp-tasks)/server\.py --port|nghttpx .*$MCP_INTEROP_DIR/tls/" || true)
  if [ -n "$left" ]; then
    echo "interop.sh: servers still running after the tests: $left" >&2
    status=1
  fi
fi
echo "== interop finished in $(( $(date +%s) - start )) s (exit $status)"
exit "$status"
