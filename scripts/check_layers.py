#!/usr/bin/env python3
"""Checks that each layer under src/ includes only the layers it may use (ARCHITECTURE.md, "Layers").

Every #include "<folder>/..." of a layer's own code (tests excluded: they may set up whatever they test with) must name
the layer itself, a layer of its row below, or the public SDK headers (sluice/). Exits 1 listing each wrong-way
include as file:line, with the layers that file may use; 0 when there is none.

Usage: check_layers.py [SOURCE_ROOT] | --self-test
"""
import pathlib
import re
import sys
import tempfile

# The "may use" column of ARCHITECTURE.md's layer table; every layer may use core.
BELOW = {
    "core": set(),
    "sql": {"core"},
    "definitions": {"core", "sql"},
    "project": {"core", "sql", "definitions"},
    "compile": {"core", "sql", "definitions", "deploy"},
    "warehouse": {"core", "sql"},
    "state": {"core"},
    "engine": {"core", "sql", "definitions", "warehouse", "state"},
    "deploy": {"core", "sql", "definitions", "warehouse", "state", "engine"},
    "orchestrate": {"core", "sql", "definitions", "warehouse", "state", "engine", "deploy"},
    "sdk": {"core", "sql", "definitions"},
    "service": {"core", "sql", "definitions", "project", "compile", "warehouse", "state", "engine", "deploy",
                "orchestrate", "sdk"},
    "ui": {"core", "definitions", "service"},
    "cli": {"core", "definitions", "service"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def is_test_code(path: pathlib.Path) -> bool:
    name = path.name
    return (name.endswith("_test.cpp") or name.endswith("_test.hpp") or "test_support" in name
            or "testdata" in path.parts or name.endswith("_bench.cpp"))


def violations(root: pathlib.Path):
    for layer, allowed in BELOW.items():
        folder = root / "src" / layer
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".cpp", ".hpp") or is_test_code(path):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                used = match.group(1)
                if used == layer or used == "sluice" or used in allowed or used not in BELOW:
                    continue
                yield (f"{path.relative_to(root)}:{number}: {layer}/ includes {used}/ "
                       f"(it may use: {', '.join(sorted(allowed | {'sluice'})) or 'nothing'})")


def self_test() -> int:
    """A planted wrong-way include is found; the same include from a test file and a right-way one are not."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "src" / "cli").mkdir(parents=True)
        (root / "src" / "cli" / "wrong.cpp").write_text('#include "engine/run_plan.hpp"\n#include "service/run.hpp"\n')
        (root / "src" / "cli" / "wrong_test.cpp").write_text('#include "engine/run_plan.hpp"\n')
        found = list(violations(root))
    if len(found) != 1 or not found[0].startswith("src/cli/wrong.cpp:1: cli/ includes engine/"):
        print(f"self-test failed: {found}")
        return 1
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    found = list(violations(root))
    for item in found:
        print(item)
    if found:
        print(f"{len(found)} include(s) against the layer order of ARCHITECTURE.md")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
