"""Bad input, skipped cells and failures through the real CLI."""

from __future__ import annotations

import pytest

from conftest import load_run, run_cli


@pytest.mark.parametrize("args, valid", [
    (["--browser", "netscape"], "chromium"),
    (["--workload", "nope"], "decode-loop"),
    (["--workload", "decode-loop", "--variant", "nope"], "fresh, reuse"),
    (["--workload", "decode-loop", "--profile", "nope"], "tiny"),
])
def test_unknown_names_are_one_line_errors_with_exit_2(args, valid, tmp_path):
    r = run_cli("run", *args, run_dir=tmp_path / "r")
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: unknown") and "valid:" in lines[0] and valid in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args", [["--tokens", "0"], ["--tokens", "-3"], ["--repeat", "0"], ["--param", "oops"]])
def test_bad_numbers_exit_2(args, tmp_path):
    r = run_cli("run", "--workload", "decode-loop", *args, run_dir=tmp_path / "r")
    assert r.returncode == 2
    assert len([x for x in r.stderr.splitlines() if x.strip()]) == 1


def test_missing_browser_binary_says_how_to_install(tmp_path):
    r = run_cli("run", "--browser", "chromium", "--browser-path", str(tmp_path / "no-such-chrome"),
                run_dir=tmp_path / "r")
    assert r.returncode == 2
    assert "apt-get install" in r.stderr


def test_no_webgpu_adapter_is_recorded_as_skipped(tmp_path):
    # Without --enable-unsafe-webgpu, Linux Chromium exposes navigator.gpu but gives no adapter.
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                "--tokens", "4", "--without-flag=--enable-unsafe-webgpu", run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    run = load_run(r)
    assert (run.summary["status"] == "skipped").all()
    assert run.summary["reason"].str.contains("adapter").all()
    assert len(run.steps) == 0
    assert (tmp_path / "r" / "report.html").exists()


def test_workload_exception_is_recorded_with_stack_and_other_cells_continue(tmp_path):
    # a KV cache of 4 positions cannot hold 8 tokens: the workload throws inside the worker
    r = run_cli("run", "--browser", "chromium", "--workload", "decode-loop", "--profile", "tiny",
                "--tokens", "8", "--param", "max_tokens=4", "--variant", "fresh,reuse", run_dir=tmp_path / "r")
    assert r.returncode == 1
    run = load_run(r)
    assert (run.summary["status"] == "failed").all()
    assert run.summary["reason"].str.contains("workload error").all()
    assert (run.summary["steps_received"] == 4).all()  # both cells ran; steps before the error kept
    samples = (tmp_path / "r" / "samples.jsonl").read_text()
    assert '"kind":"error"' in samples and "main.js" in samples   # the stack came back
    assert "failed" in r.stderr


def test_unknown_emulation_option_is_one_line_error(tmp_path):
    r = run_cli("run", "--workload", "decode-loop", "--emulation-option", "colour=blue", run_dir=tmp_path / "r")
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "reportCostToJs" in lines[0]
