#!/usr/bin/env bash
# Build checks of the core on targets without an operating system's I/O:
# wasm32-unknown-unknown (default features).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || rustup target add wasm32-unknown-unknown
echo "portability: mcp-sansio for wasm32-unknown-unknown"
cargo build --quiet -p mcp-sansio --target wasm32-unknown-unknown
