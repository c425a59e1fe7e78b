#!/usr/bin/env python3
"""Compile benchmark: Sluice's project analysis and full compile against the floor (reading every model file
once), measured in the same run so machine noise cancels; optionally Dataform's `dataform compile` as a peer.

Prints, per project size, the median wall time over several runs and the peak RSS of:
  (a) analysis   `sluice discover` without the parse cache (SLUICE_PARSE_CACHE=off) — load, validate, resolve,
                 build the graph, every model parsed (what `dbt parse` does without partial parsing)
  (p) cached     `sluice discover` with the parse cache of the unchanged project — every model file read and
                 hashed, its header parsed, its body's analysis taken from .sluice/parse-cache
  (e) edited     `sluice discover` after one model file changed — that model parsed, its entry appended to the cache
                 (the edit loop of a large project)
  (b) compile    `sluice compile` into an empty target/, without the parse cache — every model parsed and every
                 artifact created ("cold")
  (w) warm       `sluice compile` again on the unchanged project with its parse cache — publication finds
                 nothing to write
  (c) floor      `compile_read_floor` — read every model file once
  (k) create     `compile_create_floor` — create the compiled target/'s files once more (open, write, close per
                 file), the file creation a cold compile cannot avoid; the time of that phase alone
  (k*) create*   the same on every core (`compile_create_floor … THREADS`), as `sluice compile` creates its files
and the ratios a/c, p/c, e/c, b/c, w/c, b/(c+k) and k*/c (targets: a ≤ 1.2, b ≤ 2.5), and Dataform's `dataform compile` time and
its ratio to (b) when --dataform-sizes includes the size.

The floor and the three discover columns run in rounds (one run of each per round), so a slow or fast spell of
the machine falls on all four alike: 11 rounds below 100,000 models, 7 at 100,000 (or --runs, if more). The
generated files are synced to disk before any run is timed.

Every cold compile and every create-floor run writes into a fresh folder, removed only when the whole benchmark
ends: on ext4 without a journal, creating files right after deleting as many is several times slower (the inode
allocator steps over recently deleted inodes), which would measure the previous run's `rm -rf`, not Sluice.

usage: run_bench.py --sluice BIN --floor BIN --work DIR [--create-floor BIN] [--sizes 1000,10000,100000]
                    [--runs 5] [--macros] [--dataform-sizes 1000,10000]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(argv, cwd=None, env=None):
    """(wall seconds, peak RSS in MiB) of one run; raises on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0


def median_of(argv, runs, cwd=None, env=None, before=None):
    """(median wall seconds, max peak RSS MiB) over `runs` runs; `before()` runs untimed ahead of each."""
    samples = []
    for _ in range(runs):
        if before:
            before()
        samples.append(measure(argv, cwd, env))
    return statistics.median(s[0] for s in samples), max(s[1] for s in samples)


def alternating_medians(commands, runs):
    """median_of for each (argv, env, before) of `commands`, their runs interleaved: round after round, one run of
    each command in order."""
    samples = [[] for _ in commands]
    for _ in range(runs):
        for k, (argv, env, before) in enumerate(commands):
            if before:
                before()
            samples[k].append(measure(argv, env=env))
    return [(statistics.median(s[0] for s in runs_of), max(s[1] for s in runs_of)) for runs_of in samples]


