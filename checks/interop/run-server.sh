#!/usr/bin/env bash
# Start one interop server on 127.0.0.1:PORT in the foreground (the process replaces this
# shell, so its PID is the server's: stop it with `kill PID`).
#
#   bash checks/interop/run-server.sh ts-v1   PORT [--mode stateful|stateless] [--response sse|json]
#   bash checks/interop/run-server.sh ts-v2   PORT [--legacy stateless|stateful|reject] [--response auto|sse|json] [--legacy-response sse|json]
#   bash checks/interop/run-server.sh py-mcp  PORT [--stateless] [--json]
#   bash checks/interop/run-server.sh fastmcp PORT [--stateless] [--json]
#
# Every server also takes --page-size N (default 5) and --ttl SECONDS (default 600): it exits
# by itself after TTL. Endpoint: http://127.0.0.1:PORT/mcp. Run checks/interop/install.sh first
# (same MCP_INTEROP_DIR, default ${TMPDIR:-/tmp}/mcp-sansio-interop).
set -euo pipefail
MCP_INTEROP_DIR="${MCP_INTEROP_DIR:-${TMPDIR:-/tmp}/mcp-sansio-interop}"
HERE="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: run-server.sh ts-v1|ts-v2|py-mcp|fastmcp PORT [server args]}"
port="${2:?usage: run-server.sh SERVER PORT [server args]}"
shift 2
missing() { echo "run-server.sh: $server is not installed in $MCP_INTEROP_DIR ($1 missing); run: bash $HERE/install.sh $server" >&2; exit 1; }
case "$server" in
  ts-v1|ts-v2)
    # ESM resolves packages next to the script file: install.sh copies it into the install dir.
    [ -f "$MCP_INTEROP_DIR/$server/server.mjs" ] || missing "$server/server.mjs"
    cmp -s "$HERE/servers/$server/server.mjs" "$MCP_INTEROP_DIR/$server/server.mjs" ||
      { echo "run-server.sh: $MCP_INTEROP_DIR/$server/server.mjs is stale; run: bash $HERE/install.sh $server" >&2; exit 1; }
    exec node "$MCP_INTEROP_DIR/$server/server.mjs" --port "$port" "$@" ;;
  py-mcp)
    [ -x "$MCP_INTEROP_DIR/venv-mcp/bin/python" ] || missing venv-mcp
    exec "$MCP_INTEROP_DIR/venv-mcp/bin/python" "$HERE/servers/py-mcp/server.py" --port "$port" "$@" ;;
  fastmcp)
    [ -x "$MCP_INTEROP_DIR/venv-fastmcp/bin/python" ] || missing venv-fastmcp
    exec "$MCP_INTEROP_DIR/venv-fastmcp/bin/python" "$HERE/servers/fastmcp/server.py" --port "$port" "$@" ;;
  *) echo "run-server.sh: unknown server $server (ts-v1|ts-v2|py-mcp|fastmcp)" >&2; exit 2 ;;
esac
