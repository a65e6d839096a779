"""The generated pages opened in a real browser (Chromium via Playwright): report.html, compare.html
and index.html, written by the CLI from the run folders recorded in Chromium and WebKitGTK
(tests/analysis/runs/). Each page: no console error, the findings on the first screen with
numbers equal to stats.json, every chart drawn (a non-empty SVG), no horizontal page scroll at
1280 px. Screenshots are kept with the test output (the path is printed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO, run_cli
from page_fixtures import browser, shots  # noqa: F401 (pytest fixtures, shared with the other page tests)

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

RUNS = REPO / "tests" / "analysis" / "runs"
WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A reports root: runs/ with recorded runs re-analysed by ``report``, a copy of one made
    later (the same configuration twice: a trend), a partial folder; compare/ with one
    comparison. The CLI rebuilds the index of the folder holding each (root/runs/index.html);
    ``index root`` writes the reports root's root/index.html."""
    root = tmp_path_factory.mktemp("reports")
    names = ["mixed-decode-loop", "webkit-gc-retention", "chromium-dispatch-overhead", "chromium-decode-loop"]
    for name in names:
        shutil.copytree(RUNS / name, root / "runs" / name, ignore=shutil.ignore_patterns("COMMAND"))
    later = root / "runs" / "chromium-decode-loop-later"
    shutil.copytree(RUNS / "chromium-decode-loop", later, ignore=shutil.ignore_patterns("COMMAND"))
    m = json.loads((later / "manifest.json").read_text())
    m["created"] = "2099-01-01T00:00:00+00:00"
    (later / "manifest.json").write_text(json.dumps(m))
    for d in [root / "runs" / n for n in names] + [later]:
        r = run_cli("report", str(d))
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"index: {root.resolve() / 'runs' / 'index.html'}" in r.stdout
    (root / "runs" / "partial").mkdir()
    shutil.copy(RUNS / "webkit-decode-loop" / "manifest.json", root / "runs" / "partial")
    r = run_cli("compare", str(root / "runs" / "chromium-decode-loop"), str(later), "--output", str(root / "compare" / "c"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (root / "index.html").exists()         # never a folder above the one named
    r = run_cli("index", str(root))
    assert r.returncode == 0 and (root / "index.html").is_file(), r.stdout + r.stderr
    return root


def open_page(browser, path: Path, shots: Path, name: str):
    """Open ``path`` at 1280 × 900, draw every chart, screenshot it; (page, errors)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.screenshot(path=str(shots / f"{name}-first-screen.png"))
    page.evaluate("window.drawAllCharts ? window.drawAllCharts() : null")
    page.screenshot(path=str(shots / f"{name}-full.png"), full_page=True)
    return page, errors


def no_horizontal_scroll(page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH   # details open: tables scroll in their box


def charts_drawn(page) -> list[str]:
    """Ids of every .chart element; asserts each holds an SVG with at least one drawn trace."""
    found = page.evaluate("""() => [...document.querySelectorAll('.chart')].map((el) => {
        const svg = el.querySelector('svg.main-svg'); const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
        return {id: el.id, w: box.width, h: box.height, drawn: el.dataset.drawn === '1',
                traces: el.querySelectorAll('.scatterlayer .trace, .barlayer .trace').length,
                paths: [...el.querySelectorAll('.scatterlayer path.js-line, .scatterlayer path.point, .barlayer path')]
                       .filter((p) => (p.getAttribute('d') || '').length > 2).length};
    })""")
    for c in found:
        assert c["drawn"] and c["w"] > 100 and c["h"] > 100 and c["traces"] > 0 and c["paths"] > 0, c
    return [c["id"] for c in found]


def numbers_match_stats(page, stats: dict, summary: pd.DataFrame | None = None, selector: str = "#findings .num") -> int:
    """Every number of ``selector`` equals the value stats.json holds where its ``data-ref`` points."""
    groups = {g["group"]: g["metrics"] for g in stats.get("groups", [])}
    diffs = {(d["a"], d["b"], d["metric"]): d for d in stats["differences"]}
    in_findings = [(json.dumps(n["ref"], sort_keys=True), n["value"]) for f in stats["findings"] for n in f["numbers"]]
    nums = page.eval_on_selector_all(selector, "els => els.map((e) => [e.dataset.value, e.dataset.ref])")
    for value, ref_text in nums:
        ref = json.loads(ref_text)
        v = None if value == "None" else float(value)
        if "group" in ref and "projection_bytes" not in ref:
            held = groups[ref["group"]][ref["metric"]]["value"]
            # no number shown ("too few floors (n=2; needs 3)") where stats.json holds none
            assert held is None if v is None else held == pytest.approx(v, rel=1e-12), ref
        elif "a" in ref:
            assert diffs[(ref["a"], ref["b"], ref["metric"])][ref["field"]] == pytest.approx(v, rel=1e-12), ref
        elif "column" in ref:
            assert float(summary.set_index("cell").loc[ref["cell"], ref["column"]]) == v
        if selector.startswith("#findings"):
            assert (json.dumps(ref, sort_keys=True), pytest.approx(v)) in in_findings, ref
    return len(nums)


def test_report_opens_with_findings_and_engines_side_by_side(root, browser, shots):
    d = root / "runs" / "mixed-decode-loop"
    stats = json.loads((d / "stats.json").read_text())
    page, errors = open_page(browser, d / "report.html", shots, "report-mixed")
    assert errors == []
    # the first screen: the findings, per browser, with numbers
    top = page.eval_on_selector("#findings", "e => e.getBoundingClientRect().top")
    assert top < HEIGHT / 2
    scopes = page.eval_on_selector_all("#findings h3", "els => els.map((e) => e.textContent)")
    assert any(s.startswith("chromium 156") for s in scopes) and any(s.startswith("webkit") for s in scopes)
    first = page.eval_on_selector("#findings li .num", "e => e.getBoundingClientRect().bottom")
    assert first < HEIGHT
    n = numbers_match_stats(page, stats, pd.read_csv(d / "summary.csv"))
    assert n == sum(len(f["numbers"]) for f in stats["findings"]) and n >= 8
    # which engine grows and by how much per token: the growth table, one column per engine
    heads = page.eval_on_selector_all("#engines table tr:first-child th", "els => els.map((e) => e.textContent)")
    assert heads[0] == "growth per token" and any(h.startswith("chromium") for h in heads) \
        and any(h.startswith("webkit") for h in heads)
    assert numbers_match_stats(page, stats, selector="#engines .num") >= 4
    ids = charts_drawn(page)
    assert {"live_bind_groups", "engines_modeled_native", "engines_content_rss", "bind_groups_per_token",
            "ms_per_token"} <= set(ids)
    panels = page.eval_on_selector("#live_bind_groups", "e => [...e.querySelectorAll('.gtitle, .annotation-text')]"
                                   ".map((t) => t.textContent)")
    assert any(p.startswith("chromium") for p in panels) and any(p.startswith("webkit") for p in panels)
    data = json.loads(page.eval_on_selector("#chart-data", "e => e.textContent"))
    live = data["live_bind_groups"]
    assert live["layout"]["xaxis2"]["matches"] == "x" and live["layout"]["yaxis2"]["matches"] == "y"  # same axes
    assert {t["meta"]["engine"].split(" ")[0] for t in live["data"]} == {"chromium", "webkit"}
    assert all(len(t["name"]) < 20 and "WebGPU" in t["meta"]["provenance"] for t in live["data"])  # short names
    no_horizontal_scroll(page)
    page.close()


@pytest.mark.parametrize("name", ["webkit-gc-retention", "chromium-dispatch-overhead"])
def test_workload_reports_render_in_their_own_terms(root, browser, shots, name):
    d = root / "runs" / name
    stats = json.loads((d / "stats.json").read_text())
    page, errors = open_page(browser, d / "report.html", shots, f"report-{name}")
    assert errors == []
    text = page.inner_text("#findings")
    assert numbers_match_stats(page, stats, pd.read_csv(d / "summary.csv")) >= 3
    if name == "chromium-dispatch-overhead":
        assert "per dispatch: single-op" in text and " µs" in text and "single-op ÷ sequential" in text and "ms per token" not in text
        cells = page.text_content("#cells")
        assert "single-op µs / dispatch" in cells and "median ms / token" not in cells
    else:
        assert "Collection events" in text
    assert "nan" not in page.inner_text("body").replace("nanoseconds", "").split()
    charts_drawn(page)
    no_horizontal_scroll(page)
    page.close()


def test_compare_page(root, browser, shots):
    d = root / "compare" / "c"
    stats = json.loads((d / "stats.json").read_text())
    page, errors = open_page(browser, d / "compare.html", shots, "compare")
    assert errors == []
    assert page.eval_on_selector("#findings", "e => e.getBoundingClientRect().top") < HEIGHT / 2
    assert numbers_match_stats(page, stats) == sum(len(f["numbers"]) for f in stats["findings"]) >= 4
    no_horizontal_scroll(page)   # opens every details: the per-difference CI plots become visible
    svgs = page.eval_on_selector_all("svg.ci", "els => els.map((s) => [s.getBoundingClientRect().width, s.childElementCount])")
    assert svgs and all(w > 0 and k >= 2 for w, k in svgs)
    page.close()


def test_index_page(root, browser, shots):
    page, errors = open_page(browser, root / "index.html", shots, "index")
    assert errors == []
    rows = page.eval_on_selector_all("#runs tr[data-run]", "els => els.map((e) => e.dataset.run)")
    assert rows[0] == "chromium-decode-loop-later" and set(rows) >= {"mixed-decode-loop", "partial"}
    assert "not analysed" in page.inner_text("tr[data-run=partial]")
    ids = charts_drawn(page)
    assert "trend_0" in ids                     # createBindGroup per token across the two runs
    href = page.get_attribute("tr[data-run=mixed-decode-loop] a", "href")
    assert (root / href).exists()
    assert page.get_attribute("#comparisons a", "href") == "compare/c/compare.html"
    no_horizontal_scroll(page)
    page.close()
