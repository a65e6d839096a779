"""What CI reads: ``stats.json``, ``stats.csv``, ``differences.csv``, ``junit.xml`` (one
testcase per budget) and ``summary.md`` (also appended to ``$GITHUB_STEP_SUMMARY`` when set).

Files (in a run folder, or a ``compare`` folder):

``stats.json``       ``{warmup_steps, confidence, methods, groups: [...], differences: [...],
                     budgets: [...], ...extra}`` — :meth:`harness.stats.RunStats.to_dict` plus
                     budget results (:meth:`harness.budgets.BudgetResult.to_dict`)
``stats.csv``        one row per group × metric (sync latency: × statistic): :data:`STATS_COLUMNS`
``differences.csv``  one row per variant pair (or run pair) × metric: :data:`DIFF_COLUMNS`
``junit.xml``        ``<testsuites><testsuite name="webgpu-harness budgets">``, a ``<testcase>``
                     per budget named by the budget; ``<failure>`` / ``<skipped>`` as they went
``summary.md``       the findings (harness/report/findings.py) with budget badges, then headline
                     metrics with CIs, significant differences, budget verdicts
"""

from __future__ import annotations

import csv
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from harness import stats as S
from harness.own_terms import STEP_UNITS
from harness.report import format as F
from harness.report.finding import Finding, measured_on, quantity, values_basis
from harness.report.step_wording import per_step
from harness.verdicts.budgets import BudgetResult

STATS_COLUMNS = ["group", "machine", "browser", "workload", "variant", "profile", "metric", "unit", "kind",
                 "stat", "value", "ci_low", "ci_high", "ci_method", "median", "mean", "n", "n_reps", "warmup",
                 "browser_version", "adapter", "webgpu", "params", "basis", "floors"]
DIFF_COLUMNS = ["metric", "unit", "stat", "a", "b", "a_value", "b_value", "diff", "diff_low", "diff_high",
                "rel", "rel_low", "rel_high", "ci_method", "significant", "reps_a", "reps_b", "reps_low", "reps_high",
                "evidence", "p_value"]


def _with_spread(run: S.RunStats, g) -> list:
    """A group's estimates, each followed, for a metric whose spread is a result
    (:data:`harness.stats.metrics.SPREAD_PREFIXES`: the sync-latency methods), by its ``p10``,
    ``p90`` and ``max`` (harness/stats/workloads/sync_latency.py)."""
    from harness.stats.metrics import SPREAD_PREFIXES
    from harness.stats.workloads.sync_latency import estimates

    out = []
    for m, e in g.metrics.items():
        out.append((m, e))
        if m.startswith(SPREAD_PREFIXES):
            out += [(m, x) for stat, x in estimates(run, g.key, m[len("sync_us_"):]).items() if stat != e.stat]
    return out


def stats_rows(run: S.RunStats) -> list[dict]:
    """Rows of ``stats.csv`` (dicts keyed by :data:`STATS_COLUMNS`): one per group × metric, and
    for the sync-latency metrics (``sync_us_<method>``) one per group × metric × statistic
    (``median``, ``p10``, ``p90``, ``max``)."""
    rows = []
    for g in run.groups.values():
        for m, e in _with_spread(run, g):
            d = e.to_dict()
            rows.append({"group": g.key.label, "machine": g.key.machine, "browser": g.key.browser,
                         "workload": g.key.workload, "variant": g.key.variant, "profile": g.key.profile,
                         "metric": m, **{k: d.get(k) for k in ("unit", "kind", "stat", "value", "ci_low", "ci_high",
                                                               "ci_method", "median", "mean", "n", "n_reps", "warmup")},
                         "browser_version": ";".join(g.env.get("browser_version", [])),
                         "adapter": ";".join(g.env.get("adapter", [])), "webgpu": ";".join(g.env.get("webgpu", [])),
                         "params": g.key.params, "basis": d.get("basis") or None, "floors": d.get("floors")})
    return rows


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def write_stats(out_dir: Path, run: S.RunStats | None, diffs: list[S.Difference] | None = None,
                budgets: list[BudgetResult] | None = None, extra: dict | None = None) -> list[Path]:
    """Write ``stats.json``, ``stats.csv`` (when ``run`` is given) and ``differences.csv``
    (``diffs``, default ``run.differences``) into ``out_dir``. Returns the paths written."""
    out_dir = Path(out_dir)
    diffs = run.differences if diffs is None and run is not None else (diffs or [])
    doc = {**(run.to_dict() if run is not None else {}), "differences": [d.to_dict() for d in diffs],
           "budgets": [b.to_dict() for b in budgets or []], **(extra or {})}
    paths = [out_dir / "stats.json", out_dir / "differences.csv"]
    paths[0].write_text(json.dumps(doc, indent=2, default=str), encoding="utf-8")
    _write_csv(paths[1], DIFF_COLUMNS, [d.to_dict() for d in diffs])
    if run is not None:
        paths.append(out_dir / "stats.csv")
        _write_csv(paths[-1], STATS_COLUMNS, stats_rows(run))
    return paths


