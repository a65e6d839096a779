"""Bad input is answered before the heavy modules load (issue 19, item 3): for every command, a
fresh interpreter runs the real CLI on a bad option, and after its exit 2 none of scipy, pandas,
plotly, playwright or selenium is in ``sys.modules``. A measured property of the import graph,
not a timing (the timing is benchmarks/bad_input.py's, in README).

The cases run one after the other in one interpreter (one start-up instead of one per case): the
modules a case loads stay loaded, so the first case that loads a heavy module is the one named.
At the end the same interpreter imports the analysis (harness/pipeline.py) and the Chromium
driver's session and must then see pandas, scipy, plotly and playwright: the check can fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: What a bad option must not import (issue 19: "before scipy, pandas, plotly or a driver").
HEAVY = ("scipy", "pandas", "plotly", "playwright", "selenium")

#: One bad option (or more) per command. ``{t}``: a scratch folder; nothing is ever written in it.
CASES = [
    ["run", "--tokens", "0", "-o", "{t}/r"],
    ["run", "--workload", "nope", "-o", "{t}/r"],
    ["run", "--browser", "netscape", "-o", "{t}/r"],
    ["run", "--param", "oops", "-o", "{t}/r"],
    ["run", "--param", "max_pending_dispatchez=8", "-o", "{t}/r"],
    ["run", "--emulation-option", "colour=blue", "-o", "{t}/r"],
    ["run", "--budget", "decode-loop: bogus_metric <= 2", "-o", "{t}/r"],
    ["run", "--budget", "decode-loop/reuse: ms_per_token <= 0.95 * frseh", "-o", "{t}/r"],
    ["run", "--auto-sample", "soon", "-o", "{t}/r"],
    ["run", "-w", "ort-decode", "--model", "{t}/none.onnx", "-o", "{t}/r"],
    ["run", "--webdriver-url", "http://127.0.0.1:1", "--capabilities", "{t}/none.json", "-o", "{t}/r"],
    ["app", "http://127.0.0.1:9/", "--steps", "0", "-o", "{t}/r"],
    ["app", "http://127.0.0.1:9/", "-b", "webkit", "--inject", "cdp", "-o", "{t}/r"],
    ["serve", "--tokens", "0", "-o", "{t}/r"],
    ["serve", "--param", "oops", "-o", "{t}/r"],
    ["report", "{t}/none"],
    ["report", "tests/analysis/runs/chromium-decode-loop", "--budget", "decode-loop: bogus_metric <= 2"],
    ["compare", "{t}/none", "{t}/none"],
    ["compare", "tests/analysis/runs/chromium-decode-loop", "{t}/none"],
    # no cells in common: said from the two manifests, before either run is analysed
    ["compare", "tests/analysis/runs/chromium-decode-loop", "tests/analysis/runs/webkit-decode-loop", "-o", "{t}/c"],
    ["merge", "{t}/none", "-o", "{t}/m"],
    ["index", "{t}/none"],
    ["native", "--n", "0", "-o", "{t}/n"],
    ["doctor", "--workloads-dir", "{t}/none"],
    ["doctor", "--bundle", "{t}"],
    ["setup", "--no-such-option"],
]

SCRIPT = r"""
import json, sys
from harness.cli import app

heavy, cases = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for argv in cases:
    try:
        app(argv, prog_name="webgpu-harness")
        code = 0
    except SystemExit as e:
        code = e.code
    print(json.dumps({"argv": argv, "exit": code, "loaded": [m for m in heavy if m in sys.modules]}), flush=True)
import harness.pipeline, harness.drive.playwright, playwright.sync_api
print(json.dumps({"argv": "control", "loaded": [m for m in heavy if m in sys.modules]}), flush=True)
"""


def test_no_heavy_module_is_imported_before_bad_input_is_answered(tmp_path):
    cases = [[a.format(t=tmp_path) for a in argv] for argv in CASES]
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(HEAVY), json.dumps(cases)], cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    results = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert len(results) == len(cases) + 1, r.stdout + r.stderr
    errors = [x for x in r.stderr.splitlines() if x.startswith("error: ")]
    for res in results[:-1]:
        assert res["exit"] == 2, (res, r.stderr)
        assert res["loaded"] == [], f"{' '.join(res['argv'])} imported {res['loaded']} before exit 2"
    # every case said what was wrong in one line, setup's unknown option (click's usage error) too
    assert len(errors) == len(cases), r.stderr
    assert not [x for x in r.stderr.splitlines() if x.startswith(("Usage:", "Try "))], r.stderr
    assert not list(tmp_path.iterdir()), list(tmp_path.iterdir())    # nothing was written
    # control: the analysis and the Chromium driver do load them, so the check above can fail
    assert set(results[-1]["loaded"]) == {"scipy", "pandas", "plotly", "playwright"}, results[-1]


#: Bad options answered before pydantic loads (~0.12 s of CPU to import here): names checked against
#: the workload folders and the manifests' JSON (harness/workload_names.py), not their models. A typer that coerces options through pydantic (typer
#: 0.26+, pyproject.toml's pin) or a workload name checked against the parsed manifests instead of
#: the folders (harness/workload_names.py) fails here.
LIGHT_CASES = [
    ["run", "--tokens", "0", "-o", "{t}/r"],
    ["run", "--workload", "nope", "-o", "{t}/r"],
    ["run", "--browser", "netscape", "-o", "{t}/r"],
    ["run", "--param", "oops", "-o", "{t}/r"],
    ["run", "-w", "decode-loop", "--variant", "nope", "-o", "{t}/r"],
    ["run", "--profile", "nope", "-o", "{t}/r"],
    ["run", "--param", "oops=1", "-o", "{t}/r"],
    ["run", "--param", "tokens=5", "-o", "{t}/r"],
    ["app", "http://127.0.0.1:9/", "--steps", "0", "-o", "{t}/r"],
    ["serve", "--tokens", "0", "-o", "{t}/r"],
    ["serve", "--workload", "nope", "-o", "{t}/r"],
    ["serve", "--variant", "nope", "-o", "{t}/r"],
    ["report", "{t}/none"],
    ["compare", "{t}/none", "{t}/none"],
    ["merge", "{t}/none", "-o", "{t}/m"],
    ["index", "{t}/none"],
    ["native", "--n", "0", "-o", "{t}/n"],
    ["doctor", "--workloads-dir", "{t}/none"],
]


def test_common_bad_options_are_answered_before_pydantic_loads(tmp_path):
    cases = [[a.format(t=tmp_path) for a in argv] for argv in LIGHT_CASES]
    r = subprocess.run([sys.executable, "-c", SCRIPT.replace("import harness.pipeline, harness.drive.playwright, playwright.sync_api",
                                                             "import harness.workloads"),
                        json.dumps(["pydantic"]), json.dumps(cases)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    results = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert len(results) == len(cases) + 1, r.stdout + r.stderr
    for res in results[:-1]:
        assert res["exit"] == 2, (res, r.stderr)
        assert res["loaded"] == [], f"{' '.join(res['argv'])} imported pydantic before exit 2"
    assert len([x for x in r.stderr.splitlines() if x.startswith("error: ")]) == len(cases), r.stderr
    assert results[-1]["loaded"] == ["pydantic"], results[-1]  # control: the manifests' models do load it
