"""What every command shares: the consoles, the one place bad input becomes exit 2, and how an
analysis is reported on the console.

Exit statuses (every command): 0 fine; 1 a cell or a budget failed; 2 bad input — one line
naming what is wrong and the valid choices, before anything runs; 130 interrupted.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

import typer

from harness.cli.out import console, err, say  # noqa: F401 (every command's consoles)
from harness.locations import compare_dir, runs_dir  # noqa: F401 (the commands' defaults)

#: Where run folders go without --output: call ``runs_dir()`` (it depends on the current folder and
#: $WEBGPU_HARNESS_RUNS); ``compare_dir()`` for comparisons. Both from harness/locations.py.


def output_default(suffix: str = "", comparison: bool = False) -> str:
    """``--output``'s default for --help, true for this install and current folder: the folder a
    new run (``comparison``: comparison) goes to now, and why there (harness/locations.py)."""
    import os

    from harness import locations

    base = compare_dir() if comparison else runs_dir()
    if os.environ.get(locations.RUNS_ENV):
        why = f"${locations.RUNS_ENV}"
    elif locations.clone_root() is not None:
        why = f"in this clone; ${locations.RUNS_ENV} moves it"
    else:
        why = f"./{locations.RUNS_FOLDER_NAME}/ of the current folder; ${locations.RUNS_ENV} moves it"
    return f"Default: {base}/<YYYYmmdd-HHMMSS>{suffix}/ ({why})."


def installed_browsers() -> str:
    """``chromium, webkit``: the browsers a command measures by default on this install
    (:func:`harness.plan.default_browsers`; for --help), or ``none found: see doctor``."""
    from harness.plan import default_browsers

    return ", ".join(default_browsers()) or "none found here: see `webgpu-harness doctor`"


def version_line() -> str:
    """``webgpu-harness <version>``, and the commit and folder of a clone or the wheel's folder
    (the same as manifest.json's ``harness_version``, ``git_commit``, ``harness_install``)."""
    from harness import __version__, locations

    commit = locations.git_commit()
    return f"webgpu-harness {__version__}" + (f" (commit {commit})" if commit else "") + f"; {locations.install_kind()}"


def fail(message: str) -> None:
    """Print a one-line error and exit 2 (bad input); a line break in it (a path given with one)
    is written ``\\n``, so the error stays one line."""
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    err.print(f"error: {message}", highlight=False, soft_wrap=True, markup=False, emoji=False)
    raise typer.Exit(2)


#: Python packages of the ``measure`` extra that run, serve and doctor import (pyproject.toml).
MEASURE_PACKAGES = ("fastapi", "uvicorn", "playwright", "selenium", "onnx")


def require_measure_extra() -> None:
    """Exit 2 with one line naming the missing packages and the install command when the
    ``measure`` extra is not installed (an analysis-only ``pip install webgpu-harness``)."""
    import importlib.util

    missing = [m for m in MEASURE_PACKAGES if importlib.util.find_spec(m) is None]
    if missing:
        fail(f"this command drives browsers and needs the 'measure' extra ({', '.join(missing)} not installed): "
             "pip install 'webgpu-harness[measure]'")


#: Exceptions that mean bad input (each with a one-line message): (module, class name).
BAD_INPUT_ERRORS = (("harness.plan", "PlanError"), ("harness.verdicts.budgets", "BudgetError"),
                    ("harness.store.runfolder", "RunFolderError"), ("harness.store.merge", "MergeError"),
                    ("harness.verdicts.matching", "NoCommonCells"))


def bad_input_errors() -> tuple[type[Exception], ...]:
    """The classes of :data:`BAD_INPUT_ERRORS` whose modules are imported: one that is not
    cannot have raised, and importing it here would load what it imports (harness/verdicts/
    compare.py: pandas and scipy) before bad input is answered."""
    return tuple(getattr(sys.modules[m], name) for m, name in BAD_INPUT_ERRORS if m in sys.modules)


@contextmanager
def bad_input() -> Iterator[None]:
    """Turn a bad-input exception raised inside the block into one line and exit 2."""
    try:
        yield
    except bad_input_errors() as exc:
        fail(str(exc))


@contextmanager
def disk_errors(folder: Path, quiet: bool = False) -> Iterator[None]:
    """A write that failed (a full disk: ``<file>: no space left on device``; a folder that
    turned read-only) as one line and exit 1; what was written before stays readable
    (harness/store/files.py writes by temporary file and rename). ``quiet``: the line was said
    already (the run's own full disk), exit 1 without another."""
    from harness.store.files import DiskFull

    try:
        yield
    except DiskFull as exc:
        if not quiet:
            held = (Path(folder) / "manifest.json").is_file() and (Path(folder) / "samples.jsonl").is_file()
            then = (f"{folder} keeps what was written before (run `webgpu-harness report {folder}` once there is space)"
                    if held else "nothing was recorded")
            err.print(f"error: {exc}; {then}", highlight=False, markup=False, emoji=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except OSError as exc:
        err.print(f"error: cannot write {exc.filename or folder}: {exc.strerror or exc}", highlight=False,
                  markup=False, emoji=False, soft_wrap=True)
        raise typer.Exit(1) from None


def timestamped(base: Path, suffix: str = "") -> Path:
    """``base/<YYYYmmdd-HHMMSS><suffix>``: the default folder of a new run or comparison."""
    return base / (datetime.now().strftime("%Y%m%d-%H%M%S") + suffix)


def update_index(folder: Path) -> None:
    """Rebuild the run index (``index.html``) that the run or comparison ``folder`` belongs in
    (harness/report/index.py ``target_for``: the default places' index, else the one in the
    folder holding ``folder``)."""
    from harness.pipeline import chart_bundle
    from harness.report import index

    runs, comps, out = index.target_for(folder)
    if not index.ours(out):
        say(f"index: not written: {out} exists and is not a webgpu-harness index")
        return
    try:
        say(f"index: {index.write(out, runs, comps, chart_bundle())}")
    except Exception as exc:  # noqa: BLE001 - the run's own files are written; the index must not fail it
        err.print(f"index not rebuilt: {type(exc).__name__}: {exc}", highlight=False, markup=False)


def finish(run_dir: Path, budgets=(), summary: bool = True, quiet_disk: bool = False):
    """End of every command that wrote a run folder: analyse it, write every file
    (harness/pipeline.py), print the summary, differences and budget verdicts. Returns the
    :class:`harness.pipeline.Analysis`. ``quiet_disk``: a full disk was said already."""
    from harness import pipeline

    say(f"analysing {run_dir}: tables, statistics, report")  # seconds for a long run: not silence
    with bad_input(), disk_errors(run_dir, quiet_disk):
        analysis, paths = pipeline.analyse_and_write(run_dir, budgets)
    if summary:
        from harness.cli.printing import print_budgets, print_differences, print_summary

        print_summary(analysis)
        print_differences(analysis)
        print_budgets(analysis.budgets)
    say(f"report: {paths['report.html']}")
    update_index(run_dir)
    return analysis


def end_on_full_disk(runner, run_dir: Path, budgets=()) -> None:
    """When nothing more could be recorded (a full disk, the sample server gone): one line naming
    the file and why (``once there is space`` only for a full disk), the report of what the folder holds where it still fits (no second line
    when it does not), exit 1. Returns when all went well."""
    full = runner.full()
    if not full:
        return
    failed = sum(1 for c in runner.cells if c.status not in ("ok", "skipped"))
    if getattr(runner.store, "full", None) is not None or getattr(runner, "disk_full", None) is not None:
        then = f"{run_dir} keeps what was written (run `webgpu-harness report {run_dir}` once there is space)"
    else:  # the sample server went (killed, crashed) with space left: the report below is of what it wrote
        then = f"{run_dir} keeps what was written before it went; the report below covers it"
    err.print(f"error: {full}; {failed} cell(s) failed with it; {then}", highlight=False, markup=False, emoji=False,
              soft_wrap=True)
    finish(run_dir, budgets, summary=False, quiet_disk=True)
    raise typer.Exit(1)


def exit_on_outcome(cells, analysis, allow_skipped: bool = False) -> None:
    """End of ``run``/``app``: one line per kind of failure on stderr, then exit 1 when a cell
    failed (failed, device-lost, incomplete), a budget failed, or every cell was skipped
    (nothing measured) without ``allow_skipped``; returns when the run succeeded."""
    failed = [c for c in cells if c.status not in ("ok", "skipped")]
    if failed:
        err.print(f"{len(failed)} cell(s) failed: " + "; ".join(f"{c.cell}: {c.reason}" for c in failed),
                  highlight=False, markup=False, emoji=False, soft_wrap=True)
    if analysis.failed_budgets:
        err.print(f"{len(analysis.failed_budgets)} budget(s) failed: "
                  + "; ".join(r.budget.name for r in analysis.failed_budgets), highlight=False, markup=False,
                  soft_wrap=True)
    nothing = bool(cells) and all(c.status == "skipped" for c in cells)
    if nothing and not allow_skipped:
        err.print(f"every cell ({len(cells)}) was skipped: nothing was measured (pass --allow-skipped "
                  "when that is expected)", highlight=False, markup=False, emoji=False, soft_wrap=True)
    if failed or analysis.failed_budgets or (nothing and not allow_skipped):
        raise typer.Exit(1)
