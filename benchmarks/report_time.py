"""Report time against run size: is the analysis linear in tokens? (issue 19, item 2: ≤ 5 s for
16 cells × 5,000 tokens on a quiet core; 16 × 5,000 ÷ 16 × 1,000 ≈ 5 when linear.)

Four run folders are synthesised from the real samples of ``tests/analysis/runs/mixed-decode-loop``
by :func:`benchmarks.report_size.synthesize` (Chromium with SwiftShader and WebKitGTK with
emulated WebGPU, decode-loop tiny, fresh and reuse; its tokens repeated, memory samples kept
from every 5th cycle): 2 × 64 (Chromium fresh + reuse, repetition 0), 4 × 1,000 (Chromium, both
repetitions), 16 × 1,000 and 16 × 5,000 (both engines, repetitions doubled). Each is analysed
and every file written (what ``webgpu-harness report RUN_DIR`` does after its imports:
:func:`harness.pipeline.analyse_and_write` into a fresh folder) 3 times in this process; the
figures are min / median / max of the 3, as wall time and as this process's CPU time
(``time.process_time``: on a shared machine the wall time includes waiting for a core, the CPU
time is what a quiet core would take, give or take cache effects). Beside them: the time of the
analysis alone (tables + statistics + findings) and the findings' text, so a change of speed can
be checked for a change of what the report says.

Usage: python -m benchmarks report-time   (results in reports/benchmarks/<timestamp>-report-time/)
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from benchmarks.common import out_dir
from benchmarks.report_size import SOURCE, synthesize
from harness import REPO_ROOT, pipeline

#: (label, cells of the source taken, copies, tokens): 8 source cells (2 engines × 2 variants × 2 repetitions).
SIZES = (("2x64", 2, 1, 64), ("4x1000", 4, 1, 1000), ("16x1000", 8, 2, 1000), ("16x5000", 8, 2, 5000))
REPEATS = 3


def _spread(values: list[float]) -> dict:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def time_report(run: Path, work: Path, repeats: int = REPEATS) -> dict:
    """Analyse ``run`` and write every file into ``work/<i>`` ``repeats`` times: wall and CPU
    seconds (min / median / max) of the whole report and of the analysis alone, and the findings."""
    wall, cpu, a_wall, a_cpu = [], [], [], []
    findings: list[str] = []
    for i in range(repeats):
        out = work / str(i)
        w0, c0 = time.perf_counter(), time.process_time()
        a = pipeline.analyse(run, out_dir=out)
        w1, c1 = time.perf_counter(), time.process_time()
        pipeline.write(a)
        w2, c2 = time.perf_counter(), time.process_time()
        a_wall.append(w1 - w0)
        a_cpu.append(c1 - c0)
        wall.append(w2 - w0)
        cpu.append(c2 - c0)
        findings = [f.text() for f in a.findings]
    return {"report_wall_s": _spread(wall), "report_cpu_s": _spread(cpu), "analyse_wall_s": _spread(a_wall),
            "analyse_cpu_s": _spread(a_cpu), "findings": findings,
            "steps_rows": int(len(a.tables.steps)), "memory_rows": int(len(a.tables.memory))}


def main(sizes=SIZES, repeats: int = REPEATS, keep: Path | None = None) -> dict:
    """Run the benchmark; ``keep``: a folder of already synthesised runs (``<label>/``) to reuse."""
    d = out_dir("report-time")
    result: dict = {"benchmark": "report-time",
                    "input": f"synthesised from real samples of {SOURCE.relative_to(REPO_ROOT)} "
                             "(benchmarks/report_size.py)", "repeats": repeats, "sizes": {}}
    for label, first, copies, tokens in sizes:
        run = (keep or d) / label
        if not (run / "manifest.json").exists():
            synthesize(run, copies, tokens, first=first)
        r = time_report(run, d / f"{label}-out", repeats)
        result["sizes"][label] = r
        print(f"{label}: report {r['report_cpu_s']['median']:.2f} s CPU ({r['report_wall_s']['median']:.2f} s wall), "
              f"analysis {r['analyse_cpu_s']['median']:.2f} s CPU", flush=True)
    s = result["sizes"]
    if "16x5000" in s and "16x1000" in s:
        result["ratio_16x5000_to_16x1000_cpu"] = round(s["16x5000"]["report_cpu_s"]["median"]
                                                       / s["16x1000"]["report_cpu_s"]["median"], 2)
        result["ratio_16x5000_to_16x1000_wall"] = round(s["16x5000"]["report_wall_s"]["median"]
                                                        / s["16x1000"]["report_wall_s"]["median"], 2)
    (d / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "sizes"}, indent=2))
    return result


if __name__ == "__main__":
    main()
