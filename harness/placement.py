"""Placing what was measured on the measured realm's step timeline, as tables (pandas): the
run-folder side of harness/store/timeline.py, used by harness/tables.py.

- each step's end on the run clock (steps.csv ``end_s``) from its sender's clock fit;
- each memory sample's ``step``, ``step_pos`` and ``token`` by the time it was taken (memory.csv);
- how the clocks were mapped (summary.csv ``clock``, ``clock_uncertainty_ms``);
- an app's other realms' calls on the measured realm's steps (steps.csv counters include them;
  ``realm_<label>_<column>`` per realm) and each realm's share (summary.csv ``realms``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.store import catalog
from harness.store import timeline as TL

#: Probe counter name → steps.csv column (web/probes/catalog.js).
COUNTER_COLUMNS = {c.name: c.column for c in catalog.counters()}
#: Live-object columns (web/probes/catalog.js).
LIVE_COLUMNS = [k.name for k in catalog.live_keys()]
#: Emulation values that add up across realms (per step: each realm's at that step's end).
SUMMED_EMULATION = ["modeled_native_bytes", "native_bind_groups_live", "native_bind_groups_released",
                    "modeled_buffer_bytes", "buffer_contents_js_bytes"]


#: The sender of samples from runs older than sender ids (``src``): their worker's; the page's
#: samples then (``uasm``) are on another clock and are left out of the fit.
NO_SENDER = "(no sender id)"


def sender(s: dict) -> str:
    """Who posted a sample: its sink (``src``, the harness's pages and workers) or its realm (an
    app's); :data:`NO_SENDER` for a run older than sender ids ("" for a page's ``uasm`` there)."""
    who = s.get("src") or s.get("realm")
    if who:
        return str(who)
    return "" if s.get("kind") == "uasm" else NO_SENDER


class CellClock:
    """What one cell's samples say about clocks and realms (harness/store/timeline.py): each
    sender's deliveries and time origin, the round trips, other realms' steps and open steps."""

    def __init__(self) -> None:
        self.deliveries: dict[str, list[tuple[float, float]]] = {}
        self.origins: dict[str, float] = {}
        self.syncs: list[TL.ClockSync] = []
        self.walls: list[float] = []
        self.others: dict[str, list[dict]] = {}
        self.own_open: list[dict] = []
        self.step_senders: set[str] = set()
        self.kinds: dict[str, tuple[str, str]] = {}  # realm id → (kind, url), in order of first env
        self._fits: dict[str, TL.ClockFit | None] = {}

    def see(self, s: dict) -> None:
        """Note one sample of the cell (any kind)."""
        if s.get("kind") == "clock_sync":
            self.syncs.append(TL.ClockSync(float(s["time_s"]), float(s["answered_s"]), float(s["browser_ms"])))
            if isinstance(s.get("harness_epoch_ms"), (int, float)):  # the harness's wall clock at run time 0
                self.walls.append(float(s["harness_epoch_ms"]) - float(s["time_s"]) * 1000)
            return
        who = sender(s)
        if not who or s.get("t_ms") is None or s.get("received_s") is None:
            return
        self.deliveries.setdefault(who, []).append((float(s["t_ms"]), float(s["received_s"])))
        if s.get("kind") == "env":
            if isinstance(s.get("time_origin_ms"), (int, float)) and not isinstance(s.get("time_origin_ms"), bool):
                self.origins.setdefault(who, float(s["time_origin_ms"]))
            if s.get("realm") and s.get("realm_kind"):
                self.kinds.setdefault(str(s["realm"]), (str(s["realm_kind"]), str(s.get("realm_url") or "")))

    def event_message(self, s: dict, message: str) -> str:
        """An event's message (report's events, tables ``events``) naming the realm it came from."""
        kind = s.get("kind")
        if kind == "app_error":
            return (f"[{self.realm_name(s.get('realm'))}] {s.get('error_kind')}: {s.get('message')}"
                    + (f" at {s['source']}" if s.get("source") else ""))
        if kind == "frame":
            return (f"frame {s.get('url')}: " + ("entered late" if s.get("instrumented") == "late" else "not entered")
                    + f" ({s.get('reason')})")
        if s.get("realm") and kind in ("device_lost", "uncaptured_error", "log"):
            return f"[{self.realm_name(s.get('realm'))}] {message}"
        return message

    def fit(self, sender: str) -> TL.ClockFit | None:
        """The clock fit of ``sender`` (harness/store/timeline.py ``fit_senders``); call after every
        sample of the cell was seen."""
        if not self._fits:
            self._fits = TL.fit_senders(self.deliveries, self.origins, self.syncs)
        return self._fits.get(sender)

    def realm_label(self, realm: str | None) -> str:
        """``page``, ``worker``, ``frame`` (steps.csv ``realm_<label>_…`` columns); with a number,
        in the order they reported, when the app has several of a kind."""
        kind = self.kinds.get(str(realm), ("realm", ""))[0]
        same = [r for r, (k, _) in self.kinds.items() if k == kind]
        return kind if len(same) <= 1 or kind == "page" else f"{kind}{same.index(str(realm)) + 1 if str(realm) in same else ''}"

    def realm_name(self, realm: str | None) -> str:
        """A realm as sentences name it: ``page``, ``worker``; ``worker inner.js``,
        ``frame about:srcdoc`` when the app has several of a kind (else the label's number)."""
        kind, url = self.kinds.get(str(realm), ("realm", ""))
        same = [u for r, (k, u) in self.kinds.items() if k == kind]
        if len(same) <= 1 or kind == "page":
            return kind
        base = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1] if not url.startswith(("data:", "blob:")) else url[:20]
        names = [u.split("?")[0].rstrip("/").rsplit("/", 1)[-1] for u in same]
        return f"{kind} {base}" if base and names.count(base) == 1 else self.realm_label(realm)


