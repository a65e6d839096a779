#!/usr/bin/env bash
# Sets up a clone (make run / make test call it): a .venv with this package (editable, with its
# test extras), then `webgpu-harness setup` — the same command a `pip install` user runs
# (harness/cli/setup.py): on Debian the apt packages chromium, xvfb, webkit2gtk-driver, npm and
# mesa-vulkan-drivers when missing. A clone then gets its own node_modules from package-lock.json
# with the devDependencies its tests need (the test apps' Transformers.js, esbuild), where a
# `pip install` user gets the runtime packages in the per-user cache from `webgpu-harness setup`.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  # Debian's python3 creates virtual environments only with python3-venv (ensurepip)
  if ! "$PY" -c "import ensurepip" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages: python3-venv"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-venv
  fi
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing the package into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
  touch "$stamp"
fi

.venv/bin/webgpu-harness setup --no-npm
lock_sum=$(.venv/bin/python -c "import hashlib; print(hashlib.sha256(open('package-lock.json', 'rb').read() + open('.npmrc', 'rb').read()).hexdigest())")
if [ "$(cat node_modules/.webgpu-harness-lock 2>/dev/null)" != "$lock_sum" ]; then
  echo "setup: installing npm packages into the clone (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > node_modules/.webgpu-harness-lock
fi
