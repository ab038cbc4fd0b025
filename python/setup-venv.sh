#!/usr/bin/env bash
# npm run setup:python — the repository's virtualenv (.venv at the root, gitignored) with the
# Python SDK installed editable with its torch, umt5 (transformers), test and example extras, from pip's configured index
# (pip.conf / PIP_* variables: on a machine whose default index is unreachable, the extra index
# or find-links it is configured with). torch is pinned to 2.13.0, the CPU build CI installs;
# set FLOWFLEET_TORCH to another requirement (e.g. "torch>=2.1") to change that.
#
# Skips the install when .venv already holds what this pyproject asks for (a stamp of it and the
# torch pin). Prints how long the install took.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
torch_spec="${FLOWFLEET_TORCH:-torch==2.13.0}"
python="${PYTHON:-python3}"
# An unreachable index fails at once rather than after pip's five retries with backoff.
export PIP_RETRIES="${PIP_RETRIES:-0}" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

if ! "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "setup:python: needs Python 3.10+ with venv as $python (apt-get install python3 python3-venv)" >&2
  exit 1
fi

stamp="$venv/.flowfleet-setup"
want="$(cat python/pyproject.toml; echo "$torch_spec")"
want_sum="$(printf '%s' "$want" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_sum" ] &&
  "$venv/bin/python" -c 'import flowfleet, pytest, torch, transformers' 2>/dev/null; then
  echo "setup:python: $venv is up to date ($("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'))"
  exit 0
fi

started=$(date +%s)
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$venv/bin/python" -m pip install --editable "./python[torch,umt5,test,example]" "$torch_spec" >"$log" 2>&1; then
  # pip's "Location … is ignored" lines name extra-index directories that lack a package: noise.
  grep -v 'is ignored: it is neither a file nor a directory' "$log" >&2 || true
  echo "setup:python: pip install failed (index: pip config list; PIP_RETRIES=$PIP_RETRIES)" >&2
  exit 1
fi
printf '%s' "$want_sum" >"$stamp"
versions="$("$venv/bin/python" -c 'import numpy, safetensors, httpx, torch; print(f"torch {torch.__version__}, numpy {numpy.__version__}, safetensors {safetensors.__version__}, httpx {httpx.__version__}")')"
echo "setup:python: $venv ready in $(($(date +%s) - started)) s ($versions)"
