#!/usr/bin/env bash
# Install the MCP servers used by the interop tests (npm registry and PyPI only).
#
#   bash checks/interop/install.sh            # everything
#   bash checks/interop/install.sh ts-v2      # only some: ts-v1 ts-v2 py-mcp fastmcp fastmcp-tasks nghttpx
#
# nghttpx (the TLS HTTP/2 front of the TypeScript servers) comes from the Debian package
# nghttp2-proxy, installed with apt-get when missing (as root, or through sudo).
#
# Install folder: $MCP_INTEROP_DIR, default ${TMPDIR:-/tmp}/mcp-sansio-interop. Idempotent:
# a second run finds the pinned versions in place and does not touch the network.
# Needs node + npm (Node 20) and python3 (3.11) with the venv module.
set -euo pipefail
MCP_INTEROP_DIR="${MCP_INTEROP_DIR:-${TMPDIR:-/tmp}/mcp-sansio-interop}"
HERE="$(cd "$(dirname "$0")" && pwd)"

TS_V1_SDK=1.32.2
TS_V2_SERVER=2.4.0
TS_V2_NODE=2.1.2
ZOD=4.6.7
PY_MCP=2.3.0
FASTMCP=4.1.7
# The SEP-2663 tasks peer: fastmcp-tasks pins fastmcp-slim[server] to its own version, so it gets
# a venv of its own with the fastmcp of that version (its backend, pydocket, runs in-process on
# its memory:// store: no Redis server).
FASTMCP_TASKS=4.1.4
PYDOCKET=0.27.2
HYPERCORN=0.18.0  # the HTTP/2 server (h2c with prior knowledge) of the Python peers

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(ts-v1 ts-v2 py-mcp fastmcp fastmcp-tasks nghttpx)
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
for p in "${parts[@]}"; do
  case "$p" in ts-v1|ts-v2|py-mcp|fastmcp|fastmcp-tasks|nghttpx) ;; *) echo "install.sh: unknown part '$p'" >&2; exit 2 ;; esac
done
command -v npm >/dev/null || { echo "install.sh: npm is required" >&2; exit 1; }
command -v python3 >/dev/null || { echo "install.sh: python3 is required" >&2; exit 1; }
mkdir -p "$MCP_INTEROP_DIR"
MCP_INTEROP_DIR="$(cd "$MCP_INTEROP_DIR" && pwd)"

have_npm() {  # have_npm DIR PKG VERSION
  local f="$1/node_modules/$2/package.json"
  [ -f "$f" ] && [ "$(node -p "require('$f').version")" = "$3" ]
}
npm_dir() {  # npm_dir DIR PKG@VERSION...
  local dir="$1"; shift
  mkdir -p "$dir"
  if [ ! -f "$dir/package.json" ]; then
    (cd "$dir" && npm init -y >/dev/null && npm pkg set type=module >/dev/null)
  fi
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$@")
}
have_pip() {  # have_pip VENV PKG VERSION
  [ -x "$1/bin/python" ] && [ "$("$1/bin/python" -c "from importlib.metadata import version; print(version('$2'))" 2>/dev/null)" = "$3" ]
}
venv_dir() {  # venv_dir DIR PIP-ARGS...
  local dir="$1"; shift
  if [ ! -x "$dir/bin/python" ]; then
    python3 -m venv "$dir" || { echo "install.sh: 'python3 -m venv' failed" >&2; rm -rf "$dir"; exit 1; }
  fi
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@"
}

if want ts-v1 && ! have_npm "$MCP_INTEROP_DIR/ts-v1" @modelcontextprotocol/sdk "$TS_V1_SDK"; then
  npm_dir "$MCP_INTEROP_DIR/ts-v1" "@modelcontextprotocol/sdk@$TS_V1_SDK"
