#!/usr/bin/env bash
# Run the MCP conformance client suite against mcp-conformance-client and judge each run against
# the committed lists: apps/conformance/expected-REVISION.txt (the scenarios that must run) and
# apps/conformance/baseline.txt (the failures allowed).
#
#   bash scripts/conformance.sh                 # both requirement sets
#   bash scripts/conformance.sh 2026-07-28      # one of them
#
# Runs, for each revision, `conformance client --requirements REVISION` (every scenario of the
# frozen set, each at its own wire version, scored or not), then scripts/conformance-verdict.py,
# which fails the run when: the suite did not complete (an exit status other than 0 or 1, e.g.
# killed at CONFORMANCE_TTL), or its exit status disagrees with its report (1 exactly when a
# scored scenario failed); the scenarios announced, reported and listed in the expected file
# differ in number or in any name (a scenario missing from the run fails); a scenario reports no
# check; a failing scenario no baseline entry covers; a baseline entry covers a scenario that now
# passes, or none at all. Prints one summary line per revision.
#
# Environment:
#   MCP_CONFORMANCE_DIR       install folder (default ${TMPDIR:-/tmp}/mcp-sansio-conformance)
#   CONFORMANCE_OUT           results folder (default target/conformance)
#   CONFORMANCE_TIMEOUT_MS    per-client timeout given to the suite (default 120000)
#   CONFORMANCE_TTL           bound on each whole suite run, seconds (default 900)
#   CONFORMANCE_BASELINE      the expected failures (default apps/conformance/baseline.txt)
#   CONFORMANCE_EXPECTED_DIR  folder of the expected-REVISION.txt lists (default apps/conformance)
#   CONFORMANCE_STRICT_BASELINE  1 (default): a stale baseline entry fails the run; 0: it warns
#   MCP_CONFORMANCE_CLIENT    a client binary to test instead of building mcp-conformance-client
# The suite's mock servers listen on all interfaces of this machine while a run lasts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
MCP_CONFORMANCE_DIR="${MCP_CONFORMANCE_DIR:-${TMPDIR:-/tmp}/mcp-sansio-conformance}"
export MCP_CONFORMANCE_DIR
OUT="${CONFORMANCE_OUT:-$ROOT/target/conformance}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-120000}"
TTL="${CONFORMANCE_TTL:-900}"
BASELINE="${CONFORMANCE_BASELINE:-$ROOT/apps/conformance/baseline.txt}"
EXPECTED_DIR="${CONFORMANCE_EXPECTED_DIR:-$ROOT/apps/conformance}"
STRICT="${CONFORMANCE_STRICT_BASELINE:-1}"
revisions=("$@")
[ ${#revisions[@]} -eq 0 ] && revisions=(2026-07-28 2025-11-25)

bash "$ROOT/scripts/install-conformance.sh" >&2
cli="$MCP_CONFORMANCE_DIR/suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"
for d in "$MCP_CONFORMANCE_DIR"/node22/node_modules/node-linux-*/bin; do
  [ -x "$d/node" ] && PATH="$d:$PATH"
done
export PATH

if [ -n "${MCP_CONFORMANCE_CLIENT:-}" ]; then
  client="$MCP_CONFORMANCE_CLIENT"
else
  cargo build -q -p mcp-conformance-client >&2
  target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
  client="$target_dir/debug/mcp-conformance-client"
fi
[ -x "$client" ] || { echo "conformance.sh: no client binary at $client" >&2; exit 1; }
case "$client" in *" "*) echo "conformance.sh: the suite splits its --command on spaces; $client has one" >&2; exit 1 ;; esac

status=0
summaries=()
for rev in "${revisions[@]}"; do
  dir="$OUT/$rev"
  rm -rf "$dir"
  mkdir -p "$dir"
  echo "== conformance client --requirements $rev (results in $dir)" >&2
  set +e
  (cd "$dir" && timeout -k 5 "$TTL" node "$cli" client --command "$client" \
    --requirements "$rev" --timeout "$TIMEOUT_MS" -o "$dir/results") \
    >"$dir/summary.txt" 2>"$dir/stderr.txt"
  suite_rc=$?
  set -e
  cat "$dir/summary.txt"
  expected="$EXPECTED_DIR/expected-$rev.txt"
  if [ ! -f "$expected" ]; then
    echo "conformance.sh: $rev: no list of expected scenarios at $expected" >&2
    status=1
    summaries+=("conformance $rev: no expected list; FAILED")
    continue
  fi
  set +e
  line="$(python3 "$ROOT/scripts/conformance-verdict.py" "$rev" "$dir/summary.txt" "$suite_rc" \
    "$expected" "$BASELINE" "$STRICT")"
  verdict_rc=$?
  set -e
  if [ "$verdict_rc" -ne 0 ]; then
    status=1
    [ "$suite_rc" -eq 0 ] || [ "$suite_rc" -eq 1 ] || tail -n 20 "$dir/stderr.txt" >&2 || true
  fi
  summaries+=("${line:-conformance $rev: verdict failed (exit $verdict_rc); FAILED}")
done
printf '%s\n' "${summaries[@]}"
exit "$status"
