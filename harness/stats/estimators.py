"""Estimators: every confidence interval of the harness comes from here (scipy only).

``scipy.stats.bootstrap`` (one- and two-sample), Student's t (``ttest_1samp``), Theil–Sen
(``theilslopes``) with Sen's interval. Nothing is hand-rolled beyond choosing which applies.
A little over 400 lines: every interval of the harness is here, so that one module says how each
is made (the block bootstrap's m-out-of-n resampling included).
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from typing import Iterable

import numpy as np
from scipy import stats as sps

#: Confidence level of every interval.
CONFIDENCE = 0.95
#: Bootstrap resamples. 2000 puts the Monte-Carlo error of a 95% percentile bound well below
#: the interval's own width (Efron & Tibshirani 1993, ch. 19: 1000–2000 for intervals).
N_RESAMPLES = 2000
#: Above this many samples the BCa jackknife (O(n²)) is replaced by the percentile method.
BCA_MAX_N = 1000
#: Theil–Sen is O(n²) in points; longer series are thinned evenly to this many.
THEILSEN_MAX_POINTS = 1500
#: Seed of the bootstrap's generator, so a report is reproducible from its run folder.
SEED = 0
#: Above this many tokens (a group's, or one side's of a difference) the block bootstrap draws
#: m-out-of-n resamples of this many tokens and scales their spread to the data's size
#: (:func:`_resampled_stat`), so its cost stops growing with the run. Measured on AR(1) series
#: (phi 0.6) of 4,000 and 20,000 tokens in 4 repetitions: the bounds of the m-out-of-n
#: interval with m = 1,000 differ from those of the full bootstrap by 4.8% of its width on
#: average (10% at most), where two seeds of the full bootstrap differ by 2-5% (the Monte-Carlo
#: error of 2,000 resamples); both are under 0.1% of the bounds themselves.
SUBSAMPLE_TOKENS = 1000
#: Fewest values a bootstrap interval of a per-token statistic is drawn from (per group, per side
#: of a difference): with fewer, the percentile bounds are two of a handful of values and the
#: block length is 1 or 2. Fewer: the value is given with "too few samples (n=K)".
MIN_TOKENS = 10
#: ``ci_method`` of a per-repetition estimate or difference with fewer than 2 repetitions on a side.
NO_INTERVAL_N1 = "n=1: no interval"


def stat_fn(stat: str):
    if stat == "mean":
        return lambda x, axis=-1: np.mean(x, axis=axis)
    if stat == "median":
        return lambda x, axis=-1: np.median(x, axis=axis)
    m = re.fullmatch(r"p(\d{1,2})", stat)
    if m:
        q = int(m.group(1))
        return lambda x, axis=-1: np.percentile(x, q, axis=axis)
    if stat in ("min", "max"):
        return lambda x, axis=-1: getattr(np, stat)(x, axis=axis)
    raise ValueError(f"unknown statistic {stat!r} (valid: mean, median, min, max, p1..p99)")


def rng(seed: int = SEED) -> np.random.Generator:
    return np.random.default_rng(seed)


def batch(n: int) -> int:
    """Resamples per vectorised batch so one batch holds ~5 M floats."""
    return max(1, int(5_000_000 // max(n, 1)))


def bootstrap_ci(samples: Iterable[float], stat: str = "mean", confidence: float = CONFIDENCE,
                 seed: int = SEED) -> tuple[float | None, float | None, str]:
    """95% CI of ``stat`` of one sample by ``scipy.stats.bootstrap``.

    ``samples``: 1-D, any length ≥ 1. Returns ``(low, high, method)``: BCa for the mean when
    n ≤ :data:`BCA_MAX_N` (percentile otherwise, and for quantiles: the BCa jackknife is unstable
    for medians); ``exact`` with low = high for constant samples; ``(None, None, "none")`` for
    n < 2 or for ``min``/``max`` (a bootstrap can't exceed the sample's extreme).
    Raises ``ValueError`` for an unknown ``stat``."""
    x = np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples, dtype=float)
    fn = stat_fn(stat)
    if len(x) and np.all(x == x[0]):
        return float(x[0]), float(x[0]), "exact"
    if len(x) < 2 or stat in ("min", "max"):
        return None, None, "none"
    method = "BCa" if stat == "mean" and len(x) <= BCA_MAX_N else "percentile"
    return boot((x,), fn, method, confidence, seed)


def boot(data: tuple, fn, method: str, confidence: float, seed: int):
    n = max(len(d) for d in data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback below
        res = sps.bootstrap(data, fn, vectorized=True, paired=False, confidence_level=confidence,
                            n_resamples=N_RESAMPLES, method=method, batch=batch(n), rng=rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if method == "BCa" and not (math.isfinite(lo) and math.isfinite(hi)):
            return boot(data, fn, "percentile", confidence, seed)
    return lo, hi, f"bootstrap-{method.lower()}"


def t_ci(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None, str]:
    """Student's t CI of the mean of independent values (one per repetition):
    ``scipy.stats.ttest_1samp(...).confidence_interval``. ``exact`` for 2 or more equal values;
    no interval (:data:`NO_INTERVAL_N1`) from a single value: one repetition says nothing about
    the next."""
    x = np.asarray(list(values), dtype=float)
    if len(x) < 2:
        return None, None, NO_INTERVAL_N1
    if np.all(x == x[0]):
        return float(x[0]), float(x[0]), "exact"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nearly constant values: precision-loss warning
        ci = sps.ttest_1samp(x, 0.0).confidence_interval(confidence)
    if not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return None, None, "none"
    return float(ci.low), float(ci.high), "t"


def theil_sen(x: Iterable[float], y: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None, float | None, int]:
    """Robust slope of y on x (units of y per unit of x) by ``scipy.stats.theilslopes``.

    Returns ``(slope, low, high, n_points)``; ``(None, None, None, n)`` when fewer than 3 points
    or fewer than 2 distinct x; low/high ``None`` when Sen's interval is undefined (heavy ties). Series longer than :data:`THEILSEN_MAX_POINTS` are thinned evenly
    (Theil–Sen takes the median of all O(n²) pairwise slopes)."""
    x = np.asarray(list(x), dtype=float)
    y = np.asarray(list(y), dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 3 or len(np.unique(x)) < 2:
        return None, None, None, n
    if np.all(y == y[0]):
        return 0.0, 0.0, 0.0, n
    if n > THEILSEN_MAX_POINTS:
        idx = np.linspace(0, n - 1, THEILSEN_MAX_POINTS).round().astype(int)
        x, y = x[idx], y[idx]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # heavy ties in x make Sen's variance negative → NaN bounds
        res = sps.theilslopes(y, x, alpha=confidence)
    lo, hi = float(res.low_slope), float(res.high_slope)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return float(res.slope), None, None, n
    return float(res.slope), lo, hi, n


def mean_t_ci(values: Iterable[float], confidence: float = CONFIDENCE,
              floor: float | None = None) -> tuple[float | None, float | None, float | None, int]:
    """Mean of ``values`` (NaN and None dropped) with its Student's t interval (:func:`t_ci`):
    ``(mean, low, high, n)``; low/high None with fewer than 2 values; every value equal gives
    low = high = mean. ``floor`` clips the low bound (e.g. 0 for times and ratios, where a t
    interval from few skewed values can dip below zero)."""
    v = np.asarray([x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))], dtype=float)
    if not len(v):
        return None, None, None, 0
    m = float(v.mean())
    lo, hi, _ = t_ci(v, confidence)
    if lo is not None and floor is not None:
        lo = max(floor, lo)
    return m, lo, hi, len(v)


def t_band(frame: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-column mean and Student's t interval of a (repetitions × tokens) array with NaN for
    missing values: ``(mean, low, high)``, NaN where a column has fewer than 2 values. The same
    interval as :func:`t_ci`, vectorised over tokens (``scipy.stats.t.ppf``)."""
    frame = np.asarray(frame, dtype=float)
    n = np.sum(~np.isnan(frame), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-NaN or single-value columns
        mean = np.nanmean(frame, axis=0)
        sd = np.nanstd(frame, axis=0, ddof=1)
    half = np.where(n >= 2, sps.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(np.maximum(n, 1)), np.nan)
    return mean, mean - half, mean + half


# ----------------------------------------------------------------------------------------------
# block bootstrap: per-token values of one browser context are correlated (a slow token is
# followed by slow ones: GC, thermal, a neighbour's load), so resampling single tokens as if they
# were independent draws makes intervals too narrow. The circular block bootstrap (Politis &
# Romano 1992) resamples runs of consecutive tokens instead. scipy has none, and the ``arch``
# package's (CircularBlockBootstrap) resamples one series, or aligned series, at a time, while
# ours pools several repetitions of different lengths (blocks never cross from one context into
# another) and takes two-sample differences; it would also bring statsmodels and three more
# packages for these ~40 lines of index arithmetic.


def block_length(n: int) -> int:
    """Block length for a series of ``n`` tokens: ⌈n^(1/3)⌉ (the order that minimises the
    error of block-bootstrap variance estimates: Hall, Horowitz & Jing 1995; Lahiri 2003, ch. 7),
    at least 1 and at most n/2, so that a resample is made of two blocks or more (one block of a
    circular series is the series itself, and every resample would be the same)."""
    return max(1, min(n // 2, int(math.ceil(n ** (1 / 3)))))


def block_resample(series: list[np.ndarray], n_resamples: int, rng_: np.random.Generator,
                   lengths: list[int] | None = None, iid: bool = False) -> np.ndarray:
    """Circular-block resamples of several series pooled: shape (n_resamples, total length).
    Each series is resampled on its own (blocks wrap around within it, never into another) with
    :func:`block_length` of its own length, then the pieces are concatenated. ``lengths``: how
    many values to draw from each series (default: its length; fewer for
    :func:`subsample_lengths`), still in blocks of its own length's :func:`block_length`
    (``iid``: blocks of one value, for values that are not a sequence)."""
    parts = []
    for i, x in enumerate(series):
        n = len(x)
        m = n if lengths is None else lengths[i]
        b = 1 if iid else block_length(n)
        k = int(math.ceil(m / b))
        starts = rng_.integers(0, n, size=(n_resamples, k), dtype=np.int32)  # the same draws as int64, half the bytes
        idx = (starts[:, :, None] + np.arange(b, dtype=np.int32)[None, None, :]).reshape(n_resamples, k * b)[:, :m]
        parts.append(x.take(idx, mode="wrap"))  # circular: an index past the end wraps to the start
    return np.concatenate(parts, axis=1)


def subsample_lengths(lengths: list[int], m: int | None = None) -> list[int] | None:
    """Tokens each series gives to an m-out-of-n resample: ``None`` (resample in full) when the
    series hold :data:`SUBSAMPLE_TOKENS` values or fewer together; else about ``m`` in all,
    shared in proportion to their lengths, at least two blocks of each."""
    m = SUBSAMPLE_TOKENS if m is None else m
    total = sum(lengths)
    if total <= m:
        return None
    return [min(n, max(2 * block_length(n), int(round(m * n / total)))) for n in lengths]


def _resampled_stat(series: list[np.ndarray], fn, rng_: np.random.Generator, n_resamples: int = N_RESAMPLES,
                    iid: bool = False) -> tuple[np.ndarray, int]:
    """``n_resamples`` values of ``fn`` over circular-block resamples of the pooled ``series`` and
    the number of tokens each resample held. Up to :data:`SUBSAMPLE_TOKENS` tokens every resample
    is as long as the data; above, each is an m-out-of-n resample (:func:`subsample_lengths`)
    whose statistic is scaled back to the data's size: θ̂ + √(m/n)·(θ*ₘ − θ̂), θ̂ the statistic of
    every token (Bickel, Götze & van Zwet 1997, "Resampling fewer than n observations"; the
    median, quantiles and the mean converge at the rate √n, so their spread scales by √(m/n)).
    The cost is that of at most :data:`SUBSAMPLE_TOKENS` tokens however long the run. ``iid``:
    single values are resampled, not blocks (values that are not a sequence)."""
    lengths = [len(x) for x in series]
    sub = subsample_lengths(lengths)
    m = sum(sub) if sub is not None else sum(lengths)
    step = batch(m)
    vals = np.concatenate([fn(block_resample(series, min(step, n_resamples - i), rng_, sub, iid), axis=-1)
                           for i in range(0, n_resamples, step)])
    if sub is not None:
        theta = float(fn(np.concatenate(series)))
        vals = theta + math.sqrt(m / sum(lengths)) * (vals - theta)
    return vals, m


def _method(m: int, n: int) -> str:
    return "block-bootstrap-percentile" if m >= n else f"block-bootstrap-m-of-n (m={m} of n={n} tokens)"


def _percentile_ci(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    values = values[np.isfinite(values)]
    if not len(values):
        return None, None
    a = (1 - confidence) / 2
    return float(np.quantile(values, a)), float(np.quantile(values, 1 - a))


def block_bootstrap_ci(series: list, stat: str = "median", confidence: float = CONFIDENCE, seed: int = SEED,
                       keep: list | None = None) -> tuple[float | None, float | None, str]:
    """95% CI of ``stat`` of the pooled ``series`` (one array per repetition, in token order) by
    the circular block bootstrap, percentile interval (:data:`N_RESAMPLES` resamples; above
    :data:`SUBSAMPLE_TOKENS` tokens m-out-of-n, :func:`_resampled_stat`: ``ci_method`` says so).
    ``exact`` for constant data, none for ``min``/``max``, no interval ("too few samples (n=K;
    needs 10)") from fewer than :data:`MIN_TOKENS` values. ``keep``: a list the m-out-of-n
    replicates and m are appended to (not below :data:`SUBSAMPLE_TOKENS` tokens), for
    :func:`diff_of_replicates`."""
    series = [np.asarray(x, dtype=float) for x in series if len(x)]
    pooled = np.concatenate(series) if series else np.array([])
    if len(pooled) and np.all(pooled == pooled[0]):
        return float(pooled[0]), float(pooled[0]), "exact"
    if stat in ("min", "max"):
        return None, None, "none"
    if len(pooled) < MIN_TOKENS:
        return None, None, f"too few samples (n={len(pooled)}; needs {MIN_TOKENS})"
    vals, m = _resampled_stat(series, stat_fn(stat), rng(seed))
    if keep is not None and m < len(pooled):
        keep.append((vals, m))
    lo, hi = _percentile_ci(vals, confidence)
    if lo is None or lo == hi:  # every resample alike from data that vary: no interval
        return None, None, "none"
    return lo, hi, _method(m, len(pooled))


def block_bootstrap_diff(a: list, b: list, stat: str = "median", confidence: float = CONFIDENCE, seed: int = SEED
                         ) -> tuple[tuple[float | None, float | None], tuple[float | None, float | None], str]:
    """95% CIs of ``stat(b) − stat(a)`` and ``stat(b) / stat(a) − 1`` for two independent groups
    of series (each a list of per-repetition arrays), each side resampled by
    :func:`block_resample` (m-out-of-n above :data:`SUBSAMPLE_TOKENS` tokens on a side,
    :func:`_resampled_stat`): ``((low, high), (rel_low, rel_high), method)``; the relative CI is
    ``(None, None)`` when a's statistic can be 0 (a value ≤ 0 in a); no interval from fewer
    than :data:`MIN_TOKENS` values on a side."""
    a = [np.asarray(x, dtype=float) for x in a if len(x)]
    b = [np.asarray(x, dtype=float) for x in b if len(x)]
    fn, r = stat_fn(stat), rng(seed)
    na, nb = sum(len(x) for x in a), sum(len(x) for x in b)
    if min(na, nb) < MIN_TOKENS:
        return (None, None), (None, None), f"too few samples (n={min(na, nb)}; needs {MIN_TOKENS} on each side)"
    if na + nb <= SUBSAMPLE_TOKENS:  # as it always was: both sides drawn batch by batch from one generator
        step = batch(na + nb)
        da, db = [], []
        for i in range(0, N_RESAMPLES, step):
            k = min(step, N_RESAMPLES - i)
            da.append(fn(block_resample(a, k, r), axis=-1))
            db.append(fn(block_resample(b, k, r), axis=-1))
        sa, sb = np.concatenate(da), np.concatenate(db)
        how = _method(na + nb, na + nb)
    else:
        (sa, ma), (sb, mb) = _resampled_stat(a, fn, r), _resampled_stat(b, fn, r)
        how = _method(ma + mb, na + nb)
    diff = _percentile_ci(sb - sa, confidence)
    if diff[0] is None or diff[0] == diff[1]:  # every resample alike from data that vary: no interval
        return (None, None), (None, None), "none"
    rel = (None, None)
    if np.all(np.concatenate(a) > 0):
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = _percentile_ci(sb / sa - 1, confidence)
    return diff, rel, how


def diff_of_replicates(a: tuple, b: tuple, na: int, nb: int, a_positive: bool, confidence: float = CONFIDENCE
                       ) -> tuple[tuple[float | None, float | None], tuple[float | None, float | None], str]:
    """:func:`block_bootstrap_diff`'s result from two groups' own m-out-of-n replicates
    (``(values, m)`` each, drawn with independent seeds: :func:`block_bootstrap_ci` ``keep``),
    for groups of ``na`` and ``nb`` tokens: no resampling again."""
    (sa, ma), (sb, mb) = a, b
    diff = _percentile_ci(sb - sa, confidence)
    if diff[0] is None or diff[0] == diff[1]:
        return (None, None), (None, None), "none"
    rel = (None, None)
    if a_positive:
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = _percentile_ci(sb / sa - 1, confidence)
    return diff, rel, _method(ma + mb, na + nb)


def median_diff_ci(a, b, confidence: float = CONFIDENCE, seed: int = SEED
                   ) -> tuple[float | None, float | None, str]:
    """95% CI of median(b) − median(a) for two independent samples of values that are not a
    sequence (e.g. tokens with and without a collection): ``scipy.stats.bootstrap``'s two-sample
    percentile interval up to :data:`SUBSAMPLE_TOKENS` values together, m-out-of-n resamples of
    single values above (:func:`_resampled_stat`); ``(None, None, why)`` with fewer than
    :data:`MIN_TOKENS` values on a side."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if min(len(a), len(b)) < MIN_TOKENS:
        return None, None, f"too few samples (n={min(len(a), len(b))}; needs {MIN_TOKENS} on each side)"
    if len(a) + len(b) <= SUBSAMPLE_TOKENS:
        return boot((a, b), lambda x, y, axis=-1: np.median(y, axis=axis) - np.median(x, axis=axis),
                    "percentile", confidence, seed)
    r = rng(seed)
    (sa, ma), (sb, mb) = _resampled_stat([a], stat_fn("median"), r, iid=True), _resampled_stat([b], stat_fn("median"), r, iid=True)
    lo, hi = _percentile_ci(sb - sa, confidence)
    return lo, hi, f"bootstrap-m-of-n (m={ma + mb} of n={len(a) + len(b)})"


@functools.lru_cache(maxsize=256)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair i < j of n points (``np.triu_indices``), kept: stretches of one length recur."""
    i, j = np.triu_indices(n, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


def stratified_theil_sen(strata: list, confidence: float = CONFIDENCE
                         ) -> tuple[float | None, float | None, float | None, int]:
    """Theil–Sen slope over several series (``strata``: ``(x, y)`` pairs, e.g. repetitions, or
    the stretches between collections) using pairs within a series only, so that offsets between
    series never count as slope: the median of every within-series pairwise slope. Its CI is
    Sen's (1968), from the sum of the series' Kendall statistics, independent series adding
    their variances n(n−1)(2n+5)/18 (ties ignored). Returns ``(slope, low, high, points)``;
    ``(None, None, None, points)`` without a pair of distinct x; low/high None with fewer than 3 pairs
    (two floors give one pair: never a zero-width interval, so never "significant")."""
    slopes, var, points = [], 0.0, 0
    for x, y in strata:
        x, y = np.asarray(x, float), np.asarray(y, float)
        ok = np.isfinite(x) & np.isfinite(y)
        x, y = x[ok], y[ok]
        if len(x) > THEILSEN_MAX_POINTS:
            idx = np.linspace(0, len(x) - 1, THEILSEN_MAX_POINTS).round().astype(int)
            x, y = x[idx], y[idx]
        points += len(x)
        if len(x) < 2:
            continue
        i, j = _pairs(len(x))
        dx = x[j] - x[i]
        keep = dx != 0
        slopes.append((y[j] - y[i])[keep] / dx[keep])
        n = len(x)
        var += n * (n - 1) * (2 * n + 5) / 18
    allp = np.sort(np.concatenate(slopes)) if slopes else np.array([])
    if not len(allp):
        return None, None, None, points
    slope = float(np.median(allp))
    if len(allp) < 3:  # one or two pairs: a slope, but nothing to say how far off it may be
        return slope, None, None, points
    if np.all(allp == allp[0]):  # every pair agrees (a count that grows by the same each step)
        return slope, slope, slope, points
    c = sps.norm.ppf(0.5 + confidence / 2) * math.sqrt(var)
    n_pairs = len(allp)
    lo_i = int(np.clip(math.floor((n_pairs - c) / 2), 0, n_pairs - 1))
    hi_i = int(np.clip(math.ceil((n_pairs + c) / 2), 0, n_pairs - 1))
    return slope, float(allp[lo_i]), float(allp[hi_i]), points
