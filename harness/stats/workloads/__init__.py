"""Numbers of the workload-specific report sections, computed from a run's tables (no markup:
the templates in reports/templates/ render them). Each module has ``numbers(tables, run) ->
dict | None`` (None: the run has nothing for that section); :data:`WORKLOAD_NUMBERS` lists them
by section id in report order."""

from harness.stats.workloads import (buffers, cache_working_set, cycles, dispatch_overhead, failures, gc_retention,
                                     memory, onnxruntime, remedies, retention, sync_latency, upload)

#: section id → numbers function (tables, RunStats) -> dict | None
WORKLOAD_NUMBERS = (
    ("dispatch-overhead", dispatch_overhead.numbers),
    ("sync-latency", sync_latency.numbers),
    ("cycles", cycles.numbers),
    ("upload", upload.numbers),
    ("retention", retention.numbers),
    ("onnxruntime", onnxruntime.numbers),
    ("remedies", remedies.numbers),
    ("cache-working-set", cache_working_set.numbers),
    ("gc-retention", gc_retention.numbers),
    ("memory", memory.numbers),
    ("buffers", buffers.numbers),
    ("failures", failures.numbers),
)


def compute_all(tables, run) -> dict[str, dict]:
    """Section id → numbers, for the sections this run has data for."""
    out = {}
    for sid, fn in WORKLOAD_NUMBERS:
        n = fn(tables, run)
        if n is not None:
            out[sid] = n
    return out
