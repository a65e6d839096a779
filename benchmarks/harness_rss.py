"""Harness RSS over a long run: the Python process's RSS sampled at every step of a 2,000-token
decode-loop run; reports the slope (bytes per token, Theil–Sen via scipy) and start/end RSS.
A flat harness keeps nothing per sample in memory (samples go to samples.jsonl)."""

from __future__ import annotations

import psutil
from scipy.stats import theilslopes

from benchmarks.common import finish, out_dir, plan
from harness.drive.runner import Runner


def main(tokens: int = 2000, profile: str = "tiny") -> dict:
    run_dir = out_dir("harness-rss")
    me = psutil.Process()
    series: list[tuple[int, int]] = []

    def progress(event, cell, info):
        if event == "step":
            series.append((info["steps"], me.memory_info().rss))

    # the KV cache holds max_tokens positions: size it for the whole run (profile override)
    Runner(plan("decode-loop", ["fresh"], profile, tokens, params={"max_tokens": tokens}), run_dir,
           progress=progress).run()
    x = [s for s, _ in series]
    y = [r for _, r in series]
    slope, _, lo, hi = theilslopes(y, x)
    result = {"benchmark": "harness-rss", "tokens": tokens, "steps_reached": x[-1] if x else 0, "samples": len(series),
              "rss_start_bytes": y[0], "rss_end_bytes": y[-1],
              "slope_bytes_per_token": slope, "slope_ci95": [lo, hi]}
    finish(run_dir, result)
    return result
