"""One group's estimate of one metric with its 95% interval (harness/stats/run.py's units of data;
intervals from harness/stats/estimators.py)."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from harness.stats.cells import DEFAULT_WARMUP, CellData, cell_value, token_values
from harness.stats.estimators import (CONFIDENCE, NO_INTERVAL_N1, SEED, SUBSAMPLE_TOKENS, block_bootstrap_ci,
                                      bootstrap_ci, stat_fn, t_ci)
from harness.stats.floors import MIN_FLOORS  # noqa: F401 (the floors a growth rate needs)
from harness.stats.memory import floor_points, growth_fit, memory_of
from harness.stats.metrics import default_stat, deterministic, growth_series, metric_kind, metric_unit


@dataclass
class Estimate:
    """A metric of one group. ``value`` is the point estimate of ``stat`` (``median`` for token
    metrics, ``mean`` over repetitions for cell metrics, ``slope`` for slopes); ``ci_low`` /
    ``ci_high`` its 95% interval (``None`` where none applies, e.g. one repetition of a cell
    metric, or ``max``); ``ci_method`` says how: ``bootstrap-bca``, ``bootstrap-percentile``,
    ``t``, ``theil-sen``, ``exact`` (every sample equal) or ``none``. ``n``: samples (tokens,
    repetitions or fitted points); ``n_reps``: repetitions (cells) that contributed."""

    metric: str
    kind: str
    unit: str
    stat: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str
    n: int
    n_reps: int
    median: float | None = None
    mean: float | None = None
    warmup: int = DEFAULT_WARMUP
    per_rep: list = field(default_factory=list)
    #: growth metrics: what the slope was fitted to, per repetition: ``floors`` (values after
    #: collections), ``flat`` (never rose), ``series`` (fewer than two collections), joined by +
    basis: str = ""
    #: growth metrics: the fewest floors behind the slope among the repetitions fitted (a slope on
    #: ``series`` is a rate between collections from fewer than 3 floors, not a growth rate)
    floors: int | None = None
    #: growth metrics: the most drops (collections of the series' own objects, falls; a forced
    #: collection that freed none is none) any repetition fitted saw; 0: no collection of it seen,
    #: so a ``series`` slope is no "rate between collections"
    drops: int | None = None
    #: a per-token metric above SUBSAMPLE_TOKENS tokens: its m-out-of-n bootstrap replicates and
    #: m, drawn with a seed of its own, so that a difference of two such groups reuses them
    #: (independent by their seeds) instead of resampling both again; not written anywhere
    replicates: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as ``None``)."""
        return {f.name: clean(getattr(self, f.name)) for f in fields(self) if f.name != "replicates"}


def clean(v):
    """A value made JSON-ready: numpy scalars as Python numbers, non-finite floats as None."""
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v


def estimate(cells: list[CellData], metric: str, warmup: int = DEFAULT_WARMUP, stat: str | None = None,
             confidence: float = CONFIDENCE) -> Estimate | None:
    """:class:`Estimate` of ``metric`` over ``cells`` (one group's ok cells), or ``None`` when
    no cell has data for it. ``stat`` defaults to :func:`default_stat`. Raises ``KeyError`` for
    an unknown metric, ``ValueError`` for an unknown stat."""
    kind = metric_kind(metric)
    if kind is None:
        raise KeyError(metric)
    stat = stat or default_stat(metric)
    unit = metric_unit(metric)
    if kind == "token":
        per = [token_values(c, metric, warmup) for c in cells]
        per = [p for p in per if len(p)]
        if not per:
            return None
        x = np.concatenate(per)
        kept: list = []
        # above SUBSAMPLE_TOKENS each group draws with its own seed (its cells and the metric), so
        # two groups' replicates are independent and a difference can reuse them; below, seed 0
        seed = SEED if len(x) <= SUBSAMPLE_TOKENS else zlib.crc32(
            "|".join([metric, stat, *sorted(c.cell + "/" + c.key.part for c in cells)]).encode())
        lo, hi, how = block_bootstrap_ci(per, stat, confidence, seed, kept)
        return Estimate(metric, kind, unit, stat, float(stat_fn(stat)(x)), lo, hi, how, len(x), len(per),
                        float(np.median(x)), float(np.mean(x)), warmup,
                        [float(stat_fn(stat)(p)) for p in per], replicates=kept[0] if kept else None)
    if kind == "cell":
        vals = [v for v in (cell_value(c, metric, warmup) for c in cells) if v is not None]
        if not vals:
            return None
        x = np.asarray(vals)
        if stat == "mean":
            lo, hi, how = t_ci(x, confidence)
            if how == "exact" and not deterministic(metric):  # live counts, memory: measured, not exact
                lo, hi, how = None, None, f"{len(x)} repetitions: no spread between them, no interval"
        elif len(x) < 2:
            lo, hi, how = None, None, NO_INTERVAL_N1
        elif stat in ("min", "max"):
            lo, hi, how = None, None, "none"
        else:
            lo, hi, how = bootstrap_ci(x, stat, confidence) if len(x) >= 5 else (None, None, "none")
        return Estimate(metric, kind, unit, stat, float(stat_fn(stat)(x)), lo, hi, how, len(x), len(x),
                        float(np.median(x)), float(np.mean(x)), warmup, [float(v) for v in vals])
    # slope: one Theil–Sen fit over every repetition's floors (harness/stats/memory.py), pairs
    # within a repetition (or, without floors, within a stretch between drops) only, so offsets
    # between contexts and drops at collections never count as growth. A cell whose series has
    # fewer than MIN_POINTS positions gives no slope: with none left, "too few samples (n=K)".
    strata, per, bases, res, few, nfloors, ndrops = [], [], [], [], [], [], []
    for c in cells:
        fp = floor_points(c, growth_series(metric) or "", warmup)
        if fp.basis == "too-few":
            few.append(fp)
            continue
        if len(fp.x) < 2:
            continue
        strata += fp.strata
        bases.append(fp.basis)
        per.append(fp.slope)  # the cell's own fit, made once by its memory analysis
        res.append(fp.res)
        mc = memory_of(c, warmup).classes.get(growth_series(metric) or "")
        nfloors.append(len(mc.floors) if mc is not None else 0)
        ndrops.append(len(set(mc.collections) | set(mc.falls)) if mc is not None else 0)  # forced ones that freed none: no drop
    if not strata:
        if few:
            return Estimate(metric, kind, unit, "slope", None, None, None, few[0].why, max(f.points for f in few),
                            len(few), None, None, warmup, [], "too-few")
        return None
    # the same fit as each cell's own growth (harness/stats/floors.py growth_fit): one repetition
    # gives the numbers of memory_series.csv; several are pooled (pairs within a repetition only)
    slope, lo, hi = growth_fit(strata, max(res), confidence)
    if slope is None:
        return None
    n = sum(len(x) for x, _ in strata)
    flat = all(np.all(y == y[0]) for _, y in strata)
    how = "exact" if flat and lo is not None else ("none" if lo is None else "theil-sen")
    return Estimate(metric, kind, unit, "slope", slope, lo, hi, how, n, len(bases), None, None, warmup, per,
                    "+".join(sorted(set(bases))), min(nfloors) if nfloors else None, max(ndrops) if ndrops else None)


