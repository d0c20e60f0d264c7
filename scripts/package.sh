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
# Cargo takes a crate of a registry as immutable: the sources it extracted from the local
# registry of an earlier run, and what it built from them, would be reused although the crates
# changed since. So the verification builds in a target directory of its own, from which the
# workspace's crates (not their dependencies) are removed first, with fresh extracted sources.
verify_dir=target/package-verify
rm -rf "$verify_dir"/debug/.fingerprint/mcp-sansio* "$verify_dir"/debug/deps/*mcp_sansio* "$verify_dir"/package
for dir in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do
    case "$dir" in */index.crates.io-*) ;; *) rm -rf "$dir"mcp-sansio* ;; esac
done
cargo package --locked --allow-dirty --target-dir "$verify_dir" "${args[@]}"
# Every published crate carries both license texts its `license` field names.
for ((i = 1; i < ${#args[@]}; i += 2)); do
    files=$(cargo package --list --locked --allow-dirty --target-dir "$verify_dir" -p "${args[$i]}")
    for f in LICENSE-MIT LICENSE-APACHE; do
        grep -qx "$f" <<<"$files" || { echo "package: ${args[$i]} lacks $f"; exit 1; }
    done
done
python3 scripts/msrv.py
