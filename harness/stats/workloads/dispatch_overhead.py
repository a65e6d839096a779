"""Numbers of the "Dispatch overhead" report section: what one compute dispatch costs, per
browser/backend and method, its per-phase breakdown, and the decode-loop fusion experiment.
(Markup: reports/templates/dispatch_overhead.j2; charts: harness/report/charts.py.)

Data: ``dispatch-overhead`` cells (browser runs, and native wgpu cells written by
``webgpu-harness native`` / ``benchmarks/native_gpu.py``) and ``decode-loop`` cells with a fused
variant. Methods and their meaning: workloads/dispatch-overhead/bench.js; the numbers this
reproduces: the dispatch-overhead paper (arXiv 2604.02344, shared/references.md) — single-op
timing overestimates ~20× (~497 µs on Dawn, ~450 µs of it sync), sequential 24–36 µs per
dispatch on Vulkan, submit ~40% and encoder create+finish ~39% of it; fusion 876 → 564
dispatches per forward gave +53% tokens/s on an RTX 5090.

Statistics: round 0 of every cell is warm-up and left out when a cell has more rounds. A
method's µs per dispatch is the mean over rounds with a 95% Student-t interval
(:func:`harness.stats.estimators.mean_t_ci`); the overestimation factor is single-op ÷ sequential per round (the two
run in the same round, minutes apart at most), mean with a t interval. A CPU adapter
(SwiftShader, lavapipe/llvmpipe) runs the "GPU" work on the CPU: its absolute times are not GPU
times, and each row says which adapter it is.
"""

from __future__ import annotations

import pandas as pd

from harness.stats.estimators import mean_t_ci

#: Method configurations in table order (batched K values in between as they occur).
METHOD_ORDER = ["single-op", "sequential", "batched-1", "batched-16", "batched-64", "batched-all", "one-pass", "phases"]
#: Phase keys of the per-call timing (steps.csv ``extra_phase_<key>_us``) → label.
PHASES = {"create_command_encoder": "createCommandEncoder", "begin_compute_pass": "beginComputePass",
          "create_bind_group": "createBindGroup", "set_pipeline": "setPipeline",
          "set_bind_group": "setBindGroup", "dispatch_workgroups": "dispatchWorkgroups",
          "end": "end", "finish": "finish", "submit": "submit"}
CPU_ADAPTER_HINTS = ("swiftshader", "llvmpipe", "lavapipe", "(vulkan, cpu)", "(opengl, cpu)", "software")
#: Pairs (unfused variant, fused variant) of decode-loop compared in the fusion table.
FUSION_PAIRS = [("fresh", "fused"), ("reuse", "fused-reuse")]


def adapter_class(row, env: dict | None) -> str:
    """``"CPU adapter (SwiftShader)"``-style label, or ``"GPU"`` — from the adapter string and the
    env sample (``is_fallback_adapter``, wgpu-native's ``adapter_type``)."""
    a = (env or {}).get("adapter") or {}
    text = f"{row.get('adapter') or ''} {a.get('vendor', '')} {a.get('architecture', '')} {a.get('device', '')}".lower()
    for hint, name in (("swiftshader", "SwiftShader"), ("llvmpipe", "lavapipe/llvmpipe"), ("lavapipe", "lavapipe/llvmpipe")):
        if hint in text:
            return f"CPU adapter ({name}) — not GPU times"
    if a.get("adapter_type") == "CPU" or a.get("is_fallback_adapter") or any(h in text for h in CPU_ADAPTER_HINTS):
        return "CPU adapter — not GPU times"
    if not row.get("adapter"):
        return "no adapter"
    return "GPU"


def _measured(steps: pd.DataFrame) -> pd.DataFrame:
    """Steps after warm-up: rounds ≥ 1 where the cell has them."""
    if not len(steps) or "extra_round" not in steps:
        return steps
    keep = []
    for _, g in steps.groupby("cell"):
        keep.append(g[g["extra_round"] >= 1] if g["extra_round"].max() >= 1 else g)
    return pd.concat(keep) if keep else steps


