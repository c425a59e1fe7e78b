# Thin wrappers over scripts/ and CMake presets. See README.md.
.PHONY: setup build demo test bench bench-engine bench-clickhouse bench-postgres bench-backfill bench-backfill-postgres bench-orchestrate bench-queue bench-deploy debug fuzz clean

JOBS ?= $(shell nproc)

setup:
	@bash scripts/setup.sh

build: setup
	@cmake --preset release >/dev/null
	@cmake --build --preset release -j $(JOBS)

demo: build
	@bash examples/orders_demo/run_demo.sh build/release/src/cli/sluice
	@echo
	@bash examples/sdk_orders/run_demo.sh build/release/examples/sdk_orders/sdk_orders
	@echo
	@bash examples/starbake/run_demo.sh build/release/src/cli/sluice build/release/tests/starlake_double
	@echo
	@bash examples/staged_orders/run_demo.sh build/release/src/cli/sluice

test: build
	@ctest --preset release -j $(JOBS)
	@JOBS=$(JOBS) bash scripts/sanitize_check.sh

# Benchmarks print ratios against a baseline measured in the same run (see bench/README.md).
bench: build
	@python3 bench/compile/run_bench.py --sluice build/release/src/cli/sluice \
	  --floor build/release/bench/compile_read_floor --work build/bench $(BENCH_ARGS)
	@python3 bench/engine/run_bench.py --sluice build/release/src/cli/sluice \
	  --floor build/release/bench/engine_floor --work build/bench $(ENGINE_BENCH_ARGS)

# `sluice run` of N chained DuckDB models against the same statements on one connection; `--large` adds 10,000.
bench-engine: build
	@python3 bench/engine/run_bench.py --sluice build/release/src/cli/sluice \
	  --floor build/release/bench/engine_floor --work build/bench $(ENGINE_BENCH_ARGS)

# `sluice build` on ClickHouse against the same statements sent over one connection; starts its own server.
bench-clickhouse: build
	@python3 bench/engine/run_bench_clickhouse.py --sluice build/release/src/cli/sluice \
	  --floor build/release/bench/clickhouse_floor --work build/bench $(CLICKHOUSE_BENCH_ARGS)

# A 365-day backfill of a code asset (100,000 rows a day, multi_run(10)) against one bare INSERT … SELECT.
bench-postgres: build
	@python3 bench/engine/run_bench_postgres.py --sluice build/release/src/cli/sluice \
	  --floor build/release/bench/postgres_floor --work build/bench $(POSTGRES_BENCH_ARGS)

bench-backfill: build
	@python3 bench/sdk/run_bench_backfill.py --program build/release/bench/bench_backfill \
	  --floor build/release/bench/engine_floor --work build/bench $(BACKFILL_BENCH_ARGS)

bench-backfill-postgres: build
	@python3 bench/sdk/run_bench_backfill.py --program build/release/bench/bench_backfill \
	  --floor build/release/bench/engine_floor --postgres-floor build/release/bench/postgres_floor \
	  --work build/bench $(BACKFILL_BENCH_ARGS)

bench-orchestrate: build
	@python3 bench/orchestrate/run_bench_orchestrate.py --sluice build/release/src/cli/sluice \
	  --bench build/release/bench/orchestrate_bench --double build/release/tests/starlake_double \
	  --work build/bench/orchestrate $(ORCHESTRATE_BENCH_ARGS)

bench-queue: build
	@python3 bench/orchestrate/run_bench_queue.py --sluice build/release/src/cli/sluice \
	  --queue-runs build/release/bench/queue_runs --double build/release/tests/starlake_double \
	  --work build/bench/queue $(QUEUE_BENCH_ARGS)

# `plan` of a 100- and a 1,000-model virtual project against a live ClickHouse server (started and stopped here):
# its warehouse calls (a constant) and its time against compile.
bench-deploy: build
	@python3 bench/deploy/run_bench.py --bench build/release/bench/virtual_plan_bench \
	  --work build/bench/deploy $(DEPLOY_BENCH_ARGS)

debug: setup
	@cmake --preset debug >/dev/null
	@cmake --build --preset debug -j $(JOBS)
	@ctest --preset debug -j $(JOBS)

# libFuzzer targets (clang-14), FUZZ_SECONDS each (default 300); FUZZ_TARGETS picks some (scripts/fuzz.sh --list).
fuzz:
	@bash scripts/fuzz.sh $(FUZZ_TARGETS)

clean:
	rm -rf build
