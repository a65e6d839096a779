"""Re-record the real run folders the analysis tests read (tests/analysis/runs/<name>/, and
tests/analysis/app-runs/<name>/ for ``webgpu-harness app`` runs).

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
    # Chromium and WebKitGTK in one run (the engines side by side), memory sampled every 50 ms; no
    # memory budget (recorded when there was no default; keeps the no-budget case recorded)
    "mixed-decode-loop": ["-b", "chromium,webkit", "-w", "decode-loop", "-p", "tiny", "-n", "32", "--repeat", "2",
                          "--memory-interval-ms", "50", "--memory-budget", "none"],
    # Chromium: dispatch-overhead methods, fresh and reused bind groups, 3 rounds of N = 64
    "chromium-dispatch-overhead": ["-b", "chromium", "-w", "dispatch-overhead", "-n", "3", "--param", "n=64"],
    # Chromium: ort-run's conv-tiny, 3 session create/release cycles of 4 runs each (the per-cycle table)
    "chromium-ort-run": ["-b", "chromium", "-w", "ort-run", "-n", "4", "--param", "sessions=3", "--param", "settle_ms=400"],
    # Chromium: lifecycle, 3 page loads per variant (reload, navigate), 8 MiB and 16 dispatches per load
    "chromium-lifecycle": ["-b", "chromium", "-w", "lifecycle", "-n", "3", "--param", "buffer_mb=8",
                           "--param", "dispatches=16", "--param", "hold_ms=600", "--param", "away_ms=200"],
    # Chromium: the sync-latency methods, back-to-back and paced by setTimeout, in the worker and on the
    # page's main thread (a sweep: 4 cells)
    "chromium-sync-latency": ["-b", "chromium", "-w", "dispatch-overhead", "-v", "fresh", "-n", "3",
                              "--param", "n=4", "--param", "methods=sync-empty,sync-dispatch,sync-map",
                              "--param", "sync_iterations=12", "--param", "pacing=none,timeout",
                              "--param", "pace_ms=2", "--param", "main_thread=false,true"],
    # Chromium: upload of 256 B and 4 MiB on two paths (per-size tables, never pooled)
    "chromium-upload": ["-b", "chromium", "-w", "upload", "-v", "write-buffer,mapped-at-creation", "-n", "4",
                        "--param", "sizes=256,4194304"],
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
    # Chromium: the never-evicting reuse cache alone, 40 tokens, a forced collection every 5 tokens
    # (enough memory floors to project when the budget would be reached)
    "chromium-gc-cadence": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "40", "-v", "reuse",
                            "--param", "kv_buffers=recreate-drop", "--param", "bind_group_cache=never",
                            "--gc-checkpoints", "5"],
    # Chromium: the same code twice, one repetition each (an A/A comparison: no significant time difference)
    "aa-chromium-1": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "32", "-v", "fresh"],
    "aa-chromium-2": ["-b", "chromium", "-w", "decode-loop", "-p", "tiny", "-n", "32", "-v", "fresh"],
}


#: name → arguments of ``webgpu-harness app``, ``{apps}`` standing for the test apps' server
#: (tests/apps/server.py, started for the recording), and the exit status the run must end with
#: (not 0: its folder goes to app-runs/).
APP_RECORDINGS = {
    # Chromium: the main-thread compute test app, 4 steps, probes injected through CDP (an app's
    # steps are not tokens; every cell ok: kept in runs/)
    "chromium-app": (["{apps}/main-thread/?steps=4", "-b", "chromium", "--inject", "cdp", "--steps", "4"], 0),
    # Chromium, both injection paths: GPU work in the page and a worker (5 bind groups per step, 1 in
    # the page), all of it in an about:blank frame, all of it in a data: worker (not measured:
    # failed), a page that throws at once (failed with its error), a device lost and made again
    "chromium-app-realms": (["{apps}/page-and-worker/?steps=12", "{apps}/frames/?steps=12", "{apps}/data-worker/?steps=6",
                             "{apps}/throws/", "{apps}/device-again/?steps=6", "-b", "chromium", "--inject", "cdp,proxy", "--steps", "12",
                             "--start-timeout", "15", "--idle", "5", "--memory-interval-ms", "1000"], 1),
}


def _command(name: str, apps: str) -> tuple[list[str], int]:
    if name in APP_RECORDINGS:
        args, rc = APP_RECORDINGS[name]
        return ["app", *(a.replace("{apps}", apps) for a in args)], rc
    return ["run", *RECORDINGS[name]], 0


def record(name: str) -> Path:
    """Run recording ``name`` and keep its manifest.json and samples.jsonl. Returns the folder."""
    sys.path.insert(0, str(REPO / "tests" / "apps"))
    from server import Served, create_app

    with tempfile.TemporaryDirectory() as tmp, Served(create_app()) as apps:
        run = Path(tmp) / "run"
        args, want = _command(name, apps.url)
        proc = subprocess.run([sys.executable, "-m", "harness", *args, "--output", str(run)],
                              cwd=REPO, text=True, capture_output=True)
        if proc.returncode != want:
            raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        # recordings that end with failed cells on purpose are kept apart from the others
        # (tests/analysis/test_recorded_runs.py expects every cell of runs/ ok)
        out = HERE / ("app-runs" if want != 0 else "runs") / name
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for f in ("manifest.json", "samples.jsonl"):
            shutil.copy(run / f, out / f)
        shown = _command(name, "http://127.0.0.1:PORT")[0]
        (out / "COMMAND").write_text("webgpu-harness " + " ".join(shown) + "\n"
                                     "(re-record: .venv/bin/python tests/analysis/record.py " + name + ")\n")
    return out


if __name__ == "__main__":
    names = sys.argv[1:] or [*RECORDINGS, *APP_RECORDINGS]
    bad = [n for n in names if n not in RECORDINGS and n not in APP_RECORDINGS]
    if bad:
        raise SystemExit(f"unknown recording {bad[0]!r} (valid: {', '.join([*RECORDINGS, *APP_RECORDINGS])})")
    for n in names:
        print(record(n))
