#!/usr/bin/env python3
"""Generates the engine benchmark's project and its floor script.

The project: a DuckDB project with one 100-row seed `raw.seed` (id BIGINT, v DOUBLE) and N trivial table models in
one chain, `chain.m00001` reading the seed and each next model reading the one before it through `__ref`:

    SELECT CAST(id AS BIGINT) AS id, CAST(v + 1 AS DOUBLE) AS v FROM __ref("m00041")

The floor script (`floor.sql`, one statement a line): the same work as bare DuckDB statements, fully qualified with
the catalog `warehouse` (the database file is `warehouse.duckdb`, in the project and for the floor alike): the two
schemas, the seed loaded as Sluice loads it (`read_csv` with the seed's types) and one `CREATE OR REPLACE TABLE … AS`
a model's SELECT per model, its reference replaced by the upstream's name.

With --clickhouse, a ClickHouse project instead (the `sluice build` benchmark, run_bench_clickhouse.py): an adopted
`stream_table` source `events` over the table `events_raw` (id, v and the lineage columns `_replay_partition`,
`_replay_offset`, `_replay_timestamp`; offsets mode) and the same chain, each model a MergeTree table ordered by the
lineage columns:

    SELECT CAST(id AS UInt64) AS id, CAST(v + 1 AS Float64) AS v, CAST(_replay_partition AS Int32) AS ...
    FROM __ref("m00041")

Its database is the one `sluice build --database` names. Also writes `source_table.sql`: the source table's
CREATE TABLE and the INSERT of its rows (SOURCE_ROWS over 3 partitions), with `{database}` for the database; the
floor is not generated but read from the statements a build sent (the benchmark does that).

usage: generate_project.py OUT_DIR --models N [--clickhouse]
"""
import argparse
import os
import shutil

SEED_ROWS = 100
CATALOG = '"warehouse"'
BODY = "SELECT CAST(id AS BIGINT) AS id, CAST(v + 1 AS DOUBLE) AS v FROM {}"

PROJECT_TOML = """name = "engine_bench"
adapter = "duckdb"
default_target = "bench"

[naming]
table_prefix = ""
view_prefix = ""

[targets.bench]
database = "raw"

[targets.bench.connection]
path = "warehouse.duckdb"
"""

SOURCES_YML = """sources:
  - kind: seed
    name: seed
    path: seeds/seed.csv
    columns:
      id: BIGINT
      v: DOUBLE
"""


SOURCE_ROWS = 300
CH_BODY = """SELECT
  CAST(id AS UInt64) AS id,
  CAST(v + 1 AS Float64) AS v,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp
FROM {}
"""

CH_PROJECT_TOML = """name = "engine_bench_ch"
default_target = "bench"

[connection]
host = "localhost"
port = 8123
username = "default"

[targets.bench]
database = "engine_bench"
"""

CH_SOURCES_YML = """sources:
  - kind: stream_table
    name: events
    table_name: events_raw
    replay_boundary:
      mode: offsets
      columns:
        _replay_partition: _replay_partition
        _replay_offset: _replay_offset
        _replay_timestamp: _replay_timestamp
"""


def model_name(i):
    return f"m{i:05d}"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        out.write(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--models", type=int, required=True)
    parser.add_argument("--clickhouse", action="store_true", help="the ClickHouse project of the build benchmark")
    args = parser.parse_args()
    out = os.path.abspath(args.out_dir)
    shutil.rmtree(out, ignore_errors=True)
    if args.clickhouse:
        write_clickhouse(out, args.models)
        return

    write(os.path.join(out, "streambuild_project.toml"), PROJECT_TOML)
    write(os.path.join(out, "sources", "seeds.yml"), SOURCES_YML)
    seed_path = os.path.join(out, "seeds", "seed.csv")
    write(seed_path, "id,v\n" + "".join(f"{i},{i}.5\n" for i in range(SEED_ROWS)))
    write(os.path.join(out, "pipelines", "chain", "pipeline.toml"), 'database = "chain"\n')

    seed_literal = "'" + seed_path.replace("'", "''") + "'"
    floor = [f"CREATE SCHEMA IF NOT EXISTS {CATALOG}.\"raw\"",
             f"CREATE SCHEMA IF NOT EXISTS {CATALOG}.\"chain\"",
             f"CREATE OR REPLACE TABLE {CATALOG}.\"raw\".\"seed\" AS SELECT * FROM read_csv({seed_literal}, "
             "header = true, types = {'id': 'BIGINT', 'v': 'DOUBLE'})"]
    for i in range(1, args.models + 1):
        reference = '__source("seed")' if i == 1 else f'__ref("{model_name(i - 1)}")'
        write(os.path.join(out, "pipelines", "chain", model_name(i) + ".sql"),
              "MODEL ();\n\n" + BODY.format(reference) + "\n")
        upstream = f'{CATALOG}."raw"."seed"' if i == 1 else f'{CATALOG}."chain"."{model_name(i - 1)}"'
        floor.append(f'CREATE OR REPLACE TABLE {CATALOG}."chain"."{model_name(i)}" AS ' + BODY.format(upstream))
    write(os.path.join(out, "floor.sql"), "\n".join(floor) + "\n")


def write_clickhouse(out, models):
    write(os.path.join(out, "streambuild_project.toml"), CH_PROJECT_TOML)
    write(os.path.join(out, "sources", "events.yml"), CH_SOURCES_YML)
    for i in range(1, models + 1):
        reference = '__source("events")' if i == 1 else f'__ref("{model_name(i - 1)}")'
        write(os.path.join(out, "pipelines", "chain", model_name(i) + ".sql"),
              'MODEL (\n  order_by ["_replay_partition", "_replay_offset"],\n);\n\n' + CH_BODY.format(reference))
    rows = ", ".join(f"({i}, {i}.5, {i % 3}, {i // 3}, toDateTime('2026-12-01 00:00:00') + {i * 60})"
                     for i in range(SOURCE_ROWS))
    write(os.path.join(out, "source_table.sql"),
          "CREATE TABLE `{database}`.`events_raw` (id UInt64, v Float64, _replay_partition Int32, "
          "_replay_offset Int64, _replay_timestamp DateTime) ENGINE = MergeTree() "
          "ORDER BY (_replay_partition, _replay_offset)\n"
          "INSERT INTO `{database}`.`events_raw` VALUES " + rows + "\n")


if __name__ == "__main__":
    main()
