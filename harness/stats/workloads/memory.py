"""Numbers of the report section "Memory: bounded, growing until collected, or retained" and of
``memory_series.csv``: every memory-like series of every ok cell classified
(:mod:`harness.stats.memory`), its projection to ``--memory-budget``, and per configuration
whether tokens with a collection event are slower than the rest (GC vs latency).

GC vs latency: per group, ``wall_ms`` of tokens after warm-up with a collection event (the
worker saw wrappers collected, or a forced collection landed) vs the other tokens: both
medians and the difference of medians (event − rest) with a 95% two-sample bootstrap interval
(:func:`harness.stats.estimators.median_diff_ci`, percentile; m-out-of-n above 2,000 tokens);
no interval with fewer than ``MIN_TOKENS`` (10) tokens on a side. That interval is within-run only:
"significant" follows the run's rule (2 repetitions or more, Welch's t over per-repetition medians,
:func:`gc_latency`), and times on a CPU adapter are flagged. A collection the worker did not see (no wrapper of ours freed) is not counted, so the
"rest" may hold collections too: the difference is a lower bound of a GC's cost.
"""

from __future__ import annotations

import numpy as np

from harness.stats.estimators import CONFIDENCE, SEED, median_diff_ci
from harness.stats.memory import cell_classes, cell_events, projection
from harness.stats.workloads import bind_group_cache

#: memory_series.csv columns, in order.
COLUMNS = ["cell", "group", "series", "unit", "class", "points", "first", "last", "max", "events", "forced_events",
           "floors", "floor_slope", "floor_ci_low", "floor_ci_high", "rate_between_collections", "series_slope",
           "budget_bytes", "projected_tokens_to_budget", "projection_slope", "projection_basis", "reason",
           "growth_per_token", "growth_ci_low", "growth_ci_high", "growth_basis", "collection_events", "falls"]


def rows(run, budget_bytes: float | None = None) -> list[dict]:
    """One dict per ok cell × memory series (:data:`COLUMNS`); byte series with retained
    growth from 3 floors or more are projected to ``budget_bytes`` (``--memory-budget``). ``growth_*``: the cell's one growth
    estimate (:attr:`harness.stats.floors.MemoryClass.growth_per_token`; a group's, pooled over
    repetitions, is stats.csv's); ``reason``: in plain numbers, ``reason_template`` +
    ``reason_values`` for the report's formatter (harness/report/format.py ``reason``)."""
    budget = budget_bytes
    out = []
    for c in run.cells:
        if c.status != "ok":
            continue
        for name, mc in cell_classes(c, run.warmup).items():
            p = projection(mc, budget)
            out.append({"cell": c.cell, "group": c.key.label, "series": name, "unit": mc.unit, "class": mc.kind,
                        "label": mc.label, "points": mc.points, "first": mc.first, "last": mc.last, "max": mc.max,
                        "events": " ".join(f"{e:g}" for e in mc.events),
                        "forced_events": " ".join(str(e) for e in mc.forced),
                        "n_events": len(mc.events), "floors": " ".join(f"{t:g}:{v:g}" for t, v in mc.floors),
                        "floor_slope": mc.floor_slope, "floor_ci_low": mc.floor_low, "floor_ci_high": mc.floor_high,
                        "rate_between_collections": mc.rate, "series_slope": mc.series_slope,
                        "budget_bytes": p["budget_bytes"], "projected_tokens_to_budget": p["tokens"],
                        "projection_slope": p["slope"] if p["tokens"] is not None else None,
                        "projection_basis": p["which"] if p["tokens"] is not None else p["why"],
                        "reason": mc.reason_text(), "reason_template": mc.reason, "reason_values": mc.reason_values,
                        "growth_per_token": mc.growth_per_token, "growth_ci_low": mc.growth_low,
                        "growth_ci_high": mc.growth_high, "growth_basis": mc.growth_basis or None,
                        "growth_why": mc.growth_why, "collection_events": " ".join(f"{e:g}" for e in mc.collections),
                        "n_collections": len(mc.collections), "falls": " ".join(f"{e:g}" for e in mc.falls),
                        "n_falls": len(mc.falls), "n_forced": len(mc.forced)})
    return out


