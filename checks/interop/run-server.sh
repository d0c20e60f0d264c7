#!/usr/bin/env bash
# Start one interop server on 127.0.0.1:PORT in the foreground (the process replaces this
# shell, so its PID is the server's: stop it with `kill PID`).
#
#   bash checks/interop/run-server.sh ts-v1   PORT [--mode stateful|stateless] [--response sse|json]
#   bash checks/interop/run-server.sh ts-v2   PORT [--legacy stateless|stateful|reject] [--response auto|sse|json] [--legacy-response sse|json]
#   bash checks/interop/run-server.sh py-mcp  PORT [--stateless] [--json]
#   bash checks/interop/run-server.sh fastmcp PORT [--stateless] [--json]
#   bash checks/interop/run-server.sh fastmcp-tasks PORT [--stateless] [--json]
#   bash checks/interop/run-server.sh ts-v1 PORT --tasks     (2025-11-25 task tools: see server.mjs)
#   bash checks/interop/run-server.sh ts-v1|ts-v2 PORT --nghttpx CERT KEY [server args]
#
# --nghttpx (first after PORT): the TypeScript server listens on a free backend port and nghttpx
# (Debian nghttp2-proxy) serves PORT over TLS with CERT and KEY, ALPN h2 then http/1.1, in front
# of it. The processes share a process group: stop them with `kill -- -PID`.
#
# Every server also takes --page-size N (default 5) and --ttl SECONDS (default 600): it exits
# by itself after TTL. Endpoint: http://127.0.0.1:PORT/mcp. Run checks/interop/install.sh first
# (same MCP_INTEROP_DIR, default ${TMPDIR:-/tmp}/mcp-sansio-interop).
set -euo pipefail
MCP_INTEROP_DIR="${MCP_INTEROP_DIR:-${TMPDIR:-/tmp}/mcp-sansio-interop}"
HERE="$(cd "$(dirname "$0")" && pwd)"
server="${1:?usage: run-server.sh ts-v1|ts-v2|py-mcp|fastmcp|fastmcp-tasks PORT [server args]}"
port="${2:?usage: run-server.sh SERVER PORT [server args]}"
shift 2
missing() { echo "run-server.sh: $server is not installed in $MCP_INTEROP_DIR ($1 missing); run: bash $HERE/install.sh $server" >&2; exit 1; }
front=()
if [ "${1:-}" = "--nghttpx" ]; then
  front=("${2:?--nghttpx CERT KEY}" "${3:?--nghttpx CERT KEY}")
  shift 3
fi
case "$server" in
  ts-v1|ts-v2)
    # ESM resolves packages next to the script file: install.sh copies it into the install dir.
    [ -f "$MCP_INTEROP_DIR/$server/server.mjs" ] || missing "$server/server.mjs"
    cmp -s "$HERE/servers/$server/server.mjs" "$MCP_INTEROP_DIR/$server/server.mjs" ||
      { echo "run-server.sh: $MCP_INTEROP_DIR/$server/server.mjs is stale; run: bash $HERE/install.sh $server" >&2; exit 1; }
    if [ ${#front[@]} -eq 0 ]; then
      exec node "$MCP_INTEROP_DIR/$server/server.mjs" --port "$port" "$@"
    fi
    command -v nghttpx >/dev/null || { echo "run-server.sh: nghttpx is missing; run: bash $HERE/install.sh nghttpx" >&2; exit 1; }
    backend="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    node "$MCP_INTEROP_DIR/$server/server.mjs" --port "$backend" "$@" &
    for _ in $(seq 200); do
      (echo > "/dev/tcp/127.0.0.1/$backend") 2>/dev/null && break
      sleep 0.05
    done
    exec nghttpx --conf=/dev/null --single-process --no-ocsp \
      --frontend="127.0.0.1,$port" --backend="127.0.0.1,$backend;;proto=http/1.1" \
      --accesslog-file=/dev/null --errorlog-file=/dev/stderr --log-level=WARN \
      "${front[1]}" "${front[0]}" ;;
  py-mcp)
    [ -x "$MCP_INTEROP_DIR/venv-mcp/bin/python" ] || missing venv-mcp
    exec "$MCP_INTEROP_DIR/venv-mcp/bin/python" "$HERE/servers/py-mcp/server.py" --port "$port" "$@" ;;
  fastmcp)
    [ -x "$MCP_INTEROP_DIR/venv-fastmcp/bin/python" ] || missing venv-fastmcp
    exec "$MCP_INTEROP_DIR/venv-fastmcp/bin/python" "$HERE/servers/fastmcp/server.py" --port "$port" "$@" ;;
  fastmcp-tasks)
    [ -x "$MCP_INTEROP_DIR/venv-fastmcp-tasks/bin/python" ] || missing venv-fastmcp-tasks
    exec "$MCP_INTEROP_DIR/venv-fastmcp-tasks/bin/python" "$HERE/servers/fastmcp-tasks/server.py" --port "$port" "$@" ;;
  *) echo "run-server.sh: unknown server $server (ts-v1|ts-v2|py-mcp|fastmcp|fastmcp-tasks)" >&2; exit 2 ;;
esac
