#!/usr/bin/env bash
# Side-by-side benchmarks in one command: builds the harness and the Rust contenders, installs the
# TypeScript and Python contenders into ${TMPDIR:-/tmp}/mcp-sansio-bench (npm and PyPI only), runs
# every contender against the same local servers (127.0.0.1) and writes docs/benchmarks.md.
#
#   scripts/bench-all.sh            # full run (about 10 minutes)
#   scripts/bench-all.sh --quick    # fewer repetitions
#   scripts/bench-all.sh --only tokio,rmcp
#   scripts/bench-all.sh --only h2     # HTTP/2 vs HTTP/1.1 over TLS alone, other figures kept
#   scripts/bench-all.sh --only h2 --cold-tls-only   # a cold work item over TLS, resumed vs full
#                                                    # handshake, alone; other sections kept
#   scripts/bench-all.sh --only raw,tokio,blocking --floor-only   # this round's targets alone: the
#                                                    # floor and the adapters in alternating rounds,
#                                                    # every callgrind figure; other figures kept
#   scripts/bench-all.sh --only tokio,rmcp --scale-only   # how cost grows with concurrent work
#                                                    # items (1 to 10,000 at once: ours and rmcp
#                                                    # over HTTP/1.1, ours over one HTTP/2
#                                                    # socket), alone; add --quick for one
#                                                    # process per size (needs ulimit -n 20000)
#   scripts/bench-all.sh --only tokio,rmcp --origins-only # 1,000 items over 1 to 1,000 origins
#
# With --only, only what those contenders need is built and installed.
#
# Needs cargo, node + npm, python3 with venv, and valgrind. Set BENCH_NICE=15 to build and run at
# low priority on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR="$root/checks/bench/target"
tools="${TMPDIR:-/tmp}/mcp-sansio-bench"
nice_cmd=(nice -n "${BENCH_NICE:-0}")

ts_sdk=1.32.2
py_mcp=2.3.0

# The contenders asked for with --only (every one without it).
only=""
prev=""
for arg in "$@"; do
  case "$arg" in
    --only=*) only="${arg#--only=}" ;;
  esac
  if [ "$prev" = "--only" ]; then only="$arg"; fi
  prev="$arg"
done
wants() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

crates=(checks/bench/harness checks/bench/sansio)
if wants rmcp; then crates+=(checks/bench/rmcp); fi
for crate in "${crates[@]}"; do
  echo "== build $crate"
  (cd "$crate" && "${nice_cmd[@]}" cargo build --release --quiet)
done

if wants ts; then
  mkdir -p "$tools/ts"
  if [ ! -f "$tools/ts/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
     ! grep -q "\"version\": \"$ts_sdk\"" "$tools/ts/node_modules/@modelcontextprotocol/sdk/package.json"; then
    echo "== npm install @modelcontextprotocol/sdk@$ts_sdk"
    (cd "$tools/ts" && echo '{"name":"bench-ts","private":true,"type":"module"}' > package.json &&
       npm install --no-audit --no-fund --silent "@modelcontextprotocol/sdk@$ts_sdk")
  fi
  cp checks/bench/contenders/client.mjs "$tools/ts/client.mjs"
fi

if wants py; then
  if ! "$tools/py/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$py_mcp')" 2>/dev/null; then
    echo "== pip install mcp==$py_mcp"
    python3 -m venv "$tools/py"
    "$tools/py/bin/pip" install --quiet "mcp==$py_mcp"
  fi
  cp checks/bench/contenders/client.py "$tools/py/client.py"
fi

echo "== run"
BENCH_TOOLS="$tools" "${nice_cmd[@]}" python3 checks/bench/run.py "$@"
