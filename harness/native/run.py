"""Runs the native dispatch-overhead cells (one per bind-group variant) into a run folder.

A cell's samples follow the browser worker's: ``env`` (adapter info, features, limits, timer
resolution), one ``step`` per method-run (counter deltas, live objects, ``extra`` with the same
keys as workloads/dispatch-overhead/main.js), then ``done`` (with the per-method medians) or
``error``/``skip``, and a harness-side ``cell_status``. Standard library + wgpu + numpy only.
"""

from __future__ import annotations

import platform
import re
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

from harness.native.bench import (KERNEL_FILE, NativeDispatchBench, Options, configurations, expected_result,
                                  fnv1a32_hex)
from harness.store.runfolder import RunFolder

BROWSER_LABEL = "native-wgpu"
#: Adapter types from most to least wanted (wgpu-native's GPUAdapterInfo.adapter_type).
ADAPTER_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 1, "OpenGL": 2, "GL": 2}


def import_wgpu():
    """``(wgpu module, None)`` or ``(None, reason)`` when wgpu-py cannot be imported."""
    import os

    from harness import locations

    os.environ["XDG_RUNTIME_DIR"] = locations.runtime_dir(os.environ.get("XDG_RUNTIME_DIR"))
    try:
        import wgpu  # noqa: PLC0415

        return wgpu, None
    except Exception as exc:  # ImportError, or the bundled wgpu-native failing to load
        return None, f"wgpu-py is not importable ({type(exc).__name__}: {exc}); pip install wgpu"


def adapter_info(adapter) -> dict[str, Any]:
    """The worker's env ``adapter`` block plus wgpu-native's ``adapter_type``/``backend_type``."""
    info = dict(adapter.info)
    return {"vendor": str(info.get("vendor", "")), "architecture": str(info.get("architecture", "")),
            "device": str(info.get("device", "")), "description": str(info.get("description", "")),
            "adapter_type": str(info.get("adapter_type", "")), "backend_type": str(info.get("backend_type", "")),
            "vendor_id": info.get("vendor_id"), "device_id": info.get("device_id"),
            "is_fallback_adapter": str(info.get("adapter_type", "")) == "CPU"}


def adapter_label(a: dict[str, Any]) -> str:
    """Short adapter name for tables: ``llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, CPU)``."""
    name = a.get("device") or a.get("description") or a.get("vendor") or "unknown adapter"
    if a.get("vendor") and not name.lower().startswith(a["vendor"].lower()):
        name = f"{a['vendor']} {name}"
    return f"{name} ({a.get('backend_type') or '?'}, {a.get('adapter_type') or '?'})"


def pick_adapter(wgpu, want: str | None = None):
    """The best adapter: a GPU before a CPU one, Vulkan/Metal before GL; ``want`` (substring of
    the label, case-insensitive) filters. Returns ``(adapter, None)`` or ``(None, reason)``."""
    try:
        adapters = list(wgpu.gpu.enumerate_adapters_sync())
    except Exception as exc:
        return None, f"enumerating wgpu adapters failed: {exc}"
    if not adapters:
        return None, ("wgpu found no adapter (no Vulkan/Metal/GL driver: on Debian install "
                      "mesa-vulkan-drivers for the lavapipe CPU adapter)")
    labelled = [(a, adapter_label(adapter_info(a))) for a in adapters]
    if want:
        labelled = [(a, lbl) for a, lbl in labelled if want.lower() in lbl.lower()]
        if not labelled:
            names = "; ".join(adapter_label(adapter_info(a)) for a in adapters)
            return None, f"no wgpu adapter matches {want!r} (found: {names})"
    labelled.sort(key=lambda p: (ADAPTER_RANK.get(adapter_info(p[0])["adapter_type"], 9),
                                 BACKEND_RANK.get(adapter_info(p[0])["backend_type"], 9)))
    return labelled[0][0], None


def timestamp_period_ns(device) -> tuple[float, str]:
    """ns per raw timestamp tick (wgpuQueueGetTimestampPeriod) and where the number came from."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib  # noqa: PLC0415

        return float(lib.wgpuQueueGetTimestampPeriod(device.queue._internal)), "wgpuQueueGetTimestampPeriod"
    except Exception as exc:  # private API moved: say so, assume the WebGPU unit (ns)
        return 1.0, f"assumed 1 ns/tick ({type(exc).__name__})"


def wgpu_versions(wgpu) -> str:
    """``wgpu-py 0.32.0, wgpu-native 29.0.0.1`` (the native part when its version is readable)."""
    native = ""
    try:
        from wgpu.backends.wgpu_native._ffi import lib  # noqa: PLC0415

        v = int(lib.wgpuGetVersion())
        native = f", wgpu-native {v >> 24 & 0xFF}.{v >> 16 & 0xFF}.{v >> 8 & 0xFF}.{v & 0xFF}"
    except Exception:
        pass
    return f"wgpu-py {wgpu.__version__}{native}"


def slug(text: str) -> str:
    """Lower-case, dash-separated, at most 40 characters: a cell-id-safe form of ``text``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "adapter"


