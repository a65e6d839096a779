#!/usr/bin/env bash
# Installs what webgpu-harness needs on a Debian machine, skipping what is already there:
#   apt: chromium (Playwright drives it; its own browser download is not used), xvfb and
#        webkit2gtk-driver (WebKitGTK's WebDriver + MiniBrowser), nodejs/npm if missing,
#        mesa-vulkan-drivers (lavapipe, the software Vulkan adapter of `webgpu-harness native`);
#   .venv: the package with its test extras;
#   node_modules: the pinned npm packages (onnxruntime-web) from package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need_apt=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v Xvfb >/dev/null 2>&1 || need_apt+=(xvfb)
command -v WebKitWebDriver >/dev/null 2>&1 || need_apt+=(webkit2gtk-driver)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
# lavapipe: the software Vulkan adapter `webgpu-harness native` (wgpu) uses on CPU-only machines
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || need_apt+=(mesa-vulkan-drivers)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing the package into .venv"
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
  touch "$stamp"
fi

if [ -f package-lock.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing npm packages (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi
