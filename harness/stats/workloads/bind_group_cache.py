"""A bind group cache that never evicts, named from the counts (any workload, any app).

A cache of GPUBindGroups is a remedy for per-dispatch createBindGroup only if it is bounded and
drops entries whose buffers go away: caches that never evicted shipped and had to be fixed in
pixi.js and Defold (shared/references.md, "Remedies engines chose"). Its signature in the
counts: createBindGroup per token near zero next to the dispatches (most dispatches reuse a
bind group: a cache is at work) while the live GPUBindGroup wrappers keep growing by about what
is created (the cache holds every one), and collections do not bring them back.

Per configuration (group) with a cache at work (:data:`CACHE_SHARE`) whose live bind groups grow
by at least :data:`KEPT_SHARE` of what it creates, the verdict is:

* ``unbounded`` — and the evidence says the cache holds them: the live series' own floors rise
  (retained growth, harness/stats/floors.py), or the GC ran in the run (the worker saw other
  wrappers collected, or a forced collection landed) and collected under (1 − KEPT_SHARE) of
  the bind groups created after the warm-up;
* ``not-collected-yet`` — no collection ran at all: the run cannot tell a cache that never
  evicts from garbage the GC has not reached (``--gc-checkpoints N`` forces some);
* ``too-few-samples`` — the live series has too few positions for a growth.

A run cannot tell a cache that never evicts from one bounded above what it held at the end
(``live_end``): the finding says both. Each row: ``{group, verdict, why, created_per_token,
dispatches_per_token, growth_per_token, basis, collections, created, collected, live_end,
cells}``; the finding words it (harness/report/findings.py).
"""

from __future__ import annotations

from harness.stats.memory import memory_of

#: createBindGroup per token at most this share of the dispatches per token: three of four
#: dispatches (or more) reuse a bind group, so a cache is at work. (ort-decode's bind group cache
#: shim under onnxruntime-web's rotating KV cache creates 48 of 315: 15%, shared/references.md.)
CACHE_SHARE = 0.25
#: Live bind groups growing per token by at least this share of those created per token: most of
#: what the cache creates is kept.
KEPT_SHARE = 0.5


def _totals(cell, warmup: int) -> tuple[float, float]:
    """(bind groups created, collected) after the warm-up, from the live-object counters."""
    s = cell.steps
    if "bind_groups_created" not in s or not s["bind_groups_created"].notna().any():
        return 0.0, 0.0
    s = s[s["bind_groups_created"].notna()]
    before = s[s["step"] < warmup]
    base_created = float(before["bind_groups_created"].iloc[-1]) if len(before) else 0.0
    base_collected = float(before["bind_groups_collected"].iloc[-1]) if len(before) else 0.0
    return (float(s["bind_groups_created"].iloc[-1]) - base_created,
            float(s["bind_groups_collected"].fillna(0).iloc[-1]) - base_collected)


def numbers(tables, run) -> dict | None:
    """``{"rows": [...], "cache_share", "kept_share"}`` for the configurations with a cache at
    work whose live bind groups grow (see the module docstring), or None when there is none."""
    rows = []
    for key, g in run.groups.items():
        if not g.cells or key.part:
            continue
        bg, dp = g.metrics.get("bind_groups_per_token"), g.metrics.get("dispatches_per_token")
        growth = g.metrics.get("live_bind_groups_growth_per_token")
        if bg is None or dp is None or growth is None or not dp.value or bg.value is None:
            continue
        if not 0 < bg.value <= CACHE_SHARE * dp.value:
            continue  # nothing created after warm-up, or no cache at work
        cells = run.ok_cells(key)
        mems = [memory_of(c, run.warmup) for c in cells]
        classes = [m.classes.get("bind_groups_live") for m in mems]
        collections = sum(len(set(m.natural) | set(m.forced)) for m in mems)
        totals = [_totals(c, run.warmup) for c in cells]
        created, collected = sum(t[0] for t in totals), sum(t[1] for t in totals)
        row = {"group": key.label, "created_per_token": bg.value, "dispatches_per_token": dp.value,
               "growth_per_token": growth.value, "growth_ci": [growth.ci_low, growth.ci_high], "basis": growth.basis,
               "classes": [mc.kind if mc else None for mc in classes], "collections": collections,
               "created": created, "collected": collected, "cells": [c.cell for c in cells],
               "live_end": max((float(c.steps["bind_groups_live"].dropna().iloc[-1]) for c in cells
                                if "bind_groups_live" in c.steps and c.steps["bind_groups_live"].notna().any()),
                               default=None)}
        if growth.value is None:
            rows.append({**row, "verdict": "too-few-samples", "why": growth.ci_method})
            continue
        if growth.value < KEPT_SHARE * bg.value:
            continue  # what the cache creates is not kept: collections bring it back
        if any(mc is not None and mc.kind == "retained-growth" for mc in classes):
            why = "its floors rise after every collection"
        elif collections and created and collected <= (1 - KEPT_SHARE) * created:
            why = f"the GC ran ({collections} collection{'' if collections == 1 else 's'} seen) and collected {collected:.0f} of the {created:.0f} created"
        else:
            rows.append({**row, "verdict": "not-collected-yet",
                         "why": "no collection ran in this run (--gc-checkpoints N forces some)"})
            continue
        rows.append({**row, "verdict": "unbounded", "why": why})
    return {"rows": rows, "cache_share": CACHE_SHARE, "kept_share": KEPT_SHARE} if rows else None
