"""Table parts from the probe's render, binding and buffer counters (harness/tables.py uses them):
buffers.csv — the buffers each step created, by (label, usage), from the step samples'
``created_buffers`` (web/probes/counters.js ``takeCreatedBuffers``; ``usage_flags`` spells the
GPUBufferUsage bits, WebGPU spec §5.1.2 "Buffer Usages") — and summary.csv's render and binding
columns (:data:`RENDER_AND_BINDING_COLUMNS`)."""

from __future__ import annotations

import pandas as pd

#: buffers.csv columns (RESULTS.md).
BUFFER_COLUMNS = ["cell", "step", "label", "usage", "usage_flags", "buffers", "bytes"]
#: GPUBufferUsage bits in spec order (WebGPU spec §5.1.2 "Buffer Usages").
USAGE_FLAGS = [(0x0001, "MAP_READ"), (0x0002, "MAP_WRITE"), (0x0004, "COPY_SRC"), (0x0008, "COPY_DST"),
               (0x0010, "INDEX"), (0x0020, "VERTEX"), (0x0040, "UNIFORM"), (0x0080, "STORAGE"),
               (0x0100, "INDIRECT"), (0x0200, "QUERY_RESOLVE")]


def usage_flags(usage) -> str:
    """GPUBufferUsage bits as ``COPY_DST|STORAGE`` (spec order); '' for 0 (the '(other)' group)."""
    u = int(usage or 0)
    return "|".join(name for bit, name in USAGE_FLAGS if u & bit)


def buffer_rows(cell: str, sample: dict) -> list[dict]:
    """buffers.csv rows of one ``step`` sample of ``cell`` ([] when it carries no groups)."""
    return [{"cell": cell, "step": sample["step"], "label": g.get("label", ""), "usage": g.get("usage"),
             "usage_flags": usage_flags(g.get("usage")), "buffers": g.get("buffers"), "bytes": g.get("bytes")}
            for g in sample.get("created_buffers") or ()]


#: Per-token medians (steps after the first) of more counters, and pipelines created over the
#: cell: render work (an app that draws is not "0 dispatches"), setBindGroup calls and bytes
#: written per token (the remedies' comparison, workloads/decode-loop README).
RENDER_AND_BINDING_COLUMNS = ["draws_per_token", "render_passes_per_token", "set_bind_groups_per_token",
                              "write_buffer_bytes_per_token", "pipelines_created"]
#: The four draw calls, summed into ``draws_per_token``.
DRAW_COLUMNS = ["draw", "draw_indexed", "draw_indirect", "draw_indexed_indirect"]
#: Pipeline creations (compute and render, sync and async), summed into ``pipelines_created``.
PIPELINE_COLUMNS = ["create_compute_pipeline", "create_compute_pipeline_async", "create_render_pipeline",
                    "create_render_pipeline_async"]


def render_and_binding(s: pd.DataFrame, after: pd.DataFrame) -> dict:
    """One cell's :data:`RENDER_AND_BINDING_COLUMNS`: medians over the steps after the first of
    the four draw calls together, render passes, setBindGroup calls and writeBuffer bytes, and
    the pipelines (compute and render) created over all its steps; None where not measured
    (a run older than these counters, or --no-probes)."""
    def measured(df: pd.DataFrame, cols: list[str]) -> pd.Series | None:
        have = [c for c in cols if c in df]
        if not have or not len(df) or df[have].isna().all(axis=None):
            return None
        return df[have].sum(axis=1, min_count=1)

    draws = measured(after, DRAW_COLUMNS)
    pipelines = measured(s, PIPELINE_COLUMNS)
    return {
        "draws_per_token": float(draws.median()) if draws is not None and draws.notna().any() else None,
        "render_passes_per_token": _median(after, "begin_render_pass"),
        "set_bind_groups_per_token": _median(after, "set_bind_group"),
        "write_buffer_bytes_per_token": _median(after, "write_buffer_bytes"),
        "pipelines_created": int(pipelines.sum()) if pipelines is not None and pipelines.notna().any() else None,
    }


def _median(df: pd.DataFrame, col: str):
    vals = df[col].dropna() if col in df else []
    return float(vals.median()) if len(vals) else None
