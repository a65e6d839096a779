"""Shared fixtures: real runs of the harness CLI in real Chromium (no mocks).

A session-scoped run of ``decode-loop`` (tiny profile, fresh + reuse) is shared by the tests
that only read its outputs, so the suite launches Chromium a few times, not per test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

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


@pytest.fixture(scope="session")
def decode_run(tmp_path_factory) -> Run:
    """decode-loop, tiny profile, fresh + reuse, 24 tokens, in Chromium with WebGPU."""
    d = tmp_path_factory.mktemp("decode") / "run"
    cli = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                  "--tokens", "24", "--param", "verify=true", run_dir=d)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    return load_run(cli)
