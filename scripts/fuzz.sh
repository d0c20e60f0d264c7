#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (default 30 s each): scripts/fuzz.sh [SECONDS] [TARGET…]
# Each run starts from fuzz/corpus/TARGET and replays fuzz/regressions/TARGET (inputs of past
# findings) first. A crash makes the script fail and leaves the reproducer under
# fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
shift || true
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
cd fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
cargo fuzz build -s none
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "fuzz: $t for ${secs}s"
  dirs=("corpus/$t")
  [ -d "regressions/$t" ] && dirs+=("regressions/$t")
  cargo fuzz run -s none "$t" "${dirs[@]}" -- -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 2>&1 |
    grep -E 'stat::number_of_executed_units|Done|ERROR|panicked|SUMMARY' || true
  # cargo fuzz's exit status is lost in the pipe above: a crash leaves an artifact.
  if compgen -G "artifacts/$t/crash-*" >/dev/null || compgen -G "artifacts/$t/oom-*" >/dev/null || compgen -G "artifacts/$t/timeout-*" >/dev/null; then
    echo "fuzz: $t found a failing input:"; ls "artifacts/$t"
    exit 1
  fi
done
