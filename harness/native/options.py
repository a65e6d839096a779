"""``webgpu-harness native``'s options, validated (harness/native/bench.py runs them).

Standard library only: the command line checks these before numpy or wgpu is imported
(harness/cli/: bad input answers fast)."""

from __future__ import annotations

from dataclasses import dataclass, field

# Same caps as workloads/dispatch-overhead/options.js (harness sanity limits, not WebGPU limits).
MAX_N = 65536
MAX_K = 65536
MAX_ELEMENTS = 65536
MAX_ROUNDS = 10000
#: A timestamp query set holds at most 4096 queries (WebGPU spec, createQuerySet), 2 per dispatch.
MAX_KERNEL_DISPATCHES = 2048
METHODS = ["single-op", "sequential", "batched", "one-pass", "phases", "kernel"]
VARIANTS = ["fresh", "reused"]


class OptionError(ValueError):
    """A bad option value; the message is one line naming the valid range or choices."""


@dataclass
class Options:
    """What a native run measures (same meaning as the workload's ``--param``s).

    ``n``: dispatches per method-run (1..65536); ``batch_sizes``: K per batched run, 'all' = n;
    ``rounds``: repetitions of every method; ``elements``: floats per buffer (bytes = 4 × elements).
    """

    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    n: int = 256
    rounds: int = 8
    methods: list[str] = field(default_factory=lambda: list(METHODS))
    batch_labels: list[str] = field(default_factory=lambda: ["1", "16", "64", "all"])
    batched_pass: str = "shared"
    single_op_sync: str = "done"
    timestamp_query: str = "auto"
    elements: int = 64
    kernel_max_dispatches: int = MAX_KERNEL_DISPATCHES

    @property
    def batch_sizes(self) -> list[int]:
        return [self.n if k == "all" else min(int(k), self.n) for k in self.batch_labels]

    @property
    def kernel_n(self) -> int:
        return min(self.n, self.kernel_max_dispatches)


def _int_in(name: str, value, lo: int, hi: int) -> int:
    try:
        v = int(str(value).strip())
    except ValueError:
        raise OptionError(f"{name} {value!r} is not an integer (allowed: {lo}..{hi})") from None
    if not lo <= v <= hi:
        raise OptionError(f"{name} must be from {lo} to {hi} (got {v})")
    return v


def _choices(name: str, values: list[str], allowed: list[str]) -> list[str]:
    if not values:
        raise OptionError(f"{name} is empty (valid: {', '.join(allowed)})")
    for v in values:
        if v not in allowed:
            raise OptionError(f"unknown {name} {v!r} (valid: {', '.join(allowed)})")
    return values


def parse_options(*, variants: str = "fresh,reused", n=256, rounds=8, methods: str = ",".join(METHODS),
                  k: str = "1,16,64,all", batched_pass: str = "shared", single_op_sync: str = "done",
                  timestamp_query: str = "auto", elements=64,
                  kernel_max_dispatches=MAX_KERNEL_DISPATCHES) -> Options:
    """Validate option strings into :class:`Options`. Raises :class:`OptionError` (one line)."""
    split = lambda s: [x.strip() for x in str(s).split(",") if x.strip()]  # noqa: E731
    labels = []
    for raw in split(k):
        labels.append("all" if raw == "all" else str(_int_in("K (--k)", raw, 1, MAX_K)))
    if not labels:
        raise OptionError("--k is empty (give K values from 1 to 65536, or 'all')")
    return Options(
        variants=_choices("variant", split(variants), VARIANTS),
        n=_int_in("N (--n)", n, 1, MAX_N),
        rounds=_int_in("--rounds", rounds, 1, MAX_ROUNDS),
        methods=_choices("method", split(methods), METHODS),
        batch_labels=labels,
        batched_pass=_choices("--batched-pass", [batched_pass], ["shared", "per-dispatch"])[0],
        single_op_sync=_choices("--single-op-sync", [single_op_sync], ["done", "map"])[0],
        timestamp_query=_choices("--timestamp-query", [timestamp_query], ["auto", "off"])[0],
        elements=_int_in("--elements", elements, 1, MAX_ELEMENTS),
        kernel_max_dispatches=_int_in("--kernel-max-dispatches", kernel_max_dispatches, 1, MAX_KERNEL_DISPATCHES),
    )
