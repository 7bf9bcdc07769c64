# Two commands matter: `make run` (set up and start Neovim with the plugin) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP_RUNTIME := $(VENV)/.runtime-stamp
STAMP_DEV := $(VENV)/.dev-stamp
# The command sandbox's launcher (sandbox/confine.c), built where a C compiler exists; without it
# commands are confined by the host's forked child, which costs more per command.
CC ?= cc
CONFINE := $(VENV)/bin/codecompanion-confine
CONFINE_SRC := rplugin/python3/codecompanion/sandbox/confine.c
# Exact versions of every dependency (see constraints.txt); `make install CONSTRAINTS=` skips them.
CONSTRAINTS ?= constraints.txt
PIN := $(if $(CONSTRAINTS),-c $(CONSTRAINTS),)
# Lua style and lint: stylua from the npm registry (its package ships the binary), pinned here and
# installed into the venv; luacheck from Debian's lua-check (installed with apt-get when root).
NPM ?= npm
LUA_TOOLS := $(VENV)/lua-tools
STYLUA_VERSION := 2.5.2
STYLUA := $(LUA_TOOLS)/node_modules/.bin/stylua
STAMP_STYLUA := $(LUA_TOOLS)/.stylua-$(STYLUA_VERSION)
LUA_SRC := lua plugin ftplugin bench scripts tests

.PHONY: install dev run test needs test-real agents test-agents agent-tier eval lint lint-lua stylua-check luacheck typecheck pytest bench bench-sbs bench-final fmt clean constraints

# Recipes say in one line what they do (the first `make run` prints no pip command lines).
$(PY):
	@echo "creating $(VENV) with $(PYTHON) ($$($(PYTHON) --version 2>&1))"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip

# The pins were resolved on one Python; where a pinned version does not exist for this Python
# (its Requires-Python excludes it), install from pyproject.toml's ranges instead of failing.
UNPINNED = (echo "$(CONSTRAINTS) does not fit $$($(PY) --version); installing from pyproject.toml's ranges" >&2; \
	$(PY) -m pip install -q

$(STAMP_RUNTIME): pyproject.toml $(CONSTRAINTS) | $(PY)
	@echo "installing the plugin's dependencies into $(VENV) (pyproject.toml, pinned by $(CONSTRAINTS))"
	@$(PY) -m pip install -q $(PIN) -e . 2>/dev/null || $(UNPINNED) -e .)
	@touch $@

$(STAMP_DEV): pyproject.toml $(CONSTRAINTS) | $(PY)
	@echo "installing the plugin's and the tests' dependencies into $(VENV)"
	@$(PY) -m pip install -q $(PIN) -e '.[dev]' 2>/dev/null || $(UNPINNED) -e '.[dev]')
	@touch $@ $(STAMP_RUNTIME)

## install: the plugin manager's build step: .venv with the runtime dependencies only.
install: $(STAMP_RUNTIME) $(CONFINE)

dev: $(STAMP_DEV) $(CONFINE)

$(CONFINE): $(CONFINE_SRC) | $(PY)
	@if command -v $(CC) >/dev/null 2>&1 && [ "$$(uname -s)" = Linux ]; then \
		$(CC) -O2 -Wall -Wextra -o $@ $(CONFINE_SRC) || echo "codecompanion-confine not built: commands use the slower in-process sandbox launcher" >&2; \
	else echo "no C compiler (or not Linux): commands use the slower in-process sandbox launcher" >&2; fi

## run: set up everything and start Neovim with the plugin loaded, in DIR (or PROJECT) when
## given (`make run DIR=~/src/myproject`: chats work in that folder), else in this checkout.
RUN_DIR := $(or $(DIR),$(PROJECT))
run: $(STAMP_RUNTIME) $(CONFINE)
	@$(PY) scripts/run.py $(if $(RUN_DIR),--dir "$(RUN_DIR)")

## test: the whole suite: lint, types, tests (about 9 minutes on 2 cores). It first says which
## optional tools are missing and what is skipped without them (scripts/needs.sh).
test: needs $(STAMP_DEV) $(CONFINE) lint typecheck pytest agent-tier

