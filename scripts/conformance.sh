#!/usr/bin/env bash
# Run the MCP conformance client suite against mcp-conformance-client and compare the failing
# scenarios with apps/conformance/baseline.txt.
#
#   bash scripts/conformance.sh                 # both requirement sets
#   bash scripts/conformance.sh 2026-07-28      # one of them
#
# Runs, for each revision, `conformance client --requirements REVISION` (every scenario of the
# frozen set, each at its own wire version, scored or not). Fails on a failing scenario the
# baseline does not list; warns on a baseline entry that covers no failing scenario (fails
# instead with CONFORMANCE_STRICT_BASELINE=1). Prints one summary line per revision.
#
# Environment:
#   MCP_CONFORMANCE_DIR       install folder (default ${TMPDIR:-/tmp}/mcp-sansio-conformance)
#   CONFORMANCE_OUT           results folder (default target/conformance)
#   CONFORMANCE_TIMEOUT_MS    per-client timeout given to the suite (default 120000)
#   CONFORMANCE_TTL           bound on each whole suite run, seconds (default 900)
#   CONFORMANCE_BASELINE      the expected failures (default apps/conformance/baseline.txt)
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

# baseline_patterns REVISION: the patterns of that revision, one a line.
baseline_patterns() {
  awk -v rev="$1" '$0 !~ /^[[:space:]]*(#|$)/ && $1 == rev { print $2 }' "$BASELINE"
}

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
  # Scenario lines of the summary and of the "Not scored" block: "✓ name: …" / "✗ name …".
  mapfile -t passed < <(sed -n 's/^ *✓ \([^ :]*\).*/\1/p' "$dir/summary.txt" | sort -u)
  mapfile -t failed < <(sed -n 's/^ *✗ \([^ :]*\).*/\1/p' "$dir/summary.txt" | sort -u)
  total=$(( ${#passed[@]} + ${#failed[@]} ))
  if [ "$total" -eq 0 ]; then
    echo "conformance.sh: $rev: no scenario results (suite exit $suite_rc); see $dir/stderr.txt" >&2
    tail -n 20 "$dir/stderr.txt" >&2 || true
    status=1
    summaries+=("conformance $rev: 0/0 scenarios passed (suite did not run)")
    continue
  fi
  mapfile -t patterns < <(baseline_patterns "$rev")
  unexpected=()
  expected=0
  for s in "${failed[@]}"; do
    hit=""
    for p in "${patterns[@]}"; do
      # shellcheck disable=SC2053  # the pattern is a glob on purpose
      [[ "$s" == $p ]] && { hit=1; break; }
    done
    if [ -n "$hit" ]; then expected=$((expected + 1)); else unexpected+=("$s"); fi
  done
  for p in "${patterns[@]}"; do
    used=""
    for s in "${failed[@]}"; do
      # shellcheck disable=SC2053
      [[ "$s" == $p ]] && { used=1; break; }
    done
    if [ -z "$used" ]; then
      echo "conformance.sh: $rev: baseline entry '$p' covers no failing scenario (stale?)" >&2
      [ "${CONFORMANCE_STRICT_BASELINE:-0}" = 1 ] && status=1
    fi
  done
  for s in "${unexpected[@]}"; do
    echo "conformance.sh: $rev: UNEXPECTED FAILURE: $s (see $dir/results)" >&2
    status=1
  done
  checks="$(sed -n 's/^Total: //p' "$dir/summary.txt" | head -n1)"
  summaries+=("conformance $rev: ${#passed[@]}/$total scenarios passed, $expected expected failures (baseline), ${#unexpected[@]} unexpected; checks: ${checks:-?}")
done
printf '%s\n' "${summaries[@]}"
exit "$status"
