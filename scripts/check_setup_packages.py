#!/usr/bin/env python3
"""Checks that scripts/setup.sh installs every Debian package the build, the test suite and the demo use.

What counts as used:
  - every file the compiler read (ninja's dependency log, `ninja -t deps`) and every library on a link line
    (`ninja -t commands`), and the CMake files the configure step read (build.ninja's re-run inputs);
  - every program the build runs (the first word of each command ninja runs: compiler, archiver, cmake);
  - the tools the suite and the demo run (TOOLS below: the ClickHouse and PostgreSQL servers, Debian's python3,
    npm, the time zone database), and every Python module imported by the repository's Python (scripts,
    benchmarks, the macro runtime, macro fixtures, the Python embedded in shell scripts), found with `ast`.

Each file is mapped to its Debian package with `dpkg -S`. A package passes when scripts/setup.sh names it in
its `packages=( … )` or `fallback_packages=( … )` list, when it is a dependency of one that is (`apt-cache
depends --recurse`), or when every Debian system has it (Essential or Priority required). Files inside the
source or build tree (DuckDB in third_party/ included: setup.sh fetches it itself) are not Debian's and are
skipped; any other file that no package owns was installed by hand and fails the check.

  check_setup_packages.py --build-dir build/release            the check: exit 0, or 1 naming each package
  check_setup_packages.py --build-dir build/release --self-test
      takes each listed package off the list in turn and shows the check then fails naming it (unless another
      listed package depends on it, which the output says), and runs the check end to end on a copy of
      setup.sh without libdtl-dev
"""

import argparse
import ast
import collections
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Programs and data files the suite and the demo use outside the build; each entry: what uses it, then the
# candidates (a command name looked up on PATH, or an absolute path) of which the first that exists counts.
# Debian's python3 is named by path: an image may put another python3 first on PATH, a fresh machine does not.
TOOLS = [
    ("CMake's pkg_check_modules (cmake/Dependencies.cmake)", ["pkg-config"]),
    ("scripts/clickhouse_test_server.sh", ["clickhouse-server", "/usr/bin/clickhouse"]),
    ("scripts/postgres_test_server.sh", ["/usr/lib/postgresql/15/bin/initdb"]),
    ("scripts/postgres_test_server.sh", ["/usr/lib/postgresql/15/bin/pg_ctl"]),
    ("scripts/postgres_test_server.sh", ["/usr/lib/postgresql/15/bin/postgres"]),
    ("the test scripts, the benchmarks and examples/starbake/run_demo.sh", ["/usr/bin/python3"]),
    ("scripts/setup.sh (DuckDB from the npm registry)", ["npm"]),
    ("time zones (date-tz reads the zone database at run time)", ["/usr/share/zoneinfo/Europe/Paris"]),
]

# Python that is data, not code run here: Starlake DAG files are read as text by `sluice starlake import`.
PYTHON_DATA_DIRS = {"dags"}
# Modules the macro runtime installs into the embedded interpreter (src/project/macros/macro_runtime.py).
RUNTIME_MODULES = {"streambuild", "sluice"}
SKIPPED_DIRS = {".git", "build", "third_party", "node_modules", "Testing", "target", ".sluice"}


class Use:
    """One use of a file: the file and what used it (an object file, a link, a tool, a script)."""

    def __init__(self, path, by):
        self.path = path
        self.by = by


