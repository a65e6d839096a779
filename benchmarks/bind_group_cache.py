"""bind-group-cache vs default on the real onnxruntime-web (ort-decode), and the shim's own cost.

1. Per-token time: ort-decode ``default`` and ``bind-group-cache`` cells interleaved over
   ``repeat`` repetitions in one Chromium session (static KV cache, as onnxruntime-genai uses,
   so the cache reaches its steady state); reports the ratio of median ms/token
   (cache ÷ default) per repetition, its median and spread.
2. Shim cost: in one page, µs per ``createBindGroup`` call for N calls on a real GPUDevice
   without the shim, with it on hits (same buffers every call), and on misses (a new buffer
   offset every call), from performance.now() over the whole loop (5 µs resolution when
   cross-origin isolated; N large enough that it does not matter).
"""

from __future__ import annotations

import statistics

from benchmarks.common import finish, out_dir, plan
from harness.drive.chromium import ChromiumDriver
from harness.drive.doctor import evaluate_on_local_page
from harness.drive.runner import Runner
from harness.tables import build

SHIM_JS = """(async (n) => {
  const { installBindGroupCache } = await import('/workloads/lib/bind-group-cache.js');
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const layout = device.createBindGroupLayout({ entries: [
    { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
    { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } }] });
  const a = device.createBuffer({ size: 1 << 20, usage: GPUBufferUsage.STORAGE });
  // one uniform slot (256 B, minUniformBufferOffsetAlignment) per call: offsets never repeat
  const u = device.createBuffer({ size: 3 * n * 256 + 256, usage: GPUBufferUsage.UNIFORM });
  const make = (slot) => device.createBindGroup({ layout, entries: [
    { binding: 0, resource: { buffer: a } }, { binding: 1, resource: { buffer: u, offset: slot * 256, size: 16 } }] });
  const time = (fn) => { const t0 = performance.now(); for (let i = 0; i < n; i++) fn(i); return (performance.now() - t0) * 1000 / n; };
  time((i) => make(i));                     // warm-up, no shim
  const plain = time((i) => make(n + i));   // no shim: every call builds a bind group
  const cache = installBindGroupCache({ maxEntries: 4096 });
  const misses = time((i) => make(2 * n + i));  // new key every call: build + insert (+ LRU eviction)
  make(0);
  const hits = time(() => make(0));         // same key every call
  const stats = cache.stats();
  cache.uninstall();
  device.destroy();
  return { plain_us: plain, hit_us: hits, miss_us: misses, stats };
})"""


def shim_cost(n: int = 20000) -> dict:
    version, out = evaluate_on_local_page(ChromiumDriver(), f"{SHIM_JS}({n})")
    out["browser"] = f"chromium {version}"
    out["n"] = n
    out["hit_overhead_us_per_call"] = out["hit_us"] - out["plain_us"]
    out["miss_overhead_us_per_call"] = out["miss_us"] - out["plain_us"]
    return out


def main(profile: str = "qwen2-24l", tokens: int = 32, repeat: int = 3) -> dict:
    run_dir = out_dir("bind-group-cache")
    p = plan("ort-decode", ["default", "bind-group-cache"], profile, tokens, repeat=repeat,
             params={"kvCache": "static"})
    from harness.engines import find_ort

    ort = find_ort()
    p.params.update(ortDist=ort.dist_url, ortVersion=ort.version)
    p.extra_roots.update(dict([ort.root]))  # its dist/ at /ort/<version>/
    Runner(p, run_dir).run()
    s = build(run_dir).summary.set_index("cell")
    ratios = []
    for rep in range(repeat):
        cache = s.loc[f"chromium.ort-decode.bind-group-cache.{profile}.r{rep}", "median_ms_per_token"]
        default = s.loc[f"chromium.ort-decode.default.{profile}.r{rep}", "median_ms_per_token"]
        ratios.append(cache / default)
    result = {"benchmark": "bind-group-cache", "profile": profile, "tokens": tokens,
              "engine": s["engine"].dropna().iloc[0] if s["engine"].notna().any() else None,
              "adapter": s["adapter"].iloc[0], "browser": f"chromium {s['browser_version'].iloc[0]}",
              "ratio_ms_per_token_cache_over_default": statistics.median(ratios), "ratios": ratios,
              "spread": max(ratios) - min(ratios), "shim": shim_cost()}
    finish(run_dir, result)
    return result
