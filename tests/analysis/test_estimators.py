"""harness/stats/ (estimators, estimates, differences, slopes) against known distributions:
synthetic samples, where the truth is known."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness import stats as S


def _cell(name: str, variant: str, rep: int, steps: dict, browser: str = "chromium") -> S.CellData:
    df = pd.DataFrame(steps)
    df["step"] = np.arange(len(df))
    key = S.GroupKey(browser, "synthetic", variant, "tiny")
    return S.CellData(name, key, rep, "ok", "", {}, df, pd.DataFrame(columns=["cell", "source", "process_type",
                                                                              "pid", "rss_bytes", "token"]))


def _coverage(hits: list[bool]) -> float:
    return float(np.mean(hits))


def test_bootstrap_ci_of_the_mean_covers_a_skewed_truth_at_about_the_nominal_rate():
    # lognormal(0, 0.75): skewed like per-token latencies; its mean is exp(0.75² / 2)
    truth = float(np.exp(0.75 ** 2 / 2))
    hits = []
    for seed in range(300):
        x = np.random.default_rng(seed).lognormal(0.0, 0.75, size=150)
        lo, hi, how = S.bootstrap_ci(x, "mean", seed=seed)
        assert how == "bootstrap-bca" and lo < np.mean(x) < hi
        hits.append(lo <= truth <= hi)
    # 0.93 here: BCa runs a little under nominal on skewed data (Efron & Tibshirani 1993, ch. 14)
    assert 0.90 <= _coverage(hits) <= 0.985, _coverage(hits)


def test_bootstrap_ci_of_the_median_covers_the_true_median():
    # exponential(1): median ln 2
    hits = []
    for seed in range(200):
        x = np.random.default_rng(1000 + seed).exponential(1.0, size=61)
        lo, hi, how = S.bootstrap_ci(x, "median", seed=seed)
        assert how == "bootstrap-percentile"
        hits.append(lo <= np.log(2) <= hi)
    assert 0.90 <= _coverage(hits) <= 0.995, _coverage(hits)


def test_student_t_ci_covers_the_mean_of_few_repetitions():
    hits = []
    for seed in range(500):
        x = np.random.default_rng(seed).normal(100.0, 7.0, size=4)  # e.g. peak RSS of 4 repetitions
        lo, hi, how = S.t_ci(x)
        assert how == "t"
        hits.append(lo <= 100.0 <= hi)
    assert 0.92 <= _coverage(hits) <= 0.98, _coverage(hits)


def test_constant_samples_have_an_exact_interval_and_single_ones_none():
    assert S.bootstrap_ci([42.0] * 30) == (42.0, 42.0, "exact")
    assert S.bootstrap_ci([3.0]) == (3.0, 3.0, "exact")
    assert S.bootstrap_ci([1.0, 2.0], "max") == (None, None, "none")
    assert S.t_ci([5.0]) == (None, None, "n=1: no interval")   # one repetition: no interval
    assert S.t_ci([5.0, 5.0]) == (5.0, 5.0, "exact")
    assert S.t_ci([5.0, 6.0])[2] == "t"


def test_difference_of_medians_covers_a_planted_shift():
    # b = a's distribution + 2 ms: the true difference of medians is exactly 2
    hits, rel_hits = [], []
    for seed in range(120):
        rng = np.random.default_rng(seed)
        a = [_cell(f"a{r}", "fresh", r, {"wall_ms": 10 + rng.gamma(2.0, 1.0, 40)}) for r in range(2)]
        b = [_cell(f"b{r}", "reuse", r, {"wall_ms": 12 + rng.gamma(2.0, 1.0, 40)}) for r in range(2)]
        d = S.difference(a, b, "ms_per_token", warmup=0)
        assert d.stat == "median" and d.ci_method == "block-bootstrap-percentile"
        hits.append(d.diff_low <= 2.0 <= d.diff_high)
        true_rel = 2.0 / (10 + 1.678346990016661)  # gamma(2, 1) median = 1.678...
        rel_hits.append(d.rel_low <= true_rel <= d.rel_high)
    assert 0.88 <= _coverage(hits) <= 0.995, _coverage(hits)
    assert 0.85 <= _coverage(rel_hits) <= 0.995, _coverage(rel_hits)


def test_difference_is_significant_only_when_its_ci_excludes_zero():
    rng = np.random.default_rng(7)

    def cells(name, variant, center, bind_groups):
        return [_cell(f"{name}{r}", variant, r, {"wall_ms": center + rng.normal(0, 1, 60) + rng.normal(0, 0.2),
                                                 "create_bind_group": [bind_groups] * 60}) for r in range(3)]

    a, same, fast = cells("a", "fresh", 10, 42), cells("s", "reuse", 10, 42), cells("f", "reuse", 7, 0)
    # three repetitions a side: a time difference is judged across them (Welch's t over their medians)
    d = S.difference(a, same, "ms_per_token")
    assert d.significant is False and d.reps_low < 0 < d.reps_high and d.evidence.startswith("3 + 3 repetitions")
    d = S.difference(a, fast, "ms_per_token")
    assert d.significant is True and d.reps_high < 0 and d.verdict == "significant"
    # one repetition a side: the block bootstrap's interval is within-run variation, never "significant"
    one = S.difference(a[:1], fast[:1], "ms_per_token")
    assert one.diff_high < 0 and one.significant is None and one.evidence == "1 repetition: within-run only"
    assert one.verdict == "1 repetition: within-run only"
    # counts are reproducible: an exact difference from one repetition is a fact
    exact = S.difference(a[:1], fast[:1], "bind_groups_per_token")
    assert (exact.diff, exact.ci_method, exact.significant, exact.rel) == (-42, "exact", True, -1)
    nochange = S.difference(a[:1], same[:1], "bind_groups_per_token")
    assert (nochange.diff, nochange.significant) == (0, False)


def test_theil_sen_recovers_a_planted_slope_despite_outliers():
    hits = []
    for seed in range(200):
        rng = np.random.default_rng(seed)
        x = np.arange(200.0)
        y = 5e6 + 512.0 * x + rng.normal(0, 4000, x.size)   # RSS growing 512 bytes per token
        y[rng.choice(x.size, 15, replace=False)] += 3e5      # GC spikes: outliers
        slope, lo, hi, n = S.theil_sen(x, y)
        assert n == 200 and abs(slope - 512) < 60
        hits.append(lo <= 512 <= hi)
    assert 0.88 <= _coverage(hits) <= 0.995, _coverage(hits)


def test_growth_slope_pools_repetitions_without_counting_their_offsets_as_growth():
    # two repetitions, each growing 3 live bind groups per token, starting 1000 apart
    rng = np.random.default_rng(3)
    cells = [_cell(f"c{r}", "fresh", r, {"bind_groups_live": 1000 * r + 3 * np.arange(64) + rng.normal(0, 4, 64)})
             for r in range(2)]
    e = S.estimate(cells, "live_bind_groups_growth_per_token")
    assert e.kind == "slope" and e.n_reps == 2 and e.ci_method == "theil-sen"
    assert abs(e.value - 3) < 0.2 and e.ci_low <= 3 <= e.ci_high
    flat = [_cell("f", "reuse", 0, {"bind_groups_live": [42] * 64})]
    flat_e = S.estimate(flat, "live_bind_groups_growth_per_token")
    assert (flat_e.value, flat_e.ci_method) == (0, "exact")


def test_warmup_is_excluded_and_after_token_moves_it():
    cell = _cell("c", "fresh", 0, {"wall_ms": [500.0, 10, 10, 10, 12, 10], "create_bind_group": [300, 42, 42, 0, 0, 0]})
    assert S.token_values(cell, "ms_per_token").tolist() == [10, 10, 10, 12, 10]           # token 0 left out
    assert S.estimate([cell], "bind_groups_per_token", warmup=3).value == 0                # "after token 2"
    assert S.estimate([cell], "ms_per_token").value == 10


def test_a_slope_through_two_floors_has_no_interval_and_is_never_significant():
    # one repetition whose floors are two points (a short run between collections): one pair
    # of points gives a slope but no interval; a zero-width interval would call noise significant
    from harness.stats.estimators import stratified_theil_sen

    slope, lo, hi, points = stratified_theil_sen([(np.array([2.0, 7.0]), np.array([100.0, 1_337_000.0]))])
    assert slope == (1_337_000.0 - 100.0) / 5 and lo is None and hi is None and points == 2
    # three floors rising by the same each token: every pair agrees, an exact interval
    slope, lo, hi, _ = stratified_theil_sen([(np.array([1.0, 2.0, 3.0]), np.array([10.0, 52.0, 94.0]))])
    assert slope == lo == hi == 42.0
    # two repetitions of two floors each: two pairs, still no interval
    _, lo, hi, _ = stratified_theil_sen([(np.array([1.0, 5.0]), np.array([0.0, 8.0])),
                                         (np.array([1.0, 5.0]), np.array([0.0, 9.0]))])
    assert lo is None and hi is None


def test_long_runs_are_resampled_m_out_of_n_and_still_cover_the_truth():
    # 4 repetitions × 3,000 AR(1) tokens (phi 0.6): above SUBSAMPLE_TOKENS the bootstrap draws
    # m-out-of-n resamples and scales their spread; its 95% interval must still cover the true
    # median (0) at about the nominal rate, and say how it was made
    from scipy.signal import lfilter

    from harness.stats.estimators import SUBSAMPLE_TOKENS

    hits = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        series = [lfilter([1.0], [1.0, -0.6], rng.normal(size=3000)) for _ in range(4)]
        lo, hi, how = S.block_bootstrap_ci(series, "median", seed=seed)
        assert how == f"block-bootstrap-m-of-n (m={SUBSAMPLE_TOKENS} of n=12000 tokens)"
        hits.append(lo <= 0 <= hi)
    assert 0.85 <= _coverage(hits) <= 1.0, _coverage(hits)
