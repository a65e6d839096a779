"""--auto-sample through the real CLI in Chromium."""

from __future__ import annotations

import pytest

import json

from conftest import run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


def test_auto_sample_adds_repetitions_and_says_why_it_stopped(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--tokens", "6",
                "--auto-sample", "0%", "--timeout", "8s", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "auto-sample: stopped after" in r.stdout
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    auto = manifest["auto_sample"]
    assert auto["repetitions"] >= 2 and auto["conditions"] == ["0%"] and auto["reason"].startswith("stopped after")
    cells = [(c["repetition"], c["variant"]) for c in manifest["cells"]]
    assert cells == [(r, v) for r in range(auto["repetitions"]) for v in ("fresh", "reuse")]
    assert all(c["status"] == "ok" for c in manifest["cells"])
    stats = json.loads((tmp_path / "r" / "stats.json").read_text())
    ms = next(d for d in stats["differences"] if d["metric"] == "ms_per_token")
    assert ms["diff_low"] <= ms["diff"] <= ms["diff_high"]
