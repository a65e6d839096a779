"""``webgpu-harness merge DIR...``: several run folders (from several machines) → one run folder.

The merged folder is an ordinary run folder (RESULTS.md), so tables, report and statistics are
built from it as from any run. What changes:

- every cell id becomes ``<label>:<cell>`` and the cell gains ``machine`` (= label), ``source_run``
  (the folder it came from) and that run's ``os``, ``cpu``, ``cpu_count``, ``python``,
  ``harness_version`` and ``git_commit``: each cell keeps its environment. Statistics group by
  ``machine`` too, so cells of different machines are never pooled.
- ``manifest.json`` gains ``merged_from``: one entry per source (label, folder, created, OS, CPU,
  Python, harness version and commit, browsers, parameters, number of cells); its top-level
  ``os``/``cpu``/``python`` list each source's, ``browsers`` is keyed ``<label>:<browser>``.
- ``samples.jsonl`` is the sources' samples in order, with cell ids rewritten and ``seq``
  renumbered; ``received_s`` stays on each source's own clock. A line that is not a sample (a
  torn last line of a killed harness, a damaged or edited line anywhere) is left out and said:
  in ``merged_from`` (``torn_last_line_dropped``, ``lines_left_out``) and in the status of the
  cells it may have held, exactly as ``report`` of the source says them
  (harness/store/runfolder.py ``settle``: an ``ok`` cell becomes ``incomplete`` naming the line).
- each cell's status is the one its samples carry (``settle``): a cell still ``pending`` (its
  harness was killed) becomes ``failed``, an ``ok`` cell without steps or a ``done`` sample
  ``failed`` or ``incomplete``, so ``report`` and ``merge`` of one folder agree.
- the output folder is claimed atomically first (a second merge or run into it exits 2), and
  every file is written by temporary file and rename, never through a link.

Labels default to the source folders' names (made unique with ``-2``, ``-3``…).
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.store import environment, files
from harness.store.runfolder import RunFolderError, claim, scan_samples
from harness.store.settle import settle
from harness.store.runfolder import read_manifest as _read_manifest

#: Environment facts copied from a source manifest onto each of its cells.
CELL_ENV_KEYS = ("os", "cpu", "cpu_count", "python", "harness_version", "git_commit")


class MergeError(ValueError):
    """Bad input to :func:`merge` (the message names the folder and what is wrong)."""


def _labels(dirs: list[Path], given: list[str] | None) -> list[str]:
    if given and len(given) != len(dirs):
        raise MergeError(f"{len(given)} --label value(s) for {len(dirs)} run folders; give one per folder or none")
    out: list[str] = []
    for i, d in enumerate(dirs):
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", (given[i] if given else d.resolve().name)).strip("-") or f"run{i + 1}"
        label, n = base, 2
        while label in out:
            label, n = f"{base}-{n}", n + 1
        out.append(label)
    return out


def _repeat(parameters: dict) -> int:
    """A source's ``parameters.repeat`` as a number: folders of harness/native/dawn.py made before
    it wrote one number had one per workload (``{workload: repeat}``): their largest."""
    r = parameters.get("repeat") or 1
    if isinstance(r, dict):
        return max((v for v in r.values() if isinstance(v, int)), default=1)
    return r if isinstance(r, int) else 1


def read_manifest(run_dir: Path) -> dict:
    """``manifest.json`` of a run folder. Raises :class:`MergeError` when it is missing or not JSON."""
    try:
        return _read_manifest(run_dir)
    except RunFolderError as exc:
        raise MergeError(str(exc)) from None


@contextmanager
def _removed_on_error(*paths: Path) -> Iterator[None]:
    """Delete ``paths`` when the block raises (a merge that fails leaves nothing half-written)."""
    try:
        yield
    except BaseException:
        for path in paths:
            path.unlink(missing_ok=True)
        raise


def merge(dirs: list[Path], out_dir: Path, labels: list[str] | None = None, argv: list[str] | None = None) -> dict:
    """Write the merged run folder ``out_dir`` from ``dirs`` (≥ 1 run folders) and return its
    manifest. Raises :class:`MergeError` for a folder that is not a run, a folder given twice, or
    an ``out_dir`` that already holds a run (or whose output names are links)."""
    dirs = [Path(d) for d in dirs]
    if not dirs:
        raise MergeError("merge needs at least one run folder")
    resolved = [d.resolve() for d in dirs]
    dup = next((d for d in resolved if resolved.count(d) > 1), None)
    if dup:
        raise MergeError(f"{dup} is given twice")
    out_dir = Path(out_dir)
    manifests = [read_manifest(d) for d in dirs]
    names = _labels(dirs, labels)
    try:
        claim(out_dir, {"cells": [], "merging": [str(d) for d in resolved]})
    except RunFolderError as exc:
        raise MergeError(str(exc)) from None
    cells, sources, browsers = [], [], {}
    seq = 0
    partial = out_dir / "samples.jsonl.partial"  # renamed once every source was read: a failed merge leaves no run
    with _removed_on_error(partial, out_dir / "manifest.json"):
        fd = files.open_append(partial, exclusive=True)
        try:
            for d, m, label in zip(dirs, manifests, names):
                try:
                    samples, bad = scan_samples(d, exact=True)  # copied as written
                except RunFolderError as exc:
                    raise MergeError(str(exc)) from None
                settled = settle([c for c in m.get("cells", []) if isinstance(c, dict)], samples, bad)
                ids = {}
                for c in m.get("cells", []):
                    new = f"{label}:{c['cell']}"
                    ids[c["cell"]] = new
                    env = {k: c.get(k, m.get(k)) for k in CELL_ENV_KEYS}
                    machine = f"{label}:{c['machine']}" if c.get("machine") else label
                    c = dict(c)
                    c["status"], c["reason"] = settled.get(c["cell"], (c.get("status"), c.get("reason")))
                    cells.append({**c, **env, "cell": new, "machine": machine, "source_run": str(d.resolve())})
                for name, b in (m.get("browsers") or {}).items():
                    browsers[f"{label}:{name}"] = b
                sources.append({"label": label, "dir": str(d.resolve()), "created": m.get("created"),
                                **{k: m.get(k) for k in CELL_ENV_KEYS}, "browsers": m.get("browsers") or {},
                                "parameters": m.get("parameters") or {}, "cells": len(m.get("cells", [])),
                                "merged_from": [s.get("label") for s in m.get("merged_from", [])] or None})
                if bad:
                    total = _line_count(d / "samples.jsonl")
                    sources[-1]["torn_last_line_dropped"] = bad[-1].line == total
                    sources[-1]["lines_left_out"] = [str(b) for b in bad[:20]] + (
                        [f"and {len(bad) - 20} more"] if len(bad) > 20 else [])
                chunk: list[bytes] = []
                for s in samples:
                    seq += 1
                    s["seq"] = seq
                    s["cell"] = ids.get(s.get("cell"), f"{label}:{s.get('cell')}")
                    chunk.append(json.dumps(s, separators=(",", ":")).encode("utf-8") + b"\n")
                    if len(chunk) >= 4096:
                        files.write_all(fd, b"".join(chunk), out_dir / "samples.jsonl")
                        chunk = []
                files.write_all(fd, b"".join(chunk), out_dir / "samples.jsonl")
        finally:
            os.close(fd)
        env = environment.describe()
        manifest = {
            "harness_version": env["harness_version"], "git_commit": env["git_commit"],
            "harness_install": env["harness_install"], "created": env["created"],
            "os": "; ".join(f"{s['label']}: {s['os']}" for s in sources),
            "cpu": "; ".join(f"{s['label']}: {s['cpu']}" for s in sources),
            "cpu_count": "; ".join(f"{s['label']}: {s['cpu_count']}" for s in sources),
            "python": "; ".join(f"{s['label']}: {s['python']}" for s in sources),
            "argv": argv if argv is not None else sys.argv,
            "parameters": {"repeat": max(_repeat(s["parameters"]) for s in sources),
                           "merged": True, "sources": {s["label"]: s["parameters"] for s in sources}},
            "browsers": browsers,
            "merged_from": sources,
            "cells": cells,
        }
        files.write_atomic(out_dir / "manifest.json", json.dumps(manifest, indent=2, default=str))
        partial.replace(out_dir / "samples.jsonl")
    return manifest


def _line_count(path: Path) -> int:
    n = 0
    with files.open_regular(path) as fh:
        for _ in fh:
            n += 1
    return n
