"""Numbers of the "Upload" report section and the console's per-size upload table: what one
upload costs per path (variant) and per size, never pooled across sizes — a 256 B and a 4 MiB
upload differ by orders of magnitude, and a median over both says nothing about either.

Data: ``upload`` cells (workloads/upload/README.md): one step per upload, ``extra_size_bytes``
its size, ``extra_round`` its round (every size once per round). Per cell × size, over rounds
after round 0 when the cell has more than one (round 0 is the warm-up: the first upload of a
size allocates the browser's staging): median and p90 ms per upload (step wall time), the median
time to the upload being queued (``extra_enqueue_ms``) and done (``extra_done_ms``), MiB/s at
the median, buffers created per upload (probe count, median) and the largest
``extra_staging_bytes_alive`` (the workload's own ledger).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.tables import after_first_round

WORKLOAD = "upload"


def _median(s: pd.Series):
    s = s.dropna()
    return float(s.median()) if len(s) else None


def numbers(tables, run=None) -> dict | None:
    """``{"rows": [...], "sizes": [...]}`` or None without upload cells that have sized steps.
    A row: ``cell``, ``row`` (summary row), ``size_bytes``, ``uploads`` (after warm-up),
    ``median_ms``, ``p90_ms``, ``enqueue_ms``, ``done_ms`` (medians), ``mib_per_s`` (size ÷
    median ms), ``buffers_per_upload``, ``staging_bytes_alive_max``, ``verified`` (uploads whose
    stamp read back, of ``uploads``; None when not verified)."""
    s = tables.summary
    cells = s[s["workload"] == WORKLOAD]
    st = tables.steps
    if not len(cells) or not len(st) or "extra_size_bytes" not in st:
        return None
    rows = []
    for _, row in cells.iterrows():
        c = after_first_round(st[(st["cell"] == row["cell"]) & st["extra_size_bytes"].notna()])
        for size, g in c.groupby("extra_size_bytes", sort=True):
            ms = g["wall_ms"].dropna()
            med = _median(ms)
            verify = g["extra_verify_ok"].dropna() if "extra_verify_ok" in g else pd.Series(dtype=float)
            rows.append({"cell": row["cell"], "row": row.to_dict(), "size_bytes": int(size), "uploads": int(len(g)),
                         "median_ms": med, "p90_ms": float(np.percentile(ms, 90)) if len(ms) else None,
                         "enqueue_ms": _median(g["extra_enqueue_ms"]) if "extra_enqueue_ms" in g else None,
                         "done_ms": _median(g["extra_done_ms"]) if "extra_done_ms" in g else None,
                         "mib_per_s": (int(size) / 2**20) / (med / 1000) if med else None,
                         "buffers_per_upload": _median(g["create_buffer"]),
                         "staging_bytes_alive_max": (float(g["extra_staging_bytes_alive"].max())
                                                     if "extra_staging_bytes_alive" in g
                                                     and g["extra_staging_bytes_alive"].notna().any() else None),
                         "verified": int(verify.sum()) if len(verify) else None})
    if not rows:
        return None
    return {"rows": rows, "sizes": sorted({r["size_bytes"] for r in rows})}
