"""Browser-side engines and user models the workloads load: onnxruntime-web installs and local
ONNX models passed with ``--model``.

onnxruntime-web is taken from, in order: ``--ort-dist PATH`` (its ``dist/`` folder, or the package
folder holding it), then the places of harness/npm.py (``./node_modules``, a clone's
``node_modules``, the per-user cache that ``webgpu-harness setup`` fills). The pinned version is
the build of the onnxruntime field report (``1.31.0-dev.20260914-8d85527a0``, references.md),
from ``package-lock.json``. Another version can sit in a ``node_modules`` under an npm alias
(``npm install --no-save ort-1.22.0@npm:onnxruntime-web@1.22.0``) and be chosen with
``--ort-version``. The chosen ``dist/`` is served at ``/ort/<version>/`` (:attr:`OrtInstall.root`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from harness import npm

PINNED_ORT = "1.31.0-dev.20260914-8d85527a0"
#: Inputs and outputs a decoder model must have (Transformers.js / onnxruntime-genai layout).
REQUIRED_INPUTS = ("input_ids",)
REQUIRED_OUTPUTS = ("logits",)


class EngineError(ValueError):
    """An engine or model the user asked for cannot be used; the message says why and how to fix it."""


@dataclass
class OrtInstall:
    """One onnxruntime-web build: ``version`` (its package.json's, or ``custom`` for a bare dist/
    folder), ``dist`` (the folder of ``ort.*.mjs`` and the wasm files), ``source`` (where it was
    found: ``--ort-dist``, or a place of harness/npm.py)."""

    version: str
    dist: Path
    source: str = ""

    @property
    def key(self) -> str:
        """URL-safe name of this install on the server."""
        return re.sub(r"[^A-Za-z0-9._-]", "-", self.version)

    @property
    def root(self) -> tuple[str, Path]:
        """(URL prefix, folder) for the server: ``ort/<key>`` → ``dist``."""
        return f"ort/{self.key}", self.dist

    @property
    def dist_url(self) -> str:
        """URL path of its dist/ folder on the harness server."""
        return f"/ort/{self.key}/"


def _package_version(folder: Path) -> str | None:
    """The version of the onnxruntime-web package in ``folder``, or None if it is not one."""
    try:
        meta = json.loads((folder / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return str(meta.get("version")) if meta.get("name") == "onnxruntime-web" else None


def ort_installs(node_modules: Path) -> list[OrtInstall]:
    """Every onnxruntime-web package directly under ``node_modules`` (aliases included)."""
    found = []
    for pkg in sorted(node_modules.glob("*/package.json")):
        version = _package_version(pkg.parent)
        if version is not None and (pkg.parent / "dist").is_dir():
            found.append(OrtInstall(version, pkg.parent / "dist", str(node_modules)))
    return found


def ort_from_path(path: str | Path) -> OrtInstall:
    """``--ort-dist PATH``: an onnxruntime-web ``dist/`` folder (a local build's ``js/web/dist``),
    or the package folder holding it. Raises :class:`EngineError` when it is neither."""
    p = Path(path).expanduser().resolve()
    if not p.is_dir():
        raise EngineError(f"--ort-dist {path}: no such folder")
    if _package_version(p) is not None and (p / "dist").is_dir():
        return OrtInstall(_package_version(p), p / "dist", "--ort-dist")
    if any(p.glob("ort*.mjs")) or any(p.glob("ort*.js")):
        version = _package_version(p.parent) or "custom-" + hashlib.sha256(str(p).encode()).hexdigest()[:8]
        return OrtInstall(version, p, "--ort-dist")
    raise EngineError(f"--ort-dist {path}: neither an onnxruntime-web dist/ folder (ort*.mjs files) "
                      "nor the package folder holding one")


def find_ort(version: str | None = None, ort_dist: str | Path | None = None) -> OrtInstall:
    """The onnxruntime-web to load: ``ort_dist`` when given, else the install of ``version``
    (default: the pinned one) in the first place of :func:`harness.npm.places` that has it.

    Raises :class:`EngineError` naming the places looked in, the versions found and the command
    that adds one.
    """
    if ort_dist is not None:
        inst = ort_from_path(ort_dist)
        if version is not None and inst.version != version:
            raise EngineError(f"--ort-dist {ort_dist} holds onnxruntime-web {inst.version}, not --ort-version {version}")
        return inst
    want = version or PINNED_ORT
    seen: list[str] = []
    for place in npm.places():
        for inst in ort_installs(place.node_modules):
            if inst.version == want:
                inst.source = place.label
                return inst
            seen.append(f"{inst.version} ({place.label})")
    have = ", ".join(dict.fromkeys(seen)) or "none"
    if want == PINNED_ORT:
        hint = "run `webgpu-harness setup` (it fills the per-user cache), or pass --ort-dist PATH"
    else:
        hint = (f"install it in ./node_modules: npm install --no-save ort-{want}@npm:onnxruntime-web@{want}, "
                "or pass --ort-dist PATH")
    raise EngineError(f"onnxruntime-web {want} is not installed (found: {have}); looked in: "
                      f"{npm.where_looked('--ort-dist PATH (not given)')}; {hint}")


@dataclass
class UserModel:
    """A local ONNX decoder served to the worker under ``/user-model/<key>/``."""

    path: Path
    key: str
    external: list[str]  #: external data files it references (relative to its folder)
    inputs: list[str]
    outputs: list[str]

    @property
    def url(self) -> str:
        return f"/user-model/{self.key}/{self.path.name}"

    @property
    def files(self) -> dict[str, Path]:
        """URL path (no leading slash) → file, for the server: the model and the external data
        files it names, nothing else of its folder."""
        out = {f"user-model/{self.key}/{self.path.name}": self.path}
        out.update({f"user-model/{self.key}/{name}": self.path.parent / name for name in self.external})
        return out

    def external_data_param(self) -> list[dict]:
        return [{"path": name, "url": f"/user-model/{self.key}/{name}"} for name in self.external]


def user_model(path: str | Path, decoder: bool = True) -> UserModel:
    """Check a ``--model`` file before any browser starts.

    Reads the graph with the ``onnx`` package (weights not loaded): it must parse, have (when
    ``decoder``, for ort-decode) an ``input_ids`` input and a ``logits`` output, and every
    external data file it references must exist beside it. Raises :class:`EngineError` with a one-line reason otherwise. A file that
    parses here but that onnxruntime-web rejects fails its cell with ORT's message.
    """
    p = Path(path).expanduser().resolve()
    if p.is_dir():
        raise EngineError(f"--model {path} is a folder; give the .onnx file (its external data files are found beside it)")
    if not p.is_file():
        raise EngineError(f"--model {path}: no such file")
    import onnx  # only to read a file that is there (importing onnx took 0.6 s of CPU here)
    try:
        model = onnx.load(str(p), load_external_data=False)
    except Exception as exc:  # protobuf DecodeError and friends
        raise EngineError(f"--model {path}: not a readable ONNX model ({type(exc).__name__}: {str(exc)[:120]})") from None
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    for name in REQUIRED_INPUTS if decoder else ():
        if name not in inputs:
            raise EngineError(f"--model {path}: no input named {name!r} (inputs: {', '.join(inputs)})")
    for name in REQUIRED_OUTPUTS if decoder else ():
        if name not in outputs:
            raise EngineError(f"--model {path}: no output named {name!r} (outputs: {', '.join(outputs)})")
    external = []
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            loc = next((e.value for e in tensor.external_data if e.key == "location"), None)
            if loc and loc not in external:
                external.append(loc)
    for loc in external:
        target = (p.parent / loc).resolve()
        if target.parent != p.parent:
            raise EngineError(f"--model {path}: external data location {loc!r} is not a file beside the model")
        if not target.is_file():
            raise EngineError(f"--model {path}: external data file {loc} is missing (expected beside the model)")
    key = hashlib.sha256(str(p).encode()).hexdigest()[:12]
    return UserModel(p, key, external, inputs, outputs)
