#!/usr/bin/env bash
# The soak and load check (checks/soak): 1,000 work items, 64 at a time, through one shared
# tokio client, then 200 on 16 threads through one blocking client, against well-behaved and
# hostile servers on 127.0.0.1 (HTTP/1.1 over TLS and in clear text, HTTP/2 over TLS and h2c).
# Release build; prints the figures and fails if a check does not hold.
#
#   scripts/soak.sh                       # the full run
#   scripts/soak.sh --write               # the same, and its figures into docs/benchmarks.md ("Soak")
#   scripts/soak.sh --items 5000 --concurrency 128   # other arguments go to the binary
#
# CI runs a short variant in debug (.ci/run: 100 items, 32 at once).
set -euo pipefail
cd "$(dirname "$0")/.."
write=()
if [ "${1:-}" = "--write" ]; then
  shift
  write=(--markdown docs/benchmarks.md)
fi
cargo build --release --quiet -p mcp-sansio-soak
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
export SOAK_RUN_NOTE="- Run: $(date -u '+%Y-%m-%d %H:%M UTC'), release build, \`scripts/soak.sh\`. Machine: $(uname -sr), $(nproc) × ${cpu}; rustc $(rustc --version | cut -d' ' -f2). Other processes may share the cores."
echo "$SOAK_RUN_NOTE"
exec "$target_dir/release/soak" --items 1000 --concurrency 64 "${write[@]}" "$@"
