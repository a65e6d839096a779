"""Delivery under load (issue 19, item 4): how late a step's sample reaches samples.jsonl when
the harness gets the CPU share of one of ~15 runnable tasks on 2 cores.

Each repetition is a decode-loop run (``fresh``, ``tiny``, Chromium) of ``tokens`` steps under
benchmarks/load.py ``contended``: once the browser is up, the harness (this process and its
sample server, harness/serve/collector.py) shares one CPU with ``hogs`` busy loops (6: the share
of one of ~14 runnable tasks on 2 cores), while the browser keeps every CPU. Per repetition:
post lag p50/p99/max (benchmarks/soak.py ``delivery``: arrival on the harness clock less the
worker's step time, above the fastest of its sender), requests, steps per second (the decode's
own pace, which the harness's requests must not slow), and the machine's 1-minute load average
(others add to it: a shared machine). The pooled p99 is over every step of every repetition.

    .venv/bin/python -m benchmarks delivery          # 3 × 2,000 steps, 6 busy loops
"""

from __future__ import annotations

import json

import numpy as np

from benchmarks.common import out_dir, plan
from benchmarks.load import contended
from benchmarks.soak import delivery
from harness.drive.runner import Runner


def one(tokens: int, hogs: int) -> tuple[dict, np.ndarray]:
    """One loaded run: its numbers and every step's post lag (ms, above the fastest)."""
    run_dir = out_dir("delivery")
    held: dict = {}

    def progress(event, cell, info):
        if event == "start" and "pin" in held:  # the browser is up: it keeps every CPU
            held["pin"]()

    runner = Runner(plan("decode-loop", ["fresh"], "tiny", tokens, params={"max_tokens": tokens},
                         workload_params={"decode-loop": {"max_tokens": tokens}}), run_dir, progress=progress)
    with contended(hogs) as load:
        held.update(load)
        cells = runner.run()
    lags: dict[str, list[float]] = {}
    first = last = None
    with (run_dir / "samples.jsonl").open() as fh:
        for line in fh:
            s = json.loads(line)
            if s["kind"] == "step":
                lags.setdefault(s["src"], []).append(s["received_s"] * 1000 - s["t_ms"])
                first = s["received_s"] if first is None else first
                last = s["received_s"]
    rel = np.concatenate([np.asarray(v) - min(v) for v in lags.values()]) if lags else np.array([0.0])
    d = delivery(run_dir)
    out = {"status": cells[0].status, "steps": d["step_samples"], "post_lag_ms_p50": round(d["post_lag_ms_p50"], 1),
           "post_lag_ms_p99": round(d["post_lag_ms_p99"], 1), "post_lag_ms_max": round(d["post_lag_ms_max"], 1),
           "requests": d["step_batches"], "steps_per_s": round(d["step_samples"] / max(1e-9, (last or 0) - (first or 0)), 1),
           "gaps": d["gaps"], "refused": d["refused"], "load": load, "run_dir": str(run_dir)}
    return out, rel


def main(tokens: int = 2000, reps: int = 3, hogs: int = 6) -> dict:
    runs, pooled = [], []
    for _ in range(reps):
        r, rel = one(tokens, hogs)
        runs.append(r)
        pooled.append(rel)
        print(json.dumps(r), flush=True)
    allrel = np.concatenate(pooled)
    result = {"benchmark": "delivery", "tokens": tokens, "repetitions": reps, "hogs": hogs,
              "post_lag_ms_p50": round(float(np.percentile(allrel, 50)), 1),
              "post_lag_ms_p99": round(float(np.percentile(allrel, 99)), 1),
              "post_lag_ms_p99_per_run": [r["post_lag_ms_p99"] for r in runs], "runs": runs}
    print(json.dumps(result, indent=2))
    return result
