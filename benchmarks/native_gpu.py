#!/usr/bin/env python3
"""Native dispatch-overhead baseline on a GPU machine (needs only ``wgpu`` and ``numpy``).

Runs the methods of ``workloads/dispatch-overhead`` (single-op, sequential, batched K, one-pass,
per-phase timing, kernel-only timestamps; bind groups fresh and reused) on wgpu-native through
wgpu-py, with the same WGSL (``workloads/kernels/add.wgsl``), and writes a run folder
(``manifest.json`` + ``samples.jsonl``, RESULTS.md format) into ``--out``. Bring that folder back
and report it beside browser numbers with::

    webgpu-harness merge BROWSER_RUN_DIR OUT_DIR -o MERGED_DIR

Usage (from the repository root; no network needed)::

    python3 benchmarks/native_gpu.py --out /tmp/native-gpu [--n 1024] [--rounds 20] [--wheels .whl]

``--wheels DIR``: when ``import wgpu`` (or numpy) fails, the wheels in DIR that fit this Python
(``cpXY`` tags, or ``py3-none``) are unpacked into a temporary folder put first on ``sys.path``;
no pip and no network needed (wheels are zip files; wgpu's bundled ``libwgpu_native`` is loaded
from there).

Exit status: 0 when every cell is ok or skipped (no adapter: the reason is recorded), 1 when a
cell failed, 2 on bad input. It prints every adapter wgpu found and a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))



def unpack_wheels(wheel_dir: Path) -> list[str]:
    """Unpack the wheels of ``wheel_dir`` that fit this interpreter (``cp<major><minor>`` or
    ``py3``/``abi3``-tagged, linux x86_64 or any platform) into a temporary folder and put it first
    on ``sys.path``. Returns the names of the wheels used. Raises FileNotFoundError when the
    folder does not exist."""
    import tempfile
    import zipfile

    if not wheel_dir.is_dir():
        raise FileNotFoundError(f"--wheels {wheel_dir}: no such folder")
    cp = f"cp{sys.version_info.major}{sys.version_info.minor}"
    target = Path(tempfile.mkdtemp(prefix="native-gpu-site-"))
    used = []
    for whl in sorted(wheel_dir.glob("*.whl")):
        tags = whl.stem.split("-")[-3:]  # python tag, abi tag, platform tag
        python_ok = tags[0] in ("py3", cp) or tags[1] == "abi3"
        platform_ok = tags[2] == "any" or "x86_64" in tags[2]
        if python_ok and platform_ok:
            with zipfile.ZipFile(whl) as z:
                z.extractall(target)
            used.append(whl.name)
    sys.path.insert(0, str(target))
    return used


if "--wheels" in sys.argv:
    _dir = Path(sys.argv[sys.argv.index("--wheels") + 1]) if sys.argv.index("--wheels") + 1 < len(sys.argv) else None
    try:
        import numpy  # noqa: F401
        import wgpu  # noqa: F401
    except ImportError:
        if _dir is None:
            print("error: --wheels needs a folder", file=sys.stderr)
            sys.exit(2)
        print("using wheels: " + ", ".join(unpack_wheels(_dir)), flush=True)

from harness.native.bench import OptionError, parse_options  # noqa: E402
from harness.native.run import adapter_info, adapter_label, import_wgpu, run_cells, summary_rows  # noqa: E402
from harness.store.runfolder import RunFolder  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path, help="run folder to write (must not hold a run)")
    p.add_argument("--n", default="1024", help="dispatches per method-run (1..65536)")
    p.add_argument("--k", default="1,16,64,all", help="batched: dispatches per command buffer")
    p.add_argument("--rounds", default="20", help="rounds (round 0 is warm-up in the medians)")
    p.add_argument("--methods", default="single-op,sequential,batched,one-pass,phases,kernel")
    p.add_argument("--variant", default="fresh,reused", help="bind groups: fresh, reused")
    p.add_argument("--batched-pass", default="shared", choices=["shared", "per-dispatch"])
    p.add_argument("--single-op-sync", default="done", choices=["done", "map"])
    p.add_argument("--timestamp-query", default="auto", choices=["auto", "off"])
    p.add_argument("--elements", default="64", help="floats per buffer")
    p.add_argument("--adapter", default=None, help="substring of the adapter label to use (default: best GPU)")
    p.add_argument("--tag", default="", help="label for the cell ids (default: the adapter's name)")
    p.add_argument("--wheels", default=None, help="folder of wheels to use when wgpu/numpy are not installed")
    a = p.parse_args(argv)
    try:
        o = parse_options(variants=a.variant, n=a.n, rounds=a.rounds, methods=a.methods, k=a.k,
                          batched_pass=a.batched_pass, single_op_sync=a.single_op_sync,
                          timestamp_query=a.timestamp_query, elements=a.elements)
    except OptionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wgpu, why = import_wgpu()
    found = []
    if wgpu is None:
        print(f"wgpu: {why}", file=sys.stderr)
    else:
        try:
            found = [adapter_info(x) for x in wgpu.gpu.enumerate_adapters_sync()]
        except Exception as exc:  # reported, the run records the skip reason
            print(f"enumerating adapters failed: {exc}", file=sys.stderr)
        for info in found:
            print(f"adapter found: {adapter_label(info)}")
    try:
        folder = RunFolder(a.out, [sys.executable, *sys.argv], {"n": o.n, "k": o.batch_labels, "rounds": o.rounds,
                                                               "methods": o.methods, "variants": o.variants,
                                                               "elements": o.elements, "adapter": a.adapter,
                                                               "workloads": ["dispatch-overhead"]})
    except FileExistsError:
        print(f"error: {a.out} already holds a run; choose another --out", file=sys.stderr)
        return 2
    folder.manifest["adapters_found"] = found
    try:
        cells = run_cells(o, folder, a.adapter, host_tag=a.tag, progress=lambda m: print(m, flush=True))
    finally:
        folder.close()
    rows = summary_rows(a.out)
    print(json.dumps({"out": str(a.out), "cells": [{k: c[k] for k in ("cell", "adapter", "status", "reason")} for c in cells],
                      "median_us_per_dispatch": rows}, indent=2, default=str))
    return 1 if any(c["status"] == "failed" for c in cells) else 0


if __name__ == "__main__":
    sys.exit(main())
