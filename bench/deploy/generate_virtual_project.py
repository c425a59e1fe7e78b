#!/usr/bin/env python3
"""Generates a StreamBuild-format project of N models whose pipelines are all virtual, for the virtual plan benchmark.

Shape: P pipelines, each driven by its own adopted ClickHouse table (a `stream_table` source in offsets mode, its
table `raw_PPP` in the target database) and holding a layered tree of table models: layer 0 reads the source, every
later model one table model of the layer before (its driving input). About one model in eight is a view, always a
leaf (models never read views). Every output column is an aliased explicit cast; table models carry the lineage
columns. Deterministic for a given (models, seed). The adopted tables' columns go to adopted_columns.txt, one
`name type` a line, from which bench/deploy/virtual_plan_bench.cpp creates the tables.

usage: generate_virtual_project.py OUT_DIR --models N [--pipelines P] [--database DB] [--seed S]
"""
import argparse
import os
import random
import shutil

COLUMNS = 8
# The adopted tables' columns (the benchmark creates them): name → ClickHouse type.
SOURCE_COLUMNS = [("id", "UInt64"), ("event_at", "DateTime")] + \
    [(f"c{c}", ["Float64", "String", "Nullable(Int64)"][c % 3]) for c in range(COLUMNS)] + \
    [("_replay_partition", "Int32"), ("_replay_offset", "Int64"), ("_replay_timestamp", "DateTime")]


def table_sql(driving, layer):
    lines = ["MODEL (", '  order_by ["id", "_replay_partition", "_replay_offset"],', ");", "", "SELECT",
             "  CAST(d.id AS UInt64) AS id,", "  CAST(d.event_at AS DateTime) AS event_at,"]
    for c in range(COLUMNS):
        if c % 3 == 0:
            lines.append(f"  CAST(coalesce(d.c{c}, 0) * {layer + 1} AS Float64) AS c{c},")
        elif c % 3 == 1:
            lines.append(f"  CAST(lower(toString(d.c{c})) AS String) AS c{c},")
        else:
            lines.append(f"  CAST(d.c{c} AS Nullable(Int64)) AS c{c},")
    lines += ["  CAST(d._replay_partition AS Int32) AS _replay_partition,",
              "  CAST(d._replay_offset AS Int64) AS _replay_offset,",
              "  CAST(d._replay_timestamp AS DateTime) AS _replay_timestamp"]
    lines.append(f'FROM __source("{driving[7:]}") AS d' if driving.startswith("source:")
                 else f'FROM __ref("{driving}") AS d')
    lines.append("WHERE d.id > 0")
    return "\n".join(lines) + "\n"


def view_sql(driving):
    return "\n".join(["MODEL (", "  kind view,", ");", "", "SELECT",
                      "  CAST(d.id AS UInt64) AS id,", "  CAST(d.c0 AS Float64) AS c0,",
                      "  CAST(d.c1 AS String) AS c1", f'FROM __ref("{driving}") AS d', "WHERE d.c0 > 0"]) + "\n"


def plan(models, pipelines, seed):
    """[(pipeline, name, kind, driving, layer)] in creation order."""
    rng = random.Random(seed)
    per_pipeline = [models // pipelines + (1 if p < models % pipelines else 0) for p in range(pipelines)]
    out = []
    for p in range(pipelines):
        count = per_pipeline[p]
        width = max(1, int(count ** 0.5))
        tables = []  # per layer: the table models
        made = 0
        layer = 0
        while made < count:
            names = []
            for _ in range(min(width, count - made)):
                name = f"m_{p:03d}_{made:06d}"
                driving = f"source:src_{p:03d}" if layer == 0 else rng.choice(tables[layer - 1])
                kind = "view" if layer > 0 and rng.random() < 0.125 else "table"
                out.append((p, name, kind, driving, layer))
                if kind == "table":
                    names.append(name)
                made += 1
            if not names:  # a layer of views only: the next layer reads the one before
                names = tables[layer - 1]
            tables.append(names)
            layer += 1
    return out


def write_project(out, models, pipelines, database, seed):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "sources"))
    with open(os.path.join(out, "streambuild_project.toml"), "w") as f:
        f.write(f'name = "virtual_bench"\ndefault_target = "bench"\n\n[defaults]\npipeline_mode = "virtual"\n\n'
                f'[naming]\npipeline_prefix = ""\n\n[connection]\nhost = "localhost"\nport = 8123\n'
                f'username = "default"\n\n[targets.bench]\ndatabase = "{database}"\n')
    with open(os.path.join(out, "sources", "sources.yml"), "w") as f:
        f.write("sources:\n")
        for p in range(pipelines):
            f.write(f"  - kind: stream_table\n    name: src_{p:03d}\n    table_name: raw_{p:03d}\n"
                    "    replay_boundary:\n      mode: offsets\n      columns:\n"
                    "        _replay_partition: _replay_partition\n        _replay_offset: _replay_offset\n"
                    "        _replay_timestamp: _replay_timestamp\n")
    with open(os.path.join(out, "adopted_columns.txt"), "w") as f:
        f.writelines(f"{name} {type_}\n" for name, type_ in SOURCE_COLUMNS)
    for p, name, kind, driving, layer in plan(models, pipelines, seed):
        folder = os.path.join(out, "pipelines", f"p{p:03d}", f"layer_{layer:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name + ".sql"), "w") as f:
            f.write(view_sql(driving) if kind == "view" else table_sql(driving, layer))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", type=int, required=True)
    parser.add_argument("--pipelines", type=int, default=0, help="default: one per ~125 models, at least 4")
    parser.add_argument("--database", default="virtual_bench", help="the target database")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    pipelines = args.pipelines or max(4, args.models // 125)
    write_project(args.out, args.models, pipelines, args.database, args.seed)
    print(f"{args.models} models in {pipelines} virtual pipelines → {args.out}")


if __name__ == "__main__":
    main()
