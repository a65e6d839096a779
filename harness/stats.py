"""Statistics of a run: per-metric estimates with 95% confidence intervals, differences between
variants, memory growth slopes, and the auto-sample stopping condition.

Everything is computed with scipy (``scipy.stats.bootstrap``, ``ttest_1samp``, ``ttest_ind``,
``theilslopes``); nothing is hand-rolled beyond choosing which one applies.

Units of data
    A *cell* is one browser context running one workload variant for ``tokens`` tokens
    (``repetition`` r). A *group* is every ``ok`` cell of the same machine × browser × workload
    × variant × profile × parameters, i.e. the repetitions of one configuration.

Three kinds of metric (:data:`TOKEN_METRICS`, :func:`metric_kind`):
    ``token``  one value per token after the warm-up (``ms_per_token``, ``bind_groups_per_token``…),
               pooled over the group's repetitions. Point estimate: the median (robust to GC
               pauses, and what ``summary.csv`` reports); also the mean. 95% CI by bootstrap over
               tokens: BCa for the mean, percentile for the median and other quantiles.
    ``cell``   one value per repetition (``live_bind_groups_max``, ``peak_rss_bytes_<type>``).
               Point estimate: the mean over repetitions, CI by Student's t (needs ≥ 2 repetitions).
    ``slope``  growth per token (``live_bind_groups_growth_per_token``,
               ``rss_growth_bytes_per_token_<type>``): one Theil–Sen fit over the group's series, each
               repetition centred on its own median first so offsets between contexts don't count
               as growth; CI from Sen's method (``theilslopes``' ``low_slope``/``high_slope``).

Warm-up: tokens ``0 .. warmup-1`` are discarded (default 1: token 0 compiles pipelines and fills
caches, the same rule as ``summary.csv``). A budget's ``after token N`` sets ``warmup = N + 1``.

Caveat, stated in the report: tokens of one context are not independent draws, so a token-level
CI describes the run's tokens; repetitions in fresh contexts (``--repeat``, round-robin across
variants) are what make drift and context-to-context variation show up in it.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Iterable

import numpy as np
import pandas as pd
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
#: Default warm-up: token 0 is excluded (RESULTS.md: "tokens after the first").
DEFAULT_WARMUP = 1
#: Seed of the bootstrap's generator, so a report is reproducible from its run folder.
SEED = 0

#: Per-token metrics: name → (steps.csv column, unit).
TOKEN_METRICS: dict[str, tuple[str, str]] = {
    "ms_per_token": ("wall_ms", "ms"),
    "cpu_ms_per_token": ("cpu_ms", "ms"),
    "bind_groups_per_token": ("create_bind_group", "calls"),
    "dispatches_per_token": ("dispatch_workgroups", "calls"),
    "submits_per_token": ("submit", "calls"),
    "write_buffers_per_token": ("write_buffer", "calls"),
    "write_buffer_bytes_per_token": ("write_buffer_bytes", "bytes"),
    "buffers_created_per_token": ("create_buffer", "calls"),
}
#: Per-cell metrics from steps.csv: name → (column, reducer, unit).
#: ``modeled_native_*``: emulated WebGPU's memory model (tables.EMULATION_COLUMNS); absent when real.
CELL_STEP_METRICS: dict[str, tuple[str, str, str]] = {
    "live_bind_groups_max": ("bind_groups_live", "max", "bind groups"),
    "live_bind_groups_end": ("bind_groups_live", "last", "bind groups"),
    "live_buffers_max": ("buffers_live", "max", "buffers"),
    "modeled_native_bytes_max": ("modeled_native_bytes", "max", "bytes"),
}
#: Growth slopes from steps.csv: name → (column, unit).
STEP_SLOPES: dict[str, tuple[str, str]] = {
    "live_bind_groups_growth_per_token": ("bind_groups_live", "bind groups/token"),
    "live_buffers_growth_per_token": ("buffers_live", "buffers/token"),
    "modeled_native_growth_bytes_per_token": ("modeled_native_bytes", "bytes/token"),
}
#: Metrics whose name carries a process type (Chrome's ``--type``) or ``all``.
PATTERN_METRICS = {
    "peak_rss_bytes_": ("cell", "bytes"),
    "rss_growth_bytes_per_token_": ("slope", "bytes/token"),
}
OTHER_METRICS = {"js_heap_bytes_max": ("cell", "bytes"), "js_heap_growth_bytes_per_token": ("slope", "bytes/token")}
#: Statistics a budget may name; ``pNN`` is the NN-th percentile.
STATS = ("median", "mean", "min", "max")
#: Metrics shown first in tables, in this order.
HEADLINE = ["ms_per_token", "bind_groups_per_token", "dispatches_per_token", "submits_per_token",
            "live_bind_groups_max", "live_bind_groups_growth_per_token", "rss_growth_bytes_per_token_all"]


def metric_kind(name: str) -> str | None:
    """``token``, ``cell`` or ``slope`` for a metric name, ``None`` if unknown.
    ``extra_<name>`` (a workload's own per-step number) is a ``token`` metric."""
    if name in TOKEN_METRICS or re.fullmatch(r"extra_[a-z0-9_]+", name):
        return "token"
    if name in CELL_STEP_METRICS:
        return "cell"
    if name in STEP_SLOPES:
        return "slope"
    if name in OTHER_METRICS:
        return OTHER_METRICS[name][0]
    for prefix, (kind, _) in PATTERN_METRICS.items():
        if name.startswith(prefix) and re.fullmatch(r"[A-Za-z0-9_-]+", name[len(prefix):]):  # WebKitWebProcess
            return kind
    return None


def deterministic(name: str) -> bool:
    """Whether equal repetitions of a metric mean it has no noise (WebGPU call counts, live
    objects, modeled bytes), so a difference between two all-equal samples is exact. Times and
    measured memory (RSS, JS heap) are never treated so: all-equal samples there give no CI."""
    return not (name in ("ms_per_token", "cpu_ms_per_token") or name.startswith(("peak_rss_bytes_", "rss_growth_", "js_heap_")))


def metric_unit(name: str) -> str:
    """Unit of a metric (``ms``, ``calls``, ``bytes``, ``bytes/token``…)."""
    for table in (TOKEN_METRICS, STEP_SLOPES):
        if name in table:
            return table[name][1]
    if name in CELL_STEP_METRICS:
        return CELL_STEP_METRICS[name][2]
    if name in OTHER_METRICS:
        return OTHER_METRICS[name][1]
    for prefix, (_, unit) in PATTERN_METRICS.items():
        if name.startswith(prefix):
            return unit
    return "" if not name.startswith("extra_") else "value"


def valid_metric_names() -> list[str]:
    """Names for error messages (patterned names shown with ``<type>``)."""
    return [*TOKEN_METRICS, "extra_<name>", *CELL_STEP_METRICS, *STEP_SLOPES, *OTHER_METRICS,
            "peak_rss_bytes_<process type|all>", "rss_growth_bytes_per_token_<process type|all>"]


# ----------------------------------------------------------------------------------------------
# groups and cells


@dataclass(frozen=True)
class GroupKey:
    """Identity of a group. ``params`` is the cell's parameters as sorted JSON; ``machine`` is
    empty in a single run and the source label in a merged run (``webgpu-harness merge``)."""

    browser: str
    workload: str
    variant: str
    profile: str
    params: str = "{}"
    machine: str = ""

    @property
    def label(self) -> str:
        """``chromium/decode-loop/fresh@tiny`` (``machine:`` prefix when merged)."""
        base = f"{self.browser}/{self.workload}/{self.variant}@{self.profile}"
        return f"{self.machine}:{base}" if self.machine else base

    def with_variant(self, variant: str) -> "GroupKey":
        """The same key with another variant (a budget's reference)."""
        return GroupKey(self.browser, self.workload, variant, self.profile, self.params, self.machine)

    @property
    def family(self) -> tuple:
        """Everything but the variant: cells whose variants are compared with each other."""
        return (self.machine, self.browser, self.workload, self.profile, self.params)


@dataclass
class CellData:
    """One cell's rows. ``env``: browser_version, adapter, webgpu (and machine facts if merged)."""

    cell: str
    key: GroupKey
    repetition: int
    status: str
    reason: str
    env: dict
    steps: pd.DataFrame
    memory: pd.DataFrame


def group_key(cell: dict) -> GroupKey:
    """The :class:`GroupKey` of a manifest ``cells`` entry."""
    params = {k: v for k, v in (cell.get("params") or {}).items()}
    return GroupKey(str(cell.get("browser")), str(cell.get("workload")), str(cell.get("variant")),
                    str(cell.get("profile") or "default"), json.dumps(params, sort_keys=True, default=str),
                    str(cell.get("machine") or ""))


def cells_of(tables) -> list[CellData]:
    """Every manifest cell of a :class:`harness.tables.Tables` with its steps and memory rows."""
    steps = tables.steps.groupby("cell") if len(tables.steps) else None
    memory = tables.memory.groupby("cell") if len(tables.memory) else None
    out = []
    for c in tables.manifest.get("cells", []):
        cid = c["cell"]
        st = steps.get_group(cid) if steps is not None and cid in steps.groups else tables.steps.iloc[0:0]
        mem = memory.get_group(cid) if memory is not None and cid in memory.groups else tables.memory.iloc[0:0]
        env = {k: c.get(k) or "" for k in ("browser_version", "adapter", "webgpu", "machine", "os", "cpu")}
        out.append(CellData(cid, group_key(c), int(c.get("repetition") or 0), c.get("status", ""),
                            c.get("reason", ""), env, st.sort_values("step"), mem))
    return out


def groups_of(cells: Iterable[CellData]) -> dict[GroupKey, list[CellData]]:
    """Cells by group, in first-seen order (the plan's order)."""
    out: dict[GroupKey, list[CellData]] = {}
    for c in cells:
        out.setdefault(c.key, []).append(c)
    return out


# ----------------------------------------------------------------------------------------------
# per-cell extraction


def token_values(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> np.ndarray:
    """Per-token values (float array, shape (tokens - warmup,)) of a ``token`` metric."""
    column = TOKEN_METRICS[metric][0] if metric in TOKEN_METRICS else metric
    s = cell.steps
    if column not in s:
        return np.array([], dtype=float)
    return s.loc[s["step"] >= warmup, column].dropna().to_numpy(dtype=float)


def _memory_rounds(mem: pd.DataFrame) -> pd.DataFrame:
    """psutil samples → one row per sampling round: columns ``token``, ``time_s`` and one total
    RSS column per process type plus ``all``. A round ends when a pid is seen again."""
    rows: list[dict] = []
    seen: set = set()
    cur: dict = {}
    for r in mem.itertuples(index=False):
        if r.pid in seen:
            rows.append(cur)
            seen, cur = set(), {}
        seen.add(r.pid)
        cur.setdefault("token", r.token)
        cur.setdefault("time_s", r.time_s)
        cur[r.process_type] = cur.get(r.process_type, 0.0) + float(r.rss_bytes)
        cur["all"] = cur.get("all", 0.0) + float(r.rss_bytes)
    if cur:
        rows.append(cur)
    return pd.DataFrame(rows)


def _rss(cell: CellData) -> pd.DataFrame:
    mem = cell.memory
    if not len(mem):
        return pd.DataFrame()
    return _memory_rounds(mem[(mem["source"] == "psutil") & mem["rss_bytes"].notna()])


def cell_value(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> float | None:
    """A ``cell`` metric of one cell, or ``None`` when the cell has no data for it.
    Peaks use every sample from token ``warmup - 1`` on (the whole cell by default)."""
    if metric in CELL_STEP_METRICS:
        column, how, _ = CELL_STEP_METRICS[metric]
        s = cell.steps
        vals = s.loc[s["step"] >= warmup - 1, column].dropna() if column in s else pd.Series(dtype=float)
        if not len(vals):
            return None
        return float(vals.max() if how == "max" else vals.iloc[-1])
    since = warmup - 1
    if metric == "js_heap_bytes_max":
        m = cell.memory
        m = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna()] if len(m) else m
        m = m[m["token"].fillna(-1) >= since] if since > 0 and len(m) else m
        return float(m["js_heap_bytes"].max()) if len(m) else None
    if metric.startswith("peak_rss_bytes_"):
        ptype = metric[len("peak_rss_bytes_"):]
        rounds = _rss(cell)
        if since > 0 and len(rounds):
            rounds = rounds[rounds["token"].fillna(-1) >= since]
        if ptype not in rounds or not rounds[ptype].notna().any():
            return None
        # as summary.csv: per sampling round, the RSS summed over that type's processes
        return float(rounds[ptype].max())
    raise KeyError(metric)


def slope_series(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> tuple[np.ndarray, np.ndarray]:
    """(token, value) arrays of a ``slope`` metric for one cell, tokens ≥ ``warmup``."""
    if metric in STEP_SLOPES:
        column = STEP_SLOPES[metric][0]
        s = cell.steps
        if column not in s:
            return np.array([]), np.array([])
        s = s[(s["step"] >= warmup) & s[column].notna()]
        return s["step"].to_numpy(float), s[column].to_numpy(float)
    if metric == "js_heap_growth_bytes_per_token":
        m = cell.memory
        if not len(m):
            return np.array([]), np.array([])
        m = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna() & (m["token"].fillna(-1) >= warmup)]
        return m["token"].to_numpy(float), m["js_heap_bytes"].to_numpy(float)
    ptype = metric[len("rss_growth_bytes_per_token_"):]
    rounds = _rss(cell)
    if ptype not in rounds or "token" not in rounds:
        return np.array([]), np.array([])
    rounds = rounds[(rounds["token"].fillna(-1) >= warmup) & rounds[ptype].notna()]
    return rounds["token"].to_numpy(float), rounds[ptype].to_numpy(float)


# ----------------------------------------------------------------------------------------------
# estimators


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

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as ``None``)."""
        return {k: _clean(v) for k, v in asdict(self).items()}


def _clean(v):
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def _stat_fn(stat: str):
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
    raise ValueError(f"unknown statistic {stat!r} (valid: {', '.join(STATS)}, p1..p99)")


def _rng(seed: int = SEED) -> np.random.Generator:
    return np.random.default_rng(seed)


def _batch(n: int) -> int:
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
    fn = _stat_fn(stat)
    if len(x) and np.all(x == x[0]):
        return float(x[0]), float(x[0]), "exact"
    if len(x) < 2 or stat in ("min", "max"):
        return None, None, "none"
    method = "BCa" if stat == "mean" and len(x) <= BCA_MAX_N else "percentile"
    return _boot((x,), fn, method, confidence, seed)


def _boot(data: tuple, fn, method: str, confidence: float, seed: int):
    n = max(len(d) for d in data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback below
        res = sps.bootstrap(data, fn, vectorized=True, paired=False, confidence_level=confidence,
                            n_resamples=N_RESAMPLES, method=method, batch=_batch(n), rng=_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if method == "BCa" and not (math.isfinite(lo) and math.isfinite(hi)):
            return _boot(data, fn, "percentile", confidence, seed)
    return lo, hi, f"bootstrap-{method.lower()}"


def t_ci(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[float | None, float | None, str]:
    """Student's t CI of the mean of independent values (one per repetition):
    ``scipy.stats.ttest_1samp(...).confidence_interval``. ``exact`` for constant values,
    ``none`` for fewer than 2."""
    x = np.asarray(list(values), dtype=float)
    if len(x) and np.all(x == x[0]):
        return float(x[0]), float(x[0]), "exact"
    if len(x) < 2:
        return None, None, "none"
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


def default_stat(metric: str) -> str:
    """The statistic a metric's headline value (and a budget without ``stat(...)``) uses."""
    kind = metric_kind(metric)
    return {"token": "median", "cell": "mean", "slope": "slope"}.get(kind or "", "median")


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
        lo, hi, how = bootstrap_ci(x, stat, confidence)
        return Estimate(metric, kind, unit, stat, float(_stat_fn(stat)(x)), lo, hi, how, len(x), len(per),
                        float(np.median(x)), float(np.mean(x)), warmup,
                        [float(_stat_fn(stat)(p)) for p in per])
    if kind == "cell":
        vals = [v for v in (cell_value(c, metric, warmup) for c in cells) if v is not None]
        if not vals:
            return None
        x = np.asarray(vals)
        if stat == "mean":
            lo, hi, how = t_ci(x, confidence)
        elif stat in ("min", "max"):
            lo, hi, how = None, None, "none"
        else:
            lo, hi, how = bootstrap_ci(x, stat, confidence) if len(x) >= 5 else (None, None, "none")
        return Estimate(metric, kind, unit, stat, float(_stat_fn(stat)(x)), lo, hi, how, len(x), len(x),
                        float(np.median(x)), float(np.mean(x)), warmup, [float(v) for v in vals])
    # slope: one fit over every repetition, each centred on its own median
    xs, ys, per = [], [], []
    for c in cells:
        x, y = slope_series(c, metric, warmup)
        if len(x) >= 2:
            xs.append(x)
            ys.append(y - np.median(y))
            per.append(theil_sen(x, y, confidence)[0])
    if not xs:
        return None
    slope, lo, hi, n = theil_sen(np.concatenate(xs), np.concatenate(ys), confidence)
    if slope is None:
        return None
    pooled = np.concatenate(ys)
    how = "none" if lo is None else ("exact" if np.all(pooled == pooled[0]) else "theil-sen")
    return Estimate(metric, kind, unit, "slope", slope, lo, hi, how, n, len(xs), None, None, warmup, per)


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
        return {k: _clean(v) for k, v in asdict(self).items()}


def _rel(b: float, a: float) -> float | None:
    return None if a == 0 else b / a - 1


def difference(a_cells: list[CellData], b_cells: list[CellData], metric: str, warmup: int = DEFAULT_WARMUP,
               stat: str | None = None, confidence: float = CONFIDENCE, a_label: str = "a",
               b_label: str = "b") -> Difference | None:
    """:class:`Difference` of ``metric`` between two groups' cells (``b − a``), ``None`` when
    either has no data. Token metrics: two-sample bootstrap (independent samples) of
    ``stat(b) − stat(a)`` and ``stat(b)/stat(a) − 1``. Cell metrics: Welch's t
    (``scipy.stats.ttest_ind(equal_var=False)``), relative CI = diff CI ÷ value(a). Slopes: see
    :class:`Difference`."""
    kind = metric_kind(metric)
    stat = stat or default_stat(metric)
    ea = estimate(a_cells, metric, warmup, stat, confidence)
    eb = estimate(b_cells, metric, warmup, stat, confidence)
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
            fn = _stat_fn(stat)
            method = "BCa" if stat == "mean" and max(len(xa), len(xb)) <= BCA_MAX_N else "percentile"
            lo, hi, how = _boot((xa, xb), lambda x, y, axis=-1: fn(y, axis=axis) - fn(x, axis=axis),
                                method, confidence, SEED)
            if ea.value != 0 and np.all(xa > 0):
                rlo, rhi, _ = _boot((xa, xb), lambda x, y, axis=-1: fn(y, axis=axis) / fn(x, axis=axis) - 1,
                                    method, confidence, SEED)
    elif kind == "cell":
        va, vb = np.asarray(ea.per_rep), np.asarray(eb.per_rep)
        if np.all(va == va[0]) and np.all(vb == vb[0]) and stat == "mean":
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
            rlo, rhi = sorted((lo / ea.value, hi / ea.value))
    else:
        if None not in (ea.ci_low, ea.ci_high, eb.ci_low, eb.ci_high):
            below = math.hypot(eb.value - eb.ci_low, ea.ci_high - ea.value)
            above = math.hypot(eb.ci_high - eb.value, ea.value - ea.ci_low)
            lo, hi, how = d - below, d + above, "theil-sen-combined"
            if ea.value != 0:
                rlo, rhi = sorted((lo / ea.value, hi / ea.value))
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
    variant pair (every pair within one family, the plan's earlier variant as ``a``) and metric."""

    warmup: int
    confidence: float
    groups: dict[GroupKey, GroupStats]
    differences: list[Difference]
    cells: list[CellData] = field(repr=False, default_factory=list)

    def ok_cells(self, key: GroupKey) -> list[CellData]:
        """The ok cells of group ``key`` (empty when it has none)."""
        return [c for c in self.cells if c.key == key and c.status == "ok"]

    def to_dict(self) -> dict:
        """``stats.json``'s body: settings, methods, groups and differences."""
        return {"warmup_steps": self.warmup, "confidence": self.confidence,
                "methods": {"token": "bootstrap over tokens after warm-up (BCa for mean, percentile for median)",
                            "cell": "Student's t over repetitions", "slope": "Theil-Sen, Sen's CI",
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
                     for p in cd.memory.loc[cd.memory["source"] == "psutil", "process_type"].dropna().unique()})
    names += [f"peak_rss_bytes_{p}" for p in ptypes] + [f"rss_growth_bytes_per_token_{p}" for p in ptypes]
    if ptypes:
        names += ["peak_rss_bytes_all", "rss_growth_bytes_per_token_all"]
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
    for key, members in groups_of(c for c in cells if c.status in ("ok", "failed")).items():
        ok = [c for c in members if c.status == "ok"]
        env = {k: sorted({str(c.env.get(k)) for c in members if c.env.get(k)})
               for k in ("browser_version", "adapter", "webgpu", "machine", "os", "cpu")}
        est = {}
        for m in names if ok else []:
            e = estimate(ok, m, warmup, confidence=confidence)
            if e is not None:
                est[m] = e
        groups[key] = GroupStats(key, [c.cell for c in ok], [c.cell for c in members if c.status == "failed"],
                                 {k: v for k, v in env.items() if v}, est)
    diffs: list[Difference] = []
    if differences:
        families: dict[tuple, list[GroupKey]] = {}
        for key, g in groups.items():
            if g.cells:
                families.setdefault(key.family, []).append(key)
        for keys in families.values():
            for ka, kb in combinations(keys, 2):
                a, b = [c for c in cells if c.key == ka and c.status == "ok"], [c for c in cells if c.key == kb and c.status == "ok"]
                for m in names:
                    if m in groups[ka].metrics and m in groups[kb].metrics:
                        d = difference(a, b, m, warmup, confidence=confidence, a_label=ka.label, b_label=kb.label)
                        if d is not None:
                            diffs.append(d)
    return RunStats(warmup, confidence, groups, diffs, cells)


# ----------------------------------------------------------------------------------------------
# auto-sample stopping condition (tachometer's --auto-sample-conditions)


@dataclass(frozen=True)
class Condition:
    """A threshold the difference's CI must clear: ``value`` in percent (``relative``) or ms.
    ``0%`` asks "is b faster or slower than a?", ``5%`` asks both "is it more than 5% faster?"
    and "more than 5% slower?" (unsigned thresholds apply as ±; a signed one only as given)."""

    value: float
    relative: bool
    signed: bool

    def thresholds(self) -> list[float]:
        """Thresholds as fractions (relative) or ms: ``[-v, v]`` unsigned, ``[v]`` signed or 0."""
        v = self.value / 100 if self.relative else self.value
        return [v] if self.signed or v == 0 else [-v, v]

    def __str__(self) -> str:
        sign = "+" if self.signed and self.value > 0 else ""
        return f"{sign}{self.value:g}{'%' if self.relative else 'ms'}"


def parse_conditions(text: str) -> list[Condition]:
    """``"0%,5%"``, ``"-10%"``, ``"0.5ms"`` → conditions. Raises ``ValueError`` naming the bad part."""
    out = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        m = re.fullmatch(r"([+-]?)(\d+(?:\.\d+)?)\s*(%|ms)", part)
        if not m:
            raise ValueError(f"auto-sample condition {part!r} is not N% or Nms (e.g. 0%, 5%, -10%, 0.5ms)")
        sign, num, unit = m.groups()
        val = float(num) * (-1 if sign == "-" else 1)
        out.append(Condition(val, unit == "%", bool(sign)))
    if not out:
        raise ValueError("auto-sample needs at least one condition, e.g. 0% or 0%,5%")
    return out


def unresolved(diffs: list[Difference], conditions: list[Condition], metric: str = "ms_per_token") -> list[str]:
    """Descriptions of the (difference, threshold) pairs whose CI still contains the threshold;
    empty when every one is resolved. A difference without a CI is unresolved."""
    out = []
    for d in (d for d in diffs if d.metric == metric):
        for cond in conditions:
            lo, hi = (d.rel_low, d.rel_high) if cond.relative else (d.diff_low, d.diff_high)
            for t in cond.thresholds():
                if lo is None or hi is None or (lo <= t <= hi):
                    out.append(f"{d.b} vs {d.a}: {describe_diff(d, cond.relative)} contains {_thr(t, cond.relative)}")
    return out


def _thr(t: float, relative: bool) -> str:
    return f"{t * 100:+g}%" if relative else f"{t:+g} ms"


def describe_diff(d: Difference, relative: bool = True) -> str:
    """``-8.1% [-10.2%, -6.0%]`` (relative) or ``-0.81 ms [-1.02, -0.60]``."""
    if relative and d.rel is not None:
        ci = f" [{d.rel_low * 100:+.1f}%, {d.rel_high * 100:+.1f}%]" if d.rel_low is not None else " [no CI]"
        return f"{d.rel * 100:+.1f}%{ci}"
    if d.diff is None:
        return "n/a"
    ci = f" [{d.diff_low:+.4g}, {d.diff_high:+.4g}]" if d.diff_low is not None else " [no CI]"
    return f"{d.diff:+.4g} {d.unit}{ci}"
