"""Shared fixtures: real runs of the harness CLI in real Chromium and WebKitGTK (no mocks).

The session's recording (tests/shared_run.py: decode-loop in Chromium and WebKitGTK, a short
ort-decode, two unmodified test apps through both injection paths) starts in the background as
soon as a collected test reads it; the tests that read it run after every other test, so the
browserless tests run meanwhile. ``make test`` is those tests and the browserless ones; a test that
needs a browser run of its own is ``@pytest.mark.full`` (``make test-full``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

import shared_run

REPO = Path(__file__).resolve().parent.parent


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str
    run_dir: Path | None


def run_cli(*args: str, run_dir: Path | None = None, timeout: float = 600) -> CliResult:
    """Run ``python -m harness <args>`` (with ``--output run_dir`` for ``run``)."""
    cmd = [sys.executable, "-m", "harness", *args]
    if run_dir is not None:
        cmd += ["--output", str(run_dir)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**__import__("os").environ, "COLUMNS": "200"})
    return CliResult(proc.returncode, proc.stdout, proc.stderr, run_dir)


@dataclass
class Run:
    dir: Path
    summary: pd.DataFrame
    steps: pd.DataFrame
    memory: pd.DataFrame
    manifest: dict
    cli: CliResult

    def only(self, browser: str) -> "Run":
        """The rows of one browser (summary, steps, memory); the manifest and console stay whole."""
        def pick(df: pd.DataFrame) -> pd.DataFrame:
            return df[df["browser"] == browser].reset_index(drop=True) if "browser" in df else df
        return Run(self.dir, pick(self.summary), pick(self.steps), pick(self.memory), self.manifest, self.cli)

    def cell(self, variant: str) -> pd.Series:
        rows = self.summary[self.summary["variant"] == variant]
        assert len(rows) == 1, self.summary
        return rows.iloc[0]

    def cell_steps(self, variant: str) -> pd.DataFrame:
        return self.steps[self.steps["variant"] == variant].sort_values("step")


def load_run(cli: CliResult) -> Run:
    d = cli.run_dir
    assert (d / "summary.csv").exists(), f"no summary.csv\nstdout:\n{cli.stdout}\nstderr:\n{cli.stderr}"
    return Run(d, pd.read_csv(d / "summary.csv", keep_default_na=False, na_values=[""]),
               pd.read_csv(d / "steps.csv"), pd.read_csv(d / "memory.csv"),
               json.loads((d / "manifest.json").read_text()), cli)


#: the session's :class:`shared_run.SharedRecording`, once a selected test reads it
SHARED = pytest.StashKey[shared_run.SharedRecording]()
#: fixture → the recording of tests/shared_run.py it reads
SHARED_FIXTURES = {"shared_decode": "decode", "decode_run": "decode", "shared_ort": "ort",
                   "shared_app": "app", "shared_app_webkit": "app-webkit"}


@pytest.hookimpl(trylast=True)    # after `-m` has deselected what this session does not run
def pytest_collection_modifyitems(session, config, items):
    """Starts the recordings that the selected tests read, and runs those tests last."""
    needed = {SHARED_FIXTURES[f] for item in items for f in getattr(item, "fixturenames", ()) if f in SHARED_FIXTURES}
    if not needed or config.option.collectonly:
        return
    rec = shared_run.SharedRecording(shared_run.make_root(config), needed)
    config.stash[SHARED] = rec
    rec.start()
    readers = [i for i in items if SHARED_FIXTURES.keys() & set(getattr(i, "fixturenames", ()))]
    others = [i for i in items if i not in set(readers)]
    items[:] = others + readers


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line: how long each shared recording took and how it ended."""
    rec = config.stash.get(SHARED, None)
    if rec is not None and rec.done:
        parts = [f"{n} {r.seconds:.0f} s (exit {r.returncode})" for n, r in sorted(rec.done.items())]
        terminalreporter.write_line("shared recording (tests/shared_run.py): " + ", ".join(parts))


def pytest_unconfigure(config):
    rec = config.stash.get(SHARED, None)
    if rec is not None:
        rec.stop()


def shared(request, name: str) -> Run:
    rec = request.config.stash.get(SHARED, None)
    assert rec is not None, "the shared recording was not started (tests/conftest.py)"
    r = rec.get(name)
    cli = CliResult(r.returncode, r.stdout, r.stderr, r.run_dir)
    assert r.returncode == 0, f"shared recording {name!r} exited {r.returncode} after {r.seconds:.0f} s\n" \
                              + r.stdout[-3000:] + r.stderr[-3000:]
    return load_run(cli)


@pytest.fixture(scope="session")
def shared_decode(request) -> Run:
    """decode-loop, tiny profile, fresh + reuse, 24 tokens, verify=true, --memory-budget 2048MB, in
    Chromium (real WebGPU) and WebKitGTK (emulated)."""
    return shared(request, "decode")


@pytest.fixture(scope="session")
def decode_run(shared_decode) -> Run:
    """The Chromium cells of :func:`shared_decode` (decode-loop tiny, fresh + reuse, 24 tokens)."""
    return shared_decode.only("chromium")


@pytest.fixture(scope="session")
def shared_ort(request) -> Run:
    """ort-decode tiny, default / bind-group-cache / force-gc, 48 tokens, kvCache=static, Chromium."""
    return shared(request, "ort")


@pytest.fixture(scope="session")
def shared_app(request) -> Run:
    """``app`` on tests/apps' transformers and main-thread apps, Chromium, --inject cdp,proxy, 4 steps."""
    return shared(request, "app")


@pytest.fixture(scope="session")
def shared_app_webkit(request) -> Run:
    """``app`` on the same apps in WebKitGTK (proxy, emulated WebGPU), 4 steps."""
    return shared(request, "app-webkit")
