"""A run's cells as analysis sees them: group keys, per-cell rows, and the per-token,
per-repetition and growth series each metric is computed from.

A *cell* is one browser context running one workload variant for ``tokens`` tokens
(``repetition`` r). A *group* is every cell of the same machine × browser × workload × variant
× profile × parameters, i.e. the repetitions of one configuration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import pandas as pd

from harness.process_types import CONTENT_PROCESS_TYPES
from harness.stats.metrics import CELL_STEP_METRICS, DEFAULT_WARMUP, STEP_SLOPES, TOKEN_METRICS  # noqa: F401 (DEFAULT_WARMUP: here too)


# ----------------------------------------------------------------------------------------------
# groups and cells


@dataclass(frozen=True)
class GroupKey:
    """Identity of a group. ``params`` is the cell's parameters as sorted JSON; ``machine`` is
    empty in a single run and the source label in a merged run (``webgpu-harness merge``)."""

    browser: str
    workload: str
    variant: str
    profile: str
    params: str = "{}"
    machine: str = ""
    #: the swept parameters' values (``--param KEY=A,B,C``) as ``key=value,...``; "" without a sweep
    sweep: str = ""
    #: the steps of one value of a list parameter (:func:`list_split`), ``size_bytes=256``: the
    #: per-step metrics of such a group are never pooled across the list's values; "" for whole cells
    part: str = ""

    @property
    def label(self) -> str:
        """``chromium/decode-loop/fresh@tiny`` (``machine:`` prefix when merged, ``[key=value]``
        suffix for a sweep point, another for a list value's steps)."""
        base = f"{self.browser}/{self.workload}/{self.variant}@{self.profile}"
        base += f"[{self.sweep}]" if self.sweep else ""
        base += f"[{self.part}]" if self.part else ""
        return f"{self.machine}:{base}" if self.machine else base

    def with_variant(self, variant: str) -> "GroupKey":
        """The same key with another variant (a budget's reference)."""
        return GroupKey(self.browser, self.workload, variant, self.profile, self.params, self.machine, self.sweep,
                        self.part)

    @property
    def family(self) -> tuple:
        """Everything but the variant: cells whose variants are compared with each other."""
        return (self.machine, self.browser, self.workload, self.profile, self.params, self.part)

    @property
    def sweep_family(self) -> tuple:
        """Everything but the parameters: the points of a sweep, compared with each other."""
        return (self.machine, self.browser, self.workload, self.variant, self.profile, self.part)


@dataclass
class CellData:
    """One cell's rows. ``env``: browser_version, adapter, webgpu (and machine facts if merged)."""

    cell: str
    key: GroupKey
    repetition: int
    status: str
    reason: str
    env: dict
    steps: pd.DataFrame
    memory: pd.DataFrame
    #: forced collections (``--gc-checkpoints``; gc_checkpoint samples): ``(token, asked_s,
    #: done_s, done_token)`` each: the last step the harness had seen when it asked, when it asked and when
    #: the engine said the collection was done (harness/stats/memory.py places them)
    gc_forced: list = field(default_factory=list)
    #: what is derived from this cell's rows, computed once (token values per metric and
    #: warm-up, its sampling rounds, its memory analysis: harness/stats/memory.py ``memory_of``)
    cache: dict = field(default_factory=dict, repr=False, compare=False)


def group_key(cell: dict) -> GroupKey:
    """The :class:`GroupKey` of a manifest ``cells`` entry."""
    params = {k: v for k, v in (cell.get("params") or {}).items()}
    sweep = cell.get("sweep") or {}
    text = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sweep.items())
    return GroupKey(str(cell.get("browser")), str(cell.get("workload")), str(cell.get("variant")),
                    str(cell.get("profile") or "default"), json.dumps(params, sort_keys=True, default=str),
                    str(cell.get("machine") or ""), text)


