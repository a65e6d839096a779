"""Workload folders and names from the file system alone (standard library only), so that a
mistyped ``--workload`` or a missing ``--workloads-dir`` is answered before pydantic and the
manifest models of :mod:`harness.workloads` load (issue 19, item 3: a bad option in ≤ 0.3 s;
importing pydantic alone is ~0.12 s of CPU here).

A workload is a folder holding ``manifest.json`` (format: workloads/README.md): the built-in ones
(harness/locations.py) and those of the user's folders (``--workloads-dir DIR`` or
``$WEBGPU_HARNESS_WORKLOADS``). Its name is its folder's name: :mod:`harness.workloads` refuses a
manifest whose ``name`` differs, so the names listed here are the names discovery can return.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from harness import locations

#: The built-in workloads' folder.
WORKLOADS_DIR = locations.workloads_dir()
#: Environment variable: folders of user workloads, separated by os.pathsep (``--workloads-dir`` wins).
WORKLOADS_ENV = "WEBGPU_HARNESS_WORKLOADS"


class WorkloadError(ValueError):
    """A workloads folder that cannot be used (missing, a malformed manifest, a name taken by
    another workload); the message is one line naming the file and why."""


def user_dirs(given: Iterable[str | Path] | None = None) -> tuple[Path, ...]:
    """The user's workload folders: ``given`` (``--workloads-dir``), else
    ``$WEBGPU_HARNESS_WORKLOADS`` split on ``os.pathsep``, else none. Resolved paths."""
    items = [str(g) for g in given or ()]
    if not items:
        items = [s for s in os.environ.get(WORKLOADS_ENV, "").split(os.pathsep) if s.strip()]
    return tuple(Path(s).expanduser().resolve() for s in items)


def folder_manifests(folder: Path) -> list[Path]:
    """``folder/manifest.json`` when ``folder`` is itself a workload, else ``folder/*/manifest.json``."""
    own = folder / "manifest.json"
    return [own] if own.is_file() else sorted(folder.glob("*/manifest.json"))


def user_manifests(folder: Path) -> list[Path]:
    """The manifests of one user folder (:func:`folder_manifests`). Raises :class:`WorkloadError`
    when the folder does not exist or holds none."""
    if not folder.is_dir():
        raise WorkloadError(f"workloads folder {folder} does not exist (--workloads-dir or ${WORKLOADS_ENV})")
    manifests = folder_manifests(folder)
    if not manifests:
        raise WorkloadError(f"workloads folder {folder} holds no manifest.json, neither its own nor in a "
                            "subfolder (format: workloads/README.md)")
    return manifests


def names(dirs: Iterable[str | Path] | None = None) -> set[str]:
    """The name of every workload, built-in and of the user's folders (:func:`user_dirs`), read
    from the folders only (no manifest is parsed). Raises :class:`WorkloadError` for a user folder
    that does not exist or holds no manifest."""
    found = {m.parent.name for m in sorted(WORKLOADS_DIR.glob("*/manifest.json"))}
    for folder in user_dirs(dirs):
        found.update(m.parent.name for m in user_manifests(folder))
    return found
