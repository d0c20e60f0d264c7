#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration, property and doc tests, then checks that
# every test docs/guarantees.md cites ran and passed (scripts/guarantees.py).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --doc
# The core without its default `std` feature (the library is then `no_std` + `alloc`): its unit,
# integration and doc tests must pass the same way.
cargo test -p mcp-sansio --no-default-features
# The recorded sessions replayed against the core built without `std` (the transcript crate's
# `std` feature off): the same events as with it.
cargo test -p mcp-sansio-transcript --no-default-features --test replay --test auth_replay --test h2_record
if cargo nextest --version >/dev/null 2>&1; then
  # The `ci` profile (.config/nextest.toml) writes a JUnit report of the tests run, from which
  # scripts/guarantees.py checks that every test docs/guarantees.md cites ran and passed.
  log=$(mktemp)
  cargo nextest run --profile ci --workspace --lib --bins --tests 2>&1 | tee "$log"
  target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
  python3 scripts/guarantees.py --junit "$target_dir/nextest/ci/junit.xml"
  # Last, nextest's summary line again, so that the run ends with it.
  grep -E '^ *Summary \[' "$log" | tail -n 1
  rm -f "$log"
else
  out=$(mktemp)
  cargo test --workspace --lib --bins --tests 2>&1 | tee "$out"
  passed=$(grep -Eo '[0-9]+ passed' "$out" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -Eo '[0-9]+ failed' "$out" | awk '{s+=$1} END {print s+0}')
  rm -f "$out"
  # Without nextest's report, only that every cited test exists.
  python3 scripts/guarantees.py
  echo "$passed passed, $failed failed"
fi
