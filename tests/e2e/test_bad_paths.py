"""Every path error is one line and exit 2, before anything runs: an output under a file, a
--model that is a folder, a --budget that is a folder, a --browser-path that is not a program,
a non-finite timeout (the real CLI, in-process through Typer's test runner; no browser starts)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli import app

RECORDED = "tests/analysis/runs/chromium-decode-loop"


@pytest.mark.parametrize("args, words", [
    (["run", "-b", "chromium", "-p", "tiny", "-o", "{f}/x"], "is a file; give a folder"),
    (["run", "-b", "chromium", "-w", "ort-decode", "-p", "tiny", "--model", "{d}", "-o", "{t}/o"], "is a folder; give the .onnx file"),
    (["run", "-b", "chromium", "-p", "tiny", "--budget", "{d}", "-o", "{t}/o"], "is a folder, not a budget"),
    (["run", "-b", "chromium", "--browser-path", "{d}", "-o", "{t}/o"], "is not an executable file"),
    (["run", "-b", "chromium", "-p", "tiny", "--step-timeout-s", "nan", "-o", "{t}/o"], "--step-timeout-s must be > 0"),
    (["run", "-b", "chromium", "-p", "tiny", "--step-timeout-s", "0", "-o", "{t}/o"], "--step-timeout-s must be > 0"),
    (["run", "-b", "chromium", "-p", "tiny", "--auto-sample", "0%", "--timeout", "inf", "-o", "{t}/o"], "not a positive duration"),
    (["report", RECORDED, "-o", "{f}/x"], "is a file; give a folder"),
    (["merge", RECORDED, "-o", "{f}/x"], "is a file; give a folder"),
    (["native", "-o", "{f}/x"], "--output"),
])
def test_path_and_timeout_errors_are_one_line_exit_2(tmp_path, args, words):
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("")
    argv = [a.format(f=tmp_path / "f", d=tmp_path / "d", t=tmp_path) for a in args]
    r = CliRunner().invoke(app, argv)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.exit_code == 2, r.output + r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in " ".join(lines[0].split()), r.stderr
    assert not (tmp_path / "o").exists()
