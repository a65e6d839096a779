"""What a new user reads first, through the real CLI in process: ``--help`` names the defaults as
they are for this install (the browsers found here, the memory budget and where 2 GB comes from),
and ``app`` refuses a --browser that cannot open a web app before anything runs."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.plan import default_browsers


def invoke(*args: str):
    """The CLI in process: the click result (``exit_code``, ``stdout``, ``stderr``)."""
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def flat(text: str) -> str:
    """Help text with rich's box characters and line wrapping taken out."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text))


@pytest.mark.parametrize("command", ["run", "app"])
def test_help_names_the_browsers_found_here_and_the_default_memory_budget(command):
    r = invoke(command, "--help")
    assert r.exit_code == 0, r.stdout
    text = flat(r.stdout)
    here = default_browsers()
    assert here and f"Default: every one installed, here {', '.join(here)}" in text
    assert "Default 2048MB: iOS killed the page at ~2 GB in the onnxruntime field report. 'none': no budget." in text


def test_app_help_does_not_offer_dawn_and_app_refuses_it_with_exit_2(tmp_path):
    text = flat(invoke("app", "--help").stdout)
    offered = re.search(r"--browser .*?comma-separated: ([a-z, ]+)\.", text).group(1)
    assert "dawn" not in offered and "chromium" in offered
    r = invoke("app", "-b", "chromium,dawn", "http://127.0.0.1:9/", "-o", tmp_path / "r")
    assert r.exit_code == 2, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert lines == ["error: --browser dawn cannot open a web app (no page: native Dawn in Node); "
                     "valid for app: chromium, chrome, webkit, safari"]
    assert not (tmp_path / "r").exists()


def test_app_idle_is_auto_by_default_and_a_bad_value_is_one_line_exit_2(tmp_path):
    text = flat(invoke("app", "--help").stdout)
    assert "auto (default): 3 × the longest wait for a step so far" in text and "5 s at least and 30 s at most" in text
    r = invoke("app", "http://127.0.0.1:9/", "--idle", "soon", "-o", tmp_path / "r")
    assert r.exit_code == 2
    assert [x for x in r.stderr.splitlines() if x.strip()] == ["error: --idle 'soon' is not a number of seconds or auto"]
    assert not (tmp_path / "r").exists()
