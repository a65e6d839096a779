"""`webgpu-harness serve` (a real harness process, real HTTP, no browser): a cell whose page posted
anything — a log sample, a refused sample, a gap — was opened, and is not reported "never opened";
it fails saying what arrived. Only a cell nothing arrived for is skipped."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from conftest import REPO


def test_served_cells_that_got_samples_say_what_they_got(tmp_path):
    d = tmp_path / "s"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "serve", "--workload", "decode-loop", "--profile", "tiny",
                             "--variant", "fresh,reuse", "--repeat", "2", "--tokens", "5", "--no-probes", "--output", str(d)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    urls: list[str] = []
    deadline = time.monotonic() + 60
    while len(urls) < 4:
        line = proc.stdout.readline()
        assert line and time.monotonic() < deadline, proc.stderr.read()
        urls += re.findall(r"(http://127\.0\.0\.1:\d+/web/runner\.html\?cell=\S+)", line)
    cells = {}
    for u in urls:
        q = parse_qs(urlsplit(u).query)
        cells[unquote(q["cell"][0])] = (f"{u.split('/web/')[0]}/api/cells/{q['cell'][0]}/samples", q["token"][0])
    log, refused, gap, untouched = sorted(cells)

    def post(cell, samples):
        url, token = cells[cell]
        r = httpx.post(url, headers={"X-Harness-Token": token}, json={"src": "w-1", "samples": samples},
                       timeout=30)   # a batch beyond the next n waits REORDER_WAIT_S (10 s) for the missing ones
        assert r.status_code in (200, 422), r.text   # 422: every sample of the batch refused
        return r.json()

    try:
        assert post(log, [{"n": 1, "kind": "log", "message": "loading"}])["accepted"] == 1
        assert post(refused, [{"n": 1, "kind": "step", "step": "not a number"}])["refused"]
        assert post(gap, [{"n": 3, "kind": "log", "message": "after a loss"}])["accepted"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err   # serve stopped by its user ends 0; the cells' statuses say the rest
    assert "Traceback" not in out + err
    by = {c["cell"]: c for c in json.loads((d / "manifest.json").read_text())["cells"]}
    assert by[untouched]["status"] == "skipped" and "never opened" in by[untouched]["reason"]
    for cell in (log, refused, gap):
        assert by[cell]["status"] == "failed", by[cell]
        assert "never opened" not in by[cell]["reason"]
        assert by[cell]["reason"].startswith("opened in a browser, but its worker never reported before serve stopped")
    assert "1 sample(s) numbered by 1 sender(s) (w-1)" in by[log]["reason"]
    assert "1 sample(s) refused" in by[refused]["reason"]
    assert "3 sample(s) numbered" in by[gap]["reason"] and "2 sample(s) lost in delivery (w-1 n 1-2)" in by[gap]["reason"]
