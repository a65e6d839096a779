"""Cells on native Dawn in Node with no run server: straight to ``samples.jsonl``.

For a machine that has Node, the npm package ``webgpu`` and this repository but none of our
Python packages (a GPU machine with no network: ``benchmarks/dawn_gpu.py``). The cells are the
ones ``webgpu-harness run -b dawn`` makes (harness/drive/dawn.py): the same host
(``web/dawn/host.js``), the browser worker's bootstrap, probes and workload code, one Node
process per cell; the host, started with ``--offline``, answers the bootstrap's config request
itself and appends each posted sample to ``samples.jsonl`` as the run server's store would
(``seq``, ``cell``, ``received_s``, ``src``, ``queue``; RESULTS.md). This module writes the
manifest and each cell's ``cell_status`` (harness/store/runfolder.py).

What differs from a run through the server, and is said in the manifest: samples are not
validated by the server's schema (the same code makes them); no harness-side memory sampling
(``memory`` says so); a cell fails when its process dies or makes no progress (``samples.jsonl``
does not grow) for ``step_timeout_s``.

Cell configs mirror :func:`harness.drive.runner.cell_config` without pydantic
(:func:`cell_config`; tests/e2e/test_dawn.py compares them). Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import locations
from harness.drive.base import BrowserNotFound
from harness.drive.base import adapter_text
from harness.drive.dawn import DRIVER, LABEL, NAME, DawnLocated, exit_text, host_command, locate_dawn, version_text
from harness.store.runfolder import RunFolder

#: Seconds a cell may go without a new line in samples.jsonl before it is failed.
STEP_TIMEOUT_S = 180.0
#: Workloads that load onnxruntime-web (as harness/plan.py ORT_WORKLOADS).
ORT_WORKLOADS = ("ort-decode", "ort-run")
MEMORY = "not sampled: the offline runner (harness/native/dawn.py) has no harness-side memory sampler"


class OfflineError(ValueError):
    """A bad selection (unknown workload, variant or profile); the message names the valid ones."""


@dataclass
class Selection:
    """One workload's cells: ``variants`` (None: its default variants; ``["all"]``: every variant
    its manifest declares), ``profile`` (None: its
    default), ``params`` (overrides of its declared parameters' defaults), ``tokens``, ``repeat``."""

    workload: str
    variants: list[str] | None = None
    profile: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    tokens: int = 64
    repeat: int = 1
    seed: int = 1


def workload_manifest(name: str, workloads_dir: Path | None = None) -> dict[str, Any]:
    """``workloads/<name>/manifest.json`` (workloads/README.md). Raises :class:`OfflineError`."""
    folder = Path(workloads_dir or locations.workloads_dir())
    path = folder / name / "manifest.json"
    if not path.is_file():
        names = sorted(p.parent.name for p in folder.glob("*/manifest.json"))
        raise OfflineError(f"unknown workload {name!r} (valid: {', '.join(names)})")
    return json.loads(path.read_text(encoding="utf-8"))


def cell_config(cell: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """What ``GET /api/cells/<cell>`` answers for ``cell`` (a manifest cell with ``params``): as
    :func:`harness.drive.runner.cell_config` for a plan without --model or emulation options."""
    profile = dict((manifest.get("profiles") or {}).get(cell["profile"], {})) if cell["profile"] else {}
    profile.update({k: v for k, v in cell["params"].items() if k in profile})
    return {
        "cell": cell["cell"],
        "entry_url": f"/workloads/{manifest['name']}/{manifest.get('entry', 'main.js')}",
        "probes": bool(cell["params"].get("probes", True)),
        "webgpu": "auto",
        "emulation_module": "/web/emulation/webgpu-emulated.js",
        "emulation_options": {"limits": "webkit-apple7"},
        "params": {**cell["params"], "workload": manifest["name"], "variant": cell["variant"],
                   "profileName": cell["profile"], "profile": profile, "tokens": cell["tokens"], "seed": cell["seed"]},
        # as the runner's: the configuration, the repetition and the --param values given
        "sweep": dict(cell.get("sweep") or {}),
        "repetition": cell["repetition"],
        "given_params": {k: cell["params"][k] for k in cell.get("given_params", ()) if k in cell["params"]},
    }


def plan_cells(selections: list[Selection], ort: dict[str, Any] | None = None,
               workloads_dir: Path | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(manifest cell, workload manifest)`` for every selection × variant × repetition, in the
    runner's round-robin order per workload; ``ort`` (``{ortDist, ortVersion, ortSource}``) is
    given to the ORT workloads. Raises :class:`OfflineError` for an unknown name."""
    out = []
    for sel in selections:
        m = workload_manifest(sel.workload, workloads_dir)
        variants = (list(m.get("variants", {})) if sel.variants == ["all"]
                    else sel.variants or m.get("default_variants") or list(m.get("variants", {})))
        bad = [v for v in variants if v not in m.get("variants", {})]
        if bad:
            raise OfflineError(f"unknown variant {bad[0]!r} of {sel.workload} (valid: {', '.join(m['variants'])})")
        profile = sel.profile or m.get("default_profile")
        if profile and profile not in (m.get("profiles") or {}):
            raise OfflineError(f"unknown profile {profile!r} of {sel.workload} (valid: {', '.join(m['profiles'])})")
        declared = m.get("parameters") or {}
        unknown = [k for k in sel.params if k not in declared and k not in (m.get("profiles") or {}).get(profile or "", {})]
        if unknown:
            raise OfflineError(f"unknown parameter {unknown[0]!r} of {sel.workload} (valid: {', '.join(declared)})")
        params = {**{k: p.get("default") for k, p in declared.items()}, **sel.params}
        if sel.workload in ORT_WORKLOADS and ort:
            params = {**params, **{k: v for k, v in ort.items() if k not in sel.params}}
        for rep in range(sel.repeat):
            for variant in variants:
                cid = f"{NAME}.{sel.workload}.{variant}.{profile or 'default'}.r{rep}"
                cell = {"cell": cid, "browser": NAME, "workload": sel.workload, "variant": variant, "profile": profile,
                        "tokens": sel.tokens, "repetition": rep, "seed": sel.seed, "params": dict(params),
                        "browser_version": "", "adapter": "", "webgpu": "", "status": "pending", "reason": "",
                        "sweep": {}, "driver": DRIVER, "endpoint": "", "platform": "", "memory": MEMORY,
                        "given_params": sorted(sel.params)}
                out.append((cell, m))
    return out


def roots(located: DawnLocated | None, ort_dist: Path | None, ort_key: str | None) -> dict[str, str]:
    """URL prefix → folder, as the run server's (harness/serve/app.py default_roots plus the
    onnxruntime-web ``ort/<version>`` root of harness/plan.py engine_params)."""
    out = {"web": str(locations.web_dir()), "workloads": str(locations.workloads_dir())}
    if located is not None:
        out[f"node_modules/{Path(located.package_dir).name}"] = located.package_dir
    if ort_dist is not None and ort_key:
        out[f"ort/{ort_key}"] = str(ort_dist)
        out["node_modules/onnxruntime-web"] = str(Path(ort_dist).parent)
    return out


def _last_seq(path: Path) -> int:
    seq = 0
    if path.exists():
        with path.open("rb") as fh:
            for line in fh:
                try:
                    seq = max(seq, int(json.loads(line).get("seq", 0)))
                except (ValueError, AttributeError):
                    continue
    return seq


def _cell_samples(path: Path, cid: str, after_seq: int) -> list[dict[str, Any]]:
    out = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                s = json.loads(line)
            except ValueError:
                continue
            if isinstance(s, dict) and s.get("cell") == cid and int(s.get("seq", 0)) > after_seq:
                out.append(s)
    return out


def run_cell(folder: RunFolder, located: DawnLocated, cell: dict[str, Any], manifest: dict[str, Any],
             root_map: dict[str, str], step_timeout_s: float = STEP_TIMEOUT_S,
             dawn_flags: list[str] | None = None) -> tuple[str, str]:
    """Run one cell in its own Node process; returns ``(status, reason)`` (ok, failed, skipped,
    device-lost) and leaves its samples in ``folder``."""
    samples = folder.samples_path
    start_seq = _last_seq(samples)
    with tempfile.TemporaryDirectory(prefix="dawn-cell-") as tmp:
        launch = Path(tmp) / "launch.json"
        launch.write_text(json.dumps({"cell": cell["cell"], "config": cell_config(cell, manifest), "roots": root_map,
                                      "samples": str(samples), "seq_start": start_seq,
                                      "t0_epoch_s": folder.started_epoch_s}))
        log = Path(tmp) / "host.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(host_command(located, "--offline", str(launch), dawn_flags=dawn_flags),
                                    env={**os.environ, **located.env}, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            size, last = -1, time.monotonic()
            timed_out = False
            while proc.poll() is None:
                time.sleep(0.5)
                now_size = samples.stat().st_size if samples.exists() else 0
                if now_size != size:
                    size, last = now_size, time.monotonic()
                elif time.monotonic() - last > step_timeout_s:
                    timed_out = True
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    proc.wait()
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-2:])
    folder.sync_seq()
    got = _cell_samples(samples, cell["cell"], start_seq)
    env = next((s for s in got if s.get("kind") == "env"), None)
    if env:
        cell["adapter"] = adapter_text(env.get("adapter") or {})
        cell["webgpu"] = env.get("webgpu", "")
    steps = sum(1 for s in got if s.get("kind") == "step")
    end = next((s for s in reversed(got) if s.get("kind") in ("done", "error", "skip")), None)
    lost = next((s for s in got if s.get("kind") == "device_lost"), None)
    if timed_out:
        status, reason = "failed", (f"timed out: no new sample for {step_timeout_s:.0f} s; node (pid {proc.pid}) killed; "
                                    f"{steps} steps were received and kept")
    elif proc.returncode != 0:
        status, reason = "failed", (f"node (pid {proc.pid}, {LABEL}) exited with {exit_text(proc.returncode)}"
                                    f"{': ' + tail if tail else ''}; {steps} steps were received and kept")
    elif end is None:
        status, reason = "failed", f"the host exited without the cell's end ({tail or 'no output'})"
    elif end["kind"] == "skip":
        status, reason = "skipped", str(end.get("reason", ""))
    elif end["kind"] == "error":
        status, reason = "failed", f"workload error: {end.get('message', '')}"
    else:
        status, reason = "ok", ""
    if lost is not None and status != "skipped":
        where = "before the first step" if lost.get("step") is None else f"at step {lost['step']}"
        status, reason = "device-lost", f"device lost {where} ({lost.get('reason')}: {lost.get('message')}); then {reason or 'the workload finished'}"
    return status, reason


def run_offline(run_dir: Path, selections: list[Selection], argv: list[str], node: str | None = None,
                package_dir: str | Path | None = None, ort_package: str | Path | None = None,
                step_timeout_s: float = STEP_TIMEOUT_S, dawn_flags: list[str] | None = None,
                progress: Callable[[str], None] = lambda m: None,
                manifest_extra: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run every selected cell into the new run folder ``run_dir``; returns the manifest cells.
    ``manifest_extra`` is added to ``manifest.json`` before the first cell (what was carried).
    A missing Node, package or adapter skips every cell with the reason. Raises
    :class:`OfflineError` for a bad selection and ``FileExistsError`` for a folder holding a run."""
    ort = ort_dist = ort_key = None
    if any(s.workload in ORT_WORKLOADS for s in selections):
        from harness.engines import EngineError, ort_from_path

        try:
            inst = ort_from_path(ort_package or Path(locations.data_root()) / "node_modules" / "onnxruntime-web")
            ort_dist, ort_key = inst.dist, inst.key
            ort = {"ortDist": inst.dist_url, "ortVersion": inst.version, "ortSource": f"{inst.source}: {inst.dist}"}
        except EngineError as exc:
            ort = {"ortDist": "/ort/missing/", "ortVersion": "missing", "ortSource": str(exc)}
    planned = plan_cells(selections, ort)
    try:
        located, why = locate_dawn(node, package_dir), ""
    except BrowserNotFound as exc:
        located, why = None, str(exc)
    params = {"browsers": [NAME], "workloads": list(dict.fromkeys(s.workload for s in selections)),
              "variants": {s.workload: s.variants for s in selections}, "profiles": {s.workload: s.profile for s in selections},
              "tokens": max(s.tokens for s in selections), "repeat": max(s.repeat for s in selections),
              "tokens_by_workload": {s.workload: s.tokens for s in selections},
              "repeat_by_workload": {s.workload: s.repeat for s in selections},
              "params": {s.workload: s.params for s in selections}, "probes": True, "webgpu": "real",
              "delivery": "offline: samples appended by web/dawn/host.js --offline (no run server)",
              "step_timeout_s": step_timeout_s, "dawn_flags": list(dawn_flags or [])}
    folder = RunFolder(run_dir, argv, params)
    folder.manifest["browsers"][NAME] = located.__dict__ if located else {"name": NAME, "engine": LABEL, "missing": why}
    folder.manifest.update(manifest_extra or {})
    folder.write_manifest()
    progress(f"{LABEL}: " + (f"{version_text(located)}, adapter {adapter_text(located.adapter)} "
                             f"({located.adapter.get('description', '')}); {'; '.join(located.notes[2:])}"
                             if located else f"missing: {why}"))
    root_map = roots(located, ort_dist, ort_key)
    cells = []
    try:
        for cell, manifest in planned:
            folder.add_cell(cell)
            progress(f"{cell['cell']}: start")
            if located is None:
                status, reason = "skipped", why
                folder.append(cell["cell"], {"kind": "skip", "reason": why})
            else:
                cell["browser_version"] = version_text(located)
                if ort and ort.get("ortVersion") == "missing" and cell["workload"] in ORT_WORKLOADS:
                    status, reason = "skipped", ort["ortSource"]
                    folder.append(cell["cell"], {"kind": "skip", "reason": reason})
                else:
                    status, reason = run_cell(folder, located, cell, manifest, root_map, step_timeout_s, dawn_flags)
            folder.append(cell["cell"], {"kind": "cell_status", "status": status, "reason": reason})
            cell.update(status=status, reason=reason)
            folder.update_cell(cell["cell"], **cell)
            progress(f"{cell['cell']}: {status}{' ' + reason if reason else ''}")
            cells.append(cell)
    finally:
        folder.close()
    return cells
