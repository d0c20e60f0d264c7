#!/usr/bin/env bash
# Builds every published crate with the compiler its `rust-version` names (installed here with
# rustup when absent, the minimal profile): `cargo check` of each, with its default features, and
# of the adapters with every optional feature as well. scripts/msrv.py checks what the toolchain
# at hand can tell (one rust-version, the dependencies' own, clippy's incompatible_msrv); only
# the old compiler itself sees a language feature or a compiler behaviour newer than it.
#
#   scripts/msrv-build.sh        # check; the first run installs the toolchain (about a minute)
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(python3 - <<'PY'
import tomllib
with open("Cargo.toml", "rb") as f:
    print(tomllib.load(f)["package"]["rust-version"])
PY
)
# rustup names a release by its three parts: "1.85" is "1.85.0".
case "$version" in *.*.*) toolchain="$version" ;; *) toolchain="$version.0" ;; esac
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    echo "== installing Rust $toolchain (the published crates' rust-version)"
    rustup toolchain install "$toolchain" --profile minimal --no-self-update
fi
rustup run "$toolchain" rustc --version
# A target directory of its own: artifacts of two compilers do not mix.
target=target/msrv
# The names first (a failure of msrv.py stops the script here; an empty list is an error): a
# loop fed by a process substitution would check nothing and still succeed.
names=$(python3 scripts/msrv.py --published)
[ -n "$names" ] || { echo "msrv: no published crate named by scripts/msrv.py" >&2; exit 1; }
for name in $names; do
    echo "== cargo +$toolchain check -p $name"
    cargo "+$toolchain" check --locked --quiet --target-dir "$target" -p "$name"
done
for name in mcp-sansio-net mcp-sansio-tokio mcp-sansio-blocking; do
    echo "== cargo +$toolchain check -p $name --all-features"
    cargo "+$toolchain" check --locked --quiet --target-dir "$target" -p "$name" --all-features
done
echo "msrv: every published crate builds with Rust $toolchain"
