#!/usr/bin/env bash
# Mutation testing of the limits and security decisions: runs cargo-mutants (a pinned version,
# installed here if absent) one module at a time, each mutant against only the test targets that
# guard that module (the table below), so a run fits a small machine.
#
# Usage:
#   scripts/mutants.sh --quick              the CI shard: one small module (a few minutes)
#   scripts/mutants.sh [--full]             every module of the table, in order (hours: by hand)
#   scripts/mutants.sh MODULE...            the named modules of the table (see --list)
#   scripts/mutants.sh --list               the table: module, package, files, test targets
#   scripts/mutants.sh --summary            per module of the last run: caught, missed, unviable,
#                                           timeout, score (the rows of docs/mutants.md)
# Options (before or after the modules):
#   --shard K/N    run only shard K of N of each module's mutants (cargo-mutants --shard)
#   --in-place     mutate the source tree itself, not a copy (faster: reuses target/; only for a
#                  tree nobody else reads or builds while it runs; the files are restored after
#                  each mutant)
#   --jobs N       mutants built and tested at once, each in its own copy (default 1; not with
#                  --in-place)
#   --tests "T…"   these test targets instead of the row's (e.g. "lib edges_auth"): a quick
#                  first pass, since a mutant caught by fewer targets is caught by all of them;
#                  then run the module again with the row's targets and `-- --iterate`, which
#                  tries only the mutants the first pass did not catch
#   --             the rest is passed to cargo-mutants as is (e.g. --re 'charge' or --list)
#
# Results go to target/mutants/<module>/mutants.out (outcomes.json, caught.txt, missed.txt, …).
# The exit code is cargo-mutants' worst: 0 all caught or unviable, 2 a mutant survived,
# 3 a timeout, 4 the unmutated tests failed; or 5 when a mutant was not built (its build found
# the package `Fresh`: target/ shared with another tree), whose outcome does not count.
# docs/mutants.md records the last full run.
set -euo pipefail
cd "$(dirname "$0")/.."

MUTANTS_VERSION=27.1.0