def _median(xs: list[float]) -> float | None:
    xs = xs[1:] if len(xs) > 1 else xs  # round 0 warms up, as in the browser workload
    return statistics.median(xs) if xs else None


def run_cells(o: Options, folder: RunFolder, adapter_want: str | None = None, host_tag: str = "",
              progress: Callable[[str], None] = lambda msg: None) -> list[dict[str, Any]]:
    """Run one cell per variant in ``o.variants``; returns their manifest entries (status ok /
    failed / skipped with reason). Never raises for a cell's failure: it is recorded."""
    wgpu, why = import_wgpu()
    adapter = None
    if wgpu is not None:
        adapter, why = pick_adapter(wgpu, adapter_want)
    a_info = adapter_info(adapter) if adapter is not None else {}
    label = adapter_label(a_info) if adapter is not None else ""
    version = getattr(wgpu, "__version__", "") if wgpu else ""
    folder.manifest["browsers"].setdefault(BROWSER_LABEL, {
        "name": BROWSER_LABEL, "executable": sys.executable, "version": version,
        "driver": wgpu_versions(wgpu) if wgpu else "wgpu-py (missing)"})
    cells = []
    for rep_variant in o.variants:
        cid = f"{BROWSER_LABEL}.dispatch-overhead.{rep_variant}.{slug(host_tag or label or 'none')}.r0"
        i = 0
        while any(c["cell"] == cid for c in folder.manifest["cells"]):
            i += 1
            cid = f"{BROWSER_LABEL}.dispatch-overhead.{rep_variant}.{slug(host_tag or label or 'none')}.r{i}"
        cell = {"cell": cid, "browser": BROWSER_LABEL, "browser_version": version, "adapter": label,
                "webgpu": "real" if adapter is not None else "none", "workload": "dispatch-overhead",
                "variant": rep_variant, "profile": None, "tokens": o.rounds, "repetition": 0, "seed": 1,
                "params": {k: getattr(o, k) for k in ("n", "rounds", "methods", "batch_labels", "batched_pass",
                                                       "single_op_sync", "timestamp_query", "elements")},
                "status": "pending", "reason": ""}
        folder.add_cell(cell)
        progress(f"{cid}: start")
        if adapter is None:
            folder.append(cid, {"kind": "skip", "reason": why})
            status, reason = "skipped", why
        else:
            status, reason = _run_cell(wgpu, adapter, a_info, o, rep_variant, folder, cid, progress)
        folder.append(cid, {"kind": "cell_status", "status": status, "reason": reason})
        folder.update_cell(cid, status=status, reason=reason)
        cell.update(status=status, reason=reason)
        progress(f"{cid}: {status} {reason}")
        cells.append(cell)
    return cells


def _env_sample(wgpu, adapter, a_info: dict, timestamps: dict) -> dict[str, Any]:
    limits = {}
    try:
        limits = {k: v for k, v in dict(adapter.limits).items() if isinstance(v, (int, float))}
    except Exception:
        pass
    res = time.get_clock_info("perf_counter").resolution
    return {"kind": "env", "user_agent": f"{wgpu_versions(wgpu)}; Python {platform.python_version()}; {platform.platform()}",
            "webgpu": "real", "cross_origin_isolated": None, "shared_array_buffer": None,
            "timer_resolution_us": res * 1e6, "timer": "time.perf_counter_ns",
            "probes_installed": ["native runner counts its own calls"], "adapter": a_info,
            "features": sorted(str(f) for f in adapter.features), "limits": limits, "timestamps": timestamps}


