"""Each workload's summary.csv columns in its own terms (after the columns every cell has):
what one step is, and the figures a workload names its result by (µs per dispatch per method,
ms per run and time to first result, ms per upload per size, ms per page load).
harness/tables.py puts them on each cell's summary row."""

from __future__ import annotations

import pandas as pd


#: What one step of each workload is (summary.csv ``step_unit``; default ``token``).
STEP_UNITS = {"dispatch-overhead": "method × round", "ort-run": "session.run (create and release too)",
              "upload": "upload", "lifecycle": "page load", "app": "app step (--step-on)"}
#: Dispatch-overhead methods in table order (workloads/dispatch-overhead/main.js configurations).
DISPATCH_METHODS = ["single-op", "sequential", "batched-1", "batched-16", "batched-64", "batched-all", "one-pass",
                    "phases"]


def after_first_round(steps: pd.DataFrame) -> pd.DataFrame:
    """One cell's steps of rounds ≥ 1 (``extra_round``) when it has them, else all of them: round 0
    of a workload that repeats every configuration per round (upload's sizes, dispatch-overhead's
    methods) is its warm-up, as token 0 is a decoder's."""
    if "extra_round" in steps and (steps["extra_round"] >= 1).any():
        return steps[steps["extra_round"] >= 1]
    return steps


def own_terms(workload: str | None, s: pd.DataFrame) -> dict:
    """One cell's summary in its workload's own terms (summary.csv columns after the common ones):
    ``step_unit``; dispatch-overhead: ``us_per_dispatch_<method>`` (mean over rounds after round 0)
    and ``kernel_us_per_dispatch``; ort-run: ``runs``, ``median_ms_per_run`` (steady runs),
    ``time_to_first_result_ms``, ``cycles``; upload: ``uploads``, ``median_ms_per_upload``,
    ``buffers_created_per_upload`` (all over every size) and ``median_ms_per_upload_<size bytes>`` (rounds
    after round 0: :func:`after_first_round`); lifecycle: ``page_loads``, ``median_ms_per_page_load``.
    ort-run's ``time_to_first_result_ms`` is cycle 0's (from its create step's start to its first
    outputs read back), ``cycles`` its session cycles: every cycle's figures are in cycles.csv."""
    out: dict = {"step_unit": STEP_UNITS.get(workload or "", "token")}
    if not len(s):
        return out
    if workload == "dispatch-overhead" and "extra_config" in s:
        m = s[s["extra_round"] >= 1] if "extra_round" in s and (s["extra_round"] >= 1).any() else s
        if "extra_us_per_dispatch" in m:
            per = m.dropna(subset=["extra_us_per_dispatch"]).groupby("extra_config")["extra_us_per_dispatch"].mean()
            for cfg in [c for c in DISPATCH_METHODS if c in per.index] + sorted(c for c in per.index if c not in DISPATCH_METHODS):
                out[f"us_per_dispatch_{cfg}"] = round(float(per[cfg]), 3)
        if "extra_kernel_us_per_dispatch" in m and m["extra_kernel_us_per_dispatch"].notna().any():
            out["kernel_us_per_dispatch"] = round(float(m["extra_kernel_us_per_dispatch"].mean()), 4)
    elif workload == "ort-run" and "extra_phase" in s:
        runs = s[s["extra_phase"].isin(["first-run", "steady"])]
        steady = s[s["extra_phase"] == "steady"]["wall_ms"].dropna()
        first = s[s["extra_phase"] == "first-run"]
        # from the start of cycle 0's create step to its first outputs read back (the workload's own
        # figure); older runs without it: the first run's wall ms
        ttfr = (first["extra_time_to_first_result_ms"].dropna() if "extra_time_to_first_result_ms" in first
                else pd.Series(dtype=float))
        ttfr = ttfr if len(ttfr) else first["wall_ms"].dropna()
        out.update(runs=int(len(runs)), median_ms_per_run=float(steady.median()) if len(steady) else None,
                   time_to_first_result_ms=float(ttfr.iloc[0]) if len(ttfr) else None,
                   cycles=int(s["extra_cycle"].nunique()) if "extra_cycle" in s else None)
    elif workload == "upload":
        out.update(uploads=int(len(s)), median_ms_per_upload=float(s["wall_ms"].median()),
                   buffers_created_per_upload=float(s["create_buffer"].median()) if s["create_buffer"].notna().any() else None)
        if "extra_size_bytes" in s:
            for size, g in after_first_round(s).groupby("extra_size_bytes"):
                out[f"median_ms_per_upload_{int(size)}"] = float(g["wall_ms"].median())
    elif workload == "lifecycle":
        out.update(page_loads=int(len(s)), median_ms_per_page_load=float(s["wall_ms"].median()))
    return out
