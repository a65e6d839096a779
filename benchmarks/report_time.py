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

With ``--baseline DIR`` (a checkout of an older commit, e.g. ``git worktree add DIR <commit>``,
with a ``node_modules`` link beside it so both reports embed the same plotly.js) every size is
analysed by that checkout and by this one in turn, each in its own process (``PYTHONPATH``, same
interpreter and packages; baseline, current, baseline, current for ``--rounds 2``), so that the
machine's load hits both alike: the ratios current / baseline of the medians are the figures
to trust on a shared machine, whose speed changes by 2× over a day here. The findings of both are
compared (``same_findings``).

Usage: python -m benchmarks report-time   (results in reports/benchmarks/<timestamp>-report-time/)
       python -m benchmarks.report_time [--baseline DIR] [--rounds N] [--sizes 16x1000,16x5000]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
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


#: Stages of a report timed on their own (CPU s): label → (module, function) as the caller finds
#: it. Nested: the tables include reading samples.jsonl; the rest of the report is not listed.
STAGES = {"tables (reading samples.jsonl included)": ("harness.tables", "build"),
          "reading and checking samples.jsonl": ("harness.tables", "scan_samples"),
          "summary.csv's table": ("harness.tables", "_summary"),
          "statistics (estimates, differences, memory classes)": ("harness.stats", "compute"),
          "workload numbers": ("harness.pipeline", "compute_all"),
          "findings": ("harness.report.findings", "compute"),
          "writing the CSV tables": ("harness.tables", "write"),
          "report.html": ("harness.report.render", "render")}


@contextlib.contextmanager
def _timed_stages(into: dict[str, float]):
    """Within the block, each of :data:`STAGES` adds its CPU seconds to ``into[label]``."""
    saved = []
    for label, (mod_name, name) in STAGES.items():
        mod = importlib.import_module(mod_name)
        f = getattr(mod, name, None)
        if f is None:  # an older checkout without it
            continue

        def timed(*a, _f=f, _label=label, **k):
            c0 = time.process_time()
            try:
                return _f(*a, **k)
            finally:
                into[_label] = into.get(_label, 0.0) + time.process_time() - c0

        saved.append((mod, name, f))
        setattr(mod, name, timed)
    try:
        yield
    finally:
        for mod, name, f in saved:
            setattr(mod, name, f)


def time_report(run: Path, work: Path, repeats: int = REPEATS) -> dict:
    """Analyse ``run`` and write every file into ``work/<i>`` ``repeats`` times: wall and CPU
    seconds (min / median / max) of the whole report and of the analysis alone, the median CPU
    seconds of each of :data:`STAGES` (``stages_cpu_s``), and the findings."""
    wall, cpu, a_wall, a_cpu = [], [], [], []
    stages: list[dict[str, float]] = []
    findings: list[str] = []
    for i in range(repeats):
        out = work / str(i)
        stages.append({})
        with _timed_stages(stages[-1]):
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
            "analyse_cpu_s": _spread(a_cpu),
            "stages_cpu_s": {k: round(statistics.median(s.get(k, 0.0) for s in stages), 3) for k in stages[0]},
            "findings": findings, "steps_rows": int(len(a.tables.steps)), "memory_rows": int(len(a.tables.memory))}


#: Run in a fresh process by :func:`time_in`: ``time_report`` of argv[1] into argv[2], argv[3] times, as JSON.
_CHILD = ("import json, sys; from pathlib import Path; from benchmarks.report_time import time_report; "
          "print(json.dumps(time_report(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))))")


def time_in(source: Path, run: Path, work: Path, repeats: int = REPEATS) -> dict:
    """:func:`time_report` in a new process whose ``harness`` and ``benchmarks`` are those of the
    checkout ``source``. Raises RuntimeError with the child's last lines when it fails."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(source)
    r = subprocess.run([sys.executable, "-c", _CHILD, str(run), str(work), str(repeats)], capture_output=True,
                       text=True, env=env, cwd=source, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"report-time in {source} failed: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def compare(baseline: Path, sizes=SIZES, repeats: int = REPEATS, rounds: int = 1) -> dict:
    """Every size analysed by ``baseline`` and by this checkout, interleaved ``rounds`` times
    (see the module docstring). Returns the results, also written as benchmark.json."""
    d = out_dir("report-time")
    here = REPO_ROOT
    result: dict = {"benchmark": "report-time", "baseline": str(baseline), "repeats": repeats, "rounds": rounds,
                    "input": f"synthesised from real samples of {SOURCE.relative_to(REPO_ROOT)} "
                             "(benchmarks/report_size.py)", "cpus": os.cpu_count(),
                    "load_average_start": [round(x, 2) for x in os.getloadavg()], "sizes": {}}
    for label, first, copies, tokens in sizes:
        run = d / label
        synthesize(run, copies, tokens, first=first)
        runs: dict[str, list[dict]] = {"baseline": [], "current": []}
        for i in range(rounds):
            for name, source in (("baseline", baseline), ("current", here)):
                runs[name].append(time_in(source, run, d / f"{label}-{name}-{i}", repeats))
        med = {n: statistics.median(r["report_cpu_s"]["median"] for r in rs) for n, rs in runs.items()}
        result["sizes"][label] = {
            "baseline_report_cpu_s_medians": [r["report_cpu_s"]["median"] for r in runs["baseline"]],
            "current_report_cpu_s_medians": [r["report_cpu_s"]["median"] for r in runs["current"]],
            "current": runs["current"][-1], "baseline": {k: v for k, v in runs["baseline"][-1].items() if k != "findings"},
            "ratio_cpu_median": round(med["current"] / med["baseline"], 3),
            "same_findings": runs["current"][-1]["findings"] == runs["baseline"][-1]["findings"]}
        s = result["sizes"][label]
        print(f"{label}: report {med['current']:.2f} s CPU, baseline {med['baseline']:.2f} s: ratio "
              f"{s['ratio_cpu_median']:.2f}; same findings: {s['same_findings']}", flush=True)
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    (d / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(f"results: {d / 'benchmark.json'}")
    return result


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
    print(f"results: {d / 'benchmark.json'}")
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report_time")
    ap.add_argument("--baseline", type=Path, help="a checkout of an older commit to compare with")
    ap.add_argument("--rounds", type=int, default=1, help="baseline/current pairs per size (with --baseline)")
    ap.add_argument("--sizes", default=",".join(s[0] for s in SIZES), help="labels among " + ", ".join(s[0] for s in SIZES))
    a = ap.parse_args()
    chosen = [s for s in SIZES if s[0] in a.sizes.split(",")]
    if not chosen:
        ap.error(f"--sizes names none of {', '.join(s[0] for s in SIZES)}")
    if a.baseline is not None:
        compare(a.baseline.resolve(), chosen, rounds=a.rounds)
    else:
        main(chosen)
