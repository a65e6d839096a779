#!/usr/bin/env python3
"""The workloads on native Dawn (Node) on a GPU machine with no network, no Node and none of our
Python packages: what to carry, the one command there, and how to bring the run folder back.

Here (a clone after ``scripts/setup.sh``; needs xz-compressible files and ``apt-get download``)::

    python3 benchmarks/dawn_gpu.py pack CARRY_DIR        # ~45 MB: see "What is carried"

There (Python ≥ 3.11 with the standard library; psutil used when present), from the folder
holding CARRY_DIR::

    sh CARRY_DIR/run.sh OUT_DIR [paper|remedies|smoke]  # unpack, then the suite: OUT_DIR/dawn-SUITE.tar.gz

That writes an ordinary run folder (manifest.json + samples.jsonl, RESULTS.md) with no run
server (harness/native/dawn.py: the Dawn host appends the samples itself), tarred into
``OUT_DIR/dawn-SUITE.tar.gz`` beside ``OUT_DIR/dawn-SUITE.log``. Back here, unpack it, analyse
it and put it beside a local Chromium run::

    tar xzf dawn-paper.tar.gz && webgpu-harness report dawn-paper
    webgpu-harness run -b chromium -w dispatch-overhead,decode-loop -o chromium-run ...
    webgpu-harness merge chromium-run dawn-paper NATIVE_WGPU_RUN -o merged --label chromium-local --label dawn-h200 --label wgpu-h200
    python3 benchmarks/dawn_gpu.py table merged          # the paper's measures as Markdown

What is carried (``pack``): a copy of this clone's ``harness/``, ``web/``, ``workloads/`` (with
the ONNX fixtures), this script and the files the harness reads beside them; the Node binary
that runs here (``/usr/bin/node``, xz-compressed; it needs only glibc ≥ 2.28 and libstdc++);
the npm package ``webgpu`` with only its ``linux-x64/dawn.node`` (xz); onnxruntime-web's
``package.json`` and the files of its ``webgpu`` bundle (``ort.webgpu.bundle.min.mjs``,
``ort-wasm-simd-threaded.asyncify.{mjs,wasm}``, the wasm xz-compressed); and Debian's
``libvulkan1`` (the Vulkan loader) and libglvnd's packages, which NVIDIA's Vulkan driver loads
(unpacked into ``/`` there: a throwaway machine). The GPU's own Vulkan driver (ICD) is the
machine's (harness/drive/dawn.py looks in the loader's folders and NVIDIA's
``/usr/local/nvidia``).

Suites (``--suite``): ``paper`` — dispatch-overhead (every method, bind groups fresh and
reused, N = 1024, 12 rounds, 3 repetitions), decode-loop (every variant its manifest declares,
at ort-field-1.7b and qwen2.5-0.5b, 128 tokens, 4 repetitions), gc-retention (every variant,
128 tokens), ort-decode (qwen2-24l, every variant, 32 tokens) and ort-run (conv-tiny, every
variant, 16 runs);
``remedies`` — decode-loop ``fresh``, ``reuse``, ``dynamic-offset``, ``immediates`` and
``bind-group-cache`` (the field report's remedies and Chromium's immediates side by side) at both
profiles, 128 tokens, 3 repetitions;
``smoke`` — one short cell of each kind. Exit status: 0 when every cell is ok or skipped, 1
when one failed, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: Files and folders of the clone the run needs there (harness/locations.py DATA_ITEMS + code).
REPO_ITEMS = ("harness", "web", "workloads", "benchmarks/__init__.py", "benchmarks/dawn_gpu.py", "pyproject.toml",
              "RESULTS.md", "package.json", "package-lock.json", ".npmrc")
#: onnxruntime-web files of the ``webgpu`` bundle (workloads/lib/ort.js BUNDLES) and its metadata.
ORT_FILES = ("package.json", "dist/ort.webgpu.bundle.min.mjs", "dist/ort-wasm-simd-threaded.asyncify.mjs",
             "dist/ort-wasm-simd-threaded.asyncify.wasm")
#: Debian packages carried: the Vulkan loader, and libglvnd's libraries, which NVIDIA's Vulkan
#: driver (libGLX_nvidia.so.0, named by its ICD manifest) loads (the device notes' list).
DEBS = ("libvulkan1", "libglvnd0", "libegl1", "libopengl0", "libgl1", "libglx0", "libgles2")
#: Carried files above this size are xz-compressed (the device tool carries at most 64 MiB).
COMPRESS_OVER = 4 << 20


#: The remedies of issue 21 beside the two baselines (workloads/decode-loop/manifest.json).
REMEDIES = ("fresh", "reuse", "dynamic-offset", "immediates", "bind-group-cache")


def suite(name: str):
    """The cells of a suite (module docstring) as harness.native.dawn Selections."""
    from harness.native.dawn import Selection

    if name == "smoke":
        return [Selection("dispatch-overhead", tokens=2, params={"n": 64}, variants=["fresh"]),
                Selection("decode-loop", variants=["fresh"], tokens=4),
                Selection("ort-run", tokens=2)]
    if name == "remedies":
        return [Selection("decode-loop", variants=list(REMEDIES), profile=profile, tokens=128, repeat=3)
                for profile in ("ort-field-1.7b", "qwen2.5-0.5b")]
    if name != "paper":
        raise ValueError(f"unknown suite {name!r} (valid: paper, remedies, smoke)")
    out = [Selection("dispatch-overhead", tokens=12, params={"n": 1024}, repeat=3)]
    for profile in ("ort-field-1.7b", "qwen2.5-0.5b"):
        out.append(Selection("decode-loop", variants=["all"], profile=profile, tokens=128, repeat=4))
    out += [Selection("gc-retention", variants=["all"], tokens=128),
            Selection("ort-decode", variants=["all"], profile="qwen2-24l", tokens=32),
            Selection("ort-run", variants=["all"], tokens=16)]
    return out


def _xz(src: Path, dst: Path) -> None:
    """``src`` xz-compressed into ``dst``; compressed once per file version (a cache in the temp
    folder keyed by path, size and mtime: Node's 95 MB take minutes on a busy machine)."""
    import hashlib
    import tempfile

    st = src.stat()
    key = hashlib.sha256(f"{src.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:20]
    cached = Path(tempfile.gettempdir()) / "webgpu-harness-dawn-pack" / f"{key}.xz"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        part = cached.with_suffix(".part")
        with src.open("rb") as fin, lzma.open(part, "wb", preset=6) as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
        part.rename(cached)
    shutil.copy2(cached, dst)


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.stat().st_size > COMPRESS_OVER:
        _xz(src, dst.with_name(dst.name + ".xz"))
    else:
        shutil.copy2(src, dst)


def pack(into: Path, node: str | None, deb: Path | None) -> int:
    """Fill ``into`` with what the GPU machine needs (module docstring); returns 0."""
    from harness import locations, npm
    from harness.drive.dawn import find_node, find_package

    node_exe, node_version = find_node(node)
    pkg, pkg_version, binary = find_package()
    ort_dir, _place = npm.find("onnxruntime-web")
    if into.exists():
        shutil.rmtree(into)
    repo = into / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "node_modules", "dist")
    for item in REPO_ITEMS:
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, repo / item, ignore=ignore if item != "web" else shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            (repo / item).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / item)
    wg = repo / "node_modules" / "webgpu"
    wg.mkdir(parents=True)
    for f in ("package.json", "index.js", "LICENSE.md"):
        shutil.copy2(pkg / f, wg / f)
    _copy(binary, wg / "dist" / "linux-x64" / "dawn.node")
    for f in ORT_FILES:
        _copy(ort_dir / f, repo / "node_modules" / "onnxruntime-web" / f)
    _copy(Path(node_exe), into / "bin" / "node")
    debs = into / "debs"
    debs.mkdir()
    if deb:
        for d in deb:
            shutil.copy2(d, debs / d.name)
    else:
        arch = ["-oAPT::Architecture=amd64", "-oAPT::Architectures=amd64"]
        subprocess.run(["apt-get", *arch, "download", *DEBS], cwd=debs, check=True, capture_output=True)
    commit = locations.git_commit()
    (into / "PACKED.json").write_text(json.dumps({
        "packed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "git_commit": commit,
        "node": node_version, "webgpu": pkg_version, "onnxruntime_web": json.loads((ort_dir / "package.json").read_text())["version"],
        "debs": sorted(p.name for p in debs.iterdir())}, indent=2))
    (into / "run.sh").write_text(f"""#!/bin/sh
# Made by benchmarks/dawn_gpu.py pack (commit {commit}): the Dawn suite on this machine.
# usage: sh {into.name}/run.sh OUT_DIR [paper|remedies|smoke]
# The run folder is written under $TMPDIR (default /tmp); OUT_DIR gets dawn-SUITE.tar.gz (the
# folder) and dawn-SUITE.log (everything printed): two files per suite.
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${{1:?usage: run.sh OUT_DIR [paper|remedies|smoke]}}
SUITE=${{2:-paper}}
RUNS=${{TMPDIR:-/tmp}}/dawn-runs
mkdir -p "$OUT" "$RUNS"
python3 "$HERE/repo/benchmarks/dawn_gpu.py" unpack "$HERE" 2>&1 | tee -a "$OUT/dawn-$SUITE.log"
# LIMIT (s): stop the suite then and bring back what it wrote (cells left pending read as failed)
timeout "${{LIMIT:-86400}}" python3 -u "$HERE/repo/benchmarks/dawn_gpu.py" run --carried "$HERE" --out "$RUNS/dawn-$SUITE" --suite "$SUITE" 2>&1 | tee -a "$OUT/dawn-$SUITE.log"
tar czf "$OUT/dawn-$SUITE.tar.gz" -C "$RUNS" "dawn-$SUITE" || echo "no run folder to bring back" | tee -a "$OUT/dawn-$SUITE.log"
""")
    size = sum(p.stat().st_size for p in into.rglob("*") if p.is_file())
    print(f"packed {into}: {size / 2**20:.1f} MiB (node {node_version}, webgpu {pkg_version}, commit {commit})")
    return 0


