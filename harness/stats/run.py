"""Statistics of a run: per-metric estimates with 95% confidence intervals, differences between
variants and memory growth slopes (intervals from harness/stats/estimators.py).

Units of data
    A *cell* is one browser context running one workload variant for ``tokens`` tokens
    (``repetition`` r). A *group* is every ``ok`` cell of the same machine × browser × workload
    × variant × profile × parameters, i.e. the repetitions of one configuration.

Three kinds of metric (:data:`TOKEN_METRICS`, :func:`metric_kind`):
    ``token``  one value per token after the warm-up (``ms_per_token``, ``bind_groups_per_token``…),
               pooled over the group's repetitions. Point estimate: the median (robust to GC
               pauses, and what ``summary.csv`` reports); also the mean. 95% CI by the circular
               block bootstrap (blocks of ⌈n^(1/3)⌉ consecutive tokens within each repetition:
               consecutive tokens are correlated), percentile interval.
    ``cell``   one value per repetition (``live_bind_groups_max``, ``peak_rss_bytes_<type>``).
               Point estimate: the mean over repetitions, CI by Student's t; one repetition gives
               no interval ("n=1: no interval") and no difference is called significant from it.
    ``slope``  growth per token (``live_bind_groups_growth_per_token``,
               ``rss_growth_bytes_per_token_<type>``): the slope of the series' floors after
               collections (harness/stats/memory.py; a series that never rose is fitted whole,
               one with fewer than two collections within its stretches between them: the rate
               between collections), one Theil–Sen fit over the group's repetitions using pairs
               within a repetition (or stretch) only, so offsets between contexts don't count
               as growth; CI from Sen's method, widened to at least one token's growth over the
               floors' span (where in a token a collection lands moves a floor).

Warm-up: tokens ``0 .. warmup-1`` are discarded (default 1: token 0 compiles pipelines and fills
caches, the same rule as ``summary.csv``). A budget's ``after token N`` sets ``warmup = N + 1``.

Tokens of one context are not independent draws: the block bootstrap keeps runs of
consecutive tokens together, and repetitions in fresh contexts (``--repeat``, round-robin across
variants) are what make drift and context-to-context variation show up in an interval.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from itertools import combinations

import numpy as np
from scipy import stats as sps

from harness.stats.cells import (DEFAULT_WARMUP, CellData, GroupKey, cell_value, cells_of, groups_of, slope_series,
                                 token_values)
from harness.stats.estimators import (CONFIDENCE, N_RESAMPLES, NO_INTERVAL_N1, SEED, block_bootstrap_ci,
                                      block_bootstrap_diff, bootstrap_ci, stat_fn, stratified_theil_sen, t_ci)
from harness.stats.memory import cell_events, floor_points, segments
from harness.stats.metrics import (CELL_STEP_METRICS, HEADLINE, OTHER_METRICS, STEP_SLOPES, TOKEN_METRICS,
                                   default_stat, deterministic, growth_series, metric_kind, metric_unit)

#: Cell statuses that count as a failure of their configuration (budgets fail on them).
FAILED_STATUSES = ("failed", "device-lost", "incomplete")  # incomplete: samples lost (RESULTS.md)



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

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as ``None``)."""
        return {k: clean(v) for k, v in asdict(self).items()}


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
        lo, hi, how = block_bootstrap_ci(per, stat, confidence)
        return Estimate(metric, kind, unit, stat, float(stat_fn(stat)(x)), lo, hi, how, len(x), len(per),
                        float(np.median(x)), float(np.mean(x)), warmup,
                        [float(stat_fn(stat)(p)) for p in per])
    if kind == "cell":
        vals = [v for v in (cell_value(c, metric, warmup) for c in cells) if v is not None]
        if not vals:
            return None
        x = np.asarray(vals)
        if stat == "mean":
            lo, hi, how = t_ci(x, confidence)
        elif len(x) < 2:
            lo, hi, how = None, None, NO_INTERVAL_N1
        elif stat in ("min", "max"):
            lo, hi, how = None, None, "none"
        else:
            lo, hi, how = bootstrap_ci(x, stat, confidence) if len(x) >= 5 else (None, None, "none")
        return Estimate(metric, kind, unit, stat, float(stat_fn(stat)(x)), lo, hi, how, len(x), len(x),
                        float(np.median(x)), float(np.mean(x)), warmup, [float(v) for v in vals])
    # slope: one Theil–Sen fit over every repetition's floors (harness/stats/memory.py), pairs
    # within a repetition (or, without floors, within a stretch between collections) only, so
    # offsets between contexts and drops at collections never count as growth
    strata, per, bases, res = [], [], [], []
    for c in cells:
        x, y, basis, rate = floor_points(c, growth_series(metric) or "", warmup)
        if len(x) < 2:
            continue
        parts = segments(x, y, cell_events(c)[0] + cell_events(c)[1]) if basis == "series" else [(x, y)]
        strata += parts
        bases.append(basis)
        per.append(stratified_theil_sen(parts)[0])
        if basis == "floors":
            res.append(rate / (x.max() - x.min()))
    if not strata:
        return None
    slope, lo, hi, n = stratified_theil_sen(strata, confidence)
    if slope is None:
        return None
    if res:  # floors: at least ± one token's growth over their span
        r = max(res)
        lo, hi = (slope - r, slope + r) if lo is None else (min(lo, slope - r), max(hi, slope + r))
    flat = all(np.all(y == y[0]) for _, y in strata)
    how = "exact" if flat and lo is not None else ("none" if lo is None else "theil-sen")
    return Estimate(metric, kind, unit, "slope", slope, lo, hi, how, n, len(bases), None, None, warmup, per,
                    "+".join(sorted(set(bases))))


