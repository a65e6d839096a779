"""The probe catalog, read from its one source: ``web/probes/catalog.js``.

The JavaScript module lists what the in-worker probes count (``COUNTERS``) and track
(``LIVE``) as strict JSON between ``/* catalog:<name> */`` and ``/* end:<name> */`` markers.
This module parses those arrays with the standard library only (the native benchmark on a GPU
machine imports it too), and the harness derives from them the sample schema
(harness/serve/samples.py), the steps.csv columns (harness/tables.py) and the per-token metrics
(harness/stats/metrics.py). tests/test_catalog.py evaluates the JS in node and compares.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness import locations

CATALOG_JS = locations.catalog_js()


@dataclass(frozen=True)
class Counter:
    """One per-step counter: ``name`` (as the worker sends it), ``column`` (steps.csv), ``unit``,
    ``metric`` (the per-token metric of the statistics, or None), ``what`` it counts."""

    name: str
    column: str
    unit: str
    metric: str | None
    what: str


@dataclass(frozen=True)
class LiveKey:
    """One live-object count of a step sample's ``live`` (also its steps.csv column).
    ``optional``: senders may leave it out (not measured); ``signed``: it may be negative."""

    name: str
    unit: str
    what: str
    optional: bool = False
    signed: bool = False


def _array(text: str, name: str) -> list[dict]:
    m = re.search(rf"/\*\s*catalog:{name}\s*\*/(.*?)/\*\s*end:{name}\s*\*/", text, re.S)
    if not m:
        raise ValueError(f"{CATALOG_JS}: no /* catalog:{name} */ … /* end:{name} */ block")
    try:
        return json.loads(m.group(1))
    except ValueError as exc:
        raise ValueError(f"{CATALOG_JS}: the {name} block is not strict JSON ({exc})") from None


@lru_cache(maxsize=None)
def _load(path: Path = CATALOG_JS) -> tuple[tuple[Counter, ...], tuple[LiveKey, ...]]:
    text = Path(path).read_text(encoding="utf-8")
    return (tuple(Counter(**c) for c in _array(text, "counters")),
            tuple(LiveKey(**k) for k in _array(text, "live")))


def counters() -> tuple[Counter, ...]:
    """Every counter, in steps.csv column order. Raises ``ValueError`` on a malformed catalog."""
    return _load()[0]


def live_keys() -> tuple[LiveKey, ...]:
    """Every live-object key, in steps.csv column order."""
    return _load()[1]


def counter_names() -> list[str]:
    """Counter names as the worker sends them (``createBindGroup``…)."""
    return [c.name for c in counters()]
