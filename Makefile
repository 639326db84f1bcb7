# Every target creates the virtual environment first if it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv test lint format bench run clean core-check

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# pytest's exit code 5 means no test ran: that is a failure, said plainly.
test: venv
	@$(BIN)/python -m pytest -q $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

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

# Proves booking_core stands alone: a fresh environment with only the core's
# dependencies imports it and prices a demo selection.
core-check:
	rm -rf .core-venv
	$(PYTHON) -m venv .core-venv
	.core-venv/bin/python -m pip install --quiet .
	cd / && $(CURDIR)/.core-venv/bin/python -c "import booking_core.demo as d; b = d.price_demo_selection(); print('core-check: booking_core alone priced the demo selection at', b.total_cents, 'cents')"
	rm -rf .core-venv

# Migrates the SQLite file (or BOOKING_DATABASE_URL), loads the demo companies, prints
# their keys and a ready curl line, then serves on 127.0.0.1:8000 until Ctrl-C.
run: venv
	@$(BIN)/booking migrate
	@$(BIN)/booking demo
	@$(BIN)/booking serve --host 127.0.0.1 --port 8000

clean:
	rm -rf $(VENV) .core-venv build *.egg-info .pytest_cache .mypy_cache .ruff_cache .benchmarks
