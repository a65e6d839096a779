"""Numbers of the report section "Bind group cache: working set": the hit rate the bind group
cache (workloads/lib/bind-group-cache.js) would have at every capacity, from one run.

The cache records each lookup's LRU stack distance — the number of distinct other keys looked up
since the same key was last looked up (Mattson, Gecsei, Slutz, Traiger 1970, "Evaluation
techniques for storage hierarchies"). An LRU cache of C entries holds the C most recently used
keys, so a lookup at distance d hits exactly when d < C, and a first lookup (cold) misses at
every capacity::

    hit(C) = Σ_{d < C} lookups(d) ÷ lookups            capacity for ≥ 99% = min {C : hit(C) ≥ 0.99}

Only the steady state counts: the lookups of the last half of the cell's tokens — the histogram at
the end minus the one the workload took before that half (the run's ``done`` result,
``bindGroupCacheReuse.snapshots``; the same half the onnxruntime section's hit rate uses). An
engine whose uniform buffers rotate through a free list (onnxruntime's ``simple`` uniform cache,
decode-loop's ``fresh``) hands a node the same buffers again only after several tokens, so the
first tokens after the prefill still make new keys. The prediction is exact for an LRU
cache whose entries leave only for capacity; keys whose buffer was destroyed or collected leave
the recorded stack as they leave the cache, which frees a slot in a real cache of any size — the
prediction then stays exact for caches at least as large as the live keys and is an estimate
below that. A capacity sweep (``--param bindGroupCacheMaxEntries=256,512,...`` on ort-decode,
``bind_group_cache_max_entries`` on decode-loop) checks it: each sweep point's measured hit rate
(steps.csv ``extra_bind_group_cache_hits/misses`` over the steady steps) beside the one
predicted from the same cell's distances, and the smallest swept capacity with ≥ 99% hits beside
the smallest one at or above the predicted capacity. Markup: reports/templates/cache_working_set.j2.
"""

from __future__ import annotations

from typing import Iterable

#: The hit rate the section names a capacity for.
TARGET = 0.99
#: The capacity parameter of each workload that has a bind-group-cache variant.
CAPACITY_PARAMS = {"ort-decode": "bindGroupCacheMaxEntries", "decode-loop": "bind_group_cache_max_entries"}


def histogram(distances: Iterable) -> dict[int, int]:
    """``[[distance, lookups], ...]`` (the cache's ``reuseDistances().distances``) → {distance: lookups}."""
    out: dict[int, int] = {}
    for d, n in distances or ():
        out[int(d)] = out.get(int(d), 0) + int(n)
    return out


def steady(at_warmup: dict | None, at_end: dict) -> dict:
    """The lookups after the warm-up: ``at_end`` minus ``at_warmup`` (both ``{lookups, cold,
    distances}``; ``at_warmup`` None: the whole run). Returns ``{lookups, cold, hist}``.
    Raises ValueError when ``at_warmup`` is not a prefix of ``at_end`` (counts would go negative)."""
    end = histogram(at_end.get("distances"))
    lookups, cold = int(at_end.get("lookups", 0)), int(at_end.get("cold", 0))
    if at_warmup:
        for d, n in histogram(at_warmup.get("distances")).items():
            end[d] = end.get(d, 0) - n
        lookups -= int(at_warmup.get("lookups", 0))
        cold -= int(at_warmup.get("cold", 0))
    if lookups < 0 or cold < 0 or any(n < 0 for n in end.values()):
        raise ValueError("the warm-up histogram is not part of the final one")
    return {"lookups": lookups, "cold": cold, "hist": {d: n for d, n in end.items() if n}}


def hit_rate(hist: dict[int, int], lookups: int, capacity: int) -> float | None:
    """Hits ÷ lookups of an LRU cache of ``capacity`` entries (None without lookups)."""
    if lookups <= 0:
        return None
    return sum(n for d, n in hist.items() if d < capacity) / lookups


def capacity_for(hist: dict[int, int], lookups: int, target: float = TARGET) -> int | None:
    """The smallest capacity whose hit rate is ≥ ``target``; None when no capacity reaches it
    (too many cold lookups: keys never seen before) or without lookups."""
    if lookups <= 0:
        return None
    need = target * lookups
    hits = 0
    for d in sorted(hist):
        hits += hist[d]
        if hits >= need - 1e-9:
            return d + 1
    return None


def curve(hist: dict[int, int], lookups: int, extra: Iterable[int] = ()) -> list[tuple[int, float]]:
    """(capacity, hit rate) at 1, 2, 4, … up to the first capacity that holds every repeat, plus
    the ``extra`` capacities, sorted: the points of the chart and table."""
    if lookups <= 0:
        return []
    top = max(hist, default=0) + 1
    caps = {1}
    c = 1
    while c < top:
        c *= 2
        caps.add(c)
    caps.add(top)
    caps.update(int(x) for x in extra if x)
    return [(c, hit_rate(hist, lookups, c)) for c in sorted(caps)]


def _measured(st, warmup: int) -> float | None:
    after = st[st["step"] >= warmup]
    if "extra_bind_group_cache_hits" not in after or not after["extra_bind_group_cache_hits"].notna().any():
        return None
    h, m = after["extra_bind_group_cache_hits"].sum(), after["extra_bind_group_cache_misses"].sum()
    return float(h / (h + m)) if h + m else None


