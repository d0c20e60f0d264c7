#!/usr/bin/env python3
"""Every test docs/guarantees.md cites exists, and ran.

    python3 scripts/guarantees.py [--junit target/nextest/ci/junit.xml] [--doc docs/guarantees.md]

Reads each table of the document whose header names its evidence column ("checked by", "test",
"scenario" or "scenarios") and takes every backticked identifier of that column, and every file
path the column names. An identifier passes when it is:

1. a test in the JUnit report of the nextest run (`--junit`; its name is the last `::` segment of
   a test case): every test case of that name must have passed (not failed, not skipped);
2. a scenario of the hostile catalogues (a name in checks/support/src/hostile/catalogue.rs or
   checks/support/src/hostile/h2.rs). The runners (tests/hostile.rs, tests/hostile_h2.rs and the adapters'
   hostile_sockets.rs and hostile_h2_sockets.rs) run every scenario of their catalogue in tests
   that fail when any scenario fails, and those runner tests are themselves checked to have
   passed (`RUNNERS`) when a report is given: a scenario named in the catalogue ran;
3. a fuzz target (fuzz/fuzz_targets/NAME.rs; scripts/fuzz.sh runs every target in CI);
4. a function, constant, static, type or public field of the workspace that is not a test (a
   helper the cited runner calls for every scenario, such as `check_deadline`, a bound such as
   `MAX_STEPS`, a budget such as `call_time`).

A test function (one with a test attribute) that the report does not list fails: it exists but
did not run. Without `--junit` only existence is checked. A cited path that does not exist fails
(`{a,b}` is expanded). Exit status 1 on any failure; prints one summary line.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EVIDENCE = {"checked by", "test", "tests", "scenario", "scenarios"}
CATALOGUES = ["checks/support/src/hostile/catalogue.rs", "checks/support/src/hostile/h2.rs"]
# The tests that run the catalogues: each fails when any scenario of its catalogue fails.
RUNNERS = [
    "header_abuse",
    "every_hostile_http2_scenario_ends_in_its_typed_error",
    "task_abuse",
    "task_scenarios_over_http2_end_as_over_http1",
]
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PATH = re.compile(r"(?<![\w/.])((?:[\w.-]+|\{[\w.,-]+\})(?:/(?:[\w.-]+|\{[\w.,-]+\}))*\.rs)\b")
SKIP_DIRS = {"target", ".git", "corpus", "artifacts", "node_modules"}


def rust_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for f in filenames:
            if f.endswith(".rs"):
                yield os.path.join(dirpath, f)


def index_workspace():
    tests, helpers = set(), set()
    fn_re = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
    item_re = re.compile(
        r"\b(?:(?:const|static)\s+([A-Za-z_][A-Za-z0-9_]*)\s*:"
        r"|(?:struct|enum|trait|type)\s+([A-Za-z_][A-Za-z0-9_]*)"
        r"|\bpub(?:\([a-z]+\))?\s+([a-z_][a-z0-9_]*)\s*:)"
    )
    for path in rust_files():
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            for m in item_re.finditer(line):
                helpers.add(next(g for g in m.groups() if g))
            m = fn_re.search(line)
            if not m:
                continue
            before = " ".join(lines[max(0, i - 4):i + 1])
            is_test = re.search(r"#\[(?:\$test|\$threaded|test|tokio::test|[\w:]*test)\b", before)
            (tests if is_test else helpers).add(m.group(1))
    scenarios = set()
    for c in CATALOGUES:
        with open(os.path.join(ROOT, c), encoding="utf-8") as f:
            scenarios.update(re.findall(r'"([a-z0-9_]+)"', f.read()))
    fuzz_dir = os.path.join(ROOT, "fuzz", "fuzz_targets")
    fuzz = {f[:-3] for f in os.listdir(fuzz_dir) if f.endswith(".rs")}
    return tests, helpers, scenarios, fuzz


def read_junit(path):
    """name -> list of outcomes ("passed", "failed", "skipped")."""
    ran = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "").split("::")[-1]
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        ran.setdefault(name, []).append(outcome)
    return ran


def expand(path):
    m = re.search(r"\{([^}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand(path[: m.start()] + alt + path[m.end():]))
    return out


def cited(doc):
    """(line number, identifiers, paths) of each row's evidence column."""
    rows = []
    with open(doc, encoding="utf-8") as f:
        lines = f.read().splitlines()
    columns = None
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            columns = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if columns is None:
            columns = [i for i, c in enumerate(cells) if c.lower() in EVIDENCE]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        for i in columns:
            if i >= len(cells):
                continue
            cell = cells[i]
            idents = [t for t in re.findall(r"`([^`]+)`", cell) if IDENT.match(t)]
            paths = [p for m in PATH.finditer(cell) for p in expand(m.group(1))]
            rows.append((n, idents, paths))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--junit")
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "guarantees.md"))
    args = ap.parse_args()
    tests, helpers, scenarios, fuzz = index_workspace()
    ran = read_junit(args.junit) if args.junit else None
    problems = []
    counts = {"ran": 0, "scenario": 0, "fuzz": 0, "helper": 0, "exists": 0}
    doc = os.path.relpath(args.doc, ROOT)
    for n, idents, paths in cited(args.doc):
        for p in paths:
            if not os.path.exists(os.path.join(ROOT, p)):
                problems.append(f"{doc}:{n}: no file {p}")
        for t in idents:
            if ran is not None and t in ran:
                bad = [o for o in ran[t] if o != "passed"]
                if bad:
                    problems.append(f"{doc}:{n}: test {t} did not pass ({', '.join(bad)})")
                else:
                    counts["ran"] += 1
            elif t in scenarios:
                counts["scenario"] += 1
            elif t in fuzz:
                counts["fuzz"] += 1
            elif t in tests:
                if ran is not None:
                    problems.append(f"{doc}:{n}: test {t} exists but did not run")
                else:
                    counts["exists"] += 1
            elif t in helpers:
                counts["helper"] += 1
            else:
                problems.append(f"{doc}:{n}: {t} names no test, scenario, fuzz target or item")
    if ran is not None:
        for r in RUNNERS:
            if ran.get(r, []) == [] or any(o != "passed" for o in ran[r]):
                problems.append(f"catalogue runner test {r} did not pass: its scenarios are unproven")
    for p in problems:
        print(f"guarantees.py: {p}", file=sys.stderr)
    what = "ran and passed" if ran is not None else "exist (not checked: ran)"
    print(
        f"guarantees: {counts['ran'] + counts['exists']} cited tests {what}, "
        f"{counts['scenario']} catalogue scenarios, {counts['fuzz']} fuzz targets, "
        f"{counts['helper']} runner functions and bounds; {len(problems)} problems"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
