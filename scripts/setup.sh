#!/usr/bin/env bash
# Sets up a clone (make run / make test call it): a .venv with this package (editable, with its
# test extras), then `webgpu-harness setup` — the same command a `pip install` user runs
# (harness/cli/setup.py): on Debian the apt packages chromium, xvfb, webkit2gtk-driver, npm and
# mesa-vulkan-drivers when missing, and the pinned npm packages (onnxruntime-web) into the
# per-user cache unless the clone's node_modules has them.
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

.venv/bin/webgpu-harness setup