def gc_latency(run) -> list[dict]:
    """Per group with ok cells: ``{group, n_event, n_rest, event_median, rest_median, diff, low,
    high, ci_method, significant, evidence, verdict, reps, reps_low, reps_high, p_value, flags}``
    (ms; see the module docstring). The pooled token bootstrap (``low``/``high``) measures
    within-run variation only, so ``significant`` follows the run's rule for a measured time
    (harness/stats/differences.py): 2 repetitions or more, each with tokens on both sides, and
    Welch's t over the per-repetition medians (event vs rest; ``reps_low``/``reps_high``), held
    against alpha / (m + 1), m = the run's measured differences under Holm's correction (a
    Bonferroni bound over that family with this test added: never looser than Holm's); else
    None and ``evidence`` ``… within-run only``. Emulated WebGPU: not compared. ``flags``: a CPU
    adapter's times are not GPU times."""
    from scipy import stats as sps

    from harness.stats.workloads.dispatch_overhead import adapter_class

    family = sum(1 for d in run.differences if d.p_value is not None)
    out = []
    for key, g in run.groups.items():
        ev_ms, rest_ms, per_rep, flags = [], [], [], []
        for c in run.ok_cells(key):
            s = c.steps
            if "wall_ms" not in s or not len(s):
                continue
            natural, forced = cell_events(c)
            events = set(natural) | set(forced)
            s = s[(s["step"] >= run.warmup) & s["wall_ms"].notna()]
            hit = s["step"].astype(int).isin(events)
            ev_ms += s.loc[hit, "wall_ms"].tolist()
            rest_ms += s.loc[~hit, "wall_ms"].tolist()
            if hit.any() and (~hit).any():
                per_rep.append((float(s.loc[hit, "wall_ms"].median()), float(s.loc[~hit, "wall_ms"].median())))
            env = c.env or {}
            adapter = env.get("adapter") if isinstance(env.get("adapter"), str) else ""
            if env.get("webgpu") == "emulated":
                flags.append("emulated")
            elif adapter_class({"adapter": adapter}, None).startswith("CPU"):
                flags.append(f"{adapter}: {adapter_class({'adapter': adapter}, None)}")
        if not ev_ms or not rest_ms:
            continue
        a, b = np.asarray(rest_ms, float), np.asarray(ev_ms, float)
        d = float(np.median(b) - np.median(a))
        lo, hi, how = median_diff_ci(a, b, CONFIDENCE, SEED)
        row = {"group": key.label, "n_event": len(b), "n_rest": len(a), "event_median": float(np.median(b)),
               "rest_median": float(np.median(a)), "diff": d, "low": lo, "high": hi, "ci_method": how,
               "significant": None, "reps": len(per_rep), "reps_low": None, "reps_high": None, "p_value": None,
               "flags": sorted({f for f in flags if f != "emulated"})}
        _gc_verdict(row, per_rep, "emulated" in flags, family, sps)
        out.append(row)
    return out


def _gc_verdict(row: dict, per_rep: list[tuple[float, float]], emulated: bool, family: int, sps) -> None:
    """Fill ``significant``, ``evidence`` and ``verdict`` of a GC-vs-latency row (see :func:`gc_latency`)."""
    from harness.stats.differences import _within_run

    if emulated:
        row["evidence"] = "emulated WebGPU: its times are the emulation's JavaScript, not a GPU's: not compared"
    elif row["low"] is None:  # too few tokens with (or without) a collection: nothing to decide on
        row["evidence"] = row["ci_method"]
    elif len(per_rep) < 2:
        row["evidence"] = _within_run(len(per_rep), len(per_rep))
    else:
        ev, rest = np.asarray([e for e, _ in per_rep]), np.asarray([r for _, r in per_rep])
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = sps.ttest_ind(ev, rest, equal_var=False)
            ci = t.confidence_interval(CONFIDENCE)
        n = len(per_rep)
        if not (np.isfinite(ci.low) and np.isfinite(ci.high)) or ci.low == ci.high:
            row["evidence"] = f"{n} repetitions: no spread between them: within-run interval only, not decided"
        else:
            limit = (1 - CONFIDENCE) / (family + 1)
            row["reps_low"], row["reps_high"], row["p_value"] = float(ci.low), float(ci.high), float(t.pvalue)
            excl = bool(ci.low > 0 or ci.high < 0)
            row["significant"] = excl and t.pvalue <= limit
            op = "≤" if t.pvalue <= limit else ">"
            row["evidence"] = (f"{n} repetitions, Welch's t over per-repetition medians; Bonferroni with the run's "
                               f"{family} measured differences: p={t.pvalue:.2g} {op} {limit:.3g}")
    sig = row["significant"]
    row["verdict"] = ("significant" if sig else "not significant" if sig is False else "no significance claimed") \
        + f" ({row['evidence']})"
    if row["flags"]:
        row["verdict"] += "; " + "; ".join(row["flags"])


def numbers(tables, run) -> dict | None:
    """``{"rows", "gc_latency", "budget_bytes", "kinds", "events", "bind_group_cache"}`` (``events``:
    cell → natural and forced collection event tokens; ``bind_group_cache``: configurations whose
    bind group cache keeps growing, :mod:`harness.stats.workloads.bind_group_cache`, or None) or
    None when no ok cell has a memory series."""
    budget = (tables.manifest.get("parameters") or {}).get("memory_budget_bytes")
    r = rows(run, budget)
    if not r:
        return None
    kinds = {}
    for x in r:
        kinds.setdefault(x["class"], 0)
        kinds[x["class"]] += 1
    events = {}
    for c in run.cells:
        if c.status == "ok":
            natural, forced = cell_events(c)
            events[c.cell] = {"natural": natural, "forced": forced}
    return {"rows": r, "gc_latency": gc_latency(run), "budget_bytes": budget, "kinds": kinds, "events": events,
            "bind_group_cache": bind_group_cache.numbers(tables, run)}
