"""Sample limits: how much a page may post, so that a page that floods (a bug, or an app that
wraps the harness's DevTools binding and posts a million samples) costs the harness bounded CPU
and disk, and the cell says so instead of passing as ok.

Every sample a page or worker posts is counted twice: against its realm (the page or worker
global that sent it: an app's ``realm``; for a workload, its ``SampleSink``, ``src``, one per
worker or page load) and against its cell. Each has four caps:

=====================  ==============  ==============  ==========================================
cap                    per realm       per cell        why this default
=====================  ==============  ==============  ==========================================
``samples-per-s``      2,000 /s        4,000 /s        a decoder posts one step per token: 2,000
                                                        tokens/s is beyond any browser LLM here
                                                        (the 5,000-token soak: ~60 steps/s)
``bytes-per-s``        8 MiB/s         16 MiB/s        a step sample is ~1 KiB: 8,000 steps/s
``samples``            1,000,000       2,000,000       10× the longest run --tokens allows
                                                        (100,000), with its memory samples
``bytes``              1 GiB           2 GiB           ~1 KiB per sample of the above
=====================  ==============  ==============  ==========================================

A rate is a token bucket: it fills at the rate up to :data:`BURST_S` seconds' worth, so a burst
(a page flushing what it queued while the harness was busy) passes. End samples (``done``,
``error``, ``skip``) are counted but never refused, so a cell still ends the way its worker said.

What goes over a cap is refused; the store writes one ``refused`` record per realm and cap the
first time it happens (RESULTS.md), counts the rest, and the cell ends ``incomplete`` naming the
cap and how many samples it refused. ``--sample-limit KEY=VALUE`` (``run``, ``app``, ``serve``)
sets a cap: KEY is ``realm.`` or ``cell.`` and a cap name, e.g.
``--sample-limit realm.samples-per-s=10000``.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field

#: Seconds of a rate a bucket holds: the burst that passes at once.
BURST_S = 10.0
#: Cap names (``--sample-limit`` keys after ``realm.``/``cell.``) → dataclass field suffix.
CAPS = {"samples-per-s": "samples_per_s", "bytes-per-s": "bytes_per_s", "samples": "samples", "bytes": "bytes"}
SCOPES = ("realm", "cell")
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


@dataclass(frozen=True)
class SampleLimits:
    """The caps of the module docstring (samples, bytes; per second and in total)."""

    realm_samples_per_s: float = 2_000
    realm_bytes_per_s: float = 8 * 2**20
    realm_samples: int = 1_000_000
    realm_bytes: int = 2**30
    cell_samples_per_s: float = 4_000
    cell_bytes_per_s: float = 16 * 2**20
    cell_samples: int = 2_000_000
    cell_bytes: int = 2 * 2**30

    def to_dict(self) -> dict:
        return asdict(self)

    def option(self, scope: str, cap: str) -> str:
        """The ``--sample-limit`` key of a cap (``realm.samples-per-s``)."""
        return f"{scope}.{next(k for k, v in CAPS.items() if v == cap)}"


def valid_keys() -> list[str]:
    return [f"{s}.{c}" for s in SCOPES for c in CAPS]


def parse(items: list[str] | None) -> SampleLimits:
    """``--sample-limit KEY=VALUE`` items → :class:`SampleLimits` (defaults for the rest).
    VALUE is a positive number; byte caps take B/KB/MB/GB/KiB/MiB/GiB. Raises ValueError (one
    line naming the valid keys) on an unknown key or a value that is not a positive number."""
    values: dict = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in valid_keys():
            raise ValueError(f"--sample-limit {item!r}: KEY=VALUE with KEY one of {', '.join(valid_keys())}")
        scope, cap = key.split(".", 1)
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?(?:[eE]\d+)?)\s*([A-Za-z]*)\s*", value)
        unit = m.group(2).upper() if m else None
        if not m or unit not in _UNITS or (unit and not cap.startswith("bytes")):
            units = " (units B, KB, MB, GB, KiB, MiB, GiB)" if cap.startswith("bytes") else ""
            raise ValueError(f"--sample-limit {key}={value!r} is not a positive number{units}")
        number = float(m.group(1)) * _UNITS[unit]
        if not 0 < number <= 1e15:
            raise ValueError(f"--sample-limit {key}={value!r} must be > 0 and at most 1e15")
        field_ = f"{scope}_{CAPS[cap]}"
        values[field_] = number if cap.endswith("per-s") else int(number)
    return SampleLimits(**values)


@dataclass
class Meter:
    """The counts of one sender or cell against its four caps (not thread-safe: the store's lock
    guards it)."""

    samples_per_s: float
    bytes_per_s: float
    max_samples: int
    max_bytes: int
    samples: int = 0
    bytes: int = 0
    refused: int = 0
    _sample_bucket: float = field(default=-1.0)
    _byte_bucket: float = field(default=-1.0)
    _t: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self._sample_bucket = self.samples_per_s * BURST_S
        self._byte_bucket = self.bytes_per_s * BURST_S

    def refill(self, now: float) -> None:
        dt = max(0.0, now - self._t)
        self._t = now
        self._sample_bucket = min(self.samples_per_s * BURST_S, self._sample_bucket + dt * self.samples_per_s)
        self._byte_bucket = min(self.bytes_per_s * BURST_S, self._byte_bucket + dt * self.bytes_per_s)

    def over_count(self) -> str | None:
        """The sample cap (``samples``, ``samples_per_s``) one more sample would go over, else
        None. Call :meth:`refill` first."""
        if self.samples + 1 > self.max_samples:
            return "samples"
        if self._sample_bucket < 1:
            return "samples_per_s"
        return None

    def over_bytes(self, nbytes: int) -> str | None:
        """The byte cap (``bytes``, ``bytes_per_s``) ``nbytes`` more would go over, else None."""
        if self.bytes + nbytes > self.max_bytes:
            return "bytes"
        if self._byte_bucket < nbytes:
            return "bytes_per_s"
        return None

    def take(self, nbytes: int) -> None:
        self.samples += 1
        self.bytes += nbytes
        self._sample_bucket -= 1
        self._byte_bucket -= nbytes


def meter(limits: SampleLimits, scope: str) -> Meter:
    """A fresh :class:`Meter` for ``scope`` (``realm`` or ``cell``) of ``limits``."""
    g = lambda cap: getattr(limits, f"{scope}_{cap}")  # noqa: E731
    return Meter(g("samples_per_s"), g("bytes_per_s"), g("samples"), g("bytes"))


def describe(limits: SampleLimits, scope: str, cap: str) -> str:
    """``more than 2,000 samples/s`` for a cap, in words."""
    v = getattr(limits, f"{scope}_{cap}")
    if cap == "samples_per_s":
        return f"more than {v:,.0f} samples/s (over {BURST_S:g} s)"
    if cap == "bytes_per_s":
        return f"more than {v / 2**20:,.1f} MiB/s (over {BURST_S:g} s)"
    if cap == "samples":
        return f"more than {v:,} samples in all"
    return f"more than {v / 2**20:,.0f} MiB in all"
