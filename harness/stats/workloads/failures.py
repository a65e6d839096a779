"""Numbers of the report section "WebGPU errors and their consequence": per cell that raised
any, the uncaptured errors per step by type (steps.csv ``uncaptured_errors``,
``uncaptured_out_of_memory_errors``, ``uncaptured_validation_errors``; web/probes/counters.js),
the first step with one, and what an application that keeps going
(decode-loop ``--param on_gpu_error=continue``) got for it: tokens emitted from work that raised
errors (``extra_output_untrusted``), logits never read back (``extra_readback_failed``), tokens that
differ from the CPU reference (``extra_wrong_token``, with verify on real WebGPU), and under
emulated WebGPU the modeled failure counts (``out_of_memory_errors``, ``command_buffers_rejected``,
``dispatches_dropped``: cumulative) with the emulation's model labels (the ``env`` sample's
``emulation_models``). Markup: reports/templates/failures.j2.
"""

from __future__ import annotations

import pandas as pd

#: (key, steps.csv column): per-step counts summed over the cell.
SUMS = [("errors", "uncaptured_errors"), ("oom", "uncaptured_out_of_memory_errors"),
        ("validation", "uncaptured_validation_errors"), ("untrusted", "extra_output_untrusted"),
        ("readback_failed", "extra_readback_failed"), ("wrong", "extra_wrong_token")]
#: (key, steps.csv column): cumulative emulation counts, taken at the cell's last step.
LAST = [("modeled_oom", "out_of_memory_errors"), ("rejected", "command_buffers_rejected"),
        ("dropped", "dispatches_dropped")]


def _total(st: pd.DataFrame, col: str):
    if col not in st or not st[col].notna().any():
        return None
    return int(st[col].fillna(0).sum())


def cell_failures(st: pd.DataFrame) -> dict:
    """One cell's steps (ordered by step) → {steps, <SUMS keys>, <LAST keys>, first_error_step,
    steps_with_errors, dispatches (per token, median)}; None where a column was not measured."""
    out: dict = {"steps": len(st)}
    for key, col in SUMS:
        out[key] = _total(st, col)
    for key, col in LAST:
        vals = st[col].dropna() if col in st else pd.Series(dtype=float)
        out[key] = int(vals.iloc[-1]) if len(vals) else None
    errs = st["uncaptured_errors"].fillna(0) if "uncaptured_errors" in st else pd.Series(0, index=st.index)
    if "extra_gpu_errors" in st:  # the workload's own count (continue mode) when the probe's is absent
        errs = errs.where(errs > 0, st["extra_gpu_errors"].fillna(0))
    with_err = st[errs > 0]
    out["first_error_step"] = int(with_err["step"].iloc[0]) if len(with_err) else None
    out["steps_with_errors"] = int(len(with_err))
    out["dispatches"] = float(st["dispatch_workgroups"].median()) if "dispatch_workgroups" in st and st["dispatch_workgroups"].notna().any() else None
    return out


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [{cell, row, models, <cell_failures>}]}`` for the cells with an uncaptured error
    or a modeled failure (None when no cell had any)."""
    s, st = tables.summary, tables.steps
    if not len(st):
        return None
    rows = []
    for _, row in s.iterrows():
        c = st[st["cell"] == row["cell"]].sort_values("step")
        if not len(c):
            continue
        f = cell_failures(c)
        if not (f["errors"] or f["untrusted"] or f["modeled_oom"] or f["dropped"] or f["readback_failed"]):
            continue
        models = (tables.env.get(row["cell"]) or {}).get("emulation_models") or []
        rows.append({"cell": row["cell"], "row": row.to_dict(), "models": [m for m in models if not m.startswith("bind-group memory")],
                     **f})
    return {"rows": rows} if rows else None
