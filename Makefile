# Two commands matter: `make run` (set up and start Neovim with the plugin) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUNTIME := $(VENV)/.runtime-stamp
STAMP_DEV := $(VENV)/.dev-stamp
# Exact versions of every dependency (see constraints.txt); `make install CONSTRAINTS=` skips them.
CONSTRAINTS ?= constraints.txt
PIN := $(if $(CONSTRAINTS),-c $(CONSTRAINTS),)

.PHONY: install dev run test test-real lint typecheck pytest bench bench-sbs fmt clean constraints

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The pins were resolved on one Python; where a pinned version does not exist for this Python
# (its Requires-Python excludes it), install from pyproject.toml's ranges instead of failing.
UNPINNED = (echo "$(CONSTRAINTS) does not fit $$($(PY) --version); installing from pyproject.toml's ranges" >&2; \
	$(PY) -m pip install -q

$(STAMP_RUNTIME): pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PY) -m pip install -q $(PIN) -e . 2>/dev/null || $(UNPINNED) -e .)
	touch $@

$(STAMP_DEV): pyproject.toml $(CONSTRAINTS) | $(PY)
	$(PY) -m pip install -q $(PIN) -e '.[dev]' 2>/dev/null || $(UNPINNED) -e '.[dev]')
	touch $@ $(STAMP_RUNTIME)

## install: the plugin manager's build step: .venv with the runtime dependencies only.
install: $(STAMP_RUNTIME)

dev: $(STAMP_DEV)

## run: set up everything and start Neovim with the plugin loaded.
run: $(STAMP_RUNTIME)
	@$(PY) scripts/run.py

## test: the whole suite: lint, types, tests.
test: $(STAMP_DEV) lint typecheck pytest

## test-real: end-to-end scenarios against a real local model (not part of `make test`).
## Needs a running OpenAI-compatible server: REALMODEL_URL (default http://127.0.0.1:8093/v1),
## or REALMODEL_START=path/to/a/script that starts one and prints its URL. Skips without one.
test-real: $(STAMP_DEV)
	CODECOMPANION_REAL=1 $(PY) -m pytest -q -p no:cacheprovider -rsx tests/real $(ARGS)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck:
	$(VENV)/bin/mypy

pytest:
	$(PY) -m pytest -q -p no:cacheprovider

fmt: $(STAMP_DEV)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

## bench: our figures against their targets; SBS=1 (or `make bench-sbs`): beside the Lua
## CodeCompanion, with the shared harness in ../shared/anchor (ours alone when it is missing).
bench: $(STAMP_DEV)
ifeq ($(SBS),1)
	$(PY) -m bench.sbs
else
	$(PY) -m bench
endif

bench-sbs: $(STAMP_DEV)
	$(PY) -m bench.sbs

## constraints: re-resolve pyproject.toml's dependencies in a fresh venv and pin them all.
constraints:
	rm -rf $(VENV)-pin
	$(PYTHON) -m venv $(VENV)-pin
	$(VENV)-pin/bin/python -m pip install -q --upgrade pip
	$(VENV)-pin/bin/python -m pip install -q -e '.[dev]'
	{ sed -n '1,3p' constraints.txt; $(VENV)-pin/bin/python -m pip freeze --all --exclude-editable \
	  | grep -v -e '^codecompanion' -e '^pip=='; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(VENV)-pin

clean:
	rm -rf $(VENV)
