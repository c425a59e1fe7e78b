#!/usr/bin/env python3
"""Virtual plan benchmark: `plan` of a virtual project against a live ClickHouse server, in warehouse calls (the
target: a constant, not one per object) and in wall time as a ratio to `compile` of the same project.

Starts its own server (scripts/clickhouse_test_server.sh, in WORK/clickhouse) and stops it at the end; writes one
project per size with generate_virtual_project.py (WORK/virtual_N) and runs virtual_plan_bench over them all, which
measures, per project and in ROUNDS rounds, compile (LoadProject + WriteArtifacts, into a new folder and over its own
output) and plan (LoadProject + ReadVirtualActualState + PlanVirtual) on an empty catalog and after two pipelines are
deployed, and fails when the warehouse calls differ between the sizes. Prints a table of the medians, then the
program's own report (each read's time).

usage: run_bench.py --bench BIN --work DIR [--models 100,1000] [--rounds 5]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SERVER_SCRIPT = os.path.join(REPO, "scripts", "clickhouse_test_server.sh")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True, help="build/release/bench/virtual_plan_bench")
    parser.add_argument("--work", required=True)
    parser.add_argument("--models", default="100,1000", help="project sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    projects = []
    for models in [int(m) for m in args.models.split(",")]:
        folder = os.path.join(args.work, f"virtual_{models}")
        subprocess.run([sys.executable, os.path.join(HERE, "generate_virtual_project.py"), folder, "--models",
                        str(models), "--database", "virtual_bench"], check=True, stdout=subprocess.DEVNULL)
        projects.append(folder)

    server = os.path.join(args.work, "clickhouse")
    shutil.rmtree(server, ignore_errors=True)
    subprocess.run(["bash", SERVER_SCRIPT, "start", server], check=True, stdout=subprocess.DEVNULL)
    try:
        env = dict(os.environ, SLUICE_TEST_CLICKHOUSE_DIR=server)
        run = subprocess.run([args.bench, str(args.rounds)] + projects, env=env, capture_output=True, text=True)
    finally:
        subprocess.run(["bash", SERVER_SCRIPT, "stop", server], check=True, stdout=subprocess.DEVNULL)
    sys.stderr.write(run.stderr)
    results = [json.loads(line[len("result "):]) for line in run.stdout.splitlines() if line.startswith("result ")]
    if not results:
        sys.stdout.write(run.stdout)
        sys.exit(run.returncode or 1)

    print(f"virtual plan, {args.rounds} rounds, medians (ms); plan = load + read state + PlanVirtual")
    header = ("models", "catalog", "compile cold", "compile warm", "load", "read", "plan", "total",
              "total/compile warm", "(read+plan)/compile warm", "warehouse calls", "objects")
    rows = []
    for r in results:
        calls = ", ".join(f"{method} {count}" for method, count in sorted(r["calls"].items()))
        actions = ", ".join(f"{action} {count}" for action, count in sorted(r["actions"].items()))
        rows.append((str(r["models"]), r["case"], f"{r['compile_cold_ms']:.1f}", f"{r['compile_ms']:.1f}",
                     f"{r['load_ms']:.1f}",
                     f"{r['read_ms']:.1f}", f"{r['plan_ms']:.1f}", f"{r['total_ms']:.1f}",
                     f"{r['total_ms'] / r['compile_ms']:.2f}",
                     f"{(r['read_ms'] + r['plan_ms']) / r['compile_ms']:.2f}",
                     f"{sum(r['calls'].values())} ({calls})", actions))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    print()
    print("\n".join(line for line in run.stdout.splitlines() if not line.startswith("result ")))
    sys.exit(run.returncode)


if __name__ == "__main__":
    main()
