"""Numbers of the report sections "Bind group retention per engine" and "onnxruntime-web".

Retention: per cell, live GPUBindGroup wrappers over tokens, collection events (steps in which
the engine's GC collected bind groups — the sudden drops; :func:`harness.stats.memory.collections`,
the one place GC events come from), modeled native memory of live bind
groups under emulated WebGPU, measured content-process RSS, and the token at which
``--memory-budget`` would have been exceeded, and (emulated) the token at which the modeled
bytes would reach that budget if they keep growing as classified (harness/stats/memory.py). The onnxruntime field report's Safari figures
(:data:`FIELD_REPORT`; references.md: microsoft/onnxruntime #33750) are shown beside ours,
labelled as reported there, never as measured here.

onnxruntime-web: the ``ort-decode`` cells side by side per variant, with the bind group cache's
per-token hit rate. (Markup: reports/templates/retention.j2, onnxruntime.j2.)
"""

from __future__ import annotations

import pandas as pd

from harness.memory_budget import budget_reading
from harness.stats.floors import MIN_FLOORS
from harness.stats.memory import budgeted, collections, memory_of, projection
from harness.tables import CONTENT_PROCESS_TYPES

#: What the onnxruntime field report saw in Safari (references.md). Reported, not measured here.
FIELD_REPORT = {
    "source": "onnxruntime field report (microsoft/onnxruntime #33750): Safari, iPhone 16 Pro Max, iOS 27.2, "
              "Transformers.js 4.3.2 + onnxruntime-web 1.31.0-dev.20260914, 1.7B q4f16 model, graph capture off",
    "bind_groups_per_token": 317,
    "live_at_kill": 150_000,
    "kill_bytes": 2_048 * 10**6,
    "kill_mb": 2_048,
    "live_with_forced_gc": (250, 7_000),
    "forced_gc_every": 16,
    "forced_gc_mb": 32,
}


def content_rss_by_token(tables, cell: str) -> pd.Series:
    """The largest content-process RSS sampled while each token was the last reached (bytes,
    indexed by token) for ``cell``."""
    m = tables.memory
    m = m[(m["cell"] == cell) & (m["source"] == "psutil") & m["process_type"].isin(CONTENT_PROCESS_TYPES)]
    if not len(m):
        return pd.Series(dtype=float)
    return m.dropna(subset=["token"]).groupby("token")["rss_bytes"].max()


def modeled_projection(cell, budget: float | None, warmup: int = 1) -> dict | None:
    """The modeled native bytes of ``cell`` (a :class:`harness.stats.cells.CellData`) projected to
    ``budget`` (``--memory-budget``) by its class (:func:`harness.stats.memory.projection`: the
    floor slope of retained growth from 3 floors or more, none otherwise), with ``kind``; None when the cell has no modeled bytes."""
    mc = memory_of(cell, warmup).classes.get("modeled_native_bytes") if cell is not None else None
    if mc is None:
        return None
    return {**projection(mc, budget), "kind": mc.kind}


def budget_projection(cell, row: dict, warmup: int = 1) -> dict | None:
    """The one projection of ``--memory-budget`` (findings and the retention table print it): the
    quantity the budget counts (summary.csv ``memory_budget_counted_bytes_last``: content-process
    RSS plus modeled native bytes, harness/memory_budget.py) from its value at the cell's last
    token, at the summed floor slopes of its parts that keep growing (retained growth, from at
    least :data:`harness.stats.floors.MIN_FLOORS` floors each; flat or bounded parts add 0).
    Returns ``{"token", "tokens", "slope", "basis", "floors", "cell", "series", "why"}``:
    ``token`` the token it would pass the budget near (None, with ``why``, where the data cannot
    carry a projection: a part with too few samples, or growing with fewer than 3 floors);
    ``basis`` ``modeled``, ``measured`` or ``modeled and measured``; ``floors`` the fewest floors
    behind a slope used. None without a budget, or when the budget was already passed."""
    budget, start = row.get("memory_budget_bytes"), row.get("memory_budget_counted_bytes_last")
    if cell is None or budget is None or pd.isna(budget) or not budget or pd.notna(row.get("would_be_killed_at_token")):
        return None
    out = {"token": None, "tokens": None, "slope": None, "basis": None, "floors": None, "cell": row["cell"],
           "series": [], "why": ""}
    if start is None or pd.isna(start):
        out["why"] = "nothing the budget counts was measured"
        return out
    slope, floors, kinds, why = 0.0, [], set(), []
    classes = memory_of(cell, warmup).classes
    if not any(budgeted(n) for n in classes if n.startswith("rss_bytes_")):
        why.append("content process RSS: no samples placed after the warm-up")
    for name, mc in classes.items():
        if not budgeted(name):
            continue
        if mc.kind in ("flat", "bounded"):
            continue
        if mc.kind == "retained-growth" and mc.floor_slope is not None and len(mc.floors) >= MIN_FLOORS:
            if mc.floor_slope > 0:
                slope += mc.floor_slope
                floors.append(len(mc.floors))
                kinds.add("modeled" if name.startswith("modeled_") else "measured")
                out["series"].append(name)
            continue
        why.append(f"{mc.label}: " + (mc.reason.split(":")[0] if mc.kind == "too-few-samples" else
                                      f"{mc.kind.replace('-', ' ')}, {len(mc.floors)} floor(s) (needs {MIN_FLOORS})"))
    if why:
        out["why"] = "not projected: " + "; ".join(why)
    elif slope <= 0:
        out["why"] = "not projected: nothing the budget counts grows"
    else:
        last = float(cell.steps["step"].max())
        out.update(slope=slope, tokens=(float(budget) - float(start)) / slope, floors=min(floors),
                   basis=" and ".join(sorted(kinds)))
        out["token"] = last + out["tokens"]
    return out


