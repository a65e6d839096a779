"""Numbers of the report section "Buffers created, by usage and label": which buffers an engine
creates on every steady step (web/probes/counters.js ``takeCreatedBuffers``; buffers.csv).

Per cell: the buffers created in the warm-up steps (token 0 builds weights, pipelines and
caches), and for the steps after it, per (label, usage) group, the buffers and bytes per step and
in how many of those steps the group appeared. A steady engine creates nothing after warm-up;
one that creates buffers every token shows here which ones (its labels, where it sets them, and
its usage flags). Markup: reports/templates/buffers.j2.
"""

from __future__ import annotations

import pandas as pd

#: Most groups listed per cell (largest bytes per step first); the rest are summed into one line.
MAX_ROWS = 12


def cell_groups(buffers: pd.DataFrame, steps_after: int, warmup: int = 1, max_rows: int = MAX_ROWS) -> dict:
    """One cell's buffers.csv rows → ``{warmup: {buffers, bytes}, steady_steps, groups: [{label,
    usage_flags, buffers_per_step, bytes_per_step, steps_with}], more: {groups, buffers_per_step,
    bytes_per_step} | None}``. ``steps_after``: the cell's steps after the warm-up (the divisor:
    a group seen in some steps only counts 0 in the others)."""
    warm = buffers[buffers["step"] < warmup]
    steady = buffers[buffers["step"] >= warmup]
    out = {"warmup": {"buffers": int(warm["buffers"].sum()), "bytes": int(warm["bytes"].sum())},
           "steady_steps": steps_after, "groups": [], "more": None}
    if not len(steady) or not steps_after:
        return out
    g = (steady.groupby(["label", "usage_flags"], dropna=False, sort=False)
         .agg(buffers=("buffers", "sum"), bytes=("bytes", "sum"), steps_with=("step", "nunique"))
         .reset_index().sort_values(["bytes", "buffers"], ascending=False))
    rows = [{"label": r["label"] if isinstance(r["label"], str) else "", "usage_flags": r["usage_flags"] or "",
             "buffers_per_step": r["buffers"] / steps_after, "bytes_per_step": r["bytes"] / steps_after,
             "steps_with": int(r["steps_with"])} for _, r in g.iterrows()]
    out["groups"] = rows[:max_rows]
    if len(rows) > max_rows:
        rest = rows[max_rows:]
        out["more"] = {"groups": len(rest), "buffers_per_step": sum(r["buffers_per_step"] for r in rest),
                       "bytes_per_step": sum(r["bytes_per_step"] for r in rest)}
    return out


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [{cell, row, warmup, steady_steps, groups, more}], "warmup": N}`` for the cells
    with buffers.csv rows, or None (no cell created buffers, or a run older than the probe)."""
    b = getattr(tables, "buffers", None)
    if b is None or not len(b):
        return None
    warmup = getattr(run, "warmup", 1) if run is not None else 1
    s, st = tables.summary, tables.steps
    rows = []
    for _, row in s.iterrows():
        cb = b[b["cell"] == row["cell"]]
        if not len(cb):
            continue
        n_after = int((st[st["cell"] == row["cell"]]["step"] >= warmup).sum()) if len(st) else 0
        rows.append({"cell": row["cell"], "row": row.to_dict(), **cell_groups(cb, n_after, warmup)})
    return {"rows": rows, "warmup": warmup} if rows else None
