# statusgen: `make run` and `make test` set everything up themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8080
STAMP  := $(VENV)/.installed
TESTS  := $(VENV)/.installed-test
SYSPKG := $(VENV)/.system-packages

.PHONY: run run-locations test lint bench screenshot setup system clean catalogs language check-catalogs wheelhouse

$(STAMP): pyproject.toml
	@echo "make: a virtual environment in $(VENV)/, for statusgen and what it needs (once)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "make: installing statusgen into it, editable, and its dependencies (pip; again when pyproject.toml changes)"
	@$(BIN)/pip install --quiet -e .
	@touch $(STAMP)

$(TESTS): $(STAMP)
	@echo "make: installing the test tools into $(VENV)/ (pip)"
	@$(BIN)/pip install --quiet -e '.[test]'
	@touch $(TESTS)

# The wheels the release tests install from (tests/wheelhouse.py): fetched here, before the tests
# run, so that the test run itself needs no network.
wheelhouse: $(TESTS)
	@echo "make: the wheels of statusgen's dependencies, for the release tests (test-artifacts/, once)"
	@$(BIN)/python -m tests.wheelhouse >/dev/null

$(SYSPKG): scripts/system-packages.sh | $(STAMP)
	bash scripts/system-packages.sh
	touch $(SYSPKG)

setup: $(STAMP)

## system: Debian packages for tests and benchmarks (nginx, chromium, xmllint, rclone, wrk)
system: $(SYSPKG)

## run: start the bundled demo targets on loopback, run cycles against them, serve at http://127.0.0.1:$(PORT)
run: setup
	@echo "make: the demo: services on loopback, 150 days of simulated past, then live runs served on port $(PORT)"
	@PORT=$(PORT) $(BIN)/python -m statusgen.demo

## run-locations: the demo with three probe agents on 127.0.0.2-4 delivering to a folder inbox (docs/locations.md)
run-locations: setup
	PORT=$(PORT) $(BIN)/python -m statusgen.demo --locations

## lint: ruff (lint and format) and mypy, as make test runs them
lint: $(TESTS)
	$(BIN)/ruff check statusgen tests bench
	$(BIN)/ruff format --check statusgen tests bench
	$(BIN)/mypy

## test: lint, then every test
test: lint system wheelhouse
	$(BIN)/python -m pytest -q

## screenshot: refresh the docs' pictures (docs/front-page*.png, docs/branded*.png) with the browser tests
screenshot: $(TESTS) system
	STATUSGEN_REFRESH_SCREENSHOT=1 $(BIN)/python -m pytest -q tests/test_demo.py tests/test_brand.py \
		-k "screenshot or branded_site_in_chromium"

## catalogs: extract every message (pybabel extract), update each language's catalog, compile them (docs/translating.md)
LOCALE := statusgen/locale
catalogs: $(TESTS)
	$(BIN)/pybabel -q extract -F babel.cfg -k N_ -k said -k said_plural:1,2 --add-location=file --sort-by-file --no-wrap \
		--add-comments=Translators: --project=statusgen --copyright-holder="statusgen contributors" \
		-o $(LOCALE)/statusgen.pot .
	$(BIN)/pybabel -q update -i $(LOCALE)/statusgen.pot -d $(LOCALE) -D statusgen --ignore-obsolete --no-fuzzy-matching --no-wrap
	$(BIN)/pybabel -q compile -d $(LOCALE) -D statusgen

## language: start the catalog of a new language, e.g. `make language LANG_TAG=it` (docs/translating.md)
language: $(TESTS)
	test -n "$(LANG_TAG)" || { echo "name the language: make language LANG_TAG=it"; exit 2; }
	$(BIN)/pybabel -q init -i $(LOCALE)/statusgen.pot -d $(LOCALE) -D statusgen --no-wrap -l $(subst -,_,$(LANG_TAG))

## check-catalogs: every catalog complete, none stale, each compiled .mo up to date (docs/translating.md)
check-catalogs: $(TESTS)
	$(BIN)/python -m tests.catalogs

## bench: the benchmarks (not part of test)
bench: $(TESTS) system
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) site site.gens demo-data test-artifacts .pytest_cache
