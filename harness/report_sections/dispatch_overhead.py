"""Report section "Dispatch overhead": what one compute dispatch costs, per browser/backend and
method, its per-phase breakdown, and the decode-loop fusion experiment.

Data: ``dispatch-overhead`` cells (browser runs, and native wgpu cells written by
``webgpu-harness native`` / ``benchmarks/native_gpu.py``) and ``decode-loop`` cells with a fused
variant. Methods and their meaning: workloads/dispatch-overhead/bench.js; the numbers this
reproduces: the dispatch-overhead paper (arXiv 2604.02344, shared/references.md) — single-op
timing overestimates ~20× (~497 µs on Dawn, ~450 µs of it sync), sequential 24–36 µs per
dispatch on Vulkan, submit ~40% and encoder create+finish ~39% of it; fusion 876 → 564
dispatches per forward gave +53% tokens/s on an RTX 5090.

Statistics: round 0 of every cell is warm-up and left out when a cell has more rounds. A
method's µs per dispatch is the mean over rounds with a 95% Student-t interval
(``scipy.stats.t``); the overestimation factor is single-op ÷ sequential per round (the two
run in the same round, minutes apart at most), mean with a t interval. A CPU adapter
(SwiftShader, lavapipe/llvmpipe) runs the "GPU" work on the CPU: its absolute times are not GPU
times, and each row says which adapter it is.
"""

from __future__ import annotations

import html
import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from scipy import stats

from harness import report

#: Method configurations in table order (batched K values in between as they occur).
METHOD_ORDER = ["single-op", "sequential", "batched-1", "batched-16", "batched-64", "batched-all", "one-pass", "phases"]
#: Phase keys of the per-call timing (steps.csv ``extra_phase_<key>_us``) → label.
PHASES = {"create_command_encoder": "createCommandEncoder", "begin_compute_pass": "beginComputePass",
          "create_bind_group": "createBindGroup", "set_pipeline": "setPipeline",
          "set_bind_group": "setBindGroup", "dispatch_workgroups": "dispatchWorkgroups",
          "end": "end", "finish": "finish", "submit": "submit"}
CONFIDENCE = 0.95
CPU_ADAPTER_HINTS = ("swiftshader", "llvmpipe", "lavapipe", "(vulkan, cpu)", "(opengl, cpu)", "software")
#: Pairs (unfused variant, fused variant) of decode-loop compared in the fusion table.
FUSION_PAIRS = [("fresh", "fused"), ("reuse", "fused-reuse")]


def mean_ci(values) -> tuple[float | None, float | None, float | None, int]:
    """Mean and 95% Student-t interval of ``values`` (NaNs dropped): ``(mean, lo, hi, n)``.
    lo/hi are None with fewer than 2 values; zero spread gives lo = hi = mean; lo is clipped at 0
    (times and ratios are never negative; with few, skewed rounds the t interval can dip below)."""
    v = np.asarray([x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))], dtype=float)
    if not len(v):
        return None, None, None, 0
    m = float(v.mean())
    if len(v) < 2:
        return m, None, None, len(v)
    sem = float(stats.sem(v))
    if sem == 0:
        return m, m, m, len(v)
    lo, hi = stats.t.interval(CONFIDENCE, len(v) - 1, loc=m, scale=sem)
    return m, max(0.0, float(lo)), float(hi), len(v)  # every quantity here is ≥ 0


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


def _label(row, env) -> str:
    return f"{report.provenance(row)} · {adapter_class(row, env)} · bind groups {row.get('variant')}"


def _fmt(v, digits: int = 1) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:,.{digits}f}"