# The real-agent tier inside `make test` with the agents `make agents` installed (it downloads
# nothing itself); elsewhere one line says why it was skipped.
agent-tier:
	@if ! unshare -rn true 2>/dev/null; then echo "real-agent tier skipped: it needs unshare (a network namespace)" >&2; \
	elif ! ls $(AGENTS)/*/.stamp-* >/dev/null 2>&1; then echo "real-agent tier skipped: no agent installed (\`make agents\` downloads them, \`make test-agents\` runs the tier)" >&2; \
	else $(AGENT_TESTS); fi

needs:
	@sh scripts/needs.sh

## test-real: end-to-end scenarios against a real local model (not part of `make test`).
## Needs a running OpenAI-compatible server: REALMODEL_URL (default http://127.0.0.1:8093/v1),
## or REALMODEL_START=path/to/a/script that starts one and prints its URL. Skips without one.
test-real: $(STAMP_DEV)
	CODECOMPANION_REAL=1 $(PY) -m pytest -q -p no:cacheprovider -rsx tests/real $(ARGS)

## agents: the real ACP agents the agent tier drives, pinned, each in a folder of its own under
## .venv-agents/: Mistral Vibe (PyPI mistral-vibe; Python 3.12 or later, found on PATH or in pyenv)
## and Qwen Code (npm @qwen-code/qwen-code; Node.js 20 or later and npm). An agent that cannot be
## installed here is skipped with one line saying why (its tests then skip too).
VIBE_VERSION := 2.22.0
QWEN_VERSION := 0.15.10
AGENTS := .venv-agents
PY312 = $(shell sh scripts/python312.sh)
VIBE_STAMP := $(AGENTS)/vibe/.stamp-$(VIBE_VERSION)
QWEN_STAMP := $(AGENTS)/qwen/.stamp-$(QWEN_VERSION)
agents:
	@$(MAKE) --no-print-directory $(VIBE_STAMP) || echo "Mistral Vibe not installed: its tests skip" >&2
	@$(MAKE) --no-print-directory $(QWEN_STAMP) || echo "Qwen Code not installed: its tests skip" >&2

$(VIBE_STAMP):
	@test -n "$(PY312)" || { echo "Mistral Vibe needs Python 3.12 or later: none found (PATH, pyenv)" >&2; exit 1; }
	$(PY312) -m venv $(AGENTS)/vibe
	$(AGENTS)/vibe/bin/pip install -q --upgrade pip
	$(AGENTS)/vibe/bin/pip install -q mistral-vibe==$(VIBE_VERSION)
	touch $@

# Qwen Code 0.15 is the last line that runs on Node.js 20 (later ones want 22).
$(QWEN_STAMP):
	@node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null || \
		{ echo "Qwen Code needs Node.js 20 or later: $$(node --version 2>/dev/null || echo 'no node') found" >&2; exit 1; }
	@command -v $(NPM) >/dev/null || { echo "Qwen Code is installed with npm: $(NPM) not found" >&2; exit 1; }
	$(NPM) install --silent --no-audit --no-fund --prefix $(AGENTS)/qwen @qwen-code/qwen-code@$(QWEN_VERSION)
	touch $@

## test-agents: real ACP agents (`make agents`) through real Neovim against a scripted model on
## 127.0.0.1, in a network namespace with only loopback: no connection can leave the machine.
## `make test` runs it last when the agents are installed (installs about 2 minutes once, tests 2).
AGENT_TESTS = CODECOMPANION_AGENTS=1 unshare -rn sh -c '$(PY) scripts/loopback_up.py && exec $(PY) -m pytest -q -p no:cacheprovider -rsx tests/agents $(ARGS)'
test-agents: $(STAMP_DEV) $(CONFINE) agents
	$(AGENT_TESTS)

## eval: the task suite (eval/tasks) through this plugin and the Lua CodeCompanion (../shared/anchor)
## against a real model (default: ../shared/realmodel's server on port 8093), records appended to
## eval/results/records.jsonl, a re-run skips what is recorded. Not part of `make test`. Hours on a CPU.
## ARGS="--tasks DIR --runs N --out FILE --url URL --plugins ours,theirs" (python -m eval --help).
eval: $(STAMP_DEV)
	$(PY) -m eval $(ARGS)

## lint: ruff, ruff format --check, stylua --check and luacheck.
lint: lint-lua
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Where stylua or luacheck cannot be had (no npm or no network for stylua, no lua-check and not
# root), their step is skipped with one warning; LUA_LINT=required (CI) makes that a failure.
LUA_LINT ?= optional

lint-lua: stylua-check luacheck

stylua-check:
	@if [ -f $(STAMP_STYLUA) ] || $(MAKE) --no-print-directory -s $(STAMP_STYLUA) >$(LUA_TOOLS).log 2>&1; then \
		$(STYLUA) --check $(LUA_SRC); \
	elif [ "$(LUA_LINT)" = required ]; then \
		cat $(LUA_TOOLS).log >&2; echo "stylua could not be installed from the npm registry" >&2; exit 1; \
	else \
		echo "warning: Lua style not checked: stylua could not be installed with $(NPM) (log: $(LUA_TOOLS).log); CI checks it" >&2; \
	fi

$(STAMP_STYLUA): | $(PY)
	@mkdir -p $(LUA_TOOLS)
	$(NPM) install --prefix $(LUA_TOOLS) --cache $(LUA_TOOLS)/npm-cache --no-save --no-package-lock \
	  --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=30000 \
	  @johnnymorganz/stylua-bin@$(STYLUA_VERSION)
	touch $@

# luacheck is a Debian package (lua-check): installed here when missing and we are root.
luacheck:
	@if command -v luacheck >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lua-check >/dev/null; }; then \
		luacheck --quiet --no-color $(LUA_SRC); \
	elif [ "$(LUA_LINT)" = required ]; then \
		echo "luacheck is missing: install Debian's lua-check (apt-get install lua-check)" >&2; exit 1; \
	else \
		echo "warning: Lua not linted: luacheck is missing (Debian's lua-check); CI checks it" >&2; \
	fi

typecheck:
	$(VENV)/bin/mypy

pytest:
	$(PY) -m pytest -q -p no:cacheprovider

## fmt: format Python (ruff) and Lua (stylua).
fmt: $(STAMP_DEV) $(STAMP_STYLUA)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
	$(STYLUA) $(LUA_SRC)

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

## bench-final: the performance issue's final runs (the shared harness as the issue runs it,
## quiet and loaded, then bench-sbs) on a quiet machine, about half an hour: bench/final.md.
bench-final: $(STAMP_DEV)
	$(PY) -m bench.final

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