def place_steps(cells: list[str], steps: list[int], senders: list[str], t_ms: list[float | None],
                wall_ms: list[float | None], clocks: dict[str, CellClock]) -> tuple[list[float | None], dict[str, TL.Spans]]:
    """Each step's end on the run clock (steps.csv ``end_s``, s; None without a clock fit of its
    sender) from the steps' cells, numbers, senders (:func:`sender`), ``t_ms`` and ``wall_ms``
    (parallel lists, one entry per step sample), and each cell's step spans
    (harness/store/timeline.py)."""
    ends: list[float | None] = [None] * len(cells)
    of: dict[tuple[str, str], list[int]] = {}  # (cell, sender) → its steps' indices: one clock fit each
    for i, (cell, who, t) in enumerate(zip(cells, senders, t_ms)):
        if t is not None:
            of.setdefault((cell, who), []).append(i)
    for (cell, who), idx in of.items():
        clock = clocks.get(cell)
        fit = clock.fit(who) if clock is not None else None
        if fit is None:
            continue
        clock.step_senders.add(who)
        # ClockFit.run_s, as one array: the same float operations in the same order, per step
        run_s = ((fit.time_origin_ms or 0.0) + np.array([t_ms[i] for i in idx], dtype=float) - fit.offset_ms) / 1000.0
        for i, end in zip(idx, run_s.tolist()):
            ends[i] = round(end, 6)
    by_cell: dict[str, list] = {}
    for cell, step, end, wall in zip(cells, steps, ends, wall_ms):
        if end is not None:
            by_cell.setdefault(cell, []).append((step, end, wall))
    return ends, {c: TL.spans(v) for c, v in by_cell.items()}


def place_memory(memory: pd.DataFrame, spans: dict[str, TL.Spans]) -> None:
    """memory.csv's ``step``, ``step_pos`` and ``token`` by the time each sample was taken (its
    ``time_s``), and ``after_last_step`` (taken after the measured realm's last step ended: on no
    step; empty without step times); a cell without step times (an older run) keeps the
    ``token`` recorded with each sample, carried forward."""
    steps, pos, tokens, after = [], [], [], []
    for cell, t, token in zip(memory["cell"], memory["time_s"], memory["token"]):
        sp = spans.get(cell)
        if sp is None or t is None or pd.isna(t):
            steps.append(None), pos.append(None), tokens.append(token), after.append(None)
            continue
        k, p, last = TL.place(float(t), sp)
        steps.append(k), pos.append(p), tokens.append(last), after.append(bool(sp.ends) and float(t) > sp.ends[-1])
    memory["after_last_step"] = pd.array(after, dtype="boolean")
    memory["step"] = pd.array(steps, dtype="Int64")
    memory["step_pos"] = pd.to_numeric(pd.Series(pos, index=memory.index, dtype="object"))
    memory["token"] = pd.to_numeric(pd.Series(tokens, index=memory.index, dtype="object"))
    if len(memory):
        unplaced = ~memory["cell"].isin(list(spans))
        if unplaced.any():
            memory.loc[unplaced, "token"] = memory[unplaced].groupby("cell")["token"].ffill()


