#!/usr/bin/env python3
"""PostgreSQL engine benchmark: `sluice run` of the engine benchmark's chain of N trivial table models over a 100-row
seed (generate_project.py, switched to adapter = "postgres" and PostgreSQL's DOUBLE PRECISION) against the floor, the statements that run sent to the
server (read from the target/run/<schema>/<relation>.sql files of a warm-up run, Sluice's own `_sluice` ledger
statements left out, the two schemas created first) sent in order by `postgres_floor` on one libpq connection.

Starts its own server (scripts/postgres_test_server.sh, in WORK/postgres) and stops it at the end. Each round runs the
floor, then Sluice, each into a fresh database (and Sluice with a fresh state store), and checks that the last model
holds the seed's rows. Prints the same columns as run_bench.py: medians of wall and CPU time (the client's; the
server's work is the same SQL for both), ratio sluice/floor (median of the rounds' ratios), overhead per model.

usage: run_bench_postgres.py --sluice BIN --floor BIN --work DIR [--sizes 100,1000] [--rounds 5]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run_bench import HEADER, measure, print_row  # noqa: E402

SERVER_SCRIPT = os.path.join(REPO, "scripts", "postgres_test_server.sh")


class Server:
    def __init__(self, folder):
        self.folder = folder
        subprocess.run(["bash", SERVER_SCRIPT, "start", folder], check=True, stdout=subprocess.DEVNULL)
        read = lambda name: open(os.path.join(folder, name)).read().strip()
        self.port, self.user, self.password = read("port"), read("user"), read("password")

    def psql(self, sql, database="postgres"):
        env = dict(os.environ, PGPASSWORD=self.password)
        return subprocess.run(["psql", "-h", "127.0.0.1", "-p", self.port, "-U", self.user, "-d", database, "-Atqc",
                               sql], check=True, env=env, capture_output=True, text=True).stdout.strip()

    def fresh_database(self, name):
        self.psql(f'DROP DATABASE IF EXISTS "{name}"')
        self.psql(f'CREATE DATABASE "{name}"')

    def conninfo(self, database):
        return f"host=127.0.0.1 port={self.port} user={self.user} password={self.password} dbname={database}"

    def stop(self):
        subprocess.run(["bash", SERVER_SCRIPT, "stop", self.folder], check=True)


def switch_to_postgres(project, server, database):
    path = os.path.join(project, "streambuild_project.toml")
    text = open(path).read()
    text = text.replace('adapter = "duckdb"', 'adapter = "postgres"')
    text = re.sub(r'\[targets\.bench\.connection\]\npath = "warehouse.duckdb"\n',
                  f'[targets.bench.connection]\nhost = "127.0.0.1"\nport = {server.port}\nusername = "{server.user}"\n'
                  f'password = "{server.password}"\ndbname = "{database}"\n', text)
    with open(path, "w") as out:
        out.write(text)
    # PostgreSQL spells DuckDB's DOUBLE as DOUBLE PRECISION: the seed's declared type and every model's cast.
    for folder, _, files in os.walk(project):
        for name in files:
            if name.endswith((".sql", ".yml")):
                file = os.path.join(folder, name)
                text = open(file).read()
                fixed = text.replace("AS DOUBLE)", "AS DOUBLE PRECISION)").replace("v: DOUBLE\n", "v: DOUBLE PRECISION\n")
                if fixed != text:
                    with open(file, "w") as out:
                        out.write(fixed)


def floor_statements(project):
    """The statements of the warm-up run, seed first, then the chain in order, without Sluice's ledger."""
    folder = os.path.join(project, "target", "run")
    statements = ['CREATE SCHEMA IF NOT EXISTS "raw"', 'CREATE SCHEMA IF NOT EXISTS "chain"']
    for schema in ("raw", "chain"):
        for name in sorted(os.listdir(os.path.join(folder, schema))):
            text = open(os.path.join(folder, schema, name)).read()
            body = text.split("\n", 1)[1]  # the first line is a comment naming the relation
            for statement in body.split(";\n\n"):
                if statement.strip() and "_sluice" not in statement:
                    statements.append(statement)
                if statement.startswith('CREATE TABLE "raw"."seed"'):
                    # The seed's rows go as parameters of INSERTs, which the statements file does not show.
                    rows = open(os.path.join(project, "seeds", "seed.csv")).read().split("\n")[1:]
                    values = ", ".join(f"({row})" for row in rows if row)
                    statements.append(f'INSERT INTO "raw"."seed" VALUES {values}')
    return statements


def check_built(server, database, size):
    count = server.psql(f'SELECT count(*) FROM "chain"."m{size:05d}"', database)
    if count != "100":
        raise RuntimeError(f"chain.m{size:05d} holds {count} rows in {database}, not 100")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sluice, floor, work = map(os.path.abspath, (args.sluice, args.floor, args.work))
    os.makedirs(work, exist_ok=True)
    server = Server(os.path.join(work, "postgres"))
    try:
        print(HEADER, flush=True)
        for size in [int(s) for s in args.sizes.split(",") if s]:
            project = os.path.join(work, f"postgres_engine_{size}")
            subprocess.run([sys.executable, os.path.join(HERE, "generate_project.py"), project, "--models", str(size)],
                           check=True)
            switch_to_postgres(project, server, "peb_run")
            server.fresh_database("peb_run")
            measure([sluice, "--project-dir", project, "run"])  # warm-up: its statements are the floor's
            check_built(server, "peb_run", size)
            script = os.path.join(work, f"postgres_engine_{size}_floor.sql")
            with open(script, "w") as out:
                out.write("\0".join(floor_statements(project)))
            samples = {"floor": [], "sluice": []}
            for _ in range(args.rounds):
                server.fresh_database("peb_floor")
                samples["floor"].append(measure([floor, server.conninfo("peb_floor"), script]))
                check_built(server, "peb_floor", size)
                server.fresh_database("peb_run")
                shutil.rmtree(os.path.join(project, ".sluice"), ignore_errors=True)
                samples["sluice"].append(measure([sluice, "--project-dir", project, "run"]))
                check_built(server, "peb_run", size)
            row = {"size": size, "rounds": args.rounds}
            for column, runs in samples.items():
                row[column] = tuple(statistics.median(run[k] for run in runs) for k in (0, 1))
            row["ratio"] = tuple(statistics.median(s[k] / f[k] for f, s in zip(samples["floor"], samples["sluice"]))
                                 for k in (0, 1))
            print_row(row, flush=True)
        print("\nmedians in seconds; wall = elapsed, cpu = user + system of the client process; ratio = median of the "
              "rounds' sluice/floor; ms/model = (sluice - floor) / models")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
