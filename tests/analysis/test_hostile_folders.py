"""Run folders as an attacker or a fault leaves them (issue 23), on copies of the recorded real
runs: outputs that are links, samples emptied or torn or replaced by random bytes, inputs that
are FIFOs, folders or deeply nested JSON, two writers racing for one folder, a full disk.
Each test reproduces the case and asserts the outcome: one line and exit 2 for bad input, the
status the samples carry, nothing written through a link, what was there before left whole.
The real CLI runs in-process (Typer's test runner); nothing starts a browser."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import tables as T
from harness.cli import app
from harness.store import files
from harness.store.runfolder import RunFolderError, check_run_folder, claim

RECORDED = Path(__file__).resolve().parent / "runs" / "chromium-decode-loop"
REPO = Path(__file__).resolve().parents[2]


def _copy(tmp_path: Path, name: str = "run") -> Path:
    d = tmp_path / name
    shutil.copytree(RECORDED, d)
    return d


def _cli(*argv: str):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    return r, lines


def _one_line_exit_2(r, lines, *words: str) -> None:
    assert r.exit_code == 2, (r.exit_code, r.output, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for w in words:
        assert w in " ".join(lines[0].split()), lines[0]
    assert "Traceback" not in r.output + r.stderr


# ------------------------------------------------------------ 1. outputs never written through links

@pytest.mark.parametrize("name", ["report.html", "summary.csv"])
def test_an_output_that_is_a_link_is_refused_and_its_target_untouched(tmp_path, name):
    d = _copy(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (d / name).symlink_to(victim)
    r, lines = _cli("report", d)
    _one_line_exit_2(r, lines, f"{name} is a symbolic link", "never written through links")
    assert victim.read_text() == "mine" and (d / name).is_symlink()
    assert not list(d.glob(".webgpu-harness-writing-*"))


def test_a_run_into_a_folder_holding_a_link_where_outputs_go_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (out / "report.html").symlink_to(victim)
    (out / "samples.jsonl").symlink_to(tmp_path / "dangling")  # a link to nothing: would be created
    r, lines = _cli("run", "-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "2", "-o", out)
    _one_line_exit_2(r, lines, "is a symbolic link", "never written through links")
    assert victim.read_text() == "mine" and not (tmp_path / "dangling").exists()
    assert not (out / "manifest.json").exists()


def test_report_replaces_its_files_by_rename_and_leaves_nothing_half_written(tmp_path):
    d = _copy(tmp_path)
    r, _ = _cli("report", d)
    assert r.exit_code == 0, r.output + r.stderr
    for name in files.RUN_FILES:
        assert files.what_is(d / name) is None and (d / name).stat().st_size > 0, name
    before = {n: (d / n).stat().st_ino for n in files.RUN_FILES}
    r, _ = _cli("report", d)
    assert r.exit_code == 0
    # each file is a new inode (renamed over the name), never rewritten in place
    assert all((d / n).stat().st_ino != before[n] for n in files.RUN_FILES)
    assert not list(d.glob(".*.tmp")) and not list(d.glob(".webgpu-harness-writing-*"))


# ------------------------------------------------------------ 4. re-analysis takes its status from the samples

def _cells(d: Path) -> dict:
    return {c: (s, r) for c, s, r in T.build(d).summary[["cell", "status", "reason"]].itertuples(index=False)}


def test_an_emptied_samples_file_is_failed_never_ok(tmp_path):
    d = _copy(tmp_path)
    (d / "samples.jsonl").write_text("")
    got = _cells(d)
    assert got and all(s == "failed" and "holds no step of this cell" in r for s, r in got.values()), got
    r, _ = _cli("report", d)
    assert r.exit_code == 0 and "failed" in r.output


def test_random_bytes_for_samples_are_failed_naming_the_lines(tmp_path):
    d = _copy(tmp_path)
    (d / "samples.jsonl").write_bytes(os.urandom(200_000))
    got = _cells(d)
    assert all(s == "failed" for s, _ in got.values()), got
    assert all("samples.jsonl line" in r and "not a sample" in r for _, r in got.values()), got


def test_a_step_line_torn_in_the_middle_is_incomplete_naming_the_line(tmp_path):
    d = _copy(tmp_path)
    lines = (d / "samples.jsonl").read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if json.loads(ln)["kind"] == "step" and json.loads(ln)["step"] == 5)
    cell = json.loads(lines[i])["cell"]
    lines[i] = lines[i][: len(lines[i]) // 3]  # torn before its "cell" field
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    got = _cells(d)
    assert got[cell][0] == "incomplete", got[cell]
    assert f"samples.jsonl line {i + 1} is not a sample (not JSON (torn or edited))" in got[cell][1]
    # a step line removed whole: the step is missing
    d2 = _copy(tmp_path, "gone")
    lines = (d2 / "samples.jsonl").read_text().splitlines()
    del lines[i]
    (d2 / "samples.jsonl").write_text("\n".join(lines) + "\n")
    assert _cells(d2)[cell] == ("incomplete", "step(s) 5 missing from samples.jsonl; "
                                              f"{sum(1 for ln in lines if json.loads(ln)['kind'] == 'step' and json.loads(ln)['cell'] == cell)} steps were read")


def test_a_cell_without_its_done_sample_is_incomplete(tmp_path):
    d = _copy(tmp_path)
    lines = [ln for ln in (d / "samples.jsonl").read_text().splitlines()]
    done = [json.loads(ln)["cell"] for ln in lines if json.loads(ln)["kind"] == "done"]
    (d / "samples.jsonl").write_text("\n".join(ln for ln in lines if json.loads(ln)["kind"] != "done") + "\n")
    got = _cells(d)
    assert all(got[c][0] == "incomplete" and "no done sample" in got[c][1] for c in done)


@pytest.mark.parametrize("what", ["fifo-samples", "fifo-manifest", "dir-manifest", "dir-samples", "device-samples"])
def test_inputs_that_are_not_regular_files_are_one_line_exit_2_without_hanging(tmp_path, what):
    d = _copy(tmp_path)
    name = "samples.jsonl" if what.endswith("samples") else "manifest.json"
    (d / name).unlink()
    if what.startswith("fifo"):
        os.mkfifo(d / name)
    elif what.startswith("dir"):
        (d / name).mkdir()
    else:
        (d / name).symlink_to("/dev/zero")  # a device (endless): never read
    kind = {"fifo": "a FIFO", "dir": "a folder", "device": "a device"}[what.split("-")[0]]
    # report and merge both; in a thread with a deadline, so a hang fails instead of blocking the suite
    for argv in (("report", d), ("merge", d, "-o", tmp_path / "merged")):
        box: dict = {}
        t = threading.Thread(target=lambda: box.update(zip(("r", "lines"), _cli(*argv))), daemon=True)
        t.start()
        t.join(60)
        assert not t.is_alive(), f"{argv[0]} hangs on {what}"
        _one_line_exit_2(box["r"], box["lines"], name, kind)
        assert not (tmp_path / "merged" / "manifest.json").exists()


def test_a_deeply_nested_manifest_is_one_line_exit_2(tmp_path):
    d = _copy(tmp_path)
    (d / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    r, lines = _cli("report", d)
    _one_line_exit_2(r, lines, "manifest.json nests too deeply")
    r, lines = _cli("merge", d, "-o", tmp_path / "m")
    _one_line_exit_2(r, lines, "manifest.json nests too deeply")
    # a deeply nested sample line: one line left out and named (the cell it may hold: incomplete)
    d2 = _copy(tmp_path, "nested-line")
    lines = (d2 / "samples.jsonl").read_text().splitlines()
    lines.insert(3, '{"kind": "log", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (d2 / "samples.jsonl").write_text("\n".join(lines) + "\n")
    got = _cells(d2)
    assert any(s == "incomplete" and "line 4 is not a sample (JSON nested too deeply)" in r for s, r in got.values())


# ------------------------------------------------------------ 5. one run per folder

def _claim_in_process(d: str, barrier, out) -> None:
    barrier.wait()
    try:
        claim(Path(d), {"cells": [], "who": os.getpid()})
        out.put("claimed")
    except RunFolderError as exc:
        out.put(str(exc))


def test_two_writers_racing_for_one_folder_one_claims_it_the_other_is_told(tmp_path):
    ctx = multiprocessing.get_context("fork")
    for round_ in range(5):  # bounded: five races of four processes
        d = tmp_path / f"race{round_}"
        barrier, out = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_claim_in_process, args=(str(d), barrier, out)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        got = sorted(out.get(timeout=10) for _ in procs)
        assert got.count("claimed") == 1, got
        assert all(g == "claimed" or g == f"{d} already holds a run; choose another --output" for g in got), got
    with pytest.raises(RunFolderError, match="already holds a run"):
        claim(d, {"cells": []})


# ------------------------------------------------------------ 6. a full disk (a small tmpfs the test mounts)

def small_fs(path: Path, size_kib: int):
    """Mount a tmpfs of ``size_kib`` KiB at ``path`` (needs root: the CI and these machines run
    as root; without it the test fails saying so, it is not skipped)."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"cannot mount a {size_kib} KiB tmpfs for the full-disk case ({r.stderr.strip()}): run as root")


