#!/usr/bin/env python3
"""Run-queue benchmark: N trivial runs (one task, the Starlake test double, which exits at once) are queued in a
state store and drained by 1, 2 and 4 `sluice worker --until-idle` processes. The floor is the same N commands run
one after the other by this script (what the runs execute, without any queue). Prints, per worker count, the median
time to drain the queue, runs per second and the ratio to the floor. By default on the PostgreSQL test server
(scripts/postgres_test_server.sh, a fresh database per round); --store sqlite uses the project's SQLite file.

usage: run_bench_queue.py --sluice BIN --queue-runs BIN --double BIN --work DIR [--runs 1000] [--rounds 3]
                          [--store postgres|sqlite]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
PIPELINE = """pipeline: trivial
kind: transform
options:
  SL_STARLAKE_PATH: "{double}"
  retries: "0"
dependencies:
  - name: work.step
    type: task
"""


def start_postgres(work):
    folder = os.path.join(work, "postgres")
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "postgres_test_server.sh"), "start", folder], check=True,
                   capture_output=True)
    read = lambda name: open(os.path.join(folder, name)).read().strip()
    return folder, read("port"), read("user"), read("password")


def fresh_database(server, name):
    _, port, user, password = server
    env = dict(os.environ, PGPASSWORD=password)
    for sql in (f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"'):
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", user, "-d", "postgres", "-qc", sql], check=True,
                       env=env, capture_output=True)
    return f"postgresql://{user}:{password}@127.0.0.1:{port}/{name}"


def drain(args, server, workers, round_index):
    project = os.path.join(args.work, "queue_project")
    shutil.rmtree(project, ignore_errors=True)
    os.makedirs(os.path.join(project, "pipelines"))
    with open(os.path.join(project, "streambuild_project.toml"), "w") as f:
        f.write('name = "queue_bench"\n')
    with open(os.path.join(project, "pipelines", "trivial.yml"), "w") as f:
        f.write(PIPELINE.format(double=args.double))
    env = dict(os.environ)
    env.pop("STARLAKE_DOUBLE_LOG", None)
    if server:
        env["SLUICE_STATE_URL"] = fresh_database(server, f"queue_bench_{workers}_{round_index}")
    subprocess.run([args.queue_runs, project, "trivial", str(args.runs)], check=True, env=env)
    start = time.monotonic()
    processes = [subprocess.Popen([args.sluice, "--project-dir", project, "worker", "--until-idle",
                                   "--max-concurrent-runs", "2", "--heartbeat", "100"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(workers)]
    for process in processes:
        if process.wait() != 0:
            raise SystemExit(f"a worker exited with {process.returncode}")
    return time.monotonic() - start


def floor(args):
    start = time.monotonic()
    for _ in range(args.runs):
        subprocess.run([args.double, "transform", "--name", "work.step"], check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--queue-runs", required=True)
    parser.add_argument("--double", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", choices=["postgres", "sqlite"], default="postgres")
    args = parser.parse_args()
    args.sluice, args.queue_runs, args.double = map(os.path.abspath, (args.sluice, args.queue_runs, args.double))
    os.makedirs(args.work, exist_ok=True)
    server = start_postgres(args.work) if args.store == "postgres" else None
    try:
        floors = [floor(args) for _ in range(args.rounds)]
        base = statistics.median(floors)
        print(f"run-queue benchmark: {args.runs} trivial runs, {args.store} state store, {args.rounds} rounds (medians)")
        print(f"  floor (the {args.runs} commands one after the other, no queue): {base:.2f} s")
        for workers in (1, 2, 4):
            times = [drain(args, server, workers, r) for r in range(args.rounds)]
            median = statistics.median(times)
            print(f"  {workers} worker{'s' if workers > 1 else ' '}: {median:.2f} s, {args.runs / median:.0f} runs/s, "
                  f"{median / base:.2f}x the floor")
    finally:
        if server:
            subprocess.run(["bash", os.path.join(ROOT, "scripts", "postgres_test_server.sh"), "stop", server[0]],
                           capture_output=True)


if __name__ == "__main__":
    main()
