"""The command line: one module per command, each over harness/plan.py (validation) and
harness/pipeline.py (analysis). Only this package turns bad input into exit status 2
(harness/cli/common.py); nothing imports it.

    run      measure workloads in browsers into a run folder (run.py)
    app      measure a user's own web app, probes injected (app.py)
    serve    serve workloads for a browser you open yourself (serve.py)
    report   analyse any run folder again, no browser (report.py)
    compare  B − A between two run folders (compare.py)
    merge    several run folders into one (merge.py)
    index    the run index, reports/index.html (index.py)
    native   dispatch-overhead methods on wgpu-native (native.py)
    doctor   browsers, drivers and adapters found (doctor.py)
    setup    install browsers, drivers and the pinned npm packages (setup.py)
"""

from __future__ import annotations

import typer

from harness import __version__
from harness.cli import app as app_cmd
from harness.cli import compare, doctor, index, merge, native, report, run, serve, setup
from harness.cli.common import say

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Measure, in real browsers, what WebGPU LLM decoding costs per generated token.")

#: Commands in --help order: (name, function).
COMMANDS = (("run", run.run), ("app", app_cmd.app), ("serve", serve.serve), ("report", report.report),
            ("compare", compare.compare), ("merge", merge.merge), ("index", index.index), ("native", native.native),
            ("doctor", doctor.doctor), ("setup", setup.setup))
#: Commands with a click command class of their own.
CLASSES = {"app": app_cmd.AppCommand}
for _name, _fn in COMMANDS:
    app.command(_name, cls=CLASSES.get(_name))(_fn)


def version_line() -> str:
    """``webgpu-harness <version>``, and the commit and folder of a clone or the wheel's folder
    (the same as manifest.json's ``harness_version``, ``git_commit``, ``harness_install``)."""
    from harness import locations

    commit = locations.git_commit()
    return f"webgpu-harness {__version__}" + (f" (commit {commit})" if commit else "") + f"; {locations.install_kind()}"


def _print_version(value: bool) -> None:
    if value:
        say(version_line())
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                       help="Print the version and exit.")):
    """Measure, in real browsers, what WebGPU LLM decoding costs per generated token."""


def main() -> None:  # pragma: no cover - console script entry
    app()
