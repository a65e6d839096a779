"""``webgpu-harness app`` options → AppPlan (harness/app_plan.py, harness/cli/app_command.py), no browser:
names from URLs, page actions kept in command-line order, selectors with ``=`` in them, which
injection path each browser may use, --script checked without running it."""

from __future__ import annotations

import pytest
import typer.main

from harness import app_plan as A
from harness.cli import app as cli_app
from harness.cli.app_command import ACTIONS_KEY
from harness.plan import PlanError


def test_app_names_come_from_the_url_or_name_equals_url():
    apps = A.parse_apps(["http://127.0.0.1:8100/transformers/?tokens=3", "http://h/demo/index.html", "http://h:8/",
                         "fixed=http://h/x/?a=b", "http://k/transformers/"])
    assert [a.name for a in apps] == ["transformers", "demo", "h-8", "fixed", "transformers-2"]
    assert apps[3].url == "http://h/x/?a=b"
    with pytest.raises(PlanError, match="given twice"):
        A.parse_apps(["a=http://x/", "a=http://y/"])
    with pytest.raises(PlanError, match="is not http:// or https://"):
        A.parse_apps(["localhost:8000/?a=b"])
    with pytest.raises(PlanError, match="give the app's URL"):
        A.parse_apps([])


def test_actions_keep_command_line_order_and_fill_splits_outside_brackets():
    cmd = typer.main.get_command(cli_app).commands["app"]
    ctx = cmd.make_context("app", ["http://x/", "--wait-for", "#ready", "--click", "b", "--wait-for=text=done",
                                   "--fill", "input[name=q]=a=b", "--click", "text=Run"])
    acts = A.parse_actions(ctx.meta[ACTIONS_KEY])
    assert [(a.kind, a.selector, a.text) for a in acts] == [
        ("wait-for", "#ready", None), ("click", "b", None), ("wait-for", "text=done", None),
        ("fill", "input[name=q]", "a=b"), ("click", "text=Run", None)]
    assert A.parse_actions([("--fill", "text=Name=Ada")])[0] == A.Action("fill", "text=Name", "Ada")
    assert A.parse_actions([("--fill", "#q=")])[0] == A.Action("fill", "#q", "")
    for bad in (("--fill", "#q"), ("--fill", "=x"), ("--click", " "), ("--wait-for", "text=")):
        with pytest.raises(PlanError):
            A.parse_actions([bad])


def test_inject_paths_per_browser():
    assert A.resolve_inject(None, ["chromium", "webkit"]) == {"chromium": ["cdp"], "webkit": ["proxy"]}
    assert A.resolve_inject(["cdp,proxy"], ["chromium"]) == {"chromium": ["cdp", "proxy"]}
    assert A.resolve_inject(["auto", "proxy"], ["chromium", "safari"]) == {"chromium": ["cdp", "proxy"],
                                                                          "safari": ["proxy"]}
    with pytest.raises(PlanError, match="webkit is driven through WebDriver"):
        A.resolve_inject(["cdp"], ["chromium", "webkit"])
    with pytest.raises(PlanError, match="valid: auto, cdp, proxy"):
        A.resolve_inject(["devtools"], ["chromium"])


def test_script_is_read_not_run(tmp_path):
    ok = tmp_path / "ok.py"
    ok.write_text("raise SystemExit('never run at plan time')\n\ndef drive(page):\n    pass\n")
    assert A.check_script(ok) == ok.resolve()
    no_fn = tmp_path / "no_fn.py"
    no_fn.write_text("def run(page):\n    pass\n")
    with pytest.raises(PlanError, match="no top-level function drive"):
        A.check_script(no_fn)
    broken = tmp_path / "broken.py"
    broken.write_text("def drive(page)\n")
    with pytest.raises(PlanError, match="is not Python"):
        A.check_script(broken)


def test_cells_are_app_by_browser_by_path_by_repetition():
    plan = A.AppPlan(browsers=["chromium", "webkit"], workloads=[], variants={}, profiles={}, repeat=2,
                     apps=A.parse_apps(["http://h/a/", "http://h/b/"]),
                     inject={"chromium": ["cdp", "proxy"], "webkit": ["proxy"]}, steps=5)
    cells = plan.cells()
    assert len(cells) == 2 * (2 * 2 + 2 * 1)
    assert cells[0].cell == "chromium.app.a.cdp.r0" and cells[0].tokens == 5 and cells[0].app_url == "http://h/a/"
    assert {(c.workload, c.profile) for c in cells if c.browser == "webkit"} == {("app", "proxy")}
    params = plan.parameters()
    assert params["apps"] == [{"name": "a", "url": "http://h/a/"}, {"name": "b", "url": "http://h/b/"}]
    assert "workloads" not in params and params["repeat"] == 2


def test_interval_steps_need_steps_or_duration():
    # interval:MS ends a step every MS ms as long as the app lives: --idle would never end a cell
    with pytest.raises(PlanError, match=r"--step-on interval:500 ends a step every 500 ms .* give --steps N or "
                                        r"--duration SECONDS"):
        A.check_ending("interval:500", None, None)
    A.check_ending("interval:500", 10, None)
    A.check_ending("interval:500", None, 5.0)
    A.check_ending("mapAsync", None, None)


def test_idle_auto_is_three_times_the_longest_wait_for_a_step_within_5_and_30_s():
    assert A.parse_idle(None) is None and A.parse_idle("auto") is None and A.parse_idle("12.5") == 12.5
    assert A.idle_limit(None, 0.05) == 5.0          # a fast app: the 5 s floor
    assert A.idle_limit(None, 4.0) == 12.0          # 3 × its longest wait
    assert A.idle_limit(None, 40.0) == 30.0         # the old fixed default is the ceiling
    assert A.idle_limit(7.0, 40.0) == 7.0           # --idle S as given
    for bad, words in (("soon", "not a number of seconds or auto"), ("0", "must be > 0")):
        with pytest.raises(PlanError, match=words):
            A.parse_idle(bad)
