"""Tidy pandas tables from a run folder: ``summary.csv``, ``steps.csv``, ``memory.csv``.

Columns are a stable interface (RESULTS.md). Per-token medians use tokens after the first
(token 0 compiles pipelines and fills caches).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness import counter_tables
from harness.csvfiles import write_csv
from harness.memory_budget import content_samples, memory_budget_columns
from harness.process_types import CONTENT_PROCESS_TYPES, GPU_PROCESS_TYPES, PROCESS_SOURCES  # noqa: F401 (re-exported)
from harness.own_terms import DISPATCH_METHODS, STEP_UNITS, after_first_round, own_terms  # noqa: F401 (re-exported)
from harness.counter_tables import BUFFER_COLUMNS, RENDER_AND_BINDING_COLUMNS
from harness.placement import COUNTER_COLUMNS, LIVE_COLUMNS, CellClock, attribute_realms, clock_columns, place_gc, place_memory, place_steps, sender
from harness.store.runfolder import read_manifest, scan_samples
from harness.store.settle import settle
from harness.step_columns import CELL_KEYS, EMULATION_COLUMNS, as_arrays, step_columns  # noqa: F401 (re-exported)

STEP_COLUMNS = CELL_KEYS + ["step", "token", "logits_hash", "cpu_ms", "wall_ms", "received_s",
                            *COUNTER_COLUMNS.values(), *LIVE_COLUMNS, *EMULATION_COLUMNS, "end_s"]
#: memory.csv: ``step``/``step_pos`` place each sample on the measured realm's step timeline by
#: the time it was taken (harness/store/timeline.py); ``token`` is the last step ended by then;
#: ``after_last_step``: taken after the last step ended (on no step).
MEMORY_COLUMNS = ["cell", "source", "process_type", "pid", "rss_bytes", "uss_bytes", "js_heap_bytes",
                  "time_s", "token", "footprint_bytes", "cpu_user_s", "cpu_system_s", "step", "step_pos",
                  "after_last_step"]
#: gc_checkpoint samples (--gc-checkpoints): one row per forced collection the harness asked for.
GC_COLUMNS = ["cell", "token", "time_s", "done_token", "done_s", "forced", "reason"]
#: Provenance of each cell (manifest cells; harness/plan.py Cell): how its browser was driven,
#: the endpoint, the platform it reported, what per-process memory could be measured.
PROVENANCE_COLUMNS = ["driver", "endpoint", "platform", "memory"]
SUMMARY_COLUMNS = ["cell", "browser", "browser_version", "adapter", "webgpu", "workload", "variant",
                   "profile", "repetition", "tokens", "status", "reason", "bind_groups_per_token",
                   "dispatches_per_token", "submits_per_token", "live_bind_groups_end",
                   "tokens_identical", "median_ms_per_token", "median_cpu_ms_per_token", "steps_received",
                   "live_bind_groups_max", "modeled_native_bytes_max", "content_rss_bytes_max",
                   "memory_budget_bytes", "would_be_killed_at_token", "engine", "content_footprint_bytes_max",
                   *PROVENANCE_COLUMNS, "js_heap_bytes_max", "js_heap", "memory_budget_counted_bytes_max",
                   *RENDER_AND_BINDING_COLUMNS, "memory_budget_counted_bytes_last",
                   "content_rss_samples", "memory_budget_counted_token", "memory_budget_rss_token"]

#: Columns of ``webgpu-harness app`` cells (empty for workloads): the app, its title, the step
#: triggers seen, and the page or worker global measured (harness/app_plan.py ``AppCell``).
APP_COLUMNS = ["app_url", "app_title", "step_kind", "measured_realm", "realms", "warnings"]
#: How each cell's step times met the run clock (method; ± ms, empty: not measured; harness/placement.py).
CLOCK_COLUMNS = ["clock", "clock_uncertainty_ms"]


@dataclass
class Tables:
    """The three tables plus per-cell results (the ``done`` samples' ``result`` objects)."""

    summary: pd.DataFrame
    steps: pd.DataFrame
    memory: pd.DataFrame
    manifest: dict
    env: dict[str, dict]
    events: pd.DataFrame
    #: cell id → the ``result`` object of its ``done`` sample (workload-specific tables live here)
    results: dict[str, dict]
    #: forced collections (``gc_checkpoint`` samples): :data:`GC_COLUMNS` plus ``step``/``done_step``
    #: by time (harness/placement.py); ``token`` is the last step the harness had seen when it asked
    gc: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=GC_COLUMNS))
    #: buffers created per step by (label, usage): :data:`BUFFER_COLUMNS` (empty for runs older
    #: than the probe, and for steps without counters)
    buffers: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=BUFFER_COLUMNS))



