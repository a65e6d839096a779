"""report.html of recorded runs (tests/analysis/runs/) opened in real Chromium at 1280 × 900:
the "Variant differences" and the other statistics tables read (no cell broken inside a word,
configuration names whole), and every chart is drawn without being scrolled into view — after
the page goes idle (a page saved whole) and at once on ``beforeprint`` (printing, or printing to
PDF) — and a printed PDF holds them. Screenshots and the PDF are kept with the test output (the
path is printed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from page_fixtures import browser, shots  # noqa: F401 (pytest fixtures, shared with the other page tests)

pytestmark = pytest.mark.full  # starts its own browser

RUNS = REPO / "tests" / "analysis" / "runs"
WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name in ("mixed-decode-loop", "chromium-sync-latency", "chromium-ort-run"):
        d = tmp_path_factory.mktemp(name) / name
        shutil.copytree(RUNS / name, d, ignore=shutil.ignore_patterns("COMMAND"))
        r = run_cli("report", str(d))
        assert r.returncode == 0, r.stdout + r.stderr
        out[name] = d / "report.html"
    return out


#: Per cell of a table: its lines of text (the text's height ÷ line height) and the most lines its text could
#: need if it broke only between words, after hyphens and at <wbr> (a name of n parts: n lines at most).
CELL_LINES = """(sel) => [...document.querySelectorAll(sel + ' td')].map((td) => {
    const cs = getComputedStyle(td);
    const lh = parseFloat(cs.lineHeight) || 1.45 * parseFloat(cs.fontSize);
    const range = document.createRange();
    range.selectNodeContents(td);
    const blocks = [...td.childNodes].filter((n) => n.nodeName === 'svg').length;
    const parts = td.innerHTML.replace(/<svg[\\s\\S]*?<\\/svg>/g, '').split(/<wbr>|<br>|-|\\s+/).filter((x) => x.replace(/<[^>]+>/g, '').trim()).length;
    return {text: td.textContent.trim().slice(0, 60), lines: blocks ? 1 : Math.round(range.getBoundingClientRect().height / lh),
            parts: Math.max(parts, 1), width: td.getBoundingClientRect().width};
})"""


def test_statistics_tables_read_at_1280(reports, browser, shots):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(reports["mixed-decode-loop"].as_uri())
    page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    diffs = page.locator("table.diffs")
    diffs.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "variant-differences.png"))
    # grouped by pair: a row naming b and a, then one row per metric
    pairs = page.eval_on_selector_all("table.diffs tr.group td", "els => els.map((e) => e.textContent)")
    assert pairs and all(p.startswith("b chromium/decode-loop/") or p.startswith("b webkit/decode-loop/") for p in pairs)
    assert any("reuse@tiny vs a chromium/decode-loop/fresh@tiny" in p for p in pairs)
    for sel in ("table.diffs", "#statistics table.wide"):
        cells = page.evaluate(CELL_LINES, sel)
        assert cells
        broken = [c for c in cells if c["lines"] > c["parts"]]
        assert broken == [], broken[:5]                          # no word broken letter by letter
    # the differences table fits the page's box: nothing to scroll sideways
    assert page.evaluate("(() => { const t = document.querySelector('table.diffs'); "
                         "return t.getBoundingClientRect().width <= t.parentElement.clientWidth + 1; })()")
    metric_col = page.eval_on_selector("table.diffs tr:not(.group) td", "e => e.getBoundingClientRect().width")
    assert metric_col >= 100
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    page.close()


def test_sync_latency_and_cycle_tables_read_at_1280(reports, browser, shots):
    for name, sid in (("chromium-sync-latency", "sync-latency"), ("chromium-ort-run", "cycles")):
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(reports[name].as_uri())
        page.locator(f"#{sid}").screenshot(path=str(shots / f"{sid}.png"))
        cells = page.evaluate(CELL_LINES, f"#{sid} table")
        assert cells and [c for c in cells if c["lines"] > c["parts"]] == []
        heads = page.eval_on_selector_all(f"#{sid} th", "els => els.map((e) => [e.textContent, e.getBoundingClientRect().width])")
        # a header is at least as wide as its longest word (never "creat / eBin / dGro / up")
        assert all(w >= 40 for _, w in heads), heads
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        page.close()


def _charts(page) -> tuple[int, int]:
    """(charts on the page, charts holding a drawn plotly SVG)."""
    return tuple(page.evaluate("[document.querySelectorAll('.chart').length, "
                               "[...document.querySelectorAll('.chart')].filter((e) => e.querySelector('svg.main-svg')).length]"))


def test_every_chart_is_drawn_without_scrolling_once_idle(reports, browser):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(reports["mixed-decode-loop"].as_uri())
    total = page.evaluate("document.querySelectorAll('.chart').length")
    assert total >= 6
    # nothing scrolled, drawAllCharts not called: the idle drawing reaches every chart (a page saved whole has them)
    page.wait_for_function("[...document.querySelectorAll('.chart')].every((e) => e.dataset.drawn === '1')",
                           timeout=60_000)
    assert _charts(page) == (total, total)
    assert page.evaluate("window.scrollY") == 0
    page.close()


def test_printing_draws_every_chart_and_the_pdf_holds_them(reports, browser, shots):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(reports["mixed-decode-loop"].as_uri(), wait_until="load")
    page.wait_for_function("window.Plotly !== undefined")
    # in one task: what was drawn, then beforeprint, then what is drawn (no idle callback can run in between)
    before, after, total = page.evaluate("""() => {
        const drawn = () => [...document.querySelectorAll('.chart')].filter((e) => e.querySelector('svg.main-svg')).length;
        const b = drawn();
        window.dispatchEvent(new Event('beforeprint'));
        return [b, drawn(), document.querySelectorAll('.chart').length];
    }""")
    assert before < total, "every chart was drawn before the test could print: nothing tested"
    assert after == total
    page.close()
    # a real print to PDF, at once after load: the PDF is laid out with every chart drawn, at the page's width
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto(reports["mixed-decode-loop"].as_uri(), wait_until="load")
    pdf = page.pdf(path=str(shots / "report.pdf"), format="A4", print_background=True)
    assert _charts(page)[1] == _charts(page)[0]
    svg_widths = page.eval_on_selector_all(".chart svg.main-svg", "els => els.map((s) => s.getBoundingClientRect().width)")
    assert all(w > 100 for w in svg_widths)
    page.close()
    # a page without its chart script prints the same text without charts: the charts add drawing to the PDF
    bare = reports["mixed-decode-loop"].read_text(encoding="utf-8").replace('id="chart-data"', 'id="no-chart-data"')
    (shots / "bare.html").write_text(bare, encoding="utf-8")
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    page.goto((shots / "bare.html").as_uri(), wait_until="load")
    without = page.pdf(format="A4", print_background=True)
    page.close()
    assert len(pdf) > 1.3 * len(without), (len(pdf), len(without))
