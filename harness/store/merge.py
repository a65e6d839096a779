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
  renumbered; ``received_s`` stays on each source's own clock. A torn last line (a harness
  killed mid-write) is dropped and said in ``merged_from`` (``torn_last_line_dropped``); a line
  that is not JSON anywhere else is an error, never dropped silently.
- a cell still ``pending`` (its harness was killed) becomes ``failed``, saying so.

Labels default to the source folders' names (made unique with ``-2``, ``-3``…).
"""

from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.store import environment
from harness.store.runfolder import RunFolderError
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
def _removed_on_error(path: Path) -> Iterator[None]:
    """Delete ``path`` when the block raises (a merge that fails leaves nothing half-written)."""
    try:
        yield
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def merge(dirs: list[Path], out_dir: Path, labels: list[str] | None = None, argv: list[str] | None = None) -> dict:
    """Write the merged run folder ``out_dir`` from ``dirs`` (≥ 1 run folders) and return its
    manifest. Raises :class:`MergeError` for a folder that is not a run, a folder given twice, or
    an ``out_dir`` that already holds a run."""
    dirs = [Path(d) for d in dirs]
    if not dirs:
        raise MergeError("merge needs at least one run folder")
    resolved = [d.resolve() for d in dirs]
    dup = next((d for d in resolved if resolved.count(d) > 1), None)
    if dup:
        raise MergeError(f"{dup} is given twice")
    out_dir = Path(out_dir)
    if (out_dir / "samples.jsonl").exists() or (out_dir / "manifest.json").exists():
        raise MergeError(f"{out_dir} already holds a run; choose another --output")
    manifests = [read_manifest(d) for d in dirs]
    names = _labels(dirs, labels)
    out_dir.mkdir(parents=True, exist_ok=True)
    cells, sources, browsers = [], [], {}
    seq = 0
    partial = out_dir / "samples.jsonl.partial"  # renamed once every source was read: a failed merge leaves no run
    with _removed_on_error(partial), partial.open("w", encoding="utf-8") as out:
        for d, m, label in zip(dirs, manifests, names):
            ids = {}
            for c in m.get("cells", []):
                new = f"{label}:{c['cell']}"
                ids[c["cell"]] = new
                env = {k: c.get(k, m.get(k)) for k in CELL_ENV_KEYS}
                machine = f"{label}:{c['machine']}" if c.get("machine") else label
                c = dict(c)
                if c.get("status") in (None, "pending"):  # the run was killed before this cell ended
                    c["status"], c["reason"] = "failed", ("the run ended before this cell finished (its harness was "
                                                          "killed: status pending in its manifest)")
                cells.append({**c, **env, "cell": new, "machine": machine, "source_run": str(d.resolve())})
            for name, b in (m.get("browsers") or {}).items():
                browsers[f"{label}:{name}"] = b
            sources.append({"label": label, "dir": str(d.resolve()), "created": m.get("created"),
                            **{k: m.get(k) for k in CELL_ENV_KEYS}, "browsers": m.get("browsers") or {},
                            "parameters": m.get("parameters") or {}, "cells": len(m.get("cells", [])),
                            "merged_from": [s.get("label") for s in m.get("merged_from", [])] or None})
            path = d / "samples.jsonl"
            if not path.exists():
                continue
            torn: int | None = None  # a line that is not JSON: fine only if it is the last one
            with path.open(encoding="utf-8", errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    if torn is not None:
                        raise MergeError(f"{path} line {torn} is not a JSON sample: a torn or edited line in the middle "
                                         "of the samples (only the last line can be torn by a crash); fix or remove it")
                    try:
                        s = json.loads(line)
                    except ValueError:
                        s = None
                    if not isinstance(s, dict):
                        torn = i
                        continue
                    seq += 1
                    s["seq"] = seq
                    s["cell"] = ids.get(s.get("cell"), f"{label}:{s.get('cell')}")
                    out.write(json.dumps(s, separators=(",", ":")) + "\n")
            if torn is not None:  # a torn last line (a harness killed mid-write): said in merged_from
                sources[-1]["torn_last_line_dropped"] = True
    partial.replace(out_dir / "samples.jsonl")
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
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    return manifest
