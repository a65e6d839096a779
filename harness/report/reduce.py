"""Long series reduced for drawing; the CSV files keep every sample.

A chart cannot show more points than it has pixels across. A series longer than the points a
chart draws is reduced with MinMaxLTTB (tsdownsample, a Rust implementation: Van Der Donckt et
al., "MinMaxLTTB: Leveraging MinMax-Preselection to Scale LTTB", 2023): the min and max of each
of ``n_out × 4`` buckets are preselected, then Largest-Triangle-Three-Buckets keeps the
``n_out`` points that preserve the curve's shape — so spikes (a GC pause, a collection drop)
stay visible, unlike with averaging or striding. The first and last points are always kept.

A confidence band (a low and a high bound per x) is reduced to an envelope instead: per bucket
the lowest low and the highest high, so the drawn band is never narrower than the data's.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from tsdownsample import MinMaxLTTBDownsampler

#: Points drawn per trace on a chart as wide as the page (a plot area of ~1,100 px): one per two
#: pixels — MinMaxLTTB keeps each bucket's extremes, so a spike narrower than that still shows.
FULL_WIDTH_POINTS = 600
#: Points drawn per trace in one panel of a row of small multiples.
PANEL_POINTS = 300

_LTTB = MinMaxLTTBDownsampler()


def series(x: Sequence[float], y: Sequence[float], n_out: int = FULL_WIDTH_POINTS) -> tuple[list, list]:
    """``(x, y)`` as lists, reduced to at most ``n_out`` points (≥ 3) by MinMaxLTTB when longer;
    NaN values are dropped first. ``x`` must be increasing (tokens, seconds)."""
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    keep = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[keep], ya[keep]
    if len(xa) > max(n_out, 3):
        idx = _LTTB.downsample(xa, ya, n_out=max(n_out, 3))
        xa, ya = xa[idx], ya[idx]
    return _plain(xa), _plain(ya)


def envelope(x: Sequence[float], low: Sequence[float], high: Sequence[float],
             n_out: int = FULL_WIDTH_POINTS) -> tuple[list, list, list]:
    """A band ``(x, low, high)`` reduced to at most ``n_out`` buckets of equal count: each
    bucket's first x, lowest low and highest high."""
    xa, lo, hi = (np.asarray(v, dtype=float) for v in (x, low, high))
    if len(xa) <= n_out:
        return _plain(xa), _plain(lo), _plain(hi)
    edges = np.linspace(0, len(xa), n_out + 1).astype(int)
    starts = edges[:-1]
    return (_plain(xa[starts]), _plain(np.minimum.reduceat(lo, starts)), _plain(np.maximum.reduceat(hi, starts)))


def _plain(a: np.ndarray) -> list:
    """Integers stay integers (tokens), so the embedded JSON stays short."""
    if len(a) and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
        return [int(v) for v in a]
    return [float(v) for v in a]
