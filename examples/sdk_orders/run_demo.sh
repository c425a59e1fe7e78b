#!/usr/bin/env bash
# Runs the C++ SDK example (seed 000's two examples) on embedded DuckDB, in a scratch folder under build/demo.
# Usage: run_demo.sh <path to the sdk_orders program>
set -euo pipefail
program="$(realpath "$1")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/../.." && pwd)/build/demo/sdk_orders"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

echo "== sdk_orders inspect   (offline: no SEGMENTSTREAM_WAREHOUSE_* needed, nothing connects)"
env -u SEGMENTSTREAM_WAREHOUSE_ENGINE -u SEGMENTSTREAM_WAREHOUSE_CATALOG \
  -u SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE "$program" inspect
echo

export SEGMENTSTREAM_WAREHOUSE_ENGINE=duckdb
export SEGMENTSTREAM_WAREHOUSE_CATALOG=warehouse.duckdb
export SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE=analytics
echo "== sdk_orders run --select orders+   (bronze.orders memtable → silver.orders filtered)"
"$program" run --select orders+
echo
echo "== sdk_orders run --select daily_orders --from 2026-01-01 --to 2026-01-25   (ten partitions per run)"
"$program" run --select daily_orders --from 2026-01-01 --to 2026-01-25
echo
echo "== sdk_orders status"
"$program" status
echo
echo "== sdk_orders runs"
"$program" runs
