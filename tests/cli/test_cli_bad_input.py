"""Bad input to every command, through the real CLI in process (Typer's test runner): exit 2 and
one line naming what is wrong and the valid choices, before anything runs — no browser starts,
no run folder is made.

These cases were end-to-end tests that each started ``python -m harness`` (tests/e2e/test_cli.py,
test_budgets.py, test_auto_sample.py, test_app.py, test_compare_merge.py, test_gc_retention.py,
test_memory_classes.py, test_native.py, test_ort_decode.py, test_remote.py, test_webkit.py); they
keep their assertions. Cases that need a run folder read the recorded real runs of
tests/analysis/runs (re-recorded by tests/analysis/record.py) instead of making one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "tests" / "analysis" / "runs"


def invoke(*args: str):
    """The CLI in process: the click result (``exit_code``, ``stdout``, ``stderr``)."""
    return CliRunner().invoke(app, [str(a) for a in args], prog_name="webgpu-harness")


def lines_of(r) -> list[str]:
    return [x for x in r.stderr.splitlines() if x.strip()]


def run_cmd(out: Path, *args: str):
    """``run ARGS --output OUT`` (as tests/conftest.py ``run_cli`` passes it)."""
    return invoke("run", *args, "--output", str(out))


# ---------------------------------------------------------------------------------------------
# run (from tests/e2e/test_cli.py)

@pytest.mark.parametrize("args, valid", [
    (["--browser", "netscape"], "chromium"),
    (["--workload", "nope"], "decode-loop"),
    (["--workload", "decode-loop", "--variant", "nope"], "fresh, reuse"),
    (["--workload", "decode-loop", "--profile", "nope"], "tiny"),
])
def test_unknown_names_are_one_line_errors_with_exit_2(args, valid, tmp_path):
    r = run_cmd(tmp_path / "r", *args)
    assert r.exit_code == 2, r.stderr
    lines = lines_of(r)
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: unknown") and "valid:" in lines[0] and valid in lines[0]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args", [["--tokens", "0"], ["--tokens", "-3"], ["--repeat", "0"], ["--param", "oops"]])
def test_bad_numbers_exit_2(args, tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", *args)
    assert r.exit_code == 2
    assert len(lines_of(r)) == 1


@pytest.mark.parametrize("args, words", [
    (["--seed", "-1"], "--seed must be between 0 and 4,294,967,295"),
    (["--seed", "4294967296"], "--seed must be between 0 and 4,294,967,295"),
    (["--host", "999.1.1.1"], "--host '999.1.1.1': this machine cannot listen there"),
    (["--host", "8.8.8.8"], "--host '8.8.8.8': this machine cannot listen there"),
])
def test_a_seed_or_host_the_run_cannot_use_is_refused_before_any_folder_or_browser(args, words, tmp_path):
    # these started Chromium (the seed was refused by the worker) or ended in a traceback after
    # the run folder was made (the server's bind)
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", *args)
    assert r.exit_code == 2 and len(lines_of(r)) == 1 and words in lines_of(r)[0], r.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("args, words", [
    (["doctor", "--webdriver-url", "notaurl"], "--webdriver-url 'notaurl' is not a http:// or https:// URL"),
    (["doctor", "--cdp-url", "ftp://x"], "--cdp-url 'ftp://x' is not a http://"),
    (["doctor", "--connect", "x"], "--connect 'x' is not a ws:// or wss:// URL"),
    (["compare", str(RUNS / "aa-chromium-1"), str(RUNS / "aa-chromium-2"), "--warmup", "99999999999"],
     "--warmup must be between 0 and 100,000"),
])
def test_doctors_endpoints_and_compares_warmup_are_checked_before_anything_runs(args, words):
    # doctor took 10 s and 48 lines checking browsers before saying nothing of a bad URL; compare
    # with a warm-up past every token printed an empty table and 'no significant differences'
    r = invoke(*args)
    assert r.exit_code == 2 and len(lines_of(r)) == 1 and words in lines_of(r)[0], r.stderr + r.stdout


def test_missing_browser_binary_says_how_to_install(tmp_path):
    r = run_cmd(tmp_path / "r", "--browser", "chromium", "--browser-path", str(tmp_path / "no-such-chrome"))
    assert r.exit_code == 2
    assert "apt-get install" in r.stderr


def test_unknown_emulation_option_is_one_line_error(tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--emulation-option", "colour=blue")
    assert r.exit_code == 2
    lines = lines_of(r)
    assert len(lines) == 1 and "reportCostToJs" in lines[0]


@pytest.mark.parametrize("args, words", [
    (["--workload", ""], "names nothing"),
    (["--browser", ","], "names nothing"),
    (["--param", "seed=7"], "reserved"),
    (["--param", "=5"], "KEY=VALUE"),
    (["--param", "x=nan"], "finite"),
    # a profile dimension: a whole number (as the profile's own) within 2^31 - 1, never 1e99 in the browser
    (["--workload", "decode-loop", "--profile", "tiny", "--param", "max_tokens=1e99"], "is not a whole number from 0 to 2,147,483,647"),
    (["--workload", "decode-loop", "--profile", "tiny", "--param", "max_tokens=2.5"], "is not a whole number"),
    (["--workload", "decode-loop", "--param", "max_pending_dispatches=100001"], "100000"),
    # a sweep's cells are counted before anything runs: at most 1,000 a run
    (["--workload", "decode-loop", "--profile", "tiny",
      "--param", "max_pending_dispatches=" + ",".join(map(str, range(1, 5001)))], "would make 10,000 cells"),
    (["--browser", "chromium,webkit", "--workload", "decode-loop", "--profile", "tiny", "--repeat", "2",
      "--param", "max_pending_dispatches=" + ",".join(map(str, range(1, 151)))], "1,200 cells (2 browser(s) × 600 per browser"),
    (["--memory-budget", "0"], "1 MiB"),
    (["--step-timeout-s", "0"], "> 0"),
    (["--start-timeout-s", "-1"], "--start-timeout-s must be > 0"),
    (["--profile", "tiny", "--tokens", "300"], "max_tokens=256"),
    (["--browser", "chromium,webkit", "--browser-path", "/usr/bin/chromium"], "exactly one"),
])
def test_more_bad_input_exits_2(args, words, tmp_path):
    r = run_cmd(tmp_path / "r", *args)
    assert r.exit_code == 2, r.stdout + r.stderr
    lines = lines_of(r)
    assert len(lines) == 1 and words in lines[0], lines


def test_output_that_is_a_file_exits_2(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    r = run_cmd(f, "--workload", "decode-loop")
    assert r.exit_code == 2 and "is a file" in r.stderr


# ---------------------------------------------------------------------------------------------
# --budget (from tests/e2e/test_budgets.py)

@pytest.mark.parametrize("content, line, message", [
    ('budgets = [\n  "decode-loop: ms_per_token <= 1",\n  "decode-loop: bogus_metric <= 2",\n]\n', 3, "unknown metric 'bogus_metric'"),
    ('budgets = ["decode-loop: ms_per_token <= 1"]\nname = = 3\n', 2, "invalid TOML"),
    ('[[budget]]\nname = "x"\ncheck = "decode-loop: ms_per_token <= 1"\nlimit = 3\n', 4, "unknown key 'limit' in [[budget]]"),
    ('limits = ["decode-loop: ms_per_token <= 1"]\n', 1, "unknown key 'limits' (valid: budgets, [[budget]])"),
])
def test_malformed_budget_file_is_one_line_error_with_exit_2(tmp_path, content, line, message):
    f = tmp_path / "budgets.toml"
    f.write_text(content)
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--budget", str(f))
    assert r.exit_code == 2, r.stdout + r.stderr
    lines = lines_of(r)
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {f} line {line}: ") and message in lines[0], lines[0]
    assert not (tmp_path / "r").exists()          # nothing was run


def test_missing_budget_file_is_bad_input(tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--budget", str(tmp_path / "none.toml"))
    assert r.exit_code == 2 and "cannot read the budget file" in r.stderr


@pytest.mark.parametrize("line, words", [
    ("decode-loop/reuse: ms_per_token <= 0.95 * frseh", "'frseh' is not a variant"),
    ("decode-loop/reuse: ms_per_token <= inf", "limit 'inf' is not a finite number"),
])
def test_budget_naming_a_missing_variant_fails_before_the_run(line, words, tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--budget", line)
    assert r.exit_code == 2 and words in r.stderr


# ---------------------------------------------------------------------------------------------
# --auto-sample (from tests/e2e/test_auto_sample.py)

def test_timeout_without_auto_sample_is_bad_input(tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--timeout", "3")
    assert r.exit_code == 2 and "--auto-sample" in r.stderr
    r = run_cmd(tmp_path / "r", "--workload", "decode-loop", "--auto-sample", "soon")
    assert r.exit_code == 2 and "not N% or Nms" in r.stderr


# ---------------------------------------------------------------------------------------------
# --param declared by a workload (tests/e2e/test_gc_retention.py, test_memory_classes.py)

def test_bad_param_is_one_line_exit_2_before_any_browser(tmp_path):
    # the manifest declares dispatches_per_token as int 1..100000: checked before anything runs
    r = run_cmd(tmp_path / "r", "--browser", "webkit", "--workload", "gc-retention", "--variant", "minimal",
                "--tokens", "2", "--param", "dispatches_per_token=-5")
    assert r.exit_code == 2, r.stdout + r.stderr
    lines = lines_of(r)
    assert len(lines) == 1 and "dispatches_per_token '-5' is not valid (int 1..100000)" in lines[0]
    assert not (tmp_path / "r").exists()


def test_unknown_param_exits_2_before_anything_runs(tmp_path):
    r = run_cmd(tmp_path / "r", "--browser", "chromium", "--workload", "decode-loop", "--param",
                "max_pending_dispatchez=8")
    assert r.exit_code == 2
    assert "unknown --param 'max_pending_dispatchez'" in r.stderr and "max_pending_dispatches" in r.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------
# engines and models (from tests/e2e/test_ort_decode.py)

def test_unreadable_model_is_a_one_line_error(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x08\x07garbage" * 100)
    r = run_cmd(tmp_path / "r", "--browser", "chromium", "--workload", "ort-decode", "--model", str(bad))
    assert r.exit_code == 2
    lines = lines_of(r)
    assert len(lines) == 1 and "model" in lines[0]


def test_ort_version_not_installed_is_a_one_line_error(tmp_path):
    r = run_cmd(tmp_path / "r", "--workload", "ort-decode", "--ort-version", "0.0.1")
    assert r.exit_code == 2
    lines = lines_of(r)
    assert len(lines) == 1 and "0.0.1" in lines[0] and "1.31.0-dev.20260914-8d85527a0" in lines[0]


# ---------------------------------------------------------------------------------------------
# remote browsers (from tests/e2e/test_remote.py; every case: tests/drive/test_remote_targets.py)

#: tests/e2e/test_remote.py's cell
CELL = ("-w", "decode-loop", "-p", "tiny", "-v", "fresh", "-n", "4")


@pytest.mark.parametrize("args, words", [
    (["--capabilities", "x.json"], "--webdriver-url"),
    (["--public-url", "127.0.0.1:8000"], "http(s)://HOST"),
])
def test_bad_remote_options_exit_2(args, words, tmp_path):
    r = run_cmd(tmp_path / "r", *CELL, *args)
    lines = lines_of(r)
    assert r.exit_code == 2 and len(lines) == 1 and words in lines[0], r.stderr
    assert not (tmp_path / "r").exists()


def test_bad_capabilities_file_exit_2(tmp_path):
    caps = tmp_path / "caps.json"
    caps.write_text(json.dumps({"browserName": "chrome", "chromeOptions": {}}))
    r = run_cmd(tmp_path / "r", *CELL, "--webdriver-url", "http://127.0.0.1:1", "--capabilities", str(caps))
    assert r.exit_code == 2 and "'chromeOptions' is neither a standard capability" in r.stderr


def test_safari_off_macos_is_a_one_line_error(tmp_path):
    r = run_cmd(tmp_path / "r", "--browser", "safari")
    assert r.exit_code == 2
    lines = lines_of(r)
    assert len(lines) == 1 and "macOS" in lines[0] and "safaridriver" in lines[0]


# ---------------------------------------------------------------------------------------------
# app (from tests/e2e/test_app.py)

@pytest.mark.parametrize("args, message", [
    (["ftp://example.org/"], "is not http:// or https://"),
    (["http://127.0.0.1:9/", "--step-on", "mapAsync:0"], "--step-on must be"),
    (["http://127.0.0.1:9/", "-b", "webkit", "--inject", "cdp"], "--inject cdp needs Chromium's DevTools protocol"),
    (["http://127.0.0.1:9/", "--fill", "#prompt"], "is not SELECTOR=TEXT"),
    (["http://127.0.0.1:9/", "--click", ""], "--click needs a CSS selector"),
    (["http://127.0.0.1:9/", "--script", "/no/such/file.py"], "--script /no/such/file.py: no such file"),
    (["http://127.0.0.1:9/", "--steps", "0"], "--steps must be between"),
])
def test_malformed_options_are_one_line_and_exit_2(args, message, tmp_path):
    r = invoke("app", *args, "--output", str(tmp_path / "r"))
    lines = lines_of(r)
    assert r.exit_code == 2 and len(lines) == 1 and message in lines[0], r.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------
# native (from tests/e2e/test_native.py)

@pytest.mark.parametrize("args, text", [
    (["--n", "0"], "N (--n) must be from 1 to 65536 (got 0)"),
    (["--n", "70000"], "N (--n) must be from 1 to 65536 (got 70000)"),
    (["--k", "16,0"], "K (--k) must be from 1 to 65536 (got 0)"),
    (["--k", "-2"], "K (--k) must be from 1 to 65536 (got -2)"),
    (["--n", "lots"], "is not an integer"),
    (["--variant", "cached"], "unknown variant 'cached' (valid: fresh, reused)"),
])
def test_bad_native_input_is_one_line_exit_2(args, text, tmp_path):
    r = invoke("native", *args, "--output", str(tmp_path / "r"))
    assert r.exit_code == 2, r.stdout + r.stderr
    lines = lines_of(r)
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], r.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------
# compare and merge of recorded run folders (from tests/e2e/test_compare_merge.py, whose own
# two Chromium runs these cases no longer need)

@pytest.fixture()
def recorded(tmp_path) -> dict[str, Path]:
    """Copies of two recorded real runs with no cell in common (Chromium and WebKitGTK decode-loop)."""
    out = {}
    for name in ("chromium-decode-loop", "webkit-decode-loop"):
        out[name] = tmp_path / name
        shutil.copytree(RUNS / name, out[name])
    return out


def test_compare_with_no_cells_in_common_is_bad_input(recorded, tmp_path):
    r = invoke("compare", recorded["chromium-decode-loop"], recorded["webkit-decode-loop"], "--output", tmp_path / "c")
    assert r.exit_code == 2
    lines = lines_of(r)
    assert len(lines) == 1 and lines[0].startswith("error: runs have no cells in common"), r.stderr
    assert "chromium/decode-loop/reuse@tiny" in lines[0] and "webkit/decode-loop/fresh@tiny" in lines[0]
    assert not (tmp_path / "c").exists()


def test_compare_of_a_folder_that_is_not_a_run_is_bad_input(recorded, tmp_path):
    (tmp_path / "empty").mkdir()
    r = invoke("compare", recorded["chromium-decode-loop"], tmp_path / "empty")
    assert r.exit_code == 2 and "not a run folder" in r.stderr


def test_merge_bad_input(recorded, tmp_path):
    r = invoke("merge", recorded["chromium-decode-loop"], tmp_path / "nope", "--output", tmp_path / "m")
    assert r.exit_code == 2 and "is not a run folder" in r.stderr
    r = invoke("merge", recorded["chromium-decode-loop"], recorded["chromium-decode-loop"], "--output", tmp_path / "m")
    assert r.exit_code == 2 and "given twice" in r.stderr
    assert not (tmp_path / "m").exists()


# ---------------------------------------------------------------------------------------------
# serve: run's cell options, validated the same way (harness/cli/options.py)

@pytest.mark.parametrize("args, words", [
    (["--param", "oops"], "is not KEY=VALUE"),
    (["--param", "max_pending_dispatchez=8"], "unknown --param 'max_pending_dispatchez'"),
    (["--param", "max_pending_dispatches=1,1"], "a sweep needs distinct values"),
    (["--repeat", "0"], "--repeat must be between"),
    (["--webgpu", "sometimes"], "unknown --webgpu 'sometimes' (valid: auto, real, emulated)"),
    (["--emulation-option", "colour=blue"], "reportCostToJs"),
    (["--memory-budget", "lots"], "valid units"),
    (["-w", "decode-loop", "--model", "/no/such/model.onnx"], "apply to the ort-decode and ort-run workloads"),
    (["--label", "my phone"], "--label 'my phone' must be"),
])
def test_serve_takes_runs_cell_options_and_checks_them_alike(args, words, tmp_path):
    r = invoke("serve", *args, "--output", str(tmp_path / "r"))
    lines = lines_of(r)
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], r.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------
# doctor --bundle FILE: a FILE that cannot be written is exit 2 before any browser starts

@pytest.mark.parametrize("where, words", [
    ("{t}", "is a folder; give a file name in it"),
    ("{t}/bundle.tar", "give a file name ending in .zip"),
    ("{t}/no/such/folder/bundle.zip", "no folder"),
    ("{t}/afile/bundle.zip", "is not a folder"),
    ("/proc/bundle.zip", "cannot write there"),
])
def test_doctor_bundle_file_that_cannot_be_written_exits_2(where, words, tmp_path):
    (tmp_path / "afile").write_text("x")
    before = sorted(tmp_path.iterdir())
    r = invoke("doctor", "--bundle", where.format(t=tmp_path))
    lines = lines_of(r)
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: --bundle ") and words in lines[0], \
        r.stdout + r.stderr
    assert r.stdout == ""                       # nothing ran: no table, no browser
    assert sorted(tmp_path.iterdir()) == before


# ---------------------------------------------------------------------------------------------
# click's own usage errors (an unknown option or command, a missing argument, a value click
# checks itself): one line too, exit 2 (they were click's four lines: usage, hint, blank, error)

@pytest.mark.parametrize("args, words", [
    (["report"], ["Missing argument 'RUN_DIR'", "Usage: webgpu-harness report [OPTIONS] RUN_DIR"]),
    (["compare", "a"], ["Missing argument 'RUN_B'", "Usage: webgpu-harness compare [OPTIONS] RUN_A RUN_B"]),
    (["report", "--bogus", "x"], ["No such option '--bogus'", "webgpu-harness report --help"]),
    (["run", "--browsers", "chromium"], ["No such option '--browsers'", "'--browser'"]),
    (["run", "--tokens", "many"], ["'many' is not a valid integer", "webgpu-harness run --help"]),
    (["report", "a", "b"], ["unexpected extra argument (b).", "Usage: webgpu-harness report"]),
    (["bogus"], ["No such command 'bogus'", "Commands: run, app, serve, report, compare, merge, index, native"]),
    (["rn"], ["No such command 'rn'. Did you mean 'run'? Commands: "]),    # typer and click both suggested it
    (["run", "--tokens"], ["Option '--tokens' requires an argument.", "--help"]),
    (["--bogus"], ["No such option '--bogus'", "webgpu-harness --help"]),
])
def test_clicks_usage_errors_are_one_line_exit_2(args, words, tmp_path):
    r = invoke(*args)
    lines = lines_of(r)
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), r.stdout + r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert r.stdout == ""
    assert lines[0].count("Did you mean") <= 1 and "?." not in lines[0]


def test_the_group_run_with_nothing_still_shows_its_help():
    # the one usage "error" that is help: click's no_args_is_help, left whole (it was one long line)
    r = invoke()
    assert r.exit_code == 2 and "Commands:" in r.stderr and len(r.stderr.splitlines()) > 10, r.stderr
    assert not r.stderr.startswith("error: ")


def test_a_line_break_in_a_path_stays_one_line():
    # report $'/x\ny' printed "error: /x" and "y is not a run folder" on two lines
    r = invoke("report", "/x\ny")
    lines = lines_of(r)
    assert r.exit_code == 2 and lines == ["error: /x\\ny is not a run folder (no such folder)"], r.stderr
