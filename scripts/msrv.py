#!/usr/bin/env python3
"""The rust-version of the published crates, checked with the toolchain at hand.

What the toolchain at hand can check (scripts/msrv-build.sh then builds every published crate
with the old compiler itself):

1. every published crate (a workspace member without `publish = false`) declares the same
   `rust-version`;
2. every package that a published crate builds with (normal and build dependencies, on any
   target, as locked in Cargo.lock) declares a `rust-version` no newer than it: a dependency
   that needs a newer compiler is caught here (dev-dependencies are listed, not checked: the
   tests may need a newer compiler than the libraries);
3. clippy's `incompatible_msrv` lint, on by default in `cargo clippy` (run by .ci/run), reads
   the `rust-version` and refuses a standard-library item stabilised after it.

Not checked here: language features and compiler behaviour newer than the MSRV (nothing but
that compiler can tell: scripts/msrv-build.sh).

`--published` prints the names of the published crates, one a line, and checks nothing.
"""
import json
import subprocess
import sys


def version(text):
    return tuple(int(x) for x in text.split(".")[:3]) + (0,) * (3 - len(text.split(".")))


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    by_id = {p["id"]: p for p in meta["packages"]}
    members = [by_id[i] for i in meta["workspace_members"]]
    published = [p for p in members if p.get("publish") != []]
    if sys.argv[1:] == ["--published"]:
        for p in published:
            print(p["name"])
        return 0
    failures = []
    msrvs = {p["name"]: p.get("rust_version") for p in published}
    if None in msrvs.values() or len(set(msrvs.values())) != 1:
        failures.append(f"the published crates do not declare one rust-version: {msrvs}")
    msrv = next(iter(msrvs.values()))
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    member_ids = set(meta["workspace_members"])
    seen = set()
    stack = [p["id"] for p in published]
    while stack:
        node = nodes[stack.pop()]
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            if kinds & {None, "build"} and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                stack.append(dep["pkg"])
    checked = 0
    for pid in sorted(seen - member_ids, key=lambda i: by_id[i]["name"]):
        p = by_id[pid]
        checked += 1
        if p.get("rust_version") and msrv and version(p["rust_version"]) > version(msrv):
            failures.append(
                f"{p['name']} {p['version']} needs Rust {p['rust_version']}, newer than {msrv}"
            )
    newest_dev = max(
        (by_id[pid] for pid in by_id if by_id[pid].get("rust_version") and pid not in seen and pid not in member_ids),
        key=lambda p: version(p["rust_version"]),
        default=None,
    )
    for f in failures:
        print(f"msrv: {f}", file=sys.stderr)
    if failures:
        return 1
    print(
        f"msrv: {len(published)} published crates declare rust-version {msrv}; "
        f"the {checked} packages they build with need no newer Rust"
        + (
            f" (the tests need {newest_dev['rust_version']}: {newest_dev['name']})"
            if newest_dev and version(newest_dev["rust_version"]) > version(msrv)
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
