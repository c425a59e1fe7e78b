#!/usr/bin/env python3
"""Generates a StreamBuild-format project of N models for the compile benchmark (and its Dataform twin).

Shape: P pipelines, each with its own managed Kafka source and a layered DAG; every model is ~30 lines with
every output column an aliased explicit cast, one driving input (the source for layer 0, else a model of the
previous layer of the same pipeline) and 0-2 typed side references to lower layers of any pipeline.
Deterministic for a given (models, seed).

usage: generate_project.py OUT_DIR --models N [--pipelines P] [--macros] [--dataform DATAFORM_DIR]
"""
import argparse
import os
import random
import shutil

COLUMNS = 20


def model_sql(name, driving, side_refs, layer, use_macros):
    lines = ["MODEL (", '  order_by ["id", "_replay_partition", "_replay_offset"],',
             '  partition_by "toYYYYMM(event_at)",', ");", "", "SELECT"]
    lines.append("  CAST(d.id AS UInt64) AS id,")
    lines.append("  CAST(d.event_at AS DateTime64(3)) AS event_at,")
    for c in range(COLUMNS):
        if use_macros and c == 0:
            lines.append(f"  CAST(@scaled(\"d.c{c}\", {layer + 1}) AS Float64) AS c{c},")
        elif c % 3 == 0:
            lines.append(f"  CAST(coalesce(d.c{c}, 0) * {layer + 1} AS Float64) AS c{c},")
        elif c % 3 == 1:
            lines.append(f"  CAST(lower(toString(d.c{c})) AS String) AS c{c},")
        else:
            lines.append(f"  CAST(d.c{c} AS Nullable(Int64)) AS c{c},")
    lines.append("  CAST(d._replay_partition AS Int32) AS _replay_partition,")
    lines.append("  CAST(d._replay_offset AS Int64) AS _replay_offset,")
    lines.append("  CAST(d._replay_timestamp AS Nullable(DateTime64(3))) AS _replay_timestamp")
    if driving.startswith("source:"):
        lines.append(f'FROM __source("{driving[7:]}") AS d')
    else:
        lines.append(f'FROM __ref("{driving}") AS d')
    for i, side in enumerate(side_refs):
        lines.append(f"LEFT JOIN __ref(\"{side}\", ref_type='reference') AS s{i} ON s{i}.id = d.id")
    lines.append("WHERE d.id > 0")
    return "\n".join(lines) + "\n"


def plan(models, pipelines, seed):
    """[(pipeline, name, driving, side_refs, layer)] in creation order."""
    rng = random.Random(seed)
    per_pipeline = [models // pipelines + (1 if p < models % pipelines else 0) for p in range(pipelines)]
    layers = {}  # pipeline → list of layers (lists of names)
    all_lower = []  # (layer, name) of every model created so far
    out = []
    for p in range(pipelines):
        count = per_pipeline[p]
        width = max(1, int(count ** 0.5))
        layers[p] = []
        made = 0
        layer = 0
        while made < count:
            names = []
            for _ in range(min(width, count - made)):
                name = f"m_{p:03d}_{made:06d}"
                if layer == 0:
                    driving = f"source:src_{p:03d}"
                else:
                    driving = rng.choice(layers[p][layer - 1])
                candidates = [n for (l, n) in all_lower[-400:] if l < layer and n != driving]
                k = min(len(candidates), rng.choice([0, 1, 1, 2]))
                side = rng.sample(candidates, k) if k else []
                out.append((p, name, driving, side, layer))
                names.append(name)
                made += 1
            for n in names:
                all_lower.append((layer, n))
            layers[p].append(names)
            layer += 1
    return out


def write_streambuild(out, models, pipelines, use_macros, seed):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "sources"))
    with open(os.path.join(out, "streambuild_project.toml"), "w") as f:
        f.write('name = "bench"\ndefault_target = "bench"\n\n[defaults]\nkafka_broker_list = "kafka:9092"\n\n'
                '[naming]\npipeline_prefix = ""\n\n[targets.bench]\ndatabase = "bench"\n')
    with open(os.path.join(out, "sources", "sources.yml"), "w") as f:
        f.write("sources:\n")
        for p in range(pipelines):
            f.write(f"  - kind: kafka\n    name: src_{p:03d}\n    topic: topic.{p:03d}\n"
                    f"    replay_boundary:\n      mode: offsets\n")
    if use_macros:
        os.makedirs(os.path.join(out, "macros"))
        with open(os.path.join(out, "macros", "common.py"), "w") as f:
            f.write("def scaled(expression: str, factor: int) -> str:\n"
                    "    \"\"\"expression times factor, NULL as 0.\"\"\"\n"
                    "    return f\"coalesce({expression}, 0) * {factor}\"\n")
    for p, name, driving, side, layer in plan(models, pipelines, seed):
        folder = os.path.join(out, "pipelines", f"p{p:03d}", f"layer_{layer:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name + ".sql"), "w") as f:
            f.write(model_sql(name, driving, side, layer, use_macros))


def write_dataform(out, models, pipelines, seed):
    """The same graph as a Dataform project: one .sqlx per model, ${ref()} for every input."""
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "definitions", "sources"))
    with open(os.path.join(out, "workflow_settings.yaml"), "w") as f:
        f.write("defaultProject: bench\ndefaultLocation: US\ndefaultDataset: bench\ndefaultAssertionDataset: bench_assertions\n")
    # @dataform/core as a project dependency (installed once by the benchmark, untimed), rather than
    # `dataformCoreVersion`, with which every `dataform compile` runs `npm install` first.
    with open(os.path.join(out, "package.json"), "w") as f:
        f.write('{\n  "name": "bench",\n  "dependencies": {\n    "@dataform/core": "3.0.0"\n  }\n}\n')
    for p in range(pipelines):
        with open(os.path.join(out, "definitions", "sources", f"src_{p:03d}.sqlx"), "w") as f:
            f.write(f'config {{ type: "declaration", schema: "raw", name: "src_{p:03d}" }}\n')
    for p, name, driving, side, layer in plan(models, pipelines, seed):
        folder = os.path.join(out, "definitions", f"p{p:03d}")
        os.makedirs(folder, exist_ok=True)
        body = model_sql(name, driving, side, layer, False).split(");\n\n", 1)[1]
        body = body.replace(f'__source("{driving[7:]}")', '${ref("' + driving[7:] + '")}') if driving.startswith("source:") \
            else body.replace(f'__ref("{driving}")', '${ref("' + driving + '")}')
        for s in side:
            body = body.replace(f"__ref(\"{s}\", ref_type='reference')", '${ref("' + s + '")}')
        with open(os.path.join(folder, name + ".sqlx"), "w") as f:
            f.write('config { type: "table" }\n\n' + body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", type=int, required=True)
    parser.add_argument("--pipelines", type=int, default=0, help="default: one per ~500 models, at least 4")
    parser.add_argument("--macros", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dataform", help="also write the equivalent Dataform project here")
    args = parser.parse_args()
    pipelines = args.pipelines or max(4, args.models // 500)
    write_streambuild(args.out, args.models, pipelines, args.macros, args.seed)
    if args.dataform:
        write_dataform(args.dataform, args.models, pipelines, args.seed)


if __name__ == "__main__":
    main()