def write_memory_series(out_dir: Path, rows: list[dict]) -> Path:
    """``memory_series.csv``: one row per cell × memory series, classified
    (harness/stats/workloads/memory.py ``COLUMNS``); only the header when there is none."""
    from harness.stats.workloads.memory import COLUMNS

    path = Path(out_dir) / "memory_series.csv"
    _write_csv(path, COLUMNS, [{**r, "reason": F.reason(r)} for r in rows])
    return path


def junit_xml(results: list[BudgetResult], path: Path, suite: str = "webgpu-harness budgets") -> Path:
    """Write JUnit XML: one ``<testcase classname="webgpu-harness.budgets" name=BUDGET NAME>`` per
    budget; a failed one holds ``<failure message=...>`` with every failing check, a skipped one
    ``<skipped message=...>``; ``<system-out>`` lists every check."""
    fails = sum(r.status == "failed" for r in results)
    skips = sum(r.status == "skipped" for r in results)
    root = ET.Element("testsuites", tests=str(len(results)), failures=str(fails), skipped=str(skips))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(fails),
                       skipped=str(skips), errors="0")
    for r in results:
        tc = ET.SubElement(ts, "testcase", classname="webgpu-harness.budgets", name=r.budget.name)
        if r.status == "failed":
            f = ET.SubElement(tc, "failure", message=f"budget failed: {r.budget.name}: {r.message}", type="BudgetFailed")
            f.text = "\n".join(c.message for c in r.checks if not c.passed) or r.message
        elif r.status == "skipped":
            ET.SubElement(tc, "skipped", message=r.message)
        out = ET.SubElement(tc, "system-out")
        out.text = f"{r.budget.text}  ({r.budget.source})\n" + "\n".join(c.message for c in r.checks)
    ET.indent(root)
    Path(path).write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))
    return Path(path)


def stated_growth(n) -> bool:
    """Whether a growth per token (a :class:`harness.report.finding.Number` of a ``*growth*``
    metric) carries a trend the findings state (or is exact): its 95% CI excludes 0, from 2 repetitions or more,
    fitted to 3 floors or more or to a flat series (not a rate between collections from fewer
    floors: harness/report/format.py ``rate_between_collections``)."""
    if n.ci_method == "exact":  # the same value at every position: measured, not a trend (``0``: flat)
        return True
    return bool(n.excludes_zero and (n.n_reps or 0) >= 2 and "series" not in str(n.basis or "").split("+"))


def findings_markdown(findings: list[Finding], budgets: list[BudgetResult],
                      diffs: list[S.Difference] | None = None) -> list[str]:
    """Lines of summary.md's "Findings": budget badges, then per scope one bullet per finding
    (value [95% CI]), the same sentences as the report's first section. Numbers are in bold but
    a difference's (``ref`` field ``diff``/``rel``): bold only when that difference of ``diffs``
    is significant, as in the Differences table (bold means significant), a growth per token
    only where the findings state a trend (:func:`stated_growth`), a rate between drops never."""
    significant = {(d.a, d.b, d.metric) for d in diffs or [] if d.significant}

    def bold(n) -> bool:
        r = n.ref or {}
        if n.value is None:  # no number, only what is missing ("too few floors (n=2; needs 3)")
            return False
        if r.get("field") in ("diff", "rel"):
            return (r.get("a"), r.get("b"), r.get("metric")) in significant
        if r.get("field") == "rate_between_collections":  # a rise between drops, no growth stated
            return False
        # a group's growth per token: bold only where a trend is stated
        return stated_growth(n) if "growth" in str(r.get("metric") or "") and "group" in r else True
    out = ["### Findings", ""]
    if budgets:
        icon = {"passed": "✅ pass", "failed": "❌ fail", "skipped": "⏭️ skip"}
        out += ["Budgets: " + " · ".join(f"{icon[b.status]} `{b.budget.name}`" for b in budgets), ""]
    scope = None
    for f in findings:
        if f.scope != scope:
            scope = f.scope
            out += ["", f"**{scope}**", ""]
        flags = "".join(f" ⚑ _{fl}_" for fl in f.flags)
        out.append(f"- {f.text(lambda n: '**' + quantity(n) + '**' if bold(n) else quantity(n))}{flags}".replace("|", "/"))
    if not findings:
        out.append("No findings: no cell produced statistics.")
    return out + [""]


