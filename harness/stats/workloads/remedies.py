"""Numbers of the report section "Remedies side by side (decode-loop)": what each way of not
creating a bind group per dispatch costs per token — fresh (what onnxruntime's WebGPU EP does),
reuse (bind groups cached, one uniform buffer per node), dynamic-offset (one shared uniform buffer
at dynamic offsets, one bind group per node), immediates (parameters through setImmediates, no
uniform buffer) and bind-group-cache (workloads/lib/bind-group-cache.js in front of
createBindGroup) — from steps.csv: bind groups, uniform buffers, writeBuffer and setImmediates
bytes, setBindGroup calls with dynamic offsets, submits and time per token (medians over the
tokens after the warm-up; time on SwiftShader is CPU time, not GPU time). Rows are grouped by
browser, profile and parameters, so only cells that ran the same graph stand side by side.
Markup: reports/templates/remedies.j2.
"""

from __future__ import annotations

import pandas as pd

WORKLOAD = "decode-loop"
#: Variants in the order the section shows them (others after, as they come).
ORDER = ["fresh", "reuse", "dynamic-offset", "immediates", "bind-group-cache", "fused", "fused-reuse"]
#: (key, steps.csv column, reducer): medians over tokens after the warm-up, or the last value.
COLUMNS = [
    ("bind_groups", "create_bind_group", "median"),
    ("bind_groups_first", "create_bind_group", "first"),
    ("uniform_buffers", "extra_uniform_buffers", "last"),
    ("uniform_bytes_created", "create_buffer_bytes_uniform", "median"),
    ("write_buffer", "write_buffer", "median"),
    ("write_buffer_bytes", "write_buffer_bytes", "median"),
    ("set_immediates_bytes", "set_immediates_bytes", "median"),
    ("set_bind_group", "set_bind_group", "median"),
    ("dynamic_offsets", "set_bind_group_dynamic_offsets", "median"),
    ("submits", "submit", "median"),
    ("dispatches", "dispatch_workgroups", "median"),
    ("ms", "wall_ms", "median"),
    ("cpu_ms", "cpu_ms", "median"),
    ("bind_groups_held", "extra_bind_group_cache_size", "last"),
    ("live_bind_groups_end", "bind_groups_live", "last"),
]


def cell_row(steps: pd.DataFrame, warmup: int = 1) -> dict:
    """One decode-loop cell's steps (ordered by step) → the section's numbers (None where a
    column is absent or empty) and ``tokens`` (steps after the warm-up)."""
    after = steps[steps["step"] >= warmup]
    out: dict = {"tokens": len(after)}
    for key, col, how in COLUMNS:
        src = steps if how in ("first", "last") else after
        vals = src[col].dropna() if col in src else pd.Series(dtype=float)
        if not len(vals):
            out[key] = None
        elif how == "first":
            out[key] = float(vals.iloc[0])
        elif how == "last":
            out[key] = float(vals.iloc[-1])
        else:
            out[key] = float(vals.median())
    return out


def _group(row: pd.Series, params: dict) -> str:
    keep = {k: v for k, v in (params or {}).items() if k not in ("variant", "tokens")}
    extra = ", ".join(f"{k}={v}" for k, v in sorted(keep.items()))
    return f"{row['browser']} · {row['profile']}" + (f" · {extra}" if extra else "")


def numbers(tables, run=None) -> dict | None:
    """``{"groups": [{"label", "rows": [{cell, variant, row (summary row), tokens, <COLUMNS keys>}]}],
    "warmup": N}`` for the decode-loop cells of the run (ok or not), or None without any."""
    s, st = tables.summary, tables.steps
    cells = s[s["workload"] == WORKLOAD]
    if not len(cells):
        return None
    warmup = getattr(run, "warmup", 1) if run is not None else 1
    manifest_cells = {c["cell"]: c for c in tables.manifest.get("cells", [])}
    params = (tables.manifest.get("parameters") or {}).get("params") or {}
    groups: dict[str, list] = {}
    for _, row in cells.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step") if len(st) else st
        cell_params = {**params, **(manifest_cells.get(row["cell"], {}).get("sweep") or {})}
        label = _group(row, cell_params) + (f" · rep {row['repetition']}" if row.get("repetition") else "")
        groups.setdefault(label, []).append({"cell": row["cell"], "variant": row["variant"], "row": row.to_dict(),
                                             **cell_row(c, warmup)})
    rank = {v: i for i, v in enumerate(ORDER)}
    out = [{"label": k, "rows": sorted(v, key=lambda r: rank.get(r["variant"], len(ORDER)))} for k, v in groups.items()]
    return {"groups": out, "warmup": warmup}
