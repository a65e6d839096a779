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

import functools
import json
import os
import platform
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness import __version__
from harness.store import files
from harness.store.files import RunFolderError  # noqa: F401 (its home for callers)


def _loads(text: str | bytes, where: str) -> Any:
    """``json.loads`` that says, in one line, why it failed (nesting too deep included)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise RunFolderError(f"{where} nests too deeply (more than Python's recursion limit of "
                             f"{sys.getrecursionlimit()} levels): not a run's file") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise RunFolderError(f"{where} is not readable JSON ({exc})") from None


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object file of a run folder (``stats.json``, ``compare.json``…). Raises
    :class:`RunFolderError` (one line) for a FIFO, device or folder (never waited on or read
    without end), JSON that does not parse or nests too deeply, or JSON that is not an object."""
    path = Path(path)
    v = _loads(files.read_regular(path, path.name), path.name)
    if not isinstance(v, dict):
        raise RunFolderError(f"{path.name} is a JSON {type(v).__name__}, not an object")
    return v


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """``manifest.json`` of ``run_dir``. Raises :class:`RunFolderError` (one line) when the folder
    or the file is missing, the file is not a regular file (a FIFO, a folder, a device: never
    waited on), not JSON, or nests deeper than Python can parse."""
    run_dir, path = Path(run_dir), Path(run_dir) / "manifest.json"
    if not run_dir.is_dir():
        what = ("a file, not a folder" if run_dir.is_file() else "a link to a path that does not exist" if run_dir.is_symlink()
                and not run_dir.exists() else "not a folder" if os.path.lexists(run_dir) else "no such folder")
        raise RunFolderError(f"{run_dir} is not a run folder ({what})")
    if not os.path.lexists(path):
        raise RunFolderError(f"{run_dir} is not a run folder (no manifest.json)")
    return _loads(files.read_regular(path), str(path))


def check_run_folder(run_dir: Path) -> dict[str, Any]:
    """The manifest of a complete run folder: manifest.json with a list of cells (each with a
    string ``cell`` id) and samples.jsonl, both regular files. Raises :class:`RunFolderError`
    otherwise."""
    run_dir = Path(run_dir)
    doc = read_manifest(run_dir)
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and isinstance(c.get("cell"), str) for c in cells):
        raise RunFolderError(f"{run_dir / 'manifest.json'} has no list of cells with ids: not a webgpu-harness run")
    if not files.check_regular(run_dir / "samples.jsonl"):
        raise RunFolderError(f"{run_dir} has no samples.jsonl: not a complete run folder")
    if not cells:
        named = _first_cell_named(run_dir / "samples.jsonl")
        if named is not None:
            raise RunFolderError(f"{run_dir / 'manifest.json'} lists no cells but samples.jsonl holds samples of cell "
                                 f"{named!r}: the manifest was emptied or edited; every sample would be ignored")
    return doc


def _first_cell_named(path: Path) -> str | None:
    """The first cell id a line of ``path`` names (read line by line), else None."""
    with files.open_regular(path) as fh:
        for raw in fh:
            m = _CELL_IN_LINE.search(raw)
            if m:
                return m.group(1).decode("utf-8", "replace")[:80]
    return None


#: Fields of a sample that are JSON objects when present (web/probes/, RESULTS.md).
OBJECT_FIELDS = ("counters", "live", "emulation", "extra", "adapter", "result")


def not_a_sample(s: Any, raw: bytes | None = None) -> str | None:
    """Why a parsed line of samples.jsonl cannot be read as a sample, else None: not an object,
    a step without an integer ``step``, an object field that is not one, or a field of the
    wrong type, out of range or not finite by the rules the server applied on the wire
    (harness/serve/lines.py ``line_problem``: a step numbered below 0 or above 10,000,000,
    NaN or Infinity anywhere, ``"rss_bytes": "lots"``)."""
    why = _shape_problem(s)
    if why is not None:
        return why
    from harness.serve.lines import line_problem  # pydantic: loaded when a folder is read

    return line_problem(s, raw)


#: Python type of a parsed JSON value → its JSON name.
_JSON_TYPE = {list: "array", dict: "object", str: "string", bool: "boolean", int: "number", float: "number"}


def _shape_problem(s: Any) -> str | None:
    """The checks of :func:`not_a_sample` that come before its kind's model: an object, a step
    with an integer ``step``, every :data:`OBJECT_FIELDS` an object or absent."""
    if not isinstance(s, dict):
        name = _JSON_TYPE.get(type(s), "null")
        return f"a JSON {name}, not an object"
    if s.get("kind") is not None and not isinstance(s["kind"], str):
        return f"kind is a JSON {_JSON_TYPE.get(type(s['kind']), 'value')}, not a string"
    if s.get("kind") == "step" and (not isinstance(s.get("step"), int) or isinstance(s.get("step"), bool)):
        return "a step without an integer step"
    for k in OBJECT_FIELDS:  # the common case, every field an object or absent, without building a list
        v = s.get(k)
        if v is not None and not isinstance(v, dict):
            bad = [k for k in OBJECT_FIELDS if s.get(k) is not None and not isinstance(s[k], dict)]
            return f"{', '.join(bad)} not an object"
    return None


