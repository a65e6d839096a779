"""Report size and speed at scale: a 16-cell × 5,000-token run folder analysed, rendered and
opened in Chromium. Targets (issue 14): renders in seconds, the HTML stays a few MB, the page
opens in Chromium in under 2 s.

The run folder is synthesised from real samples — say so wherever its figures are quoted: the
recording ``tests/analysis/runs/mixed-decode-loop`` (Chromium with SwiftShader and WebKitGTK with
emulated WebGPU, decode-loop tiny, fresh and reuse, 2 repetitions of 32 tokens, memory sampled
every 50 ms) is replicated to 4 repetitions (16 cells) and each cell extended to 5,000 tokens by
repeating its tokens 1..31 in order: cumulative counters and live-object/modeled-memory columns
continue from where the previous cycle ended (so a growing series keeps growing at its measured
rate), times and tokens are shifted, and memory samples are kept from every 5th cycle (about the
default 250 ms sampling period). Counts per token are the recorded ones; nothing is invented.

Measured: synthesis, analysis (tables + statistics + findings), writing every file, rendering
report.html alone, its size, and in Chromium (Playwright, /usr/bin/chromium, 1280 × 900): time
to the first contentful paint, to the load event, to the charts of the first screen drawn, and
to every chart drawn; beside them the load time of a page holding only plotly.js (what this
machine needs for the chart library alone at that moment: on a shared machine it dominates).

Usage: python -m benchmarks report-size   (results in reports/benchmarks/<timestamp>-report-size/)
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from benchmarks.common import out_dir
from harness import REPO_ROOT, pipeline
from harness.report import render

SOURCE = REPO_ROOT / "tests" / "analysis" / "runs" / "mixed-decode-loop"
#: Keep memory samples of every Nth repeated cycle (50 ms recording → ~250 ms sampling).
MEMORY_EVERY = 5


def _shift(v, dv):
    return v + dv if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def synthesize(dst: Path, copies: int = 2, tokens: int = 5000, src: Path = SOURCE, first: int | None = None) -> dict:
    """Write a run folder of ``len(src cells) × copies`` cells of ``tokens`` tokens into ``dst``
    from the real samples of ``src`` (see the module docstring); ``first``: only the first that
    many cells of ``src`` (in manifest order). Returns its manifest."""
    manifest = json.loads((src / "manifest.json").read_text())
    if first is not None:
        manifest = {**manifest, "cells": manifest["cells"][:first]}
    by_cell: dict[str, list[dict]] = {}
    for line in (src / "samples.jsonl").read_text().splitlines():
        s = json.loads(line)
        by_cell.setdefault(s.get("cell"), []).append(s)
    reps = 1 + max(int(c.get("repetition") or 0) for c in manifest["cells"])
    cells, out = [], []
    for j in range(copies):
        for c in manifest["cells"]:
            rep = int(c.get("repetition") or 0) + j * reps
            cid = c["cell"].rsplit(".r", 1)[0] + f".r{rep}"
            cells.append({**c, "cell": cid, "repetition": rep, "tokens": tokens})
            out.extend(_extend(by_cell.get(c["cell"], []), cid, tokens))
    for i, s in enumerate(out):
        s["seq"] = i + 1
    manifest = {**manifest, "cells": cells,
                "parameters": {**manifest["parameters"], "tokens": tokens, "repeat": reps * copies},
                "argv": ["benchmarks/report_size.py", f"synthesised from {src.name}"]}
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "manifest.json").write_text(json.dumps(manifest, indent=2))
    with (dst / "samples.jsonl").open("w") as fh:
        for s in out:
            fh.write(json.dumps(s, separators=(",", ":")) + "\n")
    return manifest


def _extend(samples: list[dict], cid: str, tokens: int) -> list[dict]:
    steps = [s for s in samples if s["kind"] == "step"]
    if not steps:
        return [{**s, "cell": cid} for s in samples]
    first, last = steps[0], steps[-1]
    period = last["step"]                         # tokens 1..period repeat
    t0 = next((s["received_s"] for s in samples if s["kind"] == "step" and s["step"] == 1), first["received_s"])
    duration = max(last["received_s"] - t0, 0.01)
    growth = {k: {f: last[k][f] - first[k][f] for f in last.get(k) or {} if isinstance(last[k][f], (int, float))}
              for k in ("live", "emulation")}
    head = [s for s in samples if s["received_s"] <= first["received_s"] and s["kind"] != "step"]
    tail = [s for s in samples if s["kind"] in ("done", "cell_status")]
    body = [s for s in samples if s not in head and s not in tail and s["kind"] != "log"
            and not (s["kind"] == "step" and s["step"] == 0)]
    out = [{**s, "cell": cid} for s in head] + [{**first, "cell": cid}]
    cycles = math.ceil((tokens - 1) / period)
    for q in range(cycles):
        dt, dtok = q * duration, q * period
        for s in body:
            if s["kind"] == "step":
                step = s["step"] + dtok
                if step >= tokens:
                    continue
                n = {**s, "cell": cid, "step": step, "received_s": s["received_s"] + dt, "t_ms": _shift(s.get("t_ms"), dt * 1000)}
                for k in ("live", "emulation"):
                    if s.get(k):
                        n[k] = {f: _shift(v, q * growth[k].get(f, 0)) for f, v in s[k].items()}
                out.append(n)
            elif q % MEMORY_EVERY == 0 and (s.get("token") or 0) + dtok < tokens:
                m = {**s, "cell": cid, "received_s": s["received_s"] + dt}
                for k, d in (("time_s", dt), ("token", dtok)):  # only the kinds that carry one (uasm: neither)
                    if k in s:
                        m[k] = _shift(s[k], d)
                out.append(m)
    shift = (cycles - 1) * duration
    out += [{**s, "cell": cid, "received_s": s["received_s"] + shift} for s in tail]
    return out


def open_in_chromium(html: Path, baseline: Path) -> dict:
    """Times (ms) to open ``html`` in Chromium at 1280 × 900: first contentful paint (the
    findings readable), load event, first-screen charts drawn, every chart drawn — median of 3
    loads; and, for scale on this machine at this moment, the load time of ``baseline``: a
    page holding nothing but the same plotly.js, run as a plain script."""
    from playwright.sync_api import sync_playwright

    runs = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium")
        base = []
        for _ in range(3):
            page = b.new_page(viewport={"width": 1280, "height": 900})
            t0 = time.perf_counter()
            page.goto(baseline.resolve().as_uri(), wait_until="load")
            base.append((time.perf_counter() - t0) * 1000)
            page.close()
        for _ in range(3):
            page = b.new_page(viewport={"width": 1280, "height": 900})
            t0 = time.perf_counter()
            page.goto(html.resolve().as_uri(), wait_until="load")
            load = time.perf_counter() - t0
            fcp = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null")
            page.wait_for_function("""() => [...document.querySelectorAll('.chart')]
                .filter((e) => e.getBoundingClientRect().top < innerHeight).every((e) => e.dataset.drawn === '1')""",
                                   timeout=120_000)
            first = time.perf_counter() - t0
            page.evaluate("window.drawAllCharts()")   # resolves when every chart is drawn
            every = time.perf_counter() - t0
            runs.append({"first_contentful_paint_ms": fcp, "load_ms": load * 1000, "first_screen_ms": first * 1000,
                         "all_charts_ms": every * 1000,
                         "charts": page.evaluate("document.querySelectorAll('.chart').length")})
            page.close()
        b.close()
    runs.sort(key=lambda r: r["first_screen_ms"])
    return {**runs[1], "loads": runs, "plotly_js_alone_load_ms": sorted(base)[1]}


def main(copies: int = 2, tokens: int = 5000) -> dict:
    d = out_dir("report-size")
    run = d / "run"
    t = time.perf_counter()
    manifest = synthesize(run, copies, tokens)
    synth_s = time.perf_counter() - t
    t = time.perf_counter()
    analysis = pipeline.analyse(run)
    analyse_s = time.perf_counter() - t
    t = time.perf_counter()
    pipeline.write(analysis)
    write_s = time.perf_counter() - t
    t = time.perf_counter()
    html = render.render(analysis, d, pipeline.chart_bundle())
    render_s = time.perf_counter() - t
    sizes = {f.name: f.stat().st_size for f in run.iterdir()}
    baseline = d / "plotly-js-alone.html"
    chart_js = render.plotly_js({}, pipeline.chart_bundle())
    baseline.write_text(f"<!doctype html><html><body><p>plotly.js alone</p><script>{chart_js}</script></body></html>",
                        encoding="utf-8")
    result = {
        "benchmark": "report-size",
        "input": f"synthesised from real samples of {SOURCE.relative_to(REPO_ROOT)} (see benchmarks/report_size.py)",
        "cells": len(manifest["cells"]), "tokens_per_cell": tokens,
        "steps_rows": int(len(analysis.tables.steps)), "memory_rows": int(len(analysis.tables.memory)),
        "synthesise_s": round(synth_s, 2), "analyse_s": round(analyse_s, 2), "write_all_files_s": round(write_s, 2),
        "render_report_s": round(render_s, 2), "report_html_bytes": html.stat().st_size,
        "plotly_js_bytes": len(chart_js), "file_bytes": sizes,
        "chromium": open_in_chromium(html, baseline),
    }
    (d / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
