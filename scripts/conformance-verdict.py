#!/usr/bin/env python3
"""Judge one run of the MCP conformance client suite (`conformance client --requirements REV`).

    conformance-verdict.py REV SUMMARY SUITE_EXIT EXPECTED BASELINE STRICT

SUMMARY is the suite's standard output, SUITE_EXIT its exit status, EXPECTED the committed list
of the scenarios the revision runs (apps/conformance/expected-REV.txt), BASELINE the expected
failures (apps/conformance/baseline.txt), STRICT 1 to fail on a stale baseline entry (0 warns).

Fails (exit 1) when:
- the suite did not complete: an exit status other than 0 or 1 (killed by the time limit: 124
  or 137; a crash of the suite), or no "Total:" line;
- the suite's exit status disagrees with the scenarios it reported. With --requirements the suite
  exits 1 exactly when a scored scenario (one not listed under "Not scored for REV") has a failed
  check, 0 otherwise; the expected failures of the baseline can be scored (2025-11-25's
  elicitation-sep1034-client-defaults is), so 1 is the right status as long as the failing scored
  scenarios are exactly the ones the summary names;
- the number of scenarios announced ("Running requirements REV (N scenarios)"), the number
  reported and the committed list differ, or any name differs (a scenario missing from the run,
  or one the list does not know);
- a scenario reports no check at all (it would otherwise count as passed);
- a failing scenario no baseline entry covers;
- a baseline entry covers a scenario that passed, or covers no scenario of the run (stale).
Prints one summary line for the revision on standard output; the reasons on standard error.
"""

import fnmatch
import re
import sys


def names_file(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]


def main():
    rev, summary_path, suite_exit, expected_path, baseline_path, strict = sys.argv[1:7]
    suite_exit = int(suite_exit)
    strict = strict != "0"
    with open(summary_path, encoding="utf-8", errors="replace") as f:
        summary = f.read().splitlines()
    problems = []

    def problem(text):
        problems.append(text)
        print(f"conformance.sh: {rev}: {text}", file=sys.stderr)

    announced = None
    results = {}  # scenario -> (passed checks, failed checks, warnings)
    not_scored = set()
    total_line = None
    in_not_scored = False
    result_re = re.compile(r"^[✓✗] (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?$")
    for line in summary:
        m = re.match(r"^Running requirements (\S+) \((\d+) scenarios\)", line)
        if m:
            announced = int(m.group(2))
            continue
        if line.startswith("Total: "):
            total_line = line[len("Total: "):]
            continue
        if line.startswith("Not scored for "):
            in_not_scored = True
            continue
        if in_not_scored:
            m = re.match(r"^  [✓✗] (\S+) \(", line)
            if m:
                not_scored.add(m.group(1))
                continue
            if line.strip():
                in_not_scored = False
        m = result_re.match(line)
        if m:
            name = m.group(1)
            if name in results:
                problem(f"scenario {name} reported twice")
            results[name] = (int(m.group(2)), int(m.group(3)), int(m.group(4) or 0))

    if suite_exit not in (0, 1):
        problem(f"the suite did not complete (exit status {suite_exit}; 124 or 137: killed at the time limit)")
    if total_line is None:
        problem("the suite printed no \"Total:\" line (it did not finish)")

    expected = names_file(expected_path)
    expected_set = set(expected)
    if len(expected_set) != len(expected):
        problem(f"{expected_path} lists a scenario twice")
    if announced is None:
        problem("the suite did not announce how many scenarios it runs")
    elif announced != len(expected_set):
        problem(f"the suite announced {announced} scenarios, {expected_path} lists {len(expected_set)}")
    if len(results) != len(expected_set):
        problem(f"{len(results)} scenarios reported, {len(expected_set)} expected ({expected_path})")
    for name in sorted(expected_set - results.keys()):
        problem(f"MISSING SCENARIO: {name} is expected but reported no result")
    for name in sorted(results.keys() - expected_set):
        problem(f"UNKNOWN SCENARIO: {name} ran but {expected_path} does not list it")
    for name in sorted(not_scored - results.keys()):
        problem(f"scenario {name} is listed as not scored but has no result line")

    passed = sorted(n for n, (p, f, w) in results.items() if f == 0 and w == 0)
    failed = sorted(n for n, (p, f, w) in results.items() if f > 0 or w > 0)
    for name in passed:
        if results[name][0] == 0:
            problem(f"EMPTY SCENARIO: {name} reports no check at all")

    # The suite's exit status against its own report: 1 iff a scored scenario failed.
    scored_failing = [n for n in failed if n not in not_scored and results[n][1] > 0]
    if suite_exit in (0, 1) and suite_exit != (1 if scored_failing else 0):
        problem(
            f"the suite exited {suite_exit} but its summary shows "
            f"{len(scored_failing)} failing scored scenario(s) ({', '.join(scored_failing) or 'none'})"
        )

    patterns = []
    with open(baseline_path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#") and fields[0] == rev and len(fields) >= 2:
                patterns.append(fields[1])
    unexpected = [n for n in failed if not any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    for name in unexpected:
        problem(f"UNEXPECTED FAILURE: {name} (no baseline entry covers it)")
    for p in patterns:
        covers_passing = [n for n in passed if fnmatch.fnmatchcase(n, p)]
        covers_failing = [n for n in failed if fnmatch.fnmatchcase(n, p)]
        stale = None
        if covers_passing:
            stale = f"baseline entry '{p}' covers {', '.join(covers_passing)}, which now pass{'es' if len(covers_passing) == 1 else ''}: remove or narrow it"
        elif not covers_failing:
            stale = f"baseline entry '{p}' covers no scenario of the run (stale)"
        if stale:
            if strict:
                problem("STALE BASELINE: " + stale)
            else:
                print(f"conformance.sh: {rev}: warning: {stale}", file=sys.stderr)

    expected_failures = len(failed) - len(unexpected)
    verdict = "FAILED" if problems else "ok"
    print(
        f"conformance {rev}: {len(passed)}/{len(results)} scenarios passed "
        f"({len(expected_set)} expected, suite exit {suite_exit}), "
        f"{expected_failures} expected failures (baseline), {len(unexpected)} unexpected; "
        f"checks: {total_line or '?'}; {verdict}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
