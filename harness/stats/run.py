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
               its drops (harness/stats/floors.py ``growth_strata``: 3 floors or more; a flat
               series is fitted whole, one with fewer floors within its stretches between drops:
               the rate between drops; the same fit as each cell's own growth in
               memory_series.csv), one Theil–Sen fit over the group's repetitions using pairs
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

import json
from dataclasses import asdict, dataclass, field
from itertools import combinations

from harness.stats.cells import DEFAULT_WARMUP, CellData, GroupKey, cells_of, groups_of, list_split, parts_of
from harness.stats.differences import Difference, difference, holm  # noqa: F401 (holm: the package's API)
from harness.stats.estimates import Estimate, clean, estimate  # noqa: F401 (the package's API)
from harness.stats.estimators import CONFIDENCE, MIN_TOKENS, N_RESAMPLES, SEED, SUBSAMPLE_TOKENS
from harness.stats.metrics import (CELL_STEP_METRICS, HEADLINE, NOT_TOKENS, OTHER_METRICS, STEP_SLOPES,
                                   TOKEN_METRICS, default_stat, metric_kind)

#: Cell statuses that count as a failure of their configuration (budgets fail on them).
FAILED_STATUSES = ("failed", "device-lost", "incomplete")  # incomplete: samples lost (RESULTS.md)


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
    #: views of cells whose per-step metrics are estimated per value of a list parameter
    #: (:func:`harness.stats.cells.list_split`), one per value; their groups' keys have a ``part``
    parts: list[CellData] = field(repr=False, default_factory=list)
    #: whole-cell groups whose per-step metrics are in their parts' groups instead
    split: set = field(repr=False, default_factory=set)

    #: (group key, metric, warm-up, stat) → Estimate (or None): every estimate computed once
    cache: dict = field(repr=False, default_factory=dict)

    def ok_cells(self, key: GroupKey) -> list[CellData]:
        """The ok cells of group ``key`` (empty when it has none); a part's: its views."""
        return [c for c in (self.parts if key.part else self.cells) if c.key == key and c.status == "ok"]

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
                                     "consecutive tokens within each repetition, percentile interval; above "
                                     f"{SUBSAMPLE_TOKENS} tokens m-out-of-n resamples of {SUBSAMPLE_TOKENS} tokens, their "
                                     "spread scaled by sqrt(m/n) (ci_method names m and n); no interval from fewer "
                                     f"than {MIN_TOKENS} tokens",
                            "cell": "Student's t over repetitions (none from one repetition)",
                            "slope": "Theil-Sen over each series' own floors (its minimum after each of its drops, "
                                     "harness/stats/floors.py; at least 3 floors), Sen's CI widened to at least one "
                                     "token's growth over the floors' span; else the rate between drops; no slope from "
                                     "fewer than 10 positions",
                            "significance": "counts of calls (createBindGroup, dispatches, submits…: the same code gives the "
                                            "same counts): the difference's interval excludes 0, or, the same count on "
                                            "every step of each side ('exact', no interval), it is not 0; "
                                            "measured quantities (times, JS heap, counts of live objects, modeled bytes of "
                                            "live objects, growth slopes): Welch's t over per-repetition values, 2 "
                                            "repetitions a side at least (else 'within-run only', never significant); the "
                                            "differences decided by Welch's t are corrected together, per run or "
                                            "comparison, by Holm's step-down procedure (Holm 1979): one significant "
                                            "before it says after the correction over how many it stayed so or not; RSS "
                                            "of the browser's processes: never significant (a run's repetitions share "
                                            "them); any other zero-width interval is never significant",
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
    syncs = sorted({str(c) for cd in cells if "extra_config" in cd.steps and "extra_sync_us_samples" in cd.steps
                    for c in cd.steps.dropna(subset=["extra_sync_us_samples"])["extra_config"].dropna().unique()})
    names += [f"sync_us_{c}" for c in syncs]
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
    # a list parameter's values (upload's sizes) are never pooled in a per-step metric: per value
    parts: list[CellData] = []
    split: set[GroupKey] = set()
    for c in cells:
        column = None if c.key.workload in NOT_TOKENS else list_split(json.loads(c.key.params or "{}"), c.steps)
        if column:
            parts += parts_of(c, column)
            split.add(c.key)
    everyone = cells + parts
    groups: dict[GroupKey, GroupStats] = {}
    for key, members in groups_of(c for c in everyone if c.status in ("ok", *FAILED_STATUSES)).items():
        ok = [c for c in members if c.status == "ok"]
        env = {k: sorted({str(c.env.get(k)) for c in members if c.env.get(k)})
               for k in ("browser_version", "adapter", "webgpu", "machine", "os", "cpu")}
        est = {}
        mine = ([m for m in names if metric_kind(m) == "token"] if key.part else
                [m for m in names if metric_kind(m) != "token"] if key in split else names)
        for m in mine if ok else []:
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
                a = [c for c in everyone if c.key == ka and c.status == "ok"]
                b = [c for c in everyone if c.key == kb and c.status == "ok"]
                for m in names:
                    if m in groups[ka].metrics and m in groups[kb].metrics:
                        d = difference(a, b, m, warmup, confidence=confidence, a_label=ka.label, b_label=kb.label,
                                       ea=groups[ka].metrics[m], eb=groups[kb].metrics[m])
                        if d is not None:
                            diffs.append(d)
        holm(diffs)  # one run's measured verdicts corrected together
    return RunStats(warmup, confidence, groups, diffs, cells, parts=parts, split=split)
