# The two commands of the README: `make demo` and `make test`. Both install what they need first.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup setup-tests demo test lint pytest up down clean bench schema screenshots

setup:
	bash scripts/setup.sh

# The tests also drive the dashboard in Debian's Chromium.
setup-tests:
	bash scripts/setup.sh --browser

demo: setup
	$(BIN)/cogmem demo
	@echo
	@echo "See this memory in the browser (read-only, on 127.0.0.1:8750):"
	@echo "    $(BIN)/cogmem dashboard"

test: setup-tests lint pytest

lint:
	$(BIN)/ruff check cogmem_pg tests migrations bench
	$(BIN)/ruff format --check cogmem_pg tests migrations bench
	$(BIN)/sqlfluff lint sql
	$(BIN)/mypy cogmem_pg

pytest:
	$(BIN)/pytest -q

up: setup
	$(BIN)/cogmem up

down:
	$(BIN)/cogmem down

clean:
	-$(BIN)/cogmem down
	rm -rf .cogmem

bench: setup
	$(BIN)/python bench/run.py
	PYTHONPATH=. $(BIN)/python bench/scale.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/consolidation.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/gut.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/judge.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/store.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/shards.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/conversation.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/candidates.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/understanding.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/clause_cost.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/versus.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/experiments.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/dashboard.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/scopes.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/resources.py --results bench/RESULTS.md
	PYTHONPATH=. $(BIN)/python bench/chunking.py --results bench/RESULTS.md

# docs/img/dashboard/: the dashboard's pages as the browser tests see them (docs/dashboard.md shows them).
screenshots: setup-tests
	COGMEM_SCREENSHOTS=docs/img/dashboard $(BIN)/pytest -q tests/test_dashboard.py -k every_page

# sql/schema/tables.sql: the head revision's tables in one file (tests/test_schema.py compares).
schema: setup
	$(BIN)/python -m cogmem_pg.schema