def markdown(title: str, run: S.RunStats | None, diffs: list[S.Difference], budgets: list[BudgetResult],
             notes: list[str] | None = None, metrics: list[str] | None = None,
             findings: list[Finding] | None = None, step: str = "token") -> str:
    """Markdown summary: notes, the findings (when given), a table of headline metrics per
    group (value [95% CI]), the differences (significant ones, and every ``ms_per_token`` one),
    budget verdicts. ``step``: what one step is (``token``; ``step`` for an app run, whose
    ``*_per_token`` metrics are per step)."""
    out = [f"## {title}", ""]
    out += [f"- {n}" for n in notes or []]
    if notes:
        out.append("")
    if findings is not None:
        out += findings_markdown(findings, budgets, diffs)
    if budgets:
        fails = [b for b in budgets if b.status == "failed"]
        out += [f"### Budgets: {len(budgets) - len(fails)} of {len(budgets)} passed"
                + ("" if not fails else f", **{len(fails)} failed**"), "",
                "| | budget | result |", "| --- | --- | --- |"]
        icon = {"passed": "✅", "failed": "❌", "skipped": "⏭️"}
        for b in budgets:
            out.append(f"| {icon[b.status]} | `{b.budget.text}` | {b.message.replace('|', '/')} |")
        out.append("")
    if run is not None and run.groups:
        metrics = metrics or [m for m in S.HEADLINE if any(m in g.metrics for g in run.groups.values())]
        if step == "token" and all(k.workload in STEP_UNITS for k in run.groups):
            step = "step"  # what a *_per_token is of
        out += [f"### Per configuration (value [95% CI]; per-{step} values after "
                f"{run.warmup} warm-up {step}{'s' if run.warmup != 1 else ''}"
                + (": the *_per_token metrics are per step" if step != "token" else "")
                + f"; {values_basis(metrics)})", "",
                "| configuration | measured on | reps | " + " | ".join(_per_step_name(m, step) for m in metrics) + " |",
                "| --- | --- | --- | " + " | ".join("---" for _ in metrics) + " |"]
        for g in run.groups.values():
            reps = len(g.cells)
            failed = f" ({len(g.failed)} failed)" if g.failed else ""
            out.append(f"| {g.key.label} | {measured_on(g)} | {reps}{failed} | "
                       + " | ".join(per_step(F.estimate(g.metrics.get(m)), g.key.workload) for m in metrics) + " |")
        out.append("")
    shown = [d for d in diffs if d.significant or d.metric == "ms_per_token"]
    if shown:
        out += ["### Differences (b − a, 95% CI; **bold**: significant — for times and memory, across 2 or more "
                "repetitions a side — or an exact count difference, the same on every step)", "",
                "| b | a | metric | difference |", "| --- | --- | --- | --- |"]
        for d in shown:
            txt = per_step(F.diff(d), d.a.split("/")[1] if d.a.count("/") >= 2 else "")
            unit = "step" if d.a.count("/") >= 2 and d.a.split("/")[1] in STEP_UNITS else "token"
            out.append(f"| {d.b} | {d.a} | {_per_step_name(d.metric, unit)} | {'**' + txt + '**' if d.significant else txt} |")
        out.append("")
    if len(diffs) > len(shown):  # left out of the table, never out of the files
        left = len(diffs) - len(shown)
        out += [f"{left} more difference{'s' if left != 1 else ''}, none significant, "
                f"{'is' if left == 1 else 'are'} in `differences.csv` (every metric × pair of variants).", ""]
    return "\n".join(out) + "\n"


def _per_step_name(metric: str, step: str) -> str:
    """A metric's column head: its name, and for a ``*_per_token`` metric of a run whose steps are
    not tokens (an app's steps, ort-run's runs) what it is per: ``ms_per_token (per step)``."""
    return f"{metric} (per step)" if step != "token" and "_per_token" in metric else metric


def write_markdown(text: str, out_dir: Path) -> Path:
    """Write ``summary.md`` into ``out_dir``; append it to ``$GITHUB_STEP_SUMMARY`` when set."""
    path = Path(out_dir) / "summary.md"
    path.write_text(text, encoding="utf-8")
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return path
