"""Where the harness finds its files (harness/locations.py), npm packages (harness/npm.py,
harness/engines.py) and user workloads (harness/workloads.py), read from real folders: the
clone, its installed onnxruntime-web, and workload folders written here.

The same code from an installed wheel is exercised by tests/e2e/test_wheel.py."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from harness import engines, locations, npm
from harness.workloads import WorkloadError, discover, served_roots

REPO = Path(__file__).resolve().parents[1]
HARNESS = REPO / "harness"


def test_only_locations_finds_files_relative_to_the_package():
    """Every other module goes through harness/locations.py (so the wheel's harness/_data works)."""
    bad = []
    for path in HARNESS.rglob("*.py"):
        if path.name == "locations.py" or path == HARNESS / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id in ("REPO_ROOT", "__file__"):
                bad.append(f"{path.relative_to(REPO)}:{node.lineno} {node.id}")
            if isinstance(node, ast.alias) and node.name == "REPO_ROOT":
                bad.append(f"{path.relative_to(REPO)}: imports REPO_ROOT")
    assert bad == []


def test_in_a_clone_the_files_and_run_folders_are_the_clones(monkeypatch):
    monkeypatch.delenv(locations.RUNS_ENV, raising=False)
    assert locations.data_root() == REPO and locations.clone_root() == REPO
    for item in locations.DATA_ITEMS:
        assert (locations.data_root() / item).exists(), item
    assert locations.runs_dir() == REPO / "reports" / "runs"
    assert locations.compare_dir() == REPO / "reports" / "compare"
    assert locations.install_kind() == f"clone {REPO}"
    monkeypatch.setenv(locations.RUNS_ENV, "/tmp/elsewhere")
    assert locations.runs_dir() == Path("/tmp/elsewhere")
    assert locations.compare_dir() == Path("/tmp/elsewhere/compare")


def test_git_commit_is_the_clones_head():
    import subprocess

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert locations.git_commit().removesuffix("-dirty") == head


# npm packages -------------------------------------------------------------------------------

def _installed_ort() -> Path:
    """The pinned onnxruntime-web package folder this clone's tests use (make test installs it)."""
    folder, _ = npm.find("onnxruntime-web", engines.PINNED_ORT)
    return folder


def test_locked_packages_are_the_lockfiles_top_level_ones():
    lock = json.loads((REPO / "package-lock.json").read_text())
    top = lock["packages"][""]["dependencies"]
    assert npm.locked_packages() == {n: lock["packages"][f"node_modules/{n}"]["version"] for n in top}
    assert npm.locked_packages()["onnxruntime-web"] == engines.PINNED_ORT


def test_own_node_modules_comes_before_the_clones_and_the_cache(tmp_path, monkeypatch):
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "onnxruntime-web").symlink_to(_installed_ort())
    monkeypatch.chdir(tmp_path)
    labels = [p.label for p in npm.places()]
    assert labels[0] == "./node_modules" and labels[-1].startswith("the per-user cache")
    ort = engines.find_ort()
    assert (ort.source, ort.version) == ("./node_modules", engines.PINNED_ORT)
    assert ort.dist == tmp_path / "node_modules" / "onnxruntime-web" / "dist"
    assert ort.dist_url == f"/ort/{engines.PINNED_ORT}/" and ort.root == (f"ort/{engines.PINNED_ORT}", ort.dist)
    assert npm.served_roots()["node_modules/onnxruntime-web"] == tmp_path / "node_modules" / "onnxruntime-web"


def test_ort_dist_comes_first_as_a_dist_or_package_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pkg = _installed_ort()
    for given in (pkg / "dist", pkg):
        ort = engines.find_ort(None, given)
        assert (ort.source, ort.version, ort.dist) == ("--ort-dist", engines.PINNED_ORT, pkg.resolve() / "dist")
    with pytest.raises(engines.EngineError, match="not --ort-version 1.22.0"):
        engines.find_ort("1.22.0", pkg / "dist")
    with pytest.raises(engines.EngineError, match="neither an onnxruntime-web dist/ folder"):
        engines.find_ort(None, tmp_path)


def test_a_version_found_nowhere_names_the_three_places(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(npm.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(engines.EngineError) as exc:
        engines.find_ort("0.0.1")
    msg = str(exc.value)
    assert "\n" not in msg
    for place in ("--ort-dist PATH", "./node_modules", "per-user cache", str(tmp_path / "cache" / "npm")):
        assert place in msg, msg


def test_setup_dry_run_names_what_it_would_do(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, npm.CACHE_ENV: str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-m", "harness", "setup", "--dry-run", "--no-system"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    # the clone's node_modules (make test installs it) or the cache already has the pinned package
    assert "npm packages (onnxruntime-web " in r.stdout or "would run npm ci" in r.stdout, r.stdout


# user workloads ---------------------------------------------------------------------------------

def _workload(folder: Path, name: str) -> Path:
    d = folder / name
    d.mkdir(parents=True)
    (d / "manifest.json").write_text(json.dumps({"name": name, "variants": {"a": "one"},
                                                 "parameters": {"k": {"type": "int", "default": 2, "min": 0}}}))
    (d / "main.js").write_text("export async function run(ctx) { return {}; }\n")
    return d


def test_user_workloads_join_the_built_in_ones(tmp_path, monkeypatch):
    monkeypatch.delenv("WEBGPU_HARNESS_WORKLOADS", raising=False)
    _workload(tmp_path / "mine", "mine-a")
    single = _workload(tmp_path, "mine-b")
    wls = discover([tmp_path / "mine", single])
    assert {"decode-loop", "mine-a", "mine-b"} <= set(wls)
    assert wls["decode-loop"].builtin and not wls["mine-a"].builtin
    assert served_roots(wls.values()) == {"workloads/mine-a": tmp_path / "mine" / "mine-a",
                                          "workloads/mine-b": single}
    monkeypatch.setenv("WEBGPU_HARNESS_WORKLOADS", str(tmp_path / "mine"))
    assert "mine-a" in discover() and "mine-b" not in discover()


@pytest.mark.parametrize("case", ["missing", "empty", "clash", "malformed"])
def test_a_bad_workloads_folder_is_one_line_naming_it(tmp_path, case):
    d = tmp_path / "w"
    if case != "missing":
        d.mkdir()
    if case == "clash":
        _workload(d, "decode-loop")
    if case == "malformed":
        (d / "x").mkdir()
        (d / "x" / "manifest.json").write_text("{not json")
    with pytest.raises(WorkloadError) as exc:
        discover([d])
    assert "\n" not in str(exc.value) and str(d) in str(exc.value)
