"""Auto-sampling (tachometer's ``--auto-sample-conditions``): when to stop adding repetitions.

Each round adds one repetition of every variant (fresh browser contexts, round-robin). After
each round the ``ms_per_token`` difference of every variant pair — its 95% CI across the
repetitions (Welch's t over per-repetition medians: a time is judged across fresh contexts,
never by the within-run bootstrap) — is checked against every condition::

      condition 5%  →  thresholds -5% and +5%
      difference CI:          [-9% ---- -6%]                 resolved: clears both
                                 [-7% ------ +2%]            unresolved: contains -5%
            -5%      0%     +5%
    ---------|-------|-------|---------

Sampling stops when every pair clears every threshold after at least
:data:`AUTO_SAMPLE_MIN_REPETITIONS` rounds, or the timeout passes, or no pair can be compared.
The loop itself (which needs a browser) lives in harness/cli/run.py; this module decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.stats.metrics import deterministic

if TYPE_CHECKING:  # annotations only: parsing --auto-sample needs no pandas/scipy
    from harness.stats.run import Difference

#: tachometer's default --timeout: 3 minutes of auto-sampling.
DEFAULT_TIMEOUT_MIN = 3.0
#: Repetitions before auto-sampling may stop: every variant seen in at least two fresh contexts.
AUTO_SAMPLE_MIN_REPETITIONS = 2
#: The CLI's own --repeat ceiling.
MAX_REPETITIONS = 1000



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


def interval(d: Difference, relative: bool) -> tuple[float | None, float | None]:
    """The interval a condition is checked against: for a measured quantity (a time) the one
    across repetitions (Welch's t over per-repetition values, :class:`harness.stats.run.Difference`
    ``reps_low``/``reps_high``, relative to a's value) — the within-run block bootstrap is not
    enough to stop on, as it is not enough to call a difference significant; for a count its own."""
    if not deterministic(d.metric):
        if d.reps_low is None:
            return None, None
        if not relative:
            return d.reps_low, d.reps_high
        return (None, None) if not d.a_value else (d.reps_low / abs(d.a_value), d.reps_high / abs(d.a_value))
    return (d.rel_low, d.rel_high) if relative else (d.diff_low, d.diff_high)


def unresolved(diffs: list[Difference], conditions: list[Condition], metric: str = "ms_per_token") -> list[str]:
    """Descriptions of the (difference, threshold) pairs whose CI (:func:`interval`) still
    contains the threshold; empty when every one is resolved. A difference without a CI is
    unresolved."""
    out = []
    for d in (d for d in diffs if d.metric == metric):
        for cond in conditions:
            lo, hi = interval(d, cond.relative)
            for t in cond.thresholds():
                if lo is None or hi is None or (lo <= t <= hi):
                    out.append(f"{d.b} vs {d.a}: {describe_diff(d, cond.relative)} contains {_thr(t, cond.relative)}")
    return out


def _thr(t: float, relative: bool) -> str:
    return f"{t * 100:+g}%" if relative else f"{t:+g} ms"


def describe_diff(d: Difference, relative: bool = True) -> str:
    """``-8.1% [-10.2%, -6.0%]`` (relative) or ``-0.81 ms [-1.02, -0.60]``: the interval
    :func:`interval` checks; ``[no CI across repetitions]`` where it has none."""
    lo, hi = interval(d, relative and d.rel is not None)
    none = " [no CI across repetitions]" if not deterministic(d.metric) else " [no CI]"
    if relative and d.rel is not None:
        ci = f" [{lo * 100:+.1f}%, {hi * 100:+.1f}%]" if lo is not None else none
        return f"{d.rel * 100:+.1f}%{ci}"
    if d.diff is None:
        return "n/a"
    ci = f" [{lo:+.4g}, {hi:+.4g}]" if lo is not None else none
    return f"{d.diff:+.4g} {d.unit}{ci}"


def parse_timeout(text: str) -> float:
    """``--timeout``: minutes (tachometer's unit) as a plain number, or with ``s``/``m`` → seconds.
    Raises ``ValueError``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min)?\s*", text or "")
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"--timeout {text!r} is not a positive duration (minutes, or e.g. 90s, 2m)")
    return float(m.group(1)) * (1 if m.group(2) == "s" else 60)


@dataclass
class Decision:
    """Whether to stop sampling after ``repetitions`` rounds, and why (one line, printed and kept
    in ``manifest.json`` → ``auto_sample.reason``)."""

    stop: bool
    reason: str


def decide(diffs: list[Difference], conditions: list[Condition], repetitions: int, elapsed_s: float,
           timeout_s: float, metric: str = "ms_per_token") -> Decision:
    """The stopping rule (module docstring) on the run's variant differences of ``metric``."""
    diffs = [d for d in diffs if d.metric == metric]
    left = unresolved(diffs, conditions, metric)
    conds = ", ".join(str(c) for c in conditions)
    if not diffs:
        return Decision(True, f"stopped after {repetitions} repetition(s): no two variants of one workload "
                              f"finished ok, so no difference to sample")
    if not left and repetitions >= AUTO_SAMPLE_MIN_REPETITIONS:
        shown = "; ".join(f"{d.b} vs {d.a}: {describe_diff(d, conditions[0].relative)}" for d in diffs)
        return Decision(True, f"stopped after {repetitions} repetitions: every {metric} difference's 95% CI "
                              f"clears {conds} ({shown})")
    if elapsed_s >= timeout_s and repetitions >= AUTO_SAMPLE_MIN_REPETITIONS:
        return Decision(True, f"stopped after {repetitions} repetitions: --timeout ({timeout_s:g} s) passed with "
                              f"{len(left)} unresolved: {'; '.join(left)}")
    if repetitions >= MAX_REPETITIONS:
        return Decision(True, f"stopped at {MAX_REPETITIONS} repetitions with {len(left)} unresolved: {'; '.join(left)}")
    return Decision(False, f"{len(left)} unresolved after {repetitions} repetition(s)")
