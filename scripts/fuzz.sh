#!/usr/bin/env bash
# Builds and runs Sluice's libFuzzer targets (tests/fuzz/), separate from `make test`.
#
#   scripts/fuzz.sh                     every target, ${FUZZ_SECONDS:-300} seconds each
#   scripts/fuzz.sh header select       only these targets
#   FUZZ_SECONDS=60 scripts/fuzz.sh     shorter runs
#   scripts/fuzz.sh --list              the target names
#
# Installs clang-14 and libclang-rt-14-dev when missing (idempotent; sudo only when not root), runs
# scripts/setup.sh, configures build/fuzz with clang and the sanitizer flags on every library, builds the
# fuzz_<target> executables, seeds a corpus per target from the fixtures (tests/projects, examples, the
# `--- file:` sections of tests/golden/diagnostics/*.test) plus tests/fuzz/regressions/<target>/, then
# runs each target. Layout under build/fuzz/:
#   corpus/<target>/    the growing corpus (kept between runs)
#   seeds/<target>/     seeds regenerated from the fixtures on every run
#   findings/<target>/  crash-*, timeout-*, oom-*, leak-* inputs (kept between runs)
#   logs/<target>.log   libFuzzer's output
# Prints a summary (executions, coverage, new corpus units, findings of this run) and exits 1 when any
# target found something. Reproduce a finding with build/fuzz/tests/fuzz/fuzz_<target> <file>; minimize it
# with `fuzz_<target> -minimize_crash=1 -runs=100000 <file>`, then save it under
# tests/fuzz/regressions/<target>/ (replayed by fuzz_regression_test in the normal build).
# Environment: FUZZ_SECONDS (default 300), JOBS (build parallelism, default nproc), FUZZ_ARGS (extra
# libFuzzer flags).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/fuzz"
seconds="${FUZZ_SECONDS:-300}"
jobs="${JOBS:-$(nproc)}"

# target → -max_len (bytes)
declare -A max_len=(
  [header]=4096 [sql_scan]=8192 [select]=8192 [model]=8192 [toml_config]=8192 [yaml_sources]=8192 [templating]=512
  [macro_arguments]=4096 [seed_csv]=4096
)
# target → dictionaries under tests/fuzz/dicts/ (several are joined into build/fuzz/dicts/<target>.dict)
declare -A dictionary=(
  [header]=header [sql_scan]=sql [select]=sql [model]="header sql" [toml_config]=toml [yaml_sources]=yaml [templating]=templating
  [macro_arguments]=macro_arguments [seed_csv]=seed_csv
)
all_targets=(header sql_scan select model toml_config yaml_sources seed_csv templating macro_arguments)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${all_targets[@]}"
  exit 0
fi
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
  if [ -z "${max_len[$target]:-}" ]; then
    echo "fuzz: unknown target '$target' (known: ${all_targets[*]})" >&2
    exit 2
  fi
done
case "$seconds" in '' | *[!0-9]*) echo "fuzz: FUZZ_SECONDS must be a whole number of seconds" >&2; exit 2 ;; esac

# ---- Tools ----------------------------------------------------------------------------------------------

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
missing=()
for p in clang-14 libclang-rt-14-dev; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then missing+=("$p"); fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "fuzz: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q
  as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash "$root/scripts/setup.sh"

# ---- Build ----------------------------------------------------------------------------------------------

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g -O1"
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE= \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSLUICE_FUZZ=ON >/dev/null
cmake --build "$build" -j "$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")

# ---- Seeds ----------------------------------------------------------------------------------------------

seeds="$build/seeds"
rm -rf "$seeds"
for target in "${all_targets[@]}"; do mkdir -p "$seeds/$target"; done