# module | package | files (cargo-mutants --file globs, comma-separated) | excluded files (globs,
# comma-separated, or -) | test targets that guard it ("lib" is the crate's unit tests; a target
# whose file does not exist is skipped) | tests skipped (names given to the test harness's
# --skip, space-separated, or -: stress tests that take minutes on each mutant)
TABLE=$(cat <<'EOF'
context|mcp-sansio|src/context.rs|-|lib store_keys list_cache edges_context|-
budget|mcp-sansio|src/budget.rs|-|lib hostile connection http1_socket h2_mcp edges_budget|hostile::catalog_abuse
auth-metadata|mcp-sansio|src/auth/metadata.rs|-|lib auth_discovery auth_flow auth_pin auth_binding dpop_requests edges_auth|-
sse|mcp-sansio|src/sse.rs|-|lib sse hostile body_buffer standalone_get edges_sse|hostile::catalog_abuse
http1|mcp-sansio|src/http1/**|-|lib http1 http1_socket body_buffer debug_redaction edges_http1|-
xmcp|mcp-sansio|src/xmcp/**|-|lib xmcp connection edges_xmcp|-
list|mcp-sansio|src/list/**|-|lib list list_cache edges_list|lib::json::tests::specials_marks_the_first_special_byte_exactly lib::json::tests::strings_of_every_length_with_a_special_byte_anywhere
call|mcp-sansio|src/call/**|-|lib call input_required edges_call|-
auth|mcp-sansio|src/auth/**|src/auth/metadata.rs,src/auth/flow/**|lib auth_discovery auth_flow auth_pin auth_binding auth_challenge auth_challenge_fields auth_redact dpop_requests debug_redaction edges_auth|lib::json::tests::specials_marks_the_first_special_byte_exactly lib::json::tests::strings_of_every_length_with_a_special_byte_anywhere lib::xmcp::check::tests::differential::agrees_with_the_serde_readings lib::call::pass::tests::decodes_any_escape_at_any_place_of_a_step_as_serde_json lib::call::pass::tests::decodes_generated_strings_as_serde_json
h2|mcp-sansio|src/h2/**|src/h2/hpack/**,src/h2/frame.rs|lib h2_client h2_frames h2_hpack h2_hpack_differential h2_long_lived h2_mcp hostile_h2 edges_h2 edges_h2_reset edges_h2_client|-
h2-hpack|mcp-sansio|src/h2/hpack/**|-|lib h2_hpack h2_hpack_differential hostile_h2 debug_redaction edges_h2|lib::json::tests::specials_marks_the_first_special_byte_exactly lib::json::tests::strings_of_every_length_with_a_special_byte_anywhere lib::xmcp::check::tests::differential::agrees_with_the_serde_readings lib::call::pass::tests::decodes_any_escape_at_any_place_of_a_step_as_serde_json lib::call::pass::tests::decodes_generated_strings_as_serde_json
h2-frame|mcp-sansio|src/h2/frame.rs|-|h2_frames hostile_h2 edges_h2|-
net-policy|mcp-sansio-net|adapters/net/src/guard/policy.rs|-|lib edges_policy|-
net-cache|mcp-sansio-net|adapters/net/src/cache.rs|-|lib edges_cache|-
net-pins|mcp-sansio-net|adapters/net/src/pins.rs|-|lib edges_pins|-
trace-context|mcp-sansio|src/trace_context.rs|-|lib trace_context edges_trace_context|-
core-pins|mcp-sansio|src/pin.rs|-|lib tool_pins tool_pins_relist edges_pins_core|lib::json::tests::specials_marks_the_first_special_byte_exactly lib::json::tests::strings_of_every_length_with_a_special_byte_anywhere
task|mcp-sansio|src/task/**|-|lib tasks tasks_hostile tasks_legacy tasks_parse task_principal transitions edges_task|lib::json::tests::specials_marks_the_first_special_byte_exactly lib::json::tests::strings_of_every_length_with_a_special_byte_anywhere
redis-frame|mcp-sansio-redis|crates/redis/src/frame.rs|-|lib store edges_frame|-
redis-conn|mcp-sansio-redis|crates/redis/src/conn.rs|-|lib store_faults store_tls edges_conn edges_store|-
redis-store|mcp-sansio-redis|crates/redis/src/store.rs|-|lib store store_tasks store_faults edges_store|-
redis-tokens|mcp-sansio-redis|crates/redis/src/tokens.rs,crates/redis/src/tokens/**|-|lib tokens_entry tokens_redis edges_tokens|-
net-tokens|mcp-sansio-net|adapters/net/src/auth/tokens.rs|-|lib edges_tokens|-
EOF
)
QUICK_MODULE=context

crate_dir() {
  case "$1" in
    mcp-sansio) echo . ;;
    mcp-sansio-net) echo adapters/net ;;
    mcp-sansio-redis) echo crates/redis ;;
    *) echo "unknown package $1" >&2; exit 1 ;;
  esac
}

row() { printf '%s\n' "$TABLE" | awk -F'|' -v m="$1" '$1 == m'; }

# One row per module that has results: the counts of cargo-mutants' outcomes.json, and the score
# (caught / (caught + missed + timeout): unviable mutants do not build, so they test nothing).
summary() {
  python3 - "$(printf '%s\n' "$TABLE" | cut -d'|' -f1)" <<'PY'
import json, os, sys
print("| module | mutants | caught | missed | unviable | timeout | score |")
print("|---|---|---|---|---|---|---|")
for m in sys.argv[1].split():
    path = os.path.join("target/mutants", m, "mutants.out", "outcomes.json")
    if not os.path.exists(path):
        continue
    with open(path) as f:
        d = json.load(f)
    c, mi, u, t = d["caught"], d["missed"], d["unviable"], d["timeout"]
    viable = c + mi + t
    score = f"{100 * c / viable:.0f} %" if viable else "-"
    print(f"| {m} | {d['total_mutants']} | {c} | {mi} | {u} | {t} | {score} |")
PY
}

# Lists the mutants of an output directory whose build did not compile the mutated package
# (their log has no `Compiling PACKAGE`: cargo found it `Fresh`); false when there is one.
unbuilt() {
  python3 - "$1" "$2" <<'PY'
import json, os, re, sys
out, package = sys.argv[1], sys.argv[2]
path = os.path.join(out, "outcomes.json")
if not os.path.exists(path):
    sys.exit(0)
with open(path) as f:
    outcomes = json.load(f)["outcomes"]
compiled = re.compile(r"^\s*Compiling " + re.escape(package) + r" v", re.M)
bad = 0
for o in outcomes:
    if not isinstance(o["scenario"], dict) or "log_path" not in o:
        continue
    with open(os.path.join(out, o["log_path"]), errors="replace") as f:
        if not compiled.search(f.read()):
            bad += 1
            print("not built:", o["scenario"]["Mutant"]["name"], file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

modules=()
shard=""
in_place=0
jobs=1
tests_override=""
extra=()
mode=full
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) mode=quick ;;
    --full) mode=full ;;
    --list) printf '%s\n' "$TABLE" | column -t -s'|'; exit 0 ;;
    --summary) summary; exit 0 ;;
    --shard) shard="$2"; shift ;;
    --in-place) in_place=1 ;;
    --jobs) jobs="$2"; shift ;;
    --tests) tests_override="$2"; shift ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "unknown option $1 (see the head of $0)" >&2; exit 1 ;;
    *) [ -n "$(row "$1")" ] || { echo "no module $1 in the table (--list)" >&2; exit 1; }
       modules+=("$1") ;;
  esac
  shift
done
if [ ${#modules[@]} -eq 0 ]; then
  if [ "$mode" = quick ]; then
    modules=("$QUICK_MODULE")
  else
    mapfile -t modules < <(printf '%s\n' "$TABLE" | cut -d'|' -f1)
  fi
fi

if [ "$(cargo mutants --version 2>/dev/null)" != "cargo-mutants $MUTANTS_VERSION" ]; then
  echo "== installing cargo-mutants $MUTANTS_VERSION"
  cargo install cargo-mutants --locked --version "$MUTANTS_VERSION"
fi

worst=0
for m in "${modules[@]}"; do
  IFS='|' read -r _ package files excluded tests skips <<<"$(row "$m")"
  [ -n "$tests_override" ] && tests=$tests_override
  dir=$(crate_dir "$package")
  # The test timeout cargo-mutants sets from the unmutated run (5 times it, at least 20 s) is too
  # short when the machine is shared: a test binary slowed by other work would count as a timed
  # out mutant. At least 120 s per test run; a mutant that really hangs still times out.
  args=(mutants --package "$package" --no-shuffle --colors never --output "target/mutants/$m"
    --minimum-test-timeout 120)
  IFS=',' read -ra globs <<<"$files"
  for g in "${globs[@]}"; do args+=(--file "$g"); done
  if [ "$excluded" != - ]; then
    IFS=',' read -ra globs <<<"$excluded"
    for g in "${globs[@]}"; do args+=(--exclude "$g"); done
  fi
  [ -n "$shard" ] && args+=(--shard "$shard")
  if [ "$in_place" = 1 ]; then args+=(--in-place); else args+=(--jobs "$jobs"); fi
  # The test targets go to every cargo invocation (--cargo-arg), the build of each mutant
  # included: cargo-mutants otherwise builds every test target of the package for each mutant
  # (`cargo test --no-run`), and only then runs the named ones.
  targets=()
  for t in $tests; do
    if [ "$t" = lib ]; then
      targets+=(--cargo-arg=--lib)
    elif [ -f "$dir/tests/$t.rs" ] || [ -f "$dir/tests/$t/main.rs" ]; then
      targets+=("--cargo-arg=--test=$t")
    fi
  done
  harness=()
  if [ "$skips" != - ]; then
    harness=(--)
    for t in $skips; do harness+=(--skip "${t#*::}"); done
  fi
  echo "== mutants: $m ($files) against ${targets[*]#--cargo-arg=} ${harness[*]}"
  mkdir -p "target/mutants/$m"
  rc=0
  nice -n 10 cargo "${args[@]}" "${targets[@]}" "${extra[@]}" -- "${harness[@]}" || rc=$?
  # A mutant whose build found the mutated package `Fresh` was not compiled: its outcome is the
  # previous binary's. cargo decides freshness from file times in target/, so this happens when
  # another tree shares target/'s metadata (e.g. a target/ made of hard links of another's).
  if ! unbuilt "target/mutants/$m/mutants.out" "$package"; then
    echo "== mutants: $m: some mutants were not built (above); their outcomes do not count" >&2
    [ "$rc" -lt 5 ] && rc=5
  fi
  [ "$rc" -gt "$worst" ] && worst=$rc
done
exit "$worst"
