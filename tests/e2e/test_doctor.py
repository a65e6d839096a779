"""``webgpu-harness doctor`` in this machine's real browsers: the table, then the workloads (built
in and from ``--workloads-dir``), where the pinned npm packages were found, and where the harness
is installed and writes."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_cli

USER_WORKLOADS = Path(__file__).resolve().parent / "user-workloads"


def test_doctor_lists_user_workloads_npm_packages_and_the_install():
    r = run_cli("doctor", "--workloads-dir", str(USER_WORKLOADS))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    assert any(x.startswith("workloads: decode-loop, ") and f"(built in: {REPO / 'workloads'})" in x for x in lines)
    assert f"workloads: bind-groups-k (from {USER_WORKLOADS})" in lines
    npm = [x for x in lines if x.startswith("npm: onnxruntime-web 1.31.0-dev.20260914-8d85527a0: ")]
    assert len(npm) == 1 and "onnxruntime-web" in npm[0].rsplit(": ", 1)[1], npm
    assert f"harness: clone {REPO}; run folders go to {REPO / 'reports' / 'runs'}" in lines
    assert "chromium" in r.stdout