def run(argv, check=True):
    result = subprocess.run(argv, capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit(f"setup check: `{' '.join(argv)}` failed: {result.stderr.strip()}")
    return result


def listed_packages(setup_text):
    """The package names of setup.sh's `packages=( … )` and `fallback_packages=( … )` arrays."""
    names = []
    for array in ("packages", "fallback_packages"):
        match = re.search(r"^" + array + r"=\(([^)]*)\)", setup_text, re.MULTILINE)
        if match is None:
            if array == "packages":
                sys.exit("setup check: scripts/setup.sh has no `packages=( … )` list")
            continue
        body = "\n".join(line.split("#", 1)[0] for line in match.group(1).splitlines())
        names += body.split()
    return names


def inside_tree(path, build_dir):
    return path.startswith(ROOT + os.sep) or path.startswith(build_dir + os.sep)


def build_uses(build_dir):
    """Files the compiler read, libraries linked, CMake inputs and programs run, from ninja's logs."""
    uses = []
    ninja = shutil.which("ninja") or shutil.which("ninja-build")
    if ninja is None or not os.path.exists(os.path.join(build_dir, "build.ninja")):
        sys.exit(f"setup check: no ninja build in {build_dir} (run `make build` first)")
    uses.append(Use(ninja, "the build"))

    target = None
    for line in run([ninja, "-C", build_dir, "-t", "deps"]).stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            target = line.split(":", 1)[0]
            continue
        path = line.strip()
        if not os.path.isabs(path):
            path = os.path.join(build_dir, path)
        uses.append(Use(os.path.normpath(path), f"{target} (compiler)"))

    programs = {}
    for command in run([ninja, "-C", build_dir, "-t", "commands"]).stdout.splitlines():
        for segment in re.split(r"&&|;|\|\|", command):
            try:
                words = shlex.split(segment)
            except ValueError:
                words = segment.split()
            if not words or words[0] in (":", "cd"):
                continue
            program = words[1] if os.path.basename(words[0]) == "ccache" and len(words) > 1 else words[0]
            programs.setdefault(program, segment.strip()[:80])
            if os.path.basename(words[0]) == "ccache":
                programs.setdefault(words[0], segment.strip()[:80])
            if " -c " in f" {segment} " or "-o" not in words:
                continue
            output = words[words.index("-o") + 1] if words.index("-o") + 1 < len(words) else "?"
            for word in words[1:]:
                if word.startswith("-l") and len(word) > 2:
                    found = library_file(program, word[2:])
                    if found:
                        uses.append(Use(found, f"the link of {output}"))
                elif os.path.isabs(word) and re.search(r"\.(so(\.[0-9.]+)?|a)$", word):
                    uses.append(Use(os.path.normpath(word), f"the link of {output}"))
    for program, command in programs.items():
        path = program if os.path.isabs(program) else resolve_tool([program])
        if path is None:
            uses.append(Use(program, f"the build command `{command}`"))
        else:
            uses.append(Use(path, f"the build command `{command}`"))

    with open(os.path.join(build_dir, "build.ninja"), encoding="utf-8") as build_ninja:
        text = build_ninja.read().replace("$\n", " ")
    match = re.search(r"^build build\.ninja[^:]*:\s*RERUN_CMAKE\s*\|?(.*)$", text, re.MULTILINE)
    if match:
        for word in match.group(1).split():
            word = word.replace("$:", ":").replace("$ ", " ")
            if os.path.isabs(word):
                uses.append(Use(os.path.normpath(word), "CMake's configure step"))
    return uses


_library_cache = {}


def library_file(compiler, name):
    """The file `-l<name>` resolves to for the compiler, or None when it finds none."""
    if name not in _library_cache:
        found = None
        for candidate in (f"lib{name}.so", f"lib{name}.a"):
            printed = run([compiler, f"-print-file-name={candidate}"], check=False).stdout.strip()
            if os.path.isabs(printed) and os.path.exists(printed):
                found = os.path.normpath(printed)
                break
        _library_cache[name] = found
    return _library_cache[name]


def resolve_tool(candidates):
    """The first candidate that exists: an absolute path as is, a command name on PATH. A command that PATH
    finds outside Debian's packages (a version manager's shim) falls back to /usr/bin or /usr/sbin."""
    for candidate in candidates:
        if os.path.isabs(candidate):
            if os.path.exists(candidate):
                return candidate
            continue
        found = shutil.which(candidate)
        if found and (found.startswith("/usr/") or found.startswith("/bin/") or found.startswith("/sbin/")):
            return found
        for directory in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"):
            path = os.path.join(directory, candidate)
            if os.path.exists(path):
                return path
        if found:
            return found
    return None


def tool_uses():
    uses = []
    for by, candidates in TOOLS:
        path = resolve_tool(candidates)
        uses.append(Use(path or candidates[0], by))
    return uses


def python_sources():
    """(file, source text) of the Python that runs here: .py files outside data folders, and the Python
    embedded in shell scripts (`python3 - <<'PY' … PY` and `python3 -c '…'`)."""
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in SKIPPED_DIRS and d not in PYTHON_DATA_DIRS]
        for name in files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, ROOT)
            if name.endswith(".py"):
                with open(path, encoding="utf-8") as source:
                    yield relative, source.read()
            elif name.endswith(".sh"):
                with open(path, encoding="utf-8") as source:
                    text = source.read()
                for match in re.finditer(r"<<'?PY'?\n(.*?)\n\s*PY\n", text, re.DOTALL):
                    yield relative, match.group(1)
                for match in re.finditer(r"python3 -c '([^']*)'", text):
                    yield relative, match.group(1)


