#!/usr/bin/env python3
"""Compile benchmark: Sluice's project analysis and full compile against the floor (reading every model file
once), measured in the same run so machine noise cancels; optionally an earlier build of Sluice and Dataform's
`dataform compile` as peers.

Prints, per project size, the median wall time over several runs and the peak RSS of:
  (a) analysis   `sluice discover`: load, validate, resolve, build the graph, every model parsed
  (b) compile    `sluice compile` into an empty target/ ("cold"): the same plus every artifact created
  (w) warm       `sluice compile` again on the unchanged project: publication finds nothing to write
  (c) floor      `compile_read_floor` — read every model file once
  (k) create     `compile_create_floor` — create the compiled target/'s files once more (open, write, close per
                 file), the file creation a cold compile cannot avoid; the time of that phase alone
  (k*) create*   the same on every core (`compile_create_floor … THREADS`), as `sluice compile` creates its files
and the ratios a/c, b/c, w/c, b/(c+k) and k*/c. With --baseline BIN, that build's analysis (a0) and cold compile
(b0) run in the same rounds, and a/a0 and b/b0 compare the two builds; with --dataform-sizes, Dataform's
`dataform compile` time and its ratio to (b).

The floor and the discover columns run in rounds (one run of each per round), so a slow or fast spell of the
machine falls on all of them alike: 11 rounds below 100,000 models, 7 at 100,000 (or --runs, if more). The
generated files are synced to disk before any run is timed.

Every cold compile and every create-floor run writes into a fresh folder, removed only when the whole benchmark
ends: on ext4 without a journal, creating files right after deleting as many is several times slower (the inode
allocator steps over recently deleted inodes), which would measure the previous run's `rm -rf`, not Sluice.

usage: run_bench.py --sluice BIN --floor BIN --work DIR [--create-floor BIN] [--baseline BIN]
                    [--sizes 1000,10000,100000] [--runs 5] [--macros] [--dataform-sizes 1000,10000]
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
    parser.add_argument("--baseline", help="an earlier sluice binary to compare with, in the same rounds")
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
            discover_argv = [args.sluice, "--project-dir", project, "discover"]
            # The floor and the discover columns in rounds, one run of each per round, so a slow or fast spell of
            # the machine falls on all of them alike and their ratios keep (runs of one command in a block would
            # each see a different spell).
            commands = [([args.floor, project], None, None), (discover_argv, None, None)]
            if args.baseline:
                commands.append(([args.baseline, "--project-dir", project, "discover"], BASELINE_ENV, None))
            medians = alternating_medians(commands, rounds)
            floor, analysis = medians[0], medians[1]
            target = os.path.join(project, "target")
            compile_argv = [args.sluice, "--project-dir", project, "compile"]
            # Cold: every artifact created in a new, empty target folder. Warm: the project's own target/ compiled
            # again, where publication compares and writes nothing. The baseline's cold compiles alternate with
            # these.
            cold_samples, baseline_samples = [], []
            for _ in range(runs):
                cold_samples.append(measure(compile_argv + ["--target-dir", fresh_folder()]))
                if args.baseline:
                    baseline_samples.append(measure([args.baseline, "--project-dir", project, "compile",
                                                     "--target-dir", fresh_folder()], env=BASELINE_ENV))
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
            row = {"size": size, "macros": macros, "floor": floor, "analysis": analysis, "compile": cold,
                   "warm": warm, "create": create, "create_all": create_all}
            if args.baseline:
                row["baseline_analysis"] = medians[2]
                row["baseline_compile"] = (statistics.median(s[0] for s in baseline_samples),
                                           max(s[1] for s in baseline_samples))
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


# An earlier build's parse cache (it had one) would not be an analysis: it is switched off.
BASELINE_ENV = dict(os.environ, SLUICE_PARSE_CACHE="off")

HEADER = (f"{'models':>8} {'macros':>6} {'floor s':>8} {'analysis s':>10} {'a/floor':>8} {'cold s':>8} "
          f"{'b/floor':>8} {'warm s':>8} {'w/floor':>8} {'create s':>8} {'b/(c+k)':>8} {'create*':>8} {'k*/floor':>8} "
          f"{'RSS a':>7} {'RSS b':>7} {'a0 s':>7} {'a/a0':>6} {'b0 s':>7} {'b/b0':>6} {'RSS a0':>7} {'RSS b0':>7} "
          f"{'dataform s':>10} {'df/b':>7}")


def print_row(row, flush=False):
    floor_s = row["floor"][0]
    a_s, a_rss = row["analysis"]
    b_s, b_rss = row["compile"]
    w_s, w_rss = row["warm"]
    df = row.get("dataform")
    df_text = f"{df[0]:10.3f} {df[0] / b_s:7.1f}" if df else f"{'-':>10} {'-':>7}"
    if "baseline_analysis" in row:
        a0_s, a0_rss = row["baseline_analysis"]
        b0_s, b0_rss = row["baseline_compile"]
        base_text = f"{a0_s:7.3f} {a_s / a0_s:6.2f} {b0_s:7.3f} {b_s / b0_s:6.2f} {a0_rss:7.1f} {b0_rss:7.1f}"
    else:
        base_text = f"{'-':>7} {'-':>6} {'-':>7} {'-':>6} {'-':>7} {'-':>7}"
    print(f"{row['size']:>8} {str(row['macros']):>6} {floor_s:8.3f} {a_s:10.3f} {a_s / floor_s:8.2f} {b_s:8.3f} "
          f"{b_s / floor_s:8.2f} {w_s:8.3f} {w_s / floor_s:8.2f} {row['create']:8.3f} "
          f"{b_s / (floor_s + row['create']):8.2f} {row['create_all']:8.3f} {row['create_all'] / floor_s:8.2f} "
          f"{a_rss:7.1f} {max(b_rss, w_rss):7.1f} {base_text} {df_text}",
          flush=flush)


if __name__ == "__main__":
    main()
