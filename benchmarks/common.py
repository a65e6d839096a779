"""Helpers shared by benchmarks: build a plan, run it in-process, read its tables."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

from harness import pipeline
from harness.drive.runner import Runner
from harness.plan import RunPlan
from harness.workloads import discover

#: Benchmarks run from a clone: their results go to its reports/benchmarks/.
OUT = Path(__file__).resolve().parent.parent / "reports" / "benchmarks"


def plan(workload: str, variants: list[str], profile: str, tokens: int, **kw) -> RunPlan:
    wl = discover()[workload]
    return RunPlan(browsers=["chromium"], workloads=[wl], variants={workload: variants},
                   profiles={workload: profile}, tokens=tokens, **kw)


def with_probes_off(runner: Runner) -> None:
    """Append a copy of every cell with the worker's counters disabled (same browser session)."""
    extra = []
    for cell in runner.cells:
        c = copy.deepcopy(cell)
        c.cell = cell.cell + ".noprobes"
        c.params["probes"] = False
        extra.append(c)
    # interleave: probes on, off, on, off ... so drift hits both alike
    runner.cells = [c for pair in zip(runner.cells, extra) for c in pair]


def out_dir(name: str) -> Path:
    d = OUT / f"{datetime.now():%Y%m%d-%H%M%S}-{name}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def finish(run_dir: Path, result: dict) -> None:
    pipeline.analyse_and_write(run_dir)
    (run_dir / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
