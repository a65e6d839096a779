"""An app run speaks of steps, not tokens, and names its command: summary.md's heading, its
findings (createBindGroup calls per step, Dispatches per step), stats.json's findings, and the
runs index keeps the cdp and proxy cells' findings under their scopes. On the recorded real app
run tests/analysis/app-runs/chromium-app-realms (cdp and proxy) and a recorded decode-loop run
(tokens stay tokens)."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

from harness import pipeline
from harness.report import index

HERE = Path(__file__).resolve().parent
APP = HERE / "app-runs" / "chromium-app-realms"
DECODE = HERE / "runs" / "chromium-decode-loop"


def _write(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline.analyse_and_write(dst)
    return dst


def test_an_app_runs_summary_and_findings_say_steps_and_name_the_command(tmp_path):
    d = _write(APP, tmp_path / "runs" / "app")
    md = (d / "summary.md").read_text()
    assert md.startswith("## webgpu-harness app\n")
    assert "- createBindGroup calls per step: " in md and "- Dispatches per step: " in md
    findings = json.loads((d / "stats.json").read_text())["findings"]
    app = [f for f in findings if " — app@" in f["scope"]]
    assert app and {f["scope"].split(" — app@", 1)[1].split()[0] for f in app} == {"cdp", "proxy"}
    for f in app:
        assert not re.search(r"\btokens?\b|/token", f["text"]), f["text"]
    assert "per-step values after 1 warm-up step" in md
    assert "Per-step values exclude warm-up step 0" in (d / "report.html").read_text()
    # the runs index: each scope's findings under its heading
    entry = index.read_run(d)
    scopes = [s for s, _ in entry.scoped_findings]
    assert len(scopes) == len(set(scopes)) >= 2 and any("@cdp" in s for s in scopes) and any("@proxy" in s for s in scopes)
    assert sum(len(t) for _, t in entry.scoped_findings) == len(entry.findings) == len(findings)
    page = index.write(tmp_path / "index.html", tmp_path / "runs").read_text()
    for s in scopes:
        assert f'<div class="scope"><b>{s}</b></div>' in page


def test_a_decode_runs_summary_still_says_tokens_and_run(tmp_path):
    d = _write(DECODE, tmp_path / "runs" / "dl")
    md = (d / "summary.md").read_text()
    assert md.startswith("## webgpu-harness run\n")
    assert "- createBindGroup calls per token: " in md and "per-token values after 1 warm-up token;" in md
    assert "Per-token values exclude warm-up token 0\n(shaded on the charts)." in (d / "report.html").read_text()


def test_memory_samples_after_the_last_step_are_marked_and_counted(tmp_path):
    import pandas as pd

    d = _write(APP, tmp_path / "runs" / "app")
    mem = pd.read_csv(d / "memory.csv")
    steps = pd.read_csv(d / "steps.csv")
    md = (d / "summary.md").read_text()
    cell = "chromium.app.frames.cdp.r0"
    m = mem[(mem["cell"] == cell) & (mem["source"] == "psutil")]
    last_end = steps.loc[steps["cell"] == cell, "end_s"].max()
    assert (m["after_last_step"].astype(bool) == (m["time_s"] > last_end)).all()
    rounds = m.groupby("time_s")["after_last_step"].first().astype(bool)
    assert rounds.any()
    assert (f"- `{cell}`: {int(rounds.sum())} of {len(rounds)} memory sampling rounds were taken after the last step "
            f"({int(steps.loc[steps['cell'] == cell, 'step'].max())}) ended, while the cell waited to end") in md
