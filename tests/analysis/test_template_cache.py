"""The report's compiled-template cache (harness/report/render.py ``_TemplateCache``, jinja2's
FileSystemBytecodeCache) never changes a report and never fails one: a recorded run's
report.html is the same with no cache yet, with the cache filled, with every cache file damaged,
and with a cache folder jinja2 refuses (a link)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from harness import pipeline
from harness.report import render

RUN = Path(__file__).resolve().parent / "runs" / "chromium-decode-loop"


def _report(out: Path) -> bytes:
    render.environment.cache_clear()
    a = pipeline.analyse(RUN, out_dir=out)
    return pipeline.write(a)["report.html"].read_bytes()


@pytest.fixture
def tmp_cache_root(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield root
    render.environment.cache_clear()


def test_cache_filled_damaged_and_refused_give_the_same_report(tmp_path, tmp_cache_root):
    first = _report(tmp_path / "a")
    cache = tmp_cache_root / f"_jinja2-cache-{os.getuid()}"
    files = sorted(cache.glob("__jinja2_*.cache"))
    assert len(files) >= 5, files  # the report's templates were compiled into it
    assert _report(tmp_path / "b") == first  # read back from the cache
    for i, f in enumerate(files):  # cut short, emptied, or garbage after the header
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2] if i % 3 == 0 else b"" if i % 3 == 1 else data[:8] + b"\x00garbage")
    assert _report(tmp_path / "c") == first
    assert render.environment().bytecode_cache is not None


def test_a_cache_folder_jinja2_refuses_is_not_used(tmp_path, tmp_cache_root):
    """A link where the folder should be (another user could have made it): jinja2 refuses it,
    the templates are compiled each time, the report is the same."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_cache_root / f"_jinja2-cache-{os.getuid()}").symlink_to(elsewhere)
    assert _report(tmp_path / "a") == _report(tmp_path / "b")
    assert render.environment().bytecode_cache is None
    assert not list(elsewhere.iterdir())