def _fmt_ci(m, lo, hi, n, digits: int = 1, unit: str = "") -> str:
    if m is None:
        return "—"
    if lo is None:
        return f"{_fmt(m, digits)}{unit} (n={n})"
    return f"{_fmt(m, digits)}{unit} [{_fmt(lo, digits)}, {_fmt(hi, digits)}] (n={n})"


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
    """One dict per dispatch-overhead cell: label, per-config (mean, lo, hi, n) µs per dispatch
    (wall, ``per``) and CPU µs per dispatch to the last submit's return (``cpu``), overestimation factor (mean, lo, hi, n), kernel-only (µs or n/a reason), timer facts."""
    s = tables.summary
    cells = s[(s["workload"] == "dispatch-overhead") & (s["status"] == "ok")]
    steps = tables.steps
    if not len(cells) or "extra_config" not in steps:
        return []
    steps = _measured(steps[steps["cell"].isin(cells["cell"])])
    if "extra_us_per_dispatch" not in steps:  # a run of sync methods only
        steps = steps.assign(extra_us_per_dispatch=np.nan)
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
        if "extra_kernel_us_per_dispatch" in st and st["extra_kernel_us_per_dispatch"].notna().any():
            k = mean_ci(st["extra_kernel_us_per_dispatch"])
            q = st["extra_kernel_quantum_us"].dropna() if "extra_kernel_quantum_us" in st else []
            kernel = _fmt_ci(*k, digits=2, unit=" µs") + (f"; timestamp step {q.min():.3g} µs" if len(q) else "")
        else:
            kernel = f"n/a: {kern.get('reason') or 'no timestamp-query steps in this cell'}"
        out.append({"cell": row["cell"], "label": _label(row, env), "per": per, "cpu": cpu, "configs": configs,
                    "factor": mean_ci(ratio.tolist()), "kernel": kernel, "row": row,
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
        out.append({"cell": row["cell"], "label": _label(row, tables.env.get(row["cell"], {})), "phases": phases,
                    "sum": total, "instrumented_us": mean_ci(st["extra_us_per_dispatch"])[0],
                    "sequential_us": mean_ci(seq)[0]})
    return out


def _short(row, env=None) -> str:
    return f"{row['browser']} · {row['variant']}<br>{adapter_class(row, env).split(' —')[0]}"


def phase_chart(phases: list[dict], tables) -> dict:
    """Stacked bar: µs per call of each phase per cell, plus the sequential method's µs per
    dispatch as a marker (the phases should add up to about it)."""
    fig = go.Figure()
    s = tables.summary.set_index("cell")
    xs = []
    for p in phases:
        x = _short(s.loc[p["cell"]], tables.env.get(p["cell"]))
        xs.append(x if x not in xs else f"{x} #{sum(1 for y in xs if y.startswith(x)) + 1}")
    for key, name in PHASES.items():
        fig.add_trace(go.Bar(x=xs, y=[p["phases"].get(key) or 0 for p in phases], name=name,
                             meta={"phase": key, "cells": [p["cell"] for p in phases],
                                   "labels": [p["label"] for p in phases]}))
    fig.add_trace(go.Scatter(x=xs, y=[p["sequential_us"] for p in phases], mode="markers", name="sequential method, µs per dispatch (wall, incl. sync)",
                             marker={"symbol": "diamond", "size": 11, "color": "black"}, meta={"phase": "sequential_total"}))
    fig.update_layout(barmode="stack", title="Per-phase CPU time of the sequential method (µs per call; mean over rounds after warm-up)",
                      yaxis_title="µs", template="plotly_white", legend={"orientation": "h", "y": -0.25}, margin={"t": 50})
    return json.loads(fig.to_json())


def method_chart(methods: list[dict]) -> dict:
    """Grouped bars: µs per dispatch per method and cell with 95% CI error bars (log y)."""
    fig = go.Figure()
    for m in methods:
        cfgs = [c for c in m["configs"] if m["per"].get(c, (None,))[0] is not None]
        ys = [m["per"][c][0] for c in cfgs]
        hi = [(m["per"][c][2] - m["per"][c][0]) if m["per"][c][2] is not None else 0 for c in cfgs]
        lo = [(m["per"][c][0] - m["per"][c][1]) if m["per"][c][1] is not None else 0 for c in cfgs]
        fig.add_trace(go.Bar(x=cfgs, y=ys, name=m["label"], meta={"cell": m["cell"]},
                             error_y={"type": "data", "array": hi, "arrayminus": lo, "visible": True}))
    fig.update_layout(barmode="group", title="µs per dispatch by method (mean, 95% CI)", yaxis_type="log",
                      yaxis_title="µs per dispatch", template="plotly_white", legend={"orientation": "h", "y": -0.3})
    return json.loads(fig.to_json())


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
            out.append({"label": f"{report.provenance(b)} · {adapter_class(b, tables.env.get(b['cell']))}",
                        "profile": b["profile"], "pair": f"{unf} → {fus}", "dispatches": (du, df_),
                        "ms": (mu, mf), "tps": (1000 / mu if mu else None, 1000 / mf if mf else None),
                        "speedup": (mu / mf) if mu and mf else None, "identical": f["tokens_identical"],
                        "cpu_ms": (cu, cf), "saved_us": saved, "saved_cpu_us": saved_cpu,
                        "measured_b16": per[0], "measured_seq": seq[0], "measured_cpu_b16": cpu16[0],
                        "cells": (b["cell"], f["cell"])})
    return out


def _table(headers: list[str], rows: list[list[str]]) -> str:
    cls = lambda i: ' class="l"' if i == 0 else ""  # noqa: E731  first column left-aligned
    th = "".join(f"<th{cls(i)}>{html.escape(h)}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


@report.section
def dispatch_overhead_section(tables):
    """The section dict (see harness.report.SECTIONS) or None when the run has no
    dispatch-overhead cells and no decode-loop fusion pair."""
    methods = method_table(tables)
    phases = phase_table(tables)
    fusion = fusion_rows(tables, methods)
    if not methods and not fusion:
        return None
    parts = ['<p class="note">Methods (workloads/dispatch-overhead): <b>single-op</b> = one dispatch, submit, full sync, '
             'repeated; <b>sequential</b> = N × (encoder, one dispatch, finish, submit), one sync, total ÷ N; '
             '<b>batched-K</b> = K dispatches per command buffer (one compute pass each; ORT batches 16); <b>one-pass</b> = '
             'N dispatches in one pass, one submit. Every figure is wall time from the first encode to the final sync '
             '÷ N, so it includes the queue finishing the (tiny) kernels. Round 0 is warm-up. Paper values for '
             'comparison (arXiv 2604.02344): single-op ~497 µs on Dawn, sequential 24–36 µs (Vulkan) / 32–71 µs '
             '(Metal), overestimation ~20×. Native rows (wgpu-py) include Python call overhead; browser rows include '
             'the harness probes\' wrappers. CPU-adapter rows are not GPU numbers.</p>']
    charts = {}
    if methods:
        configs = list(methods[0]["configs"])
        for m in methods[1:]:
            configs += [c for c in m["configs"] if c not in configs]
        headers = ["browser / backend · adapter · bind groups", "N"] + [f"{c} (µs/dispatch)" for c in configs] + [
            "overestimation single-op ÷ sequential", "kernel-only (timestamp queries, µs/dispatch)", "timer resolution (µs)",
            "cross-origin isolated"]
        rows = []
        for m in methods:
            rows.append([html.escape(m["label"]), _fmt(m["n"], 0)]
                        + [_fmt_ci(*m["per"].get(c, (None, None, None, 0))) for c in configs]
                        + [_fmt_ci(*m["factor"], digits=2, unit="×"), html.escape(m["kernel"]),
                           _fmt(m["timer_us"], 3), html.escape(str(m["isolated"]))])
        parts.append("<h3>µs per dispatch by method (mean [95% CI], rounds after warm-up)</h3>" + _table(headers, rows))
        charts["dispatch_methods"] = method_chart(methods)
    if phases:
        headers = ["browser / backend · adapter · bind groups"] + [f"{v} µs (share)" for v in PHASES.values()] + [
            "sum of phases (µs)", "instrumented run (µs/dispatch)", "plain sequential (µs/dispatch)"]
        rows = []
        for p in phases:
            cells = []
            for k in PHASES:
                v = p["phases"].get(k)
                cells.append("—" if v is None else f"{v:.2f} ({100 * v / p['sum']:.0f}%)" if p["sum"] else f"{v:.2f}")
            rows.append([html.escape(p["label"])] + cells + [_fmt(p["sum"], 2), _fmt(p["instrumented_us"]), _fmt(p["sequential_us"])])
        parts.append("<h3>Per-phase breakdown of the sequential method (µs per call, performance.now() deltas "
                     "averaged over N calls × rounds; a floored clock's deltas average to the true duration)</h3>"
                     + _table(headers, rows))
        charts["dispatch_phases"] = phase_chart(phases, tables)
    if fusion:
        headers = ["browser · adapter", "profile", "variants", "dispatches / token", "median ms / token",
                   "tokens / s", "speedup", "tokens identical", "implied µs saved per removed dispatch (wall)",
                   "measured µs per dispatch (same browser, batched-16 / sequential, wall)",
                   "median CPU ms / token (to last submit)", "implied CPU µs saved per removed dispatch",
                   "measured CPU µs per dispatch (batched-16)"]
        rows = []
        for f in fusion:
            rows.append([html.escape(f["label"]), html.escape(str(f["profile"])), f["pair"],
                         f"{_fmt(f['dispatches'][0], 0)} → {_fmt(f['dispatches'][1], 0)}",
                         f"{_fmt(f['ms'][0], 2)} → {_fmt(f['ms'][1], 2)}",
                         f"{_fmt(f['tps'][0], 1)} → {_fmt(f['tps'][1], 1)}",
                         _fmt(f["speedup"], 2) + "×" if f["speedup"] else "—", html.escape(str(f["identical"])),
                         _fmt(f["saved_us"]), f"{_fmt(f['measured_b16'])} / {_fmt(f['measured_seq'])}",
                         f"{_fmt(f['cpu_ms'][0], 2)} → {_fmt(f['cpu_ms'][1], 2)}", _fmt(f["saved_cpu_us"]),
                         _fmt(f["measured_cpu_b16"])])
        parts.append("<h3>Fusion experiment (decode-loop: unfused graph vs <code>fused</code>, same run)</h3>"
                     '<p class="note">The fused graph computes the same tokens with bit-identical logits (same '
                     'expressions and summation order; "tokens identical" compares tokens and logits hashes). Implied '
                     'saving = (ms/token unfused − fused) ÷ (dispatches removed); compare it with the measured cost '
                     'of one dispatch. The CPU columns take the time from the token\'s start to its last submit '
                     '(encode + submit on the page\'s side), which excludes the kernels. On a CPU adapter the kernels themselves run on the CPU, and the fused norm '
                     'kernels redo the RMS reduction per output row, so kernel time can eat the saving. Paper: 876 → '
                     '564 dispatches, +53% tokens/s (RTX 5090, Dawn, Vulkan).</p>' + _table(headers, rows))
    return {"id": "dispatch-overhead", "title": "Dispatch overhead", "html": "\n".join(parts), "charts": charts}
