"""`webgpu-harness doctor --bundle FILE` (issue 21, item 6): one archive with the environment, every
local browser's WebGPU adapter, doctor's output and a 32-token run of the default suite on every
local browser (here Chromium on SwiftShader and WebKitGTK on the emulation), read back and checked
against what was measured."""

from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest

from conftest import REPO, run_cli

pytestmark = pytest.mark.full


def test_doctor_bundle_holds_environment_adapters_doctor_and_a_32_token_run(tmp_path):
    path = tmp_path / "bundle.zip"
    r = run_cli("doctor", "--bundle", str(path), timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"bundle: {path} (" in r.stdout and "attach it to an issue" in r.stdout
    assert not (tmp_path / "bundle.zip.part").exists()

    z = zipfile.ZipFile(path)
    names = set(z.namelist())
    top = "webgpu-harness-bundle/"
    for f in ("README.txt", "environment.json", "adapters.json", "doctor.txt", "run-console.txt",
              "run/manifest.json", "run/samples.jsonl", "run/summary.csv", "run/steps.csv", "run/stats.json",
              "run/report.html"):
        assert top + f in names, f
    text = lambda f: z.read(top + f).decode()  # noqa: E731

    readme = text("README.txt")
    for f in ("environment.json", "adapters.json", "doctor.txt", "run-console.txt", "run/"):
        assert f"  {f}" in readme, f

    env = json.loads(text("environment.json"))
    assert env["harness_install"] == f"clone {REPO}" and env["packages"]["playwright"]
    assert env["cpu_count"] >= 1 and env["memory_bytes"] > 0

    adapters = json.loads(text("adapters.json"))
    chromium = adapters["chromium"]
    assert chromium["found"] and chromium["version"].startswith("156")
    a = chromium["adapter"]
    assert a["description"] == "google swiftshader"                # what doctor's table shows
    assert a["limits"]["maxBindGroups"] >= 4 and a["limits"]["maxStorageBuffersPerShaderStage"] >= 8  # spec minimums
    assert "shader-f16" not in a["features"]                       # SwiftShader has none
    assert adapters["webkit"]["found"] and adapters["webkit"]["adapter"]["description"].startswith("none: navigator.gpu")
    assert adapters["safari"] == {"found": False, "why": adapters["safari"]["why"]} and "macOS" in adapters["safari"]["why"]

    doctor = text("doctor.txt")
    assert "webgpu-harness doctor" in doctor and "google swiftshader" in doctor and f"harness: clone {REPO}" in doctor
    assert "bundle:" not in doctor                                  # the run's lines are in run-console.txt

    console = text("run-console.txt")
    assert console.startswith("$ webgpu-harness run --tokens 32 --output ") and console.rstrip().endswith("exit status 0")

    summary = pd.read_csv(io.BytesIO(z.read(top + "run/summary.csv")))
    assert sorted(summary["browser"].unique()) == ["chromium", "webkit"]   # every local browser
    assert (summary["workload"] == "decode-loop").all() and (summary["status"] == "ok").all()
    assert (summary["tokens"] == 32).all() and (summary["steps_received"] == 32).all()
    s = summary.set_index(["browser", "variant"])
    for browser in ("chromium", "webkit"):   # the default suite: fresh creates one bind group per dispatch, reuse none
        assert s.loc[(browser, "fresh"), "bind_groups_per_token"] == s.loc[(browser, "fresh"), "dispatches_per_token"]
        assert s.loc[(browser, "reuse"), "bind_groups_per_token"] == 0
    manifest = json.loads(text("run/manifest.json"))
    assert manifest["parameters"]["tokens"] == 32
