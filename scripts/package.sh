#!/usr/bin/env bash
# Packages every crate meant for crates.io (every workspace member without `publish = false`)
# as `cargo publish` would, then builds each from its .crate alone, its path dependencies taken
# from the crates packaged beside it (cargo >= 1.90); then checks their rust-version
# (scripts/msrv.py).
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while read -r name; do
    args+=(-p "$name")
done < <(python3 scripts/msrv.py --published)
# --allow-dirty: what is checked is that the crates package and build, not that the tree is
# committed (a developer runs this with work in progress).
cargo package --locked --allow-dirty "${args[@]}"
python3 scripts/msrv.py
