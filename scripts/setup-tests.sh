#!/usr/bin/env bash
# What the test suite needs beyond `webgpu-harness setup` (make test and make test-full call it
# after scripts/setup.sh): Debian's chromium-driver (tests/e2e/test_remote.py starts
# `chromedriver` as a W3C WebDriver endpoint), a Java runtime (17+) and the Selenium Grid 4
# standalone jar (scripts/selenium-grid.sh) for the real Grid test of the distributed engine.
# Users of the harness need none of these: `webgpu-harness setup` does not install them.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need=()
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# Selenium Grid 4 needs Java 17 or newer
if ! java -version 2>&1 | grep -Eq 'version "(1[7-9]|[2-9][0-9])'; then need+=(default-jre-headless); fi
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup-tests: installing Debian packages: ${need[*]}"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
  else
    echo "setup-tests: missing ${need[*]} and no apt-get here: install them to run the tests" >&2
    exit 1
  fi
fi
jar=$(./scripts/selenium-grid.sh)
echo "setup-tests: chromedriver $(chromedriver --version | awk '{print $2}'), $(java -version 2>&1 | head -1), Selenium Grid $jar"