def place_gc(gc: pd.DataFrame, spans: dict[str, TL.Spans]) -> pd.DataFrame:
    """Forced collections (tables ``gc``) with ``step`` and ``done_step``: the measured realm's
    step running when the harness asked (``time_s``) and when the engine answered (``done_s``),
    by time (``token``/``done_token`` stay the last step the harness had received then)."""
    for col, at in (("step", "time_s"), ("done_step", "done_s")):
        gc[col] = pd.array([TL.place(float(t), spans[c])[0] if c in spans and t is not None and pd.notna(t) else None
                            for c, t in zip(gc["cell"], gc[at])], dtype="Int64")
    return gc


def clock_columns(summary: pd.DataFrame, clocks: dict[str, CellClock]) -> None:
    """summary.csv ``clock`` and ``clock_uncertainty_ms``: how the cell's step times were mapped
    (the least certain of its step senders)."""
    for i, cell in summary["cell"].items():
        clock = clocks.get(cell)
        fits = [f for f in (clock.fit(x) for x in sorted(clock.step_senders)) if f is not None] if clock else []
        if not fits:
            continue
        worst = max(fits, key=lambda f: float("inf") if f.uncertainty_ms is None else f.uncertainty_ms)
        text = worst.describe()
        if clock.walls and worst.time_origin_ms is not None:
            # the browser's epoch clock against the harness's own wall clock (same machine: ~0)
            ahead = worst.offset_ms - sorted(clock.walls)[len(clock.walls) // 2]
            text += f"; the browser's clock {ahead:+.1f} ms from the harness's wall clock"
        summary.loc[i, "clock"] = text
        summary.loc[i, "clock_uncertainty_ms"] = (round(worst.uncertainty_ms, 3)
                                                  if worst.uncertainty_ms is not None else None)


#: The counter a realm's share is said of (its createBindGroup calls: what the harness exists
#: for); every call when no realm made a bind group.
SHARE_COUNTER = "createBindGroup"


def attribute_realms(steps: pd.DataFrame, cells: dict, clocks: dict[str, CellClock],
                      spans: dict[str, TL.Spans]) -> tuple[dict[str, str], pd.DataFrame]:
    """App cells: every other realm's calls placed on the measured realm's steps by time
    (harness/store/timeline.py ``attribute``) and added to the step rows (counters summed;
    live objects and emulation values as each realm had them at the step's end); per-realm
    columns ``realm_<label>_<column>`` kept when more than one realm made calls. Returns (cell →
    the realms and their shares, e.g. ``page 20%, worker 80% of createBindGroup``; the per-realm
    columns, Int64, on ``steps``' index, for the caller to join at once: ``pd.concat(axis=1)``,
    since adding them one by one fragments the frame)."""
    import numpy as np

    out: dict[str, str] = {}
    new: dict[str, np.ndarray] = {}

    def put(rows, column: str, values) -> None:
        new.setdefault(column, np.full(len(steps), np.nan))[steps.index.get_indexer(rows)] = values

    for cid, cell in cells.items():
        if not cell.get("app_url") or not cell.get("realm"):
            continue
        clock = clocks.get(cid) or CellClock()
        sp = spans.get(cid)
        rows = steps.index[steps["cell"] == cid]
        if sp is None or not len(rows):
            continue
        index_of = {k: i for i, k in enumerate(sp.steps)}
        measured = str(cell["realm"])
        # two realms' clocks each tick (WebKitGTK: whole ms): an order within two ticks is unknown
        tick = TL.resolution_ms(t for w in [measured, *clock.others] for t, _ in clock.deliveries.get(w, []))
        tolerance_s = 2 * tick / 1000
        labels = {measured: clock.realm_label(measured)}
        names = {measured: clock.realm_name(measured)}
        own = {name: [int(steps.at[r, col]) if pd.notna(steps.at[r, col]) else 0 for r in rows]
               for name, col in COUNTER_COLUMNS.items()}
        totals: dict[str, dict[str, int]] = {measured: {n: sum(v) for n, v in own.items()}}
        after: dict[str, dict[str, int]] = {}
        added: dict[str, tuple[TL.Attribution, list[int]]] = {}
        for realm, samples in clock.others.items():
            fit = clock.fit(realm)
            if fit is None:
                continue
            points = TL.cumulative((x["kind"], x.get("step"), fit.run_s(float(x["t_ms"])), x.get("counters"),
                                    {**(x.get("live") or {}), **{k: v for k, v in (x.get("emulation") or {}).items()
                                                                 if k in SUMMED_EMULATION}})
                                   for x in samples if x.get("t_ms") is not None)
            if not points:
                continue
            a = TL.attribute(points, sp, tolerance_s)
            where = [index_of.get(int(steps.at[r, "step"])) for r in rows]
            labels[realm] = clock.realm_label(realm)
            names[realm] = clock.realm_name(realm)
            totals[realm] = {n: sum(a.per_step[i].get(n, 0) for i in where if i is not None) for n in COUNTER_COLUMNS}
            after[realm] = dict(a.after)  # counter → calls after the last measured step
            added[realm] = (a, where)
        busy = [r for r, t in totals.items() if sum(t.values())]
        if len(busy) > 1 or any(r != measured for r in busy):
            for name, col in COUNTER_COLUMNS.items():
                put(rows, f"realm_{labels[measured]}_{col}", own[name])
        for realm, (a, where) in added.items():
            per = {col: [a.per_step[i].get(name, 0) if i is not None else 0 for i in where]
                   for name, col in COUNTER_COLUMNS.items()}
            for name, col in COUNTER_COLUMNS.items():
                put(rows, f"realm_{labels[realm]}_{col}", per[col])
                base = steps.loc[rows, col]
                steps.loc[rows, col] = base.fillna(0) + per[col] if base.notna().any() else base
            for col in LIVE_COLUMNS + SUMMED_EMULATION:
                vals = [a.live[i].get(col) if i is not None else None for i in where]
                if col in steps and any(v is not None for v in vals):
                    base = steps.loc[rows, col]
                    steps.loc[rows, col] = base.fillna(0) + [v or 0 for v in vals]
        out[cid] = _shares_text(names, totals, after, cell.get("realms") or [], clock, measured)
    return out, pd.DataFrame({c: pd.array(v, dtype="Int64") for c, v in new.items()}, index=steps.index)


def _shares_text(labels: dict, totals: dict, after: dict, realms: list[dict], clock: CellClock, measured: str) -> str:
    """``worker 80% (measured realm), page 20% of createBindGroup``: each realm that made a
    device or calls, with its share of the calls on the measured steps (of every WebGPU call when
    no realm made a bind group), and the calls of that same counter a realm made after the last
    measured step (``after``: realm → counter → calls)."""
    what = SHARE_COUNTER if any(t.get(SHARE_COUNTER) for t in totals.values()) else None
    amount = {r: (t.get(what, 0) if what else sum(t.values())) for r, t in totals.items()}
    whole = sum(amount.values())
    for r in realms:  # a realm with a device that made no call on any step still has its 0%
        rid = str(r.get("realm"))
        if r.get("device") and rid not in amount:
            labels[rid] = clock.realm_name(rid)
            amount[rid] = 0
    if not whole:
        return ", ".join(f"{labels[r]} (device, no call)" for r in amount) + ": no WebGPU call on any step"
    parts = []
    for r in sorted(amount, key=lambda r: (r != measured, labels[r])):
        share = f"{labels[r]} {100 * amount[r] / whole:.0f}%" + (" (measured realm)" if r == measured and len(amount) > 1 else "")
        late = (after.get(r) or {}).get(what, 0) if what else sum((after.get(r) or {}).values())
        if late:  # the counter the share is of, never every counter summed
            share += f" (+{late} {what or 'WebGPU'} calls after the last measured step, on no step)"
        parts.append(share)
    return ", ".join(parts) + (f" of {what}" if what else " of WebGPU calls")


def after_last_step_notes(memory: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """One line per app cell some of whose process-memory sampling rounds (distinct ``time_s`` of
    psutil/footprint rows) came after its last step (``after_last_step``: the ``--idle`` wait, the
    last batches' flush): how many of how many; per-step growth (x = ``token``) has them all on
    the last step, so they add no position to a slope."""
    if "after_last_step" not in memory or not len(memory):
        return []
    apps = set(summary.loc[summary["workload"] == "app", "cell"]) if "workload" in summary else set()
    rounds = memory[memory["cell"].isin(apps) & memory["source"].isin(["psutil", "footprint"])]
    out = []
    for cell, g in rounds.groupby("cell", sort=False):
        by_time = g.groupby("time_s")["after_last_step"].first()
        n_after = int(by_time.fillna(False).astype(bool).sum())
        last = g.loc[g["after_last_step"].fillna(False).astype(bool), "token"].max()
        if n_after:
            out.append(f"`{cell}`: {n_after} of {len(by_time)} memory sampling rounds were taken after the last step"
                       f"{f' ({int(last)})' if pd.notna(last) else ''} ended, while the cell waited to end: on no "
                       f"step, per-step memory growth places them all on that last step (memory.csv after_last_step)")
    return out


def _cells_words(cells: list[str], of: int) -> str:
    """``every cell (16)`` when the list is every cell of the run, else the cells named (one, or
    several with their count): how a note shared by many cells names them once."""
    if len(cells) == of and len(cells) > 1:
        return f"every cell ({len(cells)})"
    named = ", ".join(f"`{c}`" for c in cells)
    return named if len(cells) == 1 else f"{named} ({len(cells)})"


def measurement_notes(summary: pd.DataFrame, manifest: dict) -> list[str]:
    """What summary.md, the report and the console say about how complete each cell's
    measurement is: how step times met the harness clock (memory samples are placed on steps by
    it), each app cell's realms and their shares, every warning of a cell (a worker or frame
    not measured, a device lost or made again, the app's errors), each cell whose content process
    was sampled only in the warm-up (:data:`NOT_SAMPLED_AFTER_WARMUP`) and each cell whose worker's
    JS heap was not available, one line each."""
    out = []
    clocks = summary[summary["clock"].notna()] if "clock" in summary else summary.iloc[0:0]
    if len(clocks):
        bounded = clocks[clocks["clock_uncertainty_ms"].notna()]
        if len(bounded):
            out.append(f"step times on the harness clock by round trips to the page: ±{bounded['clock_uncertainty_ms'].max():.1f} ms "
                       f"at most ({len(bounded)} cell(s)); memory samples sit on the step running when each was taken")
        # one line per way of placing (not one per cell: 16 cells of a run share it)
        loose = clocks[clocks["clock_uncertainty_ms"].isna()]
        for how, g in loose.groupby("clock", sort=False):
            out.append(f"{_cells_words(list(g['cell']), len(summary))}: step times by {how}: memory samples placed on "
                       f"steps to within the fastest delivery's lag")
    for c in manifest.get("cells", []):
        row = summary[summary["cell"] == c["cell"]]
        realms = row["realms"].iloc[0] if "realms" in row and len(row) else None
        if isinstance(realms, str) and realms:
            out.append(f"`{c['cell']}`: realms: {realms}")
        out += [f"⚠ `{c['cell']}`: {w}" for w in c.get("warnings") or []]
    # the worker's JS heap: a memory series these cells do not have (a skipped cell measured nothing)
    measured = summary[summary["status"] != "skipped"] if "status" in summary else summary
    out += [f"⚠ `{c}`: {NOT_SAMPLED_AFTER_WARMUP}" for c in warmup_only_content(measured)]
    no_heap = [r["cell"] for _, r in measured.iterrows()
               if isinstance(r.get("js_heap"), str) and r.get("js_heap").startswith("not available")]
    if no_heap:
        out.append(f"{_cells_words(no_heap, len(summary))}: {JS_HEAP_NOT_AVAILABLE}")
    return out


#: What summary.md, the report and the console say of a cell whose content process was sampled only
#: before or during warm-up step 0 (summary.csv ``content_rss_samples`` 0, ``content_rss_bytes_max`` set).
NOT_SAMPLED_AFTER_WARMUP = ("content process not sampled after the warm-up (its only sampling rounds with it fell "
                            "before or inside warm-up step 0): its content-process RSS max is a warm-up reading and its "
                            "memory-budget reading rests on no in-step sample")


def warmup_only_content(summary: pd.DataFrame) -> list[str]:
    """Cells (summary.csv rows) whose content process was sampled (``content_rss_bytes_max``)
    but in no step after the warm-up (``content_rss_samples`` 0): what they say of the content
    process and of a memory budget rests on warm-up samples only. Cells never sampling it are
    harness/process_types.py ``content_notes``'s."""
    if "content_rss_samples" not in summary or "content_rss_bytes_max" not in summary:
        return []
    n = pd.to_numeric(summary["content_rss_samples"], errors="coerce")
    return list(summary.loc[(n == 0) & summary["content_rss_bytes_max"].notna(), "cell"])


#: What summary.md, the report and the console say of a cell whose browser gave no way to read the
#: worker's JS heap (summary.csv ``js_heap`` ``not available``; WebKit: no DevTools protocol).
JS_HEAP_NOT_AVAILABLE = "JS heap not available (no DevTools protocol to read the worker's heap through)"
