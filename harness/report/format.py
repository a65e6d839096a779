"""The one formatter: how every number, interval, difference and provenance label is written for
people — in report.html, compare.html, summary.md, budget messages and the console.

Rules: ``—`` for a missing value (None or NaN); byte quantities in binary units (KiB, MiB, GiB,
3 significant digits, the rest of the unit kept: ``MiB/token``); other numbers to 4
significant digits, whole numbers with thousands separators from 1,000 up (10,000 up for fractions).
"""

from __future__ import annotations

import math
import sys
from typing import Any

from harness.stats.provenance import DRIVEN_BY, provenance  # noqa: F401 (where a number came from, in words)

MISSING = "—"
_BINARY = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def missing(v: Any) -> bool:
    """True for None, NaN and pandas' NA (pandas is not imported here: the command line's
    validation formats budget messages before pandas loads, harness/cli/)."""
    pd = sys.modules.get("pandas")
    if v is None or (pd is not None and v is pd.NA):
        return True
    try:
        return bool(v != v)  # NaN
    except (TypeError, ValueError):
        return False


def number(v: Any, digits: int = 4) -> str:
    """``12.35``, ``1,234``, ``1,234,567``: ``digits`` significant digits, every number of that
    many integer digits or more whole with thousands separators (never ``1674`` beside ``1,684``);
    non-numbers as ``str(v)``; :data:`MISSING` when missing."""
    if missing(v):
        return MISSING
    if isinstance(v, bool) or not isinstance(v, (int, float)) and not hasattr(v, "__float__"):
        return str(v)
    f = float(v)
    if not math.isfinite(f):
        return MISSING
    if abs(f) >= 10 ** (digits - 1):  # 1,674 and 1,674.4 alike (the integer digits are the significant ones)
        return f"{f:,.0f}"
    return f"{f:.{digits}g}"


def value(v: Any, unit: str = "") -> str:
    """A measured value in ``unit``: bytes in KiB/MiB/GiB (``1.5 MiB/token``), else :func:`number`."""
    if missing(v):
        return MISSING
    if "bytes" in unit and abs(float(v)) >= 1024:
        for div, name in _BINARY:
            if abs(float(v)) >= div:
                x = float(v) / div
                return f"{x:.3g} {name}{unit.replace('bytes', '')}" if abs(x) < 1000 else f"{x:,.0f} {name}{unit.replace('bytes', '')}"
    if "bytes" in unit:  # under 1 KiB: still says it is bytes, so an interval reads in one unit
        return f"{number(v)} B{unit.replace('bytes', '')}"
    return number(v)


def reason(row: Any, step: str = "token") -> str:
    """A memory series' reason (harness/stats/workloads/memory.py row, or a dict with
    ``reason_template`` and ``reason_values``: ``name → [value, unit]``) with its quantities in
    this formatter's units (``floor slope -138 KiB/token [-140 KiB/token, -136 KiB/token]``);
    ``step``: what one step of the workload is called in a rate (``step`` for ort-run and apps:
    ``KiB/step``)."""
    template, values = row.get("reason_template"), row.get("reason_values") or {}
    if template is None:
        return text(row.get("reason"))
    return template.format(**{k: value(v, u.replace("/token", f"/{step}") if isinstance(u, str) else u)
                              for k, (v, u) in values.items()})


def mib(v: Any) -> str:
    """Bytes as MiB with one decimal (``1,234.5``), for table columns headed "MiB"."""
    return MISSING if missing(v) else f"{float(v) / 2**20:,.1f}"


def estimate(e: Any) -> str:
    """``9.28 [8.50, 12.0]``: point estimate and 95% CI of a
    :class:`harness.stats.run.Estimate` (or its dict); the point alone without a CI or when every
    sample was equal (``exact``); what is missing (``too few samples (n=4; needs 10)``) where too
    few points gave no slope or interval."""
    if e is None:
        return MISSING
    d = e.to_dict() if hasattr(e, "to_dict") else e
    unit = d.get("unit", "")
    ci = ("" if d.get("ci_low") is None or d.get("ci_method") == "exact"
          else f" [{value(d['ci_low'], unit)}, {value(d['ci_high'], unit)}]")
    if d.get("ci_method") == "n=1: no interval":
        ci = " (1 repetition: no interval)"  # n counts repetitions here, never steps
    how = str(d.get("ci_method") or "")
    if how.startswith("too few"):  # what is missing, said instead of a slope or an interval
        return how if missing(d.get("value")) else f"{value(d.get('value'), unit)} ({how}: no interval)"
    if "series" in str(d.get("basis") or "").split("+") and not missing(d.get("value")):
        return rate_between_collections(d.get("value"), unit, d.get("floors"), d.get("drops"))
    return f"{value(d.get('value'), unit)}{ci}"


