"""The metric catalog: every metric a run can be summarised by, its kind and unit.

Three kinds of metric (:func:`metric_kind`):
    ``token``  one value per token after the warm-up (``ms_per_token``, ``bind_groups_per_token``…);
    ``cell``   one value per repetition (``live_bind_groups_max``, ``peak_rss_bytes_<type>``…);
    ``slope``  growth per token (``live_bind_groups_growth_per_token``, ``rss_growth_bytes_per_token_<type>``).
How each is estimated: harness/stats/run.py.
"""

from __future__ import annotations

import re

from harness.store import catalog

#: Default warm-up: token 0 is excluded (RESULTS.md: "tokens after the first"). Here, in the
#: catalog (no numpy), so that the command line's defaults need no pandas.
DEFAULT_WARMUP = 1

#: Per-token metrics: name → (steps.csv column, unit): the two times, then every counter of the
#: catalog that names a metric (web/probes/catalog.js).
TOKEN_METRICS: dict[str, tuple[str, str]] = {
    "ms_per_token": ("wall_ms", "ms"),
    "cpu_ms_per_token": ("cpu_ms", "ms"),
    **{c.metric: (c.column, c.unit) for c in catalog.counters() if c.metric},
}
#: Per-cell metrics from steps.csv: name → (column, reducer, unit).
#: ``modeled_native_*``: emulated WebGPU's memory model (tables.EMULATION_COLUMNS); absent when real.
CELL_STEP_METRICS: dict[str, tuple[str, str, str]] = {
    "live_bind_groups_max": ("bind_groups_live", "max", "bind groups"),
    "live_bind_groups_end": ("bind_groups_live", "last", "bind groups"),
    "live_buffers_max": ("buffers_live", "max", "buffers"),
    "modeled_native_bytes_max": ("modeled_native_bytes", "max", "bytes"),
    "live_buffer_bytes_max": ("buffer_bytes_live", "max", "bytes"),
}
#: Growth slopes from steps.csv: name → (column, unit). A growth is the slope of the series'
#: floors after collections where it has them (harness/stats/memory.py), not a line through a sawtooth.
STEP_SLOPES: dict[str, tuple[str, str]] = {
    "live_bind_groups_growth_per_token": ("bind_groups_live", "bind groups/token"),
    "live_buffers_growth_per_token": ("buffers_live", "buffers/token"),
    "modeled_native_growth_bytes_per_token": ("modeled_native_bytes", "bytes/token"),
    "live_buffer_bytes_growth_per_token": ("buffer_bytes_live", "bytes/token"),
    "modeled_buffer_growth_bytes_per_token": ("modeled_buffer_bytes", "bytes/token"),
}
#: Metrics whose name carries a process type (Chrome's ``--type``) or ``all``.
PATTERN_METRICS = {
    "peak_rss_bytes_": ("cell", "bytes"),
    "rss_growth_bytes_per_token_": ("slope", "bytes/token"),
    # dispatch-overhead: µs per dispatch of one method (steps.csv extra_us_per_dispatch of the steps
    # whose extra_config is <method>, rounds after round 0): a budget per method
    "us_per_dispatch_": ("token", "µs"),
    # dispatch-overhead's sync-latency methods (sync-empty, sync-dispatch, sync-map, sync-n): µs of one
    # sync, one value per timed iteration (steps.csv extra_sync_us_samples), rounds after round 0
    "sync_us_": ("token", "µs"),
}
#: Metrics whose spread is a result of its own (stats.csv also has their ``p10``, ``p90`` and ``max``
#: rows): the sync-latency methods, where the tail is what an application waits for.
SPREAD_PREFIXES = ("sync_us_",)
SPREAD_STATS = ("p10", "p90", "max")
OTHER_METRICS = {"js_heap_bytes_max": ("cell", "bytes"), "js_heap_growth_bytes_per_token": ("slope", "bytes/token")}
#: Statistics a budget may name; ``pNN`` is the NN-th percentile.
STATS = ("median", "mean", "min", "max")
#: Workloads whose steps are not generated tokens (dispatch-overhead: one step per method run;
#: its own per-method metrics, ``us_per_dispatch_<method>``, are its headline).
NOT_TOKENS = ("dispatch-overhead",)
#: Metrics shown first in tables, in this order.
HEADLINE = ["ms_per_token", "bind_groups_per_token", "dispatches_per_token", "submits_per_token",
            "live_bind_groups_max", "live_bind_groups_growth_per_token", "rss_growth_bytes_per_token_all"]


def growth_series(name: str) -> str | None:
    """The memory series (harness/stats/memory.py) a growth metric is the floor slope of."""
    if name in STEP_SLOPES:
        return STEP_SLOPES[name][0]
    if name == "js_heap_growth_bytes_per_token":
        return "js_heap_bytes"
    if name.startswith("rss_growth_bytes_per_token_"):
        return "rss_bytes_" + name[len("rss_growth_bytes_per_token_"):]
    return None


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


#: Metrics measured, not counted: times, process memory, JS heap, and everything that counts what
#: is live (live bind groups, buffers and their bytes; the emulation's modeled bytes of live
#: objects): how many are live depends on when the GC ran, which differs from run to run in every
#: engine (Chromium's V8 and WebKit's JSC alike), so equal repetitions there are not an exact value.
MEASURED_PREFIXES = ("peak_rss_bytes_", "rss_growth_", "js_heap_", "us_per_dispatch_", "sync_us_", "live_",
                     "modeled_")


def deterministic(name: str) -> bool:
    """Whether equal repetitions of a metric mean it has no noise (WebGPU call counts per token),
    so a difference between two all-equal samples is exact. Times, measured memory and live
    object counts (:data:`MEASURED_PREFIXES`) are never treated so: all-equal samples there
    give no interval, and a difference needs 2 repetitions a side (harness/stats/differences.py)."""
    return not (name in ("ms_per_token", "cpu_ms_per_token") or name.startswith(MEASURED_PREFIXES))


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
            "peak_rss_bytes_<process type|all>", "rss_growth_bytes_per_token_<process type|all>",
            "us_per_dispatch_<dispatch-overhead method>", "sync_us_<sync method: sync-empty|sync-dispatch|sync-map|sync-n>"]


def default_stat(metric: str) -> str:
    """The statistic a metric's headline value (and a budget without ``stat(...)``) uses."""
    kind = metric_kind(metric)
    return {"token": "median", "cell": "mean", "slope": "slope"}.get(kind or "", "median")