def python_module_uses(python):
    """The files of the modules the repository's Python imports, as Debian's python3 finds them."""
    imported = collections.OrderedDict()
    local = set(RUNTIME_MODULES)
    for relative, text in python_sources():
        if relative.endswith(".py"):
            local.add(os.path.splitext(os.path.basename(relative))[0])
        try:
            tree = ast.parse(text)
        except SyntaxError as error:
            sys.exit(f"setup check: {relative}: cannot parse its Python: {error}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                imported.setdefault(name.split(".")[0], relative)
    modules = [name for name in imported if name not in local]
    if not modules:
        return [], []
    script = (
        "import importlib.util, sys\n"
        "for name in sys.argv[1:]:\n"
        "    spec = importlib.util.find_spec(name)\n"
        "    origin = getattr(spec, 'origin', None) if spec else None\n"
        "    print(name, 'missing' if spec is None else (origin or 'built-in'))\n"
    )
    uses, problems = [], []
    for line in run([python, "-c", script, *modules]).stdout.splitlines():
        name, origin = line.split(" ", 1)
        by = f"`import {name}` in {imported[name]}"
        if origin == "missing":
            problems.append(f"Python module `{name}` ({by}) is not installed for Debian's python3: add the "
                            f"Debian package that provides it (`apt-cache search python3-{name}`) to "
                            "scripts/setup.sh")
        elif origin in ("built-in", "frozen"):
            uses.append(Use(python, by))
        else:
            uses.append(Use(origin, by))
    return uses, problems


def owners(paths):
    """path → the Debian packages owning it: those of the path as given, else of its real path, else of its
    merged-/usr twin (a library symlink belongs to the -dev package, the file it points to to the runtime one)."""
    variants = {}
    for path in paths:
        options = [path, os.path.realpath(path)]
        for option in list(options):
            if option.startswith("/usr/"):
                options.append(option[4:])
            else:
                options.append("/usr" + option)
        variants[path] = [p for p in dict.fromkeys(options)]
    query = sorted({variant for options in variants.values() for variant in options})
    owned = collections.defaultdict(set)
    for chunk in range(0, len(query), 2000):
        result = run(["dpkg-query", "-S", *query[chunk:chunk + 2000]], check=False)
        for line in result.stdout.splitlines():
            if line.startswith("diversion ") or ": " not in line:
                continue
            packages, path = line.split(": ", 1)
            for package in packages.split(", "):
                owned[path].add(package.split(":")[0])
    return {path: next((owned[v] for v in options if owned.get(v)), set()) for path, options in variants.items()}


def baseline_packages():
    """Packages every Debian 12 system has: Essential ones and those of Priority required."""
    result = run(["dpkg-query", "-W", "-f", "${Package}\t${Essential}\t${Priority}\n"])
    base = set()
    for line in result.stdout.splitlines():
        package, essential, priority = (line.split("\t") + ["", ""])[:3]
        if essential == "yes" or priority == "required":
            base.add(package)
    return base


def dependency_graph(roots):
    """package → the packages it depends on (all alternatives and the providers of virtual packages), over
    everything reachable from roots, from one `apt-cache depends --recurse`."""
    result = run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                  "--no-breaks", "--no-replaces", "--no-enhances", *sorted(roots)], check=False)
    graph = collections.defaultdict(set)
    current = None

    def name(word):
        return word.strip().strip("<>").split(":")[0]

    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            current = name(line)
            graph.setdefault(current, set())
        elif current is not None:
            stripped = line.strip().lstrip("|")
            if ":" in stripped and stripped.split(":", 1)[0] in ("Depends", "PreDepends"):
                graph[current].add(name(stripped.split(":", 1)[1]))
            elif line.startswith("    "):
                graph[current].add(name(stripped))
    return graph


def closure(graph, roots):
    seen = set()
    stack = list(roots)
    while stack:
        package = stack.pop()
        if package in seen:
            continue
        seen.add(package)
        stack.extend(graph.get(package, ()))
    return seen


class Inventory:
    """Everything the check needs, computed once: uses, their owners, the dependency graph."""

    def __init__(self, build_dir, setup_text):
        self.build_dir = os.path.abspath(build_dir)
        self.listed = listed_packages(setup_text)
        uses = build_uses(self.build_dir) + tool_uses()
        python = resolve_tool(["/usr/bin/python3"])
        module_uses, self.problems = python_module_uses(python) if python else ([], [])
        uses += module_uses
        if python is None:
            self.problems.append("Debian's python3 (/usr/bin/python3) is missing: scripts/setup.sh should "
                                 "install python3-dev, which brings it")
        self.uses = [u for u in uses if not inside_tree(u.path, self.build_dir)]
        self.unowned = []
        by_path = collections.OrderedDict()
        for use in self.uses:
            by_path.setdefault(use.path, use)
        existing = [p for p in by_path if os.path.isabs(p) and os.path.exists(p)]
        self.owners = owners(existing)
        for path, use in by_path.items():
            if not self.owners.get(path):
                self.unowned.append(use)
        self.package_uses = collections.OrderedDict()
        for path, packages in self.owners.items():
            for package in sorted(packages):
                self.package_uses.setdefault(package, by_path[path])
        self.baseline = baseline_packages()
        self.graph = dependency_graph(set(self.listed) | self.baseline)

    def uncovered(self, listed):
        """Packages used whose files no package in listed (nor the baseline) brings: package → Use."""
        covered = closure(self.graph, set(listed) | self.baseline)
        missing = collections.OrderedDict()
        for path, packages in self.owners.items():
            if packages and not packages & covered:
                use = next(u for u in self.uses if u.path == path)
                for package in sorted(packages):
                    missing.setdefault(package, use)
        return missing


