"""Probe overhead: decode-loop per-token time with the WebGPU counters vs without them.

Both run in the same Chromium session (cells interleaved: on, off, on, off). Target (issue
"Core harness"): counters add ≤ 2% to the median per-token wall time. Reports the ratio
on/off of the medians over tokens after the first, per variant, and its spread over
repetitions.
"""

from __future__ import annotations

import statistics

from benchmarks.common import finish, out_dir, plan, with_probes_off
from harness.drive.runner import Runner
from harness.tables import build


def main(profile: str = "ort-field-1.7b", tokens: int = 48, repeat: int = 3) -> dict:
    run_dir = out_dir("probe-overhead")
    runner = Runner(plan("decode-loop", ["fresh", "reuse"], profile, tokens, repeat=repeat), run_dir)
    with_probes_off(runner)
    runner.run()
    t = build(run_dir)
    s = t.summary.set_index("cell")
    result = {"benchmark": "probe-overhead", "profile": profile, "tokens": tokens, "target_ratio_max": 1.02,
              "browser": f"chromium {s['browser_version'].iloc[0]}", "adapter": s["adapter"].iloc[0], "variants": {}}
    for variant in ("fresh", "reuse"):
        ratios = []
        for rep in range(repeat):
            on = s.loc[f"chromium.decode-loop.{variant}.{profile}.r{rep}", "median_ms_per_token"]
            off = s.loc[f"chromium.decode-loop.{variant}.{profile}.r{rep}.noprobes", "median_ms_per_token"]
            ratios.append(on / off)
        result["variants"][variant] = {"ratio_on_off": statistics.median(ratios), "ratios": ratios,
                                       "spread": max(ratios) - min(ratios)}
    finish(run_dir, result)
    return result
