"""The run folder on disk (RESULTS.md): the seam between measuring and analysing.

Reading: :func:`check_run_folder`, :func:`read_manifest`, :func:`read_samples` — what every
analysis (tables, ``report``, ``compare``, ``merge``) starts from. Writing outside the browser
runner: :class:`RunFolder` (``webgpu-harness native`` and ``benchmarks/native_gpu.py``); the
browser runner streams through :class:`harness.store.store.SampleStore`.

Only the standard library is used (the GPU machine's ``benchmarks/native_gpu.py`` has nothing
but wgpu and numpy); the environment block comes from ``harness.store.environment`` when its
dependencies (psutil) are importable, else from ``platform``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from harness import __version__


class RunFolderError(ValueError):
    """A folder that is not a readable run folder; the message names it and what is missing."""


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """``manifest.json`` of ``run_dir``. Raises :class:`RunFolderError` when the folder or the file
    is missing, or the file is not JSON."""
    run_dir = Path(run_dir)
    path = run_dir / "manifest.json"
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} is not a run folder (no such folder)")
    if not path.exists():
        raise RunFolderError(f"{run_dir} is not a run folder (no manifest.json)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunFolderError(f"{path} is not readable JSON ({exc})") from None


def check_run_folder(run_dir: Path) -> dict[str, Any]:
    """The manifest of a complete run folder: manifest.json with a list of cells (each with a
    ``cell`` id) and samples.jsonl. Raises :class:`RunFolderError` otherwise."""
    run_dir = Path(run_dir)
    doc = read_manifest(run_dir)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and "cell" in c for c in cells):
        raise RunFolderError(f"{run_dir / 'manifest.json'} has no list of cells with ids: not a webgpu-harness run")
    if not (run_dir / "samples.jsonl").exists():
        raise RunFolderError(f"{run_dir} has no samples.jsonl: not a complete run folder")
    return doc


#: Fields of a sample that are JSON objects when present (web/probes/, RESULTS.md).
OBJECT_FIELDS = ("counters", "live", "emulation", "extra", "adapter", "result")


def not_a_sample(s: Any) -> str | None:
    """Why a parsed line of samples.jsonl cannot be read as a sample (not an object, a step
    without an integer ``step``, an object field that is not one), else None."""
    if not isinstance(s, dict):
        name = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(s), "null")
        return f"a JSON {name}, not an object"
    if s.get("kind") == "step" and (not isinstance(s.get("step"), int) or isinstance(s.get("step"), bool)):
        return "a step without an integer step"
    for k in OBJECT_FIELDS:  # the common case, every field an object or absent, without building a list
        v = s.get(k)
        if v is not None and not isinstance(v, dict):
            bad = [k for k in OBJECT_FIELDS if s.get(k) is not None and not isinstance(s[k], dict)]
            return f"{', '.join(bad)} not an object"
    return None


def read_samples(run_dir: Path, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """Every sample of ``samples.jsonl`` in file order. A line that is not one (torn by a crash
    mid-write, bytes that are not UTF-8, an edited line: :func:`not_a_sample`) is left out and,
    with ``skipped``, said there (``line N: why``). Empty when the file is missing."""
    out = []
    path = Path(run_dir) / "samples.jsonl"
    if not path.exists():
        return out
    with path.open(encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh, 1):
            try:
                s = from_json(line, cache_strings="keys")  # pydantic's parser: json.loads' values, ~2× faster
            except ValueError:
                why = "not JSON (torn or edited)"
            else:
                why = not_a_sample(s)
                if why is None:
                    out.append(s)
                    continue
            if skipped is not None:
                skipped.append(f"line {i}: {why}")
    return out


def describe_environment() -> dict[str, Any]:
    """The manifest's environment block (harness version, commit, install, OS, CPU, Python)."""
    try:
        from harness.store import environment

        return environment.describe()
    except ImportError:
        cpu = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as fh:
                cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
        except OSError:
            pass
        from harness import locations  # standard library only

        return {"harness_version": __version__, "git_commit": locations.git_commit(),
                "harness_install": locations.install_kind(),
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "os": f"{platform.system()} {platform.release()} ({platform.platform()})",
                "cpu": cpu, "cpu_count": os.cpu_count(), "memory_bytes": None,
                "python": platform.python_version()}


