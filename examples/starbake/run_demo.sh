#!/usr/bin/env bash
# StarBake under `sluice daemon`, in a scratch copy under build/demo: import the generated DAG modules into pipeline
# files, then let the daemon take the load job from its midnight tick to materializations, and the KPI job from the
# sensor that watches those materializations to its own. The Starlake CLI is the test double of tests/support (it
# records each call and succeeds), so no Java or Starlake install is needed; set SL_STARLAKE_PATH in the DAG modules
# to a real `starlake` to run the real thing.
# Usage: run_demo.sh <path to the sluice binary> <path to the starlake test double>
set -euo pipefail
sluice="$(realpath "$1")"
starlake="$(realpath "$2")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/../.." && pwd)/build/demo"
rm -rf "$work/starbake"
mkdir -p "$work"
cp -r "$here" "$work/starbake"
cd "$work/starbake"
sed -i "s|@STARLAKE@|$starlake|g; s|@SL_ROOT@|$PWD/starlake|g" dags/*.py
export STARLAKE_DOUBLE_LOG="$PWD/starlake_calls.jsonl"

echo "== sluice starlake import dags/starbake_load.py   (writes pipelines/starbake_load.yml)"
"$sluice" starlake import dags/starbake_load.py
echo
echo "== sluice starlake import dags/starbake_kpi.py"
"$sluice" starlake import dags/starbake_kpi.py
echo
echo "== sluice schedules preview starbake_load_schedule -n 3"
SLUICE_NOW=2026-07-17T23:59:58Z "$sluice" schedules preview starbake_load_schedule -n 3
echo
echo "== sluice daemon   (clock from 2026-07-17T23:59:58Z: the midnight tick fires, the load materializes its"
echo "   tables, the KPI sensor sees both upstreams and runs the transforms)"
"$sluice" daemon --now 2026-07-17T23:59:58Z --until 2026-07-18T00:00:03Z --interval 200 --sensor-interval 1
echo
echo "== sluice runs"
"$sluice" runs
echo
echo "== sluice status   (the datasets the jobs materialized)"
"$sluice" status
echo
echo "== sluice sensors show starbake_kpi_sensor"
"$sluice" sensors show starbake_kpi_sensor -n 5
echo
echo "== the Starlake commands the jobs ran"
python3 - "$STARLAKE_DOUBLE_LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    print("  starlake " + " ".join(json.loads(line)["argv"]))
PY