def _configs(steps: pd.DataFrame) -> list[str]:
    # kernel-only and the sync-latency methods (sync-*) have no per-dispatch wall figure
    present = [c for c in steps["extra_config"].dropna().unique() if c != "kernel" and not str(c).startswith("sync-")]
    return [c for c in METHOD_ORDER if c in present] + sorted(c for c in present if c not in METHOD_ORDER)


def method_table(tables) -> list[dict]:
    """One dict per dispatch-overhead cell: its summary ``row``, ``adapter_class``, per-config (mean, lo, hi, n) µs per dispatch
    (wall, ``per``) and CPU µs per dispatch to the last submit's return (``cpu``), overestimation factor (mean, lo, hi, n), ``kernel`` (``us``: (mean, lo, hi, n) or
    None, ``quantum_us``, ``reason`` when n/a), timer facts."""
    s = tables.summary
    cells = s[(s["workload"] == "dispatch-overhead") & (s["status"] == "ok")]
    steps = tables.steps
    if not len(cells) or "extra_config" not in steps:
        return []
    steps = _measured(steps[steps["cell"].isin(cells["cell"])])
    if "extra_us_per_dispatch" not in steps:  # a run of sync methods only
        steps = steps.assign(extra_us_per_dispatch=float("nan"))
    configs = _configs(steps)
    out = []
    for _, row in cells.iterrows():
        env = tables.env.get(row["cell"], {})
        st = steps[steps["cell"] == row["cell"]]
        per = {c: mean_ci(st.loc[st["extra_config"] == c, "extra_us_per_dispatch"]) for c in configs}
        cpu = ({c: mean_ci(st.loc[st["extra_config"] == c, "extra_cpu_us_per_dispatch"]) for c in configs}
               if "extra_cpu_us_per_dispatch" in st else {})
        single = st[st["extra_config"] == "single-op"].set_index("extra_round")["extra_us_per_dispatch"]
        seq = st[st["extra_config"] == "sequential"].set_index("extra_round")["extra_us_per_dispatch"]
        ratio = (single / seq).dropna()
        kern = tables.results.get(row["cell"], {}).get("kernel_only") or {}
        kernel = {"us": None, "quantum_us": None, "reason": kern.get("reason") or "no timestamp-query steps in this cell"}
        if "extra_kernel_us_per_dispatch" in st and st["extra_kernel_us_per_dispatch"].notna().any():
            q = st["extra_kernel_quantum_us"].dropna() if "extra_kernel_quantum_us" in st else []
            kernel = {"us": mean_ci(st["extra_kernel_us_per_dispatch"]), "quantum_us": float(q.min()) if len(q) else None,
                      "reason": ""}
        out.append({"cell": row["cell"], "adapter_class": adapter_class(row, env), "per": per, "cpu": cpu, "configs": configs,
                    "factor": mean_ci(ratio.tolist()), "kernel": kernel, "row": row.to_dict(),
                    "timer_us": env.get("timer_resolution_us"), "isolated": env.get("cross_origin_isolated"),
                    "n": int(st["extra_n"].dropna().iloc[0]) if "extra_n" in st and st["extra_n"].notna().any() else None})
    return out


def phase_table(tables) -> list[dict]:
    """Per dispatch-overhead cell: mean µs per call of each phase (rounds after warm-up), their
    sum, and the instrumented and plain sequential µs per dispatch."""
    s = tables.summary
    cells = s[(s["workload"] == "dispatch-overhead") & (s["status"] == "ok")]
    steps = tables.steps
    if not len(cells) or "extra_config" not in steps:
        return []
    steps = _measured(steps[steps["cell"].isin(cells["cell"])])
    out = []
    for _, row in cells.iterrows():
        st = steps[(steps["cell"] == row["cell"]) & (steps["extra_config"] == "phases")]
        if not len(st):
            continue
        phases = {k: mean_ci(st[f"extra_phase_{k}_us"])[0] if f"extra_phase_{k}_us" in st else None for k in PHASES}
        total = sum(v for v in phases.values() if v)
        seq = steps[(steps["cell"] == row["cell"]) & (steps["extra_config"] == "sequential")]["extra_us_per_dispatch"]
        out.append({"cell": row["cell"], "adapter_class": adapter_class(row, tables.env.get(row["cell"], {})),
                    "row": row.to_dict(), "phases": phases,
                    "sum": total, "instrumented_us": mean_ci(st["extra_us_per_dispatch"])[0],
                    "sequential_us": mean_ci(seq)[0]})
    return out