def unpack(carried: Path, install_debs: bool = True) -> int:
    """Decompress the ``.xz`` files of ``carried`` in place and, with ``install_debs``, unpack
    the carried .deb files into ``/`` (then ldconfig): a throwaway machine's, as root."""
    for xz in carried.rglob("*.xz"):
        out = xz.with_suffix("")
        if not out.exists():
            with lzma.open(xz) as fin, out.open("wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
    (carried / "bin" / "node").chmod(0o755)
    from harness.drive.dawn import system_has_vulkan_loader

    have = system_has_vulkan_loader()
    if install_debs:
        for deb in sorted((carried / "debs").glob("*.deb")):
            subprocess.run(["dpkg", "-x", str(deb), "/"], check=True)
        subprocess.run([shutil.which("ldconfig") or "/sbin/ldconfig"], check=False)
    debs = ", ".join(p.name for p in sorted((carried / "debs").glob("*.deb")))
    print(f"unpacked {carried}; Vulkan loader before: {'the system' + chr(39) + 's' if have else 'none'}; "
          f"{'installed ' + debs if install_debs else 'no packages installed (--no-debs)'}", flush=True)
    return 0


def run(carried: Path | None, out: Path, suite_name: str, node: str | None, package: str | None,
        step_timeout_s: float) -> int:
    """Run a suite with harness/native/dawn.py into ``out`` (run.sh tars it for the way back)."""
    from harness.native.dawn import run_offline

    try:
        selections = suite(suite_name)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ort = None
    if carried is not None:
        node = node or str(carried / "bin" / "node")
        package = package or str(carried / "repo" / "node_modules" / "webgpu")
        ort = carried / "repo" / "node_modules" / "onnxruntime-web"
    t0 = time.monotonic()
    packed = carried / "PACKED.json" if carried is not None else None
    extra = {"packed": json.loads(packed.read_text())} if packed is not None and packed.exists() else {}
    try:
        cells = run_offline(out, selections, [sys.executable, *sys.argv], node=node, package_dir=package,
                            ort_package=ort, step_timeout_s=step_timeout_s, progress=lambda m: print(m, flush=True),
                            manifest_extra=extra)
    except FileExistsError:
        print(f"error: {out} already holds a run; choose another --out", file=sys.stderr)
        return 2
    counts: dict[str, int] = {}
    for c in cells:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    print(json.dumps({"out": str(out), "seconds": round(time.monotonic() - t0, 1), "status": counts,
                      "not ok": [{k: c[k] for k in ("cell", "status", "reason")} for c in cells if c["status"] != "ok"]},
                     indent=2))
    return 1 if any(c["status"] not in ("ok", "skipped") for c in cells) else 0


def _fmt(x, digits: int = 1) -> str:
    return "—" if x is None or x != x else f"{x:,.{digits}f}"


def paper_table(run_dir: Path) -> str:
    """Here (pandas): the dispatch-overhead paper's measures read from a run folder (any engine,
    any machine; a merged folder gives one row per machine × browser), as Markdown — the numbers
    of the report's "Dispatch overhead" section (harness/stats/workloads/dispatch_overhead.py),
    pooled over repetitions (the mean of per-cell means; ± their spread)."""
    import statistics

    from harness import tables
    from harness.report.format import provenance
    from harness.stats.workloads import dispatch_overhead as D

    t = tables.build(run_dir)
    n = D.numbers(t) or {"methods": [], "phases": [], "fusion": []}

    def key(row) -> str:
        return f"{row.get('machine') + ': ' if isinstance(row.get('machine'), str) else ''}{row['browser']} · {row.get('adapter')}"

    def pooled(vals):
        vals = [v for v in vals if v is not None and v == v]
        if not vals:
            return "—"
        m = statistics.mean(vals)
        return f"{m:,.1f}" + (f" (±{(max(vals) - min(vals)) / 2:,.1f}, {len(vals)} cells)" if len(vals) > 1 else "")

    out = ["### µs per dispatch by method (mean over rounds after warm-up)", "",
           "| engine · adapter | bind groups | " + " | ".join(D.METHOD_ORDER[:-1]) + " | kernel only | single-op ÷ sequential |",
           "| --- | --- |" + " --- |" * (len(D.METHOD_ORDER) + 1)]
    groups: dict[tuple, list] = {}
    for m in n["methods"]:
        groups.setdefault((key(m["row"]), m["row"]["variant"]), []).append(m)
    for (k, variant), ms in groups.items():
        cols = [pooled([m["per"].get(c, (None,))[0] for m in ms]) for c in D.METHOD_ORDER[:-1]]
        kern = pooled([(m["kernel"]["us"] or (None,))[0] for m in ms])
        out.append(f"| {k} | {variant} | " + " | ".join(cols) + f" | {kern} | {pooled([m['factor'][0] for m in ms])}× |")
    out += ["", "### Per-phase split of the sequential method (µs per call; share of the sum)", "",
            "| engine · adapter | bind groups | submit | createCommandEncoder + finish | setBindGroup | setPipeline | "
            "createBindGroup | beginComputePass + end | dispatchWorkgroups | sum |", "| --- | --- |" + " --- |" * 8]
    pgroups: dict[tuple, list] = {}
    for p in n["phases"]:
        pgroups.setdefault((key(p["row"]), p["row"]["variant"]), []).append(p)
    for (k, variant), ps in pgroups.items():
        def ph(*names):
            vals = [sum(p["phases"].get(x) or 0 for x in names) for p in ps]
            total = statistics.mean(p["sum"] for p in ps)
            v = statistics.mean(vals)
            return f"{v:,.2f} ({100 * v / total:.0f}%)" if total else "—"
        out.append(f"| {k} | {variant} | {ph('submit')} | {ph('create_command_encoder', 'finish')} | {ph('set_bind_group')} | "
                   f"{ph('set_pipeline')} | {ph('create_bind_group')} | {ph('begin_compute_pass', 'end')} | "
                   f"{ph('dispatch_workgroups')} | {statistics.mean(p['sum'] for p in ps):,.2f} |")
    out += ["", "### decode-loop: fusion and bind group reuse (medians over tokens after the first; one row per repetition)", "",
            "| engine · adapter | profile | pair | dispatches / token | ms / token | tokens / s | speedup | tokens identical | "
            "CPU ms / token (to last submit) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for f in n["fusion"]:
        out.append(f"| {key(f['row'])} | {f['profile']} | {f['pair']} | {_fmt(f['dispatches'][0], 0)} → {_fmt(f['dispatches'][1], 0)} | "
                   f"{_fmt(f['ms'][0], 2)} → {_fmt(f['ms'][1], 2)} | {_fmt(f['tps'][0])} → {_fmt(f['tps'][1])} | "
                   f"{_fmt(f['speedup'], 2)}× | {f['identical']} | {_fmt(f['cpu_ms'][0], 2)} → {_fmt(f['cpu_ms'][1], 2)} |")
    s = t.summary
    out += ["", "### Bind group reuse and the bind group cache: CPU ms per token saved", "",
            "| engine · adapter | workload · profile | pair | bind groups / token | CPU ms / token | saved CPU ms / token | ms / token |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for wl, a, b in (("decode-loop", "fresh", "reuse"), ("decode-loop", "fused", "fused-reuse"),
                     ("ort-decode", "default", "bind-group-cache"), ("ort-run", "default", "bind-group-cache")):
        d = s[(s["workload"] == wl) & (s["status"] == "ok")]
        for (mach, br, prof), g in d.groupby([d.get("machine", d["browser"]).fillna(""), "browser", d["profile"].fillna("")]):
            ga, gb = g[g["variant"] == a], g[g["variant"] == b]
            if not len(ga) or not len(gb):
                continue
            ca, cb = ga["median_cpu_ms_per_token"].mean(), gb["median_cpu_ms_per_token"].mean()
            out.append(f"| {key(ga.iloc[0])} | {wl} · {prof or '—'} | {a} → {b} | {_fmt(ga['bind_groups_per_token'].mean(), 0)} → "
                       f"{_fmt(gb['bind_groups_per_token'].mean(), 0)} | {_fmt(ca, 2)} → {_fmt(cb, 2)} | {_fmt(ca - cb, 2)} "
                       f"({len(ga)}+{len(gb)} cells) | {_fmt(ga['median_ms_per_token'].mean(), 2)} → {_fmt(gb['median_ms_per_token'].mean(), 2)} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("pack", help="here: fill CARRY_DIR with what the GPU machine needs")
    a.add_argument("into", type=Path)
    a.add_argument("--node", default=None, help="the Node binary to carry (default: node on PATH)")
    a.add_argument("--deb", type=Path, action="append", default=None,
                   help="a .deb to carry (repeatable; default: apt-get download of DEBS: libvulkan1 and libglvnd's)")
    u = sub.add_parser("unpack", help="there: decompress and, if needed, install the Vulkan loader")
    u.add_argument("carried", type=Path)
    u.add_argument("--no-debs", action="store_true", help="never unpack the .deb files into / (a machine of others)")
    r = sub.add_parser("run", help="there (or here): the suite into --out")
    r.add_argument("--out", type=Path, required=True, help="run folder to write (must not hold a run)")
    r.add_argument("--suite", default="paper", help="paper, remedies or smoke")
    r.add_argument("--carried", type=Path, default=None, help="the unpacked CARRY_DIR (Node, the package, onnxruntime-web)")
    r.add_argument("--node", default=None, help="Node binary (default: the carried one, else node on PATH)")
    r.add_argument("--webgpu", default=None, help="folder of the npm package webgpu (default: carried, else found)")
    r.add_argument("--step-timeout-s", type=float, default=300.0, help="fail a cell after this long without a new sample")
    tb = sub.add_parser("table", help="here: the paper's measures of a run folder as Markdown (needs pandas)")
    tb.add_argument("run_dir", type=Path)
    args = p.parse_args(argv)
    if args.command == "table":
        print(paper_table(args.run_dir), end="")
        return 0
    if args.command == "pack":
        return pack(args.into, args.node, args.deb)
    if args.command == "unpack":
        return unpack(args.carried, install_debs=not args.no_debs)
    return run(args.carried, args.out, args.suite, args.node, args.webgpu, args.step_timeout_s)


if __name__ == "__main__":
    sys.exit(main())
