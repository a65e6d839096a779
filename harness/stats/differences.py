"""Differences between two groups (b − a) of one metric, with 95% intervals and whether they are
significant (harness/stats/run.py computes them between variants, harness/verdicts/compare.py
between runs)."""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as sps

from harness.stats.cells import DEFAULT_WARMUP, CellData, token_values
from harness.stats.estimates import Estimate, clean, estimate
from harness.stats.estimators import CONFIDENCE, NO_INTERVAL_N1, block_bootstrap_diff, diff_of_replicates
from harness.stats.metrics import default_stat, deterministic, metric_kind, metric_unit


@dataclass
class Difference:
    """``b`` minus ``a`` for one metric: ``diff`` = value(b) − value(a) in the metric's unit with
    its 95% CI, ``rel`` = value(b) / value(a) − 1 with its CI (``None`` when value(a) is 0).
    ``a`` / ``b`` are group labels; ``ci_method`` as in :class:`Estimate` (``welch-t`` for cell
    metrics, ``theil-sen-combined`` for slopes: the two fits' half-widths added in quadrature,
    an approximation).

    ``significant`` (:func:`significance`): True or False only where the evidence can carry it,
    else None with ``evidence`` saying what is missing. A measured quantity (times, RSS, JS heap:
    :func:`harness.stats.metrics.deterministic` false) is compared across repetitions — the
    block bootstrap or Sen's interval inside one run measures within-run variation only — so it
    needs 2 repetitions on each side, and is then significant when Welch's t over the
    per-repetition values (``reps_low``/``reps_high``) excludes 0; so does every growth slope
    (live objects and modeled bytes grow and fall with the GC's timing), and so does every count of
    live objects (``live_bind_groups_max``…: how many are live depends on when the GC ran).
    WebGPU call counts per token, reproducible from run to run, are significant when their
    interval excludes 0 or their ``exact`` difference is not 0. A zero-width interval is never
    significant. The RSS
    of the browser's processes (:data:`SHARED_PROCESS_MEMORY`) is never significant: the
    repetitions of a run share those processes (fresh contexts, one browser)."""

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
    #: repetitions (cells) behind each side
    reps_a: int = 0
    reps_b: int = 0
    #: Welch's t interval of the difference of per-repetition values (measured quantities, 2+ repetitions a side)
    reps_low: float | None = None
    reps_high: float | None = None
    #: what ``significant`` rests on, or what is missing: "1 repetition: within-run only", "2 + 2
    #: repetitions, Welch's t over per-repetition medians", "exact", "too few samples (n=4; needs 10 on each side)"
    evidence: str = ""
    #: Welch's two-sided p-value behind a measured quantity's verdict (None elsewhere); the
    #: verdicts of one run's or one comparison's measured differences are corrected together by
    #: Holm's step-down procedure (:func:`holm`)
    p_value: float | None = None
    #: Holm's correction (:func:`holm`) this verdict went through: how many measured differences it
    #: was corrected over (0: none) and the limit alpha / (m − i + 1) its p was held against
    holm_m: int = 0
    holm_limit: float | None = None

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as ``None``)."""
        return {k: clean(v) for k, v in asdict(self).items()}

    @property
    def verdict(self) -> str:
        """The difference's standing in words: ``significant``, ``not significant``, or what
        is missing for either (``1 repetition: within-run only``, ``no interval``)."""
        if self.significant is not None and self.holm_m and self.p_value is not None:
            return f"{'significant' if self.significant else 'not significant'} after {self.holm_words}"
        if self.significant is True:
            # a count identical on every step of each side: no interval, nothing to be significant
            # about (issue 20: a zero-width interval is never called significant)
            return EXACT_WORDS if self.evidence == "exact" else "significant"
        if self.significant is False:
            return EXACT_SAME if self.evidence == "exact" else "not significant"
        return self.evidence or "no interval"

    @property
    def holm_words(self) -> str:
        """``Holm's correction over 6 (p=0.021 > 0.0167)``: the correction a verdict went through,
        its p and the limit it was held against (``≤`` kept; ``>`` withdrawn; a p under its limit
        withdrawn because the step-down had stopped at a smaller p says so); "" without one."""
        if not self.holm_m or self.p_value is None or self.holm_limit is None:
            return ""
        p, lim = f"{self.p_value:.2g}", f"{self.holm_limit:.3g}"
        if self.p_value > self.holm_limit:
            cmp = f"p={p} > {lim}"
        elif self.significant:
            cmp = f"p={p} ≤ {lim}"
        else:
            cmp = f"p={p} ≤ {lim}, but the step-down stopped at a smaller p"
        return f"Holm's correction over {self.holm_m} ({cmp})"

    def intervals_excluding_zero(self) -> str:
        """Which of the difference's 95% intervals exclude 0, in words: ``both CIs exclude 0``
        (the within-run interval ``diff_low``/``diff_high`` and Welch's across repetitions
        ``reps_low``/``reps_high``), ``its CI excludes 0``, ``the within-run CI excludes 0``,
        ``the CI across repetitions excludes 0``; "" when none does."""
        def out(lo, hi):
            return lo is not None and hi is not None and (lo > 0 or hi < 0)
        run, reps = out(self.diff_low, self.diff_high), out(self.reps_low, self.reps_high)
        if self.reps_low is None:
            return "its CI excludes 0" if run else ""
        if run and reps:
            return "both CIs exclude 0"
        return "the within-run CI excludes 0" if run else "the CI across repetitions excludes 0" if reps else ""

    @property
    def standing(self) -> str:
        """The verdict with what it rests on, for a sentence: ``both CIs exclude 0; not significant
        after Holm's correction over 6 (p=0.021 > 0.0167)``; ``2 + 2 repetitions, Welch's t over
        per-repetition medians: the CI across repetitions includes 0``; else :attr:`verdict`."""
        if self.significant is False and self.holm_m:
            ex = self.intervals_excluding_zero()
            return f"{ex}; {self.verdict}" if ex else self.verdict
        if self.significant is False:
            where = "the CI across repetitions" if self.reps_low is not None else "its 95% CI"
            if self.evidence == "exact":
                return EXACT_SAME
            base = self.evidence or "not significant"
            return f"{base}: {where} includes 0" if self.diff != 0 or self.diff_low is not None else base
        return self.verdict


#: The verdict of a WebGPU call count that differs by the same amount on every step of each side
#: (``ci_method`` "exact"): a measured fact, not a statistical claim.
EXACT_WORDS = "exact: the same count on every step of each side"
#: The verdict of an exact difference of 0 (the same count on every step of both sides): no
#: difference, measured, not a test that found none.
EXACT_SAME = "no difference: the same count on every step of both sides"


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
    lo = hi = rlo = rhi = pv = None
    how = "none"
    if kind == "token":
        xa = np.concatenate([token_values(c, metric, warmup) for c in a_cells])
        xb = np.concatenate([token_values(c, metric, warmup) for c in b_cells])
        if np.all(xa == xa[0]) and np.all(xb == xb[0]):
            if deterministic(metric):
                lo = hi = d
                rlo = rhi = rel
                how = "exact"
        elif stat not in ("min", "max") and ea.replicates is not None and eb.replicates is not None:
            # both groups above SUBSAMPLE_TOKENS: their own independent replicates, not drawn again
            (lo, hi), (rlo, rhi), how = diff_of_replicates(ea.replicates, eb.replicates, len(xa), len(xb),
                                                           bool(np.all(xa > 0)), confidence)
        elif stat not in ("min", "max") and len(xa) >= 2 and len(xb) >= 2:
            (lo, hi), (rlo, rhi), how = block_bootstrap_diff(
                [token_values(c, metric, warmup) for c in a_cells], [token_values(c, metric, warmup) for c in b_cells],
                stat, confidence)
            if ea.value == 0:
                rlo = rhi = None
    elif kind == "cell":
        va, vb = np.asarray(ea.per_rep), np.asarray(eb.per_rep)
        if len(va) < 2 or len(vb) < 2:
            # no CI, so never "significant", from one repetition on a side
            how = NO_INTERVAL_N1
        elif np.all(va == va[0]) and np.all(vb == vb[0]) and stat == "mean":
            if deterministic(metric):
                lo = hi = d
                how = "exact"
            else:
                how = f"{len(va)} + {len(vb)} repetitions: no spread between them, no interval"
        elif stat == "mean" and len(va) >= 2 and len(vb) >= 2:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # near-constant repetitions: precision-loss warning
                t = sps.ttest_ind(vb, va, equal_var=False)
                ci = t.confidence_interval(confidence)
            if math.isfinite(ci.low) and math.isfinite(ci.high):
                lo, hi, how = float(ci.low), float(ci.high), "welch-t"
                pv = float(t.pvalue) if math.isfinite(t.pvalue) else None
                if min(va.min(), vb.min()) >= 0:  # a count, a peak, bytes: b cannot go below 0, nor b − a below −a
                    lo = max(lo, -float(ea.value))  # (t's interval reached −104%); the verdict is the same
        if lo is not None and ea.value != 0:
            rlo, rhi = lo / abs(ea.value), hi / abs(ea.value)
    else:
        if None not in (ea.ci_low, ea.ci_high, eb.ci_low, eb.ci_high):
            below = math.hypot(eb.value - eb.ci_low, ea.ci_high - ea.value)
            above = math.hypot(eb.ci_high - eb.value, ea.value - ea.ci_low)
            lo, hi, how = d - below, d + above, "theil-sen-combined"
            if ea.value != 0:
                rlo, rhi = lo / abs(ea.value), hi / abs(ea.value)
    out = Difference(metric, metric_unit(metric), stat, a_label, b_label, ea.value, eb.value, d, lo, hi,
                     rel, rlo, rhi, how, None, ea.n_reps, eb.n_reps)
    significance(out, ea, eb, confidence)
    if out.significant is not None and how == "welch-t":
        out.p_value = pv
    not_compared_when_emulated(out, a_cells, b_cells)
    return out


#: Metrics of the browser's processes (psutil RSS per process type): shared by every repetition
#: of one run (benchmarks/aa_significance.py), so never significant.
SHARED_PROCESS_MEMORY = ("peak_rss_bytes_", "rss_growth_bytes_per_token_")


def _within_run(ra: int, rb: int) -> str:
    if ra <= 1 and rb <= 1:
        return "1 repetition: within-run only"
    return f"{ra} + {rb} repetitions (fewer than 2 on a side): within-run only"


def significance(d: Difference, ea: Estimate, eb: Estimate, confidence: float = CONFIDENCE) -> None:
    """Set ``d.significant``, ``d.evidence`` and, for a measured quantity with 2 repetitions or
    more on each side, ``d.reps_low``/``d.reps_high`` (see :class:`Difference`). The interval and
    the words agree: evidence saying "no interval" leaves ``diff_low``/``diff_high`` (and the
    relative ones) empty, and a difference without them says "no interval"."""
    _significance(d, ea, eb, confidence)
    if "no interval" in d.evidence:
        d.diff_low = d.diff_high = d.rel_low = d.rel_high = None
    elif d.diff_low is None or d.diff_high is None:
        d.diff_low = d.diff_high = d.rel_low = d.rel_high = None
        d.evidence = f"{d.evidence}, no interval" if d.evidence else "no interval"


def _significance(d: Difference, ea: Estimate, eb: Estimate, confidence: float) -> None:
    lo, hi, how = d.diff_low, d.diff_high, d.ci_method
    if how == "exact":
        d.significant, d.evidence = bool(d.diff != 0), "exact"
        return
    if how == NO_INTERVAL_N1 and not deterministic(d.metric):  # a live count, a peak: measured, one run
        d.significant, d.evidence = None, _within_run(d.reps_a, d.reps_b)
        return
    if how.startswith("too few") or how == NO_INTERVAL_N1 or "no spread" in how:
        d.significant, d.evidence = None, how
        return
    if deterministic(d.metric) and metric_kind(d.metric) != "slope":  # a growth slope rests on GC timing: measured
        if lo is None:
            d.evidence = "no interval"
        elif lo == hi:
            d.evidence = "zero-width interval"
        else:
            d.significant = bool(lo > 0 or hi < 0)
            d.evidence = how
        return
    if d.metric.startswith(SHARED_PROCESS_MEMORY):
        # the repetitions of a run are fresh contexts in one browser: its processes' memory is one
        # history, not independent samples (A/A at --repeat 3: 27-48% "significant" for the
        # renderer's and utility processes' peaks when Welch's t treated them as independent)
        d.evidence = ("process memory: every repetition of a run shares the browser's processes, not independent "
                      "samples: no significance")
        return
    if metric_kind(d.metric) == "cell":  # Welch's t over repetitions already
        if lo is None or lo == hi:
            d.evidence = "no interval" if lo is None else "zero-width interval"
        else:
            d.significant, d.evidence = bool(lo > 0 or hi < 0), f"{d.reps_a} + {d.reps_b} repetitions, Welch's t"
        return
    if min(d.reps_a, d.reps_b) < 2:
        d.evidence = _within_run(d.reps_a, d.reps_b)
        return
    va = np.asarray([v for v in ea.per_rep if v is not None], float)
    vb = np.asarray([v for v in eb.per_rep if v is not None], float)
    what = f"per-repetition {ea.stat}s" if ea.stat != "slope" else "per-repetition slopes"
    if min(len(va), len(vb)) < 2:
        d.evidence = _within_run(len(va), len(vb))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # near-constant repetitions: precision-loss warning
        t = sps.ttest_ind(vb, va, equal_var=False)
        ci = t.confidence_interval(confidence)
    if not (math.isfinite(ci.low) and math.isfinite(ci.high)) or ci.low == ci.high:
        d.evidence = (f"{len(va)} + {len(vb)} repetitions: no spread between them: within-run interval only, "
                      "not decided" if d.diff_low is not None else
                      f"{len(va)} + {len(vb)} repetitions: no spread between them, no interval")
        return
    d.reps_low, d.reps_high = float(ci.low), float(ci.high)
    d.significant = bool(ci.low > 0 or ci.high < 0)
    d.p_value = float(t.pvalue) if math.isfinite(t.pvalue) else None
    d.evidence = f"{len(va)} + {len(vb)} repetitions, Welch's t over {what}"


#: Times measured on emulated WebGPU are the emulation's JavaScript, not a GPU's: never compared
TIME_METRICS = ("ms_per_token", "cpu_ms_per_token")
TIME_PREFIXES = ("us_per_dispatch_", "sync_us_")


def is_time(metric: str) -> bool:
    """Whether ``metric`` is a time (ms per token, µs per dispatch or per sync)."""
    return metric in TIME_METRICS or metric.startswith(TIME_PREFIXES)


def not_compared_when_emulated(d: Difference, a_cells: list, b_cells: list) -> None:
    """A time difference where either side ran on emulated WebGPU (harness/stats/cells.py
    ``env["webgpu"]``): no verdict, the evidence says why (README: emulated times "are not
    comparable with anything")."""
    if is_time(d.metric) and any((c.env or {}).get("webgpu") == "emulated" for c in (*a_cells, *b_cells)):
        d.significant, d.p_value = None, None
        d.evidence = "emulated WebGPU: its times are the emulation's JavaScript, not a GPU's: not compared"


def holm(diffs: list[Difference], alpha: float = 1 - CONFIDENCE) -> None:
    """Holm's step-down correction (Holm 1979, "A simple sequentially rejective multiple test
    procedure", Scand. J. Statist. 6:65-70) over the measured differences of one run or one
    comparison that carry a Welch p-value: sorted by p, the i-th smallest of m stays significant
    only while p ≤ alpha / (m − i + 1). Tried on 20 A/A comparisons (benchmarks/aa_significance.py),
    uncorrected Welch at 2 + 2 repetitions called about one metric in twenty "significant" each
    time; many metrics per comparison made one such call likely in every A/A compare. Each
    corrected verdict's evidence says over how many it was corrected."""
    tested = sorted((d for d in diffs if d.p_value is not None), key=lambda d: d.p_value)
    m = len(tested)
    if m < 2:
        return
    still = True
    for i, d in enumerate(tested):
        limit = alpha / (m - i)
        still = still and d.p_value <= limit
        if d.significant:
            d.holm_m, d.holm_limit = m, limit
            d.significant = still
            d.evidence += f"; {d.verdict}"


