"""The archive `doctor --bundle` writes (harness/store/bundle.py), from a recorded real run folder
(tests/analysis/runs, re-recorded by tests/analysis/record.py): every file under one folder, the
run's files byte for byte, README naming each part; nothing left at FILE when writing fails.
The whole command, with its own 32-token run, is tests/e2e/test_doctor_bundle.py (full)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from harness.store import bundle as BU

RUN = Path(__file__).resolve().parents[1] / "analysis" / "runs" / "chromium-decode-loop"


def test_archive_holds_the_texts_and_the_run_folder_byte_for_byte(tmp_path):
    path = tmp_path / "b.zip"
    texts = {"README.txt": BU.readme("webgpu-harness test"), "environment.json": BU.dumps(BU.environment({"x": 1}))}
    names = BU.write(path, texts, RUN)
    run_files = sorted(p for p in RUN.rglob("*") if p.is_file())
    assert names == ["README.txt", "environment.json"] + [f"run/{p.relative_to(RUN).as_posix()}" for p in run_files]
    z = zipfile.ZipFile(path)
    assert all(n.startswith(f"{BU.TOP}/") for n in z.namelist())
    for p in run_files:
        assert z.read(f"{BU.TOP}/run/{p.relative_to(RUN).as_posix()}") == p.read_bytes()
    readme = z.read(f"{BU.TOP}/README.txt").decode()
    for name, _ in BU.CONTENTS:
        assert f"  {name}" in readme
    env = json.loads(z.read(f"{BU.TOP}/environment.json"))
    assert env["x"] == 1 and env["packages"]["typer"] and set(env["environment_variables"]) <= set(BU.ENV_VARIABLES)
    assert not (tmp_path / "b.zip.part").exists()


def test_a_failed_write_leaves_no_part_file(tmp_path):
    path = tmp_path / "b.zip"
    (path / "in-the-way").mkdir(parents=True)          # the final rename fails: a folder holds the name
    with pytest.raises(OSError):
        BU.write(path, {"README.txt": "x"}, RUN)
    assert path.is_dir() and not (tmp_path / "b.zip.part").exists()
