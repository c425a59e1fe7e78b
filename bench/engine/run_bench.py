#!/usr/bin/env python3
"""Engine benchmark: `sluice run` of a chain of N trivial DuckDB table models over a 100-row seed against the floor,
the same 1 seed load + N `CREATE OR REPLACE TABLE … AS SELECT` statements run by `engine_floor` on one DuckDB
connection (generate_project.py writes both).

The floor and Sluice run in rounds, one run of each per round, each into a fresh database file (and Sluice with a
fresh state store), so a slow or fast spell of the machine falls on both alike. Prints, per size, the medians of
wall time and of CPU time (user + system, every thread: steadier than wall time on a shared machine), the ratios
sluice/floor and the overhead per model, (sluice - floor) / N, in milliseconds.

usage: run_bench.py --sluice BIN --floor BIN --work DIR [--sizes 100,1000] [--large] [--rounds 5]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(argv, cwd=None):
    """(wall seconds, CPU seconds) of one run; raises on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def remove_database(folder):
    """Removes the database file (with its WAL and lock) and Sluice's state store from `folder`."""
    for name in ("warehouse.duckdb", "warehouse.duckdb.wal", "warehouse.duckdb.lock"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            os.remove(path)
    shutil.rmtree(os.path.join(folder, ".sluice"), ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--large", action="store_true", help="also 10,000 models (minutes a round)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per size (3 at 10,000 models unless more)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.large and 10000 not in sizes:
        sizes.append(10000)
    sluice = os.path.abspath(args.sluice)
    floor = os.path.abspath(args.floor)

    rows = []
    print(HEADER, flush=True)
    for size in sizes:
        project = os.path.abspath(os.path.join(args.work, f"engine_{size}"))
        floor_dir = os.path.join(project, "floor")  # the floor's database is named like the project's: same SQL
        subprocess.run([sys.executable, os.path.join(HERE, "generate_project.py"), project, "--models", str(size)],
                       check=True)
        os.makedirs(floor_dir)
        os.sync()  # the generated files go to disk before anything is timed
        rounds = args.rounds if size < 10000 else min(args.rounds, 3)
        samples = {"floor": [], "sluice": []}
        for _ in range(rounds):
            remove_database(floor_dir)
            samples["floor"].append(measure([floor, os.path.join(floor_dir, "warehouse.duckdb"),
                                             os.path.join(project, "floor.sql")]))
            remove_database(project)
            samples["sluice"].append(measure([sluice, "--project-dir", project, "run"]))
        remove_database(floor_dir)  # 256 KiB a table: 2.6 GB at 10,000 models
        remove_database(project)
        row = {"size": size, "rounds": rounds}
        for column, runs in samples.items():
            row[column] = tuple(statistics.median(run[k] for run in runs) for k in (0, 1))
        # The median of the per-round ratios: each compares two runs in one spell of the machine.
        row["ratio"] = tuple(statistics.median(s[k] / f[k] for f, s in zip(samples["floor"], samples["sluice"]))
                             for k in (0, 1))
        rows.append(row)
        print_row(row, flush=True)
    print("\nmedians in seconds; wall = elapsed, cpu = user + system of every thread; ratio = median of the rounds' "
          "sluice/floor; ms/model = (sluice - floor) / models")


HEADER = (f"{'models':>7} {'rounds':>6} {'floor wall':>10} {'sluice wall':>11} {'ratio':>6} {'ms/model':>8} "
          f"{'floor ms/stmt':>13} {'floor cpu':>9} {'sluice cpu':>10} {'ratio':>6} {'cpu ms/model':>12}")


def print_row(row, flush=False):
    size = row["size"]
    (floor_wall, floor_cpu), (sluice_wall, sluice_cpu) = row["floor"], row["sluice"]
    print(f"{size:>7} {row['rounds']:>6} {floor_wall:10.3f} {sluice_wall:11.3f} {row['ratio'][0]:6.2f} "
          f"{(sluice_wall - floor_wall) * 1000 / size:8.2f} {floor_wall * 1000 / (size + 1):13.2f} "
          f"{floor_cpu:9.3f} {sluice_cpu:10.3f} {row['ratio'][1]:6.2f} {(sluice_cpu - floor_cpu) * 1000 / size:12.2f}",
          flush=flush)


if __name__ == "__main__":
    main()