fi
want ts-v1 && cp "$HERE/servers/ts-v1/server.mjs" "$MCP_INTEROP_DIR/ts-v1/server.mjs"
if want ts-v2 && ! { have_npm "$MCP_INTEROP_DIR/ts-v2" @modelcontextprotocol/server "$TS_V2_SERVER" &&
                     have_npm "$MCP_INTEROP_DIR/ts-v2" @modelcontextprotocol/node "$TS_V2_NODE"; }; then
  npm_dir "$MCP_INTEROP_DIR/ts-v2" "@modelcontextprotocol/server@$TS_V2_SERVER" \
    "@modelcontextprotocol/node@$TS_V2_NODE" "zod@$ZOD"
fi
want ts-v2 && cp "$HERE/servers/ts-v2/server.mjs" "$MCP_INTEROP_DIR/ts-v2/server.mjs"
if want py-mcp && ! { have_pip "$MCP_INTEROP_DIR/venv-mcp" mcp "$PY_MCP" &&
                      have_pip "$MCP_INTEROP_DIR/venv-mcp" hypercorn "$HYPERCORN" &&
                      "$MCP_INTEROP_DIR/venv-mcp/bin/python" -c 'import uvicorn' 2>/dev/null; }; then
  venv_dir "$MCP_INTEROP_DIR/venv-mcp" "mcp==$PY_MCP" uvicorn "hypercorn==$HYPERCORN"
fi
if want fastmcp && ! { have_pip "$MCP_INTEROP_DIR/venv-fastmcp" fastmcp "$FASTMCP" &&
                       have_pip "$MCP_INTEROP_DIR/venv-fastmcp" hypercorn "$HYPERCORN"; }; then
  venv_dir "$MCP_INTEROP_DIR/venv-fastmcp" "fastmcp==$FASTMCP" "hypercorn==$HYPERCORN"
fi
if want fastmcp-tasks && ! { have_pip "$MCP_INTEROP_DIR/venv-fastmcp-tasks" fastmcp-tasks "$FASTMCP_TASKS" &&
                             have_pip "$MCP_INTEROP_DIR/venv-fastmcp-tasks" fastmcp "$FASTMCP_TASKS" &&
                             have_pip "$MCP_INTEROP_DIR/venv-fastmcp-tasks" pydocket "$PYDOCKET" &&
                             have_pip "$MCP_INTEROP_DIR/venv-fastmcp-tasks" hypercorn "$HYPERCORN"; }; then
  venv_dir "$MCP_INTEROP_DIR/venv-fastmcp-tasks" "fastmcp==$FASTMCP_TASKS" "fastmcp-tasks==$FASTMCP_TASKS" \
    "pydocket==$PYDOCKET" "hypercorn==$HYPERCORN"
fi

if want nghttpx && ! command -v nghttpx >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -q nghttp2-proxy >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q nghttp2-proxy >/dev/null; }
  else
    sudo apt-get install -y -q nghttp2-proxy >/dev/null || { sudo apt-get update -q >/dev/null && sudo apt-get install -y -q nghttp2-proxy >/dev/null; }
  fi
  command -v nghttpx >/dev/null || { echo "install.sh: nghttpx (nghttp2-proxy) could not be installed" >&2; exit 1; }
fi

echo "interop servers in $MCP_INTEROP_DIR:"
for p in ts-v1:@modelcontextprotocol/sdk ts-v2:@modelcontextprotocol/server ts-v2:@modelcontextprotocol/node; do
  f="$MCP_INTEROP_DIR/${p%%:*}/node_modules/${p#*:}/package.json"
  [ -f "$f" ] && printf '  %-40s %s\n' "${p#*:}" "$(node -p "require('$f').version")"
done
for v in venv-mcp:mcp venv-mcp:hypercorn venv-fastmcp:fastmcp venv-fastmcp:mcp venv-fastmcp:hypercorn \
         venv-fastmcp-tasks:fastmcp-tasks venv-fastmcp-tasks:fastmcp venv-fastmcp-tasks:pydocket venv-fastmcp-tasks:mcp; do
  py="$MCP_INTEROP_DIR/${v%%:*}/bin/python"
  [ -x "$py" ] && printf '  %-40s %s\n' "${v#*:} (${v%%:*})" "$("$py" -c "from importlib.metadata import version; print(version('${v#*:}'))")"
done
want nghttpx && printf '  %-40s %s\n' nghttpx "$(nghttpx --version | head -1)"
exit 0
