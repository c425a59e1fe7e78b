#!/usr/bin/env python3
"""Where `sluice run`'s time goes, per model: traces one run of a generated engine project (generate_project.py) with
uprobes on DuckDB's C API (every duckdb_query with its SQL, duckdb_connect, duckdb_disconnect) and on Sluice's step
and state-store functions, and prints the wall time per model of each kind of statement and call, how many of each
a model makes, and the rest of the step (Sluice's own work between them).

Needs root, perf and uprobes (tracefs is mounted when missing). Each probe hit costs a few microseconds, so the
traced run is a little slower than an untraced one; compare the rows, not the total, with the benchmark.

usage: profile_run.py --sluice BIN [--floor BIN] PROJECT_DIR
"""
import argparse
import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Statement kinds, by the start of the SQL Sluice sends (src/warehouse/duckdb/duckdb_warehouse.cpp).
KINDS = [
    ("SET errors_as_json", "SET errors_as_json (each new session)"),
    ("CREATE SCHEMA IF NOT EXISTS", "CREATE SCHEMA IF NOT EXISTS (PrepareWrite)"),
    ("BEGIN TRANSACTION", "BEGIN TRANSACTION"),
    ("SELECT t.table_schema", "catalog query (DropIfOtherKind)"),
    ("CREATE OR REPLACE TABLE", "CREATE OR REPLACE TABLE … AS SELECT"),
    ("SELECT count(*) FROM", "SELECT count(*) of the new table"),
    ("INSERT INTO", "ledger INSERT"),
    ("COMMIT", "COMMIT"),
]

SLUICE_PROBES = {
    "step": "_ZN6sluice11RunExecutor11ExecuteStepERKNS_8StepPlanERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "append": "_ZN6sluice16SqliteStateStore6AppendERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES8_RKSt7variant"
              "IJNS_15RunStartedEventENS_16StepStartedEventENS_20MaterializationEventENS_15StepFailedEventENS_16Step"
              "SkippedEventENS_17StepFinishedEventENS_16RunFinishedEventEEE",
    "materializations": "_ZN6sluice16SqliteStateStore22RecordMaterializationsERKSt6vectorINS_21MaterializationRecord"
                        "ESaIS2_EE",
}
DUCKDB_PROBES = {"query": "duckdb_query", "connect": "duckdb_connect", "disconnect": "duckdb_disconnect"}
LABELS = {"connect": "duckdb_connect (2 sessions a model)", "disconnect": "duckdb_disconnect",
          "append": "state store: event appends (SQLite)", "materializations": "state store: materializations (SQLite)"}


def duckdb_library(sluice):
    """The libduckdb.so Sluice loads: the path compiled into the binary (SLUICE_DUCKDB_LIBRARY)."""
    text = open(sluice, "rb").read()
    match = re.search(rb"(/[\x21-\x7e]*?/lib/libduckdb\.so)\x00", text)
    if not match or not os.path.exists(match.group(1).decode()):
        sys.exit("cannot find the libduckdb.so path in " + sluice)
    return os.path.realpath(match.group(1).decode())