def build(run_dir: Path) -> Tables:
    """Read ``manifest.json`` and ``samples.jsonl`` of ``run_dir`` into :class:`Tables`."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    cells = {c["cell"]: c for c in manifest.get("cells", [])}
    mem_rows, event_rows, gc_rows, buffer_rows = [], [], [], []
    env: dict[str, dict] = {}
    results: dict[str, dict] = {}
    samples, bad = scan_samples(run_dir)
    skipped = [str(b) for b in bad]
    # each cell's status as its samples carry it: the manifest's word is not taken alone (a
    # damaged or edited folder is incomplete or failed, never ok: harness/store/runfolder.py)
    settled = settle(manifest.get("cells", []), samples, bad)
    clocks: dict[str, CellClock] = {}
    keys_of: dict = {}  # cell id → its CELL_KEYS values, made once per cell
    own_steps: list[dict] = []  # the step samples of steps.csv, in file order; their cells' keys beside them
    own_keys: list[dict] = []
    for s in samples:
        cell = cells.get(s.get("cell"), {})
        keys = keys_of.get(s.get("cell"))
        if keys is None:
            keys = keys_of.setdefault(s.get("cell"), {k: cell.get(k) for k in CELL_KEYS})
        kind = s.get("kind")
        clock = clocks.get(keys["cell"])
        if clock is None:
            clock = clocks[keys["cell"]] = CellClock()
        clock.see(s)
        if cell.get("realm") and kind in ("step", "env", "open_step") and s.get("realm") != cell["realm"]:
            # an app cell: steps.csv holds its measured realm's steps; other realms' calls are
            # placed on them by time (_attribute_realms); samples.jsonl keeps every realm's
            if kind in ("step", "open_step"):
                clock.others.setdefault(str(s.get("realm")), []).append(s)
            continue
        if kind == "open_step":
            clock.own_open.append(s)
            continue
        if kind == "step":
            own_steps.append(s)
            own_keys.append(keys)
            if s.get("created_buffers"):
                buffer_rows.extend(counter_tables.buffer_rows(keys["cell"], s))
        elif kind in ("process_memory", "worker_heap"):
            if kind == "process_memory" and not s.get("rss_bytes"):
                continue  # RSS 0: an exiting or zombie process (older runs recorded them), not a sample
            mem_rows.append({"cell": keys["cell"], **{k: s.get(k) for k in MEMORY_COLUMNS if k != "cell"}})

        elif kind == "gc_checkpoint":
            gc_rows.append({"cell": keys["cell"], **{k: s.get(k) for k in GC_COLUMNS[1:-2]},
                            "forced": bool(s.get("forced")), "reason": s.get("reason") or ""})
        elif kind == "uasm":
            mem_rows.append({"cell": keys["cell"], "source": "uasm", "process_type": "page", "pid": None,
                             "rss_bytes": None, "uss_bytes": None, "js_heap_bytes": s.get("bytes"),
                             "time_s": s.get("received_s"), "token": None})
        elif kind == "env":
            env[keys["cell"]] = s
        elif kind == "done":
            results[keys["cell"]] = s.get("result") or {}
        if kind in ("error", "skip", "log", "cell_status", "device_lost", "uncaptured_error", "refused", "gap",
                    "process_exit", "app_error", "frame"):
            detail = s.get("stack") or (s.get("reason") if kind == "cell_status" else "")
            if kind in ("device_lost", "uncaptured_error"):
                detail = f"step {s.get('step')}: " + (s.get("reason") or s.get("error_type") or "")
            message = s.get("message") or s.get("reason") or s.get("status")
            message = clock.event_message(s, message)
            if kind == "gap":
                message = f"samples n={s.get('first_n')}–{s.get('last_n')} of sender {s.get('src')} never arrived"
            elif kind == "process_exit":
                message = f"{s.get('process_type')} (pid {s.get('pid')}) exited after step {s.get('step')}"
            elif kind == "refused":
                message = f"refused a {s.get('sample_kind')} sample (n={s.get('n')}, sender {s.get('src')}): {s.get('reason')}"
            event_rows.append({"cell": keys["cell"], "kind": kind, "received_s": s.get("received_s"),
                               "message": message,
                               "detail": detail})
    for why in skipped[:50]:  # in the report's events: a damaged folder says so
        event_rows.append({"cell": None, "kind": "error", "received_s": None,
                           "message": f"samples.jsonl {why}: left out", "detail": ""})
    for c in manifest.get("cells", []):  # what made the measurement partial, as events too
        for w in c.get("warnings") or []:
            event_rows.append({"cell": c["cell"], "kind": "warning", "received_s": None, "message": w, "detail": ""})
    columns = step_columns(own_steps, own_keys)
    columns["end_s"], spans = place_steps(columns["cell"], columns["step"], [sender(s) for s in own_steps],
                                          [s.get("t_ms") for s in own_steps], columns["wall_ms"], clocks)
    steps = pd.DataFrame(as_arrays(columns)) if own_steps else pd.DataFrame([])
    for col in STEP_COLUMNS:
        if col not in steps:
            steps[col] = pd.Series(dtype="float64")
    extras = sorted(c for c in steps.columns if c.startswith("extra_"))
    realm_cols = sorted(c for c in steps.columns if c.startswith("realm_"))
    steps = steps[STEP_COLUMNS + extras + realm_cols]
    if len(steps):
        steps = steps.sort_values(["cell", "step"]).drop_duplicates(["cell", "step"], keep="last").reset_index(drop=True)
    shares, per_realm = attribute_realms(steps, cells, clocks, spans)
    if len(per_realm.columns):  # joined at once (column by column fragments the frame)
        both = [c for c in per_realm.columns if c in steps.columns]
        steps = pd.concat([steps.drop(columns=both), per_realm.fillna(steps[both]) if both else per_realm], axis=1)
    if shares:
        realm_cols = sorted(c for c in steps.columns if c.startswith("realm_"))
        steps = steps[STEP_COLUMNS + extras + realm_cols]
    memory = pd.DataFrame(mem_rows, columns=MEMORY_COLUMNS)
    memory["pid"] = pd.array(memory["pid"], dtype="Int64")  # pids are integers (uasm/cdp rows: none)
    memory["footprint_bytes"] = pd.to_numeric(memory["footprint_bytes"])
    place_memory(memory, spans)
    events = pd.DataFrame(event_rows, columns=["cell", "kind", "received_s", "message", "detail"])
    summary = _summary(manifest, steps, memory, env, settled)
    clock_columns(summary, clocks)
    if "realms" in summary:
        summary["realms"] = [shares.get(c) or summary.loc[i, "realms"] for i, c in summary["cell"].items()]
    summary["engine"] = [engine_label(results.get(c, {})) for c in summary["cell"]]
    budget = (manifest.get("parameters") or {}).get("memory_budget_bytes")
    memory_budget_columns(summary, steps, memory, budget)
    buffers = pd.DataFrame(buffer_rows, columns=BUFFER_COLUMNS)
    if len(buffers):  # a step resent after a lost answer: keep one copy, as for steps
        buffers = buffers.drop_duplicates(["cell", "step", "label", "usage"], keep="last").reset_index(drop=True)
    return Tables(summary, steps, memory, manifest, env, events, results,
                  place_gc(pd.DataFrame(gc_rows, columns=GC_COLUMNS), spans), buffers)


def _summary(manifest: dict, steps: pd.DataFrame, memory: pd.DataFrame, env: dict,
             settled: dict[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    rows = []
    steps_of = dict(tuple(steps.groupby("cell", sort=False))) if len(steps) else {}
    memory_of = dict(tuple(memory.groupby("cell", sort=False))) if len(memory) else {}
    # both group by cell first: made once for the run and split, not once per cell
    per_type_all, content_all = process_type_totals(memory), content_samples(memory)
    per_type_of = dict(tuple(per_type_all.groupby("cell", sort=False))) if len(per_type_all) else {}
    content_of = dict(tuple(content_all.groupby("cell", sort=False))) if len(content_all) else {}
    for c in manifest.get("cells", []):
        s = steps_of.get(c["cell"], steps.iloc[:0])
        m = memory_of.get(c["cell"], memory.iloc[:0])
        after = s[s["step"] > 0]  # token 0 builds pipelines and caches: never in per-token medians
        row = {k: c.get(k) for k in ("cell", "browser", "browser_version", "adapter", "webgpu", "workload",
                                     "variant", "profile", "repetition", "tokens", "status", "reason")}
        row.update({k: c.get(k) or None for k in PROVENANCE_COLUMNS})
        if settled is not None and c["cell"] in settled:
            row["status"], row["reason"] = settled[c["cell"]]
        elif row["status"] == "pending":  # the harness was killed (SIGKILL) mid-run, or is still running
            row["status"] = "failed"
            row["reason"] = (f"not finished when this folder was analysed (the harness was killed, or is still "
                             f"running); {len(s)} steps were received and kept")
        if c.get("machine"):  # merged runs (harness/store/merge.py)
            row["machine"] = c["machine"]
        row.update({
            "bind_groups_per_token": _median(after, "create_bind_group"),
            "dispatches_per_token": _median(after, "dispatch_workgroups"),
            "submits_per_token": _median(after, "submit"),
            "live_bind_groups_end": int(s["bind_groups_live"].iloc[-1]) if len(s) and pd.notna(s["bind_groups_live"].iloc[-1]) else None,
            "median_ms_per_token": _median(after, "wall_ms"),
            "median_cpu_ms_per_token": _median(after, "cpu_ms"),
            "steps_received": len(s),
        })
        row.update(counter_tables.render_and_binding(s, after))
        row["live_bind_groups_max"] = int(s["bind_groups_live"].max()) if len(s) and s["bind_groups_live"].notna().any() else None
        row["modeled_native_bytes_max"] = (float(s["modeled_native_bytes"].max())
                                           if len(s) and s["modeled_native_bytes"].notna().any() else None)
        per_type = per_type_of.get(c["cell"], per_type_all.iloc[:0])
        for ptype, grp in per_type.groupby("process_type"):
            row[f"peak_rss_bytes_{ptype}"] = int(grp["rss_bytes"].max())
            if grp["footprint_bytes"].notna().any():
                row[f"peak_footprint_bytes_{ptype}"] = int(grp["footprint_bytes"].max())
        content = content_of.get(c["cell"], content_all.iloc[:0])
        row["content_rss_bytes_max"] = int(content["rss_bytes"].max()) if len(content) else None
        # sampling rounds of the content process placed on a step (the rest ran before the first
        # step was received): how many readings the decode phase's max and slope rest on
        row["content_rss_samples"] = int(content["token"].notna().sum()) if len(content) else 0
        row["content_footprint_bytes_max"] = (int(content["footprint_bytes"].max())
                                              if len(content) and content["footprint_bytes"].notna().any() else None)
        row.update(_heap_and_cpu(m))
        row.update(own_terms(c.get("workload"), s))
        if c.get("app_url"):
            row.update(app_url=c["app_url"], app_title=c.get("app_title"), step_kind=c.get("step_kind"),
                       measured_realm=" ".join(x for x in (c.get("realm_kind"), c.get("script_type") and f"({c['script_type']})",
                                                           c.get("realm_url")) if x) or None,
                       realms=None, warnings="; ".join(c.get("warnings") or []) or None)
        rows.append(row)
    summary = pd.DataFrame(rows)
    for col in SUMMARY_COLUMNS:
        if col not in summary:
            summary[col] = pd.Series(dtype="object")
    summary["tokens_identical"] = _tokens_identical(summary, steps)
    peaks = sorted(c for c in summary.columns if c.startswith(("peak_rss_bytes_", "peak_footprint_bytes_")))
    cpu = sorted(c for c in summary.columns if c.startswith("cpu_s_"))
    apps = APP_COLUMNS if any(c.get("app_url") for c in manifest.get("cells", [])) else []
    for col in apps:
        if col not in summary:
            summary[col] = pd.Series(dtype="object")
    for col in CLOCK_COLUMNS:
        summary[col] = pd.Series([None] * len(summary), dtype="object", index=summary.index)
    own = [c for c in summary.columns if c not in SUMMARY_COLUMNS and c != "machine" and c not in peaks + cpu + apps
           and c not in CLOCK_COLUMNS]
    return summary[SUMMARY_COLUMNS + (["machine"] if "machine" in summary else []) + peaks + cpu + apps + own
                   + CLOCK_COLUMNS]


def _heap_and_cpu(memory: pd.DataFrame) -> dict:
    """One cell's ``js_heap_bytes_max`` and ``js_heap`` (``measured (CDP)``, or why it is not
    available: never 0), and ``cpu_s_<process type>``: CPU seconds (user + system, psutil) the
    cell's processes of that type used while sampled, summed over their pids."""
    out: dict = {"js_heap_bytes_max": None, "js_heap": "not sampled"}
    cdp = memory[(memory["source"] == "cdp") & memory["js_heap_bytes"].notna()]
    if len(cdp):
        out["js_heap_bytes_max"], out["js_heap"] = int(cdp["js_heap_bytes"].max()), "measured (CDP)"
    elif (memory["source"] == "none").any():
        out["js_heap"] = "not available"
    m = memory[memory["source"].isin(PROCESS_SOURCES) & memory["cpu_user_s"].notna()]
    if len(m):
        used = (m["cpu_user_s"] + m["cpu_system_s"].fillna(0)).groupby([m["process_type"], m["pid"]]).agg(
            lambda v: v.max() - v.min())
        for ptype, v in used.groupby(level=0):
            out[f"cpu_s_{ptype}"] = round(float(v.sum()), 3)
    return out


