"""The console's tables and lines of a finished analysis (run, report, merge, compare): the cells
per workload in their own terms, each workload's own tables, differences, budgets and a
comparison. Reads an :class:`harness.pipeline.Analysis`; computes nothing."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from harness.cli.out import console, say


#: Console columns per workload (summary.csv column → header); workloads not listed use TOKEN_HEADS.
TOKEN_HEADS = {"bind_groups_per_token": "bind groups/tok", "dispatches_per_token": "dispatches/tok",
               "submits_per_token": "submits/tok", "live_bind_groups_end": "live bind groups at end",
               "median_ms_per_token": "ms/tok", "tokens_identical": "same tokens"}
WORKLOAD_HEADS = {
    "dispatch-overhead": None,  # one column per method present: us_per_dispatch_<method> (µs per dispatch)
    "ort-run": {"cycles": "session cycles", "runs": "runs", "median_ms_per_run": "ms/run (steady)",
                "time_to_first_result_ms": "first result ms, cycle 0", "bind_groups_per_token": "bind groups/step",
                "live_bind_groups_end": "live bind groups at end", "tokens_identical": "same outputs"},
    # and one column per size: median_ms_per_upload_<bytes> (a median over every size is never shown)
    "upload": {"uploads": "uploads", "buffers_created_per_upload": "buffers/upload"},
    "lifecycle": {"page_loads": "page loads", "median_ms_per_page_load": "ms/page load",
                  "content_rss_bytes_max": "content RSS max (MiB)"},
    # an app's steps are what --step-on ended, not tokens: summary.csv's *_per_token columns are per step
    "app": {"steps_received": "steps", "bind_groups_per_token": "bind groups/step", "dispatches_per_token": "dispatches/step",
            "submits_per_token": "submits/step", "live_bind_groups_end": "live bind groups at end",
            "median_ms_per_token": "ms/step"},
}
#: The console's legend of its "same …" columns (summary.csv ``tokens_identical``; harness/tables.py).
SAME_LEGEND = ("same tokens / outputs / bytes: yes = every step's token id and output hash (logits_hash: logits, "
               "ort-run's outputs, upload's stamp read back) equal the first "
               "variant's of the same browser, workload, profile and repetition; no = one differs; n/a = nothing to "
               "compare (one variant, an unfinished cell); not comparable = emulated WebGPU (no shader runs)")


def row_label(r) -> str:
    """``chromium decode-loop/fresh [tiny]``: a summary row as the console names it (no
    ``[None]`` for a workload without profiles; the sweep point of a swept cell)."""
    import pandas as pd

    profile = r.get("profile")
    prof = f" [{profile}]" if isinstance(profile, str) and profile and profile != "None" else ""
    sweep = f" {r['sweep']}" if isinstance(r.get("sweep"), str) and r.get("sweep") else ""
    label = f"{r['browser']} {r['workload']}/{r['variant']}{prof}{sweep}"
    machine = r.get("machine")
    if isinstance(machine, str) and machine:  # a merged folder: which run the row came from
        label = f"{machine}: {label}"
    return label if pd.notna(r.get("repetition")) and not r.get("repetition") else f"{label} r{r.get('repetition')}"


def _cell_text(column: str, v) -> str:
    import pandas as pd

    from harness.report.format import number

    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if column.endswith("_bytes_max"):
        return f"{float(v) / 2**20:,.1f}"
    return f"{v:,.1f}" if isinstance(v, float) and column.startswith(("median_", "bind", "dispatch", "submit", "draws", "render_passes")) else (
        number(v) if isinstance(v, (int, float)) else str(v))


def print_summary(analysis) -> None:
    """Per workload, a table of its cells in the workload's own terms (summary.csv columns: per
    token for decode loops, µs per dispatch per method, per run, per upload, per page load) and
    where the numbers came from."""
    import pandas as pd

    from harness.memory_budget import budget_reading
    from harness.report.format import provenance

    s = analysis.tables.summary.copy()
    if "sweep" not in s:
        sweeps = {c["cell"]: c.get("sweep") or {} for c in analysis.tables.manifest.get("cells", [])}
        s["sweep"] = [",".join(f"{k}={v}" for k, v in sweeps.get(c, {}).items()) for c in s["cell"]]
    same = False
    for workload, rows in s.groupby("workload", sort=False):
        heads = WORKLOAD_HEADS.get(workload, TOKEN_HEADS)
        heads = dict(heads) if heads is not None else None
        if workload == "upload":  # per size, never pooled over sizes
            from harness.report.format import value

            sizes = sorted(int(c.rsplit("_", 1)[1]) for c in rows.columns
                           if c.startswith("median_ms_per_upload_") and rows[c].notna().any())
            heads.update({f"median_ms_per_upload_{b}": f"ms/upload {value(b, 'bytes')}" for b in sizes})
            if not sizes:
                heads["median_ms_per_upload"] = "ms/upload"
            heads["tokens_identical"] = "same bytes"
        if heads is not None and any(c in rows and (rows[c].fillna(0).astype(float) > 0).any()
                                     for c in ("draws_per_token", "render_passes_per_token")):
            # an app that renders: its draws next to its (zero) dispatches, per step as its other columns
            per = "step" if workload == "app" else "tok"
            heads = {**{k: v for k, v in heads.items() if k != "median_ms_per_token"},
                     "draws_per_token": f"draws/{per}", "render_passes_per_token": f"render passes/{per}",
                     **({"median_ms_per_token": heads["median_ms_per_token"]} if "median_ms_per_token" in heads else {})}
        if heads is None:
            heads = {c: c[len("us_per_dispatch_"):] for c in rows.columns
                     if c.startswith("us_per_dispatch_") and rows[c].notna().any()}
            if "kernel_us_per_dispatch" in rows and rows["kernel_us_per_dispatch"].notna().any():
                heads["kernel_us_per_dispatch"] = "kernel only"
        unit = rows["step_unit"].dropna().iloc[0] if "step_unit" in rows and rows["step_unit"].notna().any() else "token"
        title = (f"{workload}: µs per dispatch by method (mean over rounds after the first)" if workload == "dispatch-overhead"
                 else f"{workload} (one step = one {unit}; per-step values: medians over steps after the first)")
        if workload == "dispatch-overhead" and not heads:
            title = f"{workload}: sync-latency methods only (their µs per sync: the sync latency table below)"
        table = Table(title=title)
        for h in ("cell", "status", *heads.values()):
            table.add_column(h, overflow="fold")
        for _, r in rows.iterrows():
            cells = [row_label(r), str(r["status"])] + [_cell_text(c, r.get(c)) for c in heads]
            table.add_row(*[Text(c) for c in cells])  # reasons may hold [brackets]: plain text
        console.print(table, markup=False, emoji=False)
        same = same or "tokens_identical" in heads
    print_workload_tables(analysis)
    if same:
        say(f"  {SAME_LEGEND}")
    for source in sorted({provenance(r) for _, r in s[s["status"] != "skipped"].iterrows()}):
        say(f"  measured on: {source}")
    for _, r in s.iterrows():  # --memory-budget: the words of the report's retention table and findings
        said = budget_reading(r.get("would_be_killed_at_token"), r.get("memory_budget_counted_bytes_max"),
                              r.get("memory_budget_bytes"), r)
        if said:
            # a budget crossed: where the content RSS that crossed it was sampled (rounds behind it)
            if said.startswith(("token ", "step ")):
                n = r.get("content_rss_samples")
                rounds = f"; n={int(n)} RSS round{'' if int(n) == 1 else 's'} in its steps" if n is not None and not pd.isna(n) else ""
                said = f"crossed at {said} (would be killed there{rounds})"
            say(f"  {row_label(r)}: memory budget {float(r['memory_budget_bytes']) / 1e6:,.0f} MB: {said}")
    for _, r in s[s["status"] != "ok"].iterrows():
        say(f"  {r['cell']}: {r['status']}: {r['reason']}")
    for line in getattr(analysis, "measurement", []):
        say(f"  {line.replace('`', '')}")
    # what --gc-checkpoints asked for and what was done; whether --memory-budget (default: iOS's
    # ~2 GB kill) was passed, or how near it came
    for f in getattr(analysis, "findings", []):
        if f.kind == "gc_checkpoints":
            say(f"  {f.text()}")
        elif f.kind == "memory_budget" and "near token" in f.text():  # a projection (each cell's reading is above)
            say(f"  {f.scope}: {f.text()}")


def _table(title: str, heads: list[str], rows: list[list[str]]) -> None:
    table = Table(title=Text(title), title_justify="left")  # Text: labels hold [brackets] (profiles, sweeps)
    for h in heads:
        table.add_column(h, overflow="fold", justify="left" if h in ("cell", "method", "pacing", "thread", "navigation",
                                                                      "configuration") else "right")
    for r in rows:
        table.add_row(*[Text(c) for c in r])
    console.print(table, markup=False, emoji=False)


def _fmt(v, how: str = "number") -> str:
    from harness.report import format as F

    if F.missing(v):
        return "—"
    return {"mib": F.mib, "bytes": lambda x: F.value(x, "bytes"), "estimate": F.estimate}.get(how, F.number)(v)


#: Console columns of the per-cycle tables (cycles.csv column → header, format), by workload; then the
#: content process's, the GPU process's and every process's RSS after the cycle.
CYCLE_HEADS = {
    "ort-run": [("time_to_first_result_ms", "first result ms", "number"), ("create_ms", "create ms", "number"),
                ("first_run_ms", "first run ms", "number"), ("median_ms_per_steady_run", "ms/run", "number"),
                ("release_ms", "release ms", "number")],
    "lifecycle": [("page_load", "load", "number"), ("navigation_type", "navigation", "text"),
                  ("wall_ms", "ms", "number"), ("device_ms", "device ms", "number")],
}
CYCLE_COMMON_HEADS = [("compute_pipelines_created", "pipelines", "number"), ("buffers_created", "buffers +", "number"),
                      ("buffers_destroyed", "buffers −", "number"), ("bind_groups_created", "bind groups", "number"),
                      ("buffer_bytes_live_after", "bytes live at end", "bytes"),
                      ("js_heap_bytes_after", "JS heap MiB", "mib")]


def print_workload_tables(analysis) -> None:
    """The tables a workload's summary row cannot hold: one row per cycle of each ort-run and
    lifecycle cell (harness/stats/workloads/cycles.py: phase times, calls, what was live at the
    end, the memory sampled after it) and the sync-latency methods (median [95% CI], p10, p90,
    max µs per configuration × method, with pacing and thread; harness/stats/workloads/sync_latency.py)."""
    from harness.stats.workloads.cycles import FIGURE_NAMES
    from harness.tables import CONTENT_PROCESS_TYPES, GPU_PROCESS_TYPES

    for c in (analysis.workloads.get("cycles") or {}).get("cells", []):
        heads = CYCLE_HEADS.get(c["workload"], []) + CYCLE_COMMON_HEADS
        content = next((p for p in c["ptypes"] if p in CONTENT_PROCESS_TYPES), None)
        gpu = next((p for p in c["ptypes"] if p in GPU_PROCESS_TYPES), None)
        heads += [(f"rss_bytes_after_{p}", f"{p} MiB (sum)", "mib") for p in (content, gpu) if p]
        heads.append(("rss_bytes_after_all", "all MiB (sum)", "mib"))
        heads = [h for h in heads if any(not _missing(r.get(h[0])) for r in c["cycles"])]
        what = "session cycle" if c["workload"] == "ort-run" else "page load"
        title = (f"{row_label(c['row'])}: per {what} (JS heap and RSS: median of the samples taken after the cycle; "
                 f"cycles.csv)")
        if c["later"] and c["first"]:
            k = next(iter(c["first"]))
            title += (f" — {FIGURE_NAMES.get(k, k)}: cycle 0 {_fmt(c['first'][k])}, later cycles "
                      f"{_fmt(c['later'].get(k))} (median of {len(c['cycles']) - 1})")
        _table(title, ["cycle", *(h for _, h, _ in heads)],
               [[str(r["cycle"]), *(_fmt(r.get(k), how) if how != "text" else str(r.get(k) or "—") for k, _, how in heads)]
                for r in c["cycles"]])
    sync = analysis.workloads.get("sync-latency")
    if sync:
        rows = [[r["group"], r["method"], r["pacing"], r["thread"], str(r["syncs"]), str(r["reps"]),
                 *(_fmt(r.get(st), "estimate") if st == "median" else _fmt(r[st].value if r.get(st) else None)
                   for st in sync["stats"])]
                for r in sync["rows"]]
        _table("sync latency: µs per wait for the GPU (every timed sync of the runs after round 0; median [95% CI]; "
               "stats.csv sync_us_<method>)", ["configuration", "method", "pacing", "thread", "syncs", "reps",
                                              *(f"{st} µs" for st in sync["stats"])], rows)


def _missing(v) -> bool:
    from harness.report.format import missing

    return missing(v)


def print_budgets(results) -> None:
    """Budget verdicts, one line each, with the measured value and CI."""
    if not results:
        return
    passed = sum(r.status == "passed" for r in results)
    say(f"budgets: {passed} of {len(results)} passed")
    for r in results:
        tag = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[r.status]
        say(f"  {tag} {r.budget.name}: {r.message}")


def print_differences(analysis) -> None:
    """Differences in each workload's own terms: dispatch-overhead's µs per dispatch of every
    method; otherwise ms per step (named by the workload's step: per token, per upload…) and
    every significant headline difference. Per-repetition metrics from one repetition have no
    interval and are never called significant."""
    from harness.report.format import diff
    from harness.stats.metrics import HEADLINE
    from harness.tables import STEP_UNITS

    for d in analysis.stats.differences:
        workload = d.a.split(":")[-1].split("/")[1] if d.a.count("/") >= 2 else ""
        if workload == "dispatch-overhead":
            if not d.metric.startswith("us_per_dispatch_"):
                continue
            name = f"µs per dispatch, {d.metric[len('us_per_dispatch_'):]}"
        elif d.metric == "ms_per_token" and workload == "upload" and _pooled_sizes(analysis, d):
            continue  # one median over every upload size says nothing about any: the per-size table has them
        elif d.metric == "ms_per_token" or (d.significant and d.metric in HEADLINE):
            unit = STEP_UNITS.get(workload, "token")
            name = f"ms per {unit} (ms_per_token)" if d.metric == "ms_per_token" and unit != "token" else d.metric
        else:
            continue
        # significant / not significant; what is missing for either is in diff(d) (Difference.evidence)
        mark = f" ({d.verdict})" if d.verdict in ("significant", "not significant") or d.evidence == "exact" else ""
        say(f"  {d.b} vs {d.a}: {name} {diff(d)}{mark}")


def _pooled_sizes(analysis, d) -> bool:
    """Whether difference ``d`` pools upload steps of several sizes (its groups' cells uploaded
    more than one size and the groups are not one size each)."""
    st = analysis.tables.steps
    if "extra_size_bytes" not in st:
        return False
    cells = [c for key, g in analysis.stats.groups.items() if key.label in (d.a, d.b) for c in g.cells]
    return st.loc[st["cell"].isin(cells), "extra_size_bytes"].nunique() > 1 and "size" not in f"{d.a}{d.b}"


def _short_verdict(d) -> str:
    """A comparison row's verdict column: ``significant``, ``not significant``, ``exact``, ``no
    difference``, or the end of what is missing (``within-run only``; the whole is in B − A)."""
    v = d.verdict
    head = next((w for w in ("significant", "not significant", "exact", "no difference") if v.startswith(w)), None)
    return head or v.rsplit(": ", 1)[-1]


def print_comparison(c) -> None:
    """The comparison table (headline and significant differences), flags and unmatched."""
    from harness.report import format as F
    from harness.report.finding import compared_on
    from harness.stats.metrics import HEADLINE

    table = Table(title=f"{c.b_name} (B) vs {c.a_name} (A): B − A, 95% CI")
    for col in ("configuration", "metric", "A", "B", "B − A (relative)", "verdict"):
        table.add_column(col, overflow="fold")
    for m in c.matches:
        for d in m.differences:
            if d.metric not in HEADLINE and not d.significant:
                continue
            row = (m.label + (" ⚑" if m.env_differs else ""), d.metric, F.estimate(m.a.metrics[d.metric]),
                   F.estimate(m.b.metrics[d.metric]), F.diff(d), _short_verdict(d))
            table.add_row(*(Text(x) for x in row))
    console.print(table)
    for line in compared_on(c):
        say(f"  {line}")
    for m in c.matches:
        if m.env_differs:
            say(f"  ⚑ {m.label}: environment differs: {'; '.join(m.env_differs)}")
    for what, labels in (("only in A", c.only_a), ("only in B", c.only_b)):
        if labels:
            say(f"  {what}: {', '.join(labels)}")
    for side, failed in (("B", getattr(c, "failed_b", {})), ("A", getattr(c, "failed_a", {}))):
        for label, how in failed.items():  # run in both, but no cell of one side ended ok
            say(f"  {label}: {side}: {how}")
    n = sum(1 for d in c.differences if d.significant)
    say(f"{n} significant difference(s)" if n else "no significant differences")
