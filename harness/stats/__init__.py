"""Statistics of a run folder's tables (analysing half; never touches a browser).

``metrics.py`` the catalog (kinds, units), ``cells.py`` the per-cell series, ``estimators.py``
every confidence interval (scipy), ``run.py`` estimates, differences and :func:`compute`,
``workloads/`` the numbers of workload-specific report sections. The names below are the
package's public API (``from harness import stats as S``)."""

from harness.stats.cells import (DEFAULT_WARMUP, CellData, GroupKey, cell_value, cells_of, group_key, groups_of,
                                 slope_series, token_values)
from harness.stats.estimators import (CONFIDENCE, N_RESAMPLES, SEED, block_bootstrap_ci, block_bootstrap_diff,
                                      bootstrap_ci, mean_t_ci, stat_fn, t_ci, theil_sen)
from harness.stats.metrics import (CELL_STEP_METRICS, HEADLINE, OTHER_METRICS, PATTERN_METRICS, STATS, STEP_SLOPES,
                                   TOKEN_METRICS, default_stat, deterministic, metric_kind, metric_unit,
                                   valid_metric_names)
from harness.stats.run import (Difference, Estimate, GroupStats, RunStats, available_metrics, clean, compute,
                               difference, estimate)

__all__ = [
    "DEFAULT_WARMUP", "CellData", "GroupKey", "cell_value", "cells_of", "group_key", "groups_of", "slope_series",
    "token_values", "CONFIDENCE", "N_RESAMPLES", "SEED", "block_bootstrap_ci", "block_bootstrap_diff", "bootstrap_ci", "mean_t_ci", "stat_fn", "t_ci", "theil_sen",
    "CELL_STEP_METRICS", "HEADLINE", "OTHER_METRICS", "PATTERN_METRICS", "STATS", "STEP_SLOPES", "TOKEN_METRICS",
    "default_stat", "deterministic", "metric_kind", "metric_unit", "valid_metric_names", "Difference", "Estimate",
    "GroupStats", "RunStats", "available_metrics", "clean", "compute", "difference", "estimate",
]