class RunFolder:
    """Writes one run folder. ``append=True`` adds cells to a folder that already holds a run
    (its manifest's cells are kept, samples appended after its last ``seq``).

    Raises ``FileExistsError`` when the folder holds a run and ``append`` is false, and
    ``ValueError`` when a cell id is already present.
    """

    def __init__(self, run_dir: Path, argv: list[str], parameters: dict[str, Any], append: bool = False):
        self.dir = Path(run_dir)
        self.samples_path = self.dir / "samples.jsonl"
        self.manifest_path = self.dir / "manifest.json"
        exists = self.samples_path.exists() or self.manifest_path.exists()
        if exists and not append:
            raise FileExistsError(f"{self.dir} already holds a run")
        self.dir.mkdir(parents=True, exist_ok=True)
        self._seq = 0
        if exists:
            self.manifest = json.loads(self.manifest_path.read_text()) if self.manifest_path.exists() else {"cells": []}
            self.manifest.setdefault("cells", [])
            self.manifest.setdefault("browsers", {})
            self.manifest.setdefault("native", []).append({"argv": argv, "parameters": parameters})
            if self.samples_path.exists():
                with self.samples_path.open(encoding="utf-8") as fh:
                    for line in fh:
                        try:
                            self._seq = max(self._seq, int(json.loads(line).get("seq", 0)))
                        except (ValueError, AttributeError):
                            continue
        else:
            self.manifest = {**describe_environment(), "argv": argv, "parameters": parameters,
                             "browsers": {}, "cells": []}
        self._t0 = time.monotonic()
        #: time.time() when ``received_s`` is 0: another writer of this folder's samples
        #: (web/dawn/host.js --offline) stamps its lines on the same clock
        self.started_epoch_s = time.time()
        self._fh = self.samples_path.open("a", encoding="utf-8")

    def add_cell(self, cell: dict[str, Any]) -> None:
        """Register a cell (RESULTS.md manifest cell fields). Raises ValueError on a duplicate id."""
        if any(c["cell"] == cell["cell"] for c in self.manifest["cells"]):
            raise ValueError(f"cell {cell['cell']} is already in {self.manifest_path}")
        self.manifest["cells"].append(cell)
        self.write_manifest()

    def update_cell(self, cell_id: str, **fields: Any) -> None:
        """Set fields (``status``, ``reason``…) of a registered cell and rewrite the manifest."""
        for c in self.manifest["cells"]:
            if c["cell"] == cell_id:
                c.update(fields)
        self.write_manifest()

    def append(self, cell_id: str, sample: dict[str, Any]) -> None:
        """Append one sample (flushed at once, like harness/store/store.py)."""
        self._seq += 1
        line = {"seq": self._seq, "cell": cell_id, "received_s": round(time.monotonic() - self._t0, 4), **sample}
        self._fh.write(json.dumps(line, separators=(",", ":"), default=str) + "\n")
        self._fh.flush()

    def sync_seq(self) -> int:
        """Continue ``seq`` after the last line of ``samples.jsonl`` when another process appended
        to it meanwhile (harness/native/dawn.py: the Dawn host writes a cell's samples itself).
        Returns the last ``seq``."""
        self._fh.flush()
        with self.samples_path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    self._seq = max(self._seq, int(json.loads(line).get("seq", 0)))
                except (ValueError, AttributeError):
                    continue
        return self._seq

    def write_manifest(self) -> None:
        """Rewrite ``manifest.json`` (indented JSON)."""
        self.manifest_path.write_text(json.dumps(self.manifest, indent=2, default=str))

    def close(self) -> None:
        """Write the manifest a last time and close ``samples.jsonl``."""
        self.write_manifest()
        self._fh.close()