def rate_between_collections(v: float, unit: str, floors: int | None, drops: int | None = None) -> str:
    """A growth slope fitted from fewer than 3 memory floors (``basis`` ``series``): how fast the
    series rose between collections, never a growth rate: ``rose 8 bind groups/token between
    collections (1 floor; needs 3)`` (3: harness/stats/floors.py MIN_FLOORS); where the series
    never dropped (``drops`` 0: no fall, no collection of its own objects; a forced collection
    may have freed none) there is nothing "between": ``rose 7 bind groups/token and never fell``."""
    k = floors or 0
    amount = value(v, unit) if "bytes" in unit else f"{value(v, unit)} {unit}"
    if drops == 0:
        return f"rose {amount} and never fell"
    return f"rose {amount} between collections ({k} floor{'' if k == 1 else 's'}; needs 3)"


def signed(v: float, unit: str = "") -> str:
    """``+1.25`` / ``-3.5 KiB``: a difference with its sign."""
    return ("+" if v >= 0 else "-") + value(abs(v), unit if "bytes" in unit else "")


def diff(d: Any) -> str:
    """``-1.11 ms [-3.24, +1.96] (-10.7% [-26.3%, +18.8%])`` for a
    :class:`harness.stats.run.Difference`; no interval when it is a point (every sample equal).
    What its significance rests on follows where that is not the interval itself: the interval
    across repetitions of a measured quantity (``(within-run; across 2 + 2 repetitions: [-14.8,
    +10.7])``: the first intervals are within-run), and what is missing (``(1 repetition: within-run
    only)``, ``(emulated WebGPU: … not compared)``) or the verdict when Holm's correction decided it
    (``(not significant after Holm's correction over 6 (p=0.021 > 0.0167))``: Difference.verdict).
    A plain ``significant`` / ``not significant`` is left to the surface (bold, a console mark)."""
    if d.diff is None:
        return MISSING
    ci = "" if d.diff_low is None or d.diff_low == d.diff_high else f" [{signed(d.diff_low, d.unit)}, {signed(d.diff_high, d.unit)}]"
    rel = ""
    if d.rel is not None:
        rci = ("" if d.rel_low is None or d.rel_low == d.rel_high
               else f" [{d.rel_low * 100:+.1f}%, {d.rel_high * 100:+.1f}%]")
        rel = f" ({d.rel * 100:+.1f}%{rci})"
    unit = "" if "bytes" in d.unit or not d.unit else f" {d.unit}"  # bytes: signed() wrote B/KiB/MiB
    note = " (n=1: no interval)" if d.ci_method == "n=1: no interval" else ""
    evidence = getattr(d, "evidence", "") or ""
    if getattr(d, "reps_low", None) is not None:  # a measured quantity: what its significance rests on
        # the intervals before it are within-run (tokens resampled): named so, the verdict's follows
        note = (f" (within-run; across {d.reps_a} + {d.reps_b} repetitions: "
                f"[{signed(d.reps_low, d.unit)}, {signed(d.reps_high, d.unit)}])")
    if d.significant is None and evidence and evidence != "n=1: no interval":
        note += f" ({evidence})"  # what is missing for a verdict (emulated times: not compared), intervals or not
    elif d.significant is not None and getattr(d, "holm_m", 0):
        note += f" ({d.verdict})"  # the verdict went through Holm's correction: which, and its p against the limit
    return f"{signed(d.diff, d.unit)}{unit}{ci}{rel}{note}"


def interval(lo: Any, hi: Any, unit: str = "") -> str:
    """`` [lo, hi]`` (leading space), or empty when there is no interval or it is a point."""
    return "" if missing(lo) or lo == hi else f" [{value(lo, unit)}, {value(hi, unit)}]"


def driven_by(row: Any) -> str:
    """``via remote WebDriver http://grid:4444``: how a cell's browser was driven and the
    endpoint (manifest cell ``driver``, ``endpoint``); "" when unknown."""
    driver = row.get("driver")
    if missing(driver) or not driver:
        return ""
    endpoint = row.get("endpoint")
    return DRIVEN_BY.get(driver, driver) + ("" if missing(endpoint) or not endpoint else f" {endpoint}")


def mean_interval(t: Any, unit: str = "") -> str:
    """``12.3 [10.1, 14.5] (n=7)`` from a ``(mean, low, high, n)`` tuple
    (:func:`harness.stats.estimators.mean_t_ci`); ``12.3 (n=1)`` without an interval."""
    if not t or missing(t[0]):
        return MISSING
    m, lo, hi, n = t
    if missing(lo):
        return f"{number(m)}{unit} (n={n})"
    return f"{number(m)}{unit} [{number(lo)}, {number(hi)}] (n={n})"


def profile(v: Any) -> str:
    """A cell's profile: the name, or ``default`` for a workload without profiles (never ``nan``)."""
    return "default" if missing(v) or str(v) == "" else str(v)


def text(v: Any) -> str:
    """A text column's value: :data:`MISSING` for None/NaN (never ``nan`` or ``None``)."""
    return MISSING if missing(v) else str(v)


def share(part: Any, total: Any) -> str:
    """``3.21 (42%)``: a part and its share of ``total``."""
    if missing(part):
        return MISSING
    return f"{number(part)} ({100 * float(part) / float(total):.0f}%)" if total else number(part)
