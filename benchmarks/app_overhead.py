"""Injection overhead of ``webgpu-harness app``: an unmodified app's time per token with the
probes injected vs without them, in one Chromium session.

The app is the Transformers.js test app (tests/apps/transformers/, served unmodified by
tests/apps/server.py): a module worker decoding with ``model.generate``; it times each token
itself (its streamer's arrival times, ``msPerToken`` in its result), so the same clock measures
both cases and the harness adds nothing but the injection. Rounds alternate: no injection, then
each injection path (``cdp``: harness/drive/inject.py; ``proxy``: harness/serve/proxy.py), each
in a fresh browser context. Per run: the median ms per token over tokens after the first two
(token 1 compiles the decode pipelines); per path: the ratio with/without of the medians over
rounds, and each round's ratio (its spread is the noise). Target (issue 12): ≤ 1.02.

    .venv/bin/python -m benchmarks app-overhead
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks.common import out_dir

APPS_DIR = Path(__file__).resolve().parent.parent / "tests" / "apps"


def _wait_done(session, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        status = session.evaluate("document.getElementById('status')?.textContent ?? ''") or ""
        if status.startswith(("done", "failed")):
            return status
        session.pump(0.25)
    return f"timed out ({status})"


def one_run(session, base: str, path: str, tokens: int, timeout_s: float) -> list[float]:
    """Open the app (``path``: none, cdp or proxy) and return its own ms per token."""
    from harness.drive.inject import ChromiumInjector
    from harness.serve.injection import InjectionCore
    from harness.serve.proxy import ReverseProxy

    url = f"{base}/transformers/?tokens={tokens}"
    core = InjectionCore()
    injector, proxy = None, None
    try:
        if path == "cdp":
            injector = ChromiumInjector(core)
            session.open(url, before_goto=injector.attach)
        elif path == "proxy":
            proxy = ReverseProxy(base, core).__enter__()
            session.open(proxy.url_for(url))
        else:
            session.open(url)
        status = _wait_done(session, timeout_s)
        if status != "done":
            raise RuntimeError(f"the app did not finish ({path}): {status}")
        result = json.loads(session.evaluate("document.getElementById('result').textContent"))
        if path != "none" and not any(s.get("kind") == "step" for s in core.samples):
            raise RuntimeError(f"{path}: no step sample arrived: the probes were not in")
        return [float(x) for x in result["msPerToken"]]
    finally:
        if injector is not None:
            injector.detach()
        if proxy is not None:
            proxy.__exit__(None, None, None)


def main(tokens: int = 24, rounds: int = 3, paths: tuple[str, ...] = ("cdp",), timeout_s: float = 600) -> dict:
    sys.path.insert(0, str(APPS_DIR))
    from server import Served, create_app

    from harness.drive.chromium import ChromiumDriver

    run_dir = out_dir("app-overhead")
    driver = ChromiumDriver()
    session = driver.launch(driver.locate())
    medians: dict[str, list[float]] = {p: [] for p in ("none", *paths)}
    try:
        with Served(create_app()) as srv:
            for _ in range(rounds):
                for path in medians:
                    ms = one_run(session, srv.url, path, tokens, timeout_s)
                    medians[path].append(statistics.median(ms[2:]))
                    print(f"{path}: median {medians[path][-1]:.1f} ms/token", flush=True)
        version = session.version
    finally:
        session.close()
    base = statistics.median(medians["none"])
    result = {"benchmark": "app-overhead", "app": "tests/apps/transformers (Transformers.js 4.3.2, qwen2-tiny)",
              "tokens": tokens, "rounds": rounds, "target_ratio_max": 1.02, "browser": f"chromium {version}",
              "clock": "the app's own (streamer arrival times), tokens after the first two",
              "median_ms_per_token": {p: v for p, v in medians.items()}, "paths": {}}
    for path in paths:
        ratios = [w / n for w, n in zip(medians[path], medians["none"])]
        result["paths"][path] = {"ratio_with_without": statistics.median(medians[path]) / base,
                                 "round_ratios": ratios, "spread": max(ratios) - min(ratios)}
    (run_dir / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result
