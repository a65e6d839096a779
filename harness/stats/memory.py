"""Memory-like series of a cell classified as *bounded*, *growing until collected* or *retained
growth*, from their floors after each collection (analysing half; no browser).

Series (one per cell, each reduced to one value per token: the last one seen in that token):
live GPUBindGroup and GPUBuffer wrappers and live buffer bytes (steps.csv, the worker's
FinalizationRegistry probe), the emulation's modeled native bytes of bind groups and of buffers
(steps.csv, emulated WebGPU only), RSS per process type summed per sampling round (memory.csv,
psutil) and the worker's JS heap (memory.csv, CDP).

A *collection event* is a token in which the worker saw the engine's GC collect wrappers
(``bind_groups_collected`` or ``buffers_collected`` rose) or in which a forced collection
(``--gc-checkpoints N``: ``gc_checkpoint`` samples, Chromium only) landed: a token with
collected wrappers among the steps received between the request and two steps after the
engine's answer (the collection runs when the worker takes the request, and the answer comes
later), else — nothing of ours was collectable — the first step received after the answer. A *floor* is a series' value
at a collection event: what survived that collection. The *floor slope* (Theil–Sen over the
floors, Sen's 95% CI with three floors or more) is what "memory grows" means; a line through a
sawtooth is not.

Classes (:func:`classify`)::

    value
      |        /|        /|        /|      bounded: floors flat (the collections bring it back),
      |      /  |      /  |      /  |      or the series never rose; report the max and events
      |    /    |    /    |    /    |
      |  /      |  /      |  /      |      retained growth: the floors rise (a leak): significant
      |/________|/________|/________|___   floor slope, and the floors' rise over their span is
                ^         ^         ^      more than one token's growth (where in a token a
            collection events (floors)     collection lands moves a floor by up to that much)

    growing until collected: fewer than two floors (no collection seen, or one) while the series
    rises: its rate between collections is the growth, and nothing in the run tells whether a
    collection would bring it back; or floors that rose and then came back to the first floor
    (within one token's growth): growth that a later, larger collection frees.

The *rate between collections* is the Theil–Sen slope within the stretches between collection
events (pairs of tokens in one stretch only: the drops taken out). Projections to a memory budget (:func:`projection`) use the floor slope for
retained growth and the rate between collections for growing-until-collected series, and are
not made for bounded ones.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from harness.stats.cells import rss_rounds
from harness.stats.estimators import stratified_theil_sen, theil_sen

#: Series from steps.csv: name → (column, unit, label).
STEP_SERIES: dict[str, tuple[str, str, str]] = {
    "bind_groups_live": ("bind_groups_live", "bind groups", "live GPUBindGroup wrappers"),
    "buffers_live": ("buffers_live", "buffers", "live GPUBuffer wrappers"),
    "buffer_bytes_live": ("buffer_bytes_live", "bytes", "live buffer bytes (created − destroyed − collected)"),
    "modeled_native_bytes": ("modeled_native_bytes", "bytes", "modeled native bytes of bind groups (emulated)"),
    "modeled_buffer_bytes": ("modeled_buffer_bytes", "bytes", "modeled native bytes of buffers (emulated)"),
}
#: steps.csv columns whose rise is a collection the worker saw (FinalizationRegistry).
COLLECTED_COLUMNS = ("bind_groups_collected", "buffers_collected")
KINDS = ("bounded", "growing-until-collected", "retained-growth")


@dataclass
class MemoryClass:
    """One series of one cell, classified. ``events``: collection event tokens (``forced``: those
    from --gc-checkpoints); ``floors``: ``[token, value]`` at each event; ``floor_slope`` with its
    95% CI (units per token; CI ``None`` with fewer than 3 floors); ``rate``: mean change per
    token on tokens without a collection; ``series_slope``: Theil–Sen slope through every point
    (shown for contrast, never called growth); ``reason``: the class in words."""

    cell: str
    series: str
    label: str
    unit: str
    kind: str
    points: int
    first: float
    last: float
    max: float
    events: list[int] = field(default_factory=list)
    forced: list[int] = field(default_factory=list)
    floors: list[list[float]] = field(default_factory=list)
    floor_slope: float | None = None
    floor_low: float | None = None
    floor_high: float | None = None
    rate: float | None = None
    series_slope: float | None = None
    reason: str = ""

    def to_dict(self) -> dict:
        """JSON-ready dict (non-finite numbers as None)."""
        def clean(v):
            if isinstance(v, (float, np.floating)):
                return float(v) if np.isfinite(v) else None
            return [clean(x) for x in v] if isinstance(v, list) else v

        return {k: clean(v) for k, v in asdict(self).items()}

    @property
    def growth(self) -> tuple[float | None, str]:
        """(bytes or objects per token, which slope) a projection uses: the floor slope for retained
        growth, the rate between collections for growing-until-collected, (None, why) for bounded."""
        if self.kind == "retained-growth":
            return self.floor_slope, "floor slope"
        if self.kind == "growing-until-collected":
            return self.rate, "rate between collections"
        return None, "bounded: not projected"


def per_token(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One value per token (the last one seen in it), tokens ascending."""
    if not len(t):
        return t, y
    s = pd.Series(y, index=t.astype(int))
    s = s[~s.index.duplicated(keep="last")].sort_index()
    return s.index.to_numpy(float), s.to_numpy(float)


