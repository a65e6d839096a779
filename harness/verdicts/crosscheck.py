"""``app --inject cdp,proxy``: the two injection paths measure the same app, to cross-check each
other (README, "Your own app"). One line per app × browser × repetition measured on both paths
compares their step counts (summary.csv's per-step medians: createBindGroup, dispatches and
submits per step, and the steps received): equal on both paths, or where they differ. Counts
are exact numbers of calls, so equal means equal, no interval."""

from __future__ import annotations

import pandas as pd

from harness.report.format import number

#: summary.csv column → how the line names it (an app's ``*_per_token`` columns are per step).
STEP_COUNTS = {"bind_groups_per_token": "createBindGroup per step", "dispatches_per_token": "dispatches per step",
               "submits_per_token": "submits per step", "steps_received": "steps"}
PATHS = ("cdp", "proxy")


def inject_crosscheck(summary: pd.DataFrame) -> list[str]:
    """``chromium app/frames r0, cdp vs proxy: createBindGroup per step 3 = 3, …: agree`` (or
    ``differ: dispatches per step 5 ≠ 7``; or ``not compared: cdp failed``) for every app ×
    browser × repetition with a cell on each path; none for a run without both paths."""
    if summary.empty or "workload" not in summary or "profile" not in summary:
        return []
    apps = summary[(summary["workload"] == "app") & summary["profile"].isin(PATHS)]
    out = []
    for (browser, app, rep), rows in apps.groupby(["browser", "variant", "repetition"], sort=False):
        by = {r["profile"]: r for _, r in rows.iterrows()}
        if set(by) != set(PATHS):
            continue
        where = f"{browser} app/{app}{f' r{rep}' if rep else ''}, cdp vs proxy"
        bad = [f"{p} {by[p]['status']}" for p in PATHS if by[p]["status"] != "ok"]
        if bad:
            out.append(f"{where}: not compared ({', '.join(bad)})")
            continue
        said, differ = [], []
        for col, name in STEP_COUNTS.items():
            a, b = (by[p].get(col) for p in PATHS)
            if pd.isna(a) and pd.isna(b):
                continue
            same = not pd.isna(a) and not pd.isna(b) and float(a) == float(b)
            text = f"{name} {number(a)} {'=' if same else '≠'} {number(b)}"
            said.append(text)
            if not same:
                differ.append(text)
        if said:
            out.append(f"{where}: " + (f"differ: {', '.join(differ)}" if differ else f"{', '.join(said)}: agree"))
    return out
