"""CLI for statistics: ``compare`` and ``merge`` commands (``register(app)``), and what ``run``
uses for ``--budget``, ``--auto-sample`` and ``--timeout`` (:func:`load_budgets`,
:func:`auto_sampler`, :func:`after_run`).

Exit statuses: 0 fine; 1 a budget failed (or, for ``run``, a cell failed); 2 bad input (one
line naming what is wrong: malformed budget with its line, no cells in common, not a run folder).
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable, List, Optional

import typer

from harness import budgets as B
from harness import stats as S

#: tachometer's default --timeout: 3 minutes of auto-sampling.
DEFAULT_TIMEOUT_MIN = 3.0
#: Repetitions before auto-sampling may stop: every variant seen in at least two fresh contexts.
AUTO_SAMPLE_MIN_REPETITIONS = 2
#: The CLI's own --repeat ceiling.
MAX_REPETITIONS = 1000


def _cli():
    from harness import cli  # late: harness.cli imports this module while it loads

    return cli


def _fail(message: str) -> None:
    """``cli.fail`` (it prints without rich markup, so ``[[budget]]`` and ``[0.9, 1.1]`` survive)."""
    _cli().fail(message)


def load_budgets(values: Optional[List[str]]) -> list[B.Budget]:
    """Parse ``--budget`` values (budget lines or ``.toml`` files); exit 2 naming the line on error."""
    try:
        return B.load(list(values or []))
    except B.BudgetError as exc:
        _fail(str(exc))
    return []  # pragma: no cover - fail() raises


def check_references(budgets: list[B.Budget], wls) -> None:
    """Before a run: a budget compared with another variant (``<= 0.95 * fresh``) must name a
    variant of a workload the budget selects, and its factor must be positive; exit 2 otherwise
    (rather than failing after the whole run)."""
    from fnmatch import fnmatchcase

    for b in budgets:
        if b.ref is None or b.ref == "baseline":
            continue
        if not b.factor > 0:
            _fail(f"{b.source}: {b.text!r}: the factor must be > 0 (got {b.factor})")
        selected = [w for w in wls if fnmatchcase(w.name, b.workload)]
        if selected and not any(b.ref in w.variants for w in selected):
            valid = sorted({v for w in selected for v in w.variants})
            _fail(f"{b.source}: {b.text!r}: {b.ref!r} is not a variant of {', '.join(w.name for w in selected)} "
                  f"(valid: {', '.join(valid)}, or baseline in compare)")


def parse_timeout(text: str) -> float:
    """``--timeout``: minutes (tachometer's unit) as a plain number, or with ``s``/``m`` → seconds.
    Raises ``ValueError``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min)?\s*", text or "")
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"--timeout {text!r} is not a positive duration (minutes, or e.g. 90s, 2m)")
    return float(m.group(1)) * (1 if m.group(2) == "s" else 60)


@dataclass
class AutoSampler:
    """Adds repetitions (each a round of every variant, fresh contexts) until every variant
    pair's ``ms_per_token`` difference CI clears every condition
    (:func:`harness.stats.unresolved`), or ``timeout_s`` has passed, or no pair can be compared.
    ``outcome`` (also ``manifest.json``'s ``auto_sample``) says why it stopped."""

    conditions: list[S.Condition]
    timeout_s: float
    metric: str = "ms_per_token"
    outcome: dict = field(default_factory=dict)

    def sample(self, runner, on_grow: Callable[[], None] = lambda: None, say: Callable[[str], None] = print):
        """Run ``runner`` (a :class:`harness.runner.Runner`) round after round; returns its cells."""
        from harness import tables

        t0 = time.monotonic()
        reason = ""
        try:
            runner.run(close=False)
            while True:
                reps = runner.plan.repeat
                rs = S.compute(tables.build(runner.run_dir), metrics=[self.metric])
                diffs = [d for d in rs.differences if d.metric == self.metric]
                left = S.unresolved(diffs, self.conditions, self.metric)
                elapsed = time.monotonic() - t0
                conds = ", ".join(str(c) for c in self.conditions)
                if not diffs:
                    reason = (f"stopped after {reps} repetition(s): no two variants of one workload finished ok, "
                              f"so no difference to sample")
                    break
                if not left and reps >= AUTO_SAMPLE_MIN_REPETITIONS:
                    shown = "; ".join(f"{d.b} vs {d.a}: {S.describe_diff(d, self.conditions[0].relative)}" for d in diffs)
                    reason = f"stopped after {reps} repetitions: every {self.metric} difference's 95% CI clears {conds} ({shown})"
                    break
                if elapsed >= self.timeout_s:
                    reason = (f"stopped after {reps} repetitions: --timeout ({self.timeout_s:g} s) passed with "
                              f"{len(left)} unresolved: {'; '.join(left)}")
                    break
                if reps >= MAX_REPETITIONS:
                    reason = f"stopped at {MAX_REPETITIONS} repetitions with {len(left)} unresolved: {'; '.join(left)}"
                    break
                runner.add_repetition()
                on_grow()
                runner.run(close=False)
        finally:
            self.outcome = {"conditions": [str(c) for c in self.conditions], "metric": self.metric,
                            "timeout_s": self.timeout_s, "repetitions": runner.plan.repeat,
                            "elapsed_s": round(time.monotonic() - t0, 1), "reason": reason or "interrupted"}
            runner.manifest["auto_sample"] = self.outcome
            runner.write_manifest()
            runner.store.close()
        say(f"auto-sample: {reason}")
        return runner.cells