def _run_cell(wgpu, adapter, a_info, o: Options, variant: str, folder: RunFolder, cid: str, progress):
    want_kernel = "kernel" in o.methods
    if o.timestamp_query == "off":
        ts = {"available": False, "reason": "timestamp queries disabled by --timestamp-query off"}
    elif "timestamp-query" not in set(map(str, adapter.features)):
        ts = {"available": False, "reason": "the adapter does not offer the 'timestamp-query' feature"}
    else:
        ts = {"available": True, "reason": ""}
    use_ts = ts["available"] and want_kernel
    per_config: dict[str, list[float]] = {}
    kernel_us: list[float] = []
    quantum = None
    try:
        device = adapter.request_device_sync(label="dispatch-overhead",
                                             required_features=["timestamp-query"] if use_ts else [])
        period, period_src = timestamp_period_ns(device) if use_ts else (1.0, "")
        ts["period_ns"], ts["period_source"] = period, period_src
        folder.append(cid, _env_sample(wgpu, adapter, a_info, ts))
        bench = NativeDispatchBench(wgpu, device, KERNEL_FILE.read_text(), o, variant, use_ts, period)
        bench.init()
        folder.append(cid, {"kind": "log", "message": f"single-op 'done' sync uses {bench.done_sync}"})
        configs = [c for c in configurations(o) if c["method"] != "kernel" or use_ts]
        if want_kernel and not use_ts:
            folder.append(cid, {"kind": "log", "message": f"kernel-only time n/a: {ts['reason']}"})
        step = 0
        for r in range(o.rounds):
            for c in configs:
                n = o.kernel_n if c["method"] == "kernel" else o.n
                bench.reset()
                before = dict(bench.counts)
                t0 = time.perf_counter_ns()
                extra: dict[str, Any] = {"method": c["method"], "config": c["config"], "k": c["k"], "n": n,
                                         "round": r, "bind_groups": variant}
                cpu_ms = None
                if c["method"] == "phases":
                    out = bench.run_phases(n)
                    for phase, ns in out["phases_ns"].items():
                        extra[f"phase_{phase}_us"] = ns / 1000 / n
                    extra["phases_sum_us"] = sum(out["phases_ns"].values()) / 1000 / n
                    extra["us_per_dispatch"] = out["wall_ns"] / 1000 / n
                elif c["method"] == "kernel":
                    out = bench.run_kernel_timestamps(n)
                    extra["kernel_us_per_dispatch"] = sum(out["kernel_ns"]) / len(out["kernel_ns"]) / 1000
                    quantum = None if out["quantum_ns"] is None else out["quantum_ns"] / 1000
                    extra["kernel_quantum_us"] = quantum
                    kernel_us.append(extra["kernel_us_per_dispatch"])
                else:
                    out = bench.run_method(c["method"], n, c["k"])
                    extra["us_per_dispatch"] = out["wall_ns"] / 1000 / n
                    if out["cpu_ns"] is not None:
                        extra["cpu_us_per_dispatch"] = out["cpu_ns"] / 1000 / n
                        cpu_ms = out["cpu_ns"] / 1e6
                wall_ms = (time.perf_counter_ns() - t0) / 1e6
                want = expected_result(o.elements, n).tobytes()
                ok = out["result"] == want
                e = out["expected"]
                extra.update(expected_submits=e["submits"], expected_command_encoders=e["command_encoders"],
                             expected_dispatches=e["dispatches"], expected_bind_groups=e["bind_groups"],
                             expected_map_async=e["map_async"], readback_ok=int(ok))
                live = dict(bench.live)
                live["bind_groups_live"] = live["bind_groups_created"] - live["bind_groups_collected"]
                live["buffers_live"] = live["buffers_created"] - live["buffers_collected"]
                folder.append(cid, {"kind": "step", "step": step, "token": r, "logits_hash": fnv1a32_hex(out["result"]),
                                    "cpu_ms": cpu_ms, "wall_ms": wall_ms,
                                    "counters": {k: bench.counts[k] - before[k] for k in bench.counts},
                                    "live": live, "extra": extra})
                if not ok:
                    raise RuntimeError(f"{c['config']} round {r}: readback is not x0 + {n}*b")
                if "us_per_dispatch" in extra:
                    per_config.setdefault(c["config"], []).append(extra["us_per_dispatch"])
                step += 1
            progress(f"{cid}: round {r + 1}/{o.rounds}")
        bench.destroy()
        medians = {k: _median(v) for k, v in per_config.items()}
        seq, single = medians.get("sequential"), medians.get("single-op")
        folder.append(cid, {"kind": "done", "result": {
            "workload": "dispatch-overhead", "variant": variant, "n": o.n, "rounds": o.rounds,
            "elements": o.elements, "batched_pass": o.batched_pass, "single_op_sync": o.single_op_sync,
            "us_per_dispatch_median": medians,
            "overestimation_factor": single / seq if single and seq else None,
            "kernel_only": {"available": use_ts, "reason": ts["reason"] if want_kernel else "kernel method not requested",
                            "us_per_dispatch_median": _median(kernel_us), "quantum_us": quantum,
                            "dispatches": o.kernel_n},
            "expected_readback_hash": fnv1a32_hex(expected_result(o.elements, o.n).tobytes()),
            "adapter": a_info, "native": wgpu_versions(wgpu), "done_sync": bench.done_sync}})
        return "ok", ""
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}"
        folder.append(cid, {"kind": "error", "message": msg, "stack": traceback.format_exc()})
        return "failed", f"workload error: {msg}"


def summary_rows(run_dir: Path) -> list[dict[str, Any]]:
    """Per native cell and config: median µs per dispatch (from the ``done`` samples)."""
    import json  # noqa: PLC0415

    rows = []
    with (Path(run_dir) / "samples.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            s = json.loads(line)
            if s.get("kind") == "done" and str(s.get("cell", "")).startswith(BROWSER_LABEL):
                res = s["result"]
                for cfg, us in (res.get("us_per_dispatch_median") or {}).items():
                    rows.append({"cell": s["cell"], "config": cfg, "us_per_dispatch": us})
                rows.append({"cell": s["cell"], "config": "overestimation factor", "us_per_dispatch": res.get("overestimation_factor")})
                k = res.get("kernel_only") or {}
                rows.append({"cell": s["cell"], "config": "kernel-only",
                             "us_per_dispatch": k.get("us_per_dispatch_median") if k.get("available") else f"n/a: {k.get('reason')}"})
    return rows
