"""Re-record the real run folders the analysis tests read (tests/analysis/runs/<name>/).

Each recording is one ``webgpu-harness run`` in a real browser; only its ``manifest.json`` and
``samples.jsonl`` are kept (everything else is derived by harness/pipeline.py). The analysis
tests assert values that follow from how each run was made (e.g. 42 bind groups per token for
decode-loop tiny ``fresh``), so re-recording on another machine keeps them passing.

    .venv/bin/python tests/analysis/record.py            # every recording
    .venv/bin/python tests/analysis/record.py NAME ...   # some of them
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

#: name → arguments of ``webgpu-harness run``.
RECORDINGS = {
    # Chromium, real WebGPU (SwiftShader here): fresh vs reuse, 2 repetitions, a memory budget
    "chromium-decode-loop": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "16", "--repeat", "2",
                             "--memory-budget", "400MB"],
    # WebKitGTK, emulated WebGPU (modeled native memory): decode-loop fresh vs reuse
    "webkit-decode-loop": ["-b", "webkit", "-w", "decode-loop", "-p", "tiny", "-n", "16", "--memory-budget", "2GB"],
    # WebKitGTK: gc-retention allocation patterns (collections and the field report beside them)
    "webkit-gc-retention": ["-b", "webkit", "-w", "gc-retention", "-v", "minimal,js-churn,force-gc", "-n", "24"],
    # Chromium and WebKitGTK in one run (the engines side by side), memory sampled every 50 ms
    "mixed-decode-loop": ["-b", "chromium,webkit", "-w", "decode-loop", "-p", "tiny", "-n", "32", "--repeat", "2",
                          "--memory-interval-ms", "50"],
    # Chromium: dispatch-overhead methods, fresh and reused bind groups, 3 rounds of N = 64
    "chromium-dispatch-overhead": ["-b", "chromium", "-w", "dispatch-overhead", "-n", "3", "--param", "n=64"],
    # Chromium: uploads of two sizes (a list parameter: never pooled) by writeBuffer and by a staging
    # buffer created and destroyed per upload (every buffer destroyed: never "retained growth")
    "chromium-upload-sizes": ["-b", "chromium", "-w", "upload", "-v", "write-buffer,mapped-at-creation", "-n", "12",
                              "--param", "sizes=256,4194304"],
    # WebKitGTK (GC rarely runs): a uniform buffer created and destroyed per dispatch; the wrappers
    # pile up uncollected while no buffer memory is kept
    "webkit-clean-destroy": ["-b", "webkit", "-w", "decode-loop", "-p", "tiny", "-n", "24", "-v", "fresh",
                             "--param", "uniform_buffers=per-dispatch"],
    # Chromium: the reuse bind group cache with KV buffers re-created every token, evicting and never
    # evicting (an unbounded cache: createBindGroup near zero while live bind groups keep growing)
    # (a forced collection every 5 tokens shows what a full GC leaves)
    "chromium-bind-group-cache": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "24", "-v", "reuse",
                                  "--param", "kv_buffers=recreate-drop", "--param", "bind_group_cache=evict,never",
                                  "--gc-checkpoints", "5"],
    # Chromium: the same code twice, one repetition each (an A/A comparison: no significant time difference)
    "aa-chromium-1": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "32", "-v", "fresh"],
    "aa-chromium-2": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "32", "-v", "fresh"],
}


def record(name: str) -> Path:
    """Run recording ``name`` and keep its manifest.json and samples.jsonl. Returns the folder."""
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        proc = subprocess.run([sys.executable, "-m", "harness", "run", *RECORDINGS[name], "--output", str(run)],
                              cwd=REPO, text=True, capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        out = HERE / "runs" / name
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for f in ("manifest.json", "samples.jsonl"):
            shutil.copy(run / f, out / f)
        (out / "COMMAND").write_text("webgpu-harness run " + " ".join(RECORDINGS[name]) + "\n"
                                     "(re-record: .venv/bin/python tests/analysis/record.py " + name + ")\n")
    return out


if __name__ == "__main__":
    names = sys.argv[1:] or list(RECORDINGS)
    bad = [n for n in names if n not in RECORDINGS]
    if bad:
        raise SystemExit(f"unknown recording {bad[0]!r} (valid: {', '.join(RECORDINGS)})")
    for n in names:
        print(record(n))