def process_type_totals(memory: pd.DataFrame) -> pd.DataFrame:
    """psutil samples summed per process type and sampling round: one row per (cell, time_s,
    process_type) with ``rss_bytes``/``uss_bytes`` totals over that type's processes (Chromium
    runs several renderers and utilities; a per-type line would otherwise zigzag between pids)
    and the ``token`` reached."""
    m = memory[memory["source"].isin(PROCESS_SOURCES)]
    if not len(m):
        return pd.DataFrame(columns=["cell", "time_s", "process_type", "rss_bytes", "uss_bytes", "token", "processes",
                                     "footprint_bytes"])
    g = m.groupby(["cell", "time_s", "process_type"])
    out = g.agg(rss_bytes=("rss_bytes", "sum"), uss_bytes=("uss_bytes", "sum"), token=("token", "max"),
                processes=("pid", "nunique"))
    out["footprint_bytes"] = g["footprint_bytes"].sum(min_count=1)  # none sampled: NaN, not 0
    return out.reset_index()


def engine_label(result: dict) -> str | None:
    """'onnxruntime-web 1.31.0-dev… (webgpu bundle)' from an ort-decode result, else None."""
    versions = result.get("ortVersion")
    if not versions:
        return None
    web = versions.get("web") if isinstance(versions, dict) else versions
    return f"onnxruntime-web {web} ({result.get('bundle', '?')} bundle)"


