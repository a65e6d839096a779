#!/usr/bin/env bash
# Sets up a clone (make run / make test call it), one line per phase, in order, `setup: done` last:
#   1. a .venv with this package (editable, with its test extras);
#   2. `webgpu-harness setup --clone-npm`, the command a `pip install` user runs (harness/cli/setup.py):
#      on Debian the apt packages chromium, xvfb, webkit2gtk-driver, npm and mesa-vulkan-drivers
#      when missing; then the clone's own node_modules from package-lock.json, with the
#      devDependencies its tests need (the test apps' Transformers.js, esbuild), whenever the lock
#      changed (a `pip install` user gets the runtime packages in the per-user cache instead).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  # Debian's python3 creates virtual environments only with python3-venv (ensurepip)
  if ! "$PY" -c "import ensurepip" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "setup: .venv: installing Debian packages: python3-venv"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-venv
  fi
  echo "setup: .venv: creating it"
  "$PY" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: .venv: installing the package (editable, with its test extras)"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
  touch "$stamp"
else
  echo "setup: .venv: up to date ($(.venv/bin/python --version))"
fi

exec .venv/bin/webgpu-harness setup --clone-npm
