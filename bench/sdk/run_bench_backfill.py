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

With --postgres-floor BIN the same runs on PostgreSQL (the test server, scripts/postgres_test_server.sh, a fresh
database): the project switched to adapter = "postgres" (generate_series for DuckDB's range, DOUBLE PRECISION for
DOUBLE), --rows-per-day rows a day (10,000 by default there: PostgreSQL writes a row far slower than DuckDB), and the
floors run by postgres_floor on one libpq connection, their copy range-partitioned by day like Sluice's (the
partitions created as Sluice creates them: the year's before the one INSERT, each run's ten before its INSERT).

usage: run_bench_backfill.py --program BIN --floor BIN --work DIR [--rounds 3]
                             [--postgres-floor BIN] [--rows-per-day N]
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
CHUNKS = 37  # 365 days, ten per run
SERVER_SCRIPT = os.path.join(HERE, "..", "..", "scripts", "postgres_test_server.sh")


class Postgres:
    """The test server, a fresh database `backfill_bench`, and the project switched to it."""

    def __init__(self, work, project, rows_per_day):
        self.folder = os.path.join(work, "postgres")
        subprocess.run(["bash", SERVER_SCRIPT, "start", self.folder], check=True, stdout=subprocess.DEVNULL)
        read = lambda name: open(os.path.join(self.folder, name)).read().strip()
        port, user, password = read("port"), read("user"), read("password")
        env = dict(os.environ, PGPASSWORD=password)
        for sql in ('DROP DATABASE IF EXISTS "backfill_bench"', 'CREATE DATABASE "backfill_bench"'):
            subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", user, "-d", "postgres", "-qc", sql],
                           check=True, env=env, capture_output=True)
        self.conninfo = f"host=127.0.0.1 port={port} user={user} password={password} dbname=backfill_bench"
        toml = os.path.join(project, "streambuild_project.toml")
        text = open(toml).read().replace('adapter = "duckdb"', 'adapter = "postgres"').replace(
            'path = "warehouse.duckdb"',
            f'host = "127.0.0.1"\nport = {port}\nusername = "{user}"\npassword = "{password}"\n'
            'dbname = "backfill_bench"')
        open(toml, "w").write(text)
        model = os.path.join(project, "pipelines", "events", "raw_events.sql")
        text = open(model).read().replace("AS DOUBLE)", "AS DOUBLE PRECISION)").replace(
            "CROSS JOIN range(100000) AS r", f"CROSS JOIN generate_series(0, {rows_per_day - 1}) AS r(range)")
        open(model, "w").write(text)

    def stop(self):
        subprocess.run(["bash", SERVER_SCRIPT, "stop", self.folder], check=True)


def script(folder, name, statements, separator="\n"):
    path = os.path.join(folder, name)
    with open(path, "w") as out:
        out.write(separator.join(statements) + separator)
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True, help="the bench_backfill code program")
    parser.add_argument("--floor", required=True, help="engine_floor")
    parser.add_argument("--work", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres-floor", help="run on PostgreSQL; postgres_floor")
    parser.add_argument("--rows-per-day", type=int, help="100,000 on DuckDB, 10,000 on PostgreSQL unless given")
    args = parser.parse_args()
    program = os.path.abspath(args.program)
    project = os.path.abspath(os.path.join(args.work, "backfill"))
    shutil.rmtree(project, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "backfill_project"), project)
    postgres = None
    if args.postgres_floor:
        rows_per_day = args.rows_per_day or 10_000
        postgres = Postgres(os.path.abspath(args.work), project, rows_per_day)
        floor, database, separator = os.path.abspath(args.postgres_floor), postgres.conninfo, "\0"
    else:
        rows_per_day = args.rows_per_day or 100_000
        if rows_per_day != 100_000:
            raise SystemExit("--rows-per-day applies to PostgreSQL only (the DuckDB project makes 100,000 a day)")
        floor, database, separator = os.path.abspath(args.floor), os.path.join(project, "warehouse.duckdb"), "\n"
    try:
        run(args, program, project, floor, database, separator, 365 * rows_per_day, postgres is not None)
    finally:
        if postgres:
            postgres.stop()