def _median(st, col: str):
    return float(st[col].median()) if col in st and st[col].notna().any() else None


def cell_numbers(result: dict, st, capacity_param_value=None) -> dict | None:
    """One cell's working set from its ``done`` result and steps (ordered by step), or None when
    the cell has no reuse distances (a run older than them, or not a bind-group-cache cell)."""
    reuse = (result or {}).get("bindGroupCacheReuse")
    if not reuse or not reuse.get("atEnd"):
        return None
    snaps = sorted(reuse.get("snapshots") or [], key=lambda x: x.get("step", -1))
    snap = snaps[-1] if snaps else None  # before the last half
    warmup = int(snap["step"]) + 1 if snap else 0
    s = steady(snap, reuse["atEnd"])
    cap = int(reuse.get("maxEntries") or capacity_param_value or 0) or None
    after = st[st["step"] >= warmup]
    need = capacity_for(s["hist"], s["lookups"])
    return {
        "warmup": warmup, "lookups": s["lookups"], "cold": s["cold"], "tokens": len(after),
        "max_hit_rate": (1 - s["cold"] / s["lookups"]) if s["lookups"] else None,
        "capacity_99": need, "capacity": cap,
        "predicted": hit_rate(s["hist"], s["lookups"], cap) if cap else None,
        "measured": _measured(st, warmup),
        "distinct_keys": _median(after, "extra_bind_group_cache_distinct_keys"),
        "new_keys": _median(after, "extra_bind_group_cache_new_keys"),
        "lookups_per_token": _median(after, "extra_bind_group_cache_lookups"),
        "evictions": int(after["extra_bind_group_cache_evictions"].sum())
        if "extra_bind_group_cache_evictions" in after and after["extra_bind_group_cache_evictions"].notna().any() else None,
        "entries_end": float(st["extra_bind_group_cache_size"].iloc[-1])
        if "extra_bind_group_cache_size" in st and len(st) and st["extra_bind_group_cache_size"].notna().any() else None,
        "curve": curve(s["hist"], s["lookups"], [cap or 0, need or 0]),
    }


def sweep_check(points: list[dict]) -> dict:
    """A capacity sweep's points (``{capacity, measured, predicted, capacity_99}``, one per cell)
    → {measured_first (smallest capacity measured at ≥ 99%), predicted_capacity (the median of the
    cells' predictions), predicted_first (smallest swept capacity ≥ it), agrees, max_abs_error
    (largest |measured − predicted| hit rate)}."""
    pts = sorted((p for p in points if p.get("capacity")), key=lambda p: p["capacity"])
    measured_first = next((p["capacity"] for p in pts if (p.get("measured") or 0) >= TARGET), None)
    preds = sorted(p["capacity_99"] for p in pts if p.get("capacity_99"))
    predicted = preds[len(preds) // 2] if preds else None
    predicted_first = next((p["capacity"] for p in pts if predicted is not None and p["capacity"] >= predicted), None)
    errors = [abs(p["measured"] - p["predicted"]) for p in pts if p.get("measured") is not None and p.get("predicted") is not None]
    return {"measured_first": measured_first, "predicted_capacity": predicted, "predicted_first": predicted_first,
            "agrees": measured_first == predicted_first, "max_abs_error": max(errors) if errors else None,
            "capacities": [p["capacity"] for p in pts]}


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [{cell, row, sweep, <cell_numbers>}], "sweeps": [{label, points, check}]}`` for the
    cells with reuse distances, or None."""
    s, st = tables.summary, tables.steps
    cells = {c["cell"]: c for c in tables.manifest.get("cells", [])}
    rows = []
    for _, row in s.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step") if len(st) else st
        param = CAPACITY_PARAMS.get(row["workload"])
        sweep = cells.get(row["cell"], {}).get("sweep") or {}
        n = cell_numbers(tables.results.get(row["cell"], {}), c, sweep.get(param) if param else None)
        if n is not None:
            rows.append({"cell": row["cell"], "row": row.to_dict(), "sweep": sweep, **n})
    if not rows:
        return None
    families: dict[tuple, list] = {}
    for r in rows:
        param = CAPACITY_PARAMS.get(r["row"]["workload"])
        if not param or param not in r["sweep"]:
            continue
        rest = tuple(sorted((k, str(v)) for k, v in r["sweep"].items() if k != param))
        key = (r["row"]["browser"], r["row"]["workload"], r["row"]["variant"], r["row"].get("profile"),
               r["row"].get("repetition"), rest)
        families.setdefault(key, []).append(r)
    sweeps = []
    for key, members in families.items():
        if len(members) < 2:
            continue
        browser, workload, variant, profile, rep, rest = key
        label = f"{browser} {workload}/{variant}" + (f" [{profile}]" if profile else "") + \
            "".join(f" {k}={v}" for k, v in rest) + (f" r{rep}" if rep else "")
        pts = sorted(members, key=lambda r: r["capacity"] or 0)
        sweeps.append({"label": label, "param": CAPACITY_PARAMS[workload], "points": pts,
                       "check": sweep_check(pts)})
    return {"rows": rows, "sweeps": sweeps, "target": TARGET}
