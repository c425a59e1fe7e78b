#!/usr/bin/env python3
"""Orchestrator benchmark: runs orchestrate_bench (one scheduler pass over 10,000 schedules and one sensor evaluation
over 1,000 datasets, each against a floor that only reads the state it needs), then measures the delay from a
schedule's tick to the start of its run's first step under `sluice daemon` (examples/starbake's load job, the
Starlake CLI being the test double; the daemon's pass interval is 100 ms, so the delay is bounded by it plus the
work). Prints medians.

usage: run_bench_orchestrate.py --sluice BIN --bench BIN --double BIN --work DIR [--rounds 5]
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "starbake")
TICK = datetime.datetime(2026, 7, 18, tzinfo=datetime.timezone.utc)


def parse_utc(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def tick_to_first_step(sluice, double, work):
    project = os.path.join(work, "starbake")
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(EXAMPLE, project)
    dag = os.path.join(project, "dags", "starbake_load.py")
    with open(dag) as f:
        text = f.read().replace("@STARLAKE@", double).replace("@SL_ROOT@", os.path.join(project, "starlake"))
    with open(dag, "w") as f:
        f.write(text)
    run = lambda *args: subprocess.run([sluice, "--project-dir", project, *args], check=True, capture_output=True,
                                       text=True).stdout
    run("starlake", "import", dag, "--output", os.path.join(project, "pipelines"))
    run("daemon", "--now", "2026-07-17T23:59:59Z", "--until", "2026-07-18T00:00:02Z", "--interval", "100")
    run_id = json.loads(run("runs", "--json"))["runs"][0]["run_id"]
    events = json.loads(run("logs", run_id, "--json"))["events"]
    first = next(e for e in events if e["kind"] == "step_started")
    return (parse_utc(first["at"]) - TICK).total_seconds() * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--bench", required=True, help="orchestrate_bench")
    parser.add_argument("--double", required=True, help="the Starlake test double")
    parser.add_argument("--work", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([args.bench, str(args.rounds)], check=True)
    delays = [tick_to_first_step(os.path.abspath(args.sluice), os.path.abspath(args.double), args.work)
              for _ in range(args.rounds)]
    print(f"tick to the first step's start: median {statistics.median(delays):.0f} ms "
          f"(min {min(delays):.0f}, max {max(delays):.0f}; pass interval 100 ms)")


if __name__ == "__main__":
    main()
