#!/usr/bin/env bash
# Build checks of the core on targets without an operating system's I/O:
# wasm32-unknown-unknown (default features), and x86_64-unknown-none without the default `std`
# feature (no standard library at all: `core` and `alloc` only). The core's lints also run
# without `std`; its tests run without `std` in scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in wasm32-unknown-unknown x86_64-unknown-none; do
  rustup target add "$target" >/dev/null 2>&1 || rustup target add "$target"
done
echo "portability: mcp-sansio for wasm32-unknown-unknown"
cargo build --quiet -p mcp-sansio --target wasm32-unknown-unknown
echo "portability: mcp-sansio without std for x86_64-unknown-none"
cargo build --quiet -p mcp-sansio --no-default-features --target x86_64-unknown-none
echo "portability: clippy of mcp-sansio without std"
cargo clippy --quiet -p mcp-sansio --all-targets --no-default-features -- -D warnings