def _fill(path: Path) -> None:
    with open(path / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


def test_report_on_a_full_disk_is_one_line_and_leaves_the_previous_files_whole(tmp_path):
    mnt = tmp_path / "small"
    small_fs(mnt, 4096)
    try:
        d = mnt / "run"
        shutil.copytree(RECORDED, d)
        r, _ = _cli("report", d)
        assert r.exit_code == 0, r.output + r.stderr
        before = {n: (d / n).read_bytes() for n in files.RUN_FILES}
        (d / "samples.jsonl").write_text((d / "samples.jsonl").read_text())  # the same run, analysed again
        _fill(mnt)
        r, lines = _cli("report", d)
        assert r.exit_code == 1, r.output + r.stderr
        assert len(lines) == 1 and "no space left on device" in lines[0] and str(d) in lines[0], r.stderr
        assert "Traceback" not in r.output + r.stderr
        after = {n: (d / n).read_bytes() for n in files.RUN_FILES}
        assert after == before  # nothing cut, nothing half-written: the previous report is still readable
        assert not list(d.glob(".webgpu-harness-writing-*"))
        check_run_folder(d)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_the_run_index_lists_damaged_siblings_with_their_problem_never_hangs(tmp_path):
    # a run's index is of every folder beside it: a FIFO, a device or JSON of the wrong shape in
    # one sibling hung `run`/`report` after their report, or gave `index` a traceback (issue 23)
    runs = tmp_path / "runs"
    runs.mkdir()
    good = _copy(runs, "good")
    bad = {"fifo-stats": None, "zero-stats": None, "list": "[1, 2, 3]", "null": "null", "cells": '{"cells": [1, 2]}',
           "deep": "[" * 10000 + "]" * 10000, "string-stats": None}
    for name, manifest in bad.items():
        d = runs / name
        d.mkdir()
        if manifest is None:
            shutil.copy(good / "manifest.json", d / "manifest.json")
        else:
            (d / "manifest.json").write_text(manifest)
    os.mkfifo(runs / "fifo-stats" / "stats.json")
    (runs / "zero-stats" / "stats.json").symlink_to("/dev/zero")
    (runs / "string-stats" / "stats.json").write_text('"hello"')
    r = subprocess.run([sys.executable, "-m", "harness", "index", str(tmp_path)], capture_output=True, text=True,
                       timeout=120)  # ROOT holding runs/
    assert r.returncode == 0 and "Traceback" not in r.stdout + r.stderr, r.stdout[-2000:] + r.stderr[-2000:]
    from harness.report.index import read_run

    problems = {name: read_run(runs / name).problem for name in bad}
    assert all(problems.values()), problems
    assert "a FIFO" in problems["fifo-stats"] and "a device" in problems["zero-stats"], problems
    assert "not an object" in problems["list"] and "nests too deeply" in problems["deep"], problems
    assert read_run(good).problem == "" or "not analysed" in read_run(good).problem
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "string-stats" in html and "fifo-stats" in html and "is a JSON str, not an object" in html
