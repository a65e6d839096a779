"""Numbers of the report section "GC retention calibration" (the ``gc-retention`` workload;
markup: reports/templates/gc_retention.j2, charts: harness/report/charts.py).

The WebKit issue's open question: does the emulated run (WebKitGTK's JavaScriptCore + the JS
emulated WebGPU of ``web/emulation/``) reproduce Safari's retention of per-dispatch
GPUBindGroups, and which allocation pattern changes it? ``workloads/gc-retention`` makes the
same WebGPU calls in every variant and varies only the JS allocation pattern (``minimal``,
``descriptors``, ``encoder-refs``, ``wasm-heap``, ``js-churn``, ``force-gc``).

Per browser × variant this section shows, from the cells' ``steps.csv`` rows: live
GPUBindGroup wrappers (created − collected, FinalizationRegistry) max and at the end,
collection events (steps in which ``bind_groups_collected`` rose), the modeled native bytes
max (emulated WebGPU only: web/emulation/memory-model.js), and beside them the onnxruntime
field report's Safari figures (references.md, microsoft/onnxruntime #33750), labelled
"reported, not measured here". The verdict rows are computed from the data: each variant's
live max relative to ``minimal`` in the same browser (a change when the ratio of the
repetition means is at least :data:`CHANGE_FACTOR` either way), and whether each cell's
curve looks like the field report's (collection after token 0 or not; force-gc inside the
reported 250–7,000 or not). Nothing is concluded here that the numbers do not say.
"""

from __future__ import annotations

import pandas as pd

from harness.stats.provenance import provenance
from harness.stats.memory import collections
from harness.stats.workloads.retention import FIELD_REPORT

WORKLOAD = "gc-retention"
BASELINE = "minimal"
#: Variants that apply the field report's workaround (compared with its 250–7,000 figure).
FORCE_GC_VARIANTS = ("force-gc", "wasm-heap-force-gc")
#: Live max of a variant vs ``minimal`` (means over repetitions) counts as a change of retention
#: when it differs by at least this factor. The live curve is a sawtooth whose peak depends on
#: when a collection happens to run, so smaller ratios from one or two runs are not read as a
#: change.
CHANGE_FACTOR = 2.0
#: A run "grows without collection", like the field report's no-workaround case, when at least
#: this share of the bind groups it made is live at the end.
NO_GC_LIVE_SHARE = 0.9

#: The onnxruntime field report's Safari figures (references.md). Reported, not measured here.
FIELD = FIELD_REPORT
#: Variant order of tables and charts.
VARIANT_ORDER = ["minimal", "descriptors", "encoder-refs", "wasm-heap", "js-churn", "force-gc", "wasm-heap-force-gc"]


