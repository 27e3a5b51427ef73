# skillhouse: every target sets up what it needs in .venv on a fresh machine (Python 3.11, pip, make).
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: setup demo test lint docs bench fuzz clean screenshots

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

# The demo needs skillhouse and its runtime dependencies only, not the test and lint tools; pip shows
# what it fetches. Editable, as the demo runs from the checkout (examples/, .data/).
$(DEMO_STAMP): pyproject.toml
	@echo "make demo: installing skillhouse and its runtime dependencies into $(VENV) (once; no dev tools)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --progress-bar on --upgrade pip
	$(BIN)/python -m pip install --progress-bar on -e .
	touch $(DEMO_STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench docs/hooks
	$(BIN)/mypy
	$(BIN)/lint-imports

# the suite includes tests/docs/test_site.py, which runs `mkdocs build --strict` (see `make docs`).
# Two pytest-xdist workers, each given whole files (a module's shared fixture, a built wheel or a served
# console, is set up once); `.venv/bin/pytest tests/x` alone runs in one process as before.
PYTEST_WORKERS ?= 2
test: lint
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

# the documentation site in site/ (strict: a broken link or a page missing from the nav fails)
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# make demo ARGS=--keep: serve keeps running afterwards, with the console's URL and a token printed
demo: $(DEMO_STAMP)
	$(BIN)/python -m skillhouse.demo $(ARGS)

# the console's browser tests save screenshots of its pages (desktop and phone); these are the ones in the README
screenshots: $(STAMP)
	SKILLHOUSE_SCREENSHOTS=docs/screenshots $(BIN)/pytest tests/console/test_console_browser.py tests/console/test_console_pages.py

# its own venv: FastMCP, measured beside skillhouse, cannot share one with google-adk (see pyproject's extras)
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed

$(BENCH_STAMP): pyproject.toml
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

# the gateway section measures PostgreSQL too when SKILLHOUSE_TEST_POSTGRES_URL is set (a missing one is a shortfall line)
bench: $(BENCH_STAMP)
	$(BENCH_VENV)/bin/python bench/run.py

fuzz: $(STAMP)
	SKILLHOUSE_FUZZ=long $(BIN)/pytest tests -k fuzz

clean:
	rm -rf $(VENV) $(BENCH_VENV) .mypy_cache .pytest_cache .ruff_cache site