def auto_sampler(auto_sample: Optional[str], timeout: Optional[str]) -> Optional[AutoSampler]:
    """``--auto-sample CONDITIONS`` / ``--timeout`` → an :class:`AutoSampler` (or ``None``); exit 2
    on a malformed condition or timeout, or ``--timeout`` without ``--auto-sample``."""
    if auto_sample is None:
        if timeout is not None:
            _fail("--timeout applies to --auto-sample only (e.g. --auto-sample 0% --timeout 3)")
        return None
    try:
        conds = S.parse_conditions(auto_sample)
        secs = parse_timeout(timeout) if timeout is not None else DEFAULT_TIMEOUT_MIN * 60
    except ValueError as exc:
        _fail(str(exc))
    return AutoSampler(conds, secs)


def _report_budgets(results: list[B.BudgetResult], console) -> None:
    if not results:
        return
    passed = sum(r.status == "passed" for r in results)
    console.print(f"budgets: {passed} of {len(results)} passed", highlight=False, markup=False)
    for r in results:
        tag = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[r.status]
        console.print(f"  {tag} {r.budget.name}: {r.message}", highlight=False, markup=False, soft_wrap=True)


def after_run(run_dir: Path, budgets: list[B.Budget], t=None) -> list[B.BudgetResult]:
    """After ``run``'s report: statistics and CI outputs (stats.json/csv, differences.csv,
    summary.md, junit.xml) in ``run_dir``, budget verdicts printed, and the report re-rendered
    with them. ``t``: the run's Tables from ``cli.finish_run`` (statistics already computed for
    its report are reused); built from ``run_dir`` when None. Returns the failed budgets' results."""
    from harness import ci_outputs, report, tables
    from harness.report_sections.stats import attach, stats_of

    cli = _cli()
    t = t if t is not None else tables.build(run_dir)
    rs = stats_of(t)
    results = B.evaluate(budgets, rs)
    ci_outputs.write_stats(run_dir, rs, budgets=results, extra={"auto_sample": t.manifest.get("auto_sample")})
    ci_outputs.junit_xml(results, Path(run_dir) / "junit.xml")
    notes = [f"run `{Path(run_dir).name}`: {len(t.manifest.get('cells', []))} cells, "
             f"{t.manifest.get('parameters', {}).get('repeat', 1)} repetition(s)"]
    if t.manifest.get("auto_sample"):
        notes.append(f"auto-sample: {t.manifest['auto_sample']['reason']}")
    ci_outputs.write_markdown(ci_outputs.markdown("webgpu-harness run", rs, rs.differences, results, notes), run_dir)
    if results:
        attach(t, rs, results)
        report.render(t, run_dir)
    for d in rs.differences:
        if d.metric == "ms_per_token" or (d.significant and d.metric in S.HEADLINE):
            mark = "significant" if d.significant else "not significant"
            cli.console.print(f"  {d.b} vs {d.a}: {d.metric} {ci_outputs.fmt_diff(d)} ({mark})", highlight=False, markup=False,
                              soft_wrap=True)
    _report_budgets(results, cli.console)
    return B.failed(results)


def _run_dir_arg(path: Path, cli=None) -> Path:
    """Exit 2 unless ``path`` holds a readable run: manifest.json with a list of cells (each
    with a ``cell`` id) and samples.jsonl."""
    import json

    manifest = path / "manifest.json"
    if not manifest.exists():
        _fail(f"{path} is not a run folder (no manifest.json)")
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        _fail(f"{manifest} is not readable JSON ({exc})")
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and "cell" in c for c in cells):
        _fail(f"{manifest} has no list of cells with ids: not a webgpu-harness run")
    if not (path / "samples.jsonl").exists():
        _fail(f"{path} has no samples.jsonl: not a complete run folder")
    return path


