"""web/inject/dist/bootstrap.iife.js is the esbuild bundle of web/inject/ (with web/probes/ and
web/emulation/), committed so the harness needs no Node at run time; it must be current."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent.parent


def test_committed_bundle_is_what_esbuild_builds_now(tmp_path):
    esbuild = REPO / "node_modules" / ".bin" / "esbuild"
    assert esbuild.exists(), "node_modules has no esbuild: run scripts/setup.sh (npm ci)"
    script = json.loads((REPO / "package.json").read_text())["scripts"]["build:inject"]
    args = shlex.split(script)
    out = tmp_path / "bootstrap.iife.js"
    args = [str(esbuild)] + [f"--outfile={out}" if a.startswith("--outfile=") else a for a in args[1:]]
    r = subprocess.run(args, cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    committed = (REPO / "web" / "inject" / "dist" / "bootstrap.iife.js").read_bytes()
    assert out.read_bytes() == committed, "web/inject/dist is stale: run `npm run build:inject`"
