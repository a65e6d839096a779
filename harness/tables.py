"""Tidy pandas tables from a run folder: ``summary.csv``, ``steps.csv``, ``memory.csv``.

Columns are a stable interface (RESULTS.md). Per-token medians use tokens after the first
(token 0 compiles pipelines and fills caches).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

#: Probe counter name (web/probes/counters.js) → steps.csv column.
COUNTER_COLUMNS = {
    "createBindGroup": "create_bind_group", "createBuffer": "create_buffer",
    "createComputePipeline": "create_compute_pipeline",
    "createComputePipelineAsync": "create_compute_pipeline_async",
    "createShaderModule": "create_shader_module", "createCommandEncoder": "create_command_encoder",
    "submit": "submit", "commandBuffersSubmitted": "command_buffers_submitted",
    "writeBuffer": "write_buffer", "writeBufferBytes": "write_buffer_bytes",
    "dispatchWorkgroups": "dispatch_workgroups", "dispatchWorkgroupsIndirect": "dispatch_workgroups_indirect",
    "mapAsync": "map_async", "bufferDestroy": "buffer_destroy",
}
LIVE_COLUMNS = ["bind_groups_created", "bind_groups_collected", "bind_groups_live",
                "buffers_created", "buffers_collected", "buffers_live"]
CELL_KEYS = ["cell", "browser", "workload", "variant", "profile", "repetition"]
STEP_COLUMNS = CELL_KEYS + ["step", "token", "logits_hash", "cpu_ms", "wall_ms", "received_s",
                            *COUNTER_COLUMNS.values(), *LIVE_COLUMNS]
MEMORY_COLUMNS = ["cell", "source", "process_type", "pid", "rss_bytes", "uss_bytes", "js_heap_bytes",
                  "time_s", "token"]
SUMMARY_COLUMNS = ["cell", "browser", "browser_version", "adapter", "webgpu", "workload", "variant",
                   "profile", "repetition", "tokens", "status", "reason", "bind_groups_per_token",
                   "dispatches_per_token", "submits_per_token", "live_bind_groups_end",
                   "tokens_identical", "median_ms_per_token", "median_cpu_ms_per_token", "steps_received"]


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


def read_samples(run_dir: Path) -> list[dict]:
    """Every sample of ``samples.jsonl``; a torn last line (crash mid-write) is skipped."""
    out = []
    path = Path(run_dir) / "samples.jsonl"
    if not path.exists():
        return out
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def build(run_dir: Path) -> Tables:
    """Read ``manifest.json`` and ``samples.jsonl`` of ``run_dir`` into :class:`Tables`."""
    run_dir = Path(run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    cells = {c["cell"]: c for c in manifest.get("cells", [])}
    step_rows, mem_rows, event_rows = [], [], []
    env: dict[str, dict] = {}
    results: dict[str, dict] = {}
    for s in read_samples(run_dir):
        cell = cells.get(s.get("cell"), {})
        keys = {k: cell.get(k) for k in CELL_KEYS}
        kind = s.get("kind")
        if kind == "step":
            row = {**keys, "step": s["step"], "token": s.get("token"), "logits_hash": s.get("logits_hash"),
                   "cpu_ms": s.get("cpu_ms"), "wall_ms": s.get("wall_ms"), "received_s": s.get("received_s")}
            row.update({COUNTER_COLUMNS[k]: v for k, v in s.get("counters", {}).items() if k in COUNTER_COLUMNS})
            row.update(s.get("live", {}))
            row.update({f"extra_{_snake(k)}": v for k, v in (s.get("extra") or {}).items()})
            step_rows.append(row)
        elif kind in ("process_memory", "worker_heap"):
            mem_rows.append({"cell": keys["cell"], **{k: s.get(k) for k in MEMORY_COLUMNS if k != "cell"}})
        elif kind == "uasm":
            mem_rows.append({"cell": keys["cell"], "source": "uasm", "process_type": "page", "pid": None,
                             "rss_bytes": None, "uss_bytes": None, "js_heap_bytes": s.get("bytes"),
                             "time_s": s.get("received_s"), "token": None})
        elif kind == "env":
            env[keys["cell"]] = s
        elif kind == "done":
            results[keys["cell"]] = s.get("result") or {}
        if kind in ("error", "skip", "log", "cell_status"):
            event_rows.append({"cell": keys["cell"], "kind": kind, "received_s": s.get("received_s"),
                               "message": s.get("message") or s.get("reason") or s.get("status"),
                               "detail": s.get("stack") or (s.get("reason") if kind == "cell_status" else "")})
    steps = pd.DataFrame(step_rows)
    for col in STEP_COLUMNS:
        if col not in steps:
            steps[col] = pd.Series(dtype="float64")
    extras = sorted(c for c in steps.columns if c.startswith("extra_"))
    steps = steps[STEP_COLUMNS + extras]
    if len(steps):
        steps = steps.sort_values(["cell", "step"]).drop_duplicates(["cell", "step"], keep="last").reset_index(drop=True)
    memory = pd.DataFrame(mem_rows, columns=MEMORY_COLUMNS)
    if len(memory):
        memory["token"] = memory.groupby("cell")["token"].ffill()
    events = pd.DataFrame(event_rows, columns=["cell", "kind", "received_s", "message", "detail"])
    summary = _summary(manifest, steps, memory, env)
    return Tables(summary, steps, memory, manifest, env, events, results)


def _summary(manifest: dict, steps: pd.DataFrame, memory: pd.DataFrame, env: dict) -> pd.DataFrame:
    rows = []
    for c in manifest.get("cells", []):
        s = steps[steps["cell"] == c["cell"]]
        after = s[s["step"] > 0] if len(s) > 1 else s
        row = {k: c.get(k) for k in ("cell", "browser", "browser_version", "adapter", "webgpu", "workload",
                                     "variant", "profile", "repetition", "tokens", "status", "reason")}
        row.update({
            "bind_groups_per_token": _median(after, "create_bind_group"),
            "dispatches_per_token": _median(after, "dispatch_workgroups"),
            "submits_per_token": _median(after, "submit"),
            "live_bind_groups_end": int(s["bind_groups_live"].iloc[-1]) if len(s) else None,
            "median_ms_per_token": _median(after, "wall_ms"),
            "median_cpu_ms_per_token": _median(after, "cpu_ms"),
            "steps_received": len(s),
        })
        m = memory[(memory["cell"] == c["cell"]) & (memory["source"] == "psutil")]
        for ptype, grp in m.groupby("process_type"):
            row[f"peak_rss_bytes_{ptype}"] = int(grp["rss_bytes"].max())
        rows.append(row)
    summary = pd.DataFrame(rows)
    for col in SUMMARY_COLUMNS:
        if col not in summary:
            summary[col] = pd.Series(dtype="object")
    summary["tokens_identical"] = _tokens_identical(summary, steps)
    peaks = sorted(c for c in summary.columns if c.startswith("peak_rss_bytes_"))
    return summary[SUMMARY_COLUMNS + peaks]


def _median(df: pd.DataFrame, col: str):
    vals = df[col].dropna() if col in df else []
    return float(vals.median()) if len(vals) else None


def _tokens_identical(summary: pd.DataFrame, steps: pd.DataFrame) -> list:
    """Per cell: does its token sequence and logits hashes equal the first ok variant's of the
    same browser × workload × profile × repetition? "yes"/"no"; "n/a" for a lone variant or a
    cell that did not finish; "not comparable" under emulated WebGPU (no shader runs)."""
    out = []
    seqs = {cid: list(zip(g["token"], g["logits_hash"])) for cid, g in steps.groupby("cell")} if len(steps) else {}
    for _, row in summary.iterrows():
        if row["webgpu"] == "emulated":
            out.append("not comparable")
            continue
        if row["status"] != "ok":
            out.append("n/a")
            continue
        peers = summary[(summary["browser"] == row["browser"]) & (summary["workload"] == row["workload"])
                        & (summary["profile"].fillna("") == (row["profile"] or ""))
                        & (summary["repetition"] == row["repetition"]) & (summary["status"] == "ok")]
        if len(peers) < 2:
            out.append("n/a")
            continue
        ref = seqs.get(peers.iloc[0]["cell"], [])
        out.append("yes" if seqs.get(row["cell"], []) == ref and ref else "no")
    return out


def write(tables: Tables, run_dir: Path) -> None:
    """Write ``summary.csv``, ``steps.csv`` and ``memory.csv`` into ``run_dir``."""
    run_dir = Path(run_dir)
    tables.summary.to_csv(run_dir / "summary.csv", index=False)
    tables.steps.to_csv(run_dir / "steps.csv", index=False)
    tables.memory.to_csv(run_dir / "memory.csv", index=False)
