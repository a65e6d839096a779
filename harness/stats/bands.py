"""What the report's per-token charts draw beside each cell's series: per group, the 95%
t-interval across repetitions at each token and the headline estimate after warm-up
(computed here, drawn by harness/report/charts.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.stats.estimators import t_band
from harness.stats.memory import floor_points
from harness.stats.metrics import growth_series
from harness.stats.run import Estimate, RunStats

#: steps.csv column of a per-token chart → the metric whose estimate it shows.
CHART_METRICS = {"wall_ms": "ms_per_token", "create_bind_group": "bind_groups_per_token",
                 "bind_groups_live": "live_bind_groups_growth_per_token"}


@dataclass
class Band:
    """What a per-token chart shows for one group: ``repetitions`` — per token, the mean across
    ≥ 2 repetitions and its 95% t-interval clipped at 0 (``x``, ``low``, ``high``; every charted
    quantity is ≥ 0); ``estimate`` — the group's headline :class:`Estimate` after warm-up, with
    ``x0``/``x1`` its token span and, for a slope, ``intercept`` of the Theil–Sen line."""

    group: str
    variant: str
    n_reps: int
    x: list[int]
    low: list[float]
    high: list[float]
    estimate: Estimate | None
    x0: int
    x1: int
    intercept: float | None = None


def chart_bands(run: RunStats, column: str) -> list[Band]:
    """:class:`Band` per group with ok cells for the per-token chart of ``column``
    (:data:`CHART_METRICS`); empty for other columns."""
    metric = CHART_METRICS.get(column)
    out: list[Band] = []
    if metric is None:
        return out
    for key, g in run.groups.items():
        if not g.cells:
            continue
        cells = run.ok_cells(key)
        per = [c.steps.set_index("step")[column].dropna() for c in cells if column in c.steps]
        per = [p for p in per if len(p)]
        xs: list[int] = []
        lo: list[float] = []
        hi: list[float] = []
        if len(per) >= 2:
            width = int(max(int(p.index.max()) + 1 for p in per))
            frame = np.vstack([p.reindex(range(width)).to_numpy(float) for p in per])
            _, low, high = t_band(frame, run.confidence)
            ok = ~np.isnan(low)
            xs = [int(v) for v in np.arange(width)[ok]]
            lo = [float(max(v, 0.0)) for v in low[ok]]
            hi = [float(v) for v in high[ok]]
        e = g.metrics.get(metric)
        steps = [c.steps for c in cells if len(c.steps)]
        if not steps:
            continue
        last = max(int(s["step"].max()) for s in steps)
        icpt = None
        if e is not None and e.value is not None and e.kind == "slope":
            # the growth line goes through the floors it was fitted to (harness/stats/memory.py)
            pts = [floor_points(c, growth_series(metric) or "", run.warmup) for c in cells]
            xv = np.concatenate([p.x for p in pts]) if pts else np.array([])
            ys = np.concatenate([p.y for p in pts]) if pts else np.array([])
            icpt = float(np.median(ys - e.value * xv)) if len(xv) else None
            if icpt is None:
                e = None
        out.append(Band(key.label, key.variant, len(per), xs, lo, hi, e if e is not None and e.value is not None else None,
                        run.warmup, last, icpt))
    return out
