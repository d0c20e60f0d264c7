#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration, property and doc tests.
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
  # Last, so that the run ends with nextest's summary line.
  cargo nextest run --workspace --lib --bins --tests
else
  out=$(mktemp)
  cargo test --workspace --lib --bins --tests 2>&1 | tee "$out"
  passed=$(grep -Eo '[0-9]+ passed' "$out" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -Eo '[0-9]+ failed' "$out" | awk '{s+=$1} END {print s+0}')
  rm -f "$out"
  echo "$passed passed, $failed failed"
fi