def _median(df: pd.DataFrame, col: str):
    vals = df[col].dropna() if col in df else []
    return float(vals.median()) if len(vals) else None


def _tokens_identical(summary: pd.DataFrame, steps: pd.DataFrame) -> list:
    """Per cell: does its token sequence and logits hashes equal the first ok variant's of the
    same browser × workload × profile × repetition? "yes"/"no"; "n/a" for a lone variant or a
    cell that did not finish; "not comparable" under emulated WebGPU (no shader runs)."""
    out = []
    def norm(col: pd.Series) -> list:   # a step without a token or hash (ORT's create/release steps) is None, which equals None
        return col.astype(object).where(col.notna(), None).tolist()

    seqs = ({cid: list(zip(norm(g["token"]), norm(g["logits_hash"]))) for cid, g in steps.groupby("cell")}
            if len(steps) else {})
    machine = summary["machine"].fillna("") if "machine" in summary else pd.Series("", index=summary.index)
    for idx, row in summary.iterrows():
        if row["webgpu"] == "emulated":
            out.append("not comparable")
            continue
        if row["status"] != "ok" or all(t is None for t, _ in seqs.get(row["cell"], [])):
            out.append("n/a")  # unfinished, or no tokens to compare (an app's steps)
            continue
        peers = summary[(summary["browser"] == row["browser"]) & (summary["workload"] == row["workload"])
                        & (summary["profile"].fillna("") == (row["profile"] or ""))
                        & (summary["repetition"] == row["repetition"]) & (summary["status"] == "ok")
                        & (machine == machine[idx])]  # merged runs: never across machines
        if len(peers) < 2:
            out.append("n/a")
            continue
        ref = seqs.get(peers.iloc[0]["cell"], [])
        out.append("yes" if seqs.get(row["cell"], []) == ref and ref else "no")
    return out


def write(tables: Tables, run_dir: Path) -> None:
    """Write ``summary.csv``, ``steps.csv``, ``memory.csv`` and ``buffers.csv`` into ``run_dir``;
    the two long ones by :func:`write_csv`."""
    run_dir = Path(run_dir)
    tables.summary.to_csv(run_dir / "summary.csv", index=False)
    write_csv(tables.steps, run_dir / "steps.csv")
    write_csv(tables.memory, run_dir / "memory.csv")
    tables.buffers.to_csv(run_dir / "buffers.csv", index=False)
