"""The pytest plugin (harness/pytest_plugin.py) as another project uses it: README's example,
copied as written from README.md ("Your own tests: the pytest plugin"), run by a separate pytest
against the Transformers.js test app (tests/apps/, 29 bind groups per token in Chromium). A
second copy with a limit under the measured value must fail with it: the counts are real."""

from __future__ import annotations

import pytest

import os
import re
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tests" / "apps"))
from server import Served, create_app  # noqa: E402

pytestmark = pytest.mark.full   # browser runs of its own: make test-full


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Your own tests: the pytest plugin"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_as_written_and_its_counts_can_fail(tmp_path):
    example = readme_example()
    assert "def test_bind_groups_per_token(webgpu_browser, webgpu_probes):" in example
    assert len([ln for ln in example.splitlines() if ln.strip() and not ln.startswith("#")]) <= 10
    strict = example.replace("def test_bind_groups_per_token", "def test_strict").replace("<= 30", "<= 28")
    assert strict != example
    (tmp_path / "test_webgpu_budget.py").write_text(example + "\n\n" + strict.split("\n\n\n", 1)[1])
    with Served(create_app()) as srv:
        env = {**os.environ, "APP_URL": f"{srv.url}/transformers/?tokens=3"}
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_webgpu_budget.py"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "1 failed, 1 passed" in out, out[-3000:]
    assert "test_strict" in out and re.search(r"assert \(\[29, 29\] and 29 <= 28\)", out), out[-3000:]
