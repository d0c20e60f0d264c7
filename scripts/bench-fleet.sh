#!/usr/bin/env bash
# The fleet benchmark (crates/redis/examples/fleet_bench): worker processes × work items against
# local catalog servers, sharing catalogs and era hints through one Redis against each process's
# own in-memory store, the two in alternating rounds. Release build; prints the figures as
# Markdown (the "Fleet" section of docs/benchmarks.md is written from them by hand, method first).
#
#   scripts/bench-fleet.sh                 # 8 processes × 500 work items, 20 origins, 2 rounds
#   scripts/bench-fleet.sh --quick         # 2 × 50, one round
#   scripts/bench-fleet.sh --processes 4 --items 200 --rounds 3
#
# Needs redis-server (7 or later) on the PATH, or MCP_SANSIO_REDIS_SERVER. Set BENCH_NICE=15 to
# build and run at low priority on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
nice_cmd=(nice -n "${BENCH_NICE:-0}")
"${nice_cmd[@]}" cargo build --release --quiet -p mcp-sansio-redis --example fleet_bench
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "- Run: $(date -u '+%Y-%m-%d %H:%M UTC'), release build, \`scripts/bench-fleet.sh $*\`. Machine: $(uname -sr), $(nproc) × ${cpu}; $(redis-server --version | cut -d' ' -f1-3); rustc $(rustc --version | cut -d' ' -f2). Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
exec "${nice_cmd[@]}" "$target_dir/release/examples/fleet_bench" "$@"
