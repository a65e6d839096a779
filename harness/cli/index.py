"""``webgpu-harness index [ROOT]``: rebuild ROOT/index.html, the list of every run folder under
ROOT/runs/ and comparison under ROOT/compare/ with headline numbers and trends across runs
(harness/report/index.py). ``run``, ``merge``, ``report``, ``native`` and ``compare`` rebuild
it themselves when their output lies under a reports root. Exit 2 when ROOT is not a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from harness.cli.common import RUNS_DIR, bad_input, say


def index(
    root: Optional[Path] = typer.Argument(None, help="Reports root holding runs/ (and compare/). Default: reports/."),
):
    """Rebuild the run index (index.html): every run with its headline numbers, and trends across runs."""
    from harness.plan import PlanError
    from harness.report import index as I

    root = root or RUNS_DIR.parent
    with bad_input():
        if not root.is_dir():
            raise PlanError(f"{root} is not a folder (give a reports root holding runs/, e.g. reports)")
    say(f"index: {I.write(root)}")
