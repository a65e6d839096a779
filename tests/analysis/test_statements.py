"""Every printed statement against the samples it rests on (issue 20: no statement on fewer
points than it claims, no within-run noise called significant, no partial measurement shown as
complete), on real run folders recorded from Chromium and WebKitGTK (tests/analysis/runs/,
tests/analysis/app-runs/; re-recorded by tests/analysis/record.py). No browser, nothing mocked:
run folder in, the console, report.html and summary.md out."""

from __future__ import annotations

import csv
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import run_cli
from harness import pipeline

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
APP_RUNS = HERE / "app-runs"
NAMES = ("chromium-decode-loop", "webkit-decode-loop", "mixed-decode-loop", "chromium-gc-cadence",
         "chromium-bind-group-cache", "chromium-ort-run")


class _Text(HTMLParser):
    """report.html as text: one line per table row (cells joined by " | "), scripts left out."""

    def __init__(self):
        super().__init__()
        self.out, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")
        if tag in ("tr", "p", "li", "h2", "h3", "div"):
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data.replace("\n", " "))


def html_text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return re.sub(r"[ \t]+", " ", "".join(p.out))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = {}
    for name in NAMES:
        a = pipeline.analyse(RUNS / name, out_dir=tmp_path_factory.mktemp(name))
        pipeline.write(a)
        out[name] = a
    a = pipeline.analyse(APP_RUNS / "chromium-app-realms", out_dir=tmp_path_factory.mktemp("realms"))
    pipeline.write(a)
    out["chromium-app-realms"] = a
    return out


def _md(a) -> str:
    return (a.out_dir / "summary.md").read_text(encoding="utf-8")


def _findings(a) -> str:
    return "\n".join(f.text() for f in a.findings)


def _section(text: str, title: str) -> str:
    """The text of one report section, from its heading to the next section's."""
    start = text.index("\n" + title)
    nxt = re.search(r"\n(Remedies side by side|Memory: |Buffers created|Environment|Statistics:|Cells\n)",
                    text[start + 1:])
    return text[start:start + 1 + nxt.start()] if nxt else text[start:]


# 1. a budget not crossed reads "not reached (max X of Y)" everywhere --------------------------------


def test_a_budget_not_crossed_reads_not_reached_in_every_table(analysed):
    for name in ("chromium-decode-loop", "webkit-decode-loop"):
        a = analysed[name]
        s = a.tables.summary
        assert s["would_be_killed_at_token"].isna().all()
        budget = s["memory_budget_bytes"].iloc[0] / 1e6
        retention = _section(html_text(a.out_dir / "report.html"), "Bind group retention per engine")
        rows = [r for r in retention.splitlines() if r.startswith(" | ") and re.search(r"\.r\d+ \|", r)]
        assert len(rows) == len(s)
        for _, r in s.iterrows():
            row = next(x for x in rows if r["cell"] in x)
            said = f"not reached (max {round(r['memory_budget_counted_bytes_max'] / 1e6):,} MB of {budget:,.0f} MB)"
            assert said in row, row
            assert "token 0" not in row, row
        for _, g in s.groupby("variant"):
            most = f"not reached (max {round(g['memory_budget_counted_bytes_max'].max() / 1e6):,} MB of {budget:,.0f} MB)"
            assert most in _findings(a) and most in _md(a), (most, _findings(a))
        assert "token 0" not in _md(a)
