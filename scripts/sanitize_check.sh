#!/usr/bin/env bash
# The parsers and loaders under AddressSanitizer and UndefinedBehaviorSanitizer, as part of `make test`.
#
# Hostile input reaches Sluice through the tokenizer, the SELECT parser, the MODEL/TEST/AUDIT header grammar,
# TOML/YAML loading, templating and the project loader; Definitions validates what comes out of it, and what is
# compiled goes out through the artifact publisher (whose full publication writes on several threads at once).
# Their unit tests, the golden SELECT and body-contract corpora (tests/golden/select, tests/golden/contract) and
# the fuzz regression corpus (tests/fuzz/regressions: every input a fuzzer ever crashed) run here in the
# sanitizer build (preset `debug`, build/debug), where a memory error that the optimized build survives by luck
# fails the run.
# Then every command of the `sluice` binary and of an SDK program runs at least once on copies of the examples
# (scripts/sanitize_cli_tour.sh), in the same build.
# `make debug` builds and runs everything under the sanitizers; this is the subset CI can afford.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${JOBS:-$(nproc)}"
targets=(fuzz_regression_test sql_test sql_select_test golden_select_test header_grammar_test model_contract_test
         golden_contract_test checks_test project_config_test sources_test core_test project_test definitions_test
         artifact_publisher_test artifacts_test sql_relational_test golden_relational_test)

cd "$root"
cmake --preset debug >/dev/null
cmake --build --preset debug -j "$jobs" --target "${targets[@]}" sluice sdk_orders starlake_double

export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
failed=()
for target in "${targets[@]}"; do
  binary="$(find build/debug -type f -name "$target" -perm -u+x | head -n 1)"
  if [ -z "$binary" ]; then
    echo "sanitize_check: $target was not built" >&2
    exit 1
  fi
  if ! (cd "$(dirname "$binary")" && "./$target" --gtest_brief=1 >"$root/build/debug/$target.log" 2>&1); then
    failed+=("$target")
    tail -n 60 "$root/build/debug/$target.log" >&2
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "sanitize_check: failed under the sanitizers: ${failed[*]} (logs in build/debug/<test>.log)" >&2
  exit 1
fi
bash "$root/scripts/sanitize_cli_tour.sh" build/debug/src/cli/sluice build/debug/examples/sdk_orders/sdk_orders \
  build/debug/tests/starlake_double build/debug/cli_tour
echo "sanitize_check: ${#targets[@]} test programs pass under AddressSanitizer and UndefinedBehaviorSanitizer"
