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

import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable

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
    ``$WEBGPU_HARNESS_WORKLOADS`` split on ``os.pathsep``, else none. Resolved paths. Raises
    :class:`WorkloadError` for one that cannot be resolved (``~nouser/x``)."""
    items = [str(g) for g in given or ()]
    if not items:
        items = [s for s in os.environ.get(WORKLOADS_ENV, "").split(os.pathsep) if s.strip()]
    out = []
    for s in items:
        try:
            out.append(Path(s).expanduser().resolve())
        except (RuntimeError, OSError, ValueError) as exc:  # ~nouser, a NUL byte, a loop of links
            raise WorkloadError(f"workloads folder {s!r} cannot be used (--workloads-dir or ${WORKLOADS_ENV}): {exc}") from None
    return tuple(out)


def folder_manifests(folder: Path) -> list[Path]:
    """``folder/manifest.json`` when ``folder`` is itself a workload, else ``folder/*/manifest.json``."""
    own = folder / "manifest.json"
    return [own] if own.is_file() else sorted(folder.glob("*/manifest.json"))


def user_manifests(folder: Path) -> list[Path]:
    """The manifests of one user folder (:func:`folder_manifests`). Raises :class:`WorkloadError`
    when the folder does not exist or holds none."""
    try:
        is_dir, exists = folder.is_dir(), folder.exists()
        manifests = folder_manifests(folder) if is_dir else []
    except OSError as exc:  # a name too long, a folder it may not read
        raise WorkloadError(f"workloads folder {folder} cannot be read (--workloads-dir or ${WORKLOADS_ENV}): "
                            f"{exc.strerror or exc}") from None
    if not is_dir:
        raise WorkloadError(f"workloads folder {folder} {'is not a folder' if exists else 'does not exist'} "
                            f"(--workloads-dir or ${WORKLOADS_ENV})")
    if not manifests:
        raise WorkloadError(f"workloads folder {folder} holds no manifest.json, neither its own nor in a "
                            "subfolder (format: workloads/README.md)")
    return manifests


def manifests(dirs: Iterable[str | Path] | None = None) -> dict[str, list[Path]]:
    """Workload name → its manifest.json paths (more than one: defined twice), built-in first,
    then the user's folders (:func:`user_dirs`), read from the folders only (no manifest is
    parsed). Raises :class:`WorkloadError` for a user folder that cannot be used or holds no
    manifest."""
    found: dict[str, list[Path]] = {}
    for m in sorted(WORKLOADS_DIR.glob("*/manifest.json")):
        found.setdefault(m.parent.name, []).append(m)
    for folder in user_dirs(dirs):
        for m in user_manifests(folder):
            found.setdefault(m.parent.name, []).append(m)
    return found


def names(dirs: Iterable[str | Path] | None = None) -> set[str]:
    """The name of every workload (:func:`manifests`). Raises :class:`WorkloadError` as it does."""
    return set(manifests(dirs))


@dataclass
class Sketch:
    """What one workload's manifest.json names, read as JSON alone (no model): its variants,
    profiles and parameter names, enough for :func:`harness.plan.resolve_workloads` and
    :func:`harness.plan.check_param_keys` to answer a mistyped ``--variant``, ``--profile`` or
    ``--param`` key before pydantic loads. The same checks run again on the models after."""

    name: str
    variants: dict[str, Any]
    default_variants: list[str]
    profiles: dict[str, dict[str, Any]]
    default_profile: str | None
    #: parameter name → its declaration's ``testing`` flag (a bare default: not testing)
    parameters: dict[str, SimpleNamespace]

    def variants_to_run(self) -> list[str]:
        """As :meth:`harness.workloads.Workload.variants_to_run`."""
        return self.default_variants or list(self.variants)


def _sketch(doc: Any) -> Sketch | None:
    """A :class:`Sketch` of a manifest's parsed JSON, or None when a field has another shape
    than the model allows (the model then says what is wrong)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
        return None
    variants, dv = doc.get("variants"), doc.get("default_variants", [])
    profiles, dp, params = doc.get("profiles", {}), doc.get("default_profile"), doc.get("parameters", {})
    if (not isinstance(variants, dict) or not isinstance(dv, list) or not all(isinstance(v, str) for v in dv)
            or not isinstance(profiles, dict) or not all(isinstance(p, dict) for p in profiles.values())
            or not (dp is None or isinstance(dp, str)) or not isinstance(params, dict)):
        return None
    return Sketch(doc["name"], variants, dv, profiles, dp,
                  {k: SimpleNamespace(testing=bool(v.get("testing")) if isinstance(v, dict) else False)
                   for k, v in params.items()})


def sketches(wanted: Iterable[str], found: dict[str, list[Path]]) -> list[Sketch] | None:
    """A :class:`Sketch` of each of the ``wanted`` workloads of ``found`` (:func:`manifests`), in
    order; None when one is missing or defined twice or its manifest cannot be read as one
    (discovery then says why). Never raises."""
    out = []
    for name in wanted:
        paths = found.get(name, [])
        if len(paths) != 1 or not paths[0].is_file():  # a FIFO is never opened here
            return None
        try:
            sk = _sketch(json.loads(paths[0].read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError):
            return None
        if sk is None or sk.name != name:
            return None
        out.append(sk)
    return out