def register(app: typer.Typer) -> None:
    """Add ``compare`` and ``merge`` to the CLI."""

    @app.command()
    def compare(
        run_a: Path = typer.Argument(..., help="Baseline run folder (A)."),
        run_b: Path = typer.Argument(..., help="Run folder to compare with it (B)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for compare.html/json. Default: reports/compare/<timestamp>/."),
        budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable), checked on B; `baseline` names A's same cell. See README, Budgets."),
        warmup: int = typer.Option(S.DEFAULT_WARMUP, "--warmup", help="Tokens at the start of each cell left out of per-token statistics."),
    ):
        """Differences B − A with 95% CIs for every configuration in both runs; flags changed environments."""
        from harness import ci_outputs, tables
        from harness.compare import NoCommonCells, compare as do_compare, render_html

        cli = _cli()
        if warmup < 0:
            _fail(f"--warmup must be >= 0 (got {warmup})")
        budgets = load_budgets(budget)
        for p in (run_a, run_b):
            _run_dir_arg(p, cli)
        names = [run_a.resolve().name, run_b.resolve().name]
        if names[0] == names[1]:
            names = [f"A:{names[0]}", f"B:{names[1]}"]
        try:
            c = do_compare(tables.build(run_a), tables.build(run_b), names[0], names[1], warmup, str(run_a), str(run_b))
        except NoCommonCells as exc:
            _fail(str(exc))
        results = B.evaluate(budgets, c.b_stats, baseline=c.a_stats)
        out = output or cli.REPO_ROOT / "reports" / "compare" / datetime.now().strftime("%Y%m%d-%H%M%S")
        if out.exists() and not out.is_dir():
            _fail(f"--output {out} is a file; give a folder")
        if (out / "manifest.json").exists() or (out / "compare.json").exists():
            _fail(f"{out} already holds a run or a comparison; choose another --output")
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.json").write_text(__import__("json").dumps({**c.to_dict(), "budgets": [r.to_dict() for r in results]},
                                                                   indent=2, default=str), encoding="utf-8")
        ci_outputs.write_stats(out, None, c.differences, results, extra={"a": str(run_a), "b": str(run_b)})
        ci_outputs.junit_xml(results, out / "junit.xml")
        notes = [f"A: `{run_a}` ({c.a_manifest.get('created')}), B: `{run_b}` ({c.b_manifest.get('created')})"]
        notes += [f"⚑ {m.label}: environment differs: {'; '.join(m.env_differs)}" for m in c.matches if m.env_differs]
        if c.only_a or c.only_b:
            notes.append(f"unmatched: only in A: {', '.join(c.only_a) or 'none'}; only in B: {', '.join(c.only_b) or 'none'}")
        ci_outputs.write_markdown(ci_outputs.markdown(f"webgpu-harness compare: {names[1]} vs {names[0]}", None,
                                                      c.differences, results, notes), out)
        html = render_html(c, out / "compare.html", results)
        _print_comparison(c, cli.console)
        _report_budgets(results, cli.console)
        cli.console.print(f"compare: {html}")
        if B.failed(results):
            raise typer.Exit(1)

    @app.command()
    def merge(
        runs: List[Path] = typer.Argument(..., help="Run folders to merge (e.g. one per machine)."),
        output: Optional[Path] = typer.Option(None, "--output", "-o", help="Merged run folder. Default: reports/runs/<timestamp>-merged/."),
        label: Optional[List[str]] = typer.Option(None, "--label", help="Name of each source in the merged run, in order (default: its folder name)."),
        budget: Optional[List[str]] = typer.Option(None, "--budget", help="Budget line or .toml file (repeatable), checked on the merged run."),
    ):
        """Combine runs from several machines into one run folder and report; each cell keeps its environment."""
        from harness.merge import MergeError, merge as do_merge

        cli = _cli()
        budgets = load_budgets(budget)
        for p in runs:
            _run_dir_arg(p)
        out = output or cli.RUNS_DIR / (datetime.now().strftime("%Y%m%d-%H%M%S") + "-merged")
        try:
            manifest = do_merge(list(runs), out, label, argv=sys.argv)
        except MergeError as exc:
            _fail(str(exc))
        report, t = cli.finish_run(out)
        cli.print_summary(out)
        for s in manifest["merged_from"]:
            cli.console.print(f"  {s['label']}: {s['cells']} cells from {s['dir']} · {s['os']} · {s['cpu']}", highlight=False, markup=False)
        failures = after_run(out, budgets, t)
        cli.console.print(f"report: {report}")
        if failures:
            raise typer.Exit(1)


def _print_comparison(c, console) -> None:
    from rich.table import Table
    from rich.text import Text

    from harness.ci_outputs import fmt_diff, fmt_estimate

    table = Table(title=f"{c.b_name} (B) vs {c.a_name} (A): B − A, 95% CI")
    for col in ("configuration", "metric", "A", "B", "B − A (relative)", ""):
        table.add_column(col, overflow="fold")
    for m in c.matches:
        for d in m.differences:
            if d.metric not in S.HEADLINE and not d.significant:
                continue
            row = (m.label + (" ⚑" if m.env_differs else ""), d.metric, fmt_estimate(m.a.metrics[d.metric]),
                   fmt_estimate(m.b.metrics[d.metric]), fmt_diff(d), "significant" if d.significant else "")
            table.add_row(*(Text(x) for x in row))
    console.print(table)
    for m in c.matches:
        if m.env_differs:
            console.print(f"  ⚑ {m.label}: environment differs: {'; '.join(m.env_differs)}", highlight=False, markup=False)
    for what, labels in (("only in A", c.only_a), ("only in B", c.only_b)):
        if labels:
            console.print(f"  {what}: {', '.join(labels)}", highlight=False, markup=False)
    n = sum(1 for d in c.differences if d.significant)
    console.print(f"{n} significant difference(s)" if n else "no significant differences", highlight=False, markup=False)