# ----------------------------------------------------------------------------------------------
# differences


@dataclass
class Difference:
    """``b`` minus ``a`` for one metric: ``diff`` = value(b) − value(a) in the metric's unit with
    its 95% CI, ``rel`` = value(b) / value(a) − 1 with its CI (``None`` when value(a) is 0).
    ``significant``: the diff CI excludes 0 (``None`` when there is no CI). ``a`` / ``b`` are
    group labels; ``ci_method`` as in :class:`Estimate` (``welch-t`` for cell metrics,
    ``theil-sen-combined`` for slopes: the two fits' half-widths added in quadrature, an
    approximation)."""

    metric: str
    unit: str
    stat: str
    a: str
    b: str
    a_value: float | None
    b_value: float | None
    diff: float | None
    diff_low: float | None
    diff_high: float | None
    rel: float | None
    rel_low: float | None
    rel_high: float | None
    ci_method: str
    significant: bool | None

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as ``None``)."""
        return {k: clean(v) for k, v in asdict(self).items()}


def _rel(b: float, a: float) -> float | None:
    """(b − a) / |a|: the change relative to a's size, with the sign of the difference (a
    negative ``a``, e.g. a shrinking slope, never flips it)."""
    return None if a == 0 else (b - a) / abs(a)


def difference(a_cells: list[CellData], b_cells: list[CellData], metric: str, warmup: int = DEFAULT_WARMUP,
               stat: str | None = None, confidence: float = CONFIDENCE, a_label: str = "a",
               b_label: str = "b", ea: Estimate | None = None, eb: Estimate | None = None) -> Difference | None:
    """:class:`Difference` of ``metric`` between two groups' cells (``b − a``), ``None`` when
    either has no data. Token metrics: two-sample bootstrap (independent samples) of
    ``stat(b) − stat(a)`` and ``stat(b)/stat(a) − 1``. Cell metrics: Welch's t
    (``scipy.stats.ttest_ind(equal_var=False)``), relative CI = diff CI ÷ value(a). Slopes: see
    :class:`Difference`. ``ea``/``eb``: the groups' estimates of ``metric`` with this warm-up,
    stat and confidence when already computed (:meth:`RunStats.estimate`), else computed here."""
    kind = metric_kind(metric)
    stat = stat or default_stat(metric)
    ea = ea if ea is not None else estimate(a_cells, metric, warmup, stat, confidence)
    eb = eb if eb is not None else estimate(b_cells, metric, warmup, stat, confidence)
    if ea is None or eb is None or ea.value is None or eb.value is None:
        return None
    d = eb.value - ea.value
    rel = _rel(eb.value, ea.value)
    lo = hi = rlo = rhi = None
    how = "none"
    if kind == "token":
        xa = np.concatenate([token_values(c, metric, warmup) for c in a_cells])
        xb = np.concatenate([token_values(c, metric, warmup) for c in b_cells])
        if np.all(xa == xa[0]) and np.all(xb == xb[0]):
            if deterministic(metric):
                lo = hi = d
                rlo = rhi = rel
                how = "exact"
        elif stat not in ("min", "max") and len(xa) >= 2 and len(xb) >= 2:
            (lo, hi), (rlo, rhi), how = block_bootstrap_diff(
                [token_values(c, metric, warmup) for c in a_cells], [token_values(c, metric, warmup) for c in b_cells],
                stat, confidence)
            if ea.value == 0:
                rlo = rhi = None
    elif kind == "cell":
        va, vb = np.asarray(ea.per_rep), np.asarray(eb.per_rep)
        if len(va) < 2 or len(vb) < 2:
            how = NO_INTERVAL_N1  # no CI, so never "significant", from one repetition on a side
        elif np.all(va == va[0]) and np.all(vb == vb[0]) and stat == "mean":
            if deterministic(metric):
                lo = hi = d
                how = "exact"
        elif stat == "mean" and len(va) >= 2 and len(vb) >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # near-constant repetitions: precision-loss warning
                ci = sps.ttest_ind(vb, va, equal_var=False).confidence_interval(confidence)
            if math.isfinite(ci.low) and math.isfinite(ci.high):
                lo, hi, how = float(ci.low), float(ci.high), "welch-t"
        if lo is not None and ea.value != 0:
            rlo, rhi = lo / abs(ea.value), hi / abs(ea.value)
    else:
        if None not in (ea.ci_low, ea.ci_high, eb.ci_low, eb.ci_high):
            below = math.hypot(eb.value - eb.ci_low, ea.ci_high - ea.value)
            above = math.hypot(eb.ci_high - eb.value, ea.value - ea.ci_low)
            lo, hi, how = d - below, d + above, "theil-sen-combined"
            if ea.value != 0:
                rlo, rhi = lo / abs(ea.value), hi / abs(ea.value)
    sig = None if lo is None else bool(lo > 0 or hi < 0)
    return Difference(metric, metric_unit(metric), stat, a_label, b_label, ea.value, eb.value, d, lo, hi,
                      rel, rlo, rhi, how, sig)


# ----------------------------------------------------------------------------------------------
# a whole run


@dataclass
class GroupStats:
    """A group's estimates. ``cells``: its cell ids (ok ones), ``failed``: ids of cells that
    failed, ``env``: distinct values of browser_version / adapter / webgpu / machine facts."""

    key: GroupKey
    cells: list[str]
    failed: list[str]
    env: dict[str, list[str]]
    metrics: dict[str, Estimate]

    def to_dict(self) -> dict:
        """JSON-ready dict: the key's fields, ``group`` label, cells, env and metrics."""
        return {"group": self.key.label, **asdict(self.key), "cells": self.cells, "failed": self.failed,
                "env": self.env, "metrics": {k: v.to_dict() for k, v in self.metrics.items()}}


