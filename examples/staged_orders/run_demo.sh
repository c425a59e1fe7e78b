#!/usr/bin/env bash
# Staged deployments on embedded DuckDB, in a scratch copy under build/demo: plan, backfill into shadow tables,
# audit, publish (the stable views switch in one transaction), change a model, deploy again, roll back.
# Usage: run_demo.sh <path to the sluice binary>
set -euo pipefail
sluice="$(realpath "$1")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(cd "$here/../.." && pwd)/build/demo"
rm -rf "$work/staged_orders"
mkdir -p "$work"
cp -r "$here" "$work/staged_orders"
cd "$work/staged_orders"

step() { echo; echo "== sluice $*"; "$sluice" "$@"; }

step plan
step backfill
step audit backfill
step publish
echo
echo "== add a column to paid_orders (a non-breaking change)"
sed -i 's/  CAST(amount AS DOUBLE) AS amount,/  CAST(amount AS DOUBLE) AS amount,\n  CAST(amount >= 100 AS BOOLEAN) AS large,/' \
  pipelines/pl__orders/paid_orders.sql
step plan
step backfill
step publish
step deployment list
step deployment rollback --previous
step doctor
