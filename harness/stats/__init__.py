"""Statistics of a run folder's tables (analysing half; never touches a browser).

``metrics.py`` the catalog (kinds, units), ``cells.py`` the per-cell series, ``estimators.py``
every confidence interval (scipy), ``run.py`` estimates, differences and :func:`compute`,
``workloads/`` the numbers of workload-specific report sections. The names below are the
package's public API (``from harness import stats as S``).

Each name is imported from its module on first use (PEP 562 ``__getattr__``): the catalog
(``metrics.py``, no numpy) serves the command line's validation of ``--budget`` without
importing pandas or scipy (harness/cli/: bad input answers before they load)."""

from __future__ import annotations

#: Public name → the module of this package that defines it.
_WHERE = {
    **dict.fromkeys(("CellData", "GroupKey", "cell_value", "cells_of", "group_key", "groups_of", "slope_series",
                     "token_values"), "cells"),
    **dict.fromkeys(("CONFIDENCE", "N_RESAMPLES", "SEED", "block_bootstrap_ci", "block_bootstrap_diff", "bootstrap_ci",
                     "mean_t_ci", "stat_fn", "t_ci", "theil_sen"), "estimators"),
    **dict.fromkeys(("DEFAULT_WARMUP", "CELL_STEP_METRICS", "HEADLINE", "OTHER_METRICS", "PATTERN_METRICS", "STATS",
                     "STEP_SLOPES", "TOKEN_METRICS", "default_stat", "deterministic", "metric_kind", "metric_unit",
                     "valid_metric_names"), "metrics"),
    **dict.fromkeys(("Difference", "Estimate", "GroupStats", "RunStats", "available_metrics", "clean", "compute",
                     "difference", "estimate", "holm"), "run"),
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    """``harness.stats.NAME``: imported from its module on first use, then cached here."""
    where = _WHERE.get(name)
    if where == "cells":
        from harness.stats import cells as module
    elif where == "estimators":
        from harness.stats import estimators as module
    elif where == "metrics":
        from harness.stats import metrics as module
    elif where == "run":
        from harness.stats import run as module
    else:
        raise AttributeError(f"module 'harness.stats' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