def fusion_rows(tables, methods: list[dict]) -> list[dict]:
    """decode-loop unfused vs fused pairs of the same browser × profile × repetition: dispatches
    per token, median ms per token, tokens/s, tokens identical, implied µs saved per removed
    dispatch, and the measured per-dispatch cost of the same browser (batched-16 = ORT's batching,
    with the bind-group mode that matches)."""
    s = tables.summary
    d = s[(s["workload"] == "decode-loop") & (s["status"] == "ok")]
    out = []
    for (unf, fus) in FUSION_PAIRS:
        for _, f in d[d["variant"] == fus].iterrows():
            base = d[(d["variant"] == unf) & (d["browser"] == f["browser"]) & (d["repetition"] == f["repetition"])
                     & (d["profile"].fillna("") == (f["profile"] or ""))]
            if not len(base):
                continue
            b = base.iloc[0]
            du, df_ = b["dispatches_per_token"], f["dispatches_per_token"]
            mu, mf = b["median_ms_per_token"], f["median_ms_per_token"]
            cu, cf = b.get("median_cpu_ms_per_token"), f.get("median_cpu_ms_per_token")
            removed = du - df_ if du and df_ is not None and du > df_ else None
            saved = (mu - mf) * 1000 / removed if removed and mu and mf else None
            saved_cpu = (cu - cf) * 1000 / removed if removed and pd.notna(cu) and pd.notna(cf) else None
            mode = "fresh" if unf == "fresh" else "reused"
            measured = [m for m in methods if m["row"]["browser"] == b["browser"] and m["row"]["variant"] == mode]
            per = measured[0]["per"].get("batched-16", (None,)) if measured else (None,)
            seq = measured[0]["per"].get("sequential", (None,)) if measured else (None,)
            cpu16 = measured[0]["cpu"].get("batched-16", (None,)) if measured else (None,)
            out.append({"row": b.to_dict(), "adapter_class": adapter_class(b, tables.env.get(b["cell"])),
                        "profile": b["profile"], "pair": f"{unf} → {fus}", "dispatches": (du, df_),
                        "ms": (mu, mf), "tps": (1000 / mu if mu else None, 1000 / mf if mf else None),
                        "speedup": (mu / mf) if mu and mf else None, "identical": f["tokens_identical"],
                        "cpu_ms": (cu, cf), "saved_us": saved, "saved_cpu_us": saved_cpu,
                        "measured_b16": per[0], "measured_seq": seq[0], "measured_cpu_b16": cpu16[0],
                        "cells": (b["cell"], f["cell"])})
    return out


def mean_ci(values) -> tuple[float | None, float | None, float | None, int]:
    """(mean, lo, hi, n) of µs or ratios over rounds: :func:`harness.stats.estimators.mean_t_ci`
    with the low bound clipped at 0 (every quantity here is ≥ 0)."""
    return mean_t_ci(values, floor=0.0)


def numbers(tables, run=None) -> dict | None:
    """The section's numbers: ``methods`` (:func:`method_table`), ``phases``
    (:func:`phase_table`) and ``fusion`` (:func:`fusion_rows`); None when the run has no
    dispatch-overhead cell and no decode-loop fusion pair."""
    methods = method_table(tables)
    fusion = fusion_rows(tables, methods)
    if not methods and not fusion:
        return None
    configs: list[str] = []
    for m in methods:
        configs += [c for c in m["configs"] if c not in configs]
    return {"methods": methods, "configs": configs, "phases": phase_table(tables), "phase_names": PHASES,
            "fusion": fusion}