def perf(*args, check=True):
    return subprocess.run(["perf", *args], check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


UPROBE_EVENTS = "/sys/kernel/tracing/uprobe_events"


def file_offset(binary, symbol):
    """The file offset of `symbol`'s code in `binary`, as a uprobe wants it."""
    table = subprocess.run(["nm", "-D" if binary.endswith(".so") else "--defined-only", binary], check=True,
                           stdout=subprocess.PIPE, text=True).stdout
    address = next(int(line.split()[0], 16) for line in table.splitlines() if line.endswith(" " + symbol))
    segments = subprocess.run(["readelf", "-lW", binary], check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in segments.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            offset, vaddr, size = int(fields[1], 16), int(fields[2], 16), int(fields[4], 16)
            if vaddr <= address < vaddr + size:
                return address - vaddr + offset
    sys.exit(f"{symbol} is in no loaded segment of {binary}")


def write_uprobe_events(lines):
    """Appends each line to tracefs's uprobe_events (other tools' probes stay)."""
    fd = os.open(UPROBE_EVENTS, os.O_WRONLY | os.O_APPEND)
    try:
        for line in lines:
            os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def add_probes(group, binary, probes):
    """An entry and a return uprobe (`name`, `name_ret`) for each of `probes`; duckdb_query's entry records its SQL."""
    lines = []
    for name, symbol in probes.items():
        at = f"{binary}:0x{file_offset(binary, symbol):x}"
        argument = " sql=+0(%si):string" if name == "query" else ""
        lines += [f"p:{group}/{name} {at}{argument}", f"r:{group}/{name}_ret {at}"]
    write_uprobe_events(lines)


def remove_probes():
    with open(UPROBE_EVENTS) as events:
        ours = [line.split()[0][2:] for line in events if line.split()[0][2:].startswith("sluice_bench_")]
    write_uprobe_events(f"-:{event}" for event in ours)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--floor", help="engine_floor: also trace it, for its statements' times")
    parser.add_argument("project")
    args = parser.parse_args()
    sluice = os.path.abspath(args.sluice)
    project = os.path.abspath(args.project)
    models = sum(1 for name in os.listdir(os.path.join(project, "pipelines", "chain")) if name.endswith(".sql"))
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=True)

    remove_probes()
    add_probes("sluice_bench_duckdb", duckdb_library(sluice), DUCKDB_PROBES)
    add_probes("sluice_bench_sluice", sluice, SLUICE_PROBES)
    try:
        script = trace([sluice, "--project-dir", project, "run"], project)
        floor_script = None
        if args.floor:
            floor_dir = os.path.join(project, "floor")
            os.makedirs(floor_dir, exist_ok=True)
            floor_script = trace([os.path.abspath(args.floor), os.path.join(floor_dir, "warehouse.duckdb"),
                                  os.path.join(project, "floor.sql")], floor_dir)
    finally:
        remove_probes()
    report(script, models)
    if floor_script:
        calls, _, _, _ = parse(floor_script)
        ctas = [ended - began for began, ended, kind in calls if kind == KINDS[4][1]]
        print(f"floor: {len(ctas)} CREATE OR REPLACE TABLE statements, {sum(ctas) * 1000 / len(ctas):.3f} ms each "
              f"(the last tenth {sum(ctas[-len(ctas) // 10:]) * 1000 / (len(ctas) // 10):.3f} ms each)")


def trace(argv, folder):
    """perf script output of `argv` run under the probes, in `folder` emptied of its database and state before and
    after."""
    def remove_database():
        for name in ("warehouse.duckdb", "warehouse.duckdb.wal", "warehouse.duckdb.lock"):
            if os.path.exists(os.path.join(folder, name)):
                os.remove(os.path.join(folder, name))
        shutil.rmtree(os.path.join(folder, ".sluice"), ignore_errors=True)
    remove_database()
    data = tempfile.mktemp(suffix=".perf.data")
    try:
        subprocess.run(["perf", "record", "-q", "-o", data, "-e", "sluice_bench_duckdb:*", "-e", "sluice_bench_sluice:*",
                        "--", *argv], check=True, stdout=subprocess.DEVNULL)
        return perf("script", "-i", data, "-F", "tid,time,event,trace").stdout
    finally:
        remove_database()
        if os.path.exists(data):
            os.remove(data)


def parse(script):
    """(calls as (began, ended, kind), steps as (began, ended), first hit, last hit) of a trace."""
    open_calls = {}  # (tid, probe) → (time, kind)
    calls = []  # (began, ended, kind)
    steps = []  # (began, ended)
    first = last = None
    line_re = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+sluice_bench_\w+:(\w+):?\s*(.*)$")
    for line in script.splitlines():
        match = line_re.match(line)
        if not match:
            continue
        tid, at, event, rest = int(match.group(1)), float(match.group(2)), match.group(3), match.group(4)
        first = at if first is None else first
        last = at
        if event.endswith("_ret"):
            probe = event[:-4]
            if (tid, probe) in open_calls:
                began, kind = open_calls.pop((tid, probe))
                (steps.append((began, at)) if probe == "step" else calls.append((began, at, kind)))
            continue
        kind = LABELS.get(event, event)
        if event == "query":
            sql = re.search(r'sql="(.*)', rest)
            sql = sql.group(1) if sql else ""
            kind = next((label for prefix, label in KINDS if sql.startswith(prefix)), "other: " + sql[:40])
        open_calls[(tid, event)] = (at, kind)
    return calls, steps, first, last


def report(script, models):
    """Prints ms a step of each kind of call over all steps, the first tenth and the last tenth of the steps (what
    grows with the number of tables grows from the first tenth to the last)."""
    calls, steps, first, last = parse(script)
    steps.sort()
    begins = [began for began, _ in steps]
    count = len(steps)  # the seed load is a step too
    tenth = max(1, count // 10)
    parts = {"all": range(count), "first": range(tenth), "last": range(count - tenth, count)}
    # Each call belongs to the step running when it began, or to the last one before it (the events a worker
    # appends after a step).
    totals = {part: collections.defaultdict(float) for part in parts}
    counts = collections.Counter()
    for began, ended, kind in calls:
        index = bisect.bisect_right(begins, began) - 1
        if index < 0 or (index == count - 1 and began > steps[-1][1]):
            continue  # opening or closing the run
        counts[kind] += 1
        for part, indexes in parts.items():
            if index in indexes:
                totals[part][kind] += ended - began
    span = {part: (steps[r[-1]][1] if r[-1] == count - 1 else steps[r[-1] + 1][0]) - steps[r[0]][0]
            for part, r in parts.items()}
    print(f"{models} models, {count} steps: {begins[0] - first:.3f} s from the first probe hit (opening the "
          f"warehouse) to the first step, {span['all']:.3f} s of steps, {last - steps[-1][1]:.3f} s after the last")
    print(f"{'ms a step':>10} {'first 10%':>10} {'last 10%':>10} {'calls a step':>12}  what")
    rows = sorted(counts, key=lambda kind: -totals["all"][kind])
    for kind in rows:
        print(f"{totals['all'][kind] * 1000 / count:10.3f} {totals['first'][kind] * 1000 / tenth:10.3f} "
              f"{totals['last'][kind] * 1000 / tenth:10.3f} {counts[kind] / count:12.2f}  {kind}")
    rest = {part: (span[part] - sum(totals[part].values())) * 1000 / len(r) for part, r in parts.items()}
    print(f"{rest['all']:10.3f} {rest['first']:10.3f} {rest['last']:10.3f} {'':>12}  the rest: Sluice between the "
          "calls above (rendering, hashing, scheduling, printing)")
    print(f"{span['all'] * 1000 / count:10.3f} {span['first'] * 1000 / tenth:10.3f} {span['last'] * 1000 / tenth:10.3f} "
          f"{'':>12}  a step, in all")


if __name__ == "__main__":
    main()
