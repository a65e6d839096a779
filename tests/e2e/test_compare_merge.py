"""``compare`` and ``merge`` on real Chromium runs: a run compared with itself has no significant
difference, runs without common cells are bad input, a changed environment is flagged, and a
merge keeps both environments."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import run_cli

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two real runs in Chromium: decode-loop/reuse (2 repetitions) and decode-loop/fresh."""
    d = tmp_path_factory.mktemp("cmp")
    out = {}
    for name, variant, reps in (("reuse", "reuse", "2"), ("fresh", "fresh", "1")):
        cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                      "--variant", variant, "--tokens", "8", "--repeat", reps, run_dir=d / name)
        assert cli.returncode == 0, cli.stdout + cli.stderr
        out[name] = d / name
    return out


def test_compare_a_run_with_itself_finds_no_significant_difference(runs, tmp_path):
    r = run_cli("compare", str(runs["reuse"]), str(runs["reuse"]), "--output", str(tmp_path / "c"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no significant differences" in r.stdout
    data = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert [m["group"] for m in data["matches"]] == ["chromium/decode-loop/reuse@tiny"]
    match = data["matches"][0]
    assert match["env_differs"] == []
    diffs = {d["metric"]: d for d in match["differences"]}
    assert {"ms_per_token", "bind_groups_per_token", "live_bind_groups_max"} <= set(diffs)
    assert data["significant"] == 0 and not any(d["significant"] for d in diffs.values())
    ms = diffs["ms_per_token"]
    assert ms["diff"] == 0 and ms["diff_low"] <= 0 <= ms["diff_high"] and ms["diff_low"] < ms["diff_high"]
    html = (tmp_path / "c" / "compare.html").read_text()
    assert "0 significant differences in 1 matched configuration" in html and "<script src=" not in html
    for f in ("differences.csv", "stats.json", "summary.md", "junit.xml"):
        assert (tmp_path / "c" / f).exists(), f


def test_compare_flags_a_changed_environment_and_checks_baseline_budgets(runs, tmp_path):
    # the same samples, recorded as if by a newer browser on another adapter
    other = tmp_path / "other"
    shutil.copytree(runs["reuse"], other)
    manifest = json.loads((other / "manifest.json").read_text())
    for c in manifest["cells"]:
        c["browser_version"], c["adapter"] = "999.0.0.1", "example gpu"
    (other / "manifest.json").write_text(json.dumps(manifest))
    r = run_cli("compare", str(runs["reuse"]), str(other), "--output", str(tmp_path / "c"),
                "--budget", "decode-loop/reuse: ms_per_token <= 0.5 * baseline",
                "--budget", "decode-loop/reuse: bind_groups_per_token <= baseline")
    assert r.returncode == 1, r.stdout + r.stderr          # ms cannot have halved: same samples
    out = " ".join(r.stdout.split())
    assert "environment differs: browser_version" in out and "999.0.0.1" in out and "example gpu" in out
    assert "budgets: 1 of 2 passed" in out and "vs baseline" in out
    data = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert any(x.startswith("adapter ") for x in data["matches"][0]["env_differs"])
    assert [b["status"] for b in data["budgets"]] == ["failed", "passed"]
    assert "⚑ environment differs" in (tmp_path / "c" / "compare.html").read_text()


def test_merge_of_two_runs_keeps_both_environments(runs, tmp_path):
    out = tmp_path / "merged"
    r = run_cli("merge", str(runs["reuse"]), str(runs["fresh"]), "--label", "linux-a", "--label", "linux-b",
                "--output", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["label"] for s in manifest["merged_from"]] == ["linux-a", "linux-b"]
    for s in manifest["merged_from"]:
        assert s["os"] and s["cpu"] and s["browsers"]["chromium"]["version"]
    assert len(manifest["cells"]) == 3
    for c in manifest["cells"]:
        assert c["cell"].startswith(c["machine"] + ":") and c["os"] and c["cpu"] and c["browser_version"] and c["adapter"]
    assert set(manifest["browsers"]) == {"linux-a:chromium", "linux-b:chromium"}
    summary = (out / "summary.csv").read_text()
    assert summary.count("linux-a:chromium.decode-loop.reuse") == 2 and "linux-b:chromium.decode-loop.fresh" in summary
    stats = json.loads((out / "stats.json").read_text())
    assert sorted(g["group"] for g in stats["groups"]) == ["linux-a:chromium/decode-loop/reuse@tiny",
                                                           "linux-b:chromium/decode-loop/fresh@tiny"]
    assert stats["differences"] == []                 # different machines are never paired or pooled
    html = (out / "report.html").read_text()
    panel = html[html.index("<h3>Manifest</h3>"):]
    assert "Merged from 2 runs" in panel and "linux-a" in panel and "linux-b" in panel
    assert re.search(r"linux-a: Linux .*; linux-b: Linux", html)   # the Environment table lists both
    # a merged run is a run folder: it can be compared (cells match by machine label too)
    r2 = run_cli("compare", str(out), str(out), "--output", str(tmp_path / "c"))
    assert r2.returncode == 0 and "no significant differences" in r2.stdout