def cells_of(tables) -> list[CellData]:
    """Every manifest cell of a :class:`harness.tables.Tables` with its steps and memory rows."""
    steps = tables.steps.groupby("cell") if len(tables.steps) else None
    memory = tables.memory.groupby("cell") if len(tables.memory) else None
    out = []
    gc = getattr(tables, "gc", None)
    forced: dict[str, list] = {}
    if gc is not None and len(gc):
        for r in gc[gc["forced"].fillna(False).astype(bool)].itertuples(index=False):
            done = r.done_s if r.done_s is not None and r.done_s == r.done_s else r.time_s
            if r.token == r.token and r.time_s == r.time_s:  # not NaN
                done_token = int(r.done_token) if r.done_token is not None and r.done_token == r.done_token else None
                forced.setdefault(r.cell, []).append((int(r.token), float(r.time_s), float(done), done_token))
    # each cell's status as its samples carry it (summary.csv: harness/store/settle.py), not the
    # manifest's word alone: a damaged or partial cell is never compared or estimated as ok
    summary = getattr(tables, "summary", None)
    settled = ({r["cell"]: (r.get("status"), r.get("reason")) for r in summary[["cell", "status", "reason"]].to_dict("records")}
               if summary is not None and len(summary) and {"cell", "status", "reason"} <= set(summary.columns) else {})
    for c in tables.manifest.get("cells", []):
        cid = c["cell"]
        status, reason = settled.get(cid, (c.get("status", ""), c.get("reason", "")))
        st = steps.get_group(cid) if steps is not None and cid in steps.groups else tables.steps.iloc[0:0]
        mem = memory.get_group(cid) if memory is not None and cid in memory.groups else tables.memory.iloc[0:0]
        env = {k: c.get(k) or "" for k in ("browser_version", "adapter", "webgpu", "machine", "os", "cpu")}
        out.append(CellData(cid, group_key(c), int(c.get("repetition") or 0), status or "",
                            reason if isinstance(reason, str) else "", env, st.sort_values("step"), mem,
                            forced.get(cid, [])))
    return out


def _item(v) -> str:
    """A list item or a step's value as text (``256.0`` → ``256``)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def list_split(params: dict, steps: pd.DataFrame) -> str | None:
    """The steps.csv column that carries, step by step, the value of one of a cell's ``list``
    parameters (a comma-separated value of two items or more, e.g. upload's ``sizes=256,4194304``
    and ``extra_size_bytes``): an ``extra_*`` column whose values are two or more of the items;
    None without one (a column named after the parameter first: ``sizes`` → ``extra_size_*``).
    Such a cell's per-step metrics are estimated per value, never pooled."""
    lists = [(name, {_item(x) for x in (v if isinstance(v, list) else str(v).split(","))})
             for name, v in (params or {}).items() if isinstance(v, list) or (isinstance(v, str) and "," in v)]
    lists = [(name, items) for name, items in lists if len(items) >= 2]
    if not lists or not len(steps):
        return None
    for name, items in lists:
        stem = name.rstrip("s")  # sizes → size: extra_size_bytes before extra_expected_write_buffer_bytes
        cols = sorted((c for c in steps.columns if c.startswith("extra_")),
                      key=lambda c: (not c[len("extra_"):].startswith(stem), c))
        for col in cols:
            values = {_item(v) for v in steps[col].dropna().unique()}
            if len(values) >= 2 and values <= items:
                return col
    return None


def parts_of(cell: CellData, column: str) -> list[CellData]:
    """One view of ``cell`` per value of ``column`` (:func:`list_split`): the same cell id and
    status, only that value's steps, no memory rows, the key's ``part`` naming the value."""
    out = []
    for value in sorted(cell.steps[column].dropna().unique(), key=lambda v: (isinstance(v, str), v)):
        part = f"{column[len('extra_'):]}={_item(value)}"
        key = GroupKey(cell.key.browser, cell.key.workload, cell.key.variant, cell.key.profile, cell.key.params,
                       cell.key.machine, cell.key.sweep, part)
        out.append(CellData(cell.cell, key, cell.repetition, cell.status, cell.reason, cell.env,
                            cell.steps[cell.steps[column] == value], cell.memory.iloc[0:0]))
    return out