def run(args, program, project, floor, database, separator, rows, on_postgres):
    print(f"setup: materializing bronze.raw_events, {rows:,} rows", flush=True)
    subprocess.run([program, "run", "--select", "+raw_events", "--from", "2025-01-01", "--to", "2025-12-31"],
                   cwd=project, check=True, stdout=subprocess.DEVNULL)
    drop = script(project, "drop.sql", ["DROP TABLE IF EXISTS silver.events_copy", "DROP TABLE IF EXISTS floor_copy"]
                  + ([] if on_postgres else ["CHECKPOINT"]), separator)
    # On PostgreSQL the copy is range-partitioned by day as Sluice's is, each day's partition created before its rows.
    def partitions(start, end):
        if not on_postgres:
            return []
        days = [start + datetime.timedelta(days=d) for d in range((end - start).days)]
        return [f"CREATE TABLE floor_copy_p{day:%Y%m%d} PARTITION OF floor_copy FOR VALUES FROM ('{day}') "
                f"TO ('{day + datetime.timedelta(days=1)}')" for day in days]
    create = ("CREATE TABLE floor_copy (event_date DATE, id BIGINT, amount DOUBLE PRECISION) "
              "PARTITION BY RANGE (event_date)" if on_postgres else
              "CREATE TABLE floor_copy AS SELECT * FROM bronze.raw_events WHERE false")
    year = (datetime.date(2025, 1, 1), datetime.date(2026, 1, 1))
    copy = script(project, "floor.sql", [create] + partitions(*year) +
                  ["INSERT INTO floor_copy SELECT * FROM bronze.raw_events"], separator)
    chunked = [create]
    for first in range(0, 365, 10):
        start = datetime.date(2025, 1, 1) + datetime.timedelta(days=first)
        end = min(start + datetime.timedelta(days=10), datetime.date(2026, 1, 1))
        chunked += partitions(start, end)
        chunked.append(f"INSERT INTO floor_copy SELECT * FROM bronze.raw_events "
                       f"WHERE event_date >= DATE '{start}' AND event_date < DATE '{end}'")
    copy_chunked = script(project, "floor_chunked.sql", chunked, separator)
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
                                          "(SELECT count(*) FROM silver.events_copy) <> " + str(rows)], separator)
    subprocess.run([floor, database, check], check=True, stdout=subprocess.DEVNULL)

    med = {k: tuple(statistics.median(run[i] for run in v) for i in (0, 1)) for k, v in samples.items()}
    def ratio(base, k):  # the median of the rounds' base/sluice times: sluice's share of base's rows/s
        return statistics.median(b[k] / s[k] for b, s in zip(samples[base], samples["sluice"]))

    print(f"\n{'':>8} {'wall s':>8} {'cpu s':>8} {'rows/s':>14}")
    for name in ("floor", "chunked", "sluice"):
        wall, cpu = med[name]
        print(f"{name:>8} {wall:8.2f} {cpu:8.2f} {rows / wall:14,.0f}")
    print(f"\nthroughput ratio, sluice ÷ one bare INSERT (median of {args.rounds} rounds): {ratio('floor', 0):.2f} "
          f"(cpu {ratio('floor', 1):.2f})" + ("" if on_postgres else "; target >= 0.90"))
    print(f"the chunked floor alone ÷ one bare INSERT: "
          f"{statistics.median(f[0] / c[0] for f, c in zip(samples['floor'], samples['chunked'])):.2f}")
    print(f"throughput ratio, sluice ÷ the chunked floor: {ratio('chunked', 0):.2f} (cpu {ratio('chunked', 1):.2f})")
    print(f"time added per run (chunk) over the chunked floor: "
          f"{(med['sluice'][0] - med['chunked'][0]) * 1000 / CHUNKS:.0f} ms over {CHUNKS} runs; over one INSERT: "
          f"{(med['sluice'][0] - med['floor'][0]) * 1000 / CHUNKS:.0f} ms")


if __name__ == "__main__":
    main()