def fast_shape_problem(s: dict[str, Any]) -> str | None:
    """:func:`_shape_problem` of a line that harness/serve/lines.py ``fast_line`` passed: None at
    once for a kind whose model already holds those rules (``kinds_held_to_objects``)."""
    return None if s.get("kind") in _held_kinds() else _shape_problem(s)


@functools.lru_cache(maxsize=1)
def _held_kinds() -> frozenset[str]:
    from harness.serve.lines import kinds_held_to_objects  # pydantic: loaded when a folder is read

    return kinds_held_to_objects(OBJECT_FIELDS)


@dataclass
class BadLine:
    """A line of samples.jsonl that is not a sample: its number (from 1), why, and the cells it
    is taken to belong to (the cell id it still names, else the cells of the readable lines
    around it: a run writes one cell's samples after another)."""

    line: int
    why: str
    cells: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"line {self.line}: {self.why}"


_CELL_IN_LINE = re.compile(rb'"cell"\s*:\s*"((?:[^"\\]|\\.){1,300})"')


def _not_json(raw: bytes) -> str:
    """Why a line that does not parse is not a sample: its bytes, or its text."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes that are not UTF-8 (damaged)"
    return "not JSON (torn or edited)"


#: Bytes of lines read at a time by :func:`_lines` (about 3,000 step lines).
BLOCK_BYTES = 1 << 22


def _lines(fh, may_be_unfaithful) -> Any:
    """``(line number from 1, bytes, faithful)`` of every line of ``fh``, read in blocks of about
    :data:`BLOCK_BYTES`; ``faithful``: no byte of the line's block could start a number JSON cannot
    carry (``may_be_unfaithful`` of the block, one search instead of one per line)."""
    i = 0
    for block in iter(lambda: fh.readlines(BLOCK_BYTES), []):
        faithful = not may_be_unfaithful(b"".join(block))
        for raw in block:
            i += 1
            yield i, raw, faithful


def scan_samples(run_dir: Path, exact: bool = False) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """Every sample of ``samples.jsonl`` in file order, and the lines that are not one (torn by a
    crash mid-write, bytes that are not UTF-8, an edited line, JSON nested too deeply:
    :func:`not_a_sample`). Empty when the file is missing; :class:`RunFolderError` when it is not
    a regular file. ``exact``: every sample as
    its line holds it (``from_json``: its key order, ``46`` not ``46.0`` in a float field), for a
    copy (``merge``); otherwise a line that passes the one-pass check is its validated dict."""
    out: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    path = Path(run_dir) / "samples.jsonl"
    if not files.check_regular(path):
        return out, bad
    from pydantic_core import from_json  # here, not at the top: the offline Dawn runner (harness/native/dawn.py) writes run folders on a machine with only the standard library
    from harness.serve.lines import fast_line, may_be_unfaithful

    waiting: list[BadLine] = []  # bad lines still to be given the cell of the next readable line
    last_cell: str | None = None
    with files.open_regular(path) as fh:
        for i, raw, faithful in _lines(fh, may_be_unfaithful):
            # parsed and held to its kind's model in one pass (harness/serve/lines.py); a line that
            # fails it is parsed and checked again on the full path, which says why
            s = fast_line(raw, faithful)
            if s is not None:
                why = fast_shape_problem(s)
                if exact and why is None:
                    s = from_json(raw, cache_strings="keys")
            else:
                try:
                    s = from_json(raw, cache_strings="keys")  # pydantic's parser: json.loads' values, ~2× faster
                except ValueError as exc:  # nesting past its limit (200 levels), bytes, or syntax
                    why = "JSON nested too deeply" if str(exc).startswith("recursion limit") else _not_json(raw)
                else:
                    why = not_a_sample(s, raw)
            if why is None:
                cell = s.get("cell") if isinstance(s.get("cell"), str) else None
                for b in waiting:
                    if cell is not None and cell not in b.cells:
                        b.cells.append(cell)
                waiting = []
                last_cell = cell if cell is not None else last_cell
                out.append(s)
                continue
            b = BadLine(i, why)
            named = _CELL_IN_LINE.search(raw)
            if named:
                try:
                    b.cells.append(json.loads(b'"' + named.group(1) + b'"'))
                except ValueError:
                    pass
            if not b.cells:
                if last_cell is not None:
                    b.cells.append(last_cell)
                waiting.append(b)
            bad.append(b)
    return out, bad


def read_samples(run_dir: Path, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """Every sample of ``samples.jsonl`` in file order (:func:`scan_samples`); a line that is not
    one is left out and, with ``skipped``, said there (``line N: why``)."""
    out, bad = scan_samples(run_dir)
    if skipped is not None:
        skipped.extend(str(b) for b in bad)
    return out


def claim(run_dir: Path, manifest: dict[str, Any], option: str = "--output") -> None:
    """Take ``run_dir`` for a new run: create it (and its parents) and its ``manifest.json``
    exclusively, holding ``manifest``. Of two runs started on one folder together exactly one
    succeeds; the other gets :class:`RunFolderError` ("… already holds a run"). Also refuses a
    folder where an output's name is a link (:func:`harness.store.files.check_outputs`)."""
    run_dir = Path(run_dir)
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise files.as_disk_full(exc, run_dir) if exc.errno in files.FULL else RunFolderError(
            f"{option} {run_dir}: cannot make the folder ({exc.strerror})") from None
    files.check_outputs(run_dir)
    if os.path.lexists(run_dir / "samples.jsonl"):
        raise RunFolderError(f"{run_dir} already holds a run; choose another {option}")
    try:
        fd = files.open_append(run_dir / "manifest.json", exclusive=True)
    except FileExistsError:
        raise RunFolderError(f"{run_dir} already holds a run; choose another {option}") from None
    try:
        files.write_all(fd, json.dumps(manifest, indent=2, default=str).encode("utf-8"), run_dir / "manifest.json")
    except BaseException:  # a full disk: the folder is not taken (an empty manifest would hold it)
        os.close(fd)
        (run_dir / "manifest.json").unlink(missing_ok=True)
        raise
    os.close(fd)


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

    A new folder is claimed atomically (:func:`claim`): of two writers started on one folder, one
    gets ``FileExistsError``. Raises ``FileExistsError`` when the folder holds a run and
    ``append`` is false, :class:`RunFolderError` when an output's name is a link, and
    ``ValueError`` when a cell id is already present. The manifest is rewritten by temporary
    file and rename, ``samples.jsonl`` appended never through a link (harness/store/files.py).
    """

    def __init__(self, run_dir: Path, argv: list[str], parameters: dict[str, Any], append: bool = False):
        self.dir = Path(run_dir)
        self.samples_path = self.dir / "samples.jsonl"
        self.manifest_path = self.dir / "manifest.json"
        exists = os.path.lexists(self.samples_path) or os.path.lexists(self.manifest_path)
        if exists and not append:
            raise FileExistsError(f"{self.dir} already holds a run")
        self._seq = 0
        if exists:
            files.check_outputs(self.dir)
            self.manifest = read_manifest(self.dir) if self.manifest_path.exists() else {"cells": []}
            if not isinstance(self.manifest, dict):
                raise RunFolderError(f"{self.manifest_path} is not a run's manifest (not a JSON object)")
            self.manifest.setdefault("cells", [])
            self.manifest.setdefault("browsers", {})
            self.manifest.setdefault("native", []).append({"argv": argv, "parameters": parameters})
            for s in read_samples(self.dir):
                seq = s.get("seq")
                if isinstance(seq, int) and not isinstance(seq, bool):
                    self._seq = max(self._seq, seq)
        else:
            self.manifest = {**describe_environment(), "argv": argv, "parameters": parameters,
                             "browsers": {}, "cells": []}
            try:
                claim(self.dir, self.manifest)
            except RunFolderError as exc:
                if "already holds a run" in str(exc):
                    raise FileExistsError(f"{self.dir} already holds a run") from None
                raise
        self._t0 = time.monotonic()
        #: time.time() when ``received_s`` is 0: another writer of this folder's samples
        #: (web/dawn/host.js --offline) stamps its lines on the same clock
        self.started_epoch_s = time.time()
        self._fd = files.open_append(self.samples_path)

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
        """Append one sample (written at once, like harness/store/store.py). Raises
        :class:`harness.store.files.DiskFull` when the disk is full (nothing of the line is kept)."""
        self._seq += 1
        line = {"seq": self._seq, "cell": cell_id, "received_s": round(time.monotonic() - self._t0, 4), **sample}
        files.write_all(self._fd, (json.dumps(line, separators=(",", ":"), default=str) + "\n").encode("utf-8"),
                        self.samples_path)

    def sync_seq(self) -> int:
        """Continue ``seq`` after the last line of ``samples.jsonl`` when another process appended
        to it meanwhile (harness/native/dawn.py: the Dawn host writes a cell's samples itself).
        Returns the last ``seq``. Our own lines are already on disk (:meth:`append` writes each
        with ``os.write``, unbuffered)."""
        with self.samples_path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    self._seq = max(self._seq, int(json.loads(line).get("seq", 0)))
                except (ValueError, AttributeError):
                    continue
        return self._seq

    def write_manifest(self) -> None:
        """Rewrite ``manifest.json`` (indented JSON) by temporary file and rename."""
        files.write_atomic(self.manifest_path, json.dumps(self.manifest, indent=2, default=str))

    def close(self) -> None:
        """Write the manifest a last time and close ``samples.jsonl``."""
        try:
            self.write_manifest()
        finally:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
