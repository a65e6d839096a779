"""The `pip install` path (README, "Install"): `python -m build` makes the sdist and, from it, the
wheel; the wheel is installed into a fresh virtual environment outside the clone and run from a
temporary folder, in real Chromium.

To stay fast the new environment gets no downloads: it is made `--without-pip` and a `.pth`
line puts the project's installed dependencies on its path (their own `.pth` files, among them
the clone's editable install, are not processed), then the wheel is installed `--no-deps`.
Every test checks that the harness it ran is the wheel's (`harness_install` in manifest.json).
The analysis-only environment sees the same dependencies less the `measure` extra's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO

pytestmark = pytest.mark.full   # browser runs of its own: make test-full

USER_WORKLOADS = Path(__file__).resolve().parent / "user-workloads"
#: Top-level modules of the `measure` extra and what only it pulls in (pyproject.toml).
MEASURE_MODULES = ("playwright", "selenium", "wgpu", "onnx", "fastapi", "uvicorn", "starlette")


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEBGPU_HARNESS_") and k != "PYTHONPATH"}
    return {**env, "COLUMNS": "200", **extra}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def _venv(root: Path, deps: Path, wheel: Path) -> Path:
    """A venv at ``root`` that imports ``deps`` and has ``wheel`` installed; returns its bin/."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    py = root / "bin" / "python"
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "zz-reused-deps.pth").write_text(f"{deps}\n")
    r = subprocess.run([py, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                        "-q", str(wheel)], capture_output=True, text=True, timeout=300, env=_env())
    assert r.returncode == 0, r.stdout + r.stderr
    return root / "bin"


