"""Where ``report RUN -o OUT`` may write (harness/cli/report.py ``check_output``), on a copy of a
recorded real run: never into another run's folder or a folder of someone's own files (a
partial run would read complete, a user's summary.csv be overwritten), never only after the
analysis into a place that takes no files; the run folder, a new or empty folder and an
earlier report of the same run are fine. In-process CLI; no browser."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app

RUNS = Path(__file__).resolve().parents[1] / "analysis" / "runs"


def _report(*argv):
    r = CliRunner().invoke(app, ["report", *map(str, argv)])
    return r, [x for x in r.stderr.splitlines() if x.strip()]


def _refused(r, lines, *words):
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (r.exit_code, r.stderr)
    assert all(w in " ".join(lines[0].split()) for w in words), lines[0]
    assert "Traceback" not in r.output + r.stderr


def test_report_refuses_another_runs_folder_and_a_folder_of_other_files_before_analysing(tmp_path):
    run = shutil.copytree(RUNS / "chromium-decode-loop", tmp_path / "run")
    other = shutil.copytree(RUNS / "chromium-upload", tmp_path / "other")
    before = sorted(p.name for p in other.iterdir())
    _refused(*_report(run, "-o", other), "already holds a run")
    assert sorted(p.name for p in other.iterdir()) == before  # nothing written into it
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.csv").write_text("my own table\n")
    _refused(*_report(run, "-o", mine), "holds files not written by a report of", "summary.csv")
    assert (mine / "summary.csv").read_text() == "my own table\n" and len(list(mine.iterdir())) == 1


def test_report_writes_to_a_new_folder_then_again_for_the_same_run_but_not_for_another(tmp_path):
    run = shutil.copytree(RUNS / "chromium-decode-loop", tmp_path / "run")
    out = tmp_path / "out"
    r, _ = _report(run, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert (out / "summary.csv").stat().st_size > 0 and not (out / "manifest.json").exists()
    r, _ = _report(run, "-o", out)  # an earlier report of this run: written again
    assert r.exit_code == 0, r.stderr
    upload = shutil.copytree(RUNS / "chromium-upload", tmp_path / "upload")
    _refused(*_report(upload, "-o", out), "holds a report of another run", str(run.resolve()))
    empty = tmp_path / "empty"
    empty.mkdir()
    r, _ = _report(upload, "-o", empty)
    assert r.exit_code == 0, r.stderr


def test_report_into_a_place_that_takes_no_files_is_one_line_exit_2_before_analysing():
    # run as root here: a chmod-ed folder still takes files; /proc never does
    _refused(*_report(RUNS / "chromium-decode-loop", "-o", "/proc/webgpu-harness-report"), "cannot write in /proc")