@dataclass
class RunStats:
    """Statistics of a run folder: :class:`GroupStats` per group and :class:`Difference` per
    variant pair (every pair within one family, the plan's earlier variant as ``a``), and per
    pair of sweep points of one variant (``--param KEY=A,B,C``, the earlier value as ``a``), and
    metric."""

    warmup: int
    confidence: float
    groups: dict[GroupKey, GroupStats]
    differences: list[Difference]
    cells: list[CellData] = field(repr=False, default_factory=list)

    #: (group key, metric, warm-up, stat) → Estimate (or None): every estimate computed once
    cache: dict = field(repr=False, default_factory=dict)

    def ok_cells(self, key: GroupKey) -> list[CellData]:
        """The ok cells of group ``key`` (empty when it has none)."""
        return [c for c in self.cells if c.key == key and c.status == "ok"]

    def estimate(self, key: GroupKey, metric: str, warmup: int | None = None, stat: str | None = None
                 ) -> Estimate | None:
        """The :class:`Estimate` of ``metric`` for group ``key``'s ok cells (``None`` without
        data), computed once per (group, metric, warm-up, stat) and reused by differences,
        budgets and findings; the group's own estimates (this run's warm-up, default stat)
        are those of :func:`compute`. Raises ``KeyError`` for an unknown metric."""
        warmup = self.warmup if warmup is None else warmup
        stat = stat or default_stat(metric)
        k = (key, metric, warmup, stat)
        if k not in self.cache:
            g = self.groups.get(key)
            if g is not None and warmup == self.warmup and stat == default_stat(metric) and metric in g.metrics:
                self.cache[k] = g.metrics[metric]
            else:
                cells = self.ok_cells(key)
                self.cache[k] = estimate(cells, metric, warmup, stat, self.confidence) if cells else None
        return self.cache[k]

    def to_dict(self) -> dict:
        """``stats.json``'s body: settings, methods, groups and differences."""
        return {"warmup_steps": self.warmup, "confidence": self.confidence,
                "methods": {"token": "circular block bootstrap over tokens after warm-up, blocks of ceil(n^(1/3)) "
                                     "consecutive tokens within each repetition, percentile interval",
                            "cell": "Student's t over repetitions (none from one repetition)",
                            "slope": "Theil-Sen over the floors after collections (harness/stats/memory.py), Sen's CI "
                                     "widened to at least one token's growth over the floors' span",
                            "n_resamples": N_RESAMPLES, "seed": SEED},
                "groups": [g.to_dict() for g in self.groups.values()],
                "differences": [d.to_dict() for d in self.differences]}


