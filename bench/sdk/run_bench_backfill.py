#!/usr/bin/env python3
"""Backfill benchmark: a code asset backfilled over 365 daily partitions of 100,000 rows each on DuckDB with
multi_run(10) (37 runs, each one atomic replacement of its ten dates) against the limit, one bare
`INSERT INTO … SELECT` of the same 36.5 million rows on one DuckDB connection (engine_floor).

Setup (not timed): the SQL model bronze.raw_events of backfill_project/ is materialized for all of 2025. Then, in
rounds: the floor copies it into a fresh table with one statement; a second floor copies it with 37 bare INSERTs, one
per run's ten-day window (what splitting the backfill into runs costs DuckDB by itself, with no transaction, staging,
ledger or run record); and the pipeline program backfills its copy silver.events_copy (dropped first, so all start
from nothing). Prints the medians of wall and CPU time, rows per second, the ratios of the rounds (the share of each
floor's throughput the backfill reaches) and the time the backfill adds per run over the chunked floor.

usage: run_bench_backfill.py --program BIN --floor BIN --work DIR [--rounds 3]
"""
import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine"))
from run_bench import measure  # noqa: E402  (wall and CPU seconds of one run)
ROWS = 365 * 100_000
CHUNKS = 37  # 365 days, ten per run


def script(folder, name, statements):
    path = os.path.join(folder, name)
    with open(path, "w") as out:
        out.write("\n".join(statements) + "\n")
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True, help="the bench_backfill code program")
    parser.add_argument("--floor", required=True, help="engine_floor")
    parser.add_argument("--work", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    program = os.path.abspath(args.program)
    floor = os.path.abspath(args.floor)
    project = os.path.abspath(os.path.join(args.work, "backfill"))
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "backfill_project"), project)
    database = os.path.join(project, "warehouse.duckdb")

    print(f"setup: materializing bronze.raw_events, {ROWS:,} rows", flush=True)
    subprocess.run([program, "run", "--select", "+raw_events", "--from", "2025-01-01", "--to", "2025-12-31"],
                   cwd=project, check=True, stdout=subprocess.DEVNULL)
    drop = script(project, "drop.sql", ["DROP TABLE IF EXISTS silver.events_copy",
                                        "DROP TABLE IF EXISTS floor_copy", "CHECKPOINT"])
    create = "CREATE TABLE floor_copy AS SELECT * FROM bronze.raw_events WHERE false"
    copy = script(project, "floor.sql", [create, "INSERT INTO floor_copy SELECT * FROM bronze.raw_events"])
    chunked = [create]
    for first in range(0, 365, 10):
        start = datetime.date(2025, 1, 1) + datetime.timedelta(days=first)
        end = min(start + datetime.timedelta(days=10), datetime.date(2026, 1, 1))
        chunked.append(f"INSERT INTO floor_copy SELECT * FROM bronze.raw_events "
                       f"WHERE event_date >= DATE '{start}' AND event_date < DATE '{end}'")
    copy_chunked = script(project, "floor_chunked.sql", chunked)
    samples = {"floor": [], "chunked": [], "sluice": []}
    for round_number in range(args.rounds):
        subprocess.run([floor, database, drop], check=True, stdout=subprocess.DEVNULL)
        samples["floor"].append(measure([floor, database, copy]))
        subprocess.run([floor, database, drop], check=True, stdout=subprocess.DEVNULL)
        samples["chunked"].append(measure([floor, database, copy_chunked]))
        subprocess.run([floor, database, drop], check=True, stdout=subprocess.DEVNULL)
        samples["sluice"].append(measure([program, "run", "--select", "events_copy", "--from", "2025-01-01",
                                          "--to", "2025-12-31"], cwd=project))
        f, c, s = samples["floor"][-1], samples["chunked"][-1], samples["sluice"][-1]
        print(f"round {round_number + 1}: floor {f[0]:.2f}s, chunked floor {c[0]:.2f}s, backfill {s[0]:.2f}s",
              flush=True)
    check = script(project, "check.sql", ["CREATE TABLE check_failed AS SELECT 1 WHERE "
                                          "(SELECT count(*) FROM silver.events_copy) <> " + str(ROWS)])
    subprocess.run([floor, database, check], check=True, stdout=subprocess.DEVNULL)

    med = {k: tuple(statistics.median(run[i] for run in v) for i in (0, 1)) for k, v in samples.items()}
    def ratio(base, k):  # the median of the rounds' base/sluice times: sluice's share of base's rows/s
        return statistics.median(b[k] / s[k] for b, s in zip(samples[base], samples["sluice"]))

    print(f"\n{'':>8} {'wall s':>8} {'cpu s':>8} {'rows/s':>14}")
    for name in ("floor", "chunked", "sluice"):
        wall, cpu = med[name]
        print(f"{name:>8} {wall:8.2f} {cpu:8.2f} {ROWS / wall:14,.0f}")
    print(f"\nthroughput ratio, sluice ÷ one bare INSERT (median of {args.rounds} rounds): {ratio('floor', 0):.2f} "
          f"(cpu {ratio('floor', 1):.2f}); target >= 0.90")
    print(f"the chunked floor alone ÷ one bare INSERT: "
          f"{statistics.median(f[0] / c[0] for f, c in zip(samples['floor'], samples['chunked'])):.2f}")
    print(f"throughput ratio, sluice ÷ the chunked floor: {ratio('chunked', 0):.2f} (cpu {ratio('chunked', 1):.2f})")
    print(f"time added per run (chunk) over the chunked floor: "
          f"{(med['sluice'][0] - med['chunked'][0]) * 1000 / CHUNKS:.0f} ms over {CHUNKS} runs; over one INSERT: "
          f"{(med['sluice'][0] - med['floor'][0]) * 1000 / CHUNKS:.0f} ms")


if __name__ == "__main__":
    main()
