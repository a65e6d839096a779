"""``compare`` of a run whose cell failed, on recorded real runs (in process): a configuration B
ran but did not finish is said to have failed and why (``B: failed (interrupted …)``), not to be
"only in A"; summary.md bolds a difference only when it is significant, as its Differences
table's legend says (tests/analysis/kept-runs/chromium-interrupted: a run interrupted by SIGINT)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from harness import pipeline
from harness.cli import app
from harness.verdicts import ci_files

ANALYSIS = Path(__file__).resolve().parents[1] / "analysis"
A = ANALYSIS / "runs" / "chromium-decode-loop"
B = ANALYSIS / "kept-runs" / "chromium-interrupted"
INTERRUPTED = ("failed (interrupted (Ctrl-C or SIGTERM) before this cell finished; 22 steps were received and kept)")


def test_compare_says_which_configuration_failed_in_b_and_why(tmp_path):
    a, b = shutil.copytree(A, tmp_path / "a"), shutil.copytree(B, tmp_path / "b")
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(tmp_path / "c")])
    assert r.exit_code == 0, r.stdout + r.stderr
    assert f"  chromium/decode-loop/reuse@tiny: B: {INTERRUPTED}" in r.stdout.splitlines()
    assert "only in A" not in r.stdout
    doc = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert doc["failed_in_b"] == {"chromium/decode-loop/reuse@tiny": INTERRUPTED} and doc["only_in_a"] == []
    assert [m["group"].split(" [")[0] for m in doc["matches"]] == ["chromium/decode-loop/fresh@tiny"]
    md = (tmp_path / "c" / "summary.md").read_text()
    assert f"- `chromium/decode-loop/reuse@tiny`: B: {INTERRUPTED}" in md and "unmatched" not in md
    assert f"chromium/decode-loop/reuse@tiny: B: {INTERRUPTED}" in (tmp_path / "c" / "compare.html").read_text()


def test_summary_md_bolds_a_difference_only_when_it_is_significant(tmp_path):
    a, b = shutil.copytree(A, tmp_path / "a"), shutil.copytree(B, tmp_path / "b")
    c = pipeline.analyse(b, baseline=a, out_dir=tmp_path / "c")
    assert c.comparison.differences and not any(d.significant for d in c.comparison.differences)
    md = ci_files.markdown("compare", None, c.comparison.differences, [], findings=c.findings)
    finding = next(x for x in md.splitlines() if x.startswith("- B − A: "))
    assert "**" not in finding, finding  # ms_per_token: no significance claimed; bind groups 0: no difference
    assert "no significance claimed" in finding and "(not significant)" not in finding
    assert "bind_groups_per_token 0 (+0.0%) (no difference: the same count on every step of both sides)" in finding
    # a run's findings: reuse's -100% createBindGroup per token vs fresh is significant, so bold
    run = pipeline.analyse(a, out_dir=tmp_path / "r")
    sig = [d for d in run.stats.differences if d.significant and d.metric == "bind_groups_per_token"]
    assert sig and sig[0].rel == -1.0
    md = ci_files.markdown("run", run.stats, run.stats.differences, [], findings=run.findings)
    line = next(x for x in md.splitlines() if x.startswith("- createBindGroup calls per token"))
    assert re.search(r"\(\*\*-100\.0%\*\* vs fresh\)", line), line


def test_compare_of_a_run_with_itself_says_so_and_each_row_has_its_verdict(tmp_path):
    a = shutil.copytree(A, tmp_path / "a")
    r = CliRunner().invoke(app, ["compare", str(a), str(a), "-o", str(tmp_path / "c")], terminal_width=400)
    assert r.exit_code == 0, r.stdout + r.stderr
    assert r.stdout.startswith("note: A and B are the same folder: every difference compares a run with itself"), r.stdout
    rows = [x for x in r.stdout.splitlines() if x.startswith("│ chromium/decode-loop/")]
    cells = {tuple(c.strip() for c in x.strip("│").split("│")[1:2] + x.strip("│").split("│")[-1:]) for x in rows}
    # counts the same on every step of both sides: no difference, measured (not "not significant")
    assert ("bind_groups_per_token", "no difference") in cells and ("ms_per_token", "not significant") in cells, cells
    assert "(within-run; across 2 + 2" in r.stdout, r.stdout
    # a copy of the run (the same manifest.json in another folder) is named too
    b = shutil.copytree(A, tmp_path / "b")
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "-o", str(tmp_path / "d")], terminal_width=400)
    assert r.exit_code == 0 and r.stdout.startswith("note: A and B hold the same manifest.json (copies of one run)"), r.stdout
