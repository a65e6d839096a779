"""``app --inject cdp,proxy``: one line per app × browser × repetition comparing the two paths'
step counts, on the recorded real app run tests/analysis/app-runs/chromium-app-realms (five
apps, each through cdp and proxy); it is in the analysis's measurement lines, so the console and
summary.md both carry it."""

from __future__ import annotations

import warnings
from pathlib import Path

from harness import pipeline
from harness.verdicts import ci_files
from harness.verdicts.crosscheck import inject_crosscheck

RUN = Path(__file__).resolve().parent / "app-runs" / "chromium-app-realms"


def test_cdp_and_proxy_step_counts_are_cross_checked_per_app(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pipeline.analyse(RUN, out_dir=tmp_path)
    lines = [x for x in a.measurement if "cdp vs proxy" in x]
    assert lines == [
        "chromium app/page-and-worker, cdp vs proxy: createBindGroup per step 5 = 5, dispatches per step 5 = 5, "
        "submits per step 2 = 2, steps 12 = 12: agree",
        "chromium app/frames, cdp vs proxy: createBindGroup per step 3 = 3, dispatches per step 3 = 3, "
        "submits per step 1 = 1, steps 12 = 12: agree",
        "chromium app/data-worker, cdp vs proxy: not compared (cdp failed, proxy failed)",
        "chromium app/throws, cdp vs proxy: not compared (cdp failed, proxy failed)",
        "chromium app/device-again, cdp vs proxy: createBindGroup per step 3 = 3, dispatches per step 3 = 3, "
        "submits per step 1 = 1, steps 12 = 12: agree"]
    md = ci_files.markdown("app", a.stats, a.stats.differences, [], a.notes, findings=a.findings)
    assert all(f"- {x}" in md for x in lines)
    # where the paths disagree, the line says which count: page-and-worker's proxy row against
    # frames' cdp row (both measured in this run) differ in every per-step count
    s = a.tables.summary
    mixed = s[(s["variant"] == "frames") & (s["profile"] == "cdp")
              | (s["variant"] == "page-and-worker") & (s["profile"] == "proxy")].assign(variant="mixed")
    assert inject_crosscheck(mixed) == [
        "chromium app/mixed, cdp vs proxy: differ: createBindGroup per step 3 ≠ 5, dispatches per step 3 ≠ 5, "
        "submits per step 1 ≠ 2"]
