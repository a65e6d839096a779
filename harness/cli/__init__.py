"""The command line: one module per command, each over harness/plan.py (validation) and
harness/pipeline.py (analysis). Only this package turns bad input into exit status 2
(harness/cli/common.py); nothing imports it.

    run      measure workloads in browsers into a run folder (run.py)
    app      measure a user's own web app, probes injected (app_command.py: ``harness.cli.app`` is the
             Typer application itself)
    serve    serve workloads for a browser you open yourself (serve.py)
    report   analyse any run folder again, no browser (report.py)
    compare  B − A between two run folders (compare.py)
    merge    several run folders into one (merge.py)
    index    the run index, reports/index.html (index.py)
    native   dispatch-overhead methods on wgpu-native (native.py)
    doctor   browsers, drivers and adapters found (doctor.py)
    setup    install browsers, drivers and the pinned npm packages (setup.py)

Bad input answers fast: a command's module is imported only when that command runs (or
``--help`` lists them all), and every command validates its options before it imports pandas,
scipy, plotly or a browser driver (tests/cli/test_fast_bad_input.py checks ``sys.modules``;
benchmarks/bad_input.py times it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Callable, Iterator

import click
import typer
from typer.core import TyperGroup

from harness.cli.common import say, version_line


def _run():
    from harness.cli.run import run
    return run, None


def _app():
    from harness.cli.app_command import AppCommand, app
    return app, AppCommand


def _serve():
    from harness.cli.serve import serve
    return serve, None


def _report():
    from harness.cli.report import report
    return report, None


def _compare():
    from harness.cli.compare import compare
    return compare, None


def _merge():
    from harness.cli.merge import merge
    return merge, None


def _index():
    from harness.cli.index import index
    return index, None


def _native():
    from harness.cli.native import native
    return native, None


def _doctor():
    from harness.cli.doctor import doctor
    return doctor, None


def _setup():
    from harness.cli.setup import setup
    return setup, None


#: Commands in --help order: (name, loader); a loader imports the command's module and returns
#: ``(function, click command class or None)``.
COMMANDS: tuple[tuple[str, Callable[[], tuple]], ...] = (
    ("run", _run), ("app", _app), ("serve", _serve), ("report", _report), ("compare", _compare), ("merge", _merge),
    ("index", _index), ("native", _native), ("doctor", _doctor), ("setup", _setup))


def command(name: str):
    """The click command of ``name`` (its module imported now), as typer builds it."""
    fn, cls = dict(COMMANDS)[name]()
    one = typer.Typer(add_completion=False, rich_markup_mode=None)
    one.command(name, cls=cls)(fn)
    cmd = typer.main.get_command(one)
    cmd.name = name
    return cmd


class _LazyCommands(Mapping):
    """name → click command, built on first lookup (the group's ``commands``)."""

    def __init__(self) -> None:
        self._built: dict = {}

    def __getitem__(self, name: str):
        if name not in dict(COMMANDS):
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = command(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(n for n, _ in COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


def usage_line(e: click.UsageError) -> str:
    """click's usage error (an unknown option or command, a missing argument, a bad value of an
    option click checks itself) as the harness says bad input: one line, ``error: …``, with
    the command's usage, or the commands there are, and where ``--help`` is (click's own four
    lines — usage, a hint, a blank, the error — break the harness's rule of one line)."""
    ctx = e.ctx
    msg = re.sub(r"(Did you mean [^?]*\?)(\s*\1)+", r"\1", e.format_message().replace("\n", " ")).strip()  # typer and click both add it
    msg = msg if msg.endswith((".", "?", "?)")) else msg + "."  # "Got unexpected extra argument (b)"
    if ctx is None:  # the parser's own (an option without its value)
        return f"error: {msg} (webgpu-harness COMMAND --help lists a command's options)"
    if isinstance(ctx.command, click.Group) and msg.startswith("No such command"):
        return f"error: {msg} Commands: {', '.join(n for n, _ in COMMANDS)} ({ctx.command_path} --help)."
    usage = " ".join([ctx.command_path, *ctx.command.collect_usage_pieces(ctx)])
    return f"error: {msg} Usage: {usage} ({ctx.command_path} --help lists the options)."


def _one_line(e: click.UsageError) -> click.UsageError:
    """``e`` made to show itself as :func:`usage_line` (typer calls ``show`` and exits 2); the
    group run with nothing (``no_args_is_help``: its help, as click shows it) is left as it is."""
    if isinstance(e, click.exceptions.NoArgsIsHelpError):
        return e

    def show(file=None) -> None:
        click.echo(usage_line(e), err=True)
    e.show = show
    return e


class HarnessGroup(TyperGroup):
    """The ``webgpu-harness`` group: its commands are imported when one is run or listed, and a
    usage error of click's is one line (:func:`usage_line`), exit 2."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:  # the group's own options
            raise _one_line(e)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:  # no such command; a command's options and arguments
            raise _one_line(e)


app = typer.Typer(cls=HarnessGroup, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Measure, in real browsers, what WebGPU LLM decoding costs per generated token.")


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