# The fixture files, and the `--- file:` sections of the golden tests written out as files.
fixtures="$build/seeds/.fixtures"
mkdir -p "$fixtures/golden"
for f in "$root"/tests/golden/diagnostics/*.test; do
  awk -v out="$fixtures/golden/$(basename "$f" .test)" '
    /^--- / { file = ""; if ($2 == "file:") { n++; name = $3; gsub(/[^A-Za-z0-9._-]/, "_", name);
                                              file = out "__" n "__" name; printf "" > file }
              next }
    file != "" { print >> file }' "$f"
done
mapfile -d '' fixture_files < <(find "$root/tests/projects" "$root/examples" "$fixtures/golden" -type f \
  \( -name '*.sql' -o -name '*.toml' -o -name '*.yml' -o -name '*.yaml' \) -print0 | sort -z)

# seed <target> <selector byte, decimal, or ""> <name> <file>: the file, prefixed with the selector byte.
seed() {
  local out="$seeds/$1/$3"
  if [ -n "$2" ]; then printf "\\$(printf '%03o' "$2")" >"$out"; else : >"$out"; fi
  cat "$4" >>"$out"
}
# The SQL body of a model/test/audit file: the lines after its header (through the line that ends `);`).
sql_body() {
  awk 'NR == 1 && !/^[ \t]*(MODEL|TEST|AUDIT)[ \t]*\(/ { header_done = 1 }
       header_done { print; next }
       /\)[ \t]*;[ \t]*$/ { header_done = 1 }' "$1"
}

i=0
for f in "${fixture_files[@]}"; do
  i=$((i + 1))
  base="$i-$(basename "$f")"
  case "$f" in
    *.sql)
      first_word="$(awk 'NF { print $1; exit }' "$f" | sed 's/(.*//')"
      case "$first_word" in
        MODEL)
          seed header 0 "$base" "$f"
          for dialect in 0 1; do
            seed model "$dialect" "$base.$dialect" "$f"
          done
          ;;
        TEST) seed header 1 "$base" "$f" ;;
        AUDIT) seed header 2 "$base" "$f" ;;
      esac
      sql_body "$f" >"$fixtures/body"
      for dialect in 0 1 2 3; do
        seed sql_scan "$dialect" "$base.$dialect" "$f"
        seed select "$dialect" "$base.$dialect" "$fixtures/body"
      done
      if grep -q '@' "$f"; then
        for dialect in 0 1; do seed macro_arguments "$dialect" "$base.$dialect" "$f"; done
      fi
      ;;
    *streambuild_project.toml) seed toml_config 0 "$base" "$f"; seed toml_config 3 "$base.flag" "$f" ;;
    *streambuild_local.toml) seed toml_config 1 "$base" "$f"; seed toml_config 4 "$base.flag" "$f" ;;
    *.toml) seed toml_config 2 "$base" "$f"; seed toml_config 5 "$base.flag" "$f" ;;
    *.yml | *.yaml) seed yaml_sources "" "$base" "$f" ;;
    *.csv) seed seed_csv "" "$base" "$f" ;;
  esac
done
# Templating and macro arguments have no fixture files of their own: a few hand-written inputs.
printf '\000${region}-${ENV:HOME}' >"$seeds/templating/plain"
printf '\001${port}' >"$seeds/templating/typed"
printf '\002x-${a}\n${b}\n${c}\n${a}/${b}/${c}/${list}' >"$seeds/templating/vars"
printf '\003${a}\n${b}\n${a}\n${ENV:X}${}${nothing}${ratio}$${' >"$seeds/templating/cycle"
printf '\000${unset}:${map}:${ENV:EMPTY}:${ns:x}' >"$seeds/templating/errors"
printf "\\000SELECT @m('a', \"b\", r'\\\\d', 1_000, 0x1f, -2.5e3, True, None, [1, (2,), {'k': @n()}], x=@o(y=1))" \
  >"$seeds/macro_arguments/literals"
printf "\\001SELECT @m('''multi\nline''', u'\\\\u00e9', b=-0o17, c=0b101, d={1: 2, 'k': [None]}, e=())" \
  >"$seeds/macro_arguments/more"

# ---- Run ------------------------------------------------------------------------------------------------

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
mkdir -p "$build/logs"
summary=()
failed=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  findings="$build/findings/$target"
  regressions="$root/tests/fuzz/regressions/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$regressions"
  dict="$build/dicts/$target.dict"
  mkdir -p "$build/dicts"
  for name in ${dictionary[$target]}; do cat "$root/tests/fuzz/dicts/$name.dict"; done >"$dict"
  stamp="$(mktemp)"
  echo "fuzz: $target for ${seconds}s (log: ${log#"$root"/})"
  status=0
  # -fork would keep going after a crash, but a plain run reports the first one with a clean stack.
  "$build/tests/fuzz/fuzz_$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$target]}" \
    -dict="$dict" \
    -artifact_prefix="$findings/" -print_final_stats=1 ${FUZZ_ARGS:-} \
    "$corpus" "$seeds/$target" "$regressions" >"$log" 2>&1 || status=$?
  new_findings="$(find "$findings" -type f -newer "$stamp" \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \
    -o -name 'leak-*' \) | sort)"
  rm -f "$stamp"
  count=0
  [ -z "$new_findings" ] || count="$(printf '%s\n' "$new_findings" | wc -l)"
  if [ "$count" -eq 0 ] && [ "$status" -ne 0 ]; then count="exit $status"; fi
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  units="$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)"
  cov_start="$(grep -m1 -o 'INITED cov: [0-9]*' "$log" | grep -o '[0-9]*$' || true)"
  cov_end="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)"
  coverage="${cov_start:-?} -> ${cov_end:-?}"
  summary+=("$(printf '%-16s %12s %16s %10s  %s' "$target" "${execs:-?}" "$coverage" "${units:-?}" "$count")")
  if [ "$count" != 0 ]; then
    failed=1
    while IFS= read -r finding; do
      [ -z "$finding" ] || summary+=("    ${finding#"$root"/}")
    done <<<"$new_findings"
    reason="$(grep -m1 -A1 -E 'ERROR: [A-Za-z]+Sanitizer|ERROR: libFuzzer|runtime error:|terminate called' "$log" \
      | grep -v '^--$' || true)"
    while IFS= read -r line; do
      [ -z "$line" ] || summary+=("    $line")
    done <<<"$reason"
  fi
done

echo
printf '%-16s %12s %16s %10s  %s\n' target execs "cov (start->end)" "new units" findings
printf '%s\n' "${summary[@]}"
exit "$failed"
