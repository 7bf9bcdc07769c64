#!/bin/sh
# Print the first Python 3.12 or later that runs: on PATH, then pyenv's versions (its shims may
# name a version that is not selected, so each candidate is run, not just found).
for p in python3.13 python3.12 python3 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3 \
  /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
  if "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
    command -v "$p"
    exit 0
  fi
done
exit 1
