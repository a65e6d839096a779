"""Numbers of the report section "onnxruntime-web (ort-decode)": the ort-decode cells side by
side per variant, with the bind group cache's hit rate over the second half of each cell
(steps.csv ``extra_bind_group_cache_hits/misses``; workloads/lib/bind-group-cache.js)."""

from __future__ import annotations

WORKLOAD = "ort-decode"


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [{cell, row, hit_rate (fraction or None)}]}`` or None without ort-decode cells."""
    s, st = tables.summary, tables.steps
    ort = s[s["workload"] == WORKLOAD]
    if not len(ort):
        return None
    rows = []
    for _, row in ort.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step") if len(st) else st
        rate = None
        if "extra_bind_group_cache_hits" in c and c["extra_bind_group_cache_hits"].notna().any():
            last = c[c["step"] >= c["step"].max() / 2]
            h, m = last["extra_bind_group_cache_hits"].sum(), last["extra_bind_group_cache_misses"].sum()
            rate = float(h / (h + m)) if h + m else None
        rows.append({"cell": row["cell"], "row": row.to_dict(), "hit_rate": rate})
    return {"rows": rows}
