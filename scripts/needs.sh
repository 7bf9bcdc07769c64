#!/bin/sh
# `make test`'s first line: what the suite uses besides Python, what is missing here, and what
# that costs (tests skipped, a lint step skipped). It never fails: the steps themselves do.
missing=""
note() { missing="${missing:+$missing; }$1"; }
command -v git >/dev/null 2>&1 || note "git (the tests of real repositories need it)"
command -v tmux >/dev/null 2>&1 || note "tmux (screen tests skipped)"
command -v rg >/dev/null 2>&1 || note "rg (search tests skipped)"
command -v "${CC:-cc}" >/dev/null 2>&1 || note "a C compiler (the sandbox launcher is not built, its tests skipped)"
command -v "${NPM:-npm}" >/dev/null 2>&1 || note "npm (stylua, the Lua style check, skipped)"
if ! command -v luacheck >/dev/null 2>&1 && [ "$(id -u 2>/dev/null)" != 0 ]; then
  note "luacheck (Debian's lua-check: the Lua lint skipped)"
fi
ls "$(dirname "$0")"/../.venv-agents/*/.stamp-* >/dev/null 2>&1 ||
  note "the real agents (\`make agents\` installs them; the real-agent tier skipped)"
unshare -rn true >/dev/null 2>&1 || note "unshare (the real-agent tier skipped)"
if [ -n "$missing" ]; then
  echo "make test: about 12 minutes on 2 cores; missing: $missing" >&2
else
  echo "make test: ruff, stylua, luacheck, mypy, then pytest, then the real-agent tier: about 12 minutes on 2 cores" >&2
fi