def available_metrics(cells: list[CellData]) -> list[str]:
    """Metric names this run has data for, headline ones first. A workload's ``extra_*`` columns
    are not included (they are workload-specific: token ids, positions…); a budget may name one."""
    def has(column: str) -> bool:
        return any(column in cd.steps and cd.steps[column].notna().any() for cd in cells)

    names = [m for m, (col, _) in TOKEN_METRICS.items() if has(col)]
    names += [m for m, (col, _, _) in CELL_STEP_METRICS.items() if has(col)]
    names += [m for m, (col, _) in STEP_SLOPES.items() if has(col)]
    ptypes = sorted({str(p) for cd in cells if len(cd.memory)
                     for p in cd.memory.loc[cd.memory["source"].isin(("psutil", "footprint")), "process_type"].dropna().unique()})
    names += [f"peak_rss_bytes_{p}" for p in ptypes] + [f"rss_growth_bytes_per_token_{p}" for p in ptypes]
    if ptypes:
        names += ["peak_rss_bytes_all", "rss_growth_bytes_per_token_all"]
    configs = sorted({str(c) for cd in cells if "extra_config" in cd.steps and "extra_us_per_dispatch" in cd.steps
                      for c in cd.steps.dropna(subset=["extra_us_per_dispatch"])["extra_config"].dropna().unique()})
    names += [f"us_per_dispatch_{c}" for c in configs]
    if any(len(cd.memory) and (cd.memory["source"] == "cdp").any() for cd in cells):
        names += list(OTHER_METRICS)
    names = [n for n in names if metric_kind(n) is not None]  # e.g. a process type with odd characters
    return sorted(set(names), key=lambda n: (HEADLINE.index(n) if n in HEADLINE else len(HEADLINE), names.index(n)))


def compute(tables, warmup: int = DEFAULT_WARMUP, metrics: list[str] | None = None,
            confidence: float = CONFIDENCE, differences: bool = True) -> RunStats:
    """:class:`RunStats` of a :class:`harness.tables.Tables`. Only ``ok`` cells contribute
    estimates; a group whose cells all failed is listed with no metrics. ``metrics`` defaults to
    :func:`available_metrics`."""
    cells = cells_of(tables)
    names = metrics or available_metrics([c for c in cells if c.status == "ok"])
    groups: dict[GroupKey, GroupStats] = {}
    for key, members in groups_of(c for c in cells if c.status in ("ok", *FAILED_STATUSES)).items():
        ok = [c for c in members if c.status == "ok"]
        env = {k: sorted({str(c.env.get(k)) for c in members if c.env.get(k)})
               for k in ("browser_version", "adapter", "webgpu", "machine", "os", "cpu")}
        est = {}
        for m in names if ok else []:
            e = estimate(ok, m, warmup, confidence=confidence)
            if e is not None:
                est[m] = e
        groups[key] = GroupStats(key, [c.cell for c in ok], [c.cell for c in members if c.status in FAILED_STATUSES],
                                 {k: v for k, v in env.items() if v}, est)
    diffs: list[Difference] = []
    if differences:
        families: dict[tuple, list[GroupKey]] = {}
        for key, g in groups.items():
            if g.cells:
                families.setdefault(key.family, []).append(key)
        # the points of a sweep (--param KEY=A,B,C) of the same variant: compared with each other too
        sweeps: dict[tuple, list[GroupKey]] = {}
        for key, g in groups.items():
            if g.cells and key.sweep:
                sweeps.setdefault(key.sweep_family, []).append(key)
        for keys in [*families.values(), *sweeps.values()]:
            for ka, kb in combinations(keys, 2):
                a, b = [c for c in cells if c.key == ka and c.status == "ok"], [c for c in cells if c.key == kb and c.status == "ok"]
                for m in names:
                    if m in groups[ka].metrics and m in groups[kb].metrics:
                        d = difference(a, b, m, warmup, confidence=confidence, a_label=ka.label, b_label=kb.label,
                                       ea=groups[ka].metrics[m], eb=groups[kb].metrics[m])
                        if d is not None:
                            diffs.append(d)
    return RunStats(warmup, confidence, groups, diffs, cells)
