#!/usr/bin/env sh
# Runs the decode benchmark in release mode and records its output in docs/bench-decode.txt.
set -eu
cd "$(dirname "$0")/.."
cargo bench --bench decode 2>/dev/null | tee docs/bench-decode.txt
