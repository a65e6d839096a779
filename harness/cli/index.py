"""``webgpu-harness index [ROOT]``: rebuild ROOT/index.html, the list of every run folder under
ROOT/runs/ and comparison under ROOT/compare/ with headline numbers and trends across runs
(harness/report/index.py); without ROOT, the index of the default places (a clone's
reports/index.html). ``run``, ``merge``, ``report``, ``native`` and ``compare`` rebuild the
default places' index themselves, or for output elsewhere the index in the folder holding it
(harness/report/index.py ``target_for``). Exit 2 when ROOT is not a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.common import bad_input, say
from harness.locations import index_file, runs_dir


def index(
    root: Optional[Path] = typer.Argument(None, help=f"Reports root holding runs/ (and compare/): writes ROOT/index.html. Default: {index_file()}, the index of {runs_dir()}."),
):
    """Rebuild the run index (index.html): every run with its headline numbers, and trends across runs."""
    from harness.plan import PlanError

    with bad_input():
        if root is not None and not root.is_dir():
            raise PlanError(f"{root} is not a folder (give a reports root holding runs/, e.g. reports)")
    from harness.pipeline import chart_bundle
    from harness.report import index as I

    runs, comps, out = I.for_root(root) if root is not None else I.default_target()
    say(f"index: {I.write(out, runs, comps, chart_bundle())}")