def groups_of(cells: Iterable[CellData]) -> dict[GroupKey, list[CellData]]:
    """Cells by group, in first-seen order (the plan's order)."""
    out: dict[GroupKey, list[CellData]] = {}
    for c in cells:
        out.setdefault(c.key, []).append(c)
    return out


# ----------------------------------------------------------------------------------------------
# per-cell extraction


def token_values(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> np.ndarray:
    """Per-token values (float array, shape (tokens - warmup,)) of a ``token`` metric;
    ``us_per_dispatch_<method>``: that dispatch-overhead method's µs per dispatch, one per round
    after round 0 (the warm-up of that workload is its first round, not its first step);
    ``sync_us_<method>``: µs of each timed sync of that sync-latency method (:func:`sync_samples`).
    Computed once per cell, metric and warm-up (the array is shared: do not modify it)."""
    key = ("token_values", metric, warmup)
    if key not in cell.cache:
        cell.cache[key] = _token_values(cell, metric, warmup)
    return cell.cache[key]


def _token_values(cell: CellData, metric: str, warmup: int) -> np.ndarray:
    s = cell.steps
    if metric.startswith("sync_us_"):  # one sync-latency method: every timed iteration, rounds after round 0
        return sync_samples(s, metric[len("sync_us_"):])
    if metric.startswith("us_per_dispatch_"):  # one dispatch-overhead method, rounds after round 0
        if "extra_config" not in s or "extra_us_per_dispatch" not in s:
            return np.array([], dtype=float)
        m = s[s["extra_config"] == metric[len("us_per_dispatch_"):]]
        if "extra_round" in m and (m["extra_round"] >= 1).any():
            m = m[m["extra_round"] >= 1]
        return m["extra_us_per_dispatch"].dropna().to_numpy(dtype=float)
    column = TOKEN_METRICS[metric][0] if metric in TOKEN_METRICS else metric
    if column not in s:
        return np.array([], dtype=float)
    return s.loc[s["step"] >= warmup, column].dropna().to_numpy(dtype=float)


def sync_samples(steps: pd.DataFrame, method: str) -> np.ndarray:
    """µs of every timed sync of dispatch-overhead's sync-latency ``method`` (``sync-empty``…) in
    ``steps`` (one cell's steps.csv rows), in step then iteration order: each step's
    ``extra_sync_us_samples`` (comma-separated, workloads/dispatch-overhead/bench.js), rounds
    after round 0 when the cell has them (round 0 is the warm-up)."""
    if "extra_config" not in steps or "extra_sync_us_samples" not in steps:
        return np.array([], dtype=float)
    m = steps[steps["extra_config"] == method]
    if "extra_round" in m and (m["extra_round"] >= 1).any():
        m = m[m["extra_round"] >= 1]
    vals = [float(x) for v in m.sort_values("step")["extra_sync_us_samples"].dropna() for x in str(v).split(",") if x.strip()]
    return np.asarray(vals, dtype=float)


def _memory_rounds(mem: pd.DataFrame) -> pd.DataFrame:
    """psutil samples → one row per sampling round: columns ``token``, ``time_s`` and one total
    RSS column per process type plus ``all``. A round ends when a pid is seen again (the first
    sample of a pid already in the current round starts the next round). ``all`` is NaN in a
    round without a content process (:data:`harness.process_types.CONTENT_PROCESS_TYPES`: the
    page's renderer was not sampled): a sum without it is not every process's RSS."""
    if not len(mem):
        return pd.DataFrame()
    pids = mem["pid"].to_numpy()
    rounds = np.zeros(len(pids), dtype=np.int64)
    seen: set = set()
    r = 0
    for i, pid in enumerate(pids.tolist()):  # the one sequential rule; the sums below are vectorised
        if pid in seen:
            r += 1
            seen = set()
        seen.add(pid)
        rounds[i] = r
    m = pd.DataFrame({"round": rounds, "process_type": mem["process_type"].to_numpy(),
                      "rss": mem["rss_bytes"].astype(float).to_numpy(), "token": mem["token"].to_numpy(),
                      "time_s": mem["time_s"].to_numpy()})
    first = m.drop_duplicates("round").set_index("round")[["token", "time_s"]]  # the round's first sample
    per_type = m.groupby(["round", "process_type"], sort=False)["rss"].sum().unstack("process_type")  # pivot_table's sums, a third of its time
    out = pd.concat([first, per_type], axis=1)
    out["all"] = m.groupby("round", sort=True)["rss"].sum()
    content = m["process_type"].isin(CONTENT_PROCESS_TYPES).groupby(m["round"], sort=True).any()
    out.loc[~content.reindex(out.index, fill_value=False), "all"] = np.nan
    order = [c for c in dict.fromkeys(m["process_type"]) if c in per_type.columns]  # first seen, "all" second
    return out[["token", "time_s", *order[:1], "all", *order[1:]]].reset_index(drop=True)


def rss_rounds(cell: CellData) -> pd.DataFrame:
    """A cell's psutil samples as sampling rounds (:func:`_memory_rounds`); RSS 0 (an exiting
    process) is not a sample. Computed once per cell (shared: do not modify it)."""
    if "rss_rounds" not in cell.cache:
        mem = cell.memory
        # psutil samples, and on macOS footprint samples (which carry RSS too)
        cell.cache["rss_rounds"] = pd.DataFrame() if not len(mem) else _memory_rounds(
            mem[mem["source"].isin(("psutil", "footprint")) & mem["rss_bytes"].notna() & (mem["rss_bytes"] > 0)])
    return cell.cache["rss_rounds"]


def cell_value(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> float | None:
    """A ``cell`` metric of one cell, or ``None`` when the cell has no data for it.
    Peaks use every sample from token ``warmup - 1`` on (the whole cell by default)."""
    if metric in CELL_STEP_METRICS:
        column, how, _ = CELL_STEP_METRICS[metric]
        s = cell.steps
        vals = s.loc[s["step"] >= warmup - 1, column].dropna() if column in s else pd.Series(dtype=float)
        if not len(vals):
            return None
        return float(vals.max() if how == "max" else vals.iloc[-1])
    since = warmup - 1
    if metric == "js_heap_bytes_max":
        m = cell.memory
        m = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna()] if len(m) else m
        m = m[m["token"].fillna(-1) >= since] if since > 0 and len(m) else m
        return float(m["js_heap_bytes"].max()) if len(m) else None
    if metric.startswith("peak_rss_bytes_"):
        ptype = metric[len("peak_rss_bytes_"):]
        rounds = rss_rounds(cell)
        if since > 0 and len(rounds):
            rounds = rounds[rounds["token"].fillna(-1) >= since]
        if ptype not in rounds or not rounds[ptype].notna().any():
            return None
        # as summary.csv: per sampling round, the RSS summed over that type's processes
        return float(rounds[ptype].max())
    raise KeyError(metric)


def slope_series(cell: CellData, metric: str, warmup: int = DEFAULT_WARMUP) -> tuple[np.ndarray, np.ndarray]:
    """(token, value) arrays of a ``slope`` metric for one cell, tokens ≥ ``warmup``."""
    if metric in STEP_SLOPES:
        column = STEP_SLOPES[metric][0]
        s = cell.steps
        if column not in s:
            return np.array([]), np.array([])
        s = s[(s["step"] >= warmup) & s[column].notna()]
        return s["step"].to_numpy(float), s[column].to_numpy(float)
    if metric == "js_heap_growth_bytes_per_token":
        m = cell.memory
        if not len(m):
            return np.array([]), np.array([])
        m = m[(m["source"] == "cdp") & m["js_heap_bytes"].notna() & (m["token"].fillna(-1) >= warmup)]
        return m["token"].to_numpy(float), m["js_heap_bytes"].to_numpy(float)
    ptype = metric[len("rss_growth_bytes_per_token_"):]
    rounds = rss_rounds(cell)
    if ptype not in rounds or "token" not in rounds:
        return np.array([]), np.array([])
    rounds = rounds[(rounds["token"].fillna(-1) >= warmup) & rounds[ptype].notna()]
    return rounds["token"].to_numpy(float), rounds[ptype].to_numpy(float)