def cell_metrics(steps: pd.DataFrame) -> dict:
    """Retention figures of one cell from its steps.csv rows (any order)."""
    c = steps.sort_values("step")
    rose = collections(c, "bind_groups_collected")  # the one source of GC events (harness/stats/memory.py)
    events = c.loc[rose.index, "step"]
    created = float(c["bind_groups_created"].iloc[-1])
    modeled = c["modeled_native_bytes"] if "modeled_native_bytes" in c else pd.Series(dtype=float)
    return {
        "tokens": int(len(c)),
        "per_token": float(c["create_bind_group"].iloc[1:].median()) if len(c) > 1 else float(c["create_bind_group"].iloc[0]),
        "created": created,
        "live_max": float(c["bind_groups_live"].max()),
        "live_end": float(c["bind_groups_live"].iloc[-1]),
        "events": int(len(events)),
        "events_late": int((events >= len(c) // 2).sum()),
        "last_event": int(events.iloc[-1]) if len(events) else None,
        "per_event": float(rose.mean()) if len(events) else None,
        "modeled_max": float(modeled.max()) if modeled.notna().any() else None,
    }


def classify(conf: dict, base: dict | None) -> tuple[str, str]:
    """(``more`` | ``less`` | ``none`` | ``n/a``, plain words) for one configuration against
    ``minimal`` of the same browser: a live-max ratio of at least :data:`CHANGE_FACTOR` either
    way, or collections stopping (none in the second half of the run in any repetition while
    minimal collected there) or starting (the reverse)."""
    ratio = conf.get("ratio")
    if base is None or not conf.get("mean") or ratio is None or pd.isna(ratio):
        return "n/a", "no minimal cell to compare with"
    m, b = conf["mean"], base["mean"]
    if ratio >= CHANGE_FACTOR:
        return "more", f"more retained (×{ratio:.2f} live max)"
    if ratio <= 1 / CHANGE_FACTOR:
        return "less", f"less retained (×{ratio:.2f} live max)"
    if m["events_late"] == 0 and b["events_late"] > 0:
        return "more", (f"more retained: no collection in the second half (minimal: {b['events_late']:.1f}), "
                        f"×{ratio:.2f} live max within this run")
    if m["events_late"] > 0 and b["events_late"] == 0:
        return "less", (f"less retained: {m['events_late']:.1f} collections in the second half (minimal: none), "
                        f"×{ratio:.2f} live max")
    return "none", f"no clear change (×{ratio:.2f} live max, within {CHANGE_FACTOR:g}×; both collect)"


def _field_comparison(variant: str, m: dict) -> str:
    """How one configuration (metrics averaged over repetitions) compares with the field report."""
    lo, hi = FIELD["live_with_forced_gc"]
    if variant in FORCE_GC_VARIANTS:
        where = "inside" if lo <= m["live_max"] <= hi else ("above" if m["live_max"] > hi else "below")
        extra = "; grows without collection" if grows_uncollected(m) else ""
        return f"live max {m['live_max']:,.0f} is {where} the reported {lo:,}–{hi:,}{extra}"
    if grows_uncollected(m):
        return (f"like the report: grows without collection ({m['live_end'] / m['created']:.0%} of those made "
                "still live at the end)")
    return f"unlike the report: collects (live max {m['live_max'] / m['created']:.0%} of those made)"


def grows_uncollected(m: dict) -> bool:
    """Like the field report's no-workaround run: at least :data:`NO_GC_LIVE_SHARE` of the bind
    groups made are live at the end (a collection in the first tokens, e.g. one that a large
    allocation at setup set off, does not change that)."""
    return bool(m["created"]) and m["live_end"] / m["created"] >= NO_GC_LIVE_SHARE


def configurations(tables) -> tuple[list[dict], pd.DataFrame]:
    """(one dict per browser × adapter × webgpu × variant, pooled over repetitions; the cells)."""
    s, st = tables.summary, tables.steps
    cells = s[s["workload"] == WORKLOAD]
    out = []
    if not len(cells):
        return out, cells
    keys = ["browser", "browser_version", "adapter", "webgpu", "variant"]
    for key, grp in cells.groupby(keys, sort=False, dropna=False):
        per = []
        for _, row in grp.iterrows():
            c = st[st["cell"] == row["cell"]] if len(st) else st
            if len(c):
                per.append(cell_metrics(c))
        status = ", ".join(f"{r['status']}" + (f": {r['reason']}" if r["status"] == "failed" and isinstance(r["reason"], str) else "")
                           for _, r in grp.iterrows())
        conf = dict(zip(keys, key))
        conf.update({"provenance": provenance(grp.iloc[0]), "cells": list(grp["cell"]), "status": status,
                     "reps": per})
        if per:
            df = pd.DataFrame(per)
            conf["mean"] = {k: (df[k].mean() if df[k].notna().any() else None) for k in df.columns}
            conf["mean"]["last_event"] = df["last_event"].max() if df["last_event"].notna().any() else None
        out.append(conf)
    engines = {}
    for conf in out:
        engines.setdefault((conf["browser"], conf["browser_version"], conf["adapter"], conf["webgpu"]), []).append(conf)
    for confs in engines.values():
        base = next((c for c in confs if c["variant"] == BASELINE and c.get("mean")), None)
        for c in confs:
            c["base"] = base
            if c.get("mean") and base and base["mean"]["live_max"]:
                c["ratio"] = c["mean"]["live_max"] / base["mean"]["live_max"]
            else:
                c["ratio"] = None
    return out, cells


def reported_text(variant: str) -> str:
    """What the field report saw for the configuration ``variant`` stands for (reported, not measured)."""
    lo, hi = FIELD["live_with_forced_gc"]
    if variant in FORCE_GC_VARIANTS:
        return f"{lo:,}–{hi:,} live (forced GC every {FIELD['forced_gc_every']} tokens, ~{FIELD['forced_gc_mb']} MB)"
    return f"~{FIELD['live_at_kill']:,} live at the {FIELD['kill_mb']:,} MB kill (ORT, no workaround)"


def verdicts(confs: list[dict]) -> list[dict]:
    """One verdict per engine (provenance), computed from the configurations: ``{"provenance",
    "baseline": bool, "more"/"less"/"none": [(variant, words)], "like_report": [variants growing
    without collection], "force_gc": [{variant, live_max, inside, grows}], "range": (lo, hi)}``."""
    out = []
    engines: dict = {}
    for c in confs:
        engines.setdefault(c["provenance"], []).append(c)
    for prov, cs in engines.items():
        measured = [c for c in cs if c.get("mean")]
        if not measured:
            continue
        base = next((c for c in measured if c["variant"] == BASELINE), None)
        v = {"provenance": prov, "baseline": base is not None, "more": [], "less": [], "none": [],
             "like_report": [], "force_gc": [], "range": FIELD["live_with_forced_gc"], "change_factor": CHANGE_FACTOR}
        if base is not None:
            for c in measured:
                if c["variant"] != BASELINE:
                    kind, words = classify(c, c["base"])
                    v.setdefault(kind, []).append((c["variant"], words))
            v["like_report"] = [c["variant"] for c in measured
                                if c["variant"] not in FORCE_GC_VARIANTS and grows_uncollected(c["mean"])]
            lo, hi = FIELD["live_with_forced_gc"]
            v["force_gc"] = [{"variant": c["variant"], "live_max": c["mean"]["live_max"],
                              "inside": lo <= c["mean"]["live_max"] <= hi, "grows": grows_uncollected(c["mean"])}
                             for c in measured if c["variant"] in FORCE_GC_VARIANTS]
        out.append(v)
    return out


def numbers(tables, run=None) -> dict | None:
    """``{"confs", "cells", "verdicts", "field", ...}`` or None without gc-retention cells. Each
    configuration carries its pattern verdict (``kind``, ``words``) and comparison with the field
    report (``vs_report``)."""
    confs, cells = configurations(tables)
    if not confs:
        return None
    verdict_lines = verdicts(confs)
    for c in confs:
        if c.get("mean"):
            c["kind"], c["words"] = ("baseline", "baseline") if c["variant"] == BASELINE else classify(c, c["base"])
            c["vs_report"] = _field_comparison(c["variant"], c["mean"])
        c["reported"] = reported_text(c["variant"])
        c.pop("base", None)  # a reference to another configuration: not needed by the markup
    return {"confs": confs, "cells": list(cells["cell"]), "verdicts": verdict_lines, "field": FIELD,
            "baseline": BASELINE, "change_factor": CHANGE_FACTOR}