def dataform_cli(work):
    """Installs @dataform/cli into the build tree (npm registry) and returns its binary, or None."""
    prefix = os.path.join(work, "dataform_cli")
    binary = os.path.join(prefix, "node_modules", ".bin", "dataform")
    if not os.path.exists(binary):
        os.makedirs(prefix, exist_ok=True)
        result = subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "@dataform/cli@3"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            print("dataform: npm install failed:\n" + result.stdout.decode()[-1500:], file=sys.stderr)
            return None
    return binary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluice", required=True)
    parser.add_argument("--floor", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--create-floor", help="default: compile_create_floor next to --floor")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--macros", action="store_true", help="also measure projects that use a macro in every model")
    parser.add_argument("--dataform-sizes", default="1000,10000", help="'' to skip the Dataform peer")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    create_floor = args.create_floor or os.path.join(os.path.dirname(args.floor), "compile_create_floor")
    scratch = os.path.join(args.work, "scratch")  # fresh output folders, removed at the end
    subprocess.run(["rm", "-rf", scratch], check=False)  # left by an interrupted run
    fresh = iter(range(1 << 30))
    cores = os.cpu_count() or 1

    def fresh_folder():
        return os.path.join(scratch, str(next(fresh)))
    sizes = [int(s) for s in args.sizes.split(",") if s]
    dataform_sizes = {int(s) for s in args.dataform_sizes.split(",") if s}
    dataform = dataform_cli(args.work) if dataform_sizes else None

    variants = [False, True] if args.macros else [False]
    rows = []
    print(HEADER, flush=True)
    for size in sizes:
        for macros in variants:
            project = os.path.join(args.work, f"project_{size}{'_macros' if macros else ''}")
            df_project = os.path.join(args.work, f"dataform_{size}") if (size in dataform_sizes and not macros) else None
            gen = [sys.executable, os.path.join(HERE, "generate_project.py"), project, "--models", str(size)]
            if macros:
                gen.append("--macros")
            if df_project:
                gen += ["--dataform", df_project]
            subprocess.run(gen, check=True)
            # The generator's files go to disk before anything is timed: the kernel writing them back meanwhile
            # takes CPU from the two-threaded sluice more than from the one-threaded floor.
            os.sync()
            runs = args.runs if size < 100000 else max(3, args.runs // 2)
            # The four discover columns take well under a second a run: more rounds for steadier medians.
            rounds = max(runs, 11 if size < 100000 else 7)
            measure([args.floor, project])  # warm the page cache once
            no_cache = dict(os.environ, SLUICE_PARSE_CACHE="off")
            discover_argv = [args.sluice, "--project-dir", project, "discover"]
            subprocess.run(["rm", "-rf", os.path.join(project, ".sluice")], check=True)
            measure(discover_argv)  # writes the parse cache (a run without the cache neither reads nor writes it)
            edited_model = first_model(project)
            # The floor and the three discover columns in rounds, one run of each per round, so a slow or fast
            # spell of the machine falls on all four alike and their ratios keep (runs of one command in a block
            # would each see a different spell).
            floor, analysis, cached, edited = alternating_medians([
                ([args.floor, project], None, None),
                (discover_argv, no_cache, None),
                (discover_argv, None, None),
                (discover_argv, None, lambda: toggle_edit(edited_model)),
            ], rounds)
            target = os.path.join(project, "target")
            compile_argv = [args.sluice, "--project-dir", project, "compile"]
            # Cold: every artifact created in a new, empty target folder, every model parsed. Warm: the project's
            # own target/ compiled again with its parse cache, where publication compares and writes nothing.
            cold_samples = [measure(compile_argv + ["--target-dir", fresh_folder()], env=no_cache)
                            for _ in range(runs)]
            cold = statistics.median(s[0] for s in cold_samples), max(s[1] for s in cold_samples)
            measure(compile_argv)  # the project's own target/, then the warm runs
            warm = median_of(compile_argv, runs)
            # The create floor on one thread and on every core, alternately, so a spell of the file system falls
            # on both alike.
            creates = {1: [], cores: []}
            for _ in range(runs):
                for threads in creates:
                    creates[threads].append(float(subprocess.run(
                        [create_floor, target, fresh_folder(), str(threads)], check=True,
                        stdout=subprocess.PIPE).stdout.decode().strip()))
            create, create_all = (statistics.median(creates[threads]) for threads in (1, cores))
            row = {"size": size, "macros": macros, "floor": floor, "analysis": analysis, "cached": cached,
                   "edited": edited, "compile": cold,
                   "warm": warm, "create": create, "create_all": create_all}
            if df_project and dataform:
                # @dataform/core into the generated project, once and untimed (see generate_project.py).
                subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=df_project,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                try:
                    # --timeout: Dataform gives up after 60 s by default, less than it needs at 10,000 models.
                    row["dataform"] = median_of([dataform, "compile", df_project, "--timeout=30m"],
                                                max(1, min(3, runs)))
                except RuntimeError as error:
                    print(f"dataform compile failed: {error}", file=sys.stderr)
            rows.append(row)
            print_row(row, flush=True)

    subprocess.run(["rm", "-rf", scratch], check=False)  # much faster than shutil.rmtree on ~2 million files
    print("\nsummary (median wall seconds, peak RSS MiB; ratios against the floor measured in the same run)")
    print(HEADER)
    for row in rows:
        print_row(row)


def first_model(project):
    """The first model file of `project` in path order."""
    return min(os.path.join(folder, name)
               for folder, _, names in os.walk(os.path.join(project, "pipelines")) for name in names
               if name.endswith(".sql"))


def toggle_edit(model):
    """Changes a model file (a trailing comment added or removed), so the next load parses it."""
    with open(model) as f:
        text = f.read()
    mark = "-- edited by the benchmark\n"
    with open(model, "w") as f:
        f.write(text[:-len(mark)] if text.endswith(mark) else text + mark)


HEADER = (f"{'models':>8} {'macros':>6} {'floor s':>8} {'analysis s':>10} {'a/floor':>8} {'cached s':>8} "
          f"{'p/floor':>8} {'edited s':>8} {'e/floor':>8} {'cold s':>8} "
          f"{'b/floor':>8} {'warm s':>8} {'w/floor':>8} {'create s':>8} {'b/(c+k)':>8} {'create*':>8} {'k*/floor':>8} "
          f"{'RSS a':>7} {'RSS b':>7} "
          f"{'dataform s':>10} {'df/b':>7}")


def print_row(row, flush=False):
    floor_s = row["floor"][0]
    a_s, a_rss = row["analysis"]
    b_s, b_rss = row["compile"]
    w_s, w_rss = row["warm"]
    df = row.get("dataform")
    df_text = f"{df[0]:10.3f} {df[0] / b_s:7.1f}" if df else f"{'-':>10} {'-':>7}"
    p_s, p_rss = row["cached"]
    e_s, e_rss = row["edited"]
    print(f"{row['size']:>8} {str(row['macros']):>6} {floor_s:8.3f} {a_s:10.3f} {a_s / floor_s:8.2f} {p_s:8.3f} "
          f"{p_s / floor_s:8.2f} {e_s:8.3f} {e_s / floor_s:8.2f} {b_s:8.3f} "
          f"{b_s / floor_s:8.2f} {w_s:8.3f} {w_s / floor_s:8.2f} {row['create']:8.3f} "
          f"{b_s / (floor_s + row['create']):8.2f} {row['create_all']:8.3f} {row['create_all'] / floor_s:8.2f} "
          f"{max(a_rss, p_rss, e_rss):7.1f} {max(b_rss, w_rss):7.1f} {df_text}",
          flush=flush)


if __name__ == "__main__":
    main()
