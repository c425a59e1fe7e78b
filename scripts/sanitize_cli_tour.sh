#!/usr/bin/env bash
# Every command of the `sluice` binary (and of an SDK program) at least once, on scratch copies of the examples, for
# a build under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize_check.sh runs it on build/debug).
# A memory error, a leak or undefined behaviour ends the process with a sanitizer report and a non-zero code, which
# fails the step; a report printed without ending the process fails it too. Each step's exit code is checked.
# Usage: sanitize_cli_tour.sh SLUICE SDK_PROGRAM STARLAKE_DOUBLE WORK_DIR
set -euo pipefail

sluice="$(realpath "$1")"
sdk_program="$(realpath "$2")"
double="$(realpath "$3")"
work="$(realpath -m "$4")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rm -rf "$work"
mkdir -p "$work"
log="$work/step.log"
steps=0

# expect CODE PROGRAM ARGS…: runs one command in the current folder; fails the tour on another exit code or on any
# sanitizer report.
expect() {
  local code="$1" program="$2"
  shift 2
  local got=0
  "$program" "$@" >"$log" 2>&1 </dev/null || got=$?
  if [ "$got" -ne "$code" ] || grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$log"; then
    echo "sanitize_cli_tour: \`$(basename "$program") $*\` in $PWD exited $got (expected $code):" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
  steps=$((steps + 1))
}

# Every command's --help, and a usage error.
help_of=(discover compile run plan build clean status runs backfills "backfills show" "backfills cancel"
         "backfills resume" logs test audit "audit backfill" inspect starlake "starlake import" "starlake run" pipelines
         "pipelines validate" deployment "deployment list" "deployment show" "deployment diff" "deployment audit"
         "deployment promote" "deployment rollback" backfill publish doctor repair "repair active-view" reconcile
         janitor daemon worker workers schedules "schedules list" "schedules start" "schedules stop"
         "schedules preview" sensors "sensors list" "sensors show")
cd "$work"
expect 0 "$sluice" --help
expect 0 "$sluice" --version
for command in "${help_of[@]}"; do
  # shellcheck disable=SC2086  # a command of two words is two arguments
  expect 0 "$sluice" $command --help
done
expect 2 "$sluice" frobnicate

# SQL models on DuckDB: orders_demo.
cp -r "$root/examples/orders_demo" "$work/orders_demo"
cd "$work/orders_demo"
expect 0 "$sluice" discover
expect 0 "$sluice" compile
expect 0 "$sluice" inspect
expect 0 "$sluice" run --from 2026-11-01 --to 2026-11-04 --json
expect 0 "$sluice" run --select daily_revenue --partition 2026-11-03
expect 2 "$sluice" run --select daily_revenue --full-refresh --partition 2026-11-03
expect 0 "$sluice" run --select daily_revenue --full-refresh
expect 0 "$sluice" status
expect 0 "$sluice" status --json
expect 0 "$sluice" runs
run_id="$("$sluice" runs --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["runs"][0]["run_id"])')"
expect 0 "$sluice" logs "$run_id"
expect 0 "$sluice" logs "$run_id" --json
expect 0 "$sluice" backfills
backfill_id="$("$sluice" backfills --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["backfills"][0]["backfill_id"])')"
expect 0 "$sluice" backfills show "$backfill_id"
expect 0 "$sluice" backfills resume "$backfill_id"
expect 0 "$sluice" backfills cancel "$backfill_id"
expect 0 "$sluice" test
expect 0 "$sluice" audit
expect 0 "$sluice" plan
expect 0 "$sluice" clean
expect 0 "$sluice" workers

# Staged deployments on DuckDB: staged_orders.
cp -r "$root/examples/staged_orders" "$work/staged_orders"
cd "$work/staged_orders"
expect 0 "$sluice" plan --json
expect 0 "$sluice" backfill
expect 0 "$sluice" audit backfill
expect 0 "$sluice" publish
sed -i 's/  CAST(amount AS DOUBLE) AS amount,/  CAST(amount AS DOUBLE) AS amount,\n  CAST(amount >= 100 AS BOOLEAN) AS large,/' \
  pipelines/pl__orders/paid_orders.sql
expect 0 "$sluice" plan
expect 0 "$sluice" backfill
deployment="$("$sluice" deployment list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["deployments"][0]["deployment_id"])')"
expect 0 "$sluice" deployment show "$deployment"
expect 0 "$sluice" deployment diff "$deployment"
expect 0 "$sluice" deployment audit "$deployment"
expect 0 "$sluice" deployment promote "$deployment"
expect 0 "$sluice" deployment list
expect 0 "$sluice" deployment rollback --previous
expect 0 "$sluice" doctor
expect 0 "$sluice" repair active-view --table tbl__paid_orders --deployment-id "$deployment"
expect 0 "$sluice" reconcile --json
expect 0 "$sluice" janitor --json

# Direct builds on DuckDB: the build fixture of the e2e tests.
cp -r "$root/tests/projects/duck_virtual" "$work/duck_build"
cd "$work/duck_build"
expect 0 "$sluice" plan

# Orchestration: starbake with the Starlake test double.
cp -r "$root/examples/starbake" "$work/starbake"
cd "$work/starbake"
sed -i "s|@STARLAKE@|$double|g; s|@SL_ROOT@|$PWD/starlake|g" dags/*.py
export STARLAKE_DOUBLE_LOG="$PWD/starlake_calls.jsonl"
expect 0 "$sluice" starlake import dags/starbake_load.py
expect 0 "$sluice" starlake import dags/starbake_kpi.py
expect 0 "$sluice" pipelines validate
expect 0 "$sluice" schedules list
expect 0 "$sluice" schedules preview starbake_load_schedule -n 3
expect 0 "$sluice" schedules preview starbake_load_schedule --json
expect 0 "$sluice" schedules stop starbake_load_schedule
expect 0 "$sluice" schedules start starbake_load_schedule
expect 0 "$sluice" sensors list
expect 0 "$sluice" daemon --now 2026-07-17T23:59:58Z --until 2026-07-18T00:00:03Z --interval 200 --sensor-interval 1
expect 0 "$sluice" sensors show starbake_kpi_sensor -n 5
expect 0 "$sluice" starlake run starbake_load --logical-datetime 2026-07-19T00:00:00+0000
expect 0 "$sluice" starlake run starbake_load --logical-datetime 2026-07-20T00:00:00+0000 --queue
expect 0 "$sluice" worker --until-idle --heartbeat 100
expect 0 "$sluice" runs
expect 0 "$sluice" status

# An SDK program's commands: the seed's examples.
mkdir -p "$work/sdk_orders"
cd "$work/sdk_orders"
expect 0 env -u SEGMENTSTREAM_WAREHOUSE_ENGINE -u SEGMENTSTREAM_WAREHOUSE_CATALOG \
  -u SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE "$sdk_program" inspect
export SEGMENTSTREAM_WAREHOUSE_ENGINE=duckdb SEGMENTSTREAM_WAREHOUSE_CATALOG=warehouse.duckdb
export SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE=analytics
expect 0 "$sdk_program" run --select orders+
expect 0 "$sdk_program" run --select daily_orders --from 2026-01-01 --to 2026-01-05
expect 0 "$sdk_program" status
expect 0 "$sdk_program" runs
expect 0 "$sdk_program" backfills
expect 0 "$sdk_program" clean

echo "sanitize_cli_tour: $steps commands ran under the sanitizers with the exit codes expected"
