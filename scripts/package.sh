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
# Every published crate carries both license texts its `license` field names.
for ((i = 1; i < ${#args[@]}; i += 2)); do
    files=$(cargo package --list --locked --allow-dirty -p "${args[$i]}")
    for f in LICENSE-MIT LICENSE-APACHE; do
        grep -qx "$f" <<<"$files" || { echo "package: ${args[$i]} lacks $f"; exit 1; }
    done
done
python3 scripts/msrv.py