def _deps_without(names: tuple[str, ...], into: Path) -> Path:
    """A folder of links to every installed distribution but ``names`` (and the clone's own)."""
    site = Path(sysconfig.get_paths()["purelib"])
    into.mkdir()
    for entry in site.iterdir():
        base = entry.name.split("-")[0].split(".")[0].lower()
        if base in names or base in ("harness", "webgpu_harness", "_webgpu_harness", "__editable__"):
            continue
        (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    wheels = list(dist.glob("*.whl"))
    assert len(wheels) == 1, list(dist.iterdir())
    return wheels[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    return _venv(tmp_path_factory.mktemp("venv") / "v", Path(sysconfig.get_paths()["purelib"]), wheel)


def _cli(bin_dir: Path, cwd: Path, *args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / "webgpu-harness"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=_env(**env))


def _the_wheels(manifest: dict, bin_dir: Path) -> None:
    assert manifest["harness_install"].startswith(f"wheel {bin_dir.parent}"), manifest["harness_install"]
    assert manifest["git_commit"] is None


def test_sdist_and_wheel_carry_the_harnesss_files(dist, wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = "harness/_data/"
    for f in ("web/runner.html", "web/worker.js", "web/probes/catalog.js", "workloads/decode-loop/manifest.json",
              "workloads/lib/hash.js", "workloads/kernels/add.wgsl", "workloads/ort-decode/models/tiny/model.onnx",
              "workloads/ort-decode/models/tiny/expected.json", "workloads/ort-run/models/conv-tiny/expected.json",
              "reports/templates/report.html.j2", "RESULTS.md", "package.json", "package-lock.json"):
        assert data + f in names, f
    assert not [n for n in names if "node_modules" in n or "__pycache__" in n]
    assert not [n for n in names if not n.startswith(("harness/", "webgpu_harness-"))]
    sdist = next(dist.glob("*.tar.gz"))
    import tarfile

    members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
    assert {"pyproject.toml", "web/probes/catalog.js", "workloads/decode-loop/main.js", "RESULTS.md"} <= members


def test_installed_wheel_runs_and_reports_from_a_temporary_folder(venv, tmp_path):
    r = _cli(venv, tmp_path, "run", "-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "64")  # README's Install
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    runs = [p for p in (tmp_path / "webgpu-harness-runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs     # beside it: index.html, the run index the run refreshed
    assert (tmp_path / "webgpu-harness-runs" / "index.html").is_file()
    run = runs[0]
    _the_wheels(json.loads((run / "manifest.json").read_text()), venv)
    s = pd.read_csv(run / "summary.csv").set_index("variant")
    assert s.loc["fresh", "bind_groups_per_token"] == 42     # one per dispatch (tiny: 42 dispatches)
    assert s.loc["reuse", "bind_groups_per_token"] == 0
    assert (s["status"] == "ok").all() and (s["tokens"] == 64).all()

    out = tmp_path / "again"
    r = _cli(venv, tmp_path, "report", str(run), "-o", str(out))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    again = pd.read_csv(out / "summary.csv").set_index("variant")
    assert again.loc[["fresh", "reuse"], "bind_groups_per_token"].tolist() == [42, 0]
    assert (out / "report.html").stat().st_size > 100_000   # plotly.js inlined, templates found

    r = _cli(venv, tmp_path, "--version")
    assert r.returncode == 0 and r.stdout.startswith("webgpu-harness ") and "wheel " in r.stdout, r.stdout


def test_installed_wheel_serves_a_user_workloads_folder(venv, tmp_path):
    r = _cli(venv, tmp_path, "run", "-b", "chromium", "-w", "bind-groups-k", "-n", "4", "--param", "k=7",
             "-o", str(tmp_path / "run"), WEBGPU_HARNESS_WORKLOADS=str(USER_WORKLOADS))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _the_wheels(json.loads((tmp_path / "run" / "manifest.json").read_text()), venv)
    s = pd.read_csv(tmp_path / "run" / "summary.csv").set_index("variant")
    assert s.loc[["fresh", "reuse"], "bind_groups_per_token"].tolist() == [7, 0]
    steps = pd.read_csv(tmp_path / "run" / "steps.csv")
    assert sorted(steps["create_bind_group"].unique().tolist()) == [0, 7]

    bad = _cli(venv, tmp_path, "run", "-w", "bind-groups-k", "--workloads-dir", str(tmp_path / "nowhere"))
    lines = [x for x in bad.stderr.splitlines() if x.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "nowhere" in lines[0], bad.stderr


def test_installed_wheel_finds_onnxruntime_web_given_with_ort_dist(venv, tmp_path):
    from harness import engines, npm

    # nothing in ./node_modules nor in an empty cache: one line naming the three places
    empty = {npm.CACHE_ENV: str(tmp_path / "cache")}
    r = _cli(venv, tmp_path, "run", "-b", "chromium", "-w", "ort-run", "-n", "1", **empty)
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    for place in ("--ort-dist PATH", "./node_modules", "per-user cache", "webgpu-harness setup"):
        assert place in lines[0], lines[0]

    pkg, _ = npm.find("onnxruntime-web", engines.PINNED_ORT)   # the clone's install (make test)
    r = _cli(venv, tmp_path, "run", "-b", "chromium", "-w", "ort-run", "-v", "default", "-n", "2",
             "--ort-dist", str(pkg / "dist"), "-o", str(tmp_path / "run"), **empty)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    _the_wheels(manifest, venv)
    s = pd.read_csv(tmp_path / "run" / "summary.csv").iloc[0]
    assert s["engine"].startswith(f"onnxruntime-web {engines.PINNED_ORT}")
    steps = pd.read_csv(tmp_path / "run" / "steps.csv")
    runs = steps[steps["extra_phase"].isin(["first-run", "steady"])]
    assert (runs["create_bind_group"] > 0).all() and (runs["create_bind_group"] == runs["dispatch_workgroups"]).all()


def test_analysis_only_install_reports_compares_and_merges(tmp_path, wheel):
    """Without the `measure` extra: report, compare and merge work; run says what to install."""
    bin_dir = _venv(tmp_path / "v", _deps_without(MEASURE_MODULES, tmp_path / "deps"), wheel)
    for mod in MEASURE_MODULES:
        r = subprocess.run([bin_dir / "python", "-c", f"import {mod}"], capture_output=True, text=True)
        assert r.returncode != 0, f"{mod} importable in the analysis-only environment"
    recorded = REPO / "tests" / "analysis" / "runs" / "chromium-decode-loop"
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(recorded, a)
    shutil.copytree(recorded, b)
    for args, made in ((("report", str(a), "-o", str(tmp_path / "r")), "r/report.html"),
                       (("compare", str(a), str(b), "-o", str(tmp_path / "c")), "c/compare.html"),
                       (("merge", str(a), str(b), "-o", str(tmp_path / "m")), "m/report.html")):
        r = _cli(bin_dir, tmp_path, *args)
        assert r.returncode == 0, (args, r.stdout[-2000:], r.stderr[-2000:])
        assert (tmp_path / made).is_file(), made
    r = _cli(bin_dir, tmp_path, "run", "-b", "chromium")
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "pip install 'webgpu-harness[measure]'" in lines[0], r.stderr


def test_installed_wheel_gives_a_pytest_project_the_webgpu_probes_fixture(venv, tmp_path):
    """Issue 16's plugin check: a tiny pytest project next to the installed wheel uses the
    plugin's fixtures (entry point pytest11) on a served page and asserts the bind groups it
    counts (tests/apps/main-thread: 3 per step)."""
    import sys as _sys

    _sys.path.insert(0, str(REPO / "tests" / "apps"))
    from server import Served, create_app

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_page.py").write_text(
        "import os\n\nimport harness\n\n\n"
        "def test_three_bind_groups_per_step(webgpu_browser, webgpu_probes):\n"
        "    page = webgpu_browser.new_page()\n"
        "    probes = webgpu_probes(page)\n"
        "    page.goto(os.environ['APP_URL'])\n"
        "    page.wait_for_selector('text=done')\n"
        "    assert probes.counts('create_bind_group') == [3, 3, 3, 3, 3]\n"
        "    assert probes.realms()[0]['kind'] == 'page'\n"
        "    print('harness from', harness.__file__)\n")
    with Served(create_app()) as srv:
        r = subprocess.run([str(venv / "python"), "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_page.py"],
                           cwd=project, capture_output=True, text=True, timeout=600,
                           env=_env(APP_URL=f"{srv.url}/main-thread/?steps=5"))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"harness from {venv.parent}" in r.stdout, r.stdout[-2000:]   # the wheel's plugin, not the clone's


#: What only a clone has, or only its test suite: never in an installed wheel's --help or doctor.
CLONE_ONLY = ("reports/runs", "reports/compare", "reports/index.html", "a clone's", "this clone", "the clone's",
              "Selenium Grid (tests)", "commit None", "(commit")


@pytest.mark.full
def test_installed_wheels_help_and_doctor_are_true_of_the_wheel(venv, tmp_path):
    """Issue 20 item 8: every --help default and doctor's lines name the wheel's own places (the
    current folder's webgpu-harness-runs/, the wheel's files, no clone-only folder, no test-only
    row, no commit)."""
    from harness.cli import COMMANDS

    def squeeze(text: str) -> str:  # --help wraps long paths anywhere: compare without white space
        return "".join(text.split())

    runs = tmp_path / "webgpu-harness-runs"
    data = venv.parent / "lib"   # the wheel's files are under its site-packages/harness/_data
    helps = {}
    for name, _ in COMMANDS:
        r = _cli(venv, tmp_path, name, "--help")
        assert r.returncode == 0, (name, r.stderr)
        helps[name] = squeeze(r.stdout)
        for bad in CLONE_ONLY + (str(REPO),):
            assert squeeze(bad) not in helps[name], (name, bad, r.stdout)
    for name, suffix in (("run", ""), ("app", ""), ("serve", "-serve"), ("merge", "-merged"), ("native", "-native")):
        assert squeeze(f"Default: {runs}/<YYYYmmdd-HHMMSS>{suffix}/ (./webgpu-harness-runs/ of the current folder") \
               in helps[name], (name, helps[name])
    assert squeeze(f"Default: {runs}/compare/<YYYYmmdd-HHMMSS>/") in helps["compare"]
    assert squeeze(f"Default: {runs}/index.html") in helps["index"]
    assert "/harness/_data/web/emulation/webgpu-emulated.js" in helps["run"] and squeeze(str(data)) in helps["run"]
    assert squeeze("load from ./node_modules, the per-user cache") in helps["run"]

    r = _cli(venv, tmp_path, "doctor", timeout=600, COLUMNS="250")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for bad in CLONE_ONLY + (str(REPO), "None"):
        assert bad not in r.stdout, (bad, r.stdout)
    assert f"harness: wheel {venv.parent}" in r.stdout and f"run folders go to {runs}" in r.stdout
    assert "chromium" in r.stdout and "per-process memory" in r.stdout