def collection_tokens(steps: pd.DataFrame) -> list[int]:
    """Tokens of a cell's steps (ordered by step) in which the worker saw wrappers collected."""
    out: set[int] = set()
    for col in COLLECTED_COLUMNS:
        if col in steps and steps[col].notna().any():
            v = steps[col].astype(float)
            rose = v.diff()
            if len(rose):
                rose.iloc[0] = v.iloc[0]
            out |= {int(s) for s in steps.loc[rose > 0, "step"]}
    return sorted(out)


def segments(t: np.ndarray, y: np.ndarray, events: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The stretches of a series between collection events (an event's token starts the next
    one): ``[(tokens, values), ...]``, the drops at collections between them."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    seg = np.searchsorted(np.asarray(sorted(events), float), t, side="right")
    return [(t[seg == k], y[seg == k]) for k in np.unique(seg)]


def segment_rate(t: np.ndarray, y: np.ndarray, events: list[int]) -> float | None:
    """Rate between collections (units per token): the Theil–Sen slope within the stretches
    between collection events (:func:`harness.stats.estimators.stratified_theil_sen`; the same
    number a growth metric fits to a cell with fewer than two collections); None without a
    stretch of two tokens."""
    return stratified_theil_sen(segments(t, y, events))[0]


def forced_tokens(steps: pd.DataFrame, forced: list, natural: list[int]) -> list[int]:
    """Tokens in which forced collections landed (see the module docstring). ``forced``:
    ``(token, asked_s, done_s)`` of ``gc_checkpoint`` samples; ``natural``: :func:`collection_tokens`."""
    out = set()
    if not len(steps) or "received_s" not in steps:
        return []
    received = steps[["step", "received_s"]].dropna().sort_values("received_s")
    for item in forced:
        asked, done = (item[1], item[2]) if len(item) > 2 else (item[1], item[1])
        after = received.loc[received["received_s"] > done, "step"].astype(int).tolist()
        window = received.loc[received["received_s"] > asked, "step"].astype(int).tolist()
        window = window[:len(window) - len(after) + 2]  # while it ran, and two steps after its answer
        hit = [t for t in window if t in natural]
        if hit:
            out.add(hit[0])      # it collected wrappers of ours: that collection is the event
        elif after:
            out.add(after[0])    # nothing of ours was collectable: what is there after it survived
    return sorted(out)


def classify(cell: str, series: str, label: str, unit: str, t: np.ndarray, y: np.ndarray,
             events: list[int], forced: list[int] = ()) -> MemoryClass | None:
    """:class:`MemoryClass` of one series (``t`` tokens, ``y`` values; any order, several per
    token allowed), or None with fewer than 3 tokens. ``events``/``forced``: collection event
    tokens (see the module docstring)."""
    ok = np.isfinite(t) & np.isfinite(y)
    t, y = per_token(np.asarray(t, float)[ok], np.asarray(y, float)[ok])
    if len(t) < 3:
        return None
    lo_t, hi_t = t[0], t[-1]
    forced = sorted({int(f) for f in forced if lo_t <= f <= hi_t})
    ev = sorted({int(e) for e in events if lo_t <= e <= hi_t} | set(forced))
    at = pd.Series(y, index=t)
    floors: list[list[float]] = []
    for e in ev:
        later = at[at.index >= e]
        if len(later) and (not floors or later.index[0] > floors[-1][0]):
            floors.append([float(later.index[0]), float(later.iloc[0])])
    rate = segment_rate(t, y, ev)
    s_slope, s_lo, _, _ = theil_sen(t, y)
    mc = MemoryClass(cell, series, label, unit, "bounded", int(len(t)), float(y[0]), float(y[-1]), float(y.max()),
                     ev, forced, floors, rate=rate, series_slope=s_slope)
    if y.max() <= y[0]:
        mc.floor_slope, mc.floor_low, mc.floor_high = 0.0, 0.0, 0.0
        mc.reason = "never rose above its first value after warm-up"
        return mc
    if len(floors) >= 2:
        fx = np.array([f[0] for f in floors])
        fy = np.array([f[1] for f in floors])
        mc.floor_slope, mc.floor_low, mc.floor_high = floor_slope(fx, fy, rate)
        slope = mc.floor_slope
        one_token = max(rate or 0.0, 0.0)
        came_back = fy[-1] <= fy[0] + one_token and fy.max() > fy[0] + one_token
        if mc.floor_low is not None and mc.floor_low > 0 and not came_back:
            mc.kind = "retained-growth"
            mc.reason = (f"the floor after each of {len(floors)} collections rises ({slope * (fx[-1] - fx[0]):.4g} {unit} "
                         f"over {fx[-1] - fx[0]:.0f} tokens): what the collections leave grows")
        elif came_back:
            mc.kind = "growing-until-collected"
            back = next(int(x) for x, y in zip(fx, fy) if x > fx[int(np.argmax(fy))] and y <= fy[0] + one_token)
            mc.reason = (f"the floor rose to {fy.max():.4g} {unit} over {len(floors)} collections, then the collection "
                         f"at token {back} brought it back to {fy[-1]:.4g}: growth that a later collection frees")
        else:
            mc.reason = (f"{len(floors)} collections bring it back to a flat floor (floor slope {slope:.4g} {unit}/token, "
                         f"95% CI includes 0); max {mc.max:.4g}")
        return mc
    rising = (rate or 0) > 0 and (bool(floors) or (s_slope is not None and s_slope > 0 and (s_lo is None or s_lo > 0)))
    if rising:
        mc.kind = "growing-until-collected"
        mc.reason = (("no collection seen" if not floors else "one collection seen") +
                     f" in {len(t)} tokens while it rose {rate:.4g} {unit}/token between collections; "
                     "whether collections would bring it back is not known (--gc-checkpoints N forces some)")
        return mc
    mc.reason = "does not rise (series slope's CI includes 0) and no floors to compare"
    return mc


def floor_slope(fx: np.ndarray, fy: np.ndarray, rate: float | None
                ) -> tuple[float | None, float | None, float | None]:
    """(slope, low, high) of floors at tokens ``fx``: Theil–Sen with Sen's 95% CI (two points:
    their slope, no CI unless ``rate`` is given), the interval widened to at least ± one token's growth (``rate``, units per
    token) over the floors' span, because where in a token a collection lands moves a floor by
    up to that much. ``(None, None, None)`` with fewer than 2 floors or a zero span."""
    fx, fy = np.asarray(fx, float), np.asarray(fy, float)
    if len(fx) < 2 or fx.max() == fx.min():  # rate None: points that are not floors, nothing to widen
        return None, None, None
    if len(fx) >= 3:
        slope, lo, hi, _ = theil_sen(fx, fy)
    else:
        slope, lo, hi = float((fy[-1] - fy[0]) / (fx[-1] - fx[0])), None, None
    if slope is None or rate is None:
        return slope, lo, hi
    res = max(rate or 0.0, 0.0) / (fx.max() - fx.min())
    lo = slope - res if lo is None else min(lo, slope - res)
    hi = slope + res if hi is None else max(hi, slope + res)
    return slope, lo, hi


def projection(mc: MemoryClass, budget_bytes: float | None) -> dict:
    """Tokens until a byte series reaches ``budget_bytes`` from its last value at its growth
    (:attr:`MemoryClass.growth`): ``{"tokens", "slope", "which", "budget_bytes", "why"}``;
    ``tokens`` None with ``why`` when not projected (no budget, not bytes, bounded, not growing,
    already over)."""
    slope, which = mc.growth
    out = {"tokens": None, "slope": slope, "which": which, "budget_bytes": budget_bytes, "why": ""}
    if not budget_bytes:
        out["why"] = "no --memory-budget given"
    elif "bytes" not in mc.unit:
        out["why"] = "not bytes"
    elif slope is None:
        out["why"] = which
    elif slope <= 0:
        out["why"] = f"{which} is not positive"
    elif mc.last >= budget_bytes:
        out["why"], out["tokens"] = "already over the budget", 0.0
    else:
        out["tokens"] = float((budget_bytes - mc.last) / slope)
    return out


def series_of(cell, warmup: int = 1) -> dict[str, tuple[str, str, np.ndarray, np.ndarray]]:
    """Every memory-like series of a :class:`harness.stats.cells.CellData` with data, tokens ≥
    ``warmup``: name → (label, unit, tokens, values). RSS series are ``rss_bytes_<process type>``
    and ``rss_bytes_all``; the JS heap ``js_heap_bytes``. Built once per cell and warm-up."""
    key = ("memory_series", warmup)
    if key not in cell.cache:
        cell.cache[key] = _series_of(cell, warmup)
    return cell.cache[key]


def _series_of(cell, warmup: int) -> dict[str, tuple[str, str, np.ndarray, np.ndarray]]:
    out = {}
    s = cell.steps
    for name, (col, unit, label) in STEP_SERIES.items():
        if col in s and s[col].notna().any():
            d = s[(s["step"] >= warmup) & s[col].notna()]
            out[name] = (label, unit, d["step"].to_numpy(float), d[col].to_numpy(float))
    rounds = rss_rounds(cell)
    if len(rounds) and "token" in rounds:
        rounds = rounds[rounds["token"].fillna(-1) >= warmup]
        for ptype in [c for c in rounds.columns if c not in ("token", "time_s")]:
            r = rounds[rounds[ptype].notna()]
            what = "every process" if ptype == "all" else f"{ptype} processes"
            out[f"rss_bytes_{ptype}"] = (f"RSS of {what} (measured)", "bytes", r["token"].to_numpy(float),
                                         r[ptype].to_numpy(float))
    m = cell.memory
    if len(m) and "js_heap_bytes" in m:
        h = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna() & (m["token"].fillna(-1) >= warmup)]
        if len(h):
            out["js_heap_bytes"] = ("worker JS heap used (CDP, measured)", "bytes", h["token"].to_numpy(float),
                                    h["js_heap_bytes"].to_numpy(float))
    return out


