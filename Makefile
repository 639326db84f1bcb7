# Every target creates the virtual environment first if it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Where `make run` serves; set them on the command line: make run PORT=8123 HOST=0.0.0.0
# (plain assignments, so a HOST or PORT in the shell's environment is not picked up).
HOST    = 127.0.0.1
PORT    = 8000

.PHONY: venv test lint format bench bench-http run clean core-check chromium mutate

venv: $(STAMP)

# Two distributions, both editable: the core (.) and the server (./server: adapters,
# entrypoints and the `booking` command); see docs/architecture.md.
$(STAMP): pyproject.toml server/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' -e ./server
	touch $(STAMP)

# The whole suite under the hypothesis ``ci`` profile (no per-example deadline, no
# too_slow health check): green on a loaded machine too, not on most runs.
# pytest's exit code 5 means no test ran: that is a failure, said plainly.
# Two worker processes (pytest-xdist), one test file at a time each, the longest files
# first (tests/conftest.py; --no-loadscope-reorder keeps that order, which xdist would
# otherwise replace with "most tests per file first"), keep the suite under ten minutes
# on the two-core machine; `make test PYTEST_WORKERS=0` runs it in one process.
PYTEST_WORKERS ?= 2
test: venv chromium
	@HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

# Debian's Chromium, which the browser tests (tests/browser) drive through Playwright;
# installed with apt only when missing. Without it (no root, no apt) the browser tests are
# skipped, and fail under BOOKING_REQUIRE_SERVICES=1 as in CI.
CHROMIUM = /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || { \
	    echo "make: installing Debian's chromium for the browser tests" >&2; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	        >/dev/null 2>&1 || echo "make: could not install chromium (needs root and apt)" >&2; \
	}

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: venv
	$(BIN)/python -m pytest tests/bench -q -s --benchmark-enable --benchmark-only \
	    --benchmark-columns=min,median,mean,max,rounds

# Issue 9's figures over HTTP: the server on PostgreSQL (BOOKING_TEST_POSTGRES_URL, default
# the local test database) against pgbench and bare Starlette in alternating rounds; wrk is
# installed with apt when missing. BENCH_HTTP_1M=1 adds the 1M-booking calendar. See
# docs/architecture.md; never part of `make test`.
bench-http: venv
	$(BIN)/python -m tests.bench.http_harness

# Issue 14: mutation testing of booking_core's modules (the list is in pyproject.toml,
# [tool.mutmut]) against the unit tests, each mutant run only with the tests that reach
# its function, under the hypothesis `mutate` profile (few examples, derandomized). Starts
# afresh in mutants/ and leaves it there for `mutmut show <name>`; the report prints each
# module's score, lists the survivors in mutants/survivors.txt and ends with the line
# `mutation score <percent>`. About 12.5 minutes on the two-core machine when nothing else
# runs (docs/testing.md). Never part of `make test`. MUTATE_CHILDREN sets mutmut's parallel test runs.
MUTATE_CHILDREN ?= 2
mutate: venv
	rm -rf mutants
	HYPOTHESIS_PROFILE=mutate $(BIN)/mutmut run --max-children $(MUTATE_CHILDREN)
	$(BIN)/python -m tests.mutation_report

# Proves booking_core stands alone: `pip install .` in a fresh environment brings only
# the core and attrs + tzdata (no adapters, no entrypoints, no `booking` command), and
# the core prices a demo selection there. build/ goes first: setuptools would pack a
# stale build/lib into the wheel.
core-check:
	rm -rf .core-venv build
	$(PYTHON) -m venv .core-venv
	.core-venv/bin/python -m pip install --quiet .
	cd / && $(CURDIR)/.core-venv/bin/python $(CURDIR)/.ci/core_check.py $(CURDIR)/.core-venv
	rm -rf .core-venv build

# Migrates the SQLite file (or BOOKING_DATABASE_URL), loads the demo companies, prints
# their keys and a ready curl line, then serves on $(HOST):$(PORT) until Ctrl-C, with the
# webhook worker (`booking worker`) running beside the server and stopped with it. The
# printed links and the OpenAPI `servers` entry follow HOST and PORT (BOOKING_BASE_URL,
# when set, wins).
run: venv
	@BOOKING_HOST='$(HOST)' BOOKING_PORT='$(PORT)' $(BIN)/booking migrate
	@BOOKING_HOST='$(HOST)' BOOKING_PORT='$(PORT)' $(BIN)/booking demo
	@export BOOKING_HOST='$(HOST)' BOOKING_PORT='$(PORT)'; \
	$(BIN)/booking worker & worker=$$!; \
	trap 'kill -TERM $$worker 2>/dev/null; wait $$worker' EXIT INT TERM; \
	$(BIN)/booking serve

clean:
	rm -rf $(VENV) .core-venv build *.egg-info .pytest_cache .mypy_cache .ruff_cache .benchmarks
