"""The one memory analysis: every memory-like series of a cell, its collections (GC events), its
floors and its class — *flat*, *bounded*, *growing until collected* or *retained growth* — with
the evidence each needs (analysing half; no browser). Every workload's memory numbers (the
memory section, retention, gc-retention, growth slopes, budgets' projections) come from
:func:`memory_of`, computed once per cell.

Series (one per cell, one value per position — the last one seen there — positions ≥ the
warm-up): from steps.csv, exact counts of the worker's FinalizationRegistry probe (live
GPUBindGroup wrappers, GPUBuffer wrappers not yet collected, GPUBuffers not destroyed, buffer
bytes not destroyed) and the emulation's modeled native bytes (emulated WebGPU only); from
memory.csv, measured: RSS per process type summed per sampling round and the worker's JS heap.

*Collections of the worker* (:func:`collection_tokens`, :func:`collections`): steps in which it saw
the engine's GC collect wrappers (``bind_groups_collected`` or ``buffers_collected`` rose) —
the GC events of the retention and gc-retention sections and of GC vs latency. *Forced
collections* (``--gc-checkpoints N``, Chromium only, :func:`forced_tokens`): placed on the step
in which they collected wrappers of ours, else on the first step received after the engine's
answer.

Each series' own drops, its floors (its minimum after each drop) and its class come from
harness/stats/floors.py (:func:`harness.stats.floors.classify`); floors are never read at
another series' collections. Projections to a memory budget (:func:`projection`) are made
only for the series the budget measures (content process RSS, modeled native bytes:
:func:`budgeted`), from the floor slope of retained growth with 3 floors or more; none otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.stats.cells import rss_rounds
from harness.stats.floors import (FIT_POINTS, KINDS, MIN_FLOORS, MIN_POINTS, MemoryClass, classify,  # noqa: F401
                                  drops, fit_strata, floor_slope, floors_of, growth_fit, growth_strata, noise,
                                  per_token, segment_rate, segments, thin, too_few)
from harness.tables import CONTENT_PROCESS_TYPES
from harness.process_types import processes_of

#: Series from steps.csv: name → (column, unit, label, own collected counter or None). Exact
#: counts (or modeled bytes): any fall is a drop.
STEP_SERIES: dict[str, tuple[str, str, str, str | None]] = {
    "bind_groups_live": ("bind_groups_live", "bind groups", "live GPUBindGroup wrappers (created − collected)",
                         "bind_groups_collected"),
    "buffers_live": ("buffers_live", "buffers", "GPUBuffer wrappers not yet collected (destroyed ones included)",
                     "buffers_collected"),
    # their collections: buffer_bytes_collected, bytes of buffers collected before destroy() (a
    # collected wrapper of a destroyed buffer, buffers_collected's too, takes nothing from them)
    "buffers_not_destroyed": ("buffers_not_destroyed", "buffers",
                              "GPUBuffers not destroyed (created − destroyed − collected before destroy)",
                              "buffer_bytes_collected"),
    "buffer_bytes_live": ("buffer_bytes_live", "bytes", "buffer bytes not destroyed (created − destroyed − collected)",
                          "buffer_bytes_collected"),
    # the emulation releases a bind group's native bytes when its wrapper is collected (web/emulation/)
    "modeled_native_bytes": ("modeled_native_bytes", "bytes", "modeled native bytes of bind groups (emulated)",
                             "native_bind_groups_released"),
    "modeled_buffer_bytes": ("modeled_buffer_bytes", "bytes", "modeled native bytes of buffers (emulated)", None),
}
#: steps.csv columns whose rise is a collection the worker saw (FinalizationRegistry).
COLLECTED_COLUMNS = ("bind_groups_collected", "buffers_collected")


@dataclass
class Series:
    """One memory-like series of a cell: positions ``t`` (tokens), values ``y``, whether the
    values are exact counts (any fall is a drop) and the positions where its own collected
    counter rose (``collected``)."""

    name: str
    label: str
    unit: str
    t: np.ndarray
    y: np.ndarray
    exact: bool
    collected: list[float] = field(default_factory=list)


@dataclass
class CellMemory:
    """Everything memory of one cell, computed once (:func:`memory_of`): the worker's collection
    steps (``natural``; ``bind_groups``: bind groups collected per step where any were), where
    forced collections landed (``forced``), every series and its class."""

    cell: str
    natural: list[int]
    forced: list[int]
    bind_groups: pd.Series
    series: dict[str, Series]
    classes: dict[str, MemoryClass]


def collections(steps: pd.DataFrame, column: str = "bind_groups_collected") -> pd.Series:
    """Wrappers collected per step, for the steps in which any were (a collection the worker
    saw): a Series indexed like ``steps`` (one cell's steps.csv rows, ordered by step); empty
    without the column. Collections during the first step count as an event of that step."""
    if column not in steps or not steps[column].notna().any():
        return pd.Series(dtype=float)
    collected = steps[column].astype(float)
    rose = collected.diff()
    if len(rose):
        rose.iloc[0] = collected.iloc[0]
    return rose[rose > 0]


def collection_tokens(steps: pd.DataFrame) -> list[int]:
    """Steps of a cell (ordered by step) in which the worker saw wrappers collected."""
    out: set[int] = set()
    for col in COLLECTED_COLUMNS:
        rose = collections(steps, col)
        out |= {int(s) for s in steps.loc[rose.index, "step"]}
    return sorted(out)


def forced_placements(steps: pd.DataFrame, forced: list, natural: list[int]) -> list[tuple[int, bool]]:
    """``(step, exact)`` where each forced collection landed. ``forced``: ``(token, asked_s,
    done_s[, done_token])`` of ``gc_checkpoint`` samples; ``natural``: :func:`collection_tokens`.
    ``exact``: the worker waited at that checkpoint (harness/probe/gc_checkpoints.py: it was
    answered while the last step the harness had seen was still ``token``, and the next step
    came only after the answer), so the collection fell between step ``token`` and ``token + 1``
    and the floor is read at ``token + 1`` whatever other series saw collected meanwhile."""
    out: dict[int, bool] = {}
    if not len(steps) or "received_s" not in steps:
        return []
    received = steps[["step", "received_s"]].dropna().sort_values("received_s")
    for item in forced:
        asked, done = (item[1], item[2]) if len(item) > 2 else (item[1], item[1])
        after = received.loc[received["received_s"] > done, "step"].astype(int).tolist()
        window = received.loc[received["received_s"] > asked, "step"].astype(int).tolist()
        window = window[:len(window) - len(after) + 2]  # while it ran, and two steps after its answer
        waited = len(item) > 3 and item[3] == item[0] and bool(after) and after[0] == int(item[0]) + 1
        hit = [t for t in window if t in natural]
        if waited:
            out[after[0]] = True  # between step token and token + 1: read the floor there
        elif hit:
            out.setdefault(hit[0], False)  # it collected wrappers of ours: that collection is the event
        elif after:
            out.setdefault(after[0], False)  # nothing of ours was collectable: what is there after it survived
    return sorted(out.items())


def forced_tokens(steps: pd.DataFrame, forced: list, natural: list[int]) -> list[int]:
    """Steps in which forced collections landed (:func:`forced_placements`; see the module
    docstring)."""
    return [t for t, _ in forced_placements(steps, forced, natural)]


def budgeted(series: str) -> bool:
    """Whether a memory budget counts this series: the content process's RSS and the modeled
    native bytes (summary.csv ``would_be_killed_at_token``, harness/tables.py)."""
    return series in ("modeled_native_bytes", "modeled_buffer_bytes") or series in {
        f"rss_bytes_{p}" for p in CONTENT_PROCESS_TYPES}


def projection(mc: MemoryClass, budget_bytes: float | None) -> dict:
    """Tokens until a budgeted byte series (:func:`budgeted`) reaches ``budget_bytes`` from its
    last value at its floor slope: ``{"tokens", "slope", "which", "budget_bytes", "why"}``.
    The one rule of every projection (as harness/stats/workloads/retention.py
    ``budget_projection``): only retained growth from :data:`MIN_FLOORS` floors or more is
    projected; ``tokens`` None with ``why`` otherwise (no budget, not what the budget counts,
    too few floors, not growing, already over: ``tokens`` 0)."""
    slope, which = mc.growth
    out = {"tokens": None, "slope": slope, "which": which, "budget_bytes": budget_bytes, "why": ""}
    if not budget_bytes:
        out["why"] = "no --memory-budget given"
    elif "bytes" not in mc.unit or not budgeted(mc.series):
        out["why"] = "not what a memory budget counts"
    elif mc.kind == "too-few-samples":
        out["why"] = f"not projected: {which}"
    elif len(mc.floors) < MIN_FLOORS:
        out["why"] = (f"not projected: {mc.kind.replace('-', ' ')}, {len(mc.floors)} floor(s) (needs {MIN_FLOORS})"
                      if mc.kind not in ("flat", "bounded") else f"not projected: {mc.kind}")
    elif mc.kind != "retained-growth" or slope is None:
        out["why"] = f"not projected: {mc.kind.replace('-', ' ')}"
    elif slope <= 0:
        out["why"] = f"not projected: {which} is not positive"
    elif mc.last >= budget_bytes:
        out["why"], out["tokens"] = "already over the budget", 0.0
    else:
        out["tokens"] = float((budget_bytes - mc.last) / slope)
    return out


def _step_series(cell, warmup: int) -> dict[str, Series]:
    out = {}
    s = cell.steps
    for name, (col, unit, label, counter) in STEP_SERIES.items():
        present = s[col].notna().to_numpy() if col in s else None
        if present is not None and present.any():
            keep = present & (s["step"].to_numpy() >= warmup)  # two columns, not the cell's whole frame filtered
            rose = collections(s, counter) if counter else pd.Series(dtype=float)
            own = [float(p) for p in s.loc[rose.index, "step"] if p >= warmup]
            t, y = per_token(s["step"][keep].to_numpy(float), s[col][keep].to_numpy(float))
            out[name] = Series(name, label, unit, t, y, True, own)
    return out


def _measured_series(cell, warmup: int) -> dict[str, Series]:
    out = {}
    rounds = rss_rounds(cell)
    if len(rounds) and "token" in rounds:
        tok = rounds["token"].to_numpy(float)
        after = np.nan_to_num(tok, nan=-1) >= warmup
        for ptype in [c for c in rounds.columns if c not in ("token", "time_s")]:
            v = rounds[ptype].to_numpy(float)
            keep = after & ~np.isnan(v)
            what = "every process" if ptype == "all" else processes_of(ptype)  # summed per round
            t, y = per_token(tok[keep], v[keep])
            out[f"rss_bytes_{ptype}"] = Series(f"rss_bytes_{ptype}", f"RSS of {what} (sum, measured)", "bytes", t, y, False)
    m = cell.memory
    if len(m) and "js_heap_bytes" in m:
        h = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna() & (m["token"].fillna(-1) >= warmup)]
        if len(h):
            t, y = per_token(h["token"].to_numpy(float), h["js_heap_bytes"].to_numpy(float))
            out["js_heap_bytes"] = Series("js_heap_bytes", "worker JS heap used (CDP, measured)", "bytes", t, y, False)
    return out


def series_of(cell, warmup: int = 1) -> dict[str, tuple[str, str, np.ndarray, np.ndarray]]:
    """Every memory-like series of a :class:`harness.stats.cells.CellData` with data, positions
    ≥ ``warmup``: name → (label, unit, positions, values), one value per position. RSS series
    are ``rss_bytes_<process type>`` and ``rss_bytes_all``; the JS heap ``js_heap_bytes``."""
    return {n: (s.label, s.unit, s.t, s.y) for n, s in memory_of(cell, warmup).series.items()}


def cell_events(cell) -> tuple[list[int], list[int]]:
    """(steps in which the worker saw collections, steps where forced collections landed) of a
    cell. A forced collection the worker waited at falls between step ``token`` and ``token + 1``
    and is placed there (:func:`forced_placements`). One the worker did not wait at, in which no
    wrapper of ours was seen collected, is placed only by time (the step after the engine's
    answer), so it counts only in a cell with fewer than two collections it saw."""
    if "memory_events" in cell.cache:
        return cell.cache["memory_events"]
    natural = collection_tokens(cell.steps) if len(cell.steps) else []
    placed = forced_placements(cell.steps, list(getattr(cell, "gc_forced", [])), natural)
    # placed by time alone (the worker did not wait), a forced collection is kept only where
    # the worker saw few collections of its own; one the worker waited at is placed exactly
    forced = [f for f, exact in placed if exact or len(natural) < 2 or f in natural]
    cell.cache["memory_events"] = (natural, forced)
    return natural, forced


def memory_of(cell, warmup: int = 1) -> CellMemory:
    """The :class:`CellMemory` of a :class:`harness.stats.cells.CellData` (series from position
    ``warmup`` on), computed once per cell and warm-up: the one place GC events, drops, floors
    and classes come from."""
    key = ("memory", warmup)
    if key in cell.cache:
        return cell.cache[key]
    natural, forced = cell_events(cell)
    steps = cell.steps
    bg = collections(steps, "bind_groups_collected") if len(steps) else pd.Series(dtype=float)
    bind_groups = pd.Series(bg.to_numpy(), index=steps.loc[bg.index, "step"].astype(int).to_numpy()) if len(bg) \
        else pd.Series(dtype=float)
    series = {**_step_series(cell, warmup), **_measured_series(cell, warmup)} if len(steps) or len(cell.memory) else {}
    classes = {}
    for name, s in series.items():
        mc = classify(cell.cell, name, s.label, s.unit, s.t, s.y, s.collected, forced,
                      0.0 if s.exact else noise(s.y))
        if mc is not None:
            classes[name] = mc
    _destroyed_wrappers(classes)
    _destroyed_falls(classes, steps)
    cell.cache[key] = CellMemory(cell.cell, natural, forced, bind_groups, series, classes)
    return cell.cache[key]


def _destroyed_wrappers(classes: dict[str, MemoryClass]) -> None:
    """GPUBuffer wrappers whose floors rise while the buffers were destroyed are not GPU memory
    kept: ``retained-wrappers`` (the buffers not destroyed, by count or else by bytes, are what
    says whether GPU memory is retained)."""
    wrappers = classes.get("buffers_live")
    held = classes.get("buffers_not_destroyed") or classes.get("buffer_bytes_live")
    if wrappers is None or held is None or wrappers.kind != "retained-growth" or held.kind in (
            "retained-growth", "growing-until-collected", "too-few-samples"):
        return
    wrappers.kind = "retained-wrappers"
    wrappers.reason = (f"the wrappers' floors rise, but the buffers were destroyed ({held.label}: {held.kind}): "
                       "references to destroyed GPUBuffers kept in JS, not GPU memory")


#: Series whose falls destroy() makes (steps.csv ``buffer_destroy``: GPUBuffer.destroy() calls).
DESTROYED_SERIES = ("buffers_not_destroyed", "buffer_bytes_live", "modeled_buffer_bytes")


def _destroyed_falls(classes: dict[str, MemoryClass], steps: pd.DataFrame) -> None:
    """A buffer series flat until one fall (harness/stats/floors.py ``classify``) whose step
    destroyed buffers: says that destroy() freed them there (e.g. ort-run's session.release at
    its last step), not a collection."""
    if not len(steps) or "buffer_destroy" not in steps:
        return
    for name in DESTROYED_SERIES:
        mc = classes.get(name)
        if mc is None or mc.kind != "flat" or len(mc.falls) != 1 or mc.collections or "(a fall, " not in mc.reason:
            continue
        at = steps.loc[steps["step"] == mc.falls[0], "buffer_destroy"]
        n = int(at.iloc[0]) if len(at) and pd.notna(at.iloc[0]) else 0
        if n > 0:
            mc.reason = mc.reason.replace("(a fall, no collection seen)",
                                          f"(destroy() of {n} buffers at that step, no collection)")


def cell_classes(cell, warmup: int = 1) -> dict[str, MemoryClass]:
    """Series name → :class:`MemoryClass` for every memory-like series of one cell."""
    return memory_of(cell, warmup).classes


@dataclass
class FitPoints:
    """What a growth slope of one series of one cell is fitted to (:func:`floor_points`)."""

    x: np.ndarray
    y: np.ndarray
    basis: str
    rate: float
    events: list[float]
    points: int
    #: this cell's own growth per token (:attr:`MemoryClass.growth_per_token`, computed once)
    slope: float | None = None
    #: why nothing is fitted (``too-few``): "too few samples (n=4; needs 10)", "too few floors (n=2; needs 3)"
    why: str = ""
    #: what the fit takes pairs within (the floors, or the stretches between drops) and the
    #: least half-width of its interval (one token's growth over the floors' span)
    strata: list = field(default_factory=list)
    res: float = 0.0


def floor_points(cell, series: str, warmup: int = 1) -> FitPoints:
    """What a growth slope of ``series`` is fitted to for one cell
    (:func:`harness.stats.floors.growth_strata`, the same as its :class:`MemoryClass`'s growth):
    its floors (``floors``: :data:`MIN_FLOORS` or more), every point of a flat series
    (``flat``), else the stretches between drops (``series``: the rate between drops);
    ``too-few`` (nothing to fit, ``why`` says what is missing) below :data:`MIN_POINTS`
    positions or for a bounded series with fewer than :data:`MIN_FLOORS` floors; ``none``
    without the series. ``rate``: the rate between drops (units per token, 0 when unknown);
    ``points``: the series' positions."""
    mem = memory_of(cell, warmup)
    s, mc = mem.series.get(series), mem.classes.get(series)
    if s is None or mc is None:
        return FitPoints(np.array([]), np.array([]), "none", 0.0, [], 0)
    basis, strata, res, why = growth_strata(mc, s.t, s.y)
    if basis == "too-few":
        return FitPoints(np.array([]), np.array([]), "too-few", 0.0, [], mc.points, why=why)
    rate = max(mc.rate or 0.0, 0.0)
    x, y = (strata[0] if basis == "floors" else (s.t, s.y))
    return FitPoints(np.asarray(x, float), np.asarray(y, float), basis, rate, [] if basis == "flat" else mc.events,
                     mc.points, mc.growth_per_token, strata=strata, res=res)