def report(inventory, listed, setup_name):
    """Prints the check's findings; returns the packages it named (empty when the check passes)."""
    missing = inventory.uncovered(listed)
    for package, use in missing.items():
        print(f"setup check: Debian package `{package}` is used but {setup_name} does not install it "
              f"(neither in its packages list nor a dependency of a listed package): {use.path}, used by "
              f"{use.by}. Add `{package}` to the packages=( … ) list of {setup_name}.")
    for use in inventory.unowned:
        print(f"setup check: {use.path}, used by {use.by}, belongs to no Debian package (installed by hand, or "
              "missing): a fresh machine will not have it. Install it from a Debian package listed in "
              f"{setup_name}, or fetch it in {setup_name} as DuckDB is.")
    for problem in inventory.problems:
        print(f"setup check: {problem}")
    return list(missing)


def self_test(inventory, setup_path):
    failures = []
    checked = 0
    for package in inventory.listed:
        rest = [p for p in inventory.listed if p != package]
        named = inventory.uncovered(rest)
        if package not in inventory.package_uses:
            continue
        checked += 1
        if package in named:
            use = inventory.package_uses[package]
            print(f"self-test: without `{package}` the check fails naming it ({use.path})")
        elif package in closure(inventory.graph, set(rest) | inventory.baseline):
            print(f"self-test: without `{package}` the check passes: another listed package depends on it")
        else:
            failures.append(f"without `{package}` (which owns {inventory.package_uses[package].path}) the check "
                            "did not name it")
    if checked == 0:
        failures.append("no listed package owns a file the build uses: the check sees nothing")

    # End to end, on a copy of setup.sh without libdtl-dev: the incident that made this check.
    with open(setup_path, encoding="utf-8") as source:
        text = source.read()
    stripped = re.sub(r"(?<=\s)libdtl-dev(?=\s)", "", text, count=1)
    if stripped == text:
        failures.append("scripts/setup.sh does not list libdtl-dev")
    else:
        with tempfile.NamedTemporaryFile("w", suffix="-setup.sh", delete=False) as copy:
            copy.write(stripped)
        try:
            result = run([sys.executable, os.path.abspath(__file__), "--build-dir", inventory.build_dir,
                          "--setup", copy.name], check=False)
        finally:
            os.unlink(copy.name)
        if result.returncode != 1 or "`libdtl-dev`" not in result.stdout or "dtl/" not in result.stdout:
            failures.append("the check on setup.sh without libdtl-dev did not fail naming libdtl-dev and a dtl "
                            f"header (exit {result.returncode}):\n{result.stdout}{result.stderr}")
        else:
            print("self-test: on setup.sh without libdtl-dev the check exits 1: "
                  + next(line for line in result.stdout.splitlines() if "`libdtl-dev`" in line))
    for failure in failures:
        print(f"self-test FAILED: {failure}")
    print(f"self-test: {checked} listed packages own files the build or the suite uses; "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", required=True, help="a configured and built ninja build (build/release)")
    parser.add_argument("--setup", default=os.path.join(ROOT, "scripts", "setup.sh"),
                        help="the setup script whose package list is checked (default: scripts/setup.sh)")
    parser.add_argument("--self-test", action="store_true",
                        help="show that the check fails when a package is taken off the list")
    args = parser.parse_args()
    with open(args.setup, encoding="utf-8") as setup:
        setup_text = setup.read()
    inventory = Inventory(args.build_dir, setup_text)
    if args.self_test:
        return self_test(inventory, args.setup)
    named = report(inventory, inventory.listed, "scripts/setup.sh")
    if named or inventory.unowned or inventory.problems:
        return 1
    packages = {p for u in inventory.uses for p in inventory.owners.get(u.path, ())}
    print(f"setup check: {len(inventory.owners)} files used by the build, the suite and the demo come from "
          f"{len(packages)} Debian packages, each installed by scripts/setup.sh (its {len(inventory.listed)} listed "
          "packages, their dependencies, or the base system)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
