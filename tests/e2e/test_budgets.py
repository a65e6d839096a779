"""Budgets: the grammar, malformed files (exit 2 naming the line), and a real run in Chromium
whose violated budget fails the run (exit 1) and its JUnit testcase."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import run_cli

FAILING = "decode-loop/fresh: bind_groups_per_token <= 1 after token 4"
PASSING = "decode-loop/reuse: max(bind_groups_per_token) <= 0 after token 0"
RELATIVE = "chromium/decode-loop/reuse: dispatches_per_token == 1.0 * fresh"
ELSEWHERE = "webkit/*: live_bind_groups_max <= 5000 optional"   # skipped where no WebKit cell ran


@pytest.fixture(scope="module")
def budget_run(tmp_path_factory):
    """decode-loop, tiny, 10 tokens, 2 repetitions in Chromium, with four budgets (one violated)."""
    d = tmp_path_factory.mktemp("budgets")
    step_summary = d / "step_summary.md"
    old = os.environ.get("GITHUB_STEP_SUMMARY")
    os.environ["GITHUB_STEP_SUMMARY"] = str(step_summary)
    try:
        cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                      "--tokens", "10", "--repeat", "2", "--budget", FAILING, "--budget", PASSING,
                      "--budget", RELATIVE, "--budget", ELSEWHERE, run_dir=d / "run")
    finally:
        if old is None:
            os.environ.pop("GITHUB_STEP_SUMMARY", None)
        else:
            os.environ["GITHUB_STEP_SUMMARY"] = old
    return cli, step_summary


# ---------------------------------------------------------------------------------- real run

@pytest.mark.full
def test_violated_budget_fails_the_run_and_says_which(budget_run):
    cli, _ = budget_run
    assert cli.returncode == 1, cli.stdout + cli.stderr
    assert f"1 budget(s) failed: {FAILING}" in cli.stderr
    out = " ".join(cli.stdout.split())
    assert "budgets: 2 of 4 passed" in out
    # the failing check names the configuration, the measured value with its statistic, and the limit
    assert re.search(r"FAIL decode-loop/fresh: .*chromium/decode-loop/fresh@tiny: median\(bind_groups_per_token\) "
                     r"after token 4 = 42 calls; limit <= 1 → FAILS", out), out
    manifest = json.loads((cli.run_dir / "manifest.json").read_text())
    assert all(c["status"] == "ok" for c in manifest["cells"])      # the cells were fine: only the budget failed


@pytest.mark.full
def test_junit_has_one_testcase_per_budget_and_a_failure_naming_it(budget_run):
    cli, _ = budget_run
    root = ET.parse(cli.run_dir / "junit.xml").getroot()
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert set(cases) == {FAILING, PASSING, RELATIVE, ELSEWHERE}
    failure = cases[FAILING].find("failure")
    assert failure is not None and FAILING in failure.get("message") and "= 42" in failure.text
    assert cases[PASSING].find("failure") is None and cases[RELATIVE].find("failure") is None
    assert cases[ELSEWHERE].find("skipped") is not None


@pytest.mark.full
def test_stats_files_and_step_summary(budget_run):
    cli, step_summary = budget_run
    d = cli.run_dir
    stats = json.loads((d / "stats.json").read_text())
    assert stats["warmup_steps"] == 1 and stats["confidence"] == 0.95
    groups = {g["group"]: g for g in stats["groups"]}
    fresh = groups["chromium/decode-loop/fresh@tiny"]["metrics"]
    assert fresh["bind_groups_per_token"]["value"] == 42 and fresh["bind_groups_per_token"]["n"] == 2 * 9
    ms = fresh["ms_per_token"]
    assert ms["ci_low"] <= ms["value"] <= ms["ci_high"] and "bootstrap" in ms["ci_method"]
    assert {b["name"]: b["status"] for b in stats["budgets"]} == {FAILING: "failed", PASSING: "passed",
                                                                  RELATIVE: "passed", ELSEWHERE: "skipped"}
    rel = next(b for b in stats["budgets"] if b["name"] == RELATIVE)["checks"][0]
    assert rel["ref_value"] == 42 and rel["ratio"] == 1.0
    header = (d / "stats.csv").read_text().splitlines()[0]
    assert header.startswith("group,machine,browser,workload,variant,profile,metric,unit,kind,stat,value,ci_low,ci_high")
    assert "ms_per_token" in (d / "differences.csv").read_text()
    md = (d / "summary.md").read_text()
    assert "❌" in md and FAILING in md and step_summary.read_text().strip() == md.strip()


@pytest.mark.full
def test_report_has_budget_results_ci_bands_and_manifest_panel(budget_run):
    cli, _ = budget_run
    html = (cli.run_dir / "report.html").read_text()
    section = html[html.index('<section id="statistics">'):]
    assert "Budgets: 2 of 4 passed" in section and "Variant differences" in section and "<h3>Manifest</h3>" in section
    charts = json.loads(re.search(r'id="chart-data">(.*?)</script>', html, re.S).group(1).replace("<\\/", "</"))
    bands = [t["meta"] for t in charts["ms_per_token"]["data"] if "band" in (t.get("meta") or {})]
    kinds = {m["band"] for m in bands}
    assert {"repetitions", "estimate"} <= kinds
    est = next(m for m in bands if m["band"] == "estimate" and m["group"].endswith("fresh@tiny"))
    assert est["ci_low"] <= est["value"] <= est["ci_high"]
    assert {"bind_groups_per_token", "live_bind_groups", "ms_per_token"} <= set(charts)
    assert "<svg" in section[section.index("Variant differences"):]      # CI plot per difference row
    assert "<script src=" not in html            # still one offline file


@pytest.mark.full
def test_report_command_reproduces_the_runs_ci_files(budget_run, tmp_path):
    # `webgpu-harness report` on a folder written by `run`, with the same budgets: byte-identical
    # statistics and CI files, with no browser
    cli, _ = budget_run
    out = tmp_path / "again"
    r = run_cli("report", str(cli.run_dir), "--output", str(out), "--budget", FAILING, "--budget", PASSING,
                "--budget", RELATIVE, "--budget", ELSEWHERE)
    assert r.returncode == 1, r.stdout + r.stderr          # the same violated budget
    for name in ("stats.json", "stats.csv", "summary.csv", "differences.csv", "junit.xml", "steps.csv", "memory.csv"):
        assert (out / name).read_bytes() == (cli.run_dir / name).read_bytes(), name
    assert (out / "report.html").stat().st_size > 100_000
    assert not (out / "samples.jsonl").exists()             # the run folder is read, never copied or changed


@pytest.mark.full
def test_the_readme_budgets_file_works_with_run(tmp_path):
    """README's own budgets.toml: accepted by `run` (no baseline budget in it), and every budget is
    decided on measured values: the ones that match nothing here are optional."""
    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(# budgets\.toml.*?)```", readme, re.S).group(1)
    f = tmp_path / "budgets.toml"
    f.write_text(block)
    # 16 tokens: a growth slope needs 10 positions after warm-up (harness/stats/floors.py)
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny", "--tokens", "16",
                  "--budget", str(f), run_dir=tmp_path / "run")
    assert cli.returncode in (0, 1), cli.stdout + cli.stderr
    stats = json.loads((tmp_path / "run" / "stats.json").read_text())
    verdicts = {b["budget"]: b for b in stats["budgets"]}
    assert len(verdicts) == 5
    for text, b in verdicts.items():
        if b["status"] == "skipped":
            assert b["optional"], text
        assert "matched no measured cell:" not in b["message"] and "baseline" not in b["message"], b
    # what can fail here is a measured time (a noisy shared machine), never the counts
    assert all(b["status"] != "failed" or "ms_per_token" in t for t, b in verdicts.items()), verdicts
