"""The console's lines and numbers on recorded real runs (``report`` in process): a skipped cell
says why it was skipped and nothing about a JS heap it never had; numbers of four or more
integer digits carry thousands separators everywhere, intervals included."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

from typer.testing import CliRunner

from harness import pipeline
from harness.cli import app
from harness.report import format as F

ANALYSIS = Path(__file__).resolve().parents[1] / "analysis"


def test_skipped_cells_say_why_and_nothing_about_a_js_heap(tmp_path):
    d = shutil.copytree(ANALYSIS / "kept-runs" / "webkit-real-skipped", tmp_path / "runs" / "wk")
    r = CliRunner().invoke(app, ["report", str(d)])
    out = r.stdout
    assert "webkit.decode-loop.fresh.tiny.r0: skipped: navigator.gpu is undefined in this browser's worker (no WebGPU)" in out
    assert "JS heap not available" not in out and "measured on:" not in out


def test_numbers_of_four_integer_digits_have_separators_in_intervals_too(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pipeline.analyse(ANALYSIS / "runs" / "mixed-decode-loop", out_dir=tmp_path)
    e = next(g.metrics["live_bind_groups_max"] for g in a.stats.groups.values() if g.key.label == "webkit/decode-loop/fresh@tiny")
    assert e.ci_low < -1000 and e.ci_high > 1000           # measured: 987.5 [-1,420, 3,395]
    text = F.estimate(e)
    assert text == f"{F.number(e.value)} [{e.ci_low:,.0f}, {e.ci_high:,.0f}]" and not re.search(r"\d{4}", text), text
    assert F.number(2935.7) == F.number(2936) == "2,936" and F.number(999.94) == "999.9"


def test_the_console_answers_the_memory_budget_per_cell(tmp_path):
    # recorded with --memory-budget 400MB (a run with no --memory-budget now gets 2048MB)
    d = shutil.copytree(ANALYSIS / "runs" / "chromium-decode-loop", tmp_path / "runs" / "dl")
    r = CliRunner().invoke(app, ["report", str(d)])
    lines = [x for x in r.stdout.splitlines() if "memory budget 400 MB" in x]
    assert len(lines) == 4, r.stdout   # 2 variants × 2 repetitions, each its own reading
    for x in lines:
        # fresh r1's renderer was sampled only in warm-up step 0 (summary.csv content_rss_samples 0): its
        # reading says it rests on no in-step sample
        tail = (r": its content-process RSS rests on no in-step sample \(content process not sampled after the warm-up\)"
                if "fresh [tiny] r1" in x else "")
        # 1 or 2 RSS rounds on the steps: "not reached" says they are too few to say it never was
        n = int(re.search(r"\(n=(\d+) RSS round", x).group(1))
        tail += r": too few RSS rounds to say it was never passed between them \(needs 3\)" if 0 < n < 3 else ""
        word = "not decided" if tail else "not reached"   # too few rounds: not passed where sampled, no more
        assert re.fullmatch(r"  chromium decode-loop/(fresh|reuse) \[tiny\]( r1)?: memory budget 400 MB: "
                            + word + r" \(max \d+ MB of 400 MB(: RSS sampled outside the tokens| at token \d+: RSS "
                            r"(sampled there|carried forward from token \d+)) \(n=\d+ RSS rounds?( on them)?\)\)" + tail, x), x
    # nothing projected here (too few floors): the finding is not repeated on the console
    assert "Memory budget (--memory-budget" not in r.stdout
