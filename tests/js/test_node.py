"""The JavaScript tests of tests/js/ (node's own runner: ``node --test``), run by pytest.

They cover the emulated WebGPU (web/emulation/) and the probe catalog, in node with
``--expose-gc`` so FinalizationRegistry callbacks can be driven."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path


HERE = Path(__file__).resolve().parent


def test_node_suite():
    r = subprocess.run(["node", "--test", "--expose-gc", str(HERE)], cwd=HERE.parents[1], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert re.search(r"# pass [1-9]", r.stdout) and re.search(r"# fail 0", r.stdout)
    # set-up installs what every JS test needs (npm webgpu, Chromium's SwiftShader ICD): a test
    # that skipped could not run here, which is a failure (issue 19, item 5), not a pass
    skipped = re.findall(r"^\s*(?:ok|not ok) \d+ - (.*) # SKIP(.*)$", r.stdout, re.M)
    assert re.search(r"# skipped 0", r.stdout) and not skipped, skipped