def budget_projection_words(p: dict | None) -> str | None:
    """:func:`budget_projection` in the words every surface prints: ``near token 2,124 (projected
    modeled from 4 floors)``, or why not; None when there is nothing to say."""
    if p is None:
        return None
    if p["token"] is None:
        return p["why"]
    return f"near token {p['token']:,.0f} (projected {p['basis']} from {p['floors']} floors)"


def collection_events(steps: pd.DataFrame, warmup: int = 1) -> dict:
    """The collection events of one cell's steps (ordered by step): steps in which the worker saw
    bind groups freed (its ``bind_groups_collected`` rose; :func:`harness.stats.memory.collections`,
    the one definition), counted over the steps the memory series cover (``step >= warmup``,
    as the Memory section's "collection events") and, apart, in the warm-up: ``{"gc_events",
    "gc_events_warmup", "per_event", "per_event_median", "per_event_min", "per_event_max"}``
    (bind groups freed per event after the warm-up: mean, median and range — a mean alone hides
    a split such as 16 and 8,278)."""
    rose = collections(steps, "bind_groups_collected")
    at = steps.loc[rose.index, "step"] if len(rose) else pd.Series(dtype=float)
    after = rose[(at >= warmup).to_numpy()] if len(rose) else rose
    out = {"gc_events": int(len(after)), "gc_events_warmup": int(len(rose) - len(after)),
           "per_event": None, "per_event_median": None, "per_event_min": None, "per_event_max": None}
    if len(after):
        out.update(per_event=float(after.mean()), per_event_median=float(after.median()),
                   per_event_min=float(after.min()), per_event_max=float(after.max()))
    return out


def retention_rows(tables, run=None) -> list[dict]:
    """One dict per cell with steps: its summary ``row``, createBindGroup per token, live max/end,
    collection events and bind groups collected per event (:func:`collection_events`), content
    RSS samples behind its max (``rss_samples``), modeled native bytes max (emulated
    only), content RSS max, would-be-killed token and budget, and the modeled projection to the
    budget (:func:`modeled_projection`; ``run``: the :class:`harness.stats.run.RunStats`)."""
    s, st = tables.summary, tables.steps
    data = {c.cell: c for c in run.cells} if run is not None else {}
    warmup = run.warmup if run is not None else 1
    cells = s[s["cell"].isin(set(st["cell"]))] if len(st) else s.iloc[0:0]
    rows = []
    for _, row in cells.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step")
        emulated = row["webgpu"] == "emulated" and c["modeled_native_bytes"].notna().any()
        ev = collection_events(c, warmup)
        rows.append({
            "cell": row["cell"], "row": row.to_dict(), "emulated": bool(emulated),
            "bg_per_token": c["create_bind_group"].iloc[1:].median() if len(c) > 1 else None,
            "live_max": row.get("live_bind_groups_max"), "live_end": row.get("live_bind_groups_end"),
            **ev,
            "modeled_max": row.get("modeled_native_bytes_max") if emulated else None,
            "rss_max": row.get("content_rss_bytes_max"), "rss_samples": row.get("content_rss_samples"),
            "killed": row.get("would_be_killed_at_token"),
            "budget": row.get("memory_budget_bytes"), "budget_counted_max": row.get("memory_budget_counted_bytes_max"),
            "budget_reading": budget_reading(row.get("would_be_killed_at_token"),
                                             row.get("memory_budget_counted_bytes_max"), row.get("memory_budget_bytes"),
                                             row),
            "projection": modeled_projection(data.get(row["cell"]), row.get("memory_budget_bytes")
                                             if pd.notna(row.get("memory_budget_bytes")) else None, warmup)
            if emulated else None,
        })
        rows[-1]["budget_projection"] = budget_projection(data.get(row["cell"]), rows[-1]["row"], warmup)
        rows[-1]["budget_projection_words"] = budget_projection_words(rows[-1]["budget_projection"])
    return rows


def numbers(tables, run=None) -> dict | None:
    """``{"rows", "engines", "budget_bytes", "field"}`` or None when no cell has steps."""
    rows = retention_rows(tables, run)
    if not rows:
        return None
    budgets = [r["budget"] for r in rows if r["budget"] and not pd.isna(r["budget"])]
    return {"rows": rows, "engines": sorted({r["row"]["browser"] for r in rows}),
            "budget_bytes": int(budgets[0]) if budgets else None, "field": FIELD_REPORT}