def cell_events(cell) -> tuple[list[int], list[int]]:
    """(collection event tokens the worker saw, tokens where forced collections landed) of a cell.
    A forced collection in which no wrapper of ours was seen collected is placed only by time
    (the step after the engine's answer), so it counts only in a cell with fewer than two
    collections it saw: where collections are seen, they mark the floors."""
    if "memory_events" in cell.cache:
        return cell.cache["memory_events"]
    natural = collection_tokens(cell.steps) if len(cell.steps) else []
    forced = forced_tokens(cell.steps, list(getattr(cell, "gc_forced", [])), natural)
    if len(natural) >= 2:
        forced = [f for f in forced if f in natural]
    cell.cache["memory_events"] = (natural, forced)
    return natural, forced


def cell_classes(cell, warmup: int = 1) -> dict[str, MemoryClass]:
    """Series name → :class:`MemoryClass` for every memory-like series of one cell (classified
    once per cell and warm-up)."""
    key = ("memory_classes", warmup)
    if key in cell.cache:
        return cell.cache[key]
    events, forced = cell_events(cell)
    out = {}
    for name, (label, unit, t, y) in series_of(cell, warmup).items():
        mc = classify(cell.cell, name, label, unit, t, y, events, forced)
        if mc is not None:
            out[name] = mc
    cell.cache[key] = out
    return out


def floor_points(cell, series: str, warmup: int = 1) -> tuple[np.ndarray, np.ndarray, str, float]:
    """(tokens, values, basis, rate) a growth slope of ``series`` is fitted to for one cell: its
    floors (``floors``: two or more collections), every point of a series that never rose
    (``flat``), else every point (``series``: fewer than two collections, nothing to tell
    retention by; fitted within the stretches between collections, :func:`segments`: the rate
    between collections); ``rate``: that rate (units per token, 0 when unknown)."""
    got = series_of(cell, warmup).get(series)
    if got is None:
        return np.array([]), np.array([]), "none", 0.0
    label, unit, t, y = got
    mc = cell_classes(cell, warmup).get(series)
    tt, yy = per_token(np.asarray(t, float), np.asarray(y, float))
    if mc is None:
        return tt, yy, "series", 0.0
    rate = max(mc.rate or 0.0, 0.0)
    if mc.max <= mc.first:
        return tt, yy, "flat", rate
    if len(mc.floors) >= 2:
        return np.array([f[0] for f in mc.floors]), np.array([f[1] for f in mc.floors]), "floors", rate
    return tt, yy, "series", rate
